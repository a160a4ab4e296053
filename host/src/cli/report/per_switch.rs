//! The per-switch part of `smartnic snapshot report`: SketchINT's global tasks answered
//! from the snapshot alone, the NIC's key table naming the flows (no candidate list).
//!
//! JSON fields (object `per_switch` of the report; a part the snapshot lacks is `null`):
//! - `table`: `threshold` (flows above it entered the table), `flows`, `misses` (offers
//!   refused by a full table), `capacity`;
//! - `heavy_hitters`: `threshold`, `complete` (false when the threshold is below the
//!   table's, so smaller heavy flows may be missing), `flows` [{`flow`, `packets`, `path`}]
//!   largest first;
//! - `switch_heavy`: `threshold`, `switches` [{`switch`, `flows` [{`flow`, `packets`}]}]
//!   by switch ID, each switch's flows largest first;
//! - `latency`: `flows` [{`flow`, `packets`, `hops` [{`switch`, `packets`, `avg_ns`}]}],
//!   every table flow (largest first) with the tower's count and average latency at each
//!   switch of its path (`avg_ns` null when the tower has no estimate);
//! - `inflated`: `records`, `unknown_records` (kinds this build does not read), `pairs`
//!   (distinct (flow, switch) pairs), `top` [{`flow`, `switch`, `records`}] the `--top`
//!   pairs with the most records;
//! - `changes` (with `--against`): `against`, `threshold`, `switches` [{`switch`, `flows`
//!   [{`flow`, `change`}]}], change = packets in this snapshot minus in the older one;
//!   `complete` as for the heavy hitters (either table's threshold);
//! - `notes`: why a task could not be answered.

use anyhow::{bail, Context};
use serde::Serialize;
use smartnic_contract::FlowKey;

use crate::sketch::key_table::Entry;
use crate::sketch::snapshot::{PerSwitchState, TableState};
use crate::sketch::AnySketch;
use crate::tasks::flow_size;
use crate::tasks::per_switch::{inflated_pairs, pair_latency_ns, per_switch_changes, per_switch_heavy};

/// What the per-switch tasks are asked.
pub struct Options {
    /// Plain heavy hitters: flows above this many packets.
    pub hh_threshold: u64,
    /// Per-switch heavy hitters: flows above this many packets.
    pub switch_threshold: u64,
    /// Per-switch heavy changes: a change of more than this many packets.
    pub change_threshold: u64,
    /// Rows in the human tables and inflated pairs listed.
    pub top: usize,
}

/// One epoch as the tasks need it: the per-switch half and the flow sketch sizing flows.
pub struct Epoch<'a> {
    pub name: &'a str,
    pub state: &'a PerSwitchState,
    pub sizes: Option<&'a AnySketch>,
}

impl Epoch<'_> {
    fn size(&self, k: &FlowKey) -> u64 {
        self.sizes.map_or(0, |s| flow_size::estimate(s, k))
    }
}

#[derive(Debug, Serialize)]
pub struct PerSwitchReport {
    table: Option<TableInfo>,
    heavy_hitters: Option<HeavyHitters>,
    switch_heavy: Option<SwitchTask<FlowPackets>>,
    latency: Option<Latency>,
    inflated: Option<Inflated>,
    changes: Option<Changes>,
    notes: Vec<String>,
}

#[derive(Debug, Serialize)]
struct TableInfo {
    threshold: u32,
    flows: usize,
    misses: u64,
    capacity: u64,
}

#[derive(Debug, Serialize)]
struct HeavyHitters {
    threshold: u64,
    complete: bool,
    flows: Vec<HeavyFlow>,
}

#[derive(Debug, Serialize)]
struct HeavyFlow {
    flow: String,
    packets: u64,
    path: Vec<u16>,
}

#[derive(Debug, Serialize)]
struct FlowPackets {
    flow: String,
    packets: u64,
}

#[derive(Debug, Serialize)]
struct FlowChange {
    flow: String,
    change: i64,
}

/// A per-switch answer: each switch with its flows.
#[derive(Debug, Serialize)]
struct SwitchTask<T> {
    threshold: u64,
    switches: Vec<SwitchFlows<T>>,
}

#[derive(Debug, Serialize)]
struct SwitchFlows<T> {
    switch: u16,
    flows: Vec<T>,
}

#[derive(Debug, Serialize)]
struct Latency {
    flows: Vec<FlowLatency>,
}

#[derive(Debug, Serialize)]
struct FlowLatency {
    flow: String,
    packets: u64,
    hops: Vec<HopLatency>,
}

#[derive(Debug, Serialize)]
struct HopLatency {
    switch: u16,
    packets: Option<u64>,
    avg_ns: Option<f64>,
}

#[derive(Debug, Serialize)]
struct Inflated {
    records: usize,
    unknown_records: u64,
    pairs: usize,
    top: Vec<InflatedPair>,
}

#[derive(Debug, Serialize)]
struct InflatedPair {
    flow: String,
    switch: u16,
    records: u64,
}

#[derive(Debug, Serialize)]
struct Changes {
    against: String,
    /// False when the threshold is below either table's: smaller changes may be missing.
    complete: bool,
    #[serde(flatten)]
    task: SwitchTask<FlowChange>,
}

/// Every per-switch task `now` (and `older`, for changes) can answer.
pub fn report(now: &Epoch, older: Option<&Epoch>, opt: &Options) -> anyhow::Result<PerSwitchReport> {
    let mut notes = Vec::new();
    let table = now.state.table.as_ref();
    if table.is_none() {
        notes.push("no key table: heavy hitters need --candidates, per-switch tasks are not answered".into());
    } else if now.sizes.is_none() {
        notes.push("no flow sketch in the snapshot: the table's flows cannot be sized".into());
    }
    let sized = table.filter(|_| now.sizes.is_some());
    Ok(PerSwitchReport {
        table: table.map(table_info),
        heavy_hitters: sized.map(|t| heavy_hitters(now, t, opt.hh_threshold)),
        switch_heavy: sized.map(|t| switch_heavy(now, t, opt.switch_threshold)),
        latency: match (&now.state.latency, table) {
            (Some(_), Some(t)) => Some(latency(now, t)),
            _ => None,
        },
        inflated: now.state.records.as_ref().map(|r| inflated(r, now.state.unknown_records, opt.top)),
        changes: older.map(|o| changes(o, now, opt.change_threshold)).transpose()?,
        notes,
    })
}

fn table_info(t: &TableState) -> TableInfo {
    TableInfo {
        threshold: t.threshold,
        flows: t.table.entries().count(),
        misses: t.table.misses(),
        capacity: t.table.geometry().capacity(),
    }
}

/// The table's flows with their sizes, largest first.
fn sized_entries<'a>(e: &Epoch, t: &'a TableState) -> Vec<(&'a Entry, u64)> {
    let mut v: Vec<_> = t.table.entries().map(|x| (x, e.size(&x.key))).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.key.cmp(&b.0.key)));
    v
}

fn heavy_hitters(e: &Epoch, t: &TableState, threshold: u64) -> HeavyHitters {
    let flows = sized_entries(e, t)
        .into_iter()
        .filter(|(_, n)| *n > threshold)
        .map(|(x, n)| HeavyFlow { flow: x.key.to_string(), packets: n, path: x.path.clone() })
        .collect();
    HeavyHitters { threshold, complete: threshold >= u64::from(t.threshold), flows }
}

fn switch_heavy(e: &Epoch, t: &TableState, threshold: u64) -> SwitchTask<FlowPackets> {
    let by_switch = per_switch_heavy(t.table.entries(), |k| e.size(k), threshold);
    let switches = by_switch
        .into_iter()
        .map(|(switch, flows)| SwitchFlows {
            switch,
            flows: flows
                .into_iter()
                .map(|(k, packets)| FlowPackets { flow: k.to_string(), packets })
                .collect(),
        })
        .collect();
    SwitchTask { threshold, switches }
}

fn latency(e: &Epoch, t: &TableState) -> Latency {
    let Some(tower) = &e.state.latency else { return Latency { flows: Vec::new() } };
    let flows = sized_entries(e, t)
        .into_iter()
        .map(|(x, packets)| FlowLatency {
            flow: x.key.to_string(),
            packets,
            hops: x
                .path
                .iter()
                .map(|&switch| HopLatency {
                    switch,
                    packets: tower.query(switch, &x.key).count,
                    avg_ns: pair_latency_ns(tower, switch, &x.key),
                })
                .collect(),
        })
        .collect();
    Latency { flows }
}

fn inflated(
    records: &[smartnic_contract::wire::record::InflatedRecord],
    unknown: u64,
    top: usize,
) -> Inflated {
    let pairs = inflated_pairs(records);
    let mut ranked: Vec<_> = pairs.iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let top = ranked
        .into_iter()
        .take(top)
        .map(|((flow, switch), n)| InflatedPair { flow: flow.to_string(), switch: *switch, records: *n })
        .collect();
    Inflated { records: records.len(), unknown_records: unknown, pairs: pairs.len(), top }
}

/// Heavy changes per switch from `older` to `now`: both epochs need a key table and a flow
/// sketch (a flow absent from a table still has an estimate in that epoch's sketch).
fn changes(older: &Epoch, now: &Epoch, threshold: u64) -> anyhow::Result<Changes> {
    let need = |e: &Epoch| -> anyhow::Result<()> {
        if e.state.table.is_none() {
            bail!("{} has no key table: per-switch heavy changes need both snapshots' tables", e.name);
        }
        if e.sizes.is_none() {
            bail!("{} has no flow sketch to size the tables' flows with", e.name);
        }
        Ok(())
    };
    need(older).context("--against")?;
    need(now).context("--against")?;
    let entries = |e: &Epoch| e.state.table.as_ref().map(|t| t.table.entries().cloned().collect::<Vec<_>>());
    let (a, b) = (entries(older).unwrap_or_default(), entries(now).unwrap_or_default());
    let by_switch = per_switch_changes(&a, &b, |k| older.size(k), |k| now.size(k), threshold);
    let switches = by_switch
        .into_iter()
        .map(|(switch, flows)| SwitchFlows {
            switch,
            flows: flows.into_iter().map(|(k, change)| FlowChange { flow: k.to_string(), change }).collect(),
        })
        .collect();
    let table_threshold = |e: &Epoch| e.state.table.as_ref().map_or(0, |t| u64::from(t.threshold));
    let complete = threshold >= table_threshold(older).max(table_threshold(now));
    Ok(Changes { against: older.name.to_string(), complete, task: SwitchTask { threshold, switches } })
}

/// The human tables: a line per part, the `top` rows of each.
pub fn print_text(r: &PerSwitchReport, top: usize) {
    println!("\nper-switch");
    if let Some(t) = &r.table {
        println!(
            "  key table    {} of {} slots hold flows above {} packets; {} offers refused by a full table",
            t.flows, t.capacity, t.threshold, t.misses
        );
    }
    for n in &r.notes {
        println!("  note         {n}");
    }
    if let Some(h) = &r.heavy_hitters {
        print_heavy(h, top);
    }
    if let Some(s) = &r.switch_heavy {
        print_switch_task("heavy hitters per switch", s, top, |f| format!("{} ({})", f.flow, f.packets));
    }
    if let Some(l) = &r.latency {
        print_latency(l, top);
    }
    if let Some(i) = &r.inflated {
        print_inflated(i);
    }
    if let Some(c) = &r.changes {
        let what = format!("heavy changes per switch against {}", c.against);
        print_switch_task(&what, &c.task, top, |f| format!("{} ({:+})", f.flow, f.change));
        if !c.complete {
            println!("    incomplete: the tables only hold flows above their own threshold");
        }
    }
}

fn print_heavy(h: &HeavyHitters, top: usize) {
    println!("  heavy hitters (> {} packets, from the key table): {} flows", h.threshold, h.flows.len());
    if !h.complete {
        println!("    incomplete: the table only holds flows above its own threshold");
    }
    for f in h.flows.iter().take(top) {
        println!("    {:<44} {:>10}  path {:?}", f.flow, f.packets, f.path);
    }
}

/// One line per switch (most flows first): its flow count and its first flow.
fn print_switch_task<T>(what: &str, s: &SwitchTask<T>, top: usize, first: impl Fn(&T) -> String) {
    println!("  {what} (> {} packets): {} switches", s.threshold, s.switches.len());
    let mut rows: Vec<_> = s.switches.iter().collect();
    rows.sort_by(|a, b| b.flows.len().cmp(&a.flows.len()).then(a.switch.cmp(&b.switch)));
    for sw in rows.into_iter().take(top) {
        let head = sw.flows.first().map(&first).unwrap_or_default();
        println!("    switch {:>5}  {:>4} flows  largest {head}", sw.switch, sw.flows.len());
    }
}

fn print_latency(l: &Latency, top: usize) {
    println!(
        "  latency per switch (average ns along the path), largest {} of {} table flows:",
        top.min(l.flows.len()),
        l.flows.len()
    );
    for f in l.flows.iter().take(top) {
        let hops: Vec<String> = f
            .hops
            .iter()
            .map(|h| format!("{}:{}", h.switch, h.avg_ns.map_or("-".to_string(), |ns| format!("{ns:.0}"))))
            .collect();
        println!("    {:<44} {}", f.flow, hops.join(" "));
    }
}

fn print_inflated(i: &Inflated) {
    println!(
        "  inflated latency  {} records over {} (flow, switch) pairs; most inflated:",
        i.records, i.pairs
    );
    for p in &i.top {
        println!("    {:<44} switch {:>5}  {:>6} records", p.flow, p.switch, p.records);
    }
    if i.unknown_records > 0 {
        println!("    ({} records of kinds this build does not read were skipped)", i.unknown_records);
    }
}
