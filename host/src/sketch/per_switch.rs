//! The NIC's per-switch half, one epoch bank of it: every hop of a packet's INT stack goes
//! into the latency tower and past the inflated-latency detector, and a packet whose flow
//! estimate reached the table threshold offers its key and path to the flow-key table.
//!
//! Bit-exact specification of the NIC: for the same packets in the same order (and the
//! flow tower's estimate of each), the latency buckets, the table slots and the inflated-
//! latency records equal the hardware's. Hops are taken in stack (path) order, packets in
//! arrival order, as the NIC's hop serializer feeds them.

use super::hashing::KernelBuild;
use super::key_table::{KeyTable, Offer};
#[cfg(target_arch = "x86_64")]
use super::latency_tower::AcuWindows;
use super::latency_tower::{HopKernel, LatencyTower, PairEstimate};
use crate::trace::Packet;
use smartnic_contract::geometry::{GeometryError, InsertMode, TowerGeometry};
use smartnic_contract::lut::{log2_table, Log2Params};
use smartnic_contract::per_switch::{
    switch_key, InflateRule, InflateScreen, KeyTableGeometry, LatencyTowerGeometry, DEFAULT_TABLE_THRESHOLD,
};
use smartnic_contract::shim::Hop;
use smartnic_contract::wire::record::InflatedRecord;
use smartnic_contract::FlowKey;
use std::ops::Range;

/// How many hops ahead of the one it inserts [`PerSwitch::observe_batch`] requests the
/// buckets of: enough to keep several misses in flight, few enough that the lines are still
/// in L1 when their hop comes.
const LOOKAHEAD: usize = 8;

/// How many packets ahead [`PerSwitch::observe_batch`] requests a packet's hop list.
const HOPS_AHEAD: usize = 8;

/// Packets whose hops [`PerSwitch::observe_batch`] locates before inserting them: their
/// locations (a few hundred hops) stay in L1.
const CHUNK: usize = 64;

/// What the half (and SuMax's batch loop) reads of a batch of packets: each one's flow key
/// and its hops in path order. A slice of parsed packets is the source today; the batch
/// loops see only this, so another packet layout needs no change to them.
pub trait HopSource {
    /// Packets in the batch.
    fn packets(&self) -> usize;
    /// Packet `n`'s flow key.
    fn key(&self, n: usize) -> &FlowKey;
    /// Packet `n`'s hops, in path order.
    fn hops(&self, n: usize) -> &[Hop];
    /// Asks for packet `n`'s hops to be brought into cache (if `n` is in the batch and they
    /// live apart from it).
    fn prefetch_hops(&self, _n: usize) {}
}

impl HopSource for [Packet] {
    fn packets(&self) -> usize {
        self.len()
    }
    fn key(&self, n: usize) -> &FlowKey {
        &self[n].key
    }
    fn hops(&self, n: usize) -> &[Hop] {
        &self[n].hops
    }
    /// A stack longer than [`crate::trace::INLINE_HOPS`] was allocated by the parser's
    /// thread, away from the packet.
    #[inline]
    fn prefetch_hops(&self, n: usize) {
        if let Some(p) = self.get(n) {
            crate::trace::prefetch(p.hops.as_ptr());
        }
    }
}

/// Everything the per-switch half is configured with: geometries at build time, the
/// mode and thresholds by register.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PerSwitchConfig {
    pub latency: LatencyTowerGeometry,
    pub mode: InsertMode,
    pub table: KeyTableGeometry,
    /// A packet whose flow estimate exceeds this offers its key to the table ("heavy" is
    /// strictly larger, as in [`crate::tasks::heavy`]).
    pub table_threshold: u32,
    /// Delta_l in 1/256 units (SketchINT: 5).
    pub inflate_ratio_x256: u32,
}

impl PerSwitchConfig {
    /// The NIC's defaults (approximate CU, as the flow tower's default mode).
    pub fn nic_default() -> Self {
        PerSwitchConfig {
            latency: LatencyTowerGeometry::nic_default(),
            mode: InsertMode::Acu,
            table: KeyTableGeometry::nic_default(),
            table_threshold: DEFAULT_TABLE_THRESHOLD,
            inflate_ratio_x256: InflateRule::SKETCHINT_RATIO_X256,
        }
    }
}

/// Counts of one bank.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PerSwitchStats {
    /// Hops inserted into the latency tower.
    pub hops: u64,
    /// Inflated-latency records produced.
    pub inflated: u64,
    /// Keys stored in the table.
    pub table_inserts: u64,
}

/// One epoch bank of the per-switch half.
#[derive(Clone, Debug)]
pub struct PerSwitch {
    config: PerSwitchConfig,
    pub latency: LatencyTower,
    pub table: KeyTable,
    rule: InflateRule,
    /// Clears most hops before the rule's logarithms are taken.
    screen: InflateScreen,
    log2: Vec<u32>,
    records: Vec<InflatedRecord>,
    stats: PerSwitchStats,
}

impl PerSwitch {
    pub fn new(config: PerSwitchConfig) -> Result<Self, GeometryError> {
        let latency = LatencyTower::new(config.latency.clone(), config.mode)?;
        let table = KeyTable::new(config.table.clone())?;
        let log2 = log2_table(Log2Params::DEFAULT);
        let rule = InflateRule::from_ratio_x256(&log2, Log2Params::DEFAULT, config.inflate_ratio_x256);
        Ok(PerSwitch {
            config,
            latency,
            table,
            rule,
            screen: rule.screen(Log2Params::DEFAULT),
            log2,
            records: Vec::new(),
            stats: PerSwitchStats::default(),
        })
    }

    pub fn config(&self) -> &PerSwitchConfig {
        &self.config
    }

    /// Records one IP packet recorded in `epoch`, whose flow estimate after the flow
    /// tower's insertion is `flow_estimate`.
    pub fn observe(&mut self, epoch: u32, p: &Packet, flow_estimate: u64) {
        let (latency, mut rest) = self.split(epoch);
        for hop in &p.hops {
            let units = rest.config.latency.units(hop.latency_ns);
            let before = latency.insert(&switch_key(hop.switch_id, &p.key), units);
            rest.hop(&p.key, hop, units, before);
        }
        rest.offer(&p.key, &p.hops, flow_estimate);
    }

    /// [`PerSwitch::observe`] of each packet in order, packet `n` with `estimates[n]`: the
    /// same buckets, table and records, faster. The packets go in chunks of [`CHUNK`]: a
    /// chunk's hops are located first (hashing, which the CPU overlaps), then inserted,
    /// each one's buckets requested [`LOOKAHEAD`] hops ahead, so the cache misses of
    /// several hops overlap (the tower is far larger than L1 and each hop touches `d`
    /// unrelated lines). Panics when the two slices differ in length.
    pub fn observe_batch<S: HopSource + ?Sized>(&mut self, epoch: u32, packets: &S, estimates: &[u64]) {
        assert_eq!(packets.packets(), estimates.len(), "one estimate per packet");
        match self.latency.kernel_build() {
            // SAFETY (both): this CPU has the features the build is compiled for.
            #[cfg(target_arch = "x86_64")]
            KernelBuild::CarryLess => unsafe {
                self.observe_batch_on::<CarryLessPasses, S>(epoch, packets, estimates)
            },
            #[cfg(target_arch = "x86_64")]
            KernelBuild::Avx2 => unsafe { self.observe_batch_on::<Avx2Passes, S>(epoch, packets, estimates) },
            // SAFETY: the passes need no CPU feature.
            _ => unsafe { self.observe_batch_on::<PlainPasses, S>(epoch, packets, estimates) },
        }
    }

    /// The batch loop on the tower's fastest kernel, its passes compiled as `P`.
    ///
    /// # Safety
    /// The CPU must support `P`'s features.
    unsafe fn observe_batch_on<P: ChunkPasses, S: HopSource + ?Sized>(
        &mut self,
        epoch: u32,
        packets: &S,
        estimates: &[u64],
    ) {
        let (latency, mut rest) = self.split(epoch);
        let Some(windows) = latency.windows() else {
            // SAFETY (each): the caller's CPU has P's features.
            return unsafe { observe_chunks::<P, _, _>(latency.cells(), &mut rest, packets, estimates) };
        };
        #[cfg(target_arch = "x86_64")]
        if P::AVX2 && windows.mode() == InsertMode::Acu {
            // SAFETY: P's features, the caller's CPU's, include AVX2.
            let acu = unsafe { AcuWindows::new(windows) };
            return unsafe { observe_chunks::<P, _, _>(acu, &mut rest, packets, estimates) };
        }
        unsafe { observe_chunks::<P, _, _>(windows, &mut rest, packets, estimates) }
    }

    /// The latency tower, and the rest of the half that a hop's estimates and a packet's
    /// flow estimate go to, borrowed apart.
    fn split(&mut self, epoch: u32) -> (&mut LatencyTower, AfterTower<'_>) {
        let PerSwitch { config, latency, table, rule, screen, log2, records, stats } = self;
        (latency, AfterTower { epoch, config, table, rule, screen: *screen, log2, records, stats })
    }

    /// One epoch of the half as the NIC fills it: `packets` in order, each observed with
    /// the estimate a flow tower at the NIC's geometry (`TowerGeometry::sketchint_fpga`, in
    /// `tower_mode`) gives right after the packet's insertion.
    pub fn of_epoch(
        config: PerSwitchConfig,
        tower_mode: InsertMode,
        epoch: u32,
        packets: &[Packet],
    ) -> Result<Self, GeometryError> {
        let mut tower = super::Tower::new(TowerGeometry::sketchint_fpga(), tower_mode)?;
        let mut half = PerSwitch::new(config)?;
        for p in packets {
            tower.insert(&p.key);
            half.observe(epoch, p, tower.query(&p.key));
        }
        Ok(half)
    }

    /// The inflated-latency records produced so far, in order.
    pub fn records(&self) -> &[InflatedRecord] {
        &self.records
    }

    /// Takes the records (the host drained the stream).
    pub fn drain_records(&mut self) -> Vec<InflatedRecord> {
        std::mem::take(&mut self.records)
    }

    pub fn stats(&self) -> PerSwitchStats {
        self.stats
    }

    /// A new epoch in this bank: buckets, table and counts cleared (records stay: the
    /// stream is not banked).
    pub fn clear(&mut self) {
        self.latency.clear();
        self.table.clear();
        self.stats = PerSwitchStats::default();
    }
}

/// Everything of the half after the latency tower: the detector that a hop's estimates go
/// past, and the table that a packet's flow estimate may offer its key to.
struct AfterTower<'a> {
    epoch: u32,
    config: &'a PerSwitchConfig,
    table: &'a mut KeyTable,
    rule: &'a InflateRule,
    screen: InflateScreen,
    log2: &'a [u32],
    records: &'a mut Vec<InflatedRecord>,
    stats: &'a mut PerSwitchStats,
}

impl AfterTower<'_> {
    /// A hop of flow `key` of `units` whose pair held `before`, past the detector (the
    /// screen first: it decides almost every hop with one multiply a side).
    #[inline(always)]
    fn hop(&mut self, key: &FlowKey, hop: &Hop, units: u64, before: PairEstimate) {
        self.stats.hops += 1;
        let (Some(count), Some(sum)) = (before.count, before.sum) else { return };
        if self.screen.clears(units, count, sum) {
            return;
        }
        if self.rule.inflated(self.log2, Log2Params::DEFAULT, units, before.count, before.sum) {
            self.stats.inflated += 1;
            self.records.push(InflatedRecord {
                epoch: self.epoch,
                flow: *key,
                switch_id: hop.switch_id,
                latency_ns: hop.latency_ns,
            });
        }
    }

    /// Offers a packet's flow `key` and path (`hops`) to the table when its flow estimate
    /// is above the threshold.
    #[inline(always)]
    fn offer(&mut self, key: &FlowKey, hops: &[Hop], flow_estimate: u64) {
        if flow_estimate > self.config.table_threshold as u64 {
            let path = || hops.iter().map(|h| h.switch_id).collect();
            if let Offer::Inserted(_) = self.table.offer_with(key, path) {
                self.stats.table_inserts += 1;
            }
        }
    }
}

/// [`PerSwitch::observe_batch`] on kernel `k`: chunk by chunk, every hop of the chunk
/// located, then inserted in order, the passes compiled as `P`.
///
/// # Safety
/// The CPU must support `P`'s features.
unsafe fn observe_chunks<P: ChunkPasses, K: HopKernel, S: HopSource + ?Sized>(
    mut k: K,
    rest: &mut AfterTower<'_>,
    src: &S,
    estimates: &[u64],
) {
    let mut locs: Vec<K::Loc> = Vec::new();
    for start in (0..src.packets()).step_by(CHUNK) {
        let chunk = Chunk { src, packets: start..(start + CHUNK).min(src.packets()), estimates };
        locs.clear();
        // SAFETY (both): the caller's CPU has P's features.
        unsafe {
            P::locate(&k, &chunk, &mut locs);
            P::insert(&mut k, rest, &chunk, &locs);
        }
    }
}

/// What a pass of [`ChunkPasses`] takes of a batch: the packets `packets` of `src`, packet
/// `n` with flow estimate `estimates[n]`.
struct Chunk<'a, S: ?Sized> {
    src: &'a S,
    packets: Range<usize>,
    estimates: &'a [u64],
}

/// The two passes over a chunk of packets, each compiled for one kernel build as a
/// function of its own.
///
/// Why apart: compiled as one function with the chunk loop (and the other kernels), the
/// insert pass's registers were allocated differently from build to build, and an
/// unrelated change elsewhere in the crate moved the per-switch thread's time by a tenth.
/// A small function per pass leaves the allocator one loop to solve.
trait ChunkPasses {
    /// The build may use AVX2 (the vector step of [`AcuWindows`]).
    const AVX2: bool;

    /// Appends to `locs` the location of every hop of the chunk, in order.
    ///
    /// # Safety
    /// The CPU must support the build's features.
    unsafe fn locate<K: HopKernel, S: HopSource + ?Sized>(k: &K, chunk: &Chunk<S>, locs: &mut Vec<K::Loc>);

    /// Inserts the chunk's hops, located at `locs`, and offers each packet to the table.
    ///
    /// # Safety
    /// The CPU must support the build's features.
    unsafe fn insert<K: HopKernel, S: HopSource + ?Sized>(
        k: &mut K,
        rest: &mut AfterTower,
        chunk: &Chunk<S>,
        locs: &[K::Loc],
    );
}

/// Defines a [`ChunkPasses`] build: its name, whether it has AVX2, and its target features.
macro_rules! chunk_passes {
    ($(#[$doc:meta])* $name:ident, $avx2:expr $(, $features:literal)?) => {
        $(#[$doc])*
        struct $name;

        impl ChunkPasses for $name {
            const AVX2: bool = $avx2;

            $(#[target_feature(enable = $features)])?
            #[inline(never)]
            unsafe fn locate<K: HopKernel, S: HopSource + ?Sized>(k: &K, chunk: &Chunk<S>, locs: &mut Vec<K::Loc>) {
                locate_chunk(k, chunk, locs)
            }

            $(#[target_feature(enable = $features)])?
            #[inline(never)]
            unsafe fn insert<K: HopKernel, S: HopSource + ?Sized>(k: &mut K, rest: &mut AfterTower, chunk: &Chunk<S>, locs: &[K::Loc]) {
                insert_chunk(k, rest, chunk, locs)
            }
        }
    };
}

chunk_passes!(
    /// Any CPU.
    PlainPasses,
    false
);
#[cfg(target_arch = "x86_64")]
chunk_passes!(
    /// AVX2 (one instruction per hash row) and BMI2 (single-micro-op variable shifts for
    /// the packed cells), as the flow sketches' batch paths; the NIC's tower in its default
    /// mode steps both fields of a hop in one vector ([`AcuWindows`]).
    Avx2Passes,
    true,
    "avx2,bmi2"
);
#[cfg(target_arch = "x86_64")]
chunk_passes!(
    /// [`Avx2Passes`] with the flows' share of the hop hashes computed by carry-less
    /// multiplication, inlined ([`KernelBuild::CarryLess`]).
    CarryLessPasses,
    true,
    "avx2,bmi2,avx512f,avx512bw,vpclmulqdq"
);

/// The locate pass: each packet's hop list requested [`HOPS_AHEAD`] packets ahead, the
/// flow's share of the hashes computed once for all its hops.
#[inline(always)]
fn locate_chunk<K: HopKernel, S: HopSource + ?Sized>(k: &K, chunk: &Chunk<S>, locs: &mut Vec<K::Loc>) {
    let src = chunk.src;
    for n in chunk.packets.clone() {
        src.prefetch_hops(n + HOPS_AHEAD);
        let hops = src.hops(n);
        if hops.is_empty() {
            continue;
        }
        let flow = k.flow_part(src.key(n));
        for h in hops {
            locs.push(k.locate(&flow, h.switch_id));
        }
    }
}

/// The insert pass: the hops in order, the buckets of the hop [`LOOKAHEAD`] places on
/// requested before each.
#[inline(always)]
fn insert_chunk<K: HopKernel, S: HopSource + ?Sized>(
    k: &mut K,
    rest: &mut AfterTower,
    chunk: &Chunk<S>,
    locs: &[K::Loc],
) {
    locs.iter().take(LOOKAHEAD).for_each(|l| k.prefetch(l));
    let (&Chunk { src, ref packets, estimates }, mut i) = (chunk, 0);
    for n in packets.clone() {
        let key = src.key(n);
        for hop in src.hops(n) {
            if let Some(ahead) = locs.get(i + LOOKAHEAD) {
                k.prefetch(ahead);
            }
            let units = rest.config.latency.units(hop.latency_ns);
            rest.hop(key, hop, units, k.insert(&locs[i], units));
            i += 1;
        }
        rest.offer(key, src.hops(n), estimates[n]);
    }
}

/// Where `kept` stops being `model` less some records, in order (what a record buffer that
/// drops whole records when full delivers): the index of the first kept record that is not
/// the model's next, or `None` when every kept record is.
pub fn first_out_of_order(kept: &[InflatedRecord], model: &[InflatedRecord]) -> Option<usize> {
    let mut it = model.iter();
    kept.iter().position(|r| !it.any(|m| m == r))
}

#[cfg(test)]
mod tests {
    use super::*;
    use smartnic_contract::FlowKey;

    fn packet(n: u8, hops: &[(u16, u32)]) -> Packet {
        Packet {
            ts_ns: 0,
            wire_len: 100,
            key: FlowKey::from_v4([10, 0, 0, n], [10, 0, 1, 1], 1000, 80, 6),
            hops: hops.iter().map(|&(switch_id, latency_ns)| Hop { switch_id, latency_ns }).collect(),
        }
    }

    /// Ten hops of 1 us at switch 2, then one of 6 us (more than 5x the average) and one of
    /// 5 us (not more than 5x): exactly one record, naming switch 2; switch 1 never inflates.
    #[test]
    fn one_inflated_hop_one_record() {
        let mut s = PerSwitch::new(PerSwitchConfig::nic_default()).unwrap();
        for _ in 0..10 {
            s.observe(3, &packet(1, &[(1, 1000), (2, 1000)]), 1);
        }
        s.observe(3, &packet(1, &[(1, 1000), (2, 6000)]), 1);
        s.observe(3, &packet(1, &[(1, 1000), (2, 5000)]), 1);
        assert_eq!(s.stats().hops, 24);
        let r = s.records();
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!((r[0].epoch, r[0].switch_id, r[0].latency_ns), (3, 2, 6000));
        assert_eq!(s.latency.query(2, &packet(1, &[]).key).count, Some(12));
    }

    #[test]
    fn table_takes_flows_at_the_threshold_once() {
        let mut cfg = PerSwitchConfig::nic_default();
        cfg.table_threshold = 3;
        let mut s = PerSwitch::new(cfg).unwrap();
        for est in 1..=5 {
            s.observe(0, &packet(1, &[(4, 10), (7, 10)]), est);
        }
        s.observe(0, &packet(2, &[]), 2);
        assert_eq!(s.stats().table_inserts, 1);
        let e: Vec<_> = s.table.entries().cloned().collect();
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].path, vec![4, 7]);
        s.clear();
        assert_eq!(s.table.entries().count(), 0);
        assert_eq!(s.stats(), PerSwitchStats::default());
    }

    /// Packets of a generated trace with INT stacks of 1 to 6 hops over 37 flows.
    fn trace_packets(n: u64) -> Vec<Packet> {
        use crate::trace::gen::{generate, GenConfig, ShimConfig};
        use crate::trace::{Format, PacketReader};
        let shim = ShimConfig { min_hops: 1, max_hops: 6, ..ShimConfig::default() };
        let cfg = GenConfig { packets: n, flows: 37, shim: Some(shim), ..GenConfig::default() };
        let mut pcap = Vec::new();
        generate(&cfg, &mut pcap, None).unwrap();
        let mut r = PacketReader::from_reader(&pcap[..], Format::Auto).unwrap();
        std::iter::from_fn(|| r.next_packet().unwrap()).collect()
    }

    /// The prefetching batch path is `observe` packet by packet: the same buckets, table
    /// ways, misses, records and counts, in every mode, whatever the batch cut. Small
    /// towers (pairs collide, narrow cells overflow), one of narrow cells on the general
    /// kernel and one of the NIC's widths on the window kernel, a table of 4 slots (it
    /// fills and misses) and a low threshold.
    #[test]
    fn observe_batch_equals_observe() {
        let packets = trace_packets(6000);
        let estimates: Vec<u64> = (0..packets.len() as u64).map(|n| n * 7 % 23).collect();
        let towers = [
            (LatencyTowerGeometry::from_cells(&[(4, 10, 61), (6, 14, 31), (8, 16, 13)], 4), false),
            (LatencyTowerGeometry::from_cells(&[(8, 24, 61), (16, 32, 31), (32, 32, 13)], 4), true),
        ];
        let modes = [InsertMode::Cm, InsertMode::Cu, InsertMode::Acu];
        for ((latency, windowed), mode) in towers.iter().flat_map(|t| modes.map(|m| (t, m))) {
            let mut tower = LatencyTower::new(latency.clone(), mode).unwrap();
            assert_eq!(tower.windows().is_some(), *windowed, "{latency:?}");
            let config = PerSwitchConfig {
                latency: latency.clone(),
                mode,
                table: KeyTableGeometry::with_capacity(4),
                table_threshold: 12,
                inflate_ratio_x256: 2 * 256,
            };
            let mut one = PerSwitch::new(config.clone()).unwrap();
            one.latency.hash_by_tables();
            packets.iter().zip(&estimates).for_each(|(p, &e)| one.observe(9, p, e));
            // The batch path with either hashing: carry-less where the CPU has it (cut 1
            // to 700), and table rows (6000).
            for cut in [1, 5, 700, 6000] {
                let mut batch = PerSwitch::new(config.clone()).unwrap();
                if cut == 6000 {
                    batch.latency.hash_by_tables();
                }
                for (p, e) in packets.chunks(cut).zip(estimates.chunks(cut)) {
                    batch.observe_batch(9, p, e);
                }
                for a in 0..3 {
                    assert_eq!(batch.latency.array_bytes(a), one.latency.array_bytes(a), "{mode:?} {cut}");
                }
                for w in 0..2 {
                    assert_eq!(batch.table.way_bytes(w), one.table.way_bytes(w), "{mode:?} {cut}");
                }
                assert_eq!(batch.table.misses(), one.table.misses());
                assert_eq!(batch.records(), one.records(), "{mode:?} {cut}");
                assert_eq!(batch.stats(), one.stats(), "{mode:?} {cut}");
            }
            let s = one.stats();
            assert!(s.inflated > 0 && s.table_inserts == 4 && one.table.misses() > 0, "{s:?}");
        }
    }

    #[test]
    fn records_kept_in_order_are_the_model_less_some() {
        let r = |n: u32| InflatedRecord {
            epoch: 0,
            flow: FlowKey::default(),
            switch_id: n as u16,
            latency_ns: n,
        };
        let model: Vec<InflatedRecord> = (0..5).map(r).collect();
        assert_eq!(first_out_of_order(&model, &model), None);
        assert_eq!(first_out_of_order(&[r(0), r(2), r(4)], &model), None, "dropped ones are fine");
        assert_eq!(first_out_of_order(&[r(0), r(3), r(2)], &model), Some(2), "out of order");
        assert_eq!(first_out_of_order(&[r(1), r(7)], &model), Some(1), "not the model's");
        assert_eq!(first_out_of_order(&[r(1), r(1)], &model), Some(1), "twice");
    }
}
