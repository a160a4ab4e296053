//! `hdl-synth si5324_init`: Yosys `synth_xilinx -family xc7` of the board's Si5324 bring-up
//! (the I2C master and its sequence ROM on the 200 MHz system clock): logic only, no latch.
use smartnic_hdl::{blocks, flow, synth};

mod synth_util;

/// Measured: 136 LUT, 75 FF (the 32-bit reset/settle counter, the 16-bit quarter-bit
/// divider, the byte shifter, state and step), 15 CARRY4; the 88-entry sequence is LUT logic.
#[test]
fn si5324_init_synthesizes_for_xc7_as_logic_only() {
    let dir = flow::target_dir().join("hdl-test").join("synth-si5324_init");
    let v = blocks::generate("si5324_init", &dir).unwrap();
    flow::lint(&v, &flow::module_name("si5324_init")).unwrap_or_else(|e| panic!("{e}"));
    let r = synth::synth(&v, "si5324_init", &flow::module_name("si5324_init"), &dir.join("synth"))
        .unwrap_or_else(|e| panic!("{e}"));
    println!("{}\n{}", synth::SynthReport::table_header(), r.table_row());
    assert_eq!((r.ramb36, r.ramb18, r.lutram, r.dsp48), (0, 0, 0, 0), "{r:?}");
    synth_util::assert_logic(&r, 136, 75);
}
