//! The flow key: the papers' 13-byte 5-tuple.
//!
//! Layout (network byte order): `srcIP(4) dstIP(4) srcPort(2) dstPort(2) proto(1)`.
//!
//! IPv6 folding rule: a 128-bit address folds to 32 bits by XOR of its four big-endian
//! 32-bit words. XOR keeps every address bit influential (a truncation would make all
//! hosts of one /32 collide) and is a single LUT level in hardware. Protocols other than
//! TCP (6) and UDP (17) carry ports 0, so e.g. all ICMP between two hosts is one flow.

/// Length of a flow key in bytes.
pub const KEY_LEN: usize = 13;

/// IP protocol number of TCP.
pub const PROTO_TCP: u8 = 6;
/// IP protocol number of UDP.
pub const PROTO_UDP: u8 = 17;

/// Byte ranges of the fields inside the 13-byte key.
pub mod field {
    use core::ops::Range;
    pub const SRC_IP: Range<usize> = 0..4;
    pub const DST_IP: Range<usize> = 4..8;
    pub const SRC_PORT: Range<usize> = 8..10;
    pub const DST_PORT: Range<usize> = 10..12;
    pub const PROTO: usize = 12;
}

/// A 13-byte flow key, stored exactly as it is hashed.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FlowKey(pub [u8; KEY_LEN]);

impl FlowKey {
    /// Builds the key of an IPv4 flow. Ports are zeroed unless `proto` is TCP or UDP.
    #[inline]
    pub fn from_v4(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16, proto: u8) -> Self {
        let mut k = [0u8; KEY_LEN];
        k[field::SRC_IP].copy_from_slice(&src);
        k[field::DST_IP].copy_from_slice(&dst);
        if has_ports(proto) {
            k[field::SRC_PORT].copy_from_slice(&sport.to_be_bytes());
            k[field::DST_PORT].copy_from_slice(&dport.to_be_bytes());
        }
        k[field::PROTO] = proto;
        FlowKey(k)
    }

    /// Builds the key of an IPv6 flow by folding both addresses (see module docs).
    pub fn from_v6(src: [u8; 16], dst: [u8; 16], sport: u16, dport: u16, proto: u8) -> Self {
        Self::from_v4(fold_v6(src), fold_v6(dst), sport, dport, proto)
    }

    /// The raw key bytes.
    pub fn as_bytes(&self) -> &[u8; KEY_LEN] {
        &self.0
    }

    pub fn src_ip(&self) -> [u8; 4] {
        self.0[field::SRC_IP].try_into().unwrap()
    }
    pub fn dst_ip(&self) -> [u8; 4] {
        self.0[field::DST_IP].try_into().unwrap()
    }
    pub fn src_port(&self) -> u16 {
        u16::from_be_bytes(self.0[field::SRC_PORT].try_into().unwrap())
    }
    pub fn dst_port(&self) -> u16 {
        u16::from_be_bytes(self.0[field::DST_PORT].try_into().unwrap())
    }
    pub fn proto(&self) -> u8 {
        self.0[field::PROTO]
    }

    /// Parses the text form printed by `Display`: `a.b.c.d:p>e.f.g.h:q/proto`.
    pub fn parse(s: &str) -> Option<Self> {
        let (lhs, proto) = s.rsplit_once('/')?;
        let (src, dst) = lhs.split_once('>')?;
        let (sip, sport) = split_endpoint(src)?;
        let (dip, dport) = split_endpoint(dst)?;
        let proto: u8 = proto.parse().ok()?;
        Some(Self::from_v4(sip, dip, sport, dport, proto))
    }
}

fn split_endpoint(s: &str) -> Option<([u8; 4], u16)> {
    let (ip, port) = s.rsplit_once(':')?;
    let mut out = [0u8; 4];
    let mut parts = ip.split('.');
    for b in out.iter_mut() {
        *b = parts.next()?.parse().ok()?;
    }
    if parts.next().is_some() {
        return None;
    }
    Some((out, port.parse().ok()?))
}

/// True when the protocol's first four L4 bytes are source and destination ports.
pub fn has_ports(proto: u8) -> bool {
    proto == PROTO_TCP || proto == PROTO_UDP
}

/// Folds an IPv6 address to 32 bits: XOR of its four big-endian 32-bit words.
pub fn fold_v6(addr: [u8; 16]) -> [u8; 4] {
    let mut out = [0u8; 4];
    for chunk in addr.chunks_exact(4) {
        for (o, b) in out.iter_mut().zip(chunk) {
            *o ^= b;
        }
    }
    out
}

impl core::fmt::Display for FlowKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let s = self.src_ip();
        let d = self.dst_ip();
        write!(
            f,
            "{}.{}.{}.{}:{}>{}.{}.{}.{}:{}/{}",
            s[0],
            s[1],
            s[2],
            s[3],
            self.src_port(),
            d[0],
            d[1],
            d[2],
            d[3],
            self.dst_port(),
            self.proto()
        )
    }
}

impl core::fmt::Debug for FlowKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "FlowKey({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v4_layout_is_network_order() {
        let k = FlowKey::from_v4([10, 0, 0, 1], [10, 0, 0, 2], 0x1234, 80, PROTO_TCP);
        assert_eq!(k.0, [10, 0, 0, 1, 10, 0, 0, 2, 0x12, 0x34, 0, 80, 6]);
    }

    #[test]
    fn non_tcp_udp_has_zero_ports() {
        let k = FlowKey::from_v4([1, 2, 3, 4], [5, 6, 7, 8], 999, 999, 1);
        assert_eq!(k.src_port(), 0);
        assert_eq!(k.dst_port(), 0);
    }

    #[test]
    fn v6_folds_by_xor_of_words() {
        let mut a = [0u8; 16];
        a[0..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
        a[12..16].copy_from_slice(&[0, 0, 0, 1]);
        assert_eq!(fold_v6(a), [0x20, 0x01, 0x0d, 0xb9]);
    }

    #[test]
    fn display_parse_round_trip() {
        let k = FlowKey::from_v4([192, 168, 1, 7], [8, 8, 8, 8], 5353, 53, PROTO_UDP);
        let s = k.to_string();
        assert_eq!(s, "192.168.1.7:5353>8.8.8.8:53/17");
        assert_eq!(FlowKey::parse(&s), Some(k));
        assert_eq!(FlowKey::parse("1.2.3:4>5.6.7.8:9/6"), None);
    }
}
