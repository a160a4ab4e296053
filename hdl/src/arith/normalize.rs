//! `normalize`: the leading-one normaliser shared by [`super::log2`] and the direct tables.
//!
//! Shifts a 64-bit value left until its leading one is in bit 63 and counts the shift: six
//! levels (32, 16, 8, 4, 2, 1), each "if the top `k` bits are zero, shift by `k`", two
//! levels per register stage. `lz` = leading zeros (63 for `x = 0`, whose `v` is 0), so the
//! leading-one position is `63 - lz = !lz` (6 bits) and the `q` bits below it are
//! `v[62 -: q]`, zero padded on the right exactly like the contract's `mantissa`.
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset of the valid pipeline |
//! | `x`, `x_valid` | in | 64, 1 | operand (narrower operands zero extended) |
//! | `v` | out | `M` | the top `M` bits of `x << lz` (leading one in bit `M - 1` unless `x = 0`) |
//! | `lz` | out | 6 | leading zeros of `x` (63 for 0) |
//! | `valid` | out | 1 | `x_valid` of [`LATENCY`] clocks ago |
//!
//! `M` (const generic, 1..=64) is what the user needs: `q + 1` for a log2 (flag + mantissa).
use rust_hdl::prelude::*;

/// Register stages.
pub const LATENCY: usize = 3;

#[derive(LogicBlock)]
pub struct Normalize<const M: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub x: Signal<In, Bits<64>>,
    pub x_valid: Signal<In, Bit>,
    pub v: Signal<Out, Bits<M>>,
    pub lz: Signal<Out, Bits<6>>,
    pub valid: Signal<Out, Bit>,
    // One shifted value and one leading-zero contribution per level.
    n32: Signal<Local, Bits<64>>,
    n16: Signal<Local, Bits<64>>,
    n8: Signal<Local, Bits<64>>,
    n4: Signal<Local, Bits<64>>,
    n2: Signal<Local, Bits<64>>,
    n1: Signal<Local, Bits<64>>,
    k32: Signal<Local, Bits<6>>,
    k16: Signal<Local, Bits<6>>,
    k8: Signal<Local, Bits<6>>,
    k4: Signal<Local, Bits<6>>,
    k2: Signal<Local, Bits<6>>,
    k1: Signal<Local, Bits<6>>,
    v1: DFF<Bits<64>>,
    v2: DFF<Bits<64>>,
    v3: DFF<Bits<64>>,
    lz1: DFF<Bits<6>>,
    lz2: DFF<Bits<6>>,
    lz3: DFF<Bits<6>>,
    ok1: DFF<Bit>,
    ok2: DFF<Bit>,
    ok3: DFF<Bit>,
    /// `pow[i] = 2^i` as 6-bit constants.
    pow: [Constant<Bits<6>>; 6],
    zero6: Constant<Bits<6>>,
    v_off: Constant<Bits<6>>,
}

impl<const M: usize> Default for Normalize<M> {
    fn default() -> Self {
        Normalize {
            clock: Default::default(),
            reset: Default::default(),
            x: Default::default(),
            x_valid: Default::default(),
            v: Default::default(),
            lz: Default::default(),
            valid: Default::default(),
            n32: Default::default(),
            n16: Default::default(),
            n8: Default::default(),
            n4: Default::default(),
            n2: Default::default(),
            n1: Default::default(),
            k32: Default::default(),
            k16: Default::default(),
            k8: Default::default(),
            k4: Default::default(),
            k2: Default::default(),
            k1: Default::default(),
            v1: Default::default(),
            v2: Default::default(),
            v3: Default::default(),
            lz1: Default::default(),
            lz2: Default::default(),
            lz3: Default::default(),
            ok1: Default::default(),
            ok2: Default::default(),
            ok3: Default::default(),
            pow: std::array::from_fn(|i| Constant::new((1u64 << i).to_bits())),
            zero6: Constant::new(0u64.to_bits()),
            v_off: Constant::new(((64 - M) as u64).to_bits()),
        }
    }
}

impl<const M: usize> Logic for Normalize<M> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, v1, v2, v3, lz1, lz2, lz3, ok1, ok2, ok3);
        // Stage 1: levels 32 and 16.
        if self.x.val().get_bits::<32>(32).any() {
            self.n32.next = self.x.val();
            self.k32.next = self.zero6.val();
        } else {
            self.n32.next = self.x.val() << 32;
            self.k32.next = self.pow[5].val();
        }
        if self.n32.val().get_bits::<16>(48).any() {
            self.n16.next = self.n32.val();
            self.k16.next = self.zero6.val();
        } else {
            self.n16.next = self.n32.val() << 16;
            self.k16.next = self.pow[4].val();
        }
        self.v1.d.next = self.n16.val();
        self.lz1.d.next = self.k32.val() | self.k16.val();
        self.ok1.d.next = self.x_valid.val() & !self.reset.val();
        // Stage 2: levels 8 and 4.
        if self.v1.q.val().get_bits::<8>(56).any() {
            self.n8.next = self.v1.q.val();
            self.k8.next = self.zero6.val();
        } else {
            self.n8.next = self.v1.q.val() << 8;
            self.k8.next = self.pow[3].val();
        }
        if self.n8.val().get_bits::<4>(60).any() {
            self.n4.next = self.n8.val();
            self.k4.next = self.zero6.val();
        } else {
            self.n4.next = self.n8.val() << 4;
            self.k4.next = self.pow[2].val();
        }
        self.v2.d.next = self.n4.val();
        self.lz2.d.next = self.lz1.q.val() | self.k8.val() | self.k4.val();
        self.ok2.d.next = self.ok1.q.val() & !self.reset.val();
        // Stage 3: levels 2 and 1.
        if self.v2.q.val().get_bits::<2>(62).any() {
            self.n2.next = self.v2.q.val();
            self.k2.next = self.zero6.val();
        } else {
            self.n2.next = self.v2.q.val() << 2;
            self.k2.next = self.pow[1].val();
        }
        if self.n2.val().get_bit(63) {
            self.n1.next = self.n2.val();
            self.k1.next = self.zero6.val();
        } else {
            self.n1.next = self.n2.val() << 1;
            self.k1.next = self.pow[0].val();
        }
        self.v3.d.next = self.n1.val();
        self.lz3.d.next = self.lz2.q.val() | self.k2.val() | self.k1.val();
        self.ok3.d.next = self.ok2.q.val() & !self.reset.val();
        self.v.next = self.v3.q.val().get_bits::<M>(self.v_off.val().index());
        self.lz.next = self.lz3.q.val();
        self.valid.next = self.ok3.q.val();
    }
}

/// Software model: `(x << lz, lz)`.
pub fn model(x: u64) -> (u64, u32) {
    let lz = if x == 0 { 63 } else { x.leading_zeros() };
    (x << lz, lz)
}
