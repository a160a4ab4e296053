//! `Chain`: the header-chain stepper: IPv4, IPv6 (two steps), IPv6 extension headers, TCP
//! and UDP, one step at a time from the end of L2 and the shim.
//!
//! A step has a cursor `c` (the header's first frame byte) and a span `L` (the last byte it
//! reads, `L` < [`STEP_BYTES`]): IPv4 ([`IPV4_SPAN`]: the 20-byte header), IPv6 in two steps
//! (bytes 0..23 up to the source, [`IPV6A_SPAN`]; then the destination, [`IPV6B_SPAN`]),
//! extension header ([`EXT_SPAN`]), TCP ([`TCP_SPAN`]: up to the data offset), UDP
//! ([`UDP_SPAN`]). A step fires in the beat that brings byte `c + L` (`fire = (c + L) / 8`,
//! registered) and reads its bytes 0..23 from the window at a registered bit offset `sh`;
//! then it arms the next step. Every next step starts at least 8 bytes after the previous
//! span ends, so it fires in a later beat: one step per clock at most, never behind the
//! stream.
//!
//! Lengths are numbers: each step records what the frame must hold (`need`, checked by the
//! descriptor against the frame length) and checks its header against the IP packet's own
//! length (`ipb`: where the IP length counts from, `ipt`: that length, `ipu`: IPv6 payload
//! length 0, unchecked). The check of the extension, TCP and UDP steps is deferred by a clock
//! (`chk`, `c2`: header end) to keep it off the step's path.
//!
//! The outputs are the frame state *after* this beat (combinational: the descriptor
//! registers them with the frame's last beat).
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock` | in | 1 | |
//! | `clr` | in | 1 | clear the frame state (reset, or a frame's last beat) |
//! | `valid` | in | 1 | a beat is on the window |
//! | `early` | in | 1 | one of the first four beats: arm the IP step from L2 |
//! | `t` | in | 16 | beat index in the frame |
//! | `win` | in | 448 | the parser's window |
//! | `l2_ip4`, `l2_ip6`, `l2_bad`, `l2_ip_at` | in | 1, 1, 1, 16 | from [`super::l2::L2`] |
//! | `busy` | out | 1 | a step is still armed (at the last beat: the frame was cut short) |
//! | `bad` | out | 1 | a header is inconsistent (or L2 is) |
//! | `nonip` | out | 1 | the payload after L2 is neither IPv4 nor IPv6 |
//! | `need` | out | 16 | bytes the frame must hold |
//! | `ipb`, `ipt`, `ipu` | out | 16, 16, 1 | the IP packet's length rule (see above) |
//! | `chk`, `c2` | out | 1, 16 | this beat's step checks header end `c2` against the IP length |
//! | `ip_bad` | out | 1 | an earlier step's deferred IP-length check failed |
//! | `src`, `dst`, `sp`, `dp`, `proto` | out | 32, 32, 16, 16, 8 | the flow-key fields |
use super::{konst, BEAT_BYTES, WIN_BYTES};
use core::ops::Range;
use rust_hdl::prelude::*;
use smartnic_contract::frame::field::{ext, ipv4, ipv6, tcp, udp};
use smartnic_contract::frame::{ipv6_ext, MAX_EXT_HEADERS};
use smartnic_contract::key::{PROTO_TCP, PROTO_UDP};

/// Bytes of a step the window hands it (`al`, 192 bits): every span is below it.
pub const STEP_BYTES: usize = 24;
/// IPv4: the header without options.
pub const IPV4_SPAN: usize = ipv4::MIN_HEADER_LEN - 1;
/// IPv6, first step: up to the end of the source address.
pub const IPV6A_SPAN: usize = ipv6::SOURCE.end - 1;
/// IPv6, second step, at the destination: the destination address.
pub const IPV6B_SPAN: usize = ipv6::DESTINATION.end - ipv6::DESTINATION.start - 1;
/// An extension header: its first 8 bytes (next header, length, fragment offset).
pub const EXT_SPAN: usize = ext::MIN_HEADER_LEN - 1;
/// TCP: up to the data offset.
pub const TCP_SPAN: usize = tcp::DATA_OFFSET;
/// UDP: the header.
pub const UDP_SPAN: usize = udp::HEADER_LEN - 1;
/// The step's byte 0 sits at window byte `24 + (c + L) mod 8 - L`; its 24 bytes then start
/// at bit `8 (ARM_BASE + L - (c + L) mod 8)` of the window.
const ARM_BASE: usize = WIN_BYTES - 3 * BEAT_BYTES - STEP_BYTES;

// Step states.
const S_IDLE: u64 = 0;
const S_V4: u64 = 1;
const S_V6A: u64 = 2;
const S_V6B: u64 = 3;
const S_EXT: u64 = 4;
const S_TCP: u64 = 5;
const S_UDP: u64 = 6;

/// Bit offset in a step's 24 bytes (`al`) of its bytes `r`.
const fn at(r: Range<usize>) -> u64 {
    (8 * (STEP_BYTES - r.end)) as u64
}
/// Bit offset of byte `b`.
const fn byte_at(b: usize) -> u64 {
    at(b..b + 1)
}
/// Bit offsets of the four 32-bit words of the 16-byte address at `r`, `first` bytes before.
fn words_at(r: Range<usize>, first: usize) -> [Constant<Bits<8>>; 4] {
    std::array::from_fn(|i| {
        let w = r.start - first + 4 * i;
        konst!(at(w..w + 4))
    })
}

// Every step reads within its 24 bytes.
const _: () = assert!(
    IPV4_SPAN < STEP_BYTES
        && IPV6A_SPAN < STEP_BYTES
        && IPV6B_SPAN < STEP_BYTES
        && EXT_SPAN < STEP_BYTES
        && TCP_SPAN < STEP_BYTES
        && UDP_SPAN < STEP_BYTES
);
// One offset serves both IP versions, and one pair both transports; an extension header's
// length byte follows its next-header byte (`word0_at`).
const _: () = assert!(ipv4::VER_IHL == ipv6::VER_TC && ipv4::VER_IHL == 0);
const _: () =
    assert!(tcp::SRC_PORT.start == udp::SRC_PORT.start && tcp::DST_PORT.start == udp::DST_PORT.start);
const _: () = assert!(ext::NEXT_HEADER == 0 && ext::LEN == 1);

/// The header-chain stepper (see the module docs).
#[derive(LogicBlock)]
pub struct Chain {
    pub clock: Signal<In, Clock>,
    pub clr: Signal<In, Bit>,
    pub valid: Signal<In, Bit>,
    pub early: Signal<In, Bit>,
    pub t: Signal<In, Bits<16>>,
    pub win: Signal<In, Bits<448>>,
    pub l2_ip4: Signal<In, Bit>,
    pub l2_ip6: Signal<In, Bit>,
    pub l2_bad: Signal<In, Bit>,
    pub l2_ip_at: Signal<In, Bits<16>>,
    pub busy: Signal<Out, Bit>,
    pub bad: Signal<Out, Bit>,
    pub nonip: Signal<Out, Bit>,
    pub need: Signal<Out, Bits<16>>,
    pub ipb: Signal<Out, Bits<16>>,
    pub ipt: Signal<Out, Bits<16>>,
    pub ipu: Signal<Out, Bit>,
    pub chk: Signal<Out, Bit>,
    pub c2: Signal<Out, Bits<16>>,
    pub ip_bad: Signal<Out, Bit>,
    pub src: Signal<Out, Bits<32>>,
    pub dst: Signal<Out, Bits<32>>,
    pub sp: Signal<Out, Bits<16>>,
    pub dp: Signal<Out, Bits<16>>,
    pub proto: Signal<Out, Bits<8>>,
    // Frame state, cleared with `clr`.
    r_nonip: DFF<Bit>,
    st: DFF<Bits<3>>,
    cur: DFF<Bits<16>>,
    span: DFF<Bits<16>>,
    fire: DFF<Bits<16>>,
    sh: DFF<Bits<9>>,
    nh: DFF<Bits<8>>,
    cnt: DFF<Bits<4>>,
    ffrag: DFF<Bit>,
    r_ipb: DFF<Bits<16>>,
    r_ipt: DFF<Bits<16>>,
    r_ipu: DFF<Bit>,
    r_need: DFF<Bits<16>>,
    r_bad: DFF<Bit>,
    chk_en: DFF<Bit>,
    chk_c2: DFF<Bits<16>>,
    ipbad: DFF<Bit>,
    r_src: DFF<Bits<32>>,
    r_dst: DFF<Bits<32>>,
    r_sp: DFF<Bits<16>>,
    r_dp: DFF<Bits<16>>,
    r_proto: DFF<Bits<8>>,
    // Wires.
    al: Signal<Local, Bits<192>>,
    fire_now: Signal<Local, Bit>,
    ihl: Signal<Local, Bits<16>>,
    hlen: Signal<Local, Bits<16>>,
    elen: Signal<Local, Bits<16>>,
    dgo: Signal<Local, Bit>,
    ipfail: Signal<Local, Bit>,
    dc: Signal<Local, Bits<16>>,
    dnh: Signal<Local, Bits<8>>,
    dcnt: Signal<Local, Bits<4>>,
    n_st: Signal<Local, Bits<3>>,
    n_cur: Signal<Local, Bits<16>>,
    n_span: Signal<Local, Bits<16>>,
    n_nh: Signal<Local, Bits<8>>,
    n_cnt: Signal<Local, Bits<4>>,
    n_ffrag: Signal<Local, Bit>,
    arm_end: Signal<Local, Bits<16>>,
    // Step spans and header lengths (bytes).
    ipv4_span: Constant<Bits<16>>,
    ipv6a_span: Constant<Bits<16>>,
    ipv6b_span: Constant<Bits<16>>,
    ext_span: Constant<Bits<16>>,
    tcp_span: Constant<Bits<16>>,
    udp_span: Constant<Bits<16>>,
    ipv4_min_len: Constant<Bits<16>>,
    ipv6_len: Constant<Bits<16>>,
    ipv6b_at: Constant<Bits<16>>,
    ipv6b_rest: Constant<Bits<16>>,
    frag_len: Constant<Bits<16>>,
    ah_fixed_words: Constant<Bits<16>>,
    ext_fixed_units: Constant<Bits<16>>,
    tcp_len: Constant<Bits<16>>,
    udp_len: Constant<Bits<16>>,
    // Field offsets in `al` (bits).
    word0_at: Constant<Bits<8>>,
    version_at: Constant<Bits<8>>,
    v4_total_at: Constant<Bits<8>>,
    v4_frag_at: Constant<Bits<8>>,
    v4_proto_at: Constant<Bits<8>>,
    v4_src_at: Constant<Bits<8>>,
    v4_dst_at: Constant<Bits<8>>,
    v6_payload_at: Constant<Bits<8>>,
    v6_next_at: Constant<Bits<8>>,
    v6_src_at: [Constant<Bits<8>>; 4],
    v6_dst_at: [Constant<Bits<8>>; 4],
    ext_next_at: Constant<Bits<8>>,
    ext_frag_at: Constant<Bits<8>>,
    sport_at: Constant<Bits<8>>,
    dport_at: Constant<Bits<8>>,
    tcp_doff_at: Constant<Bits<8>>,
    // Field values and masks.
    ihl_mask: Constant<Bits<16>>,
    ext_len_mask: Constant<Bits<16>>,
    v4_frag_mask: Constant<Bits<16>>,
    ext_frag_mask: Constant<Bits<16>>,
    v4: Constant<Bits<4>>,
    v6: Constant<Bits<4>>,
    tcp_min_doff: Constant<Bits<4>>,
    p_hbh: Constant<Bits<8>>,
    p_rt: Constant<Bits<8>>,
    p_dst: Constant<Bits<8>>,
    p_frag: Constant<Bits<8>>,
    p_ah: Constant<Bits<8>>,
    p_tcp: Constant<Bits<8>>,
    p_udp: Constant<Bits<8>>,
    ext_max: Constant<Bits<4>>,
    one4: Constant<Bits<4>>,
    // Window arithmetic.
    arm_base: Constant<Bits<9>>,
    beat_mask: Constant<Bits<9>>,
    s_idle: Constant<Bits<3>>,
    s_v4: Constant<Bits<3>>,
    s_v6a: Constant<Bits<3>>,
    s_v6b: Constant<Bits<3>>,
    s_ext: Constant<Bits<3>>,
    s_tcp: Constant<Bits<3>>,
    s_udp: Constant<Bits<3>>,
    zero4: Constant<Bits<4>>,
    zero8: Constant<Bits<8>>,
    zero9: Constant<Bits<9>>,
    zero16: Constant<Bits<16>>,
    zero32: Constant<Bits<32>>,
}

impl Default for Chain {
    fn default() -> Self {
        Chain {
            clock: Default::default(),
            clr: Default::default(),
            valid: Default::default(),
            early: Default::default(),
            t: Default::default(),
            win: Default::default(),
            l2_ip4: Default::default(),
            l2_ip6: Default::default(),
            l2_bad: Default::default(),
            l2_ip_at: Default::default(),
            busy: Default::default(),
            bad: Default::default(),
            nonip: Default::default(),
            need: Default::default(),
            ipb: Default::default(),
            ipt: Default::default(),
            ipu: Default::default(),
            chk: Default::default(),
            c2: Default::default(),
            ip_bad: Default::default(),
            src: Default::default(),
            dst: Default::default(),
            sp: Default::default(),
            dp: Default::default(),
            proto: Default::default(),
            r_nonip: Default::default(),
            st: Default::default(),
            cur: Default::default(),
            span: Default::default(),
            fire: Default::default(),
            sh: Default::default(),
            nh: Default::default(),
            cnt: Default::default(),
            ffrag: Default::default(),
            r_ipb: Default::default(),
            r_ipt: Default::default(),
            r_ipu: Default::default(),
            r_need: Default::default(),
            r_bad: Default::default(),
            chk_en: Default::default(),
            chk_c2: Default::default(),
            ipbad: Default::default(),
            r_src: Default::default(),
            r_dst: Default::default(),
            r_sp: Default::default(),
            r_dp: Default::default(),
            r_proto: Default::default(),
            al: Default::default(),
            fire_now: Default::default(),
            ihl: Default::default(),
            hlen: Default::default(),
            elen: Default::default(),
            dgo: Default::default(),
            ipfail: Default::default(),
            dc: Default::default(),
            dnh: Default::default(),
            dcnt: Default::default(),
            n_st: Default::default(),
            n_cur: Default::default(),
            n_span: Default::default(),
            n_nh: Default::default(),
            n_cnt: Default::default(),
            n_ffrag: Default::default(),
            arm_end: Default::default(),
            ipv4_span: konst!(IPV4_SPAN),
            ipv6a_span: konst!(IPV6A_SPAN),
            ipv6b_span: konst!(IPV6B_SPAN),
            ext_span: konst!(EXT_SPAN),
            tcp_span: konst!(TCP_SPAN),
            udp_span: konst!(UDP_SPAN),
            ipv4_min_len: konst!(ipv4::MIN_HEADER_LEN),
            ipv6_len: konst!(ipv6::HEADER_LEN),
            ipv6b_at: konst!(ipv6::DESTINATION.start),
            ipv6b_rest: konst!(ipv6::HEADER_LEN - ipv6::DESTINATION.start),
            frag_len: konst!(ext::MIN_HEADER_LEN),
            ah_fixed_words: konst!(ext::MIN_HEADER_LEN / 4),
            ext_fixed_units: konst!(ext::MIN_HEADER_LEN / 8),
            tcp_len: konst!(tcp::MIN_HEADER_LEN),
            udp_len: konst!(udp::HEADER_LEN),
            word0_at: konst!(at(0..2)),
            version_at: konst!(byte_at(ipv4::VER_IHL) + 4),
            v4_total_at: konst!(at(ipv4::TOTAL_LEN)),
            v4_frag_at: konst!(at(ipv4::FLAGS_FRAG)),
            v4_proto_at: konst!(byte_at(ipv4::PROTOCOL)),
            v4_src_at: konst!(at(ipv4::SOURCE)),
            v4_dst_at: konst!(at(ipv4::DESTINATION)),
            v6_payload_at: konst!(at(ipv6::PAYLOAD_LEN)),
            v6_next_at: konst!(byte_at(ipv6::NEXT_HEADER)),
            v6_src_at: words_at(ipv6::SOURCE, 0),
            v6_dst_at: words_at(ipv6::DESTINATION, ipv6::DESTINATION.start),
            ext_next_at: konst!(byte_at(ext::NEXT_HEADER)),
            ext_frag_at: konst!(at(ext::FRAG_OFFSET)),
            sport_at: konst!(at(tcp::SRC_PORT)),
            dport_at: konst!(at(tcp::DST_PORT)),
            tcp_doff_at: konst!(byte_at(tcp::DATA_OFFSET) + 4),
            ihl_mask: konst!(0x000F),
            ext_len_mask: konst!(0x00FF),
            v4_frag_mask: konst!(ipv4::FRAG_OFFSET_MASK),
            ext_frag_mask: konst!(ext::FRAG_OFFSET_MASK),
            v4: konst!(ipv4::VERSION),
            v6: konst!(ipv6::VERSION),
            tcp_min_doff: konst!(tcp::MIN_HEADER_LEN / 4),
            p_hbh: konst!(ipv6_ext::HOP_BY_HOP),
            p_rt: konst!(ipv6_ext::ROUTING),
            p_dst: konst!(ipv6_ext::DEST_OPTS),
            p_frag: konst!(ipv6_ext::FRAGMENT),
            p_ah: konst!(ipv6_ext::AUTH),
            p_tcp: konst!(PROTO_TCP),
            p_udp: konst!(PROTO_UDP),
            ext_max: konst!(MAX_EXT_HEADERS),
            one4: konst!(1),
            arm_base: konst!(ARM_BASE),
            beat_mask: konst!(BEAT_BYTES - 1),
            s_idle: konst!(S_IDLE),
            s_v4: konst!(S_V4),
            s_v6a: konst!(S_V6A),
            s_v6b: konst!(S_V6B),
            s_ext: konst!(S_EXT),
            s_tcp: konst!(S_TCP),
            s_udp: konst!(S_UDP),
            zero4: konst!(0),
            zero8: konst!(0),
            zero9: konst!(0),
            zero16: konst!(0),
            zero32: konst!(0),
        }
    }
}

impl Logic for Chain {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, r_nonip, st, cur, span, fire, sh, nh, cnt, ffrag, r_ipb, r_ipt, r_ipu, r_need,
            r_bad, chk_en, chk_c2, ipbad, r_src, r_dst, r_sp, r_dp, r_proto
        );
        // The current step's bytes 0..23, aligned.
        self.al.next = self.win.val().get_bits::<192>(self.sh.q.val().index());
        self.fire_now.next = (self.st.q.val() != self.s_idle.val()) & (self.t.val() == self.fire.q.val());
        // Defaults: nothing changes.
        self.nonip.next = self.r_nonip.q.val();
        self.n_st.next = self.st.q.val();
        self.n_cur.next = self.cur.q.val();
        self.n_span.next = self.span.q.val();
        self.n_nh.next = self.nh.q.val();
        self.n_cnt.next = self.cnt.q.val();
        self.n_ffrag.next = self.ffrag.q.val();
        self.ipb.next = self.r_ipb.q.val();
        self.ipt.next = self.r_ipt.q.val();
        self.ipu.next = self.r_ipu.q.val();
        self.need.next = self.r_need.q.val();
        self.bad.next = self.r_bad.q.val();
        self.src.next = self.r_src.q.val();
        self.dst.next = self.r_dst.q.val();
        self.sp.next = self.r_sp.q.val();
        self.dp.next = self.r_dp.q.val();
        self.proto.next = self.r_proto.q.val();
        self.ihl.next =
            (self.al.val().get_bits::<16>(self.word0_at.val().index()) >> 8) & self.ihl_mask.val();
        self.hlen.next = self.zero16.val();
        self.elen.next = self.al.val().get_bits::<16>(self.word0_at.val().index()) & self.ext_len_mask.val();
        self.c2.next = self.cur.q.val();
        self.dgo.next = false;
        self.chk.next = false;
        self.dc.next = self.cur.q.val();
        self.dnh.next = self.nh.q.val();
        self.dcnt.next = self.cnt.q.val();
        if self.early.val() {
            // Arm the IP step behind L2 and the shim.
            self.nonip.next = !(self.l2_ip4.val() | self.l2_ip6.val());
            self.bad.next = self.l2_bad.val();
            self.need.next = self.l2_ip_at.val();
            self.n_cur.next = self.l2_ip_at.val();
            if self.l2_ip4.val() {
                self.n_st.next = self.s_v4.val();
                self.n_span.next = self.ipv4_span.val();
            } else if self.l2_ip6.val() {
                self.n_st.next = self.s_v6a.val();
                self.n_span.next = self.ipv6a_span.val();
            } else {
                self.n_st.next = self.s_idle.val();
                self.n_span.next = self.zero16.val();
            }
        } else if self.fire_now.val() {
            if self.st.q.val() == self.s_v4.val() {
                // IPv4: version, IHL, total length, fragment offset, protocol, addresses.
                self.hlen.next = self.ihl.val() << 2;
                self.bad.next = self.r_bad.q.val()
                    | (self.al.val().get_bits::<4>(self.version_at.val().index()) != self.v4.val())
                    | (self.hlen.val() < self.ipv4_min_len.val())
                    | (self.al.val().get_bits::<16>(self.v4_total_at.val().index()) < self.hlen.val());
                self.need.next = self.cur.q.val() + self.hlen.val();
                self.ipb.next = self.cur.q.val();
                self.ipt.next = self.al.val().get_bits::<16>(self.v4_total_at.val().index());
                self.ipu.next = false;
                self.src.next = self.al.val().get_bits::<32>(self.v4_src_at.val().index());
                self.dst.next = self.al.val().get_bits::<32>(self.v4_dst_at.val().index());
                self.proto.next = self.al.val().get_bits::<8>(self.v4_proto_at.val().index());
                self.n_cur.next = self.cur.q.val() + self.hlen.val();
                if (self.al.val().get_bits::<16>(self.v4_frag_at.val().index()) & self.v4_frag_mask.val())
                    != self.zero16.val()
                {
                    // A later fragment: no transport header.
                    self.n_st.next = self.s_idle.val();
                } else if self.al.val().get_bits::<8>(self.v4_proto_at.val().index()) == self.p_tcp.val() {
                    self.n_st.next = self.s_tcp.val();
                    self.n_span.next = self.tcp_span.val();
                } else if self.al.val().get_bits::<8>(self.v4_proto_at.val().index()) == self.p_udp.val() {
                    self.n_st.next = self.s_udp.val();
                    self.n_span.next = self.udp_span.val();
                } else {
                    self.n_st.next = self.s_idle.val();
                }
            } else if self.st.q.val() == self.s_v6a.val() {
                // IPv6 up to the source: version, payload length, next header, source.
                self.bad.next = self.r_bad.q.val()
                    | (self.al.val().get_bits::<4>(self.version_at.val().index()) != self.v6.val());
                self.need.next = self.cur.q.val() + self.ipv6_len.val();
                self.ipb.next = self.cur.q.val() + self.ipv6_len.val();
                self.ipt.next = self.al.val().get_bits::<16>(self.v6_payload_at.val().index());
                self.ipu.next =
                    self.al.val().get_bits::<16>(self.v6_payload_at.val().index()) == self.zero16.val();
                self.src.next = self.al.val().get_bits::<32>(self.v6_src_at[0].val().index())
                    ^ self.al.val().get_bits::<32>(self.v6_src_at[1].val().index())
                    ^ self.al.val().get_bits::<32>(self.v6_src_at[2].val().index())
                    ^ self.al.val().get_bits::<32>(self.v6_src_at[3].val().index());
                self.n_nh.next = self.al.val().get_bits::<8>(self.v6_next_at.val().index());
                self.n_cur.next = self.cur.q.val() + self.ipv6b_at.val();
                self.n_st.next = self.s_v6b.val();
                self.n_span.next = self.ipv6b_span.val();
            } else if self.st.q.val() == self.s_v6b.val() {
                // IPv6 destination; then the chain after the fixed header.
                self.dst.next = self.al.val().get_bits::<32>(self.v6_dst_at[0].val().index())
                    ^ self.al.val().get_bits::<32>(self.v6_dst_at[1].val().index())
                    ^ self.al.val().get_bits::<32>(self.v6_dst_at[2].val().index())
                    ^ self.al.val().get_bits::<32>(self.v6_dst_at[3].val().index());
                self.dgo.next = true;
                self.dc.next = self.cur.q.val() + self.ipv6b_rest.val();
            } else if self.st.q.val() == self.s_ext.val() {
                // Extension header of type nh: next header, length (fragment: the offset).
                if self.nh.q.val() == self.p_frag.val() {
                    self.hlen.next = self.frag_len.val();
                    if (self.al.val().get_bits::<16>(self.ext_frag_at.val().index())
                        & self.ext_frag_mask.val())
                        != self.zero16.val()
                    {
                        self.n_ffrag.next = true;
                    }
                } else if self.nh.q.val() == self.p_ah.val() {
                    self.hlen.next = (self.elen.val() + self.ah_fixed_words.val()) << 2;
                } else {
                    self.hlen.next = (self.elen.val() + self.ext_fixed_units.val()) << 3;
                }
                self.c2.next = self.cur.q.val() + self.hlen.val();
                self.need.next = self.c2.val();
                self.bad.next = self.r_bad.q.val();
                self.chk.next = true;
                self.dgo.next = true;
                self.dc.next = self.c2.val();
                self.dnh.next = self.al.val().get_bits::<8>(self.ext_next_at.val().index());
                self.dcnt.next = self.cnt.q.val() + self.one4.val();
            } else if self.st.q.val() == self.s_tcp.val() {
                // TCP: ports and data offset; 20 bytes within the IP packet.
                self.sp.next = self.al.val().get_bits::<16>(self.sport_at.val().index());
                self.dp.next = self.al.val().get_bits::<16>(self.dport_at.val().index());
                self.c2.next = self.cur.q.val() + self.tcp_len.val();
                self.bad.next = self.r_bad.q.val()
                    | (self.al.val().get_bits::<4>(self.tcp_doff_at.val().index()) < self.tcp_min_doff.val());
                self.need.next = self.c2.val();
                self.chk.next = true;
                self.n_st.next = self.s_idle.val();
            } else {
                // UDP: ports; 8 bytes within the IP packet.
                self.sp.next = self.al.val().get_bits::<16>(self.sport_at.val().index());
                self.dp.next = self.al.val().get_bits::<16>(self.dport_at.val().index());
                self.c2.next = self.cur.q.val() + self.udp_len.val();
                self.bad.next = self.r_bad.q.val();
                self.need.next = self.c2.val();
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
                self.proto.next = self.dnh.val();
                self.n_st.next = self.s_idle.val();
            } else if (self.dnh.val() == self.p_hbh.val())
                | (self.dnh.val() == self.p_rt.val())
                | (self.dnh.val() == self.p_dst.val())
                | (self.dnh.val() == self.p_frag.val())
                | (self.dnh.val() == self.p_ah.val())
            {
                if self.dcnt.val() == self.ext_max.val() {
                    self.bad.next = true;
                    self.n_st.next = self.s_idle.val();
                } else {
                    self.n_st.next = self.s_ext.val();
                    self.n_span.next = self.ext_span.val();
                }
            } else {
                self.proto.next = self.dnh.val();
                if self.dnh.val() == self.p_tcp.val() {
                    self.n_st.next = self.s_tcp.val();
                    self.n_span.next = self.tcp_span.val();
                } else if self.dnh.val() == self.p_udp.val() {
                    self.n_st.next = self.s_udp.val();
                    self.n_span.next = self.udp_span.val();
                } else {
                    self.n_st.next = self.s_idle.val();
                }
            }
        }
        self.busy.next = self.n_st.val() != self.s_idle.val();
        // Arm: the next step fires in beat (c + L) / 8, when its byte 0 is window byte
        // 24 + (c + L) % 8 - L; `sh` holds the bit offset of its bytes 0..23 in the window:
        // 448 - 192 - 8 (24 + (c + L) % 8 - L) = 8 (8 + L - (c + L) % 8).
        self.arm_end.next = self.n_cur.val() + self.n_span.val();
        if self.valid.val() {
            self.r_nonip.d.next = self.nonip.val();
            self.st.d.next = self.n_st.val();
            self.cur.d.next = self.n_cur.val();
            self.span.d.next = self.n_span.val();
            self.fire.d.next = self.arm_end.val() >> 3;
            self.sh.d.next = (self.arm_base.val() + self.n_span.val().get_bits::<9>(0)
                - (self.arm_end.val().get_bits::<9>(0) & self.beat_mask.val()))
                << 3;
            self.nh.d.next = self.n_nh.val();
            self.cnt.d.next = self.n_cnt.val();
            self.ffrag.d.next = self.n_ffrag.val();
            self.r_ipb.d.next = self.ipb.val();
            self.r_ipt.d.next = self.ipt.val();
            self.r_ipu.d.next = self.ipu.val();
            self.r_need.d.next = self.need.val();
            self.r_bad.d.next = self.bad.val();
            self.r_src.d.next = self.src.val();
            self.r_dst.d.next = self.dst.val();
            self.r_sp.d.next = self.sp.val();
            self.r_dp.d.next = self.dp.val();
            self.r_proto.d.next = self.proto.val();
        }

        // The IP-length check of the previous clock's step (EXT, TCP, UDP): header end `c2`
        // within the IP packet. Deferred by a clock to keep it off the step's path; ipb/ipt/ipu
        // are set by the IP step and do not change afterwards in the frame.
        self.ipfail.next = self.chk_en.q.val()
            & !self.r_ipu.q.val()
            & ((self.chk_c2.q.val() - self.r_ipb.q.val()) > self.r_ipt.q.val());
        self.chk_en.d.next = self.valid.val() & self.chk.val();
        self.chk_c2.d.next = self.c2.val();
        self.ipbad.d.next = self.ipbad.q.val() | self.ipfail.val();
        self.ip_bad.next = self.ipbad.q.val() | self.ipfail.val();

        if self.clr.val() {
            self.r_nonip.d.next = false;
            self.st.d.next = self.s_idle.val();
            self.cur.d.next = self.zero16.val();
            self.span.d.next = self.zero16.val();
            self.fire.d.next = self.zero16.val();
            self.sh.d.next = self.zero9.val();
            self.nh.d.next = self.zero8.val();
            self.cnt.d.next = self.zero4.val();
            self.ffrag.d.next = false;
            self.r_ipb.d.next = self.zero16.val();
            self.r_ipt.d.next = self.zero16.val();
            self.r_ipu.d.next = false;
            self.r_need.d.next = self.zero16.val();
            self.r_bad.d.next = false;
            self.chk_en.d.next = false;
            self.ipbad.d.next = false;
            self.r_src.d.next = self.zero32.val();
            self.r_dst.d.next = self.zero32.val();
            self.r_sp.d.next = self.zero16.val();
            self.r_dp.d.next = self.zero16.val();
            self.r_proto.d.next = self.zero8.val();
        }
    }
}
