//! SketchINT's four global tasks (section V-B), answered from the NIC's per-switch half:
//!
//! - **per-flow per-switch latency**: the latency tower's `sum / count` of a pair
//!   ([`pair_latency_ns`]; one flow at each switch: [`flow_at_switches`]);
//! - **inflated latency**: the (flow, switch) pairs of the inflated-latency records, with
//!   how often each inflated ([`inflated_pairs`]);
//! - **per-switch heavy hitters**: a flow of the key table whose size estimate exceeds the
//!   threshold is heavy at every switch of its path ([`per_switch_heavy`]);
//! - **per-switch heavy changes**: a flow in either epoch's table whose estimates in the
//!   two epochs differ by more than the threshold changed at every switch of its path
//!   ([`per_switch_changes`]; the newer epoch's path when both tables hold the flow).
//!
//! The flow sizes come from the flow tower of the same epoch (any closure), so the tasks
//! work on live models and on snapshots alike.

use std::collections::BTreeMap;

use crate::sketch::key_table::Entry;
use crate::sketch::latency_tower::LatencyTower;
use smartnic_contract::wire::record::InflatedRecord;
use smartnic_contract::FlowKey;

/// SketchINT's per-switch heavy-hitter threshold (section VII-C).
pub const HEAVY_THRESHOLD: u64 = 1500;
/// SketchINT's per-switch heavy-change threshold.
pub const CHANGE_THRESHOLD: u64 = 750;

/// Average latency of `flow` at `switch_id` in ns, when the tower has an estimate.
pub fn pair_latency_ns(tower: &LatencyTower, switch_id: u16, flow: &FlowKey) -> Option<f64> {
    tower.query(switch_id, flow).average_ns(tower.geometry().latency_shift)
}

/// One switch of one flow, as the per-switch half has it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FlowAtSwitch {
    pub switch_id: u16,
    /// The latency tower's packet count for the pair (`None`: no estimate, every count
    /// cell overflowed).
    pub hops: Option<u64>,
    /// Average latency in ns (`None` without both estimates or with a count of 0).
    pub avg_latency_ns: Option<f64>,
    /// Inflated-latency records of the pair.
    pub inflated: u64,
}

/// `flow` at each switch of `switches` (in that order), then at any other switch its
/// records name (in switch order): what `snapshot query` shows per switch.
pub fn flow_at_switches(
    tower: &LatencyTower,
    records: &[InflatedRecord],
    flow: &FlowKey,
    switches: &[u16],
) -> Vec<FlowAtSwitch> {
    let inflated: BTreeMap<u16, u64> = inflated_pairs(records.iter().filter(|r| r.flow == *flow))
        .into_iter()
        .map(|((_, s), n)| (s, n))
        .collect();
    let mut order: Vec<u16> = Vec::new();
    for &s in switches.iter().chain(inflated.keys()) {
        if !order.contains(&s) {
            order.push(s);
        }
    }
    order
        .into_iter()
        .map(|switch_id| FlowAtSwitch {
            switch_id,
            hops: tower.query(switch_id, flow).count,
            avg_latency_ns: pair_latency_ns(tower, switch_id, flow),
            inflated: inflated.get(&switch_id).copied().unwrap_or(0),
        })
        .collect()
}

/// How many inflated hops each (flow, switch) pair had.
pub fn inflated_pairs<'a>(
    records: impl IntoIterator<Item = &'a InflatedRecord>,
) -> BTreeMap<(FlowKey, u16), u64> {
    let mut out = BTreeMap::new();
    for r in records {
        *out.entry((r.flow, r.switch_id)).or_insert(0) += 1;
    }
    out
}

/// The heavy flows at each switch: `switch -> [(flow, size estimate)]`, largest first.
pub fn per_switch_heavy<'a>(
    entries: impl IntoIterator<Item = &'a Entry>,
    size: impl Fn(&FlowKey) -> u64,
    threshold: u64,
) -> BTreeMap<u16, Vec<(FlowKey, u64)>> {
    let mut out: BTreeMap<u16, Vec<(FlowKey, u64)>> = BTreeMap::new();
    for e in entries {
        let n = size(&e.key);
        if n > threshold {
            for &s in distinct(&e.path) {
                out.entry(s).or_default().push((e.key, n));
            }
        }
    }
    out.values_mut().for_each(|v| v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0))));
    out
}

/// The heavy changes at each switch between epoch `a` and the newer epoch `b`:
/// `switch -> [(flow, size in b - size in a)]`, largest change first.
pub fn per_switch_changes<'a>(
    a: impl IntoIterator<Item = &'a Entry>,
    b: impl IntoIterator<Item = &'a Entry>,
    size_a: impl Fn(&FlowKey) -> u64,
    size_b: impl Fn(&FlowKey) -> u64,
    threshold: u64,
) -> BTreeMap<u16, Vec<(FlowKey, i64)>> {
    let mut paths: BTreeMap<FlowKey, &[u16]> = BTreeMap::new();
    for e in a {
        paths.insert(e.key, &e.path);
    }
    for e in b {
        paths.insert(e.key, &e.path);
    }
    let mut out: BTreeMap<u16, Vec<(FlowKey, i64)>> = BTreeMap::new();
    for (key, path) in paths {
        let d = size_b(&key) as i64 - size_a(&key) as i64;
        if d.unsigned_abs() > threshold {
            for &s in distinct(path) {
                out.entry(s).or_default().push((key, d));
            }
        }
    }
    out.values_mut().for_each(|v| v.sort_by(|x, y| y.1.abs().cmp(&x.1.abs()).then(x.0.cmp(&y.0))));
    out
}

/// Each switch of a path once (a looping path names a switch twice).
fn distinct(path: &[u16]) -> impl Iterator<Item = &u16> {
    path.iter().enumerate().filter(|(i, s)| !path[..*i].contains(s)).map(|(_, s)| s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(n: u8) -> FlowKey {
        FlowKey::from_v4([10, 0, 0, n], [10, 0, 1, 1], 1000, 80, 6)
    }
    fn entry(n: u8, path: &[u16]) -> Entry {
        Entry { key: flow(n), path: path.to_vec() }
    }

    #[test]
    fn heavy_flows_land_on_every_switch_of_their_path() {
        let t = [entry(1, &[1, 2, 3, 2]), entry(2, &[1, 4]), entry(3, &[5])];
        let size = |k: &FlowKey| [0, 2000, 1600, 1500][k.src_ip()[3] as usize];
        let h = per_switch_heavy(&t, size, HEAVY_THRESHOLD);
        assert_eq!(h[&1], vec![(flow(1), 2000), (flow(2), 1600)]);
        assert_eq!(h[&2], vec![(flow(1), 2000)], "a looping path counts a switch once");
        assert!(!h.contains_key(&5), "1500 is not more than 1500");
    }

    #[test]
    fn changes_take_both_tables_and_the_newer_path() {
        let a = [entry(1, &[1, 2]), entry(2, &[3])];
        let b = [entry(1, &[1, 9]), entry(4, &[7])];
        let sa = |k: &FlowKey| [0, 1000, 900, 0, 0][k.src_ip()[3] as usize];
        let sb = |k: &FlowKey| [0, 1800, 0, 0, 751][k.src_ip()[3] as usize];
        let c = per_switch_changes(&a, &b, sa, sb, CHANGE_THRESHOLD);
        assert_eq!(c[&9], vec![(flow(1), 800)]);
        assert!(!c.contains_key(&2), "the newer path replaces the older");
        assert_eq!(c[&3], vec![(flow(2), -900)]);
        assert_eq!(c[&7], vec![(flow(4), 751)]);
    }

    #[test]
    fn inflated_pairs_count_records() {
        let r = |n, s| InflatedRecord { epoch: 0, flow: flow(n), switch_id: s, latency_ns: 1 };
        let recs = [r(1, 2), r(1, 2), r(1, 3), r(2, 2)];
        let p = inflated_pairs(&recs);
        assert_eq!(p[&(flow(1), 2)], 2);
        assert_eq!(p.len(), 3);
    }

    #[test]
    fn one_flow_at_its_switches_then_where_its_records_point() {
        use smartnic_contract::geometry::InsertMode;
        use smartnic_contract::per_switch::LatencyTowerGeometry;
        let mut t = LatencyTower::new(LatencyTowerGeometry::nic_default(), InsertMode::Acu).unwrap();
        for ns in [1600, 3200] {
            t.insert_hop(4, &flow(1), ns);
        }
        t.insert_hop(9, &flow(2), 160);
        let r = |n, s| InflatedRecord { epoch: 0, flow: flow(n), switch_id: s, latency_ns: 1 };
        let recs = [r(1, 7), r(1, 4), r(2, 4), r(1, 4)];
        let v = flow_at_switches(&t, &recs, &flow(1), &[4, 5, 4]);
        let ids: Vec<u16> = v.iter().map(|x| x.switch_id).collect();
        assert_eq!(ids, vec![4, 5, 7], "given switches once each, then the records' others");
        assert_eq!((v[0].hops, v[0].avg_latency_ns, v[0].inflated), (Some(2), Some(2400.0), 2));
        assert_eq!((v[1].hops, v[1].avg_latency_ns, v[1].inflated), (Some(0), None, 0));
        assert_eq!(v[2].inflated, 1, "another flow's record at switch 4 is not counted");
    }
}
