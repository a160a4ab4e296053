//! The IPv4 header (RFC 791), its checksum (RFC 1071) and the incremental checksum update
//! of a TTL decrement (RFC 1624), the one edit a forwarding switch makes to it.
//!
//! ```text
//! +0  version (4 bits), IHL (4 bits, 32-bit words)   +1  TOS   +2  total length (u16)
//! +4  identification (u16)   +6  flags (3 bits), fragment offset (13 bits, 8-byte units)
//! +8  TTL   +9  protocol   +10  header checksum (u16)   +12  source   +16  destination
//! +20 options (IHL - 5 words)
//! ```

use super::{array, get16, need, put16, Error, Header};

/// Byte ranges of the IPv4 fields.
pub mod field {
    use core::ops::Range;
    /// Version (high nibble) and IHL in 32-bit words (low nibble).
    pub const VER_IHL: usize = 0;
    pub const TOS: usize = 1;
    pub const TOTAL_LEN: Range<usize> = 2..4;
    pub const IDENT: Range<usize> = 4..6;
    /// Flags (top 3 bits) and the fragment offset ([`FRAG_OFFSET_MASK`]).
    pub const FLAGS_FRAG: Range<usize> = 6..8;
    pub const FRAG_OFFSET_MASK: u16 = 0x1FFF;
    pub const TTL: usize = 8;
    pub const PROTOCOL: usize = 9;
    pub const CHECKSUM: Range<usize> = 10..12;
    pub const SOURCE: Range<usize> = 12..16;
    pub const DESTINATION: Range<usize> = 16..20;
    /// The header without options (IHL 5).
    pub const MIN_HEADER_LEN: usize = 20;
    /// The header with the most options (IHL 15).
    pub const MAX_HEADER_LEN: usize = 60;
    pub const VERSION: u8 = 4;
    const _: () = assert!(DESTINATION.end == MIN_HEADER_LEN);
}

/// Flag bits (the top 3 bits of [`field::FLAGS_FRAG`], as a 3-bit value).
pub mod flags {
    /// Reserved (must be 0).
    pub const RESERVED: u8 = 0b100;
    /// Don't fragment.
    pub const DF: u8 = 0b010;
    /// More fragments.
    pub const MF: u8 = 0b001;
}

/// The Internet checksum (RFC 1071) of `data` (even length; a header with its checksum
/// field zeroed gives the value to store, a whole header with it gives 0).
#[inline]
pub fn checksum(data: &[u8]) -> u16 {
    let mut sum: u32 =
        data.chunks(2).map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32).sum();
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

/// A view of an IPv4 packet. `new_checked` checks the header (version, IHL, the header
/// within the buffer, total length not below it); it does not ask for the whole packet,
/// because captures often hold only the headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Packet<T: AsRef<[u8]>> {
    buf: T,
}

impl<T: AsRef<[u8]>> Ipv4Packet<T> {
    /// The view, checked in the parsers' order: fixed header present, version 4, IHL >= 5,
    /// options present, total length >= header length.
    #[inline(always)]
    pub fn new_checked(buf: T) -> Result<Self, Error> {
        let b = buf.as_ref();
        need(Header::Ipv4, b, field::MIN_HEADER_LEN)?;
        let p = Ipv4Packet { buf };
        if p.version() != field::VERSION {
            return Err(Error::Version { header: Header::Ipv4, version: p.version() });
        }
        if p.header_len() < field::MIN_HEADER_LEN {
            return Err(Error::HeaderLen { header: Header::Ipv4, value: p.ihl() });
        }
        need(Header::Ipv4, p.buf.as_ref(), p.header_len())?;
        if (p.total_len() as usize) < p.header_len() {
            return Err(Error::TotalLen { header: Header::Ipv4, value: p.total_len() });
        }
        Ok(p)
    }

    /// A view without checks, for writing a header into a zeroed buffer (at least 20 bytes).
    #[inline(always)]
    pub fn new_unchecked(buf: T) -> Self {
        Ipv4Packet { buf }
    }

    #[inline(always)]
    pub fn into_inner(self) -> T {
        self.buf
    }

    #[inline(always)]
    pub fn version(&self) -> u8 {
        self.buf.as_ref()[field::VER_IHL] >> 4
    }

    /// IHL in 32-bit words.
    #[inline(always)]
    pub fn ihl(&self) -> u8 {
        self.buf.as_ref()[field::VER_IHL] & 0x0F
    }

    /// Header length in bytes, options included.
    #[inline(always)]
    pub fn header_len(&self) -> usize {
        self.ihl() as usize * 4
    }

    #[inline(always)]
    pub fn tos(&self) -> u8 {
        self.buf.as_ref()[field::TOS]
    }

    #[inline(always)]
    pub fn total_len(&self) -> u16 {
        get16(self.buf.as_ref(), field::TOTAL_LEN)
    }

    #[inline(always)]
    pub fn ident(&self) -> u16 {
        get16(self.buf.as_ref(), field::IDENT)
    }

    /// The 3 flag bits ([`flags`]).
    #[inline(always)]
    pub fn flags(&self) -> u8 {
        (get16(self.buf.as_ref(), field::FLAGS_FRAG) >> 13) as u8
    }

    /// Fragment offset in 8-byte units; non-zero for every fragment but the first.
    #[inline(always)]
    pub fn frag_offset(&self) -> u16 {
        get16(self.buf.as_ref(), field::FLAGS_FRAG) & field::FRAG_OFFSET_MASK
    }

    #[inline(always)]
    pub fn ttl(&self) -> u8 {
        self.buf.as_ref()[field::TTL]
    }

    #[inline(always)]
    pub fn protocol(&self) -> u8 {
        self.buf.as_ref()[field::PROTOCOL]
    }

    #[inline]
    pub fn checksum(&self) -> u16 {
        get16(self.buf.as_ref(), field::CHECKSUM)
    }

    #[inline(always)]
    pub fn src_addr(&self) -> [u8; 4] {
        array(self.buf.as_ref(), field::SOURCE)
    }

    #[inline(always)]
    pub fn dst_addr(&self) -> [u8; 4] {
        array(self.buf.as_ref(), field::DESTINATION)
    }

    #[inline(always)]
    pub fn options(&self) -> &[u8] {
        &self.buf.as_ref()[field::MIN_HEADER_LEN..self.header_len()]
    }

    /// Whether the stored checksum is the header's (the sum over the header is 0).
    #[inline(always)]
    pub fn verify_checksum(&self) -> bool {
        checksum(&self.buf.as_ref()[..self.header_len()]) == 0
    }

    /// The checksum the header's bytes call for.
    #[inline(always)]
    pub fn compute_checksum(&self) -> u16 {
        let h = &self.buf.as_ref()[..self.header_len()];
        let stored = self.checksum();
        // Adding the stored value back cancels it: the sum as if the field were 0.
        !ones_add(!checksum(h), !stored)
    }

    /// The bytes after the header, up to the total length or the end of the buffer,
    /// whichever comes first (bytes beyond the total length are Ethernet padding).
    #[inline(always)]
    pub fn payload(&self) -> &[u8] {
        let b = self.buf.as_ref();
        &b[self.header_len()..b.len().min(self.total_len() as usize)]
    }
}

/// One's complement addition of two 16-bit values.
fn ones_add(a: u16, b: u16) -> u16 {
    let s = a as u32 + b as u32;
    ((s & 0xFFFF) + (s >> 16)) as u16
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv4Packet<T> {
    /// Sets version 4 and the header length in bytes (a multiple of 4, 20..=60).
    #[inline]
    pub fn set_header_len(&mut self, len: usize) {
        self.buf.as_mut()[field::VER_IHL] = field::VERSION << 4 | (len / 4) as u8;
    }

    /// Sets the raw version/IHL byte (adversarial frames: any version, any IHL).
    #[inline]
    pub fn set_ver_ihl(&mut self, byte: u8) {
        self.buf.as_mut()[field::VER_IHL] = byte;
    }

    #[inline]
    pub fn set_tos(&mut self, tos: u8) {
        self.buf.as_mut()[field::TOS] = tos;
    }

    #[inline]
    pub fn set_total_len(&mut self, len: u16) {
        put16(self.buf.as_mut(), field::TOTAL_LEN, len);
    }

    #[inline]
    pub fn set_ident(&mut self, ident: u16) {
        put16(self.buf.as_mut(), field::IDENT, ident);
    }

    /// Sets the 3 flag bits and the 13-bit fragment offset.
    #[inline]
    pub fn set_flags_frag(&mut self, flags: u8, frag_offset: u16) {
        let v = (flags as u16 & 0b111) << 13 | frag_offset & field::FRAG_OFFSET_MASK;
        put16(self.buf.as_mut(), field::FLAGS_FRAG, v);
    }

    #[inline]
    pub fn set_ttl(&mut self, ttl: u8) {
        self.buf.as_mut()[field::TTL] = ttl;
    }

    #[inline]
    pub fn set_protocol(&mut self, proto: u8) {
        self.buf.as_mut()[field::PROTOCOL] = proto;
    }

    #[inline]
    pub fn set_checksum(&mut self, sum: u16) {
        put16(self.buf.as_mut(), field::CHECKSUM, sum);
    }

    #[inline]
    pub fn set_src_addr(&mut self, a: [u8; 4]) {
        self.buf.as_mut()[field::SOURCE].copy_from_slice(&a);
    }

    #[inline]
    pub fn set_dst_addr(&mut self, a: [u8; 4]) {
        self.buf.as_mut()[field::DESTINATION].copy_from_slice(&a);
    }

    #[inline]
    pub fn options_mut(&mut self) -> &mut [u8] {
        let end = self.header_len();
        &mut self.buf.as_mut()[field::MIN_HEADER_LEN..end]
    }

    /// Computes and stores the header checksum.
    #[inline]
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let sum = checksum(&self.buf.as_ref()[..self.header_len()]);
        self.set_checksum(sum);
    }

    /// What a router does before forwarding: TTL minus one, the checksum updated
    /// incrementally (RFC 1624 eqn. 3, so a header whose checksum was wrong stays exactly as
    /// wrong). Returns the new TTL, or `None` (and changes nothing) when the TTL is already
    /// 0 and the packet must be dropped.
    #[inline]
    pub fn decrement_ttl(&mut self) -> Option<u8> {
        let ttl = self.ttl().checked_sub(1)?;
        let proto = self.protocol() as u16;
        let old = (self.ttl() as u16) << 8 | proto;
        let new = (ttl as u16) << 8 | proto;
        // HC' = ~(~HC + ~m + m')
        let sum = !ones_add(ones_add(!self.checksum(), !old), new);
        self.set_ttl(ttl);
        self.set_checksum(sum);
        Some(ttl)
    }
}

/// The fields of an IPv4 header. The lengths are stated, not derived from a payload: a
/// capture often holds only the headers, and the header must still round-trip.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ipv4Repr {
    pub src_addr: [u8; 4],
    pub dst_addr: [u8; 4],
    pub protocol: u8,
    pub ttl: u8,
    pub tos: u8,
    pub ident: u16,
    /// The 3 flag bits ([`flags`]).
    pub flags: u8,
    /// In 8-byte units.
    pub frag_offset: u16,
    /// Options, a multiple of 4 bytes, at most 40.
    pub options: Vec<u8>,
    /// Header plus payload, in bytes.
    pub total_len: u16,
}

impl Ipv4Repr {
    /// A first fragment with DF set, TTL 64, no options: the common case.
    #[inline]
    pub fn new(src_addr: [u8; 4], dst_addr: [u8; 4], protocol: u8, total_len: u16) -> Self {
        Ipv4Repr {
            src_addr,
            dst_addr,
            protocol,
            ttl: 64,
            tos: 0,
            ident: 0,
            flags: flags::DF,
            frag_offset: 0,
            options: Vec::new(),
            total_len,
        }
    }

    #[inline(always)]
    pub fn header_len(&self) -> usize {
        field::MIN_HEADER_LEN + self.options.len()
    }

    /// The header's fields; the checksum must be right (a repr re-emits a computed one).
    #[inline]
    pub fn parse<T: AsRef<[u8]>>(p: &Ipv4Packet<T>) -> Result<Self, Error> {
        if !p.verify_checksum() {
            return Err(Error::Checksum {
                header: Header::Ipv4,
                stored: p.checksum(),
                computed: p.compute_checksum(),
            });
        }
        Ok(Ipv4Repr {
            src_addr: p.src_addr(),
            dst_addr: p.dst_addr(),
            protocol: p.protocol(),
            ttl: p.ttl(),
            tos: p.tos(),
            ident: p.ident(),
            flags: p.flags(),
            frag_offset: p.frag_offset(),
            options: p.options().to_vec(),
            total_len: p.total_len(),
        })
    }

    /// Appends the header, checksum filled, to `out`. Options that are not whole 32-bit
    /// words or longer than 40 bytes, and a total length below the header, are refused.
    #[inline]
    pub fn emit(&self, out: &mut Vec<u8>) -> Result<(), Error> {
        let hlen = self.header_len();
        if !self.options.len().is_multiple_of(4) || hlen > field::MAX_HEADER_LEN {
            let value = self.options.len() as u64;
            return Err(Error::Field { header: Header::Ipv4, field: "options length", value });
        }
        if (self.total_len as usize) < hlen {
            return Err(Error::TotalLen { header: Header::Ipv4, value: self.total_len });
        }
        let at = out.len();
        out.resize(at + hlen, 0);
        let mut p = Ipv4Packet::new_unchecked(&mut out[at..]);
        p.set_header_len(hlen);
        p.set_tos(self.tos);
        p.set_total_len(self.total_len);
        p.set_ident(self.ident);
        p.set_flags_frag(self.flags, self.frag_offset);
        p.set_ttl(self.ttl);
        p.set_protocol(self.protocol);
        p.set_src_addr(self.src_addr);
        p.set_dst_addr(self.dst_addr);
        p.options_mut().copy_from_slice(&self.options);
        p.fill_checksum();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// IHL 6 (NOP NOP NOP EOL), total length 115, id 0x1C46, DF, TTL 64, UDP,
    /// 192.168.0.1 -> 192.168.0.199, checksum right.
    fn bytes() -> Vec<u8> {
        let mut h = vec![0x46, 0x00, 0x00, 0x73, 0x1C, 0x46, 0x40, 0x00, 0x40, 0x11, 0, 0];
        h.extend_from_slice(&[0xC0, 0xA8, 0x00, 0x01, 0xC0, 0xA8, 0x00, 0xC7, 1, 1, 1, 0]);
        let c = checksum(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        h
    }

    #[test]
    fn checksum_known_vector() {
        // The RFC 1071 discussions' example header (checksum field zeroed): 0xB861.
        let h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xC0, 0xA8, 0x00, 0x01,
            0xC0, 0xA8, 0x00, 0xC7,
        ];
        assert_eq!(checksum(&h), 0xB861);
    }

    #[test]
    fn decode_fixed_bytes_and_encode_back() {
        let b = bytes();
        let p = Ipv4Packet::new_checked(&b[..]).unwrap();
        assert!(p.verify_checksum());
        let repr = Ipv4Repr::parse(&p).unwrap();
        assert_eq!(repr.header_len(), 24);
        assert_eq!((repr.total_len, repr.ident, repr.flags, repr.frag_offset), (115, 0x1C46, flags::DF, 0));
        assert_eq!((repr.ttl, repr.protocol, repr.options.as_slice()), (64, 17, &[1, 1, 1, 0][..]));
        assert_eq!((repr.src_addr, repr.dst_addr), ([192, 168, 0, 1], [192, 168, 0, 199]));
        let mut out = Vec::new();
        repr.emit(&mut out).unwrap();
        assert_eq!(out, b);
        assert_eq!(p.compute_checksum(), p.checksum());
    }

    #[test]
    fn checked_view_names_each_fault() {
        let b = bytes();
        let e = |b: &[u8]| Ipv4Packet::new_checked(b).unwrap_err();
        assert_eq!(e(&b[..19]), Error::Truncated { header: Header::Ipv4, need: 20, have: 19 });
        assert_eq!(e(&b[..23]), Error::Truncated { header: Header::Ipv4, need: 24, have: 23 });
        let mut v = b.clone();
        v[0] = 0x56;
        assert_eq!(e(&v), Error::Version { header: Header::Ipv4, version: 5 });
        v[0] = 0x44;
        assert_eq!(e(&v), Error::HeaderLen { header: Header::Ipv4, value: 4 });
        v[0] = 0x46;
        v[2..4].copy_from_slice(&[0, 23]);
        assert_eq!(e(&v), Error::TotalLen { header: Header::Ipv4, value: 23 });
        v[2..4].copy_from_slice(&[0, 0x73]);
        v[11] ^= 1;
        let p = Ipv4Packet::new_checked(&v[..]).unwrap();
        assert!(!p.verify_checksum());
        let err = Ipv4Repr::parse(&p).unwrap_err();
        assert!(err.to_string().starts_with("IPv4 header: checksum"), "{err}");
    }

    #[test]
    fn ttl_decrement_keeps_the_checksum_right() {
        let mut b = bytes();
        for ttl in (0..64).rev() {
            let mut p = Ipv4Packet::new_checked(&mut b[..]).unwrap();
            assert_eq!(p.decrement_ttl(), Some(ttl));
            assert!(p.verify_checksum(), "TTL {ttl}");
        }
        let mut p = Ipv4Packet::new_checked(&mut b[..]).unwrap();
        assert_eq!(p.decrement_ttl(), None, "TTL 0: drop");
        assert_eq!(p.ttl(), 0);
        assert!(p.verify_checksum());
    }

    #[test]
    fn emit_refuses_what_the_header_cannot_say() {
        let mut r = Ipv4Repr::new([10, 0, 0, 1], [10, 0, 0, 2], 6, 40);
        r.options = vec![1, 1, 1];
        assert!(matches!(r.emit(&mut Vec::new()), Err(Error::Field { field: "options length", .. })));
        r.options = vec![1; 44];
        assert!(r.emit(&mut Vec::new()).is_err());
        r.options.clear();
        r.total_len = 19;
        assert_eq!(r.emit(&mut Vec::new()), Err(Error::TotalLen { header: Header::Ipv4, value: 19 }));
    }

    #[test]
    fn setters_write_fragment_fields() {
        let mut b = bytes();
        let mut p = Ipv4Packet::new_checked(&mut b[..]).unwrap();
        p.set_flags_frag(flags::MF, 185);
        assert_eq!((p.flags(), p.frag_offset()), (flags::MF, 185));
        p.fill_checksum();
        assert!(p.verify_checksum());
    }
}
