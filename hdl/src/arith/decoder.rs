//! `decoder`: the multiplicative encoder's inverse `(1+eps)^(2 alpha) = 2^(alpha * C)`,
//! bit-exact with `lut::decode_fx`: `alpha * C_fx` (a [`ConstMul`] by `C_fx =
//! encoder_c(eps)`, 30 fraction bits), then an [`Exp2Unit`] with `in_frac = 30`,
//! `out_frac = 0`, 64-bit output.
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset of the valid pipeline |
//! | `alpha`, `alpha_valid` | in | `AB`, 1 | a code |
//! | `value`, `valid` | out | 64, 1 | the decoded value, [`LATENCY`] clocks later |
//!
//! Pipeline ([`LATENCY`] = 6): `alpha * C_fx` (2), exp2 (4). The product is below
//! `2^AB * 2^31` (`C <= 2`), so the exponent is a non-negative 57-bit two's complement number
//! for any `AB <= 24`.
use super::constmul::{self, ConstMul};
use super::exp2::{self, Exp2Unit};
use rust_hdl::prelude::*;
use smartnic_contract::lut::{encoder_c, EncoderParams, Exp2Io, Exp2Params, ENC_C_FRAC};

pub const LATENCY: usize = constmul::LATENCY + exp2::LATENCY;

/// Width of the exponent `alpha * C_fx` (signed).
pub const YW: usize = 57;

#[derive(LogicBlock)]
pub struct Decoder<const AB: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub alpha: Signal<In, Bits<AB>>,
    pub alpha_valid: Signal<In, Bit>,
    pub value: Signal<Out, Bits<64>>,
    pub valid: Signal<Out, Bit>,
    cmul: ConstMul<AB, 57>,
    ok: [DFF<Bit>; 2],
    exp: Exp2Unit<57, 10, 17, 64, 82>,
}

impl<const AB: usize> Decoder<AB> {
    pub fn new(p: &EncoderParams) -> Self {
        p.validate().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.exp2, Exp2Params::DEFAULT, "the decoder uses the default exp2 table");
        assert_eq!(p.alpha_bits as usize, AB, "alpha_bits must be AB");
        let c = encoder_c(p.eps_ppm);
        assert!(((1u128 << AB) * c as u128) < 1u128 << (YW - 1), "exponent must stay positive");
        Decoder {
            clock: Default::default(),
            reset: Default::default(),
            alpha: Default::default(),
            alpha_valid: Default::default(),
            value: Default::default(),
            valid: Default::default(),
            cmul: ConstMul::new(c),
            ok: Default::default(),
            exp: Exp2Unit::new(Exp2Io { in_frac: ENC_C_FRAC, out_frac: 0, out_width: 64 }),
        }
    }
}

impl<const AB: usize> Logic for Decoder<AB> {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, cmul, exp);
        for i in 0..2 {
            self.ok[i].clock.next = self.clock.val();
        }
        // Stages 1-2: y = alpha * C_fx.
        self.cmul.a.next = self.alpha.val();
        self.ok[0].d.next = self.alpha_valid.val() & !self.reset.val();
        self.ok[1].d.next = self.ok[0].q.val() & !self.reset.val();
        // Stages 3-6: 2^(y / 2^30).
        self.exp.reset.next = self.reset.val();
        self.exp.y.next = self.cmul.p.val();
        self.exp.y_valid.next = self.ok[1].q.val();
        self.value.next = self.exp.value.val();
        self.valid.next = self.exp.valid.val();
    }
}

/// The registered decoder: default parameters (eps = 0.0025, 16-bit codes).
pub type Decoder16 = Decoder<16>;

/// The registered decoder (`lut::decode_fx` with `EncoderParams::DEFAULT`).
pub fn decoder16() -> Decoder16 {
    Decoder16::new(&EncoderParams::DEFAULT)
}
