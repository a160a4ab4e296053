//! `smartnic snapshot export` on bad input: each fault named, exit status 1, and nothing
//! sent when any input is bad (a collector never sees half an export it cannot explain).

use std::net::UdpSocket;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

fn export(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_smartnic")).args(["snapshot", "export"]).args(args).output().unwrap()
}

/// A loopback socket standing in for the collector.
fn collector() -> (UdpSocket, String) {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
    let a = s.local_addr().unwrap().to_string();
    (s, a)
}

fn fails_with(out: &Output, words: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {err}");
    for w in words {
        assert!(err.contains(w), "`{w}` not in: {err}");
    }
}

/// A snapshot made by `sketch run` over a small generated trace with INT stacks.
fn snapshot(dir: &Path) -> String {
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_smartnic")).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    let t = dir.join("t.pcap");
    let s = dir.join("e.snap");
    run(&["trace", "gen", "-o", t.to_str().unwrap(), "--shim", "--packets", "3000", "--flows", "50"]);
    run(&[
        "sketch",
        "run",
        "--trace",
        t.to_str().unwrap(),
        "-o",
        s.to_str().unwrap(),
        "--table-threshold",
        "20",
    ]);
    s.to_str().unwrap().to_string()
}

#[test]
fn a_bad_file_among_good_ones_sends_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let good = snapshot(dir.path());
    let bad = dir.path().join("bad.snap");
    std::fs::write(&bad, b"not a snapshot").unwrap();
    let (sock, addr) = collector();
    let out = export(&[&good, bad.to_str().unwrap(), "--ipfix", &addr]);
    fails_with(&out, &["bad.snap", "not a snapshot file"]);
    let mut buf = [0u8; 2048];
    assert!(sock.recv(&mut buf).is_err(), "a message was sent although an input was bad");
    // The good file alone goes out.
    let ok = export(&[&good, "--ipfix", &addr]);
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    assert!(sock.recv(&mut buf).is_ok());
}

#[test]
fn bad_addresses_and_mtus_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let good = snapshot(dir.path());
    fails_with(&export(&[&good, "--ipfix", "nowhere"]), &["--ipfix nowhere", "HOST:PORT"]);
    let (_sock, addr) = collector();
    fails_with(&export(&[&good, "--ipfix", &addr, "--mtu", "64"]), &["MTU of 64 bytes"]);
    let missing = dir.path().join("missing.snap");
    fails_with(&export(&[missing.to_str().unwrap(), "--ipfix", &addr]), &["missing.snap"]);
}
