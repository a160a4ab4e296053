//! The binary under hostile inputs and closed outputs: a snapshot with a hostile geometry is
//! refused with the field named, a closed stdout ends the command quietly, `--memory` is
//! bounded, and a snapshot aimed at an existing directory leaves no temporary file.

use smartnic::sketch::snapshot::software_snapshot;
use smartnic::sketch::{AnySketch, SketchKind};
use smartnic::trace::{generate_files, GenConfig};
use smartnic_contract::vectors::KeyStream;
use smartnic_driver::snapshot::{Section, Snapshot};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn smartnic(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_smartnic")).args(args).output().expect("binary runs")
}

/// A software snapshot of the NIC pair (TowerSketch ACU and SuMax) over a few thousand
/// packets, with `edit` applied to the SuMax geometry.
fn snapshot(dir: &Path, edit: impl FnOnce(&mut smartnic_contract::SuMaxGeometry)) -> PathBuf {
    let mut sketches: Vec<AnySketch> =
        [SketchKind::TowerAcu, SketchKind::Sumax].iter().map(|k| k.build_nic().unwrap()).collect();
    let mut keys = KeyStream::new(3);
    for i in 0..5_000u64 {
        let key = keys.next_key();
        for s in &mut sketches {
            match s {
                AnySketch::Tower(t) => t.insert(&key),
                AnySketch::SuMax(m) => m.insert(&key, 1_000 * i, 700 + i % 5_000),
                AnySketch::Elastic(_) => unreachable!(),
            }
        }
    }
    let mut snap: Snapshot = software_snapshot(&sketches, 0, 5_000).unwrap();
    if let Some(Section::SuMax { geometry, .. }) = snap.sections.get_mut(1) {
        edit(geometry);
    }
    let path = dir.join("t.snap");
    // Raw bytes: the file is what a hostile producer could write, checksum and all.
    std::fs::write(&path, snap.encode()).unwrap();
    path
}

fn no_panic(stderr: &[u8]) {
    let text = String::from_utf8_lossy(stderr);
    assert!(!text.contains("panicked"), "{text}");
}

/// `time_shift` 62, 63 and 255 used to decode, then print wrong times (or panic on the
/// shift in a debug build): now the snapshot is refused, naming the field.
#[test]
fn report_refuses_a_hostile_time_shift() {
    for shift in [62u8, 63, 255] {
        let dir = tempfile::tempdir().unwrap();
        let path = snapshot(dir.path(), |g| g.time_shift = shift);
        let out = smartnic(&["report", path.to_str().unwrap()]);
        no_panic(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "time_shift {shift} accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("snapshot section 1: SuMax time_shift {shift}")), "{err}");
        assert!(out.stdout.is_empty(), "nothing printed for a refused snapshot");
    }
}

/// A reader that has gone before the first line: no panic text, the 128 + SIGPIPE status.
#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let path = snapshot(dir.path(), |_| {});
    let mut child = Command::new(env!("CARGO_BIN_EXE_smartnic"))
        .args(["report", path.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the read end closes before the command prints anything
    let mut stderr = Vec::new();
    child.stderr.take().unwrap().read_to_end(&mut stderr).unwrap();
    let status = child.wait().unwrap();
    assert!(stderr.is_empty(), "{}", String::from_utf8_lossy(&stderr));
    assert_eq!(status.code(), Some(141));
}

/// The shell case: `smartnic ... | head -n 1` with more output than the first line.
#[test]
fn piping_into_head_prints_no_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = snapshot(dir.path(), |_| {});
    let script =
        format!("'{}' --json report '{}' | head -n 1", env!("CARGO_BIN_EXE_smartnic"), path.display());
    let out = Command::new("sh").args(["-c", &script]).output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "{\n");
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// A `--memory` above 1 GiB is a usage error naming the limit, not an allocation abort.
#[test]
fn memory_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("x.snap");
    let out = smartnic(&[
        "sketch",
        "run",
        "--trace",
        "/nonexistent.pcap",
        "--memory",
        "600000MB",
        "-o",
        out_path.to_str().unwrap(),
    ]);
    no_panic(&out.stderr);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("above the limit of 1 GiB"), "{err}");
    assert!(!out_path.exists());
}

/// `sketch run -o DIR` onto an existing directory: a clear error, and neither the directory
/// nor its parent holds a temporary file afterwards.
#[test]
fn output_onto_an_existing_directory_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("t.pcap");
    let cfg = GenConfig { seed: 4, packets: 2_000, flows: 50, ..GenConfig::default() };
    generate_files(&cfg, &pcap, &dir.path().join("t.json"), None).unwrap();
    let target = dir.path().join("out");
    std::fs::create_dir(&target).unwrap();
    let out = smartnic(&["sketch", "run", "--trace", pcap.to_str().unwrap(), "-o", target.to_str().unwrap()]);
    no_panic(&out.stderr);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is a directory"), "{err}");
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["out", "t.json", "t.pcap"]);
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
}
