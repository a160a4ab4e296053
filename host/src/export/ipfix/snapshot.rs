//! An epoch's records from a snapshot alone, through the report library: flows sized by
//! the sketch the report sizes them with, hops answered by the latency tower as the
//! report's per-switch latency answers them.

use std::collections::BTreeMap;

use smartnic_contract::FlowKey;
use smartnic_driver::snapshot::Snapshot;

use super::record::{FlowId, Record};
use crate::sketch::latency_tower::LatencyTower;
use crate::sketch::snapshot::{per_switch_state, sketches_of, SectionError};
use crate::tasks::flow_size;
use crate::tasks::per_switch::pair_latency_ns;

/// The records of one epoch, and what the snapshot could not answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EpochRecords {
    pub epoch: u64,
    /// Flow records first (largest flow first), then each flow's hops in path order.
    pub records: Vec<Record>,
    /// Why some records are missing (no key table, no flow sketch, no latency tower).
    pub notes: Vec<String>,
}

impl EpochRecords {
    /// The records `snap` answers. The flows are `candidates` when given (keys of the
    /// key table keep their paths), else the key table's flows; a snapshot with neither
    /// has no flows to export (a sketch holds counters, not keys), which a note says.
    pub fn from_snapshot(snap: &Snapshot, candidates: Option<&[FlowKey]>) -> Result<Self, SectionError> {
        let sketches = sketches_of(snap)?;
        let state = per_switch_state(snap)?;
        let mut notes = Vec::new();
        let paths: BTreeMap<FlowKey, Vec<u16>> =
            state.table.iter().flat_map(|t| t.table.entries()).map(|e| (e.key, e.path.clone())).collect();
        let mut keys: Vec<FlowKey> = match candidates {
            Some(c) => c.to_vec(),
            None if state.table.is_some() => paths.keys().copied().collect(),
            None => {
                notes.push("no key table and no candidate keys: no flows to export".into());
                Vec::new()
            }
        };
        let sizes = flow_size::sizing_sketch(&sketches);
        let size = |k: &FlowKey| sizes.map(|s| flow_size::estimate(s, k));
        keys.sort_by(|a, b| size(b).cmp(&size(a)).then(a.cmp(b)));
        keys.dedup();
        let mut records = Vec::new();
        if sizes.is_none() && !keys.is_empty() {
            notes.push("no flow sketch in the snapshot: no flow records (packets unknown)".into());
        }
        records.extend(keys.iter().filter_map(|k| {
            size(k).map(|packets| Record::Flow { flow: FlowId::from_key(k), epoch: snap.epoch, packets })
        }));
        match &state.latency {
            Some(tower) => {
                for k in &keys {
                    let path = paths.get(k).map_or(&[][..], Vec::as_slice);
                    records.extend(hops(tower, snap.epoch, k, path));
                }
            }
            None if !paths.is_empty() => {
                notes.push("no latency tower in the snapshot: no hop records".into())
            }
            None => {}
        }
        Ok(EpochRecords { epoch: snap.epoch, records, notes })
    }
}

/// One hop record per switch of `path` (a looping path's switch at each of its positions).
fn hops<'a>(
    tower: &'a LatencyTower,
    epoch: u64,
    k: &'a FlowKey,
    path: &'a [u16],
) -> impl Iterator<Item = Record> + 'a {
    path.iter().enumerate().map(move |(i, &switch_id)| Record::Hop {
        flow: FlowId::from_key(k),
        epoch,
        switch_id,
        hop_index: (i + 1) as u16,
        hop_packets: tower.query(switch_id, k).count,
        avg_latency_ns: pair_latency_ns(tower, switch_id, k).map(|ns| ns.round() as u64),
    })
}
