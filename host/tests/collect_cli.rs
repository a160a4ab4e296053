//! `smartnic collect` on the command line: bad arguments are refused with a message that
//! names them (exit 1 or 2, never a panic), and a device that is not there keeps the daemon
//! running (device down, retried every period) until SIGTERM, which it exits 0 on.

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn collect(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_smartnic")).arg("collect").args(args).output().unwrap()
}

/// Exit status and stderr of a run that must fail.
fn refused(args: &[&str]) -> (Option<i32>, String) {
    let out = collect(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!err.contains("panicked"), "{err}");
    (out.status.code(), err)
}

#[test]
fn bad_arguments_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let (code, err) = refused(&["--device", "sim", "--dir", d, "--keep", "0", "--listen", "127.0.0.1:0"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("--keep must be at least 1"), "{err}");
    let (code, err) = refused(&["--device", "sim", "--dir", d, "--every", "0s", "--listen", "127.0.0.1:0"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("--every must be longer than zero"), "{err}");
    let (code, err) = refused(&["--device", "sim", "--dir", d, "--every", "5x"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("unknown duration unit `x`"), "{err}");
    let (code, err) =
        refused(&["--device", "file:a/b", "--device", "file:a_b", "--dir", d, "--listen", "127.0.0.1:0"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("would share the directory file_a_b"), "{err}");
    let (code, err) =
        refused(&["--device", "sim", "--dir", d, "--sim-packets", "0", "--listen", "127.0.0.1:0"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("--sim-packets must be at least 1"), "{err}");
}

#[test]
fn a_port_in_use_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    let (code, err) = refused(&["--device", "sim", "--dir", dir.path().to_str().unwrap(), "--listen", &addr]);
    assert_eq!(code, Some(1));
    assert!(err.contains(&format!("cannot listen on {addr}")), "{err}");
}

/// `GET /metrics` on `addr`.
fn scrape(addr: &str) -> String {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.write_all(b"GET /metrics HTTP/1.0\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

/// A BAR image that does not exist: the daemon logs the device down once, publishes
/// `smartnic_device_up 0` and the failed opens, keeps running, and exits 0 on SIGTERM
/// having written nothing.
#[test]
fn a_missing_device_is_retried_until_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let spec = format!("file:{}", dir.path().join("gone.img").display());
    let snaps = dir.path().join("snaps");
    let mut child = Command::new(env!("CARGO_BIN_EXE_smartnic"))
        .args([
            "collect",
            "--json",
            "--every",
            "100ms",
            "--listen",
            "127.0.0.1:0",
            "--device",
            &spec,
            "--dir",
        ])
        .arg(&snaps)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = || -> Value { serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap() };
    let hello = next();
    let addr = hello["metrics"]
        .as_str()
        .unwrap()
        .trim_start_matches("http://")
        .trim_end_matches("/metrics")
        .to_owned();
    let down = next();
    assert_eq!(down["event"], "down", "{down}");
    assert!(down["message"].as_str().unwrap().contains("gone.img"), "{down}");
    let opens = format!("smartnic_readout_failures_total{{device=\"{spec}\",reason=\"open\"}} ");
    let start = Instant::now();
    let text = loop {
        let text = scrape(&addr);
        let n: Option<u64> = text.lines().find_map(|l| l.strip_prefix(&opens)?.parse().ok());
        if n >= Some(3) {
            break text;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "{text}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(text.contains(&format!("smartnic_device_up{{device=\"{spec}\"}} 0")), "{text}");
    assert!(Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success());
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    let stopped = next();
    assert_eq!(stopped["event"], "stopped", "{stopped}");
    assert_eq!(std::fs::read_dir(snaps.join(smartnic::collect::device_dir(&spec))).unwrap().count(), 0);
}
