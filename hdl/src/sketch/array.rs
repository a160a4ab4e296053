//! `CounterArray<W, A>`: one TowerSketch counter array, `2^A` counters of `W` bits in one
//! block RAM, updated read-modify-write at one packet per clock with full forwarding.
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
//! | `t` | s0 | `addr` drives the RAM read address (registered inputs expected) |
//! | `t+1` | s1 | RAM output; the packet's address is compared with the 3 packets ahead |
//! | `t+2` | s2 | `rd_q` (RAM output register); `v` = forwarded value or `rd_q`; `omega_in` is consumed; `v'` computed |
//! | `t+3` | wr | `v'` in the write register drives the RAM write port; `omega_out` is valid |
//!
//! # Forwarding
//!
//! Every valid packet writes its counter back (changed or not), so the last three values
//! written are exactly the in-flight state. The memory holds a packet's write from the end
//! of `t+3`; a packet entering `k = 1, 2, 3` clocks later reads the RAM at or before that
//! edge (READ_FIRST at `k = 3`, which the forwarding makes irrelevant) and gets a stale
//! value. So at s1 the packet compares its address with the packets in s2, wr and wr+1
//! (1, 2, 3 ahead); the registered 2-bit priority select (newest first) picks, at s2,
//! the write register `wr` (k = 1), its delayed copies `d1` (k = 2) or `d2` (k = 3), or
//! the RAM. Comparators sit off the critical loop; the loop `wr -> 4:1 mux -> +1/compare ->
//! wr` is one add plus two LUT levels, and the RAM's clock-to-out and data setup both end
//! or start at a flop (`rd_q`, `wr`).
//!
//! # Readout
//!
//! When no packet is at s0 the read address comes from `rd_addr`; `rd_data` is `rd_q`, two
//! clocks after the address. Reads are meant for an idle array (`busy` low): a packet at
//! s0 takes the port, and counters changing under the reads are the caller's business.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset of the valid bits (not the RAM) |
//! | `valid`, `addr` | in | 1, `A` | a packet's counter index (s0) |
//! | `omega_inf`, `omega` | in | 1, 32 | running minimum of the packet at s2 (`INF` = `omega_inf`) |
//! | `omega_out_inf`, `omega_out` | out | 1, 32 | running minimum after this array (one clock after s2) |
//! | `done` | out | 1 | the packet in `wr` is being written (one per input packet) |
//! | `busy` | out | 1 | a packet is in s0..s2 (with `done`: in flight) |
//! | `rd_addr` | in | `A` | readout address (used when `valid` is low) |
//! | `rd_data` | out | `W` | counter at `rd_addr` two clocks earlier |
use crate::arith::Widen;
use rust_hdl::prelude::*;
use smartnic_contract::geometry::marker;

/// Clocks from a packet at s0 to its `omega_out`.
pub const OMEGA_LATENCY: usize = 3;
/// Clocks from s0 to the compute stage (where `omega_in` is read).
pub const COMPUTE_STAGE: usize = 2;
/// Clocks from `rd_addr` to `rd_data`.
pub const READ_LATENCY: usize = 2;
/// How many packets ahead are forwarded.
pub const FORWARD_DEPTH: usize = 3;

/// One counter array (see the module docs).
#[derive(LogicBlock)]
pub struct CounterArray<const W: usize, const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub valid: Signal<In, Bit>,
    pub addr: Signal<In, Bits<A>>,
    pub omega_inf: Signal<In, Bit>,
    pub omega: Signal<In, Bits<32>>,
    pub omega_out_inf: Signal<Out, Bit>,
    pub omega_out: Signal<Out, Bits<32>>,
    pub done: Signal<Out, Bit>,
    pub busy: Signal<Out, Bit>,
    pub rd_addr: Signal<In, Bits<A>>,
    pub rd_data: Signal<Out, Bits<W>>,
    ram: RAM<Bits<W>, A>,
    // s1
    s1_valid: DFF<Bit>,
    s1_addr: DFF<Bits<A>>,
    // s2
    s2_valid: DFF<Bit>,
    s2_addr: DFF<Bits<A>>,
    rd_q: DFF<Bits<W>>,
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
    wr_valid: DFF<Bit>,
    wr_addr: DFF<Bits<A>>,
    wr_data: DFF<Bits<W>>,
    d1_valid: DFF<Bit>,
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

impl<const W: usize, const A: usize> CounterArray<W, A> {
    pub fn new() -> Self {
        assert!((1..=32).contains(&W), "counter width W={W} must be 1..=32");
        assert!((1..=24).contains(&A), "address width A={A} must be 1..=24");
        let m = marker(W as u8) as u64;
        CounterArray {
            clock: Default::default(),
            reset: Default::default(),
            valid: Default::default(),
            addr: Default::default(),
            omega_inf: Default::default(),
            omega: Default::default(),
            omega_out_inf: Default::default(),
            omega_out: Default::default(),
            done: Default::default(),
            busy: Default::default(),
            rd_addr: Default::default(),
            rd_data: Default::default(),
            ram: Default::default(),
            s1_valid: Default::default(),
            s1_addr: Default::default(),
            s2_valid: Default::default(),
            s2_addr: Default::default(),
            rd_q: Default::default(),
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
            wr_valid: Default::default(),
            wr_addr: Default::default(),
            wr_data: Default::default(),
            d1_valid: Default::default(),
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

impl<const W: usize, const A: usize> Default for CounterArray<W, A> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const W: usize, const A: usize> Logic for CounterArray<W, A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, s1_valid, s1_addr, s2_valid, s2_addr, rd_q, sel0, sel1, wr_valid, wr_addr, wr_data,
            d1_valid, d1_addr, d1_data, d2_data, om_inf, om
        );
        self.ram.read_clock.next = self.clock.val();
        self.ram.write_clock.next = self.clock.val();
        // s0: the packet's address, or the readout address when no packet is here.
        if self.valid.val() {
            self.ram.read_address.next = self.addr.val();
        } else {
            self.ram.read_address.next = self.rd_addr.val();
        }
        self.s1_valid.d.next = self.valid.val() & !self.reset.val();
        self.s1_addr.d.next = self.addr.val();
        // s1: compare with the packets 1, 2, 3 ahead (now in s2, wr, d1; at s2 they will be
        // in wr, d1, d2) and register a priority select, newest first.
        self.h1.next = self.s2_valid.q.val() & (self.s1_addr.q.val() == self.s2_addr.q.val());
        self.h2.next = self.wr_valid.q.val() & (self.s1_addr.q.val() == self.wr_addr.q.val());
        self.h3.next = self.d1_valid.q.val() & (self.s1_addr.q.val() == self.d1_addr.q.val());
        self.sel0.d.next = self.h1.val() | (!self.h2.val() & self.h3.val());
        self.sel1.d.next = !self.h1.val() & (self.h2.val() | self.h3.val());
        self.rd_q.d.next = self.ram.read_data.val();
        self.s2_valid.d.next = self.s1_valid.q.val() & !self.reset.val();
        self.s2_addr.d.next = self.s1_addr.q.val();
        // s2: the current value of the counter, as 32 bits (the upper bits are constant 0
        // and vanish in synthesis; one comparator `v < omega` covers omega >= 2^W).
        self.x_rd.x.next = self.rd_q.q.val();
        self.x_wr.x.next = self.wr_data.q.val();
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
            self.wr_data.d.next = self.cand.val().get_bits::<W>(0);
        } else {
            self.wr_data.d.next = self.v.val().get_bits::<W>(0);
        }
        self.wr_valid.d.next = self.s2_valid.q.val() & !self.reset.val();
        self.wr_addr.d.next = self.s2_addr.q.val();
        if self.upd.val() & (self.v.val() != self.top.val()) {
            self.om_inf.d.next = false;
            self.om.d.next = self.cand.val();
        } else {
            self.om_inf.d.next = self.omega_inf.val();
            self.om.d.next = self.omega.val();
        }
        // wr: write back; keep the last three writes for forwarding.
        self.ram.write_address.next = self.wr_addr.q.val();
        self.ram.write_data.next = self.wr_data.q.val();
        self.ram.write_enable.next = self.wr_valid.q.val();
        self.d1_valid.d.next = self.wr_valid.q.val() & !self.reset.val();
        self.d1_addr.d.next = self.wr_addr.q.val();
        self.d1_data.d.next = self.wr_data.q.val();
        self.d2_data.d.next = self.d1_data.q.val();
        // Outputs.
        self.omega_out_inf.next = self.om_inf.q.val();
        self.omega_out.next = self.om.q.val();
        self.done.next = self.wr_valid.q.val();
        self.busy.next = self.valid.val() | self.s1_valid.q.val() | self.s2_valid.q.val();
        self.rd_data.next = self.rd_q.q.val();
    }
}
