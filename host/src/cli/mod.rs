//! The `smartnic` command line: nouns and verbs like `ip` and `ethtool`, quiet by default,
//! `--json` for machines, errors that say what to do next.
//!
//! Exit codes: 0 success, 1 the operation failed (message on stderr), 2 bad usage.

use clap::{Parser, Subcommand};

pub mod demo;
pub mod device;
pub mod eval;
pub mod manifest;
pub mod progress;
pub mod report;
pub mod sim;
pub mod size;
pub mod sketch;
pub mod trace;

const EXAMPLES: &str = "\
Examples:
  smartnic demo                                   generate a trace, run the pipeline, print a report
  smartnic trace gen -o t.pcap --truth t.json     synthetic trace with exact ground truth
  smartnic trace stats t.pcap --top 10            packets, flows, top flows
  smartnic sketch run --trace t.pcap -o t.snap    NIC geometry (TowerSketch ACU + SuMax)
  smartnic sketch run --trace t.pcap --sketch tower-cu --memory 600KB -o cu.snap
  smartnic sketch query t.snap --flow 10.0.0.1:1234>10.0.0.2:80/6
  smartnic report t.snap --candidates keys.txt     every task the snapshot answers
  smartnic eval --trace t.pcap --truth t.json      accuracy of all sketches at 300/600/900KB";

/// Telemetry SmartNIC tools: traces, sketches, snapshots and reports.
#[derive(Debug, Parser)]
#[command(name = "smartnic", version, after_help = EXAMPLES)]
pub struct Cli {
    /// Print results as JSON on stdout (progress and errors stay on stderr).
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Generate, inspect and convert packet traces.
    #[command(subcommand)]
    Trace(trace::TraceCmd),
    /// Run software sketches over a trace and query snapshot files.
    #[command(subcommand)]
    Sketch(sketch::SketchCmd),
    /// The end-to-end demo: generate a trace, run the pipeline, read out and report.
    Demo(demo::DemoArgs),
    /// List SmartNICs on the PCI bus, with driver binding, IOMMU group and what to do next.
    Devices(device::DevicesArgs),
    /// What a device's registers say: firmware, epoch, frame counters, blocks and windows.
    #[command(
        after_help = "Examples:\n  smartnic status --device 0000:03:00.0\n  smartnic status --device file:bar.img"
    )]
    Status(device::StatusArgs),
    /// Swap epochs and read the idle bank out into a snapshot file.
    #[command(
        after_help = "Examples:\n  smartnic readout --device 0000:03:00.0 -o epoch.snap\n  smartnic readout --device 0000:03:00.0 --every 5s -o snaps/   (one snapshot per 5 s epoch)"
    )]
    Readout(device::ReadoutArgs),
    /// Replay a trace through the simulated NIC (Verilator model of the generated core) and
    /// read every epoch out over the driver.
    #[command(
        after_help = concat!(
            "Example:\n  smartnic sim --trace t.pcap --epoch-packets 100000 -o sim-out/\n  then compare with: smartnic sketch run --trace t.pcap --epoch-packets 100000 -o sw-out/\n\n\
             Every frame of the trace goes into the NIC (raw-IP captures with an Ethernet header). \
             The simulator is called stalled after SMARTNIC_SIM_DEADLINE seconds without an answer \
             (default 30).\n\n",
            manifest::help!()
        )
    )]
    Sim(sim::SimArgs),
    /// Score sketches and tasks against a trace's ground truth (the accuracy lab).
    Eval(eval::EvalArgs),
    /// Every measurement a snapshot file can answer: cardinality, distribution, entropy, delays.
    Report(report::ReportArgs),
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Trace(cmd) => trace::run(cmd, cli.json),
        Command::Sketch(cmd) => sketch::run(cmd, cli.json),
        Command::Demo(args) => demo::run(args, cli.json),
        Command::Devices(args) => device::devices(&args, cli.json),
        Command::Status(args) => device::status(&args, cli.json),
        Command::Readout(args) => device::readout(&args, cli.json),
        Command::Sim(args) => sim::run(&args, cli.json),
        Command::Eval(args) => eval::run(args, cli.json),
        Command::Report(args) => report::run(args, cli.json),
    }
}

/// Prints `value` as pretty JSON on stdout.
pub fn print_json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}
