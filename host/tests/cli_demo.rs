//! `smartnic demo --software` end to end on a small trace: every step runs, and the report's
//! numbers agree with what this test computes on its own from the demo's trace and truth
//! file (epoch sizes, flow count, the last epoch's largest flows and their exact counts;
//! the sketch never underestimates). The NIC path, where the counters are compared with
//! the model, is `sim-tb/tests/demo_nic.rs`; the verdict on a mismatch is tested in
//! `smartnic::demo`.

use smartnic::trace::truth::Truth;
use smartnic::trace::PacketReader;
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

const EPOCH_PACKETS: usize = 10_000;

/// Exact packets per flow (Display form) in the last epoch of the trace, largest first, ties
/// by key as the report sorts them.
fn last_epoch_flows(pcap: &Path) -> Vec<(String, u64)> {
    let mut reader = PacketReader::open(pcap).unwrap();
    let mut keys = Vec::new();
    while let Some(p) = reader.next_packet().unwrap() {
        keys.push(p.key);
    }
    let last = keys.chunks(EPOCH_PACKETS).last().unwrap();
    let mut counts = HashMap::new();
    last.iter().for_each(|k| *counts.entry(*k).or_insert(0u64) += 1);
    let mut flows: Vec<_> = counts.into_iter().collect();
    flows.sort_by_key(|&(k, n)| (std::cmp::Reverse(n), k));
    flows.into_iter().map(|(k, n)| (k.to_string(), n)).collect()
}

#[test]
fn software_demo_reports_every_epoch() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_smartnic"))
        .args([
            "demo",
            "--software",
            "--packets",
            "25000",
            "--flows",
            "2000",
            "--epoch-packets",
            "10000",
            "--json",
        ])
        .arg("--out")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["packets"], 25_000);
    let truth = Truth::read(&dir.path().join("truth.json")).unwrap();
    assert_eq!(r["flows"].as_u64().unwrap(), truth.flows.len() as u64);
    let epochs = r["epochs"].as_array().unwrap();
    let packets: Vec<u64> = epochs.iter().map(|e| e["packets"].as_u64().unwrap()).collect();
    assert_eq!(packets, vec![10_000, 10_000, 5_000]);
    for e in epochs {
        let are = e["tower_are"].as_f64().unwrap();
        assert!((0.0..0.5).contains(&are), "TowerSketch ARE {are} on 2k flows at 192 KiB");
    }
    let want = last_epoch_flows(&dir.path().join("trace.pcap"));
    let top = r["top_of_last_epoch"].as_array().unwrap();
    assert_eq!(top.len(), 8);
    for (t, (flow, n)) in top.iter().zip(&want) {
        assert_eq!((t["flow"].as_str().unwrap(), t["packets"].as_u64().unwrap()), (flow.as_str(), *n), "{t}");
        assert!(t["tower"].as_u64().unwrap() >= *n, "never underestimates: {t}");
        assert!(t["sumax"].as_u64().unwrap() >= *n, "never underestimates: {t}");
    }
    assert!(dir.path().join("software/epoch-000002.snap").exists());
}
