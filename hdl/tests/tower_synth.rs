//! `hdl-synth tower tower_bare`: Yosys `synth_xilinx -family xc7` of the TowerSketch
//! pipeline at the board geometry (SketchINT's FPGA configuration), next to SketchINT's
//! published 45.5 BRAM36 / 686 LUT, and of the bare RMW reference.
use smartnic_hdl::{blocks, flow, synth};

fn run(name: &str) -> synth::SynthReport {
    let dir = flow::target_dir().join("hdl-test").join("synth-tower");
    let v = blocks::generate(name, &dir).unwrap();
    flow::lint(&v, &flow::module_name(name)).unwrap_or_else(|e| panic!("{e}"));
    let r = synth::synth(&v, name, &flow::module_name(name), &dir.join("synth"))
        .unwrap_or_else(|e| panic!("{e}"));
    println!("{}\n{}", synth::SynthReport::table_header(), r.table_row());
    r
}

/// The pipeline: three 64 KiB arrays in block RAM (1.5 Mbit = 48 RAMB36 without using the
/// parity bits), no latch, no DSP, no LUTRAM; logic for three hash units (index bits only),
/// forwarding and both modes within 1500 LUT.
#[test]
fn tower_synthesizes_for_xc7_within_budget() {
    let r = run("tower");
    println!("SketchINT (VC709, Vivado): 45.5 BRAM36, 686 LUT");
    assert_eq!((r.ramb36, r.ramb18, r.lutram, r.dsp48), (48, 0, 0, 0), "{r:?}");
    assert!(r.lut <= 1500 && r.lut >= 300, "{r:?}");
    // Flops: 3 x (hash stage 1 + index) + forwarding window + omega chain; no RAM in FFs.
    assert!(r.ff <= 1200, "{r:?}");
}

/// The reference: the same three RAMs and nothing but an adder per array.
#[test]
fn bare_reference_is_only_the_rams() {
    let r = run("tower_bare");
    assert_eq!((r.ramb36, r.lutram, r.dsp48), (48, 0, 0), "{r:?}");
    assert!(r.lut <= 100, "{r:?}");
}
