//! `hdl-synth [--json] [--out DIR] [blocks...]`: generates the named blocks (default: all),
//! synthesizes each with Yosys `synth_xilinx -family xc7` and prints LUT, FF, CARRY4, DSP48,
//! RAMB36/RAMB18 (and LUTRAM/SRL) counts as a table, or one JSON object per line with
//! `--json`. Exits non-zero if any block fails to synthesize or infers a latch.
use smartnic_hdl::{blocks, flow, synth};
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut out = flow::default_hdl_dir();
    let mut names = Vec::new();
    let mut json = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--json" => json = true,
            "--out" => match args.next() {
                Some(d) => out = PathBuf::from(d),
                None => return fail("--out needs a directory"),
            },
            "-h" | "--help" => {
                println!("usage: hdl-synth [--json] [--out DIR] [blocks...]\n\nSynthesizes each block (default: all) with Yosys synth_xilinx -family xc7; logs in DIR/synth/ (default target/hdl/synth/).");
                return ExitCode::SUCCESS;
            }
            s if s.starts_with('-') => return fail(&format!("unknown option {s}; try --help")),
            s => names.push(s.to_string()),
        }
    }
    if names.is_empty() {
        // Every block but the board top, which is vendor IP around `board_logic`.
        names = blocks::BLOCKS
            .iter()
            .filter(|b| b.name != smartnic_contract::board::TOP)
            .map(|b| b.name.to_string())
            .collect();
    }
    let mut failed = false;
    if !json {
        println!("{}", synth::SynthReport::table_header());
    }
    for name in &names {
        if name == smartnic_contract::board::TOP {
            return fail(&format!(
                "{name} is our `board_logic` between vendor IP black boxes: synthesize board_logic \
                 (`hdl/tests/board_top.rs` checks the top's wiring)"
            ));
        }
        let result = blocks::generate(name, &out)
            .and_then(|v| synth::synth(&v, name, &flow::module_name(name), &out.join("synth")));
        match result {
            Ok(r) if json => println!("{}", r.to_json()),
            Ok(r) => println!("{}", r.table_row()),
            Err(e) => {
                eprintln!("hdl-synth: {e}");
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn fail(msg: &str) -> ExitCode {
    eprintln!("hdl-synth: {msg}");
    ExitCode::FAILURE
}
