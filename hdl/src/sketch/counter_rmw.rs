//! `CounterRmw<W, A>`: the read-modify-write datapath of one TowerSketch counter array
//! (forwarding, the CM/ACU step, the write register), without the RAMs. [`super::array`]
//! puts it behind one RAM, [`super::banked_array`] behind two (one per epoch bank).
//!
//! # Update rule (one rule for both modes)
//!
//! Each packet brings a running minimum `omega` (LightGuardian Algorithm 1; `omega = INF`
//! in CM mode and for the first array). With `M = 2^W - 1` the overflow marker and `v` the
//! counter before the update:
//!
//! - `upd = v != M && v < omega` (with `INF` above every value): the counter becomes
//!   `v + 1` (which is `M` when `v = M - 1`: saturation to the marker), else it is unchanged;
//! - `omega_out = v + 1` if `upd && v + 1 != M`, else `omega` unchanged.
//!
//! This is `host::sketch::cell::omega_step` with `alpha = 1`: when `v < omega <= v + 1` the
//! software's "raise to omega" branch writes `store(omega) = v + 1` as well (`omega = v + 1`,
//! or `v + 1 = M` and `omega >= M`), and `v < omega` with `v + 1` finite implies
//! `v + 1 <= omega`, so `min(omega, v + 1)` needs no second comparator. With `omega = INF`
//! it is the Count-Min step (`cell::cm_step`).
//!
//! # Pipeline (a packet entering at cycle `t`)
//!
//! | cycle | stage | what |
//! |---|---|---|
//! | `t` | s0 | `valid`, `bank`, `addr`; the caller drives its RAM's read address with `addr` |
//! | `t+1` | s1 | `ram_q` = the caller's RAM output for the packet's bank (`s1_bank`); the packet's (bank, address) is compared with the 3 packets ahead |
//! | `t+2` | s2 | `rd_q` (registered `ram_q`); `v` = forwarded value or `rd_q`; `omega_in` is consumed; `v'` computed |
//! | `t+3` | wr | `v'` in the write register: `wr_valid`/`wr_bank`/`wr_addr`/`wr_data` drive the RAM write port; `omega_out` is valid |
//!
//! # Forwarding
//!
//! Every valid packet writes its counter back (changed or not), so the last three values
//! written are exactly the in-flight state. The memory holds a packet's write from the end
//! of `t+3`; a packet entering `k = 1, 2, 3` clocks later reads the RAM at or before that
//! edge (READ_FIRST at `k = 3`, which the forwarding makes irrelevant) and gets a stale
//! value. So at s1 the packet compares its (bank, address) with the packets in s2, wr and
//! wr+1 (1, 2, 3 ahead); the registered 2-bit priority select (newest first) picks, at s2,
//! the write register `wr` (k = 1), its delayed copies `d1` (k = 2) or `d2` (k = 3), or
//! the RAM. Packets of different banks never forward to each other, so the packets of an
//! old and a new epoch can be in flight together around a swap; a single-bank caller ties
//! `bank` low and synthesis removes the bank bits. Comparators sit off the critical loop;
//! the loop `wr -> 4:1 mux -> +1/compare -> wr` is one add plus two LUT levels, and the
//! RAM's clock-to-out and data setup both end or start at a flop (`rd_q`, `wr`).
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset of the valid bits |
//! | `valid`, `bank`, `addr` | in | 1, 1, `A` | a packet's bank and counter index (s0) |
//! | `s1_bank` | out | 1 | bank of the packet at s1: selects the RAM output for `ram_q` |
//! | `ram_q` | in | `W` | RAM output for the packet at s1 |
//! | `rd_q` | out | `W` | `ram_q` one clock later (whatever the port read, packet or not) |
//! | `omega_inf`, `omega` | in | 1, 32 | running minimum of the packet at s2 (`INF` = `omega_inf`) |
//! | `omega_out_inf`, `omega_out` | out | 1, 32 | running minimum after this array (one clock after s2) |
//! | `wr_valid`, `wr_bank`, `wr_addr`, `wr_data` | out | 1, 1, `A`, `W` | the write-back of the packet in `wr` |
//! | `busy` | out | 1 | a packet is in s0..s2 (with `wr_valid`: in flight) |
use crate::arith::Widen;
use rust_hdl::prelude::*;
use smartnic_contract::geometry::marker;

/// Clocks from a packet at s0 to its `omega_out`.
pub const OMEGA_LATENCY: usize = 3;
/// Clocks from s0 to the compute stage (where `omega_in` is read).
pub const COMPUTE_STAGE: usize = 2;
/// How many packets ahead are forwarded.
pub const FORWARD_DEPTH: usize = 3;

/// The RMW datapath of one counter array (see the module docs).
#[derive(LogicBlock)]
pub struct CounterRmw<const W: usize, const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub valid: Signal<In, Bit>,
    pub bank: Signal<In, Bit>,
    pub addr: Signal<In, Bits<A>>,
    pub s1_bank: Signal<Out, Bit>,
    pub ram_q: Signal<In, Bits<W>>,
    pub rd_q: Signal<Out, Bits<W>>,
    pub omega_inf: Signal<In, Bit>,
    pub omega: Signal<In, Bits<32>>,
    pub omega_out_inf: Signal<Out, Bit>,
    pub omega_out: Signal<Out, Bits<32>>,
    pub wr_valid: Signal<Out, Bit>,
    pub wr_bank: Signal<Out, Bit>,
    pub wr_addr: Signal<Out, Bits<A>>,
    pub wr_data: Signal<Out, Bits<W>>,
    pub busy: Signal<Out, Bit>,
    // s1
    s1_valid: DFF<Bit>,
    s1_bk: DFF<Bit>,
    s1_addr: DFF<Bits<A>>,
    // s2
    s2_valid: DFF<Bit>,
    s2_bank: DFF<Bit>,
    s2_addr: DFF<Bits<A>>,
    ram_r: DFF<Bits<W>>,
    sel0: DFF<Bit>,
    sel1: DFF<Bit>,
    v: Signal<Local, Bits<32>>,
    cand: Signal<Local, Bits<32>>,
    upd: Signal<Local, Bit>,
    lt: Signal<Local, Bit>,
    h1: Signal<Local, Bit>,
    h2: Signal<Local, Bit>,
    h3: Signal<Local, Bit>,
    // 32-bit views of the four value sources (zero extension of register outputs)
    x_rd: Widen<32, W>,
    x_wr: Widen<32, W>,
    x_d1: Widen<32, W>,
    x_d2: Widen<32, W>,
    // wr and its delayed copies (the forwarding window)
    w_valid: DFF<Bit>,
    w_bank: DFF<Bit>,
    w_addr: DFF<Bits<A>>,
    w_data: DFF<Bits<W>>,
    d1_valid: DFF<Bit>,
    d1_bank: DFF<Bit>,
    d1_addr: DFF<Bits<A>>,
    d1_data: DFF<Bits<W>>,
    d2_data: DFF<Bits<W>>,
    om_inf: DFF<Bit>,
    om: DFF<Bits<32>>,
    // constants
    marker: Constant<Bits<32>>,
    top: Constant<Bits<32>>,
    one: Constant<Bits<32>>,
}

impl<const W: usize, const A: usize> CounterRmw<W, A> {
    pub fn new() -> Self {
        assert!((1..=32).contains(&W), "counter width W={W} must be 1..=32");
        assert!((1..=24).contains(&A), "address width A={A} must be 1..=24");
        let m = marker(W as u8) as u64;
        CounterRmw {
            clock: Default::default(),
            reset: Default::default(),
            valid: Default::default(),
            bank: Default::default(),
            addr: Default::default(),
            s1_bank: Default::default(),
            ram_q: Default::default(),
            rd_q: Default::default(),
            omega_inf: Default::default(),
            omega: Default::default(),
            omega_out_inf: Default::default(),
            omega_out: Default::default(),
            wr_valid: Default::default(),
            wr_bank: Default::default(),
            wr_addr: Default::default(),
            wr_data: Default::default(),
            busy: Default::default(),
            s1_valid: Default::default(),
            s1_bk: Default::default(),
            s1_addr: Default::default(),
            s2_valid: Default::default(),
            s2_bank: Default::default(),
            s2_addr: Default::default(),
            ram_r: Default::default(),
            sel0: Default::default(),
            sel1: Default::default(),
            v: Default::default(),
            cand: Default::default(),
            upd: Default::default(),
            lt: Default::default(),
            h1: Default::default(),
            h2: Default::default(),
            h3: Default::default(),
            x_rd: Default::default(),
            x_wr: Default::default(),
            x_d1: Default::default(),
            x_d2: Default::default(),
            w_valid: Default::default(),
            w_bank: Default::default(),
            w_addr: Default::default(),
            w_data: Default::default(),
            d1_valid: Default::default(),
            d1_bank: Default::default(),
            d1_addr: Default::default(),
            d1_data: Default::default(),
            d2_data: Default::default(),
            om_inf: Default::default(),
            om: Default::default(),
            marker: Constant::new(m.to_bits()),
            top: Constant::new(m.wrapping_sub(1).to_bits()),
            one: Constant::new(1u64.to_bits()),
        }
    }
}

impl<const W: usize, const A: usize> Default for CounterRmw<W, A> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const W: usize, const A: usize> Logic for CounterRmw<W, A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, s1_valid, s1_bk, s1_addr, s2_valid, s2_bank, s2_addr, ram_r, sel0, sel1, w_valid,
            w_bank, w_addr, w_data, d1_valid, d1_bank, d1_addr, d1_data, d2_data, om_inf, om
        );
        // s0 -> s1
        self.s1_valid.d.next = self.valid.val() & !self.reset.val();
        self.s1_bk.d.next = self.bank.val();
        self.s1_addr.d.next = self.addr.val();
        self.s1_bank.next = self.s1_bk.q.val();
        // s1: compare (bank, address) with the packets 1, 2, 3 ahead (now in s2, wr, d1; at
        // s2 they will be in wr, d1, d2) and register a priority select, newest first.
        self.h1.next = self.s2_valid.q.val()
            & (self.s1_bk.q.val() == self.s2_bank.q.val())
            & (self.s1_addr.q.val() == self.s2_addr.q.val());
        self.h2.next = self.w_valid.q.val()
            & (self.s1_bk.q.val() == self.w_bank.q.val())
            & (self.s1_addr.q.val() == self.w_addr.q.val());
        self.h3.next = self.d1_valid.q.val()
            & (self.s1_bk.q.val() == self.d1_bank.q.val())
            & (self.s1_addr.q.val() == self.d1_addr.q.val());
        self.sel0.d.next = self.h1.val() | (!self.h2.val() & self.h3.val());
        self.sel1.d.next = !self.h1.val() & (self.h2.val() | self.h3.val());
        self.ram_r.d.next = self.ram_q.val();
        self.s2_valid.d.next = self.s1_valid.q.val() & !self.reset.val();
        self.s2_bank.d.next = self.s1_bk.q.val();
        self.s2_addr.d.next = self.s1_addr.q.val();
        // s2: the current value of the counter, as 32 bits (the upper bits are constant 0
        // and vanish in synthesis; one comparator `v < omega` covers omega >= 2^W).
        self.x_rd.x.next = self.ram_r.q.val();
        self.x_wr.x.next = self.w_data.q.val();
        self.x_d1.x.next = self.d1_data.q.val();
        self.x_d2.x.next = self.d2_data.q.val();
        if self.sel1.q.val() {
            if self.sel0.q.val() {
                self.v.next = self.x_d2.y.val();
            } else {
                self.v.next = self.x_d1.y.val();
            }
        } else if self.sel0.q.val() {
            self.v.next = self.x_wr.y.val();
        } else {
            self.v.next = self.x_rd.y.val();
        }
        self.cand.next = self.v.val() + self.one.val();
        self.lt.next = self.omega_inf.val() | (self.v.val() < self.omega.val());
        self.upd.next = (self.v.val() != self.marker.val()) & self.lt.val();
        if self.upd.val() {
            self.w_data.d.next = self.cand.val().get_bits::<W>(0);
        } else {
            self.w_data.d.next = self.v.val().get_bits::<W>(0);
        }
        self.w_valid.d.next = self.s2_valid.q.val() & !self.reset.val();
        self.w_bank.d.next = self.s2_bank.q.val();
        self.w_addr.d.next = self.s2_addr.q.val();
        if self.upd.val() & (self.v.val() != self.top.val()) {
            self.om_inf.d.next = false;
            self.om.d.next = self.cand.val();
        } else {
            self.om_inf.d.next = self.omega_inf.val();
            self.om.d.next = self.omega.val();
        }
        // wr: the write-back; keep the last three writes for forwarding.
        self.d1_valid.d.next = self.w_valid.q.val() & !self.reset.val();
        self.d1_bank.d.next = self.w_bank.q.val();
        self.d1_addr.d.next = self.w_addr.q.val();
        self.d1_data.d.next = self.w_data.q.val();
        self.d2_data.d.next = self.d1_data.q.val();
        // Outputs.
        self.wr_valid.next = self.w_valid.q.val();
        self.wr_bank.next = self.w_bank.q.val();
        self.wr_addr.next = self.w_addr.q.val();
        self.wr_data.next = self.w_data.q.val();
        self.rd_q.next = self.ram_r.q.val();
        self.omega_out_inf.next = self.om_inf.q.val();
        self.omega_out.next = self.om.q.val();
        self.busy.next = self.valid.val() | self.s1_valid.q.val() | self.s2_valid.q.val();
    }
}
