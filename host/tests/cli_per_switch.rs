//! `sketch run` then `snapshot report` on traces with INT stacks, through the binary: the
//! per-switch answers (heavy hitters from the key table, heavy hitters per switch, latency
//! per (flow, switch), heavy changes per switch) checked against an exact computation from
//! the trace itself, and the inflated-latency records against the library's model.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;
use smartnic::sketch::per_switch::{PerSwitch, PerSwitchConfig};
use smartnic::sketch::Tower;
use smartnic::trace::PacketReader;
use smartnic_contract::geometry::{InsertMode, TowerGeometry};
use smartnic_contract::FlowKey;

fn smartnic(args: &[&str]) -> Output {
    let o = Command::new(env!("CARGO_BIN_EXE_smartnic")).args(args).output().expect("run smartnic");
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    o
}

/// What the trace says exactly about one flow.
#[derive(Default)]
struct Exact {
    packets: u64,
    path: Vec<u16>,
    /// Per switch: (hops, latency sum in ns).
    latency: BTreeMap<u16, (u64, u64)>,
}

/// Every flow of a trace, exactly; a flow's path must be the same in all its packets.
fn exact(trace: &Path) -> BTreeMap<FlowKey, Exact> {
    let mut out: BTreeMap<FlowKey, Exact> = BTreeMap::new();
    let mut r = PacketReader::open(trace).unwrap();
    while let Some(p) = r.next_packet().unwrap() {
        let e = out.entry(p.key).or_default();
        let path: Vec<u16> = p.hops.iter().map(|h| h.switch_id).collect();
        assert!(e.packets == 0 || e.path == path, "the generator keeps a flow on one path");
        e.packets += 1;
        e.path = path;
        for h in &p.hops {
            let l = e.latency.entry(h.switch_id).or_default();
            *l = (l.0 + 1, l.1 + h.latency_ns as u64);
        }
    }
    out
}

/// The lowest threshold of at least `lo` in a gap between the given sizes that stays 4 %
/// of its value away from every size, so that a sketch's small overestimates (under 1 %
/// here) cannot move a flow across it.
fn gap_threshold(sizes: impl IntoIterator<Item = u64>, lo: u64) -> u64 {
    let mut v: Vec<u64> = sizes.into_iter().filter(|&n| n >= lo).collect();
    v.push(lo);
    v.sort_unstable();
    v.dedup();
    let clear = |a: u64, b: u64| {
        let t = (a + b) / 2;
        (t - a > t / 25 && b - t > t / 25).then_some(t)
    };
    v.windows(2).find_map(|w| clear(w[0], w[1])).unwrap_or_else(|| panic!("no clear gap among {v:?}"))
}

fn flows_of(v: &Value) -> BTreeSet<String> {
    v.as_array().unwrap().iter().map(|f| f["flow"].as_str().unwrap().to_string()).collect()
}

/// Heavy hitters, per-switch heavy hitters and latency of one snapshot against the trace.
#[test]
fn per_switch_answers_match_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let (pcap, snap) = (p("t.pcap"), p("t.snap"));
    let gen = ["trace", "gen", "-o", &pcap, "--shim", "-n", "60000", "-f", "1500", "--switches", "12"];
    smartnic(&gen);
    let run = smartnic(&["--json", "sketch", "run", "--trace", &pcap, "-o", &snap]);
    let truth = exact(Path::new(&pcap));
    let run: Value = serde_json::from_slice(&run.stdout).unwrap();
    let hops: u64 = truth.values().map(|e| e.latency.values().map(|l| l.0).sum::<u64>()).sum();
    assert_eq!(run["snapshots"][0]["per_switch"]["hops"], hops, "every INT hop reached the latency tower");

    let hh = gap_threshold(truth.values().map(|e| e.packets), 800);
    let sw = gap_threshold(truth.values().map(|e| e.packets), hh.max(1500) + 1);
    let o = smartnic(&[
        "--json",
        "snapshot",
        "report",
        &snap,
        "--hh-threshold",
        &hh.to_string(),
        "--switch-threshold",
        &sw.to_string(),
    ]);
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["candidates_from"], "key table");
    let ps = &r["per_switch"];
    assert_eq!(ps["table"]["misses"], 0, "the table kept every heavy flow");

    // Heavy hitters: the flows above the threshold, with their paths.
    let want: BTreeMap<String, &Exact> =
        truth.iter().filter(|(_, e)| e.packets > hh).map(|(k, e)| (k.to_string(), e)).collect();
    let got = &ps["heavy_hitters"];
    assert_eq!(got["complete"], true);
    assert_eq!(flows_of(&got["flows"]), want.keys().cloned().collect());
    for f in got["flows"].as_array().unwrap() {
        let e = want[f["flow"].as_str().unwrap()];
        let path: Vec<u16> = serde_json::from_value(f["path"].clone()).unwrap();
        assert_eq!(path, e.path);
        let n = f["packets"].as_u64().unwrap();
        assert!(n >= e.packets && n <= e.packets + e.packets / 100, "{f}: exact {}", e.packets);
    }

    // Per-switch heavy hitters: every switch of a heavy flow's path.
    let mut want: BTreeMap<u16, BTreeSet<String>> = BTreeMap::new();
    for (k, e) in truth.iter().filter(|(_, e)| e.packets > sw) {
        for s in &e.path {
            want.entry(*s).or_default().insert(k.to_string());
        }
    }
    let got: BTreeMap<u16, BTreeSet<String>> = ps["switch_heavy"]["switches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["switch"].as_u64().unwrap() as u16, flows_of(&s["flows"])))
        .collect();
    assert!(!want.is_empty() && want.values().any(|f| f.len() > 1), "a switch with several heavy flows");
    assert_eq!(got, want);

    // Latency per (flow, switch) of every table flow: the exact mean within the 16 ns unit's
    // rounding and 2 %.
    let lat = ps["latency"]["flows"].as_array().unwrap();
    assert!(lat.len() >= 5);
    for f in lat {
        let e = &truth[&FlowKey::parse(f["flow"].as_str().unwrap()).unwrap()];
        for h in f["hops"].as_array().unwrap() {
            let (hops, sum) = e.latency[&(h["switch"].as_u64().unwrap() as u16)];
            let mean = sum as f64 / hops as f64;
            let avg = h["avg_ns"].as_f64().unwrap();
            assert!((avg - mean).abs() <= 8.0 + mean * 0.02, "{f}: switch {h}: exact mean {mean}");
            assert!(h["packets"].as_u64().unwrap() >= hops);
        }
    }

    // Inflated latency: the records of the library's model over the same packets.
    let records = model_records(Path::new(&pcap));
    assert!(records > 0);
    assert_eq!(ps["inflated"]["records"], records);

    // The human report says the same in a few lines.
    let o = smartnic(&["snapshot", "report", &snap, "--switch-threshold", &sw.to_string()]);
    let text = String::from_utf8_lossy(&o.stdout);
    let biggest = truth.iter().max_by_key(|(_, e)| e.packets).unwrap().0.to_string();
    for needle in
        ["per-switch", "heavy hitters per switch", "latency per switch", "inflated latency", &biggest]
    {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }
    assert!(!text.contains("need candidate keys"), "{text}");
}

/// The inflated-latency records the NIC model produces over the trace (flow tower at the
/// NIC geometry, approximate CU, estimate after each packet).
fn model_records(trace: &Path) -> u64 {
    let mut tower = Tower::new(TowerGeometry::sketchint_fpga(), InsertMode::Acu).unwrap();
    let mut half = PerSwitch::new(PerSwitchConfig::nic_default()).unwrap();
    let mut r = PacketReader::open(trace).unwrap();
    while let Some(p) = r.next_packet().unwrap() {
        tower.insert(&p.key);
        half.observe(0, &p, tower.query(&p.key));
    }
    half.records().len() as u64
}

/// Heavy changes per switch between two snapshots of different traffic: every flow above
/// the threshold in either epoch changed by its exact size difference, at every switch of
/// its newer path.
#[test]
fn per_switch_changes_match_the_traces() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let mut truths = Vec::new();
    for (name, seed) in [("a", "1"), ("b", "2")] {
        let pcap = p(&format!("{name}.pcap"));
        smartnic(&["trace", "gen", "-o", &pcap, "--shim", "-n", "40000", "-f", "1000", "--seed", seed]);
        smartnic(&["sketch", "run", "--trace", &pcap, "-o", &p(&format!("{name}.snap"))]);
        truths.push(exact(Path::new(&pcap)));
    }
    let (a, b) = (&truths[0], &truths[1]);
    let size = |t: &BTreeMap<FlowKey, Exact>, k: &FlowKey| t.get(k).map_or(0, |e| e.packets);
    let keys: BTreeSet<FlowKey> = a.keys().chain(b.keys()).copied().collect();
    let change = |k: &FlowKey| size(b, k) as i64 - size(a, k) as i64;
    let threshold = gap_threshold(keys.iter().map(|k| change(k).unsigned_abs()), 800);

    let o = smartnic(&[
        "--json",
        "snapshot",
        "report",
        &p("b.snap"),
        "--against",
        &p("a.snap"),
        "--change-threshold",
        &threshold.to_string(),
    ]);
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let c = &r["per_switch"]["changes"];
    assert_eq!(c["complete"], true);
    assert_eq!(c["against"], p("a.snap"));
    let mut want: BTreeMap<u16, BTreeMap<String, i64>> = BTreeMap::new();
    for k in keys.iter().filter(|k| change(k).unsigned_abs() > threshold) {
        let path = &b.get(k).filter(|_| size(b, k) > 750).unwrap_or_else(|| &a[k]).path;
        for s in path {
            want.entry(*s).or_default().insert(k.to_string(), change(k));
        }
    }
    assert!(want.values().flatten().any(|(_, d)| *d > 0) && want.values().flatten().any(|(_, d)| *d < 0));
    let got: BTreeMap<u16, BTreeMap<String, i64>> = c["switches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let flows = s["flows"].as_array().unwrap();
            let flows = flows
                .iter()
                .map(|f| (f["flow"].as_str().unwrap().to_string(), f["change"].as_i64().unwrap()));
            (s["switch"].as_u64().unwrap() as u16, flows.collect())
        })
        .collect();
    assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>());
    for (s, flows) in &want {
        assert_eq!(got[s].keys().collect::<Vec<_>>(), flows.keys().collect::<Vec<_>>(), "switch {s}");
        for (f, d) in flows {
            let e = got[s][f];
            assert!((e - d).unsigned_abs() <= d.unsigned_abs() / 50 + 2, "switch {s} {f}: {e} vs exact {d}");
        }
    }

    // Without a table in the older snapshot, the error names it.
    smartnic(&["sketch", "run", "--trace", &p("a.pcap"), "-o", &p("plain.snap"), "--no-per-switch"]);
    let o = Command::new(env!("CARGO_BIN_EXE_smartnic"))
        .args(["snapshot", "report", &p("b.snap"), "--against", &p("plain.snap")])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("plain.snap has no key table"), "{e}");
}

/// A trace without INT stacks gets no per-switch sections: the file stays version 1 and
/// the report asks for candidates as before; `--no-per-switch` does the same for INT.
#[test]
fn no_int_stacks_no_per_switch_sections() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    smartnic(&["trace", "gen", "-o", &p("plain.pcap"), "-n", "5000", "-f", "100"]);
    smartnic(&["trace", "gen", "-o", &p("int.pcap"), "-n", "5000", "-f", "100", "--shim"]);
    smartnic(&["sketch", "run", "--trace", &p("plain.pcap"), "-o", &p("plain.snap")]);
    smartnic(&["sketch", "run", "--trace", &p("int.pcap"), "-o", &p("off.snap"), "--no-per-switch"]);
    smartnic(&["sketch", "run", "--trace", &p("int.pcap"), "-o", &p("on.snap")]);
    for (name, sections) in [("plain.snap", 0), ("off.snap", 0), ("on.snap", 3)] {
        let snap = smartnic_driver::snapshot::Snapshot::read_file(Path::new(&p(name))).unwrap();
        assert_eq!(snap.per_switch.len(), sections, "{name}");
        assert_eq!(snap.version(), if sections == 0 { 1 } else { 2 }, "{name}");
        let r: Value =
            serde_json::from_slice(&smartnic(&["--json", "snapshot", "report", &p(name)]).stdout).unwrap();
        assert_eq!(r.get("per_switch").is_some(), sections > 0, "{name}");
    }
}

/// `snapshot diff` compares the per-switch sections too: equal runs are equal, a run with
/// another table threshold differs in the table's description and slots, and against a
/// snapshot without the per-switch half (a NIC without it) the flow sketches still compare,
/// with a note that the half was not.
#[test]
fn diff_compares_the_per_switch_sections() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    smartnic(&["trace", "gen", "-o", &p("t.pcap"), "-n", "20000", "-f", "500", "--shim"]);
    let trace = p("t.pcap");
    let run = |out: &str, extra: &[&str]| {
        let out = p(out);
        let mut args = vec!["sketch", "run", "--trace", &trace, "-o", &out];
        args.extend_from_slice(extra);
        smartnic(&args);
    };
    run("a.snap", &[]);
    run("b.snap", &[]);
    run("low.snap", &["--table-threshold", "200"]);
    run("off.snap", &["--no-per-switch"]);
    let diff = |x: &str, y: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_smartnic"))
            .args(["snapshot", "diff", &p(x), &p(y)])
            .output()
            .unwrap();
        (o.status.code(), String::from_utf8_lossy(&o.stdout).to_string())
    };
    let (code, text) = diff("a.snap", "b.snap");
    assert_eq!(code, Some(0), "{text}");
    for part in ["latency equal", "table   equal", "records equal"] {
        assert!(text.contains(part), "{part}: {text}");
    }
    let (code, text) = diff("a.snap", "low.snap");
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("table   threshold: 750 vs 200") && text.contains("latency equal"), "{text}");
    let (code, text) = diff("a.snap", "off.snap");
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("per-switch sections: 3 vs 0 (not compared: one snapshot has no per-switch half)"),
        "{text}"
    );
    assert!(text.contains("tower   equal") && text.contains("sumax   equal"), "{text}");
}
