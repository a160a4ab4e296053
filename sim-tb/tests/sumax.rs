//! The generated SuMax pipeline under Verilator against the software `SuMax`
//! (`host::sketch::sumax`), every cell of every bucket of every array: a Zipf trace at the
//! NIC geometry (time wrapping past 2^32), adversarial repeats (every packet repeats one of
//! the previous 1..16 flows) at depth 16, saturation of the 16-bit delay cells and of narrow
//! cells (8-bit size, 4-bit delay, 6-bit time cells that wrap every 64 units), bubbles, and an
//! empty pipeline. Every run also checks one packet per clock (`in_ready` never drops, one
//! `done` per packet in order, one clock per slot) and each packet's `size`/`delay`
//! estimates against `SuMax::query` after its insert.
use smartnic::sketch::sumax::SuMax;
use smartnic::trace::gen::zipf_sizes;
use smartnic_contract::geometry::{sumax_cell, SuMaxGeometry};
use smartnic_contract::vectors::KeyStream;
use smartnic_contract::FlowKey;
use smartnic_hdl::flow;
use smartnic_hdl::hash::key_to_u128;
use smartnic_hdl::sketch::sumax::{SuMaxPipeline, ARRAYS, LATENCY, READ_LATENCY};
use smartnic_hdl::sketch::ONE_BANK;
use smartnic_sim_tb::{Model, ModelBuild, PortId};
use std::collections::VecDeque;
use std::time::Instant;

/// One clock of input: a packet (key, time cell value, delay bin) or a bubble.
type Slot = Option<(FlowKey, u32, u8)>;

/// Expected per-packet estimates: (size, delay), `None` = every cell overflowed (`*_inf`).
type Estimates = (Option<u64>, Option<u64>);

fn report_build(b: &ModelBuild) {
    match b.build_seconds {
        Some(s) => eprintln!("built {} in {s:.1} s ({})", b.block, b.dir.display()),
        None => eprintln!("reused {} ({})", b.block, b.dir.display()),
    }
}

const INPUTS: [&str; 6] = ["key", "key_valid", "t", "bin", "rd_addr", "rd_cell"];
const IN_ROW: usize = 4 + 5;
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

struct Rig {
    m: Model,
    reference: SuMax,
    inputs: Vec<PortId>,
    outputs: Vec<PortId>,
    pending: VecDeque<Estimates>,
    sent: u64,
    done: u64,
    /// Packets whose size / delay estimate was the overflow marker (`*_inf`).
    inf_estimates: (u64, u64),
}

impl Rig {
    fn new(m: Model, geometry: SuMaxGeometry) -> Self {
        report_build(m.build());
        let inputs = INPUTS.iter().map(|n| m.port(n)).collect();
        let outputs = OUTPUTS.iter().map(|n| m.port(n)).collect();
        let mut rig = Rig {
            m,
            reference: SuMax::new(geometry).unwrap(),
            inputs,
            outputs,
            pending: Default::default(),
            sent: 0,
            done: 0,
            inf_estimates: (0, 0),
        };
        rig.m.reset(2);
        rig
    }

    fn of_block() -> Self {
        Rig::new(Model::of_block("sumax").unwrap_or_else(|e| panic!("{e}")), SuMaxGeometry::nic_default())
    }

    /// A model of another configuration; `g` must match the generics.
    fn of_config<const SW: usize, const DW: usize, const DC: usize, const TW: usize, const A: usize>(
        g: SuMaxGeometry,
    ) -> Self {
        let name = format!("sumax_{SW}_{DW}x{DC}_{TW}_{A}");
        let v = flow::to_verilog(&name, &mut SuMaxPipeline::<SW, DW, DC, TW, A, ONE_BANK>::new(&g).unwrap())
            .unwrap();
        Rig::new(Model::of_verilog(&name, &v).unwrap_or_else(|e| panic!("{e}")), g)
    }

    fn geometry(&self) -> &SuMaxGeometry {
        self.reference.geometry()
    }

    /// Inserts one packet into the reference and returns the expected estimates.
    fn reference_insert(&mut self, key: &FlowKey, t: u32, bin: u8) -> Estimates {
        let idx = self.reference.indices(key);
        self.reference.insert_at(&idx, t, bin);
        let g = self.reference.geometry().clone();
        let q = self.reference.query(key);
        let all_marker = |cell: usize, width: u8| {
            let m = smartnic_contract::geometry::marker(width);
            (0..ARRAYS).all(|a| self.reference.cell(a, idx[a], cell) == m)
        };
        let size = (!all_marker(sumax_cell::SIZE, g.size_width)).then_some(q.size);
        let delay = (!all_marker(sumax_cell::FIRST_DELAY + bin as usize, g.delay_width))
            .then_some(q.delay_hist[bin as usize]);
        (size, delay)
    }

    /// Streams `slots` one per clock, feeding the reference in the same order, and checks
    /// every output row. Returns the clocks spent.
    fn run(&mut self, slots: &[Slot]) -> u64 {
        let start = self.m.cycles();
        for chunk in slots.chunks(1 << 17) {
            let mut rows = Vec::with_capacity(chunk.len() * IN_ROW);
            for s in chunk {
                match s {
                    Some((k, t, bin)) => {
                        let v = key_to_u128(&k.0);
                        rows.extend((0..4).map(|i| (v >> (32 * i)) as u32));
                        rows.extend([1, *t, *bin as u32, 0, 0]);
                        let e = self.reference_insert(k, *t, *bin);
                        self.pending.push_back(e);
                        self.sent += 1;
                    }
                    None => rows.extend([0u32; IN_ROW]),
                }
            }
            let out = self.m.stream(&self.inputs, &rows, &self.outputs);
            for row in out.chunks(OUT_ROW) {
                self.check_row(row);
            }
        }
        self.m.cycles() - start
    }

    fn check_row(&mut self, row: &[u32]) {
        assert_eq!(row[0], 1, "in_ready dropped at cycle {}", self.m.cycles());
        assert_eq!(row[6] as u64, self.done, "packets counter");
        if row[1] == 1 {
            let (size, delay) = self.pending.pop_front().expect("done without a packet in flight");
            self.done += 1;
            let n = self.done;
            match size {
                Some(s) => assert_eq!((row[2], row[3] as u64), (0, s), "size estimate of packet {n}"),
                None => {
                    assert_eq!(row[2], 1, "size_inf of packet {n}");
                    self.inf_estimates.0 += 1;
                }
            }
            match delay {
                Some(d) => assert_eq!((row[4], row[5] as u64), (0, d), "delay estimate of packet {n}"),
                None => {
                    assert_eq!(row[4], 1, "delay_inf of packet {n}");
                    self.inf_estimates.1 += 1;
                }
            }
        }
    }

    /// Bubbles until idle, then compares every cell of every bucket of every array.
    fn drain_and_compare(&mut self, what: &str) {
        self.run(&[None; LATENCY]);
        assert_eq!(self.done, self.sent, "{what}: packets still in flight after {LATENCY} clocks");
        let idle = self.m.port("idle");
        assert_eq!(self.m.get(idle), 1, "{what}: idle");
        let depth = self.geometry().depth;
        let cells = self.geometry().cell_widths().len() as u32;
        // One more cell index than the bucket has: it must read 0.
        let reads: Vec<(u32, u32)> = (0..=cells).flat_map(|c| (0..depth).map(move |b| (c, b))).collect();
        let mut rows = Vec::with_capacity((reads.len() + READ_LATENCY) * IN_ROW);
        for &(c, b) in &reads {
            rows.extend([0u32; 7]);
            rows.extend([b, c]);
        }
        rows.extend(std::iter::repeat_n(0u32, READ_LATENCY * IN_ROW));
        let out = self.m.stream(&self.inputs, &rows, &self.outputs);
        let mut nonzero = 0u64;
        for (n, &(c, b)) in reads.iter().enumerate() {
            let row = &out[(n + READ_LATENCY - 1) * OUT_ROW..][..OUT_ROW];
            for a in 0..ARRAYS {
                let want = if c < cells { self.reference.cell(a, b, c as usize) } else { 0 };
                assert_eq!(row[8 + a], want, "{what}: array {a} bucket {b} cell {c}");
                nonzero += (want != 0) as u64;
            }
        }
        eprintln!(
            "{what}: {} packets ({} size / {} delay estimates at the marker), all {} cells equal ({nonzero} non-zero)",
            self.sent,
            self.inf_estimates.0,
            self.inf_estimates.1,
            ARRAYS as u64 * depth as u64 * cells as u64
        );
    }

    /// Cells `cell` (of any array) equal to their overflow marker.
    fn overflowed(&self, cell: usize) -> u32 {
        let g = self.geometry();
        let m = smartnic_contract::geometry::marker(g.cell_widths()[cell]);
        (0..ARRAYS as u32 * g.depth)
            .filter(|&n| self.reference.cell(n as usize % ARRAYS, n / ARRAYS as u32, cell) == m)
            .count() as u32
    }
}

fn shuffle<T>(v: &mut [T], rng: &mut KeyStream) {
    for i in (1..v.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
}

fn zipf_keys(packets: u64, flows: u64, skew: f64, seed: u64) -> Vec<FlowKey> {
    let mut rng = KeyStream::new(seed);
    let keys: Vec<FlowKey> = (0..flows).map(|_| rng.next_key()).collect();
    let mut trace: Vec<FlowKey> = Vec::with_capacity(packets as usize);
    for (k, &n) in keys.iter().zip(&zipf_sizes(packets, flows, skew)) {
        trace.extend(std::iter::repeat_n(*k, n as usize));
    }
    shuffle(&mut trace, &mut rng);
    trace
}

/// Every packet repeats the flow 1..=16 places back or, with probability 1/`fresh_every`,
/// starts a new flow.
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

/// Timestamps and delays: arrival times advance by 0..`max_gap_ns` (so same-time packets
/// and long gaps both occur) from `start_ns`, delays are log-uniform over 1 ns..~2 ms;
/// `time_of` and `delay_bin` of the software model give the port values. With
/// `bubble_every > 0`, 1..4 bubbles follow a packet with probability 1/`bubble_every`.
fn slots(
    keys: &[FlowKey],
    s: &SuMax,
    start_ns: u64,
    max_gap_ns: u64,
    bubble_every: u64,
    seed: u64,
) -> Vec<Slot> {
    let mut rng = KeyStream::new(seed);
    let mut ts = start_ns;
    let mut out = Vec::with_capacity(keys.len() * 9 / 8);
    for k in keys {
        ts += rng.next_u64() % (max_gap_ns + 1);
        let delay = (1u64 << (rng.next_u64() % 21)) + rng.next_u64() % 1024;
        out.push(Some((*k, s.time_of(ts), s.delay_bin(delay))));
        if bubble_every > 0 && rng.next_u64().is_multiple_of(bubble_every) {
            out.extend(std::iter::repeat_n(None, 1 + (rng.next_u64() % 4) as usize));
        }
    }
    out
}

fn run_and_compare(rig: &mut Rig, slots: &[Slot], what: &str) {
    let t = Instant::now();
    let packets = slots.iter().filter(|s| s.is_some()).count() as u64;
    let bubbles = slots.len() as u64 - packets;
    let done_before = rig.done;
    let cycles = rig.run(slots);
    assert_eq!(cycles, slots.len() as u64, "{what}: one clock per slot");
    assert!(rig.done - done_before + LATENCY as u64 >= packets, "{what}: packets completed during the run");
    let wall = t.elapsed().as_secs_f64();
    eprintln!(
        "{what}: {packets} packets + {bubbles} bubbles in {cycles} clocks ({:.4} clocks per packet slot, {:.2} Mclk/s simulated)",
        cycles as f64 / (packets + bubbles) as f64,
        cycles as f64 / wall / 1e6
    );
    rig.drain_and_compare(what);
}

/// NIC geometry: 1M-packet Zipf trace (100K flows, skew 1.1) with bubbles; arrival times
/// start 2^32 - 2^18 time units in, so the 32-bit time cells wrap around mid-trace.
#[test]
fn zipf_nic_geometry_with_time_wrap() {
    let mut rig = Rig::of_block();
    let keys = zipf_keys(1_000_000, 100_000, 1.1, 0x5a3a);
    let unit = 1u64 << rig.geometry().time_shift;
    let start = ((1u64 << 32) - (1 << 18)) * unit;
    // Mean gap ~ 1.5 time units per packet: 1M packets span ~1.5M units, past the wrap.
    let s = slots(&keys, &rig.reference, start, 3 * unit, 64, 1);
    let first_t = s.iter().flatten().next().unwrap().1;
    let last_t = s.iter().flatten().last().unwrap().1;
    assert!(last_t < first_t, "the trace must wrap the 32-bit time cells");
    run_and_compare(&mut rig, &s, "zipf 1M NIC geometry");
    let g = rig.geometry().clone();
    // The max inter-arrival of some bucket spans the wrap (t - prev computed mod 2^32).
    let iv = sumax_cell::interval(g.delay_cells);
    assert!((0..g.depth).any(|b| rig.reference.cell(0, b, iv) > 0));
}

/// Depth 16, default cell widths: every packet repeats one of the previous 1..16 flows, so
/// buckets collide at every forwarding distance; with and without bubbles. Times are small
/// (gaps 0..3 units) so `t = 0` (the "no packet yet" value) and equal times occur.
#[test]
fn adversarial_repeats_depth16() {
    let g = SuMaxGeometry::with_depth(3, 16);
    let keys = adversarial(200_000, 0xadd, 8);
    let mut rig = Rig::of_config::<32, 16, 8, 32, 4>(g.clone());
    let unit = 1u64 << g.time_shift;
    let s = slots(&keys, &rig.reference, 0, 3 * unit, 5, 11);
    run_and_compare(&mut rig, &s, "adversarial depth 16, bubbles");
    let mut rig = Rig::of_config::<32, 16, 8, 32, 4>(g);
    let s = slots(&keys[..100_000], &rig.reference, 0, 2 * unit, 0, 12);
    run_and_compare(&mut rig, &s, "adversarial depth 16, back to back");
}

/// The 16-bit delay cells of the NIC layout saturate (depth 16): one elephant flow in delay
/// bin 0 for 70K packets with mice in between, back to back; the marker is sticky and the
/// delay estimate turns to `delay_inf`.
#[test]
fn saturation_16_bit_delay_cells() {
    let g = SuMaxGeometry::with_depth(3, 16);
    let mut rig = Rig::of_config::<32, 16, 8, 32, 4>(g);
    let mut rng = KeyStream::new(77);
    let elephant = rng.next_key();
    let mice: Vec<FlowKey> = (0..32).map(|_| rng.next_key()).collect();
    let mut s: Vec<Slot> = Vec::new();
    for n in 0..100_000u32 {
        if n % 4 == 3 {
            let m = mice[(rng.next_u64() % 32) as usize];
            s.push(Some((m, n, (rng.next_u64() % 8) as u8)));
        } else {
            s.push(Some((elephant, n, 0)));
        }
    }
    run_and_compare(&mut rig, &s, "16-bit delay saturation");
    assert!(rig.overflowed(sumax_cell::FIRST_DELAY) >= 3, "bin 0 cells of the elephant saturated");
    assert!(rig.inf_estimates.1 > 0, "some delay estimate was the marker");
}

/// Narrow cells (8-bit size, 4 x 4-bit delay, 6-bit time: wraps every 64 units), depth 16,
/// adversarial order with bubbles: every sum cell saturates while updates of the same
/// bucket are in flight, and the interval cell sees wrapped differences.
#[test]
fn saturation_and_time_wrap_narrow_cells() {
    let mut g = SuMaxGeometry::with_depth(3, 16);
    g.size_width = 8;
    g.delay_width = 4;
    g.delay_cells = 4;
    g.time_width = 6;
    let keys = adversarial(100_000, 0x5a7, 4);
    let mut rig = Rig::of_config::<8, 4, 4, 6, 4>(g.clone());
    let unit = 1u64 << g.time_shift;
    let s = slots(&keys, &rig.reference, 0, 20 * unit, 9, 5);
    run_and_compare(&mut rig, &s, "narrow cells, bubbles");
    assert!(rig.overflowed(sumax_cell::SIZE) > 0, "8-bit size cells saturated");
    for b in 0..4 {
        assert!(rig.overflowed(sumax_cell::FIRST_DELAY + b) > 0, "4-bit delay cells of bin {b} saturated");
    }
    // A single flow back to back through every value to the markers, times wrapping.
    let mut rig = Rig::of_config::<8, 4, 4, 6, 4>(g);
    let k = KeyStream::new(1).next_key();
    let s: Vec<Slot> = (0..400u32).map(|n| Some((k, (n * 7) % 64, (n % 2) as u8))).collect();
    run_and_compare(&mut rig, &s, "narrow single flow");
    let idx = rig.reference.indices(&k);
    for (a, &i) in idx.iter().take(ARRAYS).enumerate() {
        assert_eq!(rig.reference.cell(a, i, sumax_cell::SIZE), 255);
        assert_eq!(rig.reference.cell(a, i, sumax_cell::FIRST_DELAY), 15);
    }
}

/// Cells start at zero and bubbles alone change nothing.
#[test]
fn empty_pipeline_reads_zero_and_stays_idle() {
    let mut rig = Rig::of_config::<32, 16, 8, 32, 4>(SuMaxGeometry::with_depth(3, 16));
    run_and_compare(&mut rig, &vec![None; 100], "bubbles only");
    assert_eq!(rig.done, 0);
}
