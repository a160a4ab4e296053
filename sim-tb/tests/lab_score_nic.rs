//! The per-switch accuracy lab scored from the simulated NIC's own snapshots: a congested
//! leaf-spine lab, every host's capture replayed through the Verilator core with the bank
//! swap at the lab's epoch split, both epochs read out over the driver, and the four tasks
//! answered from the snapshot files. Everything the NIC keeps in its banks, and the
//! inflated-latency records it sends on its record ring, must score exactly as the model
//! does.

use smartnic::contract::geometry::InsertMode;
use smartnic::contract::per_switch::InflateRule;
use smartnic::eval::nic_snapshots;
use smartnic::eval::per_switch::{score, Exact, Point, Row, Streams};
use smartnic::lab::LabConfig;
use smartnic::simulator::SIM_ENV;
use smartnic_p4::topology::{leaf_spine, DEFAULT_DELAY_NS, DEFAULT_RATE_BPS};

/// Three leaves of one host under one spine: three NICs (each costs two readouts of
/// millions of clocks), paths of three switches, two senders into every receiver's queues.
fn lab(dir: &std::path::Path) -> Streams {
    let t = leaf_spine(3, 1, 1, DEFAULT_RATE_BPS, DEFAULT_DELAY_NS).unwrap();
    let mut cfg = LabConfig::default();
    cfg.workload.max_packets = Some(24_000);
    cfg.workload.load = 0.6;
    cfg.workload.sizes = "zipf:2.0:10MB".parse().unwrap();
    cfg.workload.seed = 5;
    Streams::from_lab_dir(&t, &cfg, dir).unwrap()
}

fn nic_row(s: &Streams, x: &Exact, dir: &std::path::Path, mode: InsertMode) -> Row {
    nic_snapshots::score(s, x, dir, mode, |_| {})
        .unwrap_or_else(|e| panic!("the simulated NICs' snapshots: {e:#}"))
}

#[test]
fn nic_snapshots_score_as_the_model_does() {
    std::env::set_var(SIM_ENV, env!("CARGO_BIN_EXE_smartnic-sim"));
    let dir = tempfile::tempdir().unwrap();
    let s = lab(dir.path());
    let shift = Point::nic(InsertMode::Acu).per_switch.latency.latency_shift;
    let x = Exact::new(&s, InflateRule::SKETCHINT_RATIO_X256, shift);
    let model = score(&s, &x, &Point::nic(InsertMode::Acu)).unwrap();
    // The lab must exercise every task, or equal rows would prove nothing.
    assert!(model.sw_hh.truth > 0 && model.sw_hc.truth > 0, "no heavy flows: {model:?}");
    assert!(model.lat_pairs_1us > 100 && model.inflated.truth > 0, "no congestion: {model:?}");
    let nic = nic_row(&s, &x, dir.path(), InsertMode::Acu);
    let json = |r: &Row| serde_json::to_value(r).unwrap();
    for field in ["sw_hh", "sw_hc", "lat_are", "lat_pairs", "lat_are_1us", "lat_pairs_1us", "table_misses"] {
        assert_eq!(json(&nic)[field], json(&model)[field], "{field}: NIC {nic:?}\nmodel {model:?}");
    }
    // The records leave on the record ring as they are made: none is dropped.
    assert_eq!(nic.records, model.records, "records: NIC {nic:?}\nmodel {model:?}");
    assert_eq!(json(&nic)["inflated"], json(&model)["inflated"]);
    eprintln!(
        "{} NICs, {} packets: sw-HH {:.3}, sw-HC {:.3}, lat ARE {:.3} (>= 1 us {:.3}), inflated {:.3} \
         from {} of the model's {} records",
        s.hosts.len(),
        s.packets(),
        nic.sw_hh.f1,
        nic.sw_hc.f1,
        nic.lat_are,
        nic.lat_are_1us,
        nic.inflated.f1,
        nic.records,
        model.records
    );
}
