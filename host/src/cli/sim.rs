//! `smartnic sim`: replay a trace through the simulated NIC and read every epoch out over
//! the driver, exactly as from a board.
//!
//! The simulated NIC is the Verilator model of the generated core, running in its own
//! process (`smartnic-sim`, built from `sim-tb`) and reached through the driver's stream
//! back end, so this binary carries no HDL toolchain and the readout code path is the
//! one a real device uses.

use super::progress::bar;
use anyhow::{bail, Context};
use clap::Args;
use serde::Serialize;
use smartnic_contract::geometry::InsertMode;
use smartnic_contract::regs::{block_type, tower};
use smartnic_contract::snapshot::source;
use smartnic_driver::access::RegisterAccess;
use smartnic_driver::blocks::DeviceMap;
use smartnic_driver::readout::{read_snapshot_to_file, ReadoutConfig};
use smartnic_driver::service::StreamBar;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Name of the simulator service binary, looked up next to `smartnic`.
pub const SIM_BINARY: &str = "smartnic-sim";

#[derive(Debug, Args)]
pub struct SimArgs {
    /// Trace to replay (pcap or pcapng).
    #[arg(long, short)]
    pub trace: PathBuf,
    /// IP packets per epoch: the driver swaps banks and reads the idle one out after each.
    #[arg(long, default_value_t = 100_000)]
    pub epoch_packets: u64,
    /// TowerSketch insertion mode written to the MODE register before replay.
    #[arg(long, value_parser = ["acu", "cm"], default_value = "acu")]
    pub mode: String,
    /// Directory for the snapshots (epoch-NNNNNN.snap).
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

#[derive(Debug, Serialize)]
pub struct SimReport {
    pub trace: String,
    pub packets: u64,
    pub epochs: Vec<EpochInfo>,
    /// Register reads per snapshot and the MMIO time they would take at 1 us each.
    pub reads_per_snapshot: u64,
    pub mmio_ms_per_snapshot: f64,
}

/// Environment variable naming the simulator binary (default: `smartnic-sim` next to the
/// running `smartnic`).
pub const SIM_ENV: &str = "SMARTNIC_SIM";

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
    StreamBar::spawn(cmd).with_context(|| format!("cannot start the simulated NIC {}", exe.display()))
}

pub fn run(args: &SimArgs, json: bool) -> anyhow::Result<()> {
    let report = replay(args)?;
    if json {
        return super::print_json(&report);
    }
    println!("{} packets replayed through the simulated NIC ({})", report.packets, report.trace);
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

/// Replays the trace epoch by epoch and writes one snapshot per epoch.
pub fn replay(args: &SimArgs) -> anyhow::Result<SimReport> {
    if args.epoch_packets == 0 {
        bail!("--epoch-packets must be at least 1");
    }
    std::fs::create_dir_all(&args.output)
        .with_context(|| format!("cannot create {}", args.output.display()))?;
    let mut dev = spawn_sim(Some(&args.trace))?;
    let map = DeviceMap::discover(&mut dev).context("the simulated NIC's register map")?;
    set_mode(&mut dev, &map, &args.mode)?;
    // The map records the insertion mode the snapshots will state: read it again.
    let map = DeviceMap::discover(&mut dev).context("the simulated NIC's register map")?;
    let total: u64 = dev.command("packets")?.trim().parse().context("simulator `packets` answer")?;
    let cfg = sim_readout_config();
    let pb = bar(Some(total), "replaying");
    let (mut sent, mut epochs, mut reads) = (0u64, Vec::new(), 0u64);
    while sent < total {
        let n = args.epoch_packets.min(total - sent);
        dev.command(&format!("replay {n}"))?;
        sent += n;
        let tmp = args.output.join("readout.partial");
        let (snap, st) = read_snapshot_to_file(&mut dev, &map, &cfg, &tmp)
            .context("readout failed; no snapshot written")?;
        let path = args.output.join(format!("epoch-{:06}.snap", snap.epoch));
        std::fs::rename(&tmp, &path)?;
        reads = st.reads;
        epochs.push(EpochInfo {
            path: path.display().to_string(),
            epoch: snap.epoch,
            packets: snap.packets,
            reads: st.reads,
            writes: st.writes,
        });
        pb.set_position(sent);
    }
    pb.finish_and_clear();
    Ok(SimReport {
        trace: args.trace.display().to_string(),
        packets: sent,
        epochs,
        reads_per_snapshot: reads,
        mmio_ms_per_snapshot: reads as f64 / 1000.0,
    })
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
