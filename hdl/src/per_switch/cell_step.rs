//! `CellStep<W>`: the compute and write registers of one latency-tower cell (a count cell
//! with `alpha = 1`, a sum cell with `alpha` = the hop's latency units), behind a
//! `sketch::forward_track::ForwardTrack` shared by the bucket's two cells.
//!
//! The flow tower's `CounterRmw` is not reused for the count cell: its rule is written
//! for `alpha = 1` only, and it does not expose the cell's value *before* the update,
//! which the latency tower must return (the pair's estimates before the hop feed the
//! inflated-latency detector). One datapath with an `alpha` input serves both cells; with
//! `alpha` tied to 1 synthesis folds the adder and the extra comparators.
//!
//! # Update rule (`host::sketch::cell::omega_step`, any `alpha`)
//!
//! With `M = 2^W - 1` the marker, `v` the cell before the hop (forwarded or read), `omega`
//! the running minimum (`omega_inf` = INF; CM drives INF into every array) and
//! `c = v + alpha` (33 bits, no wrap):
//!
//! | case | new cell | `omega_out` |
//! |---|---|---|
//! | `v = M` (overflowed: sticky) | `v` | `omega` |
//! | `c < M` and `c < omega` | `c` | `c` |
//! | else, `v < omega` ("raise to omega") | `M` if `omega >= M` or INF, else `omega` | `omega` |
//! | else | `v` | `omega` |
//!
//! With `omega = INF` this is `cm_step`: `c` below the marker, else the marker.
//! The middle branch matters once `alpha > 1`: a cell just below `omega` is raised to it,
//! not past it.
//!
//! # Estimate chain
//!
//! Beside `omega` travels the pair's estimate `est`: the minimum of the non-overflowed
//! values `v` of the arrays passed so far (`est_inf` = none yet, or all overflowed):
//! `est_out = min(est, v)` unless `v = M`. After the last array it is
//! `LatencyTower::insert`'s return value for this field.
//!
//! # Timing (the stages of `ForwardTrack`)
//!
//! `ram_q` is the RAM output at s1 (registered here), `sel1`/`sel0` pick the value source
//! at s2 (RAM, write register, `d1`, `d2`); `alpha`, `omega*`, `est*` are read at s2; the
//! outputs are registers loaded at the end of s2 (`wr_data` is the write stage's data).
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock` | in | 1 | clock |
//! | `ram_q` | in | `W` | the cell's RAM output for the hop at s1 |
//! | `sel0`, `sel1` | in | 1 | value source of the hop at s2 (`ForwardTrack`) |
//! | `alpha` | in | 32 | the hop's increment |
//! | `omega_inf`, `omega` | in | 1, 32 | running minimum of the hop at s2 |
//! | `est_inf`, `est` | in | 1, 32 | estimate so far of the hop at s2 |
//! | `wr_data` | out | `W` | the cell after the hop (write stage) |
//! | `omega_out_inf`, `omega_out` | out | 1, 32 | running minimum after this array |
//! | `est_out_inf`, `est_out` | out | 1, 32 | estimate after this array |
use crate::arith::Widen;
use rust_hdl::prelude::*;
use smartnic_contract::geometry::marker;

/// The RMW datapath of one cell with an `alpha` input (see the module docs).
#[derive(LogicBlock)]
pub struct CellStep<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub ram_q: Signal<In, Bits<W>>,
    pub sel0: Signal<In, Bit>,
    pub sel1: Signal<In, Bit>,
    pub alpha: Signal<In, Bits<32>>,
    pub omega_inf: Signal<In, Bit>,
    pub omega: Signal<In, Bits<32>>,
    pub est_inf: Signal<In, Bit>,
    pub est: Signal<In, Bits<32>>,
    pub wr_data: Signal<Out, Bits<W>>,
    pub omega_out_inf: Signal<Out, Bit>,
    pub omega_out: Signal<Out, Bits<32>>,
    pub est_out_inf: Signal<Out, Bit>,
    pub est_out: Signal<Out, Bits<32>>,
    ram_r: DFF<Bits<W>>,
    // 33-bit views (zero extension) of the value sources and of the 32-bit operands.
    x_rd: Widen<33, W>,
    x_wr: Widen<33, W>,
    x_d1: Widen<33, W>,
    x_d2: Widen<33, W>,
    x_alpha: Widen<33, 32>,
    x_omega: Widen<33, 32>,
    x_est: Widen<33, 32>,
    v: Signal<Local, Bits<33>>,
    cand: Signal<Local, Bits<33>>,
    live: Signal<Local, Bit>,
    take_cand: Signal<Local, Bit>,
    raise: Signal<Local, Bit>,
    omega_sat: Signal<Local, Bit>,
    w_data: DFF<Bits<W>>,
    d1_data: DFF<Bits<W>>,
    d2_data: DFF<Bits<W>>,
    om_inf: DFF<Bit>,
    om: DFF<Bits<32>>,
    es_inf: DFF<Bit>,
    es: DFF<Bits<32>>,
    marker: Constant<Bits<33>>,
    marker_w: Constant<Bits<W>>,
}

impl<const W: usize> CellStep<W> {
    pub fn new() -> Self {
        assert!((1..=32).contains(&W), "cell width W={W} must be 1..=32");
        let m = marker(W as u8) as u64;
        CellStep {
            clock: Default::default(),
            ram_q: Default::default(),
            sel0: Default::default(),
            sel1: Default::default(),
            alpha: Default::default(),
            omega_inf: Default::default(),
            omega: Default::default(),
            est_inf: Default::default(),
            est: Default::default(),
            wr_data: Default::default(),
            omega_out_inf: Default::default(),
            omega_out: Default::default(),
            est_out_inf: Default::default(),
            est_out: Default::default(),
            ram_r: Default::default(),
            x_rd: Default::default(),
            x_wr: Default::default(),
            x_d1: Default::default(),
            x_d2: Default::default(),
            x_alpha: Default::default(),
            x_omega: Default::default(),
            x_est: Default::default(),
            v: Default::default(),
            cand: Default::default(),
            live: Default::default(),
            take_cand: Default::default(),
            raise: Default::default(),
            omega_sat: Default::default(),
            w_data: Default::default(),
            d1_data: Default::default(),
            d2_data: Default::default(),
            om_inf: Default::default(),
            om: Default::default(),
            es_inf: Default::default(),
            es: Default::default(),
            marker: Constant::new(m.to_bits()),
            marker_w: Constant::new(m.to_bits()),
        }
    }
}

impl<const W: usize> Default for CellStep<W> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const W: usize> Logic for CellStep<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, ram_r, w_data, d1_data, d2_data, om_inf, om, es_inf, es);
        self.ram_r.d.next = self.ram_q.val();
        // s2: the cell before the hop, newest in-flight write first.
        self.x_rd.x.next = self.ram_r.q.val();
        self.x_wr.x.next = self.w_data.q.val();
        self.x_d1.x.next = self.d1_data.q.val();
        self.x_d2.x.next = self.d2_data.q.val();
        self.x_alpha.x.next = self.alpha.val();
        self.x_omega.x.next = self.omega.val();
        self.x_est.x.next = self.est.val();
        if self.sel1.val() {
            if self.sel0.val() {
                self.v.next = self.x_d2.y.val();
            } else {
                self.v.next = self.x_d1.y.val();
            }
        } else if self.sel0.val() {
            self.v.next = self.x_wr.y.val();
        } else {
            self.v.next = self.x_rd.y.val();
        }
        // The omega rule (module docs).
        self.cand.next = self.v.val() + self.x_alpha.y.val();
        self.live.next = self.v.val() != self.marker.val();
        self.take_cand.next = self.live.val()
            & (self.cand.val() < self.marker.val())
            & (self.omega_inf.val() | (self.cand.val() < self.x_omega.y.val()));
        self.raise.next = self.live.val() & (self.omega_inf.val() | (self.v.val() < self.x_omega.y.val()));
        self.omega_sat.next = self.omega_inf.val() | (self.x_omega.y.val() >= self.marker.val());
        if self.take_cand.val() {
            self.w_data.d.next = self.cand.val().get_bits::<W>(0);
        } else if self.raise.val() {
            if self.omega_sat.val() {
                self.w_data.d.next = self.marker_w.val();
            } else {
                self.w_data.d.next = self.omega.val().get_bits::<W>(0);
            }
        } else {
            self.w_data.d.next = self.v.val().get_bits::<W>(0);
        }
        if self.take_cand.val() {
            self.om_inf.d.next = false;
            self.om.d.next = self.cand.val().get_bits::<32>(0);
        } else {
            self.om_inf.d.next = self.omega_inf.val();
            self.om.d.next = self.omega.val();
        }
        // The estimate: minimum of the non-overflowed values before the hop.
        if self.live.val() & (self.est_inf.val() | (self.v.val() < self.x_est.y.val())) {
            self.es_inf.d.next = false;
            self.es.d.next = self.v.val().get_bits::<32>(0);
        } else {
            self.es_inf.d.next = self.est_inf.val();
            self.es.d.next = self.est.val();
        }
        // wr: keep the last three writes for forwarding.
        self.d1_data.d.next = self.w_data.q.val();
        self.d2_data.d.next = self.d1_data.q.val();
        self.wr_data.next = self.w_data.q.val();
        self.omega_out_inf.next = self.om_inf.q.val();
        self.omega_out.next = self.om.q.val();
        self.est_out_inf.next = self.es_inf.q.val();
        self.est_out.next = self.es.q.val();
    }
}
