//! Epochs under Verilator: the two-bank TowerSketch `tower_banked` (`hdl::sketch::tower_banked`)
//! and its epoch engine (`hdl::sketch::epoch`).
//!
//! - `tower_banked`: a packet every clock, no gap, while the test swaps banks every `N`
//!   packets, waits the drain, reads the whole idle bank through the readout port (first the
//!   counters the old epoch's last 16 packets touched, the clock the drain ends), reads them
//!   again (a retry must see the same values), clears it, and goes on. Each epoch's counters
//!   must equal a software `Tower` fed exactly the packets tagged with that epoch, counter by
//!   counter, for both banks over 100 epochs; every packet's estimate (CM or ACU) must equal
//!   that epoch's `Tower::query` after its insert; the per-epoch packet counts must add up to the packets sent; STATUS,
//!   EPOCH and SEQUENCE must change on the documented clocks. Traffic is adversarial
//!   (every packet repeats one of the last 1..16 flows) so same-counter packets of the old
//!   and the new epoch are in flight together at every swap.
//! - `EpochEngine` alone, cycle by cycle against a model of the documented semantics, with
//!   random SWAP/CLEAR pulses including the overlaps (swap during a clear, clear during a
//!   drain, both at once, repeated pulses).
use smartnic::sketch::tower::Tower;
use smartnic_contract::geometry::{InsertMode, TowerGeometry};
use smartnic_contract::vectors::KeyStream;
use smartnic_contract::FlowKey;
use smartnic_hdl::flow;
use smartnic_hdl::hash::key_to_u128;
use smartnic_hdl::sketch::epoch::EpochEngine;
use smartnic_hdl::sketch::tower::ARRAYS;
use smartnic_hdl::sketch::tower_banked::{TowerBanked, DRAIN, RO_LATENCY};
use smartnic_sim_tb::{Model, ModelBuild, PortId};
use std::collections::VecDeque;
use std::time::Instant;

fn report_build(b: &ModelBuild) {
    match b.build_seconds {
        Some(s) => eprintln!("built {} in {s:.1} s ({})", b.block, b.dir.display()),
        None => eprintln!("reused {} ({})", b.block, b.dir.display()),
    }
}

/// One clock of input.
#[derive(Clone, Copy, Default)]
struct Row {
    packet: Option<(FlowKey, bool)>,
    swap: bool,
    clear: bool,
    /// Readout request (array, index).
    ro: Option<(u32, u32)>,
}

impl Row {
    fn packet(k: FlowKey, acu: bool) -> Row {
        Row { packet: Some((k, acu)), ..Default::default() }
    }
}

const IN_PORTS: [&str; 8] = ["key", "key_valid", "acu", "swap", "clear", "ro_req", "ro_array", "ro_index"];
const IN_ROW: usize = 4 + 7;
const OUT_PORTS: [&str; 13] = [
    "done",
    "estimate_inf",
    "estimate",
    "active_bank",
    "swap_pending",
    "clear_busy",
    "epoch",
    "sequence_no",
    "active_packets",
    "idle_packets",
    "ro_ack",
    "ro_data",
    "in_ready",
];
const O_DONE: usize = 0;
const O_EINF: usize = 1;
const O_EST: usize = 2;
const O_BANK: usize = 3;
const O_SWP: usize = 4;
const O_CLR: usize = 5;
const O_EPOCH: usize = 6;
const O_SEQ: usize = 7;
const O_ACT: usize = 8;
const O_IDLE: usize = 10;
const O_ACK: usize = 12;
const O_DATA: usize = 13;
const O_READY: usize = 14;
const OUT_ROW: usize = 15;

fn u64_at(row: &[u32], i: usize) -> u64 {
    row[i] as u64 | (row[i + 1] as u64) << 32
}

struct Rig {
    m: Model,
    geometry: TowerGeometry,
    inputs: Vec<PortId>,
    outputs: Vec<PortId>,
    /// One software Tower per epoch (index = epoch number), CM or ACU per packet mode.
    refs: Vec<Tower>,
    mode: InsertMode,
    /// Output row of the previous clock (what a packet entering now sees).
    last: Vec<u32>,
    /// Expected (epoch, estimate) of every packet in flight (None: `estimate_inf`).
    pending: VecDeque<(u32, Option<u64>)>,
    sent: u64,
    done: u64,
    estimates_checked: u64,
    /// Packets tagged with each epoch.
    per_epoch: Vec<u64>,
    /// Keys of the last 16 packets (and their epoch).
    recent: VecDeque<(u32, FlowKey)>,
    /// Idle-bank counters compared.
    counters_checked: u64,
}

impl Rig {
    fn new(m: Model, geometry: TowerGeometry, mode: InsertMode) -> Self {
        report_build(m.build());
        let inputs = IN_PORTS.iter().map(|n| m.port(n)).collect();
        let outputs = OUT_PORTS.iter().map(|n| m.port(n)).collect();
        let mut rig = Rig {
            m,
            geometry,
            inputs,
            outputs,
            refs: Vec::new(),
            mode,
            last: vec![0; OUT_ROW],
            pending: VecDeque::new(),
            sent: 0,
            done: 0,
            estimates_checked: 0,
            per_epoch: Vec::new(),
            recent: VecDeque::new(),
            counters_checked: 0,
        };
        rig.m.reset(2);
        // After reset: epoch 0, bank 0, nothing pending, no packets.
        let out = rig.m.stream(&rig.inputs, &[0; IN_ROW], &rig.outputs);
        assert_eq!(&out[O_BANK..O_ACK], &[0; O_ACK - O_BANK], "state after reset");
        rig.last = out;
        rig
    }

    fn of_config<
        const W0: usize,
        const A0: usize,
        const W1: usize,
        const A1: usize,
        const W2: usize,
        const A2: usize,
        const AM: usize,
    >(
        pairs: &[(u8, u32); 3],
        mode: InsertMode,
    ) -> Self {
        let g = TowerGeometry::from_widths_depths(pairs);
        let name = format!("tower_banked_{W0}x{A0}_{W1}x{A1}_{W2}x{A2}");
        let v = flow::to_verilog(&name, &mut TowerBanked::<W0, A0, W1, A1, W2, A2, AM>::new(&g).unwrap())
            .unwrap();
        Rig::new(Model::of_verilog(&name, &v).unwrap_or_else(|e| panic!("{e}")), g, mode)
    }

    fn depths(&self) -> Vec<u32> {
        self.geometry.arrays.iter().map(|a| a.depth).collect()
    }

    fn clear_clocks(&self) -> usize {
        *self.depths().iter().max().unwrap() as usize
    }

    /// Streams `rows` (one per clock), feeds each packet to the reference of the epoch the
    /// device tagged it with (EPOCH of the previous clock), checks `in_ready`, `done` order,
    /// estimates and `active_bank == epoch & 1`; returns the output rows.
    fn stream(&mut self, rows: &[Row]) -> Vec<u32> {
        let mut words = Vec::with_capacity(rows.len() * IN_ROW);
        for r in rows {
            match r.packet {
                Some((k, acu)) => {
                    let v = key_to_u128(&k.0);
                    words.extend((0..4).map(|i| (v >> (32 * i)) as u32));
                    words.extend([1, acu as u32]);
                }
                None => words.extend([0; 6]),
            }
            let (ra, ri) = r.ro.unwrap_or((0, 0));
            words.extend([r.swap as u32, r.clear as u32, r.ro.is_some() as u32, ra, ri]);
        }
        let out = self.m.stream(&self.inputs, &words, &self.outputs);
        for (n, r) in rows.iter().enumerate() {
            let row = &out[n * OUT_ROW..(n + 1) * OUT_ROW];
            let before = if n == 0 { &self.last[..] } else { &out[(n - 1) * OUT_ROW..n * OUT_ROW] };
            let (e, bank) = (before[O_EPOCH], before[O_BANK]);
            assert_eq!(bank, e & 1, "active bank = EPOCH & 1");
            if let Some((k, acu)) = r.packet {
                self.insert(e, &k, acu);
            }
            assert_eq!(row[O_READY], 1, "in_ready");
            if row[O_DONE] == 1 {
                let (_, want) = self.pending.pop_front().expect("done without a packet in flight");
                self.done += 1;
                match want {
                    Some(q) => assert_eq!((row[O_EINF], row[O_EST] as u64), (0, q), "estimate"),
                    None => assert_eq!(row[O_EINF], 1, "estimate_inf"),
                }
                self.estimates_checked += 1;
            }
        }
        self.last = out[out.len() - OUT_ROW..].to_vec();
        out
    }

    fn insert(&mut self, epoch: u32, k: &FlowKey, acu: bool) {
        let e = epoch as usize;
        while self.refs.len() <= e {
            self.refs.push(Tower::new(self.geometry.clone(), self.mode).unwrap());
            self.per_epoch.push(0);
        }
        assert_eq!(acu, self.mode == InsertMode::Acu, "one mode per run");
        let t = &mut self.refs[e];
        t.insert(k);
        let idx = t.indices(k);
        let g = t.geometry();
        let all_overflowed = (0..ARRAYS).all(|a| t.counter(a, idx[a]) == g.arrays[a].marker());
        let want = (!all_overflowed).then(|| t.query(k));
        self.pending.push_back((epoch, want));
        self.per_epoch[e] += 1;
        self.sent += 1;
        self.recent.push_back((epoch, *k));
        if self.recent.len() > 16 {
            self.recent.pop_front();
        }
    }
}

/// Every packet repeats the flow of the packet 1..=16 places earlier or, with probability
/// 1/`fresh_every`, starts a new flow.
fn adversarial(packets: usize, seed: u64, fresh_every: u64) -> Vec<FlowKey> {
    let mut rng = KeyStream::new(seed);
    let mut trace: Vec<FlowKey> = Vec::with_capacity(packets);
    for _ in 0..packets {
        let gap = 1 + (rng.next_u64() % 16) as usize;
        let k = match trace.len().checked_sub(gap) {
            Some(i) if !rng.next_u64().is_multiple_of(fresh_every) => trace[i],
            _ => rng.next_key(),
        };
        trace.push(k);
    }
    trace
}

/// Traffic source: the trace, one packet per row.
struct Traffic {
    keys: Vec<FlowKey>,
    next: usize,
    acu: bool,
}

impl Traffic {
    fn row(&mut self) -> Row {
        let k = self.keys[self.next % self.keys.len()];
        self.next += 1;
        Row::packet(k, self.acu)
    }
    fn rows(&mut self, n: usize) -> Vec<Row> {
        (0..n).map(|_| self.row()).collect()
    }
}

/// Runs `epochs` epochs of `per_epoch` packets with a packet on every clock; after each swap
/// reads out and clears the idle bank while traffic continues. Returns packets sent.
fn run_epochs(rig: &mut Rig, traffic: &mut Traffic, per_epoch: usize, epochs: u32, what: &str) {
    let t0 = Instant::now();
    let c0 = rig.m.cycles();
    let sent0 = rig.sent;
    let depths = rig.depths();
    let full_read: usize = depths.iter().sum::<u32>() as usize;
    let clear = rig.clear_clocks();
    let after_swap = DRAIN + 16 * ARRAYS * 2 + full_read + 2 + RO_LATENCY + 1 + clear;
    assert!(per_epoch > after_swap + 1, "{what}: epoch of {per_epoch} packets too short for {after_swap}");
    let mut in_epoch = rig.last[O_ACT] as usize; // packets of the current epoch so far
    for _ in 0..epochs {
        let e = rig.last[O_EPOCH];
        let seq = rig.last[O_SEQ];
        assert_eq!(u64_at(&rig.last, O_ACT), in_epoch as u64, "{what}: ACTIVE_PACKETS of epoch {e}");
        // Traffic up to the swap; the swap row's packet is the epoch's last.
        let mut rows = traffic.rows(per_epoch - in_epoch);
        rows.last_mut().unwrap().swap = true;
        let out = rig.stream(&rows);
        let s = &out[out.len() - OUT_ROW..];
        assert_eq!((s[O_SWP], s[O_EPOCH], s[O_BANK]), (1, e + 1, (e + 1) & 1), "{what}: swap of epoch {e}");
        assert_eq!(
            (u64_at(s, O_IDLE), u64_at(s, O_ACT)),
            (per_epoch as u64, 0),
            "{what}: counts at swap {e}"
        );
        assert_eq!(rig.per_epoch[e as usize], per_epoch as u64, "{what}: packets tagged with epoch {e}");
        let hot: Vec<FlowKey> = rig.recent.iter().filter(|(pe, _)| *pe == e).map(|(_, k)| *k).collect();
        assert_eq!(hot.len(), 16);
        // Drain: SWAP_PENDING for exactly DRAIN clocks, then SEQUENCE + 1.
        let out = rig.stream(&traffic.rows(DRAIN));
        for n in 0..DRAIN {
            let r = &out[n * OUT_ROW..(n + 1) * OUT_ROW];
            let draining = n + 1 < DRAIN;
            assert_eq!(
                r[O_SWP], draining as u32,
                "{what}: swap_pending {n} clocks after the swap of epoch {e}"
            );
            assert_eq!(r[O_SEQ], seq + !draining as u32, "{what}: sequence during the drain of epoch {e}");
        }
        // Readout from the first idle clock: the last packets' counters first, twice, then
        // every counter; packets keep coming.
        let t = &rig.refs[e as usize];
        let mut reads: Vec<(u32, u32)> = Vec::new();
        // Newest packet first, last array first: the first read is the counter the epoch's
        // last packet wrote last (in the drain's last-but-one clock).
        for k in hot.iter().rev() {
            let idx = t.indices(k);
            reads.extend((0..ARRAYS as u32).rev().map(|a| (a, idx[a as usize])));
        }
        let again = reads.clone();
        reads.extend(again);
        for (a, &d) in depths.iter().enumerate() {
            reads.extend((0..d).map(|i| (a as u32, i)));
        }
        reads.push((3, 0)); // no such array: reads 0
        reads.push((3, 1));
        let mut rows = traffic.rows(reads.len() + RO_LATENCY);
        for (r, &ro) in rows.iter_mut().zip(&reads) {
            r.ro = Some(ro);
        }
        let out = rig.stream(&rows);
        let t = &rig.refs[e as usize];
        for (n, &(a, i)) in reads.iter().enumerate() {
            let r = &out[(n + RO_LATENCY - 1) * OUT_ROW..(n + RO_LATENCY) * OUT_ROW];
            let want = if a < 3 { t.counter(a as usize, i) } else { 0 };
            assert_eq!(
                (r[O_ACK], r[O_DATA]),
                (1, want),
                "{what}: epoch {e} array {a} counter {i} (read {n})"
            );
            assert_eq!(r[O_SWP] | r[O_CLR], 0, "{what}: status during the readout");
        }
        for n in 0..RO_LATENCY - 1 {
            assert_eq!(out[n * OUT_ROW + O_ACK], 0, "{what}: ack before the first answer");
        }
        assert_eq!(u64_at(&rig.last, O_IDLE), per_epoch as u64, "{what}: IDLE_PACKETS of epoch {e}");
        rig.counters_checked += full_read as u64;
        // Clear: CLEAR_BUSY from the next clock for `clear` clocks, then SEQUENCE + 1 and
        // IDLE_PACKETS = 0.
        let mut rows = traffic.rows(1 + clear);
        rows[0].clear = true;
        let out = rig.stream(&rows);
        for n in 0..=clear {
            let r = &out[n * OUT_ROW..(n + 1) * OUT_ROW];
            let busy = n < clear;
            assert_eq!(
                r[O_CLR], busy as u32,
                "{what}: clear_busy {n} clocks after the clear pulse (epoch {e})"
            );
            assert_eq!(r[O_SEQ], seq + 1 + !busy as u32, "{what}: sequence during the clear");
            assert_eq!(u64_at(r, O_IDLE), if busy { per_epoch as u64 } else { 0 }, "{what}: IDLE_PACKETS");
        }
        in_epoch = DRAIN + rows.len() + reads.len() + RO_LATENCY;
        // The finished epoch's reference is no longer needed.
        rig.refs[e as usize] = Tower::new(rig.geometry.clone(), rig.mode).unwrap();
    }
    let cycles = rig.m.cycles() - c0;
    let packets = rig.sent - sent0;
    assert_eq!(cycles, packets, "{what}: a packet on every clock");
    // Every packet of a finished epoch has landed; the in-flight ones are the last LATENCY.
    assert!(rig.sent - rig.done <= DRAIN as u64, "{what}: packets completed");
    let total: u64 = rig.per_epoch.iter().sum();
    assert_eq!(total, rig.sent, "{what}: per-epoch counts add up");
    assert_eq!(rig.estimates_checked, rig.done, "{what}: every packet's estimate checked");
    let wall = t0.elapsed().as_secs_f64();
    eprintln!(
        "{what}: {epochs} epochs, {packets} packets in {cycles} clocks ({:.4} clocks/packet, {:.2} Mclk/s \
         simulated), {} idle-bank counters compared, {} estimates checked",
        cycles as f64 / packets as f64,
        cycles as f64 / wall / 1e6,
        rig.counters_checked,
        rig.estimates_checked
    );
}

/// Final check of a run: the sum of the per-epoch counts the device reported (IDLE_PACKETS
/// at each swap, checked above, plus ACTIVE_PACKETS now) is the number of packets sent.
fn check_total(rig: &Rig, epochs_done: u32, per_epoch: usize) {
    let active = u64_at(&rig.last, O_ACT);
    assert_eq!(
        epochs_done as u64 * per_epoch as u64 + active,
        rig.sent,
        "device counts add up to packets sent"
    );
}

/// Small geometry (64/32/16 counters: readout 112 clocks, clear 64): 100 epochs of 10k
/// adversarial packets, CM and ACU.
#[test]
fn banked_small_geometry_100_epochs_cm_and_acu() {
    let pairs = [(8u8, 64u32), (16, 32), (32, 16)];
    for (mode, seed) in [(InsertMode::Cm, 0xe90c), (InsertMode::Acu, 0xe90d)] {
        let mut rig = Rig::of_config::<8, 6, 16, 5, 32, 4, 6>(&pairs, mode);
        let acu = mode == InsertMode::Acu;
        let mut traffic = Traffic { keys: adversarial(1_100_000, seed, 8), next: 0, acu };
        let what = format!("small {mode:?}");
        run_epochs(&mut rig, &mut traffic, 10_000, 100, &what);
        check_total(&rig, 100, 10_000);
    }
}

/// Tiny depths (16/8/4): every packet collides with the packets 1..16 clocks ahead, across
/// every swap; 100 epochs of 10k, ACU (the omega chain crosses banks only if the bank bit is
/// lost).
#[test]
fn banked_tiny_depths_adversarial_100_epochs() {
    let pairs = [(8u8, 16u32), (16, 8), (32, 4)];
    let mut rig = Rig::of_config::<8, 4, 16, 3, 32, 2, 4>(&pairs, InsertMode::Acu);
    let mut traffic = Traffic { keys: adversarial(1_100_000, 0x7a1, 4), next: 0, acu: true };
    run_epochs(&mut rig, &mut traffic, 10_000, 100, "tiny ACU");
    check_total(&rig, 100, 10_000);
}

/// The board geometry (the registered block): readout of 114688 counters and a 65536-clock
/// clear per epoch, so epochs of 200k packets; 5 epochs (both banks read twice, each after
/// a clear), CM.
#[test]
fn banked_board_geometry() {
    let m = Model::of_block("tower_banked").unwrap_or_else(|e| panic!("{e}"));
    let mut rig = Rig::new(m, TowerGeometry::sketchint_fpga(), InsertMode::Cm);
    let mut traffic = Traffic { keys: adversarial(1_200_000, 0xb0a2d, 2), next: 0, acu: false };
    run_epochs(&mut rig, &mut traffic, 200_000, 5, "board CM");
    check_total(&rig, 5, 200_000);
}

/// The engine's documented semantics as a cycle model (state after each clock).
#[derive(Default, Clone, Debug, PartialEq)]
struct EngineModel {
    epoch: u32,
    sequence: u32,
    active: u64,
    idle: u64,
    swap_waiting: bool,
    clear_waiting: bool,
    drain_left: u32,
    clear_at: Option<u32>,
}

impl EngineModel {
    fn step(&mut self, valid: bool, swap: bool, clear: bool, drain: u32, sweep: u32) {
        let draining = self.drain_left > 0;
        let clearing = self.clear_at.is_some();
        // Pulses for an operation already pending are ignored.
        let swap_req = self.swap_waiting || (swap && !draining);
        let clear_req = self.clear_waiting || (clear && !clearing);
        let start_clear = clear_req && !draining && !clearing;
        let flip = swap_req && !draining && !clearing && !start_clear;
        let mut next = self.clone();
        next.swap_waiting = swap_req && !flip;
        next.clear_waiting = clear_req && !start_clear;
        if flip {
            next.epoch = self.epoch.wrapping_add(1);
            next.idle = self.active + valid as u64;
            next.active = 0;
            next.drain_left = drain;
        } else {
            next.active = self.active + valid as u64;
            next.drain_left = self.drain_left.saturating_sub(1);
        }
        if self.drain_left == 1 {
            next.sequence = next.sequence.wrapping_add(1);
        }
        if let Some(a) = self.clear_at {
            if a + 1 == sweep {
                next.clear_at = None;
                next.sequence = next.sequence.wrapping_add(1);
                next.idle = 0;
            } else {
                next.clear_at = Some(a + 1);
            }
        }
        if start_clear {
            next.clear_at = Some(0);
        }
        *self = next;
    }

    /// The engine's outputs: active_bank, swap_pending, clear_busy, epoch, sequence,
    /// active (2 words), idle (2 words), clr, clr_bank, clr_addr.
    fn outputs(&self) -> [u32; 12] {
        [
            self.epoch & 1,
            (self.swap_waiting || self.drain_left > 0) as u32,
            (self.clear_waiting || self.clear_at.is_some()) as u32,
            self.epoch,
            self.sequence,
            self.active as u32,
            (self.active >> 32) as u32,
            self.idle as u32,
            (self.idle >> 32) as u32,
            self.clear_at.is_some() as u32,
            !self.epoch & 1,
            self.clear_at.unwrap_or(0),
        ]
    }
}

/// `EpochEngine<4>` (16-clock sweep) with drain 8 against [`EngineModel`] on every clock:
/// 400k clocks of random valid bits and SWAP/CLEAR pulses at several densities (dense
/// enough that pulses land in every state), plus directed overlaps.
#[test]
fn engine_matches_the_documented_semantics() {
    const DRAIN_T: u32 = 8;
    const SWEEP: u32 = 16;
    let v = flow::to_verilog("epoch_engine_t", &mut EpochEngine::<4>::new(DRAIN_T as usize)).unwrap();
    let mut m = Model::of_verilog("epoch_engine_t", &v).unwrap_or_else(|e| panic!("{e}"));
    report_build(m.build());
    let inputs: Vec<PortId> = ["valid", "swap", "clear"].iter().map(|n| m.port(n)).collect();
    let outputs: Vec<PortId> = [
        "active_bank",
        "swap_pending",
        "clear_busy",
        "epoch",
        "sequence_no",
        "active_packets",
        "idle_packets",
        "clr",
        "clr_bank",
        "clr_addr",
    ]
    .iter()
    .map(|n| m.port(n))
    .collect();
    m.reset(2);
    let mut model = EngineModel::default();
    let mut rng = KeyStream::new(0xe9);
    let mut rows: Vec<[u32; 3]> = Vec::new();
    // Directed: swap + clear together; swap during the clear; clear during the drain;
    // repeated swap pulses during a drain; repeated clears during a clear.
    let directed: &[(usize, bool, bool)] = &[
        (0, true, true),
        (3, true, false),
        (30, true, false),
        (31, false, true),
        (33, true, false),
        (34, true, true),
        (60, false, true),
        (61, false, true),
        (70, true, false),
    ];
    for n in 0..100 {
        let (s, c) = directed.iter().find(|d| d.0 == n).map_or((false, false), |d| (d.1, d.2));
        rows.push([(n % 3 != 0) as u32, s as u32, c as u32]);
    }
    for density in [2u64, 5, 20, 100, 1000] {
        for _ in 0..80_000 {
            let r = rng.next_u64();
            rows.push([
                (r & 1) as u32,
                (r >> 8).is_multiple_of(density) as u32,
                (r >> 24).is_multiple_of(density * 2) as u32,
            ]);
        }
    }
    let words: Vec<u32> = rows.iter().flatten().copied().collect();
    let out = m.stream(&inputs, &words, &outputs);
    let (mut swaps, mut clears, mut deferred) = (0u32, 0u32, 0u32);
    for (n, r) in rows.iter().enumerate() {
        let before = model.clone();
        model.step(r[0] == 1, r[1] == 1, r[2] == 1, DRAIN_T, SWEEP);
        swaps += (model.epoch != before.epoch) as u32;
        clears += (before.clear_at.is_some() && model.clear_at.is_none()) as u32;
        deferred += (model.swap_waiting && !before.swap_waiting) as u32;
        let got = &out[n * 12..(n + 1) * 12];
        assert_eq!(got, model.outputs(), "clock {n}: inputs {r:?}, model {model:?}");
    }
    eprintln!(
        "engine: {} clocks, {swaps} swaps, {clears} clears, {deferred} swaps deferred by a clear",
        rows.len()
    );
    assert!(swaps > 1000 && clears > 1000 && deferred > 100);
}
