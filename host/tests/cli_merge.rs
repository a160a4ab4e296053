//! `smartnic snapshot merge` through the binary: two halves of a trace merge into the
//! Count-Min tower of the whole trace, and bad inputs fail with exit 1 and a clear message.

use smartnic::trace::{generate_files, GenConfig, ShimConfig};
use smartnic_driver::snapshot::Snapshot;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn smartnic(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_smartnic")).args(args).output().expect("binary runs")
}

fn ok(out: &Output) {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn failed_with(out: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(needle), "stderr lacks `{needle}`: {err}");
}

fn trace(dir: &Path, packets: u64) -> String {
    let cfg = GenConfig {
        seed: 11,
        packets,
        flows: 300,
        shim: Some(ShimConfig::default()),
        ..GenConfig::default()
    };
    let pcap = dir.join("t.pcap");
    generate_files(&cfg, &pcap, &dir.join("t.json"), None).unwrap();
    pcap.display().to_string()
}

/// `sketch run` of `sketch` (comma-separated kinds) over the trace, whole (`epoch` None) or
/// cut into epochs.
fn run(pcap: &str, sketch: &str, out: &Path, epoch: Option<&str>) {
    let mut args = vec!["sketch", "run", "--trace", pcap];
    for k in sketch.split(',') {
        args.extend(["--sketch", k]);
    }
    args.extend(["--no-per-switch", "-o"]);
    args.push(out.to_str().unwrap());
    if let Some(n) = epoch {
        args.extend(["--epoch-packets", n]);
    }
    ok(&smartnic(&args));
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The two halves of a trace, each sketched alone and merged, are the whole trace's sketch.
#[test]
fn cm_merge_of_two_halves_is_the_whole_trace() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = trace(dir.path(), 12_000);
    let halves = dir.path().join("halves");
    run(&pcap, "tower-cm", &halves, Some("6000"));
    let whole = dir.path().join("whole.snap");
    run(&pcap, "tower-cm", &whole, None);
    let (a, b) = (halves.join("epoch-000000.snap"), halves.join("epoch-000001.snap"));
    // Control: one half alone is not the whole, so the comparison below can fail.
    assert_eq!(smartnic(&["snapshot", "diff", s(&a), s(&whole)]).status.code(), Some(1));
    let merged = dir.path().join("merged.snap");
    let out = smartnic(&["--json", "snapshot", "merge", s(&a), s(&b), "-o", s(&merged)]);
    ok(&out);
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((summary["packets"].as_u64(), summary["sections"].as_u64()), (Some(12_000), Some(1)));
    ok(&smartnic(&["snapshot", "diff", s(&merged), s(&whole)]));
    let (m, w) = (Snapshot::read_file(&merged).unwrap(), Snapshot::read_file(&whole).unwrap());
    assert_eq!((m.sections, m.packets), (w.sections, w.packets));
}

fn one_snapshot(dir: &Path, sketch: &str, name: &str) -> PathBuf {
    let pcap = trace(dir, 2_000);
    let out = dir.join(name);
    run(&pcap, sketch, &out, None);
    out
}

#[test]
fn corrupt_input_fails_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let good = one_snapshot(dir.path(), "tower-cm", "good.snap");
    let bad = dir.path().join("bad.snap");
    std::fs::write(&bad, b"not a snapshot at all").unwrap();
    let out_path = dir.path().join("out.snap");
    failed_with(&smartnic(&["snapshot", "merge", s(&good), s(&bad), "-o", s(&out_path)]), "bad.snap");
    assert!(!out_path.exists());
}

#[test]
fn missing_input_fails() {
    let dir = tempfile::tempdir().unwrap();
    let good = one_snapshot(dir.path(), "tower-cm", "good.snap");
    let gone = dir.path().join("gone.snap");
    let out = smartnic(&["snapshot", "merge", s(&good), s(&gone), "-o", s(&dir.path().join("o.snap"))]);
    failed_with(&out, "gone.snap");
}

#[test]
fn different_modes_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cm = one_snapshot(dir.path(), "tower-cm", "cm.snap");
    let cu = one_snapshot(dir.path(), "tower-cu", "cu.snap");
    let out = smartnic(&["snapshot", "merge", s(&cm), s(&cu), "-o", s(&dir.path().join("o.snap"))]);
    failed_with(&out, "insertion mode");
}

#[test]
fn output_may_not_be_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let a = one_snapshot(dir.path(), "tower-cm", "a.snap");
    let before = std::fs::read(&a).unwrap();
    failed_with(&smartnic(&["snapshot", "merge", s(&a), s(&a), "-o", s(&a)]), "is one of the inputs");
    assert_eq!(std::fs::read(&a).unwrap(), before);
}

/// NIC-like snapshots (tower + SuMax): refused with a pointer to --drop-sumax, which then
/// merges the towers exactly (CM) and leaves SuMax out.
#[test]
fn sumax_is_refused_unless_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = trace(dir.path(), 4_000);
    let halves = dir.path().join("halves");
    run(&pcap, "tower-cm,sumax", &halves, Some("2000"));
    let (a, b) = (halves.join("epoch-000000.snap"), halves.join("epoch-000001.snap"));
    let out = dir.path().join("m.snap");
    failed_with(&smartnic(&["snapshot", "merge", s(&a), s(&b), "-o", s(&out)]), "--drop-sumax");
    assert!(!out.exists());
    ok(&smartnic(&["snapshot", "merge", s(&a), s(&b), "--drop-sumax", "-o", s(&out)]));
    let whole = dir.path().join("whole.snap");
    run(&pcap, "tower-cm", &whole, None);
    ok(&smartnic(&["snapshot", "diff", s(&out), s(&whole)]));
}
