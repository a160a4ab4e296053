//! `smartnic snapshot report` and `smartnic sketch eval` (old spellings `report`, `eval`) through the binary on a small generated trace.

use std::process::Command;

fn smartnic(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_smartnic")).args(args).output().expect("run smartnic")
}

#[test]
fn report_and_eval_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let (pcap, truth, snap, keys) = (p("t.pcap"), p("t.json"), p("t.snap"), p("keys.txt"));
    let ok = |o: std::process::Output| {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o
    };
    ok(smartnic(&["trace", "gen", "-o", &pcap, "--truth", &truth, "-n", "20000", "-f", "2000", "--shim"]));
    ok(smartnic(&["sketch", "run", "--trace", &pcap, "-o", &snap]));

    // Without candidates or a key table: explains why there are no top flows.
    let plain = p("plain.snap");
    ok(smartnic(&["sketch", "run", "--trace", &pcap, "-o", &plain, "--no-per-switch"]));
    let o = ok(smartnic(&["report", &plain]));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("need candidate keys"), "{text}");
    assert!(text.contains("cardinality") && text.contains("path delay"), "{text}");
    assert!(!text.contains("per-switch"), "{text}");
    // With the per-switch half, the key table names the candidates.
    let o = ok(smartnic(&["report", &snap]));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("among the candidates (key table)") && !text.contains("need candidate keys"),
        "{text}"
    );

    // With candidates from the truth file: the top flow is the truth's largest.
    let t: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&truth).unwrap()).unwrap();
    let flows = t["flows"].as_array().unwrap();
    let lines: Vec<String> = flows.iter().map(|f| f["key"].as_str().unwrap().to_string()).collect();
    std::fs::write(&keys, format!("# candidates\n{}\n", lines.join("\n"))).unwrap();
    let o = ok(smartnic(&[
        "--json",
        "report",
        &snap,
        "--candidates",
        &keys,
        "--top",
        "3",
        "--hh-threshold",
        "30",
    ]));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["sections"].as_array().unwrap().len(), 2);
    for s in r["sections"].as_array().unwrap() {
        let top = s["top_flows"].as_array().unwrap();
        assert_eq!(top.len(), 3);
        assert_eq!(top[0]["flow"], flows[0]["key"]);
        assert_eq!(top[0]["packets"], flows[0]["packets"]);
        let card = s["cardinality"]["estimate"].as_f64().unwrap();
        assert!((card - 2000.0).abs() < 40.0, "{card}");
    }
    let bad = p("bad.txt");
    std::fs::write(&bad, "not-a-key\n").unwrap();
    let o = smartnic(&["report", &snap, "--candidates", &bad]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("bad.txt:1"));

    // eval: JSON rows, and a truth file of another trace is refused.
    let o = ok(smartnic(&[
        "--json",
        "eval",
        "--trace",
        &pcap,
        "--truth",
        &truth,
        "--sketch",
        "tower-cu,cm",
        "--memory",
        "20KB,1MB",
        "--tasks",
        "size,heavy,cardinality",
        "--hh-threshold",
        "30",
    ]));
    let e: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = e["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    let big = rows.iter().find(|r| r["sketch"] == "tower-cu" && r["memory"] == 1_000_000).unwrap();
    assert_eq!(big["metrics"]["hh_f1"], 1.0);
    let other = p("o.pcap");
    ok(smartnic(&["trace", "gen", "-o", &other, "-n", "20000", "-f", "2000", "--seed", "9"]));
    let o = smartnic(&["eval", "--trace", &other, "--truth", &truth, "--tasks", "size"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("truth"));
}
