//! Heavy hitters and heavy changes (SketchINT V-A).
//!
//! - **During insertion** ([`CandidateTable`]): after each packet is inserted, its flow's
//!   estimate is read back; a flow whose estimate exceeds the threshold and is not yet in
//!   the small table (capacity [`TABLE_CAPACITY`] = 1024, as in SketchINT's evaluation)
//!   is added. The heavy hitters are the table's flows whose final estimate exceeds the
//!   threshold.
//! - **Pure readout** ([`from_candidates`]): a snapshot alone cannot list flows (sketches
//!   store counters, not keys), so the caller supplies candidate keys (for instance the
//!   host's own table, or flows seen elsewhere); the sketch answers which are heavy.
//! - **Heavy changes** ([`changes`]): one sketch and one table per epoch; every flow in
//!   either table whose estimates in the two epochs differ by more than the threshold.
//!
//! "Heavy" means strictly larger than the threshold (`n > delta`), for the truth too.
//! ElasticSketch keeps its own heavy part; [`elastic`] reads its heavy hitters from it.

use std::collections::HashSet;

use super::flow_size::estimate;
use crate::sketch::{AnySketch, Elastic};
use smartnic_contract::FlowKey;

/// SketchINT's table capacity.
pub const TABLE_CAPACITY: usize = 1024;

/// The small table of candidate heavy flows kept while inserting.
#[derive(Clone, Debug)]
pub struct CandidateTable {
    threshold: u64,
    capacity: usize,
    keys: Vec<FlowKey>,
    set: HashSet<FlowKey>,
    refused: u64,
}

impl CandidateTable {
    pub fn new(threshold: u64, capacity: usize) -> Self {
        CandidateTable { threshold, capacity, keys: Vec::new(), set: HashSet::new(), refused: 0 }
    }

    pub fn threshold(&self) -> u64 {
        self.threshold
    }

    /// Offers a flow with its current estimate; true if it was added now.
    #[inline]
    pub fn observe(&mut self, key: &FlowKey, estimate: u64) -> bool {
        if estimate <= self.threshold || self.set.contains(key) {
            return false;
        }
        if self.keys.len() >= self.capacity {
            self.refused += 1;
            return false;
        }
        self.set.insert(*key);
        self.keys.push(*key);
        true
    }

    /// The flows in the table, in order of admission.
    pub fn keys(&self) -> &[FlowKey] {
        &self.keys
    }

    /// Offers refused because the table was full (0 means nothing was lost).
    pub fn refused(&self) -> u64 {
        self.refused
    }

    pub fn clear(&mut self) {
        self.keys.clear();
        self.set.clear();
        self.refused = 0;
    }
}

/// Inserts one packet's key into a sketch that is not SuMax (which needs a timestamp and a
/// delay) and offers the flow to the table.
pub fn insert_tracked(
    sketch: &mut AnySketch,
    table: &mut CandidateTable,
    key: &FlowKey,
    ts_ns: u64,
    delay_ns: u64,
) {
    match sketch {
        AnySketch::Tower(t) => t.insert(key),
        AnySketch::SuMax(s) => s.insert(key, ts_ns, delay_ns),
        AnySketch::Elastic(e) => e.insert(key),
    }
    let est = estimate(sketch, key);
    table.observe(key, est);
}

/// Flows among `candidates` whose estimate exceeds `threshold`, largest first.
pub fn from_candidates<'a, I>(sketch: &AnySketch, candidates: I, threshold: u64) -> Vec<(FlowKey, u64)>
where
    I: IntoIterator<Item = &'a FlowKey>,
{
    let mut seen = HashSet::new();
    let mut out: Vec<(FlowKey, u64)> = candidates
        .into_iter()
        .filter(|k| seen.insert(**k))
        .map(|k| (*k, estimate(sketch, k)))
        .filter(|&(_, n)| n > threshold)
        .collect();
    out.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

/// The heavy hitters of a sketch with its insertion-time table.
pub fn from_table(sketch: &AnySketch, table: &CandidateTable) -> Vec<(FlowKey, u64)> {
    from_candidates(sketch, table.keys(), table.threshold())
}

/// ElasticSketch's heavy hitters: heavy-part flows above the threshold.
pub fn elastic(e: &Elastic, threshold: u64) -> Vec<(FlowKey, u64)> {
    let mut out: Vec<(FlowKey, u64)> = e.heavy_flows().into_iter().filter(|&(_, n)| n > threshold).collect();
    out.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

/// A flow whose size changed by more than the threshold between two epochs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Change {
    pub key: FlowKey,
    pub before: u64,
    pub after: u64,
}

impl Change {
    pub fn delta(&self) -> u64 {
        self.before.abs_diff(self.after)
    }
}

/// Heavy changes between epoch sketches `a` and `b` among the candidate keys (the union of
/// both epochs' tables): `|n^_a - n^_b| > threshold`. Largest change first.
pub fn changes<'a, I>(a: &AnySketch, b: &AnySketch, candidates: I, threshold: u64) -> Vec<Change>
where
    I: IntoIterator<Item = &'a FlowKey>,
{
    let mut seen = HashSet::new();
    let mut out: Vec<Change> = candidates
        .into_iter()
        .filter(|k| seen.insert(**k))
        .map(|k| Change { key: *k, before: estimate(a, k), after: estimate(b, k) })
        .filter(|c| c.delta() > threshold)
        .collect();
    out.sort_unstable_by(|x, y| y.delta().cmp(&x.delta()).then(x.key.cmp(&y.key)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u8) -> FlowKey {
        FlowKey::from_v4([10, 0, 0, n], [10, 0, 1, 1], 1000, 80, 6)
    }

    #[test]
    fn table_admits_above_threshold_once_and_respects_capacity() {
        let mut t = CandidateTable::new(5, 2);
        assert!(!t.observe(&key(1), 5), "strictly above");
        assert!(t.observe(&key(1), 6));
        assert!(!t.observe(&key(1), 7), "already there");
        assert!(t.observe(&key(2), 9));
        assert!(!t.observe(&key(3), 100), "full");
        assert_eq!(t.keys(), &[key(1), key(2)]);
        assert_eq!(t.refused(), 1);
    }
}
