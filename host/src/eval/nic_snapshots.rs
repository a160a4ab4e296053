//! The per-switch accuracy lab answered from the simulated NIC's own snapshots: every
//! host's capture is replayed through the Verilator core (`smartnic-sim`) with the bank
//! swap at the lab's epoch split, each epoch is read out over the driver as from a board,
//! and the four tasks are answered from the snapshot files alone ([`nic_banks`]), the
//! same way [`super::per_switch::score`] answers them from the models.
//!
//! The model rows and these rows must agree on everything the NIC keeps in its banks
//! (heavy hitters, heavy changes, latency); inflated latency can only be lower here, by the
//! records the NIC's record buffer dropped between readouts.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use smartnic_contract::geometry::InsertMode;
use smartnic_driver::snapshot::{Section, Snapshot};

use super::per_switch::{capture_path, score_banks, Exact, NicBank, Point, Row, Streams};
use crate::simulator::{no_progress, replay, EpochPlan, ReplayConfig};
use crate::sketch::snapshot::{from_section, per_switch_state};
use crate::sketch::AnySketch;
use crate::trace::Packet;

/// Replays `host`'s capture (in `lab`, as [`Streams::from_lab_dir`] wrote it) through the
/// simulated NIC in `mode`, cut at the lab's epoch split; the two snapshots land in
/// `lab/nic/<host>/`.
pub fn replay_host(
    s: &Streams,
    lab: &Path,
    host: &str,
    packets: &[Packet],
    mode: InsertMode,
) -> anyhow::Result<[PathBuf; 2]> {
    let first = s.first_epoch_len(packets)? as u64;
    let cfg = ReplayConfig {
        trace: capture_path(lab, host),
        epochs: EpochPlan::CutAt(vec![first]),
        mode,
        output: lab.join("nic").join(host),
    };
    let r = replay(&cfg, no_progress).with_context(|| format!("the simulated NIC of {host}"))?;
    let sizes: Vec<u64> = r.epochs.iter().map(|e| e.packets).collect();
    let want = [first, packets.len() as u64 - first];
    if sizes != want {
        bail!("the simulated NIC of {host} read out epochs of {sizes:?} packets, not {want:?}");
    }
    Ok([PathBuf::from(&r.epochs[0].path), PathBuf::from(&r.epochs[1].path)])
}

/// One epoch bank from a NIC snapshot: its flow tower, latency tower, key table and
/// records. `p` is the configuration the NIC was built with; a snapshot of another
/// geometry is refused (its figures would be another row's).
pub fn nic_bank(path: &Path, p: &Point) -> anyhow::Result<NicBank> {
    let snap = Snapshot::read_file(path)?;
    let what = || format!("snapshot {}", path.display());
    // Only the tower is decoded (the SuMax section is not needed here).
    let (i, sec) = snap
        .sections
        .iter()
        .enumerate()
        .find(|(_, s)| matches!(s, Section::Tower { .. }))
        .with_context(|| format!("{} has no TowerSketch", what()))?;
    let AnySketch::Tower(tower) = from_section(i, sec).with_context(what)? else {
        unreachable!("a tower section decodes to a tower");
    };
    let ps = per_switch_state(&snap).with_context(what)?;
    let (Some(latency), Some(table), Some(records)) = (ps.latency, ps.table, ps.records) else {
        bail!("{} has no complete per-switch half (latency tower, key table, records)", what());
    };
    if tower.geometry() != &p.flow || latency.geometry() != &p.per_switch.latency {
        bail!("{} holds a geometry other than configuration {}'s", what(), p.label);
    }
    Ok(NicBank { tower, latency, table: table.table, records })
}

/// A NIC's two epoch banks from its two snapshots.
pub fn nic_banks(paths: &[PathBuf; 2], p: &Point) -> anyhow::Result<[NicBank; 2]> {
    Ok([nic_bank(&paths[0], p)?, nic_bank(&paths[1], p)?])
}

/// The row of the simulated NICs' own snapshots in `mode`: every host of `s` replayed from
/// `lab` ([`replay_host`]), its two snapshots read back ([`nic_banks`]) and scored against
/// `x`; `on_host` hears each host's name before its replay (a progress bar's message).
pub fn score(
    s: &Streams,
    x: &Exact,
    lab: &Path,
    mode: InsertMode,
    mut on_host: impl FnMut(&str),
) -> anyhow::Result<Row> {
    let mut p = Point::nic(mode);
    p.label = format!("{} (NIC snapshots)", p.label);
    score_banks(s, x, &p, |host, packets| {
        on_host(host);
        nic_banks(&replay_host(s, lab, host, packets, mode)?, &p)
    })
}
