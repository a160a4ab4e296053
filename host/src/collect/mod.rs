//! The collector daemon behind `smartnic collect`: every period, each configured device is
//! swapped and read out (the driver's readout, as `smartnic device readout --every`), its
//! snapshot kept on disk under a retention policy, and the epoch published to the sinks.
//!
//! ```text
//! device thread (one per --device)            sinks, in order, for every epoch
//!   wait for the period (or the stop flag)      Store: DIR/<device>/t<time>-epoch-<n>.snap,
//!   DeviceLoop::epoch: open if needed, swap,           durable and atomic, the --keep newest
//!     read out, frame counters                  Metrics (Prometheus / OpenMetrics at /metrics)
//!   EpochReport -> every Sink                   IPFIX (--ipfix), Parquet tables (--parquet)
//! ```
//!
//! - [`device`]: opening a device again after it went away, the readout, the frame counters.
//! - [`store`]: one directory per device, tmp + fsync + rename, retention after success.
//! - [`flows`]: the bounded per-flow series from a snapshot (top-k flows, per-switch latency).
//! - [`metrics`]: the Prometheus metrics; [`http`]: the `/metrics` endpoint on its own thread.
//!
//! An exporter (IPFIX, Parquet) is one more [`Sink`]: it receives every epoch's
//! [`EpochReport`] (the snapshot when there is one, the device's health, the file written)
//! and is added in [`extra_sinks`]. A sink that fails is logged and counted
//! (`smartnic_sink_failures_total`); it never stops the readouts or the other sinks.
//!
//! What the daemon survives: a device that disappears and comes back (the epoch fails, it is
//! opened anew the next one, `smartnic_device_up` goes 0 then 1, no retained file is
//! touched: a reset device's epoch numbers start over, file names carry the readout time);
//! a full disk (the write fails and removes its temporary file, retention deletes nothing,
//! `smartnic_store_writable` is 0 and one log line says so until a write succeeds again); a
//! slow readout (periods it outlasted are skipped and counted, never queued); a slow scraper
//! (served from its own thread); SIGTERM or SIGINT mid-readout (the current readout and its
//! file are finished, then the daemon exits 0; a second SIGINT exits at once: the atomic
//! write leaves no torn snapshot, and a temporary file it may leave is removed at the next
//! start).
//!
//! Metrics, each with the label `device` (counters end in `_total` in the exposition):
//!
//! | metric | type | what |
//! |---|---|---|
//! | `smartnic_device_up` | gauge | 1 when the last epoch's readout succeeded, 0 when the device was gone or failed |
//! | `smartnic_device_epoch` | gauge | epoch of the last snapshot |
//! | `smartnic_snapshot_packets` | gauge | packets in the last snapshot's epoch |
//! | `smartnic_frames_total`, `smartnic_sketched_frames_total`, `smartnic_bytes_total`, `smartnic_non_ip_frames_total`, `smartnic_malformed_frames_total` | counter | the NIC's frame counters (statistics block) |
//! | `smartnic_record_drops_total` | counter | records the NIC's record stream dropped |
//! | `smartnic_hops_refused_total` | counter | packets whose INT hops the NIC refused (its hop serializer full): counted in the flow sketches, missing from the latency tower and the records |
//! | `smartnic_readout_seconds` | histogram | time to open (when needed) and read out |
//! | `smartnic_readout_failures_total` | counter | epochs without a snapshot, label `reason`: open, gone, readout |
//! | `smartnic_device_gone_total` | counter | epochs the device was gone or could not be opened |
//! | `smartnic_snapshots_written_total`, `smartnic_snapshot_write_failures_total` | counter | snapshot files written, and read out but not written |
//! | `smartnic_store_writable` | gauge | 0 while writes fail (disk full, read-only) |
//! | `smartnic_snapshots_retained` | gauge | files kept in the device's directory |
//! | `smartnic_epochs_skipped_total` | counter | periods a slow readout outlasted |
//! | `smartnic_sink_failures_total` | counter | epochs a sink could not publish, label `sink` |
//! | `smartnic_flow_packets` | gauge | top-k flows of the last epoch (label `flow`), size estimate |
//! | `smartnic_switch_hops`, `smartnic_switch_latency_ns` | gauge | per switch (label `switch`): hops and mean latency of the top flows |
//! | `smartnic_flow_series_dropped` | gauge | per-flow series left out by `--top-k` / `--max-series` |

pub mod device;
pub mod flows;
pub mod http;
pub mod ipfix;
pub mod metrics;
pub mod parquet;
pub mod sim;
pub mod store;

use anyhow::Context;
use device::{DeviceLoop, Opener, Outcome};
use flows::FlowSeries;
use metrics::{Metrics, MetricsSink};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use store::Store;

/// What the collector is asked to do.
#[derive(Clone, Debug)]
pub struct Config {
    /// `--device` specs, each read out in its own thread.
    pub devices: Vec<String>,
    pub every: Duration,
    /// Snapshots go to `dir/<device>/` ([`device_dir`]).
    pub dir: PathBuf,
    /// Snapshots kept per device.
    pub keep: usize,
    /// Flows published per epoch and device.
    pub top_k: usize,
    /// Per-flow series (flows + switches) per device at most.
    pub max_series: usize,
    /// Status lines as JSON objects (else text).
    pub json: bool,
    /// An IPFIX collector to export every epoch to (observation domain = the device's
    /// position among `devices`, from 1), and the largest message in bytes.
    pub ipfix: Option<SocketAddr>,
    pub ipfix_mtu: usize,
    /// A directory to write every epoch's Parquet tables to ([`crate::export::parquet`]).
    pub parquet: Option<PathBuf>,
}

/// Where status lines go (the CLI: stdout with `--json`, else stderr).
pub type LogFn = dyn Fn(&str) + Send + Sync;

/// What the device threads share: how to open a device, the metrics, the stop flag (set by
/// SIGTERM/SIGINT in the CLI) and the status log.
#[derive(Clone)]
pub struct Services {
    pub opener: Arc<Opener>,
    pub metrics: Arc<Metrics>,
    pub stop: Arc<AtomicBool>,
    pub log: Arc<LogFn>,
}

/// One epoch of one device, as every sink receives it.
pub struct EpochReport<'a> {
    pub device: &'a str,
    pub outcome: &'a Outcome,
    /// The file the snapshot was written to.
    pub written: Option<PathBuf>,
    /// Why a snapshot that was read out was not written.
    pub write_error: Option<String>,
    /// Files kept in the device's directory.
    pub retained: usize,
    /// Periods skipped before this epoch.
    pub skipped: u64,
    /// The per-flow series of the snapshot.
    pub series: Option<&'a FlowSeries>,
}

/// Where an epoch goes besides the store: the metrics, and any exporter.
pub trait Sink: Send {
    /// The `sink` label of `smartnic_sink_failures_total`.
    fn name(&self) -> &'static str;
    fn publish(&mut self, report: &EpochReport) -> anyhow::Result<()>;
}

/// Exporters beyond the metrics (IPFIX, Parquet): one line each. Made before the device
/// threads start, so a bad exporter setting fails the daemon at once.
pub fn extra_sinks(cfg: &Config, device_index: usize) -> anyhow::Result<Vec<Box<dyn Sink>>> {
    let mut sinks: Vec<Box<dyn Sink>> = Vec::new();
    if let Some(collector) = cfg.ipfix {
        let domain = device_index as u32 + 1;
        sinks.push(Box::new(ipfix::IpfixSink::new(collector, domain, cfg.ipfix_mtu)?));
    }
    if let Some(dir) = &cfg.parquet {
        sinks.push(Box::new(parquet::ParquetSink::new(dir.clone())?));
    }
    Ok(sinks)
}

/// A device's directory name: its spec with every character outside `[A-Za-z0-9._-]` as `_`.
pub fn device_dir(spec: &str) -> String {
    spec.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' }).collect()
}

/// What one device thread did.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct DeviceSummary {
    pub device: String,
    pub epochs: u64,
    pub written: u64,
    pub failed: u64,
}

/// Checks the configuration and opens every device's store (before any thread starts).
pub fn prepare(cfg: &Config) -> anyhow::Result<Vec<Store>> {
    anyhow::ensure!(!cfg.devices.is_empty(), "give at least one --device");
    anyhow::ensure!(!cfg.every.is_zero(), "--every must be longer than zero");
    let mut dirs: Vec<(String, &str)> = Vec::new();
    for spec in &cfg.devices {
        let d = device_dir(spec);
        if let Some((_, other)) = dirs.iter().find(|(x, _)| *x == d) {
            anyhow::bail!(
                "--device {spec} and --device {other} would share the directory {d}; give each device once"
            );
        }
        dirs.push((d, spec));
    }
    dirs.iter().map(|(d, _)| Store::open(&cfg.dir.join(d), cfg.keep)).collect()
}

/// Runs every device until `stop` is set; returns what each did.
pub fn run(cfg: &Config, services: &Services) -> anyhow::Result<Vec<DeviceSummary>> {
    let stores = prepare(cfg)?;
    let extra: Vec<_> = (0..cfg.devices.len()).map(|i| extra_sinks(cfg, i)).collect::<anyhow::Result<_>>()?;
    let threads: Vec<_> = cfg
        .devices
        .iter()
        .zip(stores)
        .zip(extra)
        .map(|((spec, store), extra)| {
            let (cfg, sv, spec) = (cfg.clone(), services.clone(), spec.clone());
            std::thread::Builder::new()
                .name(format!("collect {spec}"))
                .spawn(move || run_device(&cfg, &spec, store, extra, &sv))
                .context("cannot start a device thread")
        })
        .collect::<anyhow::Result<_>>()?;
    Ok(threads.into_iter().map(|t| t.join().expect("a device thread panicked")).collect())
}

/// One device's loop: an epoch every period until `stop`.
fn run_device(
    cfg: &Config,
    spec: &str,
    store: Store,
    extra: Vec<Box<dyn Sink>>,
    sv: &Services,
) -> DeviceSummary {
    let mut dev = DeviceLoop::new(spec);
    let mut sinks: Vec<Box<dyn Sink>> = vec![Box::new(MetricsSink(sv.metrics.clone()))];
    sinks.extend(extra);
    let log = Log { json: cfg.json, device: spec, out: &*sv.log };
    let mut state = State::default();
    let mut sum = DeviceSummary { device: spec.to_owned(), ..Default::default() };
    let mut next = Instant::now() + cfg.every;
    let mut skipped = 0;
    while wait_until(next, &sv.stop) {
        let outcome = dev.epoch(&*sv.opener);
        let series = flow_series(cfg, &outcome, &log);
        let report = epoch_report(spec, &store, &outcome, series.as_ref(), skipped, &log, &mut state);
        sum.epochs += 1;
        sum.written += report.written.is_some() as u64;
        sum.failed += outcome.failure.is_some() as u64;
        for s in sinks.iter_mut() {
            if let Err(e) = s.publish(&report) {
                log.line("sink-failed", &format!("sink {} failed: {e:#}", s.name()), None);
                sv.metrics.sink_failed(spec, s.name());
            }
        }
        (next, skipped) = schedule(next, cfg.every, Instant::now());
    }
    log.line(
        "stopped",
        &format!(
            "stopped after {} epochs ({} snapshots written); no readout was cut short",
            sum.epochs, sum.written
        ),
        None,
    );
    sum
}

/// Health transitions a device's log reports once, not every epoch.
#[derive(Default)]
struct State {
    down: bool,
    write_failing: bool,
}

/// Stores the snapshot (when there is one), logs, and builds the sinks' report.
fn epoch_report<'a>(
    spec: &'a str,
    store: &Store,
    o: &'a Outcome,
    series: Option<&'a FlowSeries>,
    skipped: u64,
    log: &Log,
    st: &mut State,
) -> EpochReport<'a> {
    if let Some((why, e)) = &o.failure {
        if !st.down {
            log.line("down", &format!("no snapshot ({}): {e}; trying again every period", why.name()), None);
        }
        st.down = true;
    } else if st.down {
        log.line("up", "the device answers again", None);
        st.down = false;
    }
    let (mut written, mut write_error) = (None, None);
    if let Some(snap) = &o.snapshot {
        match store.write(snap) {
            Ok(p) => {
                if st.write_failing {
                    log.line(
                        "write-resumed",
                        &format!("writing snapshots again into {}", store.dir().display()),
                        None,
                    );
                }
                st.write_failing = false;
                written = Some(p);
            }
            Err(e) => {
                if !st.write_failing {
                    log.line(
                        "write-failed",
                        &format!("snapshot writing stopped: {e:#}; the retained files are kept as they are"),
                        None,
                    );
                }
                st.write_failing = true;
                write_error = Some(format!("{e:#}"));
            }
        }
        log_snapshot(log, snap, written.as_deref(), o);
    }
    let retained = store.retained().map_or(0, |v| v.len());
    EpochReport { device: spec, outcome: o, written, write_error, retained, skipped, series }
}

/// The snapshot's per-flow series (none, and a log line, when it cannot be decoded).
fn flow_series(cfg: &Config, o: &Outcome, log: &Log) -> Option<FlowSeries> {
    match FlowSeries::of(o.snapshot.as_ref()?, cfg.top_k, cfg.max_series) {
        Ok(s) => Some(s),
        Err(e) => {
            log.line("series-failed", &format!("no per-flow series for this epoch: {e:#}"), None);
            None
        }
    }
}

fn log_snapshot(log: &Log, snap: &smartnic_driver::snapshot::Snapshot, path: Option<&Path>, o: &Outcome) {
    let file = path.map(|p| p.display().to_string());
    let text = format!(
        "epoch {} ({} packets) -> {} in {:.0} ms",
        snap.epoch,
        snap.packets,
        file.as_deref().unwrap_or("not written"),
        o.elapsed.as_secs_f64() * 1e3
    );
    let extra = serde_json::json!({"epoch": snap.epoch, "packets": snap.packets, "file": file, "readout_ms": o.elapsed.as_secs_f64() * 1e3});
    log.line("snapshot", &text, Some(extra));
}

/// The next deadline after one at `due` ran until `now`, and the periods skipped: a readout
/// that outlasted its period starts the next one at once, never a backlog of them.
fn schedule(due: Instant, every: Duration, now: Instant) -> (Instant, u64) {
    let next = due + every;
    if now <= next {
        return (next, 0);
    }
    // Deadlines after `next` that passed too: one readout now stands for `next` itself.
    let behind = (now - next).as_nanos() / every.as_nanos();
    (now, behind as u64)
}

/// Sleeps until `deadline` in short steps; false as soon as `stop` is set.
fn wait_until(deadline: Instant, stop: &AtomicBool) -> bool {
    const STEP: Duration = Duration::from_millis(20);
    loop {
        if stop.load(Ordering::SeqCst) {
            return false;
        }
        let now = Instant::now();
        if now >= deadline {
            return true;
        }
        std::thread::sleep(STEP.min(deadline - now));
    }
}

/// Status lines: `collect: DEVICE: text`, or one JSON object a line with `--json`.
struct Log<'a> {
    json: bool,
    device: &'a str,
    out: &'a LogFn,
}

impl Log<'_> {
    fn line(&self, event: &str, text: &str, extra: Option<serde_json::Value>) {
        if !self.json {
            return (self.out)(&format!("collect: {}: {text}", self.device));
        }
        let mut v = serde_json::json!({"device": self.device, "event": event, "message": text});
        if let (Some(serde_json::Value::Object(m)), Some(o)) = (extra, v.as_object_mut()) {
            o.extend(m);
        }
        (self.out)(&v.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A readout within its period keeps the grid; one that outlasted periods starts the next
    /// at once and counts the periods skipped, never a backlog.
    #[test]
    fn a_slow_readout_skips_periods_instead_of_queueing_them() {
        let (t0, p) = (Instant::now(), Duration::from_secs(5));
        assert_eq!(schedule(t0, p, t0 + Duration::from_secs(1)), (t0 + p, 0));
        assert_eq!(schedule(t0, p, t0 + p), (t0 + p, 0));
        let late = t0 + Duration::from_secs(7);
        assert_eq!(schedule(t0, p, late), (late, 0), "due at 5 s: run at once, nothing skipped");
        let later = t0 + Duration::from_secs(12);
        assert_eq!(schedule(t0, p, later), (later, 1), "due at 5 and 10 s: one run, one skipped");
    }

    #[test]
    fn device_directories_are_plain_names() {
        assert_eq!(device_dir("vfio:0000:03:00.0"), "vfio_0000_03_00.0");
        assert_eq!(device_dir("sim:/tmp/t.pcap"), "sim__tmp_t.pcap");
    }
}
