//! `hdl-synth sumax`: Yosys `synth_xilinx -family xc7` of the SuMax pipeline at the NIC
//! geometry (`SuMaxGeometry::nic_default()`: 3 x 2^13 buckets of 224 bits).
use smartnic_hdl::{blocks, flow, synth};

mod synth_util;

/// Three arrays of 2^13 x 224-bit buckets = 5.25 Mbit: a 16-bit delay lane is 4 RAMB36
/// (8K x 4), a 32-bit lane (size, interval, last) 6 RAMB36 for its top 27 bits in 8K x 9
/// with the parity bits plus 3 RAMB18 for the other 5 (`CellRam`): 3 x (3 x 7.5 + 8 x 4) =
/// 163.5 RAMB36, 168 without the parity bits; no latch, no DSP, no LUTRAM. Logic: three hash units (13 index bits each), 11 lanes of
/// forwarding per array (comparators shared), two omega chains, the readout mux. Measured
/// with one struct for both bank counts (`SuMaxPipeline<.., ONE_BANK>`): 4171 LUT, 3643 FF,
/// 261 CARRY4, 53 SRL (4075 LUT before as a struct of its own, same flops and RAMs: Yosys's
/// LUT mapping of the same logic, proven equivalent by `hdl/experiments/equiv/run.sh` with
/// `SEQ=6` and the one-bank block's unused bank and clear inputs).
#[test]
fn sumax_synthesizes_for_xc7_within_budget() {
    let name = "sumax";
    let dir = flow::target_dir().join("hdl-test").join("synth-sumax");
    let v = blocks::generate(name, &dir).unwrap();
    flow::lint(&v, &flow::module_name(name)).unwrap_or_else(|e| panic!("{e}"));
    let r = synth::synth(&v, name, &flow::module_name(name), &dir.join("synth"))
        .unwrap_or_else(|e| panic!("{e}"));
    println!("{}\n{}", synth::SynthReport::table_header(), r.table_row());
    assert_eq!((r.ramb36, r.ramb18, r.lutram, r.dsp48), (150, 27, 0, 0), "{r:?}");
    synth_util::assert_logic(&r, 4171, 3643);
}
