//! `trace stats`: exact per-flow statistics of a trace.
//!
//! Why: this is the reference against which sketches are judged on real captures, and
//! the check that a generated trace parses back to its ground truth. The output uses the
//! field names of [`super::truth`], so a `--json` report and a truth file compare
//! directly.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::io::Read;
use std::path::Path;

use serde::Serialize;
use smartnic_contract::FlowKey;

use super::capture::{Format, PacketReader};
use super::error::TraceError;
use super::frame::{Classified, FrameError};
use super::pipeline::{for_each_batch, BATCH};
use super::truth::{sort_flows, FlowAcc, FlowRecord, Totals};
use super::Packet;

/// A fast hasher for 13-byte flow keys (multiply-rotate over 8-byte words, as rustc's
/// own hash tables do). The table is filled once per trace on one machine; SipHash's
/// resistance to chosen collisions bought nothing there and cost a third of `trace stats`.
#[derive(Clone, Copy, Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Accumulates packets into flows and counts what was not IP.
#[derive(Default)]
pub struct FlowTable {
    flows: HashMap<FlowKey, FlowAcc, BuildHasherDefault<KeyHasher>>,
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

    /// Counts the frames `reader` skipped (non-IP, malformed by reason), for a table fed
    /// with its packets only.
    pub fn add_skipped<R: Read>(&mut self, reader: &PacketReader<R>) {
        self.totals.non_ip += reader.counts().non_ip;
        for (reason, n) in reader.malformed_by_reason() {
            self.totals.malformed += n;
            *self.malformed.entry(reason.to_string()).or_default() += n;
        }
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
    compute_from(&mut PacketReader::open_as(path, format)?, |_| {})
}

/// The statistics of everything `reader` holds, parsed on a second thread while the flow
/// table fills; `progress` gets the packet count after every batch.
pub fn compute_from<R: Read + Send>(
    reader: &mut PacketReader<R>,
    mut progress: impl FnMut(u64),
) -> Result<TraceStats, TraceError> {
    let mut table = FlowTable::new();
    let mut n = 0u64;
    for_each_batch(reader, BATCH, |batch| {
        batch.iter().for_each(|p| table.add_packet(p));
        n += batch.len() as u64;
        progress(n);
        Ok::<_, TraceError>(())
    })?;
    table.add_skipped(reader);
    Ok(table.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::capture::CaptureReader;
    use crate::trace::gen::{generate, GenConfig, ShimConfig};
    use crate::trace::pcap::{PcapWriter, LINKTYPE_ETHERNET};

    /// A generated trace with INT stacks and ARP frames, and after every 50th frame a
    /// malformed one (an Ethernet header cut short, or an IPv4 EtherType with 3 bytes).
    fn mixed_trace() -> Vec<u8> {
        let cfg = GenConfig {
            packets: 3000,
            flows: 200,
            non_ip: 0.1,
            shim: Some(ShimConfig::default()),
            ..GenConfig::default()
        };
        let mut clean = Vec::new();
        generate(&cfg, &mut clean, None).unwrap();
        let mut r = CaptureReader::new(&clean[..]).unwrap();
        let mut w = PcapWriter::new(Vec::new(), 65535, LINKTYPE_ETHERNET).unwrap();
        let mut n = 0u64;
        while let Some(f) = r.next_frame().unwrap() {
            w.write(f.ts_ns, f.orig_len, f.data).unwrap();
            n += 1;
            if n.is_multiple_of(50) {
                let cut: &[u8] = if n.is_multiple_of(100) {
                    &[0; 10]
                } else {
                    &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0x45, 0, 0]
                };
                w.write(f.ts_ns, cut.len() as u32, cut).unwrap();
            }
        }
        w.into_inner().unwrap()
    }

    /// The pipelined statistics are those of the frame-by-frame table, malformed reasons
    /// and non-IP counts included.
    #[test]
    fn pipelined_stats_equal_frame_by_frame_stats() {
        let bytes = mixed_trace();
        let mut reader = PacketReader::from_reader(&bytes[..], Format::Auto).unwrap();
        let mut table = FlowTable::new();
        while let Some(c) = reader.next_classified().unwrap() {
            table.add(&c);
        }
        let want = table.finish();
        assert!(want.totals.non_ip > 100 && want.malformed_by_reason.len() == 2, "{:?}", want.totals);
        let mut reader = PacketReader::from_reader(&bytes[..], Format::Auto).unwrap();
        let got = compute_from(&mut reader, |_| {}).unwrap();
        assert_eq!(got, want);
    }
}
