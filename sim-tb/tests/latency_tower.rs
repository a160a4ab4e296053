//! The generated latency tower (`hdl::per_switch::latency_tower`) under Verilator against
//! the host's `LatencyTower`, bit for bit, in both modes and both banks:
//! - every hop's `done` estimates (count and sum before the hop, or their INF flags) equal
//!   `LatencyTower::insert`'s return value, and `done` comes exactly `LATENCY` clocks after
//!   the hop entered (its entry clock counted) (one hop per clock, no stall);
//! - at every epoch end the bank swaps under traffic (hops of both banks in flight), the
//!   old bank is read back bucket by bucket through the readout port while the new bank
//!   takes a hop every clock, every cell is compared, then the old bank is cleared by the
//!   sweep (the next comparison of that bank proves the zeros);
//! - traffic: random hops over many keys, hops repeating the key of the hop 1..4 clocks
//!   earlier (every forwarding distance and the RAM just behind it), per-hop mode changes,
//!   bubbles, small units and units that overflow a 32-bit sum in one hop; a small
//!   geometry (2/3/4-bit counts, 3/5/8-bit sums) where every cell reaches its marker, and
//!   the NIC default.
//!
//! `LT_HOPS_X` (default 1) multiplies the hop counts for a longer run.
use smartnic::sketch::latency_tower::{HopKey, LatencyTower, PairEstimate};
use smartnic_contract::geometry::InsertMode;
use smartnic_contract::per_switch::{latency_units, switch_key, LatencyTowerGeometry};
use smartnic_contract::vectors::KeyStream;
use smartnic_hdl::flow;
use smartnic_hdl::per_switch::hop_hash::hop_key_to_u128;
use smartnic_hdl::per_switch::latency_tower::{LatencyTowerPipeline, ARRAYS, LATENCY, READ_LATENCY};
use smartnic_hdl::sketch::TWO_BANKS;
use smartnic_sim_tb::{Model, PortId};
use std::collections::VecDeque;
use std::time::Instant;

/// One hop: key, latency units, ACU (else CM).
#[derive(Clone, Copy, Debug)]
struct Hop {
    key: HopKey,
    units: u32,
    acu: bool,
}

/// One clock of input.
#[derive(Clone, Copy, Debug, Default)]
struct Row {
    hop: Option<Hop>,
    bank: usize,
    /// Read bucket `rd_addr[i]` of bank `rd_bank` in every array `i` with `rd_arrays[i]`.
    rd_arrays: [bool; ARRAYS],
    rd_bank: usize,
    rd_addr: [u32; ARRAYS],
    /// Clear bucket `clr_addr[i]` of every array of this bank.
    clr: Option<usize>,
    clr_addr: [u32; ARRAYS],
}

const INPUTS: [&str; 14] = [
    "key",
    "valid",
    "units",
    "mode",
    "bank",
    "rd_bank",
    "rd_addr0",
    "rd_addr1",
    "rd_addr2",
    "clr",
    "clr_bank",
    "clr_addr0",
    "clr_addr1",
    "clr_addr2",
];
const IN_ROW: usize = 4 + INPUTS.len() - 1;
const OUTPUTS: [&str; 13] = [
    "in_ready",
    "done",
    "count_inf",
    "count",
    "sum_inf",
    "sum",
    "idle",
    "rd_count0",
    "rd_sum0",
    "rd_count1",
    "rd_sum1",
    "rd_count2",
    "rd_sum2",
];
const OUT_ROW: usize = OUTPUTS.len();

/// A readout request: the cycle its data shows and the expected (count, sum) per array.
struct Read {
    due: u64,
    want: [Option<(u32, u32)>; ARRAYS],
    what: (usize, [u32; ARRAYS]),
}

/// A model, its two banks' references and the running checks.
struct Rig {
    m: Model,
    geometry: LatencyTowerGeometry,
    banks: [LatencyTower; 2],
    inputs: Vec<PortId>,
    outputs: Vec<PortId>,
    /// Expected estimates of the hops in flight, with the cycle each entered.
    pending: VecDeque<(u64, PairEstimate)>,
    reads: VecDeque<Read>,
    sent: u64,
    done: u64,
    cells_compared: u64,
    rows: u64,
}

impl Rig {
    fn new(m: Model, geometry: LatencyTowerGeometry) -> Self {
        match m.build().build_seconds {
            Some(s) => eprintln!("built {} in {s:.1} s", m.build().block),
            None => eprintln!("reused {}", m.build().block),
        }
        let inputs = INPUTS.iter().map(|n| m.port(n)).collect();
        let outputs = OUTPUTS.iter().map(|n| m.port(n)).collect();
        let tower = || LatencyTower::new(geometry.clone(), InsertMode::Cm).unwrap();
        let mut rig = Rig {
            m,
            banks: [tower(), tower()],
            geometry,
            inputs,
            outputs,
            pending: VecDeque::new(),
            reads: VecDeque::new(),
            sent: 0,
            done: 0,
            cells_compared: 0,
            rows: 0,
        };
        rig.m.reset(2);
        rig
    }

    /// The block `latency_tower` (NIC default geometry).
    fn nic() -> Self {
        Rig::new(
            Model::of_block("latency_tower").unwrap_or_else(|e| panic!("{e}")),
            LatencyTowerGeometry::nic_default(),
        )
    }

    /// Count cells of 2/3/4 bits, sum cells of 3/5/8 bits, 16/8/4 buckets: every cell
    /// saturates within a few hops and every hop collides.
    fn small() -> Self {
        let g = LatencyTowerGeometry::from_cells(&[(2, 3, 16), (3, 5, 8), (4, 8, 4)], 0);
        let name = "latency_tower_small";
        let mut p = LatencyTowerPipeline::<2, 3, 4, 3, 5, 3, 4, 8, 2, TWO_BANKS>::new(&g).unwrap();
        let v = flow::to_verilog(name, &mut p).unwrap();
        Rig::new(Model::of_verilog(name, &v).unwrap_or_else(|e| panic!("{e}")), g)
    }

    fn depths(&self) -> [u32; ARRAYS] {
        std::array::from_fn(|a| self.geometry.arrays[a].depth)
    }

    /// The reference's side of one row, and its input words.
    fn feed(&mut self, row: &Row, cycle: u64, words: &mut Vec<u32>) {
        let (key, valid, units, acu) = match row.hop {
            Some(h) => {
                let mode = if h.acu { InsertMode::Acu } else { InsertMode::Cm };
                let bank = &mut self.banks[row.bank];
                if bank.mode() != mode {
                    *bank = switch_mode(bank, mode);
                }
                let before = bank.insert(&h.key, h.units as u64);
                self.pending.push_back((cycle, before));
                self.sent += 1;
                (hop_key_to_u128(&h.key), 1, h.units, h.acu as u32)
            }
            None => (0, 0, 0, 0),
        };
        if row.rd_arrays.contains(&true) {
            let bank = &self.banks[row.rd_bank];
            let want = std::array::from_fn(|a| row.rd_arrays[a].then(|| bank.bucket(a, row.rd_addr[a])));
            let due = cycle + READ_LATENCY as u64 - 1;
            self.reads.push_back(Read { due, want, what: (row.rd_bank, row.rd_addr) });
        }
        if let Some(c) = row.clr {
            for a in 0..ARRAYS {
                self.banks[c].set_bucket(a, row.clr_addr[a], 0, 0);
            }
        }
        words.extend((0..4).map(|i| (key >> (32 * i)) as u32));
        words.extend([valid, units, acu, row.bank as u32, row.rd_bank as u32]);
        words.extend(row.rd_addr);
        words.extend([row.clr.is_some() as u32, row.clr.unwrap_or(0) as u32]);
        words.extend(row.clr_addr);
    }

    /// Runs `rows`, one per clock, checking every output row.
    fn run(&mut self, rows: &[Row]) {
        for chunk in rows.chunks(1 << 16) {
            let start = self.m.cycles();
            let mut words = Vec::with_capacity(chunk.len() * IN_ROW);
            for (k, row) in chunk.iter().enumerate() {
                self.feed(row, start + k as u64, &mut words);
            }
            let out = self.m.stream(&self.inputs, &words, &self.outputs);
            for (k, o) in out.chunks(OUT_ROW).enumerate() {
                self.check(start + k as u64, o);
            }
            self.rows += chunk.len() as u64;
        }
    }

    fn check(&mut self, cycle: u64, o: &[u32]) {
        assert_eq!(o[0], 1, "in_ready dropped at cycle {cycle}");
        if o[1] == 1 {
            let (entered, want) = self.pending.pop_front().expect("done without a hop in flight");
            // Inputs are sampled at a clock's edge, outputs read after it: the hop's last
            // write clock (the LATENCY-th, counting its entry clock) is output row + 2.
            assert_eq!(cycle - entered, LATENCY as u64 - 2, "hop {} done late: a stall", self.done);
            let got = PairEstimate {
                count: (o[2] == 0).then_some(o[3] as u64),
                sum: (o[4] == 0).then_some(o[5] as u64),
            };
            assert_eq!(got, want, "estimates of hop {} (cycle {cycle})", self.done);
            self.done += 1;
        }
        if self.reads.front().is_some_and(|r| r.due == cycle) {
            let r = self.reads.pop_front().unwrap();
            for (a, want) in r.want.iter().enumerate() {
                if let Some(w) = want {
                    let got = (o[7 + 2 * a], o[8 + 2 * a]);
                    assert_eq!(got, *w, "bank {} array {a} bucket {}: (count, sum)", r.what.0, r.what.1[a]);
                    self.cells_compared += 2;
                }
            }
        }
    }

    /// Bubbles until every hop is done; then the pipeline must say idle.
    fn drain(&mut self) {
        self.run(&[Row::default(); LATENCY]);
        assert_eq!(self.done, self.sent, "hops still in flight {LATENCY} clocks after the last");
        let idle = self.m.port("idle");
        assert_eq!(self.m.get(idle), 1, "idle after the drain");
    }

    /// Readout (or clear) rows of `bank` for every bucket of every array, beside hops
    /// of the other bank from `traffic`.
    fn sweep_rows(&self, bank: usize, clear: bool, traffic: &mut dyn FnMut() -> Option<Hop>) -> Vec<Row> {
        let depths = self.depths();
        let longest = *depths.iter().max().unwrap();
        (0..longest)
            .map(|n| {
                let addr = std::array::from_fn(|a| n % depths[a]);
                let mut row = Row { hop: traffic(), bank: 1 - bank, ..Row::default() };
                if clear {
                    (row.clr, row.clr_addr) = (Some(bank), addr);
                } else {
                    let arrays = std::array::from_fn(|a| n < depths[a]);
                    (row.rd_arrays, row.rd_bank, row.rd_addr) = (arrays, bank, addr);
                }
                row
            })
            .collect()
    }

    /// The epoch end: hops switch from `old` to the other bank without a gap, `LATENCY`
    /// hops later (the old bank drained) the old bank is read back and compared, then
    /// cleared, all under traffic.
    fn swap_read_clear(&mut self, old: usize, traffic: &mut dyn FnMut() -> Option<Hop>) {
        let drain: Vec<Row> =
            (0..LATENCY).map(|_| Row { hop: traffic(), bank: 1 - old, ..Row::default() }).collect();
        self.run(&drain);
        let read = self.sweep_rows(old, false, traffic);
        self.run(&read);
        let clear = self.sweep_rows(old, true, traffic);
        self.run(&clear);
    }

    /// Drains, then reads both banks back (final comparison).
    fn final_compare(&mut self) {
        self.drain();
        for bank in 0..2 {
            let mut rows = self.sweep_rows(bank, false, &mut || None);
            rows.extend([Row::default(); READ_LATENCY]);
            self.run(&rows);
        }
        assert!(self.reads.is_empty());
    }

    /// Cells equal to their marker in `bank` (count, sum), over all arrays.
    fn markers(&self, bank: usize) -> (u32, u32) {
        let mut n = (0, 0);
        for (a, g) in self.geometry.arrays.iter().enumerate() {
            for i in 0..g.depth {
                let (c, s) = self.banks[bank].bucket(a, i);
                n.0 += (c == g.count_marker()) as u32;
                n.1 += (s == g.sum_marker()) as u32;
            }
        }
        n
    }

    fn report(&self, what: &str, t: Instant) {
        eprintln!(
            "{what}: {} hops in {} clocks, {} done estimates (each LATENCY clocks after its hop) and {} \
             cells compared, {:.1} s",
            self.sent,
            self.rows,
            self.done,
            self.cells_compared,
            t.elapsed().as_secs_f64()
        );
    }
}

/// The same cells under the other mode (the hardware's mode travels with each hop).
fn switch_mode(t: &LatencyTower, mode: InsertMode) -> LatencyTower {
    let mut u = LatencyTower::new(t.geometry().clone(), mode).unwrap();
    for a in 0..ARRAYS {
        assert!(u.load_array(a, &t.array_bytes(a)));
    }
    u
}

fn scale() -> u64 {
    std::env::var("LT_HOPS_X").ok().and_then(|v| v.parse().ok()).unwrap_or(1).max(1)
}

/// Mode of hop `n`: 0 = CM, 1 = ACU, 2 = changing every 1..8 hops.
fn mode_of(policy: u8, rng: &mut KeyStream) -> bool {
    match policy {
        0 => false,
        1 => true,
        _ => rng.next_u64() % 8 < 4,
    }
}

/// Random traffic: keys from a pool (skewed to the pool's head), half the hops repeating
/// the key of the hop 1..4 clocks earlier, units mostly small with rare huge ones, a
/// bubble every `bubble_every` hops on average (0: none).
struct Traffic {
    rng: KeyStream,
    pool: Vec<HopKey>,
    last: VecDeque<HopKey>,
    policy: u8,
    acu: bool,
    small_units: u64,
    bubble_every: u64,
}

impl Traffic {
    fn new(seed: u64, keys: usize, small_units: u64, bubble_every: u64) -> Self {
        let mut rng = KeyStream::new(seed);
        let flows: Vec<_> = (0..keys.div_ceil(8)).map(|_| rng.next_key()).collect();
        let pool =
            (0..keys).map(|n| switch_key((rng.next_u64() % 64) as u16, &flows[n % flows.len()])).collect();
        Traffic { rng, pool, last: VecDeque::new(), policy: 0, acu: false, small_units, bubble_every }
    }

    fn units(&mut self) -> u32 {
        match self.rng.next_u64() % 200 {
            0 => u32::MAX - (self.rng.next_u64() % 4) as u32,
            1..=3 => (self.rng.next_u64() >> 32) as u32,
            4..=20 => latency_units((self.rng.next_u64() % 2_000_000) as u32, 4) as u32,
            _ => (self.rng.next_u64() % (self.small_units + 1)) as u32,
        }
    }

    fn key(&mut self) -> HopKey {
        let r = self.rng.next_u64();
        let key = match (r % 8) as usize {
            d @ 1..=4 if self.last.len() >= d => self.last[d - 1],
            _ => {
                // Skewed: the square of a uniform favours the pool's head.
                let u = (r >> 8) % self.pool.len() as u64;
                self.pool[(u * u / self.pool.len() as u64) as usize]
            }
        };
        self.last.push_front(key);
        self.last.truncate(4);
        key
    }

    fn next(&mut self) -> Option<Hop> {
        if self.bubble_every > 0 && self.rng.next_u64().is_multiple_of(self.bubble_every) {
            // A bubble is a clock too: the forwarding distances count it.
            self.last.push_front([0xff; 15]);
            self.last.truncate(4);
            return None;
        }
        if self.policy == 2 && self.rng.next_u64().is_multiple_of(4) {
            self.acu = !self.acu;
        } else if self.policy < 2 {
            self.acu = mode_of(self.policy, &mut self.rng);
        }
        let (key, units) = (self.key(), self.units());
        Some(Hop { key, units, acu: self.acu })
    }

    /// `n` rows of this traffic on `bank`.
    fn rows(&mut self, n: u64, bank: usize) -> Vec<Row> {
        (0..n).map(|_| Row { hop: self.next(), bank, ..Row::default() }).collect()
    }
}

/// Epochs of random traffic, the bank swapping under traffic each time, the old bank read
/// back and cleared while the new one takes hops; modes CM, ACU and mixed in turn.
fn epochs(rig: &mut Rig, traffic: &mut Traffic, epochs: u64, hops: impl Fn(&mut KeyStream) -> u64) {
    for e in 0..epochs {
        let bank = (e % 2) as usize;
        traffic.policy = (e % 3) as u8;
        let n = hops(&mut traffic.rng);
        let rows = traffic.rows(n, bank);
        rig.run(&rows);
        let mut next = || traffic.next();
        rig.swap_read_clear(bank, &mut next);
    }
    rig.final_compare();
}

/// Small cells: 2/3/4-bit counts and 3/5/8-bit sums over 16/8/4 buckets, >= 200k hops in
/// epochs of 20..3000 hops (short epochs stay below the markers, long ones reach them
/// everywhere), CM, ACU and per-hop mixed modes, bubbles.
#[test]
fn small_cells_every_marker_both_modes_both_banks() {
    let t = Instant::now();
    let mut rig = Rig::small();
    let mut traffic = Traffic::new(0x1a7, 600, 3, 16);
    let mut saturated = (0, 0);
    let target = 200_000 * scale();
    let mut e = 0u64;
    while rig.sent < target {
        let bank = (e % 2) as usize;
        traffic.policy = (e % 3) as u8;
        let n = 20 + traffic.rng.next_u64() % 3000;
        rig.run(&traffic.rows(n, bank));
        let m = rig.markers(bank);
        saturated = (saturated.0.max(m.0), saturated.1.max(m.1));
        let mut next = || traffic.next();
        rig.swap_read_clear(bank, &mut next);
        e += 1;
    }
    rig.final_compare();
    rig.report(&format!("small cells, {e} epochs"), t);
    let buckets: u32 = rig.depths().iter().sum();
    assert_eq!(saturated, (buckets, buckets), "some epoch saturated every count and every sum cell");
    assert!(rig.sent >= target && rig.done == rig.sent);
}

/// The NIC default geometry: random traffic over 20k hop keys (skewed: the heavy keys pass
/// the 8-bit counts' marker, huge units the 24- and 32-bit sums'), 4 epochs of 50k hops
/// plus the hops beside each 2 x 32768-clock readout and clear.
#[test]
fn nic_default_random_epochs() {
    let t = Instant::now();
    let mut rig = Rig::nic();
    let mut traffic = Traffic::new(0xe90c, 20_000, 4000, 64);
    let n = 50_000 * scale();
    epochs(&mut rig, &mut traffic, 4, |_| n);
    rig.report("NIC default, random", t);
    assert!(rig.sent >= 200_000);
    let (c, s) = (rig.markers(0), rig.markers(1));
    assert!(c.0 + s.0 > 0 && c.1 + s.1 > 0, "no marker reached: {c:?} {s:?}");
}

/// The NIC default, no bubbles: a key comes back after exactly 1, 2, 3, 4 clocks in turn
/// (the three forwarding registers and the RAM just behind them), the clocks between held
/// by other keys, over 16 keys so the 8-bit counts saturate in flight; then a single key back to back with huge
/// units (every 32-bit sum reaches its marker through forwarding). Both modes; the ratio
/// of hops to clocks in the traffic is 1.
#[test]
fn nic_default_forwarding_every_distance() {
    let t = Instant::now();
    let mut rig = Rig::nic();
    let mut rng = KeyStream::new(0xd157);
    let pool: Vec<HopKey> = (0..16).map(|n| switch_key(n, &rng.next_key())).collect();
    let hops = 20_000 * scale();
    for (bank, acu) in [(0usize, false), (1, true)] {
        let start = (rig.m.cycles(), rig.sent);
        let mut rows = Vec::new();
        let mut k = 0usize;
        for n in 0..hops as usize / 10 {
            // One key at distances 1, 2, 3, 4 in turn, the clocks between held by distinct
            // other keys: its newest write is exactly d hops ahead each time.
            if n % 20 == 19 {
                k = (rng.next_u64() % 16) as usize;
            }
            for d in 1..=4usize {
                let fill = (1..d).map(|j| pool[(k + j + n % 7) % 16]);
                for key in std::iter::once(pool[k]).chain(fill) {
                    let units = if rng.next_u64().is_multiple_of(97) {
                        u32::MAX - 1
                    } else {
                        (rng.next_u64() % 1000) as u32
                    };
                    rows.push(Row { hop: Some(Hop { key, units, acu }), bank, ..Row::default() });
                }
            }
        }
        // One key back to back: 300 hops saturate the 8-bit count; 4 huge hops each 32-bit sum.
        let one = pool[0];
        rows.extend((0..300u32).map(|n| {
            let units = if n % 50 == 0 { 0x7fff_ffff } else { n };
            Row { hop: Some(Hop { key: one, units, acu }), bank, ..Row::default() }
        }));
        rig.run(&rows);
        let (clocks, sent) = (rig.m.cycles() - start.0, rig.sent - start.1);
        assert_eq!(clocks, sent, "one hop per clock");
        eprintln!("forwarding, bank {bank}, acu {acu}: {sent} hops in {clocks} clocks");
        let idx = rig.banks[bank].indices(&one);
        for (a, g) in rig.geometry.arrays.iter().enumerate() {
            let (_, s) = rig.banks[bank].bucket(a, idx[a]);
            assert_eq!(s, g.sum_marker(), "bank {bank}: array {a}'s sum of the back-to-back key");
        }
        assert_eq!(rig.banks[bank].bucket(0, idx[0]).0, 255, "8-bit count saturated");
        rig.drain();
    }
    rig.final_compare();
    rig.report("NIC default, forwarding", t);
}
