//! The TCP header (RFC 9293), as far as the flow key and the frame builders need it: ports,
//! sequence numbers, data offset, flags, window. The checksum is carried as a value, not
//! computed: neither the NIC nor the switch twins check it.
//!
//! ```text
//! +0  source port   +2  destination port   +4  sequence number   +8  acknowledgment
//! +12 data offset (4 bits, 32-bit words), reserved (3), flags (9)   +14  window
//! +16 checksum   +18  urgent pointer   +20  options (data offset - 5 words)
//! ```

use super::{get16, get32, need, put16, put32, Error, Header};

/// Byte ranges of the TCP fields.
pub mod field {
    use core::ops::Range;
    pub const SRC_PORT: Range<usize> = 0..2;
    pub const DST_PORT: Range<usize> = 2..4;
    pub const SEQ: Range<usize> = 4..8;
    pub const ACK: Range<usize> = 8..12;
    /// Data offset in 32-bit words (high nibble).
    pub const DATA_OFFSET: usize = 12;
    /// The low 12 bits: reserved bits and flags.
    pub const OFFSET_FLAGS: Range<usize> = 12..14;
    pub const WINDOW: Range<usize> = 14..16;
    pub const CHECKSUM: Range<usize> = 16..18;
    pub const URGENT: Range<usize> = 18..20;
    pub const MIN_HEADER_LEN: usize = 20;
    const _: () = assert!(DATA_OFFSET < MIN_HEADER_LEN && URGENT.end == MIN_HEADER_LEN);
}

/// Flag bits of the low 12 bits of [`field::OFFSET_FLAGS`].
pub mod flags {
    pub const FIN: u16 = 0x001;
    pub const SYN: u16 = 0x002;
    pub const RST: u16 = 0x004;
    pub const PSH: u16 = 0x008;
    pub const ACK: u16 = 0x010;
}

/// A view of a TCP header. `new_checked` asks for the fixed 20 bytes and a data offset of
/// at least 5; options may run past the buffer (a capture often stops inside them), and
/// [`TcpPacket::options`] returns what is there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpPacket<T: AsRef<[u8]>> {
    buf: T,
}

impl<T: AsRef<[u8]>> TcpPacket<T> {
    #[inline(always)]
    pub fn new_checked(buf: T) -> Result<Self, Error> {
        need(Header::Tcp, buf.as_ref(), field::MIN_HEADER_LEN)?;
        let p = TcpPacket { buf };
        if p.header_len() < field::MIN_HEADER_LEN {
            return Err(Error::HeaderLen { header: Header::Tcp, value: p.data_offset() });
        }
        Ok(p)
    }

    #[inline(always)]
    pub fn new_unchecked(buf: T) -> Self {
        TcpPacket { buf }
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
    pub fn seq(&self) -> u32 {
        get32(self.buf.as_ref(), field::SEQ)
    }

    #[inline(always)]
    pub fn ack(&self) -> u32 {
        get32(self.buf.as_ref(), field::ACK)
    }

    /// Data offset in 32-bit words.
    #[inline(always)]
    pub fn data_offset(&self) -> u8 {
        self.buf.as_ref()[field::DATA_OFFSET] >> 4
    }

    #[inline(always)]
    pub fn header_len(&self) -> usize {
        self.data_offset() as usize * 4
    }

    /// Reserved bits and flags ([`flags`]), the low 12 bits of bytes 12..14.
    #[inline(always)]
    pub fn flags(&self) -> u16 {
        get16(self.buf.as_ref(), field::OFFSET_FLAGS) & 0x0FFF
    }

    #[inline(always)]
    pub fn window(&self) -> u16 {
        get16(self.buf.as_ref(), field::WINDOW)
    }

    #[inline]
    pub fn checksum(&self) -> u16 {
        get16(self.buf.as_ref(), field::CHECKSUM)
    }

    #[inline(always)]
    pub fn urgent(&self) -> u16 {
        get16(self.buf.as_ref(), field::URGENT)
    }

    /// The options, as far as the buffer holds them.
    #[inline(always)]
    pub fn options(&self) -> &[u8] {
        let b = self.buf.as_ref();
        &b[field::MIN_HEADER_LEN..b.len().min(self.header_len())]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> TcpPacket<T> {
    #[inline]
    pub fn set_src_port(&mut self, p: u16) {
        put16(self.buf.as_mut(), field::SRC_PORT, p);
    }

    #[inline]
    pub fn set_dst_port(&mut self, p: u16) {
        put16(self.buf.as_mut(), field::DST_PORT, p);
    }

    #[inline]
    pub fn set_seq(&mut self, v: u32) {
        put32(self.buf.as_mut(), field::SEQ, v);
    }

    #[inline]
    pub fn set_ack(&mut self, v: u32) {
        put32(self.buf.as_mut(), field::ACK, v);
    }

    /// Sets the data offset (32-bit words, any 4-bit value) and the low 12 bits.
    #[inline]
    pub fn set_offset_flags(&mut self, data_offset: u8, flags: u16) {
        put16(self.buf.as_mut(), field::OFFSET_FLAGS, (data_offset as u16) << 12 | flags & 0x0FFF);
    }

    #[inline]
    pub fn set_window(&mut self, v: u16) {
        put16(self.buf.as_mut(), field::WINDOW, v);
    }

    #[inline]
    pub fn set_checksum(&mut self, v: u16) {
        put16(self.buf.as_mut(), field::CHECKSUM, v);
    }

    #[inline]
    pub fn set_urgent(&mut self, v: u16) {
        put16(self.buf.as_mut(), field::URGENT, v);
    }
}

/// The fields of a TCP header (options whole: a multiple of 4 bytes, at most 40).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TcpRepr {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    /// Reserved bits and flags ([`flags`]).
    pub flags: u16,
    pub window: u16,
    pub checksum: u16,
    pub urgent: u16,
    pub options: Vec<u8>,
}

impl TcpRepr {
    /// The ports, everything else 0.
    #[inline]
    pub fn new(src_port: u16, dst_port: u16) -> Self {
        TcpRepr {
            src_port,
            dst_port,
            seq: 0,
            ack: 0,
            flags: 0,
            window: 0,
            checksum: 0,
            urgent: 0,
            options: Vec::new(),
        }
    }

    #[inline(always)]
    pub fn header_len(&self) -> usize {
        field::MIN_HEADER_LEN + self.options.len()
    }

    /// The header's fields; its options must all be in the buffer.
    #[inline]
    pub fn parse<T: AsRef<[u8]>>(p: &TcpPacket<T>) -> Result<Self, Error> {
        need(Header::Tcp, p.buf.as_ref(), p.header_len())?;
        Ok(TcpRepr {
            src_port: p.src_port(),
            dst_port: p.dst_port(),
            seq: p.seq(),
            ack: p.ack(),
            flags: p.flags(),
            window: p.window(),
            checksum: p.checksum(),
            urgent: p.urgent(),
            options: p.options().to_vec(),
        })
    }

    #[inline]
    pub fn emit(&self, out: &mut Vec<u8>) -> Result<(), Error> {
        let hlen = self.header_len();
        if !self.options.len().is_multiple_of(4) || hlen > 60 {
            let value = self.options.len() as u64;
            return Err(Error::Field { header: Header::Tcp, field: "options length", value });
        }
        let at = out.len();
        out.resize(at + field::MIN_HEADER_LEN, 0);
        let mut p = TcpPacket::new_unchecked(&mut out[at..]);
        p.set_src_port(self.src_port);
        p.set_dst_port(self.dst_port);
        p.set_seq(self.seq);
        p.set_ack(self.ack);
        p.set_offset_flags((hlen / 4) as u8, self.flags);
        p.set_window(self.window);
        p.set_checksum(self.checksum);
        p.set_urgent(self.urgent);
        out.extend_from_slice(&self.options);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 5000 -> 80, seq 7, ack 9, data offset 6 (MSS option 1460), ACK, window 0xFFFF.
    const BYTES: [u8; 24] = [
        0x13, 0x88, 0, 80, 0, 0, 0, 7, 0, 0, 0, 9, 0x60, 0x10, 0xFF, 0xFF, 0xAB, 0xCD, 0, 0, 2, 4, 0x05, 0xB4,
    ];

    #[test]
    fn decode_fixed_bytes_and_encode_back() {
        let p = TcpPacket::new_checked(&BYTES[..]).unwrap();
        let r = TcpRepr::parse(&p).unwrap();
        assert_eq!((r.src_port, r.dst_port, r.seq, r.ack), (5000, 80, 7, 9));
        assert_eq!(
            (r.flags, r.window, r.checksum, r.options.as_slice()),
            (flags::ACK, 0xFFFF, 0xABCD, &[2, 4, 5, 0xB4][..])
        );
        let mut out = Vec::new();
        r.emit(&mut out).unwrap();
        assert_eq!(out, BYTES);
    }

    #[test]
    fn faults_are_named() {
        let e = TcpPacket::new_checked(&BYTES[..19]).unwrap_err();
        assert_eq!(e, Error::Truncated { header: Header::Tcp, need: 20, have: 19 });
        let mut b = BYTES;
        b[12] = 0x40;
        assert_eq!(
            TcpPacket::new_checked(&b[..]).unwrap_err(),
            Error::HeaderLen { header: Header::Tcp, value: 4 }
        );
        // Options cut by the capture: the view reads the ports, the repr refuses.
        let cut = TcpPacket::new_checked(&BYTES[..22]).unwrap();
        assert_eq!((cut.src_port(), cut.options()), (5000, &[2, 4][..]));
        assert!(TcpRepr::parse(&cut).is_err());
    }
}
