//! Shared test vectors: generated here, checked in under `hdl/contract/vectors/`, and
//! checked by every side (host software, Verilator runs of the HDL).
//!
//! `hash.txt` lists flow keys and the CRC of each family member:
//! `hash <key: 26 hex digits> <crc member 0> ... <crc member 6>` (8 hex digits each).
//! Regenerate with `cargo run -p smartnic-contract --example gen-vectors`; a unit test
//! fails when the checked-in file and the generator disagree.

use crate::hash::{FAMILY, FAMILY_SIZE};
use crate::key::{FlowKey, KEY_LEN};

/// The checked-in hash vectors.
pub const HASH_FILE: &str = include_str!("../vectors/hash.txt");

/// Deterministic key stream (splitmix64) so vectors need no RNG dependency.
#[derive(Clone, Debug)]
pub struct KeyStream(u64);

impl KeyStream {
    pub fn new(seed: u64) -> Self {
        KeyStream(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn next_key(&mut self) -> FlowKey {
        let a = self.next_u64().to_le_bytes();
        let b = self.next_u64().to_le_bytes();
        let mut k = [0u8; KEY_LEN];
        k[..8].copy_from_slice(&a);
        k[8..].copy_from_slice(&b[..5]);
        FlowKey(k)
    }
}

/// Keys covered by the hash vectors: edge patterns, then 256 pseudo-random keys.
pub fn vector_keys() -> Vec<FlowKey> {
    let mut keys = vec![
        FlowKey([0; KEY_LEN]),
        FlowKey([0xFF; KEY_LEN]),
        FlowKey::from_v4([10, 0, 0, 1], [10, 0, 0, 2], 1234, 80, 6),
    ];
    for bit in [0usize, 7, 51, 103] {
        let mut k = [0u8; KEY_LEN];
        k[bit / 8] = 0x80 >> (bit % 8);
        keys.push(FlowKey(k));
    }
    let mut s = KeyStream::new(0x5EED);
    keys.extend((0..256).map(|_| s.next_key()));
    keys
}

/// Renders `hash.txt` from the reference CRC implementation.
pub fn render_hash_vectors() -> String {
    let mut out = String::from(
        "# smartnic contract hash vectors, format 1\n\
         # hash <13-byte key hex> <CRC of family member 0..6, hex>\n",
    );
    for key in vector_keys() {
        out.push_str("hash ");
        for b in key.as_bytes() {
            out.push_str(&format!("{b:02x}"));
        }
        for p in FAMILY.iter() {
            out.push_str(&format!(" {:08x}", p.checksum(key.as_bytes())));
        }
        out.push('\n');
    }
    out
}

/// Parses `hash.txt` into `(key, crc per family member)`; panics on a malformed file
/// (it is checked in and tested, so a parse failure is a repository bug).
pub fn parse_hash_vectors(text: &str) -> Vec<(FlowKey, [u32; FAMILY_SIZE])> {
    text.lines()
        .filter_map(|l| l.strip_prefix("hash "))
        .map(|l| {
            let mut parts = l.split_whitespace();
            let hex = parts.next().expect("key");
            let mut key = [0u8; KEY_LEN];
            for (i, b) in key.iter_mut().enumerate() {
                *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("key hex");
            }
            let mut crcs = [0u32; FAMILY_SIZE];
            for c in crcs.iter_mut() {
                *c = u32::from_str_radix(parts.next().expect("crc"), 16).expect("crc hex");
            }
            (FlowKey(key), crcs)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checked_in_hash_vectors_match_generator() {
        assert_eq!(
            HASH_FILE,
            render_hash_vectors(),
            "vectors/hash.txt is stale: run `cargo run -p smartnic-contract --example gen-vectors`"
        );
        assert_eq!(parse_hash_vectors(HASH_FILE).len(), vector_keys().len());
    }
}
