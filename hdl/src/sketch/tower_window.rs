//! `TowerWindow<W0, A0, W1, A1, W2, A2, AM>`: the register block's readout window in front
//! of a two-bank [`super::tower::TowerPipeline`]'s idle-bank read ports.
//!
//! `ro_req` with `ro_array` (0..2) and `ro_index` reads counter `ro_index` of array
//! `ro_array` (low `Ai` bits of the index, driven on every array's `rd_addr{i}` at once):
//! `ro_ack` and `ro_data` (zero-extended to 32 bits) [`RO_LATENCY`] clocks later, one
//! request per clock. This is the register block's window interface as is:
//! `win_req -> ro_req`, `win_sel -> ro_array` (Tower windows are 0..2),
//! `win_index -> ro_index`, `ro_ack -> win_ack`, `ro_data -> win_data`. `ro_array = 3`
//! reads 0. The pipeline's `rd_bank` (the idle bank) is the caller's.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | synchronous reset of the request pipeline |
//! | `ro_req`, `ro_array`, `ro_index` | in | 1, 2, `AM` | readout request |
//! | `ro_ack`, `ro_data` | out | 1, 32 | the answer, `RO_LATENCY` clocks after the request |
//! | `rd_addr{i}` | out | `Ai` | to the pipeline's read port of array `i` |
//! | `rd_data{i}` | in | `Wi` | from the pipeline, [`tower::READ_LATENCY`] clocks after `rd_addr{i}` |
use super::tower;
use crate::arith::Widen;
use rust_hdl::prelude::*;

/// Clocks from `ro_req` to `ro_ack`/`ro_data`: the pipeline's read and the select register.
pub const RO_LATENCY: usize = tower::READ_LATENCY + 1;

/// The tower's readout window (see the module docs). `AM` = the widest array's address bits.
#[derive(LogicBlock)]
pub struct TowerWindow<
    const W0: usize,
    const A0: usize,
    const W1: usize,
    const A1: usize,
    const W2: usize,
    const A2: usize,
    const AM: usize,
> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub ro_req: Signal<In, Bit>,
    pub ro_array: Signal<In, Bits<2>>,
    pub ro_index: Signal<In, Bits<AM>>,
    pub ro_ack: Signal<Out, Bit>,
    pub ro_data: Signal<Out, Bits<32>>,
    pub rd_addr0: Signal<Out, Bits<A0>>,
    pub rd_addr1: Signal<Out, Bits<A1>>,
    pub rd_addr2: Signal<Out, Bits<A2>>,
    pub rd_data0: Signal<In, Bits<W0>>,
    pub rd_data1: Signal<In, Bits<W1>>,
    pub rd_data2: Signal<In, Bits<W2>>,
    ro_v: [DFF<Bit>; RO_LATENCY],
    ro_sel: [DFF<Bits<2>>; 2],
    ro_q: DFF<Bits<32>>,
    // 32-bit views of the arrays' read data for the readout mux. rust-hdl workaround:
    // `bit_cast` widening renders as `x & M'hff..` (a Verilator WIDTH warning); `Widen` is
    // a leaf whose Verilog is `{zeros, x}`.
    x0: Widen<32, W0>,
    x1: Widen<32, W1>,
    x2: Widen<32, W2>,
    sel0: Constant<Bits<2>>,
    sel1: Constant<Bits<2>>,
    sel2: Constant<Bits<2>>,
    zero32: Constant<Bits<32>>,
}

impl<
        const W0: usize,
        const A0: usize,
        const W1: usize,
        const A1: usize,
        const W2: usize,
        const A2: usize,
        const AM: usize,
    > TowerWindow<W0, A0, W1, A1, W2, A2, AM>
{
    /// The window; `AM` must be the widest `Ai` (every counter reachable, no index bit unused).
    pub fn new() -> Result<Self, String> {
        if AM != A0.max(A1).max(A2) {
            return Err(format!("AM = {AM} must be the widest array's address bits {}", A0.max(A1).max(A2)));
        }
        Ok(TowerWindow {
            clock: Default::default(),
            reset: Default::default(),
            ro_req: Default::default(),
            ro_array: Default::default(),
            ro_index: Default::default(),
            ro_ack: Default::default(),
            ro_data: Default::default(),
            rd_addr0: Default::default(),
            rd_addr1: Default::default(),
            rd_addr2: Default::default(),
            rd_data0: Default::default(),
            rd_data1: Default::default(),
            rd_data2: Default::default(),
            ro_v: Default::default(),
            ro_sel: Default::default(),
            ro_q: Default::default(),
            x0: Default::default(),
            x1: Default::default(),
            x2: Default::default(),
            sel0: Constant::new(0u64.to_bits()),
            sel1: Constant::new(1u64.to_bits()),
            sel2: Constant::new(2u64.to_bits()),
            zero32: Constant::new(0u64.to_bits()),
        })
    }
}

impl<
        const W0: usize,
        const A0: usize,
        const W1: usize,
        const A1: usize,
        const W2: usize,
        const A2: usize,
        const AM: usize,
    > Logic for TowerWindow<W0, A0, W1, A1, W2, A2, AM>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, ro_q);
        self.rd_addr0.next = self.ro_index.val().get_bits::<A0>(0);
        self.rd_addr1.next = self.ro_index.val().get_bits::<A1>(0);
        self.rd_addr2.next = self.ro_index.val().get_bits::<A2>(0);
        // The arrays answer after READ_LATENCY clocks; select and register.
        self.ro_v[0].clock.next = self.clock.val();
        self.ro_v[0].d.next = self.ro_req.val() & !self.reset.val();
        for j in 1..RO_LATENCY {
            self.ro_v[j].clock.next = self.clock.val();
            self.ro_v[j].d.next = self.ro_v[j - 1].q.val() & !self.reset.val();
        }
        self.ro_sel[0].clock.next = self.clock.val();
        self.ro_sel[0].d.next = self.ro_array.val();
        self.ro_sel[1].clock.next = self.clock.val();
        self.ro_sel[1].d.next = self.ro_sel[0].q.val();
        self.x0.x.next = self.rd_data0.val();
        self.x1.x.next = self.rd_data1.val();
        self.x2.x.next = self.rd_data2.val();
        if self.ro_sel[1].q.val() == self.sel0.val() {
            self.ro_q.d.next = self.x0.y.val();
        } else if self.ro_sel[1].q.val() == self.sel1.val() {
            self.ro_q.d.next = self.x1.y.val();
        } else if self.ro_sel[1].q.val() == self.sel2.val() {
            self.ro_q.d.next = self.x2.y.val();
        } else {
            self.ro_q.d.next = self.zero32.val();
        }
        self.ro_ack.next = self.ro_v[2].q.val(); // RO_LATENCY - 1 (an index must be a literal)
        self.ro_data.next = self.ro_q.q.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widest_address_is_checked() {
        assert!(TowerWindow::<8, 16, 16, 15, 32, 14, 16>::new().is_ok());
        let e = TowerWindow::<8, 16, 16, 15, 32, 14, 15>::new().err().unwrap();
        assert!(e.contains("AM = 15") && e.contains("16"), "{e}");
        assert_eq!(RO_LATENCY, 3);
    }
}
