//! The accuracy lab: run sketches of several kinds and memory sizes over one trace, answer
//! every measurement task, and compare with the exact answers.
//!
//! Design: the trace is read once into memory ([`TraceData`]: key, timestamp and path
//! delay per packet) and the exact answers are computed from it ([`GroundTruth`], checked
//! against the generator's truth file by the CLI). Each (sketch, memory) pair then inserts
//! the trace once, keeping SketchINT's heavy-hitter table as it goes; heavy-change
//! detection needs two epochs, so when it is asked for the two halves of the trace are
//! also inserted into two epoch sketches (a second pass). The pairs run on
//! [`EvalConfig::threads`] threads ([`crate::parallel`]), each pair on one thread: every
//! pair is deterministic, so the same trace and configuration give the same numbers
//! whatever the thread count.
//!
//! Metrics (names in tables and JSON):
//!
//! | metric | task | meaning |
//! |---|---|---|
//! | `size_are`, `size_aae` | size | flow-size ARE / AAE over all flows |
//! | `hh_f1`, `hh_pr`, `hh_rr`, `hh_are` | heavy | heavy hitters (`n > --hh-threshold`); ARE over correct reports |
//! | `hc_f1` | change | heavy changes between the trace's two halves (`|n1 - n2| > --hc-threshold`) |
//! | `dist_wmre` | distribution | flow-size distribution WMRE (MRAC) |
//! | `entropy_re` | entropy | RE of the entropy from the estimated distribution |
//! | `card_re` | cardinality | RE of linear counting |
//! | `delay_wmre` | delay | SuMax: mean per-flow delay-distribution WMRE over the top flows |
//! | `iat_are` | interval | SuMax: max inter-arrival ARE over the top flows with >= 2 packets |
//! | `last_aae_us` | last | SuMax: last-arrival AAE over the top flows, microseconds |
//! | `p55_valid`, `p55_are`, `p80_valid`, `p80_are` | partial | SuMax with 55% / 80% of columns: valid-result rate, ARE of the top flows' valid results |
//!
//! | module | what it does |
//! |---|---|
//! | [`per_switch`] | the per-switch tasks (SketchINT V-B) on network-lab traffic, against exact answers |
//! | [`nic_snapshots`] | the same tasks answered from the simulated NIC's own snapshots |
//! | [`plot`] | accuracy-versus-memory plots |

pub mod nic_snapshots;
pub mod per_switch;
pub mod plot;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context};
use serde::Serialize;
use smartnic_contract::FlowKey;

use crate::metrics::{self, Detection};
use crate::sketch::{AnySketch, SketchKind, SuMax};
use crate::tasks::heavy::{self, CandidateTable, TABLE_CAPACITY};
use crate::tasks::{cardinality, distribution, entropy, flow_size, sumax as sumax_tasks, SizeDistribution};
use crate::trace::pipeline::{for_each_batch, BATCH};
use crate::trace::{Counts, Format, PacketReader, Truth};
use smartnic_contract::geometry::SuMaxGeometry;

/// The packets of a trace as the sketches need them.
#[derive(Clone, Debug, Default)]
pub struct TraceData {
    pub keys: Vec<FlowKey>,
    pub ts_ns: Vec<u64>,
    pub delay_ns: Vec<u64>,
}

impl TraceData {
    /// Reads every IP packet of a pcap or pcapng trace.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        Ok(Self::load_as(path, Format::Auto)?.0)
    }

    /// Reads every IP packet of a trace in `format` (21-byte records need
    /// `Format::Records`), with the counts of the frames that were not IP packets; the
    /// file is parsed on a second thread while the columns fill.
    pub fn load_as(path: &Path, format: Format) -> anyhow::Result<(Self, Counts)> {
        let mut r = PacketReader::open_as(path, format)
            .with_context(|| format!("opening trace {}", path.display()))?;
        let mut d = TraceData::default();
        for_each_batch(&mut r, BATCH, |batch| {
            batch.iter().for_each(|p| d.push(p.key, p.ts_ns, p.delay_ns()));
            Ok::<_, anyhow::Error>(())
        })
        .with_context(|| format!("trace {}", path.display()))?;
        Ok((d, r.counts()))
    }

    pub fn push(&mut self, key: FlowKey, ts_ns: u64, delay_ns: u64) {
        self.keys.push(key);
        self.ts_ns.push(ts_ns);
        self.delay_ns.push(delay_ns);
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// Exact per-flow facts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlowTruth {
    pub key: FlowKey,
    pub packets: u64,
    /// Packets in the first and second half of the trace (the two epochs).
    pub halves: [u64; 2],
    pub max_iat_ns: u64,
    pub last_ns: u64,
}

/// Exact answers to every task.
#[derive(Clone, Debug, Default)]
pub struct GroundTruth {
    /// Most packets first, ties by key.
    pub flows: Vec<FlowTruth>,
    pub index: HashMap<FlowKey, usize>,
    pub distribution: SizeDistribution,
    pub entropy: f64,
    pub packets: u64,
}

impl GroundTruth {
    pub fn from_data(d: &TraceData) -> Self {
        let half = d.len() / 2;
        let mut index: HashMap<FlowKey, usize> = HashMap::new();
        let mut flows: Vec<FlowTruth> = Vec::new();
        let mut prev: Vec<u64> = Vec::new();
        for (i, (k, &ts)) in d.keys.iter().zip(&d.ts_ns).enumerate() {
            let fi = *index.entry(*k).or_insert_with(|| {
                flows.push(FlowTruth { key: *k, ..Default::default() });
                prev.push(ts);
                flows.len() - 1
            });
            let f = &mut flows[fi];
            if f.packets > 0 {
                f.max_iat_ns = f.max_iat_ns.max(ts.saturating_sub(prev[fi]));
            }
            prev[fi] = ts;
            f.packets += 1;
            f.halves[usize::from(i >= half)] += 1;
            f.last_ns = f.last_ns.max(ts);
        }
        flows.sort_unstable_by(|a, b| b.packets.cmp(&a.packets).then(a.key.cmp(&b.key)));
        let index = flows.iter().enumerate().map(|(i, f)| (f.key, i)).collect();
        let distribution = SizeDistribution::from_sizes(flows.iter().map(|f| f.packets));
        let entropy = entropy::of_distribution(&distribution);
        GroundTruth { flows, index, distribution, entropy, packets: d.len() as u64 }
    }

    /// Checks that a generator truth file describes the same trace: same packets, same
    /// flows with the same sizes and maximum inter-arrival times.
    pub fn check_against(&self, t: &Truth) -> anyhow::Result<()> {
        if t.totals.packets != self.packets || t.flows.len() != self.flows.len() {
            bail!(
                "the truth file describes {} packets in {} flows but the trace has {} packets in {} flows; \
                 pass the truth file written with this trace",
                t.totals.packets,
                t.flows.len(),
                self.packets,
                self.flows.len()
            );
        }
        for r in &t.flows {
            let key = FlowKey::parse(&r.key).with_context(|| format!("truth flow key `{}`", r.key))?;
            let ok = self.index.get(&key).map(|&i| &self.flows[i]);
            match ok {
                Some(f) if f.packets == r.packets && f.max_iat_ns == r.max_iat_ns => {}
                _ => bail!(
                    "truth flow {} does not match the trace; pass the truth file written with this trace",
                    r.key
                ),
            }
        }
        Ok(())
    }

    pub fn cardinality(&self) -> usize {
        self.flows.len()
    }

    pub fn heavy_hitters(&self, threshold: u64) -> impl Iterator<Item = &FlowTruth> {
        self.flows.iter().take_while(move |f| f.packets > threshold)
    }

    pub fn heavy_changes(&self, threshold: u64) -> impl Iterator<Item = &FlowTruth> {
        self.flows.iter().filter(move |f| f.halves[0].abs_diff(f.halves[1]) > threshold)
    }
}

/// The measurement tasks the lab can score.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Task {
    Size,
    Heavy,
    Change,
    Distribution,
    Entropy,
    Cardinality,
    Delay,
    Interval,
    Last,
    Partial,
}

impl Task {
    pub const ALL: [Task; 10] = [
        Task::Size,
        Task::Heavy,
        Task::Change,
        Task::Distribution,
        Task::Entropy,
        Task::Cardinality,
        Task::Delay,
        Task::Interval,
        Task::Last,
        Task::Partial,
    ];

    /// The metrics this task produces, in table order.
    pub fn metrics(self) -> &'static [&'static str] {
        match self {
            Task::Size => &["size_are", "size_aae"],
            Task::Heavy => &["hh_f1", "hh_pr", "hh_rr", "hh_are"],
            Task::Change => &["hc_f1"],
            Task::Distribution => &["dist_wmre"],
            Task::Entropy => &["entropy_re"],
            Task::Cardinality => &["card_re"],
            Task::Delay => &["delay_wmre"],
            Task::Interval => &["iat_are"],
            Task::Last => &["last_aae_us"],
            Task::Partial => &["p55_valid", "p55_are", "p80_valid", "p80_are"],
        }
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct EvalConfig {
    pub kinds: Vec<SketchKind>,
    pub memories: Vec<u64>,
    pub tasks: Vec<Task>,
    /// Heavy-hitter threshold Delta_h (SketchINT: 500 on 2.3M packets).
    pub hh_threshold: u64,
    /// Heavy-change threshold Delta_c (SketchINT: 250).
    pub hc_threshold: u64,
    pub table_capacity: usize,
    pub em_iterations: usize,
    /// Flows (largest first) scored by the per-flow SuMax tasks.
    pub top_flows: usize,
    /// Seed of the received-column choice of the partial task.
    pub seed: u64,
    /// Build SuMax with flow-size cells only (1-bit delay and time cells), the layout of
    /// LightGuardian's flow-size comparison with CM and CU; its delay and time metrics are
    /// then not scored.
    pub sumax_size_only: bool,
    /// Threads the (sketch, memory) pairs run on (0: every core).
    pub threads: usize,
}

impl Default for EvalConfig {
    fn default() -> Self {
        EvalConfig {
            kinds: SketchKind::ALL.to_vec(),
            memories: vec![300_000, 600_000, 900_000],
            tasks: Task::ALL.to_vec(),
            hh_threshold: 500,
            hc_threshold: 250,
            table_capacity: TABLE_CAPACITY,
            em_iterations: distribution::DEFAULT_ITERATIONS,
            top_flows: 1000,
            seed: 1,
            sumax_size_only: false,
            threads: 0,
        }
    }
}

impl EvalConfig {
    /// Packets inserted over the whole run (for a progress bar).
    pub fn total_packets(&self, packets: u64) -> u64 {
        let passes = if self.tasks.contains(&Task::Change) { 2 } else { 1 };
        packets * passes * (self.kinds.len() * self.memories.len()) as u64
    }
}

/// One (sketch, memory) result.
#[derive(Clone, Debug, Serialize)]
pub struct EvalRow {
    pub sketch: SketchKind,
    /// Memory asked for, bytes.
    pub memory: u64,
    /// Counter memory the sketch actually has (geometry rounding).
    pub memory_used: u64,
    pub metrics: BTreeMap<String, f64>,
    pub seconds: f64,
    /// Anything the numbers need to be read with (full tables, saturated estimators).
    pub notes: Vec<String>,
}

/// The sketch of `kind` with `mem` bytes under `cfg`.
pub fn build(kind: SketchKind, mem: u64, cfg: &EvalConfig) -> AnySketch {
    if kind == SketchKind::Sumax && cfg.sumax_size_only {
        let mut g = SuMaxGeometry::with_depth(3, 1);
        g.delay_cells = 1;
        g.delay_width = 1;
        g.time_width = 1;
        g.depth = g.fit_depth(mem);
        return AnySketch::SuMax(SuMax::new(g).expect("valid size-only geometry"));
    }
    kind.build(mem)
}

/// Feeds `range` of the trace into a sketch, with an optional candidate table.
fn feed(
    s: &mut AnySketch,
    mut table: Option<&mut CandidateTable>,
    d: &TraceData,
    range: std::ops::Range<usize>,
    progress: &(dyn Fn(u64) + Sync),
) {
    const CHUNK: usize = 1 << 16;
    let mut start = range.start;
    while start < range.end {
        let end = (start + CHUNK).min(range.end);
        match (&mut table, &mut *s) {
            (None, AnySketch::Tower(t)) => t.insert_batch(&d.keys[start..end]),
            (None, AnySketch::SuMax(x)) => {
                (start..end).for_each(|i| x.insert(&d.keys[i], d.ts_ns[i], d.delay_ns[i]))
            }
            (None, AnySketch::Elastic(e)) => d.keys[start..end].iter().for_each(|k| e.insert(k)),
            (Some(t), _) => {
                (start..end).for_each(|i| heavy::insert_tracked(s, t, &d.keys[i], d.ts_ns[i], d.delay_ns[i]))
            }
        }
        progress((end - start) as u64);
        start = end;
    }
}

/// Runs every configured (sketch, memory) pair, on [`EvalConfig::threads`] threads; the
/// rows come in configuration order (sketch by sketch, memories in turn). `progress`
/// receives inserted packets, from whichever thread inserted them.
pub fn run(
    d: &TraceData,
    truth: &GroundTruth,
    cfg: &EvalConfig,
    progress: &(dyn Fn(u64) + Sync),
) -> Vec<EvalRow> {
    let pairs: Vec<(SketchKind, u64)> =
        cfg.kinds.iter().flat_map(|&kind| cfg.memories.iter().map(move |&mem| (kind, mem))).collect();
    crate::parallel::map_ordered(&pairs, crate::parallel::threads(cfg.threads), |&(kind, mem)| {
        run_one(d, truth, cfg, kind, mem, progress)
    })
}

/// One (sketch, memory) pair.
pub fn run_one(
    d: &TraceData,
    truth: &GroundTruth,
    cfg: &EvalConfig,
    kind: SketchKind,
    mem: u64,
    progress: &(dyn Fn(u64) + Sync),
) -> EvalRow {
    let start = Instant::now();
    let has = |t: Task| cfg.tasks.contains(&t);
    let mut m: BTreeMap<String, f64> = BTreeMap::new();
    let mut notes = Vec::new();
    let mut s = build(kind, mem, cfg);
    let is_elastic = matches!(s, AnySketch::Elastic(_));
    let mut table = CandidateTable::new(cfg.hh_threshold, cfg.table_capacity);
    let track = has(Task::Heavy) && !is_elastic;
    feed(&mut s, track.then_some(&mut table), d, 0..d.len(), progress);

    if has(Task::Size) {
        let a = flow_size::evaluate(&s, truth.flows.iter().map(|f| (&f.key, f.packets)));
        m.insert("size_are".into(), a.are);
        m.insert("size_aae".into(), a.aae);
    }
    if has(Task::Heavy) {
        let reported = match &s {
            AnySketch::Elastic(e) => heavy::elastic(e, cfg.hh_threshold),
            other => heavy::from_table(other, &table),
        };
        if table.refused() > 0 {
            notes.push(format!("heavy-hitter table full: {} offers refused", table.refused()));
        }
        let true_hh: HashMap<FlowKey, u64> =
            truth.heavy_hitters(cfg.hh_threshold).map(|f| (f.key, f.packets)).collect();
        let rep: std::collections::HashSet<FlowKey> = reported.iter().map(|r| r.0).collect();
        let det = Detection::of(&rep, &true_hh.keys().copied().collect());
        let are =
            metrics::are(reported.iter().filter_map(|(k, e)| true_hh.get(k).map(|&t| (t as f64, *e as f64))));
        m.insert("hh_f1".into(), det.f1);
        m.insert("hh_pr".into(), det.precision);
        m.insert("hh_rr".into(), det.recall);
        m.insert("hh_are".into(), are);
    }
    if has(Task::Change) {
        let f1 = heavy_change_f1(d, truth, cfg, kind, mem, &mut notes, progress);
        m.insert("hc_f1".into(), f1);
    }
    if has(Task::Distribution) || has(Task::Entropy) {
        let dist = distribution::estimate(&s, cfg.em_iterations);
        if has(Task::Distribution) {
            m.insert("dist_wmre".into(), dist.wmre(&truth.distribution));
        }
        if has(Task::Entropy) {
            m.insert("entropy_re".into(), metrics::re(truth.entropy, entropy::of_distribution(&dist)));
        }
    }
    if has(Task::Cardinality) {
        let c = cardinality::estimate(&s);
        if c.saturated {
            notes.push("linear counting saturated (no zero counter): cardinality is a lower bound".into());
        }
        m.insert("card_re".into(), metrics::re(truth.cardinality() as f64, c.estimate));
    }
    if let AnySketch::SuMax(x) = &s {
        sumax_metrics(x, d, truth, cfg, &mut m);
    }
    EvalRow {
        sketch: kind,
        memory: mem,
        memory_used: s.memory_bytes(),
        metrics: m,
        seconds: start.elapsed().as_secs_f64(),
        notes,
    }
}

fn heavy_change_f1(
    d: &TraceData,
    truth: &GroundTruth,
    cfg: &EvalConfig,
    kind: SketchKind,
    mem: u64,
    notes: &mut Vec<String>,
    progress: &(dyn Fn(u64) + Sync),
) -> f64 {
    let half = d.len() / 2;
    let (mut a, mut b) = (build(kind, mem, cfg), build(kind, mem, cfg));
    let mut ta = CandidateTable::new(cfg.hc_threshold, cfg.table_capacity);
    let mut tb = CandidateTable::new(cfg.hc_threshold, cfg.table_capacity);
    let elastic = matches!(a, AnySketch::Elastic(_));
    feed(&mut a, (!elastic).then_some(&mut ta), d, 0..half, progress);
    feed(&mut b, (!elastic).then_some(&mut tb), d, half..d.len(), progress);
    let candidates: Vec<FlowKey> = match (&a, &b) {
        (AnySketch::Elastic(x), AnySketch::Elastic(y)) => {
            x.heavy_flows().into_iter().chain(y.heavy_flows()).map(|(k, _)| k).collect()
        }
        _ => ta.keys().iter().chain(tb.keys()).copied().collect(),
    };
    if ta.refused() + tb.refused() > 0 {
        notes.push(format!("heavy-change tables full: {} offers refused", ta.refused() + tb.refused()));
    }
    let reported: std::collections::HashSet<FlowKey> =
        heavy::changes(&a, &b, &candidates, cfg.hc_threshold).into_iter().map(|c| c.key).collect();
    let true_set = truth.heavy_changes(cfg.hc_threshold).map(|f| f.key).collect();
    Detection::of(&reported, &true_set).f1
}

fn sumax_metrics(
    x: &SuMax,
    d: &TraceData,
    truth: &GroundTruth,
    cfg: &EvalConfig,
    m: &mut BTreeMap<String, f64>,
) {
    let has = |t: Task| cfg.tasks.contains(&t) && (t == Task::Partial || !cfg.sumax_size_only);
    let top = &truth.flows[..cfg.top_flows.min(truth.flows.len())];
    if has(Task::Delay) {
        // Exact per-flow delay histograms of the top flows, binned by the sketch's own rule.
        let bins = sumax_tasks::bins(x);
        let cells = x.geometry().delay_cells as usize;
        let pos: HashMap<FlowKey, usize> = top.iter().enumerate().map(|(i, f)| (f.key, i)).collect();
        let mut hist = vec![vec![0u64; cells]; top.len()];
        for (k, &dl) in d.keys.iter().zip(&d.delay_ns) {
            if let Some(&i) = pos.get(k) {
                hist[i][bins.bin(dl) as usize] += 1;
            }
        }
        let w: f64 = top
            .iter()
            .zip(&hist)
            .map(|(f, h)| sumax_tasks::delay_wmre(h, &x.query(&f.key).delay_hist))
            .sum::<f64>()
            / top.len().max(1) as f64;
        m.insert("delay_wmre".into(), w);
    }
    if has(Task::Interval) {
        let are = metrics::are(
            top.iter()
                .filter(|f| f.packets >= 2)
                .map(|f| (f.max_iat_ns as f64, sumax_tasks::max_interarrival_ns(x, &f.key) as f64)),
        );
        m.insert("iat_are".into(), are);
    }
    if has(Task::Last) {
        let unit = sumax_tasks::time_unit_ns(x) as f64;
        let aae = metrics::aae(top.iter().map(|f| {
            let t = sumax_tasks::time_cell_of(x, f.last_ns);
            let e = x.query(&f.key).last_arrival;
            (0.0, sumax_tasks::time_distance(x, e, t) as f64 * unit / 1000.0)
        }));
        m.insert("last_aae_us".into(), aae);
    }
    if has(Task::Partial) {
        for (theta, name) in [(0.55, "p55"), (0.8, "p80")] {
            let mask = sumax_tasks::received_columns(x.geometry().depth, theta, cfg.seed);
            let all =
                sumax_tasks::partial_accuracy(x, truth.flows.iter().map(|f| (&f.key, f.packets)), &mask);
            let topa = sumax_tasks::partial_accuracy(x, top.iter().map(|f| (&f.key, f.packets)), &mask);
            m.insert(format!("{name}_valid"), all.valid_rate);
            m.insert(format!("{name}_are"), topa.are_valid);
        }
    }
}

/// The metric columns present in `rows`, in task order.
pub fn metric_columns(rows: &[EvalRow]) -> Vec<&'static str> {
    Task::ALL
        .iter()
        .flat_map(|t| t.metrics().iter().copied())
        .filter(|c| rows.iter().any(|r| r.metrics.contains_key(*c)))
        .collect()
}
