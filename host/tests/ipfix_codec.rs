//! The IPFIX exporter's encoding against its decoder: every record of any mix (IPv4 and
//! IPv6, flows and hops, with and without estimates) comes back from messages that each
//! decode on their own, never exceed the MTU, and carry sequence numbers that count the
//! records before them. And the exporter over a real UDP socket, from a snapshot.

use std::net::{Ipv4Addr, Ipv6Addr, UdpSocket};
use std::time::Duration;

use proptest::prelude::*;
use smartnic::export::ipfix::{
    min_mtu, Addrs, Decoder, Encoder, EpochRecords, ExportOptions, FlowId, IpfixExporter, Record,
    SequenceTracker, DEFAULT_MTU, NO_ESTIMATE, PEN, TEMPLATES,
};
use smartnic::sketch::snapshot::software_snapshot;
use smartnic::sketch::SketchKind;
use smartnic::trace::Packet;
use smartnic_contract::FlowKey;

fn addrs() -> impl Strategy<Value = Addrs> {
    prop_oneof![
        (any::<u32>(), any::<u32>())
            .prop_map(|(s, d)| Addrs::V4 { src: Ipv4Addr::from(s), dst: Ipv4Addr::from(d) }),
        (any::<u128>(), any::<u128>())
            .prop_map(|(s, d)| Addrs::V6 { src: Ipv6Addr::from(s), dst: Ipv6Addr::from(d) }),
    ]
}

fn flow_id() -> impl Strategy<Value = FlowId> {
    (addrs(), any::<u16>(), any::<u16>(), any::<u8>()).prop_map(|(addrs, src_port, dst_port, proto)| FlowId {
        addrs,
        src_port,
        dst_port,
        proto,
    })
}

/// An estimate, or none; `Some(NO_ESTIMATE)` is not a value a record can hold.
fn estimate() -> impl Strategy<Value = Option<u64>> {
    proptest::option::of(0..NO_ESTIMATE)
}

fn record() -> impl Strategy<Value = Record> {
    prop_oneof![
        (flow_id(), any::<u64>(), any::<u64>()).prop_map(|(flow, epoch, packets)| Record::Flow {
            flow,
            epoch,
            packets
        }),
        (flow_id(), any::<u64>(), any::<u16>(), 1..=u16::MAX, estimate(), estimate()).prop_map(
            |(flow, epoch, switch_id, hop_index, hop_packets, avg_latency_ns)| Record::Hop {
                flow,
                epoch,
                switch_id,
                hop_index,
                hop_packets,
                avg_latency_ns,
            }
        ),
    ]
}

proptest! {
    #[test]
    fn every_record_round_trips(
        records in proptest::collection::vec(record(), 0..120),
        mtu in min_mtu()..=9000usize,
        domain in any::<u32>(),
    ) {
        let mut e = Encoder::new(domain, mtu).unwrap();
        let msgs = e.encode(&records, 1_700_000_000);
        let mut back = Vec::new();
        let mut seq = SequenceTracker::default();
        let mut expect = 0u32;
        for m in &msgs {
            prop_assert!(m.bytes.len() <= mtu);
            // Every message decodes on its own: its templates ride with it.
            let d = Decoder::new().decode(&m.bytes).unwrap();
            prop_assert_eq!(d.domain, domain);
            prop_assert_eq!(d.export_time, 1_700_000_000);
            prop_assert_eq!(d.sequence, expect);
            prop_assert_eq!(seq.observe(d.sequence, d.records.len()), None);
            expect = expect.wrapping_add(d.records.len() as u32);
            back.extend(d.records);
        }
        prop_assert_eq!(back, records);
        prop_assert_eq!(e.sequence(), expect);
    }
}

fn key(n: u8) -> FlowKey {
    FlowKey::from_v4([10, 1, 0, n], [10, 2, 0, 1], 4000 + u16::from(n), 53, 17)
}

/// A software snapshot of epoch 4: a tower that saw flow n n*10 times, no per-switch half.
fn tower_snapshot() -> (smartnic::sketch::AnySketch, smartnic_driver::snapshot::Snapshot) {
    let mut sk = SketchKind::TowerCm.build_nic().unwrap();
    let mut packets = 0;
    for n in 1..=3u8 {
        for _ in 0..u32::from(n) * 10 {
            sk.insert(&Packet { ts_ns: 0, wire_len: 64, key: key(n), hops: Default::default() });
            packets += 1;
        }
    }
    let snap = software_snapshot(std::slice::from_ref(&sk), 4, packets).unwrap();
    (sk, snap)
}

#[test]
fn a_snapshot_without_key_table_or_candidates_sends_nothing_and_says_why() {
    let (_, snap) = tower_snapshot();
    let e = EpochRecords::from_snapshot(&snap, None).unwrap();
    assert!(e.records.is_empty());
    assert_eq!(e.notes.len(), 1);
    assert!(e.notes[0].contains("no key table"), "{:?}", e.notes);
}

#[test]
fn the_exporter_sends_the_candidates_sizes_over_udp() {
    let (sk, snap) = tower_snapshot();
    let collector = UdpSocket::bind("127.0.0.1:0").unwrap();
    collector.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let to = collector.local_addr().unwrap();
    let mut x = IpfixExporter::new(to, 42, ExportOptions::default()).unwrap();
    let keys = [key(1), key(2), key(3), key(1)];
    let stats = x.export_snapshot(&snap, Some(&keys)).unwrap();
    assert_eq!((stats.messages, stats.flow_records, stats.hop_records), (1, 3, 0));
    assert_eq!((stats.first_sequence, stats.next_sequence), (0, 3));
    let mut buf = [0u8; 65536];
    let n = collector.recv(&mut buf).unwrap();
    assert_eq!(n, stats.bytes);
    let d = Decoder::new().decode(&buf[..n]).unwrap();
    assert_eq!(d.domain, 42);
    let sent: Vec<(FlowId, u64, u64)> = d
        .records
        .iter()
        .map(|r| match r {
            Record::Flow { flow, epoch, packets } => (*flow, *epoch, *packets),
            hop => panic!("no hop records without a latency tower: {hop:?}"),
        })
        .collect();
    let want: Vec<(FlowId, u64, u64)> = [3, 2, 1]
        .iter()
        .map(|&n| (FlowId::from_key(&key(n)), 4, smartnic::tasks::flow_size::estimate(&sk, &key(n))))
        .collect();
    assert_eq!(sent, want, "largest first, each flow once, sized by the snapshot's tower");
    // A second epoch continues the sequence.
    let again = x.export_epoch(&snap).unwrap();
    assert_eq!((again.messages, again.first_sequence, again.next_sequence), (0, 3, 3));
}

#[test]
fn an_mtu_too_small_for_one_record_is_refused_by_name() {
    let err = IpfixExporter::new("127.0.0.1:9".parse().unwrap(), 1, ExportOptions { mtu: 100 }).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("MTU of 100 bytes") && msg.contains(&min_mtu().to_string()), "{msg}");
    assert!(min_mtu() < DEFAULT_MTU);
}

/// The README and the module doc publish the templates: every element and template row must
/// say what the exporter sends (IDs, PEN, lengths, order), so the tables cannot drift from
/// the code.
#[test]
fn the_readme_and_the_module_doc_publish_the_templates_the_exporter_sends() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let section = readme.split("## IPFIX export").nth(1).expect("README has an IPFIX export section");
    let section = section.split("\n## ").next().unwrap();
    check_published(section, true);
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/export/ipfix/mod.rs")).unwrap();
    let doc: String = doc.lines().filter_map(|l| l.strip_prefix("//! ")).map(|l| format!("{l}\n")).collect();
    check_published(&doc, false);
}

/// Checks the template and element tables of `section` (and the nfacctd primitives, when
/// it lists them).
fn check_published(section: &str, primitives: bool) {
    let row = |first: &str| -> Vec<String> {
        let line = section
            .lines()
            .find(|l| l.starts_with(&format!("| {first} |")))
            .unwrap_or_else(|| panic!("README's IPFIX section has no row for {first}"));
        line.trim_matches('|').split(" | ").map(|c| c.trim().to_string()).collect()
    };
    for t in TEMPLATES {
        assert_eq!(row(t.name)[1], t.id.to_string(), "template {}", t.name);
        for e in t.elements {
            let r = row(e.name);
            let id = e.pen.map_or(e.id.to_string(), |pen| format!("{pen}:{}", e.id));
            assert_eq!(
                (r[1].as_str(), r[3].as_str()),
                (id.as_str(), e.len.to_string().as_str()),
                "{}",
                e.name
            );
            if let (Some(pen), true) = (e.pen, primitives) {
                let prim = format!("field_type={pen}:{} len={} semantics=u_int", e.id, e.len);
                assert!(section.contains(&prim), "README's nfacctd primitives lack {prim}");
            }
        }
        // The order: the template row names its elements in record order (the IPv6 rows
        // refer to the IPv4 ones, whose order they share).
        let listed = row(t.name)[2].clone();
        let mut at = 0;
        for e in t.elements.iter().filter(|e| listed.contains(e.name)) {
            let pos =
                listed[at..].find(e.name).unwrap_or_else(|| panic!("{}: {} out of order", t.name, e.name));
            at += pos + e.name.len();
        }
    }
    assert!(!primitives || section.contains(&format!("PEN {PEN}")), "README names the PEN");
}
