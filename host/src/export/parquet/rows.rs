//! One device's epoch as Arrow record batches of the three tables (schemas in the module
//! above): the flow and hop records of the IPFIX export, and the health row.

use std::sync::Arc;

use arrow::array::{ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, StringArray};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;

use super::{flows_schema, health_schema, hops_schema};
use crate::export::ipfix::{EpochRecords, FlowId, Record};
use crate::sketch::snapshot::SectionError;
use smartnic_contract::FlowKey;
use smartnic_driver::snapshot::Snapshot;

/// A device's health in an epoch: what the collector knows beside the snapshot. Every
/// field the source does not know is `None` (a file export knows none of the counters).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Health {
    pub frames: Option<u64>,
    pub sketched: Option<u64>,
    pub bytes: Option<u64>,
    pub non_ip: Option<u64>,
    pub malformed: Option<u64>,
    pub records_dropped: Option<u64>,
    /// Why no snapshot was read (`open`, `gone`, `readout`), `None` when one was.
    pub failure: Option<String>,
    pub readout_seconds: Option<f64>,
}

/// One device's epoch, ready to become the three tables' rows.
#[derive(Clone, Debug, PartialEq)]
pub struct EpochRows {
    pub device: String,
    /// `None` when the readout failed (then only a health row is written).
    pub epoch: Option<u64>,
    pub time_ns: u64,
    pub snapshot_packets: Option<u64>,
    /// Flow records, then hop records ([`EpochRecords`]).
    pub records: Vec<Record>,
    pub health: Health,
}

impl EpochRows {
    /// The rows of a snapshot that was read out: the flows of its key table, or
    /// `candidates` ([`EpochRecords::from_snapshot`]).
    pub fn from_snapshot(
        device: &str,
        snap: &Snapshot,
        candidates: Option<&[FlowKey]>,
        health: Health,
    ) -> Result<Self, SectionError> {
        let records = EpochRecords::from_snapshot(snap, candidates)?.records;
        Ok(EpochRows {
            device: device.to_string(),
            epoch: Some(snap.epoch),
            time_ns: snap.time_ns,
            snapshot_packets: Some(snap.packets),
            records,
            health,
        })
    }

    /// An epoch without a snapshot: only its health row.
    pub fn failed(device: &str, time_ns: u64, health: Health) -> Self {
        EpochRows {
            device: device.to_string(),
            epoch: None,
            time_ns,
            snapshot_packets: None,
            records: Vec::new(),
            health,
        }
    }

    /// Table `name`'s rows of this epoch; `None` for the flow tables of a failed epoch.
    pub fn batch(&self, name: &str) -> Option<Result<RecordBatch, ArrowError>> {
        match name {
            "flows" => self.epoch.map(|e| self.flows(e)),
            "hops" => self.epoch.map(|e| self.hops(e)),
            "health" => Some(self.health_batch()),
            _ => None,
        }
    }

    fn flows(&self, epoch: u64) -> Result<RecordBatch, ArrowError> {
        let rows: Vec<(&FlowId, u64)> = self
            .records
            .iter()
            .filter_map(|r| match r {
                Record::Flow { flow, packets, .. } => Some((flow, *packets)),
                Record::Hop { .. } => None,
            })
            .collect();
        let mut cols = self.key_columns(epoch, rows.len());
        cols.extend(flow_columns(rows.iter().map(|r| r.0)));
        cols.push(int64(rows.iter().map(|r| Some(r.1))));
        RecordBatch::try_new(flows_schema(), cols)
    }

    fn hops(&self, epoch: u64) -> Result<RecordBatch, ArrowError> {
        type HopRow<'a> = (&'a FlowId, u16, u16, Option<u64>, Option<u64>);
        let rows: Vec<HopRow> = self
            .records
            .iter()
            .filter_map(|r| match r {
                Record::Hop { flow, switch_id, hop_index, hop_packets, avg_latency_ns, .. } => {
                    Some((flow, *switch_id, *hop_index, *hop_packets, *avg_latency_ns))
                }
                Record::Flow { .. } => None,
            })
            .collect();
        let mut cols = self.key_columns(epoch, rows.len());
        cols.extend(flow_columns(rows.iter().map(|r| r.0)));
        cols.push(Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| i32::from(r.1)))));
        cols.push(Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| i32::from(r.2)))));
        cols.push(int64(rows.iter().map(|r| r.3)));
        cols.push(int64(rows.iter().map(|r| r.4)));
        RecordBatch::try_new(hops_schema(), cols)
    }

    fn health_batch(&self) -> Result<RecordBatch, ArrowError> {
        let h = &self.health;
        let one = |v: Option<u64>| int64([v]);
        let cols: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from(vec![self.device.as_str()])),
            one(self.epoch),
            one(Some(self.time_ns)),
            one(self.snapshot_packets),
            one(h.frames),
            one(h.sketched),
            one(h.bytes),
            one(h.non_ip),
            one(h.malformed),
            one(h.records_dropped),
            Arc::new(BooleanArray::from(vec![self.epoch.is_some()])),
            Arc::new(StringArray::from(vec![h.failure.as_deref()])),
            Arc::new(Float64Array::from(vec![h.readout_seconds])),
        ];
        RecordBatch::try_new(health_schema(), cols)
    }

    /// `device`, `epoch`, `time_ns` repeated for `n` rows.
    fn key_columns(&self, epoch: u64, n: usize) -> Vec<ArrayRef> {
        vec![
            Arc::new(StringArray::from_iter_values(std::iter::repeat_n(self.device.as_str(), n))),
            int64(std::iter::repeat_n(Some(epoch), n)),
            int64(std::iter::repeat_n(Some(self.time_ns), n)),
        ]
    }
}

/// The five 5-tuple columns of `flows`.
fn flow_columns<'a>(flows: impl Iterator<Item = &'a FlowId> + Clone) -> Vec<ArrayRef> {
    vec![
        Arc::new(StringArray::from_iter_values(flows.clone().map(|f| f.src().to_string()))),
        Arc::new(StringArray::from_iter_values(flows.clone().map(|f| f.dst().to_string()))),
        Arc::new(Int32Array::from_iter_values(flows.clone().map(|f| i32::from(f.src_port)))),
        Arc::new(Int32Array::from_iter_values(flows.clone().map(|f| i32::from(f.dst_port)))),
        Arc::new(Int32Array::from_iter_values(flows.map(|f| i32::from(f.proto)))),
    ]
}

/// An int64 column; a value past `i64::MAX` (never a real count, time or epoch) is NULL
/// rather than a wrapped negative number.
fn int64(values: impl IntoIterator<Item = Option<u64>>) -> ArrayRef {
    Arc::new(Int64Array::from_iter(values.into_iter().map(|v| v.and_then(|v| i64::try_from(v).ok()))))
}
