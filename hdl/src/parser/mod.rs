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
//! | `d_hops`, `d_sc` | 5, 2 | the INT stack's hop count and the shim's position `14 + 4 d_sc` (its VLAN tags); 0 without a shim and unless IP (the hop serializer, `per_switch::hop_serializer`, reads the hops with them) |
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
//! - **L2 + shim (beats 0..3)**, [`l2::L2`]: all their fields sit at fixed offsets below
//!   28 (EtherTypes at 12, 16, 20; the shim at 14, 18 or 22). They are decoded from the
//!   window aligned to the frame start in every beat up to 3 (or the last beat of a shorter
//!   frame).
//! - **Header chain (beat 4 on)**, [`chain::Chain`]: one step at a time, each at a cursor
//!   `c` (the header's first byte) with a span `L` (last byte it reads): IPv4 (`L` = 19: the
//!   whole 20-byte header), IPv6 in two steps (bytes 0..23: version, payload length, next
//!   header, source; then 24..39: destination), extension header (`L` = 7), TCP (`L` = 12),
//!   UDP (`L` = 7). A step fires in the beat that brings byte `c + L` (registered `fire`
//!   beat, registered window shift) and arms the next. Every next step starts at least 8
//!   bytes after the previous span ends, so it fires in a later beat: **zero lag, one step
//!   per clock at most, and no step is ever behind the stream** (`L <= 23` keeps its bytes
//!   in the window).
//! - **Lengths are numbers**: each step records what the frame must hold (`need`, checked
//!   against the length at the last beat) and checks its header against the IP packet's own
//!   length. Every step's span lies inside its own length requirement, so a step still
//!   armed at the last beat means the frame was cut short: malformed, as the software says.
//! - **Frame end**, [`desc::Desc`]: the length, the verdict in two register stages, the
//!   descriptor and the counters.
//! - **INT stack**: [`hops::HopSum`] adds the latency bytes as they pass (those below byte
//!   32 in beat 4, once the shim's position and hop count are registered).
//!
//! So a frame is parsed completely by its last beat, whatever follows it.
//!
//! # Sub-blocks
//!
//! | module | what |
//! |---|---|
//! | [`bytes`] | `ByteRev`: the beat byte-reversed, so header fields are big-endian slices |
//! | [`l2`] | `L2`: Ethernet, VLAN tags and the shim at fixed offsets in beats 0..3 |
//! | [`chain`] | `Chain`: the header-chain stepper (IPv4, IPv6, extension headers, TCP, UDP) |
//! | [`hops`] | `HopSum`: the INT stack's latencies, summed as they pass |
//! | [`desc`] | `Desc`: frame length, verdict, descriptor and counters |
use crate::arith::Widen;
use rust_hdl::prelude::*;
use smartnic_contract::frame;

pub mod bytes;
pub mod chain;
pub mod desc;
pub mod hops;
pub mod l2;

use bytes::ByteRev;
use chain::Chain;
use desc::Desc;
use hops::HopSum;
use l2::L2;

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

/// Bytes of a beat (the 64-bit bus).
pub const BEAT_BYTES: usize = 8;
/// Beats in the window: the current one and the three before it. The first [`WIN_BEATS`]
/// beats are the L2 beats ([`l2::L2`]), aligned to the frame start.
pub const WIN_BEATS: usize = 4;
/// Bytes of the window wire: the beats, then [`chain::STEP_BYTES`] of zero padding so a
/// step's 24-byte slice never runs off the end.
pub const WIN_BYTES: usize = WIN_BEATS * BEAT_BYTES + chain::STEP_BYTES;

/// The window's bit offset, in beat 0, of the frame bytes ending at `end` (exclusive): frame
/// byte `a` sits at window byte `a + 8 (3 - t)`, and each later beat moves it 64 bits up.
pub const fn frame_at_beat0(end: usize) -> usize {
    8 * (WIN_BYTES - end - (WIN_BEATS - 1) * BEAT_BYTES)
}

/// A [`Constant`] of any width from an integer.
macro_rules! konst {
    ($v:expr) => {
        Constant::new(($v as u64).to_bits())
    };
}
pub(crate) use konst;

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
    pub d_hops: Signal<Out, Bits<5>>,
    pub d_sc: Signal<Out, Bits<2>>,
    pub frames: Signal<Out, Bits<64>>,
    pub ip_packets: Signal<Out, Bits<64>>,
    pub non_ip: Signal<Out, Bits<64>>,
    pub malformed: Signal<Out, Bits<64>>,
    // Sub-blocks.
    rev: ByteRev,
    l2: L2,
    chain: Chain,
    hops: HopSum,
    desc: Desc<LB>,
    // The history and the beat at the window's widths, OR-ed after a shift (`#[hdl_gen]` has
    // no concatenation). rust-hdl workaround: `bit_cast` widening renders as `x & M'hff..` (a
    // Verilator WIDTH warning); `Widen` is a leaf whose Verilog is `{zeros, x}`.
    w_hist: Widen<192, 64>,
    w_win_h: Widen<448, 192>,
    w_win_b: Widen<448, 64>,
    // Window history (beats t-3, t-2, t-1; oldest on top), not per frame.
    hist: DFF<Bits<192>>,
    // The beat index in the frame, cleared with the last beat.
    t: DFF<Bits<16>>,
    // Wires.
    bus: Signal<Local, Bits<64>>,
    win: Signal<Local, Bits<448>>,
    tv: Signal<Local, Bits<16>>,
    first: Signal<Local, Bit>,
    early: Signal<Local, Bit>,
    eof: Signal<Local, Bit>,
    clr: Signal<Local, Bit>,
    // Constants.
    t_max: Constant<Bits<16>>,
    l2_beats: Constant<Bits<16>>,
    /// Frame bytes 22..31 in beat 4 (window bytes 14..23): the hop bytes that passed before
    /// the shim's fields were registered.
    hop_early_at: Constant<Bits<9>>,
    one16: Constant<Bits<16>>,
    zero16: Constant<Bits<16>>,
    zero192: Constant<Bits<192>>,
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
            d_hops: Default::default(),
            d_sc: Default::default(),
            frames: Default::default(),
            ip_packets: Default::default(),
            non_ip: Default::default(),
            malformed: Default::default(),
            rev: Default::default(),
            l2: Default::default(),
            chain: Default::default(),
            hops: Default::default(),
            desc: Default::default(),
            w_hist: Default::default(),
            w_win_h: Default::default(),
            w_win_b: Default::default(),
            hist: Default::default(),
            t: Default::default(),
            bus: Default::default(),
            win: Default::default(),
            tv: Default::default(),
            first: Default::default(),
            early: Default::default(),
            eof: Default::default(),
            clr: Default::default(),
            t_max: konst!(T_MAX),
            l2_beats: konst!(WIN_BEATS),
            // Beat 4 is window bytes 24..31, so frame byte a is window byte a - 8.
            hop_early_at: konst!(8 * (WIN_BYTES - (WIN_BEATS * BEAT_BYTES - BEAT_BYTES))),
            one16: konst!(1),
            zero16: konst!(0),
            zero192: Constant::new(Bits::<192>::default()),
        }
    }
}

impl<const LB: usize> Logic for LenParser<LB> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, hist, t);
        self.l2.clock.next = self.clock.val();
        self.chain.clock.next = self.clock.val();
        self.hops.clock.next = self.clock.val();
        self.desc.clock.next = self.clock.val();
        self.tready.next = true;

        // ---- The window: byte-reversed beat below the three previous beats.
        self.rev.x.next = self.tdata.val();
        self.bus.next = self.rev.y.val();
        self.w_hist.x.next = self.bus.val();
        self.w_win_h.x.next = self.hist.q.val();
        self.w_win_b.x.next = self.bus.val();
        self.win.next = (self.w_win_h.y.val() << 256) | (self.w_win_b.y.val() << 192);
        self.tv.next = self.t.q.val();
        self.first.next = self.tv.val() == self.zero16.val();
        self.early.next = self.tv.val() < self.l2_beats.val();
        self.eof.next = self.tvalid.val() & self.tlast.val();
        self.clr.next = self.reset.val() | self.eof.val();

        // ---- L2 + shim at fixed offsets (beats 0..3).
        self.l2.clr.next = self.clr.val();
        self.l2.valid.next = self.tvalid.val();
        self.l2.early.next = self.early.val();
        self.l2.t.next = self.tv.val().get_bits::<9>(0);
        self.l2.win.next = self.win.val();

        // ---- The header chain (from beat 4 on), armed from L2.
        self.chain.clr.next = self.clr.val();
        self.chain.valid.next = self.tvalid.val();
        self.chain.early.next = self.early.val();
        self.chain.t.next = self.tv.val();
        self.chain.win.next = self.win.val();
        self.chain.l2_ip4.next = self.l2.ip4.val();
        self.chain.l2_ip6.next = self.l2.ip6.val();
        self.chain.l2_bad.next = self.l2.bad.val();
        self.chain.l2_ip_at.next = self.l2.ip_at.val();

        // ---- INT stack latencies.
        self.hops.reset.next = self.reset.val();
        self.hops.first.next = self.first.val();
        self.hops.valid.next = self.tvalid.val();
        self.hops.bus.next = self.bus.val();
        self.hops.t.next = self.tv.val();
        self.hops.shim.next = self.l2.shim.val();
        self.hops.sc.next = self.l2.sc.val();
        self.hops.n.next = self.l2.hops.val();
        self.hops.early.next = self.win.val().get_bits::<80>(self.hop_early_at.val().index());
        self.hops.rs.next = self.l2.hop_start.val();
        self.hops.re.next = self.l2.hop_end.val();

        // ---- Frame end: length, verdict, descriptor and counters.
        self.desc.reset.next = self.reset.val();
        self.desc.valid.next = self.tvalid.val();
        self.desc.eof.next = self.eof.val();
        self.desc.clr.next = self.clr.val();
        self.desc.first.next = self.first.val();
        self.desc.tkeep.next = self.tkeep.val();
        self.desc.tuser.next = self.tuser.val();
        self.desc.now.next = self.now.val();
        self.desc.busy.next = self.chain.busy.val();
        self.desc.bad.next = self.chain.bad.val();
        self.desc.nonip.next = self.chain.nonip.val();
        self.desc.need.next = self.chain.need.val();
        self.desc.ipb.next = self.chain.ipb.val();
        self.desc.ipt.next = self.chain.ipt.val();
        self.desc.ipu.next = self.chain.ipu.val();
        self.desc.chk.next = self.chain.chk.val();
        self.desc.c2.next = self.chain.c2.val();
        self.desc.ip_bad.next = self.chain.ip_bad.val();
        self.desc.src.next = self.chain.src.val();
        self.desc.dst.next = self.chain.dst.val();
        self.desc.sp.next = self.chain.sp.val();
        self.desc.dp.next = self.chain.dp.val();
        self.desc.proto.next = self.chain.proto.val();
        self.desc.delay.next = self.hops.sum.val();
        self.desc.shim.next = self.l2.shim.val();
        self.desc.sc.next = self.l2.sc.val();
        self.desc.n.next = self.l2.hops.val().get_bits::<5>(0);

        // ---- Window history and beat index.
        if self.tvalid.val() {
            self.hist.d.next = (self.hist.q.val() << 64) | self.w_hist.y.val();
            if self.tv.val() != self.t_max.val() {
                self.t.d.next = self.tv.val() + self.one16.val();
            }
        }
        if self.clr.val() {
            self.t.d.next = self.zero16.val();
        }
        if self.reset.val() {
            self.hist.d.next = self.zero192.val();
        }

        // ---- Outputs.
        self.d_valid.next = self.desc.d_valid.val();
        self.d_class.next = self.desc.d_class.val();
        self.d_key.next = self.desc.d_key.val();
        self.d_len.next = self.desc.d_len.val();
        self.d_ts.next = self.desc.d_ts.val();
        self.d_delay.next = self.desc.d_delay.val();
        self.d_hops.next = self.desc.d_hops.val();
        self.d_sc.next = self.desc.d_sc.val();
        self.frames.next = self.desc.frames.val();
        self.ip_packets.next = self.desc.ip_packets.val();
        self.non_ip.next = self.desc.non_ip.val();
        self.malformed.next = self.desc.malformed.val();
    }
}

#[cfg(test)]
mod tests;
