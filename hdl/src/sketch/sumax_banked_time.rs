//! `BankedTimeCells<TW, A>`: [`super::sumax_time::TimeCells`] with **two banks** (two RAMs
//! per cell) behind the same [`TimeRmw`] datapath, as [`super::banked_array::BankedArray`]
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
use super::cell_ram::CellRam;
use super::time_rmw::TimeRmw;
use super::Sink;
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
    last0: CellRam<TW, A>,
    last1: CellRam<TW, A>,
    iv0: CellRam<TW, A>,
    iv1: CellRam<TW, A>,
    rmw: TimeRmw<TW, A>,
    // The datapath's copies of the packet's RAM outputs: the readout has its own (`roq_*`).
    sink_last: Sink<TW>,
    sink_iv: Sink<TW>,
    ro_bank: DFF<Bit>,
    roq_last: DFF<Bits<TW>>,
    roq_iv: DFF<Bits<TW>>,
    p0: Signal<Local, Bit>,
    p1: Signal<Local, Bit>,
    w0: Signal<Local, Bit>,
    w1: Signal<Local, Bit>,
    zero: Constant<Bits<TW>>,
}

impl<const TW: usize, const A: usize> BankedTimeCells<TW, A> {
    pub fn new() -> Self {
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
            rmw: TimeRmw::new(),
            sink_last: Default::default(),
            sink_iv: Default::default(),
            ro_bank: Default::default(),
            roq_last: Default::default(),
            roq_iv: Default::default(),
            p0: Default::default(),
            p1: Default::default(),
            w0: Default::default(),
            w1: Default::default(),
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
        dff_setup!(self, clock, ro_bank, roq_last, roq_iv);
        self.last0.read_clock.next = self.clock.val();
        self.last0.write_clock.next = self.clock.val();
        self.last1.read_clock.next = self.clock.val();
        self.last1.write_clock.next = self.clock.val();
        self.iv0.read_clock.next = self.clock.val();
        self.iv0.write_clock.next = self.clock.val();
        self.iv1.read_clock.next = self.clock.val();
        self.iv1.write_clock.next = self.clock.val();
        self.rmw.clock.next = self.clock.val();
        self.rmw.reset.next = self.reset.val();
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
        self.rmw.valid.next = self.valid.val();
        self.rmw.bank.next = self.bank.val();
        self.rmw.addr.next = self.addr.val();
        self.rmw.t.next = self.t.val();
        self.sink_last.x.next = self.rmw.rd_last.val();
        self.sink_iv.x.next = self.rmw.rd_iv.val();
        self.ro_bank.d.next = self.rd_bank.val();
        // s1: each bank's RAM outputs go to whoever read them.
        if self.rmw.s1_bank.val() {
            self.rmw.last_q.next = self.last1.read_data.val();
            self.rmw.iv_q.next = self.iv1.read_data.val();
        } else {
            self.rmw.last_q.next = self.last0.read_data.val();
            self.rmw.iv_q.next = self.iv0.read_data.val();
        }
        if self.ro_bank.q.val() {
            self.roq_last.d.next = self.last1.read_data.val();
            self.roq_iv.d.next = self.iv1.read_data.val();
        } else {
            self.roq_last.d.next = self.last0.read_data.val();
            self.roq_iv.d.next = self.iv0.read_data.val();
        }
        // s3: the packet writes its bank; otherwise the clear sweep may write zeros.
        self.w0.next = self.rmw.wr_valid.val() & !self.rmw.wr_bank.val();
        self.w1.next = self.rmw.wr_valid.val() & self.rmw.wr_bank.val();
        if self.w0.val() {
            self.last0.write_address.next = self.rmw.wr_addr.val();
            self.last0.write_data.next = self.rmw.wr_last.val();
            self.iv0.write_address.next = self.rmw.wr_addr.val();
            self.iv0.write_data.next = self.rmw.wr_iv.val();
        } else {
            self.last0.write_address.next = self.clr_addr.val();
            self.last0.write_data.next = self.zero.val();
            self.iv0.write_address.next = self.clr_addr.val();
            self.iv0.write_data.next = self.zero.val();
        }
        self.last0.write_enable.next = self.w0.val() | (self.clr.val() & !self.clr_bank.val());
        self.iv0.write_enable.next = self.w0.val() | (self.clr.val() & !self.clr_bank.val());
        if self.w1.val() {
            self.last1.write_address.next = self.rmw.wr_addr.val();
            self.last1.write_data.next = self.rmw.wr_last.val();
            self.iv1.write_address.next = self.rmw.wr_addr.val();
            self.iv1.write_data.next = self.rmw.wr_iv.val();
        } else {
            self.last1.write_address.next = self.clr_addr.val();
            self.last1.write_data.next = self.zero.val();
            self.iv1.write_address.next = self.clr_addr.val();
            self.iv1.write_data.next = self.zero.val();
        }
        self.last1.write_enable.next = self.w1.val() | (self.clr.val() & self.clr_bank.val());
        self.iv1.write_enable.next = self.w1.val() | (self.clr.val() & self.clr_bank.val());
        self.rd_last.next = self.roq_last.q.val();
        self.rd_interval.next = self.roq_iv.q.val();
    }
}
