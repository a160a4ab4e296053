//! The `smartnic trace` commands end to end through the binary: `gen` then `stats
//! --json --all-flows` reproduces the truth file, and a damaged file exits with 1 and an
//! error naming the offset.

use std::process::Command;

fn smartnic(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_smartnic")).args(args).output().expect("run smartnic")
}

#[test]
fn gen_then_stats_json_equals_truth() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("t.pcap");
    let p = pcap.to_str().unwrap();
    let out = smartnic(&[
        "--json",
        "trace",
        "gen",
        "-o",
        p,
        "-n",
        "20000",
        "-f",
        "1500",
        "--shim",
        "--hops",
        "3-4",
        "--switches",
        "16",
        "--latency",
        "const:250",
        "--vlan",
        "0.5",
        "--non-ip",
        "0.02",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let gen: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(gen["totals"]["packets"], 20000);
    let truth_path = format!("{p}.truth.json");
    assert_eq!(gen["truth"], truth_path.as_str());
    let truth: serde_json::Value = serde_json::from_slice(&std::fs::read(&truth_path).unwrap()).unwrap();

    let out = smartnic(&["--json", "trace", "stats", p, "--top", "3", "--all-flows"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stats: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(stats["totals"], truth["totals"]);
    assert_eq!(stats["flows"], truth["flows"]);
    assert_eq!(stats["top"].as_array().unwrap()[..], truth["flows"].as_array().unwrap()[..3]);
    // Constant 250 ns per hop, scaled by each switch's fixed load factor in [0.5, 2):
    // every record of switch s carries the same latency c_s, in every flow.
    let mut per_switch = std::collections::BTreeMap::new();
    for f in truth["flows"].as_array().unwrap() {
        let (lat, cnt) = (f["hop_latency_ns"].as_object().unwrap(), f["hop_packets"].as_object().unwrap());
        let hops: u64 = cnt.values().map(|v| v.as_u64().unwrap()).sum();
        let n = f["packets"].as_u64().unwrap();
        assert!(hops == 3 * n || hops == 4 * n, "{f}");
        for (s, l) in lat {
            let (l, c) = (l.as_u64().unwrap(), cnt[s].as_u64().unwrap());
            assert_eq!(l % c, 0, "{f}");
            let c_s = *per_switch.entry(s.clone()).or_insert(l / c);
            assert_eq!(l / c, c_s, "switch {s} latency differs between flows");
            assert!((125..=500).contains(&c_s), "{c_s}");
        }
    }
    assert!(per_switch.len() > 8);

    // Human output names the counts.
    let out = smartnic(&["trace", "stats", p, "--top", "2"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("packets     20000"), "{text}");
    assert!(text.contains("flows       1500"), "{text}");
}

#[test]
fn damaged_file_exits_1_with_offset() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("t.pcap");
    let p = pcap.to_str().unwrap();
    assert!(smartnic(&["trace", "gen", "-o", p, "-n", "100", "-f", "10"]).status.success());
    let mut bytes = std::fs::read(&pcap).unwrap();
    bytes.truncate(bytes.len() - 5);
    std::fs::write(&pcap, &bytes).unwrap();
    let out = smartnic(&["trace", "stats", p]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("at byte offset") && err.contains("truncated"), "{err}");

    let out = smartnic(&["trace", "gen", "-o", p, "-n", "5", "-f", "10"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--packets"));
}
