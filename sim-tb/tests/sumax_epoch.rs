//! Epochs under Verilator for the two-bank SuMax block alone (`hdl::sketch::sumax` with `TWO_BANKS`),
//! with the test playing the epoch engine (the block has none of its own).
//!
//! A packet enters on every clock, no gap, tagged with the active bank (`epoch & 1`); every
//! `N` packets the test flips the bank, waits the drain ([`LATENCY`] clocks, packets of the
//! new bank entering all the while), reads the idle bank through `rd_bank`/`rd_addr`/
//! `rd_cell` (first the buckets the old epoch's last 16 packets touched, the clock the drain
//! ends, then every cell of every bucket plus one cell index past the bucket, which reads 0),
//! clears it through `clr`/`clr_bank`/`clr_addr` (a sweep of the `2^A` buckets in random
//! order, starting the clock after the last read), reads it again (all zero), and goes on.
//! Each epoch's cells must equal a software `SuMax` fed exactly that epoch's packets (same
//! key, `t` and `bin`), cell by cell, for both banks; every packet's `size`/`delay` estimate
//! must equal its epoch's `SuMax::query` after its insert (the omega chains never cross
//! banks); `done` comes once per packet, in order; one clock per packet. Depth 16, so buckets
//! collide constantly, and traffic is adversarial (every packet repeats one of the last 1..16
//! flows), so same-bucket packets of the old and the new bank are in flight together at every
//! swap and during every readout and clear. Two cell layouts: the NIC widths, and narrow
//! cells (8-bit size, 4 x 4-bit delay, 6-bit time) that saturate and wrap inside every epoch,
//! so the clear must also reset sticky overflow markers.
use smartnic::sketch::sumax::SuMax;
use smartnic_contract::geometry::{marker, sumax_cell, SuMaxGeometry};
use smartnic_contract::vectors::KeyStream;
use smartnic_contract::FlowKey;
use smartnic_hdl::flow;
use smartnic_hdl::hash::key_to_u128;
use smartnic_hdl::sketch::sumax::{SuMaxPipeline, ARRAYS, LATENCY, READ_LATENCY};
use smartnic_hdl::sketch::TWO_BANKS;
use smartnic_sim_tb::{Model, ModelBuild, PortId};
use std::collections::VecDeque;
use std::time::Instant;

fn report_build(b: &ModelBuild) {
    match b.build_seconds {
        Some(s) => eprintln!("built {} in {s:.1} s ({})", b.block, b.dir.display()),
        None => eprintln!("reused {} ({})", b.block, b.dir.display()),
    }
}

const INPUTS: [&str; 11] =
    ["key", "key_valid", "bank", "t", "bin", "rd_bank", "rd_addr", "rd_cell", "clr", "clr_bank", "clr_addr"];
const OUTPUTS: [&str; 11] = [
    "in_ready",
    "done",
    "size_inf",
    "size",
    "delay_inf",
    "delay",
    "packets",
    "idle",
    "rd_data0",
    "rd_data1",
    "rd_data2",
];
const OUT_ROW: usize = 11;

/// Expected per-packet estimates: (size, delay), `None` = every cell overflowed (`*_inf`).
type Estimates = (Option<u64>, Option<u64>);

/// An expected readout answer: the output row it appears on, what was read, the values.
struct Answer {
    row: usize,
    epoch: u32,
    bucket: u32,
    cell: u32,
    after_clear: bool,
    want: [u32; ARRAYS],
}

/// The test as epoch engine: builds the whole run's input rows (a packet in each), feeding
/// each packet to the software `SuMax` of its epoch, and records what the outputs must be.
struct Engine {
    geometry: SuMaxGeometry,
    rng: KeyStream,
    /// Every key sent so far (the adversarial source repeats from its tail).
    trace: Vec<FlowKey>,
    fresh_every: u64,
    ts: u64,
    epoch: u32,
    /// One software SuMax per epoch (index = epoch).
    refs: Vec<SuMax>,
    per_epoch: Vec<u64>,
    /// Last 16 packets: (epoch, bucket indices, bin).
    recent: VecDeque<(u32, [u32; ARRAYS], u8)>,
    words: Vec<u32>,
    rows: usize,
    pending: VecDeque<Estimates>,
    answers: VecDeque<Answer>,
    cells_compared: u64,
}

impl Engine {
    fn new(geometry: SuMaxGeometry, seed: u64, fresh_every: u64) -> Self {
        Engine {
            geometry,
            rng: KeyStream::new(seed),
            trace: Vec::new(),
            fresh_every,
            ts: 0,
            epoch: 0,
            refs: Vec::new(),
            per_epoch: Vec::new(),
            recent: VecDeque::new(),
            words: Vec::new(),
            rows: 0,
            pending: VecDeque::new(),
            answers: VecDeque::new(),
            cells_compared: 0,
        }
    }

    fn reference(&mut self, e: u32) -> &mut SuMax {
        while self.refs.len() <= e as usize {
            self.refs.push(SuMax::new(self.geometry.clone()).unwrap());
            self.per_epoch.push(0);
        }
        &mut self.refs[e as usize]
    }

    /// Next packet: a repeat of one of the last 1..16 flows or (1/`fresh_every`) a new one;
    /// time advancing by 0..3 units with an occasional random jump; a random delay bin.
    fn next_packet(&mut self) -> (FlowKey, u32, u8) {
        let gap = 1 + (self.rng.next_u64() % 16) as usize;
        let k = match self.trace.len().checked_sub(gap) {
            Some(i) if !self.rng.next_u64().is_multiple_of(self.fresh_every) => self.trace[i],
            _ => self.rng.next_key(),
        };
        self.trace.push(k);
        let r = self.rng.next_u64();
        self.ts += if r.is_multiple_of(64) { r >> 40 } else { r % 4 };
        let mask =
            if self.geometry.time_width >= 32 { u32::MAX } else { (1u32 << self.geometry.time_width) - 1 };
        let bin = (self.rng.next_u64() % self.geometry.delay_cells as u64) as u8;
        (k, self.ts as u32 & mask, bin)
    }

    /// One clock: a packet of the active bank, plus an optional idle-bank read
    /// (bucket, cell) and an optional clear of an idle-bank bucket.
    fn row(&mut self, rd: Option<(u32, u32)>, clr: Option<u32>) {
        let (k, t, bin) = self.next_packet();
        let e = self.epoch;
        let (sw, dw) = (self.geometry.size_width, self.geometry.delay_width);
        let s = self.reference(e);
        let idx = s.indices(&k);
        s.insert_at(&idx, t, bin);
        let q = s.query(&k);
        let all_marker =
            |cell: usize, width: u8| (0..ARRAYS).all(|a| s.cell(a, idx[a], cell) == marker(width));
        let size = (!all_marker(sumax_cell::SIZE, sw)).then_some(q.size);
        let delay =
            (!all_marker(sumax_cell::FIRST_DELAY + bin as usize, dw)).then_some(q.delay_hist[bin as usize]);
        self.pending.push_back((size, delay));
        self.per_epoch[e as usize] += 1;
        self.recent.push_back((e, [idx[0], idx[1], idx[2]], bin));
        if self.recent.len() > 16 {
            self.recent.pop_front();
        }
        let v = key_to_u128(&k.0);
        self.words.extend((0..4).map(|i| (v >> (32 * i)) as u32));
        let active = e & 1;
        let (ra, rc) = rd.unwrap_or((0, 0));
        self.words.extend([1, active, t, bin as u32, active ^ 1, ra, rc]);
        self.words.extend([clr.is_some() as u32, active ^ 1, clr.unwrap_or(0)]);
        self.rows += 1;
    }

    /// A read of the idle bank whose answer must be `want`.
    fn read(&mut self, epoch: u32, bucket: u32, cell: u32, after_clear: bool, clr: Option<u32>) {
        let cells = self.geometry.cell_widths().len() as u32;
        let want = match (&self.refs[epoch as usize], after_clear || cell >= cells) {
            (_, true) => [0; ARRAYS],
            (s, false) => [0, 1, 2].map(|a| s.cell(a, bucket, cell as usize)),
        };
        self.answers.push_back(Answer {
            row: self.rows + READ_LATENCY - 1,
            epoch,
            bucket,
            cell,
            after_clear,
            want,
        });
        self.cells_compared += ARRAYS as u64;
        self.row(Some((bucket, cell)), clr);
    }

    /// Every cell of every bucket of the idle bank (plus one cell index past the bucket).
    fn read_all(&mut self, epoch: u32, after_clear: bool) {
        let cells = self.geometry.cell_widths().len() as u32;
        for c in 0..=cells {
            for b in 0..self.geometry.depth {
                self.read(epoch, b, c, after_clear, None);
            }
        }
    }

    /// Ends the current epoch (the last row's packet was its last), then drain, readout,
    /// clear and check of the idle bank, packets of the new epoch on every clock.
    fn swap_and_collect(&mut self) {
        let old = self.epoch;
        let hot: Vec<([u32; ARRAYS], u8)> =
            self.recent.iter().rev().filter(|r| r.0 == old).map(|r| (r.1, r.2)).collect();
        assert_eq!(hot.len(), 16);
        self.epoch += 1;
        // Drain: the old bank's last write lands in the LATENCY-th clock.
        for _ in 0..LATENCY {
            self.row(None, None);
        }
        // The buckets the old epoch's last packets wrote, newest first, last array first.
        let dc = self.geometry.delay_cells as u32;
        for (idx, bin) in hot {
            for a in (0..ARRAYS).rev() {
                for c in [sumax_cell::SIZE as u32, 1 + bin as u32, 1 + dc, 2 + dc] {
                    self.read(old, idx[a], c, false, None);
                }
            }
        }
        self.read_all(old, false);
        // Clear sweep in random order, from the clock after the last read.
        let mut order: Vec<u32> = (0..self.geometry.depth).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, (self.rng.next_u64() % (i as u64 + 1)) as usize);
        }
        for b in order {
            self.row(None, Some(b));
        }
        // The bank reads all zero from the clock after the sweep.
        self.read_all(old, true);
        self.refs[old as usize] = SuMax::new(self.geometry.clone()).unwrap();
    }
}

struct Rig {
    m: Model,
    inputs: Vec<PortId>,
    outputs: Vec<PortId>,
}

impl Rig {
    fn of_config<const SW: usize, const DW: usize, const DC: usize, const TW: usize, const A: usize>(
        g: &SuMaxGeometry,
    ) -> Self {
        let name = format!("sumax_banked_{SW}_{DW}x{DC}_{TW}_{A}");
        let v = flow::to_verilog(&name, &mut SuMaxPipeline::<SW, DW, DC, TW, A, TWO_BANKS>::new(g).unwrap())
            .unwrap();
        let mut m = Model::of_verilog(&name, &v).unwrap_or_else(|e| panic!("{e}"));
        report_build(m.build());
        let inputs = INPUTS.iter().map(|n| m.port(n)).collect();
        let outputs = OUTPUTS.iter().map(|n| m.port(n)).collect();
        m.reset(2);
        Rig { m, inputs, outputs }
    }
}

/// `epochs` epochs of `per_epoch` packets, a packet on every clock, swap/drain/readout/clear
/// after each; everything checked (see the module docs). Returns the packets whose size /
/// delay estimate was the marker.
fn run_epochs(
    rig: &mut Rig,
    g: SuMaxGeometry,
    per_epoch: usize,
    epochs: u32,
    seed: u64,
    fresh_every: u64,
    what: &str,
) -> (u64, u64) {
    let mut eng = Engine::new(g, seed, fresh_every);
    let mut epoch_start = 0usize;
    for _ in 0..epochs {
        // The current epoch's packets so far were sent during the previous collection.
        let so_far = eng.rows - epoch_start;
        assert!(
            per_epoch > so_far + 16,
            "{what}: epoch of {per_epoch} packets too short ({so_far} in the collection)"
        );
        for _ in so_far..per_epoch {
            eng.row(None, None);
        }
        assert_eq!(
            eng.per_epoch[eng.epoch as usize], per_epoch as u64,
            "{what}: packets of epoch {}",
            eng.epoch
        );
        epoch_start = eng.rows;
        eng.swap_and_collect();
    }
    // Traffic until the last readout answer.
    for _ in 0..READ_LATENCY {
        eng.row(None, None);
    }
    let t0 = Instant::now();
    let c0 = rig.m.cycles();
    let out = rig.m.stream(&rig.inputs, &eng.words, &rig.outputs);
    let cycles = rig.m.cycles() - c0;
    let wall = t0.elapsed().as_secs_f64();
    assert_eq!(out.len(), eng.rows * OUT_ROW);
    assert_eq!(cycles, eng.rows as u64, "{what}: one clock per row");
    let sent: u64 = eng.per_epoch.iter().sum();
    assert_eq!(sent, eng.rows as u64, "{what}: a packet on every clock");
    let mut done = 0u64;
    let mut inf = (0u64, 0u64);
    let mut nonzero = 0u64;
    for (n, row) in out.chunks(OUT_ROW).enumerate() {
        assert_eq!(row[0], 1, "{what}: in_ready at row {n}");
        assert_eq!(row[6] as u64, done, "{what}: packets counter at row {n}");
        if row[1] == 1 {
            let (size, delay) = eng.pending.pop_front().expect("done without a packet in flight");
            done += 1;
            match size {
                Some(s) => {
                    assert_eq!((row[2], row[3] as u64), (0, s), "{what}: size estimate of packet {done}")
                }
                None => {
                    assert_eq!(row[2], 1, "{what}: size_inf of packet {done}");
                    inf.0 += 1;
                }
            }
            match delay {
                Some(d) => {
                    assert_eq!((row[4], row[5] as u64), (0, d), "{what}: delay estimate of packet {done}")
                }
                None => {
                    assert_eq!(row[4], 1, "{what}: delay_inf of packet {done}");
                    inf.1 += 1;
                }
            }
        }
        while eng.answers.front().is_some_and(|a| a.row == n) {
            let a = eng.answers.pop_front().unwrap();
            assert_eq!(
                &row[8..8 + ARRAYS],
                &a.want,
                "{what}: epoch {} (bank {}) bucket {} cell {}{} at row {n}",
                a.epoch,
                a.epoch & 1,
                a.bucket,
                a.cell,
                if a.after_clear { " after the clear" } else { "" }
            );
            nonzero += a.want.iter().filter(|&&w| w != 0).count() as u64;
        }
    }
    assert!(eng.answers.is_empty(), "{what}: every readout answered");
    assert!(sent - done <= LATENCY as u64, "{what}: packets completed ({done} of {sent})");
    eprintln!(
        "{what}: {epochs} epochs, {sent} packets in {cycles} clocks ({:.4} clocks/packet, {:.2} Mclk/s simulated), \
         {} idle-bank cells compared ({nonzero} non-zero), {} / {} size / delay estimates at the marker",
        cycles as f64 / sent as f64,
        cycles as f64 / wall / 1e6,
        eng.cells_compared,
        inf.0,
        inf.1
    );
    inf
}

/// NIC cell widths (32-bit size, 8 x 16-bit delay, 32-bit time), depth 16: 40 epochs of 2000
/// adversarial packets.
#[test]
fn banked_sumax_depth16_40_epochs() {
    let g = SuMaxGeometry::with_depth(3, 16);
    let mut rig = Rig::of_config::<32, 16, 8, 32, 4>(&g);
    run_epochs(&mut rig, g, 2000, 40, 0x5e90, 8, "sumax banked depth 16");
}

/// Narrow cells (8-bit size, 4 x 4-bit delay, 6-bit time cells wrapping every 64 units),
/// depth 16: size and delay cells saturate within an epoch, so each clear must reset the
/// markers; 40 epochs of 6000 adversarial packets.
#[test]
fn banked_sumax_narrow_cells_40_epochs() {
    let mut g = SuMaxGeometry::with_depth(3, 16);
    g.size_width = 8;
    g.delay_width = 4;
    g.delay_cells = 4;
    g.time_width = 6;
    let mut rig = Rig::of_config::<8, 4, 4, 6, 4>(&g);
    let inf = run_epochs(&mut rig, g, 6000, 40, 0x5e91, 4, "sumax banked narrow");
    assert!(inf.0 > 0 && inf.1 > 0, "size and delay cells saturated: {inf:?}");
}
