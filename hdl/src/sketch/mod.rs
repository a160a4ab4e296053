//! The sketch cores: block-RAM counter arrays updated at one packet per clock.
//!
//! | module | what |
//! |---|---|
//! | [`forward_track`] | `ForwardTrack<A>`: the (bank, address) bookkeeping of every RMW pipeline: which in-flight write (or the RAM) a packet reads |
//! | [`cell_ram`] | `CellRam<W, A>`: the RAM of every sketch cell, its top `9k` bits a memory of their own where that maps to fewer blocks (parity bits used) |
//! | [`counter_rmw`] | `CounterRmw<W, A>`: the RMW datapath of a counter array: 3-deep (bank, address) forwarding, the CM/ACU (omega) step, the write register |
//! | [`array`] | `CounterArray<W, A, B>`: one array, a `CounterRmw` behind `B` RAMs (one per bank), readout port (idle bank) and clear port |
//! | [`hash_front`] | `HashFront<A0, A1, A2>`: three hash units with the indices staggered one clock per array (the front of every pipeline) |
//! | [`tower`] | `TowerPipeline<.., B>`: 3 hash units + 3 staggered arrays of `B` banks, CM and ACU, bit-exact with `host::sketch::Tower` |
//! | [`sumax`] | `SuMaxPipeline<.., B>`: 3 hash units + 3 staggered SuMax arrays (size, delay, max cells) of `B` banks, bit-exact with `host::sketch::SuMax` |
//! | [`sumax_array`] | `SuMaxArray<.., B>`: one SuMax array as one lane per cell (`CounterArray` sum lanes + `TimeCells`), readout by cell |
//! | [`time_rmw`] | `TimeRmw<TW, A>`: the RMW datapath of SuMax's max cells (max inter-arrival, last arrival) on a `ForwardTrack` |
//! | [`sumax_time`] | `TimeCells<TW, A, B>`: a `TimeRmw` behind one RAM per cell and bank |
//! | [`epoch`] | `EpochEngine`: active bank, swap with drain, clear sweep, EPOCH, SEQUENCE, per-epoch packet counters (contract `regs::epoch`); the core has one for all its sketches |
//! | [`tower_window`] | `TowerWindow`: the register block's readout window on a tower's idle-bank read ports |
//! | [`tower_banked`] | `TowerBanked`: the two-bank tower with an epoch engine of its own and a `TowerWindow` (block `tower_banked`) |
//! | [`cell_index`] | `CellIndex<IW, A>`: the SuMax window's word index -> (bucket, cell), a divide by the constant cells per bucket as a reciprocal multiply |
//! | [`bare`] | `BareTower`: read -> +1 -> write without forwarding, the Fmax reference of `scripts/bench-fmax` |
//!
//! Every cell RAM comes in `B` = [`ONE_BANK`] or [`TWO_BANKS`] banks: one struct per
//! structure with the bank count as a const generic (see [`array`] for how one bank drops
//! the selects), so the plain and the epoch sketch are the same code.
pub mod array;
pub mod bare;
pub mod cell_index;
pub mod cell_ram;
pub mod counter_rmw;
pub mod epoch;
pub mod forward_track;
pub mod hash_front;
pub mod sumax;
pub mod sumax_array;
pub mod sumax_time;
pub mod time_rmw;
pub mod tower;
pub mod tower_banked;
pub mod tower_window;

use rust_hdl::prelude::*;

/// Banks of a plain sketch: one RAM per cell ([`tower::TowerFpga`], [`sumax::SuMaxNic`]).
pub const ONE_BANK: usize = 1;
/// Banks of an epoch sketch: two RAMs per cell, active and idle ([`epoch`]).
pub const TWO_BANKS: usize = 2;

/// Whether a cell of `B` banks needs its bank selects, the idle-bank readout and the clear
/// sweep: `B` = [`TWO_BANKS`]. Any `B` other than [`ONE_BANK`] or [`TWO_BANKS`] fails to
/// compile (the assertion is evaluated as a constant wherever a block of `B` banks is built).
pub const fn banked<const B: usize>() -> bool {
    Banks::<B>::BANKED
}

/// Holds the compile-time check of [`banked`].
struct Banks<const B: usize>;

impl<const B: usize> Banks<B> {
    const BANKED: bool = {
        assert!(B == ONE_BANK || B == TWO_BANKS, "a sketch cell has one or two banks");
        B == TWO_BANKS
    };
}

/// Consumes an `N`-bit signal nobody needs (the hash units' full `hash` output: the
/// pipeline uses `index` only). Without it Verilator `-Wall` reports the parent's wire as
/// UNUSEDSIGNAL; inside, the usual `unused`-named AND reduction marks it used. Synthesis
/// removes it and the logic behind it.
#[derive(LogicBlock, Default)]
pub struct Sink<const N: usize> {
    pub x: Signal<In, Bits<N>>,
}

impl<const N: usize> Logic for Sink<N> {
    fn update(&mut self) {}
    fn hdl(&self) -> Verilog {
        Verilog::Custom("wire unused_sink = &{1'b0, x};".into())
    }
}

/// [`Sink`] for one bit (a sub-block's status bit this parent has no use for, such as the
/// bank outputs of a `CounterRmw` behind a single RAM).
#[derive(LogicBlock, Default)]
pub struct BitSink {
    pub x: Signal<In, Bit>,
}

impl Logic for BitSink {
    fn update(&mut self) {}
    fn hdl(&self) -> Verilog {
        Verilog::Custom("wire unused_sink = &{1'b0, x};".into())
    }
}
