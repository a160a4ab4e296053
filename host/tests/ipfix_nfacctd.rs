//! `smartnic snapshot export` received by a real IPFIX collector: pmacct's `nfacctd` (the
//! Debian package `pmacct`, which `scripts/setup` installs) listens on a loopback UDP port,
//! decodes the templates and records (the enterprise elements through pmacct's custom
//! primitives keyed by PEN and element ID) and prints them to a CSV file; every line must
//! equal what `smartnic snapshot report` says for the same snapshots, and the sequence
//! numbers it logs must count the records sent.
//!
//! Needs `nfacctd` on PATH; without it the test fails and says how to get it.

use std::collections::BTreeMap;
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use smartnic::export::ipfix::{ie, Element, NO_ESTIMATE, PEN};
use smartnic_contract::FlowKey;

mod common;
use common::{smartnic_json, two_epoch_snapshots};

/// How long nfacctd gets to start and to print what it received.
const DEADLINE: Duration = Duration::from_secs(15);

/// A child process killed when the test ends, however it ends.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A loopback UDP port nobody listens on now.
fn free_udp_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The enterprise elements as pmacct custom primitives, keyed `PEN:ID` from the exporter's
/// own element list.
const CUSTOM: [(&str, Element); 5] = [
    ("snic_epoch", ie::EPOCH),
    ("snic_switch", ie::SWITCH_ID),
    ("snic_hop", ie::HOP_INDEX),
    ("snic_hop_packets", ie::HOP_PACKETS),
    ("snic_latency_ns", ie::AVG_LATENCY_NS),
];

/// Writes nfacctd's primitives file and configuration; returns the configuration's path.
fn configure(dir: &Path, port: u16) -> PathBuf {
    let prims: String = CUSTOM
        .iter()
        .map(|(name, e)| {
            assert_eq!(e.pen, Some(PEN));
            format!("name={name} field_type={PEN}:{} len={} semantics=u_int\n", e.id, e.len)
        })
        .collect();
    std::fs::write(dir.join("primitives.lst"), prims).unwrap();
    let names: Vec<&str> = CUSTOM.iter().map(|c| c.0).collect();
    let conf = format!(
        "daemonize: false\n\
         debug: true\n\
         nfacctd_ip: 127.0.0.1\n\
         nfacctd_port: {port}\n\
         logfile: {dir}/nfacctd.log\n\
         aggregate_primitives: {dir}/primitives.lst\n\
         plugins: print\n\
         aggregate: src_host, dst_host, src_port, dst_port, proto, {custom}\n\
         print_output: csv\n\
         print_num_protos: true\n\
         print_output_file: {dir}/records.csv\n\
         print_output_file_append: true\n\
         print_refresh_time: 1\n",
        dir = dir.display(),
        custom = names.join(", "),
    );
    let path = dir.join("nfacctd.conf");
    std::fs::write(&path, conf).unwrap();
    path
}

/// Waits until `f` returns `Some`, failing with `what` (and nfacctd's log) at the deadline.
fn wait_for<T>(dir: &Path, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        if start.elapsed() > DEADLINE {
            let log = std::fs::read_to_string(dir.join("nfacctd.log")).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(20).collect();
            panic!("{what} within {DEADLINE:?}; nfacctd's log ends:\n{}", tail.join("\n"));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// One CSV line's key: 5-tuple, epoch, switch, hop index, hop packets, latency.
type Line = (String, String, u16, u16, u8, u64, u16, u16, u64, u64);

/// nfacctd's CSV lines (key -> PACKETS), checking the header names the columns expected.
fn read_csv(path: &Path) -> Option<BTreeMap<Line, u64>> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut lines = text.lines();
    let header = lines.next()?;
    let want = "SRC_IP,DST_IP,SRC_PORT,DST_PORT,PROTOCOL,snic_epoch,snic_switch,snic_hop,snic_hop_packets,snic_latency_ns,PACKETS";
    assert!(header.starts_with(want), "nfacctd's CSV columns: {header}");
    let mut out = BTreeMap::new();
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        let n = |i: usize| f[i].parse::<u64>().unwrap_or_else(|e| panic!("column {i} of `{l}`: {e}"));
        let key = (
            f[0].to_string(),
            f[1].to_string(),
            n(2) as u16,
            n(3) as u16,
            n(4) as u8,
            n(5),
            n(6) as u16,
            n(7) as u16,
            n(8),
            n(9),
        );
        assert!(out.insert(key, n(10)).is_none(), "one line per record: `{l}` twice");
    }
    Some(out)
}

/// What `snapshot report` says for one snapshot, as the lines nfacctd should print: a flow
/// line (switch and hop 0, PACKETS the estimate) and a line per hop (PACKETS 0).
fn expected(snapshot: &Path, out: &mut BTreeMap<Line, u64>) {
    let r = smartnic_json(&["snapshot", "report", snapshot.to_str().unwrap()]);
    let epoch = r["epoch"].as_u64().unwrap();
    let flows =
        r["per_switch"]["latency"]["flows"].as_array().expect("the report answers latency per switch");
    for f in flows {
        let k = FlowKey::parse(f["flow"].as_str().unwrap()).unwrap();
        let t = |e, sw, hop, hp, ns| {
            let ip = |b: [u8; 4]| std::net::Ipv4Addr::from(b).to_string();
            (ip(k.src_ip()), ip(k.dst_ip()), k.src_port(), k.dst_port(), k.proto(), e, sw, hop, hp, ns)
        };
        out.insert(t(epoch, 0, 0, 0, 0), f["packets"].as_u64().unwrap());
        for (i, h) in f["hops"].as_array().unwrap().iter().enumerate() {
            let hp = h["packets"].as_u64().unwrap_or(NO_ESTIMATE);
            let ns = h["avg_ns"].as_f64().map_or(NO_ESTIMATE, |v| v.round() as u64);
            out.insert(t(epoch, h["switch"].as_u64().unwrap() as u16, i as u16 + 1, hp, ns), 0);
        }
    }
}

/// The sequence numbers of the messages nfacctd received, from its debug log.
fn received_sequences(log: &str) -> Vec<u32> {
    log.lines()
        .filter(|l| l.contains("Received NetFlow/IPFIX packet"))
        .filter_map(|l| l.split("seqno [").nth(1)?.split(']').next()?.parse().ok())
        .collect()
}

#[test]
fn nfacctd_decodes_every_record_as_the_report_says() {
    let nfacctd = Command::new("nfacctd").arg("-V").stdout(Stdio::null()).stderr(Stdio::null()).status();
    assert!(
        nfacctd.is_ok(),
        "nfacctd not found on PATH: this test needs pmacct's collector \
         (run scripts/setup, or apt-get install -y pmacct)"
    );
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let files = two_epoch_snapshots(d);

    let port = free_udp_port();
    let conf = configure(d, port);
    let _collector = Guard(
        Command::new("nfacctd")
            .arg("-f")
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start nfacctd"),
    );
    let log = d.join("nfacctd.log");
    // Listening means both: the log says so, and the port is taken (a datagram sent before
    // nfacctd binds it is lost, and the records would never come).
    wait_for(d, "nfacctd listening", || {
        let said = std::fs::read_to_string(&log).ok()?.contains("waiting for NetFlow/IPFIX data");
        (said && UdpSocket::bind(("127.0.0.1", port)).is_err()).then_some(())
    });

    let mut args = vec!["snapshot", "export"];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    let to = format!("127.0.0.1:{port}");
    args.extend(["--ipfix", &to, "--mtu", "900"]);
    let sent = smartnic_json(&args);

    let mut want = BTreeMap::new();
    files.iter().for_each(|f| expected(f, &mut want));
    let per_file = sent["ipfix"]["snapshots"].as_array().unwrap();
    let records: u64 = per_file
        .iter()
        .map(|f| f["flow_records"].as_u64().unwrap() + f["hop_records"].as_u64().unwrap())
        .sum();
    assert_eq!(records as usize, want.len(), "the export sends one record per line the report implies");
    assert!(want.keys().any(|k| k.6 != 0), "the snapshots have hops to export");

    let csv = d.join("records.csv");
    let got =
        wait_for(d, "every record in nfacctd's CSV", || read_csv(&csv).filter(|g| g.len() >= want.len()));
    assert_eq!(got.len(), want.len());
    for (k, packets) in &want {
        assert_eq!(got.get(k), Some(packets), "nfacctd's line for {k:?}");
    }

    // The sequence numbers nfacctd saw: the first message starts at 0, each later one
    // after the records before it, the export's own account of the epochs agrees.
    let messages: u64 = per_file.iter().map(|f| f["messages"].as_u64().unwrap()).sum();
    let seqs = wait_for(d, "every message in nfacctd's log", || {
        let s = received_sequences(&std::fs::read_to_string(&log).ok()?);
        (s.len() as u64 >= messages).then_some(s)
    });
    assert_eq!(seqs.len() as u64, messages);
    assert_eq!(seqs[0], 0);
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "sequence numbers grow: {seqs:?}");
    assert!(u64::from(*seqs.last().unwrap()) < records);
    assert_eq!(per_file[1]["first_sequence"], per_file[0]["next_sequence"], "one sequence across files");
    assert_eq!(per_file[1]["next_sequence"].as_u64(), Some(records));
    assert!(seqs.contains(&(per_file[1]["first_sequence"].as_u64().unwrap() as u32)));
}
