//! `smartnic device list | status | readout` (old spellings `devices`, `status`, `readout`) through the binary, on a BAR image file.

use smartnic_contract::geometry::{SuMaxGeometry, TowerGeometry};
use smartnic_contract::regs::layout::FirmwareInfo;
use smartnic_driver::backend::FileBar;
use std::process::Command;

fn smartnic(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_smartnic")).args(args).output().expect("binary runs")
}

fn device(dir: &std::path::Path) -> String {
    let path = dir.join("bar.img");
    let fw = FirmwareInfo { device: 0x7038, version: 0x0001_0002, build_time: 7, git_hash: 0xfeed_beef };
    FileBar::create_device(&path, fw, &TowerGeometry::sketchint_fpga(), &SuMaxGeometry::nic_default())
        .unwrap();
    format!("file:{}", path.display())
}

#[test]
fn status_reads_the_register_map() {
    let dir = tempfile::tempdir().unwrap();
    let dev = device(dir.path());
    let out = smartnic(&["status", "--device", &dev, "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(s["firmware"].as_str().unwrap().contains("version 1.2"), "{s}");
    assert!(s["firmware"].as_str().unwrap().contains("feedbeef"), "{s}");
    assert_eq!(s["frames"], serde_json::json!([0, 0, 0, 0, 0]));
    let blocks = s["blocks"].as_str().unwrap();
    for name in
        ["firmware-id", "stats", "epoch", "towersketch", "sumax", "towersketch array 2", "sumax array 2"]
    {
        assert!(blocks.contains(name), "{name} missing from {blocks}");
    }
}

#[test]
fn readout_of_a_device_that_ignores_swap_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let dev = device(dir.path());
    let snap = dir.path().join("out.snap");
    let out = smartnic(&["readout", "--device", &dev, "-o", snap.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no snapshot was written") && err.contains("SEQUENCE"), "{err}");
    assert!(!snap.exists());
}

#[test]
fn missing_devices_are_explained() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("bus/pci/devices")).unwrap();
    let out = smartnic(&["devices", "--sysfs", dir.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("no SmartNIC found"));
    let gone = smartnic(&["status", "--device", "file:/nonexistent/bar.img"]);
    assert_eq!(gone.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&gone.stderr).contains("/nonexistent/bar.img"));
    let bad = smartnic(&["status", "--device", "vfio:not-a-bdf"]);
    assert_eq!(bad.status.code(), Some(1));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("\"not-a-bdf\" is not a PCI address") && err.contains("DDDD:BB:DD.F"), "{err}");
}
