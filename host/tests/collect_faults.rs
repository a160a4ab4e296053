//! The collector against the faults it must survive, on the driver's emulated NIC (a
//! register-level device with the contract's map, swap and clear): a device that goes away
//! and comes back from reset, a full disk (a small tmpfs, so this test runs as root), a stop
//! request in the middle of a readout, retention over several devices, a stalled scraper.

use smartnic::collect::device::{Device, Opened};
use smartnic::collect::http::Endpoint;
use smartnic::collect::metrics::Metrics;
use smartnic::collect::{device_dir, run, Config, DeviceSummary, Services};
use smartnic_contract::geometry::{SuMaxGeometry, TowerGeometry};
use smartnic_contract::per_switch::{KeyTableGeometry, LatencyTowerGeometry, PerSwitchGeometry};
use smartnic_contract::regs::layout::FirmwareInfo;
use smartnic_contract::regs::{epoch, DEVICE_GONE};
use smartnic_driver::access::{AccessError, C2hChannel, RecordRing, RegisterAccess};
use smartnic_driver::blocks::DeviceMap;
use smartnic_driver::emulated::EmulatedNic;
use smartnic_driver::readout::ReadoutConfig;
use smartnic_driver::snapshot::Snapshot;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const PERIOD: Duration = Duration::from_millis(30);

/// A small NIC with every block, its swap and clear done by their first poll; `depth` sizes
/// the flow tower (and so the snapshot file).
fn nic(depth: u32) -> EmulatedNic {
    let (t, s) =
        (TowerGeometry::from_widths_depths(&[(8, depth), (16, depth / 2)]), SuMaxGeometry::with_depth(2, 8));
    let p = PerSwitchGeometry {
        latency: LatencyTowerGeometry::from_cells(&[(8, 24, 16)], 4),
        table: KeyTableGeometry::with_capacity(8),
    };
    let mut n = EmulatedNic::with_per_switch(FirmwareInfo::default(), &t, &s, &p);
    n.latency = 0;
    n
}

/// The emulated NIC behind a switch: while `gone` is set every read is all ones (a card
/// pulled or reset); `on_swap` runs at each SWAP written to CONTROL.
struct Flaky {
    nic: EmulatedNic,
    gone: Arc<AtomicBool>,
    control: u32,
    on_swap: Option<Arc<dyn Fn() + Send + Sync>>,
}

impl RegisterAccess for Flaky {
    fn bar_size(&self) -> u64 {
        self.nic.bar_size()
    }
    fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
        if self.gone.load(Ordering::SeqCst) {
            return Ok(DEVICE_GONE);
        }
        self.nic.read32(offset)
    }
    fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
        if offset == self.control && value & epoch::CONTROL_SWAP != 0 {
            if let Some(f) = &self.on_swap {
                f();
            }
        }
        self.nic.write32(offset, value)
    }
    fn c2h(&mut self) -> Option<&mut dyn C2hChannel> {
        self.nic.c2h()
    }
    fn ring(&mut self) -> Option<&mut dyn RecordRing> {
        self.nic.ring()
    }
}

/// Opens a fresh emulated NIC (a device comes back from reset at epoch 0) unless `gone`.
struct Bench {
    gone: Arc<AtomicBool>,
    depth: u32,
    on_swap: Option<Arc<dyn Fn() + Send + Sync>>,
}

impl Bench {
    fn new(depth: u32) -> Bench {
        Bench { gone: Arc::new(AtomicBool::new(false)), depth, on_swap: None }
    }

    fn opener(self: &Arc<Self>) -> Arc<smartnic::collect::device::Opener> {
        let b = self.clone();
        Arc::new(move |spec: &str| {
            if b.gone.load(Ordering::SeqCst) {
                anyhow::bail!("device {spec}: no such device");
            }
            let mut nic = nic(b.depth);
            let control = DeviceMap::discover(&mut nic).unwrap().epoch + epoch::CONTROL;
            let dev: Box<dyn RegisterAccess> =
                Box::new(Flaky { nic, gone: b.gone.clone(), control, on_swap: b.on_swap.clone() });
            let dev: Box<dyn Device> = Box::new(dev);
            Ok(Opened { dev, readout: ReadoutConfig::default() })
        })
    }
}

/// A collector running in its own thread.
struct Running {
    services: Services,
    logs: Arc<Mutex<Vec<String>>>,
    thread: Option<JoinHandle<anyhow::Result<Vec<DeviceSummary>>>>,
}

impl Running {
    fn start(cfg: Config, opener: Arc<smartnic::collect::device::Opener>) -> Running {
        let logs = Arc::new(Mutex::new(Vec::new()));
        let sink = logs.clone();
        let services = Services {
            opener,
            metrics: Arc::new(Metrics::new()),
            stop: Arc::new(AtomicBool::new(false)),
            log: Arc::new(move |l: &str| sink.lock().unwrap().push(l.to_owned())),
        };
        let sv = services.clone();
        let thread = Some(std::thread::spawn(move || run(&cfg, &sv)));
        Running { services, logs, thread }
    }

    /// The value of one series (`name{labels}`) in the exposition.
    fn metric(&self, series: &str) -> Option<f64> {
        let text = self.services.metrics.encode();
        text.lines().find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
    }

    fn wait(&self, what: &str, cond: impl Fn(&Running) -> bool) {
        let start = Instant::now();
        while !cond(self) {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "timed out waiting for {what}; metrics:\n{}\nlog:\n{}",
                self.services.metrics.encode(),
                self.logs.lock().unwrap().join("\n")
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn stop(&mut self) -> Vec<DeviceSummary> {
        self.services.stop.store(true, Ordering::SeqCst);
        self.thread.take().unwrap().join().unwrap().unwrap()
    }

    fn log(&self) -> String {
        self.logs.lock().unwrap().join("\n")
    }
}

fn config(dir: &Path, devices: &[&str], keep: usize) -> Config {
    Config {
        devices: devices.iter().map(|d| d.to_string()).collect(),
        every: PERIOD,
        dir: dir.to_owned(),
        keep,
        top_k: 10,
        max_series: 100,
        json: false,
        ipfix: None,
        ipfix_mtu: smartnic::export::ipfix::DEFAULT_MTU,
        parquet: None,
    }
}

/// Every file of `dir` with its bytes.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| (p.clone(), std::fs::read(&p).unwrap()))
        .collect()
}

/// The `*.snap` files of `dir` with their bytes.
fn snap_files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    files(dir).into_iter().filter(|(p, _)| p.extension().is_some_and(|e| e == "snap")).collect()
}

/// Every file is a whole snapshot (no temporary file, nothing torn).
fn all_snapshots(dir: &Path) -> Vec<Snapshot> {
    files(dir)
        .iter()
        .map(|(p, bytes)| {
            assert!(p.extension().is_some_and(|e| e == "snap"), "{} is not a snapshot file", p.display());
            Snapshot::decode(bytes).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        })
        .collect()
}

/// A device that goes away: `smartnic_device_up` 0, the gone counter moves, no file is
/// written or touched; when it comes back from reset (epoch 0 again) it is read out again
/// into new files and the retained ones keep their bytes.
#[test]
fn a_device_that_goes_away_and_comes_back() {
    let root = tempfile::tempdir().unwrap();
    let bench = Arc::new(Bench::new(64));
    let mut c = Running::start(config(root.path(), &["emu"], 1000), bench.opener());
    let dir = root.path().join(device_dir("emu"));
    let up = |r: &Running| r.metric(r#"smartnic_device_up{device="emu"}"#);
    c.wait("three snapshots", |r| r.metric(r#"smartnic_snapshots_written_total{device="emu"}"#) >= Some(3.0));
    assert_eq!(up(&c), Some(1.0));

    bench.gone.store(true, Ordering::SeqCst);
    c.wait("the device down", |r| up(r) == Some(0.0));
    let before = files(&dir);
    c.wait("two more epochs while gone", |r| {
        r.metric(r#"smartnic_device_gone_total{device="emu"}"#) >= Some(3.0)
    });
    assert!(files(&dir) == before, "a file was written or touched while the device was gone");
    assert!(c.metric(r#"smartnic_readout_failures_total{device="emu",reason="gone"}"#) >= Some(1.0));
    assert!(c.metric(r#"smartnic_readout_failures_total{device="emu",reason="open"}"#) >= Some(1.0));

    bench.gone.store(false, Ordering::SeqCst);
    c.wait("the device up again", |r| up(r) == Some(1.0));
    let written = c.metric(r#"smartnic_snapshots_written_total{device="emu"}"#).unwrap();
    c.wait("two more snapshots", |r| {
        r.metric(r#"smartnic_snapshots_written_total{device="emu"}"#) >= Some(written + 2.0)
    });
    c.stop();
    let after = files(&dir);
    for (p, bytes) in &before {
        assert!(after.get(p) == Some(bytes), "{} changed after the device came back", p.display());
    }
    let epochs: Vec<u64> = all_snapshots(&dir).iter().map(|s| s.epoch).collect();
    assert!(
        epochs.iter().filter(|&&e| e == 0).count() >= 2,
        "the reset device's epoch 0 is kept beside the first: {epochs:?}"
    );
    assert!(after.len() >= before.len() + 2, "{} files before, {} after", before.len(), after.len());
    let log = c.log();
    assert_eq!(log.matches("no snapshot (").count(), 1, "one line when it went away: {log}");
    assert_eq!(log.matches("the device answers again").count(), 1, "{log}");
}

/// A tmpfs of `size` bytes mounted at a fresh directory, unmounted on drop. Mounting needs
/// root (the test machines run as root); failing to mount fails the test.
struct Tmpfs(tempfile::TempDir);

impl Tmpfs {
    fn mount(size: u64) -> Tmpfs {
        let dir = tempfile::tempdir().unwrap();
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output()
            .expect("running mount");
        assert!(
            out.status.success(),
            "cannot mount a tmpfs for the full-disk test (it needs root): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Tmpfs(dir)
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(self.0.path()).status();
    }
}

/// Fills the file system of `dir` with one file until a write fails with no space.
fn fill(dir: &Path) -> PathBuf {
    let path = dir.join("filler");
    let mut f = std::fs::File::create(&path).unwrap();
    let block = vec![0xA5u8; 4096];
    loop {
        match f.write_all(&block) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(28) => return path,
            Err(e) => panic!("filling {}: {e}", dir.display()),
        }
    }
}

/// A full disk: the write fails, `smartnic_store_writable` goes 0, the write failures count
/// and one log line says so; retention deletes nothing, no temporary file is left, the
/// retained files keep their bytes. Freed space: writing resumes.
#[test]
fn a_full_disk_stops_writing_and_keeps_the_retained_files() {
    let fs = Tmpfs::mount(4 << 20);
    let bench = Arc::new(Bench::new(1 << 14));
    let mut c = Running::start(config(fs.0.path(), &["emu"], 2), bench.opener());
    let dir = fs.0.path().join(device_dir("emu"));
    let written = |r: &Running| r.metric(r#"smartnic_snapshots_written_total{device="emu"}"#);
    c.wait("two snapshots", |r| written(r) >= Some(2.0));
    let filler = fill(fs.0.path());
    c.wait("a failed write", |r| {
        r.metric(r#"smartnic_snapshot_write_failures_total{device="emu"}"#) >= Some(2.0)
    });
    // Snapshot files only: a failing write's temporary file may exist for a moment (that
    // none is left is checked once the collector stopped).
    let full = snap_files(&dir);
    assert_eq!(full.len(), 2, "retention deleted a file for a write that failed: {:?}", full.keys());
    assert_eq!(c.metric(r#"smartnic_store_writable{device="emu"}"#), Some(0.0));
    c.wait("more failed writes", |r| {
        r.metric(r#"smartnic_snapshot_write_failures_total{device="emu"}"#) >= Some(4.0)
    });
    assert!(snap_files(&dir) == full, "a retained file changed while the disk was full");
    let log = c.log();
    assert_eq!(log.matches("snapshot writing stopped").count(), 1, "{log}");
    assert!(log.contains("No space left on device"), "{log}");

    std::fs::remove_file(filler).unwrap();
    let now = written(&c).unwrap();
    c.wait("writing again", |r| written(r) >= Some(now + 1.0));
    c.stop();
    assert_eq!(c.metric(r#"smartnic_store_writable{device="emu"}"#), Some(1.0));
    assert_eq!(all_snapshots(&dir).len(), 2);
    assert!(c.log().contains("writing snapshots again"), "{}", c.log());
}

/// A stop request (SIGTERM in the CLI) that arrives while the third readout is under way:
/// that readout finishes and its snapshot is written, then the collector returns; every file
/// is whole.
#[test]
fn a_stop_in_the_middle_of_a_readout_finishes_the_snapshot() {
    let root = tempfile::tempdir().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU32::new(0));
    let (flag, n) = (stop.clone(), swaps.clone());
    let mut bench = Bench::new(64);
    bench.on_swap = Some(Arc::new(move || {
        if n.fetch_add(1, Ordering::SeqCst) + 1 == 3 {
            flag.store(true, Ordering::SeqCst);
        }
    }));
    let bench = Arc::new(bench);
    let logs = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = logs.clone();
    let services = Services {
        opener: bench.opener(),
        metrics: Arc::new(Metrics::new()),
        stop,
        log: Arc::new(move |l: &str| sink.lock().unwrap().push(l.to_owned())),
    };
    let sum = run(&config(root.path(), &["emu"], 100), &services).unwrap();
    assert_eq!(sum[0].epochs, 3);
    assert_eq!(sum[0].written, 3);
    let mut epochs: Vec<u64> = all_snapshots(&root.path().join("emu")).iter().map(|s| s.epoch).collect();
    epochs.sort();
    assert_eq!(epochs, [0, 1, 2], "the epoch swapped when the stop came was not kept");
    assert!(logs.lock().unwrap().last().unwrap().contains("stopped after 3 epochs (3 snapshots written)"));
}

/// Retention keeps exactly the `keep` newest of each device, each in its own directory.
#[test]
fn retention_keeps_exactly_the_newest_of_each_device() {
    let root = tempfile::tempdir().unwrap();
    let bench = Arc::new(Bench::new(64));
    let mut c = Running::start(config(root.path(), &["emu:a", "emu:b"], 3), bench.opener());
    for d in ["emu:a", "emu:b"] {
        c.wait("seven snapshots", |r| {
            r.metric(&format!(r#"smartnic_snapshots_written_total{{device="{d}"}}"#)) >= Some(7.0)
        });
    }
    let sums = c.stop();
    for (d, s) in ["emu:a", "emu:b"].iter().zip(&sums) {
        let mut epochs: Vec<u64> =
            all_snapshots(&root.path().join(device_dir(d))).iter().map(|s| s.epoch).collect();
        epochs.sort();
        let last = s.written - 1;
        assert_eq!(epochs, [last - 2, last - 1, last], "{d}");
    }
}

/// Two specs that would share a directory are refused before anything runs.
#[test]
fn devices_that_would_share_a_directory_are_refused() {
    let root = tempfile::tempdir().unwrap();
    let bench = Arc::new(Bench::new(64));
    let sv = Services {
        opener: bench.opener(),
        metrics: Arc::new(Metrics::new()),
        stop: Arc::new(AtomicBool::new(false)),
        log: Arc::new(|_: &str| {}),
    };
    let e = run(&config(root.path(), &["file:a/b", "file:a_b"], 3), &sv).unwrap_err().to_string();
    assert!(e.contains("would share the directory file_a_b"), "{e}");
}

/// A scraper that connects and never finishes its request does not hold up the others.
#[test]
fn a_stalled_scraper_does_not_hold_up_the_endpoint() {
    let metrics = Arc::new(Metrics::new());
    let ep = Endpoint::start("127.0.0.1:0".parse().unwrap(), metrics).unwrap();
    let mut stalled = std::net::TcpStream::connect(ep.addr).unwrap();
    stalled.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n").unwrap();
    let start = Instant::now();
    let mut s = std::net::TcpStream::connect(ep.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
    let mut body = String::new();
    s.read_to_string(&mut body).unwrap();
    assert!(body.starts_with("HTTP/1.1 200"), "{body}");
    assert!(body.contains("application/openmetrics-text") && body.contains("# EOF"), "{body}");
    assert!(start.elapsed() < Duration::from_secs(2), "{:?}", start.elapsed());
    drop(stalled);
    ep.stop();
}

/// With `--parquet`, every epoch leaves its rows: a health row for each epoch, a failed one
/// included (the gap shows in the fleet's tables), and the flow tables of each snapshot;
/// every file is whole.
#[test]
fn parquet_tables_keep_every_epoch_and_show_the_gap() {
    use smartnic::export::parquet::read_table;
    let root = tempfile::tempdir().unwrap();
    let pq = root.path().join("pq");
    let bench = Arc::new(Bench::new(64));
    let mut cfg = config(root.path(), &["emu"], 1000);
    cfg.parquet = Some(pq.clone());
    let mut c = Running::start(cfg, bench.opener());
    let written = |r: &Running| r.metric(r#"smartnic_snapshots_written_total{device="emu"}"#);
    c.wait("two snapshots", |r| written(r) >= Some(2.0));
    bench.gone.store(true, Ordering::SeqCst);
    c.wait("two epochs while gone", |r| r.metric(r#"smartnic_device_gone_total{device="emu"}"#) >= Some(2.0));
    bench.gone.store(false, Ordering::SeqCst);
    let now = written(&c).unwrap();
    c.wait("a snapshot after it came back", |r| written(r) >= Some(now + 1.0));
    c.stop();

    let snapshots = all_snapshots(&root.path().join(device_dir("emu"))).len();
    let health = read_table(&pq, "health").unwrap();
    let col = |name: &str| -> Vec<arrow::array::ArrayRef> {
        health.iter().map(|b| b.column_by_name(name).unwrap().clone()).collect()
    };
    use arrow::array::{Array, AsArray};
    let ok: Vec<bool> =
        col("readout_ok").iter().flat_map(|a| a.as_boolean().iter().map(Option::unwrap)).collect();
    let failures: Vec<String> = col("failure")
        .iter()
        .flat_map(|a| a.as_string::<i32>().iter().flatten().map(str::to_string).collect::<Vec<_>>())
        .collect();
    assert_eq!(ok.iter().filter(|&&o| o).count(), snapshots, "one health row per snapshot");
    assert!(ok.iter().filter(|&&o| !o).count() >= 2, "the epochs while gone have rows: {ok:?}");
    assert!(failures.iter().all(|f| f == "gone" || f == "open"), "{failures:?}");
    assert_eq!(failures.len(), ok.iter().filter(|&&o| !o).count());
    let no_epoch: usize = col("epoch").iter().map(|a| a.null_count()).sum();
    assert_eq!(no_epoch, failures.len(), "a failed epoch has no epoch number");
    for table in ["flows", "hops"] {
        let files = std::fs::read_dir(pq.join(table).join(device_dir("emu"))).unwrap().count();
        assert_eq!(files, snapshots, "{table}: one file per snapshot, no temporary file left");
        read_table(&pq, table).unwrap();
    }
    assert_eq!(c.metric(r#"smartnic_sink_failures_total{device="emu",sink="parquet"}"#).unwrap_or(0.0), 0.0);
}
