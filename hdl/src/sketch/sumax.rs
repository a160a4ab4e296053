//! `sumax`: the SuMax pipeline (LightGuardian section 4), bit-exact with
//! `host::sketch::sumax::SuMax::insert_at` for any packet order at one packet per clock.
//!
//! Three arrays (`d = 3`) of `2^A` buckets in `B` banks; a bucket is a `SW`-bit flow-size cell, `DC`
//! delay cells of `DW` bits and two `TW`-bit max cells (max inter-arrival, last arrival),
//! in the contract's `sumax_cell` order. The generics are checked against a
//! [`SuMaxGeometry`] in [`SuMaxPipeline::new`]; [`SuMaxNic`] (one bank, block `sumax`) and
//! [`SuMaxBankedNic`] (two banks, the core's) are the board's `SuMaxGeometry::nic_default()`
//! (32-bit size, 8 x 16-bit delay cells, 32-bit time cells, 2^13 buckets). Array `i` is indexed by a [`crate::hash::HashUnit`] of the geometry's hash `i` (index =
//! top `A` bits, `hash::index`).
//!
//! # Pipeline
//!
//! | cycle | what |
//! |---|---|
//! | 0 | `key`, `key_valid`, `t`, `bin` (registered upstream) enter: key into the three hash units, `t`/`bin` into a delay line |
//! | 2 + i | array `i` reads its bucket (s0; arrays staggered by one clock as in `tower`) |
//! | 3 + i | array `i` takes `t` and `bin` (bin decoded to a one-hot delay-lane select) |
//! | 4 + i | array `i` computes with the size and delay omegas of array `i - 1` (registered) |
//! | 5 + i | array `i` writes every cell of the bucket; its omegas go to array `i + 1` |
//!
//! Per array ([`super::sumax_array`]): the size cell and each delay cell are a
//! [`super::array::CounterArray`] lane (omega step with `alpha = 1`, sticky overflow
//! marker, 3-deep forwarding); only the lane of the packet's bin gets the delay omega, the
//! others keep their value. The max cells are a [`super::sumax_time::TimeCells`] lane
//! (`interval = max(interval, gap)` by the contract's `interval::gap` rule, `last = t`) with the
//! same forwarding. `t` is the `time_of`-converted time; `bin` the delay cell index
//! (`SuMax::delay_bin`, the `delay_bin` block upstream). A `bin >= DC` changes no delay cell
//! (the software would index past the delay cells; `delay_bin` never produces one).
//!
//! Latency: [`LATENCY`] = 8 clocks from `key` to the last bucket write; `in_ready` is
//! constant 1.
//!
//! # Banks
//!
//! With [`TWO_BANKS`](super::TWO_BANKS) every cell has two RAMs for the epoch scheme: the
//! packet's `bank` (given with its key at cycle 0, the epoch engine's active bank at
//! ingress) travels beside its bucket index (a 4-flop line, array `i` sees it at its s0
//! `2 + i`), the forwarding compares (bank, bucket). The other bank's read ports serve the
//! readout (`rd_bank`, `rd_addr`, `rd_cell`, any time the bank holds no packet) and its
//! write ports the clear sweep (`clr`, `clr_bank`, `clr_addr`: zero every cell of that
//! bucket). There is no engine inside: the core's governs every sketch; its drain must
//! cover this pipeline's [`LATENCY`] plus any delay before `key`, its sweep `2^A` clocks.
//! With [`ONE_BANK`](super::ONE_BANK) those inputs are unused (tie them low).
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset of the valid pipeline and `packets` (not the cells) |
//! | `key`, `key_valid` | in | 104, 1 | flow key (as the `hash` block) |
//! | `t` | in | `TW` | the packet's time cell value (`SuMax::time_of`) |
//! | `bin` | in | 8 | the packet's delay bin (`SuMax::delay_bin`) |
//! | `bank` | in | 1 | the packet's bank, with `key` (two banks only) |
//! | `in_ready` | out | 1 | constant 1 |
//! | `packets` | out | 32 | packets fully applied since reset (wraps) |
//! | `idle` | out | 1 | no packet in flight (readout may start) |
//! | `done` | out | 1 | a packet's last write is happening (one per packet, in order) |
//! | `size_inf`, `size` | out | 1, 32 | with `done`: the size running minimum after array 2 = `SuMax::query(key).size` after this insert (`size_inf`: every size cell overflowed) |
//! | `delay_inf`, `delay` | out | 1, 32 | with `done`: the same for the packet's delay cell (`query(key).delay_hist[bin]`) |
//! | `rd_bank` | in | 1 | readout bank (two banks only) |
//! | `rd_addr`, `rd_cell` | in | `A`, 8 | readout bucket and cell index (all arrays; ignored by an array while a packet is at its s0) |
//! | `rd_data{i}` | out | 32 | array `i`'s cell, zero-extended, [`READ_LATENCY`] clocks later |
//! | `clr`, `clr_bank`, `clr_addr` | in | 1, 1, `A` | clear sweep (two banks only) |
use super::hash_front::HashFront;
use super::sumax_array::{self, SuMaxArray};
use super::{ONE_BANK, TWO_BANKS};
use crate::hash::{self, KEY_BITS};
use crate::nic::{SUMAX_A, SUMAX_DC, SUMAX_DW, SUMAX_SW, SUMAX_TW};
use rust_hdl::prelude::*;
use smartnic_contract::geometry::SuMaxGeometry;

/// Number of arrays of this pipeline.
pub const ARRAYS: usize = 3;
/// Clocks from a packet at `key` to its write in the last array (inclusive).
pub const LATENCY: usize = hash::LATENCY + (ARRAYS - 1) + sumax_array::OMEGA_LATENCY + 1;
/// Clocks from `rd_addr`/`rd_cell` to `rd_data{i}`.
pub const READ_LATENCY: usize = sumax_array::READ_LATENCY;
/// Taps of the `t`/`bin` delay line: array `i` takes them at cycle `3 + i`.
const TB_TAPS: usize = hash::LATENCY + ARRAYS;
/// Taps of the bank delay line: array `i` takes the bank at its s0, cycle `2 + i`.
const BANK_TAPS: usize = hash::LATENCY + ARRAYS - 1;

/// The SuMax pipeline of `B` banks (see the module docs).
#[derive(LogicBlock)]
pub struct SuMaxPipeline<
    const SW: usize,
    const DW: usize,
    const DC: usize,
    const TW: usize,
    const A: usize,
    const B: usize,
> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub key: Signal<In, Bits<KEY_BITS>>,
    pub key_valid: Signal<In, Bit>,
    pub bank: Signal<In, Bit>,
    pub t: Signal<In, Bits<TW>>,
    pub bin: Signal<In, Bits<8>>,
    pub in_ready: Signal<Out, Bit>,
    pub packets: Signal<Out, Bits<32>>,
    pub idle: Signal<Out, Bit>,
    pub done: Signal<Out, Bit>,
    pub size_inf: Signal<Out, Bit>,
    pub size: Signal<Out, Bits<32>>,
    pub delay_inf: Signal<Out, Bit>,
    pub delay: Signal<Out, Bits<32>>,
    pub rd_bank: Signal<In, Bit>,
    pub rd_addr: Signal<In, Bits<A>>,
    pub rd_cell: Signal<In, Bits<8>>,
    pub rd_data0: Signal<Out, Bits<32>>,
    pub rd_data1: Signal<Out, Bits<32>>,
    pub rd_data2: Signal<Out, Bits<32>>,
    pub clr: Signal<In, Bit>,
    pub clr_bank: Signal<In, Bit>,
    pub clr_addr: Signal<In, Bits<A>>,
    front: HashFront<A, A, A>,
    a0: SuMaxArray<SW, DW, DC, TW, A, B>,
    a1: SuMaxArray<SW, DW, DC, TW, A, B>,
    a2: SuMaxArray<SW, DW, DC, TW, A, B>,
    // t / bin delay line: tap j holds the values that entered j + 1 clocks ago
    t_d: [DFF<Bits<TW>>; TB_TAPS],
    b_d: [DFF<Bits<8>>; TB_TAPS],
    // bank delay line: tap j holds the bank of the packet that entered j + 1 clocks ago
    bk: [DFF<Bit>; BANK_TAPS],
    count: DFF<Bits<32>>,
    one: Constant<Bits<32>>,
}

/// The board's pipeline, one bank (block `sumax`): `SuMaxGeometry::nic_default()` (32-bit
/// size, 8 x 16-bit delay cells, 32-bit time cells, 2^13 buckets per array), as the named
/// constants of [`crate::nic`].
pub type SuMaxNic = SuMaxPipeline<SUMAX_SW, SUMAX_DW, SUMAX_DC, SUMAX_TW, SUMAX_A, ONE_BANK>;
/// The board's pipeline, two banks (the core's).
pub type SuMaxBankedNic = SuMaxPipeline<SUMAX_SW, SUMAX_DW, SUMAX_DC, SUMAX_TW, SUMAX_A, TWO_BANKS>;

impl<const SW: usize, const DW: usize, const DC: usize, const TW: usize, const A: usize, const B: usize>
    SuMaxPipeline<SW, DW, DC, TW, A, B>
{
    /// The pipeline for `geometry`, which must have 3 arrays, `2^A` buckets and exactly
    /// these cell widths; the hashes are the geometry's.
    pub fn new(geometry: &SuMaxGeometry) -> Result<Self, String> {
        geometry.validate().map_err(|e| e.to_string())?;
        if geometry.hashes.len() != ARRAYS {
            return Err(format!("the pipeline has {ARRAYS} arrays, the geometry {}", geometry.hashes.len()));
        }
        let want = (SW, DW, DC, TW, 1u64 << A);
        let got = (
            geometry.size_width as usize,
            geometry.delay_width as usize,
            geometry.delay_cells as usize,
            geometry.time_width as usize,
            geometry.depth as u64,
        );
        if want != got {
            return Err(format!(
                "geometry (size, delay width, delay cells, time width, depth) = {got:?}, the pipeline {want:?}"
            ));
        }
        Ok(SuMaxPipeline {
            clock: Default::default(),
            reset: Default::default(),
            key: Default::default(),
            key_valid: Default::default(),
            bank: Default::default(),
            t: Default::default(),
            bin: Default::default(),
            in_ready: Default::default(),
            packets: Default::default(),
            idle: Default::default(),
            done: Default::default(),
            size_inf: Default::default(),
            size: Default::default(),
            delay_inf: Default::default(),
            delay: Default::default(),
            rd_bank: Default::default(),
            rd_addr: Default::default(),
            rd_cell: Default::default(),
            rd_data0: Default::default(),
            rd_data1: Default::default(),
            rd_data2: Default::default(),
            clr: Default::default(),
            clr_bank: Default::default(),
            clr_addr: Default::default(),
            front: HashFront::new([&geometry.hashes[0], &geometry.hashes[1], &geometry.hashes[2]]),
            a0: SuMaxArray::new(),
            a1: SuMaxArray::new(),
            a2: SuMaxArray::new(),
            t_d: Default::default(),
            b_d: Default::default(),
            bk: Default::default(),
            count: Default::default(),
            one: Constant::new(1u64.to_bits()),
        })
    }
}

impl<const SW: usize, const DW: usize, const DC: usize, const TW: usize, const A: usize, const B: usize> Logic
    for SuMaxPipeline<SW, DW, DC, TW, A, B>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, count);
        // Hash units with the indices staggered by one clock per array.
        self.front.clock.next = self.clock.val();
        self.front.reset.next = self.reset.val();
        self.front.key.next = self.key.val();
        self.front.key_valid.next = self.key_valid.val();
        // t / bin delay line.
        self.t_d[0].clock.next = self.clock.val();
        self.b_d[0].clock.next = self.clock.val();
        self.t_d[0].d.next = self.t.val();
        self.b_d[0].d.next = self.bin.val();
        for j in 1..TB_TAPS {
            self.t_d[j].clock.next = self.clock.val();
            self.b_d[j].clock.next = self.clock.val();
            self.t_d[j].d.next = self.t_d[j - 1].q.val();
            self.b_d[j].d.next = self.b_d[j - 1].q.val();
        }
        self.bk[0].clock.next = self.clock.val();
        self.bk[0].d.next = self.bank.val();
        for j in 1..BANK_TAPS {
            self.bk[j].clock.next = self.clock.val();
            self.bk[j].d.next = self.bk[j - 1].q.val();
        }
        // Array 0: both omegas INF.
        self.a0.clock.next = self.clock.val();
        self.a0.reset.next = self.reset.val();
        self.a0.valid.next = self.front.valid0.val();
        self.a0.bank.next = self.bk[1].q.val();
        self.a0.rd_bank.next = self.rd_bank.val();
        self.a0.clr.next = self.clr.val();
        self.a0.clr_bank.next = self.clr_bank.val();
        self.a0.clr_addr.next = self.clr_addr.val();
        self.a0.addr.next = self.front.index0.val();
        self.a0.t.next = self.t_d[2].q.val();
        self.a0.bin.next = self.b_d[2].q.val();
        self.a0.omega_size_inf.next = true;
        self.a0.omega_size.next = 0.into();
        self.a0.omega_delay_inf.next = true;
        self.a0.omega_delay.next = 0.into();
        self.a0.rd_addr.next = self.rd_addr.val();
        self.a0.rd_cell.next = self.rd_cell.val();
        self.rd_data0.next = self.a0.rd_data.val();
        // Array 1.
        self.a1.clock.next = self.clock.val();
        self.a1.reset.next = self.reset.val();
        self.a1.valid.next = self.front.valid1.val();
        self.a1.bank.next = self.bk[2].q.val();
        self.a1.rd_bank.next = self.rd_bank.val();
        self.a1.clr.next = self.clr.val();
        self.a1.clr_bank.next = self.clr_bank.val();
        self.a1.clr_addr.next = self.clr_addr.val();
        self.a1.addr.next = self.front.index1.val();
        self.a1.t.next = self.t_d[3].q.val();
        self.a1.bin.next = self.b_d[3].q.val();
        self.a1.omega_size_inf.next = self.a0.omega_size_out_inf.val();
        self.a1.omega_size.next = self.a0.omega_size_out.val();
        self.a1.omega_delay_inf.next = self.a0.omega_delay_out_inf.val();
        self.a1.omega_delay.next = self.a0.omega_delay_out.val();
        self.a1.rd_addr.next = self.rd_addr.val();
        self.a1.rd_cell.next = self.rd_cell.val();
        self.rd_data1.next = self.a1.rd_data.val();
        // Array 2.
        self.a2.clock.next = self.clock.val();
        self.a2.reset.next = self.reset.val();
        self.a2.valid.next = self.front.valid2.val();
        self.a2.bank.next = self.bk[3].q.val();
        self.a2.rd_bank.next = self.rd_bank.val();
        self.a2.clr.next = self.clr.val();
        self.a2.clr_bank.next = self.clr_bank.val();
        self.a2.clr_addr.next = self.clr_addr.val();
        self.a2.addr.next = self.front.index2.val();
        self.a2.t.next = self.t_d[4].q.val();
        self.a2.bin.next = self.b_d[4].q.val();
        self.a2.omega_size_inf.next = self.a1.omega_size_out_inf.val();
        self.a2.omega_size.next = self.a1.omega_size_out.val();
        self.a2.omega_delay_inf.next = self.a1.omega_delay_out_inf.val();
        self.a2.omega_delay.next = self.a1.omega_delay_out.val();
        self.a2.rd_addr.next = self.rd_addr.val();
        self.a2.rd_cell.next = self.rd_cell.val();
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
        self.size_inf.next = self.a2.omega_size_out_inf.val();
        self.size.next = self.a2.omega_size_out.val();
        self.delay_inf.next = self.a2.omega_delay_out_inf.val();
        self.delay.next = self.a2.omega_delay_out.val();
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
        assert!(SuMaxNic::new(&SuMaxGeometry::nic_default()).is_ok());
        let e = SuMaxNic::new(&SuMaxGeometry::with_depth(3, 1 << 12)).err().unwrap();
        assert!(e.contains("depth") || e.contains("4096"), "{e}");
        let mut g = SuMaxGeometry::nic_default();
        g.delay_width = 8;
        assert!(SuMaxNic::new(&g).is_err());
        assert!(SuMaxNic::new(&SuMaxGeometry::with_depth(2, 1 << 13)).is_err());
    }

    #[test]
    fn latency_matches_tower() {
        assert_eq!((LATENCY, READ_LATENCY, TB_TAPS, BANK_TAPS), (8, 3, 5, 4));
    }

    /// Both bank counts build and pass rust-hdl's connection checks (on a big stack: the
    /// structs are large).
    #[test]
    fn both_bank_counts_build_and_check() {
        crate::core_top::big_stack(|| {
            assert!(SuMaxBankedNic::new(&SuMaxGeometry::with_depth(3, 1 << 12)).is_err());
            let mut p = Box::new(SuMaxNic::new(&SuMaxGeometry::nic_default()).unwrap());
            p.connect_all();
            assert!(check_all(&*p).is_ok());
            let mut p = Box::new(SuMaxBankedNic::new(&SuMaxGeometry::nic_default()).unwrap());
            p.connect_all();
            assert!(check_all(&*p).is_ok());
        });
    }
}
