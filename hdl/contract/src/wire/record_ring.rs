//! The record ring: the NIC's record stream ([`super::record`]) as it leaves on its own
//! card-to-host channel into a ring in host memory, 64-bit words instead of the readout
//! window's 32-bit pops.
//!
//! ```text
//! ring word (u64, little-endian in host memory)
//!   bits 63..32  stream word 2i    (the big-endian word of record bytes 8i..8i+4)
//!   bits 31..0   stream word 2i+1
//! ```
//!
//! A record never shares a ring word with the next one: a record of an odd number of
//! words (the inflated-latency record has 7) is followed by one [`PAD`] word, a record of
//! kind [`KIND_PAD`] and length 1 that every reader of the stream skips. So the NIC sends a
//! record the moment it has it, and a reader that takes whole ring words only ever takes
//! whole records. The NIC counts the words its channel accepted (`regs::stream::RING_WORDS`);
//! the host takes exactly that many.

use super::record::{field, record_len, WORD};
use super::{Error, Header};

/// Kind: padding to the next ring word (one word, nothing else in it).
pub const KIND_PAD: u8 = 0;
/// The padding word: kind [`KIND_PAD`], 1 word.
pub const PAD: u32 = (KIND_PAD as u32) << 24 | 1 << 16;

/// The ring words the NIC writes for a record stream (whole records, as the record buffer
/// holds them). A header announcing 0 words is an error: the NIC never stores one.
pub fn encode(stream: &[u8]) -> Result<Vec<u64>, Error> {
    let mut words = Vec::with_capacity(stream.len() / WORD + 8);
    let mut at = 0;
    while at < stream.len() {
        let len = record_len(&stream[at..])?;
        words.extend(stream[at..at + len].chunks(WORD).map(|c| u32::from_be_bytes(c.try_into().unwrap())));
        if (len / WORD) % 2 == 1 {
            words.push(PAD);
        }
        at += len;
    }
    Ok(words.chunks(2).map(|p| (p[0] as u64) << 32 | p[1] as u64).collect())
}

/// The record stream in `ring` words, the padding removed. The words must hold whole
/// records, each starting in the high half of a word (as [`encode`] and the NIC write
/// them); anything else is an error naming the byte offset in the ring where it begins.
pub fn decode(ring: &[u64]) -> Result<Vec<u8>, (usize, Error)> {
    let bytes: Vec<u8> = ring.iter().flat_map(|w| w.to_be_bytes()).collect();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let len = record_len(&bytes[at..]).map_err(|e| (at, e))?;
        let padded = len.next_multiple_of(2 * WORD);
        if bytes[at + field::KIND] == KIND_PAD {
            return Err((at, misplaced("a padding word where a record starts")));
        }
        if at + padded > bytes.len() {
            return Err((
                at,
                Error::Truncated { header: Header::Record, need: padded, have: bytes.len() - at },
            ));
        }
        if len != padded && bytes[at + len..at + padded] != PAD.to_be_bytes() {
            return Err((at + len, misplaced("a record of odd length not followed by its padding word")));
        }
        out.extend_from_slice(&bytes[at..at + len]);
        at += padded;
    }
    Ok(out)
}

/// Ring words a stream of records of these lengths in words takes.
pub fn words_for(record_words: impl IntoIterator<Item = usize>) -> u64 {
    record_words.into_iter().map(|w| w.div_ceil(2) as u64).sum()
}

fn misplaced(what: &'static str) -> Error {
    Error::Field { header: Header::Record, field: what, value: 0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::FlowKey;
    use crate::wire::record::{parse_stream, InflatedRecord};

    fn inflated(i: u32) -> Vec<u8> {
        InflatedRecord {
            epoch: i,
            flow: FlowKey::from_v4([10, 0, 0, i as u8], [10, 0, 1, 2], 1000, 80, 6),
            switch_id: i as u16,
            latency_ns: 1000 * i,
        }
        .emit()
        .to_vec()
    }

    #[test]
    fn odd_records_are_padded_and_decode_back() {
        let mut s = Vec::new();
        for i in 0..3 {
            s.extend(inflated(i));
        }
        // A 2-word record of a later kind needs no padding.
        s.extend_from_slice(&[9, 2, 0, 0, 0xAA, 0xBB, 0xCC, 0xDD]);
        let ring = encode(&s).unwrap();
        assert_eq!(ring.len() as u64, words_for([7, 7, 7, 2]));
        assert_eq!(ring.len(), 13);
        assert_eq!(ring[3] as u32, PAD, "word 6 of the first record, then its padding");
        assert_eq!(ring[0] >> 32, u32::from_be_bytes(s[0..4].try_into().unwrap()) as u64);
        assert_eq!(decode(&ring).unwrap(), s);
        let (recs, err) = parse_stream(&decode(&ring).unwrap());
        assert!(err.is_none() && recs.len() == 4);
        assert_eq!(PAD.to_be_bytes(), [KIND_PAD, 1, 0, 0]);
    }

    #[test]
    fn damaged_rings_are_refused_where_they_break() {
        let s: Vec<u8> = (0..2).flat_map(inflated).collect();
        let ring = encode(&s).unwrap();
        // Cut inside the second record.
        let (at, e) = decode(&ring[..6]).unwrap_err();
        assert_eq!(at, 32);
        assert!(e.to_string().contains("truncated"), "{e}");
        // A padding word that is not one.
        let mut bad = ring.clone();
        bad[3] ^= 1;
        assert_eq!(decode(&bad).unwrap_err().0, 28);
        // A ring that starts in the middle of a record (its first word is not a header).
        let mut zero = ring.clone();
        zero[0] &= 0xFF00_FFFF_FFFF_FFFF;
        assert!(decode(&zero).unwrap_err().1.to_string().contains("words"));
        // Padding where a record should start.
        assert_eq!(decode(&[(PAD as u64) << 32 | PAD as u64]).unwrap_err().0, 0);
        assert_eq!(decode(&[]).unwrap(), Vec::<u8>::new());
        assert!(encode(&[1, 0, 0, 0]).is_err(), "a 0-word header");
    }
}
