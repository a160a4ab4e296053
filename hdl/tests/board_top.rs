//! The board top `smartnic_vc709` without Vivado: generated with `BoardLogic` under it,
//! linted by Verilator against the vendor IP's port stubs (a port missing, extra or of the
//! wrong width fails), its ports exactly the contract's pin table, every instance where
//! `constraints/build.tcl` expects it, and its wiring checked by Yosys (`check -assert`: no
//! signal with two drivers, none read and never driven, no logic loop).
use smartnic_contract::board::{PORTS, TOP};
use smartnic_hdl::board::top::{black_boxes, module_ports, stubs};
use smartnic_hdl::{blocks, flow, synth};
use std::process::Command;

/// Generates and lints the top into its own directory; returns the file's text and path.
fn generated() -> (String, std::path::PathBuf) {
    let dir = flow::target_dir().join("hdl-test").join("board-top");
    std::fs::create_dir_all(&dir).unwrap();
    let path = blocks::generate(TOP, &dir).unwrap_or_else(|e| panic!("{e}"));
    blocks::lint(TOP, &path).unwrap_or_else(|e| panic!("{e}"));
    (std::fs::read_to_string(&path).unwrap(), path)
}

#[test]
fn the_board_top_is_the_pin_table_the_ip_and_our_logic_wired() {
    let (text, path) = generated();
    // The header: the contract's ports, in order, and nothing else.
    let ports = module_ports(&text, TOP).unwrap();
    let want: Vec<&str> = PORTS.iter().map(|p| p.name).collect();
    assert_eq!(ports, want, "the top's ports are the pin table's");
    // The vendor IP's stubs are not in the file Vivado reads (it takes every *.v).
    for b in black_boxes() {
        assert!(
            !text.contains(&format!("module {}(", b.module)),
            "{} is defined in the top's file",
            b.module
        );
    }

    // Yosys: the hierarchy resolves, every instance is there, the wiring is sound.
    let stubs_path = path.with_extension("stubs.vh");
    assert!(stubs_path.exists(), "the lint wrote the stubs beside the top");
    let stat = path.with_extension("stat.txt");
    let ys = format!(
        "read_verilog {v}\nread_verilog {s}\nhierarchy -check -top {TOP}\nproc\ncheck -assert\ntee -q -o {o} stat\n",
        v = path.display(),
        s = stubs_path.display(),
        o = stat.display()
    );
    let script = path.with_extension("check.ys");
    std::fs::write(&script, ys).unwrap();
    let out = Command::new("yosys").arg("-q").arg("-s").arg(&script).output().expect("yosys runs");
    assert!(
        out.status.success(),
        "yosys check failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let cells = synth::module_cells(&std::fs::read_to_string(&stat).unwrap(), TOP);
    let count = |m: &str| cells.get(m).copied().unwrap_or(0);
    assert_eq!(
        (count("xdma_0"), count("eth_shared"), count("eth_port"), count("IBUFDS"), count("IBUFDS_GTE2")),
        (1, 1, 3, 1, 1),
        "{cells:?}"
    );
    assert_eq!(count("nic_board_logic"), 1, "{cells:?}");
    println!("{TOP}: {cells:?}");
}

#[test]
fn the_stubs_declare_every_black_box_port_once() {
    let s = stubs(true);
    for b in black_boxes() {
        let ports = module_ports(&s, b.module).unwrap();
        let names: Vec<&str> = b.ports.iter().map(|p| p.2).collect();
        assert_eq!(ports, names, "{}", b.module);
        let mut seen = std::collections::BTreeSet::new();
        assert!(names.iter().all(|n| seen.insert(*n)), "{}: a port named twice", b.module);
    }
    // Yosys' own cell library defines the primitives; its stubs leave them out.
    assert!(!stubs(false).contains("module IBUFDS(") && stubs(false).contains("module xdma_0("));
}
