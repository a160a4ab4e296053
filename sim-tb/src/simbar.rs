//! The driver's Verilator back end: [`SimBar`] owns a model with an AXI4-Lite slave port
//! (the `regs` block, later the core top) and implements
//! [`smartnic_driver::access::RegisterAccess`] by running AXI transactions on it, one clock
//! at a time.
//!
//! What sits behind the register block (counters, the epoch engine, the readout windows) is
//! a [`Fabric`]: called once per clock before the edge, it reads the block's outputs
//! (`swap`/`clear` pulses, `win_req`) and drives its inputs (live registers, `win_ack`,
//! `win_data`). [`RegsFabric`] is a ready-made one for the bare register block: fixed live
//! values ([`LiveInputs`]), window words from a closure with a random latency
//! ([`WindowResponder`]), and a log of the pulses.
//!
//! ```no_run
//! use smartnic_sim_tb::simbar::{RegsFabric, SimBar};
//! use smartnic_driver::access::RegisterAccess;
//! let mut bar = SimBar::regs_default(|m| RegsFabric::new(m, |sel, index| sel as u32 + index)).unwrap();
//! let fw_type = bar.read32(0).unwrap();
//! ```
//!
//! A hung slave (no handshake within [`SimBar::max_wait`] clocks) is an
//! [`AccessError::Io`] with kind `TimedOut`, never an endless loop.
use crate::model::{Model, PortId};
use smartnic_driver::access::{check_range, AccessError, RegisterAccess};
use smartnic_hdl::regs::axil::PORT_PREFIX;
use smartnic_hdl::regs::{RegMap, RegsNic, STAT_PORTS};
use std::collections::VecDeque;

/// A small seeded generator for stalls and latencies (the contract's splitmix64 stream).
#[derive(Clone, Debug)]
pub struct Rng(smartnic_contract::vectors::KeyStream);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(smartnic_contract::vectors::KeyStream::new(seed))
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
    /// True with probability `pct` percent.
    pub fn chance(&mut self, pct: u32) -> bool {
        self.below(100) < pct as u64
    }
}

/// The AXI4-Lite slave ports of a model: `<prefix>awaddr`, `<prefix>awvalid`, ... (the
/// prefix of rust-hdl's `AxiLiteSlave` bundle is `regs::axil::PORT_PREFIX`, `bus$`).
#[derive(Clone, Copy, Debug)]
pub struct AxiLitePorts {
    pub awaddr: PortId,
    pub awvalid: PortId,
    pub awready: PortId,
    pub wdata: PortId,
    pub wstrb: PortId,
    pub wvalid: PortId,
    pub wready: PortId,
    pub bresp: PortId,
    pub bvalid: PortId,
    pub bready: PortId,
    pub araddr: PortId,
    pub arvalid: PortId,
    pub arready: PortId,
    pub rdata: PortId,
    pub rresp: PortId,
    pub rvalid: PortId,
    pub rready: PortId,
}

impl AxiLitePorts {
    /// Looks the ports up (panics listing the model's ports if one is missing).
    pub fn of(m: &Model, prefix: &str) -> Self {
        let p = |n: &str| m.port(&format!("{prefix}{n}"));
        AxiLitePorts {
            awaddr: p("awaddr"),
            awvalid: p("awvalid"),
            awready: p("awready"),
            wdata: p("wdata"),
            wstrb: p("wstrb"),
            wvalid: p("wvalid"),
            wready: p("wready"),
            bresp: p("bresp"),
            bvalid: p("bvalid"),
            bready: p("bready"),
            araddr: p("araddr"),
            arvalid: p("arvalid"),
            arready: p("arready"),
            rdata: p("rdata"),
            rresp: p("rresp"),
            rvalid: p("rvalid"),
            rready: p("rready"),
        }
    }
}

/// What sits behind the register port.
pub trait Fabric {
    /// Called once per clock, before the rising edge, after the master set its AXI inputs
    /// for this clock and before it samples the slave's outputs (the model is evaluated
    /// after this returns). `cycle` is the number of clocks run so far.
    fn clock(&mut self, m: &mut Model, cycle: u64);
}

/// Nothing behind the port: inputs stay as they are.
impl Fabric for () {
    fn clock(&mut self, _: &mut Model, _: u64) {}
}

/// Master-side stalls: before raising a valid, and on every clock of a ready, the master
/// holds off with probability `pct` percent.
#[derive(Clone, Debug)]
pub struct Stalls {
    pub rng: Rng,
    pub pct: u32,
}

/// Bus statistics of a [`SimBar`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BusStats {
    pub reads: u64,
    pub writes: u64,
    /// Clocks spent inside transactions.
    pub clocks: u64,
    /// The longest transaction in clocks.
    pub max_clocks: u64,
}

/// A BAR backed by a Verilator model's AXI4-Lite slave (see the module docs).
pub struct SimBar<F: Fabric> {
    model: Model,
    axi: AxiLitePorts,
    bar_size: u64,
    /// What answers behind the register block.
    pub fabric: F,
    /// Random master stalls (`None`: valid and ready as early as possible).
    pub stalls: Option<Stalls>,
    /// Clocks one channel may wait for a handshake before the access fails.
    pub max_wait: u64,
    pub stats: BusStats,
}

fn hung(what: String) -> AccessError {
    AccessError::Io {
        what,
        source: std::io::Error::new(std::io::ErrorKind::TimedOut, "AXI4-Lite handshake timed out"),
    }
}

impl<F: Fabric> SimBar<F> {
    /// Wraps `model` (reset for 4 clocks here, with the master's valids and readies low);
    /// `make_fabric` gets the model to look its ports up; `prefix` names the AXI4-Lite ports
    /// (`regs::axil::PORT_PREFIX` for our blocks).
    pub fn new(
        mut model: Model,
        prefix: &str,
        bar_size: u64,
        make_fabric: impl FnOnce(&mut Model) -> F,
    ) -> Self {
        let axi = AxiLitePorts::of(&model, prefix);
        for p in [axi.awvalid, axi.wvalid, axi.bready, axi.arvalid, axi.rready] {
            model.set(p, 0);
        }
        let fabric = make_fabric(&mut model);
        model.reset(4);
        SimBar { model, axi, bar_size, fabric, stalls: None, max_wait: 10_000, stats: BusStats::default() }
    }

    pub fn model(&mut self) -> &mut Model {
        &mut self.model
    }

    pub fn axi(&self) -> AxiLitePorts {
        self.axi
    }

    /// The model and the fabric at once (a fabric that runs many clocks itself).
    pub fn model_and_fabric(&mut self) -> (&mut Model, &mut F) {
        (&mut self.model, &mut self.fabric)
    }

    /// Runs `n` clocks with no transaction (the fabric still runs).
    pub fn idle(&mut self, n: u64) {
        for _ in 0..n {
            self.before_edge();
            self.model.tick();
        }
    }

    fn before_edge(&mut self) {
        let c = self.model.cycles();
        self.fabric.clock(&mut self.model, c);
        self.model.eval();
    }

    fn stall(&mut self) -> bool {
        match &mut self.stalls {
            Some(s) => s.rng.chance(s.pct),
            None => false,
        }
    }

    /// Waits (ticking) until the master decides to raise a valid.
    fn pre_stall(&mut self) {
        while self.stall() {
            self.idle(1);
        }
    }

    fn account(&mut self, start: u64) {
        let n = self.model.cycles() - start;
        self.stats.clocks += n;
        self.stats.max_clocks = self.stats.max_clocks.max(n);
    }

    /// One AXI4-Lite read; returns `(rdata, rresp)`.
    pub fn axi_read(&mut self, offset: u32) -> Result<(u32, u32), AccessError> {
        let a = self.axi;
        let start = self.model.cycles();
        self.pre_stall();
        self.model.set(a.araddr, offset as u128);
        self.model.set(a.arvalid, 1);
        let mut waited = 0;
        loop {
            self.before_edge();
            let ready = self.model.get(a.arready) == 1;
            self.model.tick();
            if ready {
                break;
            }
            waited += 1;
            if waited > self.max_wait {
                self.model.set(a.arvalid, 0);
                return Err(hung(format!("read {offset:#x}: no ARREADY in {waited} clocks")));
            }
        }
        self.model.set(a.arvalid, 0);
        let mut waited = 0;
        loop {
            let rready = !self.stall();
            self.model.set(a.rready, rready as u128);
            self.before_edge();
            let valid = self.model.get(a.rvalid) == 1;
            let (data, resp) = (self.model.get(a.rdata) as u32, self.model.get(a.rresp) as u32);
            self.model.tick();
            if valid && rready {
                self.model.set(a.rready, 0);
                self.stats.reads += 1;
                self.account(start);
                return Ok((data, resp));
            }
            waited += 1;
            if waited > self.max_wait {
                self.model.set(a.rready, 0);
                return Err(hung(format!("read {offset:#x}: no RVALID in {waited} clocks")));
            }
        }
    }

    /// One AXI4-Lite write with byte strobes; returns `bresp`. AW and W are raised after
    /// independent random stalls and each held until its handshake.
    pub fn axi_write(&mut self, offset: u32, value: u32, strb: u8) -> Result<u32, AccessError> {
        let a = self.axi;
        let start = self.model.cycles();
        self.model.set(a.awaddr, offset as u128);
        self.model.set(a.wdata, value as u128);
        self.model.set(a.wstrb, strb as u128 & 0xF);
        let (mut aw_done, mut w_done) = (false, false);
        let (mut aw_up, mut w_up) = (false, false);
        let mut waited = 0;
        while !(aw_done && w_done) {
            if !aw_done && !aw_up && !self.stall() {
                aw_up = true;
            }
            if !w_done && !w_up && !self.stall() {
                w_up = true;
            }
            self.model.set(a.awvalid, (aw_up && !aw_done) as u128);
            self.model.set(a.wvalid, (w_up && !w_done) as u128);
            self.before_edge();
            let aw_hs = aw_up && !aw_done && self.model.get(a.awready) == 1;
            let w_hs = w_up && !w_done && self.model.get(a.wready) == 1;
            self.model.tick();
            aw_done |= aw_hs;
            w_done |= w_hs;
            waited += 1;
            if waited > self.max_wait {
                self.model.set(a.awvalid, 0);
                self.model.set(a.wvalid, 0);
                return Err(hung(format!("write {offset:#x}: AW/W not accepted in {waited} clocks")));
            }
        }
        self.model.set(a.awvalid, 0);
        self.model.set(a.wvalid, 0);
        let mut waited = 0;
        loop {
            let bready = !self.stall();
            self.model.set(a.bready, bready as u128);
            self.before_edge();
            let valid = self.model.get(a.bvalid) == 1;
            let resp = self.model.get(a.bresp) as u32;
            self.model.tick();
            if valid && bready {
                self.model.set(a.bready, 0);
                self.stats.writes += 1;
                self.account(start);
                return Ok(resp);
            }
            waited += 1;
            if waited > self.max_wait {
                self.model.set(a.bready, 0);
                return Err(hung(format!("write {offset:#x}: no BVALID in {waited} clocks")));
            }
        }
    }
}

impl<F: Fabric> RegisterAccess for SimBar<F> {
    fn bar_size(&self) -> u64 {
        self.bar_size
    }

    fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
        check_range(self.bar_size, offset, 4)?;
        let (data, resp) = self.axi_read(offset)?;
        if resp != 0 {
            return Err(hung(format!("read {offset:#x}: RRESP {resp}")));
        }
        Ok(data)
    }

    fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
        check_range(self.bar_size, offset, 4)?;
        match self.axi_write(offset, value, 0xF)? {
            0 => Ok(()),
            resp => Err(hung(format!("write {offset:#x}: BRESP {resp}"))),
        }
    }
}

/// The register block's non-AXI ports.
#[derive(Clone, Copy, Debug)]
pub struct RegPorts {
    /// `frames`, `sketched`, `bytes`, `non_ip`, `malformed`.
    pub stats: [PortId; 5],
    pub epoch_num: PortId,
    pub epoch_seq: PortId,
    pub swap_pending: PortId,
    pub clear_busy: PortId,
    pub idle_packets: PortId,
    pub active_packets: PortId,
    pub swap: PortId,
    pub clear: PortId,
    pub acu: PortId,
    pub win_req: PortId,
    pub win_sel: PortId,
    pub win_index: PortId,
    pub win_ack: PortId,
    pub win_data: PortId,
    pub table_misses: PortId,
    pub rec_words: PortId,
    pub rec_dropped: PortId,
    pub hops_refused: PortId,
    pub rec_head: PortId,
    pub rec_head_valid: PortId,
    pub rec_pop: PortId,
    pub ps_acu: PortId,
    pub inflate_threshold: PortId,
    pub table_threshold: PortId,
    pub st_start: PortId,
    /// `st_busy`, `st_streams`, `st_words`, `st_clocks`, `st_stalls`.
    pub stream: [PortId; 5],
    pub ring_enable: PortId,
    pub ring_words: PortId,
}

/// The register file's readout-stream inputs, in [`RegPorts::stream`] order.
pub const STREAM_PORTS: [&str; 5] = ["st_busy", "st_streams", "st_words", "st_clocks", "st_stalls"];

impl RegPorts {
    pub fn of(m: &Model, prefix: &str) -> Self {
        let p = |n: &str| m.port(&format!("{prefix}{n}"));
        RegPorts {
            stats: STAT_PORTS.map(p),
            epoch_num: p("epoch_num"),
            epoch_seq: p("epoch_seq"),
            swap_pending: p("swap_pending"),
            clear_busy: p("clear_busy"),
            idle_packets: p("idle_packets"),
            active_packets: p("active_packets"),
            swap: p("swap"),
            clear: p("clear"),
            acu: p("acu"),
            win_req: p("win_req"),
            win_sel: p("win_sel"),
            win_index: p("win_index"),
            win_ack: p("win_ack"),
            win_data: p("win_data"),
            table_misses: p("table_misses"),
            rec_words: p("rec_words"),
            rec_dropped: p("rec_dropped"),
            hops_refused: p("hops_refused"),
            rec_head: p("rec_head"),
            rec_head_valid: p("rec_head_valid"),
            rec_pop: p("rec_pop"),
            ps_acu: p("ps_acu"),
            inflate_threshold: p("inflate_threshold"),
            table_threshold: p("table_threshold"),
            st_start: p("st_start"),
            stream: STREAM_PORTS.map(p),
            ring_enable: p("ring_enable"),
            ring_words: p("ring_words"),
        }
    }
}

/// Values of the live-register inputs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LiveInputs {
    /// frames, sketched, bytes, non_ip, malformed.
    pub stats: [u64; 5],
    pub epoch: u32,
    pub sequence: u32,
    pub swap_pending: bool,
    pub clear_busy: bool,
    pub idle_packets: u64,
    pub active_packets: u64,
    pub table_misses: u32,
    pub rec_words: u16,
    pub rec_dropped: u32,
    pub hops_refused: u32,
    /// The readout-stream block: busy (0/1), streams, last words, last clocks, last stalls.
    pub stream: [u32; 5],
    /// The record ring's RING_WORDS.
    pub ring_words: u32,
}

impl LiveInputs {
    /// Drives the ports.
    pub fn apply(&self, m: &mut Model, p: &RegPorts) {
        for (&port, &v) in p.stats.iter().zip(&self.stats) {
            m.set(port, v as u128);
        }
        m.set(p.epoch_num, self.epoch as u128);
        m.set(p.epoch_seq, self.sequence as u128);
        m.set(p.swap_pending, self.swap_pending as u128);
        m.set(p.clear_busy, self.clear_busy as u128);
        m.set(p.idle_packets, self.idle_packets as u128);
        m.set(p.active_packets, self.active_packets as u128);
        m.set(p.table_misses, self.table_misses as u128);
        m.set(p.rec_words, self.rec_words as u128);
        m.set(p.rec_dropped, self.rec_dropped as u128);
        m.set(p.hops_refused, self.hops_refused as u128);
        for (&port, &v) in p.stream.iter().zip(&self.stream) {
            m.set(port, v as u128);
        }
        m.set(p.ring_words, self.ring_words as u128);
    }
}

/// Answers `win_req` after a random latency in `min..=max` clocks (0: the same clock, a
/// combinational answer), with the word `read(sel, index)` taken when the request is seen.
pub struct WindowResponder {
    pub min: u64,
    pub max: u64,
    pub rng: Rng,
    pending: VecDeque<(u64, u32)>,
    /// Every request seen: `(cycle, sel, index)`.
    pub requests: Vec<(u64, usize, u32)>,
    /// Requests seen while another was still unanswered (the block allows one).
    pub overlapping: u64,
}

impl WindowResponder {
    pub fn new(min: u64, max: u64, seed: u64) -> Self {
        assert!(min <= max);
        WindowResponder {
            min,
            max,
            rng: Rng::new(seed),
            pending: VecDeque::new(),
            requests: Vec::new(),
            overlapping: 0,
        }
    }

    /// One clock: record a request, drive `win_ack`/`win_data` for an answer due now.
    pub fn clock(
        &mut self,
        m: &mut Model,
        p: &RegPorts,
        cycle: u64,
        mut read: impl FnMut(usize, u32) -> u32,
    ) {
        if m.get(p.win_req) == 1 {
            let (sel, index) = (m.get(p.win_sel) as usize, m.get(p.win_index) as u32);
            if !self.pending.is_empty() {
                self.overlapping += 1;
            }
            self.requests.push((cycle, sel, index));
            let due = cycle + self.min + self.rng.below(self.max - self.min + 1);
            self.pending.push_back((due, read(sel, index)));
        }
        match self.pending.front() {
            Some(&(due, data)) if due <= cycle => {
                self.pending.pop_front();
                m.set(p.win_ack, 1);
                m.set(p.win_data, data as u128);
            }
            _ => {
                m.set(p.win_ack, 0);
                m.set(p.win_data, 0);
            }
        }
    }
}

/// A fabric for the bare register block: fixed live inputs (re-driven when changed), window
/// words from a closure, and a log of the `swap`/`clear` pulses and of `acu`.
pub struct RegsFabric {
    pub ports: RegPorts,
    pub live: LiveInputs,
    applied: Option<LiveInputs>,
    pub windows: WindowResponder,
    pub source: Box<dyn FnMut(usize, u32) -> u32>,
    /// Cycles at which `swap` / `clear` were high.
    pub swaps: Vec<u64>,
    pub clears: Vec<u64>,
    /// Cycles at which `st_start` was high.
    pub starts: Vec<u64>,
    /// `acu` output at the last clock.
    pub acu: bool,
    /// A record stream behind `rec_head`/`rec_pop`: its words, and the words popped.
    pub stream: VecDeque<u32>,
    pub popped: Vec<u32>,
    /// The per-switch outputs at the last clock: `ps_acu`, `inflate_threshold`, `table_threshold`.
    pub ps: (bool, u32, u32),
}

impl RegsFabric {
    /// Window latency 0..=8 clocks (seed 1); `source(sel, index)` gives the window words.
    pub fn new(m: &mut Model, source: impl FnMut(usize, u32) -> u32 + 'static) -> Self {
        let ports = RegPorts::of(m, "");
        m.set(ports.win_ack, 0);
        m.set(ports.win_data, 0);
        let live = LiveInputs::default();
        live.apply(m, &ports);
        RegsFabric {
            ports,
            live,
            applied: Some(live),
            windows: WindowResponder::new(0, 8, 1),
            source: Box::new(source),
            swaps: Vec::new(),
            clears: Vec::new(),
            starts: Vec::new(),
            acu: false,
            stream: VecDeque::new(),
            popped: Vec::new(),
            ps: (false, 0, 0),
        }
    }
}

impl Fabric for RegsFabric {
    fn clock(&mut self, m: &mut Model, cycle: u64) {
        if self.applied != Some(self.live) {
            self.live.apply(m, &self.ports);
            self.applied = Some(self.live);
        }
        if m.get(self.ports.swap) == 1 {
            self.swaps.push(cycle);
        }
        if m.get(self.ports.clear) == 1 {
            self.clears.push(cycle);
        }
        if m.get(self.ports.st_start) == 1 {
            self.starts.push(cycle);
        }
        self.acu = m.get(self.ports.acu) == 1;
        let p = &self.ports;
        self.ps = (m.get(p.ps_acu) == 1, m.get(p.inflate_threshold) as u32, m.get(p.table_threshold) as u32);
        if m.get(p.rec_pop) == 1 {
            self.popped.push(self.stream.pop_front().expect("rec_pop only with rec_head_valid"));
        }
        m.set(p.rec_head_valid, !self.stream.is_empty() as u128);
        m.set(p.rec_head, self.stream.front().copied().unwrap_or(0xDEAD_BEEF) as u128);
        self.windows.clock(m, &self.ports, cycle, &mut self.source);
    }
}

impl<F: Fabric> SimBar<F> {
    /// The board's register block (`regs`, [`RegsNic`] on [`RegMap::nic_default`]) behind
    /// a BAR of the map's size.
    pub fn regs_default(make_fabric: impl FnOnce(&mut Model) -> F) -> Result<Self, String> {
        let map = RegMap::nic_default();
        let verilog = smartnic_hdl::flow::to_verilog("regs", &mut RegsNic::new(&map)?)?;
        let model = Model::of_verilog("regs", &verilog)?;
        Ok(SimBar::new(model, PORT_PREFIX, map.layout.bar_size as u64, make_fabric))
    }
}

#[cfg(test)]
mod tests {
    use crate::build::{parse_ports, Port};
    use smartnic_hdl::flow::module_name;
    use smartnic_hdl::regs::axil::PORT_PREFIX;

    /// The AXI4-Lite signals by their specification names.
    const AXI_LITE: [&str; 17] = [
        "awaddr", "awvalid", "awready", "wdata", "wstrb", "wvalid", "wready", "bresp", "bvalid", "bready",
        "araddr", "arvalid", "arready", "rdata", "rresp", "rvalid", "rready",
    ];

    fn bus_ports(ports: &[Port]) -> Vec<Port> {
        ports.iter().filter(|p| p.name.starts_with(PORT_PREFIX)).cloned().collect()
    }

    /// The register file and the core expose the same one bundle (names, widths,
    /// directions), every AXI4-Lite signal under the bundle prefix and none outside it, so
    /// one `AxiLitePorts::of(model, PORT_PREFIX)` drives either block.
    #[test]
    fn regs_and_core_expose_one_axi_lite_bundle() {
        let regs = parse_ports(&smartnic_hdl::regs::nic_verilog().unwrap(), &module_name("regs")).unwrap();
        let core =
            parse_ports(&smartnic_hdl::core_top::nic_verilog().unwrap(), &module_name("core")).unwrap();
        let names: Vec<String> =
            bus_ports(&regs).iter().map(|p| p.name[PORT_PREFIX.len()..].to_string()).collect();
        assert_eq!(names, AXI_LITE, "the register file's bus ports");
        assert_eq!(bus_ports(&regs), bus_ports(&core), "the core passes the register file's bundle through");
        for p in regs.iter().chain(&core) {
            assert!(
                p.name.starts_with(PORT_PREFIX) || !AXI_LITE.contains(&p.name.as_str()),
                "AXI4-Lite port `{}` outside the bundle",
                p.name
            );
        }
    }
}
