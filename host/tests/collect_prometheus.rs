//! `smartnic collect` scraped by a real Prometheus server (the Debian package `prometheus`,
//! which `scripts/setup` installs): the daemon reads the simulated NIC out while it replays a
//! trace, Prometheus scrapes it every second on loopback, and the series read back through
//! Prometheus' HTTP API equal what the daemon's snapshot files and the trace say. Then the
//! daemon gets SIGTERM in the middle of its readouts: it exits 0, and every file it left is
//! a whole snapshot. The daemon also exports every epoch as IPFIX to a UDP socket of the
//! test: the records decoded from it are the snapshot files' records, none lost.
//!
//! Needs `prometheus` on PATH and the simulated NIC (`smartnic-sim`, built beside this
//! binary by `cargo build -p smartnic-sim-tb`, or named by `SMARTNIC_SIM`); a missing one
//! fails the test and says how to get it.

use serde_json::Value;
use smartnic::collect::flows::FlowSeries;
use smartnic::export::ipfix::{Decoder, EpochRecords, Record, SequenceTracker};
use smartnic_driver::snapshot::Snapshot;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const PACKETS: u64 = 6000;
const PER_EPOCH: u64 = 2000;
const TOP_K: usize = 5;
/// Starting the simulated NIC can mean building its Verilator model first (minutes, once
/// per change of the Verilog); after that a run takes ~20 s.
const DEADLINE: Duration = Duration::from_secs(400);

fn smartnic() -> Command {
    Command::new(env!("CARGO_BIN_EXE_smartnic"))
}

/// A child process killed when the test ends, however it ends.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A loopback port nobody listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// `GET path` on `127.0.0.1:port`; the body of a 200 answer, or None while nothing answers
/// or the server is not ready (Prometheus answers 503 Service Unavailable while it starts).
fn http_get(port: u16, path: &str) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    let (head, body) = out.split_once("\r\n\r\n")?;
    let status = head.strip_prefix("HTTP/1.")?.split_whitespace().nth(1)?;
    (status == "200").then(|| body.to_owned())
}

/// Percent-encodes a PromQL query for a URL.
fn encode(q: &str) -> String {
    q.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The `result` array of an instant query through Prometheus' HTTP API.
fn query(port: u16, q: &str) -> Vec<Value> {
    let Some(body) = http_get(port, &format!("/api/v1/query?query={}", encode(q))) else { return Vec::new() };
    let v: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{q}: {e}: {body}"));
    assert_eq!(v["status"], "success", "{q}: {body}");
    v["data"]["result"].as_array().cloned().unwrap_or_default()
}

/// The one value of a query whose answer is a single series.
fn scalar(port: u16, q: &str) -> Option<f64> {
    let r = query(port, q);
    assert!(r.len() <= 1, "{q}: {r:?}");
    r.first().map(|s| s["value"][1].as_str().unwrap().parse().unwrap())
}

/// Prometheus with a 1 s scrape of `target` and its storage in `dir`.
fn start_prometheus(dir: &Path, target: &str, port: u16) -> Guard {
    let which = Command::new("sh").args(["-c", "command -v prometheus"]).output().unwrap();
    assert!(
        which.status.success(),
        "prometheus is not installed: run ./scripts/setup (it installs the Debian package prometheus)"
    );
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: smartnic\n    \
             scrape_interval: 1s\n    scrape_timeout: 1s\n    static_configs:\n      - targets: ['{target}']\n"
        ),
    )
    .unwrap();
    let child = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!("--storage.tsdb.path={}", dir.join("data").display()))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .arg("--log.level=warn")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("prometheus.log")).unwrap())
        .spawn()
        .expect("starting prometheus");
    Guard(child)
}

/// The daemon's JSON status lines, as they come.
fn lines(child: &mut Child) -> mpsc::Receiver<Value> {
    let (tx, rx) = mpsc::channel();
    let out = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for l in BufReader::new(out).lines().map_while(Result::ok) {
            let v: Value = serde_json::from_str(&l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}"));
            if tx.send(v).is_err() {
                return;
            }
        }
    });
    rx
}

/// Every datagram `socket` receives, until the test drops the receiver.
fn datagrams(socket: UdpSocket) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = vec![0; 65_536];
        while let Ok(n) = socket.recv(&mut buf) {
            if tx.send(buf[..n].to_vec()).is_err() {
                return;
            }
        }
    });
    rx
}

/// The IPFIX records of `messages` (one observation domain, device 1), checking that the
/// sequence numbers show no lost record.
fn ipfix_records(messages: &[Vec<u8>]) -> Vec<Record> {
    let (mut dec, mut seq, mut out) = (Decoder::new(), SequenceTracker::default(), Vec::new());
    for m in messages {
        let d = dec.decode(m).unwrap_or_else(|e| panic!("an IPFIX message the decoder refuses: {e:?}"));
        assert_eq!(d.domain, 1, "the first --device is observation domain 1");
        assert_eq!(seq.observe(d.sequence, d.records.len()), None, "IPFIX records lost");
        out.extend(d.records);
    }
    out
}

/// Waits until `cond` holds, failing with `what` and Prometheus' log after the deadline.
fn wait_for(start: Instant, what: &str, dir: &Path, mut cond: impl FnMut() -> bool) {
    while !cond() {
        if start.elapsed() > DEADLINE {
            let log = std::fs::read_to_string(dir.join("prometheus.log")).unwrap_or_default();
            panic!("timed out after {:?} waiting for {what}; prometheus log:\n{log}", start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Every file of `dir`, each a whole snapshot (no temporary or torn file).
fn snapshots(dir: &Path) -> Vec<(PathBuf, Snapshot)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            assert!(p.extension().is_some_and(|e| e == "snap"), "{} is not a snapshot file", p.display());
            let s = Snapshot::read_file(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, s)
        })
        .collect();
    out.sort_by_key(|(p, _)| p.clone());
    out
}

#[test]
fn prometheus_scrapes_the_collector_and_reads_back_the_snapshots_values() {
    let start = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join("t.pcap");
    let gen = smartnic()
        .args([
            "trace",
            "gen",
            "--shim",
            "--switches",
            "8",
            "--flows",
            "20",
            "--skew",
            "1.5",
            "--non-ip",
            "0.01",
        ])
        .args(["--packets", &PACKETS.to_string(), "-o"])
        .arg(&trace)
        .output()
        .unwrap();
    assert!(gen.status.success(), "{}", String::from_utf8_lossy(&gen.stderr));
    let stats = smartnic().args(["trace", "stats", "--json"]).arg(&trace).output().unwrap();
    let stats: Value = serde_json::from_slice(&stats.stdout).unwrap();
    let t = &stats["totals"];
    let frames =
        t["packets"].as_u64().unwrap() + t["non_ip"].as_u64().unwrap() + t["malformed"].as_u64().unwrap();

    let sim = std::env::var_os("SMARTNIC_SIM")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_BIN_EXE_smartnic")).with_file_name("smartnic-sim"));
    assert!(
        sim.exists(),
        "the simulated NIC {} is not built: cargo build -p smartnic-sim-tb --bin smartnic-sim",
        sim.display()
    );
    let snaps = tmp.path().join("snaps");
    let device = format!("sim:{}", trace.display());
    let ipfix = UdpSocket::bind("127.0.0.1:0").unwrap();
    let ipfix_at = ipfix.local_addr().unwrap().to_string();
    let ipfix = datagrams(ipfix);
    let mut daemon = smartnic()
        .args(["collect", "--json", "--every", "1s", "--keep", "100", "--listen", "127.0.0.1:0"])
        .args(["--ipfix", &ipfix_at])
        .args(["--device", &device, "--sim-packets", &PER_EPOCH.to_string(), "--top-k", &TOP_K.to_string()])
        .arg("--dir")
        .arg(&snaps)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let status = lines(&mut daemon);
    let mut daemon = Guard(daemon);
    let hello = status.recv_timeout(Duration::from_secs(30)).expect("the daemon's first line");
    assert_eq!(hello["event"], "listening", "{hello}");
    let metrics = hello["metrics"].as_str().unwrap();
    let target = metrics.trim_start_matches("http://").trim_end_matches("/metrics").to_owned();

    let prom_port = free_port();
    let _prom = start_prometheus(tmp.path(), &target, prom_port);
    let sel = format!("{{device=\"{device}\"}}");
    // The whole trace replayed (PACKETS / PER_EPOCH epochs) and one empty epoch after it.
    let epochs = PACKETS.div_ceil(PER_EPOCH) + 1;
    wait_for(start, "Prometheus to hold the daemon's series", tmp.path(), || {
        // A device the daemon cannot read fails the test at once, with the daemon's words.
        if let Some(down) = status.try_iter().find(|v| v["event"] == "down") {
            panic!("the collector could not read the simulated NIC: {}", down["message"]);
        }
        scalar(prom_port, &format!("smartnic_snapshots_written_total{sel}")) >= Some(epochs as f64)
    });
    let scraped_at = start.elapsed();

    // SIGTERM while a readout is under way (each takes seconds in the simulator).
    let pid = daemon.0.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let exit = daemon.0.wait().unwrap();
    assert!(exit.success(), "the daemon did not exit 0 on SIGTERM: {exit}");
    let mut rest = Vec::new();
    while let Ok(v) = status.recv_timeout(Duration::from_secs(10)) {
        rest.push(v);
    }
    let last = rest.last().expect("status lines after SIGTERM");
    assert_eq!(last["event"], "stopped", "{last}");
    let files = snapshots(&snaps.join(smartnic::collect::device_dir(&device)));

    // Values through Prometheus against the files and the trace.
    let last_of = |m: &str| scalar(prom_port, &format!("last_over_time({m}{sel}[10m])"));
    let packets: u64 = files.iter().map(|(_, s)| s.packets).sum();
    assert_eq!(packets, PACKETS, "the snapshots hold every IP packet of the trace");
    assert_eq!(last_of("smartnic_sketched_frames_total"), Some(packets as f64));
    assert_eq!(last_of("smartnic_frames_total"), Some(frames as f64));
    assert_eq!(last_of("smartnic_non_ip_frames_total"), t["non_ip"].as_u64().map(|n| n as f64));
    assert_eq!(last_of("smartnic_device_up"), Some(1.0));
    let epoch = last_of("smartnic_device_epoch").unwrap() as u64;
    let on_disk: BTreeSet<u64> = files.iter().map(|(_, s)| s.epoch).collect();
    assert!(
        epoch >= epochs - 1 && on_disk.contains(&epoch),
        "epoch {epoch} not among the files' {on_disk:?}"
    );
    assert_eq!(last_of("smartnic_snapshot_write_failures_total"), Some(0.0));

    // Every scraped top-k flow value is one the snapshots' own series give for that flow.
    let mut from_files: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
    for (_, s) in &files {
        for (flow, n) in FlowSeries::of(s, TOP_K, 100).unwrap().flows {
            from_files.entry(flow).or_default().insert(n);
        }
    }
    assert!(!from_files.is_empty(), "the trace's heavy flows should enter the NIC's key table");
    let scraped = query(prom_port, &format!("smartnic_flow_packets{sel}[10m]"));
    assert!(!scraped.is_empty(), "no flow series in Prometheus");
    for series in &scraped {
        let flow = series["metric"]["flow"].as_str().unwrap();
        let want =
            from_files.get(flow).unwrap_or_else(|| panic!("flow {flow} is in no snapshot's top {TOP_K}"));
        for v in series["values"].as_array().unwrap() {
            let n: f64 = v[1].as_str().unwrap().parse().unwrap();
            assert!(want.contains(&(n as u64)), "flow {flow}: scraped {n}, the snapshots say {want:?}");
        }
    }
    // The IPFIX export: every epoch's records, in order, equal to what each file answers.
    std::thread::sleep(Duration::from_millis(200));
    let messages: Vec<Vec<u8>> = ipfix.try_iter().collect();
    let got = ipfix_records(&messages);
    let mut by_epoch: Vec<_> = files.iter().map(|(_, s)| s).collect();
    by_epoch.sort_by_key(|s| s.epoch);
    let want: Vec<Record> =
        by_epoch.iter().flat_map(|s| EpochRecords::from_snapshot(s, None).unwrap().records).collect();
    assert!(!want.is_empty(), "the key table's flows make IPFIX records");
    assert_eq!(got, want, "IPFIX records from the daemon against the snapshot files");
    eprintln!("collect_prometheus: {} IPFIX records in {} messages", got.len(), messages.len());
    eprintln!(
        "collect_prometheus: series in Prometheus after {scraped_at:?}, done after {:?}; {} snapshots",
        start.elapsed(),
        files.len()
    );
}
