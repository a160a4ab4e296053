//! `BankedTimeCells<TW, A>`: [`super::sumax_time::TimeCells`] with **two banks** (two RAMs
//! per cell) behind one read-modify-write datapath, as [`super::banked_array::BankedArray`]
//! is to `CounterArray`: the packet's `bank` bit travels s0 -> s1 -> s2 -> wr -> d1, the
//! forwarding compares (bank, address), a packet reads its bank's RAMs, the other bank's
//! read port serves `rd_addr` (selected by `rd_bank`), and the other bank's write port takes
//! the clear sweep (`clr`, `clr_bank`, `clr_addr`: zero both cells).
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset of the valid bits (not the RAMs) |
//! | `valid`, `bank`, `addr` | in | 1, 1, `A` | a packet's bank and bucket (s0) |
//! | `t` | in | `TW` | the packet's time, at s2 |
//! | `rd_bank`, `rd_addr` | in | 1, `A` | readout bank and address (the bank holds no packet at s0) |
//! | `rd_interval`, `rd_last` | out | `TW` | the cells of `rd_bank` at `rd_addr` two clocks earlier |
//! | `clr`, `clr_bank`, `clr_addr` | in | 1, 1, `A` | write 0 to both cells at `clr_addr` of bank `clr_bank` |
use rust_hdl::prelude::*;

/// One array's max cells, two banks (see the module docs).
#[derive(LogicBlock)]
pub struct BankedTimeCells<const TW: usize, const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub valid: Signal<In, Bit>,
    pub bank: Signal<In, Bit>,
    pub addr: Signal<In, Bits<A>>,
    pub t: Signal<In, Bits<TW>>,
    pub rd_bank: Signal<In, Bit>,
    pub rd_addr: Signal<In, Bits<A>>,
    pub rd_interval: Signal<Out, Bits<TW>>,
    pub rd_last: Signal<Out, Bits<TW>>,
    pub clr: Signal<In, Bit>,
    pub clr_bank: Signal<In, Bit>,
    pub clr_addr: Signal<In, Bits<A>>,
    last0: RAM<Bits<TW>, A>,
    last1: RAM<Bits<TW>, A>,
    iv0: RAM<Bits<TW>, A>,
    iv1: RAM<Bits<TW>, A>,
    s1_valid: DFF<Bit>,
    s1_bank: DFF<Bit>,
    s1_addr: DFF<Bits<A>>,
    ro_bank: DFF<Bit>,
    s2_valid: DFF<Bit>,
    s2_bank: DFF<Bit>,
    s2_addr: DFF<Bits<A>>,
    rdq_last: DFF<Bits<TW>>,
    rdq_iv: DFF<Bits<TW>>,
    roq_last: DFF<Bits<TW>>,
    roq_iv: DFF<Bits<TW>>,
    sel0: DFF<Bit>,
    sel1: DFF<Bit>,
    h1: Signal<Local, Bit>,
    h2: Signal<Local, Bit>,
    h3: Signal<Local, Bit>,
    p0: Signal<Local, Bit>,
    p1: Signal<Local, Bit>,
    w0: Signal<Local, Bit>,
    w1: Signal<Local, Bit>,
    prev: Signal<Local, Bits<TW>>,
    iv: Signal<Local, Bits<TW>>,
    gap: Signal<Local, Bits<TW>>,
    wr_valid: DFF<Bit>,
    wr_bank: DFF<Bit>,
    wr_addr: DFF<Bits<A>>,
    wr_last: DFF<Bits<TW>>,
    wr_iv: DFF<Bits<TW>>,
    d1_valid: DFF<Bit>,
    d1_bank: DFF<Bit>,
    d1_addr: DFF<Bits<A>>,
    d1_last: DFF<Bits<TW>>,
    d1_iv: DFF<Bits<TW>>,
    d2_last: DFF<Bits<TW>>,
    d2_iv: DFF<Bits<TW>>,
    zero: Constant<Bits<TW>>,
}

impl<const TW: usize, const A: usize> BankedTimeCells<TW, A> {
    pub fn new() -> Self {
        assert!((1..=32).contains(&TW), "time width TW={TW} must be 1..=32");
        assert!((1..=24).contains(&A), "address width A={A} must be 1..=24");
        BankedTimeCells {
            clock: Default::default(),
            reset: Default::default(),
            valid: Default::default(),
            bank: Default::default(),
            addr: Default::default(),
            t: Default::default(),
            rd_bank: Default::default(),
            rd_addr: Default::default(),
            rd_interval: Default::default(),
            rd_last: Default::default(),
            clr: Default::default(),
            clr_bank: Default::default(),
            clr_addr: Default::default(),
            last0: Default::default(),
            last1: Default::default(),
            iv0: Default::default(),
            iv1: Default::default(),
            s1_valid: Default::default(),
            s1_bank: Default::default(),
            s1_addr: Default::default(),
            ro_bank: Default::default(),
            s2_valid: Default::default(),
            s2_bank: Default::default(),
            s2_addr: Default::default(),
            rdq_last: Default::default(),
            rdq_iv: Default::default(),
            roq_last: Default::default(),
            roq_iv: Default::default(),
            sel0: Default::default(),
            sel1: Default::default(),
            h1: Default::default(),
            h2: Default::default(),
            h3: Default::default(),
            p0: Default::default(),
            p1: Default::default(),
            w0: Default::default(),
            w1: Default::default(),
            prev: Default::default(),
            iv: Default::default(),
            gap: Default::default(),
            wr_valid: Default::default(),
            wr_bank: Default::default(),
            wr_addr: Default::default(),
            wr_last: Default::default(),
            wr_iv: Default::default(),
            d1_valid: Default::default(),
            d1_bank: Default::default(),
            d1_addr: Default::default(),
            d1_last: Default::default(),
            d1_iv: Default::default(),
            d2_last: Default::default(),
            d2_iv: Default::default(),
            zero: Constant::new(0u64.to_bits()),
        }
    }
}

impl<const TW: usize, const A: usize> Default for BankedTimeCells<TW, A> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const TW: usize, const A: usize> Logic for BankedTimeCells<TW, A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, s1_valid, s1_bank, s1_addr, ro_bank, s2_valid, s2_bank, s2_addr, rdq_last, rdq_iv,
            roq_last, roq_iv, sel0, sel1, wr_valid, wr_bank, wr_addr, wr_last, wr_iv, d1_valid, d1_bank,
            d1_addr, d1_last, d1_iv, d2_last, d2_iv
        );
        self.last0.read_clock.next = self.clock.val();
        self.last0.write_clock.next = self.clock.val();
        self.last1.read_clock.next = self.clock.val();
        self.last1.write_clock.next = self.clock.val();
        self.iv0.read_clock.next = self.clock.val();
        self.iv0.write_clock.next = self.clock.val();
        self.iv1.read_clock.next = self.clock.val();
        self.iv1.write_clock.next = self.clock.val();
        // s0: a packet reads its bank's RAMs; the other bank's serve the readout address.
        self.p0.next = self.valid.val() & !self.bank.val();
        self.p1.next = self.valid.val() & self.bank.val();
        if self.p0.val() {
            self.last0.read_address.next = self.addr.val();
            self.iv0.read_address.next = self.addr.val();
        } else {
            self.last0.read_address.next = self.rd_addr.val();
            self.iv0.read_address.next = self.rd_addr.val();
        }
        if self.p1.val() {
            self.last1.read_address.next = self.addr.val();
            self.iv1.read_address.next = self.addr.val();
        } else {
            self.last1.read_address.next = self.rd_addr.val();
            self.iv1.read_address.next = self.rd_addr.val();
        }
        self.s1_valid.d.next = self.valid.val() & !self.reset.val();
        self.s1_bank.d.next = self.bank.val();
        self.s1_addr.d.next = self.addr.val();
        self.ro_bank.d.next = self.rd_bank.val();
        // s1: compare (bank, address) with the packets 1, 2, 3 ahead; newest first.
        self.h1.next = self.s2_valid.q.val()
            & (self.s1_bank.q.val() == self.s2_bank.q.val())
            & (self.s1_addr.q.val() == self.s2_addr.q.val());
        self.h2.next = self.wr_valid.q.val()
            & (self.s1_bank.q.val() == self.wr_bank.q.val())
            & (self.s1_addr.q.val() == self.wr_addr.q.val());
        self.h3.next = self.d1_valid.q.val()
            & (self.s1_bank.q.val() == self.d1_bank.q.val())
            & (self.s1_addr.q.val() == self.d1_addr.q.val());
        self.sel0.d.next = self.h1.val() | (!self.h2.val() & self.h3.val());
        self.sel1.d.next = !self.h1.val() & (self.h2.val() | self.h3.val());
        if self.s1_bank.q.val() {
            self.rdq_last.d.next = self.last1.read_data.val();
            self.rdq_iv.d.next = self.iv1.read_data.val();
        } else {
            self.rdq_last.d.next = self.last0.read_data.val();
            self.rdq_iv.d.next = self.iv0.read_data.val();
        }
        if self.ro_bank.q.val() {
            self.roq_last.d.next = self.last1.read_data.val();
            self.roq_iv.d.next = self.iv1.read_data.val();
        } else {
            self.roq_last.d.next = self.last0.read_data.val();
            self.roq_iv.d.next = self.iv0.read_data.val();
        }
        self.s2_valid.d.next = self.s1_valid.q.val() & !self.reset.val();
        self.s2_bank.d.next = self.s1_bank.q.val();
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
        self.wr_bank.d.next = self.s2_bank.q.val();
        self.wr_addr.d.next = self.s2_addr.q.val();
        // s3: the packet writes its bank; otherwise the clear sweep may write zeros.
        self.w0.next = self.wr_valid.q.val() & !self.wr_bank.q.val();
        self.w1.next = self.wr_valid.q.val() & self.wr_bank.q.val();
        if self.w0.val() {
            self.last0.write_address.next = self.wr_addr.q.val();
            self.last0.write_data.next = self.wr_last.q.val();
            self.iv0.write_address.next = self.wr_addr.q.val();
            self.iv0.write_data.next = self.wr_iv.q.val();
        } else {
            self.last0.write_address.next = self.clr_addr.val();
            self.last0.write_data.next = self.zero.val();
            self.iv0.write_address.next = self.clr_addr.val();
            self.iv0.write_data.next = self.zero.val();
        }
        self.last0.write_enable.next = self.w0.val() | (self.clr.val() & !self.clr_bank.val());
        self.iv0.write_enable.next = self.w0.val() | (self.clr.val() & !self.clr_bank.val());
        if self.w1.val() {
            self.last1.write_address.next = self.wr_addr.q.val();
            self.last1.write_data.next = self.wr_last.q.val();
            self.iv1.write_address.next = self.wr_addr.q.val();
            self.iv1.write_data.next = self.wr_iv.q.val();
        } else {
            self.last1.write_address.next = self.clr_addr.val();
            self.last1.write_data.next = self.zero.val();
            self.iv1.write_address.next = self.clr_addr.val();
            self.iv1.write_data.next = self.zero.val();
        }
        self.last1.write_enable.next = self.w1.val() | (self.clr.val() & self.clr_bank.val());
        self.iv1.write_enable.next = self.w1.val() | (self.clr.val() & self.clr_bank.val());
        self.d1_valid.d.next = self.wr_valid.q.val() & !self.reset.val();
        self.d1_bank.d.next = self.wr_bank.q.val();
        self.d1_addr.d.next = self.wr_addr.q.val();
        self.d1_last.d.next = self.wr_last.q.val();
        self.d1_iv.d.next = self.wr_iv.q.val();
        self.d2_last.d.next = self.d1_last.q.val();
        self.d2_iv.d.next = self.d1_iv.q.val();
        self.rd_last.next = self.roq_last.q.val();
        self.rd_interval.next = self.roq_iv.q.val();
    }
}
