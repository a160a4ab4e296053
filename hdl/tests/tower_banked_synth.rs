//! `hdl-synth tower_banked`: Yosys `synth_xilinx -family xc7` of the two-bank TowerSketch
//! with the epoch engine at the board geometry, next to the one-bank `tower`.
use smartnic_hdl::{blocks, flow, synth};

mod synth_util;

fn run(name: &str) -> synth::SynthReport {
    let dir = flow::target_dir().join("hdl-test").join("synth-tower-banked");
    let v = blocks::generate(name, &dir).unwrap();
    flow::lint(&v, &flow::module_name(name)).unwrap_or_else(|e| panic!("{e}"));
    let r = synth::synth(&v, name, &flow::module_name(name), &dir.join("synth"))
        .unwrap_or_else(|e| panic!("{e}"));
    println!("{}\n{}", synth::SynthReport::table_header(), r.table_row());
    r
}

/// Two banks: exactly twice the tower's 43 RAMB36 + 5 RAMB18 (a second RAM per array, nothing in
/// LUTRAM or flops); the logic is one set of hash units and one RMW datapath per array
/// plus the bank muxes, the engine (64-bit counters) and the readout mux: within the
/// tower's 1500-LUT budget + 600. Measured with the engine and the `TowerWindow` around
/// `TowerPipeline<.., TWO_BANKS>` and its minimum chain (the estimate of CM packets too):
/// 1878 LUT, 1068 FF, 66 CARRY4, 15 SRL (1739 LUT, 1040 FF, 60 CARRY4 before the chain).
/// With the engine's drain counter at 10 bits (the board's 265-clock drain): 1819 LUT, 1070
/// FF, 67 CARRY4 (Yosys maps the wider count-down differently; fewer LUTs).
#[test]
fn tower_banked_synthesizes_for_xc7_with_twice_the_rams() {
    let r = run("tower_banked");
    assert_eq!((r.ramb36, r.ramb18, r.lutram, r.dsp48), (86, 10, 0, 0), "{r:?}");
    assert!(r.lut <= 2100, "{r:?}");
    synth_util::assert_logic(&r, 1819, 1070);
}
