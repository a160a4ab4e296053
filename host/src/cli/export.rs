//! `smartnic snapshot export`: snapshot files to an IPFIX collector, once
//! ([`crate::export::ipfix`] says what is sent).

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::Args;
use serde::Serialize;
use smartnic_driver::snapshot::Snapshot;

use super::report::read_candidates;
use crate::export::ipfix::{ExportOptions, ExportStats, IpfixExporter, DEFAULT_MTU};

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Snapshot files, exported in the order given (one sequence of messages).
    #[arg(required = true, value_name = "SNAPSHOT")]
    pub snapshots: Vec<PathBuf>,
    /// The IPFIX collector's UDP address, HOST:PORT.
    #[arg(long, value_name = "HOST:PORT")]
    pub ipfix: String,
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
    let to = collector(&args.ipfix)?;
    let candidates = args.candidates.as_deref().map(read_candidates).transpose()?;
    // Every file is read before anything is sent: a bad file stops the export whole.
    let snaps = args
        .snapshots
        .iter()
        .map(|p| Snapshot::read_file(p).with_context(|| format!("cannot use snapshot {}", p.display())))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut exporter = IpfixExporter::new(to, args.domain, ExportOptions { mtu: args.mtu })?;
    let mut sent = Sent { collector: to.to_string(), domain: args.domain, snapshots: Vec::new() };
    for (path, snap) in args.snapshots.iter().zip(&snaps) {
        let name = path.display().to_string();
        let stats = exporter
            .export_snapshot(snap, candidates.as_deref())
            .with_context(|| format!("exporting {name} to {to}"))?;
        for n in &stats.notes {
            eprintln!("{name}: note: {n}");
        }
        if !json {
            print_line(&name, &stats, to);
        }
        sent.snapshots.push(SentFile { snapshot: name, stats });
    }
    if json {
        return super::print_json(&sent);
    }
    Ok(())
}

fn print_line(name: &str, s: &ExportStats, to: SocketAddr) {
    println!(
        "{name}: epoch {}, {} flow + {} hop records in {} messages ({} bytes) to {to}, sequence {}..{}",
        s.epoch, s.flow_records, s.hop_records, s.messages, s.bytes, s.first_sequence, s.next_sequence
    );
}
