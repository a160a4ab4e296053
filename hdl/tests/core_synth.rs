//! `hdl-synth core`: Yosys `synth_xilinx -family xc7` of the whole NIC core top at the board
//! geometry (parser + two-bank TowerSketch + epoch engine + two-bank SuMax with the delay-bin
//! unit and the window index divider + the per-switch half + the flow-key table + register
//! file).
use smartnic_hdl::{blocks, flow, synth};

mod synth_util;

/// The core is its parts: the banked tower's 2 x (43 RAMB36 + 5 RAMB18) plus the banked
/// SuMax's 2 x (150 + 27) and nothing else in block RAM (the register file's constants are
/// LUTs, the parser has no RAM; the one more RAMB18 is the delay-bin unit's log2 table), no
/// DSP, no latch (`synth` fails on one). Measured with the AXI4-Lite bus as one
/// interface bundle: 12290 LUT, 7248 FF, 595 CARRY4, 184 SRL. The LUT figure of this logic
/// moves with names and module boundaries alone: 12248 with the banked sketches as structs
/// of their own, 12544 as one struct per structure, 12290 with the bus bundle, the flops and
/// RAMs equal and the netlists proven equivalent (`hdl/experiments/equiv/run.sh`, RAMs as
/// black boxes); the first with only its array modules swapped for the second's: 12179.
/// With the parser's descriptor carrying the hop count and shim position (unused by the core
/// yet, so Yosys removes their flops: 7248 FF still): 12403.
///
/// With the per-switch half (140 RAMB36 + 54 RAMB18: the latency tower's two banks, the
/// inflated-latency check's log2 tables, the record buffer), the flow-key table (44
/// RAMB18), the tower's CM estimate chain, the per-switch register block and its five
/// windows: 23818 LUT, 17164 FF, 809 CARRY4, 783 SRL. Of the XC7VX690T (433,200 LUT,
/// 866,400 FF, 1,470 RAMB36): 5.5 % of the LUTs, 2.0 % of the flops, 41.3 % of the block
/// RAM (607.5 RAMB36), leaving 862 RAMB36 for the board's MACs, XDMA and buffers.
///
/// With the readout-stream engine (`readout::stream`: its 32 x 64-bit output FIFO is 11
/// RAM32M of LUT RAM, the 64-bit CRC fold and the packer) and the windows' request lines
/// that let it read one word a clock: 25227 LUT (+1409), 17918 FF (+754), 867 CARRY4, 784
/// SRL, 11 LUTRAM: 5.8 % of the LUTs, 2.1 % of the flops.
///
/// With the record ring (`readout::ring`: the 64-bit channel word and its half, the record
/// length count, RING_WORDS) and its two registers: 25291 LUT (+64), 18058 FF (+140), 877
/// CARRY4; block RAM unchanged.
///
/// With the latency tower at 896 KiB a bank (`LatencyTowerGeometry::nic_default`, sized for
/// SketchINT's inflated-latency F1; 412 RAMB36 and no RAMB18 for both banks, was 140 + 44):
/// 26042 LUT (+751, the deeper RAM cascades' read muxes), 18104 FF, 798 RAMB36 + 119 RAMB18
/// = 857.5 RAMB36: 6.0 % of the LUTs, 2.1 % of the flops, 58.3 % of the block RAM, leaving
/// 612 RAMB36 for the board's MACs, XDMA and buffers.
///
/// With the XOR networks (the hash units, the readout stream's CRC fold, the encoder's LFSR
/// advance) written as per-bit terms and a chain of XORs instead of a chain of muxes: the
/// same logic, 26024 LUT, 18104 FF, RAM unchanged, and Yosys takes 457 CPU-s instead of
/// 620 (the mux chains cost its `opt` loop one round over the whole core per link: 31
/// rounds after `memory_map`, now 11).
///
/// Split into the one port's front (`core_top`) and the sketch half (`sketch_core`) that the
/// board's four ports feed too: the same flops and RAM, 26110 LUT (+86, module boundaries).
/// Then the hop serializer's ring of 16 records in distributed RAM instead of 3 in flops
/// (152 RAM32M): 25055 LUT, 15379 FF, 163 LUTRAM.
///
/// With the readout stream read by eleven lanes at once (`readout::lane`: each its reader,
/// a 128-bit packer, a 4-word beat collector and a 32-beat FIFO of 43 + 1 RAM32M; the
/// engine's 256-bit output mux and CRC fold) instead of one window word a clock through
/// the window port: 34820 LUT (+9765), 24457 FF (+9078), 1285 CARRY4, 636 LUTRAM, block
/// RAM unchanged: 8.0 % of the LUTs, 2.8 % of the flops, for a stream 8x as fast.
#[test]
fn core_synthesizes_for_xc7() {
    let dir = flow::target_dir().join("hdl-test").join("synth-core");
    let v = blocks::generate("core", &dir).unwrap();
    flow::lint(&v, &flow::module_name("core")).unwrap_or_else(|e| panic!("{e}"));
    let r = synth::synth(&v, "core", &flow::module_name("core"), &dir.join("synth"))
        .unwrap_or_else(|e| panic!("{e}"));
    println!("{}\n{}", synth::SynthReport::table_header(), r.table_row());
    assert_eq!(
        (r.ramb36, r.ramb18, r.lutram, r.dsp48),
        (2 * 43 + 2 * 150 + 412, 2 * 5 + 2 * 27 + 1 + 10 + 44, 11 * (43 + 1) + 152, 0),
        "{r:?}"
    );
    synth_util::assert_logic(&r, 34820, 24457);
}
