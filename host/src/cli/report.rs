//! `smartnic snapshot report SNAPSHOT`: every task the snapshot's sketches can answer from their
//! counters alone (cardinality, flow-size distribution, entropy, SuMax's delay histogram),
//! plus per-flow answers (top flows, heavy hitters, delays, inter-arrival times) for
//! candidate keys: a sketch stores counters, not flow keys, so it can size any flow it is
//! asked about but cannot list flows by itself. The candidates are the `--candidates` file,
//! or else the flows of the snapshot's own key table (the NIC's per-switch half).
//!
//! A snapshot with per-switch sections also answers SketchINT's global tasks from itself
//! alone ([`per_switch`]): heavy hitters with their paths, heavy hitters per switch,
//! latency per (flow, switch), inflated-latency pairs, and with `--against OLDER` the heavy
//! changes per switch. The flows are sized by the snapshot's first TowerSketch section (the
//! NIC's flow tower), or its first flow sketch of any kind.

mod per_switch;

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::Args;
use serde::Serialize;
use smartnic_contract::FlowKey;
use smartnic_driver::snapshot::Snapshot;

use crate::sketch::snapshot::{per_switch_state, sketches_of, PerSwitchState};
use crate::sketch::AnySketch;
use crate::tasks::per_switch::{CHANGE_THRESHOLD, HEAVY_THRESHOLD};
use crate::tasks::{cardinality, distribution, entropy, flow_size, heavy, sumax};

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Snapshot file (from `sketch run` or a NIC readout).
    pub snapshot: PathBuf,
    /// Flows listed (largest first) when candidate keys are given.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// File of candidate flow keys, one per line: enables top flows and heavy hitters
    /// (default: the flows of the snapshot's key table, when it has one).
    #[arg(long, value_name = "FILE")]
    pub candidates: Option<PathBuf>,
    /// Heavy-hitter threshold in packets (among the candidates).
    #[arg(long, default_value_t = 500)]
    pub hh_threshold: u64,
    /// Per-switch heavy hitters: flows above N packets are heavy at every switch of their path.
    #[arg(long, default_value_t = HEAVY_THRESHOLD, value_name = "N")]
    pub switch_threshold: u64,
    /// An older snapshot of the same NIC: per-switch heavy changes from it to SNAPSHOT.
    #[arg(long, value_name = "OLDER")]
    pub against: Option<PathBuf>,
    /// Per-switch heavy changes: a flow whose size changed by more than N packets.
    #[arg(long, default_value_t = CHANGE_THRESHOLD, value_name = "N")]
    pub change_threshold: u64,
    /// MRAC EM iterations.
    #[arg(long, default_value_t = distribution::DEFAULT_ITERATIONS)]
    pub em_iterations: usize,
}

#[derive(Debug, Serialize)]
struct FlowLine {
    flow: String,
    packets: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    delay_hist: Option<Vec<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_interarrival_ns: Option<u64>,
}

#[derive(Debug, Serialize)]
struct SectionReport {
    sketch: String,
    geometry: String,
    memory_bytes: u64,
    cardinality: cardinality::Cardinality,
    /// Estimated flows per power-of-two size class `[lo, 2 lo)`.
    distribution: Vec<(u64, f64)>,
    distribution_flows: f64,
    entropy_bits: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    delay: Option<sumax::DelaySummary>,
    /// Present when candidate keys were given.
    #[serde(skip_serializing_if = "Option::is_none")]
    top_flows: Option<Vec<FlowLine>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    heavy_hitters: Option<usize>,
}

#[derive(Debug, Serialize)]
struct Report {
    snapshot: String,
    epoch: u64,
    packets: u64,
    /// How many candidate keys the per-flow answers used.
    candidates: Option<usize>,
    /// Where they came from: `"file"` (`--candidates`) or `"key table"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    candidates_from: Option<&'static str>,
    sections: Vec<SectionReport>,
    /// SketchINT's per-switch tasks (see `per_switch`); absent without per-switch sections.
    #[serde(skip_serializing_if = "Option::is_none")]
    per_switch: Option<per_switch::PerSwitchReport>,
}

/// Reads a candidate-keys file: the first whitespace-separated token of every non-empty,
/// non-comment line must be a flow key.
pub fn read_candidates(path: &Path) -> anyhow::Result<Vec<FlowKey>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let tok = line.split_whitespace().next().unwrap_or("");
        match FlowKey::parse(tok) {
            Some(k) => out.push(k),
            None => bail!(
                "{}:{}: `{tok}` is not a flow key (expected e.g. 10.0.0.1:1234>10.0.0.2:80/6)",
                path.display(),
                n + 1
            ),
        }
    }
    Ok(out)
}

/// A snapshot read for the report: its flow sketches and its per-switch half.
struct Loaded {
    name: String,
    snap: Snapshot,
    sketches: Vec<AnySketch>,
    state: PerSwitchState,
}

impl Loaded {
    fn read(path: &Path) -> anyhow::Result<Self> {
        let name = path.display().to_string();
        let snap = Snapshot::read_file(path).with_context(|| format!("cannot use snapshot {name}"))?;
        let sketches = sketches_of(&snap)?;
        let state = per_switch_state(&snap).with_context(|| format!("snapshot {name}"))?;
        Ok(Loaded { name, snap, sketches, state })
    }

    fn sizes(&self) -> Option<&AnySketch> {
        flow_size::sizing_sketch(&self.sketches)
    }

    fn epoch(&self) -> per_switch::Epoch<'_> {
        per_switch::Epoch { name: &self.name, state: &self.state, sizes: self.sizes() }
    }
}

/// The candidate keys and where they came from: the file, else the key table's flows.
fn candidates(
    args: &ReportArgs,
    state: &PerSwitchState,
) -> anyhow::Result<Option<(Vec<FlowKey>, &'static str)>> {
    if let Some(p) = &args.candidates {
        return Ok(Some((read_candidates(p)?, "file")));
    }
    Ok(state.table.as_ref().map(|t| (t.table.entries().map(|e| e.key).collect(), "key table")))
}

pub fn run(args: ReportArgs, json: bool) -> anyhow::Result<()> {
    let now = Loaded::read(&args.snapshot)?;
    let older = args.against.as_deref().map(Loaded::read).transpose()?;
    let candidates = candidates(&args, &now.state)?;
    let keys = candidates.as_ref().map(|c| c.0.as_slice());
    let sections = now.sketches.iter().map(|sketch| section(sketch, keys, &args)).collect();
    let per_switch = if now.state.is_empty() && older.is_none() {
        None
    } else {
        let opt = per_switch::Options {
            hh_threshold: args.hh_threshold,
            switch_threshold: args.switch_threshold,
            change_threshold: args.change_threshold,
            top: args.top,
        };
        Some(per_switch::report(&now.epoch(), older.as_ref().map(Loaded::epoch).as_ref(), &opt)?)
    };
    let report = Report {
        snapshot: now.name.clone(),
        epoch: now.snap.epoch,
        packets: now.snap.packets,
        candidates: candidates.as_ref().map(|c| c.0.len()),
        candidates_from: candidates.as_ref().map(|c| c.1),
        sections,
        per_switch,
    };
    if json {
        return super::print_json(&report);
    }
    print_text(&report, &args);
    if let Some(p) = &report.per_switch {
        per_switch::print_text(p, args.top);
    }
    Ok(())
}

fn section(sketch: &AnySketch, candidates: Option<&[FlowKey]>, args: &ReportArgs) -> SectionReport {
    let (name, geometry) = match sketch {
        AnySketch::Tower(t) => (
            format!("tower-{}", t.mode().name()),
            t.geometry()
                .arrays
                .iter()
                .map(|a| format!("{}x{}b", a.depth, a.width))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        AnySketch::SuMax(s) => {
            let g = s.geometry();
            (
                "sumax".to_string(),
                format!("d={} x {} buckets, {} delay cells", g.hashes.len(), g.depth, g.delay_cells),
            )
        }
        AnySketch::Elastic(_) => ("elastic".to_string(), String::new()),
    };
    let dist = distribution::estimate(sketch, args.em_iterations);
    let top_flows = candidates.map(|c| {
        let mut flows: Vec<(FlowKey, u64)> = c.iter().map(|k| (*k, flow_size::estimate(sketch, k))).collect();
        flows.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        flows.dedup_by_key(|f| f.0);
        flows
            .into_iter()
            .take(args.top)
            .map(|(k, n)| match sketch {
                AnySketch::SuMax(s) => {
                    let e = s.query(&k);
                    FlowLine {
                        flow: k.to_string(),
                        packets: n,
                        delay_hist: Some(e.delay_hist),
                        max_interarrival_ns: Some(sumax::units_to_ns(s.geometry(), e.max_interval)),
                    }
                }
                _ => {
                    FlowLine { flow: k.to_string(), packets: n, delay_hist: None, max_interarrival_ns: None }
                }
            })
            .collect()
    });
    SectionReport {
        sketch: name,
        geometry,
        memory_bytes: sketch.memory_bytes(),
        cardinality: cardinality::estimate(sketch),
        distribution: dist.log2_histogram(),
        distribution_flows: dist.flows(),
        entropy_bits: entropy::of_distribution(&dist),
        delay: match sketch {
            AnySketch::SuMax(s) => Some(sumax::delay_summary(s)),
            _ => None,
        },
        heavy_hitters: candidates.map(|c| heavy::from_candidates(sketch, c, args.hh_threshold).len()),
        top_flows,
    }
}

fn print_text(r: &Report, args: &ReportArgs) {
    println!("snapshot {}: epoch {}, {} packets", r.snapshot, r.epoch, r.packets);
    for s in &r.sections {
        println!("\n{} ({}; {} bytes)", s.sketch, s.geometry, s.memory_bytes);
        let c = &s.cardinality;
        println!(
            "  cardinality  {:.0} flows (linear counting: {} of {} counters empty{}{})",
            c.estimate,
            c.zeros,
            c.counters,
            if c.exact_flows > 0 { format!(", plus {} exact", c.exact_flows) } else { String::new() },
            if c.saturated { "; saturated, a lower bound" } else { "" }
        );
        println!("  entropy      {:.4} bits (from the estimated distribution)", s.entropy_bits);
        println!("  flow sizes   {:.0} flows estimated by MRAC:", s.distribution_flows);
        for (lo, n) in &s.distribution {
            println!("    {:>10} - {:<10} {:>12.1}", lo, lo.saturating_mul(2) - 1, n);
        }
        if let Some(d) = &s.delay {
            println!(
                "  path delay   {} packets{}:",
                d.total(),
                if d.overflowed > 0 { " (some cells overflowed)" } else { "" }
            );
            for (i, (e, n)) in d.edges_ns.iter().zip(&d.packets).enumerate() {
                let hi = d.edges_ns.get(i + 1).map_or("inf".to_string(), |h| format!("{h} ns"));
                println!("    [{e} ns, {hi})  {n}");
            }
            if let (Some(p50), Some(p99)) = (d.quantile_bin_edge(0.5), d.quantile_bin_edge(0.99)) {
                println!("    median in the bin from {p50} ns, 99th percentile in the bin from {p99} ns");
            }
        }
        match (&s.top_flows, s.heavy_hitters) {
            (Some(top), Some(hh)) => {
                let from = r.candidates_from.unwrap_or("file");
                println!(
                    "  heavy hitters (> {} packets) among the candidates ({from}): {hh}",
                    args.hh_threshold
                );
                println!("  top {} candidate flows:", top.len());
                for f in top {
                    print!("    {:<44} {:>10}", f.flow, f.packets);
                    if let (Some(h), Some(iv)) = (&f.delay_hist, f.max_interarrival_ns) {
                        print!("  delays {h:?}  max gap {iv} ns");
                    }
                    println!();
                }
            }
            _ => println!(
                "  top flows    need candidate keys: a sketch holds counters, not flow keys. Pass \
                 --candidates FILE with one flow key per line (e.g. the keys of `smartnic trace stats`)."
            ),
        }
    }
}
