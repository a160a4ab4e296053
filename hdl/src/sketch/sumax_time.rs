//! `TimeCells<TW, A>`: the two max cells of one SuMax array (LightGuardian 4.4), `2^A`
//! buckets of a last-arrival cell and a max inter-arrival cell of `TW` bits each, one block
//! RAM per cell, read-modify-write at one packet per clock: a [`TimeRmw`] (the max rule,
//! stages and forwarding; see there) behind the two RAMs, its bank tied low.
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
use super::cell_ram::CellRam;
use super::time_rmw::TimeRmw;
use super::BitSink;
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
    ram_last: CellRam<TW, A>,
    ram_iv: CellRam<TW, A>,
    rmw: TimeRmw<TW, A>,
    // The datapath's bank outputs: always 0 here.
    sink_s1_bank: BitSink,
    sink_wr_bank: BitSink,
}

impl<const TW: usize, const A: usize> TimeCells<TW, A> {
    pub fn new() -> Self {
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
            rmw: TimeRmw::new(),
            sink_s1_bank: Default::default(),
            sink_wr_bank: Default::default(),
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
        self.ram_last.read_clock.next = self.clock.val();
        self.ram_last.write_clock.next = self.clock.val();
        self.ram_iv.read_clock.next = self.clock.val();
        self.ram_iv.write_clock.next = self.clock.val();
        self.rmw.clock.next = self.clock.val();
        self.rmw.reset.next = self.reset.val();
        // s0: the packet's bucket, or the readout address.
        if self.valid.val() {
            self.ram_last.read_address.next = self.addr.val();
            self.ram_iv.read_address.next = self.addr.val();
        } else {
            self.ram_last.read_address.next = self.rd_addr.val();
            self.ram_iv.read_address.next = self.rd_addr.val();
        }
        self.rmw.valid.next = self.valid.val();
        self.rmw.bank.next = false;
        self.rmw.addr.next = self.addr.val();
        self.rmw.t.next = self.t.val();
        self.sink_s1_bank.x.next = self.rmw.s1_bank.val();
        self.sink_wr_bank.x.next = self.rmw.wr_bank.val();
        // s1: the RAM outputs.
        self.rmw.last_q.next = self.ram_last.read_data.val();
        self.rmw.iv_q.next = self.ram_iv.read_data.val();
        // s3: write back.
        self.ram_last.write_address.next = self.rmw.wr_addr.val();
        self.ram_last.write_data.next = self.rmw.wr_last.val();
        self.ram_last.write_enable.next = self.rmw.wr_valid.val();
        self.ram_iv.write_address.next = self.rmw.wr_addr.val();
        self.ram_iv.write_data.next = self.rmw.wr_iv.val();
        self.ram_iv.write_enable.next = self.rmw.wr_valid.val();
        self.rd_last.next = self.rmw.rd_last.val();
        self.rd_interval.next = self.rmw.rd_iv.val();
    }
}
