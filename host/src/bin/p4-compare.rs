//! `p4-compare`: the Rust half of `scripts/p4-check` (see `smartnic::p4check`).
//!
//! ```text
//! p4-compare split   SWITCH.in.pcapng SWITCH.out.pcapng DIR   # DIR/p<port>_in.pcap for bmv2
//! p4-compare compare SWITCH.out.pcapng DIR SWITCH_ID      # DIR/p<port>_out.pcap vs the twin
//! ```
//! `compare` prints one JSON report and exits 1 when bmv2 and the twin differ.

use anyhow::{bail, Context, Result};
use smartnic::p4check::{compare, frames_by_port, read_outputs, split};
use std::path::Path;

fn main() {
    if let Err(e) = run(std::env::args().skip(1).collect()) {
        eprintln!("p4-compare: {e:#}");
        std::process::exit(2);
    }
}

fn run(args: Vec<String>) -> Result<()> {
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["split", input, output, dir] => {
            let counts = split(Path::new(input), Path::new(output), Path::new(dir))?;
            println!("{}", serde_json::to_string(&counts)?);
            Ok(())
        }
        ["compare", expected, dir, id] => {
            let switch_id: u16 = id.parse().with_context(|| format!("switch ID {id:?}"))?;
            let expected = frames_by_port(Path::new(expected))?;
            let ports: Vec<u32> = (0..=u8::MAX as u32).collect();
            let actual = read_outputs(Path::new(dir), ports)?;
            let expected =
                expected.into_iter().map(|(p, v)| (p, v.into_iter().map(|(_, d)| d).collect())).collect();
            let report = compare(&expected, &actual, switch_id);
            println!("{}", serde_json::to_string(&report)?);
            if !report.ok() {
                std::process::exit(1);
            }
            Ok(())
        }
        _ => bail!("usage: p4-compare split SWITCH.in.pcapng SWITCH.out.pcapng DIR | compare SWITCH.out.pcapng DIR SWITCH_ID"),
    }
}
