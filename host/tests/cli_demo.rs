//! `smartnic demo --software` end to end on a small trace: every step runs, the report is
//! complete and its numbers are consistent with the trace.

use std::process::Command;

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
    let epochs = r["epochs"].as_array().unwrap();
    let packets: Vec<u64> = epochs.iter().map(|e| e["packets"].as_u64().unwrap()).collect();
    assert_eq!(packets, vec![10_000, 10_000, 5_000]);
    for e in epochs {
        assert_eq!(e["tower_equal"], true);
        assert_eq!(e["sumax_equal"], true);
        let are = e["tower_are"].as_f64().unwrap();
        assert!((0.0..0.5).contains(&are), "TowerSketch ARE {are} on 2k flows at 192 KiB");
    }
    let top = r["top_of_last_epoch"].as_array().unwrap();
    assert_eq!(top.len(), 8);
    for t in top {
        assert!(t["tower"].as_u64().unwrap() >= t["packets"].as_u64().unwrap(), "never underestimates: {t}");
    }
    assert!(dir.path().join("software/epoch-000002.snap").exists());
}
