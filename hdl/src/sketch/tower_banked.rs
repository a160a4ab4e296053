//! `tower_banked`: the two-bank TowerSketch pipeline paired with its own epoch engine
//! (contract `smartnic_contract::regs::epoch`) and readout window: packets are tagged with
//! the active bank at ingress, a swap pulse exchanges the banks, the idle bank is read
//! through the readout port and zeroed by the clear sweep while the active bank keeps
//! taking one packet per clock. The core builds the same three parts itself (one engine
//! for all its sketches); this block is the tower's epoch scheme on its own (block
//! `tower_banked`, its Verilator and synthesis tests).
//!
//! # Design
//!
//! - **Banks inside the arrays**: the pipeline is [`TowerPipeline`] with
//!   [`TWO_BANKS`]: each array two RAMs (one per bank) behind one read-modify-write datapath
//!   whose forwarding compares (bank, address); the hash units, the staggering and the omega
//!   chain are shared by both banks. Cost over `tower`: the second RAM of each array
//!   (45.5 -> 91 RAMB36), a `W`-bit mux before `rd_q` and before `ro_q`, bank compare bits
//!   and the engine.
//! - **Epoch engine** ([`EpochEngine`]): active bank, swap with a fixed-latency drain of
//!   [`LATENCY`] clocks, clear sweep, EPOCH, SEQUENCE, ACTIVE/IDLE_PACKETS.
//! - **Clear** is an explicit sweep (not clear-on-read): `2^AM` clocks (`AM` = widest
//!   array), one address per clock in all arrays in parallel through the idle RAMs' write
//!   ports. A readout can be repeated (the driver retries torn reads) and a clear is one
//!   register write; clear-on-read would make a retry read zeros.
//! - **Readout** ([`TowerWindow`]): `ro_req` with `ro_array` (0..2) and `ro_index` reads
//!   counter `ro_index` of the idle bank of array `ro_array` through that RAM's read port
//!   (the idle RAM's read port is never used by packets after the drain): `ro_ack` and
//!   `ro_data` [`RO_LATENCY`] clocks later, one request per clock.
//!
//! # Timing (packet in cycle `c`, swap pulse in cycle `s`, readout request in cycle `r`)
//!
//! | what | when |
//! |---|---|
//! | packet's bank | `active_bank` in cycle `c` |
//! | packet's last write | cycle `c + LATENCY - 1` (`done` high) |
//! | new bank active | from `s + 1`; `swap_pending` high `s + 1 ..= s + LATENCY` |
//! | idle bank complete | from `s + LATENCY + 1` (= `swap_pending` low again) |
//! | `ro_data` | cycle `r + RO_LATENCY` |
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | synchronous reset: valid pipeline and epoch state (not the RAMs) |
//! | `key`, `key_valid`, `acu` | in | 104, 1, 1 | a packet (flow key; 1 = ACU, 0 = CM insertion) |
//! | `swap`, `clear` | in | 1 | CONTROL SWAP / CLEAR pulses |
//! | `ro_req`, `ro_array`, `ro_index` | in | 1, 2, `AM` | readout request of the idle bank |
//! | `ro_ack`, `ro_data` | out | 1, 32 | readout answer, `RO_LATENCY` clocks after the request |
//! | `in_ready` | out | 1 | constant 1 |
//! | `done`, `estimate_inf`, `estimate` | out | 1, 1, 32 | as `tower` (per packet, at its last write) |
//! | `idle` | out | 1 | no packet in flight (in either bank) |
//! | `active_bank`, `swap_pending`, `clear_busy` | out | 1 | epoch state, STATUS |
//! | `epoch`, `sequence_no` | out | 32 | EPOCH, SEQUENCE |
//! | `active_packets`, `idle_packets` | out | 64 | ACTIVE_PACKETS, IDLE_PACKETS |
//! | `clr`, `clr_bank`, `clr_addr` | out | 1, 1, `AM` | the engine's clear sweep |
use super::epoch::EpochEngine;
use super::tower::{TowerPipeline, LATENCY};
use super::tower_window::TowerWindow;
use super::{Sink, TWO_BANKS};
use crate::hash::KEY_BITS;
use crate::nic::{TOWER_A0, TOWER_A1, TOWER_A2, TOWER_AM, TOWER_W0, TOWER_W1, TOWER_W2};
use rust_hdl::prelude::*;
use smartnic_contract::geometry::TowerGeometry;

pub use super::tower_window::RO_LATENCY;
/// Clocks a swap waits for the old bank's packets ([`EpochEngine::new`]'s `drain`): the
/// pipeline's latency.
pub const DRAIN: usize = LATENCY;

/// Two-bank TowerSketch with its epoch engine (see the module docs). `AM` = the widest
/// array's address bits (the clear sweep's and `ro_index`'s width).
#[derive(LogicBlock)]
pub struct TowerBanked<
    const W0: usize,
    const A0: usize,
    const W1: usize,
    const A1: usize,
    const W2: usize,
    const A2: usize,
    const AM: usize,
> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub key: Signal<In, Bits<KEY_BITS>>,
    pub key_valid: Signal<In, Bit>,
    pub acu: Signal<In, Bit>,
    pub swap: Signal<In, Bit>,
    pub clear: Signal<In, Bit>,
    pub ro_req: Signal<In, Bit>,
    pub ro_array: Signal<In, Bits<2>>,
    pub ro_index: Signal<In, Bits<AM>>,
    pub ro_ack: Signal<Out, Bit>,
    pub ro_data: Signal<Out, Bits<32>>,
    pub in_ready: Signal<Out, Bit>,
    pub done: Signal<Out, Bit>,
    pub estimate_inf: Signal<Out, Bit>,
    pub estimate: Signal<Out, Bits<32>>,
    pub idle: Signal<Out, Bit>,
    pub active_bank: Signal<Out, Bit>,
    pub swap_pending: Signal<Out, Bit>,
    pub clear_busy: Signal<Out, Bit>,
    pub epoch: Signal<Out, Bits<32>>,
    pub sequence_no: Signal<Out, Bits<32>>,
    pub active_packets: Signal<Out, Bits<64>>,
    pub idle_packets: Signal<Out, Bits<64>>,
    pub clr: Signal<Out, Bit>,
    pub clr_bank: Signal<Out, Bit>,
    pub clr_addr: Signal<Out, Bits<AM>>,
    engine: EpochEngine<AM>,
    tower: TowerPipeline<W0, A0, W1, A1, W2, A2, TWO_BANKS>,
    window: TowerWindow<W0, A0, W1, A1, W2, A2, AM>,
    // The pipeline's packet count: the engine counts packets per epoch instead.
    sink_packets: Sink<32>,
}

/// The board's banked sketch: SketchINT's FPGA geometry, two banks, as the named constants
/// of [`crate::nic`].
pub type TowerBankedFpga = TowerBanked<TOWER_W0, TOWER_A0, TOWER_W1, TOWER_A1, TOWER_W2, TOWER_A2, TOWER_AM>;

impl<
        const W0: usize,
        const A0: usize,
        const W1: usize,
        const A1: usize,
        const W2: usize,
        const A2: usize,
        const AM: usize,
    > TowerBanked<W0, A0, W1, A1, W2, A2, AM>
{
    /// The banked pipeline for `geometry` (3 arrays of exactly these widths and depths;
    /// `AM` must be the largest `Ai`).
    pub fn new(geometry: &TowerGeometry) -> Result<Self, String> {
        Ok(TowerBanked {
            clock: Default::default(),
            reset: Default::default(),
            key: Default::default(),
            key_valid: Default::default(),
            acu: Default::default(),
            swap: Default::default(),
            clear: Default::default(),
            ro_req: Default::default(),
            ro_array: Default::default(),
            ro_index: Default::default(),
            ro_ack: Default::default(),
            ro_data: Default::default(),
            in_ready: Default::default(),
            done: Default::default(),
            estimate_inf: Default::default(),
            estimate: Default::default(),
            idle: Default::default(),
            active_bank: Default::default(),
            swap_pending: Default::default(),
            clear_busy: Default::default(),
            epoch: Default::default(),
            sequence_no: Default::default(),
            active_packets: Default::default(),
            idle_packets: Default::default(),
            clr: Default::default(),
            clr_bank: Default::default(),
            clr_addr: Default::default(),
            engine: EpochEngine::new(DRAIN),
            tower: TowerPipeline::new(geometry)?,
            window: TowerWindow::new()?,
            sink_packets: Default::default(),
        })
    }
}

impl<
        const W0: usize,
        const A0: usize,
        const W1: usize,
        const A1: usize,
        const W2: usize,
        const A2: usize,
        const AM: usize,
    > Logic for TowerBanked<W0, A0, W1, A1, W2, A2, AM>
{
    #[hdl_gen]
    fn update(&mut self) {
        // Epoch engine: sees every packet at ingress, tags it with the active bank.
        self.engine.clock.next = self.clock.val();
        self.engine.reset.next = self.reset.val();
        self.engine.valid.next = self.key_valid.val();
        self.engine.swap.next = self.swap.val();
        self.engine.clear.next = self.clear.val();
        // The pipeline: packets in the active bank; readout and clear on the idle bank.
        self.tower.clock.next = self.clock.val();
        self.tower.reset.next = self.reset.val();
        self.tower.key.next = self.key.val();
        self.tower.key_valid.next = self.key_valid.val();
        self.tower.acu.next = self.acu.val();
        self.tower.bank.next = self.engine.active_bank.val();
        self.tower.rd_bank.next = !self.engine.active_bank.val();
        self.tower.clr.next = self.engine.clr.val();
        self.tower.clr_bank.next = self.engine.clr_bank.val();
        self.tower.clr_addr0.next = self.engine.clr_addr.val().get_bits::<A0>(0);
        self.tower.clr_addr1.next = self.engine.clr_addr.val().get_bits::<A1>(0);
        self.tower.clr_addr2.next = self.engine.clr_addr.val().get_bits::<A2>(0);
        self.sink_packets.x.next = self.tower.packets.val();
        // Readout window on the pipeline's read ports.
        self.window.clock.next = self.clock.val();
        self.window.reset.next = self.reset.val();
        self.window.ro_req.next = self.ro_req.val();
        self.window.ro_array.next = self.ro_array.val();
        self.window.ro_index.next = self.ro_index.val();
        self.tower.rd_addr0.next = self.window.rd_addr0.val();
        self.tower.rd_addr1.next = self.window.rd_addr1.val();
        self.tower.rd_addr2.next = self.window.rd_addr2.val();
        self.window.rd_data0.next = self.tower.rd_data0.val();
        self.window.rd_data1.next = self.tower.rd_data1.val();
        self.window.rd_data2.next = self.tower.rd_data2.val();
        self.ro_ack.next = self.window.ro_ack.val();
        self.ro_data.next = self.window.ro_data.val();
        // Status.
        self.in_ready.next = self.tower.in_ready.val();
        self.done.next = self.tower.done.val();
        self.estimate_inf.next = self.tower.estimate_inf.val();
        self.estimate.next = self.tower.estimate.val();
        self.idle.next = self.tower.idle.val();
        self.active_bank.next = self.engine.active_bank.val();
        self.swap_pending.next = self.engine.swap_pending.val();
        self.clr.next = self.engine.clr.val();
        self.clr_bank.next = self.engine.clr_bank.val();
        self.clr_addr.next = self.engine.clr_addr.val();
        self.clear_busy.next = self.engine.clear_busy.val();
        self.epoch.next = self.engine.epoch.val();
        self.sequence_no.next = self.engine.sequence_no.val();
        self.active_packets.next = self.engine.active_packets.val();
        self.idle_packets.next = self.engine.idle_packets.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_and_widest_address_are_checked() {
        assert!(TowerBankedFpga::new(&TowerGeometry::sketchint_fpga()).is_ok());
        let e =
            TowerBanked::<8, 16, 16, 15, 32, 14, 15>::new(&TowerGeometry::sketchint_fpga()).err().unwrap();
        assert!(e.contains("AM"), "{e}");
        let g = TowerGeometry::from_widths_depths(&[(8, 1 << 16), (16, 1 << 15), (32, 1 << 13)]);
        assert!(TowerBankedFpga::new(&g).is_err());
    }

    #[test]
    fn latencies() {
        assert_eq!((DRAIN, RO_LATENCY), (8, 3));
    }
}
