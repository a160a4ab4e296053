//! `smartnic sim run`: replay a trace through the simulated NIC and read every epoch out over
//! the driver, exactly as from a board.
//!
//! The simulated NIC is the Verilator model of the generated core, running in its own
//! process (`smartnic-sim`, built from `sim-tb`) and reached through the driver's stream
//! back end, so this binary carries no HDL toolchain and the readout code path is the
//! one a real device uses.

use super::manifest::{self, EpochEntry, Manifest};
use super::progress::bar;
use anyhow::{bail, Context};
use clap::Args;
use serde::Serialize;
use smartnic_contract::geometry::InsertMode;
use smartnic_contract::regs::{block_type, stats, tower};
use smartnic_contract::snapshot::source;
use smartnic_driver::access::RegisterAccess;
use smartnic_driver::blocks::DeviceMap;
use smartnic_driver::readout::ReadoutConfig;
use smartnic_driver::service::{StreamBar, DEFAULT_DEADLINE};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Name of the simulator service binary, looked up next to `smartnic`.
pub const SIM_BINARY: &str = "smartnic-sim";

#[derive(Debug, Args)]
pub struct SimArgs {
    /// Trace to replay (pcap or pcapng).
    #[arg(long, short)]
    pub trace: PathBuf,
    /// IP packets per epoch: the driver swaps banks and reads the idle one out after each
    /// (frames after the last IP packet go into the last epoch; a trace without IP packets
    /// gives one epoch of 0 packets).
    #[arg(long, default_value_t = 100_000)]
    pub epoch_packets: u64,
    /// TowerSketch insertion mode written to the MODE register before replay.
    #[arg(long, value_parser = ["acu", "cm"], default_value = "acu")]
    pub mode: String,
    /// Directory for the snapshots (epoch-NNNNNN.snap) and their manifest.json.
    #[arg(long, short)]
    pub output: PathBuf,
}

#[derive(Debug, Serialize)]
pub struct EpochInfo {
    pub path: String,
    pub epoch: u64,
    pub packets: u64,
    pub reads: u64,
    pub writes: u64,
}

/// The NIC's frame counters (statistics block) after the replay.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FrameCounts {
    pub frames: u64,
    pub sketched: u64,
    pub bytes: u64,
    pub non_ip: u64,
    pub malformed: u64,
}

#[derive(Debug, Serialize)]
pub struct SimReport {
    pub trace: String,
    /// IP packets of the trace as the software parser counts them (what was replayed).
    pub packets: u64,
    /// What the NIC counted.
    pub nic: FrameCounts,
    pub epochs: Vec<EpochInfo>,
    /// Register reads per snapshot and the MMIO time they would take at 1 us each.
    pub reads_per_snapshot: u64,
    pub mmio_ms_per_snapshot: f64,
}

/// Environment variable naming the simulator binary (default: `smartnic-sim` next to the
/// running `smartnic`).
pub const SIM_ENV: &str = "SMARTNIC_SIM";

/// Environment variable: seconds the CLI waits for any answer of the simulator before it
/// calls it stalled (default `smartnic_driver::service::DEFAULT_DEADLINE`; a working
/// service sends keepalives while it simulates, so only a stuck one gets there).
pub const DEADLINE_ENV: &str = "SMARTNIC_SIM_DEADLINE";

/// The deadline [`DEADLINE_ENV`] asks for, or the default.
fn sim_deadline() -> anyhow::Result<Duration> {
    match std::env::var(DEADLINE_ENV) {
        Err(_) => Ok(DEFAULT_DEADLINE),
        Ok(v) => match v.trim().parse::<f64>() {
            Ok(secs) if secs > 0.0 && secs.is_finite() => Ok(Duration::from_secs_f64(secs)),
            _ => bail!("{DEADLINE_ENV}={v} is not a number of seconds above 0"),
        },
    }
}

/// Starts the simulator service, with `trace` loaded into its packet source if given.
pub fn spawn_sim(trace: Option<&Path>) -> anyhow::Result<StreamBar> {
    let exe = match std::env::var_os(SIM_ENV) {
        Some(p) => PathBuf::from(p),
        None => std::env::current_exe()?.with_file_name(SIM_BINARY),
    };
    if !exe.exists() {
        bail!(
            "the simulated NIC `{}` is not built; run `cargo build --release -p smartnic-sim-tb --bin {SIM_BINARY}` \
             (./scripts/demo does this)",
            exe.display()
        );
    }
    let mut cmd = Command::new(&exe);
    if let Some(t) = trace {
        cmd.arg("--trace").arg(t);
    }
    StreamBar::spawn_with_deadline(cmd, sim_deadline()?)
        .with_context(|| format!("cannot start the simulated NIC {}", exe.display()))
}

pub fn run(args: &SimArgs, json: bool) -> anyhow::Result<()> {
    let report = replay(args)?;
    if json {
        return super::print_json(&report);
    }
    let n = &report.nic;
    println!(
        "{} packets replayed through the simulated NIC ({}): {} frames, {} sketched, {} non-IP, {} malformed",
        report.packets, report.trace, n.frames, n.sketched, n.non_ip, n.malformed
    );
    for e in &report.epochs {
        println!(
            "epoch {:>4}: {:>9} packets -> {} ({} reads, {} writes)",
            e.epoch, e.packets, e.path, e.reads, e.writes
        );
    }
    println!(
        "readout: {} register reads per snapshot, ~{:.0} ms of MMIO at 1 us per read",
        report.reads_per_snapshot, report.mmio_ms_per_snapshot
    );
    Ok(())
}

/// Replays the trace epoch by epoch and writes one snapshot per epoch (at least one), then
/// the manifest.
pub fn replay(args: &SimArgs) -> anyhow::Result<SimReport> {
    if args.epoch_packets == 0 {
        bail!("--epoch-packets must be at least 1");
    }
    std::fs::create_dir_all(&args.output)
        .with_context(|| format!("cannot create {}", args.output.display()))?;
    manifest::remove_stale(&args.output)?;
    let mut dev = spawn_sim(Some(&args.trace))?;
    let map = DeviceMap::discover(&mut dev).context("the simulated NIC's register map")?;
    set_mode(&mut dev, &map, &args.mode)?;
    // The map records the insertion mode the snapshots will state: read it again.
    let map = DeviceMap::discover(&mut dev).context("the simulated NIC's register map")?;
    let total: u64 = dev.command("packets")?.trim().parse().context("simulator `packets` answer")?;
    let cfg = sim_readout_config();
    let pb = bar(Some(total), "replaying");
    let (mut sent, mut epochs) = (0u64, Vec::new());
    // The last `replay` also drives the frames after the last IP packet; a trace without
    // IP packets is one epoch of them.
    loop {
        let n = args.epoch_packets.min(total - sent);
        dev.command(&format!("replay {n}"))?;
        sent += n;
        epochs.push(read_epoch(&mut dev, &map, &cfg, &args.output)?);
        pb.set_position(sent);
        if sent == total {
            break;
        }
    }
    pb.finish_and_clear();
    let nic = frame_counts(&mut dev, &map)?;
    let reads = epochs.last().map_or(0, |e: &EpochInfo| e.reads);
    let report = SimReport {
        trace: args.trace.display().to_string(),
        packets: sent,
        nic,
        epochs,
        reads_per_snapshot: reads,
        mmio_ms_per_snapshot: reads as f64 / 1000.0,
    };
    manifest::write(&args.output, &sim_manifest(&report, args.epoch_packets))?;
    Ok(report)
}

/// Swaps banks, reads the idle one into `dir/epoch-NNNNNN.snap`.
fn read_epoch(
    dev: &mut StreamBar,
    map: &DeviceMap,
    cfg: &ReadoutConfig,
    dir: &Path,
) -> anyhow::Result<EpochInfo> {
    let f = super::device::read_epoch_file(dev, map, cfg, dir)?;
    Ok(EpochInfo {
        path: f.path.display().to_string(),
        epoch: f.snapshot.epoch,
        packets: f.snapshot.packets,
        reads: f.stats.reads,
        writes: f.stats.writes,
    })
}

/// The NIC's frame counters (zero when the bitstream has no statistics block).
fn frame_counts(dev: &mut StreamBar, map: &DeviceMap) -> anyhow::Result<FrameCounts> {
    let Some(base) = map.stats else { return Ok(FrameCounts::default()) };
    let mut r = |off: u32| dev.read64(base + off).context("the simulated NIC's frame counters");
    Ok(FrameCounts {
        frames: r(stats::FRAMES)?,
        sketched: r(stats::SKETCHED)?,
        bytes: r(stats::BYTES)?,
        non_ip: r(stats::NON_IP)?,
        malformed: r(stats::MALFORMED)?,
    })
}

/// The manifest of a complete replay (frame counts as the NIC counted them).
fn sim_manifest(r: &SimReport, epoch_packets: u64) -> Manifest {
    Manifest {
        complete: true,
        trace: r.trace.clone(),
        epoch_packets,
        packets: r.epochs.iter().map(|e| e.packets).sum(),
        non_ip: r.nic.non_ip,
        malformed: r.nic.malformed,
        epochs: r
            .epochs
            .iter()
            .map(|e| EpochEntry {
                file: manifest::file_name(Path::new(&e.path)),
                epoch: e.epoch,
                packets: e.packets,
            })
            .collect(),
    }
}

/// Readout settings for the simulator: its clock only runs while registers are accessed,
/// so a 65,536-clock clear sweep takes thousands of STATUS polls over the service pipe;
/// allow far longer than the 1 s a board needs.
pub fn sim_readout_config() -> ReadoutConfig {
    ReadoutConfig {
        source: source::SIMULATOR,
        poll_timeout: std::time::Duration::from_secs(300),
        ..ReadoutConfig::default()
    }
}

fn set_mode(dev: &mut StreamBar, map: &DeviceMap, mode: &str) -> anyhow::Result<()> {
    let m = if mode == "cm" { InsertMode::Cm } else { InsertMode::Acu };
    let base = map.blocks.iter().find(|b| b.ty == block_type::TOWER).context("no TowerSketch block")?.offset;
    dev.write32(base + tower::MODE, m as u32)?;
    let back = dev.read32(base + tower::MODE)?;
    if back != m as u32 {
        bail!("the simulated NIC kept MODE {back} after writing {}", m as u32);
    }
    Ok(())
}
