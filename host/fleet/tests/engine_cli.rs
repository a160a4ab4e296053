//! The `smartnic-fleet` binary on its own, as `smartnic fleet query` runs it: the same
//! arguments, the named queries, the errors. (Being this package's integration test also
//! makes `cargo test` build the binary, beside `smartnic`, for the host's fleet tests, which
//! run every query through `smartnic fleet query`.)

use std::process::{Command, Output};

use serde_json::Value;
use smartnic::fleet::queries::{named, NAMED};
use smartnic::fleet::synth::{write_fleet, SynthConfig};

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

/// `flow_sizes` over `dir` under `limit` (None: the default): its rows, or the error.
fn flow_sizes_under(dir: &str, limit: Option<&str>) -> Result<Value, String> {
    let mut args = vec!["--json", "--dir", dir, "--named", "flow_sizes"];
    args.extend(limit.iter().flat_map(|l| ["--memory-limit", l]));
    let out = engine(&args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    match out.status.code() {
        Some(0) => Ok(serde_json::from_slice::<Value>(&out.stdout).unwrap()["rows"].clone()),
        Some(1) => Err(err),
        other => panic!("{limit:?}: exit {other:?}: {err}"),
    }
}

/// Spill files the aggregations of `flow_sizes` wrote under `limit` (EXPLAIN ANALYZE).
fn spills_under(dir: &str, limit: &str) -> u64 {
    let sql = format!("EXPLAIN ANALYZE {}", named("flow_sizes").unwrap().sql);
    let out = engine(&["--csv", "--dir", dir, "--memory-limit", limit, "--", &sql]);
    assert!(out.status.success(), "{limit}: {}", String::from_utf8_lossy(&out.stderr));
    let plan = String::from_utf8_lossy(&out.stdout);
    plan.split("spill_count=")
        .skip(1)
        .map(|s| s.split(|c: char| !c.is_ascii_digit()).next().unwrap().parse::<u64>().unwrap())
        .sum()
}

/// Under a memory limit the aggregations spill and answer exactly as without one; below what
/// spilling itself needs, the query fails saying which limit and how to raise it. Limits are
/// tried upwards because what spilling needs grows with the engine's partitions (the
/// machine's cores); on any machine some limit of the ladder must spill and succeed.
#[test]
fn a_memory_limit_spills_to_the_same_answer_or_fails_saying_so() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = SynthConfig { nics: 50, epochs: 4, flows: 200, leaves: 4, spines: 2, seed: 3 };
    write_fleet(dir.path(), &cfg, |_| {}).unwrap();
    let d = dir.path().to_str().unwrap();
    let want = flow_sizes_under(d, None).unwrap();
    assert_eq!(want.as_array().unwrap().len(), 20);

    let err = flow_sizes_under(d, Some("64K")).unwrap_err();
    assert!(
        err.starts_with("error: ")
            && err.contains("memory limit of 0.1 MiB")
            && err.contains("--memory-limit"),
        "{err}"
    );

    let mut spilled = Vec::new();
    for limit in ["8M", "12M", "16M", "24M", "32M", "48M", "64M", "96M", "128M"] {
        match flow_sizes_under(d, Some(limit)) {
            Ok(rows) => {
                assert_eq!(rows, want, "under {limit}");
                if spills_under(d, limit) > 0 {
                    spilled.push(limit);
                }
            }
            Err(e) => assert!(e.contains("needs more than its memory limit"), "{limit}: {e}"),
        }
    }
    assert!(!spilled.is_empty(), "no limit of the ladder made the aggregation spill and succeed");
}
