//! `smartnic trace gen|stats`: synthetic traces with ground truth, and exact trace
//! statistics.
//!
//! Why here and thin: the work happens in [`crate::trace`]; this file only turns
//! command-line arguments into a [`GenConfig`] or a stats call and prints the result for
//! people (aligned text) or machines (`--json`, the same field names as the truth file).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use clap::{Args, Subcommand};
use serde::Serialize;

use crate::trace::gen::{generate_files, GenConfig, Latency, ShimConfig};
use crate::trace::stats::{compute_from, Keep, TraceStats};
use crate::trace::{Format, PacketReader, Totals};

#[derive(Debug, Subcommand)]
pub enum TraceCmd {
    /// Generate a seeded synthetic trace (pcap, nanosecond timestamps) and its exact
    /// ground truth (JSON).
    Gen(GenArgs),
    /// Exact statistics of a trace: packets, bytes, flows, non-IP and malformed frames,
    /// duration and the largest flows.
    Stats(StatsArgs),
}

#[derive(Debug, Args)]
pub struct GenArgs {
    /// Output pcap file (nanosecond timestamps, Ethernet, headers only captured).
    #[arg(short, long, value_name = "PCAP")]
    pub output: PathBuf,
    /// Ground-truth JSON file [default: the PCAP path followed by .truth.json].
    #[arg(long, value_name = "JSON")]
    pub truth: Option<PathBuf>,
    /// Also write the papers' 21-byte records (key + u64 little-endian ns) here.
    #[arg(long, value_name = "FILE")]
    pub records: Option<PathBuf>,
    /// Number of IP packets.
    #[arg(short = 'n', long, default_value_t = 100_000)]
    pub packets: u64,
    /// Number of flows; each gets at least one packet, so packets >= flows.
    #[arg(short, long, default_value_t = 10_000)]
    pub flows: u64,
    /// Zipf exponent of flow sizes: 0 = all equal, 1.0 = CAIDA-like, larger = more skewed.
    #[arg(short, long, default_value_t = 1.0)]
    pub skew: f64,
    /// Seed of the random generator; the same seed gives the same bytes.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Mean packet rate in packets per second (Poisson arrivals).
    #[arg(long, default_value_t = 1_000_000.0, value_name = "PPS")]
    pub rate: f64,
    /// Timestamp of the trace start, in ns since the Unix epoch.
    #[arg(long, default_value_t = 1_600_000_000_000_000_000, value_name = "NS")]
    pub start_ns: u64,
    /// Fraction of flows that are IPv6 (their keys fold to 13 bytes by the contract rule).
    #[arg(long, default_value_t = 0.0, value_name = "FRACTION")]
    pub ipv6: f64,
    /// Fraction of flows with VLAN tags (half of them double-tagged, 802.1ad + 802.1Q).
    #[arg(long, default_value_t = 0.0, value_name = "FRACTION")]
    pub vlan: f64,
    /// Probability of an extra ARP frame after each IP packet (counted as non-IP).
    #[arg(long, default_value_t = 0.0, value_name = "FRACTION")]
    pub non_ip: f64,
    /// Add the telemetry shim (EtherType 0x88B5) with an INT stack to every packet.
    #[arg(long)]
    pub shim: bool,
    /// Path length range of the INT stack, MIN-MAX or N (with --shim).
    #[arg(long, default_value = "2-5", value_parser = parse_hops, value_name = "MIN-MAX")]
    pub hops: (u8, u8),
    /// Number of switches; IDs are 1..=N, the lower half leaves, the upper half spines.
    #[arg(long, default_value_t = 64)]
    pub switches: u16,
    /// Per-hop latency: const:NS, exp:MEAN_NS or lognormal:MEAN_NS:SIGMA (each switch
    /// scales it by its own load factor in [0.5, 2)).
    #[arg(long, default_value = "exp:2000", value_name = "DIST")]
    pub latency: Latency,
}

/// Parses `MIN-MAX` or `N`.
fn parse_hops(s: &str) -> Result<(u8, u8), String> {
    let p = |v: &str| v.trim().parse::<u8>().map_err(|_| format!("`{v}` is not a hop count"));
    match s.split_once('-') {
        Some((a, b)) => Ok((p(a)?, p(b)?)),
        None => {
            let n = p(s)?;
            Ok((n, n))
        }
    }
}

impl GenArgs {
    pub fn config(&self) -> GenConfig {
        GenConfig {
            seed: self.seed,
            packets: self.packets,
            flows: self.flows,
            skew: self.skew,
            rate_pps: self.rate,
            start_ns: self.start_ns,
            ipv6: self.ipv6,
            vlan: self.vlan,
            non_ip: self.non_ip,
            shim: self.shim.then_some(ShimConfig {
                min_hops: self.hops.0,
                max_hops: self.hops.1,
                switches: self.switches,
                latency: self.latency,
            }),
        }
    }

    fn truth_path(&self) -> PathBuf {
        self.truth.clone().unwrap_or_else(|| {
            let mut s = self.output.clone().into_os_string();
            s.push(".truth.json");
            PathBuf::from(s)
        })
    }
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Trace file: pcap or pcapng (recognised by magic), or 21-byte records with
    /// --format records.
    pub file: PathBuf,
    /// How many of the largest flows (by packets) to list.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub top: usize,
    /// File format; `auto` recognises pcap and pcapng by their magic.
    #[arg(long, value_enum, default_value_t = Format::Auto)]
    pub format: Format,
    /// With --json, also print every flow (same records as the truth file's `flows`).
    #[arg(long)]
    pub all_flows: bool,
}

#[derive(Serialize)]
struct GenReport<'a> {
    pcap: String,
    truth: String,
    records: Option<String>,
    seconds: f64,
    totals: &'a Totals,
}

/// Runs a `trace` subcommand; `json` is the global `--json` flag.
pub fn run(cmd: TraceCmd, json: bool) -> anyhow::Result<()> {
    match cmd {
        TraceCmd::Gen(args) => gen(&args, json),
        TraceCmd::Stats(args) => stats(&args, json),
    }
}

fn gen(args: &GenArgs, json: bool) -> anyhow::Result<()> {
    let cfg = args.config();
    let truth_path = args.truth_path();
    let start = Instant::now();
    let truth = generate_files(&cfg, &args.output, &truth_path, args.records.as_deref())?;
    let report = GenReport {
        pcap: args.output.display().to_string(),
        truth: truth_path.display().to_string(),
        records: args.records.as_ref().map(|p| p.display().to_string()),
        seconds: start.elapsed().as_secs_f64(),
        totals: &truth.totals,
    };
    if json {
        return super::print_json(&report);
    }
    let t = &truth.totals;
    println!(
        "wrote {} packets ({} flows, {} non-IP frames, {:.3} s of traffic) to {} in {:.2} s",
        t.packets,
        t.flows,
        t.non_ip,
        t.duration_ns as f64 / 1e9,
        report.pcap,
        report.seconds
    );
    println!("ground truth: {}", report.truth);
    if let Some(r) = &report.records {
        println!("21-byte records: {r}");
    }
    Ok(())
}

/// Reads a trace into stats with records of the flows `keep` names, with a spinner on a
/// terminal.
pub fn compute_with_progress(path: &Path, format: Format, keep: Keep) -> anyhow::Result<TraceStats> {
    let mut reader = PacketReader::open_as(path, format)
        .with_context(|| format!("cannot read {} (try --format)", path.display()))?;
    let pb = super::progress::bar(None, "reading");
    let stats = compute_from(&mut reader, keep, |n| pb.set_position(n))
        .with_context(|| format!("{} is damaged; frames before the error were read", path.display()))?;
    pb.finish_and_clear();
    Ok(stats)
}

fn stats(args: &StatsArgs, json: bool) -> anyhow::Result<()> {
    let keep = if json && args.all_flows { Keep::All } else { Keep::Top(args.top) };
    let s = compute_with_progress(&args.file, args.format, keep)?;
    if json {
        return super::print_json(&s.report(args.top, args.all_flows));
    }
    let t = &s.totals;
    println!("file        {}", args.file.display());
    println!("packets     {}", t.packets);
    println!("bytes       {}", t.bytes);
    println!("flows       {}", t.flows);
    println!("non-IP      {}", t.non_ip);
    print!("malformed   {}", t.malformed);
    if !s.malformed_by_reason.is_empty() {
        let reasons: Vec<String> = s.malformed_by_reason.iter().map(|(k, v)| format!("{k} {v}")).collect();
        print!(" ({})", reasons.join(", "));
    }
    println!();
    println!("duration    {:.6} s", t.duration_ns as f64 / 1e9);
    if t.delay_ns > 0 {
        println!("mean delay  {:.1} ns (INT stack sum per packet)", t.delay_ns as f64 / t.packets as f64);
    }
    let top = s.report(args.top, false).top;
    if !top.is_empty() {
        println!();
        println!("{:>4}  {:>10}  {:>12}  {:>12}  flow", "rank", "packets", "bytes", "max gap ns");
        for (i, f) in top.iter().enumerate() {
            println!("{:>4}  {:>10}  {:>12}  {:>12}  {}", i + 1, f.packets, f.bytes, f.max_iat_ns, f.key);
        }
    }
    Ok(())
}
