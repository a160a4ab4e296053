//! `encoder`: PINT's multiplicative encoder `alpha = round(log_{(1+eps)^2} v)`, bit-exact
//! with `lut::encode_fx`, deterministic (half up) or randomized rounding per operation,
//! with the encoder LFSR (`lut::lfsr_advance`) in hardware.
//!
//! `X = log2_fx(max(v, 1)) * K_fx` (a [`Log2Unit`], whose `x = 0` result is already the
//! value of `x = 1`, then a [`ConstMul`] by `K_fx = encoder_k(eps)`), `X` plus the rounding
//! addend (`2^(frac+15)` for half up, `r << frac` for randomized), shifted right by
//! `frac + 16` and saturated at `2^AB - 1`.
//!
//! The LFSR: a randomized operation advances the 32-bit state by 16 Galois steps when its
//! log2 arrives (stage 4) and uses the low 16 bits of the advanced state as `r`. The 16
//! steps are one XOR network: the advance is linear over GF(2), so
//! `advance(s) = XOR of column[j] over the set bits j of s` with `column[j] =
//! lfsr_advance(1 << j)`, computed in [`Encoder::new`] (outside `update`) from the
//! contract function itself. The synchronous `reset` loads `lfsr_seed(seed)` (a zero
//! seed becomes `LFSR_DEFAULT_SEED`); `lfsr` shows the state.
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset of the valid pipeline and the LFSR |
//! | `v`, `v_valid` | in | 64, 1 | value to encode |
//! | `rnd` | in | 1 | this operation rounds randomly (advances the LFSR; `rand` is a SystemVerilog keyword) |
//! | `seed` | in | 32 | LFSR seed, loaded while `reset` is high |
//! | `alpha`, `valid` | out | `AB`, 1 | the code, [`LATENCY`] clocks after `v` |
//! | `lfsr` | out | 32 | LFSR state (after the advances of the operations that reached stage 4) |
//!
//! Pipeline ([`LATENCY`] = 8): log2 (4); LFSR advance and addend selection, `l * K_fx`
//! (2, [`ConstMul`]); add (1); shift and saturate (1). `AB` = `alpha_bits` (const generic,
//! checked against the [`EncoderParams`] in [`Encoder::new`]).
use super::constmul::{self, ConstMul};
use super::log2::{self, Log2Default};
use super::Widen;
use rust_hdl::prelude::*;
use smartnic_contract::lut::{
    encoder_k, lfsr_advance, EncoderParams, Log2Params, ENC_K_FRAC, ENC_RAND_BITS, LFSR_DEFAULT_SEED,
};

pub const LATENCY: usize = log2::LATENCY + constmul::LATENCY + 2;

/// Columns of the 16-step advance: `column[j] = lfsr_advance(1 << j)`.
pub fn advance_columns() -> [u32; 32] {
    std::array::from_fn(|j| lfsr_advance(1 << j))
}

#[derive(LogicBlock)]
pub struct Encoder<const AB: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub v: Signal<In, Bits<64>>,
    pub v_valid: Signal<In, Bit>,
    pub rnd: Signal<In, Bit>,
    pub seed: Signal<In, Bits<32>>,
    pub alpha: Signal<Out, Bits<AB>>,
    pub valid: Signal<Out, Bit>,
    pub lfsr: Signal<Out, Bits<32>>,
    log: Log2Default,
    rf: [DFF<Bit>; 4],
    state: DFF<Bits<32>>,
    term: [Signal<Local, Bits<32>>; 32],
    acc: [Signal<Local, Bits<32>>; 32],
    op4: Signal<Local, Bit>,
    // A 16-bit value at 64 bits. rust-hdl workaround: `bit_cast` widening renders as `x &
    // M'hff..` (a Verilator WIDTH warning); `Widen` is a leaf whose Verilog is `{zeros, x}`.
    wr: Widen<64, 16>,
    kmul: ConstMul<22, 64>,
    add5: DFF<Bits<64>>,
    add6: DFF<Bits<64>>,
    ok5: DFF<Bit>,
    ok6: DFF<Bit>,
    x7: DFF<Bits<64>>,
    ok7: DFF<Bit>,
    xs: Signal<Local, Bits<64>>,
    a8: DFF<Bits<AB>>,
    ok8: DFF<Bit>,
    column: [Constant<Bits<32>>; 32],
    default_seed: Constant<Bits<32>>,
    zero32: Constant<Bits<32>>,
    half: Constant<Bits<64>>,
    frac_sh: Constant<Bits<8>>,
    shift: Constant<Bits<8>>,
    max: Constant<Bits<64>>,
    max_ab: Constant<Bits<AB>>,
}

impl<const AB: usize> Encoder<AB> {
    /// An encoder for `p` (its log2 parameters must be the default ones of [`Log2Default`]
    /// and `alpha_bits` must be `AB`).
    pub fn new(p: &EncoderParams) -> Self {
        p.validate().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.log2, Log2Params::DEFAULT, "the encoder uses the default log2 unit");
        assert_eq!(p.alpha_bits as usize, AB, "alpha_bits must be AB");
        assert_eq!(ENC_RAND_BITS, 16);
        let frac = p.log2.frac as u64;
        Encoder {
            clock: Default::default(),
            reset: Default::default(),
            v: Default::default(),
            v_valid: Default::default(),
            rnd: Default::default(),
            seed: Default::default(),
            alpha: Default::default(),
            valid: Default::default(),
            lfsr: Default::default(),
            log: Log2Default::new(),
            rf: Default::default(),
            state: Default::default(),
            term: Default::default(),
            acc: Default::default(),
            op4: Default::default(),
            wr: Default::default(),
            kmul: ConstMul::new(encoder_k(p.eps_ppm)),
            add5: Default::default(),
            add6: Default::default(),
            ok5: Default::default(),
            ok6: Default::default(),
            x7: Default::default(),
            ok7: Default::default(),
            xs: Default::default(),
            a8: Default::default(),
            ok8: Default::default(),
            column: advance_columns().map(|c| Constant::new((c as u64).to_bits())),
            default_seed: Constant::new((LFSR_DEFAULT_SEED as u64).to_bits()),
            zero32: Constant::new(0u64.to_bits()),
            half: Constant::new((1u64 << (frac + ENC_K_FRAC as u64 - 1)).to_bits()),
            frac_sh: Constant::new(frac.to_bits()),
            shift: Constant::new((frac + ENC_K_FRAC as u64).to_bits()),
            max: Constant::new((p.alpha_max() as u64).to_bits()),
            max_ab: Constant::new((p.alpha_max() as u64).to_bits()),
        }
    }
}

impl<const AB: usize> Logic for Encoder<AB> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, state, add5, add6, ok5, ok6, x7, ok7, a8, ok8);
        clock!(self, clock, log, kmul);
        for i in 0..4 {
            self.rf[i].clock.next = self.clock.val();
        }
        // Stages 1-4: log2 (v = 0 gives value 0 = log2_fx(1)); the rand flag alongside.
        self.log.reset.next = self.reset.val();
        self.log.x.next = self.v.val();
        self.log.x_valid.next = self.v_valid.val();
        self.rf[0].d.next = self.rnd.val();
        for i in 1..4 {
            self.rf[i].d.next = self.rf[i - 1].q.val();
        }
        // Stage 5: the 16-step LFSR advance as one XOR network: each state bit selects its
        // column, the chain XORs the terms (a chain of muxes is the same logic but costs
        // Yosys one `opt` round per link).
        for j in 0..32 {
            if self.state.q.val().get_bit(j) {
                self.term[j].next = self.column[j].val();
            } else {
                self.term[j].next = self.zero32.val();
            }
        }
        self.acc[0].next = self.term[0].val();
        for j in 1..32 {
            self.acc[j].next = self.acc[j - 1].val() ^ self.term[j].val();
        }
        self.op4.next = self.log.valid.val() | self.log.zero.val();
        if self.reset.val() {
            if self.seed.val().any() {
                self.state.d.next = self.seed.val();
            } else {
                self.state.d.next = self.default_seed.val();
            }
        } else if self.op4.val() & self.rf[3].q.val() {
            self.state.d.next = self.acc[31].val();
        }
        self.wr.x.next = self.acc[31].val().get_bits::<16>(0);
        if self.rf[3].q.val() {
            self.add5.d.next = self.wr.y.val() << self.frac_sh.val();
        } else {
            self.add5.d.next = self.half.val();
        }
        self.ok5.d.next = self.op4.val() & !self.reset.val();
        // Stages 5-6: l * K_fx; the addend and valid alongside.
        self.kmul.a.next = self.log.value.val();
        self.add6.d.next = self.add5.q.val();
        self.ok6.d.next = self.ok5.q.val() & !self.reset.val();
        // Stage 7: X = l * K_fx + addend.
        self.x7.d.next = self.kmul.p.val() + self.add6.q.val();
        self.ok7.d.next = self.ok6.q.val() & !self.reset.val();
        // Stage 8: alpha = X >> (frac + 16), saturated.
        self.xs.next = self.x7.q.val() >> self.shift.val();
        if self.xs.val() > self.max.val() {
            self.a8.d.next = self.max_ab.val();
        } else {
            self.a8.d.next = self.xs.val().get_bits::<AB>(0);
        }
        self.ok8.d.next = self.ok7.q.val() & !self.reset.val();
        self.alpha.next = self.a8.q.val();
        self.valid.next = self.ok8.q.val();
        self.lfsr.next = self.state.q.val();
    }
}

/// The registered encoder: default parameters (eps = 0.0025, 16-bit codes).
pub type Encoder16 = Encoder<16>;

/// The registered encoder (`lut::encode_fx` with `EncoderParams::DEFAULT`).
pub fn encoder16() -> Encoder16 {
    Encoder16::new(&EncoderParams::DEFAULT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use smartnic_contract::lut::{lfsr_step, LFSR_MASK};
    use smartnic_contract::vectors::KeyStream;

    /// The XOR network (columns) reproduces `lfsr_advance` on random states: the advance is
    /// linear, which is what makes the network exact.
    #[test]
    fn advance_columns_are_the_linear_map_of_lfsr_advance() {
        let col = advance_columns();
        let mut s = KeyStream::new(3);
        for st in (0..2000).map(|_| s.next_u64() as u32).chain([0, 1, u32::MAX, LFSR_MASK]) {
            let net = (0..32).filter(|&j| (st >> j) & 1 == 1).fold(0, |a, j| a ^ col[j]);
            assert_eq!(net, lfsr_advance(st), "{st:#x}");
        }
        assert_eq!(lfsr_step(1), LFSR_MASK);
    }
}
