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
    /// Fragment header: fixed 8 bytes; a non-zero offset means no transport header.
    pub const FRAGMENT: u8 = 44;
    /// Authentication header: length field in 4-byte units, not counting the first 8.
    pub const AUTH: u8 = 51;
    /// Destination options: same length rule as hop-by-hop.
    pub const DEST_OPTS: u8 = 60;
}
