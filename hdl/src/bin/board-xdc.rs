//! `board-xdc [--out DIR]`: writes the VC709 board's XDC (`smartnic_vc709.xdc`) and the
//! Vivado scripts' parameters (`board_params.tcl`) into DIR (default `target/board/`), both
//! generated from `smartnic_contract::board`, and prints their paths.
use smartnic_contract::board;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "usage: board-xdc [--out DIR]\n\nWrites smartnic_vc709.xdc (pins, IOSTANDARDs, clocks, false paths, BPI x16 configuration) and\nboard_params.tcl (part, top, PCI IDs, flash) from the contract's VC709 table into DIR\n(default target/board/). The Vivado scripts in constraints/ read both from there.";

fn main() -> ExitCode {
    let mut out = PathBuf::from("target/board");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--out" => match args.next() {
                Some(d) => out = PathBuf::from(d),
                None => return fail("--out needs a directory"),
            },
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            s => return fail(&format!("unknown argument {s}; try --help")),
        }
    }
    match write_all(&out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&e),
    }
}

/// Writes both files into `dir`, creating it.
fn write_all(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for (name, text) in [(board::XDC_FILE, board::xdc()), (board::PARAMS_FILE, board::params_tcl())] {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("{}", path.display());
    }
    Ok(())
}

fn fail(msg: &str) -> ExitCode {
    eprintln!("board-xdc: {msg}");
    ExitCode::FAILURE
}
