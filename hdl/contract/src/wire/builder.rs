//! The one frame builder: a [`FrameSpec`] (Ethernet, 0..2 VLAN tags of any tag EtherType,
//! an optional INT stack, IPv4 with options and fragment fields or IPv6 with extension
//! headers or another EtherType's body, TCP/UDP/another protocol's header, payload, frame
//! length, padding) to bytes. The trace generator and every test that needs a frame build
//! it here, so a header is laid out in one place (the views and reprs of [`crate::wire`]).
//!
//! Lengths: with [`Lengths::Derived`] (the default) the builder states the true IPv4 total
//! length, IPv6 payload length and UDP length of the frame it builds (the IPv6 and UDP ones
//! as 0 past 65,535 bytes, the jumbogram rule of RFC 2675; an IPv4 packet that long is an
//! error). With [`Lengths::Stated`] it emits the reprs' own values: hand-made frames whose
//! lengths disagree on purpose. The IPv4 header checksum is always computed.

use super::ethernet::MIN_FRAME_LEN;
use super::ipv4::Ipv4Repr;
use super::ipv6::Ipv6Repr;
use super::ipv6_ext::Ipv6ExtRepr;
use super::shim::{Hop, IntShim, ETHERTYPE_SHIM};
use super::tcp::TcpRepr;
use super::udp::UdpRepr;
use super::{Error, Header};
use crate::frame::{ETHERTYPE_IPV4, ETHERTYPE_IPV6};

/// One VLAN tag: the EtherType that announces it (0x8100, 0x88A8 or 0x9100) and its TCI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tag {
    pub tpid: u16,
    pub tci: u16,
}

/// The transport header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum L4 {
    Tcp(TcpRepr),
    Udp(UdpRepr),
    /// Another protocol's header bytes (ICMP, ...), or none.
    Raw(Vec<u8>),
}

impl L4 {
    /// Bytes of the header.
    pub fn header_len(&self) -> usize {
        match self {
            L4::Tcp(t) => t.header_len(),
            L4::Udp(_) => UdpRepr::LEN,
            L4::Raw(b) => b.len(),
        }
    }

    /// Emits the header; `len` is the transport length from this header to the end of the
    /// IP packet (for a derived UDP length).
    fn emit(&self, out: &mut Vec<u8>, len: usize, lengths: Lengths) -> Result<(), Error> {
        match self {
            L4::Tcp(t) => t.emit(out)?,
            L4::Udp(u) if lengths == Lengths::Derived => {
                UdpRepr { length: u16::try_from(len).unwrap_or(0), ..*u }.emit(out)
            }
            L4::Udp(u) => u.emit(out),
            L4::Raw(b) => out.extend_from_slice(b),
        }
        Ok(())
    }
}

/// What follows the Ethernet/VLAN/shim headers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum L3 {
    Ipv4 {
        header: Ipv4Repr,
        l4: L4,
    },
    Ipv6 {
        header: Ipv6Repr,
        ext: Vec<Ipv6ExtRepr>,
        l4: L4,
    },
    /// Another EtherType (ARP, ...) and its body.
    Other {
        ethertype: u16,
        body: Vec<u8>,
    },
}

impl L3 {
    fn ethertype(&self) -> u16 {
        match self {
            L3::Ipv4 { .. } => ETHERTYPE_IPV4,
            L3::Ipv6 { .. } => ETHERTYPE_IPV6,
            L3::Other { ethertype, .. } => *ethertype,
        }
    }

    /// Bytes of the L3 and L4 headers (the whole body for [`L3::Other`]).
    fn header_len(&self) -> usize {
        match self {
            L3::Ipv4 { header, l4 } => header.header_len() + l4.header_len(),
            L3::Ipv6 { ext, l4, .. } => {
                Ipv6Repr::LEN + ext.iter().map(Ipv6ExtRepr::header_len).sum::<usize>() + l4.header_len()
            }
            L3::Other { body, .. } => body.len(),
        }
    }
}

/// Whether the builder states the true lengths or the reprs' values (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Lengths {
    #[default]
    Derived,
    Stated,
}

/// Everything a built frame holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameSpec {
    pub destination: [u8; 6],
    pub source: [u8; 6],
    pub tags: Vec<Tag>,
    /// The INT stack's hops, when the frame carries a shim.
    pub shim: Option<Vec<Hop>>,
    pub l3: L3,
    /// Bytes after the L4 header.
    pub payload: Vec<u8>,
    /// The frame's length: the L3 packet is filled with `fill` up to it (never cut: a
    /// spec whose headers and payload are longer gives a longer frame).
    pub len: Option<usize>,
    pub fill: u8,
    /// Zero padding after the L3 packet up to this length (outside the IP lengths):
    /// [`MIN_FRAME_LEN`] for a frame a NIC would send, 0 for none.
    pub min_len: usize,
    pub lengths: Lengths,
}

impl FrameSpec {
    /// A frame between two MACs with no tags, no shim, no payload and no padding.
    pub fn new(destination: [u8; 6], source: [u8; 6], l3: L3) -> Self {
        FrameSpec {
            destination,
            source,
            tags: Vec::new(),
            shim: None,
            l3,
            payload: Vec::new(),
            len: None,
            fill: 0,
            min_len: 0,
            lengths: Lengths::Derived,
        }
    }

    /// Padded to the Ethernet minimum.
    pub fn padded(self) -> Self {
        FrameSpec { min_len: MIN_FRAME_LEN, ..self }
    }

    /// Bytes of the Ethernet, VLAN and shim headers.
    pub fn l2_len(&self) -> usize {
        let shim = self.shim.as_ref().map_or(0, |h| IntShim::encoded_len(h.len()));
        super::ethernet::field::HEADER_LEN + super::vlan::field::TAG_LEN * self.tags.len() + shim
    }

    /// Length of the L3 packet: headers and payload, filled up to `len`.
    fn l3_len(&self) -> usize {
        let own = self.l3.header_len() + self.payload.len();
        self.len.map_or(own, |n| own.max(n.saturating_sub(self.l2_len())))
    }

    /// The frame's length on the wire (the L3 packet, then padding to `min_len`).
    pub fn wire_len(&self) -> usize {
        (self.l2_len() + self.l3_len()).max(self.min_len)
    }

    /// The whole frame.
    pub fn build(&self) -> Result<Vec<u8>, Error> {
        let mut out = Vec::with_capacity(self.wire_len());
        self.emit_headers(&mut out)?;
        out.resize(self.l2_len() + self.l3_len(), self.fill);
        out.resize(self.wire_len(), 0);
        Ok(out)
    }

    /// Appends the headers and the stated payload only (a snap-length capture of the
    /// frame) to `out`; returns the frame's wire length.
    pub fn emit_headers(&self, out: &mut Vec<u8>) -> Result<usize, Error> {
        self.emit_l2(out);
        let l3_len = self.l3_len();
        match &self.l3 {
            L3::Ipv4 { header, l4 } => self.emit_ipv4(out, header, l4, l3_len)?,
            L3::Ipv6 { header, ext, l4 } => self.emit_ipv6(out, header, ext, l4, l3_len)?,
            L3::Other { body, .. } => out.extend_from_slice(body),
        }
        out.extend_from_slice(&self.payload);
        Ok(self.wire_len())
    }

    /// Ethernet, tags (each EtherType announcing the next header) and the shim.
    fn emit_l2(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.destination);
        out.extend_from_slice(&self.source);
        for t in &self.tags {
            out.extend_from_slice(&t.tpid.to_be_bytes());
            out.extend_from_slice(&t.tci.to_be_bytes());
        }
        match &self.shim {
            Some(hops) => {
                out.extend_from_slice(&ETHERTYPE_SHIM.to_be_bytes());
                IntShim::emit_hops(self.l3.ethertype(), hops, out);
            }
            None => out.extend_from_slice(&self.l3.ethertype().to_be_bytes()),
        }
    }

    fn emit_ipv4(&self, out: &mut Vec<u8>, h: &Ipv4Repr, l4: &L4, len: usize) -> Result<(), Error> {
        let mut h = h.clone();
        if self.lengths == Lengths::Derived {
            let value = len as u64;
            h.total_len = u16::try_from(len).map_err(|_| Error::Field {
                header: Header::Ipv4,
                field: "total length",
                value,
            })?;
        }
        h.emit(out)?;
        l4.emit(out, len - h.header_len(), self.lengths)
    }

    fn emit_ipv6(
        &self,
        out: &mut Vec<u8>,
        h: &Ipv6Repr,
        ext: &[Ipv6ExtRepr],
        l4: &L4,
        len: usize,
    ) -> Result<(), Error> {
        let mut h = *h;
        if self.lengths == Lengths::Derived {
            h.payload_len = u16::try_from(len - Ipv6Repr::LEN).unwrap_or(0);
        }
        h.emit(out);
        let mut rest = len - Ipv6Repr::LEN;
        for e in ext {
            e.emit(out)?;
            rest -= e.header_len();
        }
        l4.emit(out, rest, self.lengths)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{ipv6_ext, ETHERTYPE_ARP, ETHERTYPE_QINQ, ETHERTYPE_VLAN};
    use crate::wire::ipv4::{checksum, flags};

    const DST: [u8; 6] = [2, 0, 0, 0, 0, 1];
    const SRC: [u8; 6] = [2, 0, 0, 0, 0, 2];

    fn v4_udp() -> L3 {
        L3::Ipv4 {
            header: Ipv4Repr::new([10, 0, 0, 1], [10, 0, 0, 2], 17, 0),
            l4: L4::Udp(UdpRepr::new(5000, 53)),
        }
    }

    /// Two tags, a one-hop shim, IPv4 with DF, UDP, filled to 64 bytes: every byte known.
    #[test]
    fn builds_a_known_frame() {
        let spec = FrameSpec {
            tags: vec![Tag { tpid: ETHERTYPE_QINQ, tci: 100 }, Tag { tpid: ETHERTYPE_VLAN, tci: 10 }],
            shim: Some(vec![Hop { switch_id: 3, latency_ns: 256 }]),
            len: Some(80),
            ..FrameSpec::new(DST, SRC, v4_udp())
        };
        let f = spec.build().unwrap();
        let mut want =
            vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x88, 0xA8, 0, 100, 0x81, 0x00, 0, 10, 0x88, 0xB5];
        want.extend_from_slice(&[1, 0, 0x08, 0x00, 0, 1, 0, 3, 0, 0, 1, 0]);
        let ip = want.len();
        want.extend_from_slice(&[0x45, 0, 0, 46, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
        let c = checksum(&want[ip..]);
        want[ip + 10..ip + 12].copy_from_slice(&c.to_be_bytes());
        want.extend_from_slice(&[0x13, 0x88, 0, 53, 0, 26, 0, 0]);
        want.resize(80, 0);
        assert_eq!(f, want);
        assert_eq!(spec.wire_len(), 80);
        let mut hdr = Vec::new();
        assert_eq!(spec.emit_headers(&mut hdr).unwrap(), 80);
        assert_eq!(hdr, want[..ip + 28]);
    }

    #[test]
    fn ipv6_with_extension_headers_and_a_jumbogram() {
        let header = Ipv6Repr::new([0x20; 16], [0x30; 16], ipv6_ext::HOP_BY_HOP, 0);
        let ext = vec![
            Ipv6ExtRepr::options(ipv6_ext::HOP_BY_HOP, ipv6_ext::FRAGMENT, 1),
            Ipv6ExtRepr::fragment(17, 0, true, 1),
        ];
        let l3 = L3::Ipv6 { header, ext, l4: L4::Udp(UdpRepr::new(7, 9)) };
        let f = FrameSpec::new(DST, SRC, l3.clone()).build().unwrap();
        assert_eq!(f.len(), 14 + 40 + 16 + 8);
        assert_eq!(&f[18..20], &[0, 24], "payload length");
        assert_eq!(&f[54..62], &[44, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&f[62..70], &[17, 0, 0, 1, 0, 0, 0, 1]);
        assert_eq!(&f[74..76], &[0, 8], "UDP length");
        let jumbo =
            FrameSpec { len: Some(185_000), fill: 0x3C, ..FrameSpec::new(DST, SRC, l3) }.build().unwrap();
        assert_eq!(jumbo.len(), 185_000);
        assert_eq!((&jumbo[18..20], &jumbo[74..76]), (&[0, 0][..], &[0, 0][..]), "jumbogram: lengths 0");
        assert_eq!(jumbo[184_999], 0x3C);
    }

    #[test]
    fn padding_stays_outside_the_ip_lengths_and_other_ethertypes_pass() {
        let f = FrameSpec::new(DST, SRC, v4_udp()).padded().build().unwrap();
        assert_eq!(f.len(), MIN_FRAME_LEN);
        assert_eq!(&f[16..18], &[0, 28], "IPv4 total length without the padding");
        let arp =
            FrameSpec::new(DST, SRC, L3::Other { ethertype: ETHERTYPE_ARP, body: vec![9; 28] }).padded();
        let mut hdr = Vec::new();
        assert_eq!((arp.emit_headers(&mut hdr).unwrap(), hdr.len()), (60, 42));
    }

    #[test]
    fn stated_lengths_and_fragments_and_bad_specs() {
        let mut header = Ipv4Repr::new([10, 0, 0, 1], [10, 0, 0, 2], 17, 999);
        header.flags = flags::MF;
        header.frag_offset = 185;
        let l3 = L3::Ipv4 { header, l4: L4::Udp(UdpRepr::new(1, 2)) };
        let f =
            FrameSpec { lengths: Lengths::Stated, ..FrameSpec::new(DST, SRC, l3.clone()) }.build().unwrap();
        assert_eq!((&f[16..18], &f[20..22]), (&999u16.to_be_bytes()[..], &[0x20, 185][..]));
        assert_eq!(&f[38..40], &[0, 8], "UDP length as stated");
        let too_long = FrameSpec { len: Some(14 + 65_536), ..FrameSpec::new(DST, SRC, l3) }.build();
        assert_eq!(too_long.unwrap_err().to_string(), "IPv4 header: total length 65536 cannot be encoded");
    }
}
