//! `Desc<LB>`: the frame end: the frame's length in `LB` bits, its verdict in two register
//! stages, the descriptor (class, key, length, time stamp, delay) and the class counters.
//!
//! The length counts 8 bytes a beat and the last beat's `tkeep` bytes (a contiguous pattern,
//! else a hole); it is too long once it would pass `2^LB - 1` (checked before each add,
//! which could wrap), and then reads that value. Stage 1 (the edge of the last beat)
//! registers the verdict inputs: the chain's state after the last beat and everything that
//! makes a frame malformed; the check of a chain step in the last beat itself, and the
//! frame's need against its length, go to stage 2, which registers class, key and delay
//! (the hop sum is the frame's total then).
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1, 1 | reset clears the counters, the stages and the frame state |
//! | `valid`, `eof`, `clr` | in | 1 each | a beat; a frame's last beat (`valid & tlast`); `reset \| eof` |
//! | `first` | in | 1 | this beat is the frame's first (`t = 0`) |
//! | `tkeep`, `tuser`, `now` | in | 8, 1, 64 | the AXI-Stream beat's byte enables and error flag, the time |
//! | `busy`, `bad`, `nonip`, `need`, `ipb`, `ipt`, `ipu`, `chk`, `c2`, `ip_bad` | in | | the chain's frame state after this beat ([`super::chain::Chain`]) |
//! | `src`, `dst`, `sp`, `dp`, `proto` | in | 32, 32, 16, 16, 8 | the chain's key fields |
//! | `delay` | in | 64 | the hop sum ([`super::hops::HopSum`]), the frame's total one clock after its last beat |
//! | `shim`, `sc`, `n` | in | 1, 2, 5 | the L2 decoder's registered shim flag, position code and hop count (`<= 16` when valid; [`super::l2::L2`]) |
//! | `d_*`, `frames`, `ip_packets`, `non_ip`, `malformed` | out | | the parser's outputs (see the parser's docs) |
use super::{konst, CLASS_IP, CLASS_MALFORMED, CLASS_NON_IP};
use crate::arith::Widen;
use rust_hdl::prelude::*;
use smartnic_contract::key::field as key;

/// Bit offset in the 104-bit key (contract byte order: byte 0 on top) of its bytes `r`.
const fn key_at(r: core::ops::Range<usize>) -> usize {
    8 * (smartnic_contract::KEY_LEN - r.end)
}

// The protocol is the key's last byte (bits 7:0).
const _: () = assert!(key_at(key::PROTO..key::PROTO + 1) == 0);

/// Frame end and descriptor (see the module docs).
#[derive(LogicBlock)]
pub struct Desc<const LB: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub valid: Signal<In, Bit>,
    pub eof: Signal<In, Bit>,
    pub clr: Signal<In, Bit>,
    pub first: Signal<In, Bit>,
    pub tkeep: Signal<In, Bits<8>>,
    pub tuser: Signal<In, Bit>,
    pub now: Signal<In, Bits<64>>,
    pub busy: Signal<In, Bit>,
    pub bad: Signal<In, Bit>,
    pub nonip: Signal<In, Bit>,
    pub need: Signal<In, Bits<16>>,
    pub ipb: Signal<In, Bits<16>>,
    pub ipt: Signal<In, Bits<16>>,
    pub ipu: Signal<In, Bit>,
    pub chk: Signal<In, Bit>,
    pub c2: Signal<In, Bits<16>>,
    pub ip_bad: Signal<In, Bit>,
    pub src: Signal<In, Bits<32>>,
    pub dst: Signal<In, Bits<32>>,
    pub sp: Signal<In, Bits<16>>,
    pub dp: Signal<In, Bits<16>>,
    pub proto: Signal<In, Bits<8>>,
    pub delay: Signal<In, Bits<64>>,
    pub shim: Signal<In, Bit>,
    pub sc: Signal<In, Bits<2>>,
    pub n: Signal<In, Bits<5>>,
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
    // The key's fields as 104-bit words (OR-ed into `d_key` at their offsets: `#[hdl_gen]` has
    // no concatenation) and the needed length at the length width. rust-hdl workaround:
    // `bit_cast` widening renders as `x & M'hff..` (a Verilator WIDTH warning); `Widen` is a
    // leaf whose Verilog is `{zeros, x}`.
    w_src: Widen<104, 32>,
    w_dst: Widen<104, 32>,
    w_sp: Widen<104, 16>,
    w_dp: Widen<104, 16>,
    w_proto: Widen<104, 8>,
    w_need: Widen<LB, 16>,
    // Frame state, cleared with `clr`.
    too_long: DFF<Bit>,
    acc: DFF<Bits<LB>>,
    hole: DFF<Bit>,
    err: DFF<Bit>,
    ts: DFF<Bits<64>>,
    // Stage 1: the verdict inputs.
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
    r_shim: DFF<Bit>,
    r_sc: DFF<Bits<2>>,
    r_n: DFF<Bits<5>>,
    // Stage 2: the descriptor.
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
    o_hops: DFF<Bits<5>>,
    o_sc: DFF<Bits<2>>,
    c_frames: DFF<Bits<64>>,
    c_ip: DFF<Bits<64>>,
    c_nonip: DFF<Bits<64>>,
    c_mal: DFF<Bits<64>>,
    // Wires.
    kc: Signal<Local, Bits<LB>>,
    kok: Signal<Local, Bit>,
    flen: Signal<Local, Bits<LB>>,
    last_long: Signal<Local, Bit>,
    mal: Signal<Local, Bit>,
    is_ip: Signal<Local, Bit>,
    // Constants.
    /// The contiguous `tkeep` patterns of a last beat (`0x01`, `0x03`, ..., `0xFF`) and
    /// their byte counts.
    keep_pat: [Constant<Bits<8>>; 8],
    keep_len: [Constant<Bits<LB>>; 8],
    keep_full: Constant<Bits<8>>,
    len_max: Constant<Bits<LB>>,
    acc_max: Constant<Bits<LB>>,
    len_beat: Constant<Bits<LB>>,
    len_zero: Constant<Bits<LB>>,
    cl_ip: Constant<Bits<2>>,
    cl_nonip: Constant<Bits<2>>,
    cl_mal: Constant<Bits<2>>,
    src_at: Constant<Bits<7>>,
    dst_at: Constant<Bits<7>>,
    sp_at: Constant<Bits<7>>,
    dp_at: Constant<Bits<7>>,
    zero2: Constant<Bits<2>>,
    zero5: Constant<Bits<5>>,
    zero8: Constant<Bits<8>>,
    zero16: Constant<Bits<16>>,
    zero32: Constant<Bits<32>>,
    zero64: Constant<Bits<64>>,
    one64: Constant<Bits<64>>,
}

impl<const LB: usize> Default for Desc<LB> {
    fn default() -> Self {
        let max_len: u64 = (1 << LB) - 1;
        Desc {
            clock: Default::default(),
            reset: Default::default(),
            valid: Default::default(),
            eof: Default::default(),
            clr: Default::default(),
            first: Default::default(),
            tkeep: Default::default(),
            tuser: Default::default(),
            now: Default::default(),
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
            delay: Default::default(),
            shim: Default::default(),
            sc: Default::default(),
            n: Default::default(),
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
            w_src: Default::default(),
            w_dst: Default::default(),
            w_sp: Default::default(),
            w_dp: Default::default(),
            w_proto: Default::default(),
            w_need: Default::default(),
            too_long: Default::default(),
            acc: Default::default(),
            hole: Default::default(),
            err: Default::default(),
            ts: Default::default(),
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
            r_shim: Default::default(),
            r_sc: Default::default(),
            r_n: Default::default(),
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
            o_hops: Default::default(),
            o_sc: Default::default(),
            c_frames: Default::default(),
            c_ip: Default::default(),
            c_nonip: Default::default(),
            c_mal: Default::default(),
            kc: Default::default(),
            kok: Default::default(),
            flen: Default::default(),
            last_long: Default::default(),
            mal: Default::default(),
            is_ip: Default::default(),
            keep_pat: std::array::from_fn(|i| konst!((1u64 << (i + 1)) - 1)),
            keep_len: std::array::from_fn(|i| konst!(i + 1)),
            keep_full: konst!(0xFF),
            len_max: konst!(max_len),
            // One more full beat after this many bytes would pass the longest frame.
            acc_max: konst!(max_len - 8),
            len_beat: konst!(8),
            len_zero: konst!(0),
            cl_ip: konst!(CLASS_IP),
            cl_nonip: konst!(CLASS_NON_IP),
            cl_mal: konst!(CLASS_MALFORMED),
            src_at: konst!(key_at(key::SRC_IP)),
            dst_at: konst!(key_at(key::DST_IP)),
            sp_at: konst!(key_at(key::SRC_PORT)),
            dp_at: konst!(key_at(key::DST_PORT)),
            zero2: konst!(0),
            zero5: konst!(0),
            zero8: konst!(0),
            zero16: konst!(0),
            zero32: konst!(0),
            zero64: konst!(0),
            one64: konst!(1),
        }
    }
}

impl<const LB: usize> Logic for Desc<LB> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, too_long, acc, hole, err, ts, r_valid, r_bad, r_nonip, r_need, r_chk, r_c2, r_ipb,
            r_ipt, r_ipu, r_len, r_ts, r_src, r_dst, r_sp, r_dp, r_proto, r_shim, r_sc, r_n, o_valid,
            o_class, o_src, o_dst, o_sp, o_dp, o_proto, o_len, o_ts, o_delay, o_hops, o_sc, c_frames, c_ip,
            c_nonip, c_mal
        );
        // The last beat's bytes: a contiguous tkeep, else a hole.
        self.kc.next = self.len_zero.val();
        self.kok.next = false;
        for i in 0..8 {
            if self.tkeep.val() == self.keep_pat[i].val() {
                self.kc.next = self.keep_len[i].val();
                self.kok.next = true;
            }
        }
        // The length: bytes of the earlier beats plus this one's; too long if that passes the
        // maximum (checked before the add, which could wrap).
        self.last_long.next = self.acc.q.val() > (self.len_max.val() - self.kc.val());
        self.flen.next = self.acc.q.val() + self.kc.val();
        if self.valid.val() {
            if self.acc.q.val() > self.acc_max.val() {
                self.too_long.d.next = true;
            } else {
                self.acc.d.next = self.acc.q.val() + self.len_beat.val();
            }
            self.hole.d.next = self.hole.q.val() | (self.tkeep.val() != self.keep_full.val());
            self.err.d.next = self.err.q.val() | self.tuser.val();
            if self.first.val() {
                self.ts.d.next = self.now.val();
            }
        }

        // ---- Stage 1 (the edge of the last beat): the frame's verdict inputs.
        self.r_valid.d.next = self.eof.val() & !self.reset.val();
        if self.eof.val() {
            self.r_bad.d.next = self.bad.val()
                | self.busy.val()
                | self.hole.q.val()
                | !self.kok.val()
                | self.err.q.val()
                | self.tuser.val()
                | self.too_long.q.val()
                | self.last_long.val()
                | self.ip_bad.val();
            // The check of a step in the last beat itself goes to stage 2.
            self.r_chk.d.next = self.chk.val();
            self.r_c2.d.next = self.c2.val();
            self.r_ipb.d.next = self.ipb.val();
            self.r_ipt.d.next = self.ipt.val();
            self.r_ipu.d.next = self.ipu.val();
            self.r_nonip.d.next = self.nonip.val();
            self.r_need.d.next = self.need.val();
            if self.too_long.q.val() | self.last_long.val() {
                self.r_len.d.next = self.len_max.val();
            } else {
                self.r_len.d.next = self.flen.val();
            }
            if self.first.val() {
                self.r_ts.d.next = self.now.val();
            } else {
                self.r_ts.d.next = self.ts.q.val();
            }
            self.r_src.d.next = self.src.val();
            self.r_dst.d.next = self.dst.val();
            self.r_sp.d.next = self.sp.val();
            self.r_dp.d.next = self.dp.val();
            self.r_proto.d.next = self.proto.val();
            // The shim's place and hop count (final from beat 4 on; an IP frame behind a
            // shim is at least 5 beats, so its last beat sees them).
            self.r_shim.d.next = self.shim.val();
            self.r_sc.d.next = self.sc.val();
            self.r_n.d.next = self.n.val();
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
                self.o_delay.d.next = self.delay.val();
                if self.r_shim.q.val() {
                    self.o_hops.d.next = self.r_n.q.val();
                    self.o_sc.d.next = self.r_sc.q.val();
                } else {
                    self.o_hops.d.next = self.zero5.val();
                    self.o_sc.d.next = self.zero2.val();
                }
            } else {
                self.o_src.d.next = self.zero32.val();
                self.o_dst.d.next = self.zero32.val();
                self.o_sp.d.next = self.zero16.val();
                self.o_dp.d.next = self.zero16.val();
                self.o_proto.d.next = self.zero8.val();
                self.o_delay.d.next = self.zero64.val();
                self.o_hops.d.next = self.zero5.val();
                self.o_sc.d.next = self.zero2.val();
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

        if self.clr.val() {
            self.too_long.d.next = false;
            self.acc.d.next = self.len_zero.val();
            self.hole.d.next = false;
            self.err.d.next = false;
            self.ts.d.next = self.zero64.val();
        }
        if self.reset.val() {
            self.c_frames.d.next = self.zero64.val();
            self.c_ip.d.next = self.zero64.val();
            self.c_nonip.d.next = self.zero64.val();
            self.c_mal.d.next = self.zero64.val();
        }

        // ---- Outputs.
        self.w_src.x.next = self.o_src.q.val();
        self.w_dst.x.next = self.o_dst.q.val();
        self.w_sp.x.next = self.o_sp.q.val();
        self.w_dp.x.next = self.o_dp.q.val();
        self.w_proto.x.next = self.o_proto.q.val();
        self.d_valid.next = self.o_valid.q.val();
        self.d_class.next = self.o_class.q.val();
        self.d_key.next = (self.w_src.y.val() << self.src_at.val())
            | (self.w_dst.y.val() << self.dst_at.val())
            | (self.w_sp.y.val() << self.sp_at.val())
            | (self.w_dp.y.val() << self.dp_at.val())
            | self.w_proto.y.val();
        self.d_len.next = self.o_len.q.val();
        self.d_ts.next = self.o_ts.q.val();
        self.d_delay.next = self.o_delay.q.val();
        self.d_hops.next = self.o_hops.q.val();
        self.d_sc.next = self.o_sc.q.val();
        self.frames.next = self.c_frames.q.val();
        self.ip_packets.next = self.c_ip.q.val();
        self.non_ip.next = self.c_nonip.q.val();
        self.malformed.next = self.c_mal.q.val();
    }
}
