//! The UDP header (RFC 768). Length and checksum are carried as values: the length of a
//! jumbogram's UDP header is 0 (RFC 2675), and nobody on the path checks the checksum.
//!
//! ```text
//! +0  source port   +2  destination port   +4  length (header + data)   +6  checksum   +8
//! ```

use super::{get16, need, put16, Error, Header};

/// Byte ranges of the UDP fields.
pub mod field {
    use core::ops::Range;
    pub const SRC_PORT: Range<usize> = 0..2;
    pub const DST_PORT: Range<usize> = 2..4;
    pub const LENGTH: Range<usize> = 4..6;
    pub const CHECKSUM: Range<usize> = 6..8;
    pub const HEADER_LEN: usize = 8;
    const _: () = assert!(CHECKSUM.end == HEADER_LEN);
}

/// A view of a UDP header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpPacket<T: AsRef<[u8]>> {
    buf: T,
}

impl<T: AsRef<[u8]>> UdpPacket<T> {
    #[inline(always)]
    pub fn new_checked(buf: T) -> Result<Self, Error> {
        need(Header::Udp, buf.as_ref(), field::HEADER_LEN)?;
        Ok(UdpPacket { buf })
    }

    #[inline(always)]
    pub fn src_port(&self) -> u16 {
        get16(self.buf.as_ref(), field::SRC_PORT)
    }

    #[inline(always)]
    pub fn dst_port(&self) -> u16 {
        get16(self.buf.as_ref(), field::DST_PORT)
    }

    #[inline(always)]
    pub fn len(&self) -> u16 {
        get16(self.buf.as_ref(), field::LENGTH)
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len() as usize <= field::HEADER_LEN
    }

    #[inline]
    pub fn checksum(&self) -> u16 {
        get16(self.buf.as_ref(), field::CHECKSUM)
    }

    #[inline(always)]
    pub fn payload(&self) -> &[u8] {
        &self.buf.as_ref()[field::HEADER_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> UdpPacket<T> {
    #[inline]
    pub fn set_src_port(&mut self, p: u16) {
        put16(self.buf.as_mut(), field::SRC_PORT, p);
    }

    #[inline]
    pub fn set_dst_port(&mut self, p: u16) {
        put16(self.buf.as_mut(), field::DST_PORT, p);
    }

    #[inline]
    pub fn set_len(&mut self, v: u16) {
        put16(self.buf.as_mut(), field::LENGTH, v);
    }

    #[inline]
    pub fn set_checksum(&mut self, v: u16) {
        put16(self.buf.as_mut(), field::CHECKSUM, v);
    }
}

/// The fields of a UDP header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UdpRepr {
    pub src_port: u16,
    pub dst_port: u16,
    /// Header plus data in bytes; 0 for a jumbogram.
    pub length: u16,
    pub checksum: u16,
}

impl UdpRepr {
    pub const LEN: usize = field::HEADER_LEN;

    /// The ports, length 8 (no data) and checksum 0 (none computed).
    #[inline]
    pub fn new(src_port: u16, dst_port: u16) -> Self {
        UdpRepr { src_port, dst_port, length: field::HEADER_LEN as u16, checksum: 0 }
    }

    #[inline]
    pub fn parse<T: AsRef<[u8]>>(p: &UdpPacket<T>) -> Self {
        UdpRepr { src_port: p.src_port(), dst_port: p.dst_port(), length: p.len(), checksum: p.checksum() }
    }

    #[inline]
    pub fn emit(&self, out: &mut Vec<u8>) {
        for v in [self.src_port, self.dst_port, self.length, self.checksum] {
            out.extend_from_slice(&v.to_be_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BYTES: [u8; 10] = [0x13, 0x88, 0x00, 0x35, 0, 10, 0x12, 0x34, 0xAA, 0xBB];

    #[test]
    fn decode_fixed_bytes_and_encode_back() {
        let p = UdpPacket::new_checked(&BYTES[..]).unwrap();
        let r = UdpRepr::parse(&p);
        assert_eq!(r, UdpRepr { src_port: 5000, dst_port: 53, length: 10, checksum: 0x1234 });
        assert_eq!(p.payload(), &[0xAA, 0xBB]);
        let mut out = Vec::new();
        r.emit(&mut out);
        assert_eq!(out, BYTES[..8]);
        let mut b = [0u8; 8];
        let mut w = UdpPacket::new_checked(&mut b[..]).unwrap();
        w.set_src_port(5000);
        w.set_dst_port(53);
        w.set_len(10);
        w.set_checksum(0x1234);
        assert_eq!(b, BYTES[..8]);
        assert_eq!(
            UdpPacket::new_checked(&BYTES[..7]).unwrap_err(),
            Error::Truncated { header: Header::Udp, need: 8, have: 7 }
        );
    }
}
