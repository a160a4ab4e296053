//! The linear part of the family's CRCs by carry-less multiplication, for keys of 9 to 16
//! bytes (the 13-byte flow key): three multiplications a member and no table.
//!
//! Why: the byte tables of [`super::HashBank`] are 53 KiB for a flow key, more than L1,
//! and a key's 13 row loads share the L1 with the counters the sketches are waiting on.
//! With the hashing's loads taken away (a multiply hash in their place, as a measurement)
//! the 2 MiB CU d=3 tower ran 128 Mpps instead of 80, so the loads, not the counters'
//! misses, bounded it.
//!
//! The algebra. An MSB-first CRC without reflection is affine in its key: its linear part
//! is `M(x) x^32 mod P(x)`, where `M` is the key read as a polynomial (bit 7 of byte 0 the
//! highest power) and `P` is `x^32` plus the member's polynomial. Cut the key into its
//! last eight bytes `B` and the bytes `A` before them, so `M = A x^64 + B` with `A` of at
//! most 64 bits:
//! - `S = A * (x^96 mod P) + B x^32`, of degree below 96, is congruent to `M x^32`;
//! - Barrett reduction: with `mu = floor(x^96 / P)` (degree 64) and `T = floor(S / x^32)`
//!   (degree below 64), `Q = floor(T mu / x^64)` is exactly `floor(S / P)` (over GF(2)
//!   nothing carries, so there is no correction step); `T mu / x^64` is `T` plus the high
//!   half of `T * (mu - x^64)`;
//! - `S mod P` is the low 32 bits of `S + Q * P`, that is of `S + Q * poly` (the `x^32`
//!   term of `P` only reaches bits 32 and up).
//!
//! A vector lane per member: with AVX-512 and its carry-less multiply, four members are
//! the four 128-bit lanes of one register, so a key costs three multiplications for a
//! bank of up to four members and six for up to eight.
//!
//! Only x86_64 has the vector path; elsewhere the constants serve the tests alone.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]

/// The shortest key the carry-less path takes: its last eight bytes are one half.
pub(super) const MIN_LEN: usize = 9;
/// The longest: the bytes before the last eight are the other half, at most 64 bits.
pub(super) const MAX_LEN: usize = 16;

/// A member's constants, in the order the lanes take them: `x^96 mod P` and the low 64
/// bits of `floor(x^96 / P)` (its `x^64` term is implicit), then the polynomial.
#[derive(Clone, Copy, Debug)]
pub(super) struct Member {
    pub(super) fold: u64,
    pub(super) mu: u64,
    pub(super) poly: u64,
}

impl Member {
    /// The constants of the polynomial `x^32 + poly`.
    pub(super) fn new(poly: u32) -> Self {
        let p = (1u128 << 32) | poly as u128;
        let (q, r) = divide(1u128 << 96, p);
        debug_assert_eq!(q >> 64, 1, "x^96 / P has degree 64");
        Member { fold: r as u64, mu: q as u64, poly: poly as u64 }
    }

    /// The linear part of the CRC of `key` (9 to 16 bytes), computed with portable integer
    /// arithmetic: the definition the vector paths are tested against.
    #[cfg(test)]
    pub(super) fn linear<const L: usize>(&self, key: &[u8; L]) -> u32 {
        let (a, b) = halves(key);
        let s = clmul(a, self.fold) ^ ((b as u128) << 32);
        let t = (s >> 32) as u64;
        let q = t ^ (clmul(t, self.mu) >> 64) as u64;
        (s ^ clmul(q, self.poly)) as u32
    }
}

/// The key as `A` (the bytes before the last eight) and `B` (the last eight), each read
/// big-endian. Panics outside 9 to 16 bytes.
#[inline(always)]
pub(super) fn halves<const L: usize>(key: &[u8; L]) -> (u64, u64) {
    assert!((MIN_LEN..=MAX_LEN).contains(&L), "carry-less CRCs take keys of 9 to 16 bytes");
    let mut a = [0u8; 8];
    a[16 - L..].copy_from_slice(&key[..L - 8]);
    let b: [u8; 8] = key[L - 8..].try_into().expect("eight bytes");
    (u64::from_be_bytes(a), u64::from_be_bytes(b))
}

/// `num / den` over GF(2): quotient and remainder.
fn divide(mut num: u128, den: u128) -> (u128, u128) {
    let deg = 127 - den.leading_zeros();
    let mut q = 0;
    while num != 0 && 127 - num.leading_zeros() >= deg {
        let shift = 127 - num.leading_zeros() - deg;
        num ^= den << shift;
        q |= 1u128 << shift;
    }
    (q, num)
}

/// The carry-less product of two 64-bit polynomials.
#[cfg(test)]
fn clmul(a: u64, b: u64) -> u128 {
    (0..64).filter(|i| b >> i & 1 == 1).fold(0, |acc, i| acc ^ ((a as u128) << i))
}

/// Up to eight members, one a 128-bit lane of one of two AVX-512 registers.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub(super) struct Lanes {
    /// Per register and lane: `fold` in the low qword, `mu` in the high one.
    fold_mu: [[u64; 8]; 2],
    /// Per register and lane: `poly` in the low qword.
    poly: [[u64; 8]; 2],
    /// Members in the second register.
    wide: bool,
}

#[cfg(target_arch = "x86_64")]
impl Lanes {
    /// Whether this CPU runs the lanes.
    pub(super) fn available() -> bool {
        std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("vpclmulqdq")
    }

    /// The lanes of up to eight members (lanes past them hold zeros and give zeros).
    pub(super) fn new(members: &[Member]) -> Self {
        assert!(members.len() <= 8, "eight lanes");
        let (mut fold_mu, mut poly) = ([[0u64; 8]; 2], [[0u64; 8]; 2]);
        for (i, m) in members.iter().enumerate() {
            let (r, l) = (i / 4, i % 4);
            (fold_mu[r][2 * l], fold_mu[r][2 * l + 1], poly[r][2 * l]) = (m.fold, m.mu, m.poly);
        }
        Lanes { fold_mu, poly, wide: members.len() > 4 }
    }

    /// The linear parts of `key`'s CRCs (9 to 16 bytes) under the first four members.
    ///
    /// # Safety
    /// The CPU must support AVX-512F, AVX-512BW and VPCLMULQDQ ([`Lanes::available`]).
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,vpclmulqdq")]
    pub(super) unsafe fn linear4<const L: usize>(&self, key: &[u8; L]) -> [u32; 4] {
        let (a, b) = halves(key);
        // SAFETY: the caller's CPU has the features.
        unsafe { std::mem::transmute(register(a, b, &self.fold_mu[0], &self.poly[0])) }
    }

    /// The linear parts of `key`'s CRCs (9 to 16 bytes), one per member (zeros past them).
    ///
    /// # Safety
    /// As [`Lanes::linear4`].
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,vpclmulqdq")]
    pub(super) unsafe fn linear8<const L: usize>(&self, key: &[u8; L]) -> [u32; 8] {
        use core::arch::x86_64::__m128i;
        let (a, b) = halves(key);
        // SAFETY: the caller's CPU has the features.
        unsafe {
            let lo = register(a, b, &self.fold_mu[0], &self.poly[0]);
            let hi =
                if self.wide { register(a, b, &self.fold_mu[1], &self.poly[1]) } else { std::mem::zeroed() };
            std::mem::transmute::<[__m128i; 2], [u32; 8]>([lo, hi])
        }
    }
}

/// The remainders of the key halves `a` and `b` under the four members of one register,
/// one per 32-bit lane.
///
/// # Safety
/// As [`Lanes::linear4`].
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq")]
unsafe fn register(a: u64, b: u64, fold_mu: &[u64; 8], poly: &[u64; 8]) -> core::arch::x86_64::__m128i {
    use core::arch::x86_64::*;
    // SAFETY: the arrays are 64 bytes each (unaligned loads); the caller's CPU has the
    // features.
    unsafe {
        let fold_mu = _mm512_loadu_si512(fold_mu.as_ptr().cast());
        let poly = _mm512_loadu_si512(poly.as_ptr().cast());
        // Every lane: A in the low qword; B x^32 as a 128-bit value.
        let a = _mm512_set1_epi64(a as i64);
        let b_up = _mm512_broadcast_i32x4(_mm_set_epi64x((b >> 32) as i64, (b << 32) as i64));
        // S = A * fold + B x^32 (below 96 bits); T = S >> 32 (below 64).
        let s = _mm512_xor_si512(_mm512_clmulepi64_epi128::<0x00>(a, fold_mu), b_up);
        let t = _mm512_bsrli_epi128::<4>(s);
        // Q = T + high half of T * mu.
        let q = _mm512_xor_si512(t, _mm512_bsrli_epi128::<8>(_mm512_clmulepi64_epi128::<0x10>(t, fold_mu)));
        // S + Q * poly; its low 32 bits are the remainder.
        let r = _mm512_xor_si512(s, _mm512_clmulepi64_epi128::<0x00>(q, poly));
        _mm512_castsi512_si128(_mm512_permutexvar_epi32(
            _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12, 8, 4, 0),
            r,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use smartnic_contract::hash::{CrcParams, FAMILY};

    /// The constants' definitions: `fold = x^96 mod P`, and `(x^64 + mu) * P + fold = x^96`.
    #[test]
    fn constants_divide_x96() {
        for p in FAMILY {
            let m = Member::new(p.poly);
            let full = (1u128 << 32) | p.poly as u128;
            let q = (1u128 << 64) | m.mu as u128;
            let prod = clmul(q as u64, full as u64) ^ (full << 64);
            assert_eq!(prod ^ m.fold as u128, 1u128 << 96, "poly {:#x}", p.poly);
            assert!(m.fold < 1 << 32);
        }
    }

    fn check<const L: usize>(m: &Member, p: CrcParams, bytes: &[u8; 16]) {
        let key: &[u8; L] = bytes[..L].try_into().unwrap();
        let want = p.checksum(key) ^ p.checksum(&[0; L]);
        assert_eq!(m.linear(key), want, "poly {:#x}, {L} bytes", p.poly);
    }

    /// The portable carry-less form is the CRC's linear part, for every length it takes.
    #[test]
    fn linear_part_equals_the_reference() {
        let mut stream = smartnic_contract::vectors::KeyStream::new(5);
        for p in FAMILY {
            let m = Member::new(p.poly);
            for n in 0..200u8 {
                let mut key = [0u8; 16];
                key[..13].copy_from_slice(stream.next_key().as_bytes());
                key[13..].copy_from_slice(&[n, !n, 0x5a]);
                check::<9>(&m, p, &key);
                check::<13>(&m, p, &key);
                check::<15>(&m, p, &key);
                check::<16>(&m, p, &key);
            }
        }
    }
}
