//! Set-up shared by the export tests: the CLI run as a user runs it, and the two epochs of
//! snapshots they export (a software run over a generated INT trace, so the records hold
//! flows, per-hop latency and heavy-hitter tables).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// `smartnic --json ARGS`, which must succeed; its report.
pub fn smartnic_json(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_smartnic")).arg("--json").args(args).output().unwrap();
    assert!(out.status.success(), "smartnic {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("smartnic {args:?}: {e}"))
}

/// Two epochs of a software run over a 20,000-packet INT trace of 300 flows, as snapshot
/// files under `dir` (the heavy-hitter table keeps flows of 40 packets or more).
pub fn two_epoch_snapshots(dir: &Path) -> Vec<PathBuf> {
    let trace = dir.join("t.pcap");
    let t = trace.to_str().unwrap();
    smartnic_json(&["trace", "gen", "-o", t, "--shim", "--packets", "20000", "--flows", "300"]);
    let snaps = dir.join("snaps");
    let s = snaps.to_str().unwrap();
    let run = ["sketch", "run", "--trace", t, "--epoch-packets", "10000", "--table-threshold", "40"];
    let mut argv = run.to_vec();
    argv.extend(["-o", s]);
    smartnic_json(&argv);
    ["epoch-000000.snap", "epoch-000001.snap"].iter().map(|f| snaps.join(f)).collect()
}
