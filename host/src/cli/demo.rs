//! `smartnic demo`: the main job end to end, as a network story. A k = 4 fat-tree of
//! switches running the P4 twins carries web-search traffic with a blackhole on a core
//! switch and one congested uplink (the network lab); every host's NIC, simulated by the
//! Verilator model of the generated core in the `smartnic-sim` service, records what it
//! received, and the driver reads every epoch out exactly as from a board. Each snapshot
//! is checked against the bit-exact software sketches over the same packets; the report
//! shows what the NICs saw (flows that came up short, path latencies) beside the lab's
//! exact ground truth. An epoch whose counters differ from the model fails the demo
//! (exit 1) once the report is printed.
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
    /// Directory for the lab's captures and truth, and the NICs' snapshots.
    #[arg(long, short, default_value = "out/demo")]
    pub out: PathBuf,
    /// Packets the hosts send in total.
    #[arg(long, default_value_t = 60_000)]
    pub packets: u64,
    /// Offered load per host, a fraction of its 10 Gb/s link.
    #[arg(long, default_value_t = 0.5)]
    pub load: f64,
    /// IP packets per epoch at each NIC (the driver swaps banks and reads out after each).
    #[arg(long, default_value_t = 2_500)]
    pub epoch_packets: u64,
    /// Seed of the network lab (same seed, same run).
    #[arg(long, default_value_t = 2)]
    pub seed: u64,
    /// Rows in each table of the report.
    #[arg(long, default_value_t = 8)]
    pub top: usize,
    /// Simulate only the NICs of the N hosts that received the most packets (default: all 16).
    #[arg(long, value_name = "N")]
    pub hosts: Option<usize>,
    /// Run the software pipeline only (no simulated NIC).
    #[arg(long)]
    pub software: bool,
}

impl From<DemoArgs> for DemoConfig {
    fn from(a: DemoArgs) -> Self {
        DemoConfig {
            out: a.out,
            packets: a.packets,
            load: a.load,
            epoch_packets: a.epoch_packets,
            seed: a.seed,
            top: a.top,
            software: a.software,
            hosts: a.hosts,
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
    println!("  network  {}", r.topology);
    println!("  faults   {}", r.faults.join(", "));
    println!(
        "  traffic  {} packets sent, {} received, {} lost (captures in {}/hosts, truth {})",
        r.packets_sent, r.packets_received, r.packets_dropped, r.lab, r.truth
    );
    for (place, n) in &r.drops {
        println!("           lost at {place}: {n}");
    }
    print_hosts(r);
    println!(
        "\nflows that lost packets: {} (to the simulated hosts); the receiving NICs counted {} of them short of what was sent:",
        r.lossy_flows, r.lossy_flows_seen_short
    );
    println!("  {:<44} {:<8} {:>6} {:>8} {:>6}  lost at (truth)", "flow", "to", "sent", "received", "NIC");
    for l in &r.losses {
        println!(
            "  {:<44} {:<8} {:>6} {:>8} {:>6}  {}",
            l.flow,
            l.dst,
            l.sent,
            l.received,
            l.nic_packets,
            l.lost_at.join(", ")
        );
    }
    println!(
        "\npath latency seen by the NICs (SuMax delay bins over the INT stacks): median p50 {:.1} us for flows across the congested link, {:.1} us for the others;\n\
         per switch: the NIC's per-switch half (its latency tower's average hop latency per flow and switch, \
         its inflated-latency records)",
        r.congested_p50_us, r.other_p50_us
    );
    println!(
        "  {:<44} {:>7} {:>9} {:>9} {:>12}  congested link",
        "flow", "packets", "NIC p50", "NIC p99", "truth mean"
    );
    for s in &r.slowest {
        println!(
            "  {:<44} {:>7} {:>7.1}us {:>7.1}us {:>10.1}us  {}",
            s.flow,
            s.packets,
            s.nic_p50_us,
            s.nic_p99_us,
            s.truth_mean_us,
            if s.crosses_congested_link { "yes" } else { "no" }
        );
        print_switches(s);
    }
}

/// A slow flow's path switch by switch: the per-switch half's average hop latency (truth
/// beside it) and where its latency inflated.
fn print_switches(s: &crate::demo::LatencyRow) {
    let hops: Vec<String> = s
        .per_switch
        .iter()
        .map(|h| {
            let inflated = if h.inflated > 0 { format!(", {} inflated", h.inflated) } else { String::new() };
            format!("{} {:.1}us ({:.1}{inflated})", h.switch, h.nic_avg_us, h.truth_avg_us)
        })
        .collect();
    if !hops.is_empty() {
        println!("      per switch, NIC (exact): {}", hops.join(" > "));
    }
    if let Some(at) = &s.inflated_at {
        println!("      latency inflated most at {at} (of the switches averaging >= 1 us)");
    }
}

fn print_hosts(r: &DemoReport) {
    println!("\nNICs (every epoch's counters compared with the bit-exact software sketches over the same packets):");
    println!(
        "  {:<8} {:>8} {:>6} {:>7}  {:<10} {:<10} {:<10} {:>10} {:>9}",
        "host", "packets", "flows", "epochs", "tower", "sumax", "per-switch", "tower ARE", "records"
    );
    let verdict = |all: bool| if all { "equal" } else { "DIFFERS" };
    for h in &r.hosts {
        let are = h.epochs.iter().map(|e| e.tower_are).fold(0.0, f64::max);
        let half = if h.epochs.iter().any(|e| e.per_switch_equal.is_none()) {
            "model"
        } else {
            verdict(h.epochs.iter().all(|e| e.per_switch_equal == Some(true)))
        };
        let (rec, model): (u64, u64) =
            h.epochs.iter().fold((0, 0), |(a, b), e| (a + e.records, b + e.records_model));
        println!(
            "  {:<8} {:>8} {:>6} {:>7}  {:<10} {:<10} {:<10} {:>10.4} {:>9}",
            h.host,
            h.packets,
            h.flows,
            h.epochs.len(),
            verdict(h.epochs.iter().all(|e| e.tower_equal)),
            verdict(h.epochs.iter().all(|e| e.sumax_equal)),
            half,
            are,
            format!("{rec}/{model}")
        );
    }
    println!(
        "  records: inflated-latency records the NIC delivered on its record ring / the model's (fewer \
         only if the NIC's record buffer filled: a host that stopped taking them)"
    );
    if let Some(reads) = r.reads_per_snapshot {
        println!(
            "  readout: {reads} register reads per snapshot (~{:.0} ms of MMIO at 1 us per read)",
            reads as f64 / 1e3
        );
    }
}
