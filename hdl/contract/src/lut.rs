//! Lookup-table arithmetic: table contents *and* the bit-exact integer functions built on
//! them (PINT section 4.3 "value approximation" and Appendix C).
//!
//! Everything here is defined once. The hardware generator burns the `*_table` vectors into
//! ROMs and mirrors the integer functions gate for gate; the host models
//! (`smartnic::arith`) call these functions with cached tables. `f64` is used only inside
//! the table and constant generators (`*_table`, [`encoder_k`], [`encoder_c`]); every other
//! function is pure integer arithmetic.
//!
//! # Fixed-point log2 ([`log2_fx`])
//! For an integer `x` in `1..2^64`: `l` = position of the leading one (`63 - lzcnt`),
//! `m` = the `q` bits directly below the leading one (zero padded on the right when
//! `l < q`), result `(l << frac) + LOG2[m]` with
//! `LOG2[m] = round(log2(1 + m / 2^q) * 2^frac)` (round half up). The result has `frac`
//! fraction bits and fits `frac + 6` bits. `log2(0)` is undefined: the function returns
//! `None`; the hardware block drives `valid = 0` and `value = 0`.
//! Because the mantissa is truncated the result never overestimates by more than the table
//! rounding: `log2 x - log2(1 + 2^-q) - 2^-(frac+1) <= log2_fx(x) / 2^frac <= log2 x +
//! 2^-(frac+1)`. Powers of two are exact: `log2_fx(2^k) = k << frac`.
//!
//! # Fixed-point exp2 ([`exp2_fx`])
//! The input is a signed fixed-point `y` with `in_frac` fraction bits. It is first rounded
//! (half up, i.e. `floor(y * 2^q / 2^in_frac + 1/2)`) to `q` fraction bits, giving
//! `yq = i * 2^q + f` with `0 <= f < 2^q` (a carry from rounding moves into `i`). With
//! `EXP2[f] = round(2^(f / 2^q) * 2^frac)` (in `[2^frac, 2^(frac+1))`) the output is
//! `EXP2[f] * 2^(i + out_frac - frac)` with `out_frac` fraction bits: a left shift, or a
//! right shift rounded half up (`(v + 2^(n-1)) >> n`). Results above `2^out_width - 1`
//! saturate to `2^out_width - 1`. `exp2_fx(k << in_frac) = 2^k` exactly (when it fits).
//!
//! # Multiply and divide
//! * Log-add-exp ([`mul_log`], [`div_log`]): `x*y = exp2(log2 x + log2 y)` and
//!   `x/y = exp2(log2 x - log2 y)`, the exp2 input having the log2's `frac` fraction bits.
//!   Products are integers (`out_frac = 0`) saturating at `u64::MAX`; quotients have a
//!   caller-chosen `out_frac` and saturate at `u64::MAX`. Zero rules: `x*0 = 0*y = 0`,
//!   `0/y = 0`, `x/0` is `None` (hardware: `valid = 0`, value all ones).
//! * Direct tables ([`mul_direct`], [`div_direct`]), PINT's alternative: the `q/2` bits
//!   below each operand's leading one (the leading one itself is implicit, a "hidden bit",
//!   so the same `2^q` entries buy one more bit per operand than indexing with the leading
//!   one) index one table of `2^q` entries. The product table is exact,
//!   `MUL[mx << h | my] = (2^h + mx) * (2^h + my)`, `h = q/2`, so `mul_direct` returns the
//!   product of the two truncated operands; the quotient table is
//!   `DIV[mx << h | my] = round((2^h + mx) / (2^h + my) * 2^frac)`. Same shift, rounding,
//!   saturation and zero rules as the log-add-exp variant.
//!
//! # Multiplicative encoder ([`encode_fx`], [`decode_fx`])
//! `alpha = round(log_{(1+eps)^2} v) = round(log2(v) * K)`, `K = 1 / (2 log2(1 + eps))`,
//! computed as `X = log2_fx(v) * K_fx` with `K_fx = round(K * 2^16)` ([`ENC_K_FRAC`] = 16,
//! `K_fx` a `u32`, so `X` has `frac + 16` fraction bits) and
//! * deterministic: `alpha = (X + 2^(frac+15)) >> (frac+16)` (round half up);
//! * randomized (PINT's `[.]_R`, unbiased in expectation):
//!   `alpha = (X + (r << frac)) >> (frac+16)` where `r` is a 16-bit random fraction from
//!   the encoder's LFSR (below).
//!
//! `v = 0` is encoded like `v = 1` (alpha 0). Alpha saturates at `2^alpha_bits - 1`.
//! Decode: `(1+eps)^(2 alpha) = 2^(alpha * C)`, `C_fx = round(2 log2(1 + eps) * 2^30)`
//! ([`ENC_C_FRAC`] = 30, a `u32` because `C <= 2`), computed as
//! `exp2_fx(alpha * C_fx, in_frac = 30, out_frac = 0, out_width = 64)`.
//!
//! # The encoder LFSR ([`lfsr_step`], [`lfsr_advance`])
//! A 32-bit Galois LFSR shifting right, feedback mask [`LFSR_MASK`] = `0x8020_0003`
//! (polynomial `x^32 + x^22 + x^2 + x + 1`, maximal length `2^32 - 1`, checked
//! exhaustively when it was chosen): one step is `s = (s >> 1) ^ (if s & 1 { MASK } else
//! { 0 })`. Every randomized encode first advances the state by [`LFSR_STEPS_PER_ENCODE`]
//! = 16 steps (one XOR network in hardware) and then uses the low 16 bits of the new state
//! as `r`. The reset state is the configured seed; a zero seed (the LFSR's lock-up state)
//! is replaced by [`LFSR_DEFAULT_SEED`] ([`lfsr_seed`]).
//!
//! # SuMax delay bins ([`delay_bin`])
//! `0` if `delay < base_ns`, else
//! `min(cells - 1, 1 + ((bins_per_octave * (log2_fx(delay) - log2_fx(base))) >> frac))`
//! (`base_ns = 0` and `delay = 0` are measured as 1; `cells <= 1` gives bin 0).
//! `delay = base * 2^k` lands exactly in bin `1 + k * bins_per_octave` (when it exists).
//!
//! # Defaults and why
//! `q = 10`, `frac = 16` for log2, exp2 and the direct tables: a 2^10-entry table of
//! 17-bit words is exactly one RAMB18 in its 1K x 18 shape (a 7-series block RAM), so the
//! four tables cost four RAMB18s (two RAMB36). `q = 10` bounds the log2 truncation error by
//! `log2(1 + 2^-10) = 1.41e-3` (0.098 % relative), against 0.56 % for `q = 8`; `frac = 16`
//! makes the table rounding (`2^-17 = 7.6e-6`) negligible next to that, and keeps log2
//! values in 22 bits. The encoder default `eps = 0.0025` is PINT's 32-to-16-bit example.

use crate::geometry::DelayBinRule;
use crate::vectors::KeyStream;

/// Parameters of the log2 table: `2^q` entries of `frac + 1` bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Log2Params {
    /// Mantissa index bits (the `q` bits below the leading one), 1..=16.
    pub q: u8,
    /// Fraction bits of the result, `q..=26` (the result fits `frac + 6` bits <= 32).
    pub frac: u8,
}

impl Log2Params {
    pub const DEFAULT: Log2Params = Log2Params { q: 10, frac: 16 };

    pub fn validate(&self) -> Result<(), LutError> {
        if !(1..=16).contains(&self.q) || self.frac < self.q || self.frac > 26 {
            return Err(LutError::Log2 { q: self.q, frac: self.frac });
        }
        Ok(())
    }
    pub fn entries(&self) -> usize {
        1 << self.q
    }
    /// Width of a table word (entries are at most `2^frac - 1` when `frac >= q`, but the
    /// word keeps one spare bit so that any rounding stays representable).
    pub fn entry_bits(&self) -> u8 {
        self.frac + 1
    }
    /// Width of a log2 result: `6` integer bits (leading-one position 0..=63) + `frac`.
    pub fn out_bits(&self) -> u8 {
        self.frac + 6
    }
}

impl Default for Log2Params {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Parameters of the exp2 table: `2^q` entries of `frac + 1` bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Exp2Params {
    /// Fraction bits of the input that index the table, 1..=16.
    pub q: u8,
    /// Fraction bits of a table word, `q..=30` (words lie in `[2^frac, 2^(frac+1))`).
    pub frac: u8,
}

impl Exp2Params {
    pub const DEFAULT: Exp2Params = Exp2Params { q: 10, frac: 16 };

    pub fn validate(&self) -> Result<(), LutError> {
        if !(1..=16).contains(&self.q) || self.frac < self.q || self.frac > 30 {
            return Err(LutError::Exp2 { q: self.q, frac: self.frac });
        }
        Ok(())
    }
    pub fn entries(&self) -> usize {
        1 << self.q
    }
    pub fn entry_bits(&self) -> u8 {
        self.frac + 1
    }
}

impl Default for Exp2Params {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Input and output format of one exp2 evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Exp2Io {
    /// Fraction bits of the signed input, 0..=62.
    pub in_frac: u8,
    /// Fraction bits of the unsigned output, 0..=63.
    pub out_frac: u8,
    /// Output width, 1..=64: larger results saturate to `2^out_width - 1`.
    pub out_width: u8,
}

/// Parameters of the direct product / quotient tables (PINT Appendix C's alternative).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DirectParams {
    /// Total index bits, even, 2..=16: `q/2` mantissa bits of each operand.
    pub q: u8,
    /// Fraction bits of a quotient table word, 1..=30 (words lie in `(2^(frac-1), 2^(frac+1))`).
    pub frac: u8,
}

impl DirectParams {
    pub const DEFAULT: DirectParams = DirectParams { q: 10, frac: 16 };

    pub fn validate(&self) -> Result<(), LutError> {
        if !(2..=16).contains(&self.q) || !self.q.is_multiple_of(2) || !(1..=30).contains(&self.frac) {
            return Err(LutError::Direct { q: self.q, frac: self.frac });
        }
        Ok(())
    }
    /// Mantissa bits per operand.
    pub fn half(&self) -> u8 {
        self.q / 2
    }
    pub fn entries(&self) -> usize {
        1 << self.q
    }
    /// Product table word width: `(2^h + mx)(2^h + my) < 2^(q+2)`.
    pub fn mul_entry_bits(&self) -> u8 {
        self.q + 2
    }
    pub fn div_entry_bits(&self) -> u8 {
        self.frac + 1
    }
}

impl Default for DirectParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Everything the arithmetic unit needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct ArithParams {
    pub log2: Log2Params,
    pub exp2: Exp2Params,
    pub direct: DirectParams,
}

impl ArithParams {
    pub const DEFAULT: ArithParams =
        ArithParams { log2: Log2Params::DEFAULT, exp2: Exp2Params::DEFAULT, direct: DirectParams::DEFAULT };
    pub fn validate(&self) -> Result<(), LutError> {
        self.log2.validate()?;
        self.exp2.validate()?;
        self.direct.validate()
    }
}

/// Fraction bits of the encoder constant `K_fx`.
pub const ENC_K_FRAC: u8 = 16;
/// Fraction bits of the decoder constant `C_fx`.
pub const ENC_C_FRAC: u8 = 30;
/// Bits of the random fraction used by randomized rounding.
pub const ENC_RAND_BITS: u8 = 16;

/// Multiplicative encoder parameters (PINT 4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EncoderParams {
    /// epsilon in parts per million, 10..=1_000_000 (the encoder base is `(1+eps)^2`).
    pub eps_ppm: u32,
    /// Width of the written code alpha, 1..=24; larger codes saturate.
    pub alpha_bits: u8,
    pub log2: Log2Params,
    pub exp2: Exp2Params,
}

impl EncoderParams {
    /// eps = 0.0025 (PINT's "32-bit value into 16 bits" example), 16-bit codes.
    pub const DEFAULT: EncoderParams =
        EncoderParams { eps_ppm: 2500, alpha_bits: 16, log2: Log2Params::DEFAULT, exp2: Exp2Params::DEFAULT };

    pub fn validate(&self) -> Result<(), LutError> {
        self.log2.validate()?;
        self.exp2.validate()?;
        if !(10..=1_000_000).contains(&self.eps_ppm) || !(1..=24).contains(&self.alpha_bits) {
            return Err(LutError::Encoder { eps_ppm: self.eps_ppm, alpha_bits: self.alpha_bits });
        }
        Ok(())
    }
    pub fn eps(&self) -> f64 {
        self.eps_ppm as f64 * 1e-6
    }
    /// Largest code: `2^alpha_bits - 1`.
    pub fn alpha_max(&self) -> u32 {
        ((1u64 << self.alpha_bits) - 1) as u32
    }
}

impl Default for EncoderParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Why a parameter set is unusable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LutError {
    Log2 { q: u8, frac: u8 },
    Exp2 { q: u8, frac: u8 },
    Direct { q: u8, frac: u8 },
    Encoder { eps_ppm: u32, alpha_bits: u8 },
}

impl core::fmt::Display for LutError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Log2 { q, frac } => {
                write!(f, "log2 table q={q} frac={frac}: need 1 <= q <= 16 and q <= frac <= 26")
            }
            Self::Exp2 { q, frac } => {
                write!(f, "exp2 table q={q} frac={frac}: need 1 <= q <= 16 and q <= frac <= 30")
            }
            Self::Direct { q, frac } => {
                write!(f, "direct tables q={q} frac={frac}: need even q in 2..=16, frac in 1..=30")
            }
            Self::Encoder { eps_ppm, alpha_bits } => write!(
                f,
                "encoder eps_ppm={eps_ppm} alpha_bits={alpha_bits}: need eps_ppm in \
                 10..=1000000 and alpha_bits in 1..=24"
            ),
        }
    }
}

impl std::error::Error for LutError {}

// ---------------------------------------------------------------------------------------
// Table and constant generators (the only place f64 is used).

fn round_u32(v: f64) -> u32 {
    // All table values are positive; f64::round rounds half away from zero = half up here.
    v.round() as u32
}

/// `LOG2[m] = round(log2(1 + m / 2^q) * 2^frac)`, `m` in `0..2^q`.
pub fn log2_table(p: Log2Params) -> Vec<u32> {
    let n = p.entries();
    let scale = (1u64 << p.frac) as f64;
    (0..n).map(|m| round_u32((1.0 + m as f64 / n as f64).log2() * scale)).collect()
}

/// `EXP2[f] = round(2^(f / 2^q) * 2^frac)`, `f` in `0..2^q`.
pub fn exp2_table(p: Exp2Params) -> Vec<u32> {
    let n = p.entries();
    let scale = (1u64 << p.frac) as f64;
    (0..n).map(|f| round_u32((f as f64 / n as f64).exp2() * scale)).collect()
}

/// `MUL[mx << h | my] = (2^h + mx) * (2^h + my)` (exact), `h = q/2`.
pub fn mul_direct_table(p: DirectParams) -> Vec<u32> {
    let h = p.half() as u32;
    (0..p.entries() as u32).map(|i| ((1 << h) + (i >> h)) * ((1 << h) + (i & ((1 << h) - 1)))).collect()
}

/// `DIV[mx << h | my] = round((2^h + mx) / (2^h + my) * 2^frac)`, `h = q/2`.
pub fn div_direct_table(p: DirectParams) -> Vec<u32> {
    let h = p.half() as u32;
    let scale = (1u64 << p.frac) as f64;
    (0..p.entries() as u32)
        .map(|i| {
            let a = ((1 << h) + (i >> h)) as f64;
            let b = ((1 << h) + (i & ((1 << h) - 1))) as f64;
            round_u32(a / b * scale)
        })
        .collect()
}

/// `K_fx = round(2^16 / (2 log2(1 + eps)))`: converts log2 to the encoder's base.
pub fn encoder_k(eps_ppm: u32) -> u32 {
    let eps = eps_ppm as f64 * 1e-6;
    round_u32((1u64 << ENC_K_FRAC) as f64 / (2.0 * (1.0 + eps).log2()))
}

/// `C_fx = round(2 log2(1 + eps) * 2^30)`: converts a code back to log2.
pub fn encoder_c(eps_ppm: u32) -> u32 {
    let eps = eps_ppm as f64 * 1e-6;
    round_u32(2.0 * (1.0 + eps).log2() * (1u64 << ENC_C_FRAC) as f64)
}

// ---------------------------------------------------------------------------------------
// Bit-exact integer definitions.

/// Position of the leading one of a nonzero `x` (`63 - lzcnt(x)`).
#[inline]
pub fn leading_one(x: u64) -> u32 {
    debug_assert!(x != 0);
    63 - x.leading_zeros()
}

/// The `bits` bits directly below the leading one at position `l` of `x`, zero padded on
/// the right when fewer than `bits` bits exist below it.
#[inline]
pub fn mantissa(x: u64, l: u32, bits: u8) -> u32 {
    debug_assert!(l < 64 && bits < 64);
    let bits = bits as u32;
    let mask = (1u64 << bits) - 1;
    // Bit `l` moved to bit 63, then the `bits` below it down to the bottom: one rule for
    // both cases (bits cut below, or zeros padded in on the right), without the branch
    // between them, which the per-switch half's detector mispredicted on every other hop
    // (its counts and sums straddle 2^bits).
    (((x << (63 - l)) >> (63 - bits)) & mask) as u32
}

/// Fixed-point log2 (see the module docs); `None` for `x = 0`.
#[inline]
pub fn log2_fx(table: &[u32], p: Log2Params, x: u64) -> Option<u32> {
    if x == 0 {
        return None;
    }
    let l = leading_one(x);
    let m = mantissa(x, l, p.q);
    Some((l << p.frac) + table[m as usize])
}

/// `v * 2^sh`: a left shift for `sh >= 0`, a right shift rounded half up for `sh < 0`,
/// saturating at `2^out_width - 1`.
#[inline]
pub fn shift_round_sat(v: u64, sh: i64, out_width: u8) -> u64 {
    let max = if out_width >= 64 { u64::MAX } else { (1u64 << out_width) - 1 };
    if v == 0 {
        return 0;
    }
    let r: u128 = if sh >= 0 {
        if sh >= 64 {
            return max;
        }
        (v as u128) << sh
    } else {
        let n = sh.unsigned_abs();
        if n > 64 {
            // v < 2^64 <= 2^(n-1): adding half an ulp cannot reach 2^n.
            return 0;
        }
        ((v as u128) + (1u128 << (n - 1))) >> n
    };
    if r > max as u128 {
        max
    } else {
        r as u64
    }
}

/// Fixed-point exp2 (see the module docs).
#[inline]
pub fn exp2_fx(table: &[u32], p: Exp2Params, y: i64, io: Exp2Io) -> u64 {
    let q = p.q as u32;
    let in_frac = io.in_frac as u32;
    let yq: i128 = if in_frac > q {
        let s = in_frac - q;
        (y as i128 + (1i128 << (s - 1))) >> s
    } else {
        (y as i128) << (q - in_frac)
    };
    let i = yq >> q;
    let f = (yq & ((1i128 << q) - 1)) as usize;
    let sh = i + io.out_frac as i128 - p.frac as i128;
    let sh = sh.clamp(-1000, 1000) as i64;
    shift_round_sat(table[f] as u64, sh, io.out_width)
}

/// `x * y` through `exp2(log2 x + log2 y)`, an integer saturating at `u64::MAX`.
#[inline]
pub fn mul_log(log2: &[u32], lp: Log2Params, exp2: &[u32], ep: Exp2Params, x: u64, y: u64) -> u64 {
    match (log2_fx(log2, lp, x), log2_fx(log2, lp, y)) {
        (Some(a), Some(b)) => {
            let io = Exp2Io { in_frac: lp.frac, out_frac: 0, out_width: 64 };
            exp2_fx(exp2, ep, a as i64 + b as i64, io)
        }
        _ => 0,
    }
}

/// `x / y` through `exp2(log2 x - log2 y)` with `out_frac` fraction bits, saturating at
/// `u64::MAX`; `None` when `y = 0`.
#[inline]
pub fn div_log(
    log2: &[u32],
    lp: Log2Params,
    exp2: &[u32],
    ep: Exp2Params,
    x: u64,
    y: u64,
    out_frac: u8,
) -> Option<u64> {
    let b = log2_fx(log2, lp, y)?;
    let Some(a) = log2_fx(log2, lp, x) else {
        return Some(0);
    };
    let io = Exp2Io { in_frac: lp.frac, out_frac, out_width: 64 };
    Some(exp2_fx(exp2, ep, a as i64 - b as i64, io))
}

#[inline]
fn direct_index(p: DirectParams, x: u64, y: u64) -> (usize, u32, u32) {
    let h = p.half();
    let (lx, ly) = (leading_one(x), leading_one(y));
    let idx = (mantissa(x, lx, h) << h) | mantissa(y, ly, h);
    (idx as usize, lx, ly)
}

/// `x * y` through the direct product table, an integer saturating at `u64::MAX`.
#[inline]
pub fn mul_direct(table: &[u32], p: DirectParams, x: u64, y: u64) -> u64 {
    if x == 0 || y == 0 {
        return 0;
    }
    let (idx, lx, ly) = direct_index(p, x, y);
    let sh = lx as i64 + ly as i64 - 2 * p.half() as i64;
    shift_round_sat(table[idx] as u64, sh, 64)
}

/// `x / y` through the direct quotient table with `out_frac` fraction bits, saturating at
/// `u64::MAX`; `None` when `y = 0`.
#[inline]
pub fn div_direct(table: &[u32], p: DirectParams, x: u64, y: u64, out_frac: u8) -> Option<u64> {
    if y == 0 {
        return None;
    }
    if x == 0 {
        return Some(0);
    }
    let (idx, lx, ly) = direct_index(p, x, y);
    let sh = lx as i64 - ly as i64 - p.frac as i64 + out_frac as i64;
    Some(shift_round_sat(table[idx] as u64, sh, 64))
}

/// How the encoder rounds `log_{(1+eps)^2} v`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rounding {
    /// Round half up.
    HalfUp,
    /// Add the 16-bit random fraction `r / 2^16` and take the floor.
    Random(u16),
}

/// The multiplicative encoder (see the module docs); `k` is [`encoder_k`]`(p.eps_ppm)`.
#[inline]
pub fn encode_fx(log2: &[u32], p: &EncoderParams, k: u32, v: u64, rounding: Rounding) -> u32 {
    let l = log2_fx(log2, p.log2, v.max(1)).unwrap_or(0) as u64;
    let x = l * k as u64; // < 2^32 * 2^32
    let shift = p.log2.frac as u32 + ENC_K_FRAC as u32;
    let add = match rounding {
        Rounding::HalfUp => 1u64 << (shift - 1),
        Rounding::Random(r) => (r as u64) << p.log2.frac,
    };
    let alpha = (x + add) >> shift;
    alpha.min(p.alpha_max() as u64) as u32
}

/// The decoder: `(1+eps)^(2 alpha)` rounded to an integer; `c` is [`encoder_c`]`(p.eps_ppm)`.
#[inline]
pub fn decode_fx(exp2: &[u32], p: &EncoderParams, c: u32, alpha: u32) -> u64 {
    let y = alpha as u64 * c as u64; // alpha < 2^24, c < 2^32: fits i64
    let io = Exp2Io { in_frac: ENC_C_FRAC, out_frac: 0, out_width: 64 };
    exp2_fx(exp2, p.exp2, y as i64, io)
}

/// Galois feedback mask of the encoder LFSR: `x^32 + x^22 + x^2 + x + 1`.
pub const LFSR_MASK: u32 = 0x8020_0003;
/// LFSR steps taken before each randomized encode.
pub const LFSR_STEPS_PER_ENCODE: u32 = 16;
/// Seed used when the configured seed is zero.
pub const LFSR_DEFAULT_SEED: u32 = 0xACE1_2468;

/// The reset state for a configured seed (zero would lock the LFSR).
pub fn lfsr_seed(seed: u32) -> u32 {
    if seed == 0 {
        LFSR_DEFAULT_SEED
    } else {
        seed
    }
}

/// One Galois step.
#[inline]
pub fn lfsr_step(s: u32) -> u32 {
    (s >> 1) ^ (LFSR_MASK & (s & 1).wrapping_neg())
}

/// The per-encode advance: [`LFSR_STEPS_PER_ENCODE`] steps. The random fraction is the low
/// 16 bits of the returned state.
#[inline]
pub fn lfsr_advance(mut s: u32) -> u32 {
    for _ in 0..LFSR_STEPS_PER_ENCODE {
        s = lfsr_step(s);
    }
    s
}

/// SuMax's delay bin (see the module docs).
#[inline]
pub fn delay_bin(rule: &DelayBinRule, delay_ns: u64, cells: u8, p: Log2Params, log2: &[u32]) -> u8 {
    if cells <= 1 || delay_ns < rule.base_ns as u64 {
        return 0;
    }
    let lb = log2_fx(log2, p, (rule.base_ns as u64).max(1)).unwrap_or(0);
    let ld = log2_fx(log2, p, delay_ns.max(1)).unwrap_or(0);
    let steps = (rule.bins_per_octave as u64 * ld.saturating_sub(lb) as u64) >> p.frac;
    (1 + steps).min(cells as u64 - 1) as u8
}

// ---------------------------------------------------------------------------------------
// Test vectors.

/// The checked-in LUT vectors.
pub const LUT_FILE: &str = include_str!("../vectors/lut.txt");

/// Edge inputs: 0, 1, 2^k - 1, 2^k, 2^k + 1 (k = 1..=63), all-ones at 16/32/64 bits.
pub fn edge_inputs() -> Vec<u64> {
    let mut v = vec![0u64, 1, 0xFFFF, 0xFFFF_FFFF, u64::MAX];
    for k in 1..64 {
        let p = 1u64 << k;
        v.extend([p - 1, p, p + 1]);
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// Pseudo-random inputs spread over all magnitudes (a KeyStream word shifted right by a
/// KeyStream-chosen amount).
pub fn random_inputs(seed: u64, n: usize) -> Vec<u64> {
    let mut s = KeyStream::new(seed);
    (0..n)
        .map(|_| {
            let w = s.next_u64();
            w >> (s.next_u64() % 64)
        })
        .collect()
}

fn push_table(out: &mut String, name: &str, table: &[u32]) {
    for (i, chunk) in table.chunks(8).enumerate() {
        out.push_str(&format!("table {name} {:x}", i * 8));
        for w in chunk {
            out.push_str(&format!(" {w:x}"));
        }
        out.push('\n');
    }
}

fn sx(v: i64) -> String {
    if v < 0 {
        format!("-{:x}", v.unsigned_abs())
    } else {
        format!("{v:x}")
    }
}

/// Renders `vectors/lut.txt`: every table of the default parameters in full and samples of
/// every function on edge and pseudo-random inputs.
pub fn render_lut_vectors() -> String {
    let ap = ArithParams::DEFAULT;
    let ep = EncoderParams::DEFAULT;
    let l2 = log2_table(ap.log2);
    let e2 = exp2_table(ap.exp2);
    let mt = mul_direct_table(ap.direct);
    let dt = div_direct_table(ap.direct);
    let k = encoder_k(ep.eps_ppm);
    let c = encoder_c(ep.eps_ppm);

    let mut out = String::from(
        "# smartnic contract LUT vectors, format 1 (definitions: hdl/contract/src/lut.rs)\n\
         # numbers are hex; signed ones carry a leading '-'\n\
         # table <name> <first index> <up to 8 words>\n\
         # const <name> <value>\n\
         # log2 <x> <valid> <value>\n\
         # exp2 <y> <in_frac> <out_frac> <out_width> <value>\n\
         # mul <x> <y> <value>          | mul_direct <x> <y> <value>\n\
         # div <x> <y> <out_frac> <valid> <value> | div_direct <same>  (invalid: value all ones)\n\
         # encode <v> <alpha half-up>   | encode_rand <v> <r> <alpha>\n\
         # decode <alpha> <value>\n\
         # lfsr <state> <after one step> <after one encode advance>\n\
         # encoder_seq <seed> <i> <v> <alpha>  (randomized encoder from reset, i-th encode)\n\
         # delay_bin <base_ns> <bins_per_octave> <cells> <delay_ns> <bin>\n",
    );
    out.push_str(&format!(
        "params log2_q={} log2_frac={} exp2_q={} exp2_frac={} direct_q={} direct_frac={} \
         eps_ppm={} alpha_bits={} k_frac={} c_frac={} lfsr_mask={:x} lfsr_steps={} \
         lfsr_default_seed={:x}\n",
        ap.log2.q,
        ap.log2.frac,
        ap.exp2.q,
        ap.exp2.frac,
        ap.direct.q,
        ap.direct.frac,
        ep.eps_ppm,
        ep.alpha_bits,
        ENC_K_FRAC,
        ENC_C_FRAC,
        LFSR_MASK,
        LFSR_STEPS_PER_ENCODE,
        LFSR_DEFAULT_SEED
    ));
    push_table(&mut out, "log2", &l2);
    push_table(&mut out, "exp2", &e2);
    push_table(&mut out, "mul_direct", &mt);
    push_table(&mut out, "div_direct", &dt);
    out.push_str(&format!("const enc_k {k:x}\nconst enc_c {c:x}\n"));

    let mut inputs = edge_inputs();
    inputs.extend(random_inputs(0x1077, 64));
    for &x in &inputs {
        match log2_fx(&l2, ap.log2, x) {
            Some(v) => out.push_str(&format!("log2 {x:x} 1 {v:x}\n")),
            None => out.push_str(&format!("log2 {x:x} 0 0\n")),
        }
    }

    // exp2: integers, halves and table-boundary neighbours, negative inputs, saturation.
    let f = ap.log2.frac as i64;
    let mut ys: Vec<i64> = vec![0, 1, -1, 1 << (f - 1), -(1 << (f - 1)), (1 << f) - 1];
    for k in [-70i64, -64, -17, -16, -1, 1, 15, 16, 31, 32, 62, 63, 64, 65] {
        ys.extend([k << f, (k << f) + 1, (k << f) - 1, (k << f) + (1 << (f - 1))]);
    }
    let mut s = KeyStream::new(0xE4B2);
    ys.extend((0..64).map(|_| (s.next_u64() % (130u64 << f)) as i64 - (64 << f)));
    for &y in &ys {
        for (out_frac, out_width) in [(0u8, 64u8), (16, 64), (0, 32), (8, 16)] {
            let io = Exp2Io { in_frac: ap.log2.frac, out_frac, out_width };
            let v = exp2_fx(&e2, ap.exp2, y, io);
            out.push_str(&format!("exp2 {} {:x} {out_frac:x} {out_width:x} {v:x}\n", sx(y), io.in_frac));
        }
    }

    let picks: Vec<u64> =
        vec![0, 1, 2, 3, 7, 255, 256, 257, 1000, 12345, 0xFFFF, 0x1_0000, 0xFFFF_FFFF, 1 << 32, u64::MAX];
    let mut pairs: Vec<(u64, u64)> = picks.iter().flat_map(|&a| picks.iter().map(move |&b| (a, b))).collect();
    let ra = random_inputs(0x4D55, 64);
    let rb = random_inputs(0x4D56, 64);
    pairs.extend(ra.iter().copied().zip(rb.iter().copied()));
    let dp = ap.direct;
    for &(x, y) in &pairs {
        let m = mul_log(&l2, ap.log2, &e2, ap.exp2, x, y);
        out.push_str(&format!("mul {x:x} {y:x} {m:x}\n"));
        let m = mul_direct(&mt, dp, x, y);
        out.push_str(&format!("mul_direct {x:x} {y:x} {m:x}\n"));
        for out_frac in [0u8, 16] {
            let d = div_log(&l2, ap.log2, &e2, ap.exp2, x, y, out_frac);
            out.push_str(&format!(
                "div {x:x} {y:x} {out_frac:x} {} {:x}\n",
                d.is_some() as u8,
                d.unwrap_or(u64::MAX)
            ));
            let d = div_direct(&dt, dp, x, y, out_frac);
            out.push_str(&format!(
                "div_direct {x:x} {y:x} {out_frac:x} {} {:x}\n",
                d.is_some() as u8,
                d.unwrap_or(u64::MAX)
            ));
        }
    }

    for &v in &inputs {
        let a = encode_fx(&l2, &ep, k, v, Rounding::HalfUp);
        out.push_str(&format!("encode {v:x} {a:x}\n"));
    }
    let mut s = KeyStream::new(0x52A0);
    for &v in inputs.iter().step_by(3) {
        let r = s.next_u64() as u16;
        for r in [0u16, r, 0xFFFF] {
            let a = encode_fx(&l2, &ep, k, v, Rounding::Random(r));
            out.push_str(&format!("encode_rand {v:x} {r:x} {a:x}\n"));
        }
    }
    let mut alphas: Vec<u32> = vec![0, 1, 2, 3, 100, 1000, 4000, 8000, 8886, 8887, 9000, 0xFFFF];
    alphas.extend((0..32).map(|_| (s.next_u64() % 9000) as u32));
    for &a in &alphas {
        out.push_str(&format!("decode {a:x} {:x}\n", decode_fx(&e2, &ep, c, a)));
    }

    let mut states = vec![1u32, 2, 3, LFSR_DEFAULT_SEED, 0x8000_0000, u32::MAX];
    states.extend((0..8).map(|_| s.next_u64() as u32));
    for &st in &states {
        out.push_str(&format!("lfsr {st:x} {:x} {:x}\n", lfsr_step(st), lfsr_advance(st)));
    }
    for seed in [0u32, 1, 0xDEAD_BEEF] {
        let mut st = lfsr_seed(seed);
        for (i, &v) in inputs.iter().step_by(5).enumerate() {
            st = lfsr_advance(st);
            let a = encode_fx(&l2, &ep, k, v, Rounding::Random(st as u16));
            out.push_str(&format!("encoder_seq {seed:x} {i:x} {v:x} {a:x}\n"));
        }
    }

    let rules = [
        DelayBinRule { base_ns: 1000, bins_per_octave: 1 },
        DelayBinRule { base_ns: 1000, bins_per_octave: 4 },
        DelayBinRule { base_ns: 0, bins_per_octave: 2 },
        DelayBinRule { base_ns: 1, bins_per_octave: 0 },
        DelayBinRule { base_ns: 3000, bins_per_octave: 255 },
    ];
    let mut delays: Vec<u64> = vec![0, 1, 999, 1000, 1001, 1999, 2000, 2001, 3999, 4000, 8000];
    delays.extend([0xFFFF, 0xFFFF_FFFF, u64::MAX, 2828, 1414, 1189, 1190, 1681, 1682]);
    delays.extend((0..16).map(|_| s.next_u64() % 100_000));
    for rule in &rules {
        for cells in [0u8, 1, 4, 16, 255] {
            for &d in &delays {
                let b = delay_bin(rule, d, cells, ap.log2, &l2);
                out.push_str(&format!(
                    "delay_bin {:x} {:x} {cells:x} {d:x} {b:x}\n",
                    rule.base_ns, rule.bins_per_octave
                ));
            }
        }
    }
    out
}

/// One parsed vector line: the operation name and its numbers (hex, optionally signed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LutLine {
    pub op: String,
    pub args: Vec<i128>,
}

/// Parses `lut.txt` (skipping comments and the `params` line); panics on a malformed
/// number (the file is checked in and tested, so that is a repository bug).
pub fn parse_lut_vectors(text: &str) -> Vec<LutLine> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("params") && !l.trim().is_empty())
        .map(|l| {
            let mut parts = l.split_whitespace();
            let op = parts.next().expect("op").to_string();
            let args = parts
                .filter_map(|p| {
                    // `table` and `const` carry a name before their numbers.
                    if p.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
                        let (neg, h) = match p.strip_prefix('-') {
                            Some(h) => (true, h),
                            None => (false, p),
                        };
                        let v = i128::from_str_radix(h, 16).expect("hex number");
                        Some(if neg { -v } else { v })
                    } else {
                        None
                    }
                })
                .collect();
            LutLine { op, args }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tables() -> (Vec<u32>, Vec<u32>) {
        (log2_table(Log2Params::DEFAULT), exp2_table(Exp2Params::DEFAULT))
    }

    #[test]
    fn checked_in_lut_vectors_match_generator() {
        assert!(
            LUT_FILE == render_lut_vectors(),
            "vectors/lut.txt is stale: run `cargo run -p smartnic-contract --example gen-vectors`"
        );
        let lines = parse_lut_vectors(LUT_FILE);
        assert!(lines.iter().filter(|l| l.op == "log2").count() >= edge_inputs().len());
    }

    #[test]
    fn defaults_validate_and_bad_params_are_rejected() {
        ArithParams::DEFAULT.validate().unwrap();
        EncoderParams::DEFAULT.validate().unwrap();
        assert!(Log2Params { q: 12, frac: 10 }.validate().is_err());
        assert!(Log2Params { q: 0, frac: 10 }.validate().is_err());
        assert!(Exp2Params { q: 10, frac: 31 }.validate().is_err());
        assert!(DirectParams { q: 9, frac: 16 }.validate().is_err());
        let bad = EncoderParams { eps_ppm: 5, ..EncoderParams::DEFAULT };
        assert!(bad.validate().is_err());
    }

    #[test]
    fn table_words_fit_their_widths() {
        for q in 1..=12u8 {
            for frac in q..=26 {
                let p = Log2Params { q, frac };
                let t = log2_table(p);
                assert_eq!(t[0], 0);
                assert!(t.windows(2).all(|w| w[0] <= w[1]));
                assert!(*t.last().unwrap() < 1 << frac, "log2 q={q} frac={frac}");
                let e = Exp2Params { q, frac };
                let t = exp2_table(e);
                assert_eq!(t[0], 1 << frac);
                assert!(t.windows(2).all(|w| w[0] <= w[1]));
                assert!(*t.last().unwrap() < 1 << (frac + 1), "exp2 q={q} frac={frac}");
            }
        }
        let d = DirectParams::DEFAULT;
        assert!(mul_direct_table(d).iter().all(|&w| w < 1 << d.mul_entry_bits()));
        assert!(div_direct_table(d).iter().all(|&w| w < 1 << d.div_entry_bits()));
    }

    #[test]
    fn log2_hand_values() {
        let (l2, _) = tables();
        let p = Log2Params::DEFAULT;
        assert_eq!(log2_fx(&l2, p, 0), None);
        assert_eq!(log2_fx(&l2, p, 1), Some(0));
        for k in 0..64 {
            assert_eq!(log2_fx(&l2, p, 1u64 << k), Some(k << 16));
        }
        // 3 = 2^1 * 1.5: mantissa 0b1000000000, LOG2[512] = round(log2(1.5) * 65536) = 38336.
        assert_eq!(l2[512], 38336);
        assert_eq!(log2_fx(&l2, p, 3), Some((1 << 16) + 38336));
        // u64::MAX: l = 63, mantissa all ones.
        assert_eq!(log2_fx(&l2, p, u64::MAX), Some((63 << 16) + l2[1023]));
    }

    #[test]
    fn mantissa_pads_and_truncates() {
        assert_eq!(mantissa(0b101, 2, 4), 0b0100);
        assert_eq!(mantissa(0b1_0110_1111, 8, 4), 0b0110);
        assert_eq!(mantissa(1, 0, 10), 0);
    }

    /// The shift form equals the definition by cases (bits cut below the leading one, or
    /// zeros padded in) for every leading-one position and mantissa width up to 20, on
    /// values with all ones, a single one, and mixed bits below the leading one.
    #[test]
    fn mantissa_equals_the_definition_by_cases() {
        let by_cases = |x: u64, l: u32, bits: u32| {
            let m = if l >= bits { x >> (l - bits) } else { x << (bits - l) };
            (m & ((1u64 << bits) - 1)) as u32
        };
        for l in 0..64u32 {
            let top = 1u64 << l;
            let below = top - 1;
            for x in [
                top,
                top | below,
                top | (below & 0x5555_5555_5555_5555),
                top | (below & 0x0F0F_3C3C_A5A5_0FF0),
            ] {
                assert_eq!(leading_one(x), l);
                for bits in 0..=20u8 {
                    assert_eq!(mantissa(x, l, bits), by_cases(x, l, bits as u32), "x {x:#x} bits {bits}");
                }
            }
        }
    }

    #[test]
    fn exp2_hand_values() {
        let (_, e2) = tables();
        let p = Exp2Params::DEFAULT;
        let io = Exp2Io { in_frac: 16, out_frac: 0, out_width: 64 };
        for k in 0..64i64 {
            assert_eq!(exp2_fx(&e2, p, k << 16, io), 1u64 << k);
        }
        assert_eq!(exp2_fx(&e2, p, 64 << 16, io), u64::MAX);
        assert_eq!(exp2_fx(&e2, p, -(1 << 16), io), 1, "0.5 rounds half up");
        assert_eq!(exp2_fx(&e2, p, -(2 << 16), io), 0);
        let io16 = Exp2Io { out_frac: 16, ..io };
        assert_eq!(exp2_fx(&e2, p, -(1 << 16), io16), 1 << 15);
        // 2^0.5 with 16 output fraction bits: EXP2[512] = round(sqrt(2) * 65536) = 92682.
        assert_eq!(exp2_fx(&e2, p, 1 << 15, io16), 92682);
        let io8 = Exp2Io { in_frac: 16, out_frac: 0, out_width: 8 };
        assert_eq!(exp2_fx(&e2, p, 9 << 16, io8), 255);
        // Input rounding to q = 10 fraction bits: 2^-7 of a 2^-10 step rounds away.
        assert_eq!(exp2_fx(&e2, p, 31, io16), 1 << 16);
        assert_eq!(exp2_fx(&e2, p, 32, io16), e2[1] as u64);
    }

    #[test]
    fn mul_div_hand_values() {
        let (l2, e2) = tables();
        let (lp, ep) = (Log2Params::DEFAULT, Exp2Params::DEFAULT);
        assert_eq!(mul_log(&l2, lp, &e2, ep, 0, 5), 0);
        assert_eq!(mul_log(&l2, lp, &e2, ep, 1 << 20, 1 << 30), 1 << 50);
        assert_eq!(mul_log(&l2, lp, &e2, ep, 1 << 40, 1 << 40), u64::MAX);
        assert_eq!(div_log(&l2, lp, &e2, ep, 5, 0, 0), None);
        assert_eq!(div_log(&l2, lp, &e2, ep, 0, 5, 0), Some(0));
        assert_eq!(div_log(&l2, lp, &e2, ep, 1 << 40, 1 << 8, 0), Some(1 << 32));
        assert_eq!(div_log(&l2, lp, &e2, ep, 1, 4, 16), Some(1 << 14));
        let dp = DirectParams::DEFAULT;
        let (mt, dt) = (mul_direct_table(dp), div_direct_table(dp));
        // Operands with at most 6 significant bits are exact.
        assert_eq!(mul_direct(&mt, dp, 63, 45), 63 * 45);
        // 1000 = 0b1111101000: truncated to 6 significant bits = 992.
        assert_eq!(mul_direct(&mt, dp, 1000, 1000), 992 * 992);
        assert_eq!(div_direct(&dt, dp, 48, 32, 16), Some(3 << 15));
        assert_eq!(div_direct(&dt, dp, 7, 0, 0), None);
        assert_eq!(mul_direct(&mt, dp, u64::MAX, 3), u64::MAX);
    }

    #[test]
    fn shift_rounding_and_saturation() {
        assert_eq!(shift_round_sat(3, -1, 64), 2);
        assert_eq!(shift_round_sat(5, -2, 64), 1);
        assert_eq!(shift_round_sat(6, -2, 64), 2);
        assert_eq!(shift_round_sat(u64::MAX, -64, 64), 1);
        assert_eq!(shift_round_sat(u64::MAX, -65, 64), 0);
        assert_eq!(shift_round_sat(1, 63, 64), 1 << 63);
        assert_eq!(shift_round_sat(2, 63, 64), u64::MAX);
        assert_eq!(shift_round_sat(1, 16, 16), 0xFFFF);
        assert_eq!(shift_round_sat(0, 100, 64), 0);
    }

    #[test]
    fn encoder_hand_values() {
        let (l2, e2) = tables();
        let p = EncoderParams::DEFAULT;
        let (k, c) = (encoder_k(p.eps_ppm), encoder_c(p.eps_ppm));
        // K = 1 / (2 log2 1.0025) = 138.8079..., C = 2 log2 1.0025 = 0.0072041...
        assert_eq!(k, 9_096_571);
        assert_eq!(c, 7_735_744);
        assert_eq!(encode_fx(&l2, &p, k, 0, Rounding::HalfUp), 0);
        assert_eq!(encode_fx(&l2, &p, k, 1, Rounding::HalfUp), 0);
        assert_eq!(encode_fx(&l2, &p, k, 1, Rounding::Random(0xFFFF)), 0);
        // 2^10: X = 10 * K_fx / 2^16 = 1388.027 -> 1388 half up, 1389 when r/2^16 > 0.973.
        assert_eq!(encode_fx(&l2, &p, k, 1024, Rounding::HalfUp), 1388);
        assert_eq!(encode_fx(&l2, &p, k, 1024, Rounding::Random(0)), 1388);
        assert_eq!(encode_fx(&l2, &p, k, 1024, Rounding::Random(0xFFFF)), 1389);
        assert_eq!(decode_fx(&e2, &p, c, 0), 1);
        let d = decode_fx(&e2, &p, c, 1388);
        assert!((1020..=1028).contains(&d), "{d}");
        let narrow = EncoderParams { alpha_bits: 8, ..p };
        assert_eq!(encode_fx(&l2, &narrow, k, 1 << 20, Rounding::HalfUp), 255);
    }

    #[test]
    fn lfsr_steps() {
        assert_eq!(lfsr_step(1), LFSR_MASK);
        assert_eq!(lfsr_step(2), 1);
        assert_eq!(lfsr_seed(0), LFSR_DEFAULT_SEED);
        assert_eq!(lfsr_seed(7), 7);
        let mut s = 1;
        for _ in 0..LFSR_STEPS_PER_ENCODE {
            s = lfsr_step(s);
        }
        assert_eq!(lfsr_advance(1), s);
        // No short cycle through the seed in the first 2^20 steps.
        let mut s = LFSR_DEFAULT_SEED;
        for _ in 0..1 << 20 {
            s = lfsr_step(s);
            assert_ne!(s, LFSR_DEFAULT_SEED);
            assert_ne!(s, 0);
        }
    }

    #[test]
    fn delay_bins_by_hand() {
        let (l2, _) = tables();
        let p = Log2Params::DEFAULT;
        let r = DelayBinRule { base_ns: 1000, bins_per_octave: 1 };
        assert_eq!(delay_bin(&r, 999, 4, p, &l2), 0);
        assert_eq!(delay_bin(&r, 1000, 4, p, &l2), 1);
        assert_eq!(delay_bin(&r, 1999, 4, p, &l2), 1);
        assert_eq!(delay_bin(&r, 2000, 4, p, &l2), 2);
        assert_eq!(delay_bin(&r, 4000, 4, p, &l2), 3);
        assert_eq!(delay_bin(&r, 1 << 40, 4, p, &l2), 3);
        assert_eq!(delay_bin(&r, 5000, 1, p, &l2), 0);
        let r4 = DelayBinRule { base_ns: 1000, bins_per_octave: 4 };
        // 1000 * 2^(1/4) = 1189.2: 1189 stays in bin 1, 1190 moves to bin 2.
        assert_eq!(delay_bin(&r4, 1189, 16, p, &l2), 1);
        assert_eq!(delay_bin(&r4, 1190, 16, p, &l2), 2);
        assert_eq!(delay_bin(&r4, 8000, 16, p, &l2), 13);
        let r0 = DelayBinRule { base_ns: 0, bins_per_octave: 2 };
        assert_eq!(delay_bin(&r0, 0, 8, p, &l2), 1);
        assert_eq!(delay_bin(&r0, 2, 8, p, &l2), 3);
    }
}
