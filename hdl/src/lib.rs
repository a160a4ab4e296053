//! rust-hdl circuits of the SmartNIC: one block per module, each beside its tests, and the
//! hardware flow around them (Verilog generation, Verilator lint, Yosys synthesis).
//!
//! | module | what |
//! |---|---|
//! | [`hash`] | pipelined CRC-32 hash unit (XOR tree from the contract's `CrcParams`) |
//! | [`arith`] | pipelined LUT arithmetic bit-exact with `contract::lut` (log2, exp2, mul/div by log-add-exp and by direct tables, multiplicative encoder and decoder, SuMax delay bins) |
//! | [`parser`] | line-rate packet parser: AXI-Stream 64-bit in, one descriptor (class, flow key, length, timestamp, INT delay) per frame |
//! | [`per_switch`] | the per-switch half: the hop-keyed latency tower (count and latency-sum cells), the inflated-latency detector, the hop serializer, the flow-key table |
//! | [`readout`] | the card-to-host engines: the readout stream (the idle bank of every window, packed and CRC-checked) and the record ring (the record stream as it is made) |
//! | [`board`] | the VC709 board's blocks around the core: the Si5324 (SFP+ reference clock) bring-up over I2C |
//! | [`regs`] | the register file behind the BAR: AXI4-Lite slave, constant words from the contract's `Layout`, live registers, epoch pulses, readout-window requests |
//! | [`sketch`] | sketch cores: block-RAM counter arrays with forwarding, the TowerSketch and SuMax pipelines (one bank, and two banks under the epoch engine) |
//! | [`sketch_core`] | the sketch half behind any front (block `sketch_core`): the ingress stage, two-bank TowerSketch and SuMax (with the delay-bin unit) and the per-switch half under one epoch engine, the AXI4-Lite register file with the readout windows, the readout stream and the record ring |
//! | [`core_top`] | the NIC core top for one port (block `core`): AXI-Stream -> parser and hop capture -> the sketch half, statistics |
//! | [`nic`] | the board's configuration: one named constant per const generic of the board's blocks (`CoreNic`, ...), checked against the contract's geometries and the register map |
//! | [`blocks`] | registry of named blocks (`hdl-gen`, `hdl-synth`) |
//! | [`flow`] | Verilog generation, lint waivers, tool lookup, build directories |
//! | [`synth`] | Yosys `synth_xilinx` runs and resource reports |
//!
//! See `hdl/README.md` for the flow and the rust-hdl quirks it works around.
pub use smartnic_contract as contract;

pub mod arith;
pub mod blocks;
pub mod board;
pub mod core_top;
pub mod flow;
pub mod hash;
pub mod nic;
pub mod parser;
pub mod per_switch;
pub mod readout;
pub mod regs;
pub mod sketch;
pub mod sketch_core;
pub mod synth;
