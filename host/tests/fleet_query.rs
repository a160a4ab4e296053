//! `smartnic fleet query` (DataFusion) against answers computed here, row by row, from the
//! Parquet files themselves; snapshots exported as Parquet against the report library's
//! records; and the errors a user meets. The engine is the `smartnic-fleet` binary beside
//! `smartnic`: `cargo test --workspace` builds it (for its own package's tests); a run of this
//! package alone needs `cargo build -p smartnic-fleet` first, and says so if it is missing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Output};

use arrow::array::{Array, AsArray};
use arrow::datatypes::{Int32Type, Int64Type};
use arrow::record_batch::RecordBatch;
use serde_json::{json, Value};
use smartnic::export::ipfix::{EpochRecords, Record};
use smartnic::export::parquet::read_table;
use smartnic_driver::snapshot::Snapshot;

mod common;
use common::{smartnic_json, two_epoch_snapshots};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_smartnic")).args(args).output().unwrap()
}

fn rows_of(dir: &Path, named: &str) -> Vec<Value> {
    let d = dir.to_str().unwrap();
    smartnic_json(&["fleet", "query", "--dir", d, "--named", named])["rows"].as_array().unwrap().clone()
}

/// A small synthetic fleet: 6 NICs x 3 epochs x 30 flows on 3 leaves and 2 spines.
fn synth_fleet() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let args = ["--nics", "6", "--epochs", "3", "--flows", "30", "--leaves", "3", "--spines", "2"];
    let mut argv = vec!["fleet", "synth", d];
    argv.extend(args);
    let stats = smartnic_json(&argv);
    assert_eq!(stats["flow_rows"], 6 * 3 * 30);
    assert_eq!(stats["health_rows"], 6 * 3);
    dir
}

/// One column of a batch as JSON values (NULL as null), for the columns these tables have.
fn column(b: &RecordBatch, name: &str) -> Vec<Value> {
    let c = b.column_by_name(name).unwrap_or_else(|| panic!("no column {name}"));
    (0..b.num_rows())
        .map(|i| {
            if c.is_null(i) {
                return Value::Null;
            }
            match c.data_type() {
                arrow::datatypes::DataType::Utf8 => json!(c.as_string::<i32>().value(i)),
                arrow::datatypes::DataType::Int32 => json!(c.as_primitive::<Int32Type>().value(i)),
                arrow::datatypes::DataType::Int64 => json!(c.as_primitive::<Int64Type>().value(i)),
                arrow::datatypes::DataType::Boolean => json!(c.as_boolean().value(i)),
                arrow::datatypes::DataType::Float64 => {
                    json!(c.as_primitive::<arrow::datatypes::Float64Type>().value(i))
                }
                t => panic!("column {name}: type {t}"),
            }
        })
        .collect()
}

/// Every row of `table` as a map from column name to value.
fn table_rows(dir: &Path, table: &str) -> Vec<BTreeMap<String, Value>> {
    let mut rows = Vec::new();
    for b in read_table(dir, table).unwrap() {
        let names: Vec<String> = b.schema().fields().iter().map(|f| f.name().clone()).collect();
        let cols: Vec<Vec<Value>> = names.iter().map(|n| column(&b, n)).collect();
        for i in 0..b.num_rows() {
            rows.push(names.iter().cloned().zip(cols.iter().map(|c| c[i].clone())).collect());
        }
    }
    rows
}

const FIVE: [&str; 5] = ["src_ip", "dst_ip", "src_port", "dst_port", "proto"];

fn five_tuple(r: &BTreeMap<String, Value>) -> Vec<Value> {
    FIVE.iter().map(|k| r[*k].clone()).collect()
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap()
}

/// Orders JSON values as the queries' ORDER BY does (numbers by value, text by bytes).
fn cmp(a: &Value, b: &Value) -> std::cmp::Ordering {
    match (a, b) {
        (Value::String(x), Value::String(y)) => x.cmp(y),
        _ => int(a).cmp(&int(b)),
    }
}

fn cmp_all(a: &[Value], b: &[Value]) -> std::cmp::Ordering {
    a.iter().zip(b).map(|(x, y)| cmp(x, y)).find(|o| o.is_ne()).unwrap_or(std::cmp::Ordering::Equal)
}

fn object(pairs: Vec<(&str, Value)>) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

#[test]
fn flow_sizes_are_the_flows_rows_summed_across_nics() {
    let fleet = synth_fleet();
    type Group = (BTreeSet<String>, i64, i64, i64);
    let mut groups: BTreeMap<String, (Vec<Value>, Group)> = BTreeMap::new();
    for r in table_rows(fleet.path(), "flows") {
        let k = five_tuple(&r);
        let g =
            &mut groups.entry(Value::from(k.clone()).to_string()).or_insert_with(|| (k, Group::default())).1;
        g.0.insert(r["device"].as_str().unwrap().to_string());
        g.1 += 1;
        g.2 += int(&r["packets"]);
        g.3 = g.3.max(int(&r["packets"]));
    }
    let mut want: Vec<(Vec<Value>, Group)> = groups.into_values().collect();
    want.sort_by(|a, b| b.1 .2.cmp(&a.1 .2).then_with(|| cmp_all(&a.0, &b.0)));
    let want: Vec<Value> = want
        .into_iter()
        .take(20)
        .map(|(k, (nics, epochs, sum, max))| {
            let mut pairs: Vec<(&str, Value)> = FIVE.iter().copied().zip(k).collect();
            pairs.extend([
                ("nics", json!(nics.len())),
                ("epochs", json!(epochs)),
                ("packets", json!(sum)),
                ("max_epoch_packets", json!(max)),
            ]);
            object(pairs)
        })
        .collect();
    assert_eq!(rows_of(fleet.path(), "flow_sizes"), want);
}

/// Nearest-rank percentile of sorted values: the value at rank ceil(q n).
fn nearest_rank(sorted: &[i64], q: f64) -> i64 {
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.max(1) - 1]
}

#[test]
fn switch_latency_percentiles_are_nearest_ranks_over_every_pair() {
    let fleet = synth_fleet();
    let mut by_switch: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for r in table_rows(fleet.path(), "hops") {
        if !r["avg_latency_ns"].is_null() {
            by_switch.entry(int(&r["switch_id"])).or_default().push(int(&r["avg_latency_ns"]));
        }
    }
    assert!(by_switch.len() >= 4, "leaves and spines carry traffic: {:?}", by_switch.keys());
    let want: Vec<Value> = by_switch
        .into_iter()
        .map(|(sw, mut v)| {
            v.sort_unstable();
            object(vec![
                ("switch_id", json!(sw)),
                ("pairs", json!(v.len())),
                ("p50_ns", json!(nearest_rank(&v, 0.50))),
                ("p90_ns", json!(nearest_rank(&v, 0.90))),
                ("p99_ns", json!(nearest_rank(&v, 0.99))),
                ("max_ns", json!(v[v.len() - 1])),
            ])
        })
        .collect();
    assert_eq!(rows_of(fleet.path(), "switch_latency"), want);
}

#[test]
fn switch_heavy_hitters_are_each_switch_s_five_largest_pairs() {
    let fleet = synth_fleet();
    let mut pairs: BTreeMap<(i64, String), (Vec<Value>, i64)> = BTreeMap::new();
    for r in table_rows(fleet.path(), "hops") {
        if !r["hop_packets"].is_null() {
            let k = five_tuple(&r);
            let key = (int(&r["switch_id"]), Value::from(k.clone()).to_string());
            pairs.entry(key).or_insert_with(|| (k, 0)).1 += int(&r["hop_packets"]);
        }
    }
    let mut by_switch: BTreeMap<i64, Vec<(Vec<Value>, i64)>> = BTreeMap::new();
    for ((sw, _), (k, p)) in pairs {
        by_switch.entry(sw).or_default().push((k, p));
    }
    let mut want = Vec::new();
    for (sw, mut flows) in by_switch {
        flows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| cmp_all(&a.0, &b.0)));
        for (pos, (k, p)) in flows.into_iter().take(5).enumerate() {
            let mut row: Vec<(&str, Value)> = vec![("switch_id", json!(sw)), ("pos", json!(pos + 1))];
            row.extend(FIVE.iter().copied().zip(k));
            row.push(("packets", json!(p)));
            want.push(object(row));
        }
    }
    assert_eq!(rows_of(fleet.path(), "switch_heavy_hitters"), want);
}

#[test]
fn nic_health_counts_every_epoch_of_every_nic() {
    let fleet = synth_fleet();
    let rows = rows_of(fleet.path(), "nic_health");
    assert_eq!(rows.len(), 6);
    let health = table_rows(fleet.path(), "health");
    for r in &rows {
        let mine: Vec<_> = health.iter().filter(|h| h["device"] == r["device"]).collect();
        assert_eq!(r["epochs"], json!(mine.len()));
        assert_eq!(r["failed"], json!(0));
        let max_frames = mine.iter().map(|h| int(&h["frames"])).max().unwrap();
        assert_eq!(r["frames"], json!(max_frames));
        let max_s = mine.iter().map(|h| h["readout_seconds"].as_f64().unwrap()).fold(0.0, f64::max);
        assert_eq!(r["max_readout_seconds"].as_f64(), Some(max_s));
    }
}

/// The export's rows are the IPFIX export's records of each snapshot, every one of them.
#[test]
fn exported_snapshots_are_their_records_in_sql() {
    let tmp = tempfile::tempdir().unwrap();
    let files = two_epoch_snapshots(tmp.path());
    let pq = tmp.path().join("pq");
    let mut argv = vec!["snapshot", "export", "--parquet", pq.to_str().unwrap(), "--device", "nic-a"];
    argv.extend(files.iter().map(|f| f.to_str().unwrap()));
    let out = smartnic_json(&argv);
    assert_eq!(out["parquet"].as_array().unwrap().len(), 2);

    let (mut flows, mut hops) = (Vec::new(), Vec::new());
    for f in &files {
        let snap = Snapshot::read_file(f).unwrap();
        for r in EpochRecords::from_snapshot(&snap, None).unwrap().records {
            match r {
                Record::Flow { flow, epoch, packets } => flows.push(json!([
                    epoch,
                    flow.src().to_string(),
                    flow.dst().to_string(),
                    flow.src_port,
                    flow.dst_port,
                    flow.proto,
                    packets
                ])),
                Record::Hop { flow, epoch, switch_id, hop_index, hop_packets, avg_latency_ns } => {
                    hops.push(json!([
                        epoch,
                        flow.src().to_string(),
                        flow.dst().to_string(),
                        flow.src_port,
                        flow.dst_port,
                        flow.proto,
                        switch_id,
                        hop_index,
                        hop_packets,
                        avg_latency_ns
                    ]))
                }
            }
        }
    }
    assert!(flows.len() > 50 && hops.len() > flows.len(), "{} flows, {} hops", flows.len(), hops.len());
    let sql = |cols: &str, table: &str| {
        format!("SELECT {cols} FROM {table} WHERE device = 'nic-a' ORDER BY {cols}")
    };
    let as_arrays = |rows: Vec<Value>, cols: &str| -> Vec<Value> {
        let names: Vec<&str> = cols.split(", ").collect();
        rows.iter().map(|r| Value::Array(names.iter().map(|n| r[*n].clone()).collect())).collect()
    };
    let sort = |mut v: Vec<Value>| {
        v.sort_by_key(|a| a.to_string());
        v
    };
    let d = pq.to_str().unwrap();
    let fc = "epoch, src_ip, dst_ip, src_port, dst_port, proto, packets";
    let got =
        smartnic_json(&["fleet", "query", "--dir", d, &sql(fc, "flows")])["rows"].as_array().unwrap().clone();
    assert_eq!(sort(as_arrays(got, fc)), sort(flows));
    let hc =
        "epoch, src_ip, dst_ip, src_port, dst_port, proto, switch_id, hop_index, hop_packets, avg_latency_ns";
    let got =
        smartnic_json(&["fleet", "query", "--dir", d, &sql(hc, "hops")])["rows"].as_array().unwrap().clone();
    assert_eq!(sort(as_arrays(got, hc)), sort(hops));
    // A file export knows the snapshot, not the NIC's counters.
    let h = smartnic_json(&[
        "fleet",
        "query",
        "--dir",
        d,
        "SELECT epoch, readout_ok, frames FROM health ORDER BY epoch",
    ]);
    assert_eq!(
        h["rows"],
        json!([{"epoch": 0, "readout_ok": true, "frames": null}, {"epoch": 1, "readout_ok": true, "frames": null}])
    );
}

fn stderr_of(args: &[&str]) -> String {
    let out = run(args);
    assert_eq!(out.status.code(), Some(1), "smartnic {args:?} should fail");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn bad_input_gets_a_clear_error_and_half_written_files_are_never_read() {
    let fleet = synth_fleet();
    let d = fleet.path().to_str().unwrap();
    let err = stderr_of(&["fleet", "query", "--dir", "/nonexistent/fleet", "SELECT 1"]);
    assert!(err.contains("no such directory"), "{err}");
    let err = stderr_of(&["fleet", "query", "--dir", d, "--named", "nope"]);
    assert!(err.contains("fleet query --list"), "{err}");
    let err = stderr_of(&["fleet", "query", "--dir", d, "SELEC packets FROM flows"]);
    assert!(err.contains("the query failed"), "{err}");
    let err = stderr_of(&["fleet", "query", "--dir", d, "SELECT nonesuch FROM flows"]);
    assert!(err.contains("nonesuch"), "{err}");

    // A writer's temporary file (what a crash mid-write leaves) is not a table file.
    let count = || {
        smartnic_json(&["fleet", "query", "--dir", d, "SELECT COUNT(*) AS n FROM flows"])["rows"][0]["n"]
            .clone()
    };
    let before = count();
    let torn = fleet.path().join("flows/sim_nic00000/t1-epoch-9.parquet.tmp-snapshot");
    std::fs::write(&torn, b"PAR1 half a file").unwrap();
    assert_eq!(count(), before);
    // A damaged table file is an error that names it, never a silent partial answer.
    std::fs::write(fleet.path().join("flows/sim_nic00000/t2-epoch-9.parquet"), b"PAR1 not parquet").unwrap();
    let err = stderr_of(&["fleet", "query", "--dir", d, "SELECT COUNT(*) AS n FROM flows"]);
    assert!(err.contains("t2-epoch-9.parquet") || err.to_lowercase().contains("parquet"), "{err}");

    // A directory with only some tables: the others are empty, and a note says so.
    let partial = tempfile::tempdir().unwrap();
    std::fs::create_dir(partial.path().join("flows")).unwrap();
    let out = run(&[
        "--json",
        "fleet",
        "query",
        "--dir",
        partial.path().to_str().unwrap(),
        "SELECT COUNT(*) AS n FROM hops",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no hops table yet"));
}

#[test]
fn a_missing_engine_says_how_to_build_it() {
    let out = Command::new(env!("CARGO_BIN_EXE_smartnic"))
        .args(["fleet", "query", "--dir", "/tmp", "SELECT 1"])
        .env("SMARTNIC_FLEET", "/nonexistent/smartnic-fleet")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`/nonexistent/smartnic-fleet` is not built"), "{err}");
    assert!(err.contains("cargo build --release -p smartnic-fleet"), "{err}");
}

#[test]
fn list_names_every_query_with_its_purpose() {
    let v = smartnic_json(&["fleet", "query", "--list"]);
    let names: Vec<&str> = v.as_array().unwrap().iter().map(|q| q["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["flow_sizes", "switch_latency", "switch_heavy_hitters", "nic_health"]);
    assert!(v.as_array().unwrap().iter().all(|q| !q["about"].as_str().unwrap().is_empty()));
}
