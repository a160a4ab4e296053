//! `LatencyArray<WC, WS, A, B>`: one array of the latency tower, `2^A` buckets of a
//! `WC`-bit count cell and a `WS`-bit latency-sum cell in `B` banks, updated at one hop per
//! clock with full forwarding.
//!
//! One `ForwardTrack` (the bucket's address and bank are the two cells' own) drives two
//! [`CellStep`]s: the count (`alpha = 1`) and the sum (`alpha` = the hop's units), each with
//! its own RAM per bank, running minimum and estimate. The banks work as in
//! `sketch::array::CounterArray`: a hop reads and writes its own bank, the other bank's
//! read port serves the readout (`rd_bank`, `rd_addr`: both cells of the bucket,
//! [`READ_LATENCY`] clocks later) and its write port the clear sweep (zero in both cells).
//! The caller keeps hops out of the read and clear bank; a hop's write wins anyway.
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset of the valid bits (not the RAMs) |
//! | `valid`, `bank`, `addr` | in | 1, 1, `A` | a hop's bank and bucket (s0) |
//! | `alpha` | in | 32 | the hop's latency units, at s2 |
//! | `c_omega_inf`, `c_omega`, `c_est_inf`, `c_est` | in | 1, 32, 1, 32 | the count field's running minimum and estimate at s2 |
//! | `s_omega_inf`, `s_omega`, `s_est_inf`, `s_est` | in | 1, 32, 1, 32 | the sum field's |
//! | `c_*_out`, `s_*_out` | out | as above | after this array (one clock after s2) |
//! | `done` | out | 1 | the hop in the write stage is being written |
//! | `busy` | out | 1 | a hop is in s0..s2 |
//! | `rd_bank`, `rd_addr` | in | 1, `A` | readout bank and bucket |
//! | `rd_count`, `rd_sum` | out | `WC`, `WS` | the bucket's cells, [`READ_LATENCY`] clocks after `rd_addr` |
//! | `clr`, `clr_bank`, `clr_addr` | in | 1, 1, `A` | zero bucket `clr_addr` of bank `clr_bank` |
use super::cell_step::CellStep;
use crate::sketch::banked;
use crate::sketch::cell_ram::CellRam;
use crate::sketch::forward_track::ForwardTrack;
use rust_hdl::prelude::*;

/// Clocks from `rd_addr` to `rd_count`/`rd_sum`.
pub const READ_LATENCY: usize = 2;
/// Clocks from a hop at s0 to its `*_out` (as the flow tower's arrays).
pub const OMEGA_LATENCY: usize = crate::sketch::array::OMEGA_LATENCY;

/// One latency-tower array (see the module docs).
#[derive(LogicBlock)]
pub struct LatencyArray<const WC: usize, const WS: usize, const A: usize, const B: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub valid: Signal<In, Bit>,
    pub bank: Signal<In, Bit>,
    pub addr: Signal<In, Bits<A>>,
    pub alpha: Signal<In, Bits<32>>,
    pub c_omega_inf: Signal<In, Bit>,
    pub c_omega: Signal<In, Bits<32>>,
    pub c_est_inf: Signal<In, Bit>,
    pub c_est: Signal<In, Bits<32>>,
    pub s_omega_inf: Signal<In, Bit>,
    pub s_omega: Signal<In, Bits<32>>,
    pub s_est_inf: Signal<In, Bit>,
    pub s_est: Signal<In, Bits<32>>,
    pub c_omega_out_inf: Signal<Out, Bit>,
    pub c_omega_out: Signal<Out, Bits<32>>,
    pub c_est_out_inf: Signal<Out, Bit>,
    pub c_est_out: Signal<Out, Bits<32>>,
    pub s_omega_out_inf: Signal<Out, Bit>,
    pub s_omega_out: Signal<Out, Bits<32>>,
    pub s_est_out_inf: Signal<Out, Bit>,
    pub s_est_out: Signal<Out, Bits<32>>,
    pub done: Signal<Out, Bit>,
    pub busy: Signal<Out, Bit>,
    pub rd_bank: Signal<In, Bit>,
    pub rd_addr: Signal<In, Bits<A>>,
    pub rd_count: Signal<Out, Bits<WC>>,
    pub rd_sum: Signal<Out, Bits<WS>>,
    pub clr: Signal<In, Bit>,
    pub clr_bank: Signal<In, Bit>,
    pub clr_addr: Signal<In, Bits<A>>,
    track: ForwardTrack<A>,
    count: CellStep<WC>,
    sum: CellStep<WS>,
    c_rams: [CellRam<WC, A>; B],
    s_rams: [CellRam<WS, A>; B],
    ro_bank: DFF<Bit>,
    ro_count: DFF<Bits<WC>>,
    ro_sum: DFF<Bits<WS>>,
    p: [Signal<Local, Bit>; B],
    w: [Signal<Local, Bit>; B],
    pkt_bank: Signal<Local, Bit>,
    ro_sel: Signal<Local, Bit>,
    clr_on: Signal<Local, Bit>,
    banked: Constant<Bit>,
    single: Constant<Bit>,
    bank_no: [Constant<Bit>; B],
    one: Constant<Bits<32>>,
    zero_c: Constant<Bits<WC>>,
    zero_s: Constant<Bits<WS>>,
}

impl<const WC: usize, const WS: usize, const A: usize, const B: usize> LatencyArray<WC, WS, A, B> {
    /// The array; `B` is `sketch::ONE_BANK` or `sketch::TWO_BANKS` (checked at compile time).
    pub fn new() -> Self {
        assert!((1..=24).contains(&A), "address width A={A} must be 1..=24");
        LatencyArray {
            clock: Default::default(),
            reset: Default::default(),
            valid: Default::default(),
            bank: Default::default(),
            addr: Default::default(),
            alpha: Default::default(),
            c_omega_inf: Default::default(),
            c_omega: Default::default(),
            c_est_inf: Default::default(),
            c_est: Default::default(),
            s_omega_inf: Default::default(),
            s_omega: Default::default(),
            s_est_inf: Default::default(),
            s_est: Default::default(),
            c_omega_out_inf: Default::default(),
            c_omega_out: Default::default(),
            c_est_out_inf: Default::default(),
            c_est_out: Default::default(),
            s_omega_out_inf: Default::default(),
            s_omega_out: Default::default(),
            s_est_out_inf: Default::default(),
            s_est_out: Default::default(),
            done: Default::default(),
            busy: Default::default(),
            rd_bank: Default::default(),
            rd_addr: Default::default(),
            rd_count: Default::default(),
            rd_sum: Default::default(),
            clr: Default::default(),
            clr_bank: Default::default(),
            clr_addr: Default::default(),
            track: Default::default(),
            count: CellStep::new(),
            sum: CellStep::new(),
            c_rams: std::array::from_fn(|_| Default::default()),
            s_rams: std::array::from_fn(|_| Default::default()),
            ro_bank: Default::default(),
            ro_count: Default::default(),
            ro_sum: Default::default(),
            p: std::array::from_fn(|_| Default::default()),
            w: std::array::from_fn(|_| Default::default()),
            pkt_bank: Default::default(),
            ro_sel: Default::default(),
            clr_on: Default::default(),
            banked: Constant::new(banked::<B>()),
            single: Constant::new(!banked::<B>()),
            bank_no: std::array::from_fn(|b| Constant::new(b == 1)),
            one: Constant::new(1u64.to_bits()),
            zero_c: Constant::new(0u64.to_bits()),
            zero_s: Constant::new(0u64.to_bits()),
        }
    }
}

impl<const WC: usize, const WS: usize, const A: usize, const B: usize> Default
    for LatencyArray<WC, WS, A, B>
{
    fn default() -> Self {
        Self::new()
    }
}

impl<const WC: usize, const WS: usize, const A: usize, const B: usize> Logic for LatencyArray<WC, WS, A, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, ro_bank, ro_count, ro_sum);
        // The bank bits, constant 0 with one bank.
        self.pkt_bank.next = self.bank.val() & self.banked.val();
        self.ro_sel.next = self.rd_bank.val() & self.banked.val();
        self.clr_on.next = self.clr.val() & self.banked.val();
        // One forwarding track for the bucket's two cells.
        self.track.clock.next = self.clock.val();
        self.track.reset.next = self.reset.val();
        self.track.valid.next = self.valid.val();
        self.track.bank.next = self.pkt_bank.val();
        self.track.addr.next = self.addr.val();
        // The count cell: alpha = 1.
        self.count.clock.next = self.clock.val();
        self.count.sel0.next = self.track.sel0.val();
        self.count.sel1.next = self.track.sel1.val();
        self.count.alpha.next = self.one.val();
        self.count.omega_inf.next = self.c_omega_inf.val();
        self.count.omega.next = self.c_omega.val();
        self.count.est_inf.next = self.c_est_inf.val();
        self.count.est.next = self.c_est.val();
        // The sum cell: alpha = the hop's units.
        self.sum.clock.next = self.clock.val();
        self.sum.sel0.next = self.track.sel0.val();
        self.sum.sel1.next = self.track.sel1.val();
        self.sum.alpha.next = self.alpha.val();
        self.sum.omega_inf.next = self.s_omega_inf.val();
        self.sum.omega.next = self.s_omega.val();
        self.sum.est_inf.next = self.s_est_inf.val();
        self.sum.est.next = self.s_est.val();
        // s1: each RAM output goes to whoever read it (bank 0 unless the bit says 1).
        self.ro_bank.d.next = self.ro_sel.val();
        self.count.ram_q.next = self.c_rams[0].read_data.val();
        self.sum.ram_q.next = self.s_rams[0].read_data.val();
        self.ro_count.d.next = self.c_rams[0].read_data.val();
        self.ro_sum.d.next = self.s_rams[0].read_data.val();
        for b in 0..B {
            self.c_rams[b].read_clock.next = self.clock.val();
            self.c_rams[b].write_clock.next = self.clock.val();
            self.s_rams[b].read_clock.next = self.clock.val();
            self.s_rams[b].write_clock.next = self.clock.val();
            // s0: a hop reads its bank; the other bank serves the readout address.
            self.p[b].next = self.valid.val() & (self.pkt_bank.val() == self.bank_no[b].val());
            if self.p[b].val() {
                self.c_rams[b].read_address.next = self.addr.val();
                self.s_rams[b].read_address.next = self.addr.val();
            } else {
                self.c_rams[b].read_address.next = self.rd_addr.val();
                self.s_rams[b].read_address.next = self.rd_addr.val();
            }
            if self.track.s1_bank.val() == self.bank_no[b].val() {
                self.count.ram_q.next = self.c_rams[b].read_data.val();
                self.sum.ram_q.next = self.s_rams[b].read_data.val();
            }
            if self.ro_bank.q.val() == self.bank_no[b].val() {
                self.ro_count.d.next = self.c_rams[b].read_data.val();
                self.ro_sum.d.next = self.s_rams[b].read_data.val();
            }
            // wr: the hop writes its bank; otherwise the clear sweep may write zeros.
            self.w[b].next = self.track.wr_valid.val() & (self.track.wr_bank.val() == self.bank_no[b].val());
            if self.w[b].val() | self.single.val() {
                self.c_rams[b].write_address.next = self.track.wr_addr.val();
                self.c_rams[b].write_data.next = self.count.wr_data.val();
                self.s_rams[b].write_address.next = self.track.wr_addr.val();
                self.s_rams[b].write_data.next = self.sum.wr_data.val();
            } else {
                self.c_rams[b].write_address.next = self.clr_addr.val();
                self.c_rams[b].write_data.next = self.zero_c.val();
                self.s_rams[b].write_address.next = self.clr_addr.val();
                self.s_rams[b].write_data.next = self.zero_s.val();
            }
            self.c_rams[b].write_enable.next =
                self.w[b].val() | (self.clr_on.val() & (self.clr_bank.val() == self.bank_no[b].val()));
            self.s_rams[b].write_enable.next =
                self.w[b].val() | (self.clr_on.val() & (self.clr_bank.val() == self.bank_no[b].val()));
        }
        // Outputs.
        self.c_omega_out_inf.next = self.count.omega_out_inf.val();
        self.c_omega_out.next = self.count.omega_out.val();
        self.c_est_out_inf.next = self.count.est_out_inf.val();
        self.c_est_out.next = self.count.est_out.val();
        self.s_omega_out_inf.next = self.sum.omega_out_inf.val();
        self.s_omega_out.next = self.sum.omega_out.val();
        self.s_est_out_inf.next = self.sum.est_out_inf.val();
        self.s_est_out.next = self.sum.est_out.val();
        self.rd_count.next = self.ro_count.q.val();
        self.rd_sum.next = self.ro_sum.q.val();
        self.done.next = self.track.wr_valid.val();
        self.busy.next = self.track.busy.val();
    }
}
