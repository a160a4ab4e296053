//! `smartnic-fleet`: the SQL engine that `smartnic fleet query` runs (see
//! `smartnic fleet query --help`); it takes the same arguments.
use clap::Parser;
use smartnic::cli::fleet::QueryArgs;

/// Runs SQL over a fleet's Parquet tables with DataFusion; `smartnic fleet query` runs this
/// binary with its own arguments.
#[derive(Debug, Parser)]
#[command(name = "smartnic-fleet", version)]
struct Cli {
    /// Print the rows as JSON ({rows, seconds}).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    query: QueryArgs,
}

fn main() {
    let cli = Cli::parse();
    smartnic::cli::entry::main(|| smartnic_fleet::run(&cli.query, cli.json));
}
