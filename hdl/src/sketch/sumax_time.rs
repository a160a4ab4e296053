//! `TimeCells<TW, A, B>`: the two max cells of one SuMax array (LightGuardian 4.4), `2^A`
//! buckets of a last-arrival cell and a max inter-arrival cell of `TW` bits each, `B` banks
//! (one block RAM per cell and bank), read-modify-write at one packet per clock: a
//! [`TimeRmw`] (the max rule, stages and forwarding; see there) behind the RAMs.
//!
//! The banks work as [`super::array::CounterArray`]'s: with two, the packet's `bank` bit
//! travels s0 -> s1 -> s2 -> wr -> d1, the forwarding compares (bank, address), a packet
//! reads its bank's RAMs, the other bank's read port serves `rd_addr` (selected by
//! `rd_bank`), and the other bank's write port takes the clear sweep (`clr`, `clr_bank`,
//! `clr_addr`: zero both cells). With one, the bank inputs are ANDed with the constant
//! `banked` = 0 and synthesis keeps one RAM per cell and no select or clear logic.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset of the valid bits (not the RAMs) |
//! | `valid`, `bank`, `addr` | in | 1, 1, `A` | a packet's bank and bucket (s0; `bank` unused with one bank) |
//! | `t` | in | `TW` | the packet's time, at s2 |
//! | `rd_bank`, `rd_addr` | in | 1, `A` | readout bank and address (the bank holds no packet at s0) |
//! | `rd_interval`, `rd_last` | out | `TW` | the cells of `rd_bank` at `rd_addr` two clocks earlier |
//! | `clr`, `clr_bank`, `clr_addr` | in | 1, 1, `A` | write 0 to both cells at `clr_addr` of bank `clr_bank` (two banks only) |
use super::cell_ram::CellRam;
use super::time_rmw::TimeRmw;
use super::{banked, Sink};
use rust_hdl::prelude::*;

/// One array's max cells in `B` banks (see the module docs).
#[derive(LogicBlock)]
pub struct TimeCells<const TW: usize, const A: usize, const B: usize> {
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
    last: [CellRam<TW, A>; B],
    iv: [CellRam<TW, A>; B],
    rmw: TimeRmw<TW, A>,
    // The copies of the RAM outputs a bank count does not read out: with one bank the
    // readout shares the datapath's (`rd_last`, `rd_iv`), with two it has its own (`roq_*`).
    sink_last: Sink<TW>,
    sink_iv: Sink<TW>,
    ro_bank: DFF<Bit>,
    roq_last: DFF<Bits<TW>>,
    roq_iv: DFF<Bits<TW>>,
    // Per bank: a packet reads it (s0), a packet writes it (wr).
    p: [Signal<Local, Bit>; B],
    w: [Signal<Local, Bit>; B],
    // The bank bits as used: ANDed with `banked` (0 with one bank).
    pkt_bank: Signal<Local, Bit>,
    ro_sel: Signal<Local, Bit>,
    clr_on: Signal<Local, Bit>,
    banked: Constant<Bit>,
    single: Constant<Bit>,
    bank_no: [Constant<Bit>; B],
    zero: Constant<Bits<TW>>,
}

impl<const TW: usize, const A: usize, const B: usize> TimeCells<TW, A, B> {
    /// The cells. `B` is [`super::ONE_BANK`] or [`super::TWO_BANKS`] (checked at compile
    /// time by [`banked`]).
    pub fn new() -> Self {
        TimeCells {
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
            last: std::array::from_fn(|_| Default::default()),
            iv: std::array::from_fn(|_| Default::default()),
            rmw: TimeRmw::new(),
            sink_last: Default::default(),
            sink_iv: Default::default(),
            ro_bank: Default::default(),
            roq_last: Default::default(),
            roq_iv: Default::default(),
            p: std::array::from_fn(|_| Default::default()),
            w: std::array::from_fn(|_| Default::default()),
            pkt_bank: Default::default(),
            ro_sel: Default::default(),
            clr_on: Default::default(),
            banked: Constant::new(banked::<B>()),
            single: Constant::new(!banked::<B>()),
            bank_no: std::array::from_fn(|b| Constant::new(b == 1)),
            zero: Constant::new(0u64.to_bits()),
        }
    }
}

impl<const TW: usize, const A: usize, const B: usize> Default for TimeCells<TW, A, B> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const TW: usize, const A: usize, const B: usize> Logic for TimeCells<TW, A, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, ro_bank, roq_last, roq_iv);
        self.rmw.clock.next = self.clock.val();
        self.rmw.reset.next = self.reset.val();
        // The bank bits, constant 0 with one bank.
        self.pkt_bank.next = self.bank.val() & self.banked.val();
        self.ro_sel.next = self.rd_bank.val() & self.banked.val();
        self.clr_on.next = self.clr.val() & self.banked.val();
        self.rmw.valid.next = self.valid.val();
        self.rmw.bank.next = self.pkt_bank.val();
        self.rmw.addr.next = self.addr.val();
        self.rmw.t.next = self.t.val();
        self.sink_last.x.next = self.roq_last.q.val();
        self.sink_iv.x.next = self.roq_iv.q.val();
        self.rd_last.next = self.rmw.rd_last.val();
        self.rd_interval.next = self.rmw.rd_iv.val();
        // Two banks: the readout reads the idle bank through its own registers. rust-hdl
        // workaround: `#[hdl_gen]` has no compile-time `if`; a loop over `1..B` runs once for
        // two banks and not at all for one (with one bank the readout's copy would keep
        // the RAM's output register out of the block RAM: about 45 more LUTs in `tower`).
        for _b in 1..B {
            self.sink_last.x.next = self.rmw.rd_last.val();
            self.sink_iv.x.next = self.rmw.rd_iv.val();
            self.rd_last.next = self.roq_last.q.val();
            self.rd_interval.next = self.roq_iv.q.val();
        }
        self.ro_bank.d.next = self.ro_sel.val();
        // s1: each bank's RAM outputs go to whoever read them (bank 0 unless the bit says 1).
        self.rmw.last_q.next = self.last[0].read_data.val();
        self.rmw.iv_q.next = self.iv[0].read_data.val();
        self.roq_last.d.next = self.last[0].read_data.val();
        self.roq_iv.d.next = self.iv[0].read_data.val();
        for b in 0..B {
            self.last[b].read_clock.next = self.clock.val();
            self.last[b].write_clock.next = self.clock.val();
            self.iv[b].read_clock.next = self.clock.val();
            self.iv[b].write_clock.next = self.clock.val();
            // s0: a packet reads its bank's RAMs; the other bank's serve the readout address.
            self.p[b].next = self.valid.val() & (self.pkt_bank.val() == self.bank_no[b].val());
            if self.p[b].val() {
                self.last[b].read_address.next = self.addr.val();
                self.iv[b].read_address.next = self.addr.val();
            } else {
                self.last[b].read_address.next = self.rd_addr.val();
                self.iv[b].read_address.next = self.rd_addr.val();
            }
            if self.rmw.s1_bank.val() == self.bank_no[b].val() {
                self.rmw.last_q.next = self.last[b].read_data.val();
                self.rmw.iv_q.next = self.iv[b].read_data.val();
            }
            if self.ro_bank.q.val() == self.bank_no[b].val() {
                self.roq_last.d.next = self.last[b].read_data.val();
                self.roq_iv.d.next = self.iv[b].read_data.val();
            }
            // s3: the packet writes its bank; otherwise the clear sweep may write zeros
            // (with one bank `single` keeps the datapath on the port: no address mux).
            self.w[b].next = self.rmw.wr_valid.val() & (self.rmw.wr_bank.val() == self.bank_no[b].val());
            if self.w[b].val() | self.single.val() {
                self.last[b].write_address.next = self.rmw.wr_addr.val();
                self.last[b].write_data.next = self.rmw.wr_last.val();
                self.iv[b].write_address.next = self.rmw.wr_addr.val();
                self.iv[b].write_data.next = self.rmw.wr_iv.val();
            } else {
                self.last[b].write_address.next = self.clr_addr.val();
                self.last[b].write_data.next = self.zero.val();
                self.iv[b].write_address.next = self.clr_addr.val();
                self.iv[b].write_data.next = self.zero.val();
            }
            self.last[b].write_enable.next =
                self.w[b].val() | (self.clr_on.val() & (self.clr_bank.val() == self.bank_no[b].val()));
            self.iv[b].write_enable.next =
                self.w[b].val() | (self.clr_on.val() & (self.clr_bank.val() == self.bank_no[b].val()));
        }
    }
}
