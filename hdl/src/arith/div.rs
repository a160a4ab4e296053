//! `div`: divide through log-add-exp (`lut::div_log`), the [`LogAddExp`] unit of
//! [`super::mul`] in divide mode: `x / y = exp2(log2 x - log2 y)` with `out_frac`
//! fraction bits, `0 / y = 0`, `x / 0`: `valid = 0`, `div_zero = 1`, value all ones.
//! Ports, parameters and [`LATENCY`] (9) are those of [`LogAddExp`].
pub use super::mul::{LogAddExp, LATENCY};

/// The registered divider: 32-bit operands, default tables, 64-bit quotient.
pub type DivLog32 = LogAddExp<32, 10, 16, 22, 11, 24, 17, 64, 82>;

/// Fraction bits of the registered divider's quotient.
pub const DEFAULT_OUT_FRAC: u8 = 16;

/// The registered divider (`lut::div_log` with `out_frac = 16`).
pub fn div_log32() -> DivLog32 {
    DivLog32::new(true, DEFAULT_OUT_FRAC)
}
