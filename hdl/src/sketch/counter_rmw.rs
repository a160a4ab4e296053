//! `CounterRmw<W, A>`: the read-modify-write datapath of one TowerSketch counter array
//! (forwarding, the CM/ACU step, the write register), without the RAMs: [`super::array`]
//! puts it behind one RAM per bank (one, or two for the epoch scheme).
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
//! written are exactly the in-flight state; [`ForwardTrack`] says which one (or the RAM) a
//! packet at s2 must use, comparing (bank, address). The loop `wr -> 4:1 mux -> +1/compare
//! -> wr` is one add plus two LUT levels, and the RAM's clock-to-out and data setup both end
//! or start at a flop (`rd_q`, `wr`).
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
use super::forward_track::ForwardTrack;
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
    track: ForwardTrack<A>,
    // s2: the RAM output register
    ram_r: DFF<Bits<W>>,
    v: Signal<Local, Bits<32>>,
    cand: Signal<Local, Bits<32>>,
    upd: Signal<Local, Bit>,
    lt: Signal<Local, Bit>,
    // 32-bit views of the four value sources (zero extension of register outputs).
    // rust-hdl workaround: `bit_cast` widening renders as `x & M'hff..` (a Verilator WIDTH
    // warning); `Widen` is a leaf whose Verilog is `{zeros, x}`.
    x_rd: Widen<32, W>,
    x_wr: Widen<32, W>,
    x_d1: Widen<32, W>,
    x_d2: Widen<32, W>,
    // the write register and its delayed copies (the forwarded values)
    w_data: DFF<Bits<W>>,
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
            track: Default::default(),
            ram_r: Default::default(),
            v: Default::default(),
            cand: Default::default(),
            upd: Default::default(),
            lt: Default::default(),
            x_rd: Default::default(),
            x_wr: Default::default(),
            x_d1: Default::default(),
            x_d2: Default::default(),
            w_data: Default::default(),
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
        dff_setup!(self, clock, ram_r, w_data, d1_data, d2_data, om_inf, om);
        self.track.clock.next = self.clock.val();
        self.track.reset.next = self.reset.val();
        self.track.valid.next = self.valid.val();
        self.track.bank.next = self.bank.val();
        self.track.addr.next = self.addr.val();
        // s1: the RAM output, registered.
        self.ram_r.d.next = self.ram_q.val();
        // s2: the current value of the counter, as 32 bits (the upper bits are constant 0
        // and vanish in synthesis; one comparator `v < omega` covers omega >= 2^W).
        self.x_rd.x.next = self.ram_r.q.val();
        self.x_wr.x.next = self.w_data.q.val();
        self.x_d1.x.next = self.d1_data.q.val();
        self.x_d2.x.next = self.d2_data.q.val();
        if self.track.sel1.val() {
            if self.track.sel0.val() {
                self.v.next = self.x_d2.y.val();
            } else {
                self.v.next = self.x_d1.y.val();
            }
        } else if self.track.sel0.val() {
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
        if self.upd.val() & (self.v.val() != self.top.val()) {
            self.om_inf.d.next = false;
            self.om.d.next = self.cand.val();
        } else {
            self.om_inf.d.next = self.omega_inf.val();
            self.om.d.next = self.omega.val();
        }
        // wr: the write-back; keep the last three writes for forwarding.
        self.d1_data.d.next = self.w_data.q.val();
        self.d2_data.d.next = self.d1_data.q.val();
        // Outputs.
        self.s1_bank.next = self.track.s1_bank.val();
        self.wr_valid.next = self.track.wr_valid.val();
        self.wr_bank.next = self.track.wr_bank.val();
        self.wr_addr.next = self.track.wr_addr.val();
        self.wr_data.next = self.w_data.q.val();
        self.rd_q.next = self.ram_r.q.val();
        self.omega_out_inf.next = self.om_inf.q.val();
        self.omega_out.next = self.om.q.val();
        self.busy.next = self.track.busy.val();
    }
}
