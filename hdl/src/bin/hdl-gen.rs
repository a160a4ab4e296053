//! `hdl-gen [--out DIR] [--list] [blocks...]`: writes the Verilog of the named blocks (all
//! blocks if none are named) into DIR (default `target/hdl/`), lints each with Verilator,
//! and prints the paths.
use smartnic_hdl::{blocks, flow};
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut out = flow::default_hdl_dir();
    let mut names = Vec::new();
    let mut lint = true;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--out" => match args.next() {
                Some(d) => out = PathBuf::from(d),
                None => return fail("--out needs a directory"),
            },
            "--no-lint" => lint = false,
            "--list" => {
                for b in blocks::BLOCKS {
                    println!("{:<16} {}", b.name, b.about);
                }
                return ExitCode::SUCCESS;
            }
            "-h" | "--help" => {
                println!("usage: hdl-gen [--out DIR] [--no-lint] [--list] [blocks...]\n\nWrites <block>.v for each named block (default: all) into DIR (default target/hdl/) and lints it with `verilator --lint-only -Wall`.");
                return ExitCode::SUCCESS;
            }
            s if s.starts_with('-') => return fail(&format!("unknown option {s}; try --help")),
            s => names.push(s.to_string()),
        }
    }
    if names.is_empty() {
        names = blocks::BLOCKS.iter().map(|b| b.name.to_string()).collect();
    }
    for name in &names {
        let path = match blocks::generate(name, &out) {
            Ok(p) => p,
            Err(e) => return fail(&e),
        };
        if lint {
            if let Err(e) = blocks::lint(name, &path) {
                return fail(&e);
            }
        }
        println!("{}", path.display());
    }
    ExitCode::SUCCESS
}

fn fail(msg: &str) -> ExitCode {
    eprintln!("hdl-gen: {msg}");
    ExitCode::FAILURE
}
