//! The generated P4 include `p4/include/contract.p4`: the contract's constants and the
//! layouts of its own headers (the telemetry shim and its hop record), written from the
//! contract's field ranges so the P4 never restates them by hand. Standard headers
//! (Ethernet, IPv4, TCP/UDP ports) are in `p4/include/headers.p4`.
//!
//! `tests/p4_sources.rs` fails when the committed file differs from [`contract_p4`];
//! regenerate with `SMARTNIC_WRITE_P4=1 cargo test -p smartnic-p4 --test p4_sources`.

use smartnic_contract::frame::ETHERTYPE_IPV4;
use smartnic_contract::key::{PROTO_TCP, PROTO_UDP};
use smartnic_contract::shim::{field, ETHERTYPE_SHIM, KIND_INT_STACK, MAX_HOPS};
use std::fmt::Write;
use std::ops::Range;

/// Path of the generated include, relative to the `p4/` folder.
pub const CONTRACT_P4: &str = "include/contract.p4";

/// One header field: its P4 name and its byte range in the header.
struct Field(&'static str, Range<usize>);

/// The text of `contract.p4`.
pub fn contract_p4() -> String {
    let mut s = String::new();
    s.push_str("// Generated from the device contract (smartnic-contract) by smartnic-p4's p4gen.\n");
    s.push_str(
        "// Do not edit: regenerate with SMARTNIC_WRITE_P4=1 cargo test -p smartnic-p4 --test p4_sources\n\n",
    );
    s.push_str("#ifndef SMARTNIC_CONTRACT_P4\n#define SMARTNIC_CONTRACT_P4\n\n");
    let consts: [(&str, &str, u64); 6] = [
        ("ETHERTYPE_IPV4", "bit<16>", ETHERTYPE_IPV4 as u64),
        ("ETHERTYPE_SHIM", "bit<16>", ETHERTYPE_SHIM as u64),
        ("SHIM_KIND_INT_STACK", "bit<8>", KIND_INT_STACK as u64),
        ("SHIM_MAX_HOPS", "bit<16>", MAX_HOPS as u64),
        ("PROTO_TCP", "bit<8>", PROTO_TCP as u64),
        ("PROTO_UDP", "bit<8>", PROTO_UDP as u64),
    ];
    for (name, ty, v) in consts {
        writeln!(s, "const {ty} {name} = {v:#x};").unwrap();
    }
    writeln!(s, "// The hop stack's depth: the most records a NIC accepts (a switch appends none past it).")
        .unwrap();
    writeln!(s, "#define SHIM_HOP_STACK {MAX_HOPS}").unwrap();
    s.push('\n');
    let shim = [
        Field("kind", field::KIND..field::KIND + 1),
        Field("flags", field::FLAGS..field::FLAGS + 1),
        Field("next_type", field::NEXT_TYPE),
        Field("hop_count", field::HOP_COUNT),
    ];
    header(
        &mut s,
        "shim_t",
        "The telemetry shim (EtherType 0x88B5): kind, flags, next EtherType, hop count.",
        &shim,
        field::HOPS,
    );
    let hop = [Field("switch_id", field::HOP_SWITCH), Field("latency_ns", field::HOP_LATENCY)];
    header(&mut s, "hop_t", "One INT hop record: switch ID and hop latency in ns.", &hop, field::HOP_LEN);
    s.push_str("#endif\n");
    s
}

/// A P4 header type from contiguous byte fields that fill `len` bytes exactly.
fn header(s: &mut String, name: &str, doc: &str, fields: &[Field], len: usize) {
    let mut at = 0;
    writeln!(s, "// {doc}").unwrap();
    writeln!(s, "header {name} {{").unwrap();
    for Field(f, r) in fields {
        assert_eq!(r.start, at, "{name}.{f} must follow the field before it");
        writeln!(s, "    bit<{}> {f};", 8 * r.len()).unwrap();
        at = r.end;
    }
    assert_eq!(at, len, "{name} fields must fill the header");
    writeln!(s, "}}\n").unwrap();
}
