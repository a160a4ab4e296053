//! The bounded per-flow series of one snapshot: the `top_k` largest flows of the NIC's key
//! table (sized by the epoch's flow sketch, as `smartnic snapshot report` sizes them), and a
//! latency summary per switch over those flows' paths (the latency tower's count and average
//! of each (flow, switch) pair, from [`crate::tasks::per_switch`]).
//!
//! A Prometheus server keeps every label set it has seen, so the number of series is capped:
//! flows first (one series each), then switches by hop count (two series each: hops and mean
//! latency) while they fit `max_series`; what did not fit is counted, never silently lost.

use crate::sketch::snapshot::{per_switch_state, sketches_of, TableState};
use crate::sketch::AnySketch;
use crate::tasks::flow_size;
use crate::tasks::per_switch::pair_latency_ns;
use smartnic_contract::FlowKey;
use smartnic_driver::snapshot::Snapshot;
use std::collections::BTreeMap;

/// Series a switch's summary takes (hops and mean latency).
pub const SERIES_PER_SWITCH: usize = 2;

/// One switch's latency over the table's flows.
#[derive(Clone, Debug, PartialEq)]
pub struct SwitchLatency {
    pub switch: u16,
    /// Hops the latency tower counted for the table's flows at this switch.
    pub hops: u64,
    /// Hop-weighted mean of the pairs' average latencies, ns (none without an estimate).
    pub mean_ns: Option<f64>,
}

/// The per-flow series of one snapshot, within the cap.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowSeries {
    /// Flow (as `FlowKey`'s text) and its size estimate in packets, largest first.
    pub flows: Vec<(String, u64)>,
    /// Switches, most hops first.
    pub switches: Vec<SwitchLatency>,
    /// Series left out by `top_k` and `max_series`.
    pub dropped: u64,
}

impl FlowSeries {
    /// The series of `snap`; a snapshot without a key table or a flow sketch has none.
    pub fn of(snap: &Snapshot, top_k: usize, max_series: usize) -> anyhow::Result<FlowSeries> {
        let state = per_switch_state(snap)?;
        let sketches = sketches_of(snap)?;
        let (Some(table), Some(sizes)) = (state.table.as_ref(), flow_size::sizing_sketch(&sketches)) else {
            return Ok(FlowSeries::default());
        };
        let flows = sized(table, sizes);
        let switches = match &state.latency {
            Some(tower) => summarize(&flows, table, |s, k| {
                (tower.query(s, k).count.unwrap_or(0), pair_latency_ns(tower, s, k))
            }),
            None => Vec::new(),
        };
        Ok(cap(flows, switches, top_k, max_series))
    }

    /// Series this holds.
    pub fn len(&self) -> usize {
        self.flows.len() + SERIES_PER_SWITCH * self.switches.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The table's flows with their sizes, largest first (ties by key).
fn sized(table: &TableState, sizes: &AnySketch) -> Vec<(FlowKey, u64)> {
    let mut v: Vec<_> = table.table.entries().map(|e| (e.key, flow_size::estimate(sizes, &e.key))).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}

/// Per switch: the hops and hop-weighted mean latency of the table flows crossing it.
fn summarize(
    flows: &[(FlowKey, u64)],
    table: &TableState,
    pair: impl Fn(u16, &FlowKey) -> (u64, Option<f64>),
) -> Vec<SwitchLatency> {
    let paths: BTreeMap<FlowKey, Vec<u16>> = table.table.entries().map(|e| (e.key, e.path.clone())).collect();
    let mut acc: BTreeMap<u16, (u64, f64, u64)> = BTreeMap::new();
    for (key, _) in flows {
        let mut path = paths.get(key).cloned().unwrap_or_default();
        path.sort_unstable();
        path.dedup();
        for s in path {
            let (hops, avg) = pair(s, key);
            let a = acc.entry(s).or_default();
            a.0 += hops;
            if let Some(avg) = avg {
                a.1 += avg * hops as f64;
                a.2 += hops;
            }
        }
    }
    let mut out: Vec<SwitchLatency> = acc
        .into_iter()
        .map(|(switch, (hops, wsum, weighted))| SwitchLatency {
            switch,
            hops,
            mean_ns: (weighted > 0).then(|| wsum / weighted as f64),
        })
        .collect();
    out.sort_by(|a, b| b.hops.cmp(&a.hops).then(a.switch.cmp(&b.switch)));
    out
}

/// Keeps the `top_k` flows and then whole switches while they fit `max_series`.
fn cap(
    flows: Vec<(FlowKey, u64)>,
    switches: Vec<SwitchLatency>,
    top_k: usize,
    max_series: usize,
) -> FlowSeries {
    let total = flows.len() + SERIES_PER_SWITCH * switches.len();
    let kept_flows: Vec<(String, u64)> =
        flows.into_iter().take(top_k.min(max_series)).map(|(k, n)| (k.to_string(), n)).collect();
    let room = (max_series - kept_flows.len()) / SERIES_PER_SWITCH;
    let kept_switches: Vec<SwitchLatency> = switches.into_iter().take(room).collect();
    let mut out = FlowSeries { flows: kept_flows, switches: kept_switches, dropped: 0 };
    out.dropped = (total - out.len()) as u64;
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sketch::per_switch::{PerSwitch, PerSwitchConfig};
    use crate::sketch::snapshot::{per_switch_sections, software_snapshot};
    use crate::sketch::{AnySketch, Tower};
    use crate::trace::Packet;
    use smartnic_contract::geometry::{InsertMode, TowerGeometry};
    use smartnic_contract::shim::Hop;

    /// A snapshot of `flows` (packets, path of (switch, latency ns)) through a NIC-sized
    /// tower and a per-switch half whose table takes every flow.
    fn snapshot(flows: &[(u64, &[(u16, u32)])]) -> Snapshot {
        let mut tower = Tower::new(TowerGeometry::sketchint_fpga(), InsertMode::Cm).unwrap();
        let mut cfg = PerSwitchConfig::nic_default();
        cfg.table_threshold = 0;
        let mut half = PerSwitch::new(cfg).unwrap();
        for (i, (n, path)) in flows.iter().enumerate() {
            let p = Packet {
                ts_ns: 0,
                wire_len: 100,
                key: FlowKey::from_v4([10, 0, 0, i as u8], [10, 0, 1, 1], 1000, 80, 6),
                hops: path.iter().map(|&(switch_id, latency_ns)| Hop { switch_id, latency_ns }).collect(),
            };
            for _ in 0..*n {
                tower.insert(&p.key);
                half.observe(0, &p, tower.query(&p.key));
            }
        }
        let mut snap = software_snapshot(&[AnySketch::Tower(tower)], 0, 0).unwrap();
        snap.per_switch = per_switch_sections(&half, half.records());
        snap
    }

    /// Top-k by size, switches by hops, and the cap cuts whole switches and counts the rest.
    #[test]
    fn series_are_the_largest_flows_and_busiest_switches_within_the_cap() {
        let snap = snapshot(&[(5, &[(1, 1000), (2, 3000)]), (9, &[(1, 2000)]), (2, &[(3, 500)])]);
        let all = FlowSeries::of(&snap, 10, 100).unwrap();
        let sizes: Vec<u64> = all.flows.iter().map(|f| f.1).collect();
        assert_eq!(sizes, [9, 5, 2]);
        let order: Vec<u16> = all.switches.iter().map(|s| s.switch).collect();
        assert_eq!(order, [1, 2, 3]);
        assert_eq!(all.switches[0].hops, 14);
        let mean = all.switches[0].mean_ns.unwrap();
        assert!((mean - (9.0 * 2000.0 + 5.0 * 1000.0) / 14.0).abs() < 60.0, "{mean}");
        assert_eq!((all.len(), all.dropped), (9, 0));

        let capped = FlowSeries::of(&snap, 2, 5).unwrap();
        assert_eq!(capped.flows.len(), 2);
        assert_eq!(capped.switches.iter().map(|s| s.switch).collect::<Vec<_>>(), [1]);
        assert_eq!((capped.len(), capped.dropped), (4, 5));
    }

    /// A snapshot without the per-switch half has no per-flow series.
    #[test]
    fn no_table_no_series() {
        let snap = software_snapshot(&[], 0, 0).unwrap();
        assert!(FlowSeries::of(&snap, 10, 100).unwrap().is_empty());
    }
}
