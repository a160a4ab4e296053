//! `mul`: multiply through log-add-exp (`lut::mul_log`), and the generic [`LogAddExp`]
//! unit that [`super::div`] instantiates for `div_log`.
//!
//! `x * y = exp2(log2 x + log2 y)`, `x / y = exp2(log2 x - log2 y)`: two [`Log2Unit`]s
//! side by side, one add/subtract stage, one [`Exp2Unit`] (input `FRAC` fraction bits).
//! Zero rules are folded into the exponent so no output mux is needed: an operand 0 of a
//! product or a zero dividend drives the most negative exponent (exp2 underflows to 0), a
//! zero divisor the most positive one (exp2 saturates to all ones) and clears `valid`
//! (`div_zero` is set instead) -- exactly the contract's `None` / `u64::MAX` convention.
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset of the valid pipeline |
//! | `x`, `y`, `in_valid` | in | `W`, `W`, 1 | operands |
//! | `value` | out | `OW` | product / quotient (`out_frac` fraction bits), saturating |
//! | `valid` | out | 1 | a result, [`LATENCY`] clocks after the operands |
//! | `div_zero` | out | 1 | a division by zero (`valid` = 0, `value` all ones); 0 for `mul` |
//!
//! Const generics: `W` operand width; `Q`, `FRAC`, `O = FRAC + 6`, `V = Q + 1` of the
//! log2 units; `YW = O + 2` exponent width; `EW = frac_e + 1`, `OW`, `PW = EW + OW + 1` of
//! the exp2 unit (whose `q` is also `Q`). Pipeline ([`LATENCY`] = 9): log2 (4), add (1),
//! exp2 (4).
use super::exp2::{self, Exp2Unit};
use super::log2::{self, Log2Unit};
use super::Widen;
use rust_hdl::prelude::*;
use smartnic_contract::lut::Exp2Io;

pub const LATENCY: usize = log2::LATENCY + 1 + exp2::LATENCY;

#[derive(LogicBlock)]
pub struct LogAddExp<
    const W: usize,
    const Q: usize,
    const FRAC: usize,
    const O: usize,
    const V: usize,
    const YW: usize,
    const EW: usize,
    const OW: usize,
    const PW: usize,
> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub x: Signal<In, Bits<W>>,
    pub y: Signal<In, Bits<W>>,
    pub in_valid: Signal<In, Bit>,
    pub value: Signal<Out, Bits<OW>>,
    pub valid: Signal<Out, Bit>,
    pub div_zero: Signal<Out, Bit>,
    lx: Log2Unit<W, Q, FRAC, O, V>,
    ly: Log2Unit<W, Q, FRAC, O, V>,
    // The two logarithms at the exponent sum's width. rust-hdl workaround: `bit_cast` widening
    // renders as `x & M'hff..` (a Verilator WIDTH warning); `Widen` is a leaf whose Verilog is
    // `{zeros, x}`.
    wa: Widen<YW, O>,
    wb: Widen<YW, O>,
    e5: DFF<Bits<YW>>,
    ok5: DFF<Bit>,
    dz: [DFF<Bit>; 5],
    exp: Exp2Unit<YW, Q, EW, OW, PW>,
    is_div: Constant<Bit>,
    most_neg: Constant<Bits<YW>>,
    most_pos: Constant<Bits<YW>>,
}

impl<
        const W: usize,
        const Q: usize,
        const FRAC: usize,
        const O: usize,
        const V: usize,
        const YW: usize,
        const EW: usize,
        const OW: usize,
        const PW: usize,
    > LogAddExp<W, Q, FRAC, O, V, YW, EW, OW, PW>
{
    /// A multiplier (`div = false`, `out_frac` must be 0) or a divider.
    pub fn new(div: bool, out_frac: u8) -> Self {
        assert!(div || out_frac == 0, "products are integers");
        assert_eq!(YW, O + 2, "YW must be O + 2");
        let io = Exp2Io { in_frac: FRAC as u8, out_frac, out_width: OW as u8 };
        // The forced exponents must under/overflow (see the module docs).
        let lo = (1i64 << (YW - 1 - FRAC)) - out_frac as i64 - 1;
        assert!(lo > 0 && (1i64 << (YW - FRAC)) - 1 > lo + OW as i64);
        LogAddExp {
            clock: Default::default(),
            reset: Default::default(),
            x: Default::default(),
            y: Default::default(),
            in_valid: Default::default(),
            value: Default::default(),
            valid: Default::default(),
            div_zero: Default::default(),
            lx: Log2Unit::new(),
            ly: Log2Unit::new(),
            wa: Default::default(),
            wb: Default::default(),
            e5: Default::default(),
            ok5: Default::default(),
            dz: Default::default(),
            exp: Exp2Unit::new(io),
            is_div: Constant::new(div),
            most_neg: Constant::new((1u64 << (YW - 1)).to_bits()),
            most_pos: Constant::new(((1u64 << (YW - 1)) - 1).to_bits()),
        }
    }

    pub fn log2_params() -> smartnic_contract::lut::Log2Params {
        Log2Unit::<W, Q, FRAC, O, V>::params()
    }
    pub fn exp2_params() -> smartnic_contract::lut::Exp2Params {
        Exp2Unit::<YW, Q, EW, OW, PW>::params()
    }
}

impl<
        const W: usize,
        const Q: usize,
        const FRAC: usize,
        const O: usize,
        const V: usize,
        const YW: usize,
        const EW: usize,
        const OW: usize,
        const PW: usize,
    > Logic for LogAddExp<W, Q, FRAC, O, V, YW, EW, OW, PW>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, e5, ok5);
        clock!(self, clock, lx, ly, exp);
        for i in 0..5 {
            self.dz[i].clock.next = self.clock.val();
        }
        // Stages 1-4: both logarithms.
        self.lx.reset.next = self.reset.val();
        self.lx.x.next = self.x.val();
        self.lx.x_valid.next = self.in_valid.val();
        self.ly.reset.next = self.reset.val();
        self.ly.x.next = self.y.val();
        self.ly.x_valid.next = self.in_valid.val();
        // Stage 5: the exponent, with the zero rules.
        self.wa.x.next = self.lx.value.val();
        self.wb.x.next = self.ly.value.val();
        if self.is_div.val() {
            if self.ly.zero.val() {
                self.e5.d.next = self.most_pos.val();
            } else if self.lx.zero.val() {
                self.e5.d.next = self.most_neg.val();
            } else {
                self.e5.d.next = self.wa.y.val() - self.wb.y.val();
            }
        } else if self.lx.zero.val() | self.ly.zero.val() {
            self.e5.d.next = self.most_neg.val();
        } else {
            self.e5.d.next = self.wa.y.val() + self.wb.y.val();
        }
        // Both units see the same operations; AND keeps them in lockstep by construction.
        self.ok5.d.next = (self.lx.valid.val() | self.lx.zero.val())
            & (self.ly.valid.val() | self.ly.zero.val())
            & !self.reset.val();
        self.dz[0].d.next = self.is_div.val() & self.ly.zero.val();
        for i in 1..5 {
            self.dz[i].d.next = self.dz[i - 1].q.val();
        }
        // Stages 6-9: exp2.
        self.exp.reset.next = self.reset.val();
        self.exp.y.next = self.e5.q.val();
        self.exp.y_valid.next = self.ok5.q.val();
        self.value.next = self.exp.value.val();
        self.valid.next = self.exp.valid.val() & !self.dz[4].q.val();
        self.div_zero.next = self.exp.valid.val() & self.dz[4].q.val();
    }
}

/// The registered multiplier: 32-bit operands, default tables, 64-bit integer product.
pub type MulLog32 = LogAddExp<32, 10, 16, 22, 11, 24, 17, 64, 82>;

/// A default multiplier (`lut::mul_log` with the default parameters).
pub fn mul_log32() -> MulLog32 {
    MulLog32::new(false, 0)
}
