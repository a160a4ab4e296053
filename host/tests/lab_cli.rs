//! `smartnic lab` end to end through the binary: the captures it writes parse with the
//! trace reader and feed the software NIC (`sketch run`) unchanged, their statistics equal
//! the truth file, the switch logs pair every input with the twin's output, and bad specs
//! exit with a message that names them.

use smartnic::trace::CaptureReader;
use smartnic_p4::routes;
use smartnic_p4::topology::{fat_tree, DEFAULT_DELAY_NS, DEFAULT_RATE_BPS};
use smartnic_p4::twin::sketchint_int::{Ingress, Switch};
use std::path::Path;
use std::process::Command;

fn smartnic(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_smartnic")).args(args).output().expect("run smartnic")
}

fn ok_json(args: &[&str]) -> serde_json::Value {
    let out = smartnic(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Every frame of a capture: (interface, timestamp, bytes).
fn frames(path: &Path) -> Vec<(u32, u64, Vec<u8>)> {
    let mut r = CaptureReader::open(path).unwrap();
    let mut out = Vec::new();
    while let Some(f) = r.next_frame().unwrap() {
        assert_eq!(f.orig_len as usize, f.data.len(), "frames are complete");
        out.push((f.interface, f.ts_ns, f.data.to_vec()));
    }
    out
}

#[test]
fn captures_match_the_truth_and_feed_the_software_nic() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let summary = ok_json(&[
        "--json",
        "lab",
        "run",
        "-o",
        d,
        "--packets",
        "8000",
        "--queue",
        "1024MiB",
        "--switch-log",
    ]);
    assert_eq!(summary["packets_sent"], 8000);
    assert_eq!(summary["packets_dropped"], 0);
    let truth: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("truth.json")).unwrap()).unwrap();
    let flows = truth["flows"].as_array().unwrap();
    let mut hosts_seen = 0;
    for entry in std::fs::read_dir(dir.path().join("hosts")).unwrap() {
        let path = entry.unwrap().path();
        let host = path.file_stem().unwrap().to_str().unwrap().to_string();
        let p = path.to_str().unwrap();
        let stats = ok_json(&["--json", "trace", "stats", p, "--all-flows"]);
        assert_eq!(stats["totals"]["malformed"], 0, "{host}");
        assert_eq!(stats["totals"]["non_ip"], 0, "{host}");
        let mine: Vec<_> = flows.iter().filter(|f| f["dst"] == host.as_str()).collect();
        let want: u64 = mine.iter().map(|f| f["packets_received"].as_u64().unwrap()).sum();
        assert_eq!(stats["totals"]["packets"], want, "{host}");
        for f in stats["top"].as_array().unwrap() {
            let t = mine.iter().find(|m| m["key"] == f["key"]).expect("a flow of the truth");
            assert_eq!(f["packets"], t["packets_received"]);
            assert_eq!(f["bytes"], t["bytes_received"]);
            for s in t["switches"].as_array().unwrap() {
                let id = s["switch_id"].to_string();
                assert_eq!(f["hop_latency_ns"][&id], s["latency_sum_ns"], "{} at {id}", t["key"]);
                assert_eq!(f["hop_packets"][&id], s["forwarded"], "{} at {id}", t["key"]);
            }
        }
        if want > 0 {
            let snap = dir.path().join(format!("{host}.snap"));
            let run = ok_json(&["--json", "sketch", "run", "--trace", p, "-o", snap.to_str().unwrap()]);
            assert_eq!(run["packets"], want, "{host}: the software NIC takes every frame");
            assert_eq!(run["malformed"], 0);
            hosts_seen += 1;
        }
    }
    assert!(hosts_seen >= 8, "only {hosts_seen} hosts received traffic");
    check_switch_logs(dir.path(), &truth);
}

/// Each switch's log pairs inputs with outputs: the twin, on the entries the run wrote,
/// turns every logged input into the logged output (the latency read from the output's
/// last hop record, the one field from the switch's clock).
fn check_switch_logs(dir: &Path, truth: &serde_json::Value) {
    let t = fat_tree(4, DEFAULT_RATE_BPS, DEFAULT_DELAY_NS).unwrap();
    let tables = routes::compute(&t).unwrap();
    for (s, tab) in t.switches().zip(tables) {
        let name = &t.nodes[s].name;
        let sw = dir.join("switches");
        let entries = std::fs::read_to_string(sw.join(format!("{name}.entries.txt"))).unwrap();
        assert_eq!(entries, tab.cli_commands().join("\n") + "\n");
        let listed = smartnic(&["lab", "entries", "--switch", name]);
        assert_eq!(String::from_utf8(listed.stdout).unwrap(), entries);
        let inputs = frames(&sw.join(format!("{name}.in.pcapng")));
        let outputs = frames(&sw.join(format!("{name}.out.pcapng")));
        let totals =
            truth["switches"].as_array().unwrap().iter().find(|x| x["name"] == name.as_str()).unwrap();
        assert_eq!(inputs.len() as u64, totals["arrivals"].as_u64().unwrap(), "{name}");
        assert_eq!(outputs.len(), inputs.len(), "{name}: no drops, so every input has its output");
        let twin = Switch::new(tab);
        for ((_, t_in, input), (port, t_out, output)) in inputs.into_iter().zip(outputs) {
            let Ingress::Forward { port: p, frame, .. } = twin.ingress(input) else {
                panic!("{name} forwarded it")
            };
            assert_eq!(p as u32, port, "{name}: egress port is the interface");
            let (_, hops) = match smartnic::trace::parse_frame(1, &output) {
                smartnic::trace::FrameClass::Ip { key, hops } => (key, hops),
                other => panic!("{other:?}"),
            };
            let latency = hops.last().unwrap().latency_ns;
            assert_eq!(latency as u64, t_out - t_in, "{name}: latency = start - arrival");
            assert_eq!(twin.egress(frame, latency as u64), output, "{name}");
        }
    }
}

#[test]
fn topo_and_entries_print_the_network() {
    let nodes = ok_json(&["--json", "lab", "topo", "--topo", "leaf-spine:2,2,3", "--rate", "40G"]);
    let nodes = nodes.as_array().unwrap();
    assert_eq!(nodes.len(), 2 + 2 + 6);
    let h = nodes.iter().find(|n| n["name"] == "h1_2").unwrap();
    assert_eq!(h["ip"], "10.0.1.4");
    assert_eq!(h["ports"][0]["rate_bps"], 40_000_000_000u64);
    let j = ok_json(&["--json", "lab", "entries", "--switch", "core0"]);
    assert_eq!(j["switch_id"], 0);
}

#[test]
fn bad_specs_exit_with_a_message_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for (args, code, word) in [
        (vec!["lab", "run", "-o", d, "--fault", "flood:x@1ms"], 2, "unknown kind `flood`"),
        (vec!["lab", "run", "-o", d, "--fault", "drop:a>b:7@1ms"], 2, "probability"),
        (vec!["lab", "run", "-o", d, "--workload", "pareto"], 2, "web-search"),
        (vec!["lab", "run", "-o", d, "--topo", "fat-tree:3"], 1, "even"),
        (vec!["lab", "run", "-o", d, "--load", "0"], 1, "load"),
        (vec!["lab", "run", "-o", d, "--fault", "blackhole:nosuch:10.0.0.0/8@0ns"], 1, "nosuch"),
        (vec!["lab", "entries", "--switch", "h0_0_0"], 1, "no switch called `h0_0_0`"),
    ] {
        let out = smartnic(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(word), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!dir.path().join("hosts").exists(), "{args:?}: nothing is written for a bad spec");
    }
}
