//! `parser`: the line-rate packet parser. One 64-bit AXI-Stream beat per clock in, one
//! descriptor per frame out, never a stall.
//!
//! # Input: AXI-Stream, 64-bit (the 10G MAC width)
//!
//! `tdata[7:0]` is the **first** byte on the wire, `tdata[63:56]` the eighth (the
//! AXI-Stream convention); `tkeep[i]` marks byte `i` valid. Every beat but the last must
//! have `tkeep = 0xFF`; the last beat's `tkeep` must be contiguous from bit 0 (`0x01`,
//! `0x03`, ..., `0xFF`); anything else is a *hole* and the frame is malformed. `tuser` on
//! any beat (the MAC raises it with `tlast` on a bad FCS) makes the frame malformed.
//! `tready` is tied high: the parser takes back-to-back beats and back-to-back frames with
//! no idle cycles (a 64-byte frame is 8 beats, i.e. 8 clocks; a 1-beat frame is 1 clock).
//! `tvalid` low just pauses the frame.
//!
//! # Output: one descriptor per frame
//!
//! Registered, valid (`d_valid`) for one clock, a fixed [`LATENCY`] = 2 clocks after the
//! frame's last beat (a last beat set before clock edge `k` is visible after edge `k + 1`).
//!
//! | port | width | meaning |
//! |---|---|---|
//! | `d_valid` | 1 | a descriptor this clock |
//! | `d_class` | 2 | [`CLASS_IP`] = 1, [`CLASS_NON_IP`] = 2, [`CLASS_MALFORMED`] = 3 |
//! | `d_key` | 104 | flow key, contract byte order: byte 0 (srcIP MSB) in bits 103:96, proto in 7:0; 0 unless IP |
//! | `d_len` | 32 ([`frame::LEN_BITS`]) | wire length in bytes: `8 * (beats - 1) + popcount(last tkeep)`, exact up to `frame::MAX_FRAME_LEN` (a longer frame is malformed and reads that value) |
//! | `d_ts` | 64 | the `now` input sampled with the frame's **first** beat |
//! | `d_delay` | 64 | sum of the INT stack hop latencies (ns); 0 without a shim and unless IP |
//! | `frames`, `ip_packets`, `non_ip`, `malformed` | 64 each | counters, `frames = ip_packets + non_ip + malformed`; they include a frame one clock after its descriptor |
//!
//! # Accepted layering (the software model's, `host::trace::frame::parse_frame`)
//!
//! Ethernet; up to two VLAN tags (0x8100, 0x88A8, 0x9100; a third is malformed); the
//! telemetry shim (0x88B5, kind 1, at most 16 hops, no nested shim); IPv4 with options
//! (version 4, IHL >= 5, total length >= header length) or IPv6 (the addresses folded by XOR
//! of their four 32-bit words; extension headers 0, 43, 60, 44, 51 skipped, at most 8; after
//! a fragment header with a non-zero offset comes fragment data: its next header is the
//! protocol, the ports are 0); TCP (20 bytes, data offset >= 5)
//! and UDP (8 bytes) give the ports, other protocols ports 0. Transport and extension
//! headers must lie within both the frame and the IP packet's own length (IPv4 total
//! length, IPv6 payload length unless 0). Every frame is exactly one of IP, non-IP
//! (an EtherType other than IPv4/IPv6 after the tags and the shim) or malformed (anything
//! cut short or inconsistent, holes, `tuser`, frames longer than the contract's
//! `frame::MAX_FRAME_LEN`).
//!
//! # How: fields fly by, decisions at fixed beats
//!
//! The parser keeps a 32-byte window: the current beat and the three before it
//! (byte-reversed by [`bytes::ByteRev`] so fields are big-endian slices). Beat `t` holds
//! bytes `8t..8t+7`.
//!
//! - **L2 + shim (beats 0..3)**: all their fields sit at fixed offsets below 28 (EtherTypes
//!   at 12, 16, 20; the shim at 14, 18 or 22). They are decoded from the window aligned to
//!   the frame start in every beat up to 3 (or the last beat of a shorter frame).
//! - **Header chain (beat 4 on)**: one step at a time, each at a cursor `c` (the header's
//!   first byte) with a span `L` (last byte it reads): IPv4 (`L` = 19: the whole 20-byte
//!   header), IPv6 in two steps (bytes 0..23: version, payload length, next header, source;
//!   then 24..39: destination), extension header (`L` = 7), TCP (`L` = 12), UDP (`L` = 7).
//!   A step fires in the beat that brings byte `c + L` (registered `fire` beat, registered
//!   window shift) and arms the next. Every next step starts at least 8 bytes after the
//!   previous span ends, so it fires in a later beat: **zero lag, one step per clock at
//!   most, and no step is ever behind the stream** (`L <= 23` keeps its bytes in the window).
//! - **Lengths are numbers**: each step records what the frame must hold (`need`, checked
//!   against the length at the last beat) and checks its header against the IP packet's own
//!   length. Every step's span lies inside its own length requirement, so a step still
//!   armed at the last beat means the frame was cut short: malformed, as the software says.
//! - **INT stack**: [`hops::HopSum`] adds the latency bytes as they pass (those below byte
//!   32 in beat 4, once the shim's position and hop count are registered).
//!
//! So a frame is parsed completely by its last beat, whatever follows it.
use crate::arith::Widen;
use rust_hdl::prelude::*;
use smartnic_contract::frame::{self, ipv6_ext};

pub mod bytes;
pub mod hops;

use bytes::ByteRev;
use hops::HopSum;

/// Clocks from a frame's last beat to its descriptor: the last beat set before clock edge
/// `k` shows on the outputs after edge `k + 1` (two register stages: the verdict inputs,
/// then class, key and delay).
pub const LATENCY: usize = 2;
pub const CLASS_IP: u8 = 1;
pub const CLASS_NON_IP: u8 = 2;
pub const CLASS_MALFORMED: u8 = 3;
/// The beat counter `t` stops here, so the byte position of a beat (`8 t`, 16 bits in the
/// chain's cursor and [`hops::HopSum`]) never wraps back onto the headers: every header the
/// chain reads lies in the first ~17 KB of a frame (beat ~2100), so a stopped count only
/// ever means "far past them". The frame's length is counted separately, in
/// [`frame::LEN_BITS`] bits.
const T_MAX: u64 = (1 << 13) - 1;

// Step states of the header chain.
const S_IDLE: u64 = 0;
const S_V4: u64 = 1;
const S_V6A: u64 = 2;
const S_V6B: u64 = 3;
const S_EXT: u64 = 4;
const S_TCP: u64 = 5;
const S_UDP: u64 = 6;

macro_rules! konst {
    ($v:expr) => {
        Constant::new(($v as u64).to_bits())
    };
}

/// The packet parser of the NIC: frame lengths in the contract's [`frame::LEN_BITS`].
pub type Parser = LenParser<{ frame::LEN_BITS }>;

/// The packet parser (see the module docs) with `LB`-bit frame lengths: frames up to
/// `2^LB - 1` bytes are parsed and measured exactly, longer ones are malformed. The NIC uses
/// [`Parser`] (`LB` = [`frame::LEN_BITS`]); a narrower `LB` exists so the length limit's logic
/// can be simulated on frames of a few hundred KB instead of 4 GB. `16 <= LB <= 32`.
#[derive(LogicBlock)]
pub struct LenParser<const LB: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub tdata: Signal<In, Bits<64>>,
    pub tkeep: Signal<In, Bits<8>>,
    pub tlast: Signal<In, Bit>,
    pub tuser: Signal<In, Bit>,
    pub tvalid: Signal<In, Bit>,
    pub tready: Signal<Out, Bit>,
    pub now: Signal<In, Bits<64>>,
    pub d_valid: Signal<Out, Bit>,
    pub d_class: Signal<Out, Bits<2>>,
    pub d_key: Signal<Out, Bits<104>>,
    pub d_len: Signal<Out, Bits<LB>>,
    pub d_ts: Signal<Out, Bits<64>>,
    pub d_delay: Signal<Out, Bits<64>>,
    pub frames: Signal<Out, Bits<64>>,
    pub ip_packets: Signal<Out, Bits<64>>,
    pub non_ip: Signal<Out, Bits<64>>,
    pub malformed: Signal<Out, Bits<64>>,
    // Sub-blocks.
    rev: ByteRev,
    hops: HopSum,
    w_hist: Widen<192, 64>,
    w_win_h: Widen<448, 192>,
    w_win_b: Widen<448, 64>,
    w_src: Widen<104, 32>,
    w_dst: Widen<104, 32>,
    w_sp: Widen<104, 16>,
    w_dp: Widen<104, 16>,
    w_proto: Widen<104, 8>,
    w_need: Widen<LB, 16>,
    // Window history (beats t-3, t-2, t-1; oldest on top), not per frame.
    hist: DFF<Bits<192>>,
    // Per-frame state, cleared with the last beat.
    t: DFF<Bits<16>>,
    too_long: DFF<Bit>,
    acc: DFF<Bits<LB>>,
    hole: DFF<Bit>,
    err: DFF<Bit>,
    ts: DFF<Bits<64>>,
    shim: DFF<Bit>,
    sc: DFF<Bits<2>>,
    nhops: DFF<Bits<16>>,
    hrs: DFF<Bits<16>>,
    hre: DFF<Bits<16>>,
    nonip: DFF<Bit>,
    st: DFF<Bits<3>>,
    cur: DFF<Bits<16>>,
    span: DFF<Bits<16>>,
    fire: DFF<Bits<16>>,
    sh: DFF<Bits<9>>,
    nh: DFF<Bits<8>>,
    cnt: DFF<Bits<4>>,
    ffrag: DFF<Bit>,
    ipb: DFF<Bits<16>>,
    ipt: DFF<Bits<16>>,
    ipu: DFF<Bit>,
    need: DFF<Bits<16>>,
    bad: DFF<Bit>,
    chk_en: DFF<Bit>,
    chk_c2: DFF<Bits<16>>,
    ipbad: DFF<Bit>,
    src: DFF<Bits<32>>,
    dst: DFF<Bits<32>>,
    sp: DFF<Bits<16>>,
    dp: DFF<Bits<16>>,
    proto: DFF<Bits<8>>,
    // Descriptor and counters.
    r_valid: DFF<Bit>,
    r_bad: DFF<Bit>,
    r_nonip: DFF<Bit>,
    r_need: DFF<Bits<16>>,
    r_chk: DFF<Bit>,
    r_c2: DFF<Bits<16>>,
    r_ipb: DFF<Bits<16>>,
    r_ipt: DFF<Bits<16>>,
    r_ipu: DFF<Bit>,
    r_len: DFF<Bits<LB>>,
    r_ts: DFF<Bits<64>>,
    r_src: DFF<Bits<32>>,
    r_dst: DFF<Bits<32>>,
    r_sp: DFF<Bits<16>>,
    r_dp: DFF<Bits<16>>,
    r_proto: DFF<Bits<8>>,
    o_valid: DFF<Bit>,
    o_class: DFF<Bits<2>>,
    o_src: DFF<Bits<32>>,
    o_dst: DFF<Bits<32>>,
    o_sp: DFF<Bits<16>>,
    o_dp: DFF<Bits<16>>,
    o_proto: DFF<Bits<8>>,
    o_len: DFF<Bits<LB>>,
    o_ts: DFF<Bits<64>>,
    o_delay: DFF<Bits<64>>,
    c_frames: DFF<Bits<64>>,
    c_ip: DFF<Bits<64>>,
    c_nonip: DFF<Bits<64>>,
    c_mal: DFF<Bits<64>>,
    // Wires.
    bus: Signal<Local, Bits<64>>,
    win: Signal<Local, Bits<448>>,
    tv: Signal<Local, Bits<16>>,
    early: Signal<Local, Bit>,
    hda_off: Signal<Local, Bits<9>>,
    hdb_off: Signal<Local, Bits<9>>,
    hda: Signal<Local, Bits<24>>,
    hdb: Signal<Local, Bits<96>>,
    et0: Signal<Local, Bits<16>>,
    et1: Signal<Local, Bits<16>>,
    et2: Signal<Local, Bits<16>>,
    tag1: Signal<Local, Bit>,
    tag2: Signal<Local, Bit>,
    tag3: Signal<Local, Bit>,
    l2et: Signal<Local, Bits<16>>,
    l2end: Signal<Local, Bits<16>>,
    l2sc: Signal<Local, Bits<2>>,
    skind: Signal<Local, Bits<8>>,
    snext: Signal<Local, Bits<16>>,
    sn: Signal<Local, Bits<16>>,
    l2shim: Signal<Local, Bit>,
    l2bad: Signal<Local, Bit>,
    l2p: Signal<Local, Bits<16>>,
    l2fet: Signal<Local, Bits<16>>,
    l2v4: Signal<Local, Bit>,
    l2v6: Signal<Local, Bit>,
    al: Signal<Local, Bits<192>>,
    fire_now: Signal<Local, Bit>,
    ihl: Signal<Local, Bits<16>>,
    hlen: Signal<Local, Bits<16>>,
    elen: Signal<Local, Bits<16>>,
    c2: Signal<Local, Bits<16>>,
    dgo: Signal<Local, Bit>,
    chk: Signal<Local, Bit>,
    ipfail: Signal<Local, Bit>,
    dc: Signal<Local, Bits<16>>,
    dnh: Signal<Local, Bits<8>>,
    dcnt: Signal<Local, Bits<4>>,
    n_shim: Signal<Local, Bit>,
    n_sc: Signal<Local, Bits<2>>,
    n_hops: Signal<Local, Bits<16>>,
    n_nonip: Signal<Local, Bit>,
    n_st: Signal<Local, Bits<3>>,
    n_cur: Signal<Local, Bits<16>>,
    n_span: Signal<Local, Bits<16>>,
    n_nh: Signal<Local, Bits<8>>,
    n_cnt: Signal<Local, Bits<4>>,
    n_ffrag: Signal<Local, Bit>,
    n_ipb: Signal<Local, Bits<16>>,
    n_ipt: Signal<Local, Bits<16>>,
    n_ipu: Signal<Local, Bit>,
    n_need: Signal<Local, Bits<16>>,
    n_bad: Signal<Local, Bit>,
    n_src: Signal<Local, Bits<32>>,
    n_dst: Signal<Local, Bits<32>>,
    n_sp: Signal<Local, Bits<16>>,
    n_dp: Signal<Local, Bits<16>>,
    n_proto: Signal<Local, Bits<8>>,
    arm_end: Signal<Local, Bits<16>>,
    kc: Signal<Local, Bits<LB>>,
    kok: Signal<Local, Bit>,
    flen: Signal<Local, Bits<LB>>,
    last_long: Signal<Local, Bit>,
    eof: Signal<Local, Bit>,
    clr: Signal<Local, Bit>,
    mal: Signal<Local, Bit>,
    is_ip: Signal<Local, Bit>,
    // Constants.
    kpat: [Constant<Bits<8>>; 8],
    kval: [Constant<Bits<LB>>; 8],
    q0: Constant<Bits<16>>,
    q1: Constant<Bits<16>>,
    q2: Constant<Bits<16>>,
    q4: Constant<Bits<16>>,
    q6: Constant<Bits<16>>,
    q7: Constant<Bits<16>>,
    q8: Constant<Bits<16>>,
    q12: Constant<Bits<16>>,
    q14: Constant<Bits<16>>,
    q15: Constant<Bits<16>>,
    q16: Constant<Bits<16>>,
    q18: Constant<Bits<16>>,
    q19: Constant<Bits<16>>,
    q20: Constant<Bits<16>>,
    q22: Constant<Bits<16>>,
    q23: Constant<Bits<16>>,
    q24: Constant<Bits<16>>,
    q40: Constant<Bits<16>>,
    q_tmax: Constant<Bits<16>>,
    len_max: Constant<Bits<LB>>,
    acc_max: Constant<Bits<LB>>,
    len_beat: Constant<Bits<LB>>,
    len_zero: Constant<Bits<LB>>,
    m_0f: Constant<Bits<16>>,
    m_ff: Constant<Bits<16>>,
    m_1fff: Constant<Bits<16>>,
    m_fff8: Constant<Bits<16>>,
    et_vlan: Constant<Bits<16>>,
    et_qinq: Constant<Bits<16>>,
    et_qinq_old: Constant<Bits<16>>,
    et_shim: Constant<Bits<16>>,
    et_ipv4: Constant<Bits<16>>,
    et_ipv6: Constant<Bits<16>>,
    p_hbh: Constant<Bits<8>>,
    p_rt: Constant<Bits<8>>,
    p_dst: Constant<Bits<8>>,
    p_frag: Constant<Bits<8>>,
    p_ah: Constant<Bits<8>>,
    p_tcp: Constant<Bits<8>>,
    p_udp: Constant<Bits<8>>,
    kind_int: Constant<Bits<8>>,
    b0: Constant<Bits<9>>,
    o136: Constant<Bits<9>>,
    o32: Constant<Bits<9>>,
    o8: Constant<Bits<9>>,
    o7: Constant<Bits<9>>,
    o3: Constant<Bits<9>>,
    f_full: Constant<Bits<8>>,
    v4: Constant<Bits<4>>,
    v6: Constant<Bits<4>>,
    tcp_min: Constant<Bits<4>>,
    n1: Constant<Bits<4>>,
    n_ext_max: Constant<Bits<4>>,
    n0: Constant<Bits<4>>,
    s_idle: Constant<Bits<3>>,
    s_v4: Constant<Bits<3>>,
    s_v6a: Constant<Bits<3>>,
    s_v6b: Constant<Bits<3>>,
    s_ext: Constant<Bits<3>>,
    s_tcp: Constant<Bits<3>>,
    s_udp: Constant<Bits<3>>,
    k0: Constant<Bits<2>>,
    k1: Constant<Bits<2>>,
    k2: Constant<Bits<2>>,
    cl_ip: Constant<Bits<2>>,
    cl_nonip: Constant<Bits<2>>,
    cl_mal: Constant<Bits<2>>,
    z8: Constant<Bits<8>>,
    z32: Constant<Bits<32>>,
    z64: Constant<Bits<64>>,
    z192: Constant<Bits<192>>,
    one64: Constant<Bits<64>>,
}

impl<const LB: usize> Default for LenParser<LB> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const LB: usize> LenParser<LB> {
    /// The longest frame, in bytes.
    pub const MAX_LEN: u64 = (1 << LB) - 1;

    pub fn new() -> Self {
        assert!((16..=32).contains(&LB), "frame length width LB={LB} must be 16..=32");
        LenParser {
            clock: Default::default(),
            reset: Default::default(),
            tdata: Default::default(),
            tkeep: Default::default(),
            tlast: Default::default(),
            tuser: Default::default(),
            tvalid: Default::default(),
            tready: Default::default(),
            now: Default::default(),
            d_valid: Default::default(),
            d_class: Default::default(),
            d_key: Default::default(),
            d_len: Default::default(),
            d_ts: Default::default(),
            d_delay: Default::default(),
            frames: Default::default(),
            ip_packets: Default::default(),
            non_ip: Default::default(),
            malformed: Default::default(),
            rev: Default::default(),
            hops: Default::default(),
            w_hist: Default::default(),
            w_win_h: Default::default(),
            w_win_b: Default::default(),
            w_src: Default::default(),
            w_dst: Default::default(),
            w_sp: Default::default(),
            w_dp: Default::default(),
            w_proto: Default::default(),
            w_need: Default::default(),
            hist: Default::default(),
            t: Default::default(),
            too_long: Default::default(),
            acc: Default::default(),
            hole: Default::default(),
            err: Default::default(),
            ts: Default::default(),
            shim: Default::default(),
            sc: Default::default(),
            nhops: Default::default(),
            hrs: Default::default(),
            hre: Default::default(),
            nonip: Default::default(),
            st: Default::default(),
            cur: Default::default(),
            span: Default::default(),
            fire: Default::default(),
            sh: Default::default(),
            nh: Default::default(),
            cnt: Default::default(),
            ffrag: Default::default(),
            ipb: Default::default(),
            ipt: Default::default(),
            ipu: Default::default(),
            need: Default::default(),
            bad: Default::default(),
            chk_en: Default::default(),
            chk_c2: Default::default(),
            ipbad: Default::default(),
            src: Default::default(),
            dst: Default::default(),
            sp: Default::default(),
            dp: Default::default(),
            proto: Default::default(),
            r_valid: Default::default(),
            r_bad: Default::default(),
            r_nonip: Default::default(),
            r_need: Default::default(),
            r_chk: Default::default(),
            r_c2: Default::default(),
            r_ipb: Default::default(),
            r_ipt: Default::default(),
            r_ipu: Default::default(),
            r_len: Default::default(),
            r_ts: Default::default(),
            r_src: Default::default(),
            r_dst: Default::default(),
            r_sp: Default::default(),
            r_dp: Default::default(),
            r_proto: Default::default(),
            o_valid: Default::default(),
            o_class: Default::default(),
            o_src: Default::default(),
            o_dst: Default::default(),
            o_sp: Default::default(),
            o_dp: Default::default(),
            o_proto: Default::default(),
            o_len: Default::default(),
            o_ts: Default::default(),
            o_delay: Default::default(),
            c_frames: Default::default(),
            c_ip: Default::default(),
            c_nonip: Default::default(),
            c_mal: Default::default(),
            bus: Default::default(),
            win: Default::default(),
            tv: Default::default(),
            early: Default::default(),
            hda_off: Default::default(),
            hdb_off: Default::default(),
            hda: Default::default(),
            hdb: Default::default(),
            et0: Default::default(),
            et1: Default::default(),
            et2: Default::default(),
            tag1: Default::default(),
            tag2: Default::default(),
            tag3: Default::default(),
            l2et: Default::default(),
            l2end: Default::default(),
            l2sc: Default::default(),
            skind: Default::default(),
            snext: Default::default(),
            sn: Default::default(),
            l2shim: Default::default(),
            l2bad: Default::default(),
            l2p: Default::default(),
            l2fet: Default::default(),
            l2v4: Default::default(),
            l2v6: Default::default(),
            al: Default::default(),
            fire_now: Default::default(),
            ihl: Default::default(),
            hlen: Default::default(),
            elen: Default::default(),
            c2: Default::default(),
            dgo: Default::default(),
            chk: Default::default(),
            ipfail: Default::default(),
            dc: Default::default(),
            dnh: Default::default(),
            dcnt: Default::default(),
            n_shim: Default::default(),
            n_sc: Default::default(),
            n_hops: Default::default(),
            n_nonip: Default::default(),
            n_st: Default::default(),
            n_cur: Default::default(),
            n_span: Default::default(),
            n_nh: Default::default(),
            n_cnt: Default::default(),
            n_ffrag: Default::default(),
            n_ipb: Default::default(),
            n_ipt: Default::default(),
            n_ipu: Default::default(),
            n_need: Default::default(),
            n_bad: Default::default(),
            n_src: Default::default(),
            n_dst: Default::default(),
            n_sp: Default::default(),
            n_dp: Default::default(),
            n_proto: Default::default(),
            arm_end: Default::default(),
            kc: Default::default(),
            kok: Default::default(),
            flen: Default::default(),
            last_long: Default::default(),
            eof: Default::default(),
            clr: Default::default(),
            mal: Default::default(),
            is_ip: Default::default(),
            kpat: std::array::from_fn(|i| konst!((1u64 << (i + 1)) - 1)),
            kval: std::array::from_fn(|i| konst!(i + 1)),
            q0: konst!(0),
            q1: konst!(1),
            q2: konst!(2),
            q4: konst!(4),
            q6: konst!(6),
            q7: konst!(7),
            q8: konst!(8),
            q12: konst!(12),
            q14: konst!(14),
            q15: konst!(15),
            q16: konst!(16),
            q18: konst!(18),
            q19: konst!(19),
            q20: konst!(20),
            q22: konst!(22),
            q23: konst!(23),
            q24: konst!(24),
            q40: konst!(40),
            q_tmax: konst!(T_MAX),
            len_max: konst!(Self::MAX_LEN),
            // One more full beat after this many bytes would pass the longest frame.
            acc_max: konst!(Self::MAX_LEN - 8),
            len_beat: konst!(8),
            len_zero: konst!(0),
            m_0f: konst!(0x000F),
            m_ff: konst!(0x00FF),
            m_1fff: konst!(0x1FFF),
            m_fff8: konst!(0xFFF8),
            et_vlan: konst!(frame::ETHERTYPE_VLAN),
            et_qinq: konst!(frame::ETHERTYPE_QINQ),
            et_qinq_old: konst!(frame::ETHERTYPE_QINQ_OLD),
            et_shim: konst!(smartnic_contract::shim::ETHERTYPE_SHIM),
            et_ipv4: konst!(frame::ETHERTYPE_IPV4),
            et_ipv6: konst!(frame::ETHERTYPE_IPV6),
            p_hbh: konst!(ipv6_ext::HOP_BY_HOP),
            p_rt: konst!(ipv6_ext::ROUTING),
            p_dst: konst!(ipv6_ext::DEST_OPTS),
            p_frag: konst!(ipv6_ext::FRAGMENT),
            p_ah: konst!(ipv6_ext::AUTH),
            p_tcp: konst!(smartnic_contract::key::PROTO_TCP),
            p_udp: konst!(smartnic_contract::key::PROTO_UDP),
            kind_int: konst!(smartnic_contract::shim::KIND_INT_STACK),
            b0: konst!(0),
            o136: konst!(136),
            o32: konst!(32),
            o8: konst!(8),
            o7: konst!(7),
            o3: konst!(3),
            f_full: konst!(0xFF),
            v4: konst!(4),
            v6: konst!(6),
            tcp_min: konst!(5),
            n1: konst!(1),
            n_ext_max: konst!(frame::MAX_EXT_HEADERS),
            n0: konst!(0),
            s_idle: konst!(S_IDLE),
            s_v4: konst!(S_V4),
            s_v6a: konst!(S_V6A),
            s_v6b: konst!(S_V6B),
            s_ext: konst!(S_EXT),
            s_tcp: konst!(S_TCP),
            s_udp: konst!(S_UDP),
            k0: konst!(0),
            k1: konst!(1),
            k2: konst!(2),
            cl_ip: konst!(CLASS_IP),
            cl_nonip: konst!(CLASS_NON_IP),
            cl_mal: konst!(CLASS_MALFORMED),
            z8: konst!(0),
            z32: konst!(0),
            z64: konst!(0),
            z192: Constant::new(Bits::<192>::default()),
            one64: konst!(1),
        }
    }
}

impl<const LB: usize> Logic for LenParser<LB> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, hist, t, too_long, acc, hole, err, ts, shim, sc, nhops, hrs, hre, nonip, st, cur,
            span, fire, sh, nh, cnt, ffrag, ipb, ipt, ipu, need, bad, chk_en, chk_c2, ipbad, src, dst, sp,
            dp, proto, r_valid, r_bad, r_nonip, r_need, r_chk, r_c2, r_ipb, r_ipt, r_ipu, r_len, r_ts, r_src,
            r_dst, r_sp, r_dp, r_proto, o_valid, o_class, o_src, o_dst, o_sp, o_dp, o_proto, o_len, o_ts,
            o_delay, c_frames, c_ip, c_nonip, c_mal
        );
        self.hops.clock.next = self.clock.val();
        self.tready.next = true;

        // ---- The window: byte-reversed beat below the three previous beats.
        self.rev.x.next = self.tdata.val();
        self.bus.next = self.rev.y.val();
        self.w_hist.x.next = self.bus.val();
        self.w_win_h.x.next = self.hist.q.val();
        self.w_win_b.x.next = self.bus.val();
        self.win.next = (self.w_win_h.y.val() << 256) | (self.w_win_b.y.val() << 192);
        self.tv.next = self.t.q.val();
        self.early.next = self.tv.val() < self.q4.val();

        // ---- L2 + shim at fixed offsets: the window aligned to the frame start (beats <= 3).
        // Frame byte a sits at window byte a + 8 (3 - t), i.e. bits 447 - 8 (a + 8 (3 - t)).
        // (t mod 4 keeps the select in range in later beats, where it is not used.)
        self.hda_off.next = ((self.tv.val().get_bits::<9>(0) & self.o3.val()) << 6) + self.o136.val();
        self.hdb_off.next = ((self.tv.val().get_bits::<9>(0) & self.o3.val()) << 6) + self.o32.val();
        self.hda.next = self.win.val().get_bits::<24>(self.hda_off.val().index()); // bytes 12..14
        self.hdb.next = self.win.val().get_bits::<96>(self.hdb_off.val().index()); // bytes 16..27
        self.et0.next = self.hda.val().get_bits::<16>(8);
        self.et1.next = self.hdb.val().get_bits::<16>(80);
        self.et2.next = self.hdb.val().get_bits::<16>(48);
        self.tag1.next = (self.et0.val() == self.et_vlan.val())
            | (self.et0.val() == self.et_qinq.val())
            | (self.et0.val() == self.et_qinq_old.val());
        self.tag2.next = self.tag1.val()
            & ((self.et1.val() == self.et_vlan.val())
                | (self.et1.val() == self.et_qinq.val())
                | (self.et1.val() == self.et_qinq_old.val()));
        self.tag3.next = self.tag2.val()
            & ((self.et2.val() == self.et_vlan.val())
                | (self.et2.val() == self.et_qinq.val())
                | (self.et2.val() == self.et_qinq_old.val()));
        if self.tag2.val() {
            // shim at 22: kind 22, next 24..25, hops 26..27
            self.l2et.next = self.et2.val();
            self.l2end.next = self.q22.val();
            self.l2sc.next = self.k2.val();
            self.skind.next = self.hdb.val().get_bits::<8>(40);
            self.snext.next = self.hdb.val().get_bits::<16>(16);
            self.sn.next = self.hdb.val().get_bits::<16>(0);
        } else if self.tag1.val() {
            // shim at 18: kind 18, next 20..21, hops 22..23
            self.l2et.next = self.et1.val();
            self.l2end.next = self.q18.val();
            self.l2sc.next = self.k1.val();
            self.skind.next = self.hdb.val().get_bits::<8>(72);
            self.snext.next = self.hdb.val().get_bits::<16>(48);
            self.sn.next = self.hdb.val().get_bits::<16>(32);
        } else {
            // shim at 14: kind 14, next 16..17, hops 18..19
            self.l2et.next = self.et0.val();
            self.l2end.next = self.q14.val();
            self.l2sc.next = self.k0.val();
            self.skind.next = self.hda.val().get_bits::<8>(0);
            self.snext.next = self.hdb.val().get_bits::<16>(80);
            self.sn.next = self.hdb.val().get_bits::<16>(64);
        }
        self.l2shim.next = self.l2et.val() == self.et_shim.val();
        self.l2bad.next = self.tag3.val();
        self.l2p.next = self.l2end.val();
        self.l2fet.next = self.l2et.val();
        if self.l2shim.val() {
            self.l2bad.next = self.tag3.val()
                | (self.skind.val() != self.kind_int.val())
                | (self.sn.val() > self.q16.val())
                | (self.snext.val() == self.et_shim.val());
            self.l2p.next = self.l2end.val() + self.q6.val() + (self.sn.val() << 2) + (self.sn.val() << 1);
            self.l2fet.next = self.snext.val();
        }
        self.l2v4.next = self.l2fet.val() == self.et_ipv4.val();
        self.l2v6.next = self.l2fet.val() == self.et_ipv6.val();

        // ---- The header chain: the current step's bytes 0..23, aligned.
        self.al.next = self.win.val().get_bits::<192>(self.sh.q.val().index());
        self.fire_now.next = (self.st.q.val() != self.s_idle.val()) & (self.tv.val() == self.fire.q.val());
        // Defaults: nothing changes.
        self.n_shim.next = self.shim.q.val();
        self.n_sc.next = self.sc.q.val();
        self.n_hops.next = self.nhops.q.val();
        self.n_nonip.next = self.nonip.q.val();
        self.n_st.next = self.st.q.val();
        self.n_cur.next = self.cur.q.val();
        self.n_span.next = self.span.q.val();
        self.n_nh.next = self.nh.q.val();
        self.n_cnt.next = self.cnt.q.val();
        self.n_ffrag.next = self.ffrag.q.val();
        self.n_ipb.next = self.ipb.q.val();
        self.n_ipt.next = self.ipt.q.val();
        self.n_ipu.next = self.ipu.q.val();
        self.n_need.next = self.need.q.val();
        self.n_bad.next = self.bad.q.val();
        self.n_src.next = self.src.q.val();
        self.n_dst.next = self.dst.q.val();
        self.n_sp.next = self.sp.q.val();
        self.n_dp.next = self.dp.q.val();
        self.n_proto.next = self.proto.q.val();
        self.ihl.next = (self.al.val().get_bits::<16>(176) >> 8) & self.m_0f.val();
        self.hlen.next = self.q0.val();
        self.elen.next = self.al.val().get_bits::<16>(176) & self.m_ff.val();
        self.c2.next = self.cur.q.val();
        self.dgo.next = false;
        self.chk.next = false;
        self.dc.next = self.cur.q.val();
        self.dnh.next = self.nh.q.val();
        self.dcnt.next = self.cnt.q.val();
        if self.early.val() {
            self.n_shim.next = self.l2shim.val();
            self.n_sc.next = self.l2sc.val();
            self.n_hops.next = self.sn.val();
            self.n_nonip.next = !(self.l2v4.val() | self.l2v6.val());
            self.n_bad.next = self.l2bad.val();
            self.n_need.next = self.l2p.val();
            self.n_cur.next = self.l2p.val();
            if self.l2v4.val() {
                self.n_st.next = self.s_v4.val();
                self.n_span.next = self.q19.val();
            } else if self.l2v6.val() {
                self.n_st.next = self.s_v6a.val();
                self.n_span.next = self.q23.val();
            } else {
                self.n_st.next = self.s_idle.val();
                self.n_span.next = self.q0.val();
            }
        } else if self.fire_now.val() {
            if self.st.q.val() == self.s_v4.val() {
                // IPv4: ver/IHL 0, total 2..3, fragment 6..7, proto 9, src 12..15, dst 16..19.
                self.hlen.next = self.ihl.val() << 2;
                self.n_bad.next = self.bad.q.val()
                    | (self.al.val().get_bits::<4>(188) != self.v4.val())
                    | (self.hlen.val() < self.q20.val())
                    | (self.al.val().get_bits::<16>(160) < self.hlen.val());
                self.n_need.next = self.cur.q.val() + self.hlen.val();
                self.n_ipb.next = self.cur.q.val();
                self.n_ipt.next = self.al.val().get_bits::<16>(160);
                self.n_ipu.next = false;
                self.n_src.next = self.al.val().get_bits::<32>(64);
                self.n_dst.next = self.al.val().get_bits::<32>(32);
                self.n_proto.next = self.al.val().get_bits::<8>(112);
                self.n_cur.next = self.cur.q.val() + self.hlen.val();
                if (self.al.val().get_bits::<16>(128) & self.m_1fff.val()) != self.q0.val() {
                    self.n_st.next = self.s_idle.val();
                } else if self.al.val().get_bits::<8>(112) == self.p_tcp.val() {
                    self.n_st.next = self.s_tcp.val();
                    self.n_span.next = self.q12.val();
                } else if self.al.val().get_bits::<8>(112) == self.p_udp.val() {
                    self.n_st.next = self.s_udp.val();
                    self.n_span.next = self.q7.val();
                } else {
                    self.n_st.next = self.s_idle.val();
                }
            } else if self.st.q.val() == self.s_v6a.val() {
                // IPv6 bytes 0..23: version, payload length 4..5, next 6, source 8..23.
                self.n_bad.next = self.bad.q.val() | (self.al.val().get_bits::<4>(188) != self.v6.val());
                self.n_need.next = self.cur.q.val() + self.q40.val();
                self.n_ipb.next = self.cur.q.val() + self.q40.val();
                self.n_ipt.next = self.al.val().get_bits::<16>(144);
                self.n_ipu.next = self.al.val().get_bits::<16>(144) == self.q0.val();
                self.n_src.next = self.al.val().get_bits::<32>(96)
                    ^ self.al.val().get_bits::<32>(64)
                    ^ self.al.val().get_bits::<32>(32)
                    ^ self.al.val().get_bits::<32>(0);
                self.n_nh.next = self.al.val().get_bits::<8>(136);
                self.n_cur.next = self.cur.q.val() + self.q24.val();
                self.n_st.next = self.s_v6b.val();
                self.n_span.next = self.q15.val();
            } else if self.st.q.val() == self.s_v6b.val() {
                // IPv6 bytes 24..39: destination; then the chain at 40.
                self.n_dst.next = self.al.val().get_bits::<32>(160)
                    ^ self.al.val().get_bits::<32>(128)
                    ^ self.al.val().get_bits::<32>(96)
                    ^ self.al.val().get_bits::<32>(64);
                self.dgo.next = true;
                self.dc.next = self.cur.q.val() + self.q16.val();
            } else if self.st.q.val() == self.s_ext.val() {
                // Extension header of type nh: next 0, length 1 (fragment: offset 2..3).
                if self.nh.q.val() == self.p_frag.val() {
                    self.hlen.next = self.q8.val();
                    if (self.al.val().get_bits::<16>(160) & self.m_fff8.val()) != self.q0.val() {
                        self.n_ffrag.next = true;
                    }
                } else if self.nh.q.val() == self.p_ah.val() {
                    self.hlen.next = (self.elen.val() + self.q2.val()) << 2;
                } else {
                    self.hlen.next = (self.elen.val() + self.q1.val()) << 3;
                }
                self.c2.next = self.cur.q.val() + self.hlen.val();
                self.n_need.next = self.c2.val();
                self.n_bad.next = self.bad.q.val();
                self.chk.next = true;
                self.dgo.next = true;
                self.dc.next = self.c2.val();
                self.dnh.next = self.al.val().get_bits::<8>(184);
                self.dcnt.next = self.cnt.q.val() + self.n1.val();
            } else if self.st.q.val() == self.s_tcp.val() {
                // TCP: ports 0..3, data offset 12 (high nibble); 20 bytes within the IP packet.
                self.n_sp.next = self.al.val().get_bits::<16>(176);
                self.n_dp.next = self.al.val().get_bits::<16>(160);
                self.c2.next = self.cur.q.val() + self.q20.val();
                self.n_bad.next = self.bad.q.val() | (self.al.val().get_bits::<4>(92) < self.tcp_min.val());
                self.n_need.next = self.c2.val();
                self.chk.next = true;
                self.n_st.next = self.s_idle.val();
            } else {
                // UDP: ports 0..3; 8 bytes within the IP packet.
                self.n_sp.next = self.al.val().get_bits::<16>(176);
                self.n_dp.next = self.al.val().get_bits::<16>(160);
                self.c2.next = self.cur.q.val() + self.q8.val();
                self.n_bad.next = self.bad.q.val();
                self.n_need.next = self.c2.val();
                self.chk.next = true;
                self.n_st.next = self.s_idle.val();
            }
        }
        // Dispatch on an IPv6 next header (after the destination or an extension header).
        if self.dgo.val() {
            self.n_cnt.next = self.dcnt.val();
            self.n_nh.next = self.dnh.val();
            self.n_cur.next = self.dc.val();
            if self.n_ffrag.val() {
                // After a later fragment's header comes fragment data (RFC 8200 4.5): the
                // protocol is its next header, whatever it names; no ports.
                self.n_proto.next = self.dnh.val();
                self.n_st.next = self.s_idle.val();
            } else if (self.dnh.val() == self.p_hbh.val())
                | (self.dnh.val() == self.p_rt.val())
                | (self.dnh.val() == self.p_dst.val())
                | (self.dnh.val() == self.p_frag.val())
                | (self.dnh.val() == self.p_ah.val())
            {
                if self.dcnt.val() == self.n_ext_max.val() {
                    self.n_bad.next = true;
                    self.n_st.next = self.s_idle.val();
                } else {
                    self.n_st.next = self.s_ext.val();
                    self.n_span.next = self.q7.val();
                }
            } else {
                self.n_proto.next = self.dnh.val();
                if self.dnh.val() == self.p_tcp.val() {
                    self.n_st.next = self.s_tcp.val();
                    self.n_span.next = self.q12.val();
                } else if self.dnh.val() == self.p_udp.val() {
                    self.n_st.next = self.s_udp.val();
                    self.n_span.next = self.q7.val();
                } else {
                    self.n_st.next = self.s_idle.val();
                }
            }
        }
        // Arm: the next step fires in beat (c + L) / 8, when its byte 0 is window byte
        // 24 + (c + L) % 8 - L; `sh` holds the bit offset of its bytes 0..23 in `win`:
        // 448 - 192 - 8 (24 + (c + L) % 8 - L) = 8 (8 + L - (c + L) % 8).
        self.arm_end.next = self.n_cur.val() + self.n_span.val();

        // ---- INT stack latencies.
        self.hops.valid.next = self.tvalid.val();
        self.hops.bus.next = self.bus.val();
        self.hops.t.next = self.tv.val();
        self.hops.shim.next = self.shim.q.val();
        self.hops.sc.next = self.sc.q.val();
        self.hops.n.next = self.nhops.q.val();
        // Frame bytes 22..31 in beat 4 (window bytes 14..23).
        self.hops.early.next = self.win.val().get_bits::<80>(256);
        self.hops.rs.next = self.hrs.q.val();
        self.hops.re.next = self.hre.q.val();

        // ---- Frame end: length, class.
        self.kc.next = self.len_zero.val();
        self.kok.next = false;
        for i in 0..8 {
            if self.tkeep.val() == self.kpat[i].val() {
                self.kc.next = self.kval[i].val();
                self.kok.next = true;
            }
        }
        // The length: bytes of the earlier beats plus this one's; too long if that passes the
        // contract's maximum (checked before the add, which could wrap).
        self.last_long.next = self.acc.q.val() > (self.len_max.val() - self.kc.val());
        self.flen.next = self.acc.q.val() + self.kc.val();
        self.eof.next = self.tvalid.val() & self.tlast.val();
        self.clr.next = self.reset.val() | self.eof.val();
        self.hops.reset.next = self.reset.val();
        self.hops.first.next = self.tv.val() == self.q0.val();

        if self.tvalid.val() {
            self.hist.d.next = (self.hist.q.val() << 64) | self.w_hist.y.val();
            if self.tv.val() != self.q_tmax.val() {
                self.t.d.next = self.tv.val() + self.q1.val();
            }
            if self.acc.q.val() > self.acc_max.val() {
                self.too_long.d.next = true;
            } else {
                self.acc.d.next = self.acc.q.val() + self.len_beat.val();
            }
            self.hole.d.next = self.hole.q.val() | (self.tkeep.val() != self.f_full.val());
            self.err.d.next = self.err.q.val() | self.tuser.val();
            if self.tv.val() == self.q0.val() {
                self.ts.d.next = self.now.val();
            }
            self.shim.d.next = self.n_shim.val();
            self.sc.d.next = self.n_sc.val();
            self.nhops.d.next = self.n_hops.val();
            if self.early.val() {
                // The hop area [s + 6, s + 6 + 6n) (p when there is a shim).
                self.hrs.d.next = self.l2end.val() + self.q6.val();
                self.hre.d.next = self.l2p.val();
            }
            self.nonip.d.next = self.n_nonip.val();
            self.st.d.next = self.n_st.val();
            self.cur.d.next = self.n_cur.val();
            self.span.d.next = self.n_span.val();
            self.fire.d.next = self.arm_end.val() >> 3;
            self.sh.d.next = (self.o8.val() + self.n_span.val().get_bits::<9>(0)
                - (self.arm_end.val().get_bits::<9>(0) & self.o7.val()))
                << 3;
            self.nh.d.next = self.n_nh.val();
            self.cnt.d.next = self.n_cnt.val();
            self.ffrag.d.next = self.n_ffrag.val();
            self.ipb.d.next = self.n_ipb.val();
            self.ipt.d.next = self.n_ipt.val();
            self.ipu.d.next = self.n_ipu.val();
            self.need.d.next = self.n_need.val();
            self.bad.d.next = self.n_bad.val();
            self.src.d.next = self.n_src.val();
            self.dst.d.next = self.n_dst.val();
            self.sp.d.next = self.n_sp.val();
            self.dp.d.next = self.n_dp.val();
            self.proto.d.next = self.n_proto.val();
        }

        // ---- The IP-length check of the previous clock's step (EXT, TCP, UDP): header end
        // `c2` within the IP packet. Deferred by a clock to keep it off the step's path;
        // ipb/ipt/ipu are set by the IP step and do not change afterwards in the frame.
        self.ipfail.next = self.chk_en.q.val()
            & !self.ipu.q.val()
            & ((self.chk_c2.q.val() - self.ipb.q.val()) > self.ipt.q.val());
        self.chk_en.d.next = self.tvalid.val() & self.chk.val();
        self.chk_c2.d.next = self.c2.val();
        self.ipbad.d.next = self.ipbad.q.val() | self.ipfail.val();

        // ---- Descriptor stage 1 (the edge of the last beat): the frame's verdict inputs.
        self.r_valid.d.next = self.eof.val() & !self.reset.val();
        if self.eof.val() {
            self.r_bad.d.next = self.n_bad.val()
                | (self.n_st.val() != self.s_idle.val())
                | self.hole.q.val()
                | !self.kok.val()
                | self.err.q.val()
                | self.tuser.val()
                | self.too_long.q.val()
                | self.last_long.val()
                | self.ipbad.q.val()
                | self.ipfail.val();
            // The check of a step in the last beat itself goes to stage 2.
            self.r_chk.d.next = self.chk.val();
            self.r_c2.d.next = self.c2.val();
            self.r_ipb.d.next = self.n_ipb.val();
            self.r_ipt.d.next = self.n_ipt.val();
            self.r_ipu.d.next = self.n_ipu.val();
            self.r_nonip.d.next = self.n_nonip.val();
            self.r_need.d.next = self.n_need.val();
            if self.too_long.q.val() | self.last_long.val() {
                self.r_len.d.next = self.len_max.val();
            } else {
                self.r_len.d.next = self.flen.val();
            }
            if self.tv.val() == self.q0.val() {
                self.r_ts.d.next = self.now.val();
            } else {
                self.r_ts.d.next = self.ts.q.val();
            }
            self.r_src.d.next = self.n_src.val();
            self.r_dst.d.next = self.n_dst.val();
            self.r_sp.d.next = self.n_sp.val();
            self.r_dp.d.next = self.n_dp.val();
            self.r_proto.d.next = self.n_proto.val();
        }
        // ---- Stage 2: class, key and delay (the hop sum is the frame's total now).
        self.w_need.x.next = self.r_need.q.val();
        self.mal.next = self.r_bad.q.val()
            | (self.w_need.y.val() > self.r_len.q.val())
            | (self.r_chk.q.val()
                & !self.r_ipu.q.val()
                & ((self.r_c2.q.val() - self.r_ipb.q.val()) > self.r_ipt.q.val()));
        self.is_ip.next = !self.mal.val() & !self.r_nonip.q.val();
        self.o_valid.d.next = self.r_valid.q.val() & !self.reset.val();
        if self.r_valid.q.val() {
            self.o_len.d.next = self.r_len.q.val();
            self.o_ts.d.next = self.r_ts.q.val();
            if self.mal.val() {
                self.o_class.d.next = self.cl_mal.val();
            } else if self.r_nonip.q.val() {
                self.o_class.d.next = self.cl_nonip.val();
            } else {
                self.o_class.d.next = self.cl_ip.val();
            }
            if self.is_ip.val() {
                self.o_src.d.next = self.r_src.q.val();
                self.o_dst.d.next = self.r_dst.q.val();
                self.o_sp.d.next = self.r_sp.q.val();
                self.o_dp.d.next = self.r_dp.q.val();
                self.o_proto.d.next = self.r_proto.q.val();
                self.o_delay.d.next = self.hops.sum.val();
            } else {
                self.o_src.d.next = self.z32.val();
                self.o_dst.d.next = self.z32.val();
                self.o_sp.d.next = self.q0.val();
                self.o_dp.d.next = self.q0.val();
                self.o_proto.d.next = self.z8.val();
                self.o_delay.d.next = self.z64.val();
            }
        }
        if self.o_valid.q.val() {
            self.c_frames.d.next = self.c_frames.q.val() + self.one64.val();
            if self.o_class.q.val() == self.cl_ip.val() {
                self.c_ip.d.next = self.c_ip.q.val() + self.one64.val();
            } else if self.o_class.q.val() == self.cl_nonip.val() {
                self.c_nonip.d.next = self.c_nonip.q.val() + self.one64.val();
            } else {
                self.c_mal.d.next = self.c_mal.q.val() + self.one64.val();
            }
        }

        // ---- Clear the frame state with the last beat (and on reset).
        if self.clr.val() {
            self.t.d.next = self.q0.val();
            self.too_long.d.next = false;
            self.acc.d.next = self.len_zero.val();
            self.hole.d.next = false;
            self.err.d.next = false;
            self.ts.d.next = self.z64.val();
            self.shim.d.next = false;
            self.sc.d.next = self.k0.val();
            self.nhops.d.next = self.q0.val();
            self.hrs.d.next = self.q0.val();
            self.hre.d.next = self.q0.val();
            self.nonip.d.next = false;
            self.st.d.next = self.s_idle.val();
            self.cur.d.next = self.q0.val();
            self.span.d.next = self.q0.val();
            self.fire.d.next = self.q0.val();
            self.sh.d.next = self.b0.val();
            self.nh.d.next = self.z8.val();
            self.cnt.d.next = self.n0.val();
            self.ffrag.d.next = false;
            self.ipb.d.next = self.q0.val();
            self.ipt.d.next = self.q0.val();
            self.ipu.d.next = false;
            self.need.d.next = self.q0.val();
            self.bad.d.next = false;
            self.chk_en.d.next = false;
            self.ipbad.d.next = false;
            self.src.d.next = self.z32.val();
            self.dst.d.next = self.z32.val();
            self.sp.d.next = self.q0.val();
            self.dp.d.next = self.q0.val();
            self.proto.d.next = self.z8.val();
        }
        if self.reset.val() {
            self.hist.d.next = self.z192.val();
            self.c_frames.d.next = self.z64.val();
            self.c_ip.d.next = self.z64.val();
            self.c_nonip.d.next = self.z64.val();
            self.c_mal.d.next = self.z64.val();
        }

        // ---- Outputs.
        self.w_src.x.next = self.o_src.q.val();
        self.w_dst.x.next = self.o_dst.q.val();
        self.w_sp.x.next = self.o_sp.q.val();
        self.w_dp.x.next = self.o_dp.q.val();
        self.w_proto.x.next = self.o_proto.q.val();
        self.d_valid.next = self.o_valid.q.val();
        self.d_class.next = self.o_class.q.val();
        self.d_key.next = (self.w_src.y.val() << 72)
            | (self.w_dst.y.val() << 40)
            | (self.w_sp.y.val() << 24)
            | (self.w_dp.y.val() << 8)
            | self.w_proto.y.val();
        self.d_len.next = self.o_len.q.val();
        self.d_ts.next = self.o_ts.q.val();
        self.d_delay.next = self.o_delay.q.val();
        self.frames.next = self.c_frames.q.val();
        self.ip_packets.next = self.c_ip.q.val();
        self.non_ip.next = self.c_nonip.q.val();
        self.malformed.next = self.c_mal.q.val();
    }
}

#[cfg(test)]
mod tests;
