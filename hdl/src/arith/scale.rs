//! `scale`: `t * 2^sh`, rounded half up and saturated, the output stage shared by
//! [`super::exp2`] and the direct tables (`lut::shift_round_sat` for a nonzero `t`).
//!
//! The shift arrives biased, `e = sh + EW` (so right shifts of up to `EW` bits are
//! representable), with two flags computed by the caller: `under` (`e < 0`: the result
//! rounds to 0 because `t < 2^EW`) and `over` (`e > OW`: the result is at least
//! `2^OW` because `t >= 2^(EW-1)` for the caller's words). With `P = t << e`,
//! `out = (P + 2^(EW-1)) >> EW`, saturated to `2^OW - 1`.
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset of the valid pipeline |
//! | `t` | in | `EW` | the table word |
//! | `e`, `under`, `over` | in | 8, 1, 1 | biased shift (used when neither flag is set) |
//! | `in_valid` | in | 1 | an operation |
//! | `out`, `valid` | out | `OW`, 1 | result, [`LATENCY`] clocks later |
//!
//! `PW = EW + OW + 1` (const generic, checked): the width of `P`. Stage 1 registers `P` (a
//! barrel shifter); stage 2 adds the rounding half, compares with `2^OW - 1` and selects.
use super::Widen;
use rust_hdl::prelude::*;

pub const LATENCY: usize = 2;

#[derive(LogicBlock)]
pub struct Scale<const EW: usize, const OW: usize, const PW: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub t: Signal<In, Bits<EW>>,
    pub e: Signal<In, Bits<8>>,
    pub under: Signal<In, Bit>,
    pub over: Signal<In, Bit>,
    pub in_valid: Signal<In, Bit>,
    pub out: Signal<Out, Bits<OW>>,
    pub valid: Signal<Out, Bit>,
    // The table value at the product width. rust-hdl workaround: `bit_cast` widening renders
    // as `x & M'hff..` (a Verilator WIDTH warning); `Widen` is a leaf whose Verilog is
    // `{zeros, x}`.
    wt: Widen<PW, EW>,
    p1: DFF<Bits<PW>>,
    under1: DFF<Bit>,
    over1: DFF<Bit>,
    ok1: DFF<Bit>,
    pr: Signal<Local, Bits<PW>>,
    rr: Signal<Local, Bits<PW>>,
    out2: DFF<Bits<OW>>,
    ok2: DFF<Bit>,
    round_sh: Constant<Bits<8>>,
    one: Constant<Bits<PW>>,
    max_pw: Constant<Bits<PW>>,
    max_ow: Constant<Bits<OW>>,
    zero_ow: Constant<Bits<OW>>,
}

impl<const EW: usize, const OW: usize, const PW: usize> Default for Scale<EW, OW, PW> {
    fn default() -> Self {
        assert_eq!(PW, EW + OW + 1, "PW must be EW + OW + 1");
        assert!((1..=64).contains(&OW) && (1..=32).contains(&EW));
        let max = if OW == 64 { u64::MAX } else { (1u64 << OW) - 1 };
        Scale {
            clock: Default::default(),
            reset: Default::default(),
            t: Default::default(),
            e: Default::default(),
            under: Default::default(),
            over: Default::default(),
            in_valid: Default::default(),
            out: Default::default(),
            valid: Default::default(),
            wt: Default::default(),
            p1: Default::default(),
            under1: Default::default(),
            over1: Default::default(),
            ok1: Default::default(),
            pr: Default::default(),
            rr: Default::default(),
            out2: Default::default(),
            ok2: Default::default(),
            round_sh: Constant::new(((EW - 1) as u64).to_bits()),
            one: Constant::new(1u64.to_bits()),
            max_pw: Constant::new(max.to_bits()),
            max_ow: Constant::new(max.to_bits()),
            zero_ow: Constant::new(0u64.to_bits()),
        }
    }
}

impl<const EW: usize, const OW: usize, const PW: usize> Logic for Scale<EW, OW, PW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, p1, under1, over1, ok1, out2, ok2);
        // Stage 1: P = t << e.
        self.wt.x.next = self.t.val();
        self.p1.d.next = self.wt.y.val() << self.e.val();
        self.under1.d.next = self.under.val();
        self.over1.d.next = self.over.val();
        self.ok1.d.next = self.in_valid.val() & !self.reset.val();
        // Stage 2: round half up ((P >> (EW-1)) + 1) >> 1 = (P + 2^(EW-1)) >> EW, saturate.
        self.pr.next = self.p1.q.val() >> self.round_sh.val();
        self.rr.next = (self.pr.val() + self.one.val()) >> self.one.val();
        if self.under1.q.val() {
            self.out2.d.next = self.zero_ow.val();
        } else if self.over1.q.val() | (self.rr.val() > self.max_pw.val()) {
            self.out2.d.next = self.max_ow.val();
        } else {
            self.out2.d.next = self.rr.val().get_bits::<OW>(0);
        }
        self.ok2.d.next = self.ok1.q.val() & !self.reset.val();
        self.out.next = self.out2.q.val();
        self.valid.next = self.ok2.q.val();
    }
}
