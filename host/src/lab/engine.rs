//! The discrete-event engine: events in time order (ties broken by the order they were
//! scheduled, so a run is a pure function of its inputs and seed), one FIFO queue per
//! egress port, store-and-forward switches that run the P4 twins.
//!
//! The model, step by step:
//! - A host sends a flow's packets at its pacing rate into its own NIC port queue (never
//!   full: a host's stack holds what its NIC cannot send yet).
//! - A port sends its packets in FIFO order, each as soon as the one before has left:
//!   transmission takes `(frame + 24) * 8 / rate` ns, rounded up; the 24 bytes are the
//!   Ethernet preamble and start delimiter (8), FCS (4) and inter-frame gap (12), which
//!   occupy the line but are not in a capture. The frame arrives at the peer's port `delay`
//!   ns after its last bit left (store-and-forward).
//! - At a switch, the twin's ingress picks the egress port (or drops, with its reason);
//!   the frame joins that port's queue unless the queue would exceed its byte capacity
//!   ([`DropReason::QueueFull`]). The twin's egress runs with latency = transmission start
//!   minus arrival: the switch's hop latency, so queueing shows up in the INT stack. A jitter
//!   fault stalls the port before the start (the stall is part of the latency); a drop
//!   fault loses the frame on the link after transmission.
//! - A FIFO port at a fixed rate needs no events of its own (Lindley's recursion: start =
//!   max(arrival, port free) + stall), so a packet's start, latency and departure are
//!   settled when it joins the queue, by the fault state at that instant. One event per
//!   packet-hop remains: its arrival at the next node.
//!
//! Speed: a packet is its header bytes plus a count of zero payload bytes (the twins never
//! read the payload; captures write the zeros), packets live in a slab whose header buffers
//! are reused, events are small, and the heap holds one pending start per flow, not every
//! flow's.

use super::faults::{Fault, Placed};
use super::truth::{FlowTruth, Lost, SwitchTotals, Totals, Truth, TRUTH_VERSION};
use super::workload::{generate, Flow, Workload};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use smartnic_p4::routes;
use smartnic_p4::tables::SwitchTables;
use smartnic_p4::topology::{NodeId, Topology, TopologyError};
use smartnic_p4::twin::sketchint_int::{Ingress, Switch};
use smartnic_p4::twin::DropReason;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use std::io;

/// Ethernet bytes on the line that a capture does not show: preamble and SFD (8), FCS (4)
/// and the inter-frame gap (12).
pub const WIRE_OVERHEAD: u64 = 24;
/// Default egress queue capacity of a switch port.
pub const DEFAULT_QUEUE_BYTES: u64 = 1 << 20;
/// Header buffer capacity of a packet: Ethernet + IPv4 + TCP + a full INT stack.
const HEADER_CAPACITY: usize = 160;
/// How often (in packets sent) the sink hears about progress.
const PROGRESS_EVERY: u64 = 1 << 16;

/// Everything a run needs besides the topology.
#[derive(Clone, Debug)]
pub struct LabConfig {
    pub workload: Workload,
    pub faults: Vec<Fault>,
    /// Egress queue capacity of every switch port, bytes.
    pub queue_bytes: u64,
}

impl Default for LabConfig {
    fn default() -> Self {
        LabConfig { workload: Workload::default(), faults: Vec::new(), queue_bytes: DEFAULT_QUEUE_BYTES }
    }
}

/// Why a run could not start or finish.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    #[error("workload: {0}")]
    Workload(String),
    #[error("{0}")]
    Fault(String),
    #[error(transparent)]
    Topology(#[from] TopologyError),
    #[error("writing the lab's output: {0}")]
    Io(#[from] io::Error),
}

/// A switch's input frame and, if it forwarded it, its output (for `--switch-log`).
pub struct SwitchIo<'a> {
    pub in_ns: u64,
    pub in_port: u16,
    pub input: &'a [u8],
    /// Transmission start, egress port and the egress twin's frame.
    pub output: Option<(u64, u16, &'a [u8])>,
    /// Zero bytes after the headers, in both frames.
    pub zeros: u32,
}

/// Where a run's frames go: captures on disk, memory in tests, nowhere in benchmarks.
pub trait Sink {
    /// Host `host` received a frame at `time_ns`: `headers`, then `zeros` zero bytes.
    fn deliver(&mut self, host: NodeId, time_ns: u64, headers: &[u8], zeros: u32) -> io::Result<()>;
    /// Whether [`Sink::switch_io`] wants every switch's frames (costs a header copy per hop).
    fn wants_switch_log(&self) -> bool {
        false
    }
    /// A switch dropped a frame at ingress, or started sending one it forwarded.
    fn switch_io(&mut self, _switch: NodeId, _io: SwitchIo<'_>) -> io::Result<()> {
        Ok(())
    }
    /// `sent` packets have left their hosts so far.
    fn progress(&mut self, _sent: u64) {}
}

/// A sink that keeps nothing.
pub struct NullSink;

impl Sink for NullSink {
    fn deliver(&mut self, _: NodeId, _: u64, _: &[u8], _: u32) -> io::Result<()> {
        Ok(())
    }
}

/// Checks everything a run needs before anything is written: the workload's numbers, every
/// fault's names and links, and that routes exist.
pub fn check(t: &Topology, cfg: &LabConfig) -> Result<(), LabError> {
    super::workload::check(t, &cfg.workload).map_err(LabError::Workload)?;
    for f in &cfg.faults {
        f.resolve(t).map_err(LabError::Fault)?;
    }
    routes::compute(t)?;
    Ok(())
}

/// Runs the lab: the workload's flows through `t` with the faults, frames into `sink`.
pub fn run<S: Sink>(t: &Topology, cfg: &LabConfig, sink: &mut S) -> Result<Truth, LabError> {
    let flows = generate(t, &cfg.workload).map_err(LabError::Workload)?;
    run_flows(t, cfg, &flows, sink)
}

/// Runs given flows, in start order (tests build them by hand for hand-computable cases).
pub fn run_flows<S: Sink>(
    t: &Topology,
    cfg: &LabConfig,
    flows: &[Flow],
    sink: &mut S,
) -> Result<Truth, LabError> {
    if let Some(i) = flows.windows(2).position(|w| w[1].start_ns < w[0].start_ns) {
        return Err(LabError::Workload(format!(
            "flow {} starts before flow {i}; give flows in start order",
            i + 1
        )));
    }
    let placed =
        cfg.faults.iter().map(|f| f.resolve(t)).collect::<Result<Vec<_>, _>>().map_err(LabError::Fault)?;
    let tables = routes::compute(t)?;
    let mut sim = Sim::new(t, cfg, flows, placed, tables, sink);
    sim.schedule_start();
    while let Some(ev) = sim.heap.pop() {
        sim.now = ev.time;
        sim.dispatch(ev.ev)?;
    }
    Ok(sim.finish(cfg.workload.seed))
}

/// What happens at an instant.
#[derive(Clone, Copy, Debug)]
enum Ev {
    /// Flow `f` starts; the next flow's start is scheduled then.
    Start(u32),
    /// Flow `f` sends its next packet.
    Send(u32),
    /// The first packet on the line from port `p` reaches the port at the other end (last bit).
    Arrive(u32),
    /// Fault `i` starts (true) or ends.
    Fault(u32, bool),
}

#[derive(Debug)]
struct Item {
    time: u64,
    seq: u64,
    ev: Ev,
}

impl PartialEq for Item {
    fn eq(&self, o: &Self) -> bool {
        (self.time, self.seq) == (o.time, o.seq)
    }
}
impl Eq for Item {}
impl PartialOrd for Item {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Item {
    /// Reversed, so the max-heap pops the earliest (then first scheduled) event.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

/// One direction of a link: the sending node's port.
struct Port {
    node: NodeId,
    num: u16,
    /// Flat index of the port at the other end.
    peer: u32,
    rate_bps: u64,
    delay_ns: u64,
    capacity: u64,
    /// When the last bit of the last packet queued here leaves.
    free_at: u64,
    /// (last bit leaves, bytes) of every packet queued or on the line, in order.
    inflight: VecDeque<(u64, u64)>,
    /// Bytes of the queued frames and the one on the line.
    bytes: u64,
    /// (lands at the peer, packet) of every packet sent or queued and not lost, in order.
    on_line: VecDeque<(u64, u32)>,
    drop_p: f64,
    jitter: Option<super::faults::Jitter>,
}

/// A packet in flight: one cache line (what every hop touches), plus its header buffer.
/// What only some packets need (a loop's long path, the switch log's input copy) lives
/// beside the slab, indexed like it.
#[repr(align(64))]
struct Pkt {
    hdr: Vec<u8>,
    arrival: u64,
    zeros: u32,
    flow: u32,
    id: u32,
    in_port: u16,
    path: Path,
}

/// Switch IDs a packet visited: up to [`Path::INLINE`] in the packet (every shortest path
/// of the usual topologies), a loop's longer path in a spill vector beside the slab.
#[derive(Default)]
struct Path {
    len: u16,
    inline: [u16; Path::INLINE],
}

impl Path {
    const INLINE: usize = 8;

    fn clear(&mut self, spill: &mut Vec<u16>) {
        self.len = 0;
        spill.clear();
    }

    fn push(&mut self, id: u16, spill: &mut Vec<u16>) {
        let len = self.len as usize;
        if len < Self::INLINE {
            self.inline[len] = id;
        } else {
            if len == Self::INLINE {
                spill.extend_from_slice(&self.inline);
            }
            spill.push(id);
        }
        self.len += 1;
    }

    fn as_slice<'a>(&'a self, spill: &'a [u16]) -> &'a [u16] {
        if self.len as usize <= Self::INLINE {
            &self.inline[..self.len as usize]
        } else {
            spill
        }
    }
}

impl Pkt {
    fn wire(&self) -> u64 {
        (self.hdr.len() + self.zeros as usize) as u64
    }
}

struct Sim<'a, S: Sink> {
    t: &'a Topology,
    flows: &'a [Flow],
    faults: &'a [Fault],
    placed: Vec<Placed>,
    active: Vec<bool>,
    base: Vec<Option<SwitchTables>>,
    twins: Vec<Option<Switch>>,
    ports: Vec<Port>,
    port_base: Vec<u32>,
    pkts: Vec<Pkt>,
    /// A packet's path past [`Path::INLINE`] switches, by slab index.
    spills: Vec<Vec<u16>>,
    /// A packet's frame as it arrived at its current switch, by slab index (switch log only).
    inputs: Vec<Vec<u8>>,
    free: Vec<u32>,
    heap: BinaryHeap<Item>,
    seq: u64,
    now: u64,
    rng: ChaCha8Rng,
    next_pkt: Vec<u32>,
    sw_index: Vec<Option<usize>>,
    switches: Vec<SwitchTotals>,
    truth: Vec<FlowTruth>,
    lost: Vec<Lost>,
    totals: Totals,
    log: bool,
    sink: &'a mut S,
}

impl<'a, S: Sink> Sim<'a, S> {
    fn new(
        t: &'a Topology,
        cfg: &'a LabConfig,
        flows: &'a [Flow],
        placed: Vec<Placed>,
        tables: Vec<SwitchTables>,
        sink: &'a mut S,
    ) -> Self {
        let mut base = vec![None; t.nodes.len()];
        let mut sw_index = vec![None; t.nodes.len()];
        let mut switches = Vec::new();
        for (s, tab) in t.switches().zip(tables) {
            sw_index[s] = Some(switches.len());
            switches.push(SwitchTotals {
                name: t.nodes[s].name.clone(),
                switch_id: tab.switch_id,
                arrivals: 0,
                forwarded: 0,
                dropped: 0,
            });
            base[s] = Some(tab);
        }
        let twins = base.iter().map(|b| b.clone().map(Switch::new)).collect();
        let (ports, port_base) = build_ports(t, cfg.queue_bytes);
        let truth = flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let name = |n: NodeId| t.nodes[n].name.clone();
                FlowTruth::new(
                    i as u32,
                    f.key.to_string(),
                    name(f.src),
                    name(f.dst),
                    f.start_ns,
                    f.size_bytes,
                )
            })
            .collect();
        Sim {
            t,
            flows,
            faults: &cfg.faults,
            active: vec![false; placed.len()],
            placed,
            base,
            twins,
            ports,
            port_base,
            pkts: Vec::new(),
            spills: Vec::new(),
            inputs: Vec::new(),
            free: Vec::new(),
            heap: BinaryHeap::new(),
            seq: 0,
            now: 0,
            rng: ChaCha8Rng::seed_from_u64(cfg.workload.seed ^ 0x6c61_625f_6e65_7400),
            next_pkt: vec![0; flows.len()],
            sw_index,
            switches,
            truth,
            lost: Vec::new(),
            totals: Totals { flows: flows.len() as u64, ..Totals::default() },
            log: sink.wants_switch_log(),
            sink,
        }
    }

    fn at(&mut self, time: u64, ev: Ev) {
        self.seq += 1;
        self.heap.push(Item { time, seq: self.seq, ev });
    }

    /// Faults first, so a fault at time T applies to packets arriving at T.
    fn schedule_start(&mut self) {
        for (i, f) in self.faults.iter().enumerate() {
            self.at(f.start_ns, Ev::Fault(i as u32, true));
            if let Some(end) = f.end_ns {
                self.at(end, Ev::Fault(i as u32, false));
            }
        }
        if let Some(f) = self.flows.first() {
            self.at(f.start_ns, Ev::Start(0));
        }
    }

    fn dispatch(&mut self, ev: Ev) -> io::Result<()> {
        match ev {
            Ev::Start(f) => {
                if let Some(next) = self.flows.get(f as usize + 1) {
                    self.at(next.start_ns, Ev::Start(f + 1));
                }
                self.send(f)
            }
            Ev::Send(f) => self.send(f),
            Ev::Arrive(p) => self.land(p),
            Ev::Fault(i, on) => {
                self.fault(i as usize, on);
                Ok(())
            }
        }
    }

    fn alloc(&mut self) -> u32 {
        self.free.pop().unwrap_or_else(|| {
            self.pkts.push(Pkt {
                hdr: Vec::with_capacity(HEADER_CAPACITY),
                zeros: 0,
                flow: 0,
                id: 0,
                arrival: 0,
                in_port: 0,
                path: Path::default(),
            });
            self.spills.push(Vec::new());
            if self.log {
                self.inputs.push(Vec::new());
            }
            (self.pkts.len() - 1) as u32
        })
    }

    /// The next packet of flow `f` leaves its host (into the NIC queue).
    fn send(&mut self, f: u32) -> io::Result<()> {
        let flow = &self.flows[f as usize];
        let i = self.next_pkt[f as usize];
        self.next_pkt[f as usize] += 1;
        let k = self.alloc();
        let pk = &mut self.pkts[k as usize];
        pk.zeros = flow.packet(i, &mut pk.hdr);
        (pk.flow, pk.id) = (f, i);
        pk.path.clear(&mut self.spills[k as usize]);
        let wire = pk.wire();
        let ft = &mut self.truth[f as usize];
        ft.packets_sent += 1;
        ft.bytes_sent += wire;
        self.totals.packets_sent += 1;
        if self.totals.packets_sent.is_multiple_of(PROGRESS_EVERY) {
            self.sink.progress(self.totals.packets_sent);
        }
        if i + 1 < flow.packets {
            let gap = ((wire + WIRE_OVERHEAD) as f64 * 8e9 / flow.rate_bps).ceil() as u64;
            self.at(self.now + gap, Ev::Send(f));
        }
        let port = self.port_base[flow.src];
        self.enqueue(port, k)
    }

    /// Packet `k` joins port `p`'s FIFO queue, or is lost to a full one. A FIFO port at a
    /// fixed rate needs no events of its own: the packet starts when the port is next free
    /// (plus a jitter stall), so its start, its hop latency and its last bit's departure are
    /// known now, and the egress twin runs now with that latency. The port's occupancy is
    /// the bytes of the packets whose last bit has not left yet. A drop fault decides the
    /// packet's fate on the link now too, by the fault state at this instant.
    fn enqueue(&mut self, p: u32, k: u32) -> io::Result<()> {
        let wire = self.pkts[k as usize].wire();
        let port = &mut self.ports[p as usize];
        while port.inflight.front().is_some_and(|&(done, _)| done <= self.now) {
            port.bytes -= port.inflight.pop_front().unwrap().1;
        }
        if port.bytes + wire > port.capacity {
            let node = port.node;
            self.switch_drop(node, k, DropReason::QueueFull);
            return Ok(());
        }
        let stall = port.jitter.map_or(0, |j| j.sample(&mut self.rng));
        let start = self.now.max(port.free_at) + stall;
        let (node, num, rate) = (port.node, port.num, port.rate_bps);
        if self.twins[node].is_some() {
            self.egress(node, num, k, start)?;
        }
        let done = start + serialization_ns(self.pkts[k as usize].wire(), rate);
        let port = &mut self.ports[p as usize];
        port.free_at = done;
        port.bytes += wire;
        port.inflight.push_back((done, wire));
        if port.drop_p > 0.0 && self.rng.gen::<f64>() < port.drop_p {
            let at =
                format!("{}>{}", self.t.nodes[node].name, self.t.nodes[self.t.peer(node, num).node].name);
            self.lose(k, at, None, DropReason::Link, done);
        } else {
            port.on_line.push_back((done + port.delay_ns, k));
            if port.on_line.len() == 1 {
                self.at(done + self.ports[p as usize].delay_ns, Ev::Arrive(p));
            }
        }
        Ok(())
    }

    /// The first packet on the line from port `p` lands at its peer; the next one on that
    /// line (they land in the order they were sent) becomes the pending event. Keeping only
    /// each line's first packet in the heap keeps the heap as small as the number of busy
    /// lines, however long the queues grow.
    fn land(&mut self, p: u32) -> io::Result<()> {
        let port = &mut self.ports[p as usize];
        let (_, k) = port.on_line.pop_front().expect("a packet on the line");
        let peer = port.peer;
        if let Some(&(t, _)) = port.on_line.front() {
            self.at(t, Ev::Arrive(p));
        }
        self.arrive(peer, k)
    }

    /// The egress twin of switch `node` on packet `k`, whose transmission on port `num`
    /// starts at `start`.
    fn egress(&mut self, node: NodeId, num: u16, k: u32, start: u64) -> io::Result<()> {
        let twin = self.twins[node].as_ref().unwrap();
        let pk = &mut self.pkts[k as usize];
        let latency = start - pk.arrival;
        let frame = std::mem::take(&mut pk.hdr);
        pk.hdr = twin.egress(frame, latency);
        self.truth[pk.flow as usize].at(twin.tables.switch_id).forward(latency);
        self.switches[self.sw_index[node].unwrap()].forwarded += 1;
        self.totals.packet_hops += 1;
        if self.log {
            let io = SwitchIo {
                in_ns: pk.arrival,
                in_port: pk.in_port,
                input: &self.inputs[k as usize],
                output: Some((start, num, &pk.hdr)),
                zeros: pk.zeros,
            };
            self.sink.switch_io(node, io)?;
        }
        Ok(())
    }

    /// Packet `k`'s last bit reached port `p`.
    fn arrive(&mut self, p: u32, k: u32) -> io::Result<()> {
        let node = self.ports[p as usize].node;
        if self.twins[node].is_none() {
            return self.deliver(node, k);
        }
        let in_port = self.ports[p as usize].num;
        let pk = &mut self.pkts[k as usize];
        let twin = self.twins[node].as_ref().unwrap();
        let sid = twin.tables.switch_id;
        let spill = &mut self.spills[k as usize];
        pk.path.push(sid, spill);
        let visit = pk.path.as_slice(spill).iter().filter(|&&s| s == sid).count() as u32;
        let wire = pk.wire();
        self.truth[pk.flow as usize].at(sid).arrive(self.now, wire, visit);
        self.switches[self.sw_index[node].unwrap()].arrivals += 1;
        if self.log {
            self.inputs[k as usize].clear();
            self.inputs[k as usize].extend_from_slice(&pk.hdr);
        }
        let frame = std::mem::take(&mut pk.hdr);
        match twin.ingress(frame) {
            Ingress::Forward { port, frame, .. } => {
                (pk.hdr, pk.arrival, pk.in_port) = (frame, self.now, in_port);
                self.enqueue(self.port_base[node] + port as u32, k)?;
            }
            Ingress::Drop { reason, .. } => {
                pk.hdr = Vec::with_capacity(HEADER_CAPACITY);
                if self.log {
                    let io = SwitchIo {
                        in_ns: self.now,
                        in_port,
                        input: &self.inputs[k as usize],
                        output: None,
                        zeros: pk.zeros,
                    };
                    self.sink.switch_io(node, io)?;
                }
                self.switch_drop(node, k, reason);
            }
        }
        Ok(())
    }

    fn deliver(&mut self, host: NodeId, k: u32) -> io::Result<()> {
        let pk = &self.pkts[k as usize];
        let ft = &mut self.truth[pk.flow as usize];
        ft.packets_received += 1;
        ft.bytes_received += pk.wire();
        ft.path(pk.path.as_slice(&self.spills[k as usize]), true);
        self.totals.packets_received += 1;
        self.sink.deliver(host, self.now, &pk.hdr, pk.zeros)?;
        self.free.push(k);
        Ok(())
    }

    fn switch_drop(&mut self, node: NodeId, k: u32, reason: DropReason) {
        let sid = self.twins[node].as_ref().unwrap().tables.switch_id;
        self.switches[self.sw_index[node].unwrap()].dropped += 1;
        let flow = self.pkts[k as usize].flow as usize;
        self.truth[flow].at(sid).dropped += 1;
        self.lose(k, self.t.nodes[node].name.clone(), Some(sid), reason, self.now);
    }

    /// Packet `k` is lost at `at` at `time_ns`.
    fn lose(&mut self, k: u32, at: String, switch_id: Option<u16>, reason: DropReason, time_ns: u64) {
        let pk = &self.pkts[k as usize];
        let ft = &mut self.truth[pk.flow as usize];
        ft.packets_dropped += 1;
        ft.path(pk.path.as_slice(&self.spills[k as usize]), false);
        self.totals.packets_dropped += 1;
        self.lost.push(Lost { flow: pk.flow, packet: pk.id, at, switch_id, time_ns, reason });
        self.free.push(k);
    }

    /// Fault `i` starts or ends: the tables or ports it touches are rebuilt from the base
    /// and every fault active now, in schedule order (so overlapping faults compose).
    fn fault(&mut self, i: usize, on: bool) {
        self.active[i] = on;
        match self.placed[i].clone() {
            Placed::Tables(nodes) => {
                for n in nodes {
                    let mut tables = self.base[n].clone().expect("a switch");
                    for (j, f) in self.faults.iter().enumerate() {
                        if self.active[j] && matches!(&self.placed[j], Placed::Tables(ns) if ns.contains(&n))
                        {
                            f.apply(self.t, n, &mut tables);
                        }
                    }
                    self.twins[n].as_mut().unwrap().tables = tables;
                }
            }
            Placed::Port { node, port } => {
                let p = (self.port_base[node] + port as u32) as usize;
                let (mut keep, mut jitter) = (1.0, None);
                for (j, f) in self.faults.iter().enumerate() {
                    if self.active[j] && self.placed[j] == self.placed[i] {
                        match f.kind {
                            super::faults::FaultKind::Drop { p, .. } => keep *= 1.0 - p,
                            super::faults::FaultKind::Jitter { dist, .. } => jitter = Some(dist),
                            _ => {}
                        }
                    }
                }
                (self.ports[p].drop_p, self.ports[p].jitter) = (1.0 - keep, jitter);
            }
        }
    }

    fn finish(mut self, seed: u64) -> Truth {
        self.truth.iter_mut().for_each(FlowTruth::finish);
        Truth {
            version: TRUTH_VERSION,
            seed,
            end_ns: self.now,
            totals: self.totals,
            faults: self.faults.iter().map(Fault::record).collect(),
            switches: self.switches,
            flows: self.truth,
            lost: self.lost,
        }
    }
}

/// Time on the line for a frame of `wire` bytes (capture length) at `rate_bps`, rounded up
/// to the next ns; the [`WIRE_OVERHEAD`] bytes included.
pub fn serialization_ns(wire: u64, rate_bps: u64) -> u64 {
    ((wire + WIRE_OVERHEAD) * 8 * 1_000_000_000).div_ceil(rate_bps)
}

/// Every node's ports, flattened (node `n`'s port `p` is `base[n] + p`), with their peers.
fn build_ports(t: &Topology, queue_bytes: u64) -> (Vec<Port>, Vec<u32>) {
    let mut base = Vec::with_capacity(t.nodes.len());
    let mut next = 0u32;
    for n in &t.nodes {
        base.push(next);
        next += n.ports.len() as u32;
    }
    let mut ports = Vec::with_capacity(next as usize);
    for (n, node) in t.nodes.iter().enumerate() {
        for p in 0..node.ports.len() as u16 {
            let link = t.link(n, p);
            let peer = t.peer(n, p);
            ports.push(Port {
                node: n,
                num: p,
                peer: base[peer.node] + peer.port as u32,
                rate_bps: link.rate_bps,
                delay_ns: link.delay_ns,
                capacity: if t.is_host(n) { u64::MAX } else { queue_bytes },
                free_at: 0,
                inflight: VecDeque::new(),
                bytes: 0,
                on_line: VecDeque::new(),
                drop_p: 0.0,
                jitter: None,
            });
        }
    }
    (ports, base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_spill_past_the_inline_hops() {
        let (mut p, mut spill) = (Path::default(), Vec::new());
        let ids: Vec<u16> = (0..40).collect();
        for (i, &id) in ids.iter().enumerate() {
            p.push(id, &mut spill);
            assert_eq!(p.as_slice(&spill), &ids[..=i]);
        }
        p.clear(&mut spill);
        p.push(7, &mut spill);
        assert_eq!(p.as_slice(&spill), [7]);
        assert_eq!(std::mem::size_of::<Pkt>(), 64, "a packet is one cache line");
    }

    #[test]
    fn serialization_counts_the_overhead() {
        // 1476 + 24 bytes at 10 Gb/s: 1200 ns exactly; 1 byte more rounds up.
        assert_eq!(serialization_ns(1476, 10_000_000_000), 1200);
        assert_eq!(serialization_ns(1477, 10_000_000_000), 1201);
    }

    #[test]
    fn events_pop_in_time_then_schedule_order() {
        let mut h = BinaryHeap::new();
        h.push(Item { time: 5, seq: 2, ev: Ev::Send(0) });
        h.push(Item { time: 5, seq: 1, ev: Ev::Send(1) });
        h.push(Item { time: 3, seq: 9, ev: Ev::Send(2) });
        let order: Vec<_> = std::iter::from_fn(|| h.pop()).map(|i| (i.time, i.seq)).collect();
        assert_eq!(order, [(3, 9), (5, 1), (5, 2)]);
    }
}
