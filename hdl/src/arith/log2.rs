//! `log2`: pipelined fixed-point log2, bit-exact with `lut::log2_fx`.
//!
//! `value = (l << FRAC) | LOG2[m]`: `l` is the leading-one position (`!lz` of
//! [`Normalize`]), `m` the `Q` bits below it, `LOG2` the contract's `log2_table` in a
//! `SyncROM` (`2^Q` words of `FRAC` bits: every word of the table is below `2^FRAC`, so the
//! contract's `+` is a concatenation; the constructor checks it).
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset of the valid pipeline |
//! | `x`, `x_valid` | in | `W`, 1 | operand, `W <= 64` |
//! | `value` | out | `O = FRAC + 6` | `log2_fx(x)` (`FRAC` fraction bits); 0 for `x = 0` |
//! | `valid` | out | 1 | an operation with `x != 0` ([`LATENCY`] clocks after it entered) |
//! | `zero` | out | 1 | an operation with `x = 0` (contract: `None`; `value` = 0) |
//!
//! Parameters: `W` operand width, `Q` mantissa/address bits, `FRAC` fraction bits, `O` =
//! `FRAC + 6`, `V` = `Q + 1` (normaliser output bits) (const generics, checked in [`Log2Unit::new`] against the contract's
//! `Log2Params`). Pipeline ([`LATENCY`] = 4): three normaliser stages, then the ROM's
//! registered read (the address is the stage-3 register).
use super::normalize::{self, Normalize};
use super::{rom, Widen};
use rust_hdl::prelude::*;
use smartnic_contract::lut::{log2_table, Log2Params};

/// Clocks from `x` to `value`.
pub const LATENCY: usize = normalize::LATENCY + 1;

#[derive(LogicBlock)]
pub struct Log2Unit<const W: usize, const Q: usize, const FRAC: usize, const O: usize, const V: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub x: Signal<In, Bits<W>>,
    pub x_valid: Signal<In, Bit>,
    pub value: Signal<Out, Bits<O>>,
    pub valid: Signal<Out, Bit>,
    pub zero: Signal<Out, Bit>,
    norm: Normalize<V>,
    // The operand at 64 bits, the leading-zero count and the table value at the output width.
    // rust-hdl workaround: `bit_cast` widening renders as `x & M'hff..` (a Verilator WIDTH
    // warning); `Widen` is a leaf whose Verilog is `{zeros, x}`.
    wx: Widen<64, W>,
    wl: Widen<O, 6>,
    wt: Widen<O, FRAC>,
    lut: SyncROM<Bits<FRAC>, Q>,
    l4: DFF<Bits<6>>,
    ok4: DFF<Bit>,
    zero4: DFF<Bit>,
    frac_sh: Constant<Bits<8>>,
    top_bit: Constant<Bits<4>>,
}

impl<const W: usize, const Q: usize, const FRAC: usize, const O: usize, const V: usize>
    Log2Unit<W, Q, FRAC, O, V>
{
    /// The contract parameters these widths implement.
    pub fn params() -> Log2Params {
        Log2Params { q: Q as u8, frac: FRAC as u8 }
    }

    pub fn new() -> Self {
        let p = Self::params();
        p.validate().unwrap_or_else(|e| panic!("{e}"));
        assert!((1..=64).contains(&W), "operand width W={W} must be 1..=64");
        assert_eq!(O, FRAC + 6, "O must be FRAC + 6");
        assert_eq!(V, Q + 1, "V must be Q + 1");
        Log2Unit {
            clock: Default::default(),
            reset: Default::default(),
            x: Default::default(),
            x_valid: Default::default(),
            value: Default::default(),
            valid: Default::default(),
            zero: Default::default(),
            norm: Default::default(),
            wx: Default::default(),
            wl: Default::default(),
            wt: Default::default(),
            lut: rom::<FRAC, Q>(&log2_table(p), "log2 table"),
            l4: Default::default(),
            ok4: Default::default(),
            zero4: Default::default(),
            frac_sh: Constant::new((FRAC as u64).to_bits()),
            top_bit: Constant::new((Q as u64).to_bits()),
        }
    }
}

impl<const W: usize, const Q: usize, const FRAC: usize, const O: usize, const V: usize> Default
    for Log2Unit<W, Q, FRAC, O, V>
{
    fn default() -> Self {
        Self::new()
    }
}

impl<const W: usize, const Q: usize, const FRAC: usize, const O: usize, const V: usize> Logic
    for Log2Unit<W, Q, FRAC, O, V>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, l4, ok4, zero4);
        clock!(self, clock, norm, lut);
        // Stages 1-3: normalise.
        self.norm.reset.next = self.reset.val();
        self.wx.x.next = self.x.val();
        self.norm.x.next = self.wx.y.val();
        self.norm.x_valid.next = self.x_valid.val();
        // Stage 4: LOG2[m] (registered ROM read) and the leading-one position; v[Q] is the
        // leading one (0 only for x = 0).
        self.lut.address.next = self.norm.v.val().get_bits::<Q>(0);
        self.l4.d.next = !self.norm.lz.val();
        self.ok4.d.next =
            self.norm.valid.val() & self.norm.v.val().get_bit(self.top_bit.val().index()) & !self.reset.val();
        self.zero4.d.next = self.norm.valid.val()
            & !self.norm.v.val().get_bit(self.top_bit.val().index())
            & !self.reset.val();
        self.wl.x.next = self.l4.q.val();
        self.wt.x.next = self.lut.data.val();
        self.value.next = (self.wl.y.val() << self.frac_sh.val()) | self.wt.y.val();
        self.valid.next = self.ok4.q.val();
        self.zero.next = self.zero4.q.val();
    }
}

/// The default unit: 64-bit operands, q = 10, frac = 16 (contract defaults).
pub type Log2Default = Log2Unit<64, 10, 16, 22, 11>;

#[cfg(test)]
mod tests {
    use super::*;
    use smartnic_contract::lut::log2_fx;

    #[test]
    fn default_params_are_the_contract_defaults() {
        assert_eq!(Log2Default::params(), Log2Params::DEFAULT);
    }

    /// The concatenation `(l << FRAC) | word` equals the contract's sum because every word
    /// is below 2^FRAC (checked by `rom` in the constructor) for every legal (q, frac).
    #[test]
    fn words_fit_frac_bits_so_or_equals_add() {
        for q in 1..=12u8 {
            for frac in q..=26 {
                let t = log2_table(Log2Params { q, frac });
                assert!(t.iter().all(|&w| w < 1 << frac), "q={q} frac={frac}");
            }
        }
        let t = log2_table(Log2Params::DEFAULT);
        let (v, lz) = normalize::model(12345);
        let m = (v >> (63 - 10)) & 1023;
        assert_eq!(lz, 63 - 13);
        assert_eq!(((63 - lz) << 16) | t[m as usize], log2_fx(&t, Log2Params::DEFAULT, 12345).unwrap());
    }
}
