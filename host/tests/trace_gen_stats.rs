//! Acceptance: a generated trace parses back to exactly its ground truth, and the
//! generator is a pure function of its seed.

use std::collections::BTreeMap;
use std::io::Cursor;

use smartnic::trace::gen::{generate, generate_files, GenConfig, Latency, ShimConfig};
use smartnic::trace::stats::compute;
use smartnic::trace::{Format, PacketReader, Truth};

fn config(seed: u64) -> GenConfig {
    GenConfig {
        seed,
        packets: 30_000,
        flows: 2_000,
        skew: 1.1,
        rate_pps: 2_000_000.0,
        ipv6: 0.2,
        vlan: 0.3,
        non_ip: 0.01,
        shim: Some(ShimConfig {
            min_hops: 1,
            max_hops: 6,
            switches: 24,
            latency: Latency::LogNormal { mean_ns: 1500.0, sigma: 0.8 },
        }),
        ..GenConfig::default()
    }
}

#[test]
fn trace_stats_match_ground_truth_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("t.pcap");
    let truth_path = dir.path().join("t.truth.json");
    let records = dir.path().join("t.rec");
    let cfg = config(7);
    let truth = generate_files(&cfg, &pcap, &truth_path, Some(&records)).unwrap();

    // The truth file round-trips.
    assert_eq!(Truth::read(&truth_path).unwrap(), truth);
    assert_eq!(truth.totals.packets, 30_000);
    assert_eq!(truth.totals.flows, 2_000);
    assert_eq!(truth.flows.len(), 2_000);
    assert!(truth.totals.non_ip > 100, "{:?}", truth.totals);
    assert!(truth.flows.iter().all(|f| f.packets >= 1));
    assert!(truth.flows[0].packets > 1000, "Zipf head: {:?}", truth.flows[0]);

    let stats = compute(&pcap, Format::Auto).unwrap();
    assert_eq!(stats.totals, truth.totals);
    assert!(stats.malformed_by_reason.is_empty());
    assert_eq!(stats.flows.len(), truth.flows.len());
    for (s, t) in stats.flows.iter().zip(&truth.flows) {
        assert_eq!(s, t, "flow {}", t.key);
    }
    // Hop sums are present and consistent with the delay sums.
    let hop_total: u64 = truth.flows.iter().flat_map(|f| f.hop_latency_ns.values()).sum();
    assert_eq!(hop_total, truth.totals.delay_ns);
    assert!(hop_total > 0);
    let switches: BTreeMap<u16, u64> = truth
        .flows
        .iter()
        .flat_map(|f| f.hop_packets.iter().map(|(k, v)| (*k, *v)))
        .fold(BTreeMap::new(), |mut m, (k, v)| {
            *m.entry(k).or_default() += v;
            m
        });
    assert!(switches.keys().all(|&s| (1..=24).contains(&s)));
    assert!(switches.len() > 12, "{switches:?}");

    // The JSON report uses the truth's field names: compare as JSON values.
    let report = serde_json::to_value(stats.report(5, false)).unwrap();
    assert_eq!(report["totals"], serde_json::to_value(&truth.totals).unwrap());
    assert_eq!(report["top"], serde_json::to_value(&truth.flows[..5]).unwrap());
    assert!(report.get("flows").is_none());

    // The 21-byte records carry the same keys and timestamps (no lengths, no hops).
    let rstats = compute(&records, Format::Records).unwrap();
    assert_eq!(rstats.totals.packets, truth.totals.packets);
    assert_eq!(rstats.totals.flows, truth.totals.flows);
    assert_eq!(rstats.totals.first_ns, truth.totals.first_ns);
    assert_eq!(rstats.totals.last_ns, truth.totals.last_ns);
    for (s, t) in rstats.flows.iter().zip(&truth.flows) {
        assert_eq!(
            (&s.key, s.packets, s.first_ns, s.last_ns, s.max_iat_ns),
            (&t.key, t.packets, t.first_ns, t.last_ns, t.max_iat_ns)
        );
    }

    // The streaming PacketReader counts what it skipped.
    let mut r = PacketReader::open(&pcap).unwrap();
    let mut n = 0;
    while let Some(p) = r.next_packet().unwrap() {
        assert!(p.wire_len >= 64);
        n += 1;
    }
    assert_eq!(n, 30_000);
    assert_eq!(r.counts().non_ip, truth.totals.non_ip);
    assert_eq!(r.counts().malformed, 0);
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let run = |seed| {
        let mut pcap = Cursor::new(Vec::new());
        let mut rec = Vec::new();
        let truth = generate(&config(seed), &mut pcap, Some(&mut rec)).unwrap();
        (pcap.into_inner(), rec, serde_json::to_vec(&truth).unwrap())
    };
    let a = run(42);
    let b = run(42);
    assert!(a.0.len() > 30_000 * 16);
    assert_eq!(a.0, b.0, "pcap bytes differ for the same seed");
    assert_eq!(a.1, b.1, "record bytes differ for the same seed");
    assert_eq!(a.2, b.2, "truth differs for the same seed");
    let c = run(43);
    assert_ne!(a.0, c.0);
}

#[test]
fn without_shim_there_are_no_hops() {
    let cfg = GenConfig { packets: 5_000, flows: 5_000, shim: None, ..GenConfig::default() };
    let mut pcap = Vec::new();
    let truth = generate(&cfg, &mut pcap, None).unwrap();
    assert_eq!(truth.totals.flows, 5_000);
    assert!(truth
        .flows
        .iter()
        .all(|f| f.packets == 1 && f.hop_latency_ns.is_empty() && f.max_iat_ns == 0 && f.delay_ns == 0));
    let mut r = PacketReader::from_reader(&pcap[..], Format::Pcap).unwrap();
    while let Some(p) = r.next_packet().unwrap() {
        assert!(p.hops.is_empty());
    }
    assert_eq!(r.counts().packets, 5_000);
    // Asking for the other format is an error that says what the file is.
    let e = PacketReader::from_reader(&pcap[..], Format::Pcapng).err().unwrap();
    assert!(e.to_string().contains("file is pcap"), "{e}");
}

#[test]
fn bad_configs_are_rejected_with_guidance() {
    let bad = [
        GenConfig { packets: 10, flows: 20, ..GenConfig::default() },
        GenConfig { rate_pps: 0.0, ..GenConfig::default() },
        GenConfig {
            shim: Some(ShimConfig { min_hops: 3, max_hops: 2, ..ShimConfig::default() }),
            ..GenConfig::default()
        },
        GenConfig {
            shim: Some(ShimConfig { max_hops: 8, switches: 4, ..ShimConfig::default() }),
            ..GenConfig::default()
        },
    ];
    for cfg in bad {
        let e = generate(&cfg, Vec::new(), None).unwrap_err();
        assert!(e.to_string().contains("must"), "{e}");
    }
}
