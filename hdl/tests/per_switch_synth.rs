//! Yosys `synth_xilinx -family xc7` of the hop serializer (`per_switch::hop_serializer`):
//! registers and muxes only, no block RAM, no DSP, no latch. Measured: 4477 LUT, 4501 FF
//! (two 112-byte capture buffers, a ring of three 16-hop records, the registered output).
//! The LUTs are mostly the two wide selects: the descriptor's record out of either capture
//! buffer at one of three shim positions (768 bits, 6:1) and the issued hop out of the ring
//! (48 bits, 48:1). The first version, which moved records down a queue and shifted the
//! active one, took 7371 LUT.
use smartnic_hdl::per_switch::hop_serializer::HopSerializer;
use smartnic_hdl::{flow, synth};

mod synth_util;

#[test]
fn hop_serializer_synthesizes_for_xc7() {
    let dir = flow::target_dir().join("hdl-test").join("synth-hop-serializer");
    std::fs::create_dir_all(&dir).unwrap();
    let v = flow::to_verilog("hop_serializer", &mut HopSerializer::default()).unwrap();
    let path = dir.join("hop_serializer.v");
    std::fs::write(&path, v).unwrap();
    let top = flow::module_name("hop_serializer");
    flow::lint(&path, &top).unwrap_or_else(|e| panic!("{e}"));
    let r = synth::synth(&path, "hop_serializer", &top, &dir.join("synth")).unwrap_or_else(|e| panic!("{e}"));
    println!("{}\n{}", synth::SynthReport::table_header(), r.table_row());
    assert_eq!((r.ramb36, r.ramb18, r.lutram, r.dsp48), (0, 0, 0, 0), "{r:?}");
    synth_util::assert_logic(&r, 4477, 4501);
}
