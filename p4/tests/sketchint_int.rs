//! The twin of `sketchint_int.p4` on fixed packets: what each step of the program does,
//! checked against frames built independently with the contract's frame builder.

use smartnic_contract::hash::{ecmp_input, ecmp_member, ECMP};
use smartnic_contract::key::{FlowKey, PROTO_TCP, PROTO_UDP};
use smartnic_contract::shim::{Hop, MAX_HOPS};
use smartnic_contract::wire::builder::{FrameSpec, L3, L4};
use smartnic_contract::wire::ipv4::{Ipv4Packet, Ipv4Repr};
use smartnic_contract::wire::tcp::TcpRepr;
use smartnic_contract::wire::udp::UdpRepr;
use smartnic_p4::tables::{AclRule, NextHop, Route, SwitchTables};
use smartnic_p4::twin::sketchint_int::{ecmp_hash_of, Ingress, Switch};
use smartnic_p4::twin::DropReason;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

const SRC: [u8; 4] = [10, 0, 0, 2];
const DST: [u8; 4] = [10, 0, 1, 3];
const HOST_MAC: [u8; 6] = [2, 1, 0, 0, 0, 0];
const SW_MAC: [u8; 6] = [2, 0, 0, 0, 0, 9];

/// Switch 9: 10.0.1.0/24 over a 3-way group on ports 1..=3.
fn switch() -> Switch {
    let mut t = SwitchTables::new(9, SW_MAC);
    let hops = (1..=3).map(|p| NextHop { port: p, dmac: [2, 0, 0, 0, 1, p as u8] }).collect();
    let (base, count) = t.group(&mut BTreeMap::new(), hops);
    t.routes.push(Route { prefix: Ipv4Addr::new(10, 0, 1, 0), len: 24, base, count, reverse: false });
    Switch::new(t)
}

/// A TCP packet from a host, with `hops` records already on it (none: no shim).
fn spec(ttl: u8, hops: Option<Vec<Hop>>) -> FrameSpec {
    let mut ip = Ipv4Repr::new(SRC, DST, PROTO_TCP, 0);
    ip.ttl = ttl;
    ip.ident = 0x1234;
    let mut s = FrameSpec::new(
        [2, 0, 0, 0, 0, 9],
        HOST_MAC,
        L3::Ipv4 { header: ip, l4: L4::Tcp(TcpRepr::new(5000, 80)) },
    );
    s.payload = vec![0xAB; 100];
    s.shim = hops;
    s
}

fn forward(sw: &Switch, frame: Vec<u8>) -> (u16, Vec<u8>) {
    match sw.ingress(frame) {
        Ingress::Forward { port, frame, .. } => (port, frame),
        other => panic!("dropped: {other:?}"),
    }
}

#[test]
fn ecmp_hash_is_the_contracts() {
    let key = FlowKey::from_v4(SRC, DST, 5000, 80, PROTO_TCP);
    assert_eq!(ecmp_hash_of(&key, false), ECMP.checksum(key.as_bytes()));
    assert_eq!(ecmp_hash_of(&key, true), ECMP.checksum(&ecmp_input(&key, true)));
}

#[test]
fn first_hop_pushes_the_shim_and_one_record() {
    let sw = switch();
    let (port, mid) = forward(&sw, spec(64, None).build().unwrap());
    let key = FlowKey::from_v4(SRC, DST, 5000, 80, PROTO_TCP);
    assert_eq!(port, 1 + ecmp_member(ECMP.checksum(key.as_bytes()), 3));
    let out = sw.egress(mid, 1_234);
    let mut want = spec(63, Some(vec![Hop { switch_id: 9, latency_ns: 1_234 }]));
    want.destination = [2, 0, 0, 0, 1, port as u8];
    want.source = SW_MAC;
    assert_eq!(out, want.build().unwrap(), "push shim, append hop, TTL - 1, new MACs, checksum");
}

#[test]
fn later_hops_append_in_path_order() {
    let sw = switch();
    let before = vec![Hop { switch_id: 1, latency_ns: 10 }, Hop { switch_id: 4, latency_ns: 20 }];
    let (port, mid) = forward(&sw, spec(30, Some(before.clone())).build().unwrap());
    let out = sw.egress(mid, u64::from(u32::MAX) + 7);
    let mut after = before;
    after.push(Hop { switch_id: 9, latency_ns: 6 });
    let mut want = spec(29, Some(after));
    want.destination = [2, 0, 0, 0, 1, port as u8];
    want.source = SW_MAC;
    assert_eq!(out, want.build().unwrap(), "the latency keeps its low 32 bits, as bit<32> in the program");
    let ip = Ipv4Packet::new_checked(&out[14 + 6 + 18..]).unwrap();
    assert!(ip.verify_checksum());
}

#[test]
fn a_full_stack_is_forwarded_without_a_new_record() {
    let sw = switch();
    let full: Vec<Hop> = (0..MAX_HOPS).map(|i| Hop { switch_id: i, latency_ns: i as u32 }).collect();
    let (port, mid) = forward(&sw, spec(64, Some(full.clone())).build().unwrap());
    let mut want = spec(63, Some(full));
    want.destination = [2, 0, 0, 0, 1, port as u8];
    want.source = SW_MAC;
    assert_eq!(sw.egress(mid, 5), want.build().unwrap());
}

#[test]
fn every_drop_has_its_reason() {
    let mut sw = switch();
    let drop = |sw: &Switch, f: Vec<u8>| match sw.ingress(f) {
        Ingress::Drop { reason, .. } => reason,
        other => panic!("forwarded: {other:?}"),
    };
    let too_deep: Vec<Hop> = (0..=MAX_HOPS).map(|i| Hop { switch_id: i, latency_ns: 0 }).collect();
    assert_eq!(drop(&sw, spec(64, Some(too_deep)).build().unwrap()), DropReason::Malformed);
    let mut cut = spec(64, None).build().unwrap();
    cut.truncate(14 + 19);
    assert_eq!(drop(&sw, cut), DropReason::Malformed);
    assert_eq!(drop(&sw, spec(1, None).build().unwrap()), DropReason::TtlExpired);
    assert_eq!(drop(&sw, spec(0, None).build().unwrap()), DropReason::TtlExpired);
    let mut arp = spec(64, None).build().unwrap();
    arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
    assert_eq!(drop(&sw, arp), DropReason::NotIpv4);
    let mut opts = spec(64, None);
    if let L3::Ipv4 { header, .. } = &mut opts.l3 {
        header.options = vec![1, 1, 1, 0];
    }
    assert_eq!(drop(&sw, opts.build().unwrap()), DropReason::Ipv4Options);
    let mut elsewhere = spec(64, None);
    if let L3::Ipv4 { header, .. } = &mut elsewhere.l3 {
        header.dst_addr = [10, 9, 9, 9];
    }
    assert_eq!(drop(&sw, elsewhere.build().unwrap()), DropReason::NoRoute);
    sw.tables.acl.push(AclRule::flow(FlowKey::from_v4(SRC, DST, 5000, 80, PROTO_TCP)));
    assert_eq!(drop(&sw, spec(64, None).build().unwrap()), DropReason::Acl);
}

#[test]
fn udp_ports_and_fragments_shape_the_key() {
    let sw = switch();
    let mut udp = spec(64, None);
    udp.l3 = L3::Ipv4 { header: Ipv4Repr::new(SRC, DST, PROTO_UDP, 0), l4: L4::Udp(UdpRepr::new(53, 4242)) };
    match sw.ingress(udp.build().unwrap()) {
        Ingress::Forward { key, .. } => assert_eq!(key, FlowKey::from_v4(SRC, DST, 53, 4242, PROTO_UDP)),
        other => panic!("{other:?}"),
    }
    let mut frag = spec(64, None);
    if let L3::Ipv4 { header, .. } = &mut frag.l3 {
        header.frag_offset = 10;
    }
    match sw.ingress(frag.build().unwrap()) {
        Ingress::Forward { key, .. } => assert_eq!(key, FlowKey::from_v4(SRC, DST, 0, 0, PROTO_TCP)),
        other => panic!("{other:?}"),
    }
}
