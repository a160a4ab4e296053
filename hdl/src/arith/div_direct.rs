//! `div_direct`: divide through PINT's direct quotient table (`lut::div_direct`), the
//! [`DirectUnit`] of [`super::mul_direct`] in divide mode: the table holds
//! `round((2^H + mx) / (2^H + my) * 2^frac)`, the shift is `lx - ly - frac + out_frac`;
//! `0 / y = 0`, `x / 0`: `valid = 0`, `div_zero = 1`, value all ones. Ports and
//! [`LATENCY`] (6) are those of [`DirectUnit`].
pub use super::mul_direct::{DirectUnit, LATENCY};

/// The registered direct divider: 32-bit operands, q = 10, frac = 16 (17-bit words),
/// 64-bit quotient.
pub type DivDirect32 = DirectUnit<32, 5, 6, 10, 17, 64, 82>;

/// Fraction bits of the registered divider's quotient (as for the log-add-exp `div`).
pub const DEFAULT_OUT_FRAC: u8 = 16;

/// The registered direct divider (`lut::div_direct` with `DirectParams::DEFAULT`, `out_frac = 16`).
pub fn div_direct32() -> DivDirect32 {
    DivDirect32::new(true, DEFAULT_OUT_FRAC)
}
