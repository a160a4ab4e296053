//! `KeyWay<A>`: one way of the flow-key table, `2^A` slots of [`SLOT_BITS`] in two banks,
//! read-modify-written at one packet per clock with full forwarding.
//!
//! The slot datapath of `sketch::counter_rmw` without the arithmetic: a packet at s0
//! (`valid`, `bank`, `addr`) reads its bank's RAM; at s1 the RAM output is registered; at
//! s2 `cur` is the slot as every earlier packet left it (the RAM, or one of the three
//! writes still in flight, chosen by [`ForwardTrack`] on (bank, slot)); the parent decides
//! `wr_in` from `cur`, and it is written back at wr. The parent writes back every packet
//! (changed or not), which is what makes the last three writes the in-flight state.
//!
//! The other bank's ports serve the readout (`rd_bank`, `rd_addr`: the slot on `rd_q` one
//! clock later, unregistered) and the clear sweep (`clr`: the slot's valid bit written 0).
//! The clear writes whatever the write register holds with the valid bit cleared, so the
//! RAMs' write data needs no 366-bit zero multiplexer (1464 LUTs at the NIC default): an
//! empty slot's other bits are meaningless, nothing but the valid bit of an empty slot is
//! ever used, and the parent's readout shows an empty slot as zeros. The caller keeps
//! packets out of the read and clear bank; a packet's write wins anyway.
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset of the valid bits |
//! | `valid`, `bank`, `addr` | in | 1, 1, `A` | a packet at s0 |
//! | `cur` | out | [`SLOT_BITS`] | the packet's slot at s2, forwarded |
//! | `wr_in` | in | [`SLOT_BITS`] | the slot to write back, at s2 |
//! | `busy` | out | 1 | a packet is in s0..wr |
//! | `rd_bank`, `rd_addr` | in | 1, `A` | readout bank and slot |
//! | `rd_q` | out | [`SLOT_BITS`] | that slot, one clock later |
//! | `clr`, `clr_bank`, `clr_addr` | in | 1, 1, `A` | empty slot `clr_addr` of bank `clr_bank` (valid bit 0) |
use crate::sketch::cell_ram::CellRam;
use crate::sketch::forward_track::ForwardTrack;
use rust_hdl::prelude::*;
use smartnic_contract::per_switch::slot;

/// Bits of one slot (`per_switch::slot::BITS`).
pub const SLOT_BITS: usize = slot::BITS as usize;

/// One way in two banks (see the module docs).
#[derive(LogicBlock)]
pub struct KeyWay<const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub valid: Signal<In, Bit>,
    pub bank: Signal<In, Bit>,
    pub addr: Signal<In, Bits<A>>,
    pub cur: Signal<Out, Bits<SLOT_BITS>>,
    pub wr_in: Signal<In, Bits<SLOT_BITS>>,
    pub busy: Signal<Out, Bit>,
    pub rd_bank: Signal<In, Bit>,
    pub rd_addr: Signal<In, Bits<A>>,
    pub rd_q: Signal<Out, Bits<SLOT_BITS>>,
    pub clr: Signal<In, Bit>,
    pub clr_bank: Signal<In, Bit>,
    pub clr_addr: Signal<In, Bits<A>>,
    track: ForwardTrack<A>,
    ram0: CellRam<SLOT_BITS, A>,
    ram1: CellRam<SLOT_BITS, A>,
    ram_r: DFF<Bits<SLOT_BITS>>,
    w_data: DFF<Bits<SLOT_BITS>>,
    d1_data: DFF<Bits<SLOT_BITS>>,
    d2_data: DFF<Bits<SLOT_BITS>>,
    ro_bank: DFF<Bit>,
    we0: Signal<Local, Bit>,
    we1: Signal<Local, Bit>,
    keep: [Signal<Local, Bits<SLOT_BITS>>; 2],
    all: Constant<Bits<SLOT_BITS>>,
    not_valid: Constant<Bits<SLOT_BITS>>,
}

impl<const A: usize> Default for KeyWay<A> {
    fn default() -> Self {
        KeyWay {
            clock: Default::default(),
            reset: Default::default(),
            valid: Default::default(),
            bank: Default::default(),
            addr: Default::default(),
            cur: Default::default(),
            wr_in: Default::default(),
            busy: Default::default(),
            rd_bank: Default::default(),
            rd_addr: Default::default(),
            rd_q: Default::default(),
            clr: Default::default(),
            clr_bank: Default::default(),
            clr_addr: Default::default(),
            track: Default::default(),
            ram0: Default::default(),
            ram1: Default::default(),
            ram_r: Default::default(),
            w_data: Default::default(),
            d1_data: Default::default(),
            d2_data: Default::default(),
            ro_bank: Default::default(),
            we0: Default::default(),
            we1: Default::default(),
            keep: Default::default(),
            all: Constant::new(!Bits::default()),
            not_valid: Constant::new(!Bits::<SLOT_BITS>::default() ^ Bits::from(1u64)),
        }
    }
}

impl<const A: usize> Logic for KeyWay<A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, ram_r, w_data, d1_data, d2_data, ro_bank);
        self.track.clock.next = self.clock.val();
        self.track.reset.next = self.reset.val();
        self.track.valid.next = self.valid.val();
        self.track.bank.next = self.bank.val();
        self.track.addr.next = self.addr.val();
        self.ram0.read_clock.next = self.clock.val();
        self.ram0.write_clock.next = self.clock.val();
        self.ram1.read_clock.next = self.clock.val();
        self.ram1.write_clock.next = self.clock.val();
        // s0: a packet reads its bank; the other bank serves the readout.
        if self.valid.val() & !self.bank.val() {
            self.ram0.read_address.next = self.addr.val();
        } else {
            self.ram0.read_address.next = self.rd_addr.val();
        }
        if self.valid.val() & self.bank.val() {
            self.ram1.read_address.next = self.addr.val();
        } else {
            self.ram1.read_address.next = self.rd_addr.val();
        }
        // s1: the packet's bank's output, registered; the readout's bank's, unregistered.
        if self.track.s1_bank.val() {
            self.ram_r.d.next = self.ram1.read_data.val();
        } else {
            self.ram_r.d.next = self.ram0.read_data.val();
        }
        self.ro_bank.d.next = self.rd_bank.val();
        if self.ro_bank.q.val() {
            self.rd_q.next = self.ram1.read_data.val();
        } else {
            self.rd_q.next = self.ram0.read_data.val();
        }
        // s2: the slot as the packets ahead left it, newest first.
        if self.track.sel1.val() {
            if self.track.sel0.val() {
                self.cur.next = self.d2_data.q.val();
            } else {
                self.cur.next = self.d1_data.q.val();
            }
        } else if self.track.sel0.val() {
            self.cur.next = self.w_data.q.val();
        } else {
            self.cur.next = self.ram_r.q.val();
        }
        self.w_data.d.next = self.wr_in.val();
        self.d1_data.d.next = self.w_data.q.val();
        self.d2_data.d.next = self.d1_data.q.val();
        // wr: the packet writes its bank; otherwise the clear sweep may empty a slot.
        self.we0.next = self.track.wr_valid.val() & !self.track.wr_bank.val();
        self.we1.next = self.track.wr_valid.val() & self.track.wr_bank.val();
        // A packet's write keeps every bit; a clear writes the valid bit 0 (module docs).
        if self.we0.val() {
            self.keep[0].next = self.all.val();
        } else {
            self.keep[0].next = self.not_valid.val();
        }
        if self.we1.val() {
            self.keep[1].next = self.all.val();
        } else {
            self.keep[1].next = self.not_valid.val();
        }
        if self.we0.val() {
            self.ram0.write_address.next = self.track.wr_addr.val();
        } else {
            self.ram0.write_address.next = self.clr_addr.val();
        }
        if self.we1.val() {
            self.ram1.write_address.next = self.track.wr_addr.val();
        } else {
            self.ram1.write_address.next = self.clr_addr.val();
        }
        self.ram0.write_data.next = self.w_data.q.val() & self.keep[0].val();
        self.ram1.write_data.next = self.w_data.q.val() & self.keep[1].val();
        self.ram0.write_enable.next = self.we0.val() | (self.clr.val() & !self.clr_bank.val());
        self.ram1.write_enable.next = self.we1.val() | (self.clr.val() & self.clr_bank.val());
        self.busy.next = self.track.busy.val() | self.track.wr_valid.val();
    }
}
