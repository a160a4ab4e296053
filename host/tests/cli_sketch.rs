//! `smartnic sketch run|query` through the binary: snapshots equal library runs over the
//! same packets, epochs partition the trace, and mistakes get clear errors.

use smartnic::sketch::snapshot::to_section;
use smartnic::sketch::SketchKind;
use smartnic::trace::{generate_files, GenConfig, Packet, PacketReader, ShimConfig};
use smartnic_driver::snapshot::Snapshot;
use std::path::Path;
use std::process::Command;

fn smartnic(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_smartnic")).args(args).output().expect("binary runs")
}

fn trace(dir: &Path, packets: u64) -> (String, Vec<Packet>) {
    let cfg =
        GenConfig { seed: 9, packets, flows: 400, shim: Some(ShimConfig::default()), ..GenConfig::default() };
    let pcap = dir.join("t.pcap");
    generate_files(&cfg, &pcap, &dir.join("t.json"), None).unwrap();
    let mut r = PacketReader::open(&pcap).unwrap();
    let mut v = Vec::new();
    while let Some(p) = r.next_packet().unwrap() {
        v.push(p);
    }
    (pcap.display().to_string(), v)
}

/// The sections a library run of the NIC pair produces over `packets`.
fn library_sections(packets: &[Packet]) -> Vec<smartnic_driver::snapshot::Section> {
    let mut sk: Vec<_> =
        [SketchKind::TowerAcu, SketchKind::Sumax].iter().map(|k| k.build_nic().unwrap()).collect();
    for p in packets {
        sk.iter_mut().for_each(|s| s.insert(p));
    }
    sk.iter().map(|s| to_section(s).unwrap()).collect()
}

#[test]
fn run_writes_the_library_counters() {
    let dir = tempfile::tempdir().unwrap();
    let (pcap, packets) = trace(dir.path(), 20_000);
    let snap = dir.path().join("t.snap");
    let out = smartnic(&["sketch", "run", "--trace", &pcap, "-o", snap.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["packets"], 20_000);
    let s = Snapshot::read_file(&snap).unwrap();
    assert_eq!(s.packets, 20_000);
    assert_eq!(s.sections, library_sections(&packets));
}

#[test]
fn epochs_partition_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    let (pcap, packets) = trace(dir.path(), 7_500);
    let out_dir = dir.path().join("epochs");
    let out = smartnic(&[
        "sketch",
        "run",
        "--trace",
        &pcap,
        "--epoch-packets",
        "2000",
        "-o",
        out_dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut total = 0;
    for (e, chunk) in packets.chunks(2000).enumerate() {
        let s = Snapshot::read_file(&out_dir.join(format!("epoch-{e:06}.snap"))).unwrap();
        assert_eq!((s.epoch, s.packets), (e as u64, chunk.len() as u64));
        assert_eq!(s.sections, library_sections(chunk), "epoch {e}");
        total += s.packets;
    }
    assert_eq!(total, 7_500);
    assert!(!out_dir.join("epoch-000004.snap").exists());
}

#[test]
fn query_reports_the_flow() {
    let dir = tempfile::tempdir().unwrap();
    let (pcap, packets) = trace(dir.path(), 5_000);
    let snap = dir.path().join("q.snap");
    let snap = snap.to_str().unwrap();
    assert!(smartnic(&["sketch", "run", "--trace", &pcap, "-o", snap]).status.success());
    let flow = packets[0].key;
    let truth = packets.iter().filter(|p| p.key == flow).count() as u64;
    let out = smartnic(&["sketch", "query", snap, "--flow", &flow.to_string(), "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let answers: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for a in answers.as_array().unwrap() {
        assert!(a["packets"].as_u64().unwrap() >= truth, "{a}");
    }
    assert_eq!(answers[1]["sketch"], "sumax");
}

#[test]
fn mistakes_get_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = smartnic(&["sketch", "run", "--trace", "/nonexistent.pcap", "-o", "/tmp/x.snap"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent.pcap"));
    let (pcap, _) = trace(dir.path(), 1_000);
    let out = dir.path().join("x.snap");
    let out = out.to_str().unwrap();
    let elastic =
        smartnic(&["sketch", "run", "--trace", &pcap, "--sketch", "elastic", "--memory", "64KB", "-o", out]);
    assert_eq!(elastic.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&elastic.stderr).contains("smartnic eval"));
    let no_size = smartnic(&["sketch", "run", "--trace", &pcap, "--sketch", "cm", "-o", out]);
    assert!(String::from_utf8_lossy(&no_size.stderr).contains("--memory"));
    let bad_flow = smartnic(&["sketch", "query", out, "--flow", "nonsense"]);
    assert_eq!(bad_flow.status.code(), Some(2));
    std::fs::write(dir.path().join("bad.snap"), b"SNICSNAP garbage").unwrap();
    let bad = dir.path().join("bad.snap");
    let corrupt = smartnic(&["sketch", "query", bad.to_str().unwrap(), "--flow", "1.2.3.4:1>5.6.7.8:2/6"]);
    assert_eq!(corrupt.status.code(), Some(1));
    assert!(!String::from_utf8_lossy(&corrupt.stderr).is_empty());
}
