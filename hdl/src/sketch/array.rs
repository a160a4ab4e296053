//! `CounterArray<W, A>`: one TowerSketch counter array, `2^A` counters of `W` bits in one
//! block RAM, updated read-modify-write at one packet per clock with full forwarding: a
//! [`CounterRmw`] (the update rule, the s0..wr stages, the 3-deep forwarding; see there)
//! behind one RAM, its bank tied low.
//!
//! # Readout
//!
//! When no packet is at s0 the read address comes from `rd_addr`; `rd_data` is the
//! registered RAM output, two clocks after the address. Reads are meant for an idle array
//! (`busy` low): a packet at s0 takes the port, and counters changing under the reads are
//! the caller's business.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset of the valid bits (not the RAM) |
//! | `valid`, `addr` | in | 1, `A` | a packet's counter index (s0) |
//! | `omega_inf`, `omega` | in | 1, 32 | running minimum of the packet at s2 (`INF` = `omega_inf`) |
//! | `omega_out_inf`, `omega_out` | out | 1, 32 | running minimum after this array (one clock after s2) |
//! | `done` | out | 1 | the packet in `wr` is being written (one per input packet) |
//! | `busy` | out | 1 | a packet is in s0..s2 (with `done`: in flight) |
//! | `rd_addr` | in | `A` | readout address (used when `valid` is low) |
//! | `rd_data` | out | `W` | counter at `rd_addr` two clocks earlier |
use super::cell_ram::CellRam;
use super::counter_rmw::CounterRmw;
use super::BitSink;
use rust_hdl::prelude::*;

pub use super::counter_rmw::{COMPUTE_STAGE, FORWARD_DEPTH, OMEGA_LATENCY};
/// Clocks from `rd_addr` to `rd_data`.
pub const READ_LATENCY: usize = 2;

/// One counter array (see the module docs).
#[derive(LogicBlock)]
pub struct CounterArray<const W: usize, const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub valid: Signal<In, Bit>,
    pub addr: Signal<In, Bits<A>>,
    pub omega_inf: Signal<In, Bit>,
    pub omega: Signal<In, Bits<32>>,
    pub omega_out_inf: Signal<Out, Bit>,
    pub omega_out: Signal<Out, Bits<32>>,
    pub done: Signal<Out, Bit>,
    pub busy: Signal<Out, Bit>,
    pub rd_addr: Signal<In, Bits<A>>,
    pub rd_data: Signal<Out, Bits<W>>,
    ram: CellRam<W, A>,
    rmw: CounterRmw<W, A>,
    // The datapath's bank outputs: always 0 here.
    sink_s1_bank: BitSink,
    sink_wr_bank: BitSink,
}

impl<const W: usize, const A: usize> CounterArray<W, A> {
    pub fn new() -> Self {
        CounterArray {
            clock: Default::default(),
            reset: Default::default(),
            valid: Default::default(),
            addr: Default::default(),
            omega_inf: Default::default(),
            omega: Default::default(),
            omega_out_inf: Default::default(),
            omega_out: Default::default(),
            done: Default::default(),
            busy: Default::default(),
            rd_addr: Default::default(),
            rd_data: Default::default(),
            ram: Default::default(),
            rmw: CounterRmw::new(),
            sink_s1_bank: Default::default(),
            sink_wr_bank: Default::default(),
        }
    }
}

impl<const W: usize, const A: usize> Default for CounterArray<W, A> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const W: usize, const A: usize> Logic for CounterArray<W, A> {
    #[hdl_gen]
    fn update(&mut self) {
        self.ram.read_clock.next = self.clock.val();
        self.ram.write_clock.next = self.clock.val();
        self.rmw.clock.next = self.clock.val();
        self.rmw.reset.next = self.reset.val();
        // s0: the packet's address, or the readout address when no packet is here.
        if self.valid.val() {
            self.ram.read_address.next = self.addr.val();
        } else {
            self.ram.read_address.next = self.rd_addr.val();
        }
        self.rmw.valid.next = self.valid.val();
        self.rmw.bank.next = false;
        self.sink_s1_bank.x.next = self.rmw.s1_bank.val();
        self.sink_wr_bank.x.next = self.rmw.wr_bank.val();
        self.rmw.addr.next = self.addr.val();
        self.rmw.ram_q.next = self.ram.read_data.val();
        self.rmw.omega_inf.next = self.omega_inf.val();
        self.rmw.omega.next = self.omega.val();
        // wr: write back.
        self.ram.write_address.next = self.rmw.wr_addr.val();
        self.ram.write_data.next = self.rmw.wr_data.val();
        self.ram.write_enable.next = self.rmw.wr_valid.val();
        // Outputs.
        self.omega_out_inf.next = self.rmw.omega_out_inf.val();
        self.omega_out.next = self.rmw.omega_out.val();
        self.done.next = self.rmw.wr_valid.val();
        self.busy.next = self.rmw.busy.val();
        self.rd_data.next = self.rmw.rd_q.val();
    }
}
