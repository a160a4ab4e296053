//! `smartnic sketch run` (software sketches over a trace) and `smartnic snapshot query|diff`.
//!
//! When the trace carries INT stacks, `sketch run` also runs the NIC's per-switch half
//! ([`PerSwitch`]) beside the flow sketches, fed with the run's first TowerSketch's estimate
//! of each packet's flow right after that packet (what the NIC's table logic sees), and
//! writes its latency tower, key table and inflated-latency records into the snapshot of
//! every epoch that held at least one INT hop.

use std::ops::Range;

use super::manifest::{self, EpochEntry, Manifest};
use super::progress::bar;
use super::size::parse_bytes;
use crate::sketch::per_switch::{PerSwitch, PerSwitchConfig};
use crate::sketch::per_switch_worker::{EpochState, PerSwitchWorker, Spill, SPILL_RECORDS};
use crate::sketch::snapshot::{from_section, per_switch_sections, software_snapshot};
use crate::sketch::{AnySketch, SketchKind};
use crate::tasks::sumax::units_to_ns;
use crate::trace::pipeline::{self, for_each_shared_batch, thread_cpu_s, Parsing, SharedBatch, StageTime};
use crate::trace::{Format, PacketReader};
use anyhow::{bail, Context};
use clap::Args;
use serde::Serialize;
use smartnic_contract::geometry::{InsertMode, SuMaxGeometry, TowerGeometry};
use smartnic_contract::per_switch::DEFAULT_TABLE_THRESHOLD;
use smartnic_contract::per_switch::{KeyTableGeometry, LatencyTowerGeometry};
use smartnic_contract::FlowKey;
use smartnic_driver::snapshot::{PerSwitchSection, RecordSpill, Section, Snapshot};
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Input trace: pcap or pcapng (recognised by magic), or 21-byte records with
    /// --format records.
    #[arg(long, short)]
    pub trace: PathBuf,
    /// Trace format; `auto` recognises pcap and pcapng by their magic.
    #[arg(long, value_enum, default_value_t = Format::Auto)]
    pub format: Format,
    /// Sketches to run (repeat the flag). Default: tower-acu and sumax, the NIC's pair.
    #[arg(long = "sketch", value_enum)]
    pub sketches: Vec<SketchKind>,
    /// Counter memory per sketch (e.g. 600KB, 2MiB). Default: the NIC's geometry.
    #[arg(long, value_parser = parse_bytes)]
    pub memory: Option<u64>,
    /// Start a new epoch every N IP packets; the output is then a directory of snapshots
    /// and their manifest.
    #[arg(long)]
    pub epoch_packets: Option<u64>,
    /// Snapshot file (or directory with --epoch-packets).
    #[arg(long, short)]
    pub output: PathBuf,
    /// Leave the per-switch half out even when the trace has INT stacks.
    #[arg(long)]
    pub no_per_switch: bool,
    /// Per-switch half: flows whose estimate exceeds N packets enter the key table.
    #[arg(long, default_value_t = DEFAULT_TABLE_THRESHOLD, value_name = "N")]
    pub table_threshold: u32,
    /// Per-switch half: a hop is inflated when its latency exceeds RATIO times its (flow,
    /// switch) average (SketchINT's Delta_l; at least 1, in steps of 1/256).
    #[arg(long, default_value = "5", value_parser = parse_ratio, value_name = "RATIO")]
    pub inflate_ratio: u32,
    /// Where the trace is read and parsed: a thread of its own, or inline on the main
    /// thread. Default: a thread of its own while the machine has a core to spare for it
    /// (the per-switch half takes a thread too), inline otherwise.
    #[arg(long, value_enum, value_name = "WHERE")]
    pub parser: Option<Parsing>,
}

/// Parses Delta_l into 1/256 units (the contract's `InflateRule::from_ratio_x256` input).
pub(crate) fn parse_ratio(s: &str) -> Result<u32, String> {
    let r: f64 = s.trim().parse().map_err(|_| format!("`{s}` is not a number"))?;
    if !(1.0..=1e6).contains(&r) {
        return Err(format!("the inflate ratio must be between 1 and 1000000, got {s}"));
    }
    Ok((r * 256.0).round() as u32)
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    pub a: PathBuf,
    pub b: PathBuf,
}

#[derive(Debug, Args)]
pub struct QueryArgs {
    /// Snapshot file.
    pub snapshot: PathBuf,
    /// Flow key as printed by the tools: SRC:PORT>DST:PORT/PROTO.
    #[arg(long, value_parser = parse_flow)]
    pub flow: FlowKey,
    /// Switch IDs to show the flow's per-switch latency at, e.g. 3,7,12 (default: its path
    /// from the snapshot's flow-key table, when the flow is there, and the switches its
    /// inflated-latency records name).
    #[arg(long, value_delimiter = ',', value_name = "IDS")]
    pub switch: Vec<u16>,
}

fn parse_flow(s: &str) -> Result<FlowKey, String> {
    FlowKey::parse(s)
        .ok_or_else(|| format!("`{s}` is not a flow key (expected e.g. 10.0.0.1:1234>10.0.0.2:80/6)"))
}

/// The sketches `--sketch`/`--memory` ask for.
pub fn build_sketches(kinds: &[SketchKind], memory: Option<u64>) -> anyhow::Result<Vec<AnySketch>> {
    let kinds = if kinds.is_empty() { &[SketchKind::TowerAcu, SketchKind::Sumax][..] } else { kinds };
    kinds
        .iter()
        .map(|k| match memory {
            Some(bytes) => Ok(k.build(bytes)),
            None => k.build_nic().with_context(|| {
                format!(
                    "`{}` has no NIC geometry; give its size with --memory (e.g. --memory 600KB)",
                    k.name()
                )
            }),
        })
        .collect()
}

#[derive(Debug, Serialize)]
struct RunReport {
    trace: String,
    packets: u64,
    non_ip: u64,
    malformed: u64,
    seconds: f64,
    /// Each thread's CPU time and time blocked: the stage that seldom waits bounds the run.
    stages: Vec<StageReport>,
    snapshots: Vec<SnapshotInfo>,
}

/// One thread of a `sketch run`.
#[derive(Debug, Serialize)]
struct StageReport {
    /// `parser`, `sketches` (the flow sketches, on the main thread), `parser+sketches`
    /// (both on the main thread, [`Parsing::Inline`]) or `per-switch` (the half and the
    /// flow tower feeding it).
    stage: &'static str,
    #[serde(flatten)]
    time: StageTime,
}

#[derive(Debug, Serialize)]
struct SnapshotInfo {
    path: String,
    epoch: u64,
    packets: u64,
    /// What the per-switch half recorded in the epoch; absent when the snapshot has no
    /// per-switch sections.
    #[serde(skip_serializing_if = "Option::is_none")]
    per_switch: Option<PerSwitchInfo>,
}

#[derive(Debug, Serialize)]
struct PerSwitchInfo {
    /// INT hops inserted into the latency tower.
    hops: u64,
    /// Flows in the key table.
    table_flows: u64,
    /// Offers the full table refused.
    table_misses: u64,
    /// Inflated-latency records.
    inflated: u64,
}

/// The per-switch half of a `sketch run`, with the flow sketch whose estimates feed it.
/// Both run on the half's own thread ([`PerSwitchWorker`]): the half costs more than the
/// flow sketches and needs nothing of them but the tower's estimate of each packet.
struct PerSwitchRun {
    /// Index of the flow TowerSketch in the run's sketches. Its slot there stays unfed
    /// during an epoch: the thread's copy counts, and comes back at the epoch's end.
    tower: usize,
    half: PerSwitchWorker,
}

impl PerSwitchRun {
    /// The half for `args`, fed by the first TowerSketch of `sketches`, its first epoch's
    /// records spilled beside `first` (that epoch's snapshot); `None` when turned off or
    /// when the run has no TowerSketch to size flows with.
    fn new(args: &RunArgs, sketches: &[AnySketch], first: PathBuf) -> anyhow::Result<Option<Self>> {
        let found = sketches.iter().enumerate().find_map(|(i, s)| match s {
            AnySketch::Tower(t) => Some((i, t)),
            _ => None,
        });
        let Some((tower, flow)) = found.filter(|_| !args.no_per_switch) else { return Ok(None) };
        let config = PerSwitchConfig {
            table_threshold: args.table_threshold,
            inflate_ratio_x256: args.inflate_ratio,
            ..PerSwitchConfig::nic_default()
        };
        let half = PerSwitch::new(config).context("per-switch half")?;
        let half = PerSwitchWorker::start(flow.clone(), half, Some(spill_for(first)));
        Ok(Some(PerSwitchRun { tower, half }))
    }

    /// Ends the half's thread: its time, and how long the caller waited on it (seconds).
    fn finish(self) -> (StageTime, f64) {
        self.half.finish()
    }

    /// Hands packets `range` of `batch` to the tower and the half.
    fn feed(&mut self, batch: &SharedBatch, range: Range<usize>, epoch: u64) {
        self.half.send(epoch as u32, batch.clone(), range);
    }

    /// Puts the epoch's flow tower back into `sketches`; returns the epoch's per-switch
    /// part: its sections (none when it held no INT hop), what they hold, and the head of
    /// its record stream when the thread spilled it. The thread goes on with the next
    /// epoch cleared, its records spilled beside `next`.
    fn take_epoch(&mut self, sketches: &mut [AnySketch], next: &Path) -> anyhow::Result<EpochPerSwitch> {
        let EpochState { tower, half, spill, records } = self
            .half
            .take(Some(spill_for(next.to_path_buf())))
            .context("cannot spill the inflated-latency records beside the snapshot")?;
        sketches[self.tower] = AnySketch::Tower(tower);
        if half.stats().hops == 0 {
            return Ok(EpochPerSwitch { spill, ..EpochPerSwitch::default() });
        }
        let info = PerSwitchInfo {
            hops: half.stats().hops,
            table_flows: half.table.entries().count() as u64,
            table_misses: half.table.misses(),
            inflated: half.stats().inflated,
        };
        Ok(EpochPerSwitch { sections: per_switch_sections(&half, &records), info: Some(info), spill })
    }
}

/// An epoch's per-switch part, as [`PerSwitchRun::take_epoch`] returns it.
#[derive(Default)]
struct EpochPerSwitch {
    sections: Vec<smartnic_driver::snapshot::PerSwitchSection>,
    info: Option<PerSwitchInfo>,
    spill: Option<RecordSpill>,
}

/// The records of the epoch whose snapshot goes to `snapshot` are spilled beside it.
fn spill_for(snapshot: PathBuf) -> Spill {
    Spill { snapshot, records: SPILL_RECORDS }
}

/// Records `batch` in every sketch, and in the per-switch half when there is one.
fn feed(
    sketches: &mut [AnySketch],
    batch: &SharedBatch,
    range: Range<usize>,
    per_switch: Option<&mut PerSwitchRun>,
    epoch: u64,
) {
    let Some(ps) = per_switch else {
        return sketches.iter_mut().for_each(|s| s.insert_packets(&batch[range.clone()]));
    };
    // The half's thread first, so it works while the other sketches insert here.
    ps.feed(batch, range.clone(), epoch);
    for (i, s) in sketches.iter_mut().enumerate() {
        if i != ps.tower {
            s.insert_packets(&batch[range.clone()]);
        }
    }
}

/// Where a `sketch run` stands: the epoch being filled and the snapshots written so far.
struct EpochRun {
    /// Packets per epoch (`None`: one snapshot of the whole trace).
    epochs: Option<u64>,
    epoch: u64,
    in_epoch: u64,
    total: u64,
    out: Vec<SnapshotInfo>,
}

impl EpochRun {
    /// Feeds `batch` to the sketches, cut at every epoch end it spans; each completed
    /// epoch is written as its snapshot and the sketches cleared.
    fn feed_split(
        &mut self,
        batch: &SharedBatch,
        sketches: &mut [AnySketch],
        mut per_switch: Option<&mut PerSwitchRun>,
        output: &Path,
    ) -> anyhow::Result<()> {
        let mut start = 0;
        while start < batch.len() {
            let room = self.epochs.map_or(u64::MAX, |n| n - self.in_epoch);
            let now = start..start + room.min((batch.len() - start) as u64) as usize;
            feed(sketches, batch, now.clone(), per_switch.as_deref_mut(), self.epoch);
            self.in_epoch += now.len() as u64;
            self.total += now.len() as u64;
            if self.epochs == Some(self.in_epoch) {
                let ps = per_switch.as_deref_mut();
                self.out.push(write_epoch(sketches, ps, output, self.epochs, self.epoch, self.in_epoch)?);
                sketches.iter_mut().for_each(AnySketch::clear);
                self.epoch += 1;
                self.in_epoch = 0;
            }
            start = now.end;
        }
        Ok(())
    }
}

pub fn run_trace(args: &RunArgs, json: bool) -> anyhow::Result<()> {
    let mut sketches = build_sketches(&args.sketches, args.memory)?;
    if sketches.iter().any(|s| matches!(s, AnySketch::Elastic(_))) {
        bail!(
            "elastic is a software-only baseline without a snapshot format; compare it with `smartnic sketch eval`"
        );
    }
    let epochs = args.epoch_packets.filter(|&n| n > 0);
    if epochs.is_some() {
        std::fs::create_dir_all(&args.output)
            .with_context(|| format!("cannot create output directory {}", args.output.display()))?;
        manifest::remove_stale(&args.output)?;
    }
    // The clock starts before the per-switch thread does, so every thread's time is
    // within the run's.
    let start = std::time::Instant::now();
    let main_cpu = thread_cpu_s();
    let mut per_switch = PerSwitchRun::new(args, &sketches, epoch_path(&args.output, epochs, 0))?;
    let mut reader = PacketReader::open_as(&args.trace, args.format)
        .with_context(|| format!("cannot read trace {}", args.trace.display()))?;
    let pb = bar(None, "sketching");
    let mut run = EpochRun { epochs, epoch: 0, in_epoch: 0, total: 0, out: Vec::new() };
    // The parser reads ahead while the sketches insert (on a thread of its own when a core
    // is left for it); a batch is cut where an epoch ends, so every packet lands in the
    // epoch it belongs to.
    let busy = 1 + per_switch.is_some() as usize;
    let parsing = args.parser.unwrap_or_else(|| Parsing::for_this_machine(busy));
    let times = for_each_shared_batch(&mut reader, pipeline::BATCH, parsing, |batch| {
        run.feed_split(&batch, &mut sketches, per_switch.as_mut(), &args.output)?;
        pb.set_position(run.total);
        Ok::<_, anyhow::Error>(())
    })
    .with_context(|| format!("trace {}", args.trace.display()))?;
    let EpochRun { epoch, in_epoch, total, mut out, .. } = run;
    if in_epoch > 0 || out.is_empty() {
        out.push(write_epoch(&mut sketches, per_switch.as_mut(), &args.output, epochs, epoch, in_epoch)?);
    }
    pb.finish_and_clear();
    let cpu_s = thread_cpu_s().zip(main_cpu).map(|(now, then)| now - then);
    let half = per_switch.map(PerSwitchRun::finish);
    let main =
        StageTime { cpu_s, waited_s: times.consumer_waited_s + half.map_or(0.0, |(_, waited)| waited) };
    let mut stages = match times.parser {
        Some(parser) => {
            vec![StageReport { stage: "parser", time: parser }, StageReport { stage: "sketches", time: main }]
        }
        None => vec![StageReport { stage: "parser+sketches", time: main }],
    };
    stages.extend(half.map(|(time, _)| StageReport { stage: "per-switch", time }));
    let counts = reader.counts();
    let report = RunReport {
        trace: args.trace.display().to_string(),
        packets: total,
        non_ip: counts.non_ip,
        malformed: counts.malformed,
        seconds: start.elapsed().as_secs_f64(),
        stages,
        snapshots: out,
    };
    if let Some(per) = epochs {
        manifest::write(&args.output, &run_manifest(&report, per))?;
    }
    if json {
        return super::print_json(&report);
    }
    println!(
        "{} packets ({} non-IP, {} malformed frames skipped) in {:.2} s",
        report.packets, report.non_ip, report.malformed, report.seconds
    );
    println!("{}", stage_line(&report.stages));
    for s in &report.snapshots {
        print!("epoch {:>4}: {:>10} packets -> {}", s.epoch, s.packets, s.path);
        if let Some(p) = &s.per_switch {
            print!("  (per-switch: {} hops, {} table flows, {} inflated)", p.hops, p.table_flows, p.inflated);
        }
        println!();
    }
    Ok(())
}

/// The stages' times in one line: each thread's CPU time and time blocked.
fn stage_line(stages: &[StageReport]) -> String {
    let each: Vec<String> = stages
        .iter()
        .map(|s| {
            let cpu = s.time.cpu_s.map_or("?".to_string(), |c| format!("{c:.2}"));
            format!("{} {cpu} s CPU, {:.2} s waiting", s.stage, s.time.waited_s)
        })
        .collect();
    format!("threads: {}", each.join("; "))
}

/// The manifest of a complete `--epoch-packets` run.
fn run_manifest(r: &RunReport, epoch_packets: u64) -> Manifest {
    Manifest {
        complete: true,
        trace: r.trace.clone(),
        epoch_packets,
        packets: r.packets,
        non_ip: r.non_ip,
        malformed: r.malformed,
        epochs: r
            .snapshots
            .iter()
            .map(|s| EpochEntry {
                file: manifest::file_name(Path::new(&s.path)),
                epoch: s.epoch,
                packets: s.packets,
            })
            .collect(),
    }
}

/// Where epoch `epoch`'s snapshot goes: `output` itself for a run of one epoch.
fn epoch_path(output: &Path, epochs: Option<u64>, epoch: u64) -> PathBuf {
    match epochs {
        Some(_) => output.join(format!("epoch-{epoch:06}.snap")),
        None => output.to_path_buf(),
    }
}

/// Writes the current counters (and the per-switch half's state) as epoch `epoch`'s
/// snapshot. The per-switch half goes on cleared; the flow sketches are the caller's to
/// clear when another epoch follows (after the last, clearing them only costs time).
fn write_epoch(
    sketches: &mut [AnySketch],
    per_switch: Option<&mut PerSwitchRun>,
    output: &Path,
    epochs: Option<u64>,
    epoch: u64,
    packets: u64,
) -> anyhow::Result<SnapshotInfo> {
    let path = epoch_path(output, epochs, epoch);
    let next = epoch_path(output, epochs, epoch + 1);
    let part = match per_switch {
        Some(ps) => ps.take_epoch(sketches, &next)?,
        None => EpochPerSwitch::default(),
    };
    let mut snap = software_snapshot(sketches, epoch, packets)?;
    snap.per_switch = part.sections;
    match part.spill {
        Some(spill) => snap.write_file_spilled(&path, spill)?,
        None => snap.write_file(&path)?,
    }
    Ok(SnapshotInfo { path: path.display().to_string(), epoch, packets, per_switch: part.info })
}

#[derive(Debug, Serialize)]
struct FlowAnswer {
    sketch: String,
    packets: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    delay_hist: Option<Vec<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_interval_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_arrival_ns: Option<u64>,
}

/// What `query --json` prints.
#[derive(Debug, Serialize)]
struct QueryReport {
    flow: String,
    epoch: u64,
    /// IP packets of the epoch.
    packets: u64,
    sketches: Vec<FlowAnswer>,
    /// `null` when the snapshot has no latency tower.
    per_switch: Option<FlowPerSwitch>,
}

/// The flow in the snapshot's per-switch half.
#[derive(Debug, Serialize)]
struct FlowPerSwitch {
    /// Its path from the flow-key table (`null`: not in the table, or no table).
    table_path: Option<Vec<u16>>,
    switches: Vec<crate::tasks::per_switch::FlowAtSwitch>,
}

pub fn query(args: &QueryArgs, json: bool) -> anyhow::Result<()> {
    let snap = Snapshot::read_file(&args.snapshot)
        .with_context(|| format!("cannot use snapshot {}", args.snapshot.display()))?;
    let mut sketches = Vec::new();
    for (i, section) in snap.sections.iter().enumerate() {
        sketches.push(flow_answer(from_section(i, section)?, &args.flow));
    }
    let per_switch = flow_per_switch(&snap, args)?;
    let report = QueryReport {
        flow: args.flow.to_string(),
        epoch: snap.epoch,
        packets: snap.packets,
        sketches,
        per_switch,
    };
    if json {
        return super::print_json(&report);
    }
    print_query(&report);
    Ok(())
}

/// One flow sketch's answer for `flow`.
fn flow_answer(sketch: AnySketch, flow: &FlowKey) -> FlowAnswer {
    match sketch {
        AnySketch::Tower(t) => FlowAnswer {
            sketch: format!("tower-{}", t.mode().name()),
            packets: t.query(flow),
            delay_hist: None,
            max_interval_ns: None,
            last_arrival_ns: None,
        },
        AnySketch::SuMax(s) => {
            let e = s.query(flow);
            let ns = |units| units_to_ns(s.geometry(), units);
            FlowAnswer {
                sketch: "sumax".into(),
                packets: e.size,
                delay_hist: Some(e.delay_hist),
                max_interval_ns: Some(ns(e.max_interval)),
                last_arrival_ns: Some(ns(e.last_arrival)),
            }
        }
        AnySketch::Elastic(_) => unreachable!("snapshots never hold ElasticSketch"),
    }
}

/// The flow at its switches: `--switch`, else its table path, then its records' switches.
fn flow_per_switch(snap: &Snapshot, args: &QueryArgs) -> anyhow::Result<Option<FlowPerSwitch>> {
    let state = crate::sketch::snapshot::per_switch_state(snap)
        .with_context(|| format!("the per-switch half of {}", args.snapshot.display()))?;
    let Some(tower) = &state.latency else { return Ok(None) };
    let table_path = state
        .table
        .as_ref()
        .and_then(|t| t.table.entries().find(|e| e.key == args.flow).map(|e| e.path.clone()));
    let given =
        if args.switch.is_empty() { table_path.clone().unwrap_or_default() } else { args.switch.clone() };
    let records = state.records.as_deref().unwrap_or(&[]);
    let switches = crate::tasks::per_switch::flow_at_switches(tower, records, &args.flow, &given);
    Ok(Some(FlowPerSwitch { table_path, switches }))
}

fn print_query(r: &QueryReport) {
    println!("flow {} in epoch {} ({} packets in the epoch)", r.flow, r.epoch, r.packets);
    for a in &r.sketches {
        print!("  {:<10} {:>10} packets", a.sketch, a.packets);
        if let (Some(h), Some(iv)) = (&a.delay_hist, a.max_interval_ns) {
            print!("  delay bins {h:?}  max inter-arrival {iv} ns");
        }
        println!();
    }
    let Some(ps) = &r.per_switch else { return };
    match &ps.table_path {
        Some(p) => println!("  path (flow-key table): {p:?}"),
        None => println!("  not in the flow-key table (its size never passed the table threshold)"),
    }
    if ps.switches.is_empty() {
        println!("  no switch to show: give them with --switch ID,ID,...");
    }
    for s in &ps.switches {
        let avg = s.avg_latency_ns.map_or("-".to_string(), |ns| format!("{:.1} us", ns / 1000.0));
        let hops = s.hops.map_or("overflowed".to_string(), |n| n.to_string());
        println!(
            "  switch {:>5}: {:>10} hops  avg latency {:>10}  inflated {}",
            s.switch_id, hops, avg, s.inflated
        );
    }
}

#[derive(Debug, Serialize)]
struct SectionDiff {
    sketch: String,
    /// What differs in the section's description (insertion mode, geometry, hash
    /// parameters, time unit, delay bins): each changes what the counters mean.
    header: Vec<String>,
    /// Packed counter bytes that differ; `null` when the counter layouts differ.
    differing_bytes: Option<u64>,
    equal: bool,
}

/// One `name: a vs b` line when `a != b`.
fn field<T: PartialEq + std::fmt::Debug>(out: &mut Vec<String>, name: &str, a: T, b: T) {
    if a != b {
        out.push(format!("{name}: {a:?} vs {b:?}"));
    }
}

/// How two TowerSketch descriptions differ.
fn tower_header(ga: &TowerGeometry, ma: InsertMode, gb: &TowerGeometry, mb: InsertMode) -> Vec<String> {
    let mut out = Vec::new();
    if ma != mb {
        out.push(format!("insertion mode: {} vs {}", ma.name(), mb.name()));
    }
    field(&mut out, "arrays", ga.arrays.len(), gb.arrays.len());
    for (i, (a, b)) in ga.arrays.iter().zip(&gb.arrays).enumerate() {
        field(&mut out, &format!("array {i} width"), a.width, b.width);
        field(&mut out, &format!("array {i} depth"), a.depth, b.depth);
        field(&mut out, &format!("array {i} hash"), a.hash, b.hash);
    }
    out
}

/// How two SuMax descriptions differ.
fn sumax_header(a: &SuMaxGeometry, b: &SuMaxGeometry) -> Vec<String> {
    let mut out = Vec::new();
    field(&mut out, "arrays", a.hashes.len(), b.hashes.len());
    for (i, (x, y)) in a.hashes.iter().zip(&b.hashes).enumerate() {
        field(&mut out, &format!("array {i} hash"), x, y);
    }
    field(&mut out, "depth", a.depth, b.depth);
    field(&mut out, "size width", a.size_width, b.size_width);
    field(&mut out, "delay cells", a.delay_cells, b.delay_cells);
    field(&mut out, "delay width", a.delay_width, b.delay_width);
    field(&mut out, "time width", a.time_width, b.time_width);
    field(&mut out, "time shift", a.time_shift, b.time_shift);
    field(&mut out, "delay bins", a.delay_bins, b.delay_bins);
    out
}

/// Compares one pair of sections: their descriptions, then (when the counter layouts
/// match) their counter bytes.
fn diff_section(sa: &Section, sb: &Section) -> anyhow::Result<SectionDiff> {
    let (name, header, same_layout, xa, xb) = match (sa, sb) {
        (
            Section::Tower { geometry: ga, mode: ma, arrays: xa },
            Section::Tower { geometry: gb, mode: mb, arrays: xb },
        ) => ("tower", tower_header(ga, *ma, gb, *mb), ga == gb, xa, xb),
        (Section::SuMax { geometry: ga, arrays: xa }, Section::SuMax { geometry: gb, arrays: xb }) => {
            ("sumax", sumax_header(ga, gb), ga == gb, xa, xb)
        }
        _ => bail!("section kinds differ: the snapshots hold different sketches"),
    };
    let differing = same_layout.then(|| {
        xa.iter().zip(xb).map(|(p, q)| p.iter().zip(q).filter(|(x, y)| x != y).count() as u64).sum::<u64>()
    });
    let equal = header.is_empty() && differing == Some(0);
    Ok(SectionDiff { sketch: name.into(), header, differing_bytes: differing, equal })
}

/// How two latency-tower descriptions differ.
fn latency_header(
    (ga, ma): (&LatencyTowerGeometry, InsertMode),
    (gb, mb): (&LatencyTowerGeometry, InsertMode),
) -> Vec<String> {
    let mut out = Vec::new();
    if ma != mb {
        out.push(format!("insertion mode: {} vs {}", ma.name(), mb.name()));
    }
    field(&mut out, "latency shift", ga.latency_shift, gb.latency_shift);
    field(&mut out, "arrays", ga.arrays.len(), gb.arrays.len());
    for (i, (a, b)) in ga.arrays.iter().zip(&gb.arrays).enumerate() {
        field(&mut out, &format!("array {i} count width"), a.count_width, b.count_width);
        field(&mut out, &format!("array {i} sum width"), a.sum_width, b.sum_width);
        field(&mut out, &format!("array {i} depth"), a.depth, b.depth);
        field(&mut out, &format!("array {i} hash"), a.hash, b.hash);
    }
    out
}

/// How two key-table descriptions differ (the miss counts are compared like counters).
fn table_header((ga, ta): (&KeyTableGeometry, u32), (gb, tb): (&KeyTableGeometry, u32)) -> Vec<String> {
    let mut out = Vec::new();
    field(&mut out, "threshold", ta, tb);
    field(&mut out, "ways", ga.ways.len(), gb.ways.len());
    field(&mut out, "depth", ga.depth, gb.depth);
    for (i, (a, b)) in ga.ways.iter().zip(&gb.ways).enumerate() {
        field(&mut out, &format!("way {i} hash"), a, b);
    }
    out
}

/// Bytes that differ between two lists of equally laid-out arrays.
fn differing(xa: &[Vec<u8>], xb: &[Vec<u8>]) -> u64 {
    xa.iter().zip(xb).map(|(p, q)| p.iter().zip(q).filter(|(x, y)| x != y).count() as u64).sum()
}

/// Compares one pair of per-switch sections like [`diff_section`]: the record streams
/// compare byte for byte when their lengths agree.
fn diff_per_switch(sa: &PerSwitchSection, sb: &PerSwitchSection) -> anyhow::Result<SectionDiff> {
    use PerSwitchSection as P;
    let (name, header, bytes) = match (sa, sb) {
        (
            P::LatencyTower { geometry: ga, mode: ma, arrays: xa },
            P::LatencyTower { geometry: gb, mode: mb, arrays: xb },
        ) => ("latency", latency_header((ga, *ma), (gb, *mb)), (ga == gb).then(|| differing(xa, xb))),
        (
            P::KeyTable { geometry: ga, threshold: ta, misses: na, ways: xa },
            P::KeyTable { geometry: gb, threshold: tb, misses: nb, ways: xb },
        ) => {
            let misses = u64::from(na != nb);
            ("table", table_header((ga, *ta), (gb, *tb)), (ga == gb).then(|| differing(xa, xb) + misses))
        }
        (P::Records { stream: a }, P::Records { stream: b }) => {
            let same_len = a.len() == b.len();
            let h = if same_len {
                Vec::new()
            } else {
                vec![format!("record stream: {} vs {} bytes", a.len(), b.len())]
            };
            ("records", h, same_len.then(|| differing(std::slice::from_ref(a), std::slice::from_ref(b))))
        }
        _ => bail!(
            "per-switch section kinds differ: the snapshots hold different parts of the per-switch half"
        ),
    };
    let equal = header.is_empty() && bytes == Some(0);
    Ok(SectionDiff { sketch: name.into(), header, differing_bytes: bytes, equal })
}

/// Compares sections of the same kind in order (the first Tower with the first Tower, ...),
/// then the per-switch sections the same way. A snapshot without any per-switch section (a
/// bitstream without the per-switch half, or `sketch run --no-per-switch`) leaves them
/// uncompared, with a note: the flow sketches of a NIC and of its software twin still
/// compare when only the twin has the half.
pub fn diff(args: &DiffArgs, json: bool) -> anyhow::Result<()> {
    let read =
        |p: &PathBuf| Snapshot::read_file(p).with_context(|| format!("cannot use snapshot {}", p.display()));
    let (a, b) = (read(&args.a)?, read(&args.b)?);
    let mut out =
        a.sections.iter().zip(&b.sections).map(|(x, y)| diff_section(x, y)).collect::<Result<Vec<_>, _>>()?;
    for (x, y) in a.per_switch.iter().zip(&b.per_switch) {
        out.push(diff_per_switch(x, y)?);
    }
    let one_lacks_half = a.per_switch.is_empty() != b.per_switch.is_empty();
    let counts_equal =
        a.sections.len() == b.sections.len() && (a.per_switch.len() == b.per_switch.len() || one_lacks_half);
    let all_equal = out.iter().all(|d| d.equal) && counts_equal;
    if json {
        super::print_json(&out)?;
    } else {
        for d in &out {
            for h in &d.header {
                println!("{:<7} {h}", d.sketch);
            }
            match d.differing_bytes {
                Some(0) if d.header.is_empty() => println!("{:<7} equal, counter for counter", d.sketch),
                Some(0) => println!("{:<7} counter bytes equal, but they mean different things", d.sketch),
                Some(n) => println!("{:<7} {n} packed counter bytes differ", d.sketch),
                None => println!("{:<7} counter layouts differ", d.sketch),
            }
        }
        if a.packets != b.packets {
            println!("packets: {} vs {}", a.packets, b.packets);
        }
        if a.sections.len() != b.sections.len() {
            println!(
                "sections: {} vs {} (compared the first {})",
                a.sections.len(),
                b.sections.len(),
                a.sections.len().min(b.sections.len())
            );
        }
        if one_lacks_half {
            println!(
                "per-switch sections: {} vs {} (not compared: one snapshot has no per-switch half)",
                a.per_switch.len(),
                b.per_switch.len()
            );
        } else if a.per_switch.len() != b.per_switch.len() {
            println!(
                "per-switch sections: {} vs {} (compared the first {})",
                a.per_switch.len(),
                b.per_switch.len(),
                a.per_switch.len().min(b.per_switch.len())
            );
        }
    }
    if !all_equal || a.packets != b.packets {
        bail!("the snapshots differ");
    }
    Ok(())
}
