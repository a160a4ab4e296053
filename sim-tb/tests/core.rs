//! The NIC core top (`core`) as the simulated NIC (`SimNic`): a generated trace replayed into
//! the AXI-Stream port while the driver (`DeviceMap::discover`, `read_snapshot` = swap,
//! consistent idle-bank read, clear) reads a snapshot every ~14k frames through AXI4-Lite.
//! Every epoch's TowerSketch section equals a software `Tower` and its SuMax section a
//! software `SuMax` fed exactly the packets the core tagged with that epoch (SuMax with each
//! packet's frame timestamp, which SimNic drives on `now` from the frame's first beat, and
//! its INT delay); the statistics counters explain every frame. Two generated traces: 130k
//! packets with a snapshot every ~14k frames, and 1M packets (Zipf) with a snapshot every
//! ~95k frames. The harness is `core_check` (shared with `core_adversarial.rs`, the
//! adversarial and saturating traces).
mod core_check;

use core_check::{generated_trace, read_stats, CoreRun, Expect, Plan};
use smartnic::lab::{LabConfig, Sink};
use smartnic_contract::geometry::InsertMode;
use smartnic_driver::blocks::DeviceMap;
use smartnic_sim_tb::simbar::Rng;
use smartnic_sim_tb::simnic::{SimFrame, SimNic};

/// 130k generated packets, a snapshot about every 14k frames (back to back, then one frame
/// per 600 idle clocks after a burst around the swap while the driver reads), 4 epochs in
/// CM, then a drained switch to MODE = ACU for the rest.
#[test]
fn core_epochs_equal_software_towers_with_the_driver_reading_under_traffic() {
    let mut run = CoreRun::new(InsertMode::Cm);
    let mut frames = generated_trace(7, 130_000).into_iter();
    let plan = Plan { every: 14_000, swap_burst: 2_000, readout_gap: 600, snapshots: Some(4) };
    run.feed(&mut frames, plan);
    run.switch_mode(InsertMode::Acu, plan);
    run.feed(&mut frames, Plan { snapshots: None, ..plan });
    let s = run.finish("generated 130k", plan);
    // About 6k frames arrive during each readout (528k register reads), so the 130k
    // packets make 9 or more epochs.
    assert!(s.epochs >= 9, "{} epochs", s.epochs);
    assert!(run.checks.iter().any(|c| c.mode == InsertMode::Acu && c.packets > 0));
}

/// 1M packets of the generated trace (Zipf 1.1, 100K flows, shim 1..16 hops, 30 % IPv6,
/// 30 % VLAN, 5 % ARP frames) back to back, a snapshot every ~190k frames (at most 200k
/// packets per epoch: each readout of 554K register reads is ~5M simulated clocks, so the
/// many-epoch runs are the 130k trace's and the adversarial ones), the first 2 epochs in
/// CM, then ACU.
#[test]
fn zipf_1m_generated_trace() {
    let mut frames = generated_trace(11, 1_000_000).into_iter();
    let mut run = CoreRun::new(InsertMode::Cm);
    let plan = Plan { every: 190_000, swap_burst: 2_000, readout_gap: 600, snapshots: Some(2) };
    run.feed(&mut frames, plan);
    run.switch_mode(InsertMode::Acu, plan);
    run.feed(&mut frames, Plan { snapshots: None, ..plan });
    let s = run.finish("zipf 1M", plan);
    assert_eq!(s.packets, 1_000_000);
    let max = run.checks.iter().map(|c| c.packets).max().unwrap();
    assert!(max <= 200_000, "an epoch of {max} packets");
    assert!(
        run.checks.iter().filter(|c| c.mode == InsertMode::Acu).map(|c| c.packets).sum::<u64>() > 300_000
    );
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
/// of 5 switches, a 1 Gb/s uplink that congests) at half load, `packets` sent.
fn lab_frames(packets: u64) -> Vec<SimFrame> {
    let t = smartnic::demo::topology().unwrap();
    let mut cfg = LabConfig::default();
    cfg.workload.max_packets = Some(packets);
    cfg.workload.load = 0.5;
    cfg.workload.seed = 14;
    let mut sink = Delivered(Vec::new());
    smartnic::lab::run(&t, &cfg, &mut sink).unwrap();
    sink.0
}

/// Over 1M packets of network-lab traffic through the core (5-hop inter-pod paths, queues
/// building at the congested uplink), back to back, a snapshot about every 200k frames, CM
/// then ACU: every epoch's flow sketches and per-switch half equal the models, and the
/// record stream carries the inflated-latency events (less the counted drops).
#[test]
fn lab_capture_1m_packets_over_5_hop_paths() {
    let frames = lab_frames(1_450_000);
    let five = frames.iter().filter(|f| core_check::packet_of(f).is_ok_and(|p| p.hops.len() == 5)).count();
    let mut src = frames.into_iter();
    let mut run = CoreRun::new(InsertMode::Cm);
    let plan = Plan { every: 200_000, swap_burst: 2_000, readout_gap: 600, snapshots: Some(2) };
    run.feed(&mut src, plan);
    run.switch_mode(InsertMode::Acu, plan);
    run.feed(&mut src, Plan { snapshots: None, ..plan });
    let s = run.finish("lab 1M", plan);
    assert!(s.packets >= 1_000_000, "{} packets", s.packets);
    assert!(five as u64 > s.packets / 2, "{five} packets crossed 5 switches");
    let inflated: usize = run.checks.iter().map(|c| c.records.len()).sum();
    assert!(inflated > 1000 && !run.drained.is_empty(), "{inflated} inflated hops");
    assert!(
        run.checks.iter().all(|c| c.packets == 0 || c.table_entries > 0),
        "every epoch keeps heavy flows"
    );
    eprintln!("lab 1M: {five} packets over 5 switches, {inflated} inflated hops");
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
