//! `hdl-synth latency_tower`: Yosys `synth_xilinx -family xc7` of the per-switch latency
//! tower at the NIC default geometry (`LatencyTowerGeometry::nic_default`, two banks).
use smartnic_hdl::{blocks, flow, synth};

mod synth_util;

/// Two banks of 352 KiB (count and sum cells: 8/24, 16/32, 32/32 bits x 2^15/2^14/2^14),
/// every cell RAM with its top 9k bits in the parity-bit blocks where that needs fewer
/// (`sketch::cell_ram`): per bank 8 + 22 + 7.5 + 14.5 + 14.5 + 14.5 = 81 RAMB36, so
/// 140 RAMB36 + 44 RAMB18 = 162 for both banks (2 x 88 with the data bits alone). No
/// latch, DSP or LUTRAM. Logic: three 120-bit CRC units (index bits only), one forwarding
/// track and two cell datapaths per array (the sum cells' 33-bit add and three compares),
/// the bank, units and mode delay lines. Measured: 2789 LUT, 1453 FF, 100 CARRY4, 47 SRL.
#[test]
fn latency_tower_synthesizes_for_xc7() {
    let name = "latency_tower";
    let dir = flow::target_dir().join("hdl-test").join("synth-latency-tower");
    let v = blocks::generate(name, &dir).unwrap();
    flow::lint(&v, &flow::module_name(name)).unwrap_or_else(|e| panic!("{e}"));
    let r = synth::synth(&v, name, &flow::module_name(name), &dir.join("synth"))
        .unwrap_or_else(|e| panic!("{e}"));
    println!("{}\n{}", synth::SynthReport::table_header(), r.table_row());
    assert_eq!((r.ramb36, r.ramb18, r.lutram, r.dsp48), (140, 44, 0, 0), "{r:?}");
    synth_util::assert_logic(&r, 2789, 1453);
}
