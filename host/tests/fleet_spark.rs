//! The fleet's named queries on Apache Spark and on DataFusion embedded give the same rows,
//! in the same order: `scripts/fleet-spark --local-cluster 2` starts a standalone Spark
//! master and two workers on loopback and runs the very query files `smartnic fleet query
//! --named` runs, over one directory holding a synthetic fleet and a real NIC's export.
//! PySpark and Java come from `scripts/setup --spark` (the test command runs it); without
//! them this test fails and says so.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

mod common;
use common::{smartnic_json, two_epoch_snapshots};

fn require_spark() {
    let ok = Command::new("python3").args(["-c", "import pyspark"]).status().is_ok_and(|s| s.success());
    assert!(ok, "PySpark is not installed: run scripts/setup --spark (pip install pyspark)");
    let java = Command::new("java").arg("-version").output().is_ok_and(|o| o.status.success());
    assert!(
        java,
        "no Java runtime for Spark: run scripts/setup --spark (apt-get install default-jre-headless)"
    );
}

/// A fleet directory: 8 synthetic NICs x 3 epochs, and two epochs of a software run over an
/// INT trace exported as the NIC `nic-real` (its health rows have no frame counters: NULLs).
fn fleet(d: &Path) {
    let pq = d.join("fleet");
    let p = pq.to_str().unwrap();
    smartnic_json(&[
        "fleet", "synth", p, "--nics", "8", "--epochs", "3", "--flows", "40", "--leaves", "3", "--spines",
        "2",
    ]);
    let snaps = two_epoch_snapshots(d);
    let (a, b) = (&snaps[0], &snaps[1]);
    smartnic_json(&[
        "snapshot",
        "export",
        "--parquet",
        p,
        "--device",
        "nic-real",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]);
}

#[test]
fn spark_on_two_workers_and_datafusion_give_the_same_rows() {
    require_spark();
    let tmp = tempfile::tempdir().unwrap();
    fleet(tmp.path());
    let dir = tmp.path().join("fleet");
    let d = dir.to_str().unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/fleet-spark");
    let out =
        Command::new(script).args(["--dir", d, "--named", "all", "--local-cluster", "2"]).output().unwrap();
    assert!(out.status.success(), "fleet-spark failed: {}", String::from_utf8_lossy(&out.stderr));
    let spark: Value = serde_json::from_slice(&out.stdout).expect("fleet-spark prints JSON");

    let list = smartnic_json(&["fleet", "query", "--list"]);
    let names: Vec<&str> = list.as_array().unwrap().iter().map(|q| q["name"].as_str().unwrap()).collect();
    assert_eq!(spark.as_object().unwrap().len(), names.len(), "Spark ran every named query");
    for name in names {
        let ours = smartnic_json(&["fleet", "query", "--dir", d, "--named", name]);
        let rows = ours["rows"].as_array().unwrap();
        assert!(!rows.is_empty(), "{name} answers something");
        assert_eq!(&spark[name]["rows"], &ours["rows"], "{name}: Spark and DataFusion differ");
    }
    let health = &spark["nic_health"]["rows"];
    let real =
        health.as_array().unwrap().iter().find(|r| r["device"] == "nic-real").expect("the real NIC's row");
    assert!(real["frames"].is_null(), "a file export has no frame counters: {real}");
}
