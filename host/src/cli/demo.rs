//! `smartnic demo`: the main job end to end. Until the simulated NIC exists it runs the
//! software pipeline (the bit-exact models of the NIC's TowerSketch and SuMax): generate a
//! trace with INT stacks and its ground truth, sketch it, write the snapshot, read the
//! snapshot back and report what it says next to the truth.

use super::progress::bar;
use crate::sketch::snapshot::{from_section, software_snapshot};
use crate::sketch::{AnySketch, SketchKind};
use crate::trace::{generate_files, GenConfig, PacketReader, ShimConfig, Truth};
use anyhow::Context;
use clap::Args;
use serde::Serialize;
use smartnic_contract::FlowKey;
use smartnic_driver::snapshot::Snapshot;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Directory for the trace, ground truth and snapshot.
    #[arg(long, short, default_value = "out/demo")]
    pub out: PathBuf,
    /// Packets in the generated trace.
    #[arg(long, default_value_t = 500_000)]
    pub packets: u64,
    /// Flows in the generated trace.
    #[arg(long, default_value_t = 50_000)]
    pub flows: u64,
    /// Seed of the generator (same seed, same trace).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Flows listed in the report.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
}

#[derive(Debug, Serialize)]
struct TopFlow {
    flow: String,
    packets: u64,
    tower: u64,
    sumax: u64,
    delay_bins: Vec<u64>,
    true_max_iat_ns: u64,
    sumax_max_iat_ns: u64,
}

#[derive(Debug, Serialize)]
struct Accuracy {
    sketch: String,
    memory_bytes: u64,
    are: f64,
    aae: f64,
    exact_flows: u64,
}

#[derive(Debug, Serialize)]
struct DemoReport {
    trace: String,
    truth: String,
    snapshot: String,
    packets: u64,
    flows: u64,
    accuracy: Vec<Accuracy>,
    top: Vec<TopFlow>,
}

pub fn run(args: DemoArgs, json: bool) -> anyhow::Result<()> {
    std::fs::create_dir_all(&args.out).with_context(|| format!("cannot create {}", args.out.display()))?;
    let (trace, truth_path, snap_path) =
        (args.out.join("trace.pcap"), args.out.join("truth.json"), args.out.join("epoch-000000.snap"));
    let cfg = GenConfig {
        seed: args.seed,
        packets: args.packets,
        flows: args.flows,
        shim: Some(ShimConfig::default()),
        ..GenConfig::default()
    };
    cfg.validate()?;
    let pb = bar(None, "generating trace");
    let truth = generate_files(&cfg, &trace, &truth_path, None)?;
    pb.finish_and_clear();

    let mut sketches: Vec<AnySketch> =
        [SketchKind::TowerAcu, SketchKind::Sumax].iter().filter_map(|k| k.build_nic()).collect();
    let mut reader = PacketReader::open(&trace)?;
    let pb = bar(Some(truth.totals.packets), "sketching");
    let mut n = 0u64;
    while let Some(p) = reader.next_packet()? {
        sketches.iter_mut().for_each(|s| s.insert(&p));
        n += 1;
        if n.is_multiple_of(65536) {
            pb.set_position(n);
        }
    }
    pb.finish_and_clear();
    software_snapshot(&sketches, 0, n)?.write_file(&snap_path)?;

    // Everything below is computed from the snapshot file alone, as a readout would be.
    let snap = Snapshot::read_file(&snap_path)?;
    let decoded: Vec<AnySketch> =
        snap.sections.iter().enumerate().map(|(i, s)| from_section(i, s)).collect::<Result<_, _>>()?;
    let report = build_report(&args, &truth, &decoded, [&trace, &truth_path, &snap_path], n)?;
    if json {
        return super::print_json(&report);
    }
    print_report(&report);
    Ok(())
}

fn build_report(
    args: &DemoArgs,
    truth: &Truth,
    sketches: &[AnySketch],
    paths: [&PathBuf; 3],
    packets: u64,
) -> anyhow::Result<DemoReport> {
    let flows: Vec<(FlowKey, &crate::trace::FlowRecord)> = truth
        .flows
        .iter()
        .map(|f| FlowKey::parse(&f.key).map(|k| (k, f)).context("ground truth holds an unparsable flow key"))
        .collect::<anyhow::Result<_>>()?;
    let accuracy = sketches
        .iter()
        .map(|s| {
            let (mut rel, mut abs, mut exact) = (0.0, 0.0, 0u64);
            for (k, f) in &flows {
                let err = s.query(k).abs_diff(f.packets) as f64;
                rel += err / f.packets as f64;
                abs += err;
                exact += (err == 0.0) as u64;
            }
            let n = flows.len().max(1) as f64;
            Accuracy {
                sketch: sketch_name(s),
                memory_bytes: s.memory_bytes(),
                are: rel / n,
                aae: abs / n,
                exact_flows: exact,
            }
        })
        .collect();
    let mut by_size: Vec<_> = flows.iter().collect();
    by_size.sort_by_key(|(_, f)| std::cmp::Reverse(f.packets));
    let tower = sketches.iter().find(|s| matches!(s, AnySketch::Tower(_)));
    let sumax = sketches.iter().find_map(|s| match s {
        AnySketch::SuMax(m) => Some(m),
        _ => None,
    });
    let top = by_size
        .iter()
        .take(args.top)
        .map(|(k, f)| {
            let e = sumax.map(|m| m.query(k)).unwrap_or_default();
            let unit = sumax.map_or(1, |m| 1u64 << m.geometry().time_shift);
            TopFlow {
                flow: k.to_string(),
                packets: f.packets,
                tower: tower.map_or(0, |t| t.query(k)),
                sumax: e.size,
                delay_bins: e.delay_hist,
                true_max_iat_ns: f.max_iat_ns,
                sumax_max_iat_ns: e.max_interval * unit,
            }
        })
        .collect();
    Ok(DemoReport {
        trace: paths[0].display().to_string(),
        truth: paths[1].display().to_string(),
        snapshot: paths[2].display().to_string(),
        packets,
        flows: flows.len() as u64,
        accuracy,
        top,
    })
}

fn sketch_name(s: &AnySketch) -> String {
    match s {
        AnySketch::Tower(t) => format!("tower-{}", t.mode().name()),
        AnySketch::SuMax(_) => "sumax".into(),
        AnySketch::Elastic(_) => "elastic".into(),
    }
}

fn print_report(r: &DemoReport) {
    println!("SmartNIC demo (software pipeline: bit-exact models of the NIC's sketches)");
    println!("  trace     {} ({} packets, {} flows)", r.trace, r.packets, r.flows);
    println!("  truth     {}", r.truth);
    println!("  snapshot  {}", r.snapshot);
    println!("\nflow-size accuracy over all flows, from the snapshot:");
    println!("  {:<10} {:>10} {:>10} {:>10} {:>12}", "sketch", "memory", "ARE", "AAE", "exact flows");
    for a in &r.accuracy {
        println!(
            "  {:<10} {:>9}K {:>10.4} {:>10.3} {:>12}",
            a.sketch,
            a.memory_bytes / 1024,
            a.are,
            a.aae,
            a.exact_flows
        );
    }
    println!("\ntop flows: true packets, estimates, SuMax delay bins and max inter-arrival:");
    println!(
        "  {:<46} {:>8} {:>8} {:>8}  {:<44} {:>12} {:>12}",
        "flow", "true", "tower", "sumax", "delay bins", "true IAT ns", "sumax IAT ns"
    );
    for t in &r.top {
        println!(
            "  {:<46} {:>8} {:>8} {:>8}  {:<44} {:>12} {:>12}",
            t.flow,
            t.packets,
            t.tower,
            t.sumax,
            format!("{:?}", t.delay_bins),
            t.true_max_iat_ns,
            t.sumax_max_iat_ns
        );
    }
}
