//! The per-switch accuracy lab: SketchINT's four global tasks (section V-B, Figure 7)
//! answered by the NIC's models on network-lab traffic, scored against exact answers.
//!
//! Design: the lab runs once and every host's NIC stream is kept in memory
//! ([`Streams::from_lab`]), split into two epochs at the time by which half the packets
//! had arrived (heavy changes compare them). The exact answers ([`Exact`]) come from the
//! same packets with hash maps: what a perfect NIC would report. Each configuration
//! ([`Point`]: the flow tower's and the latency tower's memory, the insertion mode) then
//! runs every host's NIC model over its stream, bank by bank, exactly as the hardware does
//! (flow tower estimate after each packet -> key table; every hop -> latency tower ->
//! inflated-latency records), and answers the tasks with [`crate::tasks::per_switch`].
//!
//! | metric | task | SketchINT Fig. 7 |
//! |---|---|---|
//! | `sw_hh` | per-switch heavy hitters (`n > 1500`), F1 over (epoch, switch, flow) | 0.99 at 50 KB (TowerCU) |
//! | `sw_hc` | per-switch heavy changes (`abs(n1 - n0) > 750`), F1 over (switch, flow) | 0.98 at 50 KB |
//! | `lat_are` | per-flow per-switch average latency, ARE over every (epoch, flow, switch) | 0.11 at 3 MB (Tower), CM 0.18 |
//! | `lat_are_1us` | the same over the pairs averaging at least 1 us | |
//! | `inflated` | inflated latency (`> 5 x` the pair's average so far), F1 over (epoch, flow, switch); truth by the exact rule at the NIC's 16 ns resolution | 0.976 at 600 KB |
//! | `inflated_ns` | the same against the exact rule on ns latencies (the lab's idle ports give hops of a few ns, below the NIC's resolution) | |
//!
//! Memory is per NIC, as in the paper's end hosts.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};

use anyhow::Context;

use serde::Serialize;
use smartnic_contract::geometry::{InsertMode, TowerGeometry};
use smartnic_contract::per_switch::{latency_units, LatencyTowerGeometry};
use smartnic_contract::FlowKey;
use smartnic_p4::topology::Topology;

use crate::lab::output::DirSink;
use crate::lab::{LabConfig, Sink};
use crate::metrics::{self, Detection};
use crate::sketch::key_table::KeyTable;
use crate::sketch::latency_tower::LatencyTower;
use crate::sketch::per_switch::{PerSwitch, PerSwitchConfig};
use crate::sketch::Tower;
use crate::tasks::per_switch::{
    inflated_pairs, pair_latency_ns, per_switch_changes, per_switch_heavy, CHANGE_THRESHOLD, HEAVY_THRESHOLD,
};
use crate::trace::frame::{parse_frame, FrameClass, LINKTYPE_ETHERNET};
use crate::trace::{Packet, PacketReader};
use smartnic_contract::wire::record::InflatedRecord;

/// Every host NIC's packets, and the epoch boundary.
#[derive(Clone, Debug, Default)]
pub struct Streams {
    /// (host name, its packets in arrival order), hosts that received something.
    pub hosts: Vec<(String, Vec<Packet>)>,
    /// Packets at or after this time belong to epoch 1.
    pub split_ns: u64,
}

/// Where [`Streams::from_lab_dir`] leaves host `name`'s capture.
pub fn capture_path(dir: &Path, name: &str) -> PathBuf {
    dir.join("hosts").join(format!("{name}.pcapng"))
}

/// A lab sink that keeps what each host's NIC parsed.
struct MemSink {
    hosts: Vec<Vec<Packet>>,
    scratch: Vec<u8>,
}

impl Sink for MemSink {
    fn deliver(&mut self, host: usize, time_ns: u64, headers: &[u8], zeros: u32) -> io::Result<()> {
        self.scratch.clear();
        self.scratch.extend_from_slice(headers);
        self.scratch.resize(headers.len() + zeros as usize, 0);
        if let FrameClass::Ip { key, hops } = parse_frame(LINKTYPE_ETHERNET, &self.scratch) {
            let wire_len = self.scratch.len() as u32;
            self.hosts[host].push(Packet { ts_ns: time_ns, wire_len, key, hops: hops.into() });
        }
        Ok(())
    }
}

impl Streams {
    /// Runs the lab and keeps every host's stream.
    pub fn from_lab(t: &Topology, cfg: &LabConfig) -> anyhow::Result<Self> {
        crate::lab::engine::check(t, cfg)?;
        let mut sink = MemSink { hosts: vec![Vec::new(); t.nodes.len()], scratch: Vec::new() };
        crate::lab::run(t, cfg, &mut sink)?;
        let hosts: Vec<(String, Vec<Packet>)> = t
            .hosts()
            .map(|h| (t.nodes[h].name.clone(), std::mem::take(&mut sink.hosts[h])))
            .filter(|(_, p)| !p.is_empty())
            .collect();
        Ok(Self::split(hosts))
    }

    /// Runs the lab into `dir` (`dir/hosts/<host>.pcapng`, what a NIC replays) and keeps
    /// every host's stream as its capture reads back.
    pub fn from_lab_dir(t: &Topology, cfg: &LabConfig, dir: &Path) -> anyhow::Result<Self> {
        crate::lab::engine::check(t, cfg)?;
        let mut sink = DirSink::create(dir, t, false)
            .with_context(|| format!("cannot create the lab's captures in {}", dir.display()))?;
        crate::lab::run(t, cfg, &mut sink)?;
        sink.finish().with_context(|| format!("cannot finish the lab's captures in {}", dir.display()))?;
        let mut hosts = Vec::new();
        for h in t.hosts() {
            let name = t.nodes[h].name.clone();
            let mut r = PacketReader::open(&capture_path(dir, &name))?;
            let mut packets = Vec::new();
            while let Some(p) = r.next_packet()? {
                packets.push(p);
            }
            if !packets.is_empty() {
                hosts.push((name, packets));
            }
        }
        Ok(Self::split(hosts))
    }

    /// The streams, split into two epochs at the median arrival time.
    fn split(hosts: Vec<(String, Vec<Packet>)>) -> Self {
        let mut times: Vec<u64> = hosts.iter().flat_map(|(_, p)| p.iter().map(|p| p.ts_ns)).collect();
        let split_ns = if times.is_empty() {
            0
        } else {
            let mid = times.len() / 2;
            *times.select_nth_unstable(mid).1
        };
        Streams { hosts, split_ns }
    }

    /// Packets of `packets` (one host's stream) in epoch 0, which must be a prefix of it (a
    /// NIC cuts its epochs in arrival order).
    pub fn first_epoch_len(&self, packets: &[Packet]) -> anyhow::Result<usize> {
        let n = packets.partition_point(|p| self.epoch(p) == 0);
        anyhow::ensure!(
            packets[n..].iter().all(|p| self.epoch(p) == 1),
            "a stream's packets are not in time order around the epoch split at {} ns",
            self.split_ns
        );
        Ok(n)
    }

    pub fn packets(&self) -> usize {
        self.hosts.iter().map(|(_, p)| p.len()).sum()
    }

    fn epoch(&self, p: &Packet) -> usize {
        usize::from(p.ts_ns >= self.split_ns)
    }
}

/// Exact per-epoch state of every NIC (flows never span two destination hosts, so one map
/// holds all of them).
#[derive(Clone, Debug, Default)]
pub struct Exact {
    sizes: [HashMap<FlowKey, u64>; 2],
    paths: [HashMap<FlowKey, BTreeSet<u16>>; 2],
    /// (count, latency sum in ns) per (flow, switch).
    pairs: [HashMap<(FlowKey, u16), (u64, u64)>; 2],
    /// Inflated hops by the exact rule on the latencies in the NIC's units.
    inflated: HashSet<(usize, FlowKey, u16)>,
    /// Inflated hops by the exact rule on the latencies in ns.
    inflated_ns: HashSet<(usize, FlowKey, u16)>,
}

impl Exact {
    /// The exact answers, with the inflated-latency ratio `ratio_x256 / 256` and the
    /// NIC's latency units of `2^latency_shift` ns.
    pub fn new(s: &Streams, ratio_x256: u32, latency_shift: u8) -> Self {
        let mut x = Exact::default();
        let mut units: [HashMap<(FlowKey, u16), (u64, u64)>; 2] = Default::default();
        for (_, packets) in &s.hosts {
            for p in packets {
                let e = s.epoch(p);
                *x.sizes[e].entry(p.key).or_insert(0) += 1;
                let path = x.paths[e].entry(p.key).or_default();
                for h in &p.hops {
                    path.insert(h.switch_id);
                    let pair = (p.key, h.switch_id);
                    if exceeds(x.pairs[e].entry(pair).or_default(), h.latency_ns as u64, ratio_x256) {
                        x.inflated_ns.insert((e, p.key, h.switch_id));
                    }
                    let u = latency_units(h.latency_ns, latency_shift);
                    if exceeds(units[e].entry(pair).or_default(), u, ratio_x256) {
                        x.inflated.insert((e, p.key, h.switch_id));
                    }
                }
            }
        }
        x
    }

    /// Inflated hops of the exact rule on ns latencies.
    pub fn inflated_ns(&self) -> &HashSet<(usize, FlowKey, u16)> {
        &self.inflated_ns
    }

    fn heavy(&self) -> HashSet<(usize, u16, FlowKey)> {
        let mut out = HashSet::new();
        for e in 0..2 {
            for (f, &n) in &self.sizes[e] {
                if n > HEAVY_THRESHOLD {
                    out.extend(self.paths[e][f].iter().map(|&s| (e, s, *f)));
                }
            }
        }
        out
    }

    fn changes(&self) -> HashSet<(u16, FlowKey)> {
        let keys: BTreeSet<&FlowKey> = self.sizes[0].keys().chain(self.sizes[1].keys()).collect();
        let mut out = HashSet::new();
        for f in keys {
            let n = |e: usize| self.sizes[e].get(f).copied().unwrap_or(0) as i64;
            if (n(1) - n(0)).unsigned_abs() > CHANGE_THRESHOLD {
                let path = self.paths[1].get(f).or_else(|| self.paths[0].get(f));
                out.extend(path.into_iter().flatten().map(|&s| (s, *f)));
            }
        }
        out
    }
}

/// The exact inflated-latency rule on a pair's (count, sum) before a hop of `lat`, which
/// it then adds: `lat * count > ratio * sum` with a count of at least 1.
fn exceeds(pair: &mut (u64, u64), lat: u64, ratio_x256: u32) -> bool {
    let (n, sum) = *pair;
    let hit = n > 0 && lat as u128 * n as u128 * 256 > ratio_x256 as u128 * sum as u128;
    *pair = (n + 1, sum + lat);
    hit
}

/// One configuration of the NIC's models.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub label: String,
    pub flow: TowerGeometry,
    pub per_switch: PerSwitchConfig,
}

impl Point {
    /// The NIC's own geometry (the hardware's snapshots), in `mode`.
    pub fn nic(mode: InsertMode) -> Self {
        let mut per_switch = PerSwitchConfig::nic_default();
        per_switch.mode = mode;
        Point { label: format!("nic-{}", mode.name()), flow: TowerGeometry::sketchint_fpga(), per_switch }
    }

    /// The NIC's cell widths with the flow tower at `flow_bytes` and the latency tower at
    /// `latency_bytes` (equal memory per array), in `mode`.
    pub fn sized(mode: InsertMode, flow_bytes: u64, latency_bytes: u64) -> Self {
        let mut p = Self::nic(mode);
        p.flow = TowerGeometry::equal_memory(&[8, 16, 32], flow_bytes);
        p.per_switch.latency = LatencyTowerGeometry::equal_memory(latency_bytes);
        p.label = format!("{}-{}-{}", mode.name(), kb(flow_bytes), kb(latency_bytes));
        p
    }
}

/// The scores of one configuration.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub label: String,
    pub mode: &'static str,
    pub flow_kib: f64,
    pub latency_kib: f64,
    pub sw_hh: Detection,
    pub sw_hc: Detection,
    pub lat_are: f64,
    pub lat_pairs: usize,
    /// ARE over the pairs whose true average is at least 1 us (queueing that matters; the
    /// NIC's 16 ns units cannot resolve averages of a few ns, which the lab's idle ports
    /// produce because it models no pipeline latency).
    pub lat_are_1us: f64,
    pub lat_pairs_1us: usize,
    /// Against the exact rule at the NIC's latency resolution.
    pub inflated: Detection,
    /// Against the exact rule on ns latencies.
    pub inflated_ns: Detection,
    /// Inflated-latency records the NICs produced.
    pub records: usize,
    /// Table offers refused because every way was taken.
    pub table_misses: u64,
}

/// What the NICs of one configuration answered, per epoch.
#[derive(Default)]
struct Answers {
    heavy: HashSet<(usize, u16, FlowKey)>,
    changes: HashSet<(u16, FlowKey)>,
    /// (estimate, truth) of every true pair.
    latency: Vec<(f64, f64)>,
    inflated: HashSet<(usize, FlowKey, u16)>,
    records: usize,
    misses: u64,
}

/// One epoch bank of one NIC, whatever it came from (the model, or the NIC's snapshot):
/// everything the four tasks are answered from.
#[derive(Clone, Debug)]
pub struct NicBank {
    pub tower: Tower,
    pub latency: LatencyTower,
    pub table: KeyTable,
    /// The inflated-latency records delivered for the epoch.
    pub records: Vec<InflatedRecord>,
}

impl NicBank {
    fn of_model(tower: Tower, mut ps: PerSwitch) -> Self {
        let records = ps.drain_records();
        NicBank { tower, latency: ps.latency, table: ps.table, records }
    }
}

/// Runs configuration `p` over every NIC's stream and scores it against `x`.
pub fn score(s: &Streams, x: &Exact, p: &Point) -> anyhow::Result<Row> {
    score_banks(s, x, p, |_, packets| run_nic(s, packets, p))
}

/// Scores what `banks` gives for every NIC (its name and stream in, its two epoch banks
/// out), labelled and sized as configuration `p`.
pub fn score_banks(
    s: &Streams,
    x: &Exact,
    p: &Point,
    mut banks: impl FnMut(&str, &[Packet]) -> anyhow::Result<[NicBank; 2]>,
) -> anyhow::Result<Row> {
    let mut a = Answers::default();
    for (host, packets) in &s.hosts {
        let b = banks(host, packets)?;
        // Ordered, so the latency ARE sums in the same order whatever made the banks.
        let own: BTreeSet<FlowKey> = packets.iter().map(|p| p.key).collect();
        answer(&b, x, &own, &mut a);
    }
    Ok(Row {
        label: p.label.clone(),
        mode: p.per_switch.mode.name(),
        flow_kib: p.flow.memory_bits() as f64 / 8192.0,
        latency_kib: p.per_switch.latency.memory_bits() as f64 / 8192.0,
        sw_hh: Detection::of(&a.heavy, &x.heavy()),
        sw_hc: Detection::of(&a.changes, &x.changes()),
        lat_are: metrics::are(a.latency.iter().map(|&(e, t)| (t, e))),
        lat_pairs: a.latency.len(),
        lat_are_1us: metrics::are(a.latency.iter().filter(|p| p.1 >= 1000.0).map(|&(e, t)| (t, e))),
        lat_pairs_1us: a.latency.iter().filter(|p| p.1 >= 1000.0).count(),
        inflated: Detection::of(&a.inflated, &x.inflated),
        inflated_ns: Detection::of(&a.inflated, &x.inflated_ns),
        records: a.records,
        table_misses: a.misses,
    })
}

/// One NIC's two epoch banks after its stream, by the model.
fn run_nic(s: &Streams, packets: &[Packet], p: &Point) -> anyhow::Result<[NicBank; 2]> {
    let bank = || -> anyhow::Result<(Tower, PerSwitch)> {
        Ok((Tower::new(p.flow.clone(), p.per_switch.mode)?, PerSwitch::new(p.per_switch.clone())?))
    };
    let mut banks = [bank()?, bank()?];
    for pk in packets {
        let e = s.epoch(pk);
        let (tower, ps) = &mut banks[e];
        tower.insert(&pk.key);
        let est = tower.query(&pk.key);
        ps.observe(e as u32, pk, est);
    }
    Ok(banks.map(|(t, ps)| NicBank::of_model(t, ps)))
}

/// Adds one NIC's answers.
fn answer(banks: &[NicBank; 2], x: &Exact, own: &BTreeSet<FlowKey>, a: &mut Answers) {
    for (e, b) in banks.iter().enumerate() {
        for (s, flows) in per_switch_heavy(b.table.entries(), |k| b.tower.query(k), HEAVY_THRESHOLD) {
            a.heavy.extend(flows.iter().map(|(f, _)| (e, s, *f)));
        }
        for ((f, sw), _) in inflated_pairs(&b.records) {
            a.inflated.insert((e, f, sw));
        }
        a.records += b.records.len();
        a.misses += b.table.misses();
        // This NIC's pairs only: its flows, each at the switches of its path (visiting every
        // NIC's pairs would cost each host the whole network's).
        for f in own {
            for &sw in x.paths[e].get(f).into_iter().flatten() {
                let (n, sum) = x.pairs[e][&(*f, sw)];
                if n > 0 && sum > 0 {
                    let est = pair_latency_ns(&b.latency, sw, f).unwrap_or(0.0);
                    a.latency.push((est, sum as f64 / n as f64));
                }
            }
        }
    }
    let [b0, b1] = banks;
    let changes = per_switch_changes(
        b0.table.entries(),
        b1.table.entries(),
        |k| b0.tower.query(k),
        |k| b1.tower.query(k),
        CHANGE_THRESHOLD,
    );
    for (s, flows) in changes {
        a.changes.extend(flows.iter().map(|(f, _)| (s, *f)));
    }
}

/// A size as the command line writes it: `50KB`, `1.5MB` (decimal units).
fn kb(bytes: u64) -> String {
    if bytes >= 1_000_000 {
        format!("{}MB", bytes as f64 / 1e6)
    } else {
        format!("{}KB", bytes as f64 / 1e3)
    }
}
