//! `trace stats`: exact per-flow statistics of a trace.
//!
//! Why: this is the reference against which sketches are judged on real captures, and
//! the check that a generated trace parses back to its ground truth. The output uses the
//! field names of [`super::truth`], so a `--json` report and a truth file compare
//! directly.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::Serialize;
use smartnic_contract::FlowKey;

use super::capture::{scan, Format};
use super::error::TraceError;
use super::frame::{Classified, FrameError};
use super::truth::{sort_flows, FlowAcc, FlowRecord, Totals};
use super::Packet;

/// Accumulates packets into flows and counts what was not IP.
#[derive(Default)]
pub struct FlowTable {
    flows: HashMap<FlowKey, FlowAcc>,
    totals: Totals,
    malformed: BTreeMap<String, u64>,
}

impl FlowTable {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add_packet(&mut self, p: &Packet) {
        let t = &mut self.totals;
        if t.packets == 0 {
            t.first_ns = p.ts_ns;
            t.last_ns = p.ts_ns;
        }
        t.first_ns = t.first_ns.min(p.ts_ns);
        t.last_ns = t.last_ns.max(p.ts_ns);
        t.packets += 1;
        t.bytes += p.wire_len as u64;
        t.delay_ns += p.delay_ns();
        self.flows.entry(p.key).or_default().add(p.ts_ns, p.wire_len, &p.hops);
    }

    pub fn add_non_ip(&mut self) {
        self.totals.non_ip += 1;
    }

    pub fn add_malformed(&mut self, e: &FrameError) {
        self.totals.malformed += 1;
        *self.malformed.entry(e.name().to_string()).or_default() += 1;
    }

    pub fn add(&mut self, c: &Classified) {
        match c {
            Classified::Packet(p) => self.add_packet(p),
            Classified::NonIp => self.add_non_ip(),
            Classified::Malformed(e) => self.add_malformed(e),
        }
    }

    /// Finishes: totals plus all flows, most packets first.
    pub fn finish(self) -> TraceStats {
        let mut totals = self.totals;
        totals.flows = self.flows.len() as u64;
        totals.duration_ns = totals.last_ns - totals.first_ns;
        let mut flows: Vec<(FlowKey, FlowRecord)> =
            self.flows.iter().map(|(k, a)| (*k, a.record(k))).collect();
        sort_flows(&mut flows);
        TraceStats {
            totals,
            malformed_by_reason: self.malformed,
            flows: flows.into_iter().map(|(_, r)| r).collect(),
        }
    }
}

/// The statistics of a whole trace.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceStats {
    pub totals: Totals,
    /// Malformed frames by reason (see `FrameError::name`).
    pub malformed_by_reason: BTreeMap<String, u64>,
    /// Every flow, most packets first (ties by key bytes).
    pub flows: Vec<FlowRecord>,
}

/// What `--json` prints: totals, malformed reasons, the top flows and optionally all.
#[derive(Serialize)]
pub struct StatsReport<'a> {
    pub totals: &'a Totals,
    pub malformed_by_reason: &'a BTreeMap<String, u64>,
    pub top: &'a [FlowRecord],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flows: Option<&'a [FlowRecord]>,
}

impl TraceStats {
    /// The report with the `top` largest flows, and every flow when `all`.
    pub fn report(&self, top: usize, all: bool) -> StatsReport<'_> {
        StatsReport {
            totals: &self.totals,
            malformed_by_reason: &self.malformed_by_reason,
            top: &self.flows[..top.min(self.flows.len())],
            flows: all.then_some(&self.flows[..]),
        }
    }
}

/// Reads `path` and computes its statistics.
pub fn compute(path: &Path, format: Format) -> Result<TraceStats, TraceError> {
    let mut table = FlowTable::new();
    scan(path, format, |c| table.add(&c))?;
    Ok(table.finish())
}
