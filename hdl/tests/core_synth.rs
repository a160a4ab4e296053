//! `hdl-synth core`: Yosys `synth_xilinx -family xc7` of the whole NIC core top at the board
//! geometry (parser + two-bank TowerSketch + epoch engine + register file).
use smartnic_hdl::{blocks, flow, synth};

/// The core is its parts: the banked tower's 96 RAMB36 and nothing else in block RAM (the
/// register file's constants are LUTs, the parser has no RAM), no LUTRAM/DSP, no latch
/// (`synth` fails on one); logic about parser + tower_banked + regs.
#[test]
fn core_synthesizes_for_xc7() {
    let dir = flow::target_dir().join("hdl-test").join("synth-core");
    let v = blocks::generate("core", &dir).unwrap();
    flow::lint(&v, &flow::module_name("core")).unwrap_or_else(|e| panic!("{e}"));
    let r = synth::synth(&v, "core", &flow::module_name("core"), &dir.join("synth"))
        .unwrap_or_else(|e| panic!("{e}"));
    println!("{}\n{}", synth::SynthReport::table_header(), r.table_row());
    assert_eq!((r.ramb36, r.ramb18, r.lutram, r.dsp48), (96, 0, 0, 0), "{r:?}");
    assert!(r.lut >= 3000 && r.lut <= 7000, "{r:?}");
    assert!(r.ff >= 1500 && r.ff <= 4500, "{r:?}");
}
