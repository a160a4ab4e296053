//! The collector's Prometheus / OpenMetrics metrics (`prometheus-client`): per-device health
//! and the bounded per-flow series. Every series has the label `device` (the `--device`
//! spec); the names are listed in the module doc of [`crate::collect`].
//!
//! The device's own counters (frames, bytes, record drops) count since its reset; they are
//! published as counters that add what the device counted since the last epoch, and all of
//! a value that went down (the device was reset), so the counter never decreases and a
//! `rate()` over a reset stays right.

use super::device::{Failure, Frames, Outcome};
use super::flows::FlowSeries;
use super::{EpochReport, Sink};
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

type Labels = Vec<(&'static str, String)>;
type GaugeF = Gauge<f64, AtomicU64>;

fn device(d: &str) -> Labels {
    vec![("device", d.to_owned())]
}

/// Every metric family the collector publishes.
pub struct Metrics {
    registry: Registry,
    up: Family<Labels, Gauge>,
    epoch: Family<Labels, Gauge>,
    packets: Family<Labels, Gauge>,
    frames: Family<Labels, Counter>,
    sketched: Family<Labels, Counter>,
    bytes: Family<Labels, Counter>,
    non_ip: Family<Labels, Counter>,
    malformed: Family<Labels, Counter>,
    record_drops: Family<Labels, Counter>,
    hops_refused: Family<Labels, Counter>,
    readout_seconds: Family<Labels, Histogram>,
    readout_failures: Family<Labels, Counter>,
    gone: Family<Labels, Counter>,
    written: Family<Labels, Counter>,
    write_failures: Family<Labels, Counter>,
    writable: Family<Labels, Gauge>,
    retained: Family<Labels, Gauge>,
    skipped: Family<Labels, Counter>,
    sink_failures: Family<Labels, Counter>,
    flow_packets: Family<Labels, Gauge>,
    switch_hops: Family<Labels, Gauge>,
    switch_latency: Family<Labels, GaugeF>,
    series_dropped: Family<Labels, Gauge>,
    /// Per device: the device counters last seen, and the per-flow label sets published.
    seen: Mutex<HashMap<String, DeviceSeen>>,
}

#[derive(Default)]
struct DeviceSeen {
    frames: Option<Frames>,
    record_drops: Option<u64>,
    hops_refused: Option<u64>,
    series: Vec<Labels>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Registers every family (none has a series until a device reports).
    pub fn new() -> Self {
        let mut r = Registry::default();
        macro_rules! reg {
            ($name:literal, $help:literal) => {{
                let f = Family::default();
                r.register($name, $help, f.clone());
                f
            }};
        }
        let readout_seconds = Family::<Labels, Histogram>::new_with_constructor(
            (|| Histogram::new(exponential_buckets(0.001, 2.0, 16))) as fn() -> Histogram,
        );
        r.register(
            "smartnic_readout_seconds",
            "Time to open (when needed) and read a device out",
            readout_seconds.clone(),
        );
        Metrics {
            up: reg!(
                "smartnic_device_up",
                "1 when the last epoch's readout succeeded, 0 when the device was gone or failed"
            ),
            epoch: reg!("smartnic_device_epoch", "Epoch of the last snapshot read out"),
            packets: reg!("smartnic_snapshot_packets", "Packets recorded in the last snapshot's epoch"),
            frames: reg!("smartnic_frames", "Frames the NIC received"),
            sketched: reg!("smartnic_sketched_frames", "IP frames the NIC recorded in its sketches"),
            bytes: reg!("smartnic_bytes", "Bytes the NIC received"),
            non_ip: reg!("smartnic_non_ip_frames", "Frames that were not IP"),
            malformed: reg!("smartnic_malformed_frames", "Frames the parser found malformed"),
            record_drops: reg!(
                "smartnic_record_drops",
                "Records the NIC's record stream dropped (buffer full)"
            ),
            hops_refused: reg!(
                "smartnic_hops_refused",
                "Packets whose INT hops the NIC refused (hop serializer full): in the flow sketches, not in the latency tower"
            ),
            readout_seconds,
            readout_failures: reg!(
                "smartnic_readout_failures",
                "Epochs without a snapshot, by reason (open, gone, readout)"
            ),
            gone: reg!(
                "smartnic_device_gone",
                "Epochs the device was gone (read all ones or could not be opened)"
            ),
            written: reg!("smartnic_snapshots_written", "Snapshot files written"),
            write_failures: reg!(
                "smartnic_snapshot_write_failures",
                "Snapshots read out but not written (disk full, read-only)"
            ),
            writable: reg!(
                "smartnic_store_writable",
                "0 while snapshot writes fail, 1 after a write succeeded"
            ),
            retained: reg!("smartnic_snapshots_retained", "Snapshot files kept in the device's directory"),
            skipped: reg!(
                "smartnic_epochs_skipped",
                "Periods skipped because a readout outlasted the period"
            ),
            sink_failures: reg!("smartnic_sink_failures", "Epochs a sink could not publish, by sink"),
            flow_packets: reg!(
                "smartnic_flow_packets",
                "Top flows of the last epoch by size estimate (packets)"
            ),
            switch_hops: reg!(
                "smartnic_switch_hops",
                "Hops of the top flows at each switch in the last epoch"
            ),
            switch_latency: reg!(
                "smartnic_switch_latency_ns",
                "Hop-weighted mean latency of the top flows at each switch (ns)"
            ),
            series_dropped: reg!(
                "smartnic_flow_series_dropped",
                "Per-flow series of the last epoch left out by --top-k and --max-series"
            ),
            registry: r,
            seen: Mutex::new(HashMap::new()),
        }
    }

    /// The OpenMetrics text exposition of every series.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        encode(&mut out, &self.registry).expect("writing to a String cannot fail");
        out
    }

    /// Records one epoch of one device.
    pub fn observe(&self, r: &EpochReport) {
        let l = device(r.device);
        let o = r.outcome;
        self.zero_series(&l);
        self.up.get_or_create(&l).set(o.up() as i64);
        self.readout_seconds.get_or_create(&l).observe(o.elapsed.as_secs_f64());
        if let Some((why, _)) = &o.failure {
            let mut lr = l.clone();
            lr.push(("reason", why.name().to_owned()));
            self.readout_failures.get_or_create(&lr).inc();
            if matches!(why, Failure::Gone | Failure::Open) {
                self.gone.get_or_create(&l).inc();
            }
        }
        if let Some(s) = &o.snapshot {
            self.epoch.get_or_create(&l).set(s.epoch as i64);
            self.packets.get_or_create(&l).set(s.packets as i64);
        }
        self.observe_store(&l, r);
        self.skipped.get_or_create(&l).inc_by(r.skipped);
        self.observe_counters(r.device, &l, o);
        if let Some(series) = r.series {
            self.publish_series(r.device, &l, series);
        }
    }

    /// Creates the device's counters at 0, so a failure that never happened reads 0, not
    /// "no data".
    fn zero_series(&self, l: &Labels) {
        for why in [Failure::Open, Failure::Gone, Failure::Readout] {
            let mut lr = l.clone();
            lr.push(("reason", why.name().to_owned()));
            drop(self.readout_failures.get_or_create(&lr));
        }
        for c in [&self.gone, &self.written, &self.write_failures, &self.skipped] {
            drop(c.get_or_create(l));
        }
    }

    /// The store's part: files written or not, and what is kept.
    fn observe_store(&self, l: &Labels, r: &EpochReport) {
        match (&r.written, &r.write_error) {
            (Some(_), _) => {
                self.written.get_or_create(l).inc();
                self.writable.get_or_create(l).set(1);
            }
            (None, Some(_)) => {
                self.write_failures.get_or_create(l).inc();
                self.writable.get_or_create(l).set(0);
            }
            (None, None) => {}
        }
        self.retained.get_or_create(l).set(r.retained as i64);
    }

    /// Adds what the device counted since the last epoch (all of it after a reset).
    fn observe_counters(&self, dev: &str, l: &Labels, o: &Outcome) {
        let mut seen = self.seen.lock().expect("metrics lock");
        let s = seen.entry(dev.to_owned()).or_default();
        if let Some(f) = o.frames {
            let last = s.frames.unwrap_or_default();
            let add = |c: &Family<Labels, Counter>, now: u64, then: u64| {
                c.get_or_create(l).inc_by(if now >= then { now - then } else { now });
            };
            add(&self.frames, f.frames, last.frames);
            add(&self.sketched, f.sketched, last.sketched);
            add(&self.bytes, f.bytes, last.bytes);
            add(&self.non_ip, f.non_ip, last.non_ip);
            add(&self.malformed, f.malformed, last.malformed);
            s.frames = Some(f);
        }
        let since = |c: &Family<Labels, Counter>, now: Option<u32>, last: &mut Option<u64>| {
            if let Some(now) = now.map(u64::from) {
                let then = last.unwrap_or(0);
                c.get_or_create(l).inc_by(if now >= then { now - then } else { now });
                *last = Some(now);
            }
        };
        let st = o.stats.as_ref();
        since(&self.record_drops, st.and_then(|st| st.records_dropped), &mut s.record_drops);
        since(&self.hops_refused, st.and_then(|st| st.hops_refused), &mut s.hops_refused);
    }

    /// Counts an epoch `sink` could not publish.
    pub fn sink_failed(&self, dev: &str, sink: &str) {
        let mut l = device(dev);
        l.push(("sink", sink.to_owned()));
        self.sink_failures.get_or_create(&l).inc();
    }

    /// Replaces the device's per-flow series with this epoch's.
    fn publish_series(&self, dev: &str, l: &Labels, series: &FlowSeries) {
        let mut seen = self.seen.lock().expect("metrics lock");
        let s = seen.entry(dev.to_owned()).or_default();
        for old in s.series.drain(..) {
            self.flow_packets.remove(&old);
            self.switch_hops.remove(&old);
            self.switch_latency.remove(&old);
        }
        for (flow, n) in &series.flows {
            let mut lf = l.clone();
            lf.push(("flow", flow.clone()));
            self.flow_packets.get_or_create(&lf).set(*n as i64);
            s.series.push(lf);
        }
        for sw in &series.switches {
            let mut ls = l.clone();
            ls.push(("switch", sw.switch.to_string()));
            self.switch_hops.get_or_create(&ls).set(sw.hops as i64);
            if let Some(m) = sw.mean_ns {
                self.switch_latency.get_or_create(&ls).set(m);
            }
            s.series.push(ls);
        }
        self.series_dropped.get_or_create(l).set(series.dropped as i64);
    }
}

/// The metrics as a sink: shared with the HTTP endpoint.
pub struct MetricsSink(pub Arc<Metrics>);

impl Sink for MetricsSink {
    fn name(&self) -> &'static str {
        "prometheus"
    }
    fn publish(&mut self, r: &EpochReport) -> anyhow::Result<()> {
        self.0.observe(r);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::device::Outcome;
    use smartnic_driver::readout::ReadoutStats;
    use std::time::Duration;

    fn epoch(m: &Metrics, dropped: u32, refused: u32) {
        let stats = ReadoutStats {
            records_dropped: Some(dropped),
            hops_refused: Some(refused),
            ..Default::default()
        };
        let o = Outcome {
            snapshot: None,
            stats: Some(stats),
            failure: None,
            frames: None,
            elapsed: Duration::ZERO,
        };
        let r = EpochReport {
            device: "sim:t.pcap",
            outcome: &o,
            written: None,
            write_error: None,
            retained: 0,
            skipped: 0,
            series: None,
        };
        m.observe(&r);
    }

    fn value(text: &str, metric: &str) -> Option<u64> {
        let line = text.lines().find(|l| l.starts_with(&format!("{metric}{{")))?;
        line.rsplit(' ').next()?.parse().ok()
    }

    /// The device's since-reset loss counters become counters that add each epoch's rise,
    /// and a device reset (the count falls) adds the new count.
    #[test]
    fn losses_since_reset_are_counted_once() {
        let m = Metrics::new();
        epoch(&m, 0, 0);
        let t = m.encode();
        assert_eq!(value(&t, "smartnic_hops_refused_total"), Some(0), "{t}");
        epoch(&m, 2, 3);
        epoch(&m, 2, 5);
        let t = m.encode();
        assert_eq!(value(&t, "smartnic_hops_refused_total"), Some(5), "{t}");
        assert_eq!(value(&t, "smartnic_record_drops_total"), Some(2), "{t}");
        epoch(&m, 1, 1);
        let t = m.encode();
        assert_eq!(value(&t, "smartnic_hops_refused_total"), Some(6), "{t}");
        assert_eq!(value(&t, "smartnic_record_drops_total"), Some(3), "{t}");
    }
}
