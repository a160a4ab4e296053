//! The whole NIC core (`SimNic`, block `core`) under the acceptance traces, read by the
//! driver's `read_snapshot` (swap, idle-bank readout, clear) while frames keep arriving,
//! every epoch compared counter by counter (tower) and cell by cell (SuMax) with software
//! sketches fed exactly the packets the core tagged with that epoch (harness: `core_check`):
//!
//! - adversarial, back to back: 64-byte IPv4/UDP frames with no gap, every packet repeating
//!   the flow of a packet 1..16 places back, some with an INT stack; CM and ACU; a snapshot
//!   every 10k frames;
//! - 16-hop INT stacks in minimum frames (144 bytes) back to back, between 64-byte frames:
//!   the hop serializer's worst case, no hop refused;
//! - saturation: two elephants of > 65,535 packets in one epoch (8- and 16-bit tower
//!   arrays, 16-bit SuMax delay cells, the latency tower's 8/16-bit counts and 24-bit sums
//!   at their markers) and a pair whose hop latencies saturate the 32-bit latency sums,
//!   mixed with other flows, CM then ACU.
//!
//! Every epoch's per-switch half (latency buckets, key table, inflated-latency records) is
//! compared with the software model's too (`core_check`). The large-epoch Zipf trace and the
//! network lab's capture through the core are in `core.rs`.
//!
//! Frames arrive back to back except during a readout, where they stay back to back for
//! 2,000 clocks after the SWAP write (so packets of both epochs are in the pipelines around
//! the swap) and then come one per `readout_gap` idle clocks until the clear has finished.
mod core_check;

use core_check::{CoreRun, EpochCheck, Plan};
use smartnic::sketch::SuMax;
use smartnic::trace::frame::{parse_frame, FrameClass, LINKTYPE_ETHERNET};
use smartnic_contract::geometry::{sumax_cell, InsertMode, SuMaxGeometry};
use smartnic_contract::per_switch::switch_key;
use smartnic_contract::shim::{Hop, MAX_HOPS};
use smartnic_contract::vectors::KeyStream;
use smartnic_contract::FlowKey;
use smartnic_sim_tb::frames::{random_latency, random_udp_key, udp4_frame, Adversarial, MIN_FRAME};
use smartnic_sim_tb::simnic::SimFrame;

/// Clocks per 64-byte frame back to back: its 8 beats.
const MIN_FRAME_CLOCKS: u64 = (MIN_FRAME / 8) as u64;

/// The adversarial trace (`smartnic_sim_tb::frames::Adversarial`, a fresh flow 1 in 8
/// packets) through the core in `mode`, a snapshot every 10k frames, the table threshold
/// at 2 (back-to-back offers of one flow, a full table, misses).
fn adversarial(mode: InsertMode, seed: u64, frames: usize) {
    // A flow offers its key from its third packet on: the table fills and misses.
    let mut run = CoreRun::with_table_threshold(mode, 2);
    let mut src = Adversarial::new(seed, 8);
    let plan = Plan { every: 10_000, swap_burst: 2_000, readout_gap: 1_200, snapshots: None };
    run.feed(&mut src.by_ref().take(frames), plan);
    let s = run.finish(&format!("adversarial {mode:?}"), plan);
    assert_eq!(s.frames, frames as u64);
    assert_eq!(s.packets, s.frames, "every frame is an IP packet");
    assert!(s.flows > frames / 10, "{} flows", s.flows);
    assert!(s.epochs >= frames / 10_000, "{} epochs", s.epochs);
    assert!(run.checks.iter().all(|c| c.mode == mode));
    assert_eq!(s.b2b_clocks, MIN_FRAME_CLOCKS * s.b2b_frames, "64-byte frames back to back: 8 clocks each");
    assert!(
        run.checks.iter().all(|c| c.table_entries > 400 && c.table_misses > 0),
        "tables filling up and missing: {:?}",
        run.checks.iter().map(|c| (c.table_entries, c.table_misses)).collect::<Vec<_>>()
    );
    // The INT stacks hit every delay cell.
    let cells = SuMaxGeometry::nic_default().delay_cells as usize;
    for c in 0..cells {
        let hit = run
            .checks
            .iter()
            .any(|k| (0..3).any(|a| (0..8192).any(|b| k.sumax.cell(a, b, sumax_cell::FIRST_DELAY + c) != 0)));
        assert!(hit, "delay cell {c} never counted a packet");
    }
}

#[test]
fn adversarial_back_to_back_cm() {
    adversarial(InsertMode::Cm, 0xad1, 100_000);
}

#[test]
fn adversarial_back_to_back_acu() {
    adversarial(InsertMode::Acu, 0xad2, 100_000);
}

/// Bytes of a frame with a full INT stack and no VLAN tag: Ethernet 14, the shim 6 + 6 x 16,
/// IPv4 20, UDP 8 (18 beats).
const FULL_STACK_FRAME: usize = 14 + 6 + 6 * MAX_HOPS as usize + 20 + 8;

/// `f` again with a full INT stack at its minimum size: the flow's fixed path of 16
/// switches (a function of its key, so (flow, switch) pairs repeat as the flow does), random
/// latencies.
fn full_stack(f: SimFrame, rng: &mut KeyStream) -> SimFrame {
    let FrameClass::Ip { key, .. } = parse_frame(LINKTYPE_ETHERNET, &f.data) else {
        panic!("the adversarial trace is IP only")
    };
    let base = u16::from_be_bytes([key.as_bytes()[3], key.as_bytes()[12]]);
    let hops: Vec<Hop> = (0..MAX_HOPS)
        .map(|j| Hop { switch_id: base.wrapping_mul(17).wrapping_add(j), latency_ns: random_latency(rng) })
        .collect();
    SimFrame::new(f.ts_ns, udp4_frame(&key, None, Some(&hops), FULL_STACK_FRAME))
}

/// The hop serializer's worst case through the core: two frames in three carry a full
/// 16-hop INT stack at its minimum size (18 beats for 16 hops), the third is a 64-byte
/// frame of 0..2 hops (8 beats), all back to back (the adversarial trace's flows, repeating
/// 1..16 packets back). Every epoch's latency buckets, key table and records equal the
/// model's, no packet's hops are refused (`hop_lost`), one clock per beat; CM epochs, then
/// ACU.
#[test]
fn sixteen_hop_stacks_in_minimum_frames_back_to_back() {
    let mut rng = KeyStream::new(0x1616);
    let mut adv = Adversarial::new(0x16, 8);
    let frames: Vec<SimFrame> = (0..60_000)
        .map(|i| {
            let f = adv.next().unwrap();
            if i % 3 == 2 {
                f
            } else {
                full_stack(f, &mut rng)
            }
        })
        .collect();
    let beats: u64 = frames.iter().map(|f| f.data.len().div_ceil(8) as u64).sum();
    let mut src = frames.into_iter();
    let plan = Plan { every: 10_000, swap_burst: 2_000, readout_gap: 1_200, snapshots: Some(3) };
    let mut run = CoreRun::with_table_threshold(InsertMode::Cm, 2);
    run.feed(&mut src, plan);
    run.switch_mode(InsertMode::Acu, plan);
    run.feed(&mut src, Plan { snapshots: None, ..plan });
    let s = run.finish("16-hop stacks", plan);
    assert_eq!(s.frames, 60_000);
    assert_eq!(s.b2b_clocks, s.b2b_beats, "one clock per beat");
    let hops: u64 = run.checks.iter().map(|c| c.hops).sum();
    assert!(hops >= 16 * 40_000, "{hops} hops");
    assert!(run.checks.iter().any(|c| c.mode == InsertMode::Acu && c.hops > 0));
    eprintln!("16-hop stacks: {hops} hops in {beats} beats, {} records", run.drained.len());
}

/// One epoch's worth of saturating traffic: elephant `a` (every packet with one INT hop in
/// the delay bin of 6 us) and elephant `b` (no shim: delay 0, bin 0), 3/8 of the frames
/// each, the rest 64 mice flows with random INT stacks, one in 16 of them mouse 0 at
/// switch [`SLOW_SWITCH`] with a hop latency within 1 us of the largest (4.29 s: its 32-bit
/// latency sums saturate after 17 packets); 64-byte frames.
fn saturating(rng: &mut KeyStream, ts: &mut u64, frames: usize, a: &FlowKey, b: &FlowKey) -> Vec<SimFrame> {
    let mice: Vec<FlowKey> = (0..64).map(|_| random_udp_key(rng)).collect();
    (0..frames)
        .map(|i| {
            *ts += rng.next_u64() % 2048;
            let data = match i % 8 {
                0 | 2 | 4 => {
                    let hop = Hop { switch_id: 1, latency_ns: 4_200 + (rng.next_u64() % 3_600) as u32 };
                    udp4_frame(a, None, Some(&[hop]), MIN_FRAME)
                }
                1 | 3 | 5 => udp4_frame(b, Some(20), None, MIN_FRAME),
                _ if rng.next_u64().is_multiple_of(16) => {
                    let hop = Hop {
                        switch_id: SLOW_SWITCH,
                        latency_ns: u32::MAX - (rng.next_u64() % 1_000) as u32,
                    };
                    udp4_frame(&mice[0], None, Some(&[hop]), MIN_FRAME)
                }
                _ => {
                    let m = &mice[(rng.next_u64() % 64) as usize];
                    let hop = Hop { switch_id: 2, latency_ns: random_latency(rng) };
                    udp4_frame(m, None, Some(&[hop]), MIN_FRAME)
                }
            };
            SimFrame::new(*ts, data)
        })
        .collect()
}

/// The switch of [`saturating`]'s slowest hops.
const SLOW_SWITCH: u16 = 3;

/// The saturation checks of one epoch: both elephants had more than 2^16 - 1 packets in it;
/// their counters in the 8- and 16-bit tower arrays and their delay cells (bin 3 for `a`, 0
/// for `b`) in all three SuMax arrays are at the marker in the snapshot (which equals the
/// software, so the marker is sticky in both).
fn check_saturated(run: &CoreRun, c: &EpochCheck, a: &FlowKey, b: &FlowKey) {
    let e = c.epoch;
    let sw = SuMax::new(SuMaxGeometry::nic_default()).unwrap();
    let g = &run.geometry;
    for (k, bin) in [(a, sw.delay_bin(6_000)), (b, 0)] {
        let n = run.count_in_epoch(e, k);
        assert!(n > 65_535 + 1_000, "epoch {e}: only {n} packets of an elephant");
        let ti = c.tower.indices(k);
        for (arr, &i) in ti.iter().enumerate().take(2) {
            let v = c.tower.counter(arr, i);
            assert_eq!(v, g.arrays[arr].marker(), "epoch {e}: elephant counter in tower array {arr}");
        }
        let si = c.sumax.indices(k);
        for (arr, &bucket) in si.iter().enumerate().take(3) {
            let v = c.sumax.cell(arr, bucket, sumax_cell::FIRST_DELAY + bin as usize);
            assert_eq!(v, 0xFFFF, "epoch {e}: elephant delay cell {bin} in SuMax array {arr}");
        }
    }
    assert_eq!(sw.delay_bin(4_200), sw.delay_bin(7_800), "elephant a's delays share one bin");
    assert!(c.tower_markers[0] >= 2 && c.tower_markers[1] >= 2, "epoch {e}: {:?}", c.tower_markers);
    assert!(c.sumax_markers[1] >= 3, "epoch {e}: {:?}", c.sumax_markers);
    // The latency tower (equal to the software's): elephant a's pair at switch 1 saturates
    // the 8- and 16-bit count cells and the 24-bit sum cell, the slow mouse's pair the
    // 32-bit sum cells. (The 32-bit count cells take 2^32 - 1 hops of one pair.)
    let g = c.latency.geometry().clone();
    let (pa, at) = (switch_key(1, a), c.latency.indices(&switch_key(1, a)));
    for (arr, &i) in at.iter().enumerate().take(2) {
        assert_eq!(
            c.latency.bucket(arr, i).0,
            g.arrays[arr].count_marker(),
            "epoch {e}: count of {pa:?} in {arr}"
        );
    }
    assert_eq!(c.latency.bucket(0, at[0]).1, g.arrays[0].sum_marker(), "epoch {e}: 24-bit sum");
    assert!(
        c.latency_markers[1].1 >= 1 && c.latency_markers[2].1 >= 1,
        "epoch {e}: 32-bit sums at the marker: {:?}",
        c.latency_markers
    );
    eprintln!(
        "epoch {e} ({:?}): elephants {} and {} packets; markers: tower {:?}, SuMax size/delays {:?}, \
         latency (count, sum) {:?}",
        c.mode,
        run.count_in_epoch(e, a),
        run.count_in_epoch(e, b),
        c.tower_markers,
        c.sumax_markers,
        c.latency_markers
    );
}

/// Saturation through the core: an epoch of [`saturating`] traffic in CM (read while light
/// adversarial traffic flows), a light epoch, MODE = ACU, another saturating epoch (in bank 0
/// again: the clear after the first must have removed its sticky markers), a light epoch. The
/// 8-bit and 16-bit tower arrays and the 16-bit SuMax delay cells reach their markers and
/// stay there (more packets follow), counter by counter equal to the software.
///
/// The latency tower's 8/16-bit count cells, its 24-bit sum cell and its 32-bit sum cells
/// reach their markers too ([`check_saturated`]).
///
/// The 32-bit counters (tower array 2, SuMax size cells, the latency tower's 32-bit count
/// cells) cannot be saturated here: 2^32 - 1
/// packets of one flow are 34G clocks of 64-byte frames. Narrow widths saturate at the
/// pipeline level instead: `tower.rs` `saturation_narrow_widths` (2/4/8-bit arrays, every
/// mode) and `saturation_board_geometry`, `sumax.rs` `saturation_and_time_wrap_narrow_cells`
/// (8-bit size, 4-bit delay cells, 6-bit time) and `saturation_16_bit_delay_cells`, and
/// `sumax_epoch.rs` `banked_sumax_narrow_cells_40_epochs` (narrow cells across epochs).
#[test]
fn saturation_cm_then_acu() {
    let mut rng = KeyStream::new(0x5a7);
    let (a, b) = (random_udp_key(&mut rng), random_udp_key(&mut rng));
    let plan = Plan { every: 1_000_000, swap_burst: 2_000, readout_gap: 1_200, snapshots: Some(1) };
    let mut run = CoreRun::new(InsertMode::Cm);
    let mut light = Adversarial::new(0x5a8, 8);
    for (i, mode) in [InsertMode::Cm, InsertMode::Acu].into_iter().enumerate() {
        if i > 0 {
            run.switch_mode(mode, plan);
        }
        let mut ts = light.now();
        let sat = saturating(&mut rng, &mut ts, 190_000, &a, &b);
        light.skip_to(ts);
        let n = sat.len() as u64;
        run.feed(&mut sat.into_iter().chain(light.by_ref().take(20_000)), Plan { every: n, ..plan });
        let c = run.checks.last().unwrap().clone();
        assert_eq!(c.mode, mode);
        check_saturated(&run, &c, &a, &b);
    }
    let s = run.finish("saturation", plan);
    assert_eq!(s.epochs, 4);
    assert_eq!(s.b2b_clocks, MIN_FRAME_CLOCKS * s.b2b_frames, "64-byte frames back to back: 8 clocks each");
}
