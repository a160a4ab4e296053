//! `hdl-synth latency_tower`: Yosys `synth_xilinx -family xc7` of the per-switch latency
//! tower at the NIC default geometry (`LatencyTowerGeometry::nic_default`, two banks).
use smartnic_hdl::{blocks, flow, synth};

mod synth_util;

/// Two banks of 896 KiB (count and sum cells: 8/24, 16/32, 32/32 bits x 2^16/2^16/2^15),
/// every cell RAM with its top bits in the parity-bit blocks where that needs fewer
/// (`sketch::cell_ram`): 206 RAMB36 a bank for its 7 Mbit (199.1 RAMB36 of 36 Kbit would
/// hold them), so 412 RAMB36 for both banks and no RAMB18 (at 352 KiB a bank, 140 RAMB36
/// and 44 RAMB18). No latch, DSP or LUTRAM. Logic: three 120-bit CRC units (index bits
/// only), one forwarding track and two cell datapaths per array (the sum cells' 33-bit add
/// and three compares), the bank, units and mode delay lines, and the read muxes over the
/// deeper RAM cascades. Measured: 3597 LUT, 1498 FF, 100 CARRY4, 48 SRL (2789 LUT, 1453 FF
/// at 352 KiB).
#[test]
fn latency_tower_synthesizes_for_xc7() {
    let name = "latency_tower";
    let dir = flow::target_dir().join("hdl-test").join("synth-latency-tower");
    let v = blocks::generate(name, &dir).unwrap();
    flow::lint(&v, &flow::module_name(name)).unwrap_or_else(|e| panic!("{e}"));
    let r = synth::synth(&v, name, &flow::module_name(name), &dir.join("synth"))
        .unwrap_or_else(|e| panic!("{e}"));
    println!("{}\n{}", synth::SynthReport::table_header(), r.table_row());
    assert_eq!((r.ramb36, r.ramb18, r.lutram, r.dsp48), (412, 0, 0, 0), "{r:?}");
    synth_util::assert_logic(&r, 3597, 1498);
}
