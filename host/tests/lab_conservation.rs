//! The lab loses nothing silently: every packet a host sent was received or dropped (per
//! flow, per switch, per flow per switch), every drop is listed with its place and reason,
//! and the same seed gives the same run.

mod lab_common;

use lab_common::{key_and_hops, Mem};
use smartnic::lab::engine::LabConfig;
use smartnic::lab::workload::{SizeDist, Workload};
use smartnic::lab::{run, NullSink, Truth};
use smartnic_p4::topology::{fat_tree, DEFAULT_DELAY_NS, DEFAULT_RATE_BPS};
use smartnic_p4::twin::DropReason;
use std::collections::{BTreeSet, HashMap};

/// A congested fat-tree with one fault of every losing kind.
fn lossy_config(seed: u64) -> LabConfig {
    LabConfig {
        workload: Workload {
            sizes: SizeDist::Fixed(200_000),
            load: 0.8,
            max_packets: Some(30_000),
            seed,
            ..Workload::default()
        },
        faults: [
            "blackhole:edge1_0:10.0.0.0/24@1ms",
            "drop:agg0_0>core0:0.05@0ns",
            "drop:agg2_1>edge2_1:0.05@0ns",
            "loop:edge3_0:agg3_0:10.0.0.0/24@0ns",
            "loop:edge3_0:agg3_0:10.0.1.0/24@0ns",
            "loop:edge3_0:agg3_0:10.0.4.0/24@0ns",
        ]
        .iter()
        .map(|f| f.parse().unwrap())
        .collect(),
        queue_bytes: 64_000,
    }
}

#[test]
fn every_packet_is_received_or_dropped_per_flow_and_per_switch() {
    let t = fat_tree(4, DEFAULT_RATE_BPS, DEFAULT_DELAY_NS).unwrap();
    let mut mem = Mem::default();
    let truth = run(&t, &lossy_config(3), &mut mem).unwrap();
    let tot = &truth.totals;
    assert_eq!(tot.packets_sent, 30_000);
    assert_eq!(tot.packets_sent, tot.packets_received + tot.packets_dropped);
    assert_eq!(truth.lost.len() as u64, tot.packets_dropped);

    let mut lost_per_flow: HashMap<u32, u64> = HashMap::new();
    for l in &truth.lost {
        *lost_per_flow.entry(l.flow).or_default() += 1;
    }
    for f in &truth.flows {
        assert_eq!(f.packets_sent, f.packets_received + f.packets_dropped, "flow {}", f.key);
        assert_eq!(lost_per_flow.get(&f.id).copied().unwrap_or(0), f.packets_dropped, "flow {}", f.key);
        assert_eq!(f.paths.iter().map(|p| p.packets).sum::<u64>(), f.packets_sent, "flow {}", f.key);
        assert_eq!(f.paths.iter().map(|p| p.delivered).sum::<u64>(), f.packets_received, "flow {}", f.key);
        for s in &f.switches {
            assert_eq!(s.arrivals, s.forwarded + s.dropped, "flow {} at switch {}", f.key, s.switch_id);
        }
    }
    for s in &truth.switches {
        assert_eq!(s.arrivals, s.forwarded + s.dropped, "switch {}", s.name);
        let per_flow: u64 = truth
            .flows
            .iter()
            .flat_map(|f| &f.switches)
            .filter(|x| x.switch_id == s.switch_id)
            .map(|x| x.arrivals)
            .sum();
        assert_eq!(per_flow, s.arrivals, "switch {}: flows' arrivals", s.name);
        let lost_here = truth.lost.iter().filter(|l| l.switch_id == Some(s.switch_id)).count() as u64;
        assert_eq!(lost_here, s.dropped, "switch {}: listed losses", s.name);
    }
    assert_eq!(truth.switches.iter().map(|s| s.forwarded).sum::<u64>(), tot.packet_hops);

    // Every kind of loss happened, so every path above was exercised.
    let reasons: BTreeSet<DropReason> = truth.lost.iter().map(|l| l.reason).collect();
    for r in [DropReason::QueueFull, DropReason::Acl, DropReason::Link, DropReason::TtlExpired] {
        assert!(reasons.contains(&r), "no {r} loss in {reasons:?}");
    }

    // What the hosts received is what the truth says they received.
    assert_eq!(mem.rx.len() as u64, tot.packets_received);
    let by_key: HashMap<String, &smartnic::lab::truth::FlowTruth> =
        truth.flows.iter().map(|f| (f.key.clone(), f)).collect();
    let mut rx_per_flow: HashMap<String, u64> = HashMap::new();
    for rx in &mem.rx {
        let (key, _) = key_and_hops(&rx.frame);
        let f = by_key[&key.to_string()];
        assert_eq!(t.nodes[rx.host].name, f.dst, "flow {} delivered to the wrong host", f.key);
        *rx_per_flow.entry(f.key.clone()).or_default() += 1;
    }
    for f in &truth.flows {
        assert_eq!(rx_per_flow.get(&f.key).copied().unwrap_or(0), f.packets_received, "flow {}", f.key);
    }
}

fn truth_json(truth: &Truth) -> String {
    serde_json::to_string(truth).unwrap()
}

#[test]
fn same_seed_same_run_other_seed_other_run() {
    let t = fat_tree(4, DEFAULT_RATE_BPS, DEFAULT_DELAY_NS).unwrap();
    let a = run(&t, &lossy_config(5), &mut NullSink).unwrap();
    let b = run(&t, &lossy_config(5), &mut NullSink).unwrap();
    let c = run(&t, &lossy_config(6), &mut NullSink).unwrap();
    assert_eq!(truth_json(&a), truth_json(&b));
    assert_ne!(truth_json(&a), truth_json(&c));
    let v: serde_json::Value = serde_json::from_str(&truth_json(&a)).unwrap();
    assert_eq!(v["version"], smartnic::lab::truth::TRUTH_VERSION);
    assert_eq!(v["faults"].as_array().unwrap().len(), 6);
}
