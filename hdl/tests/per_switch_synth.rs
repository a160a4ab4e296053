//! Yosys `synth_xilinx -family xc7` of the per-switch blocks that have no RAM of their
//! own beyond tables.
//!
//! The hop capture (`per_switch::hop_capture`) and the hop serializer
//! (`per_switch::hop_serializer`): no block RAM, no DSP, no latch. Together they were one block of 4489 LUT and 4629 FF; the capture now sits in
//! front (the core's, or each board port's), so the serializer takes records.
//! - Capture: two 112-byte buffers and the descriptor's record out of either at one of
//!   three shim positions (768 bits, 6:1).
//! - Serializer: a ring of sixteen 16-hop records in distributed RAM, the issued hop out of
//!   the head (48 bits, 16:1) and the registered output. The first version, which moved
//!   records down a queue and shifted the active one, took 7371 LUT with the capture.
use smartnic_hdl::core_top::big_stack;
use smartnic_hdl::per_switch::half::PerSwitchHalf;
use smartnic_hdl::per_switch::hop_capture::HopCapture;
use smartnic_hdl::per_switch::hop_serializer::HopSerializer;
use smartnic_hdl::per_switch::inflate::InflateCheck;
use smartnic_hdl::per_switch::record_fifo::RecordFifo;
use smartnic_hdl::{flow, synth};

mod synth_util;

/// Generates, lints and synthesizes `block`.
fn synth_of<B: rust_hdl::prelude::Block>(name: &str, block: &mut B) -> synth::SynthReport {
    let dir = flow::target_dir().join("hdl-test").join(format!("synth-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.v"));
    std::fs::write(&path, flow::to_verilog(name, block).unwrap()).unwrap();
    let top = flow::module_name(name);
    flow::lint(&path, &top).unwrap_or_else(|e| panic!("{e}"));
    let r = synth::synth(&path, name, &top, &dir.join("synth")).unwrap_or_else(|e| panic!("{e}"));
    println!("{}\n{}", synth::SynthReport::table_header(), r.table_row());
    r
}

/// Its ring of 16 records of 910 bits is distributed RAM (152 LUT RAM cells: 32 x 6 bits
/// each). Measured: 929 LUT, 233 FF. With the ring in flops (three slots) it took 2849
/// LUT and 2958 FF.
#[test]
fn hop_serializer_synthesizes_for_xc7() {
    let r = synth_of("hop_serializer", &mut HopSerializer::default());
    assert_eq!((r.ramb36, r.ramb18, r.lutram, r.dsp48), (0, 0, 152, 0), "{r:?}");
    synth_util::assert_logic(&r, 929, 233);
}

/// Measured: 1648 LUT, 1671 FF (with the three-slot serializer's 2849 and 2958: the 4497
/// and 4629 of the one block they were).
#[test]
fn hop_capture_synthesizes_for_xc7() {
    let r = synth_of("hop_capture", &mut HopCapture::default());
    assert_eq!((r.ramb36, r.ramb18, r.lutram, r.dsp48), (0, 0, 0, 0), "{r:?}");
    synth_util::assert_logic(&r, 1648, 1671);
}

/// The inflated-latency check: three log2 units (each a 1K x 16 table in one RAMB18) and
/// two 23-bit adders and a comparator. Measured: 274 LUT, 250 FF, 3 RAMB18.
#[test]
fn inflate_check_synthesizes_for_xc7() {
    let r = synth_of("inflate_check", &mut InflateCheck::default());
    assert_eq!((r.ramb36, r.ramb18, r.lutram, r.dsp48), (0, 3, 0, 0), "{r:?}");
    synth_util::assert_logic(&r, 274, 250);
}

/// The record buffer: 512 records of 224 bits in block RAM (7 RAMB18 in 512 x 36, 114 Kbit
/// for 112 Kbit of records), the pointers and the word select. Measured: 173 LUT, 79 FF.
#[test]
fn record_fifo_synthesizes_for_xc7() {
    let r = synth_of("record_fifo", &mut RecordFifo::default());
    assert_eq!((r.ramb36, r.ramb18, r.lutram, r.dsp48), (0, 7, 0, 0), "{r:?}");
    synth_util::assert_logic(&r, 173, 79);
}

/// The composed half: the serializer, the latency tower (two 896 KiB banks), the check and
/// the record buffer, and the payload's delay lines. Its block RAM is exactly its parts'.
/// Measured: 4986 LUT, 2044 FF, 234 SRL, 152 LUT RAM (the serializer's ring), 412 RAMB36
/// and 10 RAMB18 (1.2 % of the XC7VX690T's LUTs, 28.4 % of its block RAM). With the hop
/// capture inside and a ring of three slots in flops it was 8348 LUT and 6440 FF; with
/// 352 KiB banks 7591 LUT and 11.4 %.
#[test]
fn per_switch_half_synthesizes_for_xc7() {
    // The half is large (its hash units' terms, the latency tower): build and generate it on
    // a big stack, as the core is.
    let r = big_stack(|| synth_of("per_switch_half", &mut PerSwitchHalf::new().unwrap()));
    assert_eq!((r.ramb36, r.ramb18, r.lutram, r.dsp48), (412, 3 + 7, 152, 0), "{r:?}");
    synth_util::assert_logic(&r, 4986, 2044);
}
