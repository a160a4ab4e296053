//! The generated flow-key table (`hdl::per_switch::key_table`) under Verilator against the
//! host's `KeyTable`, bit for bit, in both banks:
//! - every packet's outcome (`offered`, `inserted` and its way, `present`, `full`) equals
//!   the offer rule (`estimate > threshold`, `est_inf` as `2^32 - 1`) and `KeyTable::offer`, and comes
//!   exactly `LATENCY` clocks after the packet entered (one packet per clock, no stall);
//! - at every epoch end the bank swaps under traffic (packets of both banks in flight), the
//!   old bank's misses are compared, every 32-bit word of every slot of both ways is read
//!   back through the readout port and compared with `way_bytes()`, then the clear sweep
//!   empties the bank (the next comparison of that bank proves the empty slots and the
//!   zeroed miss counter);
//! - traffic: estimates around the threshold (and 0, `u32::MAX`, `est_inf`), paths of
//!   0..=20 hops with garbage above the last hop, keys repeating the key of the packet
//!   1..5 clocks earlier (every forwarding distance and the RAM just behind them),
//!   bubbles; a tiny geometry (2 ways of 8 slots: the ways fill, keys collide in flight,
//!   misses) and the NIC default.
use smartnic::sketch::key_table::{KeyTable as SwTable, Offer};
use smartnic_contract::packing::PackedBits;
use smartnic_contract::per_switch::{slot, KeyTableGeometry, DEFAULT_TABLE_THRESHOLD};
use smartnic_contract::vectors::KeyStream;
use smartnic_contract::FlowKey;
use smartnic_hdl::flow;
use smartnic_hdl::hash::key_to_u128;
use smartnic_hdl::per_switch::key_table::{KeyTable, LATENCY, READ_LATENCY, SLOT_WORDS};
use smartnic_sim_tb::{Model, PortId};
use std::collections::VecDeque;
use std::time::Instant;

/// One packet: key, flow estimate (`None` = every counter overflowed), its path.
#[derive(Clone, Debug)]
struct Pkt {
    key: FlowKey,
    est: Option<u32>,
    path: Vec<u16>,
    /// Switch IDs on the path port above the last hop (the table must ignore them).
    junk: u16,
}

/// A readout word: bank, way, slot, word.
type WordAt = (usize, usize, u32, u32);

/// One clock of input.
#[derive(Clone, Debug, Default)]
struct Row {
    pkt: Option<Pkt>,
    bank: usize,
    /// Read word `.3` of slot `.2` of way `.1` in bank `.0`.
    rd: Option<WordAt>,
    /// Empty slot `.1` of bank `.0`.
    clr: Option<(usize, u32)>,
}

const INPUTS: [&str; 15] = [
    "valid",
    "key",
    "estimate",
    "est_inf",
    "threshold",
    "hops",
    "path",
    "bank",
    "rd_bank",
    "rd_way",
    "rd_addr",
    "rd_word",
    "clr",
    "clr_bank",
    "clr_addr",
];
const OUTPUTS: [&str; 10] =
    ["done", "offered", "inserted", "way", "present", "full", "misses0", "misses1", "idle", "rd_data"];

/// What a packet must do: offered, and the model's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Outcome {
    offered: bool,
    offer: Option<Offer>,
}

struct Rig {
    m: Model,
    geometry: KeyTableGeometry,
    banks: [SwTable; 2],
    threshold: u32,
    inputs: Vec<PortId>,
    outputs: Vec<PortId>,
    pending: VecDeque<(u64, Outcome)>,
    /// Readout requests: the output row of the data and the expected word.
    reads: VecDeque<(u64, u32, WordAt)>,
    /// Packed ways of the bank being read (taken when its sweep starts).
    packed: Vec<Vec<u8>>,
    sent: u64,
    done: u64,
    offered: u64,
    inserted: u64,
    misses_seen: u64,
    words_compared: u64,
    slots_compared: u64,
    /// Offered packets whose key was inserted by the offered packet exactly `d` clocks
    /// earlier, still in flight (index `d`).
    distance: [u64; 6],
    /// Keys of the last 5 clocks and whether that clock's packet inserted its key.
    recent: VecDeque<Option<(FlowKey, usize, bool)>>,
    rows: u64,
}

impl Rig {
    fn new(m: Model, geometry: KeyTableGeometry) -> Self {
        match m.build().build_seconds {
            Some(s) => eprintln!("built {} in {s:.1} s", m.build().block),
            None => eprintln!("reused {}", m.build().block),
        }
        let inputs = INPUTS.iter().map(|n| m.port(n)).collect();
        let outputs = OUTPUTS.iter().map(|n| m.port(n)).collect();
        let table = || SwTable::new(geometry.clone()).unwrap();
        let mut rig = Rig {
            m,
            banks: [table(), table()],
            geometry,
            threshold: DEFAULT_TABLE_THRESHOLD,
            inputs,
            outputs,
            pending: VecDeque::new(),
            reads: VecDeque::new(),
            packed: Vec::new(),
            sent: 0,
            done: 0,
            offered: 0,
            inserted: 0,
            misses_seen: 0,
            words_compared: 0,
            slots_compared: 0,
            distance: [0; 6],
            recent: VecDeque::new(),
            rows: 0,
        };
        rig.m.reset(2);
        rig
    }

    /// The block `key_table` (NIC default: 2 ways of 512 slots).
    fn nic() -> Self {
        Rig::new(
            Model::of_block("key_table").unwrap_or_else(|e| panic!("{e}")),
            KeyTableGeometry::nic_default(),
        )
    }

    /// 2 ways of 8 slots: the ways fill within an epoch and keys collide in flight.
    fn tiny() -> Self {
        let g = KeyTableGeometry::with_capacity(16);
        let name = "key_table_tiny";
        let v = flow::to_verilog(name, &mut KeyTable::<3>::new(&g).unwrap()).unwrap();
        Rig::new(Model::of_verilog(name, &v).unwrap_or_else(|e| panic!("{e}")), g)
    }

    /// The reference's side of one packet.
    fn offer(&mut self, p: &Pkt, bank: usize) -> Outcome {
        // All overflowed (`est_inf`) is `Tower::query`'s widest marker, 2^32 - 1.
        let offered = p.est.unwrap_or(u32::MAX) > self.threshold;
        let offer = offered.then(|| self.banks[bank].offer(&p.key, &p.path));
        Outcome { offered, offer }
    }

    /// Counts the forwarding distance this packet exercises (an offered key inserted by
    /// the packet `d` clocks earlier, same bank) and records its own clock.
    fn note_distance(&mut self, p: Option<(&Pkt, usize)>, out: Option<Outcome>) {
        if let (Some((p, bank)), Some(o)) = (p, out) {
            if o.offered {
                let hit = self.recent.iter().position(|r| r.is_some_and(|(k, b, _)| k == p.key && b == bank));
                if let Some(d) = hit {
                    if self.recent[d].is_some_and(|r| r.2) {
                        self.distance[d + 1] += 1;
                    }
                }
            }
        }
        let me = p.zip(out).map(|((p, b), o)| (p.key, b, matches!(o.offer, Some(Offer::Inserted(_)))));
        self.recent.push_front(me);
        self.recent.truncate(5);
    }

    fn feed(&mut self, row: &Row, cycle: u64, words: &mut Vec<u32>) {
        let mut w = [0u32; 4 + 8];
        let (mut valid, mut est, mut inf, mut hops) = (0, 0, 0, 0);
        let out = row.pkt.as_ref().map(|p| self.offer(p, row.bank));
        if let (Some(p), Some(o)) = (&row.pkt, out) {
            self.pending.push_back((cycle, o));
            self.sent += 1;
            let k = key_to_u128(p.key.as_bytes());
            for (i, x) in w[..4].iter_mut().enumerate() {
                *x = (k >> (32 * i)) as u32;
            }
            for h in 0..16 {
                let s = p.path.get(h).copied().unwrap_or(p.junk) as u32;
                w[4 + h / 2] |= s << (16 * (h % 2));
            }
            (valid, est, inf, hops) = (1, p.est.unwrap_or(0), p.est.is_none() as u32, p.path.len() as u32);
        }
        self.note_distance(row.pkt.as_ref().map(|p| (p, row.bank)), out);
        if let Some(rd) = row.rd {
            let want = self.word(rd);
            self.reads.push_back((cycle + READ_LATENCY as u64 - 1, want, rd));
        }
        if let Some((b, _)) = row.clr {
            // The sweep empties the whole bank; the model's clear is done once, at its start.
            if self.banks[b].entries().next().is_some() || self.banks[b].misses() != 0 {
                self.banks[b].clear();
            }
        }
        let (rb, rw, ra, rwd) = row.rd.unwrap_or_default();
        let (cb, ca) = row.clr.unwrap_or_default();
        words.extend([valid]);
        words.extend(&w[..4]);
        words.extend([est, inf, self.threshold, hops]);
        words.extend(&w[4..]);
        words.extend([
            row.bank as u32,
            rb as u32,
            rw as u32,
            ra,
            rwd,
            row.clr.is_some() as u32,
            cb as u32,
            ca,
        ]);
    }

    /// Expected word `word` of slot `addr` of way `way` (from the packed ways of the bank
    /// being read).
    fn word(&mut self, (_, way, addr, word): WordAt) -> u32 {
        let bits =
            PackedBits::from_bytes(&self.packed[way], slot::BITS * self.geometry.depth as u64).unwrap();
        let at = addr as u64 * slot::BITS + 32 * word as u64;
        let end = (addr as u64 + 1) * slot::BITS;
        if at >= end {
            return 0;
        }
        bits.get(at, (end - at).min(32) as u8)
    }

    fn run(&mut self, rows: &[Row]) {
        for chunk in rows.chunks(1 << 15) {
            let start = self.m.cycles();
            let mut words = Vec::new();
            for (k, row) in chunk.iter().enumerate() {
                self.feed(row, start + k as u64, &mut words);
            }
            let out = self.m.stream(&self.inputs, &words, &self.outputs);
            for (k, o) in out.chunks(OUTPUTS.len()).enumerate() {
                self.check(start + k as u64, o);
            }
            self.rows += chunk.len() as u64;
        }
    }

    fn check(&mut self, cycle: u64, o: &[u32]) {
        if o[0] == 1 {
            let (entered, want) = self.pending.pop_front().expect("done without a packet in flight");
            assert_eq!(cycle - entered, LATENCY as u64 - 2, "packet {} done late: a stall", self.done);
            let got = Outcome {
                offered: o[1] == 1,
                offer: (o[1] == 1).then(|| match (o[2], o[4], o[5]) {
                    (1, 0, 0) => Offer::Inserted(o[3] as usize),
                    (0, 1, 0) => Offer::Present,
                    (0, 0, 1) => Offer::Full,
                    bad => panic!("packet {}: inserted/present/full = {bad:?}", self.done),
                }),
            };
            assert_eq!(got, want, "outcome of packet {} (cycle {cycle})", self.done);
            self.offered += got.offered as u64;
            self.inserted += matches!(got.offer, Some(Offer::Inserted(_))) as u64;
            self.misses_seen += (got.offer == Some(Offer::Full)) as u64;
            self.done += 1;
        } else {
            assert_eq!(o[1..6], [0; 5], "outcome bits without done at cycle {cycle}");
        }
        if self.reads.front().is_some_and(|r| r.0 == cycle) {
            let (_, want, (b, w, a, wd)) = self.reads.pop_front().unwrap();
            assert_eq!(o[9], want, "bank {b} way {w} slot {a} word {wd}");
            self.words_compared += 1;
            self.slots_compared += (wd as usize == SLOT_WORDS - 1) as u64;
        }
    }

    /// The miss counters equal the model's (no packet in flight).
    fn check_misses(&mut self) {
        for b in 0..2 {
            let got = self.m.get_by_name(&format!("misses{b}")) as u64;
            assert_eq!(got, self.banks[b].misses(), "misses of bank {b}");
        }
    }

    fn drain(&mut self) {
        self.run(&vec![Row::default(); LATENCY]);
        assert_eq!(self.done, self.sent, "packets still in flight {LATENCY} clocks after the last");
        assert_eq!(self.m.get_by_name("idle"), 1, "idle after the drain");
        self.check_misses();
    }

    /// Readout rows of every word of every slot of both ways of `bank`, or clear rows of
    /// every slot, beside packets of the other bank from `traffic`.
    fn sweep_rows(&mut self, bank: usize, clear: bool, traffic: &mut dyn FnMut() -> Option<Pkt>) -> Vec<Row> {
        let depth = self.geometry.depth;
        let mut rows = Vec::new();
        if clear {
            for a in 0..depth {
                rows.push(Row { pkt: traffic(), bank: 1 - bank, clr: Some((bank, a)), ..Row::default() });
            }
        } else {
            self.packed = (0..2).map(|w| self.banks[bank].way_bytes(w)).collect();
            for way in 0..2 {
                for a in 0..depth {
                    for wd in 0..SLOT_WORDS as u32 {
                        let rd = Some((bank, way, a, wd));
                        rows.push(Row { pkt: traffic(), bank: 1 - bank, rd, ..Row::default() });
                    }
                }
            }
        }
        rows
    }

    /// The epoch end: packets switch from `old` to the other bank without a gap; `LATENCY`
    /// clocks later the old bank's misses are compared, every slot read back and compared,
    /// then the bank cleared, all under traffic.
    fn swap_read_clear(&mut self, old: usize, traffic: &mut dyn FnMut() -> Option<Pkt>) {
        let drain: Vec<Row> =
            (0..LATENCY).map(|_| Row { pkt: traffic(), bank: 1 - old, ..Row::default() }).collect();
        self.run(&drain);
        let got = self.m.get_by_name(&format!("misses{old}")) as u64;
        assert_eq!(got, self.banks[old].misses(), "misses of bank {old} at its epoch end");
        let read = self.sweep_rows(old, false, traffic);
        self.run(&read);
        let clear = self.sweep_rows(old, true, traffic);
        self.run(&clear);
    }

    fn final_compare(&mut self) {
        self.drain();
        for bank in 0..2 {
            let mut rows = self.sweep_rows(bank, false, &mut || None);
            rows.extend(vec![Row::default(); READ_LATENCY]);
            self.run(&rows);
        }
        assert!(self.reads.is_empty());
    }

    fn report(&self, what: &str, t: Instant) {
        eprintln!(
            "{what}: {} packets in {} clocks ({} offered, {} inserted, {} misses), {} slots ({} words) \
             compared, forwarded inserts at distance 1..5: {:?}, {:.1} s",
            self.sent,
            self.rows,
            self.offered,
            self.inserted,
            self.misses_seen,
            self.slots_compared,
            self.words_compared,
            &self.distance[1..],
            t.elapsed().as_secs_f64()
        );
    }
}

/// Random traffic: keys from a pool, a third of the packets repeating the key of the
/// packet 1..5 clocks earlier, estimates within `spread` of the threshold (and the
/// extremes), paths of 0..=20 hops.
struct Traffic {
    rng: KeyStream,
    pool: Vec<FlowKey>,
    last: VecDeque<FlowKey>,
    threshold: u32,
    spread: u64,
    bubble_every: u64,
}

impl Traffic {
    fn new(seed: u64, keys: usize, threshold: u32, spread: u64, bubble_every: u64) -> Self {
        let mut rng = KeyStream::new(seed);
        let pool = (0..keys).map(|_| rng.next_key()).collect();
        Traffic { rng, pool, last: VecDeque::new(), threshold, spread, bubble_every }
    }

    fn est(&mut self) -> Option<u32> {
        match self.rng.next_u64() % 64 {
            0 => None,
            1 => Some(0),
            2 => Some(u32::MAX),
            _ => {
                let d = self.rng.next_u64() % (2 * self.spread + 1);
                Some((self.threshold as u64 + d).saturating_sub(self.spread) as u32)
            }
        }
    }

    fn key(&mut self) -> FlowKey {
        let r = self.rng.next_u64();
        let key = match r % 15 {
            d @ 1..=5 if self.last.len() >= d as usize => self.last[d as usize - 1],
            _ => self.pool[((r >> 8) % self.pool.len() as u64) as usize],
        };
        self.push(key);
        key
    }

    fn push(&mut self, key: FlowKey) {
        self.last.push_front(key);
        self.last.truncate(5);
    }

    fn path(&mut self) -> Vec<u16> {
        let n = (self.rng.next_u64() % 21) as usize;
        (0..n).map(|_| self.rng.next_u64() as u16).collect()
    }

    fn next(&mut self) -> Option<Pkt> {
        if self.bubble_every > 0 && self.rng.next_u64().is_multiple_of(self.bubble_every) {
            // A bubble is a clock too: the forwarding distances count it.
            self.push(FlowKey([0xff; 13]));
            return None;
        }
        let (key, est, path) = (self.key(), self.est(), self.path());
        Some(Pkt { key, est, path, junk: self.rng.next_u64() as u16 })
    }

    fn rows(&mut self, n: u64, bank: usize) -> Vec<Row> {
        (0..n).map(|_| Row { pkt: self.next(), bank, ..Row::default() }).collect()
    }
}

/// Epochs of random traffic, the bank swapping under traffic each time, the old bank read
/// back and cleared while the new one takes packets.
fn epochs(rig: &mut Rig, traffic: &mut Traffic, target: u64, len: impl Fn(&mut KeyStream) -> u64) -> u64 {
    let mut e = 0;
    while rig.sent < target {
        let bank = (e % 2) as usize;
        let n = len(&mut traffic.rng);
        let rows = traffic.rows(n, bank);
        rig.run(&rows);
        let mut next = || traffic.next();
        rig.swap_read_clear(bank, &mut next);
        e += 1;
    }
    rig.final_compare();
    e
}

/// Two ways of 8 slots, 100k packets over 40 keys in epochs of 10..300 packets: short
/// epochs leave empty slots, long ones fill both ways and miss; estimates within 3 of a
/// threshold of 20, keys back to back at every distance.
#[test]
fn tiny_table_fills_misses_and_forwards() {
    let t = Instant::now();
    let mut rig = Rig::tiny();
    rig.threshold = 20;
    let mut traffic = Traffic::new(0x7ab1e, 40, 20, 3, 16);
    let e = epochs(&mut rig, &mut traffic, 100_000, |r| 10 + r.next_u64() % 291);
    rig.report(&format!("tiny table, {e} epochs"), t);
    assert!(rig.done == rig.sent && rig.sent >= 100_000);
    assert!(rig.misses_seen > 1000 && rig.inserted > 1000, "the ways fill and miss");
    assert!(rig.distance[1..].iter().all(|&n| n > 0), "every forwarding distance: {:?}", rig.distance);
}

/// A threshold of 2^32 - 1 offers nothing, not even a flow whose every counter
/// overflowed (`est_inf` is the marker 2^32 - 1, as `Tower::query` returns it).
#[test]
fn the_largest_threshold_offers_nothing() {
    let t = Instant::now();
    let mut rig = Rig::tiny();
    rig.threshold = u32::MAX;
    let mut traffic = Traffic::new(0x5a7, 40, u32::MAX, 3, 16);
    let e = epochs(&mut rig, &mut traffic, 5_000, |r| 10 + r.next_u64() % 291);
    rig.report(&format!("threshold 2^32 - 1, {e} epochs"), t);
    assert!(rig.done == rig.sent && rig.sent >= 5_000);
    assert_eq!(rig.inserted, 0, "nothing offered");
}

/// The NIC default: 4 epochs of 25k packets over 3000 keys (the 1024 slots fill, misses),
/// then fresh keys above the threshold each repeated exactly 1..5 clocks later with the
/// clocks between held by other fresh keys (the repeat must find the in-flight insert), at
/// one packet per clock.
#[test]
fn nic_default_epochs_and_every_distance() {
    let t = Instant::now();
    let mut rig = Rig::nic();
    let mut traffic = Traffic::new(0x4e1c, 3000, DEFAULT_TABLE_THRESHOLD, 2, 64);
    epochs(&mut rig, &mut traffic, 100_000, |_| 25_000);
    rig.report("NIC default, random", t);
    assert!(rig.misses_seen > 0, "the NIC table filled");
    let before = rig.distance;
    for bank in 0..2 {
        // Empty the bank first, so the fresh keys are inserted rather than missed.
        rig.swap_read_clear(bank, &mut || None);
        let mut rows = Vec::new();
        for _ in 0..60 {
            for d in 1..=5usize {
                let fresh: Vec<FlowKey> = (0..d).map(|_| traffic.rng.next_key()).collect();
                for &key in fresh.iter().chain(std::iter::once(&fresh[0])) {
                    let path = traffic.path();
                    let pkt = Pkt { key, est: Some(DEFAULT_TABLE_THRESHOLD + 1), path, junk: 0xffff };
                    rows.push(Row { pkt: Some(pkt), bank, ..Row::default() });
                }
            }
        }
        let (clocks, sent) = (rig.m.cycles(), rig.sent);
        rig.run(&rows);
        assert_eq!(rig.m.cycles() - clocks, rig.sent - sent, "one packet per clock");
        rig.drain();
    }
    rig.final_compare();
    let forwarded: Vec<u64> = (1..6).map(|d| rig.distance[d] - before[d]).collect();
    rig.report("NIC default, every distance", t);
    assert!(forwarded.iter().all(|&n| n >= 80), "inserts forwarded at distance 1..5: {forwarded:?}");
}
