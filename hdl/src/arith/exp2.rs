//! `exp2`: pipelined fixed-point exp2, bit-exact with `lut::exp2_fx`.
//!
//! The signed input `y` (`YW`-bit two's complement, `in_frac` fraction bits, `in_frac >= Q`)
//! is rounded half up to `Q` fraction bits, `yq = i * 2^Q + f`; the output is
//! `EXP2[f] * 2^(i + out_frac - frac)` rounded half up and saturated to `2^OW - 1`
//! ([`Scale`]). `EXP2` is the contract's `exp2_table` in a `SyncROM` of `2^Q` words of
//! `EW = frac + 1` bits.
//!
//! Signed arithmetic without sign extension: flipping the sign bit gives
//! `y + 2^(YW-1)` as an unsigned number; the bias is a multiple of `2^in_frac`, so `f` is
//! unchanged and the integer part comes out as `i + 2^(YW-1-in_frac)`, which constants
//! computed in [`Exp2Unit::new`] turn into the biased shift of [`Scale`] and its
//! under/overflow flags.
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset of the valid pipeline |
//! | `y`, `y_valid` | in | `YW`, 1 | exponent (two's complement) |
//! | `value`, `valid` | out | `OW`, 1 | `exp2_fx(y)`, [`LATENCY`] clocks later |
//!
//! Pipeline ([`LATENCY`] = 4): 1. add the rounding half; 2. ROM read (registered) and the
//! biased shift / flags; 3-4. [`Scale`].
use super::scale::{self, Scale};
use super::{rom, Widen};
use rust_hdl::prelude::*;
use smartnic_contract::lut::{exp2_table, Exp2Io, Exp2Params};

pub const LATENCY: usize = 2 + scale::LATENCY;

#[derive(LogicBlock)]
pub struct Exp2Unit<const YW: usize, const Q: usize, const EW: usize, const OW: usize, const PW: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub y: Signal<In, Bits<YW>>,
    pub y_valid: Signal<In, Bit>,
    pub value: Signal<Out, Bits<OW>>,
    pub valid: Signal<Out, Bit>,
    // The exponent at 64 bits. rust-hdl workaround: `bit_cast` widening renders as `x &
    // M'hff..` (a Verilator WIDTH warning); `Widen` is a leaf whose Verilog is `{zeros, x}`.
    wy: Widen<64, YW>,
    yr1: DFF<Bits<64>>,
    ok1: DFF<Bit>,
    ys: Signal<Local, Bits<64>>,
    ib: Signal<Local, Bits<64>>,
    lut: SyncROM<Bits<EW>, Q>,
    e2: DFF<Bits<8>>,
    under2: DFF<Bit>,
    over2: DFF<Bit>,
    ok2: DFF<Bit>,
    scale: Scale<EW, OW, PW>,
    sign: Constant<Bits<YW>>,
    round: Constant<Bits<64>>,
    s_sh: Constant<Bits<8>>,
    q_sh: Constant<Bits<8>>,
    lo: Constant<Bits<64>>,
    hi: Constant<Bits<64>>,
    e_add: Constant<Bits<8>>,
}

impl<const YW: usize, const Q: usize, const EW: usize, const OW: usize, const PW: usize>
    Exp2Unit<YW, Q, EW, OW, PW>
{
    pub fn params() -> Exp2Params {
        Exp2Params { q: Q as u8, frac: (EW - 1) as u8 }
    }

    /// `io.out_width` must equal `OW`; `io.in_frac` in `Q..YW`.
    pub fn new(io: Exp2Io) -> Self {
        let p = Self::params();
        p.validate().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(io.out_width as usize, OW, "out_width must be OW");
        let in_frac = io.in_frac as usize;
        assert!(in_frac >= Q && in_frac < YW && YW <= 62, "need Q <= in_frac < YW <= 62");
        assert!(YW - in_frac <= 40, "integer part too wide");
        let s = in_frac - Q;
        let lo: i64 = (1i64 << (YW - 1 - in_frac)) - io.out_frac as i64 - 1;
        let hi = lo + OW as i64;
        assert!(hi >= 0, "no input of this width reaches a representable output");
        Exp2Unit {
            clock: Default::default(),
            reset: Default::default(),
            y: Default::default(),
            y_valid: Default::default(),
            value: Default::default(),
            valid: Default::default(),
            wy: Default::default(),
            yr1: Default::default(),
            ok1: Default::default(),
            ys: Default::default(),
            ib: Default::default(),
            lut: rom::<EW, Q>(&exp2_table(p), "exp2 table"),
            e2: Default::default(),
            under2: Default::default(),
            over2: Default::default(),
            ok2: Default::default(),
            scale: Default::default(),
            sign: Constant::new((1u64 << (YW - 1)).to_bits()),
            round: Constant::new((if s == 0 { 0 } else { 1u64 << (s - 1) }).to_bits()),
            s_sh: Constant::new((s as u64).to_bits()),
            q_sh: Constant::new((Q as u64).to_bits()),
            lo: Constant::new((lo.max(0) as u64).to_bits()),
            hi: Constant::new((hi as u64).to_bits()),
            e_add: Constant::new(((lo.wrapping_neg() as u64) & 0xff).to_bits()),
        }
    }
}

impl<const YW: usize, const Q: usize, const EW: usize, const OW: usize, const PW: usize> Logic
    for Exp2Unit<YW, Q, EW, OW, PW>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, yr1, ok1, e2, under2, over2, ok2);
        clock!(self, clock, lut, scale);
        // Stage 1: y + 2^(YW-1) (sign flip), plus half a 2^-Q step.
        self.wy.x.next = self.y.val() ^ self.sign.val();
        self.yr1.d.next = self.wy.y.val() + self.round.val();
        self.ok1.d.next = self.y_valid.val() & !self.reset.val();
        // Stage 2: f indexes the ROM; the biased integer part gives the shift and flags.
        self.ys.next = self.yr1.q.val() >> self.s_sh.val();
        self.ib.next = self.ys.val() >> self.q_sh.val();
        self.lut.address.next = self.ys.val().get_bits::<Q>(0);
        self.e2.d.next = self.ib.val().get_bits::<8>(0) + self.e_add.val();
        self.under2.d.next = self.ib.val() < self.lo.val();
        self.over2.d.next = self.ib.val() > self.hi.val();
        self.ok2.d.next = self.ok1.q.val() & !self.reset.val();
        // Stages 3-4: EXP2[f] * 2^sh.
        self.scale.reset.next = self.reset.val();
        self.scale.t.next = self.lut.data.val();
        self.scale.e.next = self.e2.q.val();
        self.scale.under.next = self.under2.q.val();
        self.scale.over.next = self.over2.q.val();
        self.scale.in_valid.next = self.ok2.q.val();
        self.value.next = self.scale.out.val();
        self.valid.next = self.scale.valid.val();
    }
}

/// The registered configuration: a 23-bit signed exponent with 16 fraction bits (the sum
/// or difference of two default log2 values), q = 10, 64-bit integer output.
pub type Exp2Default = Exp2Unit<23, 10, 17, 64, 82>;

/// Its I/O format.
pub const DEFAULT_IO: Exp2Io = Exp2Io { in_frac: 16, out_frac: 0, out_width: 64 };
