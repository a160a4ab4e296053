//! The registry of generated blocks: what `hdl-gen` and `hdl-synth` know by name.
//!
//! To add a block: write its module (struct + `update` + tests), then add one
//! [`BlockDef`] here with the configuration the board uses.
use crate::arith;
use crate::flow;
use crate::hash::HashUnit;
use crate::sketch;
use smartnic_contract::geometry::{SuMaxGeometry, TowerGeometry};
use smartnic_contract::hash::FAMILY;
use smartnic_contract::per_switch::{KeyTableGeometry, LatencyTowerGeometry};
use std::path::{Path, PathBuf};

/// One named, fully parameterised block.
pub struct BlockDef {
    /// Name of the block = its Verilog top module = its file stem.
    pub name: &'static str,
    /// One line for listings.
    pub about: &'static str,
    /// Builds the block and returns its Verilog.
    pub verilog: fn() -> Result<String, String>,
}

/// Every block the generator knows, in dependency order.
pub const BLOCKS: &[BlockDef] = &[
    BlockDef {
        name: "si5324_init",
        about: "VC709 SFP+ reference clock bring-up: the Si5324 start-up sequence over I2C at 100 kHz from the 200 MHz system clock",
        verilog: || flow::to_verilog("si5324_init", &mut crate::board::si5324_init::vc709()),
    },
    BlockDef {
        name: "hash",
        about: "CRC-32 hash unit: family member 0, 16-bit index (TowerSketch array 0), latency 2",
        verilog: hash_verilog,
    },
    BlockDef {
        name: "log2",
        about: "fixed-point log2 of a 64-bit operand, q=10 frac=16 (1 RAMB18), latency 4",
        verilog: || flow::to_verilog("log2", &mut arith::log2::Log2Default::new()),
    },
    BlockDef {
        name: "exp2",
        about: "fixed-point exp2 of a 23-bit signed exponent (16 fraction bits), q=10, 64-bit out, latency 4",
        verilog: || flow::to_verilog("exp2", &mut arith::exp2::Exp2Default::new(arith::exp2::DEFAULT_IO)),
    },
    BlockDef {
        name: "mul",
        about: "32x32 multiply by log-add-exp (2 log2 + exp2, 3 RAMB18), 64-bit product, latency 9",
        verilog: || flow::to_verilog("mul", &mut arith::mul::mul_log32()),
    },
    BlockDef {
        name: "div",
        about: "32/32 divide by log-add-exp (2 log2 + exp2, 3 RAMB18), 64-bit quotient with 16 fraction bits, latency 9",
        verilog: || flow::to_verilog("div", &mut arith::div::div_log32()),
    },
    BlockDef {
        name: "mul_direct",
        about: "32x32 multiply by the direct product table (2 normalisers, 1 RAMB18), 64-bit product, latency 6",
        verilog: || flow::to_verilog("mul_direct", &mut arith::mul_direct::mul_direct32()),
    },
    BlockDef {
        name: "div_direct",
        about: "32/32 divide by the direct quotient table (2 normalisers, 1 RAMB18), 64-bit quotient with 16 fraction bits, latency 6",
        verilog: || flow::to_verilog("div_direct", &mut arith::div_direct::div_direct32()),
    },
    BlockDef {
        name: "encoder",
        about: "multiplicative encoder round(log_(1+eps)^2 v), eps=0.0025, 16-bit codes, half-up or LFSR-randomized rounding (1 RAMB18), latency 8",
        verilog: || flow::to_verilog("encoder", &mut arith::encoder::encoder16()),
    },
    BlockDef {
        name: "decoder",
        about: "multiplicative decoder (1+eps)^(2 alpha) = exp2(alpha * C_fx), eps=0.0025, 16-bit codes, 64-bit out (1 RAMB18), latency 6",
        verilog: || flow::to_verilog("decoder", &mut arith::decoder::decoder16()),
    },
    BlockDef {
        name: "delay_bin",
        about: "SuMax delay bin of a 32-bit delay (NIC rule: octaves from 1 us, 8 cells; 1 RAMB18), latency 7",
        verilog: || flow::to_verilog("delay_bin", &mut arith::delay_bin::delay_bin32()),
    },
    BlockDef {
        name: "tower",
        about: "TowerSketch pipeline, SketchINT FPGA geometry (8/16/32-bit x 2^16/2^15/2^14), CM + ACU, forwarding, readout port, latency 8",
        verilog: || flow::to_verilog("tower", &mut sketch::tower::TowerFpga::new(&TowerGeometry::sketchint_fpga())?),
    },
    BlockDef {
        name: "tower_banked",
        about: "TowerSketch with two banks per array (SketchINT FPGA geometry, 2 x 45.5 RAMB36) and the epoch engine: swap with drain, clear sweep, idle-bank readout port, EPOCH/SEQUENCE/packet counters",
        verilog: || {
            flow::to_verilog(
                "tower_banked",
                &mut sketch::tower_banked::TowerBankedFpga::new(&TowerGeometry::sketchint_fpga())?,
            )
        },
    },
    BlockDef {
        name: "sumax",
        about: "SuMax pipeline, NIC geometry (3 x 2^13 buckets: 32-bit size, 8 x 16-bit delay cells, 32-bit max/last time), omega chains, forwarding, readout port, latency 8",
        verilog: || flow::to_verilog("sumax", &mut sketch::sumax::SuMaxNic::new(&SuMaxGeometry::nic_default())?),
    },
    BlockDef {
        name: "latency_tower",
        about: "per-switch latency tower, NIC geometry (count/sum cells 8/24, 16/32, 32/32 bit x 2^15/2^14/2^14), two banks, CM + ACU, estimates before each hop, forwarding, readout and clear ports, latency 8",
        verilog: || {
            flow::to_verilog(
                "latency_tower",
                &mut crate::per_switch::latency_tower::LatencyTowerNic::new(&LatencyTowerGeometry::nic_default())?,
            )
        },
    },
    BlockDef {
        name: "key_table",
        about: "per-switch flow-key table, NIC geometry (2 ways x 512 slots of 366 bits: valid, hops, key, 16-hop path), two banks, offer above the threshold register, forwarding, per-bank misses, readout and clear ports, latency 6",
        verilog: || {
            flow::to_verilog(
                "key_table",
                &mut crate::per_switch::key_table::KeyTableNic::new(&KeyTableGeometry::nic_default())?,
            )
        },
    },
    BlockDef {
        name: "tower_bare",
        about: "Fmax reference: the tower's three RAMs as bare read -> +1 -> write loops (no forwarding, no hash)",
        verilog: || flow::to_verilog("tower_bare", &mut sketch::bare::BareFpga::new()),
    },
    BlockDef {
        name: "parser",
        about: "packet parser: AXI-Stream 64-bit (10G MAC), Eth/2 VLAN/shim/IPv4+opts/IPv6+ext/TCP/UDP, one descriptor per frame, latency 2",
        verilog: || flow::to_verilog("parser", &mut crate::parser::Parser::new()),
    },
    BlockDef {
        name: "regs",
        about: "register file: AXI4-Lite slave (22-bit address, 4 MiB BAR), constant words from the contract's Layout (SketchINT tower + NIC SuMax + the per-switch block), live counters, epoch CONTROL pulses, tower MODE, per-switch MODE and thresholds, record stream read-to-pop, 11 readout windows",
        verilog: crate::regs::nic_verilog,
    },
    BlockDef {
        name: "core",
        about: "NIC core top: AXI-Stream 64-bit -> parser -> two-bank TowerSketch (SketchINT FPGA geometry) + two-bank SuMax (NIC geometry, time_of + delay_bin) + the per-switch half (latency tower, inflated-latency records) + the flow-key table, all under one epoch engine, statistics counters, AXI4-Lite register file (default map) with the idle banks behind the readout windows",
        verilog: crate::core_top::nic_verilog,
    },
    BlockDef {
        name: "board_front",
        about: "VC709 four-port front: per port parser + hop capture at its MAC clock, IP records through a Gray-pointer FIFO (16 x 1041 bits) into the core clock, round-robin merge of one record a clock at most",
        verilog: crate::board::front::nic_verilog,
    },
    BlockDef {
        name: "board_nic",
        about: "VC709 NIC without vendor IP: the four-port front (parser + hop capture per port, crossing, merge) before the core's sketch half (drain for merged ports), the ports' counters crossed whole and summed into the statistics registers",
        verilog: crate::board::nic::nic_verilog,
    },
    BlockDef {
        name: "board_logic",
        about: "VC709 board logic between the vendor IP: board_nic on the four MACs' receive streams (one 156.25 MHz clock, shared ns time) and XDMA's AXI4-Lite master, its two card-to-host streams widened to 256 bits, the Si5324 bring-up on the 200 MHz clock, resets, LEDs, buttons",
        verilog: crate::board::logic::nic_verilog,
    },
    BlockDef {
        name: "smartnic_vc709",
        about: "the VC709 board top: the contract's pins, XDMA (PCIe Gen3 x8, AXI4-Lite master, two C2H channels) and four 10G Ethernet subsystems as black boxes, board_logic between them (constraints/build.tcl's top)",
        verilog: crate::board::top::top_verilog,
    },
    BlockDef {
        name: "axis_upsize",
        about: "64-bit AXI-Stream to XDMA's 256-bit card-to-host stream: four words a beat, tlast ends a beat early with tkeep over its words",
        verilog: || flow::to_verilog("axis_upsize", &mut crate::board::axis_upsize::AxisUpsize::default()),
    },
];

fn hash_verilog() -> Result<String, String> {
    flow::to_verilog("hash", &mut HashUnit::<16>::new(&FAMILY[0]))
}

/// Looks a block up by name.
pub fn find(name: &str) -> Result<&'static BlockDef, String> {
    BLOCKS.iter().find(|b| b.name == name).ok_or_else(|| {
        let known: Vec<_> = BLOCKS.iter().map(|b| b.name).collect();
        format!("unknown block `{name}`; known blocks: {}", known.join(", "))
    })
}

/// Lints block `name`'s generated Verilog at `path` with Verilator. The board top
/// instantiates vendor IP and primitives it does not define: their port stubs are written
/// beside it as `<name>.stubs.vh` (not `*.v`, so the Vivado build, which reads every `*.v`
/// of the directory, never takes a stub for the IP) and read with it.
pub fn lint(name: &str, path: &Path) -> Result<(), String> {
    if name != smartnic_contract::board::TOP {
        return flow::lint(path, &flow::module_name(name));
    }
    let stubs = path.with_extension("stubs.vh");
    flow::write_if_changed(&stubs, &crate::board::top::stubs(true))?;
    flow::lint_with(path, &[&stubs], name)
}

/// Generates block `name` into `out_dir/<name>.v` (rewritten only when it changes) and
/// returns the path.
pub fn generate(name: &str, out_dir: &Path) -> Result<PathBuf, String> {
    let def = find(name)?;
    let text = (def.verilog)()?;
    let path = out_dir.join(format!("{name}.v"));
    flow::write_if_changed(&path, &text)?;
    Ok(path)
}
