//! Replays every file of `fuzz/regressions/<target>/` through the fuzz target's body
//! (`smartnic::fuzz_bodies`), so every crash the fuzzers ever found, and the seeds kept
//! beside them, are checked by plain `cargo test` with no fuzzer installed.
//!
//! A target without a non-empty regressions folder, or a `fuzz/fuzz_targets/*.rs` wrapper
//! without a body (or the other way round), fails the suite: nothing is replayed silently
//! as nothing.

use std::collections::BTreeSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use smartnic::fuzz_bodies::TARGETS;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

/// The files of `fuzz/regressions/<target>/`, sorted; panics when there are none.
fn regression_files(target: &str) -> Vec<PathBuf> {
    let dir = fuzz_dir().join("regressions").join(target);
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut files: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect();
    files.sort();
    assert!(!files.is_empty(), "{} holds no regression inputs", dir.display());
    files
}

/// Runs every regression file of `target`; fails naming each file whose replay panicked.
fn replay(target: &str) {
    let body = TARGETS.iter().find(|(name, _)| *name == target).expect("a known target").1;
    let mut failed = Vec::new();
    for file in regression_files(target) {
        let data = std::fs::read(&file).unwrap();
        if catch_unwind(AssertUnwindSafe(|| body(&data))).is_err() {
            failed.push(file.display().to_string());
        }
    }
    assert!(failed.is_empty(), "{target}: regression inputs fail (messages above):\n{}", failed.join("\n"));
}

#[test]
fn every_fuzz_target_has_a_body_and_regression_inputs() {
    let wrappers: BTreeSet<String> = std::fs::read_dir(fuzz_dir().join("fuzz_targets"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    let bodies: BTreeSet<String> = TARGETS.iter().map(|(n, _)| n.to_string()).collect();
    assert_eq!(
        wrappers, bodies,
        "fuzz/fuzz_targets/*.rs and fuzz_bodies::TARGETS must name the same targets"
    );
    for (name, _) in TARGETS {
        regression_files(name);
    }
}

#[test]
fn frame() {
    replay("frame");
}

#[test]
fn capture() {
    replay("capture");
}

#[test]
fn snapshot() {
    replay("snapshot");
}

#[test]
fn shim() {
    replay("shim");
}

#[test]
fn service_server() {
    replay("service_server");
}

#[test]
fn service_client() {
    replay("service_client");
}

#[test]
fn bar_discovery() {
    replay("bar_discovery");
}
