//! `constmul`: `p = a * K` for a constant `K < 2^32`, as a shift-and-add tree (no DSP).
//!
//! The partial products `a << i` of the set bits of `K` (chosen in [`ConstMul::new`],
//! outside `update`; a clear bit contributes a constant 0 that synthesis removes) are
//! summed by a binary tree of adders: levels 32 -> 16 -> 8 -> 4 in stage 1 (registered),
//! 4 -> 2 -> 1 in stage 2 (registered). Used by the encoder (`log2(v) * K_fx`) and the
//! delay-bin unit (`bins_per_octave * (log2 d - log2 base)`).
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock` | in | 1 | clock |
//! | `a` | in | `IW` | multiplicand |
//! | `p` | out | `PW` | `a * K mod 2^PW`, [`LATENCY`] clocks later (callers size `PW` so it never wraps) |
//!
//! The block has no valid bit: callers delay theirs by [`LATENCY`].
use super::Widen;
use rust_hdl::prelude::*;

/// Register stages.
pub const LATENCY: usize = 2;
/// Bits of the constant.
pub const KBITS: usize = 32;

#[derive(LogicBlock)]
pub struct ConstMul<const IW: usize, const PW: usize> {
    pub clock: Signal<In, Clock>,
    pub a: Signal<In, Bits<IW>>,
    pub p: Signal<Out, Bits<PW>>,
    // The operand at the product width, for the shifted partial products. rust-hdl workaround:
    // `bit_cast` widening renders as `x & M'hff..` (a Verilator WIDTH warning); `Widen` is a
    // leaf whose Verilog is `{zeros, x}`.
    wa: Widen<PW, IW>,
    t: [Signal<Local, Bits<PW>>; 32],
    s1: [Signal<Local, Bits<PW>>; 16],
    s2: [Signal<Local, Bits<PW>>; 8],
    r3: [DFF<Bits<PW>>; 4],
    s4: [Signal<Local, Bits<PW>>; 2],
    r5: DFF<Bits<PW>>,
    kbit: [Constant<Bit>; 32],
    sh: [Constant<Bits<8>>; 32],
    zero: Constant<Bits<PW>>,
}

impl<const IW: usize, const PW: usize> ConstMul<IW, PW> {
    /// `k` is the constant; `PW` must hold `(2^IW - 1) * k` (checked).
    pub fn new(k: u32) -> Self {
        assert!(IW <= PW && PW <= 64, "ConstMul<{IW}, {PW}>");
        let max = (((1u128 << IW) - 1) * k as u128) >> PW;
        assert_eq!(max, 0, "ConstMul<{IW}, {PW}> with K = {k} overflows");
        ConstMul {
            clock: Default::default(),
            a: Default::default(),
            p: Default::default(),
            wa: Default::default(),
            t: Default::default(),
            s1: Default::default(),
            s2: Default::default(),
            r3: Default::default(),
            s4: Default::default(),
            r5: Default::default(),
            kbit: std::array::from_fn(|i| Constant::new((k >> i) & 1 == 1)),
            sh: std::array::from_fn(|i| Constant::new((i as u64).to_bits())),
            zero: Constant::new(0u64.to_bits()),
        }
    }
}

impl<const IW: usize, const PW: usize> Logic for ConstMul<IW, PW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, r5);
        for i in 0..4 {
            self.r3[i].clock.next = self.clock.val();
        }
        self.wa.x.next = self.a.val();
        for i in 0..32 {
            if self.kbit[i].val() {
                self.t[i].next = self.wa.y.val() << self.sh[i].val();
            } else {
                self.t[i].next = self.zero.val();
            }
        }
        // Stage 1: 32 -> 16 -> 8 -> 4.
        for i in 0..16 {
            self.s1[i].next = self.t[2 * i].val() + self.t[2 * i + 1].val();
        }
        for i in 0..8 {
            self.s2[i].next = self.s1[2 * i].val() + self.s1[2 * i + 1].val();
        }
        for i in 0..4 {
            self.r3[i].d.next = self.s2[2 * i].val() + self.s2[2 * i + 1].val();
        }
        // Stage 2: 4 -> 2 -> 1.
        for i in 0..2 {
            self.s4[i].next = self.r3[2 * i].q.val() + self.r3[2 * i + 1].q.val();
        }
        self.r5.d.next = self.s4[0].val() + self.s4[1].val();
        self.p.next = self.r5.q.val();
    }
}
