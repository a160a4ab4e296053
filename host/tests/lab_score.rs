//! The per-switch accuracy lab (`smartnic lab score`, `eval::per_switch`): with memory to
//! spare the NIC's models answer SketchINT's four global tasks exactly (what remains is the
//! log-domain compare and the 16 ns units), with little memory they visibly do not, and
//! the command prints every score.

use smartnic::eval::per_switch::{score, Exact, Point, Streams};
use smartnic::lab::LabConfig;
use smartnic_contract::geometry::InsertMode;
use smartnic_contract::per_switch::{InflateRule, LatencyTowerGeometry};
use smartnic_p4::topology::{fat_tree, DEFAULT_DELAY_NS, DEFAULT_RATE_BPS};
use std::process::Command;

fn streams() -> (Streams, Exact) {
    let t = fat_tree(4, DEFAULT_RATE_BPS, DEFAULT_DELAY_NS).unwrap();
    let mut cfg = LabConfig::default();
    cfg.workload.max_packets = Some(60_000);
    cfg.workload.load = 0.5;
    cfg.workload.sizes = "zipf:1.5:4MB".parse().unwrap();
    cfg.workload.seed = 3;
    let s = Streams::from_lab(&t, &cfg).unwrap();
    let x = Exact::new(&s, InflateRule::SKETCHINT_RATIO_X256, 4);
    (s, x)
}

#[test]
fn ample_memory_is_exact_and_little_memory_is_not() {
    let (s, x) = streams();
    assert!(s.packets() > 40_000, "{} packets reached the NICs", s.packets());
    for mode in [InsertMode::Acu, InsertMode::Cm] {
        let big = score(&s, &x, &Point::sized(mode, 4 << 20, 8 << 20)).unwrap();
        assert!(big.sw_hh.truth > 0 && big.sw_hc.truth > 0 && big.inflated.truth > 100, "{big:?}");
        assert_eq!((big.sw_hh.f1, big.sw_hc.f1), (1.0, 1.0), "{mode:?}: {big:?}");
        assert!(big.inflated.f1 > 0.99, "{mode:?}: inflated {:?}", big.inflated);
        assert!(big.lat_pairs_1us > 100 && big.lat_are_1us < 0.01, "{mode:?}: {big:?}");
        assert_eq!(big.table_misses, 0);

        let small = score(&s, &x, &Point::sized(mode, 4 << 20, 2_000)).unwrap();
        assert!(small.lat_are_1us > 10.0 * big.lat_are_1us.max(0.01), "{mode:?}: {small:?}");
        assert!(small.inflated.f1 < big.inflated.f1 - 0.05, "{mode:?}: {small:?}");
    }
}

/// `smartnic lab score --json`: one row per mode and size, in order, with every score.
#[test]
fn the_nic_default_scores_and_the_cli_reports_it() {
    let out = Command::new(env!("CARGO_BIN_EXE_smartnic"))
        .args(["--json", "lab", "score", "--packets", "20000", "--load", "0.5", "--mode", "acu,cm"])
        .args(["--flow-memory", "5KB", "--latency-memory", "5KB"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 6, "per mode: the NIC, one flow size, one latency size");
    assert_eq!(rows[0]["label"], "nic-acu");
    assert_eq!(rows[3]["mode"], "cm");
    for r in rows {
        for f in ["sw_hh", "sw_hc", "inflated", "inflated_ns"] {
            let f1 = r[f]["f1"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&f1), "{f}: {r}");
        }
        assert!(r["lat_are"].as_f64().unwrap() >= 0.0);
    }
    assert_eq!(rows[0]["flow_kib"], 192.0);
    let nic_kib = LatencyTowerGeometry::nic_default().memory_bits() as f64 / 8.0 / 1024.0;
    assert_eq!(rows[0]["latency_kib"], nic_kib);
    let bad = Command::new(env!("CARGO_BIN_EXE_smartnic"))
        .args(["lab", "score", "--mode", "fast"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("fast"));
}
