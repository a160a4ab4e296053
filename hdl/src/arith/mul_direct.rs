//! `mul_direct`: multiply through PINT's direct product table (`lut::mul_direct`), and the
//! generic [`DirectUnit`] that [`super::div_direct`] instantiates for `lut::div_direct`.
//!
//! Both operands go through a [`Normalize`] (leading-one position and the `H = q/2` bits
//! below it, the leading one itself being implicit); the two mantissas, concatenated
//! `mx << H | my`, address one `2^Q`-word `SyncROM` holding the contract's
//! `mul_direct_table` (exact products `(2^H + mx)(2^H + my)`, `Q + 2` bits) or
//! `div_direct_table` (rounded quotients, `frac + 1` bits); [`Scale`] multiplies the word
//! by `2^sh`, rounding half up and saturating:
//!
//! * product: `sh = lx + ly - 2H`;
//! * quotient: `sh = lx - ly - frac + out_frac`.
//!
//! The biased shift `e = sh + EW` is computed from the leading-zero counts as an 8-bit
//! `d = e + 64 = C - lzx -/+ lzy` (`C` a constant from [`DirectUnit::new`]): `d < 64` is an
//! underflow to 0 (`e < 0`, the word is below `2^EW`), `d > 64 + OW + 1` a saturation (the
//! word is at least `2^(EW-2)`, so `e >= OW + 2` gives at least `2^OW`). Zero rules without
//! output muxes: a zero operand of a product or a zero dividend sets `under`; a zero divisor
//! sets `over` (all ones) and raises `div_zero` instead of `valid`.
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset of the valid pipeline |
//! | `x`, `y`, `in_valid` | in | `W`, `W`, 1 | operands |
//! | `value` | out | `OW` | product / quotient (`out_frac` fraction bits), saturating |
//! | `valid` | out | 1 | a result, [`LATENCY`] clocks after the operands |
//! | `div_zero` | out | 1 | a division by zero (`valid` = 0, `value` all ones); 0 for `mul` |
//!
//! Const generics: `W` operand width (<= 64); `H` mantissa bits per operand, `V = H + 1`
//! normaliser bits, `Q = 2H` address bits; `EW` table word bits (`Q + 2` for the product
//! table, `frac + 1` for the quotient table); `OW` output bits, `PW = EW + OW + 1`.
//! Pipeline ([`LATENCY`] = 6): normalise (3), ROM read + shift/flags (1), scale (2).
use super::normalize::{self, Normalize};
use super::scale::{self, Scale};
use super::{rom, Widen};
use rust_hdl::prelude::*;
use smartnic_contract::lut::{div_direct_table, mul_direct_table, DirectParams};

pub const LATENCY: usize = normalize::LATENCY + 1 + scale::LATENCY;

#[derive(LogicBlock)]
pub struct DirectUnit<
    const W: usize,
    const H: usize,
    const V: usize,
    const Q: usize,
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
    // The operands at 64 bits for the normalisers. rust-hdl workaround: `bit_cast` widening
    // renders as `x & M'hff..` (a Verilator WIDTH warning); `Widen` is a leaf whose Verilog is
    // `{zeros, x}`.
    wx: Widen<64, W>,
    wy: Widen<64, W>,
    nx: Normalize<V>,
    ny: Normalize<V>,
    // The mantissas and the shift counts at the table-index and exponent widths. rust-hdl
    // workaround: `bit_cast` widening renders as `x & M'hff..` (a Verilator WIDTH warning);
    // `Widen` is a leaf whose Verilog is `{zeros, x}`.
    wmx: Widen<Q, H>,
    wmy: Widen<Q, H>,
    wlx: Widen<8, 6>,
    wly: Widen<8, 6>,
    lut: SyncROM<Bits<EW>, Q>,
    xz: Signal<Local, Bit>,
    yz: Signal<Local, Bit>,
    d: Signal<Local, Bits<8>>,
    e4: DFF<Bits<8>>,
    under4: DFF<Bit>,
    over4: DFF<Bit>,
    ok4: DFF<Bit>,
    dz: [DFF<Bit>; 3],
    scale: Scale<EW, OW, PW>,
    is_div: Constant<Bit>,
    h_sh: Constant<Bits<8>>,
    c_d: Constant<Bits<8>>,
    bias: Constant<Bits<8>>,
    hi: Constant<Bits<8>>,
}

impl<
        const W: usize,
        const H: usize,
        const V: usize,
        const Q: usize,
        const EW: usize,
        const OW: usize,
        const PW: usize,
    > DirectUnit<W, H, V, Q, EW, OW, PW>
{
    /// The contract parameters (`frac` is that of the quotient table; for a multiplier it
    /// is the default, unused).
    pub fn params(div: bool) -> DirectParams {
        let frac = if div { EW as u8 - 1 } else { DirectParams::DEFAULT.frac };
        DirectParams { q: Q as u8, frac }
    }

    /// A multiplier (`div = false`, `out_frac` must be 0) or a divider with `out_frac`
    /// fraction bits.
    pub fn new(div: bool, out_frac: u8) -> Self {
        let p = Self::params(div);
        p.validate().unwrap_or_else(|e| panic!("{e}"));
        assert!(div || out_frac == 0, "products are integers");
        assert!((1..=64).contains(&W) && (1..=64).contains(&OW) && out_frac <= 63);
        assert_eq!((V, Q), (H + 1, 2 * H), "V = H + 1, Q = 2H");
        let (table, c) = if div {
            // d = e + 64, e = lx - ly - frac + out_frac + EW = lzy - lzx + out_frac + 1.
            (div_direct_table(p), 65 + out_frac as usize)
        } else {
            assert_eq!(EW, Q + 2, "product words are Q + 2 bits");
            // d = e + 64, e = lx + ly - 2H + EW = 126 - lzx - lzy + EW - 2H.
            (mul_direct_table(p), 190 + EW - 2 * H)
        };
        assert!(c <= 255 && 64 + OW < 255);
        DirectUnit {
            clock: Default::default(),
            reset: Default::default(),
            x: Default::default(),
            y: Default::default(),
            in_valid: Default::default(),
            value: Default::default(),
            valid: Default::default(),
            div_zero: Default::default(),
            wx: Default::default(),
            wy: Default::default(),
            nx: Default::default(),
            ny: Default::default(),
            wmx: Default::default(),
            wmy: Default::default(),
            wlx: Default::default(),
            wly: Default::default(),
            lut: rom::<EW, Q>(&table, if div { "div_direct table" } else { "mul_direct table" }),
            xz: Default::default(),
            yz: Default::default(),
            d: Default::default(),
            e4: Default::default(),
            under4: Default::default(),
            over4: Default::default(),
            ok4: Default::default(),
            dz: Default::default(),
            scale: Default::default(),
            is_div: Constant::new(div),
            h_sh: Constant::new((H as u64).to_bits()),
            c_d: Constant::new((c as u64).to_bits()),
            bias: Constant::new(64u64.to_bits()),
            hi: Constant::new(((64 + OW + 1) as u64).to_bits()),
        }
    }
}

impl<
        const W: usize,
        const H: usize,
        const V: usize,
        const Q: usize,
        const EW: usize,
        const OW: usize,
        const PW: usize,
    > Logic for DirectUnit<W, H, V, Q, EW, OW, PW>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, e4, under4, over4, ok4);
        clock!(self, clock, nx, ny, lut, scale);
        for i in 0..3 {
            self.dz[i].clock.next = self.clock.val();
        }
        // Stages 1-3: normalise both operands.
        self.wx.x.next = self.x.val();
        self.wy.x.next = self.y.val();
        self.nx.reset.next = self.reset.val();
        self.nx.x.next = self.wx.y.val();
        self.nx.x_valid.next = self.in_valid.val();
        self.ny.reset.next = self.reset.val();
        self.ny.x.next = self.wy.y.val();
        self.ny.x_valid.next = self.in_valid.val();
        // Stage 4: table read at mx << H | my; biased shift and flags.
        self.wmx.x.next = self.nx.v.val().get_bits::<H>(0);
        self.wmy.x.next = self.ny.v.val().get_bits::<H>(0);
        self.lut.address.next = (self.wmx.y.val() << self.h_sh.val()) | self.wmy.y.val();
        // v = 0 exactly for a zero operand (otherwise its top bit is the leading one).
        self.xz.next = !self.nx.v.val().any();
        self.yz.next = !self.ny.v.val().any();
        self.wlx.x.next = self.nx.lz.val();
        self.wly.x.next = self.ny.lz.val();
        if self.is_div.val() {
            self.d.next = self.c_d.val() - self.wlx.y.val() + self.wly.y.val();
            self.under4.d.next = !self.yz.val() & (self.xz.val() | (self.d.val() < self.bias.val()));
            self.over4.d.next = self.yz.val() | (self.d.val() > self.hi.val());
        } else {
            self.d.next = self.c_d.val() - self.wlx.y.val() - self.wly.y.val();
            self.under4.d.next = self.xz.val() | self.yz.val() | (self.d.val() < self.bias.val());
            self.over4.d.next = self.d.val() > self.hi.val();
        }
        self.e4.d.next = self.d.val() - self.bias.val();
        // Both normalisers see the same operations; AND keeps them in lockstep by construction.
        self.ok4.d.next = self.nx.valid.val() & self.ny.valid.val() & !self.reset.val();
        self.dz[0].d.next = self.is_div.val() & self.yz.val();
        for i in 1..3 {
            self.dz[i].d.next = self.dz[i - 1].q.val();
        }
        // Stages 5-6: word * 2^sh.
        self.scale.reset.next = self.reset.val();
        self.scale.t.next = self.lut.data.val();
        self.scale.e.next = self.e4.q.val();
        self.scale.under.next = self.under4.q.val();
        self.scale.over.next = self.over4.q.val();
        self.scale.in_valid.next = self.ok4.q.val();
        self.value.next = self.scale.out.val();
        self.valid.next = self.scale.valid.val() & !self.dz[2].q.val();
        self.div_zero.next = self.scale.valid.val() & self.dz[2].q.val();
    }
}

/// The registered direct multiplier: 32-bit operands, q = 10 (5 + 5 mantissa bits), 12-bit
/// product words, 64-bit integer product.
pub type MulDirect32 = DirectUnit<32, 5, 6, 10, 12, 64, 77>;

/// A default direct multiplier (`lut::mul_direct` with `DirectParams::DEFAULT`).
pub fn mul_direct32() -> MulDirect32 {
    MulDirect32::new(false, 0)
}

/// Software model of the datapath (normaliser, biased shift and flags, [`Scale`]) for the
/// registered widths: `(value, valid, div_zero)`.
pub fn model(table: &[u32], ew: u32, div: bool, out_frac: u8, x: u32, y: u32) -> (u64, bool, bool) {
    let (vx, lzx) = normalize::model(x as u64);
    let (vy, lzy) = normalize::model(y as u64);
    let (xz, yz) = (x == 0, y == 0);
    let idx = ((vx >> 58) & 31) << 5 | ((vy >> 58) & 31);
    let t = table[idx as usize] as u128;
    let (d, under, over) = if div {
        let d = (65 + out_frac as u32 + lzy - lzx) & 255;
        (d, !yz && (xz || d < 64), yz || d > 129)
    } else {
        let d = (190 + ew - 10 - lzx - lzy) & 255;
        (d, xz || yz || d < 64, d > 129)
    };
    let value = if under {
        0
    } else if over {
        u64::MAX
    } else {
        let p = t << (d - 64);
        let rr = ((p >> (ew - 1)) + 1) >> 1;
        u64::try_from(rr).unwrap_or(u64::MAX)
    };
    (value, !(div && yz), div && yz)
}

#[cfg(test)]
mod tests {
    use super::*;
    use smartnic_contract::lut::{div_direct, mul_direct};
    use smartnic_contract::vectors::KeyStream;

    /// The biased shift constants and flags reproduce the contract on every pair of bit
    /// lengths (operands 0, 2^k, 2^k + 2^(k-1) + 1, all ones below 2^k) and random pairs.
    #[test]
    fn datapath_model_matches_the_contract() {
        let p = DirectParams::DEFAULT;
        assert_eq!((MulDirect32::params(false), super::super::div_direct::DivDirect32::params(true)), (p, p));
        let (mt, dt) = (mul_direct_table(p), div_direct_table(p));
        let mut xs = vec![0u32];
        for k in 0..32 {
            xs.extend([1u32 << k, (1u32 << k) | (1u32 << k >> 1) | 1, ((1u64 << (k + 1)) - 1) as u32]);
        }
        let mut s = KeyStream::new(77);
        let mut pairs: Vec<(u32, u32)> = xs.iter().flat_map(|&a| xs.iter().map(move |&b| (a, b))).collect();
        pairs.extend((0..20_000).map(|_| {
            (s.next_u64() as u32 >> (s.next_u64() % 32), s.next_u64() as u32 >> (s.next_u64() % 32))
        }));
        for &(x, y) in &pairs {
            let m = mul_direct(&mt, p, x as u64, y as u64);
            assert_eq!(model(&mt, 12, false, 0, x, y), (m, true, false), "{x} * {y}");
            let want = div_direct(&dt, p, x as u64, y as u64, 16);
            let got = model(&dt, 17, true, 16, x, y);
            assert_eq!(got, (want.unwrap_or(u64::MAX), want.is_some(), want.is_none()), "{x} / {y}");
        }
    }
}
