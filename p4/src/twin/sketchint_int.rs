//! Twin of `sketchint_int.p4`: SketchINT's INT layer on an IPv4 router.
//!
//! Ingress, in the program's order: parse (Ethernet, the shim and its hop records if
//! present, IPv4, the TCP/UDP ports), drop on a parser error, drop if not IPv4 or if IPv4
//! has options, drop on an ACL match, drop if the TTL is 1 or 0 (else decrement it), look
//! the destination up by longest prefix, pick the next hop `base + crc32(key) % count`
//! ([`smartnic_contract::hash::ECMP`]; the reversed key on routes marked so), rewrite the MACs.
//! Egress: push the shim (kind INT stack, no hops) if the packet has none, append one hop
//! record (this switch's ID, hop latency in ns) unless the stack already holds
//! [`MAX_HOPS`], and recompute the IPv4 header checksum.

use super::DropReason;
use crate::tables::SwitchTables;
use smartnic_contract::frame::field::{ethernet, ipv4};
use smartnic_contract::frame::ETHERTYPE_IPV4;
use smartnic_contract::hash::{ecmp_input, ecmp_member};
use smartnic_contract::key::{FlowKey, PROTO_TCP, PROTO_UDP};
use smartnic_contract::shim::{field as shim, ETHERTYPE_SHIM, KIND_INT_STACK, MAX_HOPS};
use smartnic_contract::wire::ipv4::Ipv4Packet;
use smartnic_contract::wire::shim::{ensure_int_stack, push_hop, Hop, ShimHeader};
use std::net::Ipv4Addr;

/// The ECMP hash, table-driven (checked against the contract's bitwise definition).
const ECMP_CRC: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC);

/// What ingress decided for a packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ingress {
    /// Send it out of `port`; `frame` has its MACs and TTL rewritten, `hops` records
    /// already in its stack (0 without a shim).
    Forward {
        port: u16,
        frame: Vec<u8>,
        key: FlowKey,
    },
    Drop {
        reason: DropReason,
        key: Option<FlowKey>,
    },
}

/// Where the parser found things.
#[derive(Clone, Copy, Debug)]
struct Layout {
    ip: usize,
    key: FlowKey,
}

/// One switch running the program.
#[derive(Clone, Debug)]
pub struct Switch {
    pub tables: SwitchTables,
}

impl Switch {
    pub fn new(tables: SwitchTables) -> Self {
        Switch { tables }
    }

    /// The ingress pipeline on a frame arriving on any port.
    pub fn ingress(&self, mut frame: Vec<u8>) -> Ingress {
        let lay = match parse(&frame) {
            Ok(l) => l,
            Err(reason) => return Ingress::Drop { reason, key: None },
        };
        let drop = |reason| Ingress::Drop { reason, key: Some(lay.key) };
        if frame[lay.ip + ipv4::VER_IHL] & 0x0F != 5 {
            return drop(DropReason::Ipv4Options);
        }
        if self.tables.acl.iter().any(|a| a.matches(&lay.key)) {
            return drop(DropReason::Acl);
        }
        let ttl = frame[lay.ip + ipv4::TTL];
        if ttl <= 1 {
            return drop(DropReason::TtlExpired);
        }
        let Some(route) = self.tables.lookup(Ipv4Addr::from(lay.key.dst_ip())) else {
            return drop(DropReason::NoRoute);
        };
        let hash = ecmp_hash_of(&lay.key, route.reverse);
        let select = route.base as usize + ecmp_member(hash, route.count) as usize;
        let Some(hop) = self.tables.nexthops.get(select) else {
            return drop(DropReason::NoRoute);
        };
        frame[lay.ip + ipv4::TTL] = ttl - 1;
        frame[ethernet::DESTINATION].copy_from_slice(&hop.dmac);
        frame[ethernet::SOURCE].copy_from_slice(&self.tables.mac);
        Ingress::Forward { port: hop.port, frame, key: lay.key }
    }

    /// The egress pipeline: the INT shim and hop record, then the IPv4 checksum. `frame`
    /// is one that ingress forwarded; `latency_ns` is egress time minus ingress time (the
    /// program stores its low 32 bits).
    pub fn egress(&self, mut frame: Vec<u8>, latency_ns: u64) -> Vec<u8> {
        let shim_at = ensure_int_stack(&mut frame).expect("egress takes frames that ingress forwarded");
        let hop = Hop { switch_id: self.tables.switch_id, latency_ns: latency_ns as u32 };
        // A full stack is left as it is (the program appends only below MAX_HOPS).
        let _ = push_hop(&mut frame, shim_at, hop);
        let ip = shim_at + ShimHeader::new_checked(&frame[shim_at..]).expect("a valid stack").header_len();
        Ipv4Packet::new_unchecked(&mut frame[ip..]).fill_checksum();
        frame
    }
}

/// The ECMP hash of a flow key, read as is or reversed ([`ecmp_input`]).
pub fn ecmp_hash_of(key: &FlowKey, reverse: bool) -> u32 {
    ECMP_CRC.checksum(&ecmp_input(key, reverse))
}

/// The program's parser: Ethernet, shim (+ hops), IPv4, then the ports of an option-less,
/// unfragmented TCP or UDP packet.
fn parse(f: &[u8]) -> Result<Layout, DropReason> {
    let need = |n: usize| if f.len() < n { Err(DropReason::Malformed) } else { Ok(()) };
    need(ethernet::HEADER_LEN)?;
    let mut ethertype = be16(f, ethernet::ETHERTYPE.start);
    let mut off = ethernet::HEADER_LEN;
    if ethertype == ETHERTYPE_SHIM {
        need(off + shim::HOPS)?;
        if f[off + shim::KIND] != KIND_INT_STACK {
            return Err(DropReason::NotIpv4);
        }
        let n = be16(f, off + shim::HOP_COUNT.start);
        if n > MAX_HOPS {
            return Err(DropReason::Malformed);
        }
        need(off + shim::HOPS + shim::HOP_LEN * n as usize)?;
        ethertype = be16(f, off + shim::NEXT_TYPE.start);
        off += shim::HOPS + shim::HOP_LEN * n as usize;
    }
    if ethertype != ETHERTYPE_IPV4 {
        return Err(DropReason::NotIpv4);
    }
    need(off + ipv4::MIN_HEADER_LEN)?;
    let ip = off;
    let proto = f[ip + ipv4::PROTOCOL];
    let plain = f[ip + ipv4::VER_IHL] & 0x0F == 5
        && be16(f, ip + ipv4::FLAGS_FRAG.start) & ipv4::FRAG_OFFSET_MASK == 0;
    let (mut sport, mut dport) = (0, 0);
    if plain && (proto == PROTO_TCP || proto == PROTO_UDP) {
        need(ip + ipv4::MIN_HEADER_LEN + 4)?;
        sport = be16(f, ip + ipv4::MIN_HEADER_LEN);
        dport = be16(f, ip + ipv4::MIN_HEADER_LEN + 2);
    }
    let addr = |r: core::ops::Range<usize>| -> [u8; 4] { f[ip + r.start..ip + r.end].try_into().unwrap() };
    let key = FlowKey::from_v4(addr(ipv4::SOURCE), addr(ipv4::DESTINATION), sport, dport, proto);
    Ok(Layout { ip, key })
}

fn be16(f: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([f[at], f[at + 1]])
}
