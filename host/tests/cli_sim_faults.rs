//! `smartnic sim` against simulator services that misbehave (fake ones, shell scripts in
//! place of `smartnic-sim`): the command fails within the deadline and says what happened,
//! instead of waiting forever.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// Runs `smartnic sim` with the service `script` and a 0.3 s deadline; checks that it
/// failed within a few seconds (the fake services sleep for 30; they `exec` the sleep so
/// that killing the service ends it, and with it their hold on our stderr).
fn sim_with(dir: &Path, script: &str) -> String {
    let exe = dir.join("fake-sim");
    std::fs::write(&exe, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let trace = dir.join("t.pcap");
    std::fs::write(&trace, b"").unwrap();
    // A manifest of an earlier run into the same directory must not survive this one.
    std::fs::create_dir_all(dir.join("out")).unwrap();
    std::fs::write(dir.join("out/manifest.json"), b"{\"complete\": true}").unwrap();
    let start = Instant::now();
    let out: Output = Command::new(env!("CARGO_BIN_EXE_smartnic"))
        .args(["sim", "--trace", trace.to_str().unwrap(), "-o", dir.join("out").to_str().unwrap()])
        .env("SMARTNIC_SIM", &exe)
        .env("SMARTNIC_SIM_DEADLINE", "0.3")
        .output()
        .unwrap();
    assert!(start.elapsed() < Duration::from_secs(8), "took {:?}", start.elapsed());
    assert_eq!(out.status.code(), Some(1));
    assert!(!dir.join("out/manifest.json").exists(), "a failed run kept the earlier manifest");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

const GREETING: &str = r"printf 'SNICSIM1\000\020\000\000\000\000\000\000'";

#[test]
fn a_service_without_greeting_is_called_stalled() {
    let dir = tempfile::tempdir().unwrap();
    let err = sim_with(dir.path(), "exec sleep 30");
    assert!(err.contains("stopped answering: no greeting within 300ms"), "{err}");
}

#[test]
fn a_service_silent_after_greeting_is_called_stalled() {
    let dir = tempfile::tempdir().unwrap();
    let err = sim_with(dir.path(), &format!("{GREETING}; exec sleep 30"));
    assert!(err.contains("stopped answering: nothing for 300ms"), "{err}");
}

#[test]
fn a_killed_service_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let err = sim_with(dir.path(), &format!("{GREETING}; kill -9 $$"));
    assert!(err.contains("was killed") && err.contains("SIGKILL"), "{err}");
}

#[test]
fn a_bad_deadline_is_refused() {
    let out = Command::new(env!("CARGO_BIN_EXE_smartnic"))
        .args(["sim", "--trace", "t.pcap", "-o", "/nonexistent-dir/x"])
        .env("SMARTNIC_SIM", "/bin/true")
        .env("SMARTNIC_SIM_DEADLINE", "soon")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("SMARTNIC_SIM_DEADLINE=soon"), "{err}");
}
