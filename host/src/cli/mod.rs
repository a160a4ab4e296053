//! The `smartnic` command line, one grammar: `smartnic NOUN VERB`, like `ip link show`.
//! Quiet by default, `--json` for machines, errors that say what to do next.
//!
//! Exit codes: 0 success, 1 the operation failed (message on stderr), 2 bad usage.
//!
//! Adding a noun (`lab`, `collector`, ...): a module with its arguments and run functions,
//! a verb enum (in that module, like [`trace::TraceCmd`], or here), one variant of
//! [`Command`], one arm in [`Command::run`], and its examples in [`examples::PAGES`] (a test
//! fails until every visible command has a page and the README shows the new map).
//!
//! The spellings before this grammar (`devices`, `status`, `readout`, `report`, `eval`,
//! `sim --trace`, `sketch query`, `sketch diff`) still parse, hidden from `--help`, and run
//! exactly as their new spelling: [`Command::canonical`] rewrites them before anything runs.
//! They print nothing extra, so scripts that read stdout or stderr see no difference.

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};

pub mod collect;
pub mod demo;
pub mod device;
pub mod entry;
pub mod eval;
pub mod examples;
pub mod export;
pub mod fleet;
pub mod lab;
pub mod merge;
/// The epoch manifest is library code ([`crate::manifest`]); `sketch run` and the help
/// pages reach it by this name.
pub use crate::manifest;
pub mod progress;
pub mod report;
pub mod sim;
pub mod size;
pub mod sketch;
pub mod trace;

/// Telemetry SmartNIC tools: traces, sketches, snapshots, devices and the simulated NIC.
#[derive(Debug, Parser)]
#[command(name = "smartnic", version)]
pub struct Cli {
    /// Print results as JSON on stdout (progress and errors stay on stderr).
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Generate and inspect packet traces.
    #[command(subcommand)]
    Trace(trace::TraceCmd),
    /// Software sketches over a trace: snapshot files, and the accuracy lab.
    #[command(subcommand)]
    Sketch(SketchCmd),
    /// Read snapshot files: reports, single flows, comparisons.
    #[command(subcommand)]
    Snapshot(SnapshotCmd),
    /// SmartNICs on the PCI bus (or a BAR image, or the simulator): list, status, configure, readout.
    #[command(subcommand)]
    Device(DeviceCmd),
    /// The simulated NIC: the Verilator model of the generated core behind the driver.
    Sim(SimCmd),
    /// The end-to-end demo: a network lab run, every host's NIC simulated, read out and reported.
    Demo(demo::DemoArgs),
    /// The network lab: a simulated data-center network whose switches run the P4 twins.
    #[command(subcommand)]
    Lab(lab::LabCmd),
    /// The collector daemon: read devices out every epoch, keep snapshots, serve Prometheus metrics.
    Collect(collect::CollectArgs),
    /// Network-wide SQL over many NICs' Parquet epochs (DataFusion embedded; the same queries on Spark).
    #[command(subcommand)]
    Fleet(fleet::FleetCmd),

    /// Old spelling of `device list`.
    #[command(hide = true)]
    Devices(device::DevicesArgs),
    /// Old spelling of `device status`.
    #[command(hide = true)]
    Status(device::StatusArgs),
    /// Old spelling of `device readout`.
    #[command(hide = true)]
    Readout(device::ReadoutArgs),
    /// Old spelling of `snapshot report`.
    #[command(hide = true)]
    Report(report::ReportArgs),
    /// Old spelling of `sketch eval`.
    #[command(hide = true)]
    Eval(eval::EvalArgs),
}

/// `smartnic sketch ...`
#[derive(Debug, Subcommand)]
pub enum SketchCmd {
    /// Feed a trace into software sketches and write their counters as snapshot files.
    Run(sketch::RunArgs),
    /// Score sketches and tasks against a trace's ground truth (the accuracy lab).
    Eval(eval::EvalArgs),
    /// Old spelling of `snapshot query`.
    #[command(hide = true)]
    Query(sketch::QueryArgs),
    /// Old spelling of `snapshot diff`.
    #[command(hide = true)]
    Diff(sketch::DiffArgs),
}

/// `smartnic snapshot ...`
#[derive(Debug, Subcommand)]
pub enum SnapshotCmd {
    /// Every measurement a snapshot file can answer: cardinality, sizes, entropy, delays, per-switch tasks.
    Report(report::ReportArgs),
    /// Look one flow up in a snapshot file.
    Query(sketch::QueryArgs),
    /// Compare two snapshot files, sketch by sketch (e.g. a simulated or hardware readout
    /// against `sketch run` over the same packets).
    ///
    /// What the counters mean is compared first (insertion mode, geometry, hash parameters,
    /// time unit, delay bins), then the counters. Exit status 1 when anything compared
    /// differs.
    Diff(sketch::DiffArgs),
    /// Merge snapshots of the same sketches into one (counters add: for Count-Min towers the
    /// sketch of the union stream, exactly; CU and ACU towers bounded; SuMax refused).
    Merge(merge::MergeArgs),
    /// Send snapshots' flows and per-switch latencies to an IPFIX collector (RFC 7011 over UDP) and/or write them as Parquet tables.
    Export(export::ExportArgs),
}

/// `smartnic device ...`
#[derive(Debug, Subcommand)]
pub enum DeviceCmd {
    /// List SmartNICs on the PCI bus, with driver binding, IOMMU group and what to do next.
    List(device::DevicesArgs),
    /// What a device's registers say: firmware, epoch, frame counters, blocks and windows.
    Status(device::StatusArgs),
    /// Show or set the per-switch half's insertion mode and thresholds (Delta_l, Delta_h).
    ///
    /// With no setting, prints the configuration the device holds and writes nothing. With
    /// settings, changes only those (the other registers are written back as the device
    /// held them), reads every register back and prints what the device holds; a register
    /// the device did not keep is an error that names it.
    Configure(device::ConfigureArgs),
    /// Swap epochs and read the idle bank out into a snapshot file.
    Readout(device::ReadoutArgs),
}

/// `smartnic sim ...`; `sim --trace ...` without a verb is the old spelling of `sim run`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct SimCmd {
    #[command(subcommand)]
    pub verb: Option<SimVerb>,
    /// The old spelling's arguments (hidden from `--help` by [`command`]).
    #[command(flatten)]
    pub legacy: Option<sim::SimArgs>,
}

#[derive(Debug, Subcommand)]
pub enum SimVerb {
    /// Replay a trace through the simulated NIC and read every epoch out over the driver.
    Run(sim::SimArgs),
}

impl Command {
    /// The command in the current grammar: an old spelling becomes its new one.
    pub fn canonical(self) -> Command {
        match self {
            Command::Devices(a) => Command::Device(DeviceCmd::List(a)),
            Command::Status(a) => Command::Device(DeviceCmd::Status(a)),
            Command::Readout(a) => Command::Device(DeviceCmd::Readout(a)),
            Command::Report(a) => Command::Snapshot(SnapshotCmd::Report(a)),
            Command::Eval(a) => Command::Sketch(SketchCmd::Eval(a)),
            Command::Sketch(SketchCmd::Query(a)) => Command::Snapshot(SnapshotCmd::Query(a)),
            Command::Sketch(SketchCmd::Diff(a)) => Command::Snapshot(SnapshotCmd::Diff(a)),
            Command::Sim(SimCmd { verb: None, legacy: Some(a) }) => {
                Command::Sim(SimCmd { verb: Some(SimVerb::Run(a)), legacy: None })
            }
            current => current,
        }
    }

    /// Runs the command (old spellings as their new one).
    pub fn run(self, json: bool) -> anyhow::Result<()> {
        match self.canonical() {
            Command::Trace(cmd) => trace::run(cmd, json),
            Command::Sketch(SketchCmd::Run(a)) => sketch::run_trace(&a, json),
            Command::Sketch(SketchCmd::Eval(a)) => eval::run(a, json),
            Command::Snapshot(SnapshotCmd::Report(a)) => report::run(a, json),
            Command::Snapshot(SnapshotCmd::Query(a)) => sketch::query(&a, json),
            Command::Snapshot(SnapshotCmd::Diff(a)) => sketch::diff(&a, json),
            Command::Snapshot(SnapshotCmd::Merge(a)) => merge::run(&a, json),
            Command::Snapshot(SnapshotCmd::Export(a)) => export::run(&a, json),
            Command::Device(DeviceCmd::List(a)) => device::devices(&a, json),
            Command::Device(DeviceCmd::Status(a)) => device::status(&a, json),
            Command::Device(DeviceCmd::Configure(a)) => device::configure(&a, json),
            Command::Device(DeviceCmd::Readout(a)) => device::readout(&a, json),
            Command::Sim(SimCmd { verb: Some(SimVerb::Run(a)), .. }) => sim::run(&a, json),
            Command::Demo(a) => demo::run(a, json),
            Command::Lab(cmd) => lab::run(cmd, json),
            Command::Collect(a) => collect::run(&a, json),
            Command::Fleet(cmd) => fleet::run(&cmd, json),
            Command::Sim(SimCmd { verb: None, .. }) => {
                anyhow::bail!("`smartnic sim` needs a verb: smartnic sim run --trace T.pcap -o DIR/")
            }
            // `canonical` has rewritten every old spelling.
            old => anyhow::bail!("no command runs {old:?}; see smartnic --help"),
        }
    }
}

/// The full command line: the derived grammar with every command's examples from
/// [`examples::PAGES`] as its `--help` epilogue, and the old `sim` arguments hidden.
pub fn command() -> clap::Command {
    let mut cmd = Cli::command().after_help(examples::overview_help());
    for page in examples::PAGES {
        cmd = with_after_help(cmd, page.path, examples::page_help(page));
    }
    let legacy = <sim::SimArgs as Args>::augment_args(clap::Command::new("sim"));
    let legacy: Vec<_> = legacy.get_arguments().map(|a| a.get_id().clone()).collect();
    cmd.mut_subcommand("sim", |sim| {
        sim.mut_args(|a| if legacy.contains(a.get_id()) { a.hide(true) } else { a })
            .override_usage("smartnic sim <COMMAND>")
            .arg_required_else_help(true)
    })
}

/// Sets the `--help` epilogue of the command at `path` (noun, verb).
fn with_after_help(cmd: clap::Command, path: &[&str], text: String) -> clap::Command {
    match path.split_first() {
        None => cmd.after_help(text),
        Some((name, rest)) => cmd.mut_subcommand(*name, |sub| with_after_help(sub, rest, text)),
    }
}

/// Parses `std::env::args` with [`command`] (exits with status 2 on bad usage, 0 on `--help`).
pub fn parse() -> Cli {
    let matches = command().get_matches();
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    cli.command.run(cli.json)
}

/// Prints `value` as pretty JSON on stdout.
pub fn print_json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}
