//! Shared harness of the whole-core Verilator tests (`core.rs`, `core_adversarial.rs`).
//!
//! - The software's verdict on each frame ([`classify`], [`Expect`]) and the statistics
//!   counters it predicts.
//! - [`CoreRun`]: the simulated NIC (`SimNic`, block `core`) fed from a frame source back to
//!   back, with the driver's `read_snapshot` (swap, consistent idle-bank readout, clear)
//!   every [`Plan::every`] frames while frames keep arriving: back to back for
//!   [`Plan::swap_burst`] clocks after the SWAP write (so packets of both epochs are in the
//!   pipelines around the swap), then one frame per [`Plan::readout_gap`] idle clocks for the
//!   rest of the readout and the clear (the queue never runs dry while a readout runs, which
//!   [`CoreRun::feed`] asserts). Every snapshot is checked by [`check_snapshot`], counter by
//!   counter and cell by cell, against a software `Tower` and `SuMax` fed exactly the packets
//!   the core tagged with that epoch (the monitor's `(epoch, key)` list), SuMax with each
//!   frame's timestamp and INT delay. [`CoreRun::finish`] reads the last epoch and checks the
//!   whole run: every IP frame sketched once and in order, per-epoch counts adding up to the
//!   packets sent, statistics counters, `tready`, one clock per beat back to back.
#![allow(dead_code)]

use smartnic::lab::{LabConfig, Sink};
use smartnic::sketch::latency_tower::LatencyTower;
use smartnic::sketch::per_switch::{first_out_of_order, PerSwitch, PerSwitchConfig as ModelConfig};
use smartnic::sketch::snapshot::{from_section, per_switch_sections, to_section};
use smartnic::sketch::{AnySketch, SuMax, Tower};
use smartnic::trace::frame::{parse_frame, FrameClass, LINKTYPE_ETHERNET};
use smartnic::trace::gen::{self, GenConfig, ShimConfig};
use smartnic::trace::Packet;
use smartnic_contract::geometry::{marker, sumax_cell, InsertMode, SuMaxGeometry, TowerGeometry};
use smartnic_contract::key::FlowKey;
use smartnic_contract::regs::{epoch as epoch_regs, stats, stream as stream_regs, tower as tower_regs};
use smartnic_contract::wire::record::{parse_stream, InflatedRecord, Record};
use smartnic_driver::access::{AccessError, RegisterAccess};
use smartnic_driver::access::{C2hChannel, RecordRing};
use smartnic_driver::blocks::DeviceMap;
use smartnic_driver::blocks::PerSwitchConfig;
use smartnic_driver::config::write_per_switch_config;
use smartnic_driver::readout::{
    collect_ring, min_reads, read_snapshot, start_ring, ReadoutConfig, ReadoutPath, RecordsVia, StreamStats,
};
use smartnic_driver::snapshot::PerSwitchSection;
use smartnic_driver::snapshot::Snapshot;
use smartnic_hdl::hash::key_to_u128;
use smartnic_sim_tb::simnic::{read_capture, SimFrame, SimNic};
use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

/// The key as the monitor reports it back as a `FlowKey`.
pub fn key_of(k: u128) -> FlowKey {
    let b = k.to_be_bytes();
    FlowKey(b[3..].try_into().unwrap())
}

/// Software verdict on a frame: class (1 IP, 2 non-IP, 3 malformed), key and INT delay
/// (sum of the hop latencies, ns).
pub fn classify(f: &SimFrame) -> (u8, u128, u64) {
    match packet_of(f) {
        Ok(p) => (1, key_to_u128(p.key.as_bytes()), p.delay_ns()),
        Err(class) => (class, 0, 0),
    }
}

/// The IP packet a frame is to the software (its key and INT hops), or its class (2 non-IP,
/// 3 malformed).
pub fn packet_of(f: &SimFrame) -> Result<Packet, u8> {
    if f.tuser {
        return Err(3);
    }
    match parse_frame(LINKTYPE_ETHERNET, &f.data) {
        FrameClass::Ip { key, hops } => {
            Ok(Packet { ts_ns: f.ts_ns, wire_len: f.data.len() as u32, key, hops: hops.into() })
        }
        FrameClass::NonIp => Err(2),
        FrameClass::Malformed(_) => Err(3),
    }
}

/// The five statistics counters (frames, sketched, bytes, non_ip, malformed).
pub fn read_stats(nic: &mut SimNic, dev: &DeviceMap) -> [u64; 5] {
    let base = dev.stats.expect("the core has a statistics block");
    [stats::FRAMES, stats::SKETCHED, stats::BYTES, stats::NON_IP, stats::MALFORMED]
        .map(|off| nic.read64(base + off).unwrap())
}

/// What the software says the frames fed so far must produce.
#[derive(Default)]
pub struct Expect {
    pub frames: u64,
    pub bytes: u64,
    pub classes: [u64; 4],
    /// Keys of the IP frames in order.
    pub keys: Vec<u128>,
    /// `(ts_ns, delay_ns)` of the IP frames in order (the core's `now` at the first beat and
    /// the INT delay).
    pub times: Vec<(u64, u64)>,
    /// The IP frames as packets (key and hops), in order.
    pub packets: Vec<Packet>,
}

impl Expect {
    pub fn add(&mut self, f: &SimFrame) {
        self.frames += 1;
        self.bytes += f.data.len() as u64;
        match packet_of(f) {
            Ok(p) => {
                self.classes[1] += 1;
                self.keys.push(key_to_u128(p.key.as_bytes()));
                self.times.push((f.ts_ns, p.delay_ns()));
                self.packets.push(p);
            }
            Err(class) => self.classes[class as usize] += 1,
        }
    }
    pub fn counters(&self) -> [u64; 5] {
        [self.frames, self.classes[1], self.bytes, self.classes[2], self.classes[3]]
    }
}

/// A `smartnic::trace::gen` trace of `packets` IP packets (Zipf 1.1 over `packets / 10`
/// flows, shim 1..16 hops, 30 % IPv6, 30 % VLAN, 5 % ARP frames in between), as frames.
pub fn generated_trace(seed: u64, packets: u64) -> Vec<SimFrame> {
    let cfg = GenConfig {
        seed,
        packets,
        flows: packets / 10,
        skew: 1.1,
        ipv6: 0.3,
        vlan: 0.3,
        non_ip: 0.05,
        shim: Some(ShimConfig { min_hops: 1, max_hops: 16, ..Default::default() }),
        ..Default::default()
    };
    let dir =
        std::env::temp_dir().join(format!("smartnic-core-test-{}-{seed}-{packets}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pcap = dir.join("trace.pcap");
    gen::generate_files(&cfg, &pcap, &dir.join("truth.json"), None).unwrap();
    let frames = read_capture(&pcap).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    frames.into_iter().map(|(ts, data)| SimFrame::new(ts, data)).collect()
}

/// Every frame the lab's hosts received, in delivery order, cut to its headers (padded to
/// the 60-byte minimum: the core reads no payload).
struct Delivered(Vec<SimFrame>);

impl Sink for Delivered {
    fn deliver(&mut self, _: usize, time_ns: u64, headers: &[u8], _: u32) -> std::io::Result<()> {
        let mut h = headers.to_vec();
        h.resize(h.len().max(60), 0);
        self.0.push(SimFrame::new(time_ns, h));
        Ok(())
    }
}

/// The network lab's traffic as one NIC's input: the demo's k = 4 fat-tree (inter-pod paths
/// of 5 switches, a 1 Gb/s uplink that congests) at half load, `packets` sent, workload seed
/// 14.
pub fn lab_frames(packets: u64) -> Vec<SimFrame> {
    let t = smartnic::demo::topology().unwrap();
    let mut cfg = LabConfig::default();
    cfg.workload.max_packets = Some(packets);
    cfg.workload.load = 0.5;
    cfg.workload.seed = 14;
    let mut sink = Delivered(Vec::new());
    smartnic::lab::run(&t, &cfg, &mut sink).unwrap();
    sink.0
}

/// The network lab's traffic ([`lab_frames`]) through the core (5-hop inter-pod paths,
/// queues building at the congested uplink), back to back, `sent` packets sent and a
/// snapshot about every `every` frames, two epochs in CM then ACU: every epoch's flow
/// sketches and per-switch half equal the models, and the record stream carries the
/// inflated-latency events (less the counted drops). Returns the packets delivered and the
/// inflated hops recorded.
pub fn lab_capture(sent: u64, every: u64) -> (u64, usize) {
    let frames = lab_frames(sent);
    let five = frames.iter().filter(|f| packet_of(f).is_ok_and(|p| p.hops.len() == 5)).count();
    let mut src = frames.into_iter();
    let mut run = CoreRun::new(InsertMode::Cm);
    let plan = Plan { every, swap_burst: 2_000, readout_gap: 600, snapshots: Some(2) };
    run.feed(&mut src, plan);
    run.switch_mode(InsertMode::Acu, plan);
    run.feed(&mut src, Plan { snapshots: None, ..plan });
    let s = run.finish(&format!("lab {sent}"), plan);
    assert!(five as u64 > s.packets / 2, "{five} of {} packets crossed 5 switches", s.packets);
    let inflated: usize = run.checks.iter().map(|c| c.records.len()).sum();
    assert!(!run.drained.is_empty(), "the readouts drained no inflated-latency record");
    // Every epoch of the plan keeps heavy flows; the epoch that drains before the mode
    // switch holds only what arrived during one readout (under 1k packets when streamed).
    let full: Vec<_> = run.checks.iter().filter(|c| c.packets >= 10_000).collect();
    assert!(full.len() >= 3, "{} epochs of 10k packets or more", full.len());
    assert!(full.iter().all(|c| c.table_entries > 0), "every full epoch keeps heavy flows");
    assert!(run.checks.iter().filter(|c| c.mode == InsertMode::Acu && c.packets > 0).count() >= 1);
    eprintln!("lab {sent}: {} packets, {five} over 5 switches, {inflated} inflated hops", s.packets);
    (s.packets, inflated)
}

/// What one snapshot check compared and found.
#[derive(Clone, Debug)]
pub struct EpochCheck {
    pub epoch: u32,
    pub mode: InsertMode,
    /// IDLE_PACKETS = the packets the monitor saw tagged with this epoch.
    pub packets: u64,
    /// Tower counters + SuMax cells compared.
    pub compared: u64,
    /// Tower counters at their overflow marker, per array.
    pub tower_markers: Vec<u64>,
    /// SuMax cells at their marker over all arrays: `[size, delay 0, delay 1, ...]`.
    pub sumax_markers: Vec<u64>,
    /// The snapshot's sketches (equal to the software's).
    pub tower: Tower,
    pub sumax: SuMax,
    /// The per-switch half: hops inserted, latency buckets compared, table entries, and
    /// the model's inflated-latency records of the epoch (in order).
    pub hops: u64,
    pub buckets: u64,
    pub table_entries: u64,
    pub table_misses: u64,
    pub records: Vec<InflatedRecord>,
    /// The epoch's latency tower (equal to the snapshot's) and its buckets at their
    /// markers per array: `(count, sum)`.
    pub latency: LatencyTower,
    pub latency_markers: Vec<(u64, u64)>,
    /// Clocks, register reads and frames driven during the readout.
    pub readout_clocks: u64,
    pub reads: u64,
    pub readout_frames: u64,
}

/// Checks one snapshot against the software sketches of its epoch's packets (indices into
/// the sketched order = the IP frames of `expect`, checked here up to the last one used):
/// IDLE_PACKETS, every tower counter and every SuMax cell (a mismatch lists up to 8 as
/// `(array, index, core, software)`), the sections byte for byte.
pub fn check_snapshot(
    snap: &Snapshot,
    packets: &[usize],
    order: &[u128],
    expect: &Expect,
    mode: InsertMode,
    geometry: &TowerGeometry,
    table_threshold: u32,
) -> EpochCheck {
    let e = snap.epoch;
    assert_eq!(snap.packets, packets.len() as u64, "epoch {e}: IDLE_PACKETS");
    if let Some(&last) = packets.last() {
        assert!(order[..=last] == expect.keys[..=last], "sketched keys = the software's IP keys, in order");
    }
    let mut t = Tower::new(geometry.clone(), mode).unwrap();
    let mut sm = SuMax::new(SuMaxGeometry::nic_default()).unwrap();
    let mut ps = PerSwitch::new(ModelConfig { mode, table_threshold, ..ModelConfig::nic_default() }).unwrap();
    for &i in packets {
        let k = key_of(order[i]);
        t.insert(&k);
        let (ts, delay) = expect.times[i];
        sm.insert(&k, ts, delay);
        ps.observe(e as u32, &expect.packets[i], t.query(&k));
    }
    let (buckets, table_entries) = check_per_switch(snap, &ps);
    assert_eq!(snap.sections.len(), 2, "epoch {e}: a tower and a SuMax section");
    let Ok(AnySketch::Tower(got_t)) = from_section(0, &snap.sections[0]) else {
        panic!("epoch {e}: section 0 is not a valid tower section")
    };
    let Ok(AnySketch::SuMax(got_s)) = from_section(1, &snap.sections[1]) else {
        panic!("epoch {e}: section 1 is not a valid SuMax section")
    };
    assert_eq!((got_t.geometry(), got_t.mode()), (geometry, mode), "epoch {e}: tower geometry and mode");
    assert_eq!(got_s.geometry(), sm.geometry(), "epoch {e}: SuMax geometry");

    let mut compared = 0u64;
    let mut bad = Vec::new();
    let mut tower_markers = vec![0u64; geometry.arrays.len()];
    for (a, ag) in geometry.arrays.iter().enumerate() {
        for i in 0..ag.depth {
            let (g, w) = (got_t.counter(a, i), t.counter(a, i));
            if g != w {
                bad.push((a, i, g, w));
            }
            tower_markers[a] += (g == ag.marker()) as u64;
        }
        compared += ag.depth as u64;
    }
    assert!(
        bad.is_empty(),
        "epoch {e} ({mode:?}): {} tower counters differ (array, index, core, software), first: {:?}",
        bad.len(),
        &bad[..bad.len().min(8)]
    );
    let g = sm.geometry();
    let cells = 3 + g.delay_cells as usize;
    // The sum cells' markers (size, then the delay cells); the time cells have none.
    let marks: Vec<Option<u32>> = (0..cells)
        .map(|c| match c {
            sumax_cell::SIZE => Some(marker(g.size_width)),
            c if c <= g.delay_cells as usize => Some(marker(g.delay_width)),
            _ => None,
        })
        .collect();
    let mut sumax_markers = vec![0u64; cells];
    let mut bad = Vec::new();
    for a in 0..g.hashes.len() {
        for b in 0..g.depth {
            for (c, (m, n)) in marks.iter().zip(sumax_markers.iter_mut()).enumerate() {
                let (v, w) = (got_s.cell(a, b, c), sm.cell(a, b, c));
                if v != w {
                    bad.push((a, b, c, v, w));
                }
                *n += (Some(v) == *m) as u64;
            }
        }
        compared += g.depth as u64 * cells as u64;
    }
    sumax_markers.truncate(1 + g.delay_cells as usize);
    assert!(
        bad.is_empty(),
        "epoch {e}: {} SuMax cells differ (array, bucket, cell, core, software), first: {:?}",
        bad.len(),
        &bad[..bad.len().min(8)]
    );
    // The sections as a whole (metadata included) are the software's.
    let (t_sec, s_sec) =
        (to_section(&AnySketch::Tower(t)).unwrap(), to_section(&AnySketch::SuMax(sm)).unwrap());
    assert!(snap.sections[0] == t_sec && snap.sections[1] == s_sec, "epoch {e}: sections differ");
    // Not a vacuous comparison: the epoch's packets are in the snapshot.
    if !packets.is_empty() {
        assert!(
            (0..3).all(|a| (0..got_s.geometry().depth).any(|b| got_s.cell(a, b, 0) != 0)),
            "epoch {e}: empty SuMax"
        );
        assert!(
            (0..got_t.geometry().arrays[0].depth).any(|i| got_t.counter(0, i) != 0),
            "epoch {e}: empty tower"
        );
    }
    EpochCheck {
        epoch: e as u32,
        mode,
        packets: packets.len() as u64,
        compared,
        tower_markers,
        sumax_markers,
        tower: got_t,
        sumax: got_s,
        hops: ps.stats().hops,
        buckets,
        table_entries,
        table_misses: ps.table.misses(),
        records: ps.records().to_vec(),
        latency_markers: latency_markers(&ps.latency),
        latency: ps.latency,
        readout_clocks: 0,
        reads: 0,
        readout_frames: 0,
    }
}

/// Checks the snapshot's latency tower and key table sections against the model's half
/// of the epoch (every bucket, every slot, the misses, the threshold); returns the buckets
/// compared and the table's entries.
fn check_per_switch(snap: &Snapshot, ps: &PerSwitch) -> (u64, u64) {
    let e = snap.epoch;
    assert_eq!(snap.per_switch.len(), 3, "epoch {e}: latency tower, key table and records sections");
    let want = per_switch_sections(ps, &[]);
    let lt = &ps.latency;
    if snap.per_switch[0] != want[0] {
        let PerSwitchSection::LatencyTower { arrays, .. } = &snap.per_switch[0] else {
            panic!("epoch {e}: per-switch section 0 is not the latency tower")
        };
        let mut bad = Vec::new();
        for (a, raw) in arrays.iter().enumerate() {
            let mut got = lt.clone();
            assert!(got.load_array(a, raw), "epoch {e}: latency array {a} does not load");
            for i in 0..lt.geometry().arrays[a].depth {
                if got.bucket(a, i) != lt.bucket(a, i) {
                    bad.push((a, i, got.bucket(a, i), lt.bucket(a, i)));
                }
            }
        }
        panic!(
            "epoch {e}: {} latency buckets differ (array, bucket, core (count, sum), software), first: {:?}; \
             or the section's geometry/mode differ",
            bad.len(),
            &bad[..bad.len().min(8)]
        );
    }
    if snap.per_switch[1] != want[1] {
        panic!(
            "epoch {e}: key table differs: core {:?}\nsoftware {:?}",
            summary(&snap.per_switch[1]),
            summary(&want[1])
        );
    }
    let buckets = lt.geometry().arrays.iter().map(|a| a.depth as u64).sum();
    (buckets, ps.table.entries().count() as u64)
}

/// Buckets whose count / sum cell sits at its marker, per array.
fn latency_markers(lt: &LatencyTower) -> Vec<(u64, u64)> {
    let g = lt.geometry();
    (0..g.arrays.len())
        .map(|a| {
            let (cm, sm) = (g.arrays[a].count_marker(), g.arrays[a].sum_marker());
            (0..g.arrays[a].depth).fold((0, 0), |(c, s), i| {
                let (count, sum) = lt.bucket(a, i);
                (c + (count == cm) as u64, s + (sum == sm) as u64)
            })
        })
        .collect()
}

/// A key table section's geometry, threshold, misses and the number of differing bytes
/// are what a failure needs, not 50 KB of slots.
fn summary(s: &PerSwitchSection) -> String {
    match s {
        PerSwitchSection::KeyTable { geometry, threshold, misses, ways } => format!(
            "{} ways x {}, threshold {threshold}, misses {misses}, occupied bytes {:?}",
            geometry.ways.len(),
            geometry.depth,
            ways.iter().map(|w| w.iter().filter(|&&b| b != 0).count()).collect::<Vec<_>>()
        ),
        other => format!("{:?}", other.kind()),
    }
}

/// The inflated-latency records of a snapshot's records section.
pub fn drained_records(snap: &Snapshot) -> Vec<InflatedRecord> {
    let Some(PerSwitchSection::Records { stream }) = snap.per_switch.get(2) else {
        panic!("epoch {}: no records section", snap.epoch)
    };
    inflated(stream, &format!("epoch {}", snap.epoch))
}

/// The inflated-latency records of a record stream (`what` names it in a failure).
fn inflated(stream: &[u8], what: &str) -> Vec<InflatedRecord> {
    let (records, err) = parse_stream(stream);
    assert!(err.is_none(), "{what}: damaged record stream: {err:?}");
    records
        .into_iter()
        .map(|r| match r {
            Record::Inflated(r) => r,
            other => panic!("{what}: unexpected record {other:?}"),
        })
        .collect()
}

/// How [`CoreRun::feed`] schedules snapshots.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Frames per epoch to aim for: each back-to-back phase is this minus the frames that
    /// arrived during the previous readout (at least half of it).
    pub every: u64,
    /// Clocks after the driver's SWAP write during which frames stay back to back.
    pub swap_burst: u64,
    /// Idle clocks after each frame for the rest of a readout.
    pub readout_gap: u64,
    /// Snapshots to take before returning (`None`: until the source runs dry).
    pub snapshots: Option<usize>,
}

/// The NIC seen through the driver during a readout: frames back to back until
/// `swap_burst` clocks after the SWAP write, then `gap` idle clocks after each frame.
struct SwapBurst<'a> {
    nic: &'a mut SimNic,
    control: u32,
    swap_burst: u64,
    gap: u64,
    swap_at: Option<u64>,
    /// Offer the simulated NIC's record ring to the driver.
    ring: bool,
}

impl SwapBurst<'_> {
    fn pace(&mut self) {
        if self.swap_at.is_some_and(|s| self.nic.cycles() >= s + self.swap_burst) {
            self.nic.set_gap(self.gap);
        }
    }
}

impl C2hChannel for SwapBurst<'_> {
    fn arm(&mut self, words: usize) -> Result<(), AccessError> {
        self.nic.arm(words)
    }
    /// The stream runs at the readout's pace (the gap after each frame) from its start.
    fn wait(&mut self, timeout: std::time::Duration) -> Result<Vec<u64>, AccessError> {
        self.nic.set_gap(self.gap);
        self.nic.wait(timeout)
    }
}

impl RegisterAccess for SwapBurst<'_> {
    fn bar_size(&self) -> u64 {
        self.nic.bar_size()
    }
    fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
        let v = self.nic.read32(offset);
        self.pace();
        v
    }
    fn c2h(&mut self) -> Option<&mut dyn C2hChannel> {
        Some(self)
    }
    fn ring(&mut self) -> Option<&mut dyn RecordRing> {
        if self.ring {
            Some(self.nic)
        } else {
            None
        }
    }
    fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
        if offset == self.control && value & epoch_regs::CONTROL_SWAP != 0 {
            self.swap_at = Some(self.nic.cycles());
        }
        let r = self.nic.write32(offset, value);
        self.pace();
        r
    }
}

/// Totals of a finished run (printed by [`CoreRun::finish`]).
#[derive(Clone, Debug)]
pub struct Summary {
    pub frames: u64,
    pub packets: u64,
    pub flows: usize,
    pub epochs: usize,
    pub compared: u64,
    /// Back-to-back phases: clocks, beats, frames.
    pub b2b_clocks: u64,
    pub b2b_beats: u64,
    pub b2b_frames: u64,
    pub clocks: u64,
    pub seconds: f64,
}

/// A run of the simulated NIC checked epoch by epoch (see the module docs).
pub struct CoreRun {
    pub nic: SimNic,
    pub dev: DeviceMap,
    pub geometry: TowerGeometry,
    cfg: ReadoutConfig,
    pub expect: Expect,
    /// Keys of the sketched packets in order (the monitor's) and each epoch's indices into it.
    order: Vec<u128>,
    by_epoch: BTreeMap<u32, Vec<usize>>,
    mode: InsertMode,
    mode_of: BTreeMap<u32, InsertMode>,
    pub checks: Vec<EpochCheck>,
    b2b: (u64, u64, u64),
    /// Frames to have queued when a readout starts, so traffic flows until it ends, per
    /// path (registers [0], stream [1]); 0 until that path's first readout under traffic.
    reserve: [u64; 2],
    last_readout_frames: u64,
    source_dry: bool,
    t0: Instant,
    /// The record stream as the readouts drained it, and RECORD_DROPPED at the last one.
    pub drained: Vec<InflatedRecord>,
    pub records_dropped: u32,
    /// TABLE_THRESHOLD of the whole run.
    pub table_threshold: u32,
    /// Which readouts take register reads instead of the readout stream: the second of every
    /// `n` (`Some(1)`: all; `Some(5)`: readouts 1, 6, 11, ..., so a run of seven or more
    /// reads both banks through registers, epoch `e` being bank `e % 2`). By default none
    /// (`None`): the stream is the product's path, and a register readout (725,009 reads,
    /// ~6.3M clocks) costs 37 times a streamed one (~170k clocks, most of them the clear).
    /// The register path under traffic is proven where a test asks for it: `core.rs`'s
    /// `core_epochs` (both banks, CM and ACU) and `core_stream.rs` (the two paths in turn).
    pub register_every: Option<usize>,
    /// The streamed readouts' figures, in order.
    pub streams: Vec<StreamStats>,
    /// The driver takes the records from the record ring (else it pops them over the BAR).
    pub ring: bool,
    /// Ring words the readouts took.
    pub ring_words: u64,
}

impl CoreRun {
    /// The core (built or reused), discovered through the driver, MODE = `mode` before any
    /// traffic.
    pub fn new(mode: InsertMode) -> Self {
        Self::with_table_threshold(mode, PerSwitchConfig::nic_default().table_threshold)
    }

    /// [`CoreRun::new`] with the flow-key table's threshold at `table_threshold` (a low one
    /// fills the table: every way taken, misses counted).
    pub fn with_table_threshold(mode: InsertMode, table_threshold: u32) -> Self {
        let t0 = Instant::now();
        let mut nic = SimNic::new().unwrap_or_else(|e| panic!("{e}"));
        eprintln!("model ready in {:.1} s", t0.elapsed().as_secs_f64());
        let dev = DeviceMap::discover(&mut nic).unwrap();
        let geometry = TowerGeometry::sketchint_fpga();
        assert_eq!(dev.tower.as_ref().unwrap().geometry, geometry);
        assert_eq!(dev.sumax.as_ref().unwrap().geometry, SuMaxGeometry::nic_default());
        let mut run = CoreRun {
            nic,
            dev,
            geometry,
            // The simulated clock only moves while the test drives it, so the poll timeout
            // is the simulator's (minutes of wall time), not a board's 1 s.
            cfg: smartnic::simulator::sim_readout_config(),
            expect: Expect::default(),
            order: Vec::new(),
            by_epoch: BTreeMap::new(),
            mode,
            mode_of: BTreeMap::new(),
            checks: Vec::new(),
            b2b: (0, 0, 0),
            reserve: [0; 2],
            last_readout_frames: 0,
            source_dry: false,
            t0,
            drained: Vec::new(),
            records_dropped: 0,
            table_threshold,
            register_every: None,
            streams: Vec::new(),
            ring: false,
            ring_words: 0,
        };
        run.write_mode(mode);
        run.mode_of.insert(0, mode);
        run
    }

    /// The driver takes the records from the record ring (`on`), turned on now so that
    /// records go to it from the next packet; or pops them over the BAR.
    pub fn use_ring(&mut self, on: bool) {
        if on {
            self.ring = true;
            assert!(start_ring(&mut self.nic, &self.dev).unwrap(), "the core has a record ring");
        } else if self.ring {
            self.ring = false;
            self.stop_ring();
        }
    }

    /// Turns the ring off as a host that stops using it does: ENABLE cleared, the record in
    /// flight finished, and the words the ring got since the last readout taken, so the
    /// records they hold count as drained.
    fn stop_ring(&mut self) {
        let stream = self.dev.stream.expect("the core has the stream block");
        self.nic.write32(stream + stream_regs::RING_CONTROL, 0).unwrap();
        self.nic.run(64);
        let (bytes, n) = collect_ring(&mut self.nic, &self.dev, self.cfg.poll_timeout)
            .unwrap_or_else(|e| panic!("the ring's last words: {e}"));
        self.ring_words += n as u64;
        self.drained.extend(inflated(&bytes, "the ring's last words"));
    }

    fn write_mode(&mut self, mode: InsertMode) {
        let base = self.dev.tower.as_ref().unwrap().base;
        self.nic.write32(base + tower_regs::MODE, mode as u32).unwrap();
        // The per-switch half runs in the flow tower's mode, at the reset thresholds.
        let cfg =
            PerSwitchConfig { mode, table_threshold: self.table_threshold, ..PerSwitchConfig::nic_default() };
        assert_eq!(write_per_switch_config(&mut self.nic, &self.dev, &cfg).unwrap(), cfg);
        self.dev = DeviceMap::discover(&mut self.nic).unwrap();
        assert_eq!(self.dev.tower.as_ref().unwrap().mode, mode, "MODE reads back");
        self.mode = mode;
    }

    /// Queues frames from `src` until `n` are queued (fewer if it runs dry).
    fn top_up(&mut self, src: &mut dyn Iterator<Item = SimFrame>, n: u64) {
        let want = (n as usize).saturating_sub(self.nic.queued());
        let mut batch = Vec::with_capacity(want);
        batch.extend(src.take(want));
        self.source_dry |= batch.len() < want;
        for f in &batch {
            self.expect.add(f);
        }
        self.nic.queue(batch);
    }

    /// Drives up to `n` queued frames back to back; counts their clocks and beats.
    fn back_to_back(&mut self, n: u64) {
        self.nic.set_gap(0);
        // The last frame of a readout may still owe idle clocks: one frame settles that.
        self.nic.run_frames(1);
        let (c0, s0) = (self.nic.cycles(), self.nic.stats());
        let frames = self.nic.run_frames(n.saturating_sub(1));
        let (c1, s1) = (self.nic.cycles(), self.nic.stats());
        self.b2b.0 += c1 - c0;
        self.b2b.1 += s1.beats - s0.beats;
        self.b2b.2 += frames;
    }

    /// Moves the monitor's packets into `order` and `by_epoch`.
    fn collect(&mut self) {
        let read = self.checks.last().map(|c| c.epoch);
        for (e, k) in self.nic.take_sketched() {
            assert!(
                read.is_none_or(|r| e > r),
                "a packet tagged with epoch {e} after epoch {read:?} was read"
            );
            self.by_epoch.entry(e).or_default().push(self.order.len());
            self.order.push(k);
        }
    }

    /// Whether the next readout takes the readout stream ([`CoreRun::register_every`]).
    fn next_streamed(&self) -> bool {
        self.register_every.is_none_or(|n| self.checks.len() % n != 1 % n)
    }

    /// Frames to queue so that traffic lasts through the next readout: what its path took
    /// last time and a quarter more, or, before its first, the register path's bound (under
    /// 10 clocks per register read, 8.8 measured, >= 8 beats per frame), which covers the
    /// shorter streamed readout too.
    fn reserve_for_next(&self, plan: &Plan) -> u64 {
        match self.reserve[self.next_streamed() as usize] {
            0 => min_reads(&self.dev) * 10 / (plan.readout_gap + 8) + 1000,
            r => r,
        }
    }

    /// One `read_snapshot` with traffic as `plan` says, checked.
    fn snapshot(&mut self, plan: &Plan) {
        let (c0, f0) = (self.nic.cycles(), self.nic.stats().frames);
        let under_traffic = self.nic.queued() > 0;
        let control = self.dev.epoch + epoch_regs::CONTROL;
        let streamed = self.next_streamed();
        let mut bar = SwapBurst {
            nic: &mut self.nic,
            control,
            swap_burst: plan.swap_burst,
            gap: plan.readout_gap,
            swap_at: None,
            ring: self.ring,
        };
        let path = if streamed { ReadoutPath::Stream } else { ReadoutPath::Registers };
        let (snap, st) =
            read_snapshot(&mut bar, &self.dev, &ReadoutConfig { path, ..self.cfg.clone() }).unwrap();
        assert_eq!(st.stream.is_some(), streamed, "the readout took the path asked for");
        let via = if self.ring { RecordsVia::Ring } else { RecordsVia::Registers };
        assert_eq!(st.records_via, Some(via), "the records came the way asked for");
        self.ring_words += st.ring_words;
        self.streams.extend(st.stream);
        assert!(bar.swap_at.is_some(), "the driver wrote SWAP");
        self.drained.extend(drained_records(&snap));
        self.records_dropped = st.records_dropped.expect("the core has a record stream");
        let (clocks, frames) = (self.nic.cycles() - c0, self.nic.stats().frames - f0);
        self.collect();
        let e = snap.epoch as u32;
        assert_eq!(e as usize, self.checks.len(), "epochs are read in order, none skipped");
        let mode = self.mode_of[&e];
        let pk = self.by_epoch.get(&e).map_or(&[][..], Vec::as_slice);
        let mut c =
            check_snapshot(&snap, pk, &self.order, &self.expect, mode, &self.geometry, self.table_threshold);
        (c.readout_clocks, c.reads, c.readout_frames) = (clocks, st.reads, frames);
        eprintln!(
            "epoch {e} ({mode:?}): {} packets, {} counters equal, markers: tower {:?}, SuMax size/delays {:?}; \
             per-switch: {} hops, {} buckets equal, {} table entries, {} inflated; \
             readout{} {} reads, {} clocks, {} frames arrived",
            c.packets,
            c.compared,
            c.tower_markers,
            c.sumax_markers,
            c.hops,
            c.buckets,
            c.table_entries,
            c.records.len(),
            if streamed { " (streamed)" } else { "" },
            st.reads,
            clocks,
            frames
        );
        self.mode_of.entry(e + 1).or_insert(self.mode);
        self.checks.push(c);
        self.last_readout_frames = frames;
        if under_traffic {
            // Enough queued for the next readout to run under traffic to its end.
            self.reserve[streamed as usize] = frames + frames / 4 + 500;
        }
    }

    /// Feeds frames from `src` (epochs of about `plan.every` frames, a snapshot after each)
    /// until `plan.snapshots` were taken or the source ran dry (its last frames then wait
    /// for [`CoreRun::finish`] or the next call). While the source lasts, frames arrive during
    /// every readout from its first register access to its last (asserted).
    pub fn feed(&mut self, src: &mut dyn Iterator<Item = SimFrame>, plan: Plan) {
        assert!(plan.every > 1 && plan.readout_gap > 0);
        let mut taken = 0;
        while plan.snapshots.is_none_or(|n| taken < n) {
            let b2b = plan.every.saturating_sub(self.last_readout_frames).max(plan.every / 2);
            self.top_up(src, b2b);
            self.back_to_back(b2b);
            self.top_up(src, self.reserve_for_next(&plan));
            if self.source_dry {
                return;
            }
            self.snapshot(&plan);
            assert!(self.nic.queued() > 0, "the queue ran dry during a readout: raise the reserve");
            taken += 1;
        }
    }

    /// Drains the queue back to back, reads the epoch, writes MODE = `mode` with nothing in
    /// flight (the next epoch is all `mode`) and re-discovers the device.
    pub fn switch_mode(&mut self, mode: InsertMode, plan: Plan) {
        self.back_to_back(u64::MAX);
        self.nic.drain();
        self.snapshot(&plan);
        let next = self.checks.last().unwrap().epoch + 1;
        assert!(!self.by_epoch.contains_key(&next), "nothing flowed since the swap");
        self.write_mode(mode);
        self.mode_of.insert(next, mode);
    }

    /// The drained record stream is the model's records of every epoch in order, less the
    /// ones the device counted as dropped (a full buffer drops whole records, keeping order).
    fn check_records(&self) {
        let want: Vec<InflatedRecord> = self.checks.iter().flat_map(|c| c.records.iter().cloned()).collect();
        let dropped = self.records_dropped as usize;
        assert_eq!(want.len(), self.drained.len() + dropped, "records: model vs drained + dropped");
        if let Some(n) = first_out_of_order(&self.drained, &want) {
            panic!("drained record {n} {:?} is not the model's next", self.drained[n]);
        }
        if dropped == 0 {
            assert_eq!(want, self.drained, "records differ");
        }
    }

    /// Packets of `key` the core tagged with epoch `e`.
    pub fn count_in_epoch(&self, e: u32, key: &FlowKey) -> u64 {
        let k = key_to_u128(key.as_bytes());
        self.by_epoch.get(&e).map_or(0, |v| v.iter().filter(|&&i| self.order[i] == k).count() as u64)
    }

    /// Drives what is queued back to back, reads the last epoch, checks the whole run and
    /// prints its numbers after `what`.
    pub fn finish(&mut self, what: &str, plan: Plan) -> Summary {
        self.back_to_back(u64::MAX);
        self.nic.drain();
        self.snapshot(&plan);
        let last = self.checks.last().unwrap().epoch;
        assert!(self.by_epoch.keys().all(|&e| e <= last), "every tagged epoch was read");
        // Every IP frame entered the sketch once, in order, with the software's key.
        assert_eq!(self.order.len(), self.expect.keys.len(), "sketched packets vs IP frames");
        assert!(self.order == self.expect.keys, "the sketched keys are the software's IP keys, in order");
        // Per-epoch counts (the device's IDLE_PACKETS and the monitor's tags) add up to the
        // packets sent.
        let sent = self.expect.classes[1];
        assert_eq!(self.checks.iter().map(|c| c.packets).sum::<u64>(), sent, "sum of IDLE_PACKETS");
        assert_eq!(self.by_epoch.values().map(|v| v.len() as u64).sum::<u64>(), sent);
        self.check_records();
        eprintln!(
            "{what}: {} hops, {} inflated-latency records drained, {} dropped by the full buffer",
            self.checks.iter().map(|c| c.hops).sum::<u64>(),
            self.drained.len(),
            self.records_dropped
        );
        assert_eq!(self.nic.model().get_by_name("hop_lost"), 0, "the hop serializer refused a packet's hops");
        // Statistics explain every frame.
        let got = read_stats(&mut self.nic, &self.dev);
        assert_eq!(got, self.expect.counters(), "frames, sketched, bytes, non_ip, malformed");
        assert_eq!(got[1] + got[3] + got[4], got[0]);
        let s = self.nic.stats();
        assert_eq!(s.tready_low, 0, "tready dropped");
        assert_eq!(s.frames, self.expect.frames);
        let (b2b_clocks, b2b_beats, b2b_frames) = self.b2b;
        assert_eq!(b2b_clocks, b2b_beats, "back to back: one clock per beat");
        let flows = self.expect.keys.iter().collect::<HashSet<_>>().len();
        let n = self.checks.len() as u64;
        let sum = Summary {
            frames: self.expect.frames,
            packets: sent,
            flows,
            epochs: self.checks.len(),
            compared: self.checks.iter().map(|c| c.compared).sum(),
            b2b_clocks,
            b2b_beats,
            b2b_frames,
            clocks: self.nic.cycles(),
            seconds: self.t0.elapsed().as_secs_f64(),
        };
        let per = |f: fn(&EpochCheck) -> u64| self.checks.iter().map(f).sum::<u64>() / n;
        let epoch_packets = self.checks.iter().map(|c| c.packets);
        eprintln!(
            "{what}: {} frames ({} IP, {} non-IP, {} malformed), {} flows; {} epochs ({} CM), {}..{} packets each, \
             {} counters/cells compared; back to back: {} frames, {:.4} clocks/beat, {:.3} clocks/frame, {:.3} \
             clocks/IP packet; per readout: {} reads (min {}), {} clocks, {} frames arrived; {} clocks in {:.1} s \
             ({:.2} Mclk/s)",
            sum.frames,
            sent,
            self.expect.classes[2],
            self.expect.classes[3],
            flows,
            sum.epochs,
            self.checks.iter().filter(|c| c.mode == InsertMode::Cm).count(),
            epoch_packets.clone().min().unwrap(),
            epoch_packets.max().unwrap(),
            sum.compared,
            b2b_frames,
            b2b_clocks as f64 / b2b_beats.max(1) as f64,
            b2b_clocks as f64 / b2b_frames.max(1) as f64,
            b2b_clocks as f64 / b2b_frames.max(1) as f64 * (sum.frames as f64 / sent.max(1) as f64),
            per(|c| c.reads),
            min_reads(&self.dev),
            per(|c| c.readout_clocks),
            per(|c| c.readout_frames),
            sum.clocks,
            sum.seconds,
            sum.clocks as f64 / sum.seconds / 1e6
        );
        sum
    }
}
