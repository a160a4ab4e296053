//! PINT's multiplicative encoder (section 4.3): a value `v` is written as
//! `alpha = round(log_{(1+eps)^2} v)` and read back as `(1+eps)^(2 alpha)`.
//! The bit-level definition is [`smartnic_contract::lut::encode_fx`] /
//! [`smartnic_contract::lut::decode_fx`]; the randomized variant draws its 16-bit fraction
//! from the contract's 32-bit Galois LFSR, advanced 16 steps per randomized encode.

use smartnic_contract::lut::{self, EncoderParams, LutError, Rounding};

/// One encoder instance (one per switch port / NIC pipeline in hardware): tables, the
/// fixed-point constants `K_fx` and `C_fx`, and its own LFSR state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Encoder {
    params: EncoderParams,
    k: u32,
    c: u32,
    log2: Vec<u32>,
    exp2: Vec<u32>,
    lfsr: u32,
}

impl Encoder {
    /// An encoder whose LFSR starts at `lut::lfsr_seed(seed)` (zero selects the default
    /// seed, as the hardware does).
    pub fn new(params: EncoderParams, seed: u32) -> Result<Self, LutError> {
        params.validate()?;
        Ok(Encoder {
            params,
            k: lut::encoder_k(params.eps_ppm),
            c: lut::encoder_c(params.eps_ppm),
            log2: lut::log2_table(params.log2),
            exp2: lut::exp2_table(params.exp2),
            lfsr: lut::lfsr_seed(seed),
        })
    }

    /// Deterministic encode (round half up).
    #[inline]
    pub fn encode(&self, v: u64) -> u32 {
        lut::encode_fx(&self.log2, &self.params, self.k, v, Rounding::HalfUp)
    }

    /// Randomized encode: advances the LFSR by one encode step and rounds with its low
    /// 16 bits. Unbiased: `E[alpha] = log2_fx(v) * K_fx / 2^(frac+16)` up to `2^-16`.
    #[inline]
    pub fn encode_randomized(&mut self, v: u64) -> u32 {
        self.lfsr = lut::lfsr_advance(self.lfsr);
        lut::encode_fx(&self.log2, &self.params, self.k, v, Rounding::Random(self.lfsr as u16))
    }

    /// Encode with an explicit rounding (does not touch the LFSR).
    #[inline]
    pub fn encode_with(&self, v: u64, rounding: Rounding) -> u32 {
        lut::encode_fx(&self.log2, &self.params, self.k, v, rounding)
    }

    /// `(1+eps)^(2 alpha)`, rounded to an integer, saturating at `u64::MAX`.
    #[inline]
    pub fn decode(&self, alpha: u32) -> u64 {
        lut::decode_fx(&self.exp2, &self.params, self.c, alpha)
    }

    /// The exact (unrounded) code the hardware rounds: `log2_fx(max(v,1)) * K_fx /
    /// 2^(frac+16)`, as an `f64` (exact: the numerator is below 2^53 for the default sizes).
    pub fn exact_code(&self, v: u64) -> f64 {
        let l = lut::log2_fx(&self.log2, self.params.log2, v.max(1)).unwrap_or(0) as u64;
        (l as f64) * (self.k as f64) / 2f64.powi(self.params.log2.frac as i32 + lut::ENC_K_FRAC as i32)
    }

    pub fn params(&self) -> EncoderParams {
        self.params
    }
    /// `K_fx = round(2^16 / (2 log2(1+eps)))`.
    pub fn k(&self) -> u32 {
        self.k
    }
    /// `C_fx = round(2 log2(1+eps) * 2^30)`.
    pub fn c(&self) -> u32 {
        self.c
    }
    pub fn lfsr_state(&self) -> u32 {
        self.lfsr
    }
}

impl Default for Encoder {
    fn default() -> Self {
        Self::new(EncoderParams::DEFAULT, 0).expect("default encoder parameters are valid")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_values() {
        let e = Encoder::default();
        assert_eq!(e.k(), 9_096_571);
        assert_eq!(e.c(), 7_735_744);
        assert_eq!(e.encode(0), 0);
        assert_eq!(e.encode(1), 0);
        assert_eq!(e.decode(0), 1);
        // log_{1.0025^2} 2 = 138.808: 2 encodes as 139 and decodes to 1.0025^278 = 2.0017 -> 2.
        assert_eq!(e.encode(2), 139);
        assert_eq!(e.decode(139), 2);
        // 10^6 -> 19.93157 * 138.808 = 2766.7; 1.0025^(2*2767) = 1.00042e6.
        let a = e.encode(1_000_000);
        assert!((2766..=2767).contains(&a), "{a}");
        let d = e.decode(a);
        assert!(d.abs_diff(1_000_000) < 3000, "{d}");
    }

    #[test]
    fn randomized_advances_the_lfsr_and_rounds_up_or_down() {
        let mut e = Encoder::new(EncoderParams::DEFAULT, 0xDEAD_BEEF).unwrap();
        let s0 = e.lfsr_state();
        let x = e.exact_code(1000);
        let mut seen = [false; 2];
        for _ in 0..64 {
            let a = e.encode_randomized(1000);
            assert!(a as f64 == x.floor() || a as f64 == x.floor() + 1.0, "{a} vs {x}");
            seen[(a as f64 - x.floor()) as usize] = true;
        }
        assert!(seen[0] && seen[1]);
        assert_ne!(e.lfsr_state(), s0);
        let mut s = s0;
        for _ in 0..64 {
            s = lut::lfsr_advance(s);
        }
        assert_eq!(e.lfsr_state(), s);
    }
}
