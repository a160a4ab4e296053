//! Per-switch telemetry (SketchINT section V-B): what the NIC keeps per (flow, switch) and
//! per heavy flow, defined once for the hardware, its models and the host's tasks.
//!
//! # The hop key
//! Every hop of a packet's INT stack is one insertion into the latency tower, keyed by the
//! 15 bytes `switch ID (u16, big-endian) ++ flow key (13 bytes)` ([`switch_key`]). The
//! switch ID comes first, as in the shim's hop record, so the hash unit's input is the
//! hop record's first field followed by the key the flow sketches already hash.
//!
//! # The latency tower ([`LatencyTowerGeometry`])
//! SketchINT's extended TowerSketch: each bucket holds a packet **count** cell and a
//! latency **sum** cell, arrays ordered from narrow to wide cells (the tower shape). Both
//! cells follow the flow tower's rules, each on its own: the overflow marker `2^w - 1`
//! (never changes, skipped by queries), Count-Min (every non-overflowed cell grows) or the
//! approximate conservative update with a running minimum carried from array 0 to array
//! d-1 (one omega for the counts, alpha = 1; another for the sums, alpha = the hop's
//! latency). A field's estimate is the minimum of its non-overflowed cells, so the
//! average latency of a (flow, switch) pair is `sum / count` of the two minima.
//!
//! Latencies are stored in units of `2^latency_shift` ns, rounded to the nearest unit
//! ([`LatencyTowerGeometry::units`]): 16 ns units let a 32-bit sum hold 68 s of latency,
//! so the widest array does not overflow before its 32-bit count does on any realistic
//! flow, and the rounding (at most 8 ns per hop) is unbiased.
//!
//! # The inflated-latency rule ([`InflateRule`])
//! A hop is *inflated* when its latency exceeds `Delta_l` times the current average of its
//! (flow, switch) pair: `units * count > Delta_l * sum`, with `count` and `sum` the pair's
//! estimates *before* this hop is inserted (an outlier does not raise its own baseline).
//! The NIC compares in the log domain with the LUT log2 of [`crate::lut`] (no divider or
//! multiplier in the hot path):
//! `log2_fx(units) + log2_fx(count) > log2_fx(sum) + threshold`, where `threshold` is the
//! fixed-point log2 of `Delta_l` ([`InflateRule::from_ratio_x256`]). Edge cases: no
//! estimate yet (count 0, or every count or sum cell overflowed) is never inflated; a hop
//! of 0 units is never inflated; a positive hop over an average of 0 always is.
//!
//! # The flow-key table ([`KeyTableGeometry`])
//! SketchINT's "tiny hash table" of heavy flows: when a packet leaves the flow tower with
//! an estimate above the table threshold (a register, Delta_h; "heavy" is strictly
//! larger, `n > Delta`, everywhere in the project), its key and its path
//! (the switch IDs of its INT stack, in path order) enter a d-way table unless the key is
//! already there. A key whose every way is taken by other keys is counted as a miss and
//! not stored. The table belongs to the epoch: one per bank, cleared with it. Per-switch
//! heavy hitters and heavy changes (and the plain heavy hitters of `report`) then come
//! from the NIC's own snapshot, with no candidate list from the user. One table with the
//! lower of the two thresholds serves both tasks (SketchINT uses Delta_h = 1500 for heavy
//! hitters and Delta_c = 750 for heavy changes; a flow that changed by 750 must be in the
//! table even if it never reached 1500), so the NIC default is 750.

use crate::geometry::{marker, validate_hash, GeometryError, MAX_WIDTH};
use crate::hash::{member, CrcParams};
use crate::key::{FlowKey, KEY_LEN};
use crate::lut::{log2_fx, Log2Params};
use crate::shim::MAX_HOPS;

/// Bytes of a hop key: switch ID + flow key.
pub const SWITCH_KEY_LEN: usize = 2 + KEY_LEN;

/// Byte ranges of the hop key.
pub mod field {
    use core::ops::Range;
    pub const SWITCH_ID: Range<usize> = 0..2;
    pub const FLOW: Range<usize> = 2..super::SWITCH_KEY_LEN;
}

/// The hop key of `flow` at switch `switch_id` (see the module docs).
pub fn switch_key(switch_id: u16, flow: &FlowKey) -> [u8; SWITCH_KEY_LEN] {
    let mut k = [0u8; SWITCH_KEY_LEN];
    k[field::SWITCH_ID].copy_from_slice(&switch_id.to_be_bytes());
    k[field::FLOW].copy_from_slice(flow.as_bytes());
    k
}

/// One array of the latency tower: `depth` buckets of a count cell and a sum cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LatencyArray {
    /// Width of the packet-count cell, 1..=32 bits.
    pub count_width: u8,
    /// Width of the latency-sum cell, 1..=32 bits.
    pub sum_width: u8,
    pub depth: u32,
    pub hash: CrcParams,
}

impl LatencyArray {
    /// Bits of one bucket: the count cell (bits `0..count_width`) then the sum cell.
    pub fn bucket_bits(&self) -> u64 {
        self.count_width as u64 + self.sum_width as u64
    }
    pub fn memory_bits(&self) -> u64 {
        self.bucket_bits() * self.depth as u64
    }
    pub fn count_marker(&self) -> u32 {
        marker(self.count_width)
    }
    pub fn sum_marker(&self) -> u32 {
        marker(self.sum_width)
    }
}

/// SketchINT's extended TowerSketch for per-flow per-switch latency (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LatencyTowerGeometry {
    pub arrays: Vec<LatencyArray>,
    /// Sum cells count units of `2^latency_shift` ns.
    pub latency_shift: u8,
}

/// Largest latency shift: a unit of 2^20 ns (about 1 ms) is already coarser than any
/// switch's queueing delay worth measuring.
pub const MAX_LATENCY_SHIFT: u8 = 20;

impl LatencyTowerGeometry {
    /// The NIC default: d = 3 with SketchINT's 8/16/32-bit counts (section VII-C), sum
    /// cells of 24/32/32 bits in 16 ns units, 2^16/2^16/2^15 buckets (896 KiB a bank).
    ///
    /// The size is the smallest power-of-two layout whose inflated-latency F1 on the lab's
    /// congested 1M-packet run reaches SketchINT's 0.976 (Fig. 7, 600 KB): 0.980 here, where
    /// 352 KiB gave 0.864 and 704 KiB 0.965. No array is deeper than the flow tower's 2^16,
    /// so the epoch engine's clear sweep keeps its length.
    pub fn nic_default() -> Self {
        Self::from_cells(&[(8, 24, 1 << 16), (16, 32, 1 << 16), (32, 32, 1 << 15)], 4)
    }

    /// Arrays from `(count_width, sum_width, depth)`, hashed by family members 0, 1, ...
    pub fn from_cells(cells: &[(u8, u8, u32)], latency_shift: u8) -> Self {
        let arrays = cells
            .iter()
            .enumerate()
            .map(|(i, &(count_width, sum_width, depth))| LatencyArray {
                count_width,
                sum_width,
                depth,
                hash: member(i),
            })
            .collect();
        LatencyTowerGeometry { arrays, latency_shift }
    }

    /// The default cell widths with every array given `total_bytes / d` of memory (the
    /// tower's equal-memory rule), for memory sweeps.
    pub fn equal_memory(total_bytes: u64) -> Self {
        let mut g = Self::nic_default();
        let per_array = total_bytes * 8 / g.arrays.len() as u64;
        for a in &mut g.arrays {
            a.depth = (per_array / a.bucket_bits()).max(1) as u32;
        }
        g
    }

    pub fn validate(&self) -> Result<(), GeometryError> {
        if self.arrays.is_empty() {
            return Err(GeometryError::NoArrays);
        }
        for (i, a) in self.arrays.iter().enumerate() {
            for (field, width) in
                [("latency tower count_width", a.count_width), ("latency tower sum_width", a.sum_width)]
            {
                if width == 0 || width > MAX_WIDTH {
                    return Err(GeometryError::CellWidth { field, width });
                }
            }
            if a.depth == 0 {
                return Err(GeometryError::Depth { array: i });
            }
            validate_hash(i, &a.hash)?;
        }
        if self.latency_shift > MAX_LATENCY_SHIFT {
            return Err(GeometryError::LatencyShift { shift: self.latency_shift, max: MAX_LATENCY_SHIFT });
        }
        Ok(())
    }

    pub fn memory_bits(&self) -> u64 {
        self.arrays.iter().map(LatencyArray::memory_bits).sum()
    }

    /// A hop latency in sum-cell units: `ns / 2^shift` rounded half up.
    pub fn units(&self, latency_ns: u32) -> u64 {
        latency_units(latency_ns, self.latency_shift)
    }
}

/// `ns / 2^shift` rounded half up (the hardware adds `2^(shift-1)` and drops `shift` bits).
pub fn latency_units(latency_ns: u32, shift: u8) -> u64 {
    let half = (1u64 << shift) >> 1;
    (latency_ns as u64 + half) >> shift
}

/// The inflated-latency rule: the fixed-point log2 of `Delta_l` (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InflateRule {
    /// `log2(Delta_l)` with the log2 unit's fraction bits.
    pub threshold: u32,
}

impl InflateRule {
    /// SketchINT's Delta_l = 5 (section VII-C).
    pub const SKETCHINT_RATIO_X256: u32 = 5 * 256;

    /// The rule for `Delta_l = ratio_x256 / 256` (at least 1): `log2_fx(ratio_x256) - 8`,
    /// so ratios with fractions (2.5 = 640) are exact inputs too.
    pub fn from_ratio_x256(table: &[u32], p: Log2Params, ratio_x256: u32) -> Self {
        let l = log2_fx(table, p, ratio_x256.max(256) as u64).unwrap_or(0);
        InflateRule { threshold: l - (8 << p.frac) }
    }

    /// Is a hop of `units` over a pair whose estimates before it are `count` and `sum`
    /// inflated? `None` for a cell field with no estimate (every cell overflowed). Always
    /// inlined: the per-switch half asks it of every hop, and as a call it was 4 % of a
    /// `sketch run`.
    #[inline(always)]
    pub fn inflated(
        &self,
        table: &[u32],
        p: Log2Params,
        units: u64,
        count: Option<u64>,
        sum: Option<u64>,
    ) -> bool {
        let (Some(count), Some(sum)) = (count, sum) else { return false };
        if count == 0 || units == 0 {
            return false;
        }
        let Some(ls) = log2_fx(table, p, sum) else { return true };
        let lhs = log2_fx(table, p, units).unwrap_or(0) as u64 + log2_fx(table, p, count).unwrap_or(0) as u64;
        lhs > ls as u64 + self.threshold as u64
    }

    /// The exact product test that clears most hops before the log-domain rule is asked
    /// ([`InflateScreen`]), for log2 parameters `p`.
    pub fn screen(&self, p: Log2Params) -> InflateScreen {
        let one = (1u64 << p.frac) as f64;
        // The bound B of `InflateScreen`'s proof, less a margin for the float arithmetic.
        let b = (self.threshold as f64 - 1.5) / one - (1.0 + 1.0 / p.entries() as f64).log2();
        let k = (b.exp2() * 256.0).floor() - 1.0;
        InflateScreen { ratio_x256: if k > 0.0 { k as u64 } else { 0 } }
    }
}

/// A screen before [`InflateRule::inflated`]: a hop with `units * count * 256 <=
/// sum * ratio_x256` is not inflated, whatever the log2 table rounds, so the three LUT
/// logarithms are only taken for the few hops near or past the rule's ratio.
///
/// Why: the host's per-switch half asks the rule of every hop, and its three table
/// lookups were a large share of the half's time; one widening multiply per side decides
/// almost every hop. The screen never changes an answer, so the rule stays the NIC's.
///
/// Proof. With `F = p.frac` and `q = p.q`, `log2_fx(x) = l * 2^F + round(log2(1 + m/2^q) *
/// 2^F)` for `x`'s leading one at `l` and mantissa `m` cut (or zero-padded) below it, and
/// `2^l (1 + m/2^q) <= x < 2^l (1 + (m+1)/2^q)`. So
/// `log2(x) 2^F - log2(1 + 2^-q) 2^F - 1/2 < log2_fx(x) <= log2(x) 2^F + 1/2`.
/// Let `B = (T - 3/2) / 2^F - log2(1 + 2^-q)` for the rule's threshold `T`, and
/// `ratio_x256 / 256 <= 2^B`. If `u c <= s 2^B`, then
/// `log2_fx(u) + log2_fx(c) <= (log2 s + B) 2^F + 1 = log2(s) 2^F - log2(1 + 2^-q) 2^F + T - 1/2
/// < log2_fx(s) + T`: not inflated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InflateScreen {
    /// The screen's ratio in 1/256 units (at most `2^B`, see the proof); 0 clears nothing.
    pub ratio_x256: u64,
}

impl InflateScreen {
    /// Is a hop of `units` over estimates `count` and `sum` certainly not inflated? (When
    /// false, ask the rule.)
    #[inline(always)]
    pub fn clears(&self, units: u64, count: u64, sum: u64) -> bool {
        (units as u128 * count as u128) << 8 <= sum as u128 * self.ratio_x256 as u128
    }
}

/// The flow-key table: `ways` hashed slots of `depth` entries each.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KeyTableGeometry {
    /// One hash per way.
    pub ways: Vec<CrcParams>,
    /// Slots per way.
    pub depth: u32,
}

/// Table threshold of the NIC default: SketchINT's heavy-change threshold Delta_c = 750,
/// the lower of its two (see the module docs).
pub const DEFAULT_TABLE_THRESHOLD: u32 = 750;

/// Bits of one table slot: valid (1), hop count (5), flow key (104), path (16 x 16).
pub mod slot {
    use super::{KEY_LEN, MAX_HOPS};
    pub const VALID: u64 = 0;
    pub const HOPS: u64 = 1;
    pub const HOPS_WIDTH: u8 = 5;
    pub const KEY: u64 = HOPS + HOPS_WIDTH as u64;
    pub const PATH: u64 = KEY + 8 * KEY_LEN as u64;
    pub const SWITCH_WIDTH: u8 = 16;
    pub const BITS: u64 = PATH + MAX_HOPS as u64 * SWITCH_WIDTH as u64;
}

impl KeyTableGeometry {
    /// The NIC default: 2 ways of 512 slots, SketchINT's 1024-entry table (VII-A); family
    /// members 3 and 4, so a flow's slots are independent of its tower counters.
    pub fn nic_default() -> Self {
        Self::with_capacity(1024)
    }

    /// Two ways holding `capacity` slots in all.
    pub fn with_capacity(capacity: u32) -> Self {
        KeyTableGeometry { ways: vec![member(3), member(4)], depth: (capacity / 2).max(1) }
    }

    pub fn validate(&self) -> Result<(), GeometryError> {
        if self.ways.is_empty() {
            return Err(GeometryError::NoArrays);
        }
        for (i, h) in self.ways.iter().enumerate() {
            validate_hash(i, h)?;
        }
        if self.depth == 0 {
            return Err(GeometryError::Depth { array: 0 });
        }
        Ok(())
    }

    pub fn capacity(&self) -> u64 {
        self.ways.len() as u64 * self.depth as u64
    }

    pub fn memory_bits(&self) -> u64 {
        self.capacity() * slot::BITS
    }
}

/// The per-switch half's build-time geometry: its latency tower and its flow-key table.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PerSwitchGeometry {
    pub latency: LatencyTowerGeometry,
    pub table: KeyTableGeometry,
}

impl PerSwitchGeometry {
    /// The NIC default of both parts.
    pub fn nic_default() -> Self {
        PerSwitchGeometry {
            latency: LatencyTowerGeometry::nic_default(),
            table: KeyTableGeometry::nic_default(),
        }
    }

    pub fn validate(&self) -> Result<(), GeometryError> {
        self.latency.validate()?;
        self.table.validate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lut::log2_table;

    #[test]
    fn hop_key_is_switch_then_flow() {
        let f = FlowKey::from_v4([10, 0, 0, 1], [10, 0, 1, 2], 1000, 80, 6);
        let k = switch_key(0x0102, &f);
        assert_eq!(&k[..2], &[1, 2]);
        assert_eq!(&k[2..], f.as_bytes());
    }

    #[test]
    fn default_geometry_is_valid_and_sized() {
        let g = LatencyTowerGeometry::nic_default();
        g.validate().unwrap();
        assert_eq!(g.memory_bits(), (1 << 16) * 32 + (1 << 16) * 48 + (1 << 15) * 64);
        assert_eq!(g.memory_bits() / 8, 896 << 10);
        assert_eq!(g.units(7), 0);
        assert_eq!(g.units(8), 1, "half a unit rounds up");
        assert_eq!(g.units(u32::MAX), (u32::MAX as u64 + 8) >> 4);
        let e = LatencyTowerGeometry::equal_memory(3 << 20);
        assert!(e.memory_bits() <= 3 << 23);
        let mut bad = g.clone();
        bad.arrays[1].sum_width = 33;
        assert!(bad.validate().unwrap_err().to_string().contains("sum_width 33"));
        bad = g;
        bad.latency_shift = 21;
        assert!(bad.validate().unwrap_err().to_string().contains("latency_shift 21"));
    }

    #[test]
    fn table_slot_layout() {
        assert_eq!(slot::BITS, 1 + 5 + 104 + 256);
        let g = KeyTableGeometry::nic_default();
        g.validate().unwrap();
        assert_eq!(g.capacity(), 1024);
    }

    /// Delta_l = 5: 6 units over an average of 1 is inflated, 5 is not (equal is not
    /// "exceeds"), a zero average makes any positive hop inflated, no estimate never.
    #[test]
    fn inflate_rule_edges() {
        let p = Log2Params::DEFAULT;
        let t = log2_table(p);
        let r = InflateRule::from_ratio_x256(&t, p, InflateRule::SKETCHINT_RATIO_X256);
        assert_eq!(r.threshold, log2_fx(&t, p, 5).unwrap());
        assert!(r.inflated(&t, p, 6, Some(4), Some(4)));
        assert!(!r.inflated(&t, p, 5, Some(4), Some(4)));
        assert!(r.inflated(&t, p, 1, Some(3), Some(0)));
        assert!(!r.inflated(&t, p, 0, Some(3), Some(0)));
        assert!(!r.inflated(&t, p, 100, Some(0), Some(0)));
        assert!(!r.inflated(&t, p, 100, None, Some(1)));
        assert!(!r.inflated(&t, p, 100, Some(1), None));
        let half = InflateRule::from_ratio_x256(&t, p, 640);
        assert!(half.inflated(&t, p, 26, Some(10), Some(100)));
        assert!(!half.inflated(&t, p, 25, Some(10), Some(100)));
    }

    /// splitmix64: the contract takes no dependencies, and the screen's test needs only
    /// well-spread values.
    fn next(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value of 1 to 32 bits, so every leading-one position and mantissa occurs.
    fn value(state: &mut u64) -> u64 {
        let bits = next(state) % 32 + 1;
        (next(state) >> (64 - bits)).max(1)
    }

    /// The screen never clears an inflated hop: at the largest `units` it clears (the
    /// tightest point of its proof) the rule says "not inflated", one unit more and the
    /// screen asks the rule. For several ratios (1, 1.17, 2.5, 5, 100, 10^6) and log2
    /// precisions, 200K pairs each of counts and sums of every width.
    #[test]
    fn screen_never_clears_an_inflated_hop() {
        let mut state = 5;
        for p in [Log2Params::DEFAULT, Log2Params { q: 4, frac: 8 }, Log2Params { q: 16, frac: 26 }] {
            let t = log2_table(p);
            for ratio in [256, 300, 640, 1280, 25_600, 256_000_000] {
                let rule = InflateRule::from_ratio_x256(&t, p, ratio);
                let screen = rule.screen(p);
                for _ in 0..200_000 {
                    let (count, sum) = (value(&mut state), value(&mut state));
                    let u = (sum as u128 * screen.ratio_x256 as u128 / ((count as u128) << 8)) as u64;
                    if u > 0 {
                        assert!(screen.clears(u, count, sum));
                        assert!(
                            !rule.inflated(&t, p, u, Some(count), Some(sum)),
                            "{u} x {count} over {sum} at ratio {ratio}/256, {p:?}"
                        );
                    }
                    assert!(!screen.clears(u + 1, count, sum));
                }
            }
        }
    }

    /// The screen is worth asking: at SketchINT's Delta_l = 5 it clears every hop up to
    /// 4.9 times its pair's average, and at a ratio of 1 it still clears nothing wrongly
    /// (the test above) while clearing hops below the average.
    #[test]
    fn screen_clears_ordinary_hops() {
        let p = Log2Params::DEFAULT;
        let t = log2_table(p);
        let five = InflateRule::from_ratio_x256(&t, p, InflateRule::SKETCHINT_RATIO_X256).screen(p);
        assert!(five.ratio_x256 >= 49 * 256 / 10, "{five:?}");
        assert!(five.ratio_x256 < 5 * 256);
        assert!(five.clears(49, 10, 100));
        let one = InflateRule::from_ratio_x256(&t, p, 256).screen(p);
        assert!(one.clears(9, 10, 100));
        assert!(!one.clears(10, 10, 100));
    }
}
