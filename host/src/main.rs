//! `smartnic`: the telemetry SmartNIC command line (see `smartnic --help`).
use clap::Parser;

fn main() {
    let cli = smartnic::cli::Cli::parse();
    if let Err(e) = smartnic::cli::run(cli) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
