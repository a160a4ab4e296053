//! The `.p4` sources agree with the Rust side: the generated contract include is current,
//! and every table and action the entry generator names exists in the program.

use smartnic_p4::p4gen::{contract_p4, CONTRACT_P4};
use smartnic_p4::tables::names;
use std::path::Path;

fn p4_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.p4` file of the program and its includes, concatenated.
fn sources() -> String {
    [
        "include/contract.p4",
        "include/headers.p4",
        "include/parser.p4",
        "include/forward.p4",
        "include/int_stack.p4",
        "programs/sketchint_int.p4",
    ]
    .iter()
    .map(|f| std::fs::read_to_string(p4_dir().join(f)).unwrap_or_else(|e| panic!("{f}: {e}")))
    .collect::<Vec<_>>()
    .join("\n")
}

#[test]
fn contract_include_is_generated_and_current() {
    let path = p4_dir().join(CONTRACT_P4);
    let want = contract_p4();
    if std::env::var_os("SMARTNIC_WRITE_P4").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{} is stale: regenerate with SMARTNIC_WRITE_P4=1 cargo test -p smartnic-p4 --test p4_sources",
        path.display()
    );
}

#[test]
fn every_generated_name_exists_in_the_program() {
    let src = sources();
    for full in names::ALL {
        let mut parts: Vec<&str> = full.split('.').collect();
        let leaf = parts.pop().unwrap();
        assert!(
            src.contains(&format!("table {leaf} ")) || src.contains(&format!("action {leaf}(")),
            "{full}: no table or action {leaf} in the P4 sources"
        );
        // The path: the top-level control, and the instance of a nested one.
        assert!(src.contains(&format!("control {}(", parts[0])), "{full}: no control {}", parts[0]);
        if let Some(inst) = parts.get(1) {
            assert!(src.contains(&format!("() {inst};")), "{full}: no instance {inst}");
        }
    }
}

#[test]
fn the_program_uses_the_generated_constants_not_numbers() {
    let src = std::fs::read_to_string(p4_dir().join("include/parser.p4")).unwrap();
    for c in
        ["ETHERTYPE_SHIM", "ETHERTYPE_IPV4", "SHIM_KIND_INT_STACK", "SHIM_MAX_HOPS", "PROTO_TCP", "PROTO_UDP"]
    {
        assert!(src.contains(c), "parser.p4 does not use {c}");
    }
    for literal in ["0x88b5", "0x88B5", "0x800", "0x0800"] {
        assert!(!src.contains(literal), "parser.p4 restates {literal} by hand");
    }
}
