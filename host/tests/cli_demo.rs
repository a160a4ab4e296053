//! `smartnic demo --software` end to end on a small network run: every step runs, and the
//! report's numbers agree with what this test computes on its own from the lab's captures
//! and truth file (totals, per-host packets and epochs, the flows that lost packets and
//! where; the NIC's count of a lossy flow never below what arrived). The NIC path, where
//! the counters are compared with the model, is `sim-tb/tests/demo_nic.rs`; the verdict on
//! a mismatch is tested in `smartnic::demo`.

use serde_json::Value;
use smartnic::trace::PacketReader;
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

const EPOCH_PACKETS: u64 = 1_000;

fn ip_packets(capture: &Path) -> u64 {
    let mut reader = PacketReader::open(capture).unwrap();
    let mut n = 0;
    while reader.next_packet().unwrap().is_some() {
        n += 1;
    }
    n
}

#[test]
fn software_demo_reports_the_network_as_the_truth_has_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_smartnic"))
        .args(["demo", "--software", "--packets", "20000", "--epoch-packets", "1000", "--json"])
        .arg("--out")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let truth: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("lab/truth.json")).unwrap()).unwrap();
    for k in ["packets_sent", "packets_received", "packets_dropped"] {
        assert_eq!(r[k], truth["totals"][k], "{k}");
    }
    assert_eq!(r["packets_sent"], 20_000);
    // Every host's NIC: its capture's packets, in ceil(packets / epoch) epochs, all equal.
    let hosts = r["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 16);
    let mut received = 0;
    for h in hosts {
        let name = h["host"].as_str().unwrap();
        let n = ip_packets(&dir.path().join(format!("lab/hosts/{name}.pcapng")));
        received += n;
        assert_eq!(h["packets"].as_u64().unwrap(), n, "{name}");
        assert_eq!(h["epochs"].as_array().unwrap().len() as u64, n.div_ceil(EPOCH_PACKETS), "{name}");
        for e in h["epochs"].as_array().unwrap() {
            assert_eq!(
                (&e["tower_equal"], &e["sumax_equal"], &e["per_switch_equal"]),
                (&Value::Bool(true), &Value::Bool(true), &Value::Bool(true)),
                "{name}"
            );
            assert!(e["records"].as_u64().unwrap() <= e["records_model"].as_u64().unwrap(), "{name}");
        }
    }
    assert_eq!(received, truth["totals"]["packets_received"].as_u64().unwrap());
    // The lossy flows and where they lost packets.
    let flows = truth["flows"].as_array().unwrap();
    let lossy: HashMap<&str, &Value> = flows
        .iter()
        .filter(|f| f["packets_dropped"].as_u64().unwrap() > 0)
        .map(|f| (f["key"].as_str().unwrap(), f))
        .collect();
    assert_eq!(r["lossy_flows"].as_u64().unwrap(), lossy.len() as u64);
    assert!(!lossy.is_empty(), "the demo's faults lose packets");
    for row in r["losses"].as_array().unwrap() {
        let f = lossy[row["flow"].as_str().unwrap()];
        assert_eq!(row["sent"], f["packets_sent"]);
        assert_eq!(row["received"], f["packets_received"]);
        assert!(row["nic_packets"].as_u64().unwrap() >= f["packets_received"].as_u64().unwrap(), "{row}");
        let lost: u64 = row["lost_at"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap().rsplit_once(" x").unwrap().1.parse::<u64>().unwrap())
            .sum();
        assert_eq!(lost, f["packets_dropped"].as_u64().unwrap(), "{row}");
    }
    let blackholed = truth["lost"].as_array().unwrap().iter().filter(|l| l["reason"] == "Acl").count() as u64;
    assert_eq!(r["drops"]["agg1_0 acl"].as_u64().unwrap_or(0), blackholed);
    // The slowest flows switch by switch: the per-switch half's averages follow the truth's
    // (within 5 % or 1 us) and the flows across the congested uplink wait longest at its
    // switch, agg0_0.
    let slowest = r["slowest"].as_array().unwrap();
    let mut congested_seen = 0;
    for row in slowest {
        let hops = row["per_switch"].as_array().unwrap();
        assert!(!hops.is_empty(), "{row}");
        for h in hops {
            let (nic, truth) = (h["nic_avg_us"].as_f64().unwrap(), h["truth_avg_us"].as_f64().unwrap());
            assert!((nic - truth).abs() <= (0.05 * truth).max(1.0), "{row}");
        }
        if row["crosses_congested_link"] == Value::Bool(true) {
            let worst = hops.iter().max_by(|a, b| {
                a["nic_avg_us"].as_f64().unwrap().total_cmp(&b["nic_avg_us"].as_f64().unwrap())
            });
            assert_eq!(worst.unwrap()["switch"], "agg0_0", "{row}");
            congested_seen += 1;
        }
    }
    assert!(congested_seen > 0, "a flow across the congested link is among the slowest");
}
