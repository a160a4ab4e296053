//! `tower`: the TowerSketch pipeline, bit-exact with `host::sketch::tower::Tower` (CM and
//! ACU insertion) for any packet order at one packet per clock.
//!
//! Three arrays (`d = 3`, the contract's FPGA geometry; widths `W0..W2`, depths `2^A0..2^A2`
//! as const generics, checked against a [`TowerGeometry`] in [`TowerPipeline::new`]), each
//! in `B` banks ([`super::ONE_BANK`]: block `tower`; [`super::TWO_BANKS`]: the epoch
//! sketch of [`super::tower_banked`] and the core). Array
//! `i` is indexed by a [`crate::hash::HashUnit`] of the geometry's hash (family member `i`), index = top
//! `Ai` bits of the CRC (`hash::index` for a power-of-two depth).
//!
//! # Pipeline
//!
//! | cycle | what |
//! |---|---|
//! | 0 | `key`, `key_valid`, `acu` (registered upstream) enter the three hash units |
//! | 2 | the indices leave the hash units; array 0 starts (s0) |
//! | 2 + i | array `i` starts: its index waited `i` clocks in a delay line |
//! | 4 + i | array `i` computes (s2) with the `omega` array `i - 1` produced one clock earlier |
//! | 5 + i | array `i` writes its counter |
//!
//! Staggering the arrays by one clock lets the running minimum travel from array 0 to
//! array 2 through one register per array; each array forwards its own in-flight writes
//! ([`super::array`]), so every packet order gives the sequential result without stalls:
//! `in_ready` is constant 1. The mode bit travels with the packet (a register write that
//! changes the mode takes effect between two packets). In CM mode every array gets
//! `omega = INF`, which makes the ACU step the CM step.
//!
//! Latency: [`LATENCY`] = 8 clocks from `key` to the last counter written (the memory
//! shows it from the next clock on); `packets` counts packets whose last write is done.
//!
//! # Estimate
//!
//! Beside the omega chain a minimum chain gives every packet, CM or ACU, its flow's estimate
//! after the packet (`Tower::query` right after `insert`). With `omega_inf = 1` an array's
//! `omega_out` is its new counter, or INF when that counter overflowed ([`super::counter_rmw`]);
//! in ACU mode it is the minimum over the arrays so far. Array `i`'s `omega_out` holds the
//! packet at cycle `5 + i`, so
//!
//! | cycle | chain |
//! |---|---|
//! | 6 | `m1 = a0.omega_out` (registered) |
//! | 7 | `m2 = min(m1, a1.omega_out)` (registered) |
//! | 7 | `estimate = min(m2, a2.omega_out)`, with `done` |
//!
//! every `min` skipping INF. In CM mode every array's `omega_out` is its own new counter, so
//! the chain is the minimum over the non-overflowed counters. In ACU mode array `i`'s
//! `omega_out` is either its `omega` (array `i - 1`'s `omega_out`) or `v + 1` with
//! `v < omega`, never above its `omega`: `a2.omega_out <= a1.omega_out <= a0.omega_out`
//! (INF on top), and the chain gives `a2.omega_out`, the omega chain's output before this
//! chain existed. The counters never see the chain.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset of the valid pipeline and `packets` (not the counters) |
//! | `key`, `key_valid` | in | 104, 1 | flow key (as the `hash` block) |
//! | `acu` | in | 1 | insertion mode of this packet: 0 = CM, 1 = ACU |
//! | `in_ready` | out | 1 | constant 1: a packet is accepted every clock |
//! | `packets` | out | 32 | packets fully applied since reset (wraps) |
//! | `idle` | out | 1 | no packet in flight (readout may start) |
//! | `done` | out | 1 | a packet's last counter is being written this clock (one per packet, in order) |
//! | `estimate_inf`, `estimate` | out | 1, 32 | with `done`, for a packet of either mode: the minimum of the flow's non-overflowed counters after this packet (`Tower::query` right after `insert`; `estimate_inf` = every counter overflowed) |
//! | `rd_addr{i}` | in | `Ai` | readout address of array `i` (ignored while a packet passes s0 of array `i`) |
//! | `rd_data{i}` | out | `Wi` | counter at `rd_addr{i}`, [`READ_LATENCY`] clocks later |
//!
//! | `bank` | in | 1 | the packet's bank, with `key` (two banks only) |
//! | `rd_bank` | in | 1 | readout bank (two banks only: the bank must hold no packet) |
//! | `clr`, `clr_bank`, `clr_addr{i}` | in | 1, 1, `Ai` | clear sweep: zero counter `clr_addr{i}` of bank `clr_bank` in array `i` (two banks only) |
//!
//! With one bank the readout port is the debug/readout window: a plain read of the same RAM
//! port the packets use, meant for an idle pipeline. With two, each packet's bank travels
//! beside its index (a 4-flop line: array `i` sees it at its s0, cycle `2 + i`), each
//! array's forwarding compares (bank, address), and the idle bank's read and write ports
//! serve the readout and the clear sweep while the active bank takes one packet per clock
//! ([`super::array`]). The hash units, the staggering and the omega and minimum chains are
//! shared by the banks (two whole pipelines would duplicate the hash units, the bulk of the
//! logic).
use super::array::{self, CounterArray};
use super::hash_front::HashFront;
use super::ONE_BANK;
use crate::hash::{self, KEY_BITS};
use crate::nic::{TOWER_A0, TOWER_A1, TOWER_A2, TOWER_W0, TOWER_W1, TOWER_W2};
use rust_hdl::prelude::*;
use smartnic_contract::geometry::TowerGeometry;

/// Number of arrays of this pipeline.
pub const ARRAYS: usize = 3;
/// Clocks from a packet at `key` to its write in the last array (inclusive of that write's
/// clock): `hash::LATENCY + (ARRAYS - 1) + array::OMEGA_LATENCY + 1`.
pub const LATENCY: usize = hash::LATENCY + (ARRAYS - 1) + array::OMEGA_LATENCY + 1;
/// Clocks from `rd_addr{i}` to `rd_data{i}`.
pub const READ_LATENCY: usize = array::READ_LATENCY;
/// Mode delay line: the mode of a packet is needed by array `i` at cycle `4 + i`.
const MODE_DELAY: usize = hash::LATENCY + ARRAYS;
/// Length of the mode delay line.
const MODE_TAPS: usize = MODE_DELAY + 1;
/// Taps of the bank delay line: array `i` takes the bank at its s0, cycle `2 + i`.
pub(crate) const BANK_TAPS: usize = hash::LATENCY + ARRAYS - 1;

/// The TowerSketch pipeline of `B` banks (see the module docs).
#[derive(LogicBlock)]
pub struct TowerPipeline<
    const W0: usize,
    const A0: usize,
    const W1: usize,
    const A1: usize,
    const W2: usize,
    const A2: usize,
    const B: usize,
> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub key: Signal<In, Bits<KEY_BITS>>,
    pub key_valid: Signal<In, Bit>,
    pub acu: Signal<In, Bit>,
    pub bank: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    pub packets: Signal<Out, Bits<32>>,
    pub idle: Signal<Out, Bit>,
    pub done: Signal<Out, Bit>,
    pub estimate_inf: Signal<Out, Bit>,
    pub estimate: Signal<Out, Bits<32>>,
    pub rd_bank: Signal<In, Bit>,
    pub rd_addr0: Signal<In, Bits<A0>>,
    pub rd_data0: Signal<Out, Bits<W0>>,
    pub rd_addr1: Signal<In, Bits<A1>>,
    pub rd_data1: Signal<Out, Bits<W1>>,
    pub rd_addr2: Signal<In, Bits<A2>>,
    pub rd_data2: Signal<Out, Bits<W2>>,
    pub clr: Signal<In, Bit>,
    pub clr_bank: Signal<In, Bit>,
    pub clr_addr0: Signal<In, Bits<A0>>,
    pub clr_addr1: Signal<In, Bits<A1>>,
    pub clr_addr2: Signal<In, Bits<A2>>,
    front: HashFront<A0, A1, A2>,
    a0: CounterArray<W0, A0, B>,
    a1: CounterArray<W1, A1, B>,
    a2: CounterArray<W2, A2, B>,
    mode: [DFF<Bit>; MODE_TAPS],
    // bank delay line: tap j holds the bank of the packet that entered j + 1 clocks ago
    bk: [DFF<Bit>; BANK_TAPS],
    count: DFF<Bits<32>>,
    one: Constant<Bits<32>>,
    // minimum chain (module docs, Estimate): m1 = array 0's new counter, m2 = min with array 1's
    m1_inf: DFF<Bit>,
    m1: DFF<Bits<32>>,
    m2_inf: DFF<Bit>,
    m2: DFF<Bits<32>>,
    // the chain's min takes array 1's (into m2) or array 2's (into estimate) value
    take1: Signal<Local, Bit>,
    take2: Signal<Local, Bit>,
}

/// The board's pipeline, one bank (block `tower`): SketchINT's FPGA geometry (8/16/32-bit
/// counters, 2^16/2^15/2^14) as the named constants of [`crate::nic`].
pub type TowerFpga = TowerPipeline<TOWER_W0, TOWER_A0, TOWER_W1, TOWER_A1, TOWER_W2, TOWER_A2, ONE_BANK>;

impl<
        const W0: usize,
        const A0: usize,
        const W1: usize,
        const A1: usize,
        const W2: usize,
        const A2: usize,
        const B: usize,
    > TowerPipeline<W0, A0, W1, A1, W2, A2, B>
{
    /// The pipeline for `geometry`, which must have 3 arrays of exactly these widths and
    /// power-of-two depths; the hashes are the geometry's.
    pub fn new(geometry: &TowerGeometry) -> Result<Self, String> {
        geometry.validate().map_err(|e| e.to_string())?;
        let want = [(W0, A0), (W1, A1), (W2, A2)];
        if geometry.arrays.len() != ARRAYS {
            return Err(format!("the pipeline has {ARRAYS} arrays, the geometry {}", geometry.arrays.len()));
        }
        for (i, (a, &(w, ab))) in geometry.arrays.iter().zip(&want).enumerate() {
            if a.width as usize != w || a.depth as u64 != 1u64 << ab {
                return Err(format!(
                    "array {i}: geometry has {} x {}-bit counters, the pipeline 2^{ab} x {w}-bit",
                    a.depth, a.width
                ));
            }
        }
        Ok(TowerPipeline {
            clock: Default::default(),
            reset: Default::default(),
            key: Default::default(),
            key_valid: Default::default(),
            acu: Default::default(),
            bank: Default::default(),
            in_ready: Default::default(),
            packets: Default::default(),
            idle: Default::default(),
            done: Default::default(),
            estimate_inf: Default::default(),
            estimate: Default::default(),
            rd_bank: Default::default(),
            rd_addr0: Default::default(),
            rd_data0: Default::default(),
            rd_addr1: Default::default(),
            rd_data1: Default::default(),
            rd_addr2: Default::default(),
            rd_data2: Default::default(),
            clr: Default::default(),
            clr_bank: Default::default(),
            clr_addr0: Default::default(),
            clr_addr1: Default::default(),
            clr_addr2: Default::default(),
            front: HashFront::new([
                &geometry.arrays[0].hash,
                &geometry.arrays[1].hash,
                &geometry.arrays[2].hash,
            ]),
            a0: CounterArray::new(),
            a1: CounterArray::new(),
            a2: CounterArray::new(),
            mode: Default::default(),
            bk: Default::default(),
            count: Default::default(),
            one: Constant::new(1u64.to_bits()),
            m1_inf: Default::default(),
            m1: Default::default(),
            m2_inf: Default::default(),
            m2: Default::default(),
            take1: Default::default(),
            take2: Default::default(),
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
        const B: usize,
    > Logic for TowerPipeline<W0, A0, W1, A1, W2, A2, B>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, count, m1_inf, m1, m2_inf, m2);
        // Hash units with the indices staggered by one clock per array.
        self.front.clock.next = self.clock.val();
        self.front.reset.next = self.reset.val();
        self.front.key.next = self.key.val();
        self.front.key_valid.next = self.key_valid.val();
        // Mode delay line: mode[j] holds the mode of the packet that entered j + 1 clocks ago.
        self.mode[0].clock.next = self.clock.val();
        self.mode[0].d.next = self.acu.val();
        for j in 1..MODE_TAPS {
            self.mode[j].clock.next = self.clock.val();
            self.mode[j].d.next = self.mode[j - 1].q.val();
        }
        // Bank delay line: bk[j] holds the bank of the packet that entered j + 1 clocks ago.
        self.bk[0].clock.next = self.clock.val();
        self.bk[0].d.next = self.bank.val();
        for j in 1..BANK_TAPS {
            self.bk[j].clock.next = self.clock.val();
            self.bk[j].d.next = self.bk[j - 1].q.val();
        }
        // Array 0: omega is INF for every packet.
        self.a0.clock.next = self.clock.val();
        self.a0.reset.next = self.reset.val();
        self.a0.valid.next = self.front.valid0.val();
        self.a0.addr.next = self.front.index0.val();
        self.a0.omega_inf.next = true;
        self.a0.omega.next = 0.into();
        self.a0.bank.next = self.bk[1].q.val();
        self.a0.rd_bank.next = self.rd_bank.val();
        self.a0.rd_addr.next = self.rd_addr0.val();
        self.a0.clr.next = self.clr.val();
        self.a0.clr_bank.next = self.clr_bank.val();
        self.a0.clr_addr.next = self.clr_addr0.val();
        self.rd_data0.next = self.a0.rd_data.val();
        // Array 1: omega of array 0 in ACU mode (mode[4] = the mode of the packet at a1's s2).
        self.a1.clock.next = self.clock.val();
        self.a1.reset.next = self.reset.val();
        self.a1.valid.next = self.front.valid1.val();
        self.a1.addr.next = self.front.index1.val();
        self.a1.omega_inf.next = self.a0.omega_out_inf.val() | !self.mode[4].q.val();
        self.a1.omega.next = self.a0.omega_out.val();
        self.a1.bank.next = self.bk[2].q.val();
        self.a1.rd_bank.next = self.rd_bank.val();
        self.a1.rd_addr.next = self.rd_addr1.val();
        self.a1.clr.next = self.clr.val();
        self.a1.clr_bank.next = self.clr_bank.val();
        self.a1.clr_addr.next = self.clr_addr1.val();
        self.rd_data1.next = self.a1.rd_data.val();
        // Array 2: omega of array 1 (mode[5]).
        self.a2.clock.next = self.clock.val();
        self.a2.reset.next = self.reset.val();
        self.a2.valid.next = self.front.valid2.val();
        self.a2.addr.next = self.front.index2.val();
        self.a2.omega_inf.next = self.a1.omega_out_inf.val() | !self.mode[5].q.val();
        self.a2.omega.next = self.a1.omega_out.val();
        self.a2.bank.next = self.bk[3].q.val();
        self.a2.rd_bank.next = self.rd_bank.val();
        self.a2.rd_addr.next = self.rd_addr2.val();
        self.a2.clr.next = self.clr.val();
        self.a2.clr_bank.next = self.clr_bank.val();
        self.a2.clr_addr.next = self.clr_addr2.val();
        self.rd_data2.next = self.a2.rd_data.val();
        // Status.
        if self.reset.val() {
            self.count.d.next = 0.into();
        } else if self.a2.done.val() {
            self.count.d.next = self.count.q.val() + self.one.val();
        } else {
            self.count.d.next = self.count.q.val();
        }
        self.packets.next = self.count.q.val();
        self.in_ready.next = true;
        self.done.next = self.a2.done.val();
        // Minimum chain: each array's omega_out one clock after the previous array's, INF
        // (overflowed) never taken over a value.
        self.m1_inf.d.next = self.a0.omega_out_inf.val();
        self.m1.d.next = self.a0.omega_out.val();
        self.take1.next = self.m1_inf.q.val()
            | (!self.a1.omega_out_inf.val() & (self.a1.omega_out.val() < self.m1.q.val()));
        if self.take1.val() {
            self.m2_inf.d.next = self.a1.omega_out_inf.val();
            self.m2.d.next = self.a1.omega_out.val();
        } else {
            self.m2_inf.d.next = self.m1_inf.q.val();
            self.m2.d.next = self.m1.q.val();
        }
        self.take2.next = self.m2_inf.q.val()
            | (!self.a2.omega_out_inf.val() & (self.a2.omega_out.val() < self.m2.q.val()));
        if self.take2.val() {
            self.estimate_inf.next = self.a2.omega_out_inf.val();
            self.estimate.next = self.a2.omega_out.val();
        } else {
            self.estimate_inf.next = self.m2_inf.q.val();
            self.estimate.next = self.m2.q.val();
        }
        self.idle.next = !(self.front.busy.val()
            | self.a0.busy.val()
            | self.a0.done.val()
            | self.a1.busy.val()
            | self.a1.done.val()
            | self.a2.busy.val()
            | self.a2.done.val());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_must_match_the_generics() {
        assert!(TowerFpga::new(&TowerGeometry::sketchint_fpga()).is_ok());
        let g = TowerGeometry::from_widths_depths(&[(8, 1 << 16), (16, 1 << 15), (32, 1 << 13)]);
        let e = TowerFpga::new(&g).err().unwrap();
        assert!(e.contains("array 2"), "{e}");
        let g = TowerGeometry::from_widths_depths(&[(8, 1 << 16), (16, 1 << 15)]);
        assert!(TowerFpga::new(&g).is_err());
    }

    #[test]
    fn latency_is_hash_plus_stagger_plus_array() {
        assert_eq!(LATENCY, 8);
        assert_eq!((MODE_DELAY, BANK_TAPS), (5, 4));
    }
}
