//! Measured errors of the LUT arithmetic against `f64`, on seeded log-uniform inputs.
//! Used by tests (every measured maximum must sit inside [`super::bounds`]) and for
//! reporting how the log-add-exp and direct-table variants compare.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{bounds, Arith, Encoder, Exp2Io};

/// Signed extremes of one function's error over a sample.
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorStat {
    pub name: &'static str,
    /// What `min`/`max` measure: `"log2 units"` (absolute, log domain) or `"relative"`.
    pub unit: &'static str,
    pub samples: usize,
    /// Most negative error seen.
    pub min: f64,
    /// Most positive error seen.
    pub max: f64,
    /// Mean error (the bias).
    pub mean: f64,
    /// The derived bound on `max(|min|, |max|)` for this function.
    pub bound: f64,
}

impl ErrorStat {
    fn new(name: &'static str, unit: &'static str, bound: f64) -> Self {
        ErrorStat { name, unit, samples: 0, min: f64::INFINITY, max: f64::NEG_INFINITY, mean: 0.0, bound }
    }
    fn add(&mut self, e: f64) {
        self.samples += 1;
        self.min = self.min.min(e);
        self.max = self.max.max(e);
        self.mean += (e - self.mean) / self.samples as f64;
    }
    /// `max(|min|, |max|)`.
    pub fn max_abs(&self) -> f64 {
        self.min.abs().max(self.max.abs())
    }
}

/// Output fraction bits of the measured quotients.
const DIV_FRAC: u8 = 40;

/// A log-uniform integer in `[2^lo_bits, 2^hi_bits)`.
fn log_uniform(rng: &mut ChaCha8Rng, lo_bits: u32, hi_bits: u32) -> u64 {
    let b = rng.gen_range(lo_bits..hi_bits);
    let top = 1u64 << b;
    top | (rng.gen::<u64>() & (top - 1))
}

/// Measures every function of `arith` and `encoder` on `n` seeded samples each.
/// Operands are log-uniform in `[2^10, 2^32)`, encoded values in `[2^20, 2^32)`, quotients
/// have 40 output fraction bits; each stat's `bound` is the derived relative bound plus the
/// output rounding `abs / smallest exact value` of that sample domain.
pub fn measure(arith: &Arith, encoder: &Encoder, n: usize, seed: u64) -> Vec<ErrorStat> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let ap = arith.params();
    let lb = bounds::log2(ap.log2);
    let f = ap.log2.frac;
    let scale = 2f64.powi(f as i32);
    let mut log2 = ErrorStat::new("log2", "log2 units", (-lb.lo).max(lb.hi));
    // Relative bound on `[exact lo - abs, exact hi + abs]` for exact values >= `min_exact`.
    let rel = |b: bounds::RelBound, min_exact: f64| b.max_rel() + b.abs / min_exact;
    let mut exp2 = ErrorStat::new("exp2", "relative", rel(bounds::exp2(ap.exp2, f, 32), 1.0));
    let mul_b = rel(bounds::mul(ap.log2, ap.exp2), 2f64.powi(20));
    let mut mul = ErrorStat::new("mul", "relative", mul_b);
    let div_b = rel(bounds::div(ap.log2, ap.exp2, DIV_FRAC), 2f64.powi(-22));
    let mut div = ErrorStat::new("div", "relative", div_b);
    let mut muld = ErrorStat::new("mul_direct", "relative", rel(bounds::mul_direct(ap.direct), 1.0));
    let divd_b = rel(bounds::div_direct(ap.direct, DIV_FRAC), 2f64.powi(-22));
    let mut divd = ErrorStat::new("div_direct", "relative", divd_b);
    let ep = encoder.params();
    let enc_b = rel(bounds::encode_decode(&ep, false), 2f64.powi(20));
    let mut enc = ErrorStat::new("encode+decode", "relative", enc_b);
    let encr_b = rel(bounds::encode_decode(&ep, true), 2f64.powi(20));
    let mut encr = ErrorStat::new("encode_randomized+decode", "relative", encr_b);
    let mut enc_local = encoder.clone();
    for _ in 0..n {
        let x = log_uniform(&mut rng, 10, 32);
        let y = log_uniform(&mut rng, 10, 32);
        let (xf, yf) = (x as f64, y as f64);
        let l = arith.log2(x).expect("x > 0") as f64 / scale;
        log2.add(l - xf.log2());
        // exp2 over [0, 20) with 16 input and 32 output fraction bits.
        let yin = rng.gen_range(0..(20i64 << f));
        let io = Exp2Io { in_frac: f, out_frac: 32, out_width: 64 };
        let exact = (yin as f64 / scale).exp2();
        exp2.add(arith.exp2(yin, io) as f64 / 2f64.powi(32) / exact - 1.0);
        mul.add(arith.mul(x, y) as f64 / (xf * yf) - 1.0);
        muld.add(arith.mul_direct(x, y) as f64 / (xf * yf) - 1.0);
        let q = xf / yf;
        let unit = 2f64.powi(DIV_FRAC as i32);
        div.add(arith.div(x, y, DIV_FRAC).expect("y > 0") as f64 / unit / q - 1.0);
        divd.add(arith.div_direct(x, y, DIV_FRAC).expect("y > 0") as f64 / unit / q - 1.0);
        let v = log_uniform(&mut rng, 20, 32);
        enc.add(encoder.decode(encoder.encode(v)) as f64 / v as f64 - 1.0);
        let a = enc_local.encode_randomized(v);
        encr.add(enc_local.decode(a) as f64 / v as f64 - 1.0);
    }
    vec![log2, exp2, mul, div, muld, divd, enc, encr]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_errors_sit_inside_the_derived_bounds() {
        let stats = measure(&Arith::default(), &Encoder::default(), 20_000, 0x5EED);
        for s in &stats {
            println!(
                "{:<26} {:>10} min {:+.3e} max {:+.3e} mean {:+.3e} bound {:.3e}",
                s.name, s.unit, s.min, s.max, s.mean, s.bound
            );
            assert_eq!(s.samples, 20_000);
            assert!(s.max_abs() <= s.bound, "{s:?}");
        }
        let by = |n: &str| stats.iter().find(|s| s.name == n).unwrap().max_abs();
        // PINT Appendix C: going through logarithms is more accurate for the same table size.
        assert!(by("mul") * 10.0 < by("mul_direct"));
        assert!(by("div") * 10.0 < by("div_direct"));
    }
}
