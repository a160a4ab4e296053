//! `tower_banked`: the TowerSketch pipeline with two banks per array and the epoch engine
//! (contract `smartnic_contract::regs::epoch`): packets are tagged with the active bank at
//! ingress, a swap pulse exchanges the banks, the idle bank is read through the readout
//! port and zeroed by the clear sweep while the active bank keeps taking one packet per
//! clock.
//!
//! # Design
//!
//! - **Banks inside the arrays**: each array is a [`BankedArray`]: two RAMs (one per bank)
//!   behind one read-modify-write datapath whose forwarding compares (bank, address). The
//!   three hash units, the staggering and the omega chain are [`super::tower`]'s, shared by
//!   both banks; a 4-flop delay line carries each packet's bank bit beside its index (array
//!   `i` sees it at its s0, cycle `2 + i`). Cost over `tower`: the second RAM of each array
//!   (45.5 -> 91 RAMB36), a `W`-bit mux before `rd_q` and before `ro_q`, bank compare bits
//!   and the engine. (Two whole `TowerPipeline`s would duplicate the hash units, the bulk of
//!   the logic.)
//! - **Epoch engine** ([`EpochEngine`]): active bank, swap with a fixed-latency drain of
//!   [`LATENCY`] clocks, clear sweep, EPOCH, SEQUENCE, ACTIVE/IDLE_PACKETS.
//! - **Clear** is an explicit sweep (not clear-on-read): `2^AM` clocks (`AM` = widest
//!   array), one address per clock in all arrays in parallel through the idle RAMs' write
//!   ports. A readout can be repeated (the driver retries torn reads) and a clear is one
//!   register write; clear-on-read would make a retry read zeros.
//! - **Readout**: `ro_req` with `ro_array` (0..2) and `ro_index` reads counter `ro_index` of
//!   the idle bank of array `ro_array` (low `Ai` bits of the index) through that RAM's read
//!   port (the idle RAM's read port is never used by packets after the drain): `ro_ack`
//!   and `ro_data` (zero-extended to 32 bits) [`RO_LATENCY`] clocks later, one request per
//!   clock. This is the register block's window interface as is: `win_req -> ro_req`,
//!   `win_sel -> ro_array` (Tower windows are 0..2), `win_index -> ro_index`,
//!   `ro_ack -> win_ack`, `ro_data -> win_data`. `ro_array = 3` reads 0.
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
//! | `clr`, `clr_bank`, `clr_addr` | out | 1, 1, `AM` | the engine's clear sweep (for a second sketch sharing the engine, as the core's SuMax) |
use super::banked_array::BankedArray;
use super::epoch::EpochEngine;
use super::hash_front::HashFront;
use super::tower::{ARRAYS, LATENCY};
use crate::arith::Widen;
use crate::hash::{self, KEY_BITS};
use rust_hdl::prelude::*;
use smartnic_contract::geometry::TowerGeometry;

/// Clocks from `ro_req` to `ro_ack`/`ro_data`.
pub const RO_LATENCY: usize = super::banked_array::READ_LATENCY + 1;
/// Clocks a swap waits for the old bank's packets ([`EpochEngine::new`]'s `drain`).
pub const DRAIN: usize = LATENCY;
const MODE_TAPS: usize = hash::LATENCY + ARRAYS + 1;
const BANK_TAPS: usize = hash::LATENCY + ARRAYS - 1;

/// Two-bank TowerSketch with the epoch engine (see the module docs). `AM` = the widest
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
    front: HashFront<A0, A1, A2>,
    a0: BankedArray<W0, A0>,
    a1: BankedArray<W1, A1>,
    a2: BankedArray<W2, A2>,
    mode: [DFF<Bit>; MODE_TAPS],
    bank: [DFF<Bit>; BANK_TAPS],
    ro_v: [DFF<Bit>; RO_LATENCY],
    ro_sel: [DFF<Bits<2>>; 2],
    ro_q: DFF<Bits<32>>,
    // 32-bit views of the arrays' read data for the readout mux. rust-hdl workaround:
    // `bit_cast` widening renders as `x & M'hff..` (a Verilator WIDTH warning); `Widen` is
    // a leaf whose Verilog is `{zeros, x}`.
    x0: Widen<32, W0>,
    x1: Widen<32, W1>,
    x2: Widen<32, W2>,
    sel0: Constant<Bits<2>>,
    sel1: Constant<Bits<2>>,
    sel2: Constant<Bits<2>>,
    zero32: Constant<Bits<32>>,
}

/// The board's banked sketch: SketchINT's FPGA geometry, two banks.
pub type TowerBankedFpga = TowerBanked<8, 16, 16, 15, 32, 14, 16>;

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
        Self::with_drain(geometry, DRAIN)
    }

    /// As [`TowerBanked::new`] with a longer swap drain (`drain >= DRAIN`, <= 255): the core
    /// tags a second sketch (SuMax, behind the delay-bin unit) with the same engine's bank,
    /// so the engine must wait for that sketch's last write too.
    pub fn with_drain(geometry: &TowerGeometry, drain: usize) -> Result<Self, String> {
        if !(DRAIN..=255).contains(&drain) {
            return Err(format!("drain {drain} must be {DRAIN}..=255"));
        }
        // The geometry check is the plain pipeline's.
        super::tower::TowerPipeline::<W0, A0, W1, A1, W2, A2>::new(geometry)?;
        if AM != A0.max(A1).max(A2) {
            return Err(format!("AM = {AM} must be the widest array's address bits {}", A0.max(A1).max(A2)));
        }
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
            engine: EpochEngine::new(drain),
            front: HashFront::new([
                &geometry.arrays[0].hash,
                &geometry.arrays[1].hash,
                &geometry.arrays[2].hash,
            ]),
            a0: BankedArray::new(),
            a1: BankedArray::new(),
            a2: BankedArray::new(),
            mode: Default::default(),
            bank: Default::default(),
            ro_v: Default::default(),
            ro_sel: Default::default(),
            ro_q: Default::default(),
            x0: Default::default(),
            x1: Default::default(),
            x2: Default::default(),
            sel0: Constant::new(0u64.to_bits()),
            sel1: Constant::new(1u64.to_bits()),
            sel2: Constant::new(2u64.to_bits()),
            zero32: Constant::new(0u64.to_bits()),
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
        dff_setup!(self, clock, ro_q);
        // Epoch engine: sees every packet at ingress, tags it with the active bank.
        self.engine.clock.next = self.clock.val();
        self.engine.reset.next = self.reset.val();
        self.engine.valid.next = self.key_valid.val();
        self.engine.swap.next = self.swap.val();
        self.engine.clear.next = self.clear.val();
        // Hash units with the indices staggered by one clock per array.
        self.front.clock.next = self.clock.val();
        self.front.reset.next = self.reset.val();
        self.front.key.next = self.key.val();
        self.front.key_valid.next = self.key_valid.val();
        // Mode and bank delay lines: [j] holds the packet that entered j + 1 clocks ago.
        self.mode[0].clock.next = self.clock.val();
        self.mode[0].d.next = self.acu.val();
        for j in 1..MODE_TAPS {
            self.mode[j].clock.next = self.clock.val();
            self.mode[j].d.next = self.mode[j - 1].q.val();
        }
        self.bank[0].clock.next = self.clock.val();
        self.bank[0].d.next = self.engine.active_bank.val();
        for j in 1..BANK_TAPS {
            self.bank[j].clock.next = self.clock.val();
            self.bank[j].d.next = self.bank[j - 1].q.val();
        }
        // Arrays: packets with their bank; readout and clear on the idle bank.
        self.a0.clock.next = self.clock.val();
        self.a0.reset.next = self.reset.val();
        self.a0.valid.next = self.front.valid0.val();
        self.a0.bank.next = self.bank[1].q.val();
        self.a0.addr.next = self.front.index0.val();
        self.a0.omega_inf.next = true;
        self.a0.omega.next = 0.into();
        self.a0.rd_bank.next = !self.engine.active_bank.val();
        self.a0.rd_addr.next = self.ro_index.val().get_bits::<A0>(0);
        self.a0.clr.next = self.engine.clr.val();
        self.a0.clr_bank.next = self.engine.clr_bank.val();
        self.a0.clr_addr.next = self.engine.clr_addr.val().get_bits::<A0>(0);
        self.a1.clock.next = self.clock.val();
        self.a1.reset.next = self.reset.val();
        self.a1.valid.next = self.front.valid1.val();
        self.a1.bank.next = self.bank[2].q.val();
        self.a1.addr.next = self.front.index1.val();
        self.a1.omega_inf.next = self.a0.omega_out_inf.val() | !self.mode[4].q.val();
        self.a1.omega.next = self.a0.omega_out.val();
        self.a1.rd_bank.next = !self.engine.active_bank.val();
        self.a1.rd_addr.next = self.ro_index.val().get_bits::<A1>(0);
        self.a1.clr.next = self.engine.clr.val();
        self.a1.clr_bank.next = self.engine.clr_bank.val();
        self.a1.clr_addr.next = self.engine.clr_addr.val().get_bits::<A1>(0);
        self.a2.clock.next = self.clock.val();
        self.a2.reset.next = self.reset.val();
        self.a2.valid.next = self.front.valid2.val();
        self.a2.bank.next = self.bank[3].q.val();
        self.a2.addr.next = self.front.index2.val();
        self.a2.omega_inf.next = self.a1.omega_out_inf.val() | !self.mode[5].q.val();
        self.a2.omega.next = self.a1.omega_out.val();
        self.a2.rd_bank.next = !self.engine.active_bank.val();
        self.a2.rd_addr.next = self.ro_index.val().get_bits::<A2>(0);
        self.a2.clr.next = self.engine.clr.val();
        self.a2.clr_bank.next = self.engine.clr_bank.val();
        self.a2.clr_addr.next = self.engine.clr_addr.val().get_bits::<A2>(0);
        // Readout: the arrays answer after READ_LATENCY clocks; select and register.
        self.ro_v[0].clock.next = self.clock.val();
        self.ro_v[0].d.next = self.ro_req.val() & !self.reset.val();
        for j in 1..RO_LATENCY {
            self.ro_v[j].clock.next = self.clock.val();
            self.ro_v[j].d.next = self.ro_v[j - 1].q.val() & !self.reset.val();
        }
        self.ro_sel[0].clock.next = self.clock.val();
        self.ro_sel[0].d.next = self.ro_array.val();
        self.ro_sel[1].clock.next = self.clock.val();
        self.ro_sel[1].d.next = self.ro_sel[0].q.val();
        self.x0.x.next = self.a0.rd_data.val();
        self.x1.x.next = self.a1.rd_data.val();
        self.x2.x.next = self.a2.rd_data.val();
        if self.ro_sel[1].q.val() == self.sel0.val() {
            self.ro_q.d.next = self.x0.y.val();
        } else if self.ro_sel[1].q.val() == self.sel1.val() {
            self.ro_q.d.next = self.x1.y.val();
        } else if self.ro_sel[1].q.val() == self.sel2.val() {
            self.ro_q.d.next = self.x2.y.val();
        } else {
            self.ro_q.d.next = self.zero32.val();
        }
        self.ro_ack.next = self.ro_v[2].q.val(); // RO_LATENCY - 1 (an index must be a literal)
        self.ro_data.next = self.ro_q.q.val();
        // Status.
        self.in_ready.next = true;
        self.done.next = self.a2.done.val();
        self.estimate_inf.next = self.a2.omega_out_inf.val();
        self.estimate.next = self.a2.omega_out.val();
        self.idle.next = !(self.front.busy.val()
            | self.a0.busy.val()
            | self.a0.done.val()
            | self.a1.busy.val()
            | self.a1.done.val()
            | self.a2.busy.val()
            | self.a2.done.val());
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
        assert_eq!((DRAIN, RO_LATENCY, BANK_TAPS), (8, 3, 4));
    }
}
