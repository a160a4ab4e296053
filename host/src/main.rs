//! `smartnic`: the telemetry SmartNIC command line (see `smartnic --help`).

fn main() {
    let cli = smartnic::cli::parse();
    smartnic::cli::entry::main(|| smartnic::cli::run(cli));
}
