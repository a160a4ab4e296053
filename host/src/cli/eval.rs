//! `smartnic sketch eval`: the accuracy lab on the command line. Runs the chosen sketches at each
//! memory size over one trace, scores every task against the exact answers, and prints a
//! table (or `--json`, `--csv`), optionally plotting accuracy against memory.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use clap::Args;
use serde::Serialize;

use super::progress::bar;
use super::size::parse_bytes;
use crate::eval::{self, plot, EvalConfig, EvalRow, GroundTruth, Task, TraceData};
use crate::sketch::SketchKind;
use crate::trace::{Format, Truth};

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Input trace: pcap or pcapng (recognised by magic), or 21-byte records with
    /// --format records.
    #[arg(long, short)]
    pub trace: PathBuf,
    /// Trace format; `auto` recognises pcap and pcapng by their magic.
    #[arg(long, value_enum, default_value_t = Format::Auto)]
    pub format: Format,
    /// Ground-truth JSON of the trace [default: TRACE.truth.json when it exists]; checked
    /// against the trace. Without it the exact answers come from the trace alone.
    #[arg(long)]
    pub truth: Option<PathBuf>,
    /// Sketches to compare (comma-separated or repeated) [default: all seven].
    #[arg(long = "sketch", value_enum, value_delimiter = ',')]
    pub sketches: Vec<SketchKind>,
    /// Memory sizes (comma-separated), e.g. 300KB,600KB,900KB.
    #[arg(long, value_parser = parse_bytes, value_delimiter = ',', default_value = "300KB,600KB,900KB")]
    pub memory: Vec<u64>,
    /// Tasks to score (comma-separated) [default: all].
    #[arg(long, value_enum, value_delimiter = ',')]
    pub tasks: Vec<Task>,
    /// Heavy-hitter threshold Delta_h in packets (SketchINT: 500 for 2.3M packets).
    #[arg(long, default_value_t = 500)]
    pub hh_threshold: u64,
    /// Heavy-change threshold Delta_c in packets (SketchINT: 250).
    #[arg(long, default_value_t = 250)]
    pub hc_threshold: u64,
    /// Capacity of the heavy-hitter candidate table.
    #[arg(long, default_value_t = crate::tasks::heavy::TABLE_CAPACITY)]
    pub table: usize,
    /// MRAC EM iterations.
    #[arg(long, default_value_t = crate::tasks::distribution::DEFAULT_ITERATIONS)]
    pub em_iterations: usize,
    /// Largest flows scored by the per-flow SuMax tasks (delay, interval, last, partial ARE).
    #[arg(long, default_value_t = 1000)]
    pub top: usize,
    /// Seed of the received-column choice for the partial-reconstruction task.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// SuMax with flow-size cells only (LightGuardian's flow-size comparison layout); its
    /// delay and time metrics are then skipped.
    #[arg(long)]
    pub sumax_size_only: bool,
    /// Threads the (sketch, memory) pairs run on [default: every core]; the numbers are
    /// the same for any count, only the wall time changes.
    #[arg(long, default_value_t = 0, hide_default_value = true)]
    pub threads: usize,
    /// Print CSV on stdout instead of the table.
    #[arg(long)]
    pub csv: bool,
    /// Draw accuracy-vs-memory curves into this .png or .svg file.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
}

#[derive(Debug, Serialize)]
struct EvalReport {
    trace: String,
    packets: u64,
    /// Frames of the trace that were not IP packets (not scored).
    non_ip: u64,
    malformed: u64,
    flows: usize,
    hh_threshold: u64,
    hc_threshold: u64,
    true_heavy_hitters: usize,
    true_heavy_changes: usize,
    true_entropy: f64,
    seconds: f64,
    rows: Vec<EvalRow>,
}

fn truth_path(args: &EvalArgs) -> Option<PathBuf> {
    args.truth.clone().or_else(|| {
        let p = PathBuf::from(format!("{}.truth.json", args.trace.display()));
        p.exists().then_some(p)
    })
}

pub fn run(args: EvalArgs, json: bool) -> anyhow::Result<()> {
    let start = Instant::now();
    let (data, counts) = TraceData::load_as(&args.trace, args.format)?;
    let truth = GroundTruth::from_data(&data);
    match truth_path(&args) {
        Some(p) => {
            let t = Truth::read(&p).with_context(|| format!("reading truth file {}", p.display()))?;
            truth.check_against(&t)?;
        }
        None => eprintln!("note: no truth file; exact answers computed from the trace itself"),
    }
    let cfg = EvalConfig {
        kinds: if args.sketches.is_empty() { SketchKind::ALL.to_vec() } else { args.sketches.clone() },
        memories: args.memory.clone(),
        tasks: if args.tasks.is_empty() { Task::ALL.to_vec() } else { args.tasks.clone() },
        hh_threshold: args.hh_threshold,
        hc_threshold: args.hc_threshold,
        table_capacity: args.table,
        em_iterations: args.em_iterations,
        top_flows: args.top,
        seed: args.seed,
        sumax_size_only: args.sumax_size_only,
        threads: args.threads,
    };
    // Without packets there is nothing to score: no rows (and no plot).
    let rows = if data.is_empty() {
        Vec::new()
    } else {
        let pb = bar(Some(cfg.total_packets(data.len() as u64)), "evaluating");
        let rows = eval::run(&data, &truth, &cfg, &|n| pb.inc(n));
        pb.finish_and_clear();
        rows
    };
    if data.is_empty() && args.plot.is_some() {
        eprintln!("note: no plot: {} holds no IP packets", args.trace.display());
    } else if let Some(p) = &args.plot {
        let cols = eval::metric_columns(&rows);
        plot::plot(&rows, &cols, p)?;
        eprintln!("plot written to {}", p.display());
    }
    let report = EvalReport {
        trace: args.trace.display().to_string(),
        packets: truth.packets,
        non_ip: counts.non_ip,
        malformed: counts.malformed,
        flows: truth.cardinality(),
        hh_threshold: cfg.hh_threshold,
        hc_threshold: cfg.hc_threshold,
        true_heavy_hitters: truth.heavy_hitters(cfg.hh_threshold).count(),
        true_heavy_changes: truth.heavy_changes(cfg.hc_threshold).count(),
        true_entropy: truth.entropy,
        seconds: start.elapsed().as_secs_f64(),
        rows,
    };
    if json {
        return super::print_json(&report);
    }
    if args.csv {
        print!("{}", csv(&report.rows));
        return Ok(());
    }
    println!(
        "{}: {} packets ({} non-IP, {} malformed frames skipped), {} flows, {} heavy hitters (> {}), \
         {} heavy changes (> {}), entropy {:.4} bits",
        report.trace,
        report.packets,
        report.non_ip,
        report.malformed,
        report.flows,
        report.true_heavy_hitters,
        report.hh_threshold,
        report.true_heavy_changes,
        report.hc_threshold,
        report.true_entropy
    );
    if report.rows.is_empty() {
        println!("nothing to score: the trace holds no IP packets");
        return Ok(());
    }
    print!("{}", table(&report.rows));
    for r in &report.rows {
        for n in &r.notes {
            println!("note: {} {}: {n}", r.sketch.name(), human_bytes(r.memory));
        }
    }
    println!("{:.1} s", report.seconds);
    Ok(())
}

/// `600KB`-style text of a byte count (the papers' decimal units).
pub fn human_bytes(b: u64) -> String {
    if b.is_multiple_of(1_000_000) {
        format!("{}MB", b / 1_000_000)
    } else if b.is_multiple_of(1000) {
        format!("{}KB", b / 1000)
    } else {
        format!("{b}B")
    }
}

fn fmt_value(metric: &str, v: f64) -> String {
    if !v.is_finite() {
        "inf".into()
    } else if metric.ends_with("_f1")
        || metric.ends_with("_pr")
        || metric.ends_with("_rr")
        || metric.ends_with("_valid")
    {
        format!("{v:.4}")
    } else {
        format!("{v:.3e}")
    }
}

/// The aligned text table of `rows`.
pub fn table(rows: &[EvalRow]) -> String {
    let cols = eval::metric_columns(rows);
    let mut out = format!("{:<10} {:>7}", "sketch", "memory");
    for c in &cols {
        out += &format!(" {c:>11}");
    }
    out.push('\n');
    for r in rows {
        out += &format!("{:<10} {:>7}", r.sketch.name(), human_bytes(r.memory));
        for c in &cols {
            let v = r.metrics.get(*c).map_or("-".to_string(), |&v| fmt_value(c, v));
            out += &format!(" {v:>11}");
        }
        out.push('\n');
    }
    out
}

/// CSV: `sketch,memory,memory_used,seconds,<metrics...>`; empty cells where a sketch cannot
/// answer.
pub fn csv(rows: &[EvalRow]) -> String {
    let cols = eval::metric_columns(rows);
    let mut out = String::from("sketch,memory,memory_used,seconds");
    for c in &cols {
        out += &format!(",{c}");
    }
    out.push('\n');
    for r in rows {
        out += &format!("{},{},{},{:.3}", r.sketch.name(), r.memory, r.memory_used, r.seconds);
        for c in &cols {
            out.push(',');
            if let Some(v) = r.metrics.get(*c) {
                out += &format!("{v}");
            }
        }
        out.push('\n');
    }
    out
}
