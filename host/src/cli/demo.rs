//! `smartnic demo`: the main job end to end. Generate a trace with INT stacks and its ground
//! truth, replay it through the simulated NIC (the Verilator model of the generated core,
//! in the `smartnic-sim` service), read every epoch out over the driver exactly as from a
//! board, then check each snapshot against the bit-exact software sketches over the same
//! packets and report what the NIC's counters say next to the exact answers. An epoch whose
//! counters differ from the model fails the demo (exit 1) once the report is printed.
//!
//! `--software` skips the simulator and reports the software pipeline alone.

use super::progress::bar;
use super::sim::{replay, SimArgs};
use crate::sketch::snapshot::{from_section, to_section};
use crate::sketch::{AnySketch, SketchKind};
use crate::tasks::sumax::units_to_ns;
use crate::trace::{generate_files, GenConfig, Packet, PacketReader, ShimConfig};
use anyhow::Context;
use clap::Args;
use serde::Serialize;
use smartnic_contract::FlowKey;
use smartnic_driver::snapshot::Snapshot;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Directory for the trace, ground truth and snapshots.
    #[arg(long, short, default_value = "out/demo")]
    pub out: PathBuf,
    /// Packets in the generated trace.
    #[arg(long, default_value_t = 300_000)]
    pub packets: u64,
    /// Flows in the generated trace.
    #[arg(long, default_value_t = 30_000)]
    pub flows: u64,
    /// IP packets per epoch (the driver swaps banks and reads out after each).
    #[arg(long, default_value_t = 100_000)]
    pub epoch_packets: u64,
    /// Seed of the generator (same seed, same trace).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Flows listed in the report.
    #[arg(long, default_value_t = 8)]
    pub top: usize,
    /// Run the software pipeline only (no simulated NIC).
    #[arg(long)]
    pub software: bool,
}

#[derive(Debug, Serialize)]
struct EpochCheck {
    epoch: u64,
    packets: u64,
    snapshot: String,
    /// Per sketch: whether the NIC's counters equal the software model's, counter for counter.
    tower_equal: bool,
    sumax_equal: bool,
    tower_are: f64,
    sumax_are: f64,
}

#[derive(Debug, Serialize)]
struct TopFlow {
    flow: String,
    packets: u64,
    tower: u64,
    sumax: u64,
    delay_bins: Vec<u64>,
    max_iat_us: f64,
}

#[derive(Debug, Serialize)]
struct DemoReport {
    source: &'static str,
    trace: String,
    truth: String,
    packets: u64,
    flows: usize,
    epochs: Vec<EpochCheck>,
    reads_per_snapshot: Option<u64>,
    top_of_last_epoch: Vec<TopFlow>,
}

/// The demo's trace: seeded, with INT stacks (the NIC's SuMax needs delays).
fn gen_config(args: &DemoArgs) -> GenConfig {
    GenConfig {
        seed: args.seed,
        packets: args.packets,
        flows: args.flows,
        shim: Some(ShimConfig::default()),
        ..GenConfig::default()
    }
}

pub fn run(args: DemoArgs, json: bool) -> anyhow::Result<()> {
    std::fs::create_dir_all(&args.out).with_context(|| format!("cannot create {}", args.out.display()))?;
    let (trace, truth) = (args.out.join("trace.pcap"), args.out.join("truth.json"));
    let cfg = gen_config(&args);
    cfg.validate()?;
    let pb = bar(None, "generating trace");
    generate_files(&cfg, &trace, &truth, None)?;
    pb.finish_and_clear();
    let packets = read_packets(&trace)?;
    let snaps_dir = args.out.join(if args.software { "software" } else { "nic" });
    let (snapshots, reads) = if args.software {
        (software_epochs(&packets, args.epoch_packets, &snaps_dir)?, None)
    } else {
        let sim = SimArgs {
            trace: trace.clone(),
            epoch_packets: args.epoch_packets,
            mode: "acu".into(),
            output: snaps_dir,
        };
        let r = replay(&sim)?;
        (r.epochs.iter().map(|e| PathBuf::from(&e.path)).collect(), Some(r.reads_per_snapshot))
    };
    let report = check(&args, &trace, &truth, &packets, &snapshots, reads)?;
    if json {
        super::print_json(&report)?;
    } else {
        print_report(&report);
    }
    verdict(&report)
}

/// The demo's purpose is the comparison: a NIC whose counters differ from the bit-exact
/// model is a failure (exit 1), not a line of the report, so scripts and CI see it. The
/// report is printed first so the operator sees every epoch; the error names each epoch
/// and sketch that differed.
fn verdict(r: &DemoReport) -> anyhow::Result<()> {
    let differs: Vec<String> = r
        .epochs
        .iter()
        .flat_map(|e| {
            let tower = (!e.tower_equal).then(|| format!("epoch {} TowerSketch ({})", e.epoch, e.snapshot));
            let sumax = (!e.sumax_equal).then(|| format!("epoch {} SuMax ({})", e.epoch, e.snapshot));
            tower.into_iter().chain(sumax)
        })
        .collect();
    if differs.is_empty() {
        return Ok(());
    }
    anyhow::bail!("the {} differs from the bit-exact software model: {}", r.source, differs.join(", "))
}

fn read_packets(trace: &Path) -> anyhow::Result<Vec<Packet>> {
    let mut r = PacketReader::open(trace)?;
    let mut v = Vec::new();
    while let Some(p) = r.next_packet()? {
        v.push(p);
    }
    Ok(v)
}

/// The NIC's sketches at their default geometry, fed `packets`.
fn software_pair(packets: &[Packet]) -> Vec<AnySketch> {
    let mut s: Vec<AnySketch> =
        [SketchKind::TowerAcu, SketchKind::Sumax].iter().filter_map(|k| k.build_nic()).collect();
    for p in packets {
        s.iter_mut().for_each(|k| k.insert(p));
    }
    s
}

fn software_epochs(packets: &[Packet], per: u64, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut out = Vec::new();
    for (e, chunk) in packets.chunks(per.max(1) as usize).enumerate() {
        let path = dir.join(format!("epoch-{e:06}.snap"));
        let snap =
            crate::sketch::snapshot::software_snapshot(&software_pair(chunk), e as u64, chunk.len() as u64)?;
        snap.write_file(&path)?;
        out.push(path);
    }
    Ok(out)
}

fn exact_counts(packets: &[Packet]) -> HashMap<FlowKey, u64> {
    let mut m = HashMap::new();
    for p in packets {
        *m.entry(p.key).or_insert(0) += 1;
    }
    m
}

/// Flow-size ARE of `s` over the epoch's flows (`metrics::are`, the papers' definition).
fn are(s: &AnySketch, exact: &HashMap<FlowKey, u64>) -> f64 {
    crate::metrics::are(exact.iter().map(|(k, &n)| (n as f64, s.query(k) as f64)))
}

fn check(
    args: &DemoArgs,
    trace: &Path,
    truth: &Path,
    packets: &[Packet],
    snapshots: &[PathBuf],
    reads: Option<u64>,
) -> anyhow::Result<DemoReport> {
    let pb = bar(Some(snapshots.len() as u64), "checking epochs");
    let mut epochs = Vec::new();
    let mut last = None;
    for (chunk, path) in packets.chunks(args.epoch_packets.max(1) as usize).zip(snapshots) {
        let snap = Snapshot::read_file(path)?;
        let nic: Vec<AnySketch> =
            snap.sections.iter().enumerate().map(|(i, s)| from_section(i, s)).collect::<Result<_, _>>()?;
        let soft = software_pair(chunk);
        let equal =
            |want: &AnySketch| snap.sections.iter().any(|s| *s == to_section(want).expect("snapshottable"));
        let exact = exact_counts(chunk);
        let find = |tower: bool| {
            nic.iter().find(|s| matches!(s, AnySketch::Tower(_)) == tower).context("sketch missing")
        };
        epochs.push(EpochCheck {
            epoch: snap.epoch,
            packets: snap.packets,
            snapshot: path.display().to_string(),
            tower_equal: equal(&soft[0]),
            sumax_equal: equal(&soft[1]),
            tower_are: are(find(true)?, &exact),
            sumax_are: are(find(false)?, &exact),
        });
        last = Some((nic, exact));
        pb.inc(1);
    }
    pb.finish_and_clear();
    let top = last.map(|(nic, exact)| top_flows(&nic, &exact, args.top)).unwrap_or_default();
    Ok(DemoReport {
        source: if args.software {
            "software pipeline"
        } else {
            "simulated NIC (Verilator model of the generated core)"
        },
        trace: trace.display().to_string(),
        truth: truth.display().to_string(),
        packets: packets.len() as u64,
        flows: exact_counts(packets).len(),
        epochs,
        reads_per_snapshot: reads,
        top_of_last_epoch: top,
    })
}

fn top_flows(nic: &[AnySketch], exact: &HashMap<FlowKey, u64>, n: usize) -> Vec<TopFlow> {
    let mut flows: Vec<(&FlowKey, &u64)> = exact.iter().collect();
    flows.sort_by_key(|(k, &c)| (std::cmp::Reverse(c), **k));
    let tower = nic.iter().find(|s| matches!(s, AnySketch::Tower(_)));
    let sumax = nic.iter().find_map(|s| match s {
        AnySketch::SuMax(m) => Some(m),
        _ => None,
    });
    flows
        .into_iter()
        .take(n)
        .map(|(k, &c)| {
            let e = sumax.map(|m| m.query(k)).unwrap_or_default();
            let max_iat_ns = sumax.map_or(0, |m| units_to_ns(m.geometry(), e.max_interval));
            TopFlow {
                flow: k.to_string(),
                packets: c,
                tower: tower.map_or(0, |t| t.query(k)),
                sumax: e.size,
                delay_bins: e.delay_hist,
                max_iat_us: max_iat_ns as f64 / 1e3,
            }
        })
        .collect()
}

fn print_report(r: &DemoReport) {
    println!("SmartNIC demo: {}", r.source);
    println!("  trace  {} ({} packets, {} flows; truth in {})", r.trace, r.packets, r.flows, r.truth);
    println!(
        "\nepochs read out (counters compared with the bit-exact software sketches over the same packets):"
    );
    println!(
        "  {:>5} {:>9}  {:<10} {:<10} {:>10} {:>10}  snapshot",
        "epoch", "packets", "tower", "sumax", "tower ARE", "sumax ARE"
    );
    let verdict = |eq: bool| if eq { "equal" } else { "DIFFERS" };
    for e in &r.epochs {
        println!(
            "  {:>5} {:>9}  {:<10} {:<10} {:>10.4} {:>10.4}  {}",
            e.epoch,
            e.packets,
            verdict(e.tower_equal),
            verdict(e.sumax_equal),
            e.tower_are,
            e.sumax_are,
            e.snapshot
        );
    }
    if let Some(reads) = r.reads_per_snapshot {
        println!(
            "  readout: {reads} register reads per snapshot (~{:.0} ms of MMIO at 1 us per read)",
            reads as f64 / 1e3
        );
    }
    println!("\nlargest flows of the last epoch: exact packets, NIC estimates, SuMax delay bins (<1,1-2,2-4,... us):");
    println!(
        "  {:<44} {:>7} {:>7} {:>7}  {:<34} {:>10}",
        "flow", "exact", "tower", "sumax", "delay bins", "max IAT us"
    );
    for t in &r.top_of_last_epoch {
        println!(
            "  {:<44} {:>7} {:>7} {:>7}  {:<34} {:>10.1}",
            t.flow,
            t.packets,
            t.tower,
            t.sumax,
            format!("{:?}", t.delay_bins),
            t.max_iat_us
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use smartnic_driver::snapshot::Section;

    /// A small trace of three epochs, its packets and its software snapshots in `dir`.
    fn epochs(dir: &Path) -> (DemoArgs, Vec<Packet>, Vec<PathBuf>) {
        let args = DemoArgs {
            out: dir.to_path_buf(),
            packets: 2_500,
            flows: 300,
            epoch_packets: 1_000,
            seed: 5,
            top: 3,
            software: true,
        };
        let cfg = gen_config(&args);
        generate_files(&cfg, &dir.join("trace.pcap"), &dir.join("truth.json"), None).unwrap();
        let packets = read_packets(&dir.join("trace.pcap")).unwrap();
        let snaps = software_epochs(&packets, args.epoch_packets, &dir.join("software")).unwrap();
        (args, packets, snaps)
    }

    fn report(dir: &Path, args: &DemoArgs, packets: &[Packet], snaps: &[PathBuf]) -> DemoReport {
        check(args, &dir.join("trace.pcap"), &dir.join("truth.json"), packets, snaps, None).unwrap()
    }

    /// Flips one bit of the first counter array of the tower (`tower`) or SuMax section in a
    /// snapshot file, as a NIC with one wrong counter would have written it.
    fn doctor(path: &Path, tower: bool) {
        let mut snap = Snapshot::read_file(path).unwrap();
        let arrays = snap
            .sections
            .iter_mut()
            .find_map(|s| match s {
                Section::Tower { arrays, .. } if tower => Some(arrays),
                Section::SuMax { arrays, .. } if !tower => Some(arrays),
                _ => None,
            })
            .unwrap();
        arrays[0][0] ^= 1;
        snap.write_file(path).unwrap();
    }

    #[test]
    fn equal_snapshots_pass_the_verdict() {
        let dir = tempfile::tempdir().unwrap();
        let (args, packets, snaps) = epochs(dir.path());
        let r = report(dir.path(), &args, &packets, &snaps);
        assert_eq!(r.epochs.len(), 3);
        assert!(r.epochs.iter().all(|e| e.tower_equal && e.sumax_equal), "{r:?}");
        verdict(&r).unwrap();
    }

    /// One flipped counter bit fails the demo, and the error names the epoch, the sketch
    /// and the snapshot file; the epochs that agree are not named.
    #[test]
    fn a_counter_that_differs_fails_the_demo_naming_epoch_and_sketch() {
        let dir = tempfile::tempdir().unwrap();
        let (args, packets, snaps) = epochs(dir.path());
        doctor(&snaps[1], true);
        doctor(&snaps[2], false);
        let r = report(dir.path(), &args, &packets, &snaps);
        let flags: Vec<(bool, bool)> = r.epochs.iter().map(|e| (e.tower_equal, e.sumax_equal)).collect();
        assert_eq!(flags, vec![(true, true), (false, true), (true, false)]);
        let err = verdict(&r).unwrap_err().to_string();
        let tower = format!("epoch 1 TowerSketch ({})", snaps[1].display());
        let sumax = format!("epoch 2 SuMax ({})", snaps[2].display());
        assert!(err.contains("differs from the bit-exact software model"), "{err}");
        assert!(err.contains(&tower) && err.contains(&sumax), "{err}");
        assert!(!err.contains("epoch 0") && !err.contains("epoch 1 SuMax"), "{err}");
    }
}
