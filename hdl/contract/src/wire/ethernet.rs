//! The Ethernet II header (no FCS: captures and the NIC's stream carry none).
//!
//! ```text
//! +0  destination MAC (6)   +6  source MAC (6)   +12  EtherType (u16)   +14  payload
//! ```

use super::{array, get16, need, put16, Error, Header};

/// Byte ranges of the Ethernet II fields.
pub mod field {
    use core::ops::Range;
    pub const DESTINATION: Range<usize> = 0..6;
    pub const SOURCE: Range<usize> = 6..12;
    pub const ETHERTYPE: Range<usize> = 12..14;
    /// Length of the header; a VLAN tag or the payload follows.
    pub const HEADER_LEN: usize = 14;
    const _: () = assert!(ETHERTYPE.end <= HEADER_LEN);
}

/// The least Ethernet frame without FCS (64 bytes on the wire with it); shorter frames are
/// padded to it.
pub const MIN_FRAME_LEN: usize = 60;

/// A view of an Ethernet frame in a byte buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EthernetFrame<T: AsRef<[u8]>> {
    buf: T,
}

impl<T: AsRef<[u8]>> EthernetFrame<T> {
    /// The view, once the buffer holds the whole header.
    #[inline]
    pub fn new_checked(buf: T) -> Result<Self, Error> {
        need(Header::Ethernet, buf.as_ref(), field::HEADER_LEN)?;
        Ok(EthernetFrame { buf })
    }

    #[inline]
    pub fn into_inner(self) -> T {
        self.buf
    }

    #[inline]
    pub fn destination(&self) -> [u8; 6] {
        array(self.buf.as_ref(), field::DESTINATION)
    }

    #[inline]
    pub fn source(&self) -> [u8; 6] {
        array(self.buf.as_ref(), field::SOURCE)
    }

    #[inline]
    pub fn ethertype(&self) -> u16 {
        get16(self.buf.as_ref(), field::ETHERTYPE)
    }

    /// Everything after the header (a VLAN tag, a shim or the L3 packet).
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.buf.as_ref()[field::HEADER_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> EthernetFrame<T> {
    #[inline]
    pub fn set_destination(&mut self, mac: [u8; 6]) {
        self.buf.as_mut()[field::DESTINATION].copy_from_slice(&mac);
    }

    #[inline]
    pub fn set_source(&mut self, mac: [u8; 6]) {
        self.buf.as_mut()[field::SOURCE].copy_from_slice(&mac);
    }

    #[inline]
    pub fn set_ethertype(&mut self, ethertype: u16) {
        put16(self.buf.as_mut(), field::ETHERTYPE, ethertype);
    }

    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buf.as_mut()[field::HEADER_LEN..]
    }
}

/// The fields of an Ethernet header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EthernetRepr {
    pub destination: [u8; 6],
    pub source: [u8; 6],
    pub ethertype: u16,
}

impl EthernetRepr {
    pub const LEN: usize = field::HEADER_LEN;

    #[inline]
    pub fn parse<T: AsRef<[u8]>>(frame: &EthernetFrame<T>) -> Self {
        EthernetRepr {
            destination: frame.destination(),
            source: frame.source(),
            ethertype: frame.ethertype(),
        }
    }

    /// Appends the header to `out`.
    #[inline]
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.destination);
        out.extend_from_slice(&self.source);
        out.extend_from_slice(&self.ethertype.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BYTES: [u8; 16] = [2, 0, 0, 0, 0, 1, 2, 0x10, 10, 0, 0, 1, 0x08, 0x00, 0xAB, 0xCD];

    #[test]
    fn decode_fixed_bytes_and_encode_back() {
        let f = EthernetFrame::new_checked(&BYTES[..]).unwrap();
        let repr = EthernetRepr::parse(&f);
        assert_eq!(repr.destination, [2, 0, 0, 0, 0, 1]);
        assert_eq!(repr.source, [2, 0x10, 10, 0, 0, 1]);
        assert_eq!(repr.ethertype, crate::frame::ETHERTYPE_IPV4);
        assert_eq!(f.payload(), &[0xAB, 0xCD]);
        let mut out = Vec::new();
        repr.emit(&mut out);
        assert_eq!(out, BYTES[..14]);
    }

    #[test]
    fn setters_write_the_fields() {
        let mut b = [0u8; 14];
        let mut f = EthernetFrame::new_checked(&mut b[..]).unwrap();
        f.set_destination([2, 0, 0, 0, 0, 1]);
        f.set_source([2, 0x10, 10, 0, 0, 1]);
        f.set_ethertype(0x0800);
        assert_eq!(b, BYTES[..14]);
    }

    #[test]
    fn short_buffer_is_a_clear_error() {
        let e = EthernetFrame::new_checked(&BYTES[..13]).unwrap_err();
        assert_eq!(e, Error::Truncated { header: Header::Ethernet, need: 14, have: 13 });
        assert_eq!(e.to_string(), "Ethernet header truncated: needs 14 bytes, has 13");
    }
}
