//! Hop latencies are real queueing: what the INT stacks carry equals the engine's own
//! bookkeeping, and on a case small enough to compute by hand it equals the analytic
//! queueing delay.

mod lab_common;

use lab_common::{flow, key_and_hops, sid, star, Mem};
use smartnic::lab::engine::LabConfig;
use smartnic::lab::workload::{SizeDist, Workload};
use smartnic::lab::{run, run_flows};
use smartnic_p4::topology::{fat_tree, DEFAULT_DELAY_NS, DEFAULT_RATE_BPS};
use std::collections::HashMap;

/// count, sum, min, max
type Agg = (u64, u64, u64, u64);

#[test]
fn int_hop_latencies_equal_the_truths_bookkeeping() {
    let t = fat_tree(4, DEFAULT_RATE_BPS, DEFAULT_DELAY_NS).unwrap();
    let cfg = LabConfig {
        workload: Workload {
            sizes: SizeDist::Fixed(100_000),
            load: 0.6,
            max_packets: Some(20_000),
            ..Workload::default()
        },
        queue_bytes: 1 << 30,
        ..LabConfig::default()
    };
    let mut mem = Mem::default();
    let truth = run(&t, &cfg, &mut mem).unwrap();
    assert_eq!(truth.totals.packets_dropped, 0, "queues large enough for nothing to be lost");

    let mut from_int: HashMap<(String, u16), Agg> = HashMap::new();
    let mut paths: HashMap<String, Vec<Vec<u16>>> = HashMap::new();
    for rx in &mem.rx {
        let (key, hops) = key_and_hops(&rx.frame);
        for h in &hops {
            let l = h.latency_ns as u64;
            let a = from_int.entry((key.to_string(), h.switch_id)).or_insert((0, 0, u64::MAX, 0));
            *a = (a.0 + 1, a.1 + l, a.2.min(l), a.3.max(l));
        }
        let p: Vec<u16> = hops.iter().map(|h| h.switch_id).collect();
        let known = paths.entry(key.to_string()).or_default();
        if !known.contains(&p) {
            known.push(p);
        }
    }
    let mut queued = 0;
    for f in &truth.flows {
        for s in &f.switches {
            let got = from_int[&(f.key.clone(), s.switch_id)];
            let want = (s.forwarded, s.latency_sum_ns, s.latency_min_ns, s.latency_max_ns);
            assert_eq!(got, want, "flow {} at switch {}", f.key, s.switch_id);
            assert_eq!(s.latency_log2_hist.iter().sum::<u64>(), s.forwarded);
            queued += u64::from(s.latency_max_ns > 0);
        }
        let mut truth_paths: Vec<Vec<u16>> = f.paths.iter().map(|p| p.switches.clone()).collect();
        let mut int_paths = paths[&f.key].clone();
        truth_paths.sort();
        int_paths.sort();
        assert_eq!(int_paths, truth_paths, "flow {}", f.key);
    }
    assert!(queued > 0, "the run must queue somewhere, or the comparison proves little");
}

/// Line time of a frame of `len` capture bytes at 10 Gb/s: preamble, SFD, FCS and gap
/// (24 bytes) included, rounded up to the ns.
fn line_ns(len: u64) -> u64 {
    ((len + 24) * 8).div_ceil(10)
}

#[test]
fn two_packets_colliding_on_one_port_wait_one_serialization() {
    // a and b each send one 1000-byte packet to c at time 0 over identical links: both reach
    // switch s at the same instant and want its port to c. a's was scheduled first and goes
    // at once; b's waits exactly the line time of a's frame as s sends it (with the INT
    // shim and one hop record: 6 + 6 bytes more than a sent).
    let t = star();
    let flows = vec![flow(&t, "a", "c", 1, 1000, 0), flow(&t, "b", "c", 2, 1000, 0)];
    let mut mem = Mem::default();
    run_flows(&t, &LabConfig::default(), &flows, &mut mem).unwrap();
    assert_eq!(mem.rx.len(), 2);
    let sent = 14 + 20 + 20 + 1000;
    let out = sent + 6 + 6;
    let arrive_s = line_ns(sent) + 1_000;
    let (ka, ha) = key_and_hops(&mem.rx[0].frame);
    let (kb, hb) = key_and_hops(&mem.rx[1].frame);
    assert_eq!((ka, kb), (flows[0].key, flows[1].key));
    assert_eq!(mem.rx[1].frame.len() as u64, out);
    assert_eq!(ha.len(), 1);
    assert_eq!((ha[0].switch_id, ha[0].latency_ns), (sid(&t, "s"), 0));
    assert_eq!(hb[0].latency_ns as u64, line_ns(out), "b waits a's serialization: 872 ns");
    assert_eq!(line_ns(out), 872);
    assert_eq!(mem.rx[0].time_ns, arrive_s + line_ns(out) + 1_000);
    assert_eq!(mem.rx[1].time_ns, arrive_s + 2 * line_ns(out) + 1_000);
}
