//! The flow on every registered block: generate, lint with Verilator, synthesize with Yosys.
//! Missing tools fail these tests (with the install command); they never skip.
use smartnic_contract::hash::FAMILY;
use smartnic_hdl::hash::HashUnit;
use smartnic_hdl::{blocks, flow, synth};
use std::path::PathBuf;

fn out_dir(test: &str) -> PathBuf {
    flow::target_dir().join("hdl-test").join(test)
}

#[test]
fn every_block_generates_and_lints_clean() {
    let dir = out_dir("lint");
    for b in blocks::BLOCKS {
        let path = blocks::generate(b.name, &dir).unwrap();
        // The registry's own lint: the board top with its vendor IP's port stubs.
        blocks::lint(b.name, &path).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// The hash unit lints clean for other family members and index widths too (the waiver list
/// must not depend on one configuration).
#[test]
fn hash_variants_lint_clean() {
    let dir = out_dir("lint-variants");
    let variants = [
        ("hash_m2_k14", flow::to_verilog("hash_m2_k14", &mut HashUnit::<14>::new(&FAMILY[2]))),
        ("hash_m6_k1", flow::to_verilog("hash_m6_k1", &mut HashUnit::<1>::new(&FAMILY[6]))),
        ("hash_m1_k32", flow::to_verilog("hash_m1_k32", &mut HashUnit::<32>::new(&FAMILY[1]))),
    ];
    for (name, v) in variants {
        let path = dir.join(format!("{name}.v"));
        flow::write_if_changed(&path, &v.unwrap()).unwrap();
        flow::lint(&path, &flow::module_name(name)).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn unknown_block_is_an_error_listing_known_ones() {
    let e = blocks::find("nope").err().unwrap();
    assert!(e.contains("hash"), "{e}");
}

/// `hdl-synth hash`: Yosys synth_xilinx succeeds without latches and the counts are those
/// of a 104->32 XOR tree with 2 register stages: 4x32 partial + 32 hash + 2 valid flops,
/// no carry chains, DSPs or block RAM.
#[test]
fn hash_synthesizes_for_xc7_with_sane_counts() {
    let dir = out_dir("synth");
    let v = blocks::generate("hash", &dir).unwrap();
    let r = synth::synth(&v, "hash", &flow::module_name("hash"), &dir.join("synth"))
        .unwrap_or_else(|e| panic!("{e}"));
    println!("{}\n{}\n{}", synth::SynthReport::table_header(), r.table_row(), r.to_json());
    assert_eq!(r.ff, 4 * 32 + 32 + 2, "{r:?}");
    assert!((100..=1000).contains(&r.lut), "{r:?}");
    assert_eq!((r.carry4, r.dsp48, r.ramb36, r.ramb18, r.lutram), (0, 0, 0, 0, 0), "{r:?}");
}

/// A latch in a block must fail synthesis with a message that says so.
#[test]
fn latch_fails_synthesis() {
    let dir = out_dir("latch");
    let v = dir.join("latchy.v");
    flow::write_if_changed(
        &v,
        "module nic_latchy(input wire en, input wire d, output reg q);\nalways @(*) begin\n  if (en) q = d;\nend\nendmodule\n",
    )
    .unwrap();
    let e = synth::synth(&v, "latchy", "nic_latchy", &dir.join("synth")).unwrap_err();
    assert!(e.contains("latch"), "{e}");
}

/// `hdl-synth log2 exp2 mul div`: the arithmetic blocks synthesize without latches, each
/// table lands in exactly one RAMB18 (SyncROM, 1K x 16/17), no DSPs (no multiplier in the
/// log-add-exp path), and the logic stays small.
#[test]
fn arith_blocks_synthesize_for_xc7_with_one_ramb18_per_table() {
    let dir = out_dir("synth-arith");
    // (block, ROMs, max LUTs)
    for (name, roms, max_lut) in [("log2", 1, 400), ("exp2", 1, 600), ("mul", 3, 1200), ("div", 3, 1200)] {
        let v = blocks::generate(name, &dir).unwrap();
        let r = synth::synth(&v, name, &flow::module_name(name), &dir.join("synth"))
            .unwrap_or_else(|e| panic!("{e}"));
        println!("{}", r.table_row());
        assert_eq!((r.ramb18, r.ramb36, r.dsp48), (roms, 0, 0), "{name}: {r:?}");
        assert!(r.lut > 0 && r.lut <= max_lut && r.ff > 0, "{name}: {r:?}");
    }
}

/// `hdl-synth mul_direct div_direct`: the direct-table variants need one RAMB18 (one table
/// for both operands) against three for log-add-exp, no DSPs, no latches.
#[test]
fn direct_table_blocks_synthesize_for_xc7_with_one_ramb18() {
    let dir = out_dir("synth-arith-direct");
    for (name, roms, max_lut) in [("mul_direct", 1, 800), ("div_direct", 1, 800)] {
        let v = blocks::generate(name, &dir).unwrap();
        let r = synth::synth(&v, name, &flow::module_name(name), &dir.join("synth"))
            .unwrap_or_else(|e| panic!("{e}"));
        println!("{}", r.table_row());
        assert_eq!((r.ramb18, r.ramb36, r.dsp48), (roms, 0, 0), "{name}: {r:?}");
        assert!(r.lut > 0 && r.lut <= max_lut && r.ff > 0, "{name}: {r:?}");
    }
}

/// `hdl-synth encoder delay_bin`: one log2 table each (1 RAMB18), the constant multiplies
/// (`log2 v * K_fx`, `bins_per_octave * ...`) as shift-and-add trees without DSPs, no latches.
#[test]
fn encoder_and_delay_bin_synthesize_for_xc7_with_one_ramb18() {
    let dir = out_dir("synth-arith-encoder");
    for (name, roms, max_lut) in [("encoder", 1, 1000), ("delay_bin", 1, 400)] {
        let v = blocks::generate(name, &dir).unwrap();
        let r = synth::synth(&v, name, &flow::module_name(name), &dir.join("synth"))
            .unwrap_or_else(|e| panic!("{e}"));
        println!("{}", r.table_row());
        assert_eq!((r.ramb18, r.ramb36, r.dsp48), (roms, 0, 0), "{name}: {r:?}");
        assert!(r.lut > 0 && r.lut <= max_lut && r.ff > 0, "{name}: {r:?}");
    }
}

/// `hdl-synth decoder`: one exp2 table (1 RAMB18), `alpha * C_fx` as a shift-and-add tree
/// without DSPs, no latches.
#[test]
fn decoder_synthesizes_for_xc7_with_one_ramb18() {
    let dir = out_dir("synth-arith-decoder");
    let v = blocks::generate("decoder", &dir).unwrap();
    let r = synth::synth(&v, "decoder", &flow::module_name("decoder"), &dir.join("synth"))
        .unwrap_or_else(|e| panic!("{e}"));
    println!("{}", r.table_row());
    assert_eq!((r.ramb18, r.ramb36, r.dsp48), (1, 0, 0), "{r:?}");
    assert!(r.lut > 0 && r.lut <= 800 && r.ff > 0, "{r:?}");
}
