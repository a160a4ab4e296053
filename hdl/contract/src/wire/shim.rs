//! The telemetry shim header that switches insert after the Ethernet/VLAN headers and the
//! NIC strips before parsing IP.
//!
//! ```text
//! EtherType 0x88B5 (IEEE local experimental)
//! +0  kind (u8)          SHIM_KIND_INT_STACK = 1; later kinds: sketchlet, PINT digest
//! +1  flags (u8)         reserved, 0
//! +2  next EtherType     (u16) of the payload after the shim, e.g. 0x0800
//! +4  hop count (u16)    kind INT_STACK: number of hop records that follow
//! +6  hop records        per hop: switch ID (u16), latency in ns (u32)
//! ```
//! All fields are big-endian. The shim length is `6 + 6 * hops` for the INT stack.
//!
//! A switch on the path pushes an empty stack after the Ethernet/VLAN headers when the
//! frame has none ([`ensure_int_stack`]) and appends its hop record ([`push_hop`]), in place.

use super::vlan::walk_l2;
use super::{get16, get32, put16, Error};

/// EtherType announcing the shim.
pub const ETHERTYPE_SHIM: u16 = 0x88B5;
/// Kind: SketchINT's INT stack.
pub const KIND_INT_STACK: u8 = 1;
/// Largest hop count a NIC accepts (a longer stack is malformed).
pub const MAX_HOPS: u16 = 16;

/// Byte ranges of the shim fields.
pub mod field {
    use core::ops::Range;
    pub const KIND: usize = 0;
    pub const FLAGS: usize = 1;
    pub const NEXT_TYPE: Range<usize> = 2..4;
    pub const HOP_COUNT: Range<usize> = 4..6;
    pub const HOPS: usize = 6;
    /// Size of one hop record.
    pub const HOP_LEN: usize = 6;
    pub const HOP_SWITCH: Range<usize> = 0..2;
    pub const HOP_LATENCY: Range<usize> = 2..6;
}

/// One hop of an INT stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Hop {
    pub switch_id: u16,
    pub latency_ns: u32,
}

/// A parsed shim header of kind INT_STACK.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntShim {
    pub next_type: u16,
    pub hops: Vec<Hop>,
}

/// Why a shim could not be parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShimError {
    Truncated,
    UnknownKind(u8),
    TooManyHops(u16),
}

impl core::fmt::Display for ShimError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Truncated => write!(f, "telemetry shim is truncated"),
            Self::UnknownKind(k) => write!(f, "unknown telemetry shim kind {k}"),
            Self::TooManyHops(n) => write!(f, "INT stack of {n} hops exceeds {MAX_HOPS}"),
        }
    }
}

impl std::error::Error for ShimError {}

impl IntShim {
    /// Encoded length in bytes.
    #[inline(always)]
    pub fn len(&self) -> usize {
        Self::encoded_len(self.hops.len())
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.hops.is_empty()
    }

    /// Sum of the hop latencies: the packet's in-network delay.
    #[inline(always)]
    pub fn total_latency_ns(&self) -> u64 {
        self.hops.iter().map(|h| h.latency_ns as u64).sum()
    }

    /// Parses a shim at the start of `buf`; returns it and the payload after it.
    #[inline]
    pub fn parse(buf: &[u8]) -> Result<(Self, &[u8]), ShimError> {
        let v = ShimHeader::new_checked(buf)?;
        let hops = (0..v.hop_count() as usize).map(|i| v.hop(i)).collect();
        Ok((IntShim { next_type: v.next_type(), hops }, &buf[v.header_len()..]))
    }

    /// Appends the encoded shim to `out`.
    #[inline]
    pub fn emit(&self, out: &mut Vec<u8>) {
        Self::emit_hops(self.next_type, &self.hops, out);
    }

    /// Appends a shim of `hops` before `next_type` to `out` (no [`IntShim`] needed).
    #[inline]
    pub fn emit_hops(next_type: u16, hops: &[Hop], out: &mut Vec<u8>) {
        out.push(KIND_INT_STACK);
        out.push(0);
        out.extend_from_slice(&next_type.to_be_bytes());
        out.extend_from_slice(&(hops.len() as u16).to_be_bytes());
        for h in hops {
            out.extend_from_slice(&h.switch_id.to_be_bytes());
            out.extend_from_slice(&h.latency_ns.to_be_bytes());
        }
    }

    /// Encoded length of a shim of `hops` hops.
    #[inline(always)]
    pub const fn encoded_len(hops: usize) -> usize {
        field::HOPS + field::HOP_LEN * hops
    }
}

/// A view of a shim of kind INT_STACK: `new_checked` asks for a known kind, at most
/// [`MAX_HOPS`] hops and every hop record within the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShimHeader<T: AsRef<[u8]>> {
    buf: T,
}

impl<T: AsRef<[u8]>> ShimHeader<T> {
    #[inline(always)]
    pub fn new_checked(buf: T) -> Result<Self, ShimError> {
        let b = buf.as_ref();
        if b.len() < field::HOPS {
            return Err(ShimError::Truncated);
        }
        if b[field::KIND] != KIND_INT_STACK {
            return Err(ShimError::UnknownKind(b[field::KIND]));
        }
        let v = ShimHeader { buf };
        if v.hop_count() > MAX_HOPS {
            return Err(ShimError::TooManyHops(v.hop_count()));
        }
        if v.buf.as_ref().len() < v.header_len() {
            return Err(ShimError::Truncated);
        }
        Ok(v)
    }

    /// A view without checks (at least [`field::HOPS`] bytes): for writing a shim, or
    /// one with more hops than a NIC accepts.
    #[inline(always)]
    pub fn new_unchecked(buf: T) -> Self {
        ShimHeader { buf }
    }

    #[inline(always)]
    pub fn kind(&self) -> u8 {
        self.buf.as_ref()[field::KIND]
    }

    #[inline(always)]
    pub fn flags(&self) -> u8 {
        self.buf.as_ref()[field::FLAGS]
    }

    /// The EtherType of what follows the shim.
    #[inline(always)]
    pub fn next_type(&self) -> u16 {
        get16(self.buf.as_ref(), field::NEXT_TYPE)
    }

    #[inline(always)]
    pub fn hop_count(&self) -> u16 {
        get16(self.buf.as_ref(), field::HOP_COUNT)
    }

    /// Shim length with its hop records.
    #[inline(always)]
    pub fn header_len(&self) -> usize {
        field::HOPS + field::HOP_LEN * self.hop_count() as usize
    }

    fn hop_at(&self, i: usize) -> usize {
        field::HOPS + field::HOP_LEN * i
    }

    /// Hop record `i` (< [`ShimHeader::hop_count`]).
    #[inline(always)]
    pub fn hop(&self, i: usize) -> Hop {
        let h = &self.buf.as_ref()[self.hop_at(i)..self.hop_at(i + 1)];
        Hop { switch_id: get16(h, field::HOP_SWITCH), latency_ns: get32(h, field::HOP_LATENCY) }
    }

    /// Every hop record, in stack order: [`ShimHeader::hop`] of `0..hop_count`, read
    /// as fixed-size records of the bytes `new_checked` found, so the trace parser
    /// appends a stack without a bounds check per field.
    #[inline(always)]
    pub fn hops(&self) -> impl ExactSizeIterator<Item = Hop> + '_ {
        // Records of a constant length: no division by a run-time chunk length.
        let (records, _) =
            self.buf.as_ref()[field::HOPS..self.header_len()].as_chunks::<{ field::HOP_LEN }>();
        records.iter().map(|h| Hop {
            switch_id: u16::from_be_bytes(h[field::HOP_SWITCH].try_into().expect("HOP_SWITCH is two bytes")),
            latency_ns: u32::from_be_bytes(
                h[field::HOP_LATENCY].try_into().expect("HOP_LATENCY is four bytes"),
            ),
        })
    }

    /// What follows the shim.
    #[inline(always)]
    pub fn payload(&self) -> &[u8] {
        &self.buf.as_ref()[self.header_len()..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> ShimHeader<T> {
    /// Sets the kind byte (a frame with an unknown kind is malformed at the NIC).
    #[inline]
    pub fn set_kind(&mut self, kind: u8) {
        self.buf.as_mut()[field::KIND] = kind;
    }

    #[inline]
    pub fn set_next_type(&mut self, ethertype: u16) {
        put16(self.buf.as_mut(), field::NEXT_TYPE, ethertype);
    }

    /// Sets the count field (the records must be there: see [`push_hop`]).
    #[inline]
    pub fn set_hop_count(&mut self, n: u16) {
        put16(self.buf.as_mut(), field::HOP_COUNT, n);
    }

    /// Rewrites hop record `i` (< [`ShimHeader::hop_count`]).
    #[inline]
    pub fn set_hop(&mut self, i: usize, hop: Hop) {
        let at = self.hop_at(i);
        let h = &mut self.buf.as_mut()[at..at + field::HOP_LEN];
        put16(h, field::HOP_SWITCH, hop.switch_id);
        super::put32(h, field::HOP_LATENCY, hop.latency_ns);
    }
}

/// The offset of the frame's INT stack, after pushing an empty one right after the
/// Ethernet/VLAN headers when the frame has none (the EtherType there moves into the
/// shim's next type). A frame whose L2 headers do not parse, or whose shim is bad, is
/// refused unchanged.
#[inline]
pub fn ensure_int_stack(frame: &mut Vec<u8>) -> Result<usize, Error> {
    let l2 = walk_l2(frame)?;
    if l2.ethertype == ETHERTYPE_SHIM {
        ShimHeader::new_checked(&frame[l2.payload_at..])?;
        return Ok(l2.payload_at);
    }
    let mut empty = Vec::with_capacity(field::HOPS);
    IntShim { next_type: l2.ethertype, hops: Vec::new() }.emit(&mut empty);
    frame.splice(l2.payload_at..l2.payload_at, empty);
    put16(frame, l2.ethertype_at..l2.ethertype_at + 2, ETHERTYPE_SHIM);
    Ok(l2.payload_at)
}

/// Appends `hop` to the INT stack at `shim_at` (from [`ensure_int_stack`]) and counts it,
/// as a switch does on the path. A full stack ([`MAX_HOPS`]) is refused unchanged.
#[inline]
pub fn push_hop(frame: &mut Vec<u8>, shim_at: usize, hop: Hop) -> Result<(), Error> {
    let v = ShimHeader::new_checked(&frame[shim_at..])?;
    let n = v.hop_count();
    if n == MAX_HOPS {
        return Err(ShimError::TooManyHops(n + 1).into());
    }
    let end = shim_at + v.header_len();
    let mut rec = [0u8; field::HOP_LEN];
    put16(&mut rec, field::HOP_SWITCH, hop.switch_id);
    super::put32(&mut rec, field::HOP_LATENCY, hop.latency_ns);
    frame.splice(end..end, rec);
    let mut v = ShimHeader { buf: &mut frame[shim_at..] };
    v.set_hop_count(n + 1);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BYTES: [u8; 18] = [
        1, 0, 0x08, 0x00, 0, 2, // kind, flags, next=IPv4, 2 hops
        0, 7, 0, 0, 0x03, 0xE8, // switch 7, 1000 ns
        0, 9, 0, 1, 0, 0, // switch 9, 65536 ns
    ];

    #[test]
    fn parse_fixed_bytes_and_emit_back() {
        let (shim, rest) = IntShim::parse(&BYTES).unwrap();
        assert!(rest.is_empty());
        assert_eq!(shim.next_type, 0x0800);
        assert_eq!(
            shim.hops,
            vec![Hop { switch_id: 7, latency_ns: 1000 }, Hop { switch_id: 9, latency_ns: 65536 }]
        );
        assert_eq!(shim.total_latency_ns(), 66536);
        let mut out = Vec::new();
        shim.emit(&mut out);
        assert_eq!(out, BYTES);
    }

    #[test]
    fn view_reads_and_writes_in_place() {
        let mut b = BYTES;
        let mut v = ShimHeader::new_checked(&mut b[..]).unwrap();
        assert_eq!(
            (v.kind(), v.flags(), v.next_type(), v.hop_count(), v.header_len()),
            (1, 0, 0x0800, 2, 18)
        );
        assert_eq!(v.hop(1), Hop { switch_id: 9, latency_ns: 65536 });
        v.set_hop(1, Hop { switch_id: 8, latency_ns: 5 });
        v.set_next_type(0x86DD);
        assert_eq!(&b[2..4], &[0x86, 0xDD]);
        assert_eq!(&b[12..], &[0, 8, 0, 0, 0, 5]);
    }

    /// The records read together are the records read one by one, for stacks of 0 to
    /// `MAX_HOPS` hops with bytes after them.
    #[test]
    fn hops_are_each_hop_in_order() {
        for n in 0..=MAX_HOPS as u32 {
            let hops: Vec<Hop> = (0..n)
                .map(|i| Hop { switch_id: (i * 4099 + 1) as u16, latency_ns: i.wrapping_mul(0x9E37_79B9) })
                .collect();
            let mut b = Vec::new();
            IntShim::emit_hops(0x0800, &hops, &mut b);
            b.extend_from_slice(&[0xAB; 7]);
            let v = ShimHeader::new_checked(&b[..]).unwrap();
            let each: Vec<Hop> = (0..v.hop_count() as usize).map(|i| v.hop(i)).collect();
            assert_eq!(v.hops().len(), n as usize);
            assert_eq!(v.hops().collect::<Vec<_>>(), each);
            assert_eq!(each, hops);
        }
    }

    /// Ethernet + 802.1Q + IPv4 (20 bytes of 0x45): a switch pushes a stack, two hops.
    #[test]
    fn switch_pushes_a_stack_and_appends_hops() {
        let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x81, 0x00, 0, 7, 0x08, 0x00];
        f.extend_from_slice(&[0x45; 20]);
        let at = ensure_int_stack(&mut f).unwrap();
        assert_eq!(at, 18);
        assert_eq!(&f[16..18], &ETHERTYPE_SHIM.to_be_bytes());
        assert_eq!(ensure_int_stack(&mut f).unwrap(), at, "a second call finds the stack");
        push_hop(&mut f, at, Hop { switch_id: 7, latency_ns: 1000 }).unwrap();
        push_hop(&mut f, at, Hop { switch_id: 9, latency_ns: 65536 }).unwrap();
        assert_eq!(f[at..at + 18], BYTES);
        assert_eq!(f[at + 18..], [0x45; 20]);
    }

    #[test]
    fn a_full_stack_and_a_bad_frame_are_refused_unchanged() {
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&ETHERTYPE_SHIM.to_be_bytes());
        let shim =
            IntShim { next_type: 0x0800, hops: vec![Hop { switch_id: 1, latency_ns: 2 }; MAX_HOPS as usize] };
        shim.emit(&mut f);
        let before = f.clone();
        let e = push_hop(&mut f, 14, Hop { switch_id: 3, latency_ns: 4 }).unwrap_err();
        assert_eq!(e, Error::Shim(ShimError::TooManyHops(MAX_HOPS + 1)));
        assert_eq!(e.to_string(), "INT stack of 17 hops exceeds 16");
        assert_eq!(f, before);
        let mut short = vec![0u8; 13];
        assert!(ensure_int_stack(&mut short).is_err());
        assert_eq!(short, vec![0u8; 13]);
    }

    #[test]
    fn truncated_and_bad_kind() {
        assert_eq!(IntShim::parse(&BYTES[..10]), Err(ShimError::Truncated));
        assert_eq!(IntShim::parse(&BYTES[..3]), Err(ShimError::Truncated));
        let mut b = BYTES;
        b[0] = 9;
        assert_eq!(IntShim::parse(&b), Err(ShimError::UnknownKind(9)));
        b[0] = 1;
        b[5] = 200;
        assert_eq!(IntShim::parse(&b), Err(ShimError::TooManyHops(200)));
    }
}
