//! `cell_index`: [`CellIndex`], the SuMax readout window's word index -> (bucket, cell).
//!
//! A SuMax window is bucket-major: word `k = bucket * cells + cell`. The core's window port
//! gets `k` from the register file and needs the bucket (the arrays' read address) and the
//! cell (the lane to read); `cells` is a constant (3 + delay cells = 11 on the board), so
//! the division is a multiply by a reciprocal, exact over the window (checked in
//! [`CellIndex::new`]), 3 clocks.
use super::Sink;
use crate::arith::constmul::{self, ConstMul};
use rust_hdl::prelude::*;

/// Bits of the reciprocal shift in [`CellIndex`] beyond the bucket bits.
const RECIP_EXTRA: usize = 8;
/// Product width of [`CellIndex`]'s multiplier.
const RECIP_PW: usize = 48;
/// Clocks from `k` to `bucket`/`cell_no` in [`CellIndex`].
pub const CELL_INDEX_LATENCY: usize = constmul::LATENCY + 1;

/// `k -> (bucket, cell) = (k / C, k mod C)` for the constant `C` = cells per bucket (the
/// SuMax window's word index, bucket-major), pipelined: `q = (k * M) >> S` with `M =
/// ceil(2^S / C)`, `S = A + 8` ([`ConstMul`], 2 clocks; exact for every `k < C * 2^A`, checked
/// in [`CellIndex::new`]), then `cell = k - C * q` (low 8 bits) and a register:
/// [`CELL_INDEX_LATENCY`] = 3 clocks. `k >= C * 2^A` (outside the window) gives garbage.
#[derive(LogicBlock)]
pub struct CellIndex<const IW: usize, const A: usize> {
    pub clock: Signal<In, Clock>,
    pub k: Signal<In, Bits<IW>>,
    pub bucket: Signal<Out, Bits<A>>,
    pub cell_no: Signal<Out, Bits<8>>,
    mul: ConstMul<IW, RECIP_PW>,
    // The product's bits outside `q`, consumed so Verilator `-Wall` sees them used.
    sink_p: Sink<RECIP_PW>,
    k1: DFF<Bits<8>>,
    k2: DFF<Bits<8>>,
    q: Signal<Local, Bits<A>>,
    q8: Signal<Local, Bits<8>>,
    qt: [Signal<Local, Bits<8>>; 8],
    qc: [Signal<Local, Bits<8>>; 8],
    b_q: DFF<Bits<A>>,
    c_q: DFF<Bits<8>>,
    shift: Constant<Bits<6>>,
    cbit: [Constant<Bit>; 8],
    csh: [Constant<Bits<8>>; 8],
    zero8: Constant<Bits<8>>,
}

impl<const IW: usize, const A: usize> CellIndex<IW, A> {
    /// The index unit for `cells` cells per bucket (1..=255).
    pub fn new(cells: u32) -> Self {
        assert!((1..=255).contains(&cells), "cells {cells} must be 1..=255");
        let s = A + RECIP_EXTRA;
        assert!(s + 8 <= RECIP_PW && IW <= 32 && A <= 24, "IW={IW}, A={A} out of range");
        let m = (1u64 << s).div_ceil(cells as u64);
        assert!(m < 1u64 << 32, "reciprocal does not fit 32 bits");
        // Exactness: floor(k m / 2^s) = floor(k / cells) for k < cells * 2^A iff the error
        // k (cells m - 2^s) / (cells 2^s) never carries the fraction past 1.
        let e = cells as u64 * m - (1u64 << s);
        assert!((e * cells as u64) << A < 1u64 << s, "reciprocal not exact");
        CellIndex {
            clock: Default::default(),
            k: Default::default(),
            bucket: Default::default(),
            cell_no: Default::default(),
            mul: ConstMul::new(m as u32),
            sink_p: Default::default(),
            k1: Default::default(),
            k2: Default::default(),
            q: Default::default(),
            q8: Default::default(),
            qt: Default::default(),
            qc: Default::default(),
            b_q: Default::default(),
            c_q: Default::default(),
            shift: Constant::new((s as u64).to_bits()),
            cbit: std::array::from_fn(|i| Constant::new((cells >> i) & 1 == 1)),
            csh: std::array::from_fn(|i| Constant::new((i as u64).to_bits())),
            zero8: Constant::new(0u64.to_bits()),
        }
    }

    /// The software model: `(k / cells, k % cells)`.
    pub fn model(k: u64, cells: u32) -> (u64, u64) {
        let s = A + RECIP_EXTRA;
        let m = (1u64 << s).div_ceil(cells as u64);
        let q = ((k as u128 * m as u128) >> s) as u64 & ((1u64 << A) - 1);
        (q, k.wrapping_sub(q * cells as u64) & 0xff)
    }
}

impl<const IW: usize, const A: usize> Logic for CellIndex<IW, A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, k1, k2, b_q, c_q);
        self.mul.clock.next = self.clock.val();
        self.mul.a.next = self.k.val();
        self.sink_p.x.next = self.mul.p.val();
        self.k1.d.next = self.k.val().get_bits::<8>(0);
        self.k2.d.next = self.k1.q.val();
        self.q.next = self.mul.p.val().get_bits::<A>(self.shift.val().index());
        self.q8.next = self.mul.p.val().get_bits::<8>(self.shift.val().index());
        // cells * q mod 256: shift-and-add over the constant's set bits.
        for i in 0..8 {
            if self.cbit[i].val() {
                self.qt[i].next = self.q8.val() << self.csh[i].val();
            } else {
                self.qt[i].next = self.zero8.val();
            }
        }
        self.qc[0].next = self.qt[0].val();
        for i in 1..8 {
            self.qc[i].next = self.qc[i - 1].val() + self.qt[i].val();
        }
        self.b_q.d.next = self.q.val();
        self.c_q.d.next = self.k2.q.val() - self.qc[7].val();
        self.bucket.next = self.b_q.q.val();
        self.cell_no.next = self.c_q.q.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency() {
        assert_eq!(CELL_INDEX_LATENCY, 3);
    }

    #[test]
    fn cell_index_model_is_exact() {
        for cells in [1u32, 3, 11, 13] {
            let _ = CellIndex::<19, 13>::new(cells);
            for k in 0..(cells as u64) << 13 {
                assert_eq!(
                    CellIndex::<19, 13>::model(k, cells),
                    (k / cells as u64, k % cells as u64),
                    "{cells} {k}"
                );
            }
        }
        assert!(std::panic::catch_unwind(|| CellIndex::<19, 13>::new(255)).is_err(), "not exact");
    }
}
