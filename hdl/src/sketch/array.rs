//! `CounterArray<W, A, B>`: one TowerSketch counter array, `2^A` counters of `W` bits in
//! `B` banks (one block RAM each; `B` = [`ONE_BANK`] or [`TWO_BANKS`]) behind one
//! read-modify-write datapath, updated at one packet per clock with full forwarding: a
//! [`CounterRmw`] (the update rule, the s0..wr stages, the 3-deep forwarding; see there)
//! behind the RAMs.
//!
//! # Banks
//!
//! With two banks (the epoch scheme, [`super::epoch`]) packets update the bank they were
//! tagged with at ingress and the other bank is free for the readout (its read port) and
//! the clear sweep (its write port). The packet's `bank` bit travels through s1, s2, wr and
//! d1 beside its address, so packets of different banks never forward to each other (the
//! packets of the old and the new epoch can be in flight together around a swap). Around
//! the datapath:
//!
//! - the RAM read of a packet at s0 goes to its bank's RAM; the other RAM's read address is
//!   `rd_addr`; at s1 the packet's RAM output is selected by its bank into `rd_q`, and the
//!   readout's by `rd_bank` (delayed one clock) into `ro_q` (one `W`-bit mux each, before a
//!   flop: the RMW loop `wr -> 4:1 mux -> +1/compare -> wr` is unchanged);
//! - the write port of RAM `b` takes the packet in `wr` if its bank is `b`, else the clear
//!   sweep (`clr` with `clr_bank = b`: zero at `clr_addr`).
//!
//! The caller (the epoch engine) guarantees that the clear bank and the read bank hold no
//! packet in flight; a packet write wins over a clear write to the same bank anyway.
//!
//! With one bank the same code is the plain array: `bank`, `rd_bank` and `clr` are ANDed
//! with the constant `banked` = 0, so every bank compare is constant true, the
//! write port always takes the datapath's write, the readout shares the datapath's RAM
//! output register (`rd_q`), and synthesis keeps one RAM and no select or clear logic (the
//! `tower` and `sumax` synth figures hold this). `rd_addr` reads whenever no packet is at
//! s0, and counters changing under the reads are the caller's business.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset of the valid bits (not the RAMs) |
//! | `valid`, `bank`, `addr` | in | 1, 1, `A` | a packet's bank and counter index (s0; `bank` unused with one bank) |
//! | `omega_inf`, `omega` | in | 1, 32 | running minimum of the packet at s2 (`INF` = `omega_inf`) |
//! | `omega_out_inf`, `omega_out` | out | 1, 32 | running minimum after this array (one clock after s2) |
//! | `done` | out | 1 | the packet in `wr` is being written (one per input packet) |
//! | `busy` | out | 1 | a packet is in s0..s2 (with `done`: in flight) |
//! | `rd_bank`, `rd_addr` | in | 1, `A` | readout bank and address (the bank must hold no packet at s0) |
//! | `rd_data` | out | `W` | counter of `rd_bank` at `rd_addr`, [`READ_LATENCY`] clocks later (`rd_q` with one bank, `ro_q` with two) |
//! | `clr`, `clr_bank`, `clr_addr` | in | 1, 1, `A` | write 0 at `clr_addr` of bank `clr_bank` this clock (two banks only) |
use super::cell_ram::CellRam;
use super::counter_rmw::CounterRmw;
use super::{banked, Sink};
use rust_hdl::prelude::*;

pub use super::counter_rmw::{COMPUTE_STAGE, FORWARD_DEPTH, OMEGA_LATENCY};
/// Clocks from `rd_addr` to `rd_data`.
pub const READ_LATENCY: usize = 2;

/// One counter array of `B` banks (see the module docs).
#[derive(LogicBlock)]
pub struct CounterArray<const W: usize, const A: usize, const B: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub valid: Signal<In, Bit>,
    pub bank: Signal<In, Bit>,
    pub addr: Signal<In, Bits<A>>,
    pub omega_inf: Signal<In, Bit>,
    pub omega: Signal<In, Bits<32>>,
    pub omega_out_inf: Signal<Out, Bit>,
    pub omega_out: Signal<Out, Bits<32>>,
    pub done: Signal<Out, Bit>,
    pub busy: Signal<Out, Bit>,
    pub rd_bank: Signal<In, Bit>,
    pub rd_addr: Signal<In, Bits<A>>,
    pub rd_data: Signal<Out, Bits<W>>,
    pub clr: Signal<In, Bit>,
    pub clr_bank: Signal<In, Bit>,
    pub clr_addr: Signal<In, Bits<A>>,
    rams: [CellRam<W, A>; B],
    rmw: CounterRmw<W, A>,
    // The copy of the RAM output a bank count does not read out: with one bank the
    // readout shares the datapath's (`rd_q`), with two it has its own (`ro_q`).
    sink_rd_q: Sink<W>,
    ro_bank: DFF<Bit>,
    ro_q: DFF<Bits<W>>,
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
    zero: Constant<Bits<W>>,
}

impl<const W: usize, const A: usize, const B: usize> CounterArray<W, A, B> {
    /// The array. `B` is [`ONE_BANK`] or [`TWO_BANKS`] (checked at compile time by
    /// [`banked`]).
    pub fn new() -> Self {
        CounterArray {
            clock: Default::default(),
            reset: Default::default(),
            valid: Default::default(),
            bank: Default::default(),
            addr: Default::default(),
            omega_inf: Default::default(),
            omega: Default::default(),
            omega_out_inf: Default::default(),
            omega_out: Default::default(),
            done: Default::default(),
            busy: Default::default(),
            rd_bank: Default::default(),
            rd_addr: Default::default(),
            rd_data: Default::default(),
            clr: Default::default(),
            clr_bank: Default::default(),
            clr_addr: Default::default(),
            rams: std::array::from_fn(|_| Default::default()),
            rmw: CounterRmw::new(),
            sink_rd_q: Default::default(),
            ro_bank: Default::default(),
            ro_q: Default::default(),
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

impl<const W: usize, const A: usize, const B: usize> Default for CounterArray<W, A, B> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const W: usize, const A: usize, const B: usize> Logic for CounterArray<W, A, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, ro_bank, ro_q);
        self.rmw.clock.next = self.clock.val();
        self.rmw.reset.next = self.reset.val();
        // The bank bits, constant 0 with one bank.
        self.pkt_bank.next = self.bank.val() & self.banked.val();
        self.ro_sel.next = self.rd_bank.val() & self.banked.val();
        self.clr_on.next = self.clr.val() & self.banked.val();
        self.rmw.valid.next = self.valid.val();
        self.rmw.bank.next = self.pkt_bank.val();
        self.rmw.addr.next = self.addr.val();
        self.rmw.omega_inf.next = self.omega_inf.val();
        self.rmw.omega.next = self.omega.val();
        self.sink_rd_q.x.next = self.ro_q.q.val();
        self.rd_data.next = self.rmw.rd_q.val();
        // Two banks: the readout reads the idle bank through its own register. rust-hdl
        // workaround: `#[hdl_gen]` has no compile-time `if`; a loop over `1..B` runs once for
        // two banks and not at all for one (with one bank the readout's copy would keep
        // the RAM's output register out of the block RAM: about 45 more LUTs in `tower`).
        for _b in 1..B {
            self.sink_rd_q.x.next = self.rmw.rd_q.val();
            self.rd_data.next = self.ro_q.q.val();
        }
        self.ro_bank.d.next = self.ro_sel.val();
        // s1: each RAM output goes to whoever read it: the packet's bank to the datapath,
        // the readout's bank (one clock later) to `ro_q`. Bank 0 unless the bit says 1.
        self.rmw.ram_q.next = self.rams[0].read_data.val();
        self.ro_q.d.next = self.rams[0].read_data.val();
        for b in 0..B {
            self.rams[b].read_clock.next = self.clock.val();
            self.rams[b].write_clock.next = self.clock.val();
            // s0: a packet reads its bank's RAM; the other RAM serves the readout address.
            self.p[b].next = self.valid.val() & (self.pkt_bank.val() == self.bank_no[b].val());
            if self.p[b].val() {
                self.rams[b].read_address.next = self.addr.val();
            } else {
                self.rams[b].read_address.next = self.rd_addr.val();
            }
            if self.rmw.s1_bank.val() == self.bank_no[b].val() {
                self.rmw.ram_q.next = self.rams[b].read_data.val();
            }
            if self.ro_bank.q.val() == self.bank_no[b].val() {
                self.ro_q.d.next = self.rams[b].read_data.val();
            }
            // wr: the packet writes its bank; otherwise the clear sweep may write a zero
            // (with one bank `single` keeps the datapath on the port: no address mux).
            self.w[b].next = self.rmw.wr_valid.val() & (self.rmw.wr_bank.val() == self.bank_no[b].val());
            if self.w[b].val() | self.single.val() {
                self.rams[b].write_address.next = self.rmw.wr_addr.val();
                self.rams[b].write_data.next = self.rmw.wr_data.val();
            } else {
                self.rams[b].write_address.next = self.clr_addr.val();
                self.rams[b].write_data.next = self.zero.val();
            }
            self.rams[b].write_enable.next =
                self.w[b].val() | (self.clr_on.val() & (self.clr_bank.val() == self.bank_no[b].val()));
        }
        // Outputs.
        self.omega_out_inf.next = self.rmw.omega_out_inf.val();
        self.omega_out.next = self.rmw.omega_out.val();
        self.done.next = self.rmw.wr_valid.val();
        self.busy.next = self.rmw.busy.val();
    }
}
