//! The frame parser: from captured bytes to a flow key (and INT hops), as the NIC's
//! hardware parser does it.
//!
//! Why one function with three outcomes: every frame must be accounted for, so a frame
//! is either an IP packet (with its key), not IP (ARP, LLDP, unsupported link types...),
//! or malformed (a header cut short or inconsistent). Nothing panics and nothing is
//! dropped without a counter.
//!
//! Accepted layering, outermost first:
//! - link: Ethernet (LINKTYPE 1), or raw IP (LINKTYPE 101, 228, 229); other link types
//!   count as not IP;
//! - up to two VLAN tags (0x8100, 0x88A8, 0x9100); a third tag is malformed;
//! - optionally the telemetry shim (EtherType 0x88B5), parsed by the contract's
//!   [`ShimHeader::new_checked`] (the checks of `IntShim::parse`); a shim that fails them,
//!   or a shim inside a shim, is malformed;
//! - IPv4 with options (IHL 5..15; IHL < 5, IHL beyond the captured bytes, or a total
//!   length below the header length is malformed), or IPv6;
//! - IPv6 extension headers hop-by-hop (0), routing (43), destination options (60),
//!   fragment (44) and AH (51) are skipped (at most 8); the protocol is the first other
//!   next-header value; after a fragment header with a non-zero offset the rest is fragment
//!   data, so parsing stops and the protocol is that header's next-header value;
//! - TCP (20-byte header, data offset >= 5) and UDP (8 bytes) give the ports; other
//!   protocols, and non-first fragments (whose L4 header is elsewhere), use ports 0.
//!
//! The L4 header must lie within both the captured bytes and the IP packet's own length;
//! bytes beyond the IP length (Ethernet padding) are ignored. A frame longer than the
//! contract's [`MAX_FRAME_LEN`] is malformed (the NIC's length limit; no capture can hold one).
//! An empty frame (a zero-length capture record) is malformed whatever its link type: the
//! NIC sees it as one beat with no valid byte.

use smartnic_contract::key::{PROTO_TCP, PROTO_UDP};
use smartnic_contract::shim::{Hop, ShimError, ShimHeader, ETHERTYPE_SHIM};
use smartnic_contract::FlowKey;

use super::capture::RawFrame;
use super::{Hops, Packet};

pub use smartnic_contract::frame::{
    ETHERTYPE_ARP, ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_QINQ, ETHERTYPE_QINQ_OLD, ETHERTYPE_VLAN,
    MAX_EXT_HEADERS, MAX_FRAME_LEN, MAX_VLAN_TAGS,
};
use smartnic_contract::wire;
use smartnic_contract::wire::ipv4::Ipv4Packet;
use smartnic_contract::wire::ipv6::Ipv6Packet;
use smartnic_contract::wire::ipv6_ext::{self, Ipv6ExtHeader};
use smartnic_contract::wire::tcp::TcpPacket;
use smartnic_contract::wire::udp::UdpPacket;
use smartnic_contract::wire::vlan::walk_l2;
pub const LINKTYPE_ETHERNET: u32 = 1;
pub const LINKTYPE_RAW: u32 = 101;
pub const LINKTYPE_IPV4: u32 = 228;
pub const LINKTYPE_IPV6: u32 = 229;
/// Why a frame is malformed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("Ethernet header truncated")]
    EthernetTruncated,
    #[error("VLAN tag truncated")]
    VlanTruncated,
    #[error("more than {MAX_VLAN_TAGS} VLAN tags")]
    TooManyVlanTags,
    #[error("{0}")]
    Shim(ShimError),
    #[error("telemetry shim nested inside a telemetry shim")]
    NestedShim,
    #[error("IPv4 header truncated")]
    Ipv4Truncated,
    #[error("IP version {0} does not match the EtherType")]
    BadIpVersion(u8),
    #[error("IPv4 IHL {0} is below 5")]
    BadIhl(u8),
    #[error("IPv4 total length {0} is below the header length")]
    BadTotalLength(u16),
    #[error("IPv6 header truncated")]
    Ipv6Truncated,
    #[error("IPv6 extension header truncated")]
    ExtHeaderTruncated,
    #[error("more than {MAX_EXT_HEADERS} IPv6 extension headers")]
    TooManyExtHeaders,
    #[error("transport header of protocol {0} truncated")]
    L4Truncated(u8),
    #[error("TCP data offset {0} is below 5")]
    BadTcpOffset(u8),
    #[error("frame longer than {MAX_FRAME_LEN} bytes")]
    TooLong,
    #[error("empty frame (a zero-length capture record)")]
    Empty,
}

impl FrameError {
    /// A short stable name, used as a JSON key for malformed counts.
    pub fn name(&self) -> &'static str {
        match self {
            FrameError::EthernetTruncated => "ethernet_truncated",
            FrameError::VlanTruncated => "vlan_truncated",
            FrameError::TooManyVlanTags => "too_many_vlan_tags",
            FrameError::Shim(_) => "bad_shim",
            FrameError::NestedShim => "nested_shim",
            FrameError::Ipv4Truncated => "ipv4_truncated",
            FrameError::BadIpVersion(_) => "bad_ip_version",
            FrameError::BadIhl(_) => "bad_ihl",
            FrameError::BadTotalLength(_) => "bad_total_length",
            FrameError::Ipv6Truncated => "ipv6_truncated",
            FrameError::ExtHeaderTruncated => "ipv6_ext_truncated",
            FrameError::TooManyExtHeaders => "too_many_ipv6_ext",
            FrameError::L4Truncated(_) => "l4_truncated",
            FrameError::BadTcpOffset(_) => "bad_tcp_offset",
            FrameError::TooLong => "too_long",
            FrameError::Empty => "empty",
        }
    }
}

/// What a frame turned out to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrameClass {
    Ip { key: FlowKey, hops: Vec<Hop> },
    NonIp,
    Malformed(FrameError),
}

/// A classified captured frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Classified {
    Packet(Packet),
    NonIp,
    Malformed(FrameError),
}

/// Classifies a captured frame; an IP frame becomes a [`Packet`] with the pcap original
/// length as its wire length.
pub fn classify(frame: &RawFrame<'_>) -> Classified {
    let mut hops = Hops::new();
    match parse_frame_into(frame.linktype, frame.data, &mut hops) {
        Ok(Some(key)) => {
            Classified::Packet(Packet { ts_ns: frame.ts_ns, wire_len: frame.orig_len, key, hops })
        }
        Ok(None) => Classified::NonIp,
        Err(e) => Classified::Malformed(e),
    }
}

/// [`classify`] into an existing packet, reusing its hop vector's memory (the bulk
/// readers' path: no allocation per packet). `Ok(true)`: `p` now holds the frame's packet;
/// `Ok(false)`: not IP; `Err`: malformed. `p` is unspecified unless `Ok(true)`.
pub fn classify_into(frame: &RawFrame<'_>, p: &mut Packet) -> Result<bool, FrameError> {
    let Some(key) = parse_frame_into(frame.linktype, frame.data, &mut p.hops)? else { return Ok(false) };
    p.key = key;
    p.ts_ns = frame.ts_ns;
    p.wire_len = frame.orig_len;
    Ok(true)
}

/// Parses one frame of the given link type.
pub fn parse_frame(linktype: u32, data: &[u8]) -> FrameClass {
    let mut hops = Hops::new();
    match parse_frame_into(linktype, data, &mut hops) {
        Ok(Some(key)) => FrameClass::Ip { key, hops: hops.into_vec() },
        Ok(None) => FrameClass::NonIp,
        Err(e) => FrameClass::Malformed(e),
    }
}

/// The parser behind [`parse_frame`]: the key of an IP frame (`None`: not IP), its INT
/// hops written into `hops` (cleared first, so a reused vector keeps its memory).
fn parse_frame_into(linktype: u32, data: &[u8], hops: &mut Hops) -> IpResult {
    hops.clear();
    if data.is_empty() {
        return Err(FrameError::Empty);
    }
    if data.len() as u64 > MAX_FRAME_LEN {
        return Err(FrameError::TooLong);
    }
    match linktype {
        LINKTYPE_ETHERNET => parse_ethernet(data, hops),
        LINKTYPE_IPV4 => parse_ipv4(data).map(Some),
        LINKTYPE_IPV6 => parse_ipv6(data).map(Some),
        LINKTYPE_RAW => match data.first().map(|b| b >> 4) {
            Some(4) => parse_ipv4(data).map(Some),
            Some(6) => parse_ipv6(data).map(Some),
            _ => Ok(None),
        },
        _ => Ok(None),
    }
}

type IpResult = Result<Option<FlowKey>, FrameError>;

/// Ethernet, its VLAN tags (the contract's walk) and the optional shim (the contract's
/// view, its hops appended to `hops`), then IP.
#[inline(always)]
fn parse_ethernet(data: &[u8], hops: &mut Hops) -> IpResult {
    let l2 = walk_l2(data).map_err(|e| match e {
        wire::Error::TooManyTags { .. } => FrameError::TooManyVlanTags,
        wire::Error::Truncated { header: wire::Header::Vlan, .. } => FrameError::VlanTruncated,
        _ => FrameError::EthernetTruncated,
    })?;
    let mut ethertype = l2.ethertype;
    let mut rest = &data[l2.payload_at..];
    if ethertype == ETHERTYPE_SHIM {
        let shim = ShimHeader::new_checked(rest).map_err(FrameError::Shim)?;
        if shim.next_type() == ETHERTYPE_SHIM {
            return Err(FrameError::NestedShim);
        }
        ethertype = shim.next_type();
        hops.extend(shim.hops());
        rest = &rest[shim.header_len()..];
    }
    match ethertype {
        ETHERTYPE_IPV4 => parse_ipv4(rest).map(Some),
        ETHERTYPE_IPV6 => parse_ipv6(rest).map(Some),
        _ => Ok(None),
    }
}

/// Source and destination ports of `proto` from its header at the start of `l4`.
#[inline(always)]
fn ports(proto: u8, l4: &[u8]) -> Result<(u16, u16), FrameError> {
    // The TCP and UDP views report a cut header, or (TCP) a data offset below 5.
    let fault = |e| match e {
        wire::Error::HeaderLen { value, .. } => FrameError::BadTcpOffset(value),
        _ => FrameError::L4Truncated(proto),
    };
    match proto {
        PROTO_TCP => TcpPacket::new_checked(l4).map(|t| (t.src_port(), t.dst_port())).map_err(fault),
        PROTO_UDP => UdpPacket::new_checked(l4).map(|u| (u.src_port(), u.dst_port())).map_err(fault),
        _ => Ok((0, 0)),
    }
}

#[inline(always)]
fn parse_ipv4(ip: &[u8]) -> Result<FlowKey, FrameError> {
    // Everything else the IPv4 view reports is a cut header.
    let p = Ipv4Packet::new_checked(ip).map_err(|e| match e {
        wire::Error::Version { version, .. } => FrameError::BadIpVersion(version),
        wire::Error::HeaderLen { value, .. } => FrameError::BadIhl(value),
        wire::Error::TotalLen { value, .. } => FrameError::BadTotalLength(value),
        _ => FrameError::Ipv4Truncated,
    })?;
    let proto = p.protocol();
    // A later fragment's data is not a transport header.
    let (sport, dport) = if p.frag_offset() != 0 { (0, 0) } else { ports(proto, p.payload())? };
    Ok(FlowKey::from_v4(p.src_addr(), p.dst_addr(), sport, dport, proto))
}

fn parse_ipv6(ip: &[u8]) -> Result<FlowKey, FrameError> {
    let p = Ipv6Packet::new_checked(ip).map_err(|e| match e {
        wire::Error::Version { version, .. } => FrameError::BadIpVersion(version),
        _ => FrameError::Ipv6Truncated,
    })?;
    // Payload length 0 is a jumbogram: the view's payload is then all captured bytes.
    let mut l4 = p.payload();
    let mut next = p.next_header();
    let mut first_fragment = true;
    let mut skipped = 0;
    while let Some(hlen) = ipv6_ext::header_len(next, l4) {
        let hlen = hlen.map_err(|_| FrameError::ExtHeaderTruncated)?;
        if skipped == MAX_EXT_HEADERS {
            return Err(FrameError::TooManyExtHeaders);
        }
        let h = Ipv6ExtHeader::new_checked(l4, next).map_err(|_| FrameError::ExtHeaderTruncated)?;
        first_fragment &= h.frag_offset() == 0;
        next = h.next_header();
        l4 = &l4[hlen..];
        skipped += 1;
        if !first_fragment {
            // Fragment data follows, not headers (RFC 8200 section 4.5).
            break;
        }
    }
    let (sport, dport) = if first_fragment { ports(next, l4)? } else { (0, 0) };
    Ok(FlowKey::from_v6(p.src_addr(), p.dst_addr(), sport, dport, next))
}

#[cfg(test)]
mod tests {
    use super::*;
    use smartnic_contract::frame::ipv6_ext::{DEST_OPTS, FRAGMENT};

    /// Ethernet + 802.1Q + shim(1 hop) + IPv4 (IHL 6) + UDP.
    fn sample() -> Vec<u8> {
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&[0x81, 0x00, 0x00, 0x05, 0x88, 0xB5]);
        f.extend_from_slice(&[1, 0, 0x08, 0x00, 0, 1, 0, 3, 0, 0, 0x01, 0x00]);
        f.extend_from_slice(&[0x46, 0, 0, 32, 0, 0, 0x40, 0, 64, 17, 0, 0]);
        f.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2, 1, 1, 1, 1]);
        f.extend_from_slice(&[0x13, 0x88, 0x00, 0x35, 0, 8, 0, 0]);
        f
    }

    #[test]
    fn vlan_shim_ipv4_options_udp() {
        let f = sample();
        let key = FlowKey::from_v4([10, 0, 0, 1], [10, 0, 0, 2], 5000, 53, 17);
        assert_eq!(
            parse_frame(LINKTYPE_ETHERNET, &f),
            FrameClass::Ip { key, hops: vec![Hop { switch_id: 3, latency_ns: 256 }] }
        );
        // Every strict prefix is malformed, never a panic nor a different key.
        for n in 0..f.len() {
            assert!(matches!(parse_frame(1, &f[..n]), FrameClass::Malformed(_)), "prefix {n}");
        }
    }

    #[test]
    fn bad_ihl_and_version() {
        let mut f = sample();
        f[30] = 0x44;
        assert_eq!(parse_frame(1, &f), FrameClass::Malformed(FrameError::BadIhl(4)));
        f[30] = 0x56;
        assert_eq!(parse_frame(1, &f), FrameClass::Malformed(FrameError::BadIpVersion(5)));
    }

    #[test]
    fn ipv6_fragment_and_hop_by_hop() {
        let mut ip = vec![0x60, 0, 0, 0, 0, 24, 0, 64];
        ip.extend_from_slice(&[0x20; 16]);
        ip.extend_from_slice(&[0x30; 16]);
        // hop-by-hop (8 bytes) -> fragment (offset 0) -> TCP would need 20 bytes; use UDP.
        ip.extend_from_slice(&[44, 0, 1, 4, 0, 0, 0, 0]);
        ip.extend_from_slice(&[17, 0, 0, 0, 0, 0, 0, 1]);
        ip.extend_from_slice(&[0, 7, 0, 9, 0, 8, 0, 0]);
        let key = FlowKey::from_v6([0x20; 16], [0x30; 16], 7, 9, 17);
        assert_eq!(parse_frame(LINKTYPE_IPV6, &ip), FrameClass::Ip { key, hops: vec![] });
        // A non-first fragment has no ports.
        ip[50] = 0x01;
        let key0 = FlowKey::from_v6([0x20; 16], [0x30; 16], 0, 0, 17);
        assert_eq!(parse_frame(LINKTYPE_RAW, &ip), FrameClass::Ip { key: key0, hops: vec![] });
    }

    /// An IPv6 packet: hop-by-hop, then a fragment header with offset `offset` (8-byte
    /// units) and next header `frag_next`, then `data`.
    fn ipv6_fragment(offset: u16, frag_next: u8, data: &[u8]) -> Vec<u8> {
        let plen = (16 + data.len()) as u16;
        let mut ip = vec![0x60, 0, 0, 0];
        ip.extend_from_slice(&plen.to_be_bytes());
        ip.extend_from_slice(&[0, 64]);
        ip.extend_from_slice(&[0x20; 16]);
        ip.extend_from_slice(&[0x30; 16]);
        ip.extend_from_slice(&[44, 0, 1, 4, 0, 0, 0, 0]);
        ip.extend_from_slice(&[frag_next, 0]);
        ip.extend_from_slice(&(offset << 3).to_be_bytes());
        ip.extend_from_slice(&[0, 0, 0, 1]);
        ip.extend_from_slice(data);
        ip
    }

    #[test]
    fn ipv6_later_fragment_data_is_not_parsed() {
        // Data that reads as a destination-options header cut short, or as a UDP header.
        let data = [0xAA, 0xFF, 0x13, 0x88, 0x00, 0x35, 0, 8];
        for next in [DEST_OPTS, FRAGMENT, PROTO_UDP, PROTO_TCP, 59] {
            let key = FlowKey::from_v6([0x20; 16], [0x30; 16], 0, 0, next);
            let later = ipv6_fragment(185, next, &data);
            assert_eq!(
                parse_frame(LINKTYPE_IPV6, &later),
                FrameClass::Ip { key, hops: vec![] },
                "next {next}"
            );
        }
        // The first fragment is parsed on: UDP gives its ports; a destination-options header
        // whose length runs past the packet is malformed.
        let first = ipv6_fragment(0, PROTO_UDP, &data);
        let key = FlowKey::from_v6([0x20; 16], [0x30; 16], 0xAAFF, 0x1388, PROTO_UDP);
        assert_eq!(parse_frame(LINKTYPE_IPV6, &first), FrameClass::Ip { key, hops: vec![] });
        let first = ipv6_fragment(0, DEST_OPTS, &data);
        assert_eq!(parse_frame(LINKTYPE_IPV6, &first), FrameClass::Malformed(FrameError::ExtHeaderTruncated));
    }

    #[test]
    fn empty_frame_is_malformed() {
        for linktype in [LINKTYPE_ETHERNET, LINKTYPE_RAW, LINKTYPE_IPV4, LINKTYPE_IPV6, 147] {
            assert_eq!(
                parse_frame(linktype, &[]),
                FrameClass::Malformed(FrameError::Empty),
                "link type {linktype}"
            );
        }
    }

    #[test]
    fn non_ip_and_three_tags() {
        let mut arp = vec![0u8; 42];
        arp[12] = 0x08;
        arp[13] = 0x06;
        assert_eq!(parse_frame(1, &arp), FrameClass::NonIp);
        assert_eq!(parse_frame(147, &arp), FrameClass::NonIp);
        let mut f = vec![0u8; 12];
        for _ in 0..3 {
            f.extend_from_slice(&[0x81, 0x00, 0, 1]);
        }
        f.extend_from_slice(&[0x08, 0x00]);
        f.extend_from_slice(&[0; 40]);
        assert_eq!(parse_frame(1, &f), FrameClass::Malformed(FrameError::TooManyVlanTags));
    }
}
