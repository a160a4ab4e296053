//! The NIC's record stream: what is not a counter leaves the NIC as typed records, one
//! after another, drained through a readout window or sent on its own channel into a host
//! ring ([`super::record_ring`]). Every record starts with the same 4-byte header, so a reader skips kinds it does
//! not know and the stream can grow new kinds (sketchlets, PINT digests, SR-INT probes)
//! without breaking old readers.
//!
//! ```text
//! +0  kind (u8)        KIND_INFLATED = 1; later kinds follow
//! +1  words (u8)       record length in 4-byte words, header included (>= 1)
//! +2  kind-specific (u16)
//! kind INFLATED (7 words): an inflated-latency hop (`crate::per_switch`)
//! +2  switch ID (u16)
//! +4  epoch (u32)      the epoch the packet was recorded in
//! +8  latency (u32)    the hop's latency in ns, as the switch reported it
//! +12 flow key (13 bytes), then 3 zero bytes
//! ```
//! Integers are big-endian, like every wire header of the contract. The readout window
//! returns the stream 4 bytes per 32-bit read, byte `4i` in the word's top byte (the
//! big-endian word of bytes `4i..4i+4`).

use super::{array, get16, get32, need, put16, put32, Error, Header};
use crate::key::{FlowKey, KEY_LEN};

/// Kind: an inflated-latency hop.
pub const KIND_INFLATED: u8 = 1;
/// Bytes of a stream word.
pub const WORD: usize = 4;
/// Bytes of an inflated-latency record.
pub const INFLATED_LEN: usize = 28;

/// Byte ranges of the record fields.
pub mod field {
    use core::ops::Range;
    pub const KIND: usize = 0;
    pub const WORDS: usize = 1;
    pub const SPECIFIC: Range<usize> = 2..4;
    pub const HEADER_LEN: usize = 4;
    /// Kind INFLATED.
    pub const SWITCH_ID: Range<usize> = 2..4;
    pub const EPOCH: Range<usize> = 4..8;
    pub const LATENCY: Range<usize> = 8..12;
    pub const FLOW: Range<usize> = 12..25;
}

/// An inflated-latency event: (flow key, switch ID, latency, epoch).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InflatedRecord {
    pub epoch: u32,
    pub flow: FlowKey,
    pub switch_id: u16,
    pub latency_ns: u32,
}

impl InflatedRecord {
    /// Parses a record of kind INFLATED (the header included).
    pub fn parse(b: &[u8]) -> Result<Self, Error> {
        need(Header::Record, b, INFLATED_LEN)?;
        if b[field::KIND] != KIND_INFLATED || b[field::WORDS] as usize * WORD != INFLATED_LEN {
            let value = u64::from(b[field::KIND]) << 8 | u64::from(b[field::WORDS]);
            return Err(Error::Field { header: Header::Record, field: "kind and words", value });
        }
        Ok(InflatedRecord {
            epoch: get32(b, field::EPOCH),
            flow: FlowKey(array::<KEY_LEN>(b, field::FLOW)),
            switch_id: get16(b, field::SWITCH_ID),
            latency_ns: get32(b, field::LATENCY),
        })
    }

    /// The record's bytes.
    pub fn emit(&self) -> [u8; INFLATED_LEN] {
        let mut b = [0u8; INFLATED_LEN];
        b[field::KIND] = KIND_INFLATED;
        b[field::WORDS] = (INFLATED_LEN / WORD) as u8;
        put16(&mut b, field::SWITCH_ID, self.switch_id);
        put32(&mut b, field::EPOCH, self.epoch);
        put32(&mut b, field::LATENCY, self.latency_ns);
        b[field::FLOW].copy_from_slice(self.flow.as_bytes());
        b
    }
}

/// One record of the stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record {
    Inflated(InflatedRecord),
    /// A kind this reader does not know, kept whole (header included).
    Unknown {
        kind: u8,
        bytes: Vec<u8>,
    },
}

impl Record {
    /// The record's bytes.
    pub fn emit(&self) -> Vec<u8> {
        match self {
            Record::Inflated(r) => r.emit().to_vec(),
            Record::Unknown { bytes, .. } => bytes.clone(),
        }
    }
}

/// Splits a drained byte stream into records. A header announcing 0 words, or a record
/// cut short by the end of the buffer, is an error naming the byte offset; records before
/// it are returned with it, so nothing read is lost.
pub fn parse_stream(mut b: &[u8]) -> (Vec<Record>, Option<(usize, Error)>) {
    let mut out = Vec::new();
    let mut at = 0;
    while !b.is_empty() {
        match next(b) {
            Ok((r, len)) => {
                out.push(r);
                b = &b[len..];
                at += len;
            }
            Err(e) => return (out, Some((at, e))),
        }
    }
    (out, None)
}

/// The length in bytes of the record at the start of `b`, which must hold it whole: a
/// header announcing 0 words, or a record cut short, is an error.
pub fn record_len(b: &[u8]) -> Result<usize, Error> {
    need(Header::Record, b, field::HEADER_LEN)?;
    let len = b[field::WORDS] as usize * WORD;
    if len == 0 {
        return Err(Error::Field { header: Header::Record, field: "words", value: 0 });
    }
    need(Header::Record, b, len)?;
    Ok(len)
}

/// The first record of `b` and its length.
fn next(b: &[u8]) -> Result<(Record, usize), Error> {
    let len = record_len(b)?;
    let r = match b[field::KIND] {
        KIND_INFLATED => Record::Inflated(InflatedRecord::parse(&b[..len])?),
        kind => Record::Unknown { kind, bytes: b[..len].to_vec() },
    };
    Ok((r, len))
}

/// The 32-bit words the readout window returns for `bytes` (records are whole words; a
/// trailing partial word is zero-padded on the right, never dropped).
pub fn to_words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks(WORD)
        .map(|c| {
            let mut w = [0u8; WORD];
            w[..c.len()].copy_from_slice(c);
            u32::from_be_bytes(w)
        })
        .collect()
}

/// The byte stream of words read from the window.
pub fn from_words(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_be_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BYTES: [u8; INFLATED_LEN] = [
        1, 7, 0x01, 0x02, // kind, words, switch 258
        0, 0, 0, 9, // epoch 9
        0, 1, 0, 0, // 65536 ns
        10, 0, 0, 1, 10, 0, 1, 2, 0x03, 0xE8, 0, 80, 6, // 10.0.0.1 -> 10.0.1.2 1000 -> 80 TCP
        0, 0, 0,
    ];

    fn repr() -> InflatedRecord {
        InflatedRecord {
            epoch: 9,
            flow: FlowKey::from_v4([10, 0, 0, 1], [10, 0, 1, 2], 1000, 80, 6),
            switch_id: 258,
            latency_ns: 65536,
        }
    }

    #[test]
    fn inflated_record_decodes_and_encodes_back() {
        assert_eq!(InflatedRecord::parse(&BYTES).unwrap(), repr());
        assert_eq!(repr().emit(), BYTES);
    }

    #[test]
    fn stream_skips_unknown_kinds_and_reports_damage() {
        let mut s = BYTES.to_vec();
        s.extend_from_slice(&[9, 2, 0, 0, 0xAA, 0xBB, 0xCC, 0xDD]);
        s.extend_from_slice(&BYTES);
        let (recs, err) = parse_stream(&s);
        assert!(err.is_none());
        assert_eq!(recs.len(), 3);
        assert_eq!(recs[1], Record::Unknown { kind: 9, bytes: s[28..36].to_vec() });
        assert_eq!(recs.iter().flat_map(Record::emit).collect::<Vec<_>>(), s);
        assert_eq!(from_words(&to_words(&s)), s);
        assert_eq!(to_words(&[1, 2, 3, 4, 5]), vec![0x0102_0304, 0x0500_0000], "a partial word is padded");

        let (recs, err) = parse_stream(&s[..40]);
        assert_eq!(recs.len(), 2, "records before the damage are kept");
        let (at, e) = err.unwrap();
        assert_eq!(at, 36);
        assert!(e.to_string().contains("truncated"), "{e}");

        let (_, err) = parse_stream(&[1, 0, 0, 0]);
        assert!(err.unwrap().1.to_string().contains("words 0"));
        let mut bad = BYTES;
        bad[1] = 8;
        let (_, err) = parse_stream(&bad);
        assert!(err.is_some(), "a length other than 7 words for kind 1 is refused");
    }
}
