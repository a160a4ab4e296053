//! VLAN tags (802.1Q, 802.1ad and the pre-standard 0x9100), and the walk over an Ethernet
//! header and its tags that every reader of a frame starts with.
//!
//! ```text
//! (EtherType 0x8100 / 0x88A8 / 0x9100 announces the tag)
//! +0  TCI (u16): PCP (3 bits), DEI (1), VLAN ID (12)   +2  EtherType of what follows
//! ```

use super::ethernet::EthernetFrame;
use super::{get16, need, put16, Error, Header};
use crate::frame::{ETHERTYPE_QINQ, ETHERTYPE_QINQ_OLD, ETHERTYPE_VLAN, MAX_VLAN_TAGS};

/// Byte ranges of a VLAN tag, counted from the tag's TCI, i.e. after the EtherType that
/// announced it.
pub mod field {
    use core::ops::Range;
    pub const TCI: Range<usize> = 0..2;
    /// The EtherType of what follows the tag.
    pub const ETHERTYPE: Range<usize> = 2..4;
    pub const TAG_LEN: usize = 4;
    const _: () = assert!(ETHERTYPE.end <= TAG_LEN);
}

/// The three EtherTypes that announce a VLAN tag.
pub const TAG_ETHERTYPES: [u16; 3] = [ETHERTYPE_VLAN, ETHERTYPE_QINQ, ETHERTYPE_QINQ_OLD];

/// Whether `ethertype` announces a VLAN tag.
#[inline(always)]
pub fn is_tag(ethertype: u16) -> bool {
    // The same three as [`TAG_ETHERTYPES`] (a test checks), as compares: `contains` on the
    // array was a call per frame in the trace parser.
    matches!(ethertype, ETHERTYPE_VLAN | ETHERTYPE_QINQ | ETHERTYPE_QINQ_OLD)
}

/// A view of one VLAN tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VlanTag<T: AsRef<[u8]>> {
    buf: T,
}

impl<T: AsRef<[u8]>> VlanTag<T> {
    #[inline(always)]
    pub fn new_checked(buf: T) -> Result<Self, Error> {
        need(Header::Vlan, buf.as_ref(), field::TAG_LEN)?;
        Ok(VlanTag { buf })
    }

    #[inline(always)]
    pub fn tci(&self) -> u16 {
        get16(self.buf.as_ref(), field::TCI)
    }

    /// The 12-bit VLAN ID.
    #[inline(always)]
    pub fn vlan_id(&self) -> u16 {
        self.tci() & 0x0FFF
    }

    #[inline(always)]
    pub fn ethertype(&self) -> u16 {
        get16(self.buf.as_ref(), field::ETHERTYPE)
    }

    #[inline(always)]
    pub fn payload(&self) -> &[u8] {
        &self.buf.as_ref()[field::TAG_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> VlanTag<T> {
    #[inline]
    pub fn set_tci(&mut self, tci: u16) {
        put16(self.buf.as_mut(), field::TCI, tci);
    }

    #[inline]
    pub fn set_ethertype(&mut self, ethertype: u16) {
        put16(self.buf.as_mut(), field::ETHERTYPE, ethertype);
    }
}

/// The fields of a VLAN tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VlanRepr {
    pub tci: u16,
    pub ethertype: u16,
}

impl VlanRepr {
    pub const LEN: usize = field::TAG_LEN;

    #[inline]
    pub fn parse<T: AsRef<[u8]>>(tag: &VlanTag<T>) -> Self {
        VlanRepr { tci: tag.tci(), ethertype: tag.ethertype() }
    }

    #[inline]
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.tci.to_be_bytes());
        out.extend_from_slice(&self.ethertype.to_be_bytes());
    }
}

/// Where the Ethernet header and its VLAN tags end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct L2 {
    /// VLAN tags passed.
    pub tags: usize,
    /// Offset of the last EtherType (the one that announces what follows the tags).
    pub ethertype_at: usize,
    /// That EtherType.
    pub ethertype: u16,
    /// Offset of what it announces: the shim or the L3 packet.
    pub payload_at: usize,
}

/// Walks Ethernet and up to [`MAX_VLAN_TAGS`] tags, the rule both parsers follow: a further
/// tag is [`Error::TooManyTags`] (checked before that tag's length), a cut header
/// [`Error::Truncated`].
#[inline(always)]
pub fn walk_l2(frame: &[u8]) -> Result<L2, Error> {
    let eth = EthernetFrame::new_checked(frame)?;
    let mut l2 = L2 {
        tags: 0,
        ethertype_at: super::ethernet::field::ETHERTYPE.start,
        ethertype: eth.ethertype(),
        payload_at: super::ethernet::field::HEADER_LEN,
    };
    while is_tag(l2.ethertype) {
        if l2.tags == MAX_VLAN_TAGS {
            return Err(Error::TooManyTags { tags: l2.tags + 1 });
        }
        let tag = VlanTag::new_checked(&frame[l2.payload_at..])?;
        l2.tags += 1;
        l2.ethertype_at = l2.payload_at + field::ETHERTYPE.start;
        l2.ethertype = tag.ethertype();
        l2.payload_at += field::TAG_LEN;
    }
    Ok(l2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_tag_is_the_tag_ethertypes() {
        for ethertype in 0..=u16::MAX {
            assert_eq!(is_tag(ethertype), TAG_ETHERTYPES.contains(&ethertype), "{ethertype:#06x}");
        }
    }

    #[test]
    fn decode_fixed_bytes_and_encode_back() {
        let bytes = [0x20, 0x0A, 0x08, 0x00];
        let tag = VlanTag::new_checked(&bytes[..]).unwrap();
        assert_eq!((tag.tci(), tag.vlan_id(), tag.ethertype()), (0x200A, 10, 0x0800));
        let mut out = Vec::new();
        VlanRepr::parse(&tag).emit(&mut out);
        assert_eq!(out, bytes);
        let mut b = [0u8; 4];
        let mut t = VlanTag::new_checked(&mut b[..]).unwrap();
        t.set_tci(0x200A);
        t.set_ethertype(0x0800);
        assert_eq!(b, bytes);
    }

    /// Ethernet with `tags` tags of the three kinds in turn, then IPv4.
    fn tagged(tags: usize) -> Vec<u8> {
        let mut f = vec![0u8; 12];
        for i in 0..tags {
            f.extend_from_slice(&TAG_ETHERTYPES[i % 3].to_be_bytes());
            f.extend_from_slice(&[0, 7]);
        }
        f.extend_from_slice(&[0x08, 0x00]);
        f
    }

    #[test]
    fn walk_passes_two_tags_and_refuses_a_third() {
        for tags in 0..=2 {
            let l2 = walk_l2(&tagged(tags)).unwrap();
            assert_eq!(
                l2,
                L2 { tags, ethertype_at: 12 + 4 * tags, ethertype: 0x0800, payload_at: 14 + 4 * tags }
            );
        }
        assert_eq!(walk_l2(&tagged(3)), Err(Error::TooManyTags { tags: 3 }));
        let cut = &tagged(2)[..17];
        assert_eq!(walk_l2(cut), Err(Error::Truncated { header: Header::Vlan, need: 4, have: 3 }));
        assert!(matches!(walk_l2(&[0; 13]), Err(Error::Truncated { header: Header::Ethernet, .. })));
    }
}
