//! The CRC-32 hash family.
//!
//! Every array of every sketch hashes the 13-byte flow key with its own CRC-32 parameter
//! set from [`FAMILY`]. CRC is what P4 targets expose (`crc32_custom`: polynomial, init,
//! xor-out, reflection), what a CPU computes quickly, and what an FPGA computes as a pure
//! XOR tree, so the three sides agree bit for bit.
//!
//! All members are MSB-first (not reflected) with init and xor-out `0xFFFF_FFFF`; only the
//! polynomial differs. Different initial values alone would *not* give independent hashes:
//! for fixed-length keys a CRC is affine in its init, so two members that differ only in
//! init differ by a constant XOR and collide on exactly the same key pairs.
//!
//! Index reduction ([`index`]) is the multiply-shift map `(h * depth) >> 32`. For a
//! power-of-two depth `2^k` it is simply the top `k` bits of the CRC (wiring in hardware,
//! a bit slice in P4), and it also serves any other depth exactly, which the host's
//! memory-budget experiments need. (The first draft of the design said "low bits"; the top
//! bits cost the same in hardware and keep one rule for every depth.)

/// One CRC-32 parameter set (the Rocksoft model, as in `crc32_custom` and the `crc` crate).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CrcParams {
    /// Generator polynomial in normal (MSB-first) notation, implicit x^32 omitted.
    pub poly: u32,
    pub init: u32,
    pub xorout: u32,
    pub refin: bool,
    pub refout: bool,
}

impl CrcParams {
    /// A family member: MSB-first, init and xor-out all ones.
    pub const fn msb_first(poly: u32) -> Self {
        CrcParams { poly, init: 0xFFFF_FFFF, xorout: 0xFFFF_FFFF, refin: false, refout: false }
    }

    /// Bitwise reference implementation: slow, obviously correct, the definition other
    /// implementations (table-driven software, XOR trees, P4) are tested against.
    pub fn checksum(&self, data: &[u8]) -> u32 {
        self.finish(self.register_step(self.init, data))
    }

    /// The CRC register after `data`, starting from register value `crc` (no reflection of
    /// the result, no xor-out): linear in `(crc, data)` over GF(2), which is what lets a
    /// circuit fold a long message one wide word per clock with a constant matrix.
    pub fn register_step(&self, mut crc: u32, data: &[u8]) -> u32 {
        for &byte in data {
            let b = if self.refin { byte.reverse_bits() } else { byte };
            crc ^= (b as u32) << 24;
            for _ in 0..8 {
                crc = if crc & 0x8000_0000 != 0 { (crc << 1) ^ self.poly } else { crc << 1 };
            }
        }
        crc
    }

    /// The checksum of a message whose register ended at `crc` ([`Self::register_step`]
    /// from `init`).
    pub fn finish(&self, crc: u32) -> u32 {
        (if self.refout { crc.reverse_bits() } else { crc }) ^ self.xorout
    }
}

/// The hash family. Polynomials chosen for their Hamming distance on short messages:
/// IEEE 802.3, Castagnoli, Koopman, CRC-32Q, CRC-32D, AUTOSAR, CD-ROM EDC.
pub const FAMILY: [CrcParams; 7] = [
    CrcParams::msb_first(0x04C1_1DB7),
    CrcParams::msb_first(0x1EDC_6F41),
    CrcParams::msb_first(0x741B_8CD7),
    CrcParams::msb_first(0x8141_41AB),
    CrcParams::msb_first(0xA833_982B),
    CrcParams::msb_first(0xF4AC_FB13),
    CrcParams::msb_first(0x8001_801B),
];

/// Number of independent hash functions the family offers.
pub const FAMILY_SIZE: usize = FAMILY.len();

/// Family member `i` (array `i` of a sketch uses member `hash_base + i`).
pub fn member(i: usize) -> CrcParams {
    FAMILY[i % FAMILY_SIZE]
}

/// The switches' ECMP hash of the 13-byte flow key: CRC-32/ISO-HDLC (the Ethernet FCS CRC,
/// v1model's `HashAlgorithm.crc32`). Reflected, so it is none of the [`FAMILY`] members the
/// sketches index with: which next hop a flow took says nothing about its sketch cells.
pub const ECMP: CrcParams =
    CrcParams { poly: 0x04C1_1DB7, init: 0xFFFF_FFFF, xorout: 0xFFFF_FFFF, refin: true, refout: true };

/// What the ECMP hash reads: the flow key as is, or its reverse (source and destination
/// address and port swapped) at switches of odd tier.
///
/// Why two: a CRC is linear, so `crc(x) mod 2` at one switch and at the next switch of the
/// path are the same bit of the same key up to a constant, even with a per-switch salt in
/// the input. Every edge switch's choice of aggregation switch would then fix that switch's
/// choice of core, and in a fat-tree half the cores would carry nothing (ECMP polarization).
/// The reversed key puts other key bits under each hash bit, so the choices at alternate
/// tiers are independent.
pub fn ecmp_input(key: &crate::FlowKey, reverse: bool) -> [u8; crate::KEY_LEN] {
    use crate::key::field::{DST_IP, DST_PORT, SRC_IP, SRC_PORT};
    let k = key.as_bytes();
    if !reverse {
        return *k;
    }
    let mut r = *k;
    r[SRC_IP].copy_from_slice(&k[DST_IP]);
    r[DST_IP].copy_from_slice(&k[SRC_IP]);
    r[SRC_PORT].copy_from_slice(&k[DST_PORT]);
    r[DST_PORT].copy_from_slice(&k[SRC_PORT]);
    r
}

/// The ECMP group member a hash selects among `count`: `hash % count`, as v1model's `hash`
/// extern computes `base + hash % max`.
#[inline]
pub fn ecmp_member(hash: u32, count: u16) -> u16 {
    (hash % count.max(1) as u32) as u16
}

/// Maps a 32-bit hash onto `0..depth` by multiply-shift (see module docs).
#[inline]
pub fn index(hash: u32, depth: u32) -> u32 {
    ((hash as u64 * depth as u64) >> 32) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The standard check value of CRC-32/BZIP2 (poly 0x04C11DB7, MSB-first,
    /// init/xorout all ones) over "123456789" is 0xFC891918.
    #[test]
    fn member0_is_crc32_bzip2() {
        assert_eq!(FAMILY[0].checksum(b"123456789"), 0xFC89_1918);
    }

    /// CRC-32C/ISCSI (reflected Castagnoli) check value 0xE3069283 pins the reflected path.
    #[test]
    fn reflected_path_matches_iscsi() {
        let iscsi = CrcParams { poly: 0x1EDC_6F41, init: !0, xorout: !0, refin: true, refout: true };
        assert_eq!(iscsi.checksum(b"123456789"), 0xE306_9283);
    }

    /// CRC-32/ISO-HDLC's check value 0xCBF43926 (what bmv2's `crc32` computes).
    #[test]
    fn ecmp_hash_is_crc32_iso_hdlc() {
        assert_eq!(ECMP.checksum(b"123456789"), 0xCBF4_3926);
        assert!(FAMILY.iter().all(|m| *m != ECMP));
        assert_eq!(ecmp_member(7, 3), 1);
        assert_eq!(ecmp_member(7, 0), 0, "an empty group never divides by zero");
    }

    #[test]
    fn reversed_ecmp_input_swaps_addresses_and_ports() {
        let k = crate::FlowKey::from_v4([1, 2, 3, 4], [5, 6, 7, 8], 9, 10, 6);
        assert_eq!(ecmp_input(&k, false), *k.as_bytes());
        assert_eq!(
            ecmp_input(&k, true),
            *crate::FlowKey::from_v4([5, 6, 7, 8], [1, 2, 3, 4], 10, 9, 6).as_bytes()
        );
    }

    #[test]
    fn index_of_power_of_two_depth_is_top_bits() {
        for h in [0u32, 1, 0x8000_0000, 0xDEAD_BEEF, u32::MAX] {
            assert_eq!(index(h, 1 << 16), h >> 16);
            assert_eq!(index(h, 1 << 14), h >> 18);
        }
        assert_eq!(index(u32::MAX, 300), 299);
    }

    #[test]
    fn members_are_distinct() {
        for (i, a) in FAMILY.iter().enumerate() {
            assert!(FAMILY[i + 1..].iter().all(|b| b.poly != a.poly));
        }
    }
}
