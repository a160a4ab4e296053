//! Error bounds of the LUT arithmetic, derived from the bit-level definitions in
//! [`smartnic_contract::lut`] (PINT Appendix C's argument, made exact for our rounding
//! choices). Every bound is checked by the property tests in `host/tests/arith_bounds.rs`.
//!
//! Notation: `a = log2(1 + 2^-q)` (mantissa truncation of the log2 table), `t =
//! 2^-(frac+1)` (rounding of a log2 table word), `d = 2^-(q_e+1)` (rounding of the exp2
//! input to `q_e` fraction bits, 0 when the input has no more than `q_e` fraction bits),
//! `r = 2^-(frac_e+1)` (relative rounding of an exp2 word, which is at least `2^frac_e`).
//!
//! * **log2**: the truncated mantissa `x_q <= x < x_q (1 + 2^-q)` so
//!   `log2 x - a - t <= log2_fx(x) / 2^frac <= log2 x + t` (PINT: `y~ in [log2 x -
//!   log2(1+eps), log2 x]`, plus the table rounding of its footnote 13).
//! * **exp2**: `|y_q - y| <= d`, the word is `2^f (1 + rho)`, `|rho| <= r`, and the final
//!   right shift rounds to half an output ulp: `2^y 2^-d (1 - r) - u <= out <= 2^y 2^d
//!   (1 + r) + u`, `u = 2^-(out_frac+1)` (unless saturated). Appendix C states `2^(x eps)`
//!   with `eps <= 2^-q` for a relative input error; rounding the input to an absolute
//!   `2^-(q+1)` instead makes the bound independent of the magnitude of `y`.
//! * **mul** (log-add-exp): the log sum errs by `[-2(a+t), 2t]`, then exp2:
//!   `xy 2^-(2a+2t+d) (1-r) - 1/2 <= mul <= xy 2^(2t+d) (1+r) + 1/2`.
//! * **div** (log-add-exp): the log difference errs by `+-(a+2t)`:
//!   `x/y 2^-(a+2t+d) (1-r) - u <= div <= x/y 2^(a+2t+d) (1+r) + u`.
//! * **mul_direct**: each operand is truncated to `h = q/2` bits below its leading one,
//!   `x 2^h/(2^h+1) < x_h <= x`, and the table product is exact:
//!   `xy (2^h/(2^h+1))^2 < mul_direct <= xy`.
//! * **div_direct**: the quotient of the truncated operands lies within a factor
//!   `(2^h+1)/2^h` of `x/y`; the table word (at least `2^(frac-1)`) rounds by at most
//!   `2^-frac` relative; the output rounds by `u`.
//! * **encoder**: `X = L K'` (`L = log2_fx(v)/2^frac`, `K' = K_fx/2^16`), `alpha = X + s`,
//!   `|s| <= 1/2` (half-up) or `< 1` (randomized); decode computes `2^(alpha C')`
//!   (`C' = C_fx/2^30`), so `log2(decoded) - log2 v = (L - log2 v) + L (K'C' - 1) + s C'`
//!   plus the exp2 error: the ideal `(1+eps)` (half-up) or `(1+eps)^2` (randomized) factor
//!   of PINT 4.3, widened by the log2 error `[-(a+t), t]`, the constant error
//!   `64 |K'C' - 1|`, the exp2 input rounding `d` and word rounding `r`, and half an
//!   integer ulp.

use smartnic_contract::lut::{
    self, DirectParams, EncoderParams, Exp2Params, Log2Params, ENC_C_FRAC, ENC_K_FRAC,
};

/// `out` must lie in `[exact * lo - abs, exact * hi + abs]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RelBound {
    pub lo: f64,
    pub hi: f64,
    pub abs: f64,
}

impl RelBound {
    /// Whether `out` is within the bound of `exact` (with `slack` relative room for the
    /// `f64` evaluation of the bound itself).
    pub fn holds(&self, exact: f64, out: f64) -> bool {
        let slack = 1e-12 * exact.abs() + 1e-12;
        out >= exact * self.lo - self.abs - slack && out <= exact * self.hi + self.abs + slack
    }
    /// The largest relative error the factors allow: `max(1 - lo, hi - 1)`.
    pub fn max_rel(&self) -> f64 {
        (1.0 - self.lo).max(self.hi - 1.0)
    }
}

/// `log2_fx(x)/2^frac - log2(x)` lies in `[lo, hi]` (log domain, absolute).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogBound {
    pub lo: f64,
    pub hi: f64,
}

/// `a = log2(1 + 2^-q)`.
pub fn trunc_err(q: u8) -> f64 {
    (1.0 + 2f64.powi(-(q as i32))).log2()
}

fn half_ulp(frac: u8) -> f64 {
    2f64.powi(-(frac as i32) - 1)
}

/// log2 bound: `[-(a + t), t]`.
pub fn log2(p: Log2Params) -> LogBound {
    let (a, t) = (trunc_err(p.q), half_ulp(p.frac));
    LogBound { lo: -(a + t), hi: t }
}

/// exp2 bound for an input with `in_frac` fraction bits and an output with `out_frac`.
pub fn exp2(p: Exp2Params, in_frac: u8, out_frac: u8) -> RelBound {
    let d = if in_frac > p.q { half_ulp(p.q) } else { 0.0 };
    let r = half_ulp(p.frac);
    RelBound { lo: 2f64.powf(-d) * (1.0 - r), hi: 2f64.powf(d) * (1.0 + r), abs: half_ulp(out_frac) }
}

/// Log-add-exp multiply bound (integer output).
pub fn mul(lp: Log2Params, ep: Exp2Params) -> RelBound {
    let (a, t) = (trunc_err(lp.q), half_ulp(lp.frac));
    let e = exp2(ep, lp.frac, 0);
    RelBound { lo: 2f64.powf(-2.0 * (a + t)) * e.lo, hi: 2f64.powf(2.0 * t) * e.hi, abs: e.abs }
}

/// Log-add-exp divide bound with `out_frac` output fraction bits.
pub fn div(lp: Log2Params, ep: Exp2Params, out_frac: u8) -> RelBound {
    let (a, t) = (trunc_err(lp.q), half_ulp(lp.frac));
    let e = exp2(ep, lp.frac, out_frac);
    RelBound { lo: 2f64.powf(-(a + 2.0 * t)) * e.lo, hi: 2f64.powf(a + 2.0 * t) * e.hi, abs: e.abs }
}

/// Direct-table multiply bound.
pub fn mul_direct(p: DirectParams) -> RelBound {
    let h = 2f64.powi(p.half() as i32);
    let f = h / (h + 1.0);
    RelBound { lo: f * f, hi: 1.0, abs: 0.0 }
}

/// Direct-table divide bound with `out_frac` output fraction bits.
pub fn div_direct(p: DirectParams, out_frac: u8) -> RelBound {
    let h = 2f64.powi(p.half() as i32);
    let w = 2f64.powi(-(p.frac as i32));
    RelBound { lo: h / (h + 1.0) * (1.0 - w), hi: (h + 1.0) / h * (1.0 + w), abs: half_ulp(out_frac) }
}

/// Encode-then-decode bound for values `v >= 1` whose code does not saturate.
pub fn encode_decode(p: &EncoderParams, randomized: bool) -> RelBound {
    let (a, t) = (trunc_err(p.log2.q), half_ulp(p.log2.frac));
    let k = lut::encoder_k(p.eps_ppm) as f64 / 2f64.powi(ENC_K_FRAC as i32);
    let c = lut::encoder_c(p.eps_ppm) as f64 / 2f64.powi(ENC_C_FRAC as i32);
    let s = if randomized { 1.0 } else { 0.5 };
    let kc = 64.0 * (k * c - 1.0).abs();
    let e = exp2(p.exp2, ENC_C_FRAC, 0);
    let hi = t + kc + s * c;
    let lo = a + t + kc + s * c;
    RelBound { lo: 2f64.powf(-lo) * e.lo, hi: 2f64.powf(hi) * e.hi, abs: e.abs }
}

/// PINT's ideal encode/decode factor without LUT error: `(1+eps)` half-up, `(1+eps)^2`
/// randomized.
pub fn encode_decode_ideal(p: &EncoderParams, randomized: bool) -> f64 {
    let f = 1.0 + p.eps();
    if randomized {
        f * f
    } else {
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_bounds_are_what_the_docs_say() {
        let b = log2(Log2Params::DEFAULT);
        assert!((b.lo + 1.4158e-3).abs() < 1e-7 && (b.hi - 7.63e-6).abs() < 1e-8, "{b:?}");
        let m = mul(Log2Params::DEFAULT, Exp2Params::DEFAULT);
        assert!(m.max_rel() < 2.4e-3, "{m:?}");
        let d = div(Log2Params::DEFAULT, Exp2Params::DEFAULT, 16);
        assert!(d.max_rel() < 1.4e-3, "{d:?}");
        // (32/33)^2 = 0.9403: the direct table with the same 2^10 entries is ~25x worse.
        assert!(mul_direct(DirectParams::DEFAULT).max_rel() > 20.0 * m.max_rel());
        let e = encode_decode(&EncoderParams::DEFAULT, false);
        // Ideal 0.25 %, plus about 0.1 % of log2 truncation.
        assert!(e.max_rel() > 0.0025 && e.max_rel() < 0.0040, "{e:?}");
    }
}
