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
/// (big-endian on the wire). The software parser reads them from a slice; the NIC's parser
/// derives its window offsets and step spans from the same ranges.
pub mod field {
    /// Ethernet II.
    pub mod ethernet {
        use core::ops::Range;
        pub const DESTINATION: Range<usize> = 0..6;
        pub const SOURCE: Range<usize> = 6..12;
        pub const ETHERTYPE: Range<usize> = 12..14;
        /// Length of the header; a VLAN tag or the payload follows.
        pub const HEADER_LEN: usize = 14;
    }

    /// A VLAN tag (802.1Q / 802.1ad), counted from the tag's TCI, i.e. after the EtherType
    /// that announced it.
    pub mod vlan {
        use core::ops::Range;
        pub const TCI: Range<usize> = 0..2;
        /// The EtherType of what follows the tag.
        pub const ETHERTYPE: Range<usize> = 2..4;
        pub const TAG_LEN: usize = 4;
    }

    /// IPv4.
    pub mod ipv4 {
        use core::ops::Range;
        /// Version (high nibble) and IHL in 32-bit words (low nibble).
        pub const VER_IHL: usize = 0;
        pub const TOTAL_LEN: Range<usize> = 2..4;
        /// Flags (top 3 bits) and the fragment offset ([`FRAG_OFFSET_MASK`]).
        pub const FLAGS_FRAG: Range<usize> = 6..8;
        pub const FRAG_OFFSET_MASK: u16 = 0x1FFF;
        pub const PROTOCOL: usize = 9;
        pub const SOURCE: Range<usize> = 12..16;
        pub const DESTINATION: Range<usize> = 16..20;
        /// The header without options (IHL 5).
        pub const MIN_HEADER_LEN: usize = 20;
        pub const VERSION: u8 = 4;
    }

    /// IPv6 (the fixed header).
    pub mod ipv6 {
        use core::ops::Range;
        /// Version in the high nibble.
        pub const VER_TC: usize = 0;
        pub const PAYLOAD_LEN: Range<usize> = 4..6;
        pub const NEXT_HEADER: usize = 6;
        pub const SOURCE: Range<usize> = 8..24;
        pub const DESTINATION: Range<usize> = 24..40;
        pub const HEADER_LEN: usize = 40;
        pub const VERSION: u8 = 6;
    }

    /// An IPv6 extension header of the kinds in [`crate::frame::ipv6_ext`].
    pub mod ext {
        use core::ops::Range;
        pub const NEXT_HEADER: usize = 0;
        /// Length: in 8-byte units after the first 8 (4-byte units for AH, after the first 8).
        pub const LEN: usize = 1;
        /// Fragment header only: the offset in 8-byte units, above 3 flag bits.
        pub const FRAG_OFFSET: Range<usize> = 2..4;
        pub const FRAG_OFFSET_MASK: u16 = 0xFFF8;
        /// The fragment header's fixed length, and the least of every extension header.
        pub const MIN_HEADER_LEN: usize = 8;
    }

    /// TCP.
    pub mod tcp {
        use core::ops::Range;
        pub const SRC_PORT: Range<usize> = 0..2;
        pub const DST_PORT: Range<usize> = 2..4;
        /// Data offset in 32-bit words (high nibble).
        pub const DATA_OFFSET: usize = 12;
        pub const MIN_HEADER_LEN: usize = 20;
    }

    /// UDP.
    pub mod udp {
        use core::ops::Range;
        pub const SRC_PORT: Range<usize> = 0..2;
        pub const DST_PORT: Range<usize> = 2..4;
        pub const HEADER_LEN: usize = 8;
    }

    // Fields that a single bound keeps inside their headers (the others: the tests below).
    const _: () = assert!(ethernet::ETHERTYPE.end <= ethernet::HEADER_LEN);
    const _: () = assert!(vlan::ETHERTYPE.end <= vlan::TAG_LEN);
    const _: () = assert!(ext::FRAG_OFFSET.end <= ext::MIN_HEADER_LEN);
    const _: () = assert!(tcp::DATA_OFFSET < tcp::MIN_HEADER_LEN);
    const _: () = assert!(udp::DST_PORT.end <= udp::HEADER_LEN);
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
