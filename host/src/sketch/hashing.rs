//! Fast evaluation of several family CRCs of a 13-byte key at once.
//!
//! For a fixed message length a CRC is affine over GF(2): `crc(k) = c0 ^ XOR_p T_p[k[p]]`,
//! where `c0` is the CRC of the all-zero key and `T_p[b]` the contribution of byte value `b`
//! at position `p`. Precomputing `T` for all `d` members turns `d` sequential table CRCs
//! (a 13-step dependency chain each) into 13 independent loads of `d` words, which is what
//! lets one core insert tens of millions of packets per second. The tables are derived from
//! the contract's bitwise reference, and tests check them against the `crc` crate.

use smartnic_contract::hash::CrcParams;
use smartnic_contract::{FlowKey, KEY_LEN};

/// The CRCs of `d` family members over flow keys.
#[derive(Clone, Debug)]
pub struct HashBank {
    d: usize,
    /// Layout `[position][byte][member]`.
    table: Vec<u32>,
    zero: Vec<u32>,
    params: Vec<CrcParams>,
}

impl HashBank {
    pub fn new(params: &[CrcParams]) -> Self {
        let d = params.len();
        let zero: Vec<u32> = params.iter().map(|p| p.checksum(&[0; KEY_LEN])).collect();
        let mut table = vec![0u32; KEY_LEN * 256 * d];
        for (m, p) in params.iter().enumerate() {
            let basis = bit_basis(p, zero[m]);
            for pos in 0..KEY_LEN {
                for byte in 0..256usize {
                    let mut acc = 0u32;
                    for bit in 0..8 {
                        if byte & (0x80 >> bit) != 0 {
                            acc ^= basis[pos * 8 + bit];
                        }
                    }
                    table[(pos * 256 + byte) * d + m] = acc;
                }
            }
        }
        HashBank { d, table, zero, params: params.to_vec() }
    }

    pub fn len(&self) -> usize {
        self.d
    }

    pub fn is_empty(&self) -> bool {
        self.d == 0
    }

    pub fn params(&self) -> &[CrcParams] {
        &self.params
    }

    /// Writes the `d` CRCs of `key` into `out[..d]`.
    #[inline]
    pub fn hash_into(&self, key: &FlowKey, out: &mut [u32]) {
        let out = &mut out[..self.d];
        out.copy_from_slice(&self.zero);
        for (pos, &b) in key.as_bytes().iter().enumerate() {
            let row = &self.table[(pos * 256 + b as usize) * self.d..][..self.d];
            for (o, t) in out.iter_mut().zip(row) {
                *o ^= t;
            }
        }
    }
}

/// The linear contribution of each of the 104 key bits (MSB of byte 0 first).
fn bit_basis(p: &CrcParams, zero: u32) -> Vec<u32> {
    (0..KEY_LEN * 8)
        .map(|bit| {
            let mut k = [0u8; KEY_LEN];
            k[bit / 8] = 0x80 >> (bit % 8);
            p.checksum(&k) ^ zero
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use smartnic_contract::hash::FAMILY;
    use smartnic_contract::vectors::{parse_hash_vectors, HASH_FILE};

    #[test]
    fn bank_matches_checked_in_vectors() {
        let bank = HashBank::new(&FAMILY);
        let mut out = [0u32; FAMILY.len()];
        for (key, want) in parse_hash_vectors(HASH_FILE) {
            bank.hash_into(&key, &mut out);
            assert_eq!(out, want, "key {key}");
        }
    }

    #[test]
    fn bank_matches_crc_crate() {
        let bank = HashBank::new(&FAMILY);
        // `crc::Crc` wants a `'static` algorithm; leaking seven small structs in a test is fine.
        let crcs: Vec<crc::Crc<u32>> = FAMILY
            .iter()
            .map(|p| {
                let alg: &'static crc::Algorithm<u32> = Box::leak(Box::new(crc::Algorithm {
                    width: 32,
                    poly: p.poly,
                    init: p.init,
                    refin: p.refin,
                    refout: p.refout,
                    xorout: p.xorout,
                    check: 0,
                    residue: 0,
                }));
                crc::Crc::<u32>::new(alg)
            })
            .collect();
        let mut stream = smartnic_contract::vectors::KeyStream::new(42);
        let mut out = [0u32; FAMILY.len()];
        for _ in 0..2000 {
            let key = stream.next_key();
            bank.hash_into(&key, &mut out);
            for (c, got) in crcs.iter().zip(out) {
                assert_eq!(c.checksum(key.as_bytes()), got);
            }
        }
    }
}
