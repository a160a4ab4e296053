//! `smartnic sim run`: replay a trace through the simulated NIC and read every epoch out over
//! the driver, exactly as from a board. The replay itself is [`crate::simulator`]; this
//! module parses the arguments and prints the report.

use super::progress::bar;
use crate::simulator::{replay, EpochPlan, ReplayConfig};
use clap::Args;
use smartnic_contract::geometry::InsertMode;
use std::path::PathBuf;

/// `device --device sim[:TRACE]` opens and reads the simulator through these names.
pub(super) use crate::simulator::{sim_readout_config, spawn_sim};

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

impl SimArgs {
    /// The replay these arguments ask for.
    pub fn config(&self) -> ReplayConfig {
        ReplayConfig {
            trace: self.trace.clone(),
            epochs: EpochPlan::Every(self.epoch_packets),
            mode: if self.mode == "cm" { InsertMode::Cm } else { InsertMode::Acu },
            output: self.output.clone(),
        }
    }
}

pub fn run(args: &SimArgs, json: bool) -> anyhow::Result<()> {
    let report = replay(&args.config(), bar)?;
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
