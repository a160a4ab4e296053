//! Flow size estimation: the minimum of the `d` hashed counters (SketchINT V-A), skipping
//! overflowed counters; SuMax's flow-size cells the same way (LightGuardian 6.1).

use crate::metrics;
use crate::sketch::cell::value;
use crate::sketch::{AnySketch, SuMax};
use smartnic_contract::geometry::{marker, sumax_cell};
use smartnic_contract::FlowKey;

/// SuMax's flow-size estimate alone, without building the whole [`crate::sketch::SuMaxEstimate`]
/// (no allocation: this runs once per packet when a candidate table is kept).
pub fn sumax_size(s: &SuMax, key: &FlowKey) -> u64 {
    let idx = s.indices(key);
    let m = marker(s.geometry().size_width);
    (0..s.geometry().hashes.len())
        .map(|a| value(s.cell(a, idx[a], sumax_cell::SIZE), m))
        .filter(|&v| v != crate::sketch::cell::INF)
        .min()
        .unwrap_or(m as u64)
}

/// The sketch that sizes a snapshot's flows: the first TowerSketch (the NIC's flow tower),
/// else the first flow sketch. The report, the collector's series and the exports size
/// flows by this one rule.
pub fn sizing_sketch(sketches: &[AnySketch]) -> Option<&AnySketch> {
    sketches.iter().find(|s| matches!(s, AnySketch::Tower(_))).or(sketches.first())
}

/// Estimated packet count of `key` in any sketch.
#[inline]
pub fn estimate(sketch: &AnySketch, key: &FlowKey) -> u64 {
    match sketch {
        AnySketch::SuMax(s) => sumax_size(s, key),
        other => other.query(key),
    }
}

/// Flow-size accuracy over a flow set.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct SizeAccuracy {
    pub flows: usize,
    pub are: f64,
    pub aae: f64,
    /// Flows estimated exactly.
    pub exact: usize,
}

/// ARE and AAE of `sketch` over `(key, true size)` pairs.
pub fn evaluate<'a, I>(sketch: &AnySketch, flows: I) -> SizeAccuracy
where
    I: IntoIterator<Item = (&'a FlowKey, u64)>,
{
    let pairs: Vec<(f64, f64)> =
        flows.into_iter().map(|(k, n)| (n as f64, estimate(sketch, k) as f64)).collect();
    SizeAccuracy {
        flows: pairs.len(),
        are: metrics::are(pairs.iter().copied()),
        aae: metrics::aae(pairs.iter().copied()),
        exact: pairs.iter().filter(|(t, e)| t == e).count(),
    }
}
