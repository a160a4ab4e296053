//! SuMax (LightGuardian section 4): `d` arrays of buckets, each bucket with sum cells
//! (flow size, lambda_d delay cells) updated by the running-minimum rule of Algorithm 1,
//! and max cells (maximum inter-arrival time, last arrival time) per section 4.4.
//!
//! Bit-exact specification of the NIC's SuMax pipeline: the flow-size cells and the
//! selected delay cells each carry their own omega from array 0 to array d-1; the delay bin
//! comes from the LUT log2 (`arith::delay_bin`); times are in units of `2^time_shift` ns,
//! truncated to `time_width` bits, and a last-arrival value of 0 means "no packet yet"
//! (the paper's rule), so the inter-arrival of a bucket's first packet is 0; a time that
//! went backwards also records gap 0 (the contract's [`interval::gap`]).

use super::cell::{omega_step, unit_omega_step, value, INF};
use super::hashing::{HashBank, KernelBuild};
use super::tower::MAX_ARRAYS;
use crate::trace::Packet;
use smartnic_contract::geometry::{marker, sumax_cell, GeometryError, SuMaxGeometry};
use smartnic_contract::hash::index;
use smartnic_contract::interval;
use smartnic_contract::packing::PackedBits;
use smartnic_contract::FlowKey;

mod kernel;
use kernel::{batch_loop, General, WordCells};

/// Packets ahead whose buckets [`SuMax::insert_packets`] prefetches. In `sketch run` the
/// parser shares the core (and its L2) with SuMax, and 8 ahead measured better than 4 there:
/// the main thread's median 0.424 to 0.415 s on 5M packets (16 was no better).
const LOOKAHEAD: usize = 8;

/// Position of one cell inside a bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Cell {
    offset: u64,
    width: u8,
    marker: u32,
}

/// A SuMax sketch.
#[derive(Clone, Debug)]
pub struct SuMax {
    geometry: SuMaxGeometry,
    arrays: Vec<PackedBits>,
    cells: Vec<Cell>,
    bucket_bits: u64,
    hashes: HashBank,
    time_mask: u64,
    bins: crate::arith::DelayBins,
    /// Every cell is a field of the NIC's widths (32-bit size and time cells, 16-bit delay
    /// cells) at a multiple of its width, in buckets of a multiple of 32 bits: no cell then
    /// straddles a word, and the batch path takes the [`WordCells`] kernel, whose
    /// widths are constants.
    word_cells: bool,
}

/// Everything SuMax knows about one flow (min over arrays for every cell).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SuMaxEstimate {
    pub size: u64,
    pub delay_hist: Vec<u64>,
    /// Maximum inter-arrival time, in time units of `2^time_shift` ns.
    pub max_interval: u64,
    /// Last arrival time, in time units.
    pub last_arrival: u64,
}

impl SuMax {
    pub fn new(geometry: SuMaxGeometry) -> Result<Self, GeometryError> {
        geometry.validate()?;
        let d = geometry.hashes.len();
        if d > MAX_ARRAYS {
            return Err(GeometryError::TooManyArrays { arrays: d, max: MAX_ARRAYS });
        }
        let mut offset = 0;
        let cells: Vec<Cell> = geometry
            .cell_widths()
            .into_iter()
            .map(|width| {
                let c = Cell { offset, width, marker: marker(width) };
                offset += width as u64;
                c
            })
            .collect();
        let bucket_bits = geometry.bucket_bits();
        let arrays = (0..d).map(|_| PackedBits::new(bucket_bits * geometry.depth as u64)).collect();
        let word_cells = (geometry.size_width, geometry.delay_width, geometry.time_width) == (32, 16, 32)
            && bucket_bits.is_multiple_of(32)
            && cells.iter().all(|c| c.offset.is_multiple_of(c.width as u64));
        Ok(SuMax {
            word_cells,
            hashes: HashBank::new(&geometry.hashes),
            time_mask: marker(geometry.time_width) as u64,
            bins: crate::arith::DelayBins::new(geometry.delay_bins, geometry.delay_cells),
            geometry,
            arrays,
            cells,
            bucket_bits,
        })
    }

    pub fn geometry(&self) -> &SuMaxGeometry {
        &self.geometry
    }

    /// Bucket index of `key` in each array.
    #[inline(always)]
    pub fn indices(&self, key: &FlowKey) -> [u32; MAX_ARRAYS] {
        let mut h = self.hashes.hash(key);
        for x in h.iter_mut().take(self.arrays.len()) {
            *x = index(*x, self.geometry.depth);
        }
        h
    }

    /// The time-cell value of a timestamp in ns.
    pub fn time_of(&self, ts_ns: u64) -> u32 {
        ((ts_ns >> self.geometry.time_shift) & self.time_mask) as u32
    }

    /// The delay cell a packet with in-network delay `delay_ns` lands in.
    #[inline(always)]
    pub fn delay_bin(&self, delay_ns: u64) -> u8 {
        self.bins.bin(delay_ns)
    }

    /// Records one packet of `key` that arrived at `ts_ns` after `delay_ns` in the network.
    pub fn insert(&mut self, key: &FlowKey, ts_ns: u64, delay_ns: u64) {
        let idx = self.indices(key);
        let t = self.time_of(ts_ns);
        let bin = self.delay_bin(delay_ns);
        self.insert_at(&idx, t, bin);
    }

    /// Records `packets` in order: exactly one [`SuMax::insert`] each, but the buckets of
    /// the packet [`LOOKAHEAD`] places ahead are hashed and prefetched while the current
    /// one is updated, so the cache misses of several packets overlap, and the sum cells
    /// take the branch-free unit step ([`unit_omega_step`]).
    pub fn insert_packets(&mut self, packets: &[Packet]) {
        match self.hashes.kernel_build() {
            // SAFETY (both): this CPU has the features the build is compiled for.
            #[cfg(target_arch = "x86_64")]
            KernelBuild::CarryLess => unsafe { self.insert_packets_carry_less(packets) },
            #[cfg(target_arch = "x86_64")]
            KernelBuild::Avx2 => unsafe { self.insert_packets_avx2(packets) },
            _ => self.insert_packets_any(packets),
        }
    }

    /// [`SuMax::insert_packets_avx2`] with the hashing by carry-less multiplication
    /// inlined ([`HashBank::kernel_build`]).
    ///
    /// # Safety
    /// The CPU must support AVX2, BMI2, AVX-512F, AVX-512BW and VPCLMULQDQ.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,bmi2,avx512f,avx512bw,vpclmulqdq")]
    unsafe fn insert_packets_carry_less(&mut self, packets: &[Packet]) {
        self.insert_packets_any(packets)
    }

    /// [`SuMax::insert_packets`] compiled for AVX2 (the hash rows) and BMI2 (the packed
    /// cells' variable shifts), as the Tower's batch path.
    ///
    /// # Safety
    /// The CPU must support AVX2 and BMI2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,bmi2")]
    unsafe fn insert_packets_avx2(&mut self, packets: &[Packet]) {
        self.insert_packets_any(packets)
    }

    /// The batch loop on the fastest kernel for the layout.
    #[inline(always)]
    fn insert_packets_any(&mut self, packets: &[Packet]) {
        if let Some(k) = WordCells::<3>::of(self) {
            return batch_loop(k, packets);
        }
        batch_loop(General(self), packets)
    }

    /// [`SuMax::insert_at`] with the sum cells' branch-free unit step and everything
    /// inlined into the batch loop; the same cells, written in the same order.
    #[inline(always)]
    fn insert_fast(&mut self, idx: &[u32], t: u32, bin: u8) {
        let size = self.cells[sumax_cell::SIZE];
        let delay = self.cells[sumax_cell::FIRST_DELAY + bin as usize];
        let interval = self.cells[sumax_cell::interval(self.geometry.delay_cells)];
        let last = self.cells[sumax_cell::last(self.geometry.delay_cells)];
        let (mut omega_size, mut omega_delay) = (INF, INF);
        for (a, &i) in self.arrays.iter_mut().zip(idx) {
            let base = i as u64 * self.bucket_bits;
            unit_sum_update(a, base, size, &mut omega_size);
            unit_sum_update(a, base, delay, &mut omega_delay);
            let prev = a.get(base + last.offset, last.width);
            let gap = interval::gap(t, prev, self.geometry.time_width);
            let old = a.get(base + interval.offset, interval.width);
            a.set(base + interval.offset, interval.width, gap.max(old));
            a.set(base + last.offset, last.width, t);
        }
    }

    /// The update of Algorithm 1 plus the max cells, at precomputed bucket indices.
    pub fn insert_at(&mut self, idx: &[u32], t: u32, bin: u8) {
        let size = self.cells[sumax_cell::SIZE];
        let delay = self.cells[sumax_cell::FIRST_DELAY + bin as usize];
        let interval = self.cells[sumax_cell::interval(self.geometry.delay_cells)];
        let last = self.cells[sumax_cell::last(self.geometry.delay_cells)];
        let (mut omega_size, mut omega_delay) = (INF, INF);
        for (a, &i) in self.arrays.iter_mut().zip(idx) {
            let base = i as u64 * self.bucket_bits;
            sum_update(a, base, size, &mut omega_size);
            sum_update(a, base, delay, &mut omega_delay);
            let prev = a.get(base + last.offset, last.width);
            let gap = interval::gap(t, prev, self.geometry.time_width);
            if gap > a.get(base + interval.offset, interval.width) {
                a.set(base + interval.offset, interval.width, gap);
            }
            a.set(base + last.offset, last.width, t);
        }
    }

    /// Stored value of cell `cell` of bucket `bucket` in array `array`.
    pub fn cell(&self, array: usize, bucket: u32, cell: usize) -> u32 {
        let c = self.cells[cell];
        self.arrays[array].get(bucket as u64 * self.bucket_bits + c.offset, c.width)
    }

    /// Overwrites one cell (value truncated to the cell width); for tests and tools.
    pub fn set_cell(&mut self, array: usize, bucket: u32, cell: usize, v: u32) {
        let c = self.cells[cell];
        self.arrays[array].set(bucket as u64 * self.bucket_bits + c.offset, c.width, v)
    }

    /// Minimum over the present arrays of one cell. Sum cells skip overflow markers; max
    /// cells (times) have no marker, every value is real.
    fn min_cell(&self, idx: &[Option<u32>], cell: usize, sum: bool) -> Option<u64> {
        let c = self.cells[cell];
        idx.iter()
            .enumerate()
            .filter_map(|(a, i)| i.map(|i| (a, i)))
            .map(|(a, i)| self.cell(a, i, cell))
            .map(|v| if sum { value(v, c.marker) } else { v as u64 })
            .filter(|&v| v != INF)
            .min()
    }

    /// Estimate for `key` from every array.
    pub fn query(&self, key: &FlowKey) -> SuMaxEstimate {
        let idx = self.indices(key);
        let all: Vec<Option<u32>> = idx[..self.arrays.len()].iter().map(|&i| Some(i)).collect();
        self.query_partial(&all).expect("all arrays present")
    }

    /// Estimate from the arrays whose bucket is present (`None` = not received, the
    /// partial reconstruction of LightGuardian 6.1). `None` when no bucket is valid.
    pub fn query_partial(&self, idx: &[Option<u32>]) -> Option<SuMaxEstimate> {
        if idx.iter().all(Option::is_none) {
            return None;
        }
        let dc = self.geometry.delay_cells;
        // A sum cell overflowed in every present array reads as its marker (a lower bound).
        let sum = |cell: usize| self.min_cell(idx, cell, true).unwrap_or(self.cells[cell].marker as u64);
        let max = |cell: usize| self.min_cell(idx, cell, false).unwrap_or(0);
        Some(SuMaxEstimate {
            size: sum(sumax_cell::SIZE),
            delay_hist: (0..dc as usize).map(|b| sum(sumax_cell::FIRST_DELAY + b)).collect(),
            max_interval: max(sumax_cell::interval(dc)),
            last_arrival: max(sumax_cell::last(dc)),
        })
    }

    /// Packed bytes of one array (the snapshot layout).
    pub fn array_bytes(&self, array: usize) -> Vec<u8> {
        self.arrays[array].to_bytes()
    }

    /// Replaces one array from packed bytes; false if too short.
    pub fn load_array(&mut self, array: usize, raw: &[u8]) -> bool {
        match PackedBits::from_bytes(raw, self.arrays[array].bits()) {
            Some(b) => {
                self.arrays[array] = b;
                true
            }
            None => false,
        }
    }

    pub fn clear(&mut self) {
        self.arrays.iter_mut().for_each(PackedBits::clear);
    }

    pub fn memory_bytes(&self) -> u64 {
        self.geometry.memory_bits().div_ceil(8)
    }
}

#[inline(always)]
fn sum_update(a: &mut PackedBits, base: u64, c: Cell, omega: &mut u64) {
    a.update(base + c.offset, c.width, |v| omega_step(v, c.marker, 1, omega));
}

/// One sum cell's unit step, branch-free ([`unit_omega_step`]).
#[inline(always)]
fn unit_sum_update(a: &mut PackedBits, base: u64, c: Cell, omega: &mut u64) {
    let stored = a.get(base + c.offset, c.width);
    a.set(base + c.offset, c.width, unit_omega_step(stored, c.marker, omega));
}

#[cfg(test)]
mod tests {
    use super::*;
    use smartnic_contract::geometry::sumax_cell::{interval, last, FIRST_DELAY, SIZE};

    fn key() -> FlowKey {
        FlowKey::from_v4([10, 0, 0, 1], [10, 0, 0, 2], 4242, 80, 6)
    }

    fn small() -> SuMax {
        SuMax::new(SuMaxGeometry::with_depth(3, 64)).unwrap()
    }

    /// The prefetching batch path is the sequential path, cell for cell, with delays that
    /// spread over the delay cells and gaps of every size.
    #[test]
    fn batch_insert_equals_sequential_insert() {
        use smartnic_contract::shim::Hop;
        let mut stream = smartnic_contract::vectors::KeyStream::new(3);
        let pool: Vec<FlowKey> = (0..50).map(|_| stream.next_key()).collect();
        let packets: Vec<Packet> = (0..4000u64)
            .map(|n| Packet {
                ts_ns: n * n * 977,
                wire_len: 64,
                key: pool[(n * n % 50) as usize],
                hops: [Hop { switch_id: 1, latency_ns: (n * 7919 % 90_000) as u32 }].into_iter().collect(),
            })
            .collect();
        let mut seq = small();
        seq.hashes = seq.hashes.clone().tables_only();
        packets.iter().for_each(|p| seq.insert(&p.key, p.ts_ns, p.delay_ns()));
        // Both hashings (carry-less where the CPU has it, and table rows) in the batch path.
        for tables in [false, true] {
            let mut batch = small();
            if tables {
                batch.hashes = batch.hashes.clone().tables_only();
            }
            batch.insert_packets(&packets[..5]);
            batch.insert_packets(&packets[5..]);
            for a in 0..seq.arrays.len() {
                assert_eq!(seq.array_bytes(a), batch.array_bytes(a), "array {a} {tables}");
            }
        }
    }

    /// 3000 one-hop packets of 40 flows (of key stream `seed`), `gap_ns` apart, with
    /// latencies spread over `0..max_latency_ns`.
    fn few_flows(seed: u64, gap_ns: u64, max_latency_ns: u64) -> Vec<Packet> {
        use smartnic_contract::shim::Hop;
        let mut stream = smartnic_contract::vectors::KeyStream::new(seed);
        let pool: Vec<FlowKey> = (0..40).map(|_| stream.next_key()).collect();
        let packet = |n: u64| Packet {
            ts_ns: n * gap_ns,
            wire_len: 64,
            key: pool[(n * n % 40) as usize],
            hops: [Hop { switch_id: 2, latency_ns: (n * 7919 % max_latency_ns) as u32 }]
                .into_iter()
                .collect(),
        };
        (0..3000u64).map(packet).collect()
    }

    /// The NIC's layout takes the word-cell kernel; layouts whose cells may straddle a
    /// word (or of other widths) take the general one.
    #[test]
    fn word_cells_only_for_aligned_nic_widths() {
        assert!(SuMax::new(SuMaxGeometry::nic_default()).unwrap().word_cells);
        assert!(small().word_cells);
        let mut odd = SuMaxGeometry::with_depth(3, 64);
        odd.delay_cells = 7; // the interval cell at bit 144: 32 bits across a word boundary
        assert!(!SuMax::new(odd).unwrap().word_cells);
        let mut narrow = SuMaxGeometry::with_depth(3, 64);
        narrow.delay_width = 8;
        assert!(!SuMax::new(narrow).unwrap().word_cells);
    }

    /// The word-cell kernel equals the sequential path through saturation: every cell
    /// starts a few packets below its marker (sizes at `u32::MAX - k`, delays at
    /// `u16::MAX - k`) and last-arrival times near the wrap, so markers are reached, skipped
    /// and kept, and gaps wrap.
    #[test]
    fn word_cell_batch_equals_sequential_through_saturation() {
        let g = SuMaxGeometry::with_depth(3, 8);
        let mut primed = SuMax::new(g.clone()).unwrap();
        assert!(primed.word_cells);
        for (a, b) in (0..3).flat_map(|a| (0..8u32).map(move |b| (a, b))) {
            primed.set_cell(a, b, SIZE, u32::MAX - 40 - b * 7 - a as u32);
            for bin in 0..g.delay_cells as usize {
                primed.set_cell(a, b, FIRST_DELAY + bin, u16::MAX as u32 - 30 - b * 3 - bin as u32);
            }
            primed.set_cell(a, b, last(g.delay_cells), u32::MAX - b * 100);
        }
        let packets = few_flows(9, 9001, 90_000);
        let mut seq = primed.clone();
        seq.hashes = seq.hashes.clone().tables_only();
        packets.iter().for_each(|p| seq.insert(&p.key, p.ts_ns, p.delay_ns()));
        let mut batch = primed;
        batch.insert_packets(&packets[..7]);
        batch.insert_packets(&packets[7..]);
        let cells = |cell: usize| (0..3).flat_map(move |a| (0..8).map(move |b| (a, b, cell)));
        let at_marker = |cells: &mut dyn Iterator<Item = (usize, u32, usize)>, marker: u32| {
            cells.filter(|&(a, b, c)| seq.cell(a, b, c) == marker).count()
        };
        let sizes = at_marker(&mut cells(SIZE), u32::MAX);
        let delays =
            at_marker(&mut (0..g.delay_cells as usize).flat_map(|d| cells(FIRST_DELAY + d)), u16::MAX as u32);
        assert!(sizes > 0 && delays > 0, "the workload saturates size ({sizes}) and delay ({delays}) cells");
        for a in 0..seq.arrays.len() {
            assert_eq!(seq.array_bytes(a), batch.array_bytes(a), "array {a}");
        }
    }

    /// The batch path equals the sequential path where the sum cells saturate: 3-bit size
    /// and 2-bit delay cells on few buckets, so markers are reached, skipped and kept.
    #[test]
    fn batch_insert_equals_sequential_insert_through_saturation() {
        let mut g = SuMaxGeometry::with_depth(3, 8);
        (g.size_width, g.delay_width) = (3, 2);
        let packets = few_flows(5, 3001, 9_000);
        let mut seq = SuMax::new(g.clone()).unwrap();
        packets.iter().for_each(|p| seq.insert(&p.key, p.ts_ns, p.delay_ns()));
        let mut batch = SuMax::new(g).unwrap();
        batch.insert_packets(&packets);
        let saturated = (0..8).filter(|&b| seq.cell(0, b, SIZE) == 7).count();
        assert!(saturated > 0, "the workload saturates some size cells");
        for a in 0..seq.arrays.len() {
            assert_eq!(seq.array_bytes(a), batch.array_bytes(a), "array {a}");
        }
    }

    /// LightGuardian Figure 2 with our cells: flow-size cells [6, 9, 3] and max
    /// inter-arrival cells [3, 7, 5]. One packet arriving 4 time units after the last one
    /// makes the sizes [7, 9, 4] (alpha = 1: 6+1 -> omega 7; 9 >= 7 unchanged; 3+1 < 7)
    /// and the intervals [4, 7, 5]; the query returns min{7, 9, 4} = 4 and min{4, 7, 5} = 4.
    #[test]
    fn lightguardian_figure2_bucket_updates() {
        let mut s = small();
        let idx = s.indices(&key());
        let dc = s.geometry().delay_cells;
        for (a, (size, iv)) in [(6, 3), (9, 7), (3, 5)].into_iter().enumerate() {
            s.set_cell(a, idx[a], SIZE, size);
            s.set_cell(a, idx[a], interval(dc), iv);
            s.set_cell(a, idx[a], last(dc), 100);
        }
        s.insert_at(&idx, 104, 2);
        let cells = |cell| (0..3).map(|a| s.cell(a, idx[a], cell)).collect::<Vec<_>>();
        assert_eq!(cells(SIZE), vec![7, 9, 4]);
        assert_eq!(cells(interval(dc)), vec![4, 7, 5]);
        assert_eq!(cells(last(dc)), vec![104, 104, 104]);
        assert_eq!(cells(FIRST_DELAY + 2), vec![1, 1, 1]);
        let e = s.query(&key());
        assert_eq!((e.size, e.max_interval, e.last_arrival), (4, 4, 104));
        assert_eq!(e.delay_hist, vec![0, 0, 1, 0, 0, 0, 0, 0]);
    }

    /// One flow alone: sizes count packets, delays land in their octave bins, the first
    /// packet's inter-arrival is 0 and later ones are measured in 2^time_shift ns units.
    #[test]
    fn single_flow_hand_computed() {
        let mut s = small();
        let unit = 1u64 << s.geometry().time_shift;
        // Delays: 500 ns (< 1 us: bin 0), 1.5 us (bin 1), 3 us (bin 2), 100 us (last bin 7).
        let packets = [(10 * unit, 500), (13 * unit, 1_500), (23 * unit, 3_000), (24 * unit, 100_000)];
        for (ts, delay) in packets {
            s.insert(&key(), ts, delay);
        }
        let e = s.query(&key());
        assert_eq!(e.size, 4);
        assert_eq!(e.delay_hist, vec![1, 1, 1, 0, 0, 0, 0, 1]);
        assert_eq!(e.max_interval, 10);
        assert_eq!(e.last_arrival, 24);
    }

    /// Time that goes backwards (merged captures) records gap 0, not a wrapped difference
    /// of almost the whole time range; the next forward step is measured from the earlier
    /// time, as the ground truth measures it.
    #[test]
    fn backwards_time_counts_as_gap_zero() {
        let mut s = small();
        let unit = 1u64 << s.geometry().time_shift;
        for t in [100, 200, 150, 260, 255] {
            s.insert(&key(), t * unit, 0);
        }
        let e = s.query(&key());
        assert_eq!(e.size, 5);
        assert_eq!(e.max_interval, 110, "gaps 100, 0, 110, 0");
        assert_eq!(e.last_arrival, 255);
    }

    /// The delay cells run their own omega chain, independent of the size cells'.
    #[test]
    fn delay_cells_have_their_own_running_minimum() {
        let mut s = small();
        let idx = s.indices(&key());
        let cell = FIRST_DELAY + 1;
        for (a, v) in [5u32, 2, 9].into_iter().enumerate() {
            s.set_cell(a, idx[a], cell, v);
            s.set_cell(a, idx[a], SIZE, 1);
        }
        s.insert_at(&idx, 7, 1);
        let got: Vec<u32> = (0..3).map(|a| s.cell(a, idx[a], cell)).collect();
        assert_eq!(got, vec![6, 3, 9]);
        let sizes: Vec<u32> = (0..3).map(|a| s.cell(a, idx[a], SIZE)).collect();
        assert_eq!(sizes, vec![2, 2, 2]);
    }

    /// A 16-bit delay cell saturates at the marker and stays there; the query of a flow whose
    /// cells all overflowed reports the marker.
    #[test]
    fn delay_cell_saturation() {
        let mut s = small();
        let idx = s.indices(&key());
        for (a, &i) in idx.iter().take(3).enumerate() {
            s.set_cell(a, i, FIRST_DELAY, 0xFFFD);
        }
        s.insert_at(&idx, 1, 0);
        assert_eq!(s.cell(0, idx[0], FIRST_DELAY), 0xFFFE);
        s.insert_at(&idx, 2, 0);
        s.insert_at(&idx, 3, 0);
        assert!((0..3).all(|a| s.cell(a, idx[a], FIRST_DELAY) == 0xFFFF));
        assert_eq!(s.query(&key()).delay_hist[0], 0xFFFF);
    }

    #[test]
    fn partial_query_uses_only_present_arrays() {
        let mut s = small();
        let idx = s.indices(&key());
        for (a, v) in [8u32, 3, 5].into_iter().enumerate() {
            s.set_cell(a, idx[a], SIZE, v);
        }
        let present = [Some(idx[0]), None, Some(idx[2])];
        assert_eq!(s.query_partial(&present).unwrap().size, 5);
        assert!(s.query_partial(&[None, None, None]).is_none());
    }
}
