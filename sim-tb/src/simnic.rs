//! The simulated NIC: the Verilator model of the core top (block `core`,
//! `smartnic_hdl::core_top`) with a packet source on its AXI-Stream port and the driver's
//! register access on its AXI4-Lite port.
//!
//! - **Frames** are queued ([`SimNic::queue`]) and fed beat by beat (64-bit `tdata`,
//!   `tdata[7:0]` first on the wire, `tkeep` of the last beat from the length, optional
//!   `tuser` on the last beat) back to back or with [`SimNic::set_gap`] idle clocks after each
//!   frame. The core's `now` port carries each frame's timestamp from its first beat on, so
//!   the sketches see the trace's times (pcap timestamps from [`read_capture`]). An empty
//!   frame is one beat with `tkeep = 0` (malformed). Captures that are not Ethernet are
//!   framed as a MAC would deliver them ([`to_ethernet`]).
//! - **Register access**: [`SimNic`] implements
//!   [`smartnic_driver::access::RegisterAccess`] through [`SimBar`]; the frame source is the
//!   bar's [`Fabric`], so frames keep flowing on every clock of every register transaction
//!   (the driver's readout runs while traffic flows, as on a board).
//! - **Clock**: the clock only runs inside register transactions and in the calls that say
//!   so ([`SimNic::replay`], [`SimNic::run_frames`], [`SimNic::run`], [`SimNic::drain`]).
//!   Those run many clocks per call into the model (`Model::stream`); a register access
//!   runs one clock per FFI round trip.
//! - **Card-to-host channel**: the core's readout-stream port (`c2h_*`) ends in a host
//!   buffer ([`C2hBuffer`]) that takes a 256-bit beat on every clock it is offered one, as
//!   the DMA engine of a Gen3 x8 link does (its 256-bit channel at 250 MHz), or on every
//!   `n`th clock when throttled ([`SimNic::set_c2h_every`]).
//!   [`C2hChannel::wait`] runs the clock until a stream's trailer has arrived.
//! - **Record ring**: the core's `ring_*` channel ends in a ring in host memory
//!   ([`HostRing`], [`RING_WORDS_DEFAULT`] words) that takes a word on every clock while it
//!   has room; [`RecordRing::take`] runs the clock until the words asked for have arrived.
//! - **Monitor**: every packet that enters the sketch is recorded with the EPOCH it was
//!   tagged with ([`SimNic::take_sketched`]), from the core's `mon_*` ports; tests build the
//!   per-epoch software sketches from exactly these packets.
//!
//! ```no_run
//! use smartnic_driver::access::RegisterAccess;
//! use smartnic_sim_tb::simnic::SimNic;
//! let mut nic = SimNic::new().unwrap();
//! let frames = vec![(1_000u64, vec![0u8; 64])];
//! nic.replay(frames, usize::MAX);
//! let fw_type = nic.read32(0).unwrap();
//! ```
use crate::model::{Model, PortId};
use crate::simbar::{Fabric, SimBar};
use crate::xdma::{Timing, XdmaModel};
use smartnic::trace::frame::{
    parse_frame, FrameClass, LINKTYPE_ETHERNET, LINKTYPE_IPV4, LINKTYPE_IPV6, LINKTYPE_RAW,
};
use smartnic_contract::frame::{ETHERTYPE_IPV4, ETHERTYPE_IPV6};
use smartnic_driver::access::{AccessError, C2hChannel, RecordRing, RegisterAccess};
use smartnic_driver::dma::HeapDma;
use smartnic_hdl::regs::axil::PORT_PREFIX;
use smartnic_hdl::regs::RegMap;
use std::collections::VecDeque;
use std::path::Path;
use std::time::{Duration, Instant};

/// One frame to send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimFrame {
    /// Timestamp in ns, driven on `now` from the frame's first beat.
    pub ts_ns: u64,
    /// The frame from the destination MAC on (no FCS). An empty frame is driven as one
    /// beat with `tkeep = 0`, which the parser counts as malformed (a hole), as the
    /// software parser calls an empty frame a truncated Ethernet header.
    pub data: Vec<u8>,
    /// Raise `tuser` (MAC error) on the last beat.
    pub tuser: bool,
}

impl SimFrame {
    pub fn new(ts_ns: u64, data: impl Into<Vec<u8>>) -> Self {
        SimFrame { ts_ns, data: data.into(), tuser: false }
    }
    fn beats(&self) -> usize {
        self.data.len().div_ceil(8).max(1)
    }
}

/// What the frame source and the monitor saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FeedStats {
    /// Frames whose last beat was driven.
    pub frames: u64,
    /// Bytes of those frames.
    pub bytes: u64,
    /// Beats driven (`tvalid` high).
    pub beats: u64,
    /// Clocks the source drove (beats + idle clocks while frames were queued or gaps ran).
    pub busy_clocks: u64,
    /// Packets seen entering the sketch (`mon_valid`).
    pub sketched: u64,
    /// Clocks on which `tready` was low (the core promises none).
    pub tready_low: u64,
}

#[derive(Clone, Copy, Debug)]
struct CorePorts {
    tdata: PortId,
    tkeep: PortId,
    tlast: PortId,
    tuser: PortId,
    tvalid: PortId,
    now: PortId,
    tready: PortId,
    mon_valid: PortId,
    mon_key: PortId,
    mon_epoch: PortId,
    c2h_tready: PortId,
    c2h_tvalid: PortId,
    c2h_tlast: PortId,
    c2h_tkeep: PortId,
    c2h_tdata: PortId,
    ring_tready: PortId,
    ring_tvalid: PortId,
    ring_tdata: PortId,
}

/// Words of one input row: tdata 2, tkeep, tlast, tuser, tvalid, now 2, c2h_tready,
/// ring_tready.
const IN_ROW: usize = 10;
/// Words of one output row: tready, mon_valid, mon_epoch, mon_key 4, c2h_tvalid,
/// c2h_tlast, c2h_tkeep, c2h_tdata 8, ring_tvalid, ring_tdata 2.
const OUT_ROW: usize = 21;

/// The 64-bit words a card-to-host beat holds (`tkeep`: whole words from the first), or why
/// the beat is malformed.
pub fn beat_words(keep: u32, data: &[u32]) -> Vec<u64> {
    let n = (keep.count_ones() / 8) as usize;
    assert!(
        n >= 1 && keep as u64 == (1u64 << (8 * n)) - 1,
        "a readout beat's tkeep {keep:#x} is not whole 64-bit words from the first"
    );
    (0..n).map(|k| data[2 * k] as u64 | (data[2 * k + 1] as u64) << 32).collect()
}

/// The host buffer at the end of the card-to-host channel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct C2hBuffer {
    /// Words received since the last [`C2hChannel::arm`].
    pub words: Vec<u64>,
    /// Streams whose trailer (`c2h_tlast`) arrived since then.
    pub streams: u64,
    /// `tready` on every `every`th clock (1 = always).
    pub every: u64,
    /// Clocks whose `tready` was decided, for the throttle.
    decided: u64,
}

impl C2hBuffer {
    /// `tready` of the next clock.
    fn next_ready(&mut self) -> bool {
        self.decided += 1;
        self.every <= 1 || self.decided.is_multiple_of(self.every)
    }

    /// One clock's channel outputs (a beat's words), with the `tready` that clock had.
    fn take(&mut self, valid: bool, last: bool, words: &[u64], ready: bool) {
        if valid && ready {
            self.words.extend_from_slice(words);
            self.streams += last as u64;
        }
    }
}
/// The record ring in host memory at the end of the core's `ring_*` channel: it takes a word
/// on every clock while it has room, and holds `tready` low when full (the NIC's record
/// buffer then fills and counts what it drops, as it would with a host that stopped
/// reading).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostRing {
    /// Words arrived and not yet taken.
    pub words: VecDeque<u64>,
    /// Words the ring holds.
    pub capacity: usize,
    /// Words taken so far (mod 2^32, the NIC's RING_WORDS numbering).
    pub taken: u32,
}

impl HostRing {
    /// Room for one more word, with `promised` words possibly still to arrive.
    fn room(&self, promised: u64) -> bool {
        (self.words.len() as u64 + promised) < self.capacity as u64
    }
}

/// The simulated ring's default size: 8 MiB of host memory (262,144 inflated-latency
/// records), what a host gives a DMA ring; the driver empties it at each readout, and the
/// congested lab epochs make up to ~100,000 records between two.
pub const RING_WORDS_DEFAULT: usize = 1 << 20;

/// Clocks per `Model::stream` call.
const CHUNK: usize = 1 << 14;

/// The frame source and monitor behind the register port (the [`SimBar`]'s fabric).
pub struct NicFabric {
    ports: CorePorts,
    queue: VecDeque<SimFrame>,
    /// Next beat of the front frame.
    beat: usize,
    /// Idle clocks still to insert before the next beat.
    gap_left: u64,
    /// Idle clocks after every frame.
    pub gap: u64,
    now: u64,
    pub stats: FeedStats,
    /// `(epoch, key)` of every sketched packet since the last `take_sketched`, if recording.
    sketched: Option<Vec<(u32, u128)>>,
    /// The card-to-host channel's host buffer.
    pub c2h: C2hBuffer,
    /// `c2h_tready` as driven for the current clock.
    c2h_ready: bool,
    /// The record ring's host memory.
    pub ring: HostRing,
    /// `ring_tready` as driven for the current clock.
    ring_ready: bool,
    /// Clocks of the rows being built whose `ring_tready` is high (each may bring a word).
    ring_promised: u64,
    /// The board's DMA engine at the end of both channels instead of the ideal buffers
    /// ([`SimNic::attach_xdma`]).
    pub xdma: Option<XdmaModel<HeapDma>>,
}

impl NicFabric {
    fn new(m: &mut Model) -> Self {
        let p = |n: &str| m.port(n);
        let ports = CorePorts {
            tdata: p("tdata"),
            tkeep: p("tkeep"),
            tlast: p("tlast"),
            tuser: p("tuser"),
            tvalid: p("tvalid"),
            now: p("now"),
            tready: p("tready"),
            mon_valid: p("mon_valid"),
            mon_key: p("mon_key"),
            mon_epoch: p("mon_epoch"),
            c2h_tready: p("c2h_tready"),
            c2h_tvalid: p("c2h_tvalid"),
            c2h_tlast: p("c2h_tlast"),
            c2h_tkeep: p("c2h_tkeep"),
            c2h_tdata: p("c2h_tdata"),
            ring_tready: p("ring_tready"),
            ring_tvalid: p("ring_tvalid"),
            ring_tdata: p("ring_tdata"),
        };
        for q in [ports.tdata, ports.tkeep, ports.tlast, ports.tuser, ports.tvalid, ports.now] {
            m.set(q, 0);
        }
        m.set(ports.c2h_tready, 1);
        m.set(ports.ring_tready, 1);
        NicFabric {
            ports,
            queue: VecDeque::new(),
            beat: 0,
            gap_left: 0,
            gap: 0,
            now: 0,
            stats: FeedStats::default(),
            sketched: Some(Vec::new()),
            c2h: C2hBuffer { every: 1, ..Default::default() },
            c2h_ready: true,
            ring: HostRing { words: VecDeque::new(), capacity: RING_WORDS_DEFAULT, taken: 0 },
            ring_ready: true,
            ring_promised: 0,
            xdma: None,
        }
    }

    /// True while frames or a gap are still to be driven.
    fn busy(&self) -> bool {
        !self.queue.is_empty() || self.gap_left > 0
    }

    /// The input row of the next clock: `(row, a frame ended in it)`.
    fn next_row(&mut self) -> ([u32; IN_ROW], bool) {
        let now = |n: u64| [n as u32, (n >> 32) as u32];
        if self.gap_left > 0 || self.queue.is_empty() {
            if self.gap_left > 0 {
                self.gap_left -= 1;
                self.stats.busy_clocks += 1;
            }
            let [lo, hi] = now(self.now);
            return ([0, 0, 0, 0, 0, 0, lo, hi, 0, 0], false);
        }
        let f = self.queue.front().expect("a frame is queued");
        if self.beat == 0 {
            self.now = f.ts_ns;
        }
        let nb = f.beats();
        let (lo, hi) = (8 * self.beat, (8 * self.beat + 8).min(f.data.len()));
        let mut word = [0u8; 8];
        word[..hi - lo].copy_from_slice(&f.data[lo..hi]);
        let d = u64::from_le_bytes(word);
        let last = self.beat + 1 == nb;
        let keep = if last { (1u32 << (hi - lo)) - 1 } else { 0xFF };
        let [n0, n1] = now(self.now);
        let row = [d as u32, (d >> 32) as u32, keep, last as u32, (last && f.tuser) as u32, 1, n0, n1, 0, 0];
        self.stats.beats += 1;
        self.stats.busy_clocks += 1;
        if last {
            self.stats.frames += 1;
            self.stats.bytes += f.data.len() as u64;
            self.queue.pop_front();
            self.beat = 0;
            self.gap_left = self.gap;
        } else {
            self.beat += 1;
        }
        (row, last)
    }

    fn drive(&self, m: &mut Model, row: &[u32; IN_ROW]) {
        let p = &self.ports;
        m.set(p.tdata, row[0] as u128 | (row[1] as u128) << 32);
        m.set(p.tkeep, row[2] as u128);
        m.set(p.tlast, row[3] as u128);
        m.set(p.tuser, row[4] as u128);
        m.set(p.tvalid, row[5] as u128);
        m.set(p.now, row[6] as u128 | (row[7] as u128) << 32);
        m.set(p.c2h_tready, row[8] as u128);
        m.set(p.ring_tready, row[9] as u128);
    }

    /// The row of the next clock with the channels' `tready` for that clock (the ring's
    /// counts on a word for every row it was ready in, until the rows have run).
    fn next_row_c2h(&mut self) -> ([u32; IN_ROW], bool) {
        let (mut row, last) = self.next_row();
        if let Some(x) = &self.xdma {
            // One row at a time: the engine's `tready` of this clock.
            (row[8], row[9]) = (x.ready(0) as u32, x.ready(1) as u32);
            return (row, last);
        }
        row[8] = self.c2h.next_ready() as u32;
        let ring = self.ring.room(self.ring_promised);
        row[9] = ring as u32;
        self.ring_promised += ring as u64;
        (row, last)
    }

    /// Records one clock's outputs: `tready`, `mon_valid`, `mon_epoch`, `mon_key` words, the
    /// channel's `tvalid`, `tlast` and `tdata` words (taken if `c2h_ready` was driven).
    fn observe(&mut self, o: &[u32]) {
        let beat = if o[7] == 1 { beat_words(o[9], &o[10..18]) } else { Vec::new() };
        let ring = o[19] as u64 | (o[20] as u64) << 32;
        if let Some(x) = &mut self.xdma {
            if o[7] == 1 && self.c2h_ready {
                let n = beat.len();
                for (k, &w) in beat.iter().enumerate() {
                    x.push(0, w, o[8] == 1 && k + 1 == n).expect("the engine was ready this clock");
                }
            }
            if o[18] == 1 && self.ring_ready {
                x.push(1, ring, false).expect("the engine was ready this clock");
            }
            x.step();
        } else {
            self.c2h.take(o[7] == 1, o[8] == 1, &beat, self.c2h_ready);
            if o[18] == 1 && self.ring_ready {
                self.ring.words.push_back(ring);
            }
        }
        if o[0] != 1 {
            self.stats.tready_low += 1;
        }
        if o[1] == 1 {
            self.stats.sketched += 1;
            if let Some(v) = &mut self.sketched {
                let key = o[3..7].iter().rev().fold(0u128, |a, &w| a << 32 | w as u128);
                v.push((o[2], key));
            }
        }
    }

    fn sample(&mut self, m: &mut Model) {
        let p = self.ports;
        let mut o = [0u32; OUT_ROW];
        (o[0], o[1]) = (m.get(p.tready) as u32, m.get(p.mon_valid) as u32);
        o[7] = m.get(p.c2h_tvalid) as u32;
        if o[7] == 1 {
            o[8] = m.get(p.c2h_tlast) as u32;
            o[9] = m.get(p.c2h_tkeep) as u32;
            o[10..18].copy_from_slice(m.get_words(p.c2h_tdata));
        }
        o[18] = m.get(p.ring_tvalid) as u32;
        if o[18] == 1 {
            let d = m.get(p.ring_tdata);
            (o[19], o[20]) = (d as u32, (d >> 32) as u32);
        }
        if o[1] == 1 {
            o[2] = m.get(p.mon_epoch) as u32;
            let k = m.get(p.mon_key);
            for (i, w) in o[3..7].iter_mut().enumerate() {
                *w = (k >> (32 * i)) as u32;
            }
        }
        self.observe(&o);
    }

    /// Runs clocks through `Model::stream` until `stop` says so (checked after each row
    /// with the number of frames that ended so far) or `max` clocks ran; returns the clocks.
    fn stream(&mut self, m: &mut Model, max: u64, mut stop: impl FnMut(&Self, u64) -> bool) -> u64 {
        let p = self.ports;
        let inputs = [p.tdata, p.tkeep, p.tlast, p.tuser, p.tvalid, p.now, p.c2h_tready, p.ring_tready];
        let outputs = [
            p.tready,
            p.mon_valid,
            p.mon_epoch,
            p.mon_key,
            p.c2h_tvalid,
            p.c2h_tlast,
            p.c2h_tkeep,
            p.c2h_tdata,
            p.ring_tvalid,
            p.ring_tdata,
        ];
        let (mut ran, mut ended) = (0u64, 0u64);
        let mut rows = Vec::with_capacity(CHUNK * IN_ROW);
        // With the DMA engine attached, its `tready` is known one clock at a time.
        let chunk = if self.xdma.is_some() { 1 } else { CHUNK };
        while ran < max && !stop(self, ended) {
            rows.clear();
            self.ring_promised = 0;
            let mut n = 0;
            while n < chunk && ran + (n as u64) < max {
                let (row, last) = self.next_row_c2h();
                rows.extend_from_slice(&row);
                n += 1;
                ended += last as u64;
                if stop(self, ended) {
                    break;
                }
            }
            // The outputs of the current clock (before its edge), under row 0's `tready`.
            self.c2h_ready = rows[8] == 1;
            self.ring_ready = rows[9] == 1;
            self.sample(m);
            let out = m.stream(&inputs, &rows, &outputs);
            // Row r's outputs are the clock after row r (whose `tready` is row r + 1's); the
            // last one is the new current clock, sampled by whatever runs next.
            for (r, o) in out.chunks(OUT_ROW).take(n - 1).enumerate() {
                self.c2h_ready = rows[(r + 1) * IN_ROW + 8] == 1;
                self.ring_ready = rows[(r + 1) * IN_ROW + 9] == 1;
                self.observe(o);
            }
            ran += n as u64;
        }
        // Leave the inputs idle (the last row may have been a beat), the channels ready (the
        // ring if it has room).
        let [lo, hi] = [self.now as u32, (self.now >> 32) as u32];
        self.ring_promised = 0;
        let (c2h, ring) = match &self.xdma {
            Some(x) => (x.ready(0) as u32, x.ready(1) as u32),
            None => (1, self.ring.room(0) as u32),
        };
        self.drive(m, &[0, 0, 0, 0, 0, 0, lo, hi, c2h, ring]);
        ran
    }
}

impl Fabric for NicFabric {
    fn clock(&mut self, m: &mut Model, _cycle: u64) {
        self.ring_promised = 0;
        let (row, _) = self.next_row_c2h();
        self.c2h_ready = row[8] == 1;
        self.ring_ready = row[9] == 1;
        self.sample(m);
        self.drive(m, &row);
    }
}

/// The simulated NIC (see the module docs).
pub struct SimNic {
    bar: SimBar<NicFabric>,
    map: RegMap,
}

impl SimNic {
    /// The board's core (`CoreNic`: SketchINT FPGA tower, NIC SuMax, default register map), built or
    /// reused from `target/verilator/`, reset, with the sketch RAMs at 0 (power-up).
    pub fn new() -> Result<Self, String> {
        let map = RegMap::nic_default();
        let verilog = smartnic_hdl::core_top::nic_verilog()?;
        let model = Model::of_verilog("core", &verilog)?;
        let bar = SimBar::new(model, PORT_PREFIX, map.layout.bar_size as u64, NicFabric::new);
        Ok(SimNic { bar, map })
    }

    /// The register map the core was generated from.
    pub fn map(&self) -> &RegMap {
        &self.map
    }

    /// The AXI4-Lite back end (bus statistics, master stalls, the fabric).
    pub fn bar(&mut self) -> &mut SimBar<NicFabric> {
        &mut self.bar
    }

    /// The Verilator model.
    pub fn model(&mut self) -> &mut Model {
        self.bar.model()
    }

    /// Clocks run since the model was created.
    pub fn cycles(&mut self) -> u64 {
        self.bar.model().cycles()
    }

    /// Idle clocks after every frame from now on (0 = back to back).
    pub fn set_gap(&mut self, clocks: u64) {
        self.bar.fabric.gap = clocks;
    }

    /// Source and monitor counters.
    pub fn stats(&self) -> FeedStats {
        self.bar.fabric.stats
    }

    /// Frames queued and not yet completely driven.
    pub fn queued(&self) -> usize {
        self.bar.fabric.queue.len()
    }

    /// Queues frames without running the clock (they are fed by the next clocks, including
    /// those of register transactions).
    pub fn queue(&mut self, frames: impl IntoIterator<Item = SimFrame>) {
        self.bar.fabric.queue.extend(frames);
    }

    /// Queues up to `n` frames `(ts_ns, bytes)` from `frames` and runs the clock until all
    /// queued frames (these and earlier ones) are driven; returns how many were taken.
    pub fn replay<B: AsRef<[u8]>>(&mut self, frames: impl IntoIterator<Item = (u64, B)>, n: usize) -> usize {
        let mut k = 0;
        for (ts, b) in frames.into_iter().take(n) {
            self.queue([SimFrame::new(ts, b.as_ref())]);
            k += 1;
        }
        self.run_frames(u64::MAX);
        k
    }

    /// Runs the clock until `n` more frames were driven or the queue (and a gap) ran out;
    /// returns the frames driven.
    pub fn run_frames(&mut self, n: u64) -> u64 {
        let before = self.bar.fabric.stats.frames;
        let model = self.bar.model_and_fabric();
        model.1.stream(model.0, u64::MAX, |f, ended| ended >= n || !f.busy());
        self.bar.fabric.stats.frames - before
    }

    /// Runs `clocks` clocks (frames keep flowing if queued).
    pub fn run(&mut self, clocks: u64) {
        let (m, f) = self.bar.model_and_fabric();
        f.stream(m, clocks, |_, _| false);
    }

    /// Drives every queued frame, then runs until the sketch pipeline is idle.
    pub fn drain(&mut self) {
        self.run_frames(u64::MAX);
        let idle = self.bar.model().port("sketch_idle");
        for _ in 0..64 {
            self.run(1);
            if self.bar.model().get(idle) == 1 {
                // The descriptor of the last frame may still be in the parser: run past it.
                self.run(8);
                if self.bar.model().get(idle) == 1 {
                    return;
                }
            }
        }
        panic!("the sketch pipeline did not go idle");
    }

    /// The `(epoch, key)` of every packet that entered the sketch since the last call, in
    /// order (`key` in the contract's byte order, `FlowKey` bytes big-endian in a u128).
    pub fn take_sketched(&mut self) -> Vec<(u32, u128)> {
        self.bar.fabric.sketched.replace(Vec::new()).unwrap_or_default()
    }

    /// Stops (`false`) or restarts (`true`) recording sketched packets (the counters in
    /// [`SimNic::stats`] always run).
    pub fn record_sketched(&mut self, on: bool) {
        self.bar.fabric.sketched = on.then(Vec::new);
    }
}

impl SimNic {
    /// The channel takes a beat on every `n`th clock only (1 = every clock, the default).
    pub fn set_c2h_every(&mut self, n: u64) {
        self.bar.fabric.c2h.every = n.max(1);
    }
}

/// Clocks the simulated channel runs per look at the host buffer.
const C2H_STEP: u64 = 4096;

impl SimNic {
    /// Puts the board's DMA engine (the behavioural XDMA model, its descriptors and buffers
    /// in `mem`) at the end of both card-to-host channels instead of the ideal host buffers;
    /// the NIC then has no [`C2hChannel`] or [`RecordRing`] of its own: the driver's
    /// `XdmaC2h` reaches the engine's registers ([`crate::simnic_dma`]). The clock then runs
    /// one row per call into the model, as the engine's `tready` is known a clock at a time.
    pub fn attach_xdma(&mut self, mem: HeapDma) {
        let timing = Timing { clocks_per_access: 0, ..Timing::default() };
        self.bar.fabric.xdma = Some(XdmaModel::new(mem, timing));
    }

    /// The attached DMA engine.
    pub fn xdma(&mut self) -> Option<&mut XdmaModel<HeapDma>> {
        self.bar.fabric.xdma.as_mut()
    }

    /// The host ring holds `words` words from now on (at least 1): a small ring that is not
    /// read makes the NIC's record buffer fill and drop.
    pub fn set_ring_capacity(&mut self, words: usize) {
        self.bar.fabric.ring.capacity = words.max(1);
    }

    /// The record ring's host memory.
    pub fn ring_state(&self) -> &HostRing {
        &self.bar.fabric.ring
    }
}

impl RecordRing for SimNic {
    fn taken(&self) -> u32 {
        self.bar.fabric.ring.taken
    }

    /// Runs the clock (frames keep flowing) until `words` words have arrived.
    fn take(&mut self, words: u32, timeout: Duration) -> Result<Vec<u64>, AccessError> {
        let start = Instant::now();
        while self.bar.fabric.ring.words.len() < words as usize {
            if start.elapsed() > timeout {
                let arrived = self.bar.fabric.ring.words.len();
                return Err(AccessError::RingTimeout { waited: start.elapsed(), words, arrived });
            }
            self.run(C2H_STEP);
        }
        let r = &mut self.bar.fabric.ring;
        r.taken = r.taken.wrapping_add(words);
        Ok(r.words.drain(..words as usize).collect())
    }
}

impl C2hChannel for SimNic {
    fn arm(&mut self, words: usize) -> Result<(), AccessError> {
        let c = &mut self.bar.fabric.c2h;
        c.words = Vec::with_capacity(words);
        c.streams = 0;
        Ok(())
    }

    /// Runs the clock (frames keep flowing) until a trailer has arrived.
    fn wait(&mut self, timeout: Duration) -> Result<Vec<u64>, AccessError> {
        let start = Instant::now();
        while self.bar.fabric.c2h.streams == 0 {
            if start.elapsed() > timeout {
                let words = self.bar.fabric.c2h.words.len();
                return Err(AccessError::StreamTimeout { waited: start.elapsed(), words });
            }
            self.run(C2H_STEP);
        }
        Ok(std::mem::take(&mut self.bar.fabric.c2h.words))
    }
}

impl RegisterAccess for SimNic {
    fn bar_size(&self) -> u64 {
        self.bar.bar_size()
    }
    fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
        self.bar.read32(offset)
    }
    fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
        self.bar.write32(offset, value)
    }
    fn c2h(&mut self) -> Option<&mut dyn C2hChannel> {
        match self.bar.fabric.xdma {
            None => Some(self),
            Some(_) => None,
        }
    }
    fn ring(&mut self) -> Option<&mut dyn RecordRing> {
        match self.bar.fabric.xdma {
            None => Some(self),
            Some(_) => None,
        }
    }
}

/// One captured frame as the NIC receives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NicFrame {
    pub ts_ns: u64,
    /// The frame as an Ethernet MAC delivers it ([`to_ethernet`]).
    pub data: Vec<u8>,
    /// Whether the software parser calls the captured frame an IP packet (what the
    /// sketches count).
    pub ip: bool,
}

/// Every frame of a pcap or pcapng file, as the NIC receives it ([`to_ethernet`]), with
/// the software parser's verdict on the frame as captured.
pub fn read_trace(path: &Path) -> Result<Vec<NicFrame>, String> {
    let mut r = smartnic::trace::capture::CaptureReader::open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    while let Some(f) = r.next_frame().map_err(|e| format!("{}: {e}", path.display()))? {
        let ip = matches!(parse_frame(f.linktype, f.data), FrameClass::Ip { .. });
        out.push(NicFrame { ts_ns: f.ts_ns, data: to_ethernet(f.linktype, f.data), ip });
    }
    Ok(out)
}

/// Every frame of a pcap or pcapng file as `(ts_ns, bytes)`, as the NIC receives it
/// ([`to_ethernet`]).
pub fn read_capture(path: &Path) -> Result<Vec<(u64, Vec<u8>)>, String> {
    Ok(read_trace(path)?.into_iter().map(|f| (f.ts_ns, f.data)).collect())
}

/// Largest IEEE 802.3 length field; larger type/length values are EtherTypes.
const MAX_8023_LENGTH: usize = 1500;

/// A captured frame of link type `linktype` as an Ethernet MAC would deliver it to the NIC.
///
/// Why: the NIC only receives Ethernet, while captures also come as raw IP. Ethernet frames
/// are taken as captured. Raw IP (LINKTYPE 101 by its version nibble, 228 IPv4, 229 IPv6)
/// gets the header a capture tool's conversion writes: zero MAC addresses and the IP
/// EtherType, so the NIC parses the same IP header the software does. Anything else (other
/// link types, raw IP of another version) is what the software calls not IP; it goes in as
/// an IEEE 802.3 frame (a length field instead of an EtherType) carrying the captured bytes,
/// which the NIC counts as not IP too.
pub fn to_ethernet(linktype: u32, data: &[u8]) -> Vec<u8> {
    let ethertype = match (linktype, data.first().map(|b| b >> 4)) {
        // An empty record stays empty (malformed, whatever its link type).
        (LINKTYPE_ETHERNET, _) | (_, None) => return data.to_vec(),
        (LINKTYPE_IPV4, _) | (LINKTYPE_RAW, Some(4)) => ETHERTYPE_IPV4,
        (LINKTYPE_IPV6, _) | (LINKTYPE_RAW, Some(6)) => ETHERTYPE_IPV6,
        _ => data.len().min(MAX_8023_LENGTH) as u16,
    };
    let mut f = vec![0u8; 12];
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(data);
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(c: &FrameClass) -> u8 {
        match c {
            FrameClass::Ip { .. } => 1,
            FrameClass::NonIp => 2,
            FrameClass::Malformed(_) => 3,
        }
    }

    #[test]
    fn raw_ip_gets_the_ip_ethertype_and_other_links_stay_not_ip() {
        let v4 = [0x45u8; 20];
        let v6 = [0x60u8; 40];
        for (lt, data, ip_type) in [
            (LINKTYPE_RAW, &v4[..], Some(ETHERTYPE_IPV4)),
            (LINKTYPE_RAW, &v6[..], Some(ETHERTYPE_IPV6)),
            (LINKTYPE_IPV4, &v4[..], Some(ETHERTYPE_IPV4)),
            (LINKTYPE_IPV6, &v6[..], Some(ETHERTYPE_IPV6)),
            (LINKTYPE_RAW, &[0x25u8; 30][..], None),
            (113, &v4[..], None),
        ] {
            let f = to_ethernet(lt, data);
            assert_eq!(&f[14..], data);
            let ty = u16::from_be_bytes([f[12], f[13]]);
            match ip_type {
                Some(t) => assert_eq!(ty, t),
                None => assert!(ty as usize == data.len() && ty as usize <= MAX_8023_LENGTH),
            }
            // The software parser gives the NIC's frame the captured frame's class.
            let (a, b) = (parse_frame(lt, data), parse_frame(LINKTYPE_ETHERNET, &f));
            assert_eq!(class(&a), class(&b), "{lt} {data:?}");
        }
        // An empty record stays empty: malformed on both sides, whatever the link type.
        for lt in [LINKTYPE_ETHERNET, LINKTYPE_RAW, LINKTYPE_IPV4, LINKTYPE_IPV6, 113] {
            assert!(to_ethernet(lt, &[]).is_empty(), "{lt}");
            assert!(matches!(parse_frame(lt, &[]), FrameClass::Malformed(_)), "{lt}");
        }
        let eth = [7u8; 60];
        assert_eq!(to_ethernet(LINKTYPE_ETHERNET, &eth), eth);
    }
}
