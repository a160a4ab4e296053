//! The NIC core top (`core`) as the simulated NIC (`SimNic`): a generated trace replayed into
//! the AXI-Stream port while the driver (`DeviceMap::discover`, `read_snapshot` = swap,
//! consistent idle-bank read, clear) reads a snapshot every 10k packets through AXI4-Lite.
//! Every epoch's TowerSketch section equals a software `Tower` and its SuMax section a
//! software `SuMax` fed exactly the packets the core tagged with that epoch (SuMax with each
//! packet's frame timestamp, which SimNic drives on `now` from the frame's first beat, and
//! its INT delay); the statistics counters explain every frame.
use smartnic::sketch::snapshot::to_section;
use smartnic::sketch::{AnySketch, SuMax, Tower};
use smartnic::trace::frame::{parse_frame, FrameClass};
use smartnic::trace::gen::{self, GenConfig, ShimConfig};
use smartnic_contract::geometry::{InsertMode, SuMaxGeometry, TowerGeometry};
use smartnic_contract::key::FlowKey;
use smartnic_contract::regs::{stats, tower as tower_regs};
use smartnic_driver::access::RegisterAccess;
use smartnic_driver::blocks::DeviceMap;
use smartnic_driver::readout::{min_reads, read_snapshot, ReadoutConfig, ReadoutStats};
use smartnic_driver::snapshot::{Section, Snapshot};
use smartnic_sim_tb::simbar::Rng;
use smartnic_sim_tb::simnic::{read_capture, SimFrame, SimNic};
use std::collections::BTreeMap;
use std::time::Instant;

const LINKTYPE_ETHERNET: u32 = 1;

fn key_u128(k: &FlowKey) -> u128 {
    k.as_bytes().iter().fold(0u128, |a, &b| a << 8 | b as u128)
}

fn key_of(k: u128) -> FlowKey {
    let b = k.to_be_bytes();
    FlowKey(b[3..].try_into().unwrap())
}

/// Software verdict on a frame: class (1 IP, 2 non-IP, 3 malformed), key and INT delay
/// (sum of the hop latencies, ns).
fn classify(f: &SimFrame) -> (u8, u128, u64) {
    if f.tuser {
        return (3, 0, 0);
    }
    match parse_frame(LINKTYPE_ETHERNET, &f.data) {
        FrameClass::Ip { key, hops } => (1, key_u128(&key), hops.iter().map(|h| h.latency_ns as u64).sum()),
        FrameClass::NonIp => (2, 0, 0),
        FrameClass::Malformed(_) => (3, 0, 0),
    }
}

/// The five statistics counters (frames, sketched, bytes, non_ip, malformed).
fn read_stats(nic: &mut SimNic, dev: &DeviceMap) -> [u64; 5] {
    let base = dev.stats.expect("the core has a statistics block");
    [stats::FRAMES, stats::SKETCHED, stats::BYTES, stats::NON_IP, stats::MALFORMED]
        .map(|off| nic.read64(base + off).unwrap())
}

/// What the software says the frames fed so far must produce.
#[derive(Default)]
struct Expect {
    frames: u64,
    bytes: u64,
    classes: [u64; 4],
    /// Keys of the IP frames in order.
    keys: Vec<u128>,
    /// `(ts_ns, delay_ns)` of the IP frames in order (the core's `now` at the first beat and
    /// the INT delay).
    times: Vec<(u64, u64)>,
}

impl Expect {
    fn add(&mut self, f: &SimFrame) {
        let (class, key, delay) = classify(f);
        self.frames += 1;
        self.bytes += f.data.len() as u64;
        self.classes[class as usize] += 1;
        if class == 1 {
            self.keys.push(key);
            self.times.push((f.ts_ns, delay));
        }
    }
    fn counters(&self) -> [u64; 5] {
        [self.frames, self.classes[1], self.bytes, self.classes[2], self.classes[3]]
    }
}

fn generated_trace(seed: u64, packets: u64) -> Vec<SimFrame> {
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
    let dir = std::env::temp_dir().join(format!("smartnic-core-test-{}-{seed}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pcap = dir.join("trace.pcap");
    gen::generate_files(&cfg, &pcap, &dir.join("truth.json"), None).unwrap();
    let frames = read_capture(&pcap).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    frames.into_iter().map(|(ts, data)| SimFrame::new(ts, data)).collect()
}

/// Moves the monitor's packets into `by_epoch` (as indices into `order`) and `order`.
fn collect(nic: &mut SimNic, by_epoch: &mut BTreeMap<u32, Vec<usize>>, order: &mut Vec<u128>) {
    for (e, k) in nic.take_sketched() {
        by_epoch.entry(e).or_default().push(order.len());
        order.push(k);
    }
}

/// Checks one snapshot against the software sketches of its epoch's packets (indices into
/// the sketched order = the IP frames of `expect`, checked here up to the last one used).
fn check_snapshot(
    snap: &Snapshot,
    packets: &[usize],
    order: &[u128],
    expect: &Expect,
    mode: InsertMode,
    geometry: &TowerGeometry,
) {
    assert_eq!(snap.packets, packets.len() as u64, "epoch {}: IDLE_PACKETS", snap.epoch);
    if let Some(&last) = packets.last() {
        assert!(order[..=last] == expect.keys[..=last], "sketched keys = the software's IP keys, in order");
    }
    let mut t = Tower::new(geometry.clone(), mode).unwrap();
    let mut sm = SuMax::new(SuMaxGeometry::nic_default()).unwrap();
    for &i in packets {
        let k = key_of(order[i]);
        t.insert(&k);
        let (ts, delay) = expect.times[i];
        sm.insert(&k, ts, delay);
    }
    let want = to_section(&AnySketch::Tower(t)).unwrap();
    assert_eq!(snap.sections.len(), 2);
    if snap.sections[0] != want {
        let (Section::Tower { arrays: got, .. }, Section::Tower { arrays: exp, .. }) =
            (&snap.sections[0], &want)
        else {
            panic!("epoch {}: section 0 is not a tower section", snap.epoch)
        };
        for (a, (g, e)) in got.iter().zip(exp).enumerate() {
            let diff = g.iter().zip(e).filter(|(x, y)| x != y).count();
            assert_eq!(diff, 0, "epoch {} ({mode:?}): tower array {a}: {diff} bytes differ", snap.epoch);
        }
        panic!("epoch {}: tower section differs outside the arrays", snap.epoch);
    }
    let want = to_section(&AnySketch::SuMax(sm.clone())).unwrap();
    if snap.sections[1] != want {
        let Section::SuMax { arrays: got, .. } = &snap.sections[1] else {
            panic!("epoch {}: section 1 is not a SuMax section", snap.epoch)
        };
        let mut g = sm.clone();
        for (a, raw) in got.iter().enumerate() {
            assert!(g.load_array(a, raw), "epoch {}: SuMax array {a} size", snap.epoch);
        }
        let cells = 3 + sm.geometry().delay_cells as usize;
        let mut bad = Vec::new();
        for a in 0..3 {
            for b in 0..sm.geometry().depth {
                for c in 0..cells {
                    if g.cell(a, b, c) != sm.cell(a, b, c) {
                        bad.push((a, b, c, g.cell(a, b, c), sm.cell(a, b, c)));
                    }
                }
            }
        }
        panic!(
            "epoch {}: {} SuMax cells differ (array, bucket, cell, core, software), first: {:?}",
            snap.epoch,
            bad.len(),
            &bad[..bad.len().min(8)]
        );
    }
    // Not a vacuous comparison: the epoch's packets are in the section.
    if !packets.is_empty() {
        let Section::SuMax { arrays, .. } = &snap.sections[1] else { unreachable!() };
        assert!(arrays.iter().all(|a| a.iter().any(|&b| b != 0)), "epoch {}: empty SuMax", snap.epoch);
    }
}

#[test]
fn core_epochs_equal_software_towers_with_the_driver_reading_under_traffic() {
    let t0 = Instant::now();
    let mut nic = SimNic::new().unwrap_or_else(|e| panic!("{e}"));
    eprintln!("model ready in {:.1} s", t0.elapsed().as_secs_f64());
    let mut dev = DeviceMap::discover(&mut nic).unwrap();
    let geometry = TowerGeometry::sketchint_fpga();
    assert_eq!(dev.tower.as_ref().unwrap().geometry, geometry);
    assert_eq!(dev.sumax.as_ref().unwrap().geometry, SuMaxGeometry::nic_default());
    let tower_base = dev.tower.as_ref().unwrap().base;

    let frames = generated_trace(7, 130_000);
    let mut expect = Expect::default();
    let total = frames.len();
    // While the driver reads, the MAC side runs at one frame per 24 clocks' gap so a
    // readout (about 2.7M clocks) spans a few thousand frames, not the whole trace.
    let cfg = ReadoutConfig { source: smartnic_contract::snapshot::source::SIMULATOR, ..Default::default() };
    let mut it = frames.into_iter();
    let mut order: Vec<u128> = Vec::new();
    let mut by_epoch: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    let mut mode_of: BTreeMap<u32, InsertMode> = BTreeMap::new();
    let mut mode = InsertMode::Cm;
    let mut epochs = 0;
    let (mut replay_clocks, mut replay_beats, mut replay_frames) = (0u64, 0u64, 0u64);
    let mut costs: Vec<(ReadoutStats, u64)> = Vec::new();
    let mut sent = 0usize;
    let every = 10_000u64;
    while sent < total {
        // Queue the next batch plus what the readout will consume.
        let batch: Vec<SimFrame> = it.by_ref().take(every as usize + 4_000).collect();
        for f in &batch {
            expect.add(f);
        }
        sent += batch.len();
        nic.queue(batch);
        // Back to back: one clock per beat.
        nic.set_gap(0);
        let (c0, s0) = (nic.cycles(), nic.stats());
        let n = nic.run_frames(every);
        let (c1, s1) = (nic.cycles(), nic.stats());
        replay_clocks += c1 - c0;
        replay_beats += s1.beats - s0.beats;
        replay_frames += n;
        // Readout with traffic flowing (rate-limited) during the whole protocol.
        nic.set_gap(600);
        let c0 = nic.cycles();
        let (snap, st) = read_snapshot(&mut nic, &dev, &cfg).unwrap();
        costs.push((st, nic.cycles() - c0));
        collect(&mut nic, &mut by_epoch, &mut order);
        mode_of.entry(snap.epoch as u32).or_insert(mode);
        let e = snap.epoch as u32;
        let pk = by_epoch.get(&e).cloned().unwrap_or_default();
        check_snapshot(&snap, &pk, &order, &expect, mode_of[&e], &geometry);
        eprintln!(
            "epoch {e} ({:?}): {} packets, {} reads, {} clocks",
            mode_of[&e],
            pk.len(),
            st.reads,
            costs.last().unwrap().1
        );
        epochs += 1;
        // Switch the insertion mode half way: drain, read the epoch, write MODE, re-discover.
        if epochs == 4 {
            nic.set_gap(0);
            nic.drain();
            let (snap, _) = read_snapshot(&mut nic, &dev, &cfg).unwrap();
            collect(&mut nic, &mut by_epoch, &mut order);
            let e = snap.epoch as u32;
            mode_of.entry(e).or_insert(mode);
            let pk = by_epoch.get(&e).cloned().unwrap_or_default();
            check_snapshot(&snap, &pk, &order, &expect, mode_of[&e], &geometry);
            mode = InsertMode::Acu;
            nic.write32(tower_base + tower_regs::MODE, mode as u32).unwrap();
            dev = DeviceMap::discover(&mut nic).unwrap();
            assert_eq!(dev.tower.as_ref().unwrap().mode, InsertMode::Acu);
            // Nothing flowed since the swap: the new active epoch is all ACU.
            mode_of.insert(e + 1, mode);
        }
        mode_of.entry(snap.epoch as u32 + 1).or_insert(mode);
    }
    // The rest of the trace, then the last epoch.
    nic.set_gap(0);
    nic.drain();
    let (snap, _) = read_snapshot(&mut nic, &dev, &cfg).unwrap();
    collect(&mut nic, &mut by_epoch, &mut order);
    let e = snap.epoch as u32;
    let pk = by_epoch.get(&e).cloned().unwrap_or_default();
    check_snapshot(&snap, &pk, &order, &expect, mode_of[&e], &geometry);
    let last = *by_epoch.keys().max().unwrap();
    assert!(last <= e, "a packet in epoch {last}, after the last snapshot's epoch {e}");

    // Every IP frame entered the sketch once, in order, with the software's key.
    assert_eq!(order.len(), expect.keys.len(), "sketched packets vs IP frames");
    assert!(order == expect.keys, "the sketched keys are the software's IP keys, in order");
    // Per-epoch counts add up to the packets sent.
    let per_epoch: u64 = by_epoch.values().map(|v| v.len() as u64).sum();
    assert_eq!(per_epoch, expect.classes[1]);
    // Statistics explain every frame.
    let got = read_stats(&mut nic, &dev);
    assert_eq!(got, expect.counters(), "frames, sketched, bytes, non_ip, malformed");
    assert_eq!(got[1] + got[3] + got[4], got[0]);
    let s = nic.stats();
    assert_eq!(s.tready_low, 0, "tready dropped");
    assert_eq!(s.frames as usize, total);
    assert_eq!(replay_clocks, replay_beats, "back to back: one clock per beat");
    let (reads, clocks): (u64, u64) = costs.iter().fold((0, 0), |a, c| (a.0 + c.0.reads, a.1 + c.1));
    eprintln!(
        "{} frames ({} IP, {} non-IP, {} malformed), {} epochs checked ({} CM); back to back: {:.3} clocks/beat, {:.2} clocks/frame, {:.2} clocks/IP packet; readout: {} reads (min {}), {} writes, {:.0} clocks per snapshot; {} clocks in {:.1} s",
        total,
        expect.classes[1],
        expect.classes[2],
        expect.classes[3],
        by_epoch.len(),
        mode_of.values().filter(|m| **m == InsertMode::Cm).count(),
        replay_clocks as f64 / replay_beats as f64,
        replay_clocks as f64 / replay_frames as f64,
        replay_clocks as f64 / replay_frames as f64 * (expect.frames as f64 / expect.classes[1] as f64),
        reads / costs.len() as u64,
        min_reads(&dev),
        costs[0].0.writes,
        clocks as f64 / costs.len() as f64,
        nic.cycles(),
        t0.elapsed().as_secs_f64()
    );
}

#[test]
fn random_frames_with_tuser_never_stall_the_core() {
    let mut nic = SimNic::new().unwrap_or_else(|e| panic!("{e}"));
    let dev = DeviceMap::discover(&mut nic).unwrap();
    let mut r = Rng::new(5);
    let mut expect = Expect::default();
    let mut frames = Vec::new();
    for i in 0..30_000u64 {
        let len = 1 + r.below(1600) as usize;
        let data: Vec<u8> = (0..len).map(|_| r.next_u64() as u8).collect();
        let mut f = SimFrame::new(1_000 + i * 100, data);
        f.tuser = r.chance(5);
        expect.add(&f);
        frames.push(f);
    }
    // A valid trace after the garbage: the core is back to sketching.
    for f in generated_trace(3, 5_000) {
        expect.add(&f);
        frames.push(f);
    }
    let n = frames.len() as u64;
    nic.queue(frames);
    let c0 = nic.cycles();
    assert_eq!(nic.run_frames(u64::MAX), n);
    let clocks = nic.cycles() - c0;
    nic.drain();
    let s = nic.stats();
    assert_eq!(s.tready_low, 0);
    assert_eq!(clocks, s.beats, "one clock per beat, no stall");
    let keys: Vec<u128> = nic.take_sketched().into_iter().map(|(_, k)| k).collect();
    assert_eq!(keys, expect.keys, "sketched packets = the software's IP frames, in order");
    let got = read_stats(&mut nic, &dev);
    assert_eq!(got, expect.counters());
    assert_eq!(got[1] + got[3] + got[4], got[0]);
    eprintln!(
        "{n} frames ({} IP, {} non-IP, {} malformed) in {clocks} clocks = {} beats",
        expect.classes[1], expect.classes[2], expect.classes[3], s.beats
    );
}
