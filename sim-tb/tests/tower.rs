//! The generated TowerSketch pipeline under Verilator against the software `Tower`
//! (`host::sketch::tower`), counter by counter, for CM and ACU: a 1M-packet Zipf trace at
//! the board geometry, adversarial repeats (every packet repeats one of the previous 1..16
//! flows) at tiny depths, saturation of every counter width, bubbles, and per-packet mode
//! switches. Every run also checks one packet per clock (`in_ready` never drops, the last
//! packet completes `LATENCY` clocks after it entered) and, for every packet of either mode,
//! the pipeline's `estimate` against `Tower::query` right after its insert.
use smartnic::sketch::tower::Tower;
use smartnic::trace::gen::zipf_sizes;
use smartnic_contract::geometry::{InsertMode, TowerGeometry};
use smartnic_contract::vectors::KeyStream;
use smartnic_contract::FlowKey;
use smartnic_hdl::flow;
use smartnic_hdl::hash::key_to_u128;
use smartnic_hdl::sketch::tower::{TowerPipeline, ARRAYS, LATENCY, READ_LATENCY};
use smartnic_hdl::sketch::ONE_BANK;
use smartnic_sim_tb::{Model, ModelBuild, PortId};
use std::time::Instant;

/// One clock of input: a packet (key, ACU mode) or a bubble.
type Slot = Option<(FlowKey, bool)>;

fn report_build(b: &ModelBuild) {
    match b.build_seconds {
        Some(s) => eprintln!("built {} in {s:.1} s ({})", b.block, b.dir.display()),
        None => eprintln!("reused {} ({})", b.block, b.dir.display()),
    }
}

/// The software reference with a per-packet mode: one `Tower` per mode, counters handed
/// over when the mode changes (the pipeline's mode bit travels with each packet).
struct Reference {
    cm: Tower,
    acu: Tower,
    acu_now: bool,
}

impl Reference {
    fn new(g: &TowerGeometry) -> Self {
        Reference {
            cm: Tower::new(g.clone(), InsertMode::Cm).unwrap(),
            acu: Tower::new(g.clone(), InsertMode::Acu).unwrap(),
            acu_now: false,
        }
    }
    fn tower(&self) -> &Tower {
        if self.acu_now {
            &self.acu
        } else {
            &self.cm
        }
    }
    /// Inserts one packet in its mode and returns what its `done` row must show.
    fn insert(&mut self, key: &FlowKey, acu: bool) -> Expect {
        if acu != self.acu_now {
            let (from, to) = if acu { (&self.cm, &mut self.acu) } else { (&self.acu, &mut self.cm) };
            for a in 0..ARRAYS {
                assert!(to.load_array(a, &from.array_bytes(a)));
            }
            self.acu_now = acu;
        }
        let t = if acu { &mut self.acu } else { &mut self.cm };
        t.insert(key);
        let idx = t.indices(key);
        let g = t.geometry();
        let overflowed = |a: usize| t.counter(a, idx[a]) == g.arrays[a].marker();
        let last = ARRAYS - 1;
        Expect {
            acu,
            estimate: (!(0..ARRAYS).all(overflowed)).then(|| t.query(key)),
            last_array: (!overflowed(last)).then(|| t.counter(last, idx[last]) as u64),
        }
    }
}

/// What one packet's `done` row must show.
#[derive(Clone, Copy, Debug)]
struct Expect {
    acu: bool,
    /// `Tower::query` right after the packet's insert (None = every counter of the flow
    /// overflowed: `estimate_inf`).
    estimate: Option<u64>,
    /// The flow's counter in the last array after the insert (None = overflowed): a CM
    /// packet whose estimate differs from it tells a minimum over the arrays from the last
    /// array alone.
    last_array: Option<u64>,
}

/// How many estimates a rig checked, by the packet's mode and by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Checked {
    cm: u64,
    acu: u64,
    /// of which `estimate_inf` (every counter of the flow overflowed)
    inf: u64,
    /// CM packets whose estimate is not the last array's counter
    cm_not_last: u64,
}

/// A pipeline model with its ports and the reference.
struct Rig {
    m: Model,
    geometry: TowerGeometry,
    reference: Reference,
    inputs: Vec<PortId>,
    outputs: Vec<PortId>,
    /// Mode and expected `estimate` of every packet sent and not yet `done` (None: every
    /// counter overflowed).
    pending: std::collections::VecDeque<Expect>,
    sent: u64,
    done: u64,
    checked: Checked,
}

const IN_ROW: usize = 4 + 1 + 1 + 3;
const OUT_ROW: usize = 9;

impl Rig {
    fn new(m: Model, geometry: TowerGeometry) -> Self {
        report_build(m.build());
        let inputs = ["key", "key_valid", "acu", "rd_addr0", "rd_addr1", "rd_addr2"]
            .iter()
            .map(|n| m.port(n))
            .collect();
        let outputs = [
            "in_ready",
            "done",
            "estimate_inf",
            "estimate",
            "packets",
            "idle",
            "rd_data0",
            "rd_data1",
            "rd_data2",
        ]
        .iter()
        .map(|n| m.port(n))
        .collect();
        let reference = Reference::new(&geometry);
        let mut rig = Rig {
            m,
            geometry,
            reference,
            inputs,
            outputs,
            pending: Default::default(),
            sent: 0,
            done: 0,
            checked: Checked::default(),
        };
        rig.m.reset(2);
        rig
    }

    fn of_block(name: &str) -> Self {
        Rig::new(Model::of_block(name).unwrap_or_else(|e| panic!("{e}")), TowerGeometry::sketchint_fpga())
    }

    /// A model of another configuration; the generics must match `pairs`.
    fn of_config<
        const W0: usize,
        const A0: usize,
        const W1: usize,
        const A1: usize,
        const W2: usize,
        const A2: usize,
    >(
        pairs: &[(u8, u32); 3],
    ) -> Self {
        let g = TowerGeometry::from_widths_depths(pairs);
        let name = format!("tower_{}x{}_{}x{}_{}x{}", W0, A0, W1, A1, W2, A2);
        let v =
            flow::to_verilog(&name, &mut TowerPipeline::<W0, A0, W1, A1, W2, A2, ONE_BANK>::new(&g).unwrap())
                .unwrap();
        Rig::new(Model::of_verilog(&name, &v).unwrap_or_else(|e| panic!("{e}")), g)
    }

    /// Streams `slots` one per clock (in chunks), feeding the reference in the same order,
    /// and checks every output row: `in_ready` always 1, `done` once per packet in order,
    /// every packet's estimate. Returns the clocks spent.
    fn run(&mut self, slots: &[Slot]) -> u64 {
        let start = self.m.cycles();
        for chunk in slots.chunks(1 << 18) {
            let mut rows = Vec::with_capacity(chunk.len() * IN_ROW);
            for s in chunk {
                match s {
                    Some((k, acu)) => {
                        let v = key_to_u128(&k.0);
                        rows.extend((0..4).map(|i| (v >> (32 * i)) as u32));
                        rows.extend([1, *acu as u32, 0, 0, 0]);
                        let estimate = self.reference.insert(k, *acu);
                        self.pending.push_back(estimate);
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
        // `packets` counts the writes of earlier clocks.
        assert_eq!(row[4] as u64, self.done, "packets counter");
        if row[1] == 1 {
            let want = self.pending.pop_front().expect("done without a packet in flight");
            self.done += 1;
            let mode = if want.acu { "ACU" } else { "CM" };
            match want.estimate {
                Some(q) => {
                    assert_eq!((row[2], row[3] as u64), (0, q), "estimate of packet {} ({mode})", self.done)
                }
                None => assert_eq!(row[2], 1, "estimate_inf of packet {} ({mode})", self.done),
            }
            self.count_checked(&want);
        }
    }

    fn count_checked(&mut self, e: &Expect) {
        let c = &mut self.checked;
        if e.acu {
            c.acu += 1;
        } else {
            c.cm += 1;
            c.cm_not_last += (e.estimate != e.last_array) as u64;
        }
        c.inf += e.estimate.is_none() as u64;
    }

    /// Bubbles until the pipeline is idle (at most LATENCY clocks), then compares every
    /// counter of every array with the reference through the readout port.
    fn drain_and_compare(&mut self, what: &str) {
        self.run(&[None; LATENCY]);
        assert_eq!(self.done, self.sent, "{what}: packets still in flight after {LATENCY} clocks");
        assert!(self.pending.is_empty());
        let idle = self.m.port("idle");
        assert_eq!(self.m.get(idle), 1, "{what}: idle");
        let depths: Vec<u32> = self.geometry.arrays.iter().map(|a| a.depth).collect();
        let longest = *depths.iter().max().unwrap() as usize;
        let mut rows = Vec::with_capacity((longest + READ_LATENCY) * IN_ROW);
        for n in 0..longest + READ_LATENCY {
            rows.extend([0u32; 6]);
            rows.extend(depths.iter().map(|&d| if n < d as usize { n as u32 } else { 0 }));
        }
        let out = self.m.stream(&self.inputs, &rows, &self.outputs);
        let t = self.reference.tower();
        let mut nonzero = 0u64;
        for (a, &d) in depths.iter().enumerate() {
            for i in 0..d {
                let got = out[(i as usize + READ_LATENCY - 1) * OUT_ROW + 6 + a];
                let want = t.counter(a, i);
                assert_eq!(got, want, "{what}: array {a} counter {i}");
                nonzero += (want != 0) as u64;
            }
        }
        let c = self.checked;
        assert_eq!(c.cm + c.acu, self.done, "{what}: every packet's estimate checked");
        eprintln!(
            "{what}: {} packets, estimates checked: {} CM ({} not the last array's counter) + {} ACU, {} \
             estimate_inf; all {} counters equal ({nonzero} non-zero)",
            self.sent,
            c.cm,
            c.cm_not_last,
            c.acu,
            c.inf,
            depths.iter().sum::<u32>()
        );
    }

    /// The estimates checked so far cover CM packets (with one not the last array's
    /// counter, which the omega chain alone would give) iff `cm`, and ACU packets iff `acu`.
    fn assert_modes_seen(&self, what: &str, cm: bool, acu: bool) {
        let c = self.checked;
        assert_eq!((c.cm > 0, c.cm_not_last > 0, c.acu > 0), (cm, cm, acu), "{what}: {c:?}");
    }

    /// Counters of `array` equal to the overflow marker.
    fn overflowed(&self, array: usize) -> u32 {
        let t = self.reference.tower();
        let a = &self.geometry.arrays[array];
        (0..a.depth).filter(|&i| t.counter(array, i) == a.marker()).count() as u32
    }
}

/// Seeded Fisher-Yates.
fn shuffle<T>(v: &mut [T], rng: &mut KeyStream) {
    for i in (1..v.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
}

/// `packets` packets of a Zipf(skew) flow-size distribution over `flows` random keys,
/// shuffled.
fn zipf_trace(packets: u64, flows: u64, skew: f64, seed: u64) -> Vec<FlowKey> {
    let mut rng = KeyStream::new(seed);
    let keys: Vec<FlowKey> = (0..flows).map(|_| rng.next_key()).collect();
    let mut trace: Vec<FlowKey> = Vec::with_capacity(packets as usize);
    for (k, &n) in keys.iter().zip(&zipf_sizes(packets, flows, skew)) {
        trace.extend(std::iter::repeat_n(*k, n as usize));
    }
    shuffle(&mut trace, &mut rng);
    trace
}

fn with_bubbles(keys: &[FlowKey], acu: impl Fn(usize) -> bool, bubble_every: u64, seed: u64) -> Vec<Slot> {
    let mut rng = KeyStream::new(seed);
    let mut slots = Vec::with_capacity(keys.len() * 9 / 8);
    for (n, k) in keys.iter().enumerate() {
        slots.push(Some((*k, acu(n))));
        if bubble_every > 0 && rng.next_u64().is_multiple_of(bubble_every) {
            for _ in 0..1 + rng.next_u64() % 4 {
                slots.push(None);
            }
        }
    }
    slots
}

/// Every packet repeats the flow of the packet 1..=16 places earlier (random gap) or, with
/// probability 1/`fresh_every`, starts a new flow: same-flow packets 1..16 clocks apart.
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

fn report_rate(what: &str, packets: u64, cycles: u64, bubbles: u64, wall: f64) {
    eprintln!(
        "{what}: {packets} packets + {bubbles} bubbles in {cycles} clocks ({:.4} clocks per packet slot, \
         {:.2} Mclk/s simulated)",
        cycles as f64 / (packets + bubbles) as f64,
        cycles as f64 / wall / 1e6
    );
}

/// Runs `slots` on `rig`, checks one slot per clock and the counters.
fn run_and_compare(rig: &mut Rig, slots: &[Slot], what: &str) {
    let t = Instant::now();
    let packets = slots.iter().filter(|s| s.is_some()).count() as u64;
    let bubbles = slots.len() as u64 - packets;
    let done_before = rig.done;
    let cycles = rig.run(slots);
    assert_eq!(cycles, slots.len() as u64, "{what}: one clock per slot");
    // Every packet but the last LATENCY-ish completes inside the run: no stall.
    assert!(rig.done - done_before + LATENCY as u64 >= packets, "{what}: packets completed during the run");
    report_rate(what, packets, cycles, bubbles, t.elapsed().as_secs_f64());
    rig.drain_and_compare(what);
}

/// 1M-packet Zipf trace at the board geometry, CM then ACU (each on a fresh model instance),
/// with a few bubbles.
#[test]
fn zipf_1m_board_geometry_cm_and_acu() {
    let keys = zipf_trace(1_000_000, 100_000, 1.1, 0x2f1f);
    for acu in [false, true] {
        let mut rig = Rig::of_block("tower");
        let slots = with_bubbles(&keys, |_| acu, 64, 7);
        let what = if acu { "zipf 1M ACU" } else { "zipf 1M CM" };
        run_and_compare(&mut rig, &slots, what);
        // The heavy flows overflow 8-bit counters in array 0.
        assert!(rig.overflowed(0) > 0, "{what}: no 8-bit counter overflowed");
        assert!(acu || rig.checked.cm_not_last > 0, "{what}: every estimate was the last array's counter");
    }
}

/// A fresh key that shares `key`'s counter in `array` and no other: its estimate must skip
/// that counter (larger than its own count, or overflowed by `key`).
fn shadow(t: &Tower, key: &FlowKey, array: usize, rng: &mut KeyStream) -> FlowKey {
    let want = t.indices(key);
    loop {
        let k = rng.next_key();
        let idx = t.indices(&k);
        if (0..ARRAYS).all(|a| (idx[a] == want[a]) == (a == array)) {
            return k;
        }
    }
}

/// Board geometry: one elephant flow per array pushes the 8-bit and 16-bit counters past
/// their markers while mice collide around it; then three shadows of the elephant (each
/// sharing one of its counters, overflowed or the largest) interleave with it, so the
/// estimate skips an overflowed or larger counter in every array position. Both modes, back
/// to back and with bubbles.
#[test]
fn saturation_board_geometry() {
    let mut rng = KeyStream::new(99);
    let elephant = rng.next_key();
    let mice: Vec<FlowKey> = (0..64).map(|_| rng.next_key()).collect();
    let mut keys = Vec::new();
    for n in 0..70_000usize {
        keys.push(if n % 3 == 2 { mice[(rng.next_u64() % 64) as usize] } else { elephant });
    }
    // 70000 * 2/3 elephant packets: past 2^16 - 2 in the 16-bit array only in the second half.
    keys.extend(std::iter::repeat_n(elephant, 30_000));
    let t = Tower::new(TowerGeometry::sketchint_fpga(), InsertMode::Cm).unwrap();
    let shadows: Vec<FlowKey> = (0..ARRAYS).map(|a| shadow(&t, &elephant, a, &mut rng)).collect();
    keys.extend((0..3_000).map(|n| if n % 2 == 0 { elephant } else { shadows[n / 2 % ARRAYS] }));
    for acu in [false, true] {
        let mut rig = Rig::of_block("tower");
        let what = if acu { "saturation board ACU" } else { "saturation board CM" };
        run_and_compare(&mut rig, &with_bubbles(&keys, |_| acu, 16, 3), what);
        assert!(rig.overflowed(0) >= 1 && rig.overflowed(1) >= 1, "{what}: 8- and 16-bit markers reached");
        assert!(acu || rig.checked.cm_not_last > 0, "{what}: every estimate was the last array's counter");
    }
}

/// Tiny depths (16/8/4 counters) so every packet collides with packets 1..16 clocks ahead;
/// CM, ACU, and the mode flipping every few packets.
#[test]
fn adversarial_repeats_tiny_depths() {
    let keys = adversarial(200_000, 0xadd, 8);
    type Tiny = (u8, u32);
    let pairs: [Tiny; 3] = [(8, 16), (16, 8), (32, 4)];
    for (what, mode) in [("adversarial CM", 0u8), ("adversarial ACU", 1), ("adversarial mixed", 2)] {
        let mut rig = Rig::of_config::<8, 4, 16, 3, 32, 2>(&pairs);
        let slots = with_bubbles(&keys, |n| if mode == 2 { (n / 3) % 2 == 1 } else { mode == 1 }, 5, 11);
        run_and_compare(&mut rig, &slots, what);
        // 200k packets on 16 counters: the 8-bit array overflows everywhere touched.
        assert!(rig.overflowed(0) > 0, "{what}");
        rig.assert_modes_seen(what, mode != 1, mode != 0);
    }
    // Back to back without bubbles, same flows.
    let mut rig = Rig::of_config::<8, 4, 16, 3, 32, 2>(&pairs);
    let slots = with_bubbles(&keys[..50_000], |n| n % 2 == 0, 0, 0);
    run_and_compare(&mut rig, &slots, "adversarial alternating, no bubbles");
    rig.assert_modes_seen("adversarial alternating", true, true);
}

/// Narrow counters (2/4/8 bits) saturate within a few packets: markers appear while earlier
/// updates of the same counter are still in flight. Adversarial order, all three modes.
#[test]
fn saturation_narrow_widths() {
    let keys = adversarial(100_000, 0x5a7, 4);
    let pairs = [(2u8, 64u32), (4, 32), (8, 16)];
    for (what, mode) in [("narrow CM", 0u8), ("narrow ACU", 1), ("narrow mixed", 2)] {
        let mut rig = Rig::of_config::<2, 6, 4, 5, 8, 4>(&pairs);
        let slots = with_bubbles(&keys, |n| if mode == 2 { n % 7 < 3 } else { mode == 1 }, 9, 5);
        run_and_compare(&mut rig, &slots, what);
        for a in 0..ARRAYS {
            assert!(rig.overflowed(a) > 0, "{what}: array {a} never saturated");
        }
        rig.assert_modes_seen(what, mode != 1, mode != 0);
        assert!(rig.checked.inf > 0, "{what}: no flow with every counter overflowed");
    }
    // Fresh model: a single flow back to back, through every counter value to the marker.
    let mut rig = Rig::of_config::<2, 6, 4, 5, 8, 4>(&pairs);
    let k = KeyStream::new(1).next_key();
    let slots: Vec<Slot> = (0..300).map(|n| Some((k, n % 2 == 0))).collect();
    run_and_compare(&mut rig, &slots, "narrow single flow");
    assert!(rig.checked.cm > 0 && rig.checked.acu > 0, "narrow single flow: {:?}", rig.checked);
    assert!(rig.checked.inf > 0, "narrow single flow: the flow never overflowed every counter");
    let idx = rig.reference.tower().indices(&k);
    for (a, ag) in rig.geometry.arrays.iter().enumerate() {
        assert_eq!(rig.reference.tower().counter(a, idx[a]), ag.marker());
    }
}

/// Counters start at zero and bubbles alone change nothing; the readout sees every address.
#[test]
fn empty_pipeline_reads_zero_and_stays_idle() {
    let mut rig = Rig::of_config::<2, 6, 4, 5, 8, 4>(&[(2, 64), (4, 32), (8, 16)]);
    run_and_compare(&mut rig, &vec![None; 100], "bubbles only");
    assert_eq!(rig.done, 0);
}
