//! `smartnic snapshot export`: snapshot files to an IPFIX collector
//! ([`crate::export::ipfix`] says what is sent) and/or into a fleet's Parquet tables
//! ([`crate::export::parquet`]), once.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::Args;
use serde::Serialize;
use smartnic_contract::FlowKey;
use smartnic_driver::snapshot::Snapshot;

use super::report::read_candidates;
use crate::export::ipfix::{ExportOptions, ExportStats, IpfixExporter, DEFAULT_MTU};
use crate::export::parquet::{EpochRows, Health, ParquetStore};

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Snapshot files, exported in the order given (one sequence of messages).
    #[arg(required = true, value_name = "SNAPSHOT")]
    pub snapshots: Vec<PathBuf>,
    /// The IPFIX collector's UDP address, HOST:PORT.
    #[arg(long, value_name = "HOST:PORT", required_unless_present = "parquet")]
    pub ipfix: Option<String>,
    /// Write each snapshot's flows, hops and health rows as Parquet under DIR (the layout
    /// `smartnic fleet query` reads).
    #[arg(long, value_name = "DIR")]
    pub parquet: Option<PathBuf>,
    /// The device name of the Parquet rows (default: the name of each snapshot's directory,
    /// which is the device under `smartnic collect --dir`).
    #[arg(long, value_name = "NAME")]
    pub device: Option<String>,
    /// Observation domain ID in the message headers.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub domain: u32,
    /// Largest IPFIX message (UDP payload) in bytes.
    #[arg(long, default_value_t = DEFAULT_MTU, value_name = "BYTES")]
    pub mtu: usize,
    /// File of flow keys to export, one per line (default: the flows of each snapshot's
    /// key table).
    #[arg(long, value_name = "FILE")]
    pub candidates: Option<PathBuf>,
}

/// What was sent, for `--json`.
#[derive(Serialize)]
struct Sent {
    collector: String,
    domain: u32,
    snapshots: Vec<SentFile>,
}

#[derive(Serialize)]
struct SentFile {
    snapshot: String,
    #[serde(flatten)]
    stats: ExportStats,
}

/// The collector's address: the first address `HOST:PORT` resolves to.
fn collector(s: &str) -> anyhow::Result<SocketAddr> {
    let mut addrs = s
        .to_socket_addrs()
        .with_context(|| format!("--ipfix {s}: not a HOST:PORT address (e.g. 127.0.0.1:4739)"))?;
    match addrs.next() {
        Some(a) => Ok(a),
        None => bail!("--ipfix {s}: the name resolves to no address"),
    }
}

pub fn run(args: &ExportArgs, json: bool) -> anyhow::Result<()> {
    let candidates = args.candidates.as_deref().map(read_candidates).transpose()?;
    // Every file is read before anything is sent: a bad file stops the export whole.
    let snaps = args
        .snapshots
        .iter()
        .map(|p| Snapshot::read_file(p).with_context(|| format!("cannot use snapshot {}", p.display())))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut out = serde_json::Map::new();
    if let Some(dir) = &args.parquet {
        let written = to_parquet(args, dir, &snaps, candidates.as_deref())?;
        out.insert("parquet".into(), serde_json::to_value(written)?);
    }
    if let Some(ipfix) = &args.ipfix {
        out.insert(
            "ipfix".into(),
            serde_json::to_value(to_ipfix(args, ipfix, &snaps, candidates.as_deref(), json)?)?,
        );
    }
    if json {
        return super::print_json(&out);
    }
    Ok(())
}

/// What the Parquet export wrote, for `--json`.
#[derive(Serialize)]
struct WrittenFile {
    snapshot: String,
    device: String,
    files: Vec<String>,
}

fn to_parquet(
    args: &ExportArgs,
    dir: &Path,
    snaps: &[Snapshot],
    candidates: Option<&[FlowKey]>,
) -> anyhow::Result<Vec<WrittenFile>> {
    let store = ParquetStore::new(dir);
    let mut written = Vec::new();
    for (path, snap) in args.snapshots.iter().zip(snaps) {
        let device = args.device.clone().unwrap_or_else(|| device_of(path));
        let name = path.display().to_string();
        let rows = EpochRows::from_snapshot(&device, snap, candidates, Health::default())
            .with_context(|| format!("reading {name}'s sections"))?;
        let files = store.write_epoch(&rows).with_context(|| format!("writing {name} as Parquet"))?;
        eprintln!(
            "{name}: epoch {} of {device}: {} Parquet files under {}",
            snap.epoch,
            files.len(),
            dir.display()
        );
        let files = files.iter().map(|f| f.display().to_string()).collect();
        written.push(WrittenFile { snapshot: name, device, files });
    }
    Ok(written)
}

/// A snapshot's device: its directory's name (`collect --dir` keeps DIR/<device>/), else
/// `file`.
fn device_of(path: &Path) -> String {
    let dir = path.parent().and_then(|p| p.canonicalize().ok());
    dir.as_deref().and_then(Path::file_name).map_or("file".into(), |n| n.to_string_lossy().into_owned())
}

fn to_ipfix(
    args: &ExportArgs,
    ipfix: &str,
    snaps: &[Snapshot],
    candidates: Option<&[FlowKey]>,
    json: bool,
) -> anyhow::Result<Sent> {
    let to = collector(ipfix)?;
    let mut exporter = IpfixExporter::new(to, args.domain, ExportOptions { mtu: args.mtu })?;
    let mut sent = Sent { collector: to.to_string(), domain: args.domain, snapshots: Vec::new() };
    for (path, snap) in args.snapshots.iter().zip(snaps) {
        let name = path.display().to_string();
        let stats = exporter
            .export_snapshot(snap, candidates)
            .with_context(|| format!("exporting {name} to {to}"))?;
        for n in &stats.notes {
            eprintln!("{name}: note: {n}");
        }
        if !json {
            print_line(&name, &stats, to);
        }
        sent.snapshots.push(SentFile { snapshot: name, stats });
    }
    Ok(sent)
}

fn print_line(name: &str, s: &ExportStats, to: SocketAddr) {
    println!(
        "{name}: epoch {}, {} flow + {} hop records in {} messages ({} bytes) to {to}, sequence {}..{}",
        s.epoch, s.flow_records, s.hop_records, s.messages, s.bytes, s.first_sequence, s.next_sequence
    );
}
