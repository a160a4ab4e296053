//! The IPv6 extension headers the parsers skip to reach the transport header (their
//! next-header values: [`crate::frame::ipv6_ext`]).
//!
//! ```text
//! +0  next header   +1  length (hop-by-hop, routing, destination options: 8-byte units
//!                       after the first 8; AH: 4-byte units after the first 8;
//!                       fragment: reserved, the header is always 8 bytes)
//! fragment only: +2  offset (13 bits, 8-byte units), 2 reserved bits, M flag   +4  ident
//! ```

use super::{get16, get32, need, Error, Header};
use crate::frame::ipv6_ext::{AUTH, DEST_OPTS, FRAGMENT, HOP_BY_HOP, ROUTING};

/// Byte ranges of an extension header.
pub mod field {
    use core::ops::Range;
    pub const NEXT_HEADER: usize = 0;
    /// Length: in 8-byte units after the first 8 (4-byte units for AH, after the first 8).
    pub const LEN: usize = 1;
    /// Fragment header only: the offset in 8-byte units, above 3 flag bits.
    pub const FRAG_OFFSET: Range<usize> = 2..4;
    pub const FRAG_OFFSET_MASK: u16 = 0xFFF8;
    /// Fragment header only: the M (more fragments) flag in the low bit of [`FRAG_OFFSET`].
    pub const FRAG_MORE: u16 = 0x0001;
    /// Fragment header only: the identification.
    pub const FRAG_IDENT: Range<usize> = 4..8;
    /// The fragment header's fixed length, and the least of every extension header.
    pub const MIN_HEADER_LEN: usize = 8;
    const _: () = assert!(FRAG_IDENT.end == MIN_HEADER_LEN);
}

/// Whether `next_header` names an extension header the parsers skip.
#[inline]
pub fn is_skipped(next_header: u8) -> bool {
    matches!(next_header, HOP_BY_HOP | ROUTING | DEST_OPTS | FRAGMENT | AUTH)
}

/// The length of the extension header of kind `kind` at the start of `buf`, read from the
/// bytes that state it (2, or the whole 8 of a fragment header); the header itself may
/// still be cut short. `None` for a kind that is not skipped.
#[inline]
pub fn header_len(kind: u8, buf: &[u8]) -> Option<Result<usize, Error>> {
    let stated = |unit: usize| {
        need(Header::Ipv6Ext, buf, field::LEN + 1).map(|_| (buf[field::LEN] as usize + 8 / unit) * unit)
    };
    Some(match kind {
        HOP_BY_HOP | ROUTING | DEST_OPTS => stated(8),
        AUTH => stated(4),
        FRAGMENT => need(Header::Ipv6Ext, buf, field::MIN_HEADER_LEN).map(|_| field::MIN_HEADER_LEN),
        _ => return None,
    })
}

/// A view of one extension header of a known kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv6ExtHeader<T: AsRef<[u8]>> {
    buf: T,
    kind: u8,
    len: usize,
}

impl<T: AsRef<[u8]>> Ipv6ExtHeader<T> {
    /// The view of the header of kind `kind` (the previous header's next-header value) at
    /// the start of `buf`, once the whole header is there.
    #[inline]
    pub fn new_checked(buf: T, kind: u8) -> Result<Self, Error> {
        let value = kind as u64;
        let len = header_len(kind, buf.as_ref()).ok_or(Error::Field {
            header: Header::Ipv6Ext,
            field: "kind",
            value,
        })??;
        need(Header::Ipv6Ext, buf.as_ref(), len)?;
        Ok(Ipv6ExtHeader { buf, kind, len })
    }

    #[inline]
    pub fn kind(&self) -> u8 {
        self.kind
    }

    #[inline]
    pub fn next_header(&self) -> u8 {
        self.buf.as_ref()[field::NEXT_HEADER]
    }

    /// Length of the header in bytes.
    #[inline]
    pub fn header_len(&self) -> usize {
        self.len
    }

    /// The header's bytes after next header and length.
    #[inline]
    pub fn data(&self) -> &[u8] {
        &self.buf.as_ref()[field::LEN + 1..self.len]
    }

    /// Fragment header: the offset in 8-byte units (0 for other kinds). Non-zero means
    /// the rest of the packet is fragment data (RFC 8200 section 4.5).
    #[inline]
    pub fn frag_offset(&self) -> u16 {
        match self.kind {
            FRAGMENT => get16(self.buf.as_ref(), field::FRAG_OFFSET) >> 3,
            _ => 0,
        }
    }

    /// Fragment header: the M flag.
    #[inline]
    pub fn more_fragments(&self) -> bool {
        self.kind == FRAGMENT && get16(self.buf.as_ref(), field::FRAG_OFFSET) & field::FRAG_MORE != 0
    }

    /// Fragment header: the identification (0 for other kinds).
    #[inline]
    pub fn frag_ident(&self) -> u32 {
        match self.kind {
            FRAGMENT => get32(self.buf.as_ref(), field::FRAG_IDENT),
            _ => 0,
        }
    }

    /// What follows the header.
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.buf.as_ref()[self.len..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv6ExtHeader<T> {
    /// Sets the raw length byte (a fragment header's reserved byte; adversarial frames
    /// with a length that disagrees with what follows).
    #[inline]
    pub fn set_len_byte(&mut self, b: u8) {
        self.buf.as_mut()[field::LEN] = b;
    }
}

/// One extension header: its kind, next header and the bytes after the first two (the
/// length byte follows from them; a fragment header's reserved byte there is emitted as 0).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ipv6ExtRepr {
    pub kind: u8,
    pub next_header: u8,
    pub data: Vec<u8>,
}

impl Ipv6ExtRepr {
    /// A hop-by-hop, routing or destination-options header of `units` 8-byte units, its
    /// option area zero (Pad1 options).
    #[inline]
    pub fn options(kind: u8, next_header: u8, units: usize) -> Self {
        Ipv6ExtRepr { kind, next_header, data: vec![0; units * 8 - 2] }
    }

    /// A fragment header.
    #[inline]
    pub fn fragment(next_header: u8, offset: u16, more: bool, ident: u32) -> Self {
        let mut data = (offset << 3 | more as u16).to_be_bytes().to_vec();
        data.extend_from_slice(&ident.to_be_bytes());
        Ipv6ExtRepr { kind: FRAGMENT, next_header, data }
    }

    #[inline]
    pub fn header_len(&self) -> usize {
        self.data.len() + 2
    }

    #[inline]
    pub fn parse<T: AsRef<[u8]>>(h: &Ipv6ExtHeader<T>) -> Self {
        Ipv6ExtRepr { kind: h.kind, next_header: h.next_header(), data: h.data().to_vec() }
    }

    /// The length byte for this kind and size, or why none can state it.
    fn len_byte(&self) -> Result<u8, Error> {
        let n = self.header_len();
        let bad = || Error::Field { header: Header::Ipv6Ext, field: "length", value: n as u64 };
        let units = |unit: usize| {
            if !n.is_multiple_of(unit) || n < 8 {
                return Err(bad());
            }
            u8::try_from(n / unit - 8 / unit).map_err(|_| bad())
        };
        match self.kind {
            HOP_BY_HOP | ROUTING | DEST_OPTS => units(8),
            AUTH => units(4),
            FRAGMENT if n == field::MIN_HEADER_LEN => Ok(0),
            FRAGMENT => Err(bad()),
            k => Err(Error::Field { header: Header::Ipv6Ext, field: "kind", value: k as u64 }),
        }
    }

    #[inline]
    pub fn emit(&self, out: &mut Vec<u8>) -> Result<(), Error> {
        let len = self.len_byte()?;
        out.push(self.next_header);
        out.push(len);
        out.extend_from_slice(&self.data);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hop-by-hop (16 bytes) -> AH (12 bytes) -> fragment (offset 185, M, id 0xC0FFEE01) -> UDP.
    const BYTES: [u8; 36] = [
        51, 1, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // hop-by-hop, len 1
        44, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // AH, len 1 (4-byte units after 8)
        17, 0, 0x05, 0xC9, 0xC0, 0xFF, 0xEE, 0x01, // fragment
    ];

    #[test]
    fn decode_fixed_bytes_and_encode_back() {
        let mut rest = &BYTES[..];
        let mut kind = HOP_BY_HOP;
        let mut out = Vec::new();
        let mut lens = Vec::new();
        while is_skipped(kind) {
            let h = Ipv6ExtHeader::new_checked(rest, kind).unwrap();
            lens.push(h.header_len());
            Ipv6ExtRepr::parse(&h).emit(&mut out).unwrap();
            if kind == FRAGMENT {
                assert_eq!((h.frag_offset(), h.more_fragments(), h.frag_ident()), (185, true, 0xC0FF_EE01));
            }
            kind = h.next_header();
            rest = &rest[h.header_len()..];
        }
        assert_eq!((lens, kind), (vec![16, 12, 8], 17));
        assert_eq!(out, BYTES);
        let mut frag = Vec::new();
        Ipv6ExtRepr::fragment(17, 185, true, 0xC0FF_EE01).emit(&mut frag).unwrap();
        assert_eq!(frag, BYTES[28..]);
        let mut h = Ipv6ExtHeader::new_checked(&mut frag[..], FRAGMENT).unwrap();
        h.set_len_byte(0x5A);
        assert_eq!(frag[1], 0x5A);
    }

    #[test]
    fn cut_headers_and_bad_lengths_are_named() {
        assert_eq!(
            header_len(HOP_BY_HOP, &[6]),
            Some(Err(Error::Truncated { header: Header::Ipv6Ext, need: 2, have: 1 }))
        );
        assert_eq!(
            header_len(FRAGMENT, &[6; 7]).unwrap().unwrap_err().to_string(),
            "IPv6 extension header truncated: needs 8 bytes, has 7"
        );
        assert_eq!(header_len(6, &[0; 8]), None);
        assert!(Ipv6ExtHeader::new_checked(&BYTES[..15], HOP_BY_HOP).is_err());
        let bad = Ipv6ExtRepr { kind: DEST_OPTS, next_header: 6, data: vec![0; 7] };
        assert!(matches!(bad.emit(&mut Vec::new()), Err(Error::Field { field: "length", .. })));
    }
}
