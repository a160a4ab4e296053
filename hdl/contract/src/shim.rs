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
    pub fn len(&self) -> usize {
        field::HOPS + field::HOP_LEN * self.hops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hops.is_empty()
    }

    /// Sum of the hop latencies: the packet's in-network delay.
    pub fn total_latency_ns(&self) -> u64 {
        self.hops.iter().map(|h| h.latency_ns as u64).sum()
    }

    /// Parses a shim at the start of `buf`; returns it and the payload after it.
    pub fn parse(buf: &[u8]) -> Result<(Self, &[u8]), ShimError> {
        if buf.len() < field::HOPS {
            return Err(ShimError::Truncated);
        }
        if buf[field::KIND] != KIND_INT_STACK {
            return Err(ShimError::UnknownKind(buf[field::KIND]));
        }
        let next_type = be16(&buf[field::NEXT_TYPE]);
        let n = be16(&buf[field::HOP_COUNT]);
        if n > MAX_HOPS {
            return Err(ShimError::TooManyHops(n));
        }
        let end = field::HOPS + field::HOP_LEN * n as usize;
        if buf.len() < end {
            return Err(ShimError::Truncated);
        }
        let hops = buf[field::HOPS..end]
            .chunks_exact(field::HOP_LEN)
            .map(|h| Hop {
                switch_id: be16(&h[field::HOP_SWITCH]),
                latency_ns: u32::from_be_bytes(h[field::HOP_LATENCY].try_into().unwrap()),
            })
            .collect();
        Ok((IntShim { next_type, hops }, &buf[end..]))
    }

    /// Appends the encoded shim to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.push(KIND_INT_STACK);
        out.push(0);
        out.extend_from_slice(&self.next_type.to_be_bytes());
        out.extend_from_slice(&(self.hops.len() as u16).to_be_bytes());
        for h in &self.hops {
            out.extend_from_slice(&h.switch_id.to_be_bytes());
            out.extend_from_slice(&h.latency_ns.to_be_bytes());
        }
    }
}

fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
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
