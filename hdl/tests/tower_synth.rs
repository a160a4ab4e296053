//! `hdl-synth tower tower_bare`: Yosys `synth_xilinx -family xc7` of the TowerSketch
//! pipeline at the board geometry (SketchINT's FPGA configuration), next to SketchINT's
//! published 45.5 BRAM36 / 686 LUT, and of the bare RMW reference.
use smartnic_hdl::{blocks, flow, synth};

mod synth_util;

fn run(name: &str) -> synth::SynthReport {
    let dir = flow::target_dir().join("hdl-test").join("synth-tower");
    let v = blocks::generate(name, &dir).unwrap();
    flow::lint(&v, &flow::module_name(name)).unwrap_or_else(|e| panic!("{e}"));
    let r = synth::synth(&v, name, &flow::module_name(name), &dir.join("synth"))
        .unwrap_or_else(|e| panic!("{e}"));
    println!("{}\n{}", synth::SynthReport::table_header(), r.table_row());
    r
}

/// The pipeline: three 64 KiB arrays in block RAM, the 16- and 32-bit ones partly in the
/// parity bits (`CellRam`): 16 + 15 + (12 + 5 RAMB18) = 45.5 RAMB36, within the 46 per
/// bank of the budget (48 without the parity bits); no latch, no DSP, no LUTRAM; logic for
/// three hash units (index bits only), forwarding and both modes within 1500 LUT. Measured
/// with the minimum chain that gives CM packets their estimate too: 1340 LUT, 771 FF, 35
/// CARRY4, 15 SRL. Before it (the omega chain's output as the estimate): 1208 LUT, 743 FF,
/// 29 CARRY4; the chain is two INF-aware minimums, the estimate's output mux and 28 flops
/// (the upper bits of the narrow arrays' values are constant and vanish). With the hash
/// units' XOR network written as per-bit terms instead of a chain of muxes (the same
/// logic; Yosys 14 CPU-s instead of 23): 1307 LUT, 771 FF.
#[test]
fn tower_synthesizes_for_xc7_within_budget() {
    let r = run("tower");
    println!("SketchINT (VC709, Vivado): 45.5 BRAM36, 686 LUT");
    assert_eq!((r.ramb36, r.ramb18, r.lutram, r.dsp48), (43, 5, 0, 0), "{r:?}");
    assert!(2 * r.ramb36 + r.ramb18 <= 2 * 46, "{r:?}");
    assert!(r.lut <= 1500, "{r:?}");
    // Flops: 3 x (hash stage 1 + index) + forwarding window + omega and minimum chains; no
    // RAM in FFs.
    synth_util::assert_logic(&r, 1307, 771);
}

/// The reference: the same three RAMs and nothing but an adder per array. Measured at commit
/// 97746b5: 74 LUT, 51 FF.
#[test]
fn bare_reference_is_only_the_rams() {
    let r = run("tower_bare");
    assert_eq!((r.ramb36, r.ramb18, r.lutram, r.dsp48), (43, 5, 0, 0), "{r:?}");
    synth_util::assert_logic(&r, 74, 51);
}
