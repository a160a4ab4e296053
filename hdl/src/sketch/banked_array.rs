//! `BankedArray<W, A>`: one TowerSketch counter array with **two banks** (two block RAMs of
//! `2^A` x `W` bits) behind one read-modify-write datapath, for the epoch scheme
//! ([`super::epoch`]): packets update the bank they were tagged with at ingress, the other
//! bank is free for the readout (its read port) and the clear sweep (its write port).
//!
//! The update rule, the stages and the 3-deep forwarding are the shared
//! [`CounterRmw`]'s (see there), with the packet's `bank` bit carried through s1, s2, wr,
//! d1 and compared with the address, so packets of different banks never forward to each
//! other (the packets of the old and the new epoch can be in flight together around a
//! swap). Around it:
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
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset of the valid bits (not the RAMs) |
//! | `valid`, `bank`, `addr` | in | 1, 1, `A` | a packet's bank and counter index (s0) |
//! | `omega_inf`, `omega` | in | 1, 32 | running minimum of the packet at s2 |
//! | `omega_out_inf`, `omega_out` | out | 1, 32 | running minimum after this array (one clock after s2) |
//! | `done` | out | 1 | the packet in `wr` is being written |
//! | `busy` | out | 1 | a packet is in s0..s2 |
//! | `rd_bank`, `rd_addr` | in | 1, `A` | readout bank and address (the bank must hold no packet at s0) |
//! | `rd_data` | out | `W` | counter of `rd_bank` at `rd_addr`, [`READ_LATENCY`] clocks later |
//! | `clr`, `clr_bank`, `clr_addr` | in | 1, 1, `A` | write 0 at `clr_addr` of bank `clr_bank` this clock |
use super::cell_ram::CellRam;
use super::counter_rmw::CounterRmw;
use super::Sink;
use rust_hdl::prelude::*;

pub use super::array::{COMPUTE_STAGE, FORWARD_DEPTH, OMEGA_LATENCY, READ_LATENCY};

/// One two-bank counter array (see the module docs).
#[derive(LogicBlock)]
pub struct BankedArray<const W: usize, const A: usize> {
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
    ram0: CellRam<W, A>,
    ram1: CellRam<W, A>,
    rmw: CounterRmw<W, A>,
    // The datapath's copy of the packet's RAM output: the readout has its own (`ro_q`).
    sink_rd_q: Sink<W>,
    ro_bank: DFF<Bit>,
    ro_q: DFF<Bits<W>>,
    p0: Signal<Local, Bit>,
    p1: Signal<Local, Bit>,
    w0: Signal<Local, Bit>,
    w1: Signal<Local, Bit>,
    zero: Constant<Bits<W>>,
}

impl<const W: usize, const A: usize> BankedArray<W, A> {
    pub fn new() -> Self {
        BankedArray {
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
            ram0: Default::default(),
            ram1: Default::default(),
            rmw: CounterRmw::new(),
            sink_rd_q: Default::default(),
            ro_bank: Default::default(),
            ro_q: Default::default(),
            p0: Default::default(),
            p1: Default::default(),
            w0: Default::default(),
            w1: Default::default(),
            zero: Constant::new(0u64.to_bits()),
        }
    }
}

impl<const W: usize, const A: usize> Default for BankedArray<W, A> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const W: usize, const A: usize> Logic for BankedArray<W, A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, ro_bank, ro_q);
        self.ram0.read_clock.next = self.clock.val();
        self.ram0.write_clock.next = self.clock.val();
        self.ram1.read_clock.next = self.clock.val();
        self.ram1.write_clock.next = self.clock.val();
        self.rmw.clock.next = self.clock.val();
        self.rmw.reset.next = self.reset.val();
        // s0: a packet reads its bank's RAM; the other RAM serves the readout address.
        self.p0.next = self.valid.val() & !self.bank.val();
        self.p1.next = self.valid.val() & self.bank.val();
        if self.p0.val() {
            self.ram0.read_address.next = self.addr.val();
        } else {
            self.ram0.read_address.next = self.rd_addr.val();
        }
        if self.p1.val() {
            self.ram1.read_address.next = self.addr.val();
        } else {
            self.ram1.read_address.next = self.rd_addr.val();
        }
        self.rmw.valid.next = self.valid.val();
        self.rmw.bank.next = self.bank.val();
        self.rmw.addr.next = self.addr.val();
        self.rmw.omega_inf.next = self.omega_inf.val();
        self.rmw.omega.next = self.omega.val();
        self.sink_rd_q.x.next = self.rmw.rd_q.val();
        self.ro_bank.d.next = self.rd_bank.val();
        // s1: each RAM output goes to whoever read it: the packet's bank to the datapath,
        // the readout's bank (one clock later) to `ro_q`.
        if self.rmw.s1_bank.val() {
            self.rmw.ram_q.next = self.ram1.read_data.val();
        } else {
            self.rmw.ram_q.next = self.ram0.read_data.val();
        }
        if self.ro_bank.q.val() {
            self.ro_q.d.next = self.ram1.read_data.val();
        } else {
            self.ro_q.d.next = self.ram0.read_data.val();
        }
        // wr: the packet writes its bank; otherwise the clear sweep may write a zero.
        self.w0.next = self.rmw.wr_valid.val() & !self.rmw.wr_bank.val();
        self.w1.next = self.rmw.wr_valid.val() & self.rmw.wr_bank.val();
        if self.w0.val() {
            self.ram0.write_address.next = self.rmw.wr_addr.val();
            self.ram0.write_data.next = self.rmw.wr_data.val();
        } else {
            self.ram0.write_address.next = self.clr_addr.val();
            self.ram0.write_data.next = self.zero.val();
        }
        self.ram0.write_enable.next = self.w0.val() | (self.clr.val() & !self.clr_bank.val());
        if self.w1.val() {
            self.ram1.write_address.next = self.rmw.wr_addr.val();
            self.ram1.write_data.next = self.rmw.wr_data.val();
        } else {
            self.ram1.write_address.next = self.clr_addr.val();
            self.ram1.write_data.next = self.zero.val();
        }
        self.ram1.write_enable.next = self.w1.val() | (self.clr.val() & self.clr_bank.val());
        // Outputs.
        self.omega_out_inf.next = self.rmw.omega_out_inf.val();
        self.omega_out.next = self.rmw.omega_out.val();
        self.done.next = self.rmw.wr_valid.val();
        self.busy.next = self.rmw.busy.val();
        self.rd_data.next = self.ro_q.q.val();
    }
}
