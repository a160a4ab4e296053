//! The whole NIC core (`SimNic`, block `core`) under the acceptance traces, read by the
//! driver's `read_snapshot` (swap, idle-bank readout, clear) while frames keep arriving,
//! every epoch compared counter by counter (tower) and cell by cell (SuMax) with software
//! sketches fed exactly the packets the core tagged with that epoch (harness: `core_check`):
//!
//! - adversarial, back to back: 64-byte IPv4/UDP frames with no gap, every packet repeating
//!   the flow of a packet 1..16 places back, some with an INT stack; CM and ACU; a snapshot
//!   every 10k frames;
//! - saturation: two elephants of > 65,535 packets in one epoch (8- and 16-bit tower arrays
//!   and 16-bit SuMax delay cells at their markers), mixed with other flows, CM then ACU.
//!
//! The 1M-packet Zipf trace through the core is in `core.rs` (`zipf_1m_generated_trace`).
//!
//! Frames arrive back to back except during a readout, where they stay back to back for
//! 2,000 clocks after the SWAP write (so packets of both epochs are in the pipelines around
//! the swap) and then come one per `readout_gap` idle clocks until the clear has finished.
mod core_check;

use core_check::{CoreRun, EpochCheck, Plan};
use smartnic::sketch::SuMax;
use smartnic_contract::geometry::{sumax_cell, InsertMode, SuMaxGeometry};
use smartnic_contract::shim::Hop;
use smartnic_contract::vectors::KeyStream;
use smartnic_contract::FlowKey;
use smartnic_sim_tb::frames::{random_latency, random_udp_key, udp4_frame, Adversarial, MIN_FRAME};
use smartnic_sim_tb::simnic::SimFrame;

/// Clocks per 64-byte frame back to back: its 8 beats.
const MIN_FRAME_CLOCKS: u64 = (MIN_FRAME / 8) as u64;

/// The adversarial trace (`smartnic_sim_tb::frames::Adversarial`, a fresh flow 1 in 8
/// packets) through the core in `mode`, a snapshot every 10k frames.
fn adversarial(mode: InsertMode, seed: u64, frames: usize) {
    let mut run = CoreRun::new(mode);
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

/// One epoch's worth of saturating traffic: elephant `a` (every packet with one INT hop in
/// the delay bin of 6 us) and elephant `b` (no shim: delay 0, bin 0), 3/8 of the frames
/// each, the rest 64 mice flows with random INT stacks; 64-byte frames.
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
    eprintln!(
        "epoch {e} ({:?}): elephants {} and {} packets; markers: tower {:?}, SuMax size/delays {:?}",
        c.mode,
        run.count_in_epoch(e, a),
        run.count_in_epoch(e, b),
        c.tower_markers,
        c.sumax_markers
    );
}

/// Saturation through the core: an epoch of [`saturating`] traffic in CM (read while light
/// adversarial traffic flows), a light epoch, MODE = ACU, another saturating epoch (in bank 0
/// again: the clear after the first must have removed its sticky markers), a light epoch. The
/// 8-bit and 16-bit tower arrays and the 16-bit SuMax delay cells reach their markers and
/// stay there (more packets follow), counter by counter equal to the software.
///
/// The 32-bit counters (tower array 2, SuMax size cells) cannot be saturated here: 2^32 - 1
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
