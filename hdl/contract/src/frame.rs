//! The frame formats the NIC parser and the host trace reader both accept: EtherTypes, the
//! IPv6 extension headers that are skipped to reach the transport header, and the limits
//! past which a frame is malformed. The hardware parser (`smartnic-hdl`, `parser/`) and the
//! software one (`smartnic::trace::frame`) take these from here, and the parser's Verilator
//! tests compare the two frame for frame.

/// IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// IPv6.
pub const ETHERTYPE_IPV6: u16 = 0x86DD;
/// ARP (never sketched: counted as non-IP; the trace generator's non-IP traffic).
pub const ETHERTYPE_ARP: u16 = 0x0806;
/// IEEE 802.1Q VLAN tag.
pub const ETHERTYPE_VLAN: u16 = 0x8100;
/// IEEE 802.1ad service tag (Q-in-Q).
pub const ETHERTYPE_QINQ: u16 = 0x88A8;
/// The pre-standard Q-in-Q tag some switches still emit.
pub const ETHERTYPE_QINQ_OLD: u16 = 0x9100;

/// Bits of a frame's wire length, in the NIC's descriptor (`d_len`) and in the BYTES
/// statistic's increments: wide enough for every frame a capture can hold (GRO/TSO and BIG TCP
/// captures carry IP packets of 64 KiB and more; a pcap record states its length in 32 bits).
pub const LEN_BITS: usize = 32;
/// The longest frame either side accepts, in bytes: the largest length a capture record can
/// state. A longer frame is malformed on both sides; every frame up to it is parsed and its
/// length counted exactly (the NIC saturates the length of a longer one at this value).
pub const MAX_FRAME_LEN: u64 = (1 << LEN_BITS) - 1;

/// Most VLAN tags accepted; one more makes the frame malformed.
pub const MAX_VLAN_TAGS: usize = 2;
/// Most IPv6 extension headers skipped; one more makes the frame malformed.
pub const MAX_EXT_HEADERS: usize = 8;

/// IPv6 next-header values of the extension headers that are skipped.
pub mod ipv6_ext {
    /// Hop-by-hop options: length field in 8-byte units, not counting the first 8.
    pub const HOP_BY_HOP: u8 = 0;
    /// Routing header: same length rule as hop-by-hop.
    pub const ROUTING: u8 = 43;
    /// Fragment header: fixed 8 bytes. A non-zero offset means the rest of the packet is
    /// fragment data (RFC 8200 section 4.5): parsing stops there, the protocol is the
    /// fragment header's next-header value and the ports are 0 (the IPv4 later-fragment rule).
    pub const FRAGMENT: u8 = 44;
    /// Authentication header: length field in 4-byte units, not counting the first 8.
    pub const AUTH: u8 = 51;
    /// Destination options: same length rule as hop-by-hop.
    pub const DEST_OPTS: u8 = 60;
}

/// Byte ranges of the header fields the parsers read, counted from each header's first byte
/// (big-endian on the wire). They are defined once, beside each header's view in
/// [`crate::wire`]; the software parser reads them through those views and the NIC's parser
/// derives its window offsets and step spans from the same ranges.
pub mod field {
    pub use crate::wire::ethernet::field as ethernet;
    pub use crate::wire::ipv4::field as ipv4;
    pub use crate::wire::ipv6::field as ipv6;
    /// An IPv6 extension header of the kinds in [`crate::frame::ipv6_ext`].
    pub use crate::wire::ipv6_ext::field as ext;
    pub use crate::wire::tcp::field as tcp;
    pub use crate::wire::udp::field as udp;
    /// A VLAN tag (802.1Q / 802.1ad), counted from the tag's TCI.
    pub use crate::wire::vlan::field as vlan;
}

#[cfg(test)]
mod tests {
    use super::field::*;

    /// An IPv4 header (IHL 5, total length 40, DF, TCP, 10.0.0.1 -> 10.0.0.2) and a TCP
    /// header (5000 -> 80, data offset 5), read through the field ranges.
    #[test]
    fn field_ranges_decode_fixed_headers() {
        let ip = [0x45, 0, 0, 40, 0, 0, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
        assert_eq!(ip.len(), ipv4::MIN_HEADER_LEN);
        assert_eq!(ip[ipv4::VER_IHL] >> 4, ipv4::VERSION);
        assert_eq!(&ip[ipv4::TOTAL_LEN], &[0, 40]);
        assert_eq!(u16::from_be_bytes([ip[6], ip[7]]) & ipv4::FRAG_OFFSET_MASK, 0);
        assert_eq!(ip[ipv4::FLAGS_FRAG][0], 0x40);
        assert_eq!(ip[ipv4::PROTOCOL], crate::key::PROTO_TCP);
        assert_eq!(&ip[ipv4::SOURCE], &[10, 0, 0, 1]);
        assert_eq!(&ip[ipv4::DESTINATION], &[10, 0, 0, 2]);
        let tcp_hdr = [0x13, 0x88, 0, 80, 0, 0, 0, 0, 0, 0, 0, 0, 0x50, 0x02, 0, 0, 0, 0, 0, 0];
        assert_eq!(tcp_hdr.len(), tcp::MIN_HEADER_LEN);
        assert_eq!(&tcp_hdr[tcp::SRC_PORT], &[0x13, 0x88]);
        assert_eq!(&tcp_hdr[tcp::DST_PORT], &[0, 80]);
        assert_eq!(tcp_hdr[tcp::DATA_OFFSET] >> 4, 5);
    }

    /// Every field lies inside its header, so a parser that checked the header's length
    /// may read it.
    #[test]
    fn fields_lie_within_their_headers() {
        for r in [ipv4::TOTAL_LEN, ipv4::FLAGS_FRAG, ipv4::SOURCE, ipv4::DESTINATION] {
            assert!(r.end <= ipv4::MIN_HEADER_LEN, "{r:?}");
        }
        for r in [ipv6::PAYLOAD_LEN, ipv6::SOURCE, ipv6::DESTINATION] {
            assert!(r.end <= ipv6::HEADER_LEN, "{r:?}");
        }
        assert_eq!(ipv6::SOURCE.len(), 16);
        assert_eq!(ipv6::DESTINATION.len(), 16);
    }
}
