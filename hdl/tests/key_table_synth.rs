//! Yosys `synth_xilinx -family xc7` of the per-switch flow-key table (`per_switch::key_table`)
//! at the NIC default: 2 ways x 512 slots of 366 bits in two banks.
//!
//! Measured: 3748 LUT, 3218 FF, 44 RAMB18 (each 512 x 366 memory in 11 RAMB18 of 512 x 36:
//! 792 Kbit of blocks for 750 Kbit of slots), 365 SRL16E (the key and path delay lines).
//! The FFs are mostly the slot registers of the two ways (the registered RAM output and the
//! three forwarded writes: 8 x 366); the LUTs the 4:1 forwarding select and the bank
//! selects of those 366-bit slots, and the readout's way and word select. The first version
//! wrote zeros through a 366-bit multiplexer on every clear and took 5172 LUT; the clear
//! now writes the valid bit only (`per_switch::key_way`).
use smartnic_contract::per_switch::KeyTableGeometry;
use smartnic_hdl::per_switch::key_table::KeyTableNic;
use smartnic_hdl::{flow, synth};

mod synth_util;

#[test]
fn key_table_synthesizes_for_xc7() {
    let name = "key_table";
    let dir = flow::target_dir().join("hdl-test").join(format!("synth-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.v"));
    let mut block = KeyTableNic::new(&KeyTableGeometry::nic_default()).unwrap();
    std::fs::write(&path, flow::to_verilog(name, &mut block).unwrap()).unwrap();
    let top = flow::module_name(name);
    flow::lint(&path, &top).unwrap_or_else(|e| panic!("{e}"));
    let r = synth::synth(&path, name, &top, &dir.join("synth")).unwrap_or_else(|e| panic!("{e}"));
    println!("{}\n{}", synth::SynthReport::table_header(), r.table_row());
    assert_eq!((r.ramb36, r.ramb18, r.lutram, r.dsp48), (0, 44, 0, 0), "{r:?}");
    synth_util::assert_logic(&r, 3748, 3218);
}
