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
use smartnic_contract::frame::field::{ethernet, ipv4, udp};
use smartnic_contract::frame::ETHERTYPE_IPV4;
use smartnic_contract::hash::{ecmp_input, ecmp_member};
use smartnic_contract::key::{FlowKey, PROTO_TCP, PROTO_UDP};
use smartnic_contract::shim::ETHERTYPE_SHIM;
use smartnic_contract::wire::ethernet::EthernetFrame;
use smartnic_contract::wire::ipv4::Ipv4Packet;
use smartnic_contract::wire::shim::{ensure_int_stack, push_hop, Hop, ShimError, ShimHeader};
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
        let ip = Ipv4Packet::new_unchecked(&frame[lay.ip..]);
        if ip.ihl() != 5 {
            return drop(DropReason::Ipv4Options);
        }
        if self.tables.acl.iter().any(|a| a.matches(&lay.key)) {
            return drop(DropReason::Acl);
        }
        let ttl = ip.ttl();
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
        // set_nhop: the checksum is the deparser's (egress), so the TTL is set plainly here.
        Ipv4Packet::new_unchecked(&mut frame[lay.ip..]).set_ttl(ttl - 1);
        let mut eth = EthernetFrame::new_checked(&mut frame[..]).expect("parsed above");
        eth.set_destination(hop.dmac);
        eth.set_source(self.tables.mac);
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
/// unfragmented TCP or UDP packet. The shim view's checks are the program's parser rules
/// (cut short or deeper than `MAX_HOPS`: a parser error; another kind: no IPv4 parsed); the
/// IPv4 header is read unchecked, as the program checks neither version nor length.
fn parse(f: &[u8]) -> Result<Layout, DropReason> {
    let need = |n: usize| if f.len() < n { Err(DropReason::Malformed) } else { Ok(()) };
    let eth = EthernetFrame::new_checked(f).map_err(|_| DropReason::Malformed)?;
    let mut ethertype = eth.ethertype();
    let mut ip = ethernet::HEADER_LEN;
    if ethertype == ETHERTYPE_SHIM {
        let shim = ShimHeader::new_checked(&f[ip..]).map_err(|e| match e {
            ShimError::UnknownKind(_) => DropReason::NotIpv4,
            ShimError::Truncated | ShimError::TooManyHops(_) => DropReason::Malformed,
        })?;
        ethertype = shim.next_type();
        ip += shim.header_len();
    }
    if ethertype != ETHERTYPE_IPV4 {
        return Err(DropReason::NotIpv4);
    }
    need(ip + ipv4::MIN_HEADER_LEN)?;
    let h = Ipv4Packet::new_unchecked(&f[ip..]);
    let (proto, plain) = (h.protocol(), h.ihl() == 5 && h.frag_offset() == 0);
    let (mut sport, mut dport) = (0, 0);
    if plain && (proto == PROTO_TCP || proto == PROTO_UDP) {
        // The program extracts only the ports (the first four bytes of TCP and UDP alike).
        let l4 = ip + ipv4::MIN_HEADER_LEN;
        need(l4 + udp::DST_PORT.end)?;
        let port = |r: core::ops::Range<usize>| u16::from_be_bytes([f[l4 + r.start], f[l4 + r.start + 1]]);
        (sport, dport) = (port(udp::SRC_PORT), port(udp::DST_PORT));
    }
    let key = FlowKey::from_v4(h.src_addr(), h.dst_addr(), sport, dport, proto);
    Ok(Layout { ip, key })
}
