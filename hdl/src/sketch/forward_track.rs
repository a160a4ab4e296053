//! `ForwardTrack<A>`: which in-flight packet, if any, a read-modify-write pipeline must take
//! its value from. Shared by every RMW datapath ([`super::counter_rmw::CounterRmw`], the
//! SuMax time cells' [`super::time_rmw::TimeRmw`]); they add the data registers.
//!
//! A packet at s0 (`valid`, `bank`, `addr`) moves through s1, s2, wr (its write-back) and d1.
//! The RAM holds a packet's write from the end of its wr clock; a packet 1, 2 or 3 clocks
//! behind on the same (bank, address) reads the RAM at or before that edge and gets a stale
//! value (READ_FIRST at 3). So at s1 each packet compares its (bank, address) with the
//! packets in s2, wr and d1 (1, 2, 3 ahead) and registers a newest-first select for s2:
//!
//! | `sel1`, `sel0` at s2 | value source |
//! |---|---|
//! | 0, 0 | the RAM (no packet ahead on this location) |
//! | 0, 1 | the write register `wr` (1 ahead) |
//! | 1, 0 | `d1` = `wr` one clock later (2 ahead) |
//! | 1, 1 | `d2` = `wr` two clocks later (3 ahead) |
//!
//! Packets of different banks never match, so the packets of an old and a new epoch can be in
//! flight together around a swap; a single-bank caller ties `bank` low and synthesis removes
//! the bank bits. The comparators sit before a register, off the RMW loop.
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset of the valid bits |
//! | `valid`, `bank`, `addr` | in | 1, 1, `A` | a packet at s0 |
//! | `s1_bank` | out | 1 | bank of the packet at s1 (selects its RAM's output) |
//! | `sel0`, `sel1` | out | 1 | value source of the packet at s2 (table) |
//! | `wr_valid`, `wr_bank`, `wr_addr` | out | 1, 1, `A` | the packet in the write stage |
//! | `busy` | out | 1 | a packet is in s0..s2 (with `wr_valid`: in flight) |
use rust_hdl::prelude::*;

/// The forwarding bookkeeping of one RMW pipeline (see the module docs).
#[derive(LogicBlock, Default)]
pub struct ForwardTrack<const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub valid: Signal<In, Bit>,
    pub bank: Signal<In, Bit>,
    pub addr: Signal<In, Bits<A>>,
    pub s1_bank: Signal<Out, Bit>,
    pub sel0: Signal<Out, Bit>,
    pub sel1: Signal<Out, Bit>,
    pub wr_valid: Signal<Out, Bit>,
    pub wr_bank: Signal<Out, Bit>,
    pub wr_addr: Signal<Out, Bits<A>>,
    pub busy: Signal<Out, Bit>,
    s1_v: DFF<Bit>,
    s1_b: DFF<Bit>,
    s1_a: DFF<Bits<A>>,
    s2_v: DFF<Bit>,
    s2_b: DFF<Bit>,
    s2_a: DFF<Bits<A>>,
    s2_sel0: DFF<Bit>,
    s2_sel1: DFF<Bit>,
    wr_v: DFF<Bit>,
    wr_b: DFF<Bit>,
    wr_a: DFF<Bits<A>>,
    d1_v: DFF<Bit>,
    d1_b: DFF<Bit>,
    d1_a: DFF<Bits<A>>,
    h1: Signal<Local, Bit>,
    h2: Signal<Local, Bit>,
    h3: Signal<Local, Bit>,
}

impl<const A: usize> Logic for ForwardTrack<A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, s1_v, s1_b, s1_a, s2_v, s2_b, s2_a, s2_sel0, s2_sel1, wr_v, wr_b, wr_a, d1_v, d1_b,
            d1_a
        );
        // s0 -> s1 -> s2 -> wr -> d1
        self.s1_v.d.next = self.valid.val() & !self.reset.val();
        self.s1_b.d.next = self.bank.val();
        self.s1_a.d.next = self.addr.val();
        self.s2_v.d.next = self.s1_v.q.val() & !self.reset.val();
        self.s2_b.d.next = self.s1_b.q.val();
        self.s2_a.d.next = self.s1_a.q.val();
        self.wr_v.d.next = self.s2_v.q.val() & !self.reset.val();
        self.wr_b.d.next = self.s2_b.q.val();
        self.wr_a.d.next = self.s2_a.q.val();
        self.d1_v.d.next = self.wr_v.q.val() & !self.reset.val();
        self.d1_b.d.next = self.wr_b.q.val();
        self.d1_a.d.next = self.wr_a.q.val();
        // s1: compare (bank, address) with the packets 1, 2, 3 ahead (now in s2, wr, d1; at
        // s2 they will be in wr, d1, d2) and register a priority select, newest first.
        self.h1.next = self.s2_v.q.val()
            & (self.s1_b.q.val() == self.s2_b.q.val())
            & (self.s1_a.q.val() == self.s2_a.q.val());
        self.h2.next = self.wr_v.q.val()
            & (self.s1_b.q.val() == self.wr_b.q.val())
            & (self.s1_a.q.val() == self.wr_a.q.val());
        self.h3.next = self.d1_v.q.val()
            & (self.s1_b.q.val() == self.d1_b.q.val())
            & (self.s1_a.q.val() == self.d1_a.q.val());
        self.s2_sel0.d.next = self.h1.val() | (!self.h2.val() & self.h3.val());
        self.s2_sel1.d.next = !self.h1.val() & (self.h2.val() | self.h3.val());
        // Outputs.
        self.s1_bank.next = self.s1_b.q.val();
        self.sel0.next = self.s2_sel0.q.val();
        self.sel1.next = self.s2_sel1.q.val();
        self.wr_valid.next = self.wr_v.q.val();
        self.wr_bank.next = self.wr_b.q.val();
        self.wr_addr.next = self.wr_a.q.val();
        self.busy.next = self.valid.val() | self.s1_v.q.val() | self.s2_v.q.val();
    }
}
