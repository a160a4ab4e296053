//! The `smartnic-fleet` binary on its own, as `smartnic fleet query` runs it: the same
//! arguments, the named queries, the errors. (Being this package's integration test also
//! makes `cargo test` build the binary, beside `smartnic`, for the host's fleet tests, which
//! run every query through `smartnic fleet query`.)

use std::process::{Command, Output};

use serde_json::Value;
use smartnic::fleet::queries::NAMED;

fn engine(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_smartnic-fleet")).args(args).output().unwrap()
}

#[test]
fn list_is_the_named_queries_of_the_library() {
    let out = engine(&["--json", "--list"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = v.as_array().unwrap().iter().map(|q| q["name"].as_str().unwrap()).collect();
    assert_eq!(names, NAMED.iter().map(|q| q.name).collect::<Vec<_>>());
}

#[test]
fn a_query_over_an_empty_fleet_is_empty_and_says_which_tables_are_missing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let out = engine(&["--json", "--dir", d, "--", "SELECT COUNT(*) AS n FROM flows"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["rows"][0]["n"], 0);
    assert!(v["seconds"].as_f64().is_some());
    let err = String::from_utf8_lossy(&out.stderr);
    for t in ["flows", "hops", "health"] {
        assert!(err.contains(&format!("no {t} table yet")), "{err}");
    }
}

#[test]
fn bad_input_is_exit_status_1_with_the_reason() {
    for (args, says) in [
        (vec!["--dir", "/nonexistent/fleet", "SELECT 1"], "no such directory"),
        (vec!["--dir", "/tmp", "--named", "nope"], "fleet query --list"),
    ] {
        let out = engine(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("error: ") && err.contains(says), "{args:?}: {err}");
    }
}
