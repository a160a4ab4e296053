//! The sketch cores: block-RAM counter arrays updated at one packet per clock.
//!
//! | module | what |
//! |---|---|
//! | [`forward_track`] | `ForwardTrack<A>`: the (bank, address) bookkeeping of every RMW pipeline: which in-flight write (or the RAM) a packet reads |
//! | [`cell_ram`] | `CellRam<W, A>`: the RAM of every sketch cell, its top `9k` bits a memory of their own where that maps to fewer blocks (parity bits used) |
//! | [`counter_rmw`] | `CounterRmw<W, A>`: the RMW datapath of a counter array: 3-deep (bank, address) forwarding, the CM/ACU (omega) step, the write register |
//! | [`array`] | `CounterArray<W, A>`: one array, a `CounterRmw` behind one RAM, readout port |
//! | [`hash_front`] | `HashFront<A0, A1, A2>`: three hash units with the indices staggered one clock per array (the front of every pipeline) |
//! | [`tower`] | `TowerPipeline`: 3 hash units + 3 staggered arrays, CM and ACU, bit-exact with `host::sketch::Tower` |
//! | [`sumax`] | `SuMaxPipeline`: 3 hash units + 3 staggered SuMax arrays (size, delay, max cells), bit-exact with `host::sketch::SuMax` |
//! | [`sumax_array`] | `SuMaxArray`: one SuMax array as one lane per cell (`CounterArray` sum lanes + `TimeCells`), readout by cell |
//! | [`time_rmw`] | `TimeRmw<TW, A>`: the RMW datapath of SuMax's max cells (max inter-arrival, last arrival) on a `ForwardTrack` |
//! | [`sumax_time`] | `TimeCells`: a `TimeRmw` behind one RAM per cell |
//! | [`banked_array`] | `BankedArray<W, A>`: a `CounterRmw` behind two RAMs (one per bank), readout and clear ports on the idle bank |
//! | [`epoch`] | `EpochEngine`: active bank, swap with drain, clear sweep, EPOCH, SEQUENCE, per-epoch packet counters (contract `regs::epoch`) |
//! | [`tower_banked`] | `TowerBanked`: the TowerSketch pipeline on `BankedArray`s with the epoch engine and a window readout port |
//! | [`sumax_banked_time`] | `BankedTimeCells`: `TimeCells` with two RAMs per cell (one per bank), readout and clear ports on the idle bank |
//! | [`sumax_banked_array`] | `SuMaxBankedArray`: `SuMaxArray` with every lane two-bank (`BankedArray` sum lanes + `BankedTimeCells`) |
//! | [`sumax_banked`] | `SuMaxBanked`: the SuMax pipeline on `SuMaxBankedArray`s, the packet's bank beside its index, readout and clear ports on the idle bank |
//! | [`cell_index`] | `CellIndex<IW, A>`: the SuMax window's word index -> (bucket, cell), a divide by the constant cells per bucket as a reciprocal multiply |
//! | [`bare`] | `BareTower`: read -> +1 -> write without forwarding, the Fmax reference of `scripts/bench-fmax` |
pub mod array;
pub mod banked_array;
pub mod bare;
pub mod cell_index;
pub mod cell_ram;
pub mod counter_rmw;
pub mod epoch;
pub mod forward_track;
pub mod hash_front;
pub mod sumax;
pub mod sumax_array;
pub mod sumax_banked;
pub mod sumax_banked_array;
pub mod sumax_banked_time;
pub mod sumax_time;
pub mod time_rmw;
pub mod tower;
pub mod tower_banked;

use rust_hdl::prelude::*;

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
