//! Fast evaluation of several family CRCs of a fixed-length key at once: the 13-byte flow
//! key of the flow sketches, the 15-byte hop key of the latency tower.
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

/// One table row: the contribution of a nibble to every member's CRC. Fixed width and
/// 32-byte aligned so the 26 row XORs compile to a few vector instructions.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(32))]
struct Row([u32; MAX_MEMBERS]);

/// The CRCs of up to [`MAX_MEMBERS`] family members over `L`-byte keys (flow keys unless
/// told otherwise).
#[derive(Clone, Debug)]
pub struct HashBank<const L: usize = KEY_LEN> {
    d: usize,
    /// Indexed `[byte position][nibble]`: the high nibble's rows first (0..16), then the
    /// low nibble's (16..32). Fixed-size arrays, so the hot path has no length to check.
    table: Box<[[Row; 32]; L]>,
    zero: Row,
    params: Vec<CrcParams>,
}

impl HashBank<KEY_LEN> {
    /// The CRCs of `key`: entry `m` for member `m` (entries `d..` are zero).
    #[inline(always)]
    pub fn hash(&self, key: &FlowKey) -> [u32; MAX_MEMBERS] {
        self.hash_bytes(key.as_bytes())
    }

    /// The first `N` entries of [`HashBank::hash`], XORing only `N` lanes of each row,
    /// for kernels whose member count is a constant. A bank of up to four members hashed
    /// with `N = 4` takes one 16-byte vector a row: with all eight lanes, of which three
    /// were used, the compiler split each row into scalar XORs (a d=3 CU tower: 65 against
    /// 91 Mpps). Elsewhere (SuMax, the per-switch half) the narrow form measured the same.
    #[inline(always)]
    pub fn hash_lanes<const N: usize>(&self, key: &FlowKey) -> [u32; N] {
        let mut acc: [u32; N] = std::array::from_fn(|i| self.zero.0[i]);
        for (rows, &b) in self.table.iter().zip(key.as_bytes()) {
            let hi = &rows[(b >> 4) as usize].0;
            let lo = &rows[16 + (b & 15) as usize].0;
            for i in 0..N {
                acc[i] ^= hi[i] ^ lo[i];
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

impl<const L: usize> HashBank<L> {
    /// A bank of the given members; panics beyond [`MAX_MEMBERS`] (sketch constructors
    /// reject such geometries first).
    pub fn new(params: &[CrcParams]) -> Self {
        let d = params.len();
        assert!(d <= MAX_MEMBERS, "a hash bank holds at most {MAX_MEMBERS} members");
        let mut zero = Row::default();
        for (z, p) in zero.0.iter_mut().zip(params) {
            *z = p.checksum(&[0; L]);
        }
        let rows: Box<[[Row; 32]]> = vec![[Row::default(); 32]; L].into_boxed_slice();
        let mut table: Box<[[Row; 32]; L]> = rows.try_into().expect("L rows");
        for (m, p) in params.iter().enumerate() {
            let basis = bit_basis::<L>(p, zero.0[m]);
            for nibble in 0..2 * L {
                for nib in 0..16usize {
                    let mut acc = 0u32;
                    for bit in 0..4 {
                        if nib & (0x8 >> bit) != 0 {
                            acc ^= basis[nibble * 4 + bit];
                        }
                    }
                    table[nibble / 2][(nibble % 2) * 16 + nib].0[m] = acc;
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

    /// What the bytes `part`, at byte `at` of a key, add to its CRCs. By the affinity
    /// above, a key's CRCs are [`HashBank::hash_parts`] of the contributions of parts that
    /// cover it once each; a part shared by many keys (the flow in every hop key of a
    /// packet) is then evaluated once. Panics when the part does not fit the key.
    #[inline(always)]
    pub fn part(&self, at: usize, part: &[u8]) -> [u32; MAX_MEMBERS] {
        let mut acc = [0u32; MAX_MEMBERS];
        for (rows, &b) in self.table[at..at + part.len()].iter().zip(part) {
            let hi = &rows[(b >> 4) as usize].0;
            let lo = &rows[16 + (b & 15) as usize].0;
            for ((o, h), l) in acc.iter_mut().zip(hi).zip(lo) {
                *o ^= h ^ l;
            }
        }
        acc
    }

    /// The CRCs of a key from the contributions ([`HashBank::part`]) of parts covering each
    /// of its bytes exactly once.
    #[inline(always)]
    pub fn hash_parts(&self, parts: &[[u32; MAX_MEMBERS]]) -> [u32; MAX_MEMBERS] {
        let mut acc = self.zero.0;
        for p in parts {
            for (o, x) in acc.iter_mut().zip(p) {
                *o ^= x;
            }
        }
        acc
    }

    /// The CRCs of the `L` bytes `key`: entry `m` for member `m` (entries `d..` are zero).
    #[inline(always)]
    pub fn hash_bytes(&self, key: &[u8; L]) -> [u32; MAX_MEMBERS] {
        self.hash_parts(&[self.part(0, key)])
    }
}

/// The linear contribution of each of the `8 L` key bits (MSB of byte 0 first).
fn bit_basis<const L: usize>(p: &CrcParams, zero: u32) -> Vec<u32> {
    (0..L * 8)
        .map(|bit| {
            let mut k = [0u8; L];
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
            // The narrow form is the first lanes of the full one.
            assert_eq!(bank.hash_lanes::<4>(&key)[..], want[..4], "key {key}");
            assert_eq!(bank.hash_lanes::<8>(&key), bank.hash(&key), "key {key}");
        }
    }

    /// Banks of fewer members: the same CRCs, zeros past their members, and the same
    /// in the four-lane form.
    #[test]
    fn narrow_banks_match_checked_in_vectors() {
        for d in 1..=4 {
            let bank = HashBank::new(&FAMILY[..d]);
            for (key, want) in parse_hash_vectors(HASH_FILE) {
                let got = bank.hash(&key);
                assert_eq!(got[..d], want[..d], "{d} members, key {key}");
                assert!(got[d..].iter().all(|&x| x == 0), "{d} members, key {key}");
                assert_eq!(bank.hash_lanes::<4>(&key)[..], got[..4], "{d} members, key {key}");
            }
        }
    }

    /// The 15-byte hop keys hash like any other message of the family.
    #[test]
    fn hop_key_bank_matches_reference() {
        use smartnic_contract::per_switch::{switch_key, SWITCH_KEY_LEN};
        let bank = HashBank::<SWITCH_KEY_LEN>::new(&FAMILY);
        let mut stream = smartnic_contract::vectors::KeyStream::new(7);
        for s in 0..500u16 {
            let k = switch_key(s.wrapping_mul(977), &stream.next_key());
            let got = bank.hash_bytes(&k);
            for (m, p) in FAMILY.iter().enumerate() {
                assert_eq!(got[m], p.checksum(&k), "member {m}");
            }
        }
    }

    /// A hop key hashed from its two parts (switch ID, flow), each evaluated apart, is the
    /// reference CRC of the whole key, for every member.
    #[test]
    fn parts_of_a_hop_key_hash_like_the_key() {
        use smartnic_contract::per_switch::{field, switch_key, SWITCH_KEY_LEN};
        let bank = HashBank::<SWITCH_KEY_LEN>::new(&FAMILY);
        let mut stream = smartnic_contract::vectors::KeyStream::new(11);
        for s in 0..500u16 {
            let (id, flow) = (s.wrapping_mul(40_503), stream.next_key());
            let k = switch_key(id, &flow);
            let parts = [
                bank.part(field::FLOW.start, flow.as_bytes()),
                bank.part(field::SWITCH_ID.start, &id.to_be_bytes()),
            ];
            let got = bank.hash_parts(&parts);
            for (m, p) in FAMILY.iter().enumerate() {
                assert_eq!(got[m], p.checksum(&k), "member {m}, switch {id}");
            }
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
