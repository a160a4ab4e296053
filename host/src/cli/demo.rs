//! `smartnic demo`: the main job end to end. Generate a trace with INT stacks and its ground
//! truth, replay it through the simulated NIC (the Verilator model of the generated core,
//! in the `smartnic-sim` service), read every epoch out over the driver exactly as from a
//! board, then check each snapshot against the bit-exact software sketches over the same
//! packets and report what the NIC's counters say next to the exact answers. An epoch whose
//! counters differ from the model fails the demo (exit 1) once the report is printed.
//!
//! `--software` skips the simulator and reports the software pipeline alone.
//!
//! The pipeline and the comparison are [`crate::demo`]; this module parses the arguments,
//! prints the report and turns the verdict into the exit status.

use super::progress::bar;
use crate::demo::{verdict, DemoConfig, DemoReport};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Directory for the trace, ground truth and snapshots.
    #[arg(long, short, default_value = "out/demo")]
    pub out: PathBuf,
    /// Packets in the generated trace.
    #[arg(long, default_value_t = 300_000)]
    pub packets: u64,
    /// Flows in the generated trace.
    #[arg(long, default_value_t = 30_000)]
    pub flows: u64,
    /// IP packets per epoch (the driver swaps banks and reads out after each).
    #[arg(long, default_value_t = 100_000)]
    pub epoch_packets: u64,
    /// Seed of the generator (same seed, same trace).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Flows listed in the report.
    #[arg(long, default_value_t = 8)]
    pub top: usize,
    /// Run the software pipeline only (no simulated NIC).
    #[arg(long)]
    pub software: bool,
}

impl From<DemoArgs> for DemoConfig {
    fn from(a: DemoArgs) -> Self {
        DemoConfig {
            out: a.out,
            packets: a.packets,
            flows: a.flows,
            epoch_packets: a.epoch_packets,
            seed: a.seed,
            top: a.top,
            software: a.software,
        }
    }
}

pub fn run(args: DemoArgs, json: bool) -> anyhow::Result<()> {
    let report = crate::demo::run(&args.into(), bar)?;
    if json {
        super::print_json(&report)?;
    } else {
        print_report(&report);
    }
    verdict(&report)
}

fn print_report(r: &DemoReport) {
    println!("SmartNIC demo: {}", r.source);
    println!("  trace  {} ({} packets, {} flows; truth in {})", r.trace, r.packets, r.flows, r.truth);
    println!(
        "\nepochs read out (counters compared with the bit-exact software sketches over the same packets):"
    );
    println!(
        "  {:>5} {:>9}  {:<10} {:<10} {:>10} {:>10}  snapshot",
        "epoch", "packets", "tower", "sumax", "tower ARE", "sumax ARE"
    );
    let verdict = |eq: bool| if eq { "equal" } else { "DIFFERS" };
    for e in &r.epochs {
        println!(
            "  {:>5} {:>9}  {:<10} {:<10} {:>10.4} {:>10.4}  {}",
            e.epoch,
            e.packets,
            verdict(e.tower_equal),
            verdict(e.sumax_equal),
            e.tower_are,
            e.sumax_are,
            e.snapshot
        );
    }
    if let Some(reads) = r.reads_per_snapshot {
        println!(
            "  readout: {reads} register reads per snapshot (~{:.0} ms of MMIO at 1 us per read)",
            reads as f64 / 1e3
        );
    }
    println!("\nlargest flows of the last epoch: exact packets, NIC estimates, SuMax delay bins (<1,1-2,2-4,... us):");
    println!(
        "  {:<44} {:>7} {:>7} {:>7}  {:<34} {:>10}",
        "flow", "exact", "tower", "sumax", "delay bins", "max IAT us"
    );
    for t in &r.top_of_last_epoch {
        println!(
            "  {:<44} {:>7} {:>7} {:>7}  {:<34} {:>10.1}",
            t.flow,
            t.packets,
            t.tower,
            t.sumax,
            format!("{:?}", t.delay_bins),
            t.max_iat_us
        );
    }
}
