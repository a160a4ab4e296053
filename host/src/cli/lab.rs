//! `smartnic lab run|topo|entries`: the network lab from the command line.
//!
//! Why thin: the simulation, its outputs and the fault syntax live in [`crate::lab`]; this
//! file turns arguments into a [`LabConfig`], draws progress on long runs and prints the
//! summary for people or (`--json`) machines.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use serde::Serialize;
use smartnic_contract::geometry::InsertMode;
use smartnic_p4::routes;
use smartnic_p4::topology::{NodeKind, Topology, DEFAULT_DELAY_NS, DEFAULT_RATE_BPS};
use smartnic_p4::topology_file::{parse_delay, parse_rate};

use crate::lab::engine::{LabConfig, Sink};
use crate::lab::faults::Fault;
use crate::lab::output::{write_entries, write_truth, DirSink};
use crate::lab::workload::{Proto, SizeDist, Workload, DEFAULT_MSS};
use crate::lab::{run as run_lab, topo, Truth};

#[derive(Debug, Subcommand)]
pub enum LabCmd {
    /// Simulate a network whose switches run the P4 twins: per-host captures and exact truth.
    Run(RunArgs),
    /// Print a topology's nodes, links and addresses.
    Topo(TopoArgs),
    /// Print the control-plane entries generated for one switch.
    Entries(EntriesArgs),
    /// Score the NIC's per-switch tasks (SketchINT V-B) on lab traffic against exact answers.
    Score(ScoreArgs),
}

/// Which network.
#[derive(Debug, Args)]
pub struct TopoArgs {
    /// fat-tree:K, leaf-spine:LEAVES,SPINES,HOSTS_PER_LEAF, or a topology file (text or JSON).
    #[arg(long, default_value = "fat-tree:4", value_name = "SPEC")]
    pub topo: String,
    /// Link rate of the built-in topologies (a file states its own), e.g. 10G, 40G, 100M.
    #[arg(long, value_parser = parse_rate, value_name = "RATE")]
    pub rate: Option<u64>,
    /// Propagation delay of the built-in topologies' links, e.g. 1us, 500ns.
    #[arg(long, value_parser = parse_delay, value_name = "TIME")]
    pub delay: Option<u64>,
}

impl TopoArgs {
    pub fn topology(&self) -> anyhow::Result<Topology> {
        topo::parse(&self.topo, self.rate.unwrap_or(DEFAULT_RATE_BPS), self.delay.unwrap_or(DEFAULT_DELAY_NS))
            .map_err(anyhow::Error::msg)
    }
}

/// The network and its traffic: what `lab run` simulates and `lab score` measures.
#[derive(Debug, Args)]
pub struct NetArgs {
    #[command(flatten)]
    pub topo: TopoArgs,
    /// Flow sizes: web-search (alias dctcp), zipf:S:MAX_BYTES or fixed:BYTES.
    #[arg(long, default_value = "web-search", value_name = "DIST")]
    pub workload: SizeDist,
    /// Offered load per host, a fraction of its link rate.
    #[arg(long, default_value_t = 0.3)]
    pub load: f64,
    /// Stop after this many packets in total (the last flow is cut to fit).
    #[arg(short = 'n', long, value_name = "N")]
    pub packets: Option<u64>,
    /// Start at most this many flows.
    #[arg(long, value_name = "N")]
    pub flows: Option<u64>,
    /// Start no flow after this much simulated time, e.g. 10ms.
    #[arg(long, value_parser = parse_delay, value_name = "TIME")]
    pub duration: Option<u64>,
    /// Transport of every flow.
    #[arg(long, default_value = "tcp", value_name = "tcp|udp")]
    pub proto: Proto,
    /// Payload bytes per packet.
    #[arg(long, default_value_t = DEFAULT_MSS)]
    pub mss: u32,
    /// Each flow sends at this fraction of its host's link rate.
    #[arg(long, default_value_t = 1.0, value_name = "FRACTION")]
    pub pace: f64,
    /// Seed of every random choice; the same arguments and seed give the same files.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// A fault, KIND:WHERE[:ARG]@START[-END]; repeat for several (see the examples below).
    #[arg(long = "fault", value_name = "FAULT")]
    pub faults: Vec<Fault>,
    /// Egress queue capacity of every switch port, e.g. 1MiB, 200KB.
    #[arg(long, default_value = "1MiB", value_parser = crate::cli::size::parse_bytes, value_name = "BYTES")]
    pub queue: u64,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub net: NetArgs,
    /// Output directory: hosts/<host>.pcapng, truth.json (and switches/ with --switch-log).
    #[arg(short, long, value_name = "DIR")]
    pub out: PathBuf,
    /// Also write every switch's input and output frames and its entries (for scripts/p4-check).
    #[arg(long)]
    pub switch_log: bool,
}

/// Packets when none of --packets, --flows, --duration is given.
const DEFAULT_PACKETS: u64 = 100_000;

impl NetArgs {
    pub fn config(&self) -> LabConfig {
        let none = self.packets.is_none() && self.flows.is_none() && self.duration.is_none();
        LabConfig {
            workload: Workload {
                sizes: self.workload.clone(),
                load: self.load,
                mss: self.mss,
                proto: self.proto,
                pace: self.pace,
                max_packets: if none { Some(DEFAULT_PACKETS) } else { self.packets },
                duration_ns: self.duration,
                max_flows: self.flows,
                seed: self.seed,
            },
            faults: self.faults.clone(),
            queue_bytes: self.queue,
        }
    }
}

#[derive(Debug, Args)]
pub struct ScoreArgs {
    #[command(flatten)]
    pub net: NetArgs,
    /// Insertion modes of the NIC's towers to score (the NIC's default is acu).
    #[arg(long, value_delimiter = ',', default_value = "acu", value_name = "cm|cu|acu")]
    pub mode: Vec<ModeArg>,
    /// Also score the flow tower at these sizes per NIC (per-switch heavy hitters and
    /// changes), the latency tower at the NIC's, e.g. 10KB,30KB,50KB.
    #[arg(long, value_delimiter = ',', value_parser = crate::cli::size::parse_bytes, value_name = "SIZES")]
    pub flow_memory: Vec<u64>,
    /// Also score the latency tower at these sizes per NIC (latency and inflated latency),
    /// the flow tower at the NIC's, e.g. 200KB,600KB,3MB.
    #[arg(long, value_delimiter = ',', value_parser = crate::cli::size::parse_bytes, value_name = "SIZES")]
    pub latency_memory: Vec<u64>,
    /// Also replay every host's stream through the simulated NIC (the Verilator core,
    /// minutes per million packets) and score its own snapshots: the lab's captures and
    /// the snapshots are left in DIR. Modes cm and acu (the NIC has no exact CU).
    #[arg(long, value_name = "DIR")]
    pub nic: Option<PathBuf>,
}

/// A tower insertion mode on the command line.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum ModeArg {
    Cm,
    Cu,
    Acu,
}

impl From<ModeArg> for smartnic_contract::geometry::InsertMode {
    fn from(m: ModeArg) -> Self {
        match m {
            ModeArg::Cm => Self::Cm,
            ModeArg::Cu => Self::Cu,
            ModeArg::Acu => Self::Acu,
        }
    }
}

#[derive(Debug, Args)]
pub struct EntriesArgs {
    #[command(flatten)]
    pub topo: TopoArgs,
    /// The switch, by name (see smartnic lab topo).
    #[arg(long, value_name = "NAME")]
    pub switch: String,
}

pub fn run(cmd: LabCmd, json: bool) -> anyhow::Result<()> {
    match cmd {
        LabCmd::Run(a) => run_cmd(&a, json),
        LabCmd::Topo(a) => topo_cmd(&a, json),
        LabCmd::Entries(a) => entries_cmd(&a, json),
        LabCmd::Score(a) => score_cmd(&a, json),
    }
}

/// The summary `lab run` prints.
#[derive(Debug, Serialize)]
struct Summary {
    out: PathBuf,
    truth: PathBuf,
    hosts: usize,
    switches: usize,
    flows: u64,
    packets_sent: u64,
    packets_received: u64,
    packets_dropped: u64,
    /// Lost packets by reason.
    drops: BTreeMap<String, u64>,
    packet_hops: u64,
    simulated_ns: u64,
    wall_s: f64,
    packet_hops_per_s: f64,
}

/// A [`DirSink`] that moves a progress bar.
struct Progress {
    inner: DirSink,
    bar: indicatif::ProgressBar,
}

impl Sink for Progress {
    fn deliver(&mut self, host: usize, t: u64, h: &[u8], z: u32) -> std::io::Result<()> {
        self.inner.deliver(host, t, h, z)
    }
    fn wants_switch_log(&self) -> bool {
        self.inner.wants_switch_log()
    }
    fn switch_io(&mut self, s: usize, io: crate::lab::SwitchIo<'_>) -> std::io::Result<()> {
        self.inner.switch_io(s, io)
    }
    fn progress(&mut self, sent: u64) {
        self.bar.set_position(sent);
    }
}

fn run_cmd(a: &RunArgs, json: bool) -> anyhow::Result<()> {
    let t = a.net.topo.topology()?;
    let cfg = a.net.config();
    crate::lab::engine::check(&t, &cfg)?;
    let sink =
        DirSink::create(&a.out, &t, a.switch_log).with_context(|| format!("creating {}", a.out.display()))?;
    if a.switch_log {
        write_entries(&a.out, &t, &routes::compute(&t)?)?;
    }
    let bar = crate::cli::progress::bar(cfg.workload.max_packets, "lab");
    let mut sink = Progress { inner: sink, bar };
    let started = Instant::now();
    let truth = run_lab(&t, &cfg, &mut sink)?;
    let wall_s = started.elapsed().as_secs_f64();
    sink.bar.finish_and_clear();
    sink.inner.finish()?;
    let truth_path = write_truth(&a.out, &truth)?;
    let summary = summarize(a, &t, &truth, truth_path, wall_s);
    if json {
        return crate::cli::print_json(&summary);
    }
    print_summary(&summary);
    Ok(())
}

fn summarize(a: &RunArgs, t: &Topology, truth: &Truth, truth_path: PathBuf, wall_s: f64) -> Summary {
    let mut drops = BTreeMap::new();
    for l in &truth.lost {
        *drops.entry(l.reason.to_string()).or_insert(0) += 1;
    }
    let tot = &truth.totals;
    Summary {
        out: a.out.clone(),
        truth: truth_path,
        hosts: t.hosts().count(),
        switches: t.switches().count(),
        flows: tot.flows,
        packets_sent: tot.packets_sent,
        packets_received: tot.packets_received,
        packets_dropped: tot.packets_dropped,
        drops,
        packet_hops: tot.packet_hops,
        simulated_ns: truth.end_ns,
        wall_s,
        packet_hops_per_s: tot.packet_hops as f64 / wall_s.max(1e-9),
    }
}

fn print_summary(s: &Summary) {
    println!("network     {} hosts, {} switches", s.hosts, s.switches);
    println!("flows       {}", s.flows);
    println!(
        "packets     {} sent, {} received, {} dropped",
        s.packets_sent, s.packets_received, s.packets_dropped
    );
    for (reason, n) in &s.drops {
        println!("  dropped   {n} {reason}");
    }
    println!("simulated   {:.3} ms of network time", s.simulated_ns as f64 / 1e6);
    println!(
        "speed       {} packet-hops in {:.2} s ({:.2} M packet-hops/s)",
        s.packet_hops,
        s.wall_s,
        s.packet_hops_per_s / 1e6
    );
    println!("captures    {}/hosts/<host>.pcapng", s.out.display());
    println!("truth       {}", s.truth.display());
}

/// One node as `lab topo` lists it.
#[derive(Debug, Serialize)]
struct NodeRow {
    name: String,
    kind: &'static str,
    switch_id: Option<u16>,
    ip: Option<String>,
    mac: String,
    ports: Vec<PortRow>,
}

#[derive(Debug, Serialize)]
struct PortRow {
    port: u16,
    peer: String,
    peer_port: u16,
    rate_bps: u64,
    delay_ns: u64,
}

fn topo_cmd(a: &TopoArgs, json: bool) -> anyhow::Result<()> {
    let t = a.topology()?;
    let rows: Vec<NodeRow> = (0..t.nodes.len()).map(|n| node_row(&t, n)).collect();
    if json {
        return crate::cli::print_json(&rows);
    }
    for r in rows {
        let id = match (r.switch_id, &r.ip) {
            (Some(id), _) => format!("id {id}"),
            (None, Some(ip)) => ip.clone(),
            _ => String::new(),
        };
        println!("{:<8} {:<12} {:<12} {}", r.kind, r.name, id, r.mac);
        for p in r.ports {
            println!(
                "    port {:<3} -> {}:{}  {} Gb/s  {} ns",
                p.port,
                p.peer,
                p.peer_port,
                p.rate_bps as f64 / 1e9,
                p.delay_ns
            );
        }
    }
    Ok(())
}

fn node_row(t: &Topology, n: usize) -> NodeRow {
    let node = &t.nodes[n];
    let (kind, ip) = match node.kind {
        NodeKind::Host { ip, .. } => ("host", Some(ip.to_string())),
        NodeKind::Switch { .. } => ("switch", None),
    };
    let ports = (0..node.ports.len() as u16)
        .map(|p| {
            let (peer, link) = (t.peer(n, p), t.link(n, p));
            PortRow {
                port: p,
                peer: t.nodes[peer.node].name.clone(),
                peer_port: peer.port,
                rate_bps: link.rate_bps,
                delay_ns: link.delay_ns,
            }
        })
        .collect();
    NodeRow {
        name: node.name.clone(),
        kind,
        switch_id: t.switch_id(n),
        ip,
        mac: smartnic_p4::tables::mac_str(&t.mac(n)),
        ports,
    }
}

fn entries_cmd(a: &EntriesArgs, json: bool) -> anyhow::Result<()> {
    let t = a.topo.topology()?;
    let s = t.by_name(&a.switch).filter(|&n| !t.is_host(n)).with_context(|| {
        format!("no switch called `{}` in {} (see smartnic lab topo)", a.switch, a.topo.topo)
    })?;
    let tables = routes::compute(&t)?;
    let tab = &tables[t.switches().position(|x| x == s).expect("a switch")];
    if json {
        return crate::cli::print_json(&tab.runtime_json());
    }
    for line in tab.cli_commands() {
        println!("{line}");
    }
    Ok(())
}

/// What `lab score` prints with `--json`.
#[derive(Debug, Serialize)]
struct ScoreReport {
    hosts: usize,
    packets: usize,
    split_ns: u64,
    rows: Vec<crate::eval::per_switch::Row>,
}

fn score_cmd(a: &ScoreArgs, json: bool) -> anyhow::Result<()> {
    use crate::eval::per_switch::{score, Exact, Point, Streams};
    use smartnic_contract::per_switch::InflateRule;
    let t = a.net.topo.topology()?;
    let modes: Vec<InsertMode> = a.mode.iter().map(|&m| m.into()).collect();
    if a.nic.is_some() && modes.contains(&InsertMode::Cu) {
        bail!("--nic: the NIC runs cm or acu, not cu; drop cu from --mode");
    }
    let bar = crate::cli::progress::bar(None, "running the lab");
    let streams = match &a.nic {
        Some(dir) => Streams::from_lab_dir(&t, &a.net.config(), dir)?,
        None => Streams::from_lab(&t, &a.net.config())?,
    };
    bar.finish_and_clear();
    let nic = Point::nic(InsertMode::Acu);
    let exact = Exact::new(&streams, InflateRule::SKETCHINT_RATIO_X256, nic.per_switch.latency.latency_shift);
    let (flow_nic, lat_nic) = (nic.flow.memory_bits() / 8, nic.per_switch.latency.memory_bits() / 8);
    let mut points = Vec::new();
    for &m in &modes {
        points.push(Point::nic(m));
        points.extend(a.flow_memory.iter().map(|&f| Point::sized(m, f, lat_nic)));
        points.extend(a.latency_memory.iter().map(|&l| Point::sized(m, flow_nic, l)));
    }
    let bar = crate::cli::progress::bar(Some(points.len() as u64), "score");
    let mut rows = Vec::new();
    for p in &points {
        rows.push(score(&streams, &exact, p)?);
        bar.inc(1);
    }
    bar.finish_and_clear();
    if let Some(dir) = &a.nic {
        for &m in &modes {
            rows.push(score_nic(&streams, &exact, dir, m)?);
        }
    }
    let report = ScoreReport {
        hosts: streams.hosts.len(),
        packets: streams.packets(),
        split_ns: streams.split_ns,
        rows,
    };
    if json {
        return crate::cli::print_json(&report);
    }
    print_score(&report);
    Ok(())
}

/// The row of the simulated NIC's own snapshots in `mode`, with a bar over the hosts.
fn score_nic(
    streams: &crate::eval::per_switch::Streams,
    exact: &crate::eval::per_switch::Exact,
    dir: &Path,
    mode: InsertMode,
) -> anyhow::Result<crate::eval::per_switch::Row> {
    let bar = crate::cli::progress::bar(Some(streams.hosts.len() as u64), "simulated NICs");
    let mut started = 0;
    let row = crate::eval::nic_snapshots::score(streams, exact, dir, mode, |host| {
        bar.set_position(started);
        started += 1;
        bar.set_message(format!("simulated NIC of {host}"));
    })?;
    bar.finish_and_clear();
    Ok(row)
}

fn print_score(r: &ScoreReport) {
    println!("{} NICs, {} packets, epochs split at {} ns", r.hosts, r.packets, r.split_ns);
    println!(
        "{:<24} {:>9} {:>9} {:>7} {:>7} {:>8} {:>8} {:>9} {:>6} {:>8} {:>7}",
        "config",
        "flow KiB",
        "lat KiB",
        "sw-HH",
        "sw-HC",
        "lat ARE",
        ">=1us",
        "inflated",
        "(ns)",
        "records",
        "misses"
    );
    for row in &r.rows {
        println!(
            "{:<24} {:>9.1} {:>9.1} {:>7.3} {:>7.3} {:>8.3} {:>8.3} {:>9.3} {:>6.3} {:>8} {:>7}",
            row.label,
            row.flow_kib,
            row.latency_kib,
            row.sw_hh.f1,
            row.sw_hc.f1,
            row.lat_are,
            row.lat_are_1us,
            row.inflated.f1,
            row.inflated_ns.f1,
            row.records,
            row.table_misses
        );
    }
    if let Some(row) = r.rows.first() {
        println!(
            "truth: {} per-switch heavy hitters, {} per-switch heavy changes, {} latency pairs ({} at >= 1 us), {} inflated pairs",
            row.sw_hh.truth, row.sw_hc.truth, row.lat_pairs, row.lat_pairs_1us, row.inflated.truth
        );
    }
}
