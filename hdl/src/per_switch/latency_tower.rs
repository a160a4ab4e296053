//! `latency_tower`: SketchINT's per-switch latency tower in hardware, bit-exact with
//! `host::sketch::latency_tower::LatencyTower` (CM and ACU) for any hop order at one hop
//! per clock, in two banks.
//!
//! Three arrays (count width `WCi`, sum width `WSi`, `2^Ai` buckets: generics checked
//! against a [`LatencyTowerGeometry`] in [`LatencyTowerPipeline::new`]), each a
//! [`LatencyArray`] of `B` banks behind a [`HopFront`] (three CRC units over the 120-bit
//! hop key, indices staggered by one clock per array). The pipeline is the flow tower's
//! (`sketch::tower`) with two fields per bucket: a count omega chain (`alpha = 1`), a sum
//! omega chain (`alpha` = the hop's `units`) and, for each field, an estimate chain that
//! collects the minimum of the non-overflowed cells the hop read. Each array forwards its
//! own in-flight writes, so the estimates are those after every earlier hop.
//!
//! # Pipeline
//!
//! | cycle | what |
//! |---|---|
//! | 0 | `key`, `valid`, `units`, `mode`, `bank` enter |
//! | 2 + i | array `i` starts (s0) with the hop's bank |
//! | 4 + i | array `i` computes (s2) with `units` and the chains array `i - 1` produced |
//! | 5 + i | array `i` writes; after array 2 (cycle [`LATENCY`] - 1 = 7) `done` and the estimates |
//!
//! `in_ready` is constant 1. The mode and the bank travel with the hop (delay lines), so a
//! mode change or a bank swap takes effect between two hops and hops of both banks can be in
//! flight together (forwarding compares bank and bucket). In CM mode every array gets
//! `omega = INF`, which turns each cell's omega step into the CM step.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset of the valid pipeline (not the cells) |
//! | `key`, `valid` | in | 120, 1 | the hop key (`per_switch::switch_key`, byte 0 in bits 119:112) |
//! | `units` | in | 32 | the hop's latency in `2^latency_shift` ns units |
//! | `mode` | in | 1 | insertion mode of this hop: 0 = CM, 1 = ACU |
//! | `bank` | in | 1 | the hop's bank |
//! | `in_ready` | out | 1 | constant 1 |
//! | `done` | out | 1 | a hop's last cell is being written (one per hop, in order) |
//! | `count_inf`, `count` | out | 1, 32 | with `done`: the pair's count estimate before the hop (`inf` = every count cell overflowed) |
//! | `sum_inf`, `sum` | out | 1, 32 | with `done`: the pair's latency-sum estimate before the hop |
//! | `idle` | out | 1 | no hop in flight |
//! | `rd_bank`, `rd_addr{i}` | in | 1, `Ai` | readout bank (must hold no hop) and bucket of array `i` |
//! | `rd_count{i}`, `rd_sum{i}` | out | `WCi`, `WSi` | the bucket's two cells, [`READ_LATENCY`] clocks later |
//! | `clr`, `clr_bank`, `clr_addr{i}` | in | 1, 1, `Ai` | clear sweep: zero bucket `clr_addr{i}` of bank `clr_bank` |
//!
//! The readout gives a bucket's two cells on two ports per array (a cell select would only
//! halve a port the width of a block RAM output); the host packs them as the snapshot does
//! (count cell first).
use super::hop_hash::{self, HopFront, HOP_KEY_BITS};
use super::latency_array::{self, LatencyArray};
use crate::sketch::{BitSink, Sink, TWO_BANKS};
use rust_hdl::prelude::*;
use smartnic_contract::per_switch::LatencyTowerGeometry;

/// Arrays of this pipeline.
pub const ARRAYS: usize = 3;
/// Clocks from a hop at `key` to its write in the last array (inclusive).
pub const LATENCY: usize = hop_hash::LATENCY + (ARRAYS - 1) + latency_array::OMEGA_LATENCY + 1;
/// Clocks from `rd_addr{i}` to `rd_count{i}`/`rd_sum{i}`.
pub const READ_LATENCY: usize = latency_array::READ_LATENCY;
/// Taps of the units and mode delay lines: array `i` reads tap `3 + i` at its s2.
const STEP_TAPS: usize = hop_hash::LATENCY + ARRAYS + 1;
/// Taps of the bank delay line: array `i` reads tap `1 + i` at its s0.
const BANK_TAPS: usize = hop_hash::LATENCY + ARRAYS - 1;

/// The latency tower of `B` banks (see the module docs).
#[derive(LogicBlock)]
pub struct LatencyTowerPipeline<
    const WC0: usize,
    const WS0: usize,
    const A0: usize,
    const WC1: usize,
    const WS1: usize,
    const A1: usize,
    const WC2: usize,
    const WS2: usize,
    const A2: usize,
    const B: usize,
> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub key: Signal<In, Bits<HOP_KEY_BITS>>,
    pub valid: Signal<In, Bit>,
    pub units: Signal<In, Bits<32>>,
    pub mode: Signal<In, Bit>,
    pub bank: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    pub done: Signal<Out, Bit>,
    pub count_inf: Signal<Out, Bit>,
    pub count: Signal<Out, Bits<32>>,
    pub sum_inf: Signal<Out, Bit>,
    pub sum: Signal<Out, Bits<32>>,
    pub idle: Signal<Out, Bit>,
    pub rd_bank: Signal<In, Bit>,
    pub rd_addr0: Signal<In, Bits<A0>>,
    pub rd_count0: Signal<Out, Bits<WC0>>,
    pub rd_sum0: Signal<Out, Bits<WS0>>,
    pub rd_addr1: Signal<In, Bits<A1>>,
    pub rd_count1: Signal<Out, Bits<WC1>>,
    pub rd_sum1: Signal<Out, Bits<WS1>>,
    pub rd_addr2: Signal<In, Bits<A2>>,
    pub rd_count2: Signal<Out, Bits<WC2>>,
    pub rd_sum2: Signal<Out, Bits<WS2>>,
    pub clr: Signal<In, Bit>,
    pub clr_bank: Signal<In, Bit>,
    pub clr_addr0: Signal<In, Bits<A0>>,
    pub clr_addr1: Signal<In, Bits<A1>>,
    pub clr_addr2: Signal<In, Bits<A2>>,
    front: HopFront<A0, A1, A2>,
    a0: LatencyArray<WC0, WS0, A0, B>,
    a1: LatencyArray<WC1, WS1, A1, B>,
    a2: LatencyArray<WC2, WS2, A2, B>,
    // Delay lines: tap j holds the value of the hop that entered j + 1 clocks ago.
    units_d: [DFF<Bits<32>>; STEP_TAPS],
    mode_d: [DFF<Bit>; STEP_TAPS],
    bank_d: [DFF<Bit>; BANK_TAPS],
    // The last array's running minima: nothing follows it.
    sink_omega: [Sink<32>; 2],
    sink_omega_inf: [BitSink; 2],
}

/// The NIC's latency tower (`LatencyTowerGeometry::nic_default`: (8, 24, 2^16),
/// (16, 32, 2^16), (32, 32, 2^15)) in two banks: block `latency_tower`.
pub type LatencyTowerNic = LatencyTowerPipeline<8, 24, 16, 16, 32, 16, 32, 32, 15, TWO_BANKS>;

impl<
        const WC0: usize,
        const WS0: usize,
        const A0: usize,
        const WC1: usize,
        const WS1: usize,
        const A1: usize,
        const WC2: usize,
        const WS2: usize,
        const A2: usize,
        const B: usize,
    > LatencyTowerPipeline<WC0, WS0, A0, WC1, WS1, A1, WC2, WS2, A2, B>
{
    /// The pipeline for `geometry`: 3 arrays of exactly these cell widths and power-of-two
    /// depths; the hashes are the geometry's. The latency shift is the caller's (the
    /// pipeline takes units).
    pub fn new(geometry: &LatencyTowerGeometry) -> Result<Self, String> {
        geometry.validate().map_err(|e| e.to_string())?;
        check_shape(geometry, &[(WC0, WS0, A0), (WC1, WS1, A1), (WC2, WS2, A2)])?;
        let h = |i: usize| &geometry.arrays[i].hash;
        Ok(LatencyTowerPipeline {
            clock: Default::default(),
            reset: Default::default(),
            key: Default::default(),
            valid: Default::default(),
            units: Default::default(),
            mode: Default::default(),
            bank: Default::default(),
            in_ready: Default::default(),
            done: Default::default(),
            count_inf: Default::default(),
            count: Default::default(),
            sum_inf: Default::default(),
            sum: Default::default(),
            idle: Default::default(),
            rd_bank: Default::default(),
            rd_addr0: Default::default(),
            rd_count0: Default::default(),
            rd_sum0: Default::default(),
            rd_addr1: Default::default(),
            rd_count1: Default::default(),
            rd_sum1: Default::default(),
            rd_addr2: Default::default(),
            rd_count2: Default::default(),
            rd_sum2: Default::default(),
            clr: Default::default(),
            clr_bank: Default::default(),
            clr_addr0: Default::default(),
            clr_addr1: Default::default(),
            clr_addr2: Default::default(),
            front: HopFront::new([h(0), h(1), h(2)]),
            a0: LatencyArray::new(),
            a1: LatencyArray::new(),
            a2: LatencyArray::new(),
            units_d: Default::default(),
            mode_d: Default::default(),
            bank_d: Default::default(),
            sink_omega: Default::default(),
            sink_omega_inf: Default::default(),
        })
    }
}

/// Checks that `geometry` has one array per `(count width, sum width, address bits)` of
/// `want`, with exactly those widths and `2^bits` buckets; the error names the array.
pub fn check_shape(geometry: &LatencyTowerGeometry, want: &[(usize, usize, usize)]) -> Result<(), String> {
    if geometry.arrays.len() != want.len() {
        return Err(format!(
            "the pipeline has {} arrays, the geometry {}",
            want.len(),
            geometry.arrays.len()
        ));
    }
    for (i, (a, &(wc, ws, ab))) in geometry.arrays.iter().zip(want).enumerate() {
        if a.count_width as usize != wc || a.sum_width as usize != ws || a.depth as u64 != 1u64 << ab {
            return Err(format!(
                "array {i}: geometry has {} buckets of {}-bit count and {}-bit sum cells, the pipeline \
                 2^{ab} buckets of {wc}-bit count and {ws}-bit sum cells",
                a.depth, a.count_width, a.sum_width
            ));
        }
    }
    Ok(())
}

impl<
        const WC0: usize,
        const WS0: usize,
        const A0: usize,
        const WC1: usize,
        const WS1: usize,
        const A1: usize,
        const WC2: usize,
        const WS2: usize,
        const A2: usize,
        const B: usize,
    > Logic for LatencyTowerPipeline<WC0, WS0, A0, WC1, WS1, A1, WC2, WS2, A2, B>
{
    #[hdl_gen]
    fn update(&mut self) {
        self.front.clock.next = self.clock.val();
        self.front.reset.next = self.reset.val();
        self.front.key.next = self.key.val();
        self.front.key_valid.next = self.valid.val();
        // Delay lines: units and mode to each array's s2, bank to each array's s0.
        self.units_d[0].clock.next = self.clock.val();
        self.units_d[0].d.next = self.units.val();
        self.mode_d[0].clock.next = self.clock.val();
        self.mode_d[0].d.next = self.mode.val();
        for j in 1..STEP_TAPS {
            self.units_d[j].clock.next = self.clock.val();
            self.units_d[j].d.next = self.units_d[j - 1].q.val();
            self.mode_d[j].clock.next = self.clock.val();
            self.mode_d[j].d.next = self.mode_d[j - 1].q.val();
        }
        self.bank_d[0].clock.next = self.clock.val();
        self.bank_d[0].d.next = self.bank.val();
        for j in 1..BANK_TAPS {
            self.bank_d[j].clock.next = self.clock.val();
            self.bank_d[j].d.next = self.bank_d[j - 1].q.val();
        }
        // Array 0: both chains start at INF.
        self.a0.clock.next = self.clock.val();
        self.a0.reset.next = self.reset.val();
        self.a0.valid.next = self.front.valid0.val();
        self.a0.addr.next = self.front.index0.val();
        self.a0.bank.next = self.bank_d[1].q.val();
        self.a0.alpha.next = self.units_d[3].q.val();
        self.a0.c_omega_inf.next = true;
        self.a0.c_omega.next = 0.into();
        self.a0.c_est_inf.next = true;
        self.a0.c_est.next = 0.into();
        self.a0.s_omega_inf.next = true;
        self.a0.s_omega.next = 0.into();
        self.a0.s_est_inf.next = true;
        self.a0.s_est.next = 0.into();
        self.a0.rd_bank.next = self.rd_bank.val();
        self.a0.rd_addr.next = self.rd_addr0.val();
        self.a0.clr.next = self.clr.val();
        self.a0.clr_bank.next = self.clr_bank.val();
        self.a0.clr_addr.next = self.clr_addr0.val();
        self.rd_count0.next = self.a0.rd_count.val();
        self.rd_sum0.next = self.a0.rd_sum.val();
        // Array 1: array 0's chains (omega only in ACU mode: mode_d[4] is the hop at a1's s2).
        self.a1.clock.next = self.clock.val();
        self.a1.reset.next = self.reset.val();
        self.a1.valid.next = self.front.valid1.val();
        self.a1.addr.next = self.front.index1.val();
        self.a1.bank.next = self.bank_d[2].q.val();
        self.a1.alpha.next = self.units_d[4].q.val();
        self.a1.c_omega_inf.next = self.a0.c_omega_out_inf.val() | !self.mode_d[4].q.val();
        self.a1.c_omega.next = self.a0.c_omega_out.val();
        self.a1.c_est_inf.next = self.a0.c_est_out_inf.val();
        self.a1.c_est.next = self.a0.c_est_out.val();
        self.a1.s_omega_inf.next = self.a0.s_omega_out_inf.val() | !self.mode_d[4].q.val();
        self.a1.s_omega.next = self.a0.s_omega_out.val();
        self.a1.s_est_inf.next = self.a0.s_est_out_inf.val();
        self.a1.s_est.next = self.a0.s_est_out.val();
        self.a1.rd_bank.next = self.rd_bank.val();
        self.a1.rd_addr.next = self.rd_addr1.val();
        self.a1.clr.next = self.clr.val();
        self.a1.clr_bank.next = self.clr_bank.val();
        self.a1.clr_addr.next = self.clr_addr1.val();
        self.rd_count1.next = self.a1.rd_count.val();
        self.rd_sum1.next = self.a1.rd_sum.val();
        // Array 2: array 1's chains (mode_d[5]).
        self.a2.clock.next = self.clock.val();
        self.a2.reset.next = self.reset.val();
        self.a2.valid.next = self.front.valid2.val();
        self.a2.addr.next = self.front.index2.val();
        self.a2.bank.next = self.bank_d[3].q.val();
        self.a2.alpha.next = self.units_d[5].q.val();
        self.a2.c_omega_inf.next = self.a1.c_omega_out_inf.val() | !self.mode_d[5].q.val();
        self.a2.c_omega.next = self.a1.c_omega_out.val();
        self.a2.c_est_inf.next = self.a1.c_est_out_inf.val();
        self.a2.c_est.next = self.a1.c_est_out.val();
        self.a2.s_omega_inf.next = self.a1.s_omega_out_inf.val() | !self.mode_d[5].q.val();
        self.a2.s_omega.next = self.a1.s_omega_out.val();
        self.a2.s_est_inf.next = self.a1.s_est_out_inf.val();
        self.a2.s_est.next = self.a1.s_est_out.val();
        self.a2.rd_bank.next = self.rd_bank.val();
        self.a2.rd_addr.next = self.rd_addr2.val();
        self.a2.clr.next = self.clr.val();
        self.a2.clr_bank.next = self.clr_bank.val();
        self.a2.clr_addr.next = self.clr_addr2.val();
        self.rd_count2.next = self.a2.rd_count.val();
        self.rd_sum2.next = self.a2.rd_sum.val();
        self.sink_omega[0].x.next = self.a2.c_omega_out.val();
        self.sink_omega[1].x.next = self.a2.s_omega_out.val();
        self.sink_omega_inf[0].x.next = self.a2.c_omega_out_inf.val();
        self.sink_omega_inf[1].x.next = self.a2.s_omega_out_inf.val();
        // Outputs: the estimates after the last array, with its write.
        self.in_ready.next = true;
        self.done.next = self.a2.done.val();
        self.count_inf.next = self.a2.c_est_out_inf.val();
        self.count.next = self.a2.c_est_out.val();
        self.sum_inf.next = self.a2.s_est_out_inf.val();
        self.sum.next = self.a2.s_est_out.val();
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
    fn nic_geometry_matches_the_generics() {
        assert!(LatencyTowerNic::new(&LatencyTowerGeometry::nic_default()).is_ok());
        let g =
            LatencyTowerGeometry::from_cells(&[(8, 24, 1 << 16), (16, 32, 1 << 16), (32, 24, 1 << 15)], 4);
        let e = LatencyTowerNic::new(&g).err().unwrap();
        assert!(e.contains("array 2") && e.contains("24-bit sum"), "{e}");
        let g = LatencyTowerGeometry::from_cells(&[(8, 24, 1 << 16), (16, 32, 1 << 16)], 4);
        assert!(LatencyTowerNic::new(&g).err().unwrap().contains("3 arrays, the geometry 2"));
        let g =
            LatencyTowerGeometry::from_cells(&[(8, 24, 1 << 16), (16, 32, 1 << 15), (32, 32, 1 << 15)], 4);
        assert!(LatencyTowerNic::new(&g).err().unwrap().contains("array 1"));
    }

    #[test]
    fn latency_is_hash_plus_stagger_plus_array() {
        assert_eq!(LATENCY, 8);
        assert_eq!((STEP_TAPS, BANK_TAPS), (6, 4));
    }
}
