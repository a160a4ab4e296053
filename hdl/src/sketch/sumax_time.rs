//! `TimeCells<TW, A>`: the two max cells of one SuMax array (LightGuardian 4.4), `2^A`
//! buckets of a last-arrival cell and a max inter-arrival cell of `TW` bits each, one block
//! RAM per cell, read-modify-write at one packet per clock with the same 3-deep forwarding as
//! [`super::array::CounterArray`] (same stages, same select; both RAMs share it).
//!
//! # Update rule (`host::sketch::sumax::SuMax::insert_at`)
//!
//! With `prev` the last-arrival cell and `iv` the interval cell before the update and `t` the
//! packet's time (already `time_of`-converted, `TW` bits):
//!
//! - `gap = 0` if `prev == 0` (no packet yet), else `(t - prev) mod 2^TW`;
//! - `iv' = max(iv, gap)`; `last' = t` (assigned, never a marker: time cells have none).
//!
//! # Pipeline (a packet entering at cycle `s0`)
//!
//! | cycle | stage | what |
//! |---|---|---|
//! | s0 | `valid`, `addr` | both RAMs read the bucket |
//! | s1 | compare | address compared with the 3 packets ahead; 2-bit select registered |
//! | s2 | compute | `prev`/`iv` = forwarded or RAM (`rd_q`); `t` is read here; result to `wr` |
//! | s3 | wr | both RAMs written |
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset of the valid bits (not the RAMs) |
//! | `valid`, `addr` | in | 1, `A` | a packet's bucket (s0) |
//! | `t` | in | `TW` | the packet's time, at s2 |
//! | `rd_addr` | in | `A` | readout address (used when `valid` is low) |
//! | `rd_interval`, `rd_last` | out | `TW` | the cells at `rd_addr` two clocks earlier |
use rust_hdl::prelude::*;

/// One array's max cells (see the module docs).
#[derive(LogicBlock)]
pub struct TimeCells<const TW: usize, const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub valid: Signal<In, Bit>,
    pub addr: Signal<In, Bits<A>>,
    pub t: Signal<In, Bits<TW>>,
    pub rd_addr: Signal<In, Bits<A>>,
    pub rd_interval: Signal<Out, Bits<TW>>,
    pub rd_last: Signal<Out, Bits<TW>>,
    ram_last: RAM<Bits<TW>, A>,
    ram_iv: RAM<Bits<TW>, A>,
    s1_valid: DFF<Bit>,
    s1_addr: DFF<Bits<A>>,
    s2_valid: DFF<Bit>,
    s2_addr: DFF<Bits<A>>,
    rdq_last: DFF<Bits<TW>>,
    rdq_iv: DFF<Bits<TW>>,
    sel0: DFF<Bit>,
    sel1: DFF<Bit>,
    h1: Signal<Local, Bit>,
    h2: Signal<Local, Bit>,
    h3: Signal<Local, Bit>,
    prev: Signal<Local, Bits<TW>>,
    iv: Signal<Local, Bits<TW>>,
    gap: Signal<Local, Bits<TW>>,
    wr_valid: DFF<Bit>,
    wr_addr: DFF<Bits<A>>,
    wr_last: DFF<Bits<TW>>,
    wr_iv: DFF<Bits<TW>>,
    d1_valid: DFF<Bit>,
    d1_addr: DFF<Bits<A>>,
    d1_last: DFF<Bits<TW>>,
    d1_iv: DFF<Bits<TW>>,
    d2_last: DFF<Bits<TW>>,
    d2_iv: DFF<Bits<TW>>,
    zero: Constant<Bits<TW>>,
}

impl<const TW: usize, const A: usize> TimeCells<TW, A> {
    pub fn new() -> Self {
        assert!((1..=32).contains(&TW), "time width TW={TW} must be 1..=32");
        assert!((1..=24).contains(&A), "address width A={A} must be 1..=24");
        TimeCells {
            clock: Default::default(),
            reset: Default::default(),
            valid: Default::default(),
            addr: Default::default(),
            t: Default::default(),
            rd_addr: Default::default(),
            rd_interval: Default::default(),
            rd_last: Default::default(),
            ram_last: Default::default(),
            ram_iv: Default::default(),
            s1_valid: Default::default(),
            s1_addr: Default::default(),
            s2_valid: Default::default(),
            s2_addr: Default::default(),
            rdq_last: Default::default(),
            rdq_iv: Default::default(),
            sel0: Default::default(),
            sel1: Default::default(),
            h1: Default::default(),
            h2: Default::default(),
            h3: Default::default(),
            prev: Default::default(),
            iv: Default::default(),
            gap: Default::default(),
            wr_valid: Default::default(),
            wr_addr: Default::default(),
            wr_last: Default::default(),
            wr_iv: Default::default(),
            d1_valid: Default::default(),
            d1_addr: Default::default(),
            d1_last: Default::default(),
            d1_iv: Default::default(),
            d2_last: Default::default(),
            d2_iv: Default::default(),
            zero: Constant::new(0u64.to_bits()),
        }
    }
}

impl<const TW: usize, const A: usize> Default for TimeCells<TW, A> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const TW: usize, const A: usize> Logic for TimeCells<TW, A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, s1_valid, s1_addr, s2_valid, s2_addr, rdq_last, rdq_iv, sel0, sel1, wr_valid,
            wr_addr, wr_last, wr_iv, d1_valid, d1_addr, d1_last, d1_iv, d2_last, d2_iv
        );
        self.ram_last.read_clock.next = self.clock.val();
        self.ram_last.write_clock.next = self.clock.val();
        self.ram_iv.read_clock.next = self.clock.val();
        self.ram_iv.write_clock.next = self.clock.val();
        // s0: the packet's bucket, or the readout address.
        if self.valid.val() {
            self.ram_last.read_address.next = self.addr.val();
            self.ram_iv.read_address.next = self.addr.val();
        } else {
            self.ram_last.read_address.next = self.rd_addr.val();
            self.ram_iv.read_address.next = self.rd_addr.val();
        }
        self.s1_valid.d.next = self.valid.val() & !self.reset.val();
        self.s1_addr.d.next = self.addr.val();
        // s1: compare with the packets 1, 2, 3 ahead; newest first.
        self.h1.next = self.s2_valid.q.val() & (self.s1_addr.q.val() == self.s2_addr.q.val());
        self.h2.next = self.wr_valid.q.val() & (self.s1_addr.q.val() == self.wr_addr.q.val());
        self.h3.next = self.d1_valid.q.val() & (self.s1_addr.q.val() == self.d1_addr.q.val());
        self.sel0.d.next = self.h1.val() | (!self.h2.val() & self.h3.val());
        self.sel1.d.next = !self.h1.val() & (self.h2.val() | self.h3.val());
        self.rdq_last.d.next = self.ram_last.read_data.val();
        self.rdq_iv.d.next = self.ram_iv.read_data.val();
        self.s2_valid.d.next = self.s1_valid.q.val() & !self.reset.val();
        self.s2_addr.d.next = self.s1_addr.q.val();
        // s2: the bucket's current cells, then the max rule.
        if self.sel1.q.val() {
            if self.sel0.q.val() {
                self.prev.next = self.d2_last.q.val();
                self.iv.next = self.d2_iv.q.val();
            } else {
                self.prev.next = self.d1_last.q.val();
                self.iv.next = self.d1_iv.q.val();
            }
        } else if self.sel0.q.val() {
            self.prev.next = self.wr_last.q.val();
            self.iv.next = self.wr_iv.q.val();
        } else {
            self.prev.next = self.rdq_last.q.val();
            self.iv.next = self.rdq_iv.q.val();
        }
        if self.prev.val() == self.zero.val() {
            self.gap.next = self.zero.val();
        } else {
            self.gap.next = self.t.val() - self.prev.val();
        }
        if self.gap.val() > self.iv.val() {
            self.wr_iv.d.next = self.gap.val();
        } else {
            self.wr_iv.d.next = self.iv.val();
        }
        self.wr_last.d.next = self.t.val();
        self.wr_valid.d.next = self.s2_valid.q.val() & !self.reset.val();
        self.wr_addr.d.next = self.s2_addr.q.val();
        // s3: write back; keep the last three writes for forwarding.
        self.ram_last.write_address.next = self.wr_addr.q.val();
        self.ram_last.write_data.next = self.wr_last.q.val();
        self.ram_last.write_enable.next = self.wr_valid.q.val();
        self.ram_iv.write_address.next = self.wr_addr.q.val();
        self.ram_iv.write_data.next = self.wr_iv.q.val();
        self.ram_iv.write_enable.next = self.wr_valid.q.val();
        self.d1_valid.d.next = self.wr_valid.q.val() & !self.reset.val();
        self.d1_addr.d.next = self.wr_addr.q.val();
        self.d1_last.d.next = self.wr_last.q.val();
        self.d1_iv.d.next = self.wr_iv.q.val();
        self.d2_last.d.next = self.d1_last.q.val();
        self.d2_iv.d.next = self.d1_iv.q.val();
        self.rd_last.next = self.rdq_last.q.val();
        self.rd_interval.next = self.rdq_iv.q.val();
    }
}
