//! `BankedArray<W, A>`: one TowerSketch counter array with **two banks** (two block RAMs of
//! `2^A` x `W` bits) behind one read-modify-write datapath, for the epoch scheme
//! ([`super::epoch`]): packets update the bank they were tagged with at ingress, the other
//! bank is free for the readout (its read port) and the clear sweep (its write port).
//!
//! The update rule, the stages and the 3-deep forwarding are exactly
//! [`super::array::CounterArray`]'s (see there); what changes:
//!
//! - every packet carries its `bank` bit through s1, s2, wr, d1, and the forwarding
//!   compares **(bank, address)**: packets of different banks never forward to each other,
//!   so the packets of the old and the new epoch can be in flight together around a swap;
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
use crate::arith::Widen;
use rust_hdl::prelude::*;
use smartnic_contract::geometry::marker;

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
    ram0: RAM<Bits<W>, A>,
    ram1: RAM<Bits<W>, A>,
    // s1
    s1_valid: DFF<Bit>,
    s1_bank: DFF<Bit>,
    s1_addr: DFF<Bits<A>>,
    ro_bank: DFF<Bit>,
    // s2
    s2_valid: DFF<Bit>,
    s2_bank: DFF<Bit>,
    s2_addr: DFF<Bits<A>>,
    rd_q: DFF<Bits<W>>,
    ro_q: DFF<Bits<W>>,
    sel0: DFF<Bit>,
    sel1: DFF<Bit>,
    v: Signal<Local, Bits<32>>,
    cand: Signal<Local, Bits<32>>,
    upd: Signal<Local, Bit>,
    lt: Signal<Local, Bit>,
    h1: Signal<Local, Bit>,
    h2: Signal<Local, Bit>,
    h3: Signal<Local, Bit>,
    p0: Signal<Local, Bit>,
    p1: Signal<Local, Bit>,
    w0: Signal<Local, Bit>,
    w1: Signal<Local, Bit>,
    x_rd: Widen<32, W>,
    x_wr: Widen<32, W>,
    x_d1: Widen<32, W>,
    x_d2: Widen<32, W>,
    // wr and its delayed copies (the forwarding window)
    wr_valid: DFF<Bit>,
    wr_bank: DFF<Bit>,
    wr_addr: DFF<Bits<A>>,
    wr_data: DFF<Bits<W>>,
    d1_valid: DFF<Bit>,
    d1_bank: DFF<Bit>,
    d1_addr: DFF<Bits<A>>,
    d1_data: DFF<Bits<W>>,
    d2_data: DFF<Bits<W>>,
    om_inf: DFF<Bit>,
    om: DFF<Bits<32>>,
    marker: Constant<Bits<32>>,
    top: Constant<Bits<32>>,
    one: Constant<Bits<32>>,
    zero: Constant<Bits<W>>,
}

impl<const W: usize, const A: usize> BankedArray<W, A> {
    pub fn new() -> Self {
        assert!((1..=32).contains(&W), "counter width W={W} must be 1..=32");
        assert!((1..=24).contains(&A), "address width A={A} must be 1..=24");
        let m = marker(W as u8) as u64;
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
            s1_valid: Default::default(),
            s1_bank: Default::default(),
            s1_addr: Default::default(),
            ro_bank: Default::default(),
            s2_valid: Default::default(),
            s2_bank: Default::default(),
            s2_addr: Default::default(),
            rd_q: Default::default(),
            ro_q: Default::default(),
            sel0: Default::default(),
            sel1: Default::default(),
            v: Default::default(),
            cand: Default::default(),
            upd: Default::default(),
            lt: Default::default(),
            h1: Default::default(),
            h2: Default::default(),
            h3: Default::default(),
            p0: Default::default(),
            p1: Default::default(),
            w0: Default::default(),
            w1: Default::default(),
            x_rd: Default::default(),
            x_wr: Default::default(),
            x_d1: Default::default(),
            x_d2: Default::default(),
            wr_valid: Default::default(),
            wr_bank: Default::default(),
            wr_addr: Default::default(),
            wr_data: Default::default(),
            d1_valid: Default::default(),
            d1_bank: Default::default(),
            d1_addr: Default::default(),
            d1_data: Default::default(),
            d2_data: Default::default(),
            om_inf: Default::default(),
            om: Default::default(),
            marker: Constant::new(m.to_bits()),
            top: Constant::new(m.wrapping_sub(1).to_bits()),
            one: Constant::new(1u64.to_bits()),
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
        dff_setup!(
            self, clock, s1_valid, s1_bank, s1_addr, ro_bank, s2_valid, s2_bank, s2_addr, rd_q, ro_q, sel0,
            sel1, wr_valid, wr_bank, wr_addr, wr_data, d1_valid, d1_bank, d1_addr, d1_data, d2_data, om_inf,
            om
        );
        self.ram0.read_clock.next = self.clock.val();
        self.ram0.write_clock.next = self.clock.val();
        self.ram1.read_clock.next = self.clock.val();
        self.ram1.write_clock.next = self.clock.val();
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
        self.s1_valid.d.next = self.valid.val() & !self.reset.val();
        self.s1_bank.d.next = self.bank.val();
        self.s1_addr.d.next = self.addr.val();
        self.ro_bank.d.next = self.rd_bank.val();
        // s1: compare (bank, address) with the packets 1, 2, 3 ahead; priority select.
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
            self.rd_q.d.next = self.ram1.read_data.val();
        } else {
            self.rd_q.d.next = self.ram0.read_data.val();
        }
        if self.ro_bank.q.val() {
            self.ro_q.d.next = self.ram1.read_data.val();
        } else {
            self.ro_q.d.next = self.ram0.read_data.val();
        }
        self.s2_valid.d.next = self.s1_valid.q.val() & !self.reset.val();
        self.s2_bank.d.next = self.s1_bank.q.val();
        self.s2_addr.d.next = self.s1_addr.q.val();
        // s2: the counter's current value (forwarded or from the RAM) and the update rule.
        self.x_rd.x.next = self.rd_q.q.val();
        self.x_wr.x.next = self.wr_data.q.val();
        self.x_d1.x.next = self.d1_data.q.val();
        self.x_d2.x.next = self.d2_data.q.val();
        if self.sel1.q.val() {
            if self.sel0.q.val() {
                self.v.next = self.x_d2.y.val();
            } else {
                self.v.next = self.x_d1.y.val();
            }
        } else if self.sel0.q.val() {
            self.v.next = self.x_wr.y.val();
        } else {
            self.v.next = self.x_rd.y.val();
        }
        self.cand.next = self.v.val() + self.one.val();
        self.lt.next = self.omega_inf.val() | (self.v.val() < self.omega.val());
        self.upd.next = (self.v.val() != self.marker.val()) & self.lt.val();
        if self.upd.val() {
            self.wr_data.d.next = self.cand.val().get_bits::<W>(0);
        } else {
            self.wr_data.d.next = self.v.val().get_bits::<W>(0);
        }
        self.wr_valid.d.next = self.s2_valid.q.val() & !self.reset.val();
        self.wr_bank.d.next = self.s2_bank.q.val();
        self.wr_addr.d.next = self.s2_addr.q.val();
        if self.upd.val() & (self.v.val() != self.top.val()) {
            self.om_inf.d.next = false;
            self.om.d.next = self.cand.val();
        } else {
            self.om_inf.d.next = self.omega_inf.val();
            self.om.d.next = self.omega.val();
        }
        // wr: the packet writes its bank; otherwise the clear sweep may write a zero.
        self.w0.next = self.wr_valid.q.val() & !self.wr_bank.q.val();
        self.w1.next = self.wr_valid.q.val() & self.wr_bank.q.val();
        if self.w0.val() {
            self.ram0.write_address.next = self.wr_addr.q.val();
            self.ram0.write_data.next = self.wr_data.q.val();
        } else {
            self.ram0.write_address.next = self.clr_addr.val();
            self.ram0.write_data.next = self.zero.val();
        }
        self.ram0.write_enable.next = self.w0.val() | (self.clr.val() & !self.clr_bank.val());
        if self.w1.val() {
            self.ram1.write_address.next = self.wr_addr.q.val();
            self.ram1.write_data.next = self.wr_data.q.val();
        } else {
            self.ram1.write_address.next = self.clr_addr.val();
            self.ram1.write_data.next = self.zero.val();
        }
        self.ram1.write_enable.next = self.w1.val() | (self.clr.val() & self.clr_bank.val());
        self.d1_valid.d.next = self.wr_valid.q.val() & !self.reset.val();
        self.d1_bank.d.next = self.wr_bank.q.val();
        self.d1_addr.d.next = self.wr_addr.q.val();
        self.d1_data.d.next = self.wr_data.q.val();
        self.d2_data.d.next = self.d1_data.q.val();
        // Outputs.
        self.omega_out_inf.next = self.om_inf.q.val();
        self.omega_out.next = self.om.q.val();
        self.done.next = self.wr_valid.q.val();
        self.busy.next = self.valid.val() | self.s1_valid.q.val() | self.s2_valid.q.val();
        self.rd_data.next = self.ro_q.q.val();
    }
}
