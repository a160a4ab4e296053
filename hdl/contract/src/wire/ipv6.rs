//! The fixed IPv6 header (RFC 8200). Extension headers: [`super::ipv6_ext`].
//!
//! ```text
//! +0  version (4 bits), traffic class (8), flow label (20)   +4  payload length (u16)
//! +6  next header   +7  hop limit   +8  source (16)   +24  destination (16)   +40
//! ```
//! A payload length of 0 is a jumbogram (RFC 2675) or a capture of a GRO/BIG TCP packet:
//! the length is whatever the buffer holds.

use super::{array, get16, need, put16, Error, Header};

/// Byte ranges of the fixed IPv6 header.
pub mod field {
    use core::ops::Range;
    /// Version in the high nibble, then traffic class and flow label.
    pub const VER_TC: usize = 0;
    pub const VER_TC_FLOW: Range<usize> = 0..4;
    pub const PAYLOAD_LEN: Range<usize> = 4..6;
    pub const NEXT_HEADER: usize = 6;
    pub const HOP_LIMIT: usize = 7;
    pub const SOURCE: Range<usize> = 8..24;
    pub const DESTINATION: Range<usize> = 24..40;
    pub const HEADER_LEN: usize = 40;
    pub const VERSION: u8 = 6;
    const _: () = assert!(DESTINATION.end == HEADER_LEN);
}

/// A view of an IPv6 packet: `new_checked` asks for the fixed header and version 6.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv6Packet<T: AsRef<[u8]>> {
    buf: T,
}

impl<T: AsRef<[u8]>> Ipv6Packet<T> {
    #[inline]
    pub fn new_checked(buf: T) -> Result<Self, Error> {
        need(Header::Ipv6, buf.as_ref(), field::HEADER_LEN)?;
        let p = Ipv6Packet { buf };
        if p.version() != field::VERSION {
            return Err(Error::Version { header: Header::Ipv6, version: p.version() });
        }
        Ok(p)
    }

    /// A view without checks, for writing a header into a buffer of at least 40 bytes.
    #[inline]
    pub fn new_unchecked(buf: T) -> Self {
        Ipv6Packet { buf }
    }

    fn word0(&self) -> u32 {
        super::get32(self.buf.as_ref(), field::VER_TC_FLOW)
    }

    #[inline]
    pub fn version(&self) -> u8 {
        self.buf.as_ref()[field::VER_TC] >> 4
    }

    #[inline]
    pub fn traffic_class(&self) -> u8 {
        (self.word0() >> 20) as u8
    }

    #[inline]
    pub fn flow_label(&self) -> u32 {
        self.word0() & 0x000F_FFFF
    }

    #[inline]
    pub fn payload_len(&self) -> u16 {
        get16(self.buf.as_ref(), field::PAYLOAD_LEN)
    }

    #[inline]
    pub fn next_header(&self) -> u8 {
        self.buf.as_ref()[field::NEXT_HEADER]
    }

    #[inline]
    pub fn hop_limit(&self) -> u8 {
        self.buf.as_ref()[field::HOP_LIMIT]
    }

    #[inline]
    pub fn src_addr(&self) -> [u8; 16] {
        array(self.buf.as_ref(), field::SOURCE)
    }

    #[inline]
    pub fn dst_addr(&self) -> [u8; 16] {
        array(self.buf.as_ref(), field::DESTINATION)
    }

    /// The bytes after the fixed header, up to the payload length or the end of the
    /// buffer; all of the buffer for payload length 0 (see the module docs).
    #[inline]
    pub fn payload(&self) -> &[u8] {
        let b = self.buf.as_ref();
        let n = self.payload_len() as usize;
        let end = if n == 0 { b.len() } else { b.len().min(field::HEADER_LEN + n) };
        &b[field::HEADER_LEN..end]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv6Packet<T> {
    /// Sets version 6 with the traffic class and flow label.
    #[inline]
    pub fn set_version_class_flow(&mut self, traffic_class: u8, flow_label: u32) {
        let w = (field::VERSION as u32) << 28 | (traffic_class as u32) << 20 | flow_label & 0x000F_FFFF;
        super::put32(self.buf.as_mut(), field::VER_TC_FLOW, w);
    }

    /// Sets the raw first byte (adversarial frames: any version).
    #[inline]
    pub fn set_ver_tc_byte(&mut self, byte: u8) {
        self.buf.as_mut()[field::VER_TC] = byte;
    }

    #[inline]
    pub fn set_payload_len(&mut self, len: u16) {
        put16(self.buf.as_mut(), field::PAYLOAD_LEN, len);
    }

    #[inline]
    pub fn set_next_header(&mut self, next: u8) {
        self.buf.as_mut()[field::NEXT_HEADER] = next;
    }

    #[inline]
    pub fn set_hop_limit(&mut self, hops: u8) {
        self.buf.as_mut()[field::HOP_LIMIT] = hops;
    }

    #[inline]
    pub fn set_src_addr(&mut self, a: [u8; 16]) {
        self.buf.as_mut()[field::SOURCE].copy_from_slice(&a);
    }

    #[inline]
    pub fn set_dst_addr(&mut self, a: [u8; 16]) {
        self.buf.as_mut()[field::DESTINATION].copy_from_slice(&a);
    }

    /// What a router does before forwarding: hop limit minus one (IPv6 has no header
    /// checksum). `None`, and nothing changed, when it is already 0.
    #[inline]
    pub fn decrement_hop_limit(&mut self) -> Option<u8> {
        let h = self.hop_limit().checked_sub(1)?;
        self.set_hop_limit(h);
        Some(h)
    }
}

/// The fields of the fixed IPv6 header (the payload length stated, as for IPv4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ipv6Repr {
    pub src_addr: [u8; 16],
    pub dst_addr: [u8; 16],
    pub next_header: u8,
    pub hop_limit: u8,
    pub traffic_class: u8,
    pub flow_label: u32,
    pub payload_len: u16,
}

impl Ipv6Repr {
    pub const LEN: usize = field::HEADER_LEN;

    /// Hop limit 64, traffic class and flow label 0.
    #[inline]
    pub fn new(src_addr: [u8; 16], dst_addr: [u8; 16], next_header: u8, payload_len: u16) -> Self {
        Ipv6Repr {
            src_addr,
            dst_addr,
            next_header,
            hop_limit: 64,
            traffic_class: 0,
            flow_label: 0,
            payload_len,
        }
    }

    #[inline]
    pub fn parse<T: AsRef<[u8]>>(p: &Ipv6Packet<T>) -> Self {
        Ipv6Repr {
            src_addr: p.src_addr(),
            dst_addr: p.dst_addr(),
            next_header: p.next_header(),
            hop_limit: p.hop_limit(),
            traffic_class: p.traffic_class(),
            flow_label: p.flow_label(),
            payload_len: p.payload_len(),
        }
    }

    #[inline]
    pub fn emit(&self, out: &mut Vec<u8>) {
        let at = out.len();
        out.resize(at + field::HEADER_LEN, 0);
        let mut p = Ipv6Packet::new_unchecked(&mut out[at..]);
        p.set_version_class_flow(self.traffic_class, self.flow_label);
        p.set_payload_len(self.payload_len);
        p.set_next_header(self.next_header);
        p.set_hop_limit(self.hop_limit);
        p.set_src_addr(self.src_addr);
        p.set_dst_addr(self.dst_addr);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Traffic class 0xB8, flow label 0x12345, payload 8, UDP, hop limit 64.
    fn bytes() -> Vec<u8> {
        let mut b = vec![0x6B, 0x81, 0x23, 0x45, 0, 8, 17, 64];
        b.extend_from_slice(&[0x20; 16]);
        b.extend_from_slice(&[0x30; 16]);
        b.extend_from_slice(&[0, 7, 0, 9, 0, 8, 0, 0]);
        b
    }

    #[test]
    fn decode_fixed_bytes_and_encode_back() {
        let b = bytes();
        let p = Ipv6Packet::new_checked(&b[..]).unwrap();
        let r = Ipv6Repr::parse(&p);
        assert_eq!((r.traffic_class, r.flow_label, r.payload_len), (0xB8, 0x12345, 8));
        assert_eq!((r.next_header, r.hop_limit, r.src_addr, r.dst_addr), (17, 64, [0x20; 16], [0x30; 16]));
        assert_eq!(p.payload(), &b[40..]);
        let mut out = Vec::new();
        r.emit(&mut out);
        assert_eq!(out, b[..40]);
    }

    #[test]
    fn jumbogram_payload_is_the_whole_buffer_and_faults_are_named() {
        let mut b = bytes();
        b[4..6].copy_from_slice(&[0, 0]);
        b.resize(300, 0);
        assert_eq!(Ipv6Packet::new_checked(&b[..]).unwrap().payload().len(), 260);
        assert_eq!(
            Ipv6Packet::new_checked(&b[..39]).unwrap_err(),
            Error::Truncated { header: Header::Ipv6, need: 40, have: 39 }
        );
        b[0] = 0x40;
        assert_eq!(
            Ipv6Packet::new_checked(&b[..]).unwrap_err(),
            Error::Version { header: Header::Ipv6, version: 4 }
        );
        let mut p = Ipv6Packet::new_unchecked(&mut b[..]);
        p.set_hop_limit(1);
        assert_eq!((p.decrement_hop_limit(), p.decrement_hop_limit()), (Some(0), None));
    }
}
