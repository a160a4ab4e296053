//! Faults do exactly what they were scheduled to do: a blackhole loses the scheduled flow
//! only inside its window, a loop repeats a packet as often as its TTL allows, random drop
//! stays within a binomial bound, jitter shows up in the hop latency, a path change moves
//! the route, and a fault on an unknown node is an error that names it.

mod lab_common;

use lab_common::{flow, key_and_hops, sid, star, Mem};
use smartnic::lab::engine::{LabConfig, LabError};
use smartnic::lab::faults::Fault;
use smartnic::lab::{run_flows, NullSink};
use smartnic_contract::wire::ethernet::field::HEADER_LEN as ETH_LEN;
use smartnic_contract::wire::ipv4::field::TTL;
use smartnic_p4::topology::{fat_tree, leaf_spine, Topology, DEFAULT_DELAY_NS, DEFAULT_RATE_BPS};
use smartnic_p4::twin::DropReason;

fn config(faults: &[&str]) -> LabConfig {
    LabConfig { faults: faults.iter().map(|f| f.parse::<Fault>().unwrap()).collect(), ..LabConfig::default() }
}

fn k4() -> Topology {
    fat_tree(4, DEFAULT_RATE_BPS, DEFAULT_DELAY_NS).unwrap()
}

/// When a received packet arrived at its last switch: receive time minus that switch's
/// hop latency, the last link's transmission ((frame + 24) bytes at 10 Gb/s) and delay.
fn arrival_at_last_switch(time_ns: u64, frame: &[u8]) -> u64 {
    let (_, hops) = key_and_hops(frame);
    let tx = ((frame.len() as u64 + 24) * 8).div_ceil(10);
    time_ns - hops.last().unwrap().latency_ns as u64 - tx - DEFAULT_DELAY_NS
}

#[test]
fn a_flow_blackhole_loses_that_flow_inside_its_window_only() {
    let t = k4();
    let flows: Vec<_> = (0..3).map(|i| flow(&t, "h0_0_0", "h1_0_0", 1000 + i, 400 * 1460, 0)).collect();
    let (from, to) = (100_000u64, 200_000u64);
    let victim = flows[1].key;
    let cfg = config(&[&format!("blackhole:edge1_0:{victim}@100us-200us")]);
    let mut mem = Mem::default();
    let truth = run_flows(&t, &cfg, &flows, &mut mem).unwrap();
    let (mut before, mut after) = (0, 0);
    for rx in &mem.rx {
        let (key, _) = key_and_hops(&rx.frame);
        let at = arrival_at_last_switch(rx.time_ns, &rx.frame);
        if key == victim {
            assert!(
                !(from..to).contains(&at),
                "victim packet reached edge1_0 at {at} ns, inside the blackhole"
            );
            before += u64::from(at < from);
            after += u64::from(at >= to);
        }
    }
    assert!(before > 0 && after > 0, "the window must cut the flow: {before} before, {after} after");
    assert!(!truth.lost.is_empty());
    for l in &truth.lost {
        assert_eq!((l.flow, l.reason, l.at.as_str()), (1, DropReason::Acl, "edge1_0"));
        assert!((from..to).contains(&l.time_ns), "lost at {} ns, outside the window", l.time_ns);
    }
    assert_eq!(truth.flows[0].packets_dropped + truth.flows[2].packets_dropped, 0);
    let v = &truth.flows[1];
    assert_eq!(v.packets_received + v.packets_dropped, v.packets_sent);
}

#[test]
fn a_prefix_blackhole_drops_every_flow_to_it_after_its_start() {
    let t = k4();
    let flows = vec![
        flow(&t, "h0_0_0", "h1_0_0", 1, 200 * 1460, 0),
        flow(&t, "h0_0_1", "h1_0_1", 2, 200 * 1460, 0),
        flow(&t, "h0_0_0", "h2_0_0", 3, 200 * 1460, 0),
    ];
    let truth =
        run_flows(&t, &config(&["blackhole:edge1_0:10.0.2.0/24@50us"]), &flows, &mut NullSink).unwrap();
    // Both flows to 10.0.2.0/24 lose everything that reaches edge1_0 from 50 us on; the
    // third flow loses nothing.
    for f in &truth.flows[..2] {
        assert!(f.packets_dropped > 0 && f.packets_received > 0, "{f:?}");
        assert_eq!(f.packets_dropped + f.packets_received, 200);
    }
    assert_eq!(truth.flows[2].packets_received, 200);
    assert!(truth.lost.iter().all(|l| l.reason == DropReason::Acl && l.time_ns >= 50_000 && l.flow < 2));
}

#[test]
fn a_loop_repeats_each_packet_as_often_as_its_ttl_allows() {
    let t = k4();
    let flows = vec![flow(&t, "h0_0_0", "h1_0_0", 7, 10 * 1460, 0)];
    let ttl = flows[0].template[ETH_LEN + TTL] as u64;
    let truth =
        run_flows(&t, &config(&["loop:edge0_0:agg0_0:10.0.2.0/24@0ns"]), &flows, &mut NullSink).unwrap();
    let f = &truth.flows[0];
    assert_eq!((f.packets_sent, f.packets_received, f.packets_dropped), (10, 0, 10));
    let (edge, agg) = (sid(&t, "edge0_0"), sid(&t, "agg0_0"));
    // A packet arrives with TTL ttl, ttl-1, ... at alternate switches; the arrival with
    // TTL 1 is dropped: ttl arrivals in all.
    let expect: Vec<u16> = (0..ttl).map(|i| if i % 2 == 0 { edge } else { agg }).collect();
    assert_eq!(f.paths.len(), 1);
    assert_eq!(f.paths[0].switches, expect);
    let at = |s: u16| f.switches.iter().find(|x| x.switch_id == s).unwrap();
    assert_eq!((at(edge).max_visits as u64, at(agg).max_visits as u64), (ttl.div_ceil(2), ttl / 2));
    assert_eq!((at(edge).arrivals, at(edge).packets), (10 * ttl.div_ceil(2), 10));
    let last = if ttl % 2 == 1 { "edge0_0" } else { "agg0_0" };
    assert!(truth.lost.iter().all(|l| l.reason == DropReason::TtlExpired && l.at == last));
}

#[test]
fn random_drop_stays_within_a_binomial_bound() {
    let t = leaf_spine(2, 1, 1, DEFAULT_RATE_BPS, DEFAULT_DELAY_NS).unwrap();
    let n = 20_000u64;
    let p = 0.1;
    let flows = vec![flow(&t, "h0_0", "h1_0", 9, n * 1460, 0)];
    let truth = run_flows(&t, &config(&["drop:leaf0>spine0:0.1@0ns"]), &flows, &mut NullSink).unwrap();
    let d = truth.flows[0].packets_dropped as f64;
    let (mean, sd) = (n as f64 * p, (n as f64 * p * (1.0 - p)).sqrt());
    assert!((d - mean).abs() <= 5.0 * sd, "{d} drops, expected {mean} +- {}", 5.0 * sd);
    assert!(truth.lost.iter().all(|l| l.reason == DropReason::Link && l.at == "leaf0>spine0"));
    assert_eq!(truth.flows[0].packets_received + truth.flows[0].packets_dropped, n);
}

#[test]
fn jitter_stalls_show_in_the_hop_latency() {
    let t = star();
    let flows = vec![flow(&t, "a", "c", 1, 5 * 1460, 0)];
    let mut mem = Mem::default();
    run_flows(&t, &config(&["jitter:s>c:const:5000@0ns"]), &flows, &mut mem).unwrap();
    let lat: Vec<u32> = mem.rx.iter().map(|r| key_and_hops(&r.frame).1[0].latency_ns).collect();
    assert_eq!(lat.len(), 5);
    assert_eq!(lat[0], 5000, "an idle port's first packet waits exactly the stall");
    // The host sends a packet every (frame + 24) * 8 / 10 ns (rounded up); the port sends one
    // every stall + (frame + 12 bytes of shim and hop + 24) * 8 / 10 ns: each packet waits
    // the difference longer than the one before.
    let out = mem.rx[0].frame.len() as u64;
    let gap_in = ((out - 12 + 24) * 8).div_ceil(10);
    let gap_out = 5000 + ((out + 24) * 8).div_ceil(10);
    assert!(lat.windows(2).all(|w| (w[1] - w[0]) as u64 == gap_out - gap_in), "{lat:?}");
}

#[test]
fn a_path_change_moves_the_prefix_to_one_next_hop() {
    let t = k4();
    let flows: Vec<_> = (0..16).map(|i| flow(&t, "h0_0_0", "h1_0_0", 2000 + i, 1460, i as u64)).collect();
    let second_hops = |faults: &[&str]| -> std::collections::BTreeSet<u16> {
        let truth = run_flows(&t, &config(faults), &flows, &mut NullSink).unwrap();
        truth.flows.iter().flat_map(|f| f.paths.iter().map(|p| p.switches[1])).collect()
    };
    let (a0, a1) = (sid(&t, "agg0_0"), sid(&t, "agg0_1"));
    assert_eq!(second_hops(&[]), [a0, a1].into(), "ECMP spreads 16 flows over both aggregation switches");
    assert_eq!(second_hops(&["path:edge0_0:agg0_1:10.0.2.0/24@0ns"]), [a1].into());
}

#[test]
fn faults_on_unknown_or_unlinked_nodes_are_named_errors() {
    let t = k4();
    let flows = vec![flow(&t, "h0_0_0", "h1_0_0", 1, 1460, 0)];
    for (spec, word) in [
        ("blackhole:nosuch:10.0.0.0/8@0ns", "no node called `nosuch`"),
        ("loop:edge0_0:core0:10.0.0.0/8@0ns", "not linked"),
        ("blackhole:h0_0_0:10.0.0.0/8@0ns", "is a host"),
    ] {
        match run_flows(&t, &config(&[spec]), &flows, &mut NullSink) {
            Err(LabError::Fault(e)) => assert!(e.contains(word) && e.contains(spec), "{e}"),
            other => panic!("{spec}: {other:?}"),
        }
    }
}
