//! `SuMaxArray<SW, DW, DC, TW, A, B>`: one SuMax array of `2^A` buckets, each bucket a
//! flow-size sum cell (`SW` bits), `DC` delay sum cells (`DW` bits) and the two max cells
//! (`TW` bits), in `B` banks, updated read-modify-write at one packet per clock with full
//! forwarding.
//!
//! # Structure: one lane per cell
//!
//! A bucket is not one wide RAM word but one RAM per cell ("lane"), all addressed by the same
//! bucket index in lock step:
//!
//! - the size cell is a [`CounterArray<SW, A, B>`](super::array::CounterArray) fed the size omega;
//! - each delay cell `j` is a `CounterArray<DW, A, B>`; the packet's bin selects which lane gets
//!   the delay omega. The others get `omega = 0` (finite), so `v < omega` is false: they write
//!   their cell back unchanged (keeping their forwarding window exact) and their `omega_out`
//!   is `0`. The delay omega after this array is therefore the OR of all lanes' `omega_out`;
//! - the max cells are a [`TimeCells<TW, A, B>`](super::sumax_time::TimeCells).
//!
//! Every lane forwards its own last three writes with the same stage timing, so the array is
//! exactly the sequential `SuMax::insert_at` for any packet order. The block RAM count is the
//! same as one `SW + DC*DW + 2*TW`-bit word (at 2^13 deep each lane is `width / 4` RAMB36 in
//! 8K x 4 mode: 8 + 8 * 4 + 8 + 8 = 56 per array, the minimum without parity bits), the
//! single-cell write needs no read-merge of a wide word, and the identical address
//! comparators of the lanes are merged by synthesis.
//!
//! # Stages (a packet at s0 = cycle `c`)
//!
//! | cycle | what |
//! |---|---|
//! | c | `valid`, `addr` read every lane |
//! | c+1 | `t`, `bin` (registered here: bin decoded to a one-hot lane select) |
//! | c+2 | compute: `omega_*` consumed |
//! | c+3 | write; `omega_*_out` valid; `done` |
//!
//! # Banks
//!
//! Every lane has the array's `B` banks (see [`super::array`]) and is fed the packet's
//! `bank` bit with its bucket; the readout (`rd_bank`, `rd_addr`, `rd_cell`) and the clear
//! sweep (`clr`, `clr_bank`, `clr_addr`) go to every lane. With one bank those inputs are
//! unused (the lanes mask them).
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset of the valid bits |
//! | `valid`, `bank`, `addr` | in | 1, 1, `A` | a packet's bank and bucket (s0) |
//! | `t`, `bin` | in | `TW`, 8 | its time and delay bin, at s1 (a bin `>= DC` updates no delay cell) |
//! | `omega_size_inf`, `omega_size` | in | 1, 32 | size running minimum, at s2 |
//! | `omega_delay_inf`, `omega_delay` | in | 1, 32 | delay running minimum, at s2 |
//! | `omega_size_out_inf`, `omega_size_out`, `omega_delay_out_inf`, `omega_delay_out` | out | | after this array, at s3 |
//! | `done`, `busy` | out | 1 | a packet is written (s3) / in s0..s2 |
//! | `rd_bank` | in | 1 | readout bank (holds no packet at s0) |
//! | `rd_addr`, `rd_cell` | in | `A`, 8 | readout bucket and cell (`sumax_cell` order: size, delays, interval, last) |
//! | `rd_data` | out | 32 | that cell, [`READ_LATENCY`] clocks later (0 for a cell index beyond the bucket) |
//! | `clr`, `clr_bank`, `clr_addr` | in | 1, 1, `A` | clear sweep: zero every cell of bucket `clr_addr` of bank `clr_bank` (two banks only) |
use super::array::{self, CounterArray};
use super::sumax_time::TimeCells;
use crate::arith::Widen;
use rust_hdl::prelude::*;

/// Clocks from `rd_addr`/`rd_cell` to `rd_data` (the lanes' 2 plus the cell mux register).
pub const READ_LATENCY: usize = array::READ_LATENCY + 1;
/// Clocks from s0 to `omega_*_out`.
pub const OMEGA_LATENCY: usize = array::OMEGA_LATENCY;

/// One SuMax array of `B` banks (see the module docs).
#[derive(LogicBlock)]
pub struct SuMaxArray<
    const SW: usize,
    const DW: usize,
    const DC: usize,
    const TW: usize,
    const A: usize,
    const B: usize,
> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub valid: Signal<In, Bit>,
    pub bank: Signal<In, Bit>,
    pub addr: Signal<In, Bits<A>>,
    pub t: Signal<In, Bits<TW>>,
    pub bin: Signal<In, Bits<8>>,
    pub omega_size_inf: Signal<In, Bit>,
    pub omega_size: Signal<In, Bits<32>>,
    pub omega_delay_inf: Signal<In, Bit>,
    pub omega_delay: Signal<In, Bits<32>>,
    pub omega_size_out_inf: Signal<Out, Bit>,
    pub omega_size_out: Signal<Out, Bits<32>>,
    pub omega_delay_out_inf: Signal<Out, Bit>,
    pub omega_delay_out: Signal<Out, Bits<32>>,
    pub done: Signal<Out, Bit>,
    pub busy: Signal<Out, Bit>,
    pub rd_bank: Signal<In, Bit>,
    pub rd_addr: Signal<In, Bits<A>>,
    pub rd_cell: Signal<In, Bits<8>>,
    pub rd_data: Signal<Out, Bits<32>>,
    pub clr: Signal<In, Bit>,
    pub clr_bank: Signal<In, Bit>,
    pub clr_addr: Signal<In, Bits<A>>,
    size: CounterArray<SW, A, B>,
    delay: [CounterArray<DW, A, B>; DC],
    times: TimeCells<TW, A, B>,
    t2: DFF<Bits<TW>>,
    dsel: [DFF<Bit>; DC],
    // OR-reduction of the delay lanes' omega outputs and status (index j = lanes 0..=j)
    dom: [Signal<Local, Bits<32>>; DC],
    dom_inf: [Signal<Local, Bit>; DC],
    dbusy: [Signal<Local, Bit>; DC],
    ddone: [Signal<Local, Bit>; DC],
    // readout: cell select aligned with the lanes' rd_data, 32-bit views, output register
    rc1: DFF<Bits<8>>,
    rc2: DFF<Bits<8>>,
    rd_out: DFF<Bits<32>>,
    // 32-bit views of the lanes' read data for the readout mux. rust-hdl workaround:
    // `bit_cast` widening renders as `x & M'hff..` (a Verilator WIDTH warning); `Widen` is
    // a leaf whose Verilog is `{zeros, x}`.
    x_size: Widen<32, SW>,
    x_delay: [Widen<32, DW>; DC],
    x_iv: Widen<32, TW>,
    x_last: Widen<32, TW>,
    cell_size: Constant<Bits<8>>,
    cell_delay: [Constant<Bits<8>>; DC],
    bin_id: [Constant<Bits<8>>; DC],
    cell_iv: Constant<Bits<8>>,
    cell_last: Constant<Bits<8>>,
}

impl<const SW: usize, const DW: usize, const DC: usize, const TW: usize, const A: usize, const B: usize>
    SuMaxArray<SW, DW, DC, TW, A, B>
{
    pub fn new() -> Self {
        assert!((1..=253).contains(&DC), "delay cells DC={DC} must be 1..=253 (8-bit cell index)");
        SuMaxArray {
            clock: Default::default(),
            reset: Default::default(),
            valid: Default::default(),
            bank: Default::default(),
            addr: Default::default(),
            t: Default::default(),
            bin: Default::default(),
            omega_size_inf: Default::default(),
            omega_size: Default::default(),
            omega_delay_inf: Default::default(),
            omega_delay: Default::default(),
            omega_size_out_inf: Default::default(),
            omega_size_out: Default::default(),
            omega_delay_out_inf: Default::default(),
            omega_delay_out: Default::default(),
            done: Default::default(),
            busy: Default::default(),
            rd_bank: Default::default(),
            rd_addr: Default::default(),
            rd_cell: Default::default(),
            rd_data: Default::default(),
            clr: Default::default(),
            clr_bank: Default::default(),
            clr_addr: Default::default(),
            size: CounterArray::new(),
            delay: std::array::from_fn(|_| CounterArray::new()),
            times: TimeCells::new(),
            t2: Default::default(),
            dsel: std::array::from_fn(|_| Default::default()),
            dom: std::array::from_fn(|_| Default::default()),
            dom_inf: std::array::from_fn(|_| Default::default()),
            dbusy: std::array::from_fn(|_| Default::default()),
            ddone: std::array::from_fn(|_| Default::default()),
            rc1: Default::default(),
            rc2: Default::default(),
            rd_out: Default::default(),
            x_size: Default::default(),
            x_delay: std::array::from_fn(|_| Default::default()),
            x_iv: Default::default(),
            x_last: Default::default(),
            cell_size: Constant::new(0u64.to_bits()),
            cell_delay: std::array::from_fn(|j| Constant::new((j as u64 + 1).to_bits())),
            bin_id: std::array::from_fn(|j| Constant::new((j as u64).to_bits())),
            cell_iv: Constant::new((DC as u64 + 1).to_bits()),
            cell_last: Constant::new((DC as u64 + 2).to_bits()),
        }
    }
}

impl<const SW: usize, const DW: usize, const DC: usize, const TW: usize, const A: usize, const B: usize>
    Default for SuMaxArray<SW, DW, DC, TW, A, B>
{
    fn default() -> Self {
        Self::new()
    }
}

impl<const SW: usize, const DW: usize, const DC: usize, const TW: usize, const A: usize, const B: usize> Logic
    for SuMaxArray<SW, DW, DC, TW, A, B>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, t2, rc1, rc2, rd_out);
        // s1 -> s2: the time and the one-hot delay-lane select.
        self.t2.d.next = self.t.val();
        for j in 0..DC {
            self.dsel[j].clock.next = self.clock.val();
            self.dsel[j].d.next = self.bin.val() == self.bin_id[j].val();
        }
        // Size lane.
        self.size.clock.next = self.clock.val();
        self.size.reset.next = self.reset.val();
        self.size.valid.next = self.valid.val();
        self.size.bank.next = self.bank.val();
        self.size.rd_bank.next = self.rd_bank.val();
        self.size.clr.next = self.clr.val();
        self.size.clr_bank.next = self.clr_bank.val();
        self.size.clr_addr.next = self.clr_addr.val();
        self.size.addr.next = self.addr.val();
        self.size.omega_inf.next = self.omega_size_inf.val();
        self.size.omega.next = self.omega_size.val();
        self.size.rd_addr.next = self.rd_addr.val();
        self.x_size.x.next = self.size.rd_data.val();
        // Delay lanes: the selected one gets the delay omega, the others 0 (no change).
        for j in 0..DC {
            self.delay[j].clock.next = self.clock.val();
            self.delay[j].reset.next = self.reset.val();
            self.delay[j].valid.next = self.valid.val();
            self.delay[j].bank.next = self.bank.val();
            self.delay[j].rd_bank.next = self.rd_bank.val();
            self.delay[j].clr.next = self.clr.val();
            self.delay[j].clr_bank.next = self.clr_bank.val();
            self.delay[j].clr_addr.next = self.clr_addr.val();
            self.delay[j].addr.next = self.addr.val();
            if self.dsel[j].q.val() {
                self.delay[j].omega_inf.next = self.omega_delay_inf.val();
                self.delay[j].omega.next = self.omega_delay.val();
            } else {
                self.delay[j].omega_inf.next = false;
                self.delay[j].omega.next = 0.into();
            }
            self.delay[j].rd_addr.next = self.rd_addr.val();
            self.x_delay[j].x.next = self.delay[j].rd_data.val();
        }
        self.dom[0].next = self.delay[0].omega_out.val();
        self.dom_inf[0].next = self.delay[0].omega_out_inf.val();
        self.dbusy[0].next = self.delay[0].busy.val();
        self.ddone[0].next = self.delay[0].done.val();
        for j in 1..DC {
            self.dom[j].next = self.dom[j - 1].val() | self.delay[j].omega_out.val();
            self.dom_inf[j].next = self.dom_inf[j - 1].val() | self.delay[j].omega_out_inf.val();
            self.dbusy[j].next = self.dbusy[j - 1].val() | self.delay[j].busy.val();
            self.ddone[j].next = self.ddone[j - 1].val() | self.delay[j].done.val();
        }
        // Max cells.
        self.times.clock.next = self.clock.val();
        self.times.reset.next = self.reset.val();
        self.times.valid.next = self.valid.val();
        self.times.bank.next = self.bank.val();
        self.times.rd_bank.next = self.rd_bank.val();
        self.times.clr.next = self.clr.val();
        self.times.clr_bank.next = self.clr_bank.val();
        self.times.clr_addr.next = self.clr_addr.val();
        self.times.addr.next = self.addr.val();
        self.times.t.next = self.t2.q.val();
        self.times.rd_addr.next = self.rd_addr.val();
        self.x_iv.x.next = self.times.rd_interval.val();
        self.x_last.x.next = self.times.rd_last.val();
        // Outputs.
        self.omega_size_out_inf.next = self.size.omega_out_inf.val();
        self.omega_size_out.next = self.size.omega_out.val();
        // rust-hdl workaround: `#[hdl_gen]` reads an array index from its text with only loop
        // variables known, so `dom[DC - 1]` panics at generation; this one-pass loop makes the
        // last delay cell's index a loop variable (hdl/README.md, quirks).
        for j in (DC - 1)..DC {
            self.omega_delay_out_inf.next = self.dom_inf[j].val();
            self.omega_delay_out.next = self.dom[j].val();
            self.done.next = self.size.done.val() | self.ddone[j].val();
            self.busy.next = self.size.busy.val() | self.dbusy[j].val();
        }
        // Readout: the cell index follows the lanes' two-clock read, then one mux register.
        self.rc1.d.next = self.rd_cell.val();
        self.rc2.d.next = self.rc1.q.val();
        self.rd_out.d.next = 0.into();
        if self.rc2.q.val() == self.cell_size.val() {
            self.rd_out.d.next = self.x_size.y.val();
        }
        for j in 0..DC {
            if self.rc2.q.val() == self.cell_delay[j].val() {
                self.rd_out.d.next = self.x_delay[j].y.val();
            }
        }
        if self.rc2.q.val() == self.cell_iv.val() {
            self.rd_out.d.next = self.x_iv.y.val();
        }
        if self.rc2.q.val() == self.cell_last.val() {
            self.rd_out.d.next = self.x_last.y.val();
        }
        self.rd_data.next = self.rd_out.q.val();
    }
}
