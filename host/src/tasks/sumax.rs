//! SuMax's own tasks (LightGuardian 4.4 and 6.1): the per-flow delay distribution (delay
//! cells), the maximum inter-arrival time and the last arrival time (max cells), the
//! whole-epoch delay histogram, and queries on a partially reconstructed sketch.
//!
//! **Partial reconstruction** (LightGuardian 6.1): a sketchlet is one column, bucket `j` of
//! every array. With only some columns received, a query reads the flow's `d` buckets,
//! treats those in missing columns as invalid and answers from the others; with no valid
//! bucket the result is *invalid*. Theorem 6.1: with a fraction `theta` of columns
//! received, a query is valid with probability `1 - (1 - theta)^d`.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::arith::DelayBins;
use crate::metrics;
use crate::sketch::cell::{value, INF};
use crate::sketch::{SuMax, SuMaxEstimate};
use smartnic_contract::geometry::{marker, sumax_cell, SuMaxGeometry};
use smartnic_contract::FlowKey;

/// The delay binner of a SuMax geometry (the same rule the sketch bins packets with).
pub fn bins(s: &SuMax) -> DelayBins {
    DelayBins::new(s.geometry().delay_bins, s.geometry().delay_cells)
}

/// Lower edge (ns) of every delay bin; bin `b` holds delays in `[edge[b], edge[b+1])`.
pub fn bin_edges(s: &SuMax) -> Vec<u64> {
    let b = bins(s);
    (0..s.geometry().delay_cells).map(|i| b.lower_edge(i)).collect()
}

/// Packets per delay bin over the whole epoch. Every packet adds one to exactly one bucket
/// of the first array (its omega starts at infinity), so summing that array's delay cells
/// is exact unless a cell overflowed (then the sum is a lower bound and `overflowed` > 0).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct DelaySummary {
    pub edges_ns: Vec<u64>,
    pub packets: Vec<u64>,
    pub overflowed: u64,
}

impl DelaySummary {
    pub fn total(&self) -> u64 {
        self.packets.iter().sum()
    }

    /// Delay (ns, a bin's lower edge) below which at least a fraction `q` of packets lie:
    /// the lower edge of the bin holding the q-quantile.
    pub fn quantile_bin_edge(&self, q: f64) -> Option<u64> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        let target = (q * total as f64).ceil().max(1.0) as u64;
        let mut acc = 0;
        for (e, &n) in self.edges_ns.iter().zip(&self.packets) {
            acc += n;
            if acc >= target {
                return Some(*e);
            }
        }
        self.edges_ns.last().copied()
    }
}

pub fn delay_summary(s: &SuMax) -> DelaySummary {
    let g = s.geometry();
    let m = marker(g.delay_width);
    let mut packets = vec![0u64; g.delay_cells as usize];
    let mut overflowed = 0;
    for i in 0..g.depth {
        for (b, p) in packets.iter_mut().enumerate() {
            let c = s.cell(0, i, sumax_cell::FIRST_DELAY + b);
            if c == m {
                overflowed += 1;
            }
            *p += c as u64;
        }
    }
    DelaySummary { edges_ns: bin_edges(s), packets, overflowed }
}

/// WMRE of a flow's delay distribution (LightGuardian Appendix C, over event
/// probabilities): both histograms are normalised to sum to 1 first.
pub fn delay_wmre(truth: &[u64], est: &[u64]) -> f64 {
    let norm = |h: &[u64]| -> Vec<f64> {
        let t: u64 = h.iter().sum();
        h.iter().map(|&x| if t == 0 { 0.0 } else { x as f64 / t as f64 }).collect()
    };
    metrics::wmre(&norm(truth), &norm(est))
}

/// Nanoseconds per SuMax time unit, `2^time_shift`.
pub fn time_unit_ns(s: &SuMax) -> u64 {
    unit_ns(s.geometry())
}

/// Nanoseconds per time unit of a geometry: `2^time_shift`, saturating at `u64::MAX` for a
/// shift of 64 or more (a validated geometry never has one).
pub fn unit_ns(g: &SuMaxGeometry) -> u64 {
    1u64.checked_shl(g.time_shift as u32).unwrap_or(u64::MAX)
}

/// `units` time units in ns, saturating. A validated geometry keeps every time-cell value
/// exact (`time_shift + time_width <= 64`); the saturation only keeps a wider value (a sum
/// of cells, a caller's arithmetic) from wrapping to a small, wrong time.
pub fn units_to_ns(g: &SuMaxGeometry, units: u64) -> u64 {
    units.saturating_mul(unit_ns(g))
}

/// Maximum inter-arrival time of `key` in ns (time-unit resolution).
pub fn max_interarrival_ns(s: &SuMax, key: &FlowKey) -> u64 {
    units_to_ns(s.geometry(), s.query(key).max_interval)
}

/// Distance in time units between two time-cell values, modulo the cell width.
pub fn time_distance(s: &SuMax, a: u64, b: u64) -> u64 {
    let mask = marker(s.geometry().time_width) as u64;
    let d = a.wrapping_sub(b) & mask;
    d.min(mask + 1 - d)
}

/// The time-cell value a timestamp (ns) is recorded as.
pub fn time_cell_of(s: &SuMax, ts_ns: u64) -> u64 {
    s.time_of(ts_ns) as u64
}

/// Exactly `round(theta * depth)` received columns, chosen by a seeded shuffle.
pub fn received_columns(depth: u32, theta: f64, seed: u64) -> Vec<bool> {
    let n = ((theta.clamp(0.0, 1.0) * depth as f64).round() as usize).min(depth as usize);
    let mut cols: Vec<u32> = (0..depth).collect();
    cols.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    let mut mask = vec![false; depth as usize];
    for &c in &cols[..n] {
        mask[c as usize] = true;
    }
    mask
}

/// The query of LightGuardian 6.1 on a sketch of which only the columns with
/// `received[j]` arrived: `None` is an invalid result.
pub fn query_received(s: &SuMax, key: &FlowKey, received: &[bool]) -> Option<SuMaxEstimate> {
    let idx = s.indices(key);
    let d = s.geometry().hashes.len();
    let present: Vec<Option<u32>> =
        idx[..d].iter().map(|&i| if received[i as usize] { Some(i) } else { None }).collect();
    s.query_partial(&present)
}

/// Flow size only, on a partial sketch (no allocation but the index vector).
pub fn size_received(s: &SuMax, key: &FlowKey, received: &[bool]) -> Option<u64> {
    let idx = s.indices(key);
    let m = marker(s.geometry().size_width);
    let mut any = false;
    let mut min = INF;
    for (a, &i) in idx[..s.geometry().hashes.len()].iter().enumerate() {
        if received[i as usize] {
            any = true;
            min = min.min(value(s.cell(a, i, sumax_cell::SIZE), m));
        }
    }
    any.then_some(if min == INF { m as u64 } else { min })
}

/// Theorem 6.1's valid-result rate.
pub fn theorem_6_1_valid_rate(theta: f64, d: usize) -> f64 {
    1.0 - (1.0 - theta).powi(d as i32)
}

/// How a partially reconstructed sketch answers over a flow set.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct PartialAccuracy {
    pub theta: f64,
    pub flows: usize,
    pub valid: usize,
    pub valid_rate: f64,
    /// `1 - (1 - theta)^d`.
    pub expected_rate: f64,
    /// ARE of the flow size over the valid results.
    pub are_valid: f64,
}

/// Valid-result rate and ARE over `(key, true size)` pairs with columns `received`.
pub fn partial_accuracy<'a, I>(s: &SuMax, flows: I, received: &[bool]) -> PartialAccuracy
where
    I: IntoIterator<Item = (&'a FlowKey, u64)>,
{
    let theta = received.iter().filter(|&&r| r).count() as f64 / received.len().max(1) as f64;
    let (mut n, mut pairs) = (0usize, Vec::new());
    for (k, truth) in flows {
        n += 1;
        if let Some(e) = size_received(s, k, received) {
            pairs.push((truth as f64, e as f64));
        }
    }
    PartialAccuracy {
        theta,
        flows: n,
        valid: pairs.len(),
        valid_rate: if n == 0 { 0.0 } else { pairs.len() as f64 / n as f64 },
        expected_rate: theorem_6_1_valid_rate(theta, s.geometry().hashes.len()),
        are_valid: metrics::are(pairs),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_exact_and_seeded() {
        let a = received_columns(1000, 0.3, 7);
        assert_eq!(a.iter().filter(|&&r| r).count(), 300);
        assert_eq!(a, received_columns(1000, 0.3, 7));
        assert_ne!(a, received_columns(1000, 0.3, 8));
        assert!(received_columns(10, 1.0, 1).iter().all(|&r| r));
        assert!((theorem_6_1_valid_rate(0.55, 3) - 0.908875).abs() < 1e-9);
    }

    /// Time units convert to ns exactly up to the largest cell value of every valid
    /// geometry, and saturate beyond instead of overflowing (a debug-build panic before).
    #[test]
    fn time_units_never_overflow() {
        let mut g = SuMaxGeometry::nic_default();
        assert_eq!(units_to_ns(&g, 3), 3 << 10);
        (g.time_width, g.time_shift) = (2, 62);
        g.validate().unwrap();
        assert_eq!(units_to_ns(&g, 3), 3 << 62);
        assert_eq!(units_to_ns(&g, 4), u64::MAX);
        (g.time_width, g.time_shift) = (32, 32);
        assert_eq!(units_to_ns(&g, u32::MAX as u64), (u32::MAX as u64) << 32);
        g.time_shift = 200;
        assert_eq!((unit_ns(&g), units_to_ns(&g, 0), units_to_ns(&g, 1)), (u64::MAX, 0, u64::MAX));
    }

    #[test]
    fn delay_wmre_is_scale_free() {
        assert_eq!(delay_wmre(&[1, 2, 3], &[2, 4, 6]), 0.0);
        // probabilities [1, 0] vs [0.5, 0.5]: 1 / 1 = 1.
        assert_eq!(delay_wmre(&[4, 0], &[1, 1]), 1.0);
    }
}
