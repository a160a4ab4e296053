//! The end-to-end demo as a library: generate a trace with INT stacks and its ground truth,
//! replay it through the simulated NIC ([`crate::simulator`]) or the software pipeline,
//! check each epoch's snapshot against the bit-exact software sketches over the same
//! packets, and report what the counters say next to the exact answers. `smartnic demo`
//! prints the [`DemoReport`] and fails on the [`verdict`]; the simulator's tests call
//! [`run`] directly.

use crate::simulator::{replay, Progress, ReplayConfig};
use crate::sketch::snapshot::{from_section, to_section};
use crate::sketch::{AnySketch, SketchKind};
use crate::tasks::sumax::units_to_ns;
use crate::trace::{generate_files, GenConfig, Packet, PacketReader, ShimConfig};
use anyhow::Context;
use serde::Serialize;
use smartnic_contract::geometry::InsertMode;
use smartnic_contract::FlowKey;
use smartnic_driver::snapshot::Snapshot;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One demo run (the `smartnic demo` arguments).
#[derive(Clone, Debug)]
pub struct DemoConfig {
    /// Directory for the trace, ground truth and snapshots.
    pub out: PathBuf,
    /// Packets in the generated trace.
    pub packets: u64,
    /// Flows in the generated trace.
    pub flows: u64,
    /// IP packets per epoch (the driver swaps banks and reads out after each).
    pub epoch_packets: u64,
    /// Seed of the generator (same seed, same trace).
    pub seed: u64,
    /// Flows listed in the report.
    pub top: usize,
    /// Run the software pipeline only (no simulated NIC).
    pub software: bool,
}

/// One epoch's snapshot next to the software model over the same packets.
#[derive(Debug, Serialize)]
pub struct EpochCheck {
    pub epoch: u64,
    pub packets: u64,
    pub snapshot: String,
    /// Per sketch: whether the NIC's counters equal the software model's, counter for counter.
    pub tower_equal: bool,
    pub sumax_equal: bool,
    pub tower_are: f64,
    pub sumax_are: f64,
}

/// One of the last epoch's largest flows: exact count and the NIC's estimates.
#[derive(Debug, Serialize)]
pub struct TopFlow {
    pub flow: String,
    pub packets: u64,
    pub tower: u64,
    pub sumax: u64,
    pub delay_bins: Vec<u64>,
    pub max_iat_us: f64,
}

/// Everything the demo found.
#[derive(Debug, Serialize)]
pub struct DemoReport {
    pub source: &'static str,
    pub trace: String,
    pub truth: String,
    pub packets: u64,
    pub flows: usize,
    pub epochs: Vec<EpochCheck>,
    pub reads_per_snapshot: Option<u64>,
    pub top_of_last_epoch: Vec<TopFlow>,
}

/// The demo's trace: seeded, with INT stacks (the NIC's SuMax needs delays).
pub fn gen_config(cfg: &DemoConfig) -> GenConfig {
    GenConfig {
        seed: cfg.seed,
        packets: cfg.packets,
        flows: cfg.flows,
        shim: Some(ShimConfig::default()),
        ..GenConfig::default()
    }
}

/// Generates the trace, runs it through the NIC (or the software pipeline with
/// `cfg.software`) and checks every epoch. The report says whether the counters agree;
/// [`verdict`] turns a disagreement into an error.
pub fn run(cfg: &DemoConfig, progress: Progress) -> anyhow::Result<DemoReport> {
    std::fs::create_dir_all(&cfg.out).with_context(|| format!("cannot create {}", cfg.out.display()))?;
    let (trace, truth) = (cfg.out.join("trace.pcap"), cfg.out.join("truth.json"));
    let gen = gen_config(cfg);
    gen.validate()?;
    let pb = progress(None, "generating trace");
    generate_files(&gen, &trace, &truth, None)?;
    pb.finish_and_clear();
    let packets = read_packets(&trace)?;
    let snaps_dir = cfg.out.join(if cfg.software { "software" } else { "nic" });
    let (snapshots, reads) = if cfg.software {
        (software_epochs(&packets, cfg.epoch_packets, &snaps_dir)?, None)
    } else {
        let sim = ReplayConfig {
            trace: trace.clone(),
            epoch_packets: cfg.epoch_packets,
            mode: InsertMode::Acu,
            output: snaps_dir,
        };
        let r = replay(&sim, progress)?;
        (r.epochs.iter().map(|e| PathBuf::from(&e.path)).collect(), Some(r.reads_per_snapshot))
    };
    check(cfg, &trace, &truth, &packets, &snapshots, reads, progress)
}

/// The demo's purpose is the comparison: a NIC whose counters differ from the bit-exact
/// model is a failure (exit 1), not a line of the report, so scripts and CI see it. The
/// report is printed first so the operator sees every epoch; the error names each epoch
/// and sketch that differed.
pub fn verdict(r: &DemoReport) -> anyhow::Result<()> {
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

/// Compares every epoch's snapshot with the software sketches over the same packets and
/// collects the report.
fn check(
    args: &DemoConfig,
    trace: &Path,
    truth: &Path,
    packets: &[Packet],
    snapshots: &[PathBuf],
    reads: Option<u64>,
    progress: Progress,
) -> anyhow::Result<DemoReport> {
    let pb = progress(Some(snapshots.len() as u64), "checking epochs");
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulator::no_progress;
    use smartnic_driver::snapshot::Section;

    /// A small trace of three epochs, its packets and its software snapshots in `dir`.
    fn epochs(dir: &Path) -> (DemoConfig, Vec<Packet>, Vec<PathBuf>) {
        let args = DemoConfig {
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

    fn report(dir: &Path, args: &DemoConfig, packets: &[Packet], snaps: &[PathBuf]) -> DemoReport {
        check(args, &dir.join("trace.pcap"), &dir.join("truth.json"), packets, snaps, None, no_progress)
            .unwrap()
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
