//! Fast evaluation of several family CRCs of a 13-byte key at once.
//!
//! For a fixed message length a CRC is affine over GF(2): `crc(k) = c0 ^ XOR_p T_p[k_p]`,
//! where `c0` is the CRC of the all-zero key and `T_p[x]` the contribution of value `x` in
//! key nibble `p`. Precomputing `T` for all `d` members turns `d` sequential table CRCs
//! (a 13-step dependency chain each) into 26 independent loads of `d` words, which is what
//! lets one core insert tens of millions of packets per second. Nibbles, not bytes: the
//! 26 x 16 rows are 13 KiB and stay in L1 next to the counters' cache lines, where byte
//! tables (104 KiB) would evict them (measured: TowerCM `insert_batch` about 10% faster).
//! The tables are derived from the contract's bitwise reference, and tests check them
//! against the `crc` crate.

use smartnic_contract::hash::CrcParams;
use smartnic_contract::{FlowKey, KEY_LEN};

/// Most members one bank evaluates (one 32-byte row per table entry).
pub const MAX_MEMBERS: usize = 8;
/// Nibbles of a key.
const NIBBLES: usize = KEY_LEN * 2;

/// One table row: the contribution of a nibble to every member's CRC. Fixed width and
/// 32-byte aligned so the 26 row XORs compile to a few vector instructions.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(32))]
struct Row([u32; MAX_MEMBERS]);

/// The CRCs of up to [`MAX_MEMBERS`] family members over flow keys.
#[derive(Clone, Debug)]
pub struct HashBank {
    d: usize,
    /// Indexed `[nibble position * 16 + nibble]` (high nibble of byte `p` at `2p`).
    /// A fixed-size array, so the hot path has no length to check.
    table: Box<[Row; NIBBLES * 16]>,
    zero: Row,
    params: Vec<CrcParams>,
}

impl HashBank {
    /// A bank of the given members; panics beyond [`MAX_MEMBERS`] (sketch constructors
    /// reject such geometries first).
    pub fn new(params: &[CrcParams]) -> Self {
        let d = params.len();
        assert!(d <= MAX_MEMBERS, "a hash bank holds at most {MAX_MEMBERS} members");
        let mut zero = Row::default();
        for (z, p) in zero.0.iter_mut().zip(params) {
            *z = p.checksum(&[0; KEY_LEN]);
        }
        let mut table = Box::new([Row::default(); NIBBLES * 16]);
        for (m, p) in params.iter().enumerate() {
            let basis = bit_basis(p, zero.0[m]);
            for pos in 0..NIBBLES {
                for nib in 0..16usize {
                    let mut acc = 0u32;
                    for bit in 0..4 {
                        if nib & (0x8 >> bit) != 0 {
                            acc ^= basis[pos * 4 + bit];
                        }
                    }
                    table[pos * 16 + nib].0[m] = acc;
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

    /// The CRCs of `key`: entry `m` for member `m` (entries `d..` are zero).
    #[inline(always)]
    pub fn hash(&self, key: &FlowKey) -> [u32; MAX_MEMBERS] {
        let mut acc = self.zero.0;
        for (pos, &b) in key.as_bytes().iter().enumerate() {
            let hi = &self.table[pos * 32 + (b >> 4) as usize].0;
            let lo = &self.table[pos * 32 + 16 + (b & 15) as usize].0;
            for ((o, h), l) in acc.iter_mut().zip(hi).zip(lo) {
                *o ^= h ^ l;
            }
        }
        acc
    }

    /// Writes the `d` CRCs of `key` into `out[..d]`.
    #[inline]
    pub fn hash_into(&self, key: &FlowKey, out: &mut [u32]) {
        out[..self.d].copy_from_slice(&self.hash(key)[..self.d]);
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
