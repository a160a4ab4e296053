//! `hdl-synth regs`: Yosys `synth_xilinx -family xc7` of the register file at the default
//! map (4 MiB BAR, SketchINT tower + NIC SuMax + the per-switch block): LUTs and flops
//! only, no latch.
use smartnic_hdl::{blocks, flow, synth};

mod synth_util;

/// Measured with the bus as one `AxiLiteSlave` bundle: 676 LUT, 81 FF, 16 CARRY4. Before it,
/// 650 LUT: the Verilog was the same text but for the port names (`awaddr` -> `bus$awaddr`,
/// checked by renaming), so the 26 LUTs are Yosys mapping the renamed netlist differently.
/// With the per-switch block (MODE, two thresholds as 54 flops with reset values, seven
/// more live registers, the read-to-pop pulse, five more windows, 22-bit address): 1042
/// LUT, 140 FF, 26 CARRY4. With the readout-stream block (the START pulse, five more live
/// registers, one more write decode): 1152 LUT, 141 FF. With the record ring's RING_CONTROL
/// (a read/write bit) and RING_WORDS: 1277 LUT, 142 FF. With the latency windows at 896
/// KiB (their bases and sizes are constants of the window decode): 1194 LUT, 142 FF. With
/// HOPS_REFUSED (one more 32-bit live register in the read mux): 1239 LUT, 142 FF.
#[test]
fn regs_synthesizes_for_xc7_as_logic_only() {
    let dir = flow::target_dir().join("hdl-test").join("synth-regs");
    let v = blocks::generate("regs", &dir).unwrap();
    flow::lint(&v, &flow::module_name("regs")).unwrap_or_else(|e| panic!("{e}"));
    let r = synth::synth(&v, "regs", &flow::module_name("regs"), &dir.join("synth"))
        .unwrap_or_else(|e| panic!("{e}"));
    println!("{}\n{}", synth::SynthReport::table_header(), r.table_row());
    // The constant table is LUT logic: no block RAM, LUTRAM or DSP.
    assert_eq!((r.ramb36, r.ramb18, r.lutram, r.dsp48), (0, 0, 0, 0), "{r:?}");
    // Flops: state (4) + address (20) + read data (32) + window sel/index (24) + pulses/modes
    // + the per-switch thresholds (22 + 32).
    synth_util::assert_logic(&r, 1239, 142);
}
