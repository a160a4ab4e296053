//! The latency tower (SketchINT section V-B): a TowerSketch whose buckets hold a packet
//! count and a latency sum per (flow, switch) hop key, with CM, CU or approximate-CU
//! insertion applied to each of the two cells on its own.
//!
//! Bit-exact specification of the NIC's per-switch latency pipeline (the rules are in
//! [`smartnic_contract::per_switch`]): for the same geometry and hop order every cell equals
//! the NIC's, and [`LatencyTower::insert`] returns the estimates the inflated-latency
//! detector compares against (the pair's state *before* the hop).

#[cfg(test)]
use super::cell::omega_step;
use super::cell::{cm_step, omega_step_select, store, unit_omega_step, value, INF};
use super::hashing::{HashBank, KernelBuild, MAX_MEMBERS};
use super::tower::MAX_ARRAYS;
use smartnic_contract::geometry::{GeometryError, InsertMode};
use smartnic_contract::hash::index;
use smartnic_contract::packing::PackedBits;
use smartnic_contract::per_switch::{field, switch_key, LatencyTowerGeometry, SWITCH_KEY_LEN};
use smartnic_contract::FlowKey;

#[cfg(target_arch = "x86_64")]
mod acu_avx2;
mod kernel;
#[cfg(target_arch = "x86_64")]
pub use kernel::AcuWindows;
pub use kernel::{Cells, HopKernel, Windows};

/// A hop key: switch ID ++ flow key.
pub type HopKey = [u8; SWITCH_KEY_LEN];

/// The two cells of a bucket inside one array's packed bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Count,
    Sum,
}

/// One array of buckets.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Array {
    count_width: u8,
    sum_width: u8,
    count_marker: u32,
    sum_marker: u32,
    bucket_bits: u64,
    depth: u32,
    bits: PackedBits,
}

impl Array {
    /// Bit offset and width of `field` in bucket `i`, and its marker.
    #[inline(always)]
    fn cell(&self, i: u32, field: Field) -> (u64, u8, u32) {
        let base = i as u64 * self.bucket_bits;
        match field {
            Field::Count => (base, self.count_width, self.count_marker),
            Field::Sum => (base + self.count_width as u64, self.sum_width, self.sum_marker),
        }
    }
    #[inline(always)]
    fn get(&self, i: u32, field: Field) -> u32 {
        let (off, w, _) = self.cell(i, field);
        self.bits.get(off, w)
    }
    #[inline(always)]
    fn value(&self, i: u32, field: Field) -> u64 {
        let (off, w, m) = self.cell(i, field);
        value(self.bits.get(off, w), m)
    }
    #[cfg(test)]
    #[inline(always)]
    fn update(&mut self, i: u32, field: Field, f: impl FnOnce(u32, u32) -> Option<u32>) {
        let (off, w, m) = self.cell(i, field);
        self.bits.update(off, w, |v| f(v, m))
    }
}

/// What the sketch knows of one (flow, switch) pair: the minimum of the non-overflowed
/// cells of each field, `None` when every cell of that field has overflowed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PairEstimate {
    pub count: Option<u64>,
    /// Latency sum in units of `2^latency_shift` ns.
    pub sum: Option<u64>,
}

impl PairEstimate {
    /// Average latency in ns, when both fields have an estimate and the count is not 0.
    pub fn average_ns(&self, latency_shift: u8) -> Option<f64> {
        match (self.count, self.sum) {
            (Some(c), Some(s)) if c > 0 => Some(s as f64 * (1u64 << latency_shift) as f64 / c as f64),
            _ => None,
        }
    }
}

/// A flow's share of its hop keys' hashes ([`LatencyTower::flow_part`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct FlowPart([u32; MAX_MEMBERS]);

impl FlowPart {
    /// What `flow` adds to its hop keys' hashes under the latency tower's `hashes`.
    #[inline(always)]
    fn of(hashes: &HashBank<SWITCH_KEY_LEN>, flow: &FlowKey) -> Self {
        const { assert!(field::FLOW.end == SWITCH_KEY_LEN, "the flow ends the hop key") };
        FlowPart(hashes.suffix_part(flow.as_bytes()))
    }

    /// The hashes of this flow's hop key at `switch_id`: only the switch ID's two bytes
    /// are hashed here.
    #[inline(always)]
    fn hop_hashes(&self, hashes: &HashBank<SWITCH_KEY_LEN>, switch_id: u16) -> [u32; MAX_MEMBERS] {
        let switch = hashes.part(field::SWITCH_ID.start, &switch_id.to_be_bytes());
        hashes.hash_parts(&[self.0, switch])
    }
}

/// The latency tower with its insertion mode.
#[derive(Clone, Debug)]
pub struct LatencyTower {
    geometry: LatencyTowerGeometry,
    mode: InsertMode,
    arrays: Vec<Array>,
    hashes: HashBank<SWITCH_KEY_LEN>,
    /// Every bucket starts on a byte boundary and fits in 64 bits (the NIC's 32-, 48- and
    /// 64-bit buckets): the NIC's d = 3 then takes the [`Windows`] kernel.
    windowed: bool,
}

impl LatencyTower {
    pub fn new(geometry: LatencyTowerGeometry, mode: InsertMode) -> Result<Self, GeometryError> {
        geometry.validate()?;
        if geometry.arrays.len() > MAX_ARRAYS {
            return Err(GeometryError::TooManyArrays { arrays: geometry.arrays.len(), max: MAX_ARRAYS });
        }
        let arrays = geometry
            .arrays
            .iter()
            .map(|a| Array {
                count_width: a.count_width,
                sum_width: a.sum_width,
                count_marker: a.count_marker(),
                sum_marker: a.sum_marker(),
                bucket_bits: a.bucket_bits(),
                depth: a.depth,
                bits: PackedBits::new(a.memory_bits()),
            })
            .collect();
        let params: Vec<_> = geometry.arrays.iter().map(|a| a.hash).collect();
        let windowed =
            geometry.arrays.iter().all(|a| a.bucket_bits().is_multiple_of(8) && a.bucket_bits() <= 64);
        Ok(LatencyTower { hashes: HashBank::new(&params), geometry, mode, arrays, windowed })
    }

    pub fn geometry(&self) -> &LatencyTowerGeometry {
        &self.geometry
    }

    pub fn mode(&self) -> InsertMode {
        self.mode
    }

    /// The tower hashing by table rows only: tests compare it with the carry-less path.
    #[cfg(test)]
    pub(crate) fn hash_by_tables(&mut self) {
        self.hashes = self.hashes.clone().tables_only();
    }

    /// The build of the batch kernels that suits this CPU and the tower's hashes.
    pub fn kernel_build(&self) -> KernelBuild {
        self.hashes.kernel_build()
    }

    /// Bucket indices of `key`, one per array.
    #[inline]
    pub fn indices(&self, key: &HopKey) -> [u32; MAX_ARRAYS] {
        self.buckets(self.hashes.hash_bytes(key))
    }

    /// Each array's bucket of a key whose hashes are `h`.
    #[inline(always)]
    fn buckets(&self, mut h: [u32; MAX_MEMBERS]) -> [u32; MAX_ARRAYS] {
        for (x, a) in h.iter_mut().zip(&self.arrays) {
            *x = index(*x, a.depth);
        }
        h
    }

    /// What `flow` adds to the hashes of each of its hop keys ([`HashBank::part`]): one
    /// evaluation per packet, shared by all its hops ([`LatencyTower::hop_indices`]).
    #[inline(always)]
    pub fn flow_part(&self, flow: &FlowKey) -> FlowPart {
        FlowPart::of(&self.hashes, flow)
    }

    /// [`LatencyTower::indices`] of the hop key of the flow of `flow` at `switch_id`, with
    /// only the switch ID's two bytes hashed here.
    #[inline(always)]
    pub fn hop_indices(&self, flow: &FlowPart, switch_id: u16) -> [u32; MAX_ARRAYS] {
        self.buckets(flow.hop_hashes(&self.hashes, switch_id))
    }

    /// The tower as a batch loop drives it ([`HopKernel`]): [`Windows`] for the NIC's
    /// geometry, [`Cells`] for any other.
    pub fn windows(&mut self) -> Option<Windows<'_, 3>> {
        Windows::of(self)
    }

    /// The general kernel, whatever the geometry.
    pub fn cells(&mut self) -> Cells<'_> {
        Cells(self)
    }

    /// Records one hop of `flow` at `switch_id` with `latency_ns`; returns the pair's
    /// estimates before the hop.
    pub fn insert_hop(&mut self, switch_id: u16, flow: &FlowKey, latency_ns: u32) -> PairEstimate {
        let units = self.geometry.units(latency_ns);
        self.insert(&switch_key(switch_id, flow), units)
    }

    /// Records one hop of `units` latency units under `key`; returns the pair's estimates
    /// before the hop.
    pub fn insert(&mut self, key: &HopKey, units: u64) -> PairEstimate {
        let idx = self.indices(key);
        self.insert_indices(&idx, units)
    }

    /// [`LatencyTower::insert`] at precomputed indices. Each bucket is read once: both
    /// fields' cells are loaded, the estimates before the hop are their minima, and the
    /// mode's rule (applied to each field on its own, as the module docs say) gives the
    /// cells written back. Tests check it against the field-by-field reference.
    #[inline(always)]
    pub fn insert_indices(&mut self, idx: &[u32; MAX_ARRAYS], units: u64) -> PairEstimate {
        // The NIC's d = 3 takes the window kernel; any other geometry the cell-wise one
        // (lanes past d are padded as overflowed cells, which no rule touches).
        if let Some(mut k) = self.windows() {
            let at = k.offsets(idx);
            return k.insert(&at, units);
        }
        self.cells().insert(idx, units)
    }

    /// The field-by-field reference of [`LatencyTower::insert`]: the query, then each
    /// field's cells through the mode's rule, one cell access at a time.
    #[cfg(test)]
    fn insert_reference(&mut self, key: &HopKey, units: u64) -> PairEstimate {
        let idx = self.indices(key);
        let before = self.query_indices(&idx);
        for (field, alpha) in [(Field::Count, 1), (Field::Sum, units)] {
            match self.mode {
                InsertMode::Cm => self.insert_cm(&idx, field, alpha),
                InsertMode::Cu => self.insert_cu(&idx, field, alpha),
                InsertMode::Acu => self.insert_acu(&idx, field, alpha),
            }
        }
        before
    }

    #[cfg(test)]
    fn insert_cm(&mut self, idx: &[u32; MAX_ARRAYS], field: Field, alpha: u64) {
        for (a, &i) in self.arrays.iter_mut().zip(idx) {
            a.update(i, field, |v, m| cm_step(v, m, alpha));
        }
    }

    /// Exact CU: every non-overflowed cell becomes `max(cell, min + alpha)`.
    #[cfg(test)]
    fn insert_cu(&mut self, idx: &[u32; MAX_ARRAYS], field: Field, alpha: u64) {
        let min = self.field_min(idx, field);
        if min == INF {
            return;
        }
        let target = min + alpha;
        for (a, &i) in self.arrays.iter_mut().zip(idx) {
            a.update(i, field, |v, m| match value(v, m) {
                INF => None,
                x if x < target => Some(store(target, m)),
                _ => None,
            });
        }
    }

    /// Approximate CU: the field's running minimum travels from array 0 to array d-1.
    #[cfg(test)]
    fn insert_acu(&mut self, idx: &[u32; MAX_ARRAYS], field: Field, alpha: u64) {
        let mut omega = INF;
        for (a, &i) in self.arrays.iter_mut().zip(idx) {
            a.update(i, field, |v, m| omega_step(v, m, alpha, &mut omega));
        }
    }

    /// Minimum of the field's non-overflowed cells at `idx` ([`INF`] if none).
    fn field_min(&self, idx: &[u32], field: Field) -> u64 {
        self.arrays.iter().zip(idx).map(|(a, &i)| a.value(i, field)).min().unwrap_or(INF)
    }

    /// The estimates of a pair.
    pub fn query(&self, switch_id: u16, flow: &FlowKey) -> PairEstimate {
        self.query_indices(&self.indices(&switch_key(switch_id, flow)))
    }

    /// The estimates at precomputed indices.
    pub fn query_indices(&self, idx: &[u32]) -> PairEstimate {
        PairEstimate {
            count: finite(self.field_min(idx, Field::Count)),
            sum: finite(self.field_min(idx, Field::Sum)),
        }
    }

    /// Stored (count, sum) of bucket `i` of array `array`, markers included.
    pub fn bucket(&self, array: usize, i: u32) -> (u32, u32) {
        let a = &self.arrays[array];
        (a.get(i, Field::Count), a.get(i, Field::Sum))
    }

    /// Overwrites bucket `i` of array `array` (values truncated to the cell widths).
    pub fn set_bucket(&mut self, array: usize, i: u32, count: u32, sum: u32) {
        let a = &mut self.arrays[array];
        for (field, v) in [(Field::Count, count), (Field::Sum, sum)] {
            let (off, w, _) = a.cell(i, field);
            a.bits.set(off, w, v);
        }
    }

    /// Packed bytes of one array (the snapshot layout: buckets in order, count cell first).
    pub fn array_bytes(&self, array: usize) -> Vec<u8> {
        self.arrays[array].bits.to_bytes()
    }

    /// Replaces one array's buckets from packed bytes; false if too short.
    pub fn load_array(&mut self, array: usize, raw: &[u8]) -> bool {
        let a = &mut self.arrays[array];
        match PackedBits::from_bytes(raw, a.bits.bits()) {
            Some(b) => {
                a.bits = b;
                true
            }
            None => false,
        }
    }

    /// Adds `other`'s buckets into this one, count and sum cells each saturating at their
    /// overflow marker: in CM mode the result is the tower of the union stream, exactly
    /// (every insertion adds to the same cells whatever the order). `false` when the two
    /// differ in geometry (widths, depths or hash parameters), leaving `self` unchanged.
    pub fn merge(&mut self, other: &LatencyTower) -> bool {
        if self.geometry != other.geometry {
            return false;
        }
        for (a, b) in self.arrays.iter_mut().zip(&other.arrays) {
            for i in 0..a.depth {
                let count = (a.get(i, Field::Count) as u64 + b.get(i, Field::Count) as u64)
                    .min(a.count_marker as u64);
                let sum =
                    (a.get(i, Field::Sum) as u64 + b.get(i, Field::Sum) as u64).min(a.sum_marker as u64);
                for (field, v) in [(Field::Count, count as u32), (Field::Sum, sum as u32)] {
                    let (off, w, _) = a.cell(i, field);
                    a.bits.set(off, w, v);
                }
            }
        }
        true
    }

    /// Zeroes every bucket (a new epoch).
    pub fn clear(&mut self) {
        self.arrays.iter_mut().for_each(|a| a.bits.clear());
    }

    pub fn memory_bytes(&self) -> u64 {
        self.geometry.memory_bits().div_ceil(8)
    }
}

/// `None` for [`INF`] (every cell of the field overflowed).
#[inline(always)]
fn finite(v: u64) -> Option<u64> {
    (v != INF).then_some(v)
}

/// Minimum value of the non-overflowed `cells` ([`INF`] if none).
#[inline(always)]
fn cells_min(cells: &[u32], markers: &[u32]) -> u64 {
    cells.iter().zip(markers).map(|(&c, &m)| value(c, m)).min().unwrap_or(INF)
}

/// [`LatencyTower::insert_indices`] over `arrays` (at most `D` of them): both cells of
/// each bucket loaded once, the estimates before the hop, then the changed cells stored.
#[inline(always)]
fn insert_cells<const D: usize>(
    arrays: &mut [Array],
    mode: InsertMode,
    idx: &[u32; MAX_ARRAYS],
    units: u64,
) -> PairEstimate {
    // A padded lane holds 0 under marker 0: `value` reads it as overflowed.
    let (mut count, mut sum, mut count_m, mut sum_m) = ([0u32; D], [0u32; D], [0u32; D], [0u32; D]);
    for (k, (a, &i)) in arrays.iter().zip(idx).enumerate().take(D) {
        count[k] = a.get(i, Field::Count);
        sum[k] = a.get(i, Field::Sum);
        (count_m[k], sum_m[k]) = (a.count_marker, a.sum_marker);
    }
    let (before, new_count, new_sum) = step_pair(mode, (count, sum), (count_m, sum_m), units);
    for (k, (a, &i)) in arrays.iter_mut().zip(idx).enumerate().take(D) {
        if new_count[k] != count[k] {
            let (off, w, _) = a.cell(i, Field::Count);
            a.bits.set(off, w, new_count[k]);
        }
        if new_sum[k] != sum[k] {
            let (off, w, _) = a.cell(i, Field::Sum);
            a.bits.set(off, w, new_sum[k]);
        }
    }
    before
}

/// A hop of `units` over one bucket per array whose (count, sum) cells are `cells`, under
/// `markers`: the pair's estimates before the hop, and both fields' cells after it.
#[inline(always)]
fn step_pair<const D: usize>(
    mode: InsertMode,
    (count, sum): ([u32; D], [u32; D]),
    (count_m, sum_m): ([u32; D], [u32; D]),
    units: u64,
) -> (PairEstimate, [u32; D], [u32; D]) {
    let before =
        PairEstimate { count: finite(cells_min(&count, &count_m)), sum: finite(cells_min(&sum, &sum_m)) };
    (before, step_cells(mode, count, &count_m, 1), step_cells(mode, sum, &sum_m, units))
}

/// One field's cells after a hop of `alpha` under `mode` (the rules of the module docs).
#[inline(always)]
fn step_cells<const D: usize>(
    mode: InsertMode,
    mut cells: [u32; D],
    markers: &[u32; D],
    alpha: u64,
) -> [u32; D] {
    match mode {
        InsertMode::Cm => {
            for (c, &m) in cells.iter_mut().zip(markers) {
                *c = cm_step(*c, m, alpha).unwrap_or(*c);
            }
        }
        InsertMode::Cu => {
            let min = cells_min(&cells, markers);
            if min != INF {
                let target = min + alpha;
                for (c, &m) in cells.iter_mut().zip(markers) {
                    let v = value(*c, m);
                    if v != INF && v < target {
                        *c = store(target, m);
                    }
                }
            }
        }
        InsertMode::Acu => {
            let mut omega = INF;
            for (c, &m) in cells.iter_mut().zip(markers) {
                // A count's one folds at compile time into the shorter unit rule.
                *c = match alpha {
                    1 => unit_omega_step(*c, m, &mut omega),
                    _ => omega_step_select(*c, m, alpha, &mut omega),
                };
            }
        }
    }
    cells
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(n: u8) -> FlowKey {
        FlowKey::from_v4([10, 0, 0, n], [10, 0, 1, 1], 1000 + n as u16, 80, 6)
    }

    fn small(mode: InsertMode) -> LatencyTower {
        let g = LatencyTowerGeometry::from_cells(&[(4, 8, 16), (8, 12, 8), (16, 16, 4)], 0);
        LatencyTower::new(g, mode).unwrap()
    }

    /// Primes the buckets of `key` with (count, sum) per array and inserts `units`.
    fn after(mode: InsertMode, start: &[(u32, u32)], units: u64) -> (Vec<(u32, u32)>, PairEstimate) {
        let mut t = small(mode);
        let key = switch_key(3, &flow(1));
        let idx = t.indices(&key);
        for (a, &(c, s)) in start.iter().enumerate() {
            t.set_bucket(a, idx[a], c, s);
        }
        let before = t.insert(&key, units);
        ((0..3).map(|a| t.bucket(a, idx[a])).collect(), before)
    }

    #[test]
    fn hand_computed_modes() {
        let start = [(5, 50), (3, 40), (4, 30)];
        let cases = [
            (InsertMode::Cm, vec![(6, 60), (4, 50), (5, 40)]),
            // CU: counts to max(c, 3+1); sums to max(s, 30+10).
            (InsertMode::Cu, vec![(5, 50), (4, 40), (4, 40)]),
            // ACU counts: 6 -> omega 6; 4 < 6 -> omega 4; 4+1 >= 4, 4 >= 4: unchanged.
            // ACU sums: 60 -> omega 60; 50 < 60 -> omega 50; 40 < 50 -> 40.
            (InsertMode::Acu, vec![(6, 60), (4, 50), (4, 40)]),
        ];
        for (mode, want) in cases {
            let (got, before) = after(mode, &start, 10);
            assert_eq!(got, want, "{mode:?}");
            assert_eq!(before, PairEstimate { count: Some(3), sum: Some(30) }, "{mode:?}");
        }
    }

    /// Each field saturates on its own: a 4-bit count at 14 turns into the marker 15 and is
    /// skipped; an 8-bit sum that overflows is skipped while its count still counts.
    #[test]
    fn fields_saturate_independently() {
        let (got, _) = after(InsertMode::Cm, &[(14, 250), (3, 40), (4, 30)], 10);
        assert_eq!(got[0], (15, 255));
        let mut t = small(InsertMode::Cm);
        let key = switch_key(3, &flow(1));
        let idx = t.indices(&key);
        t.set_bucket(0, idx[0], 15, 255);
        t.set_bucket(1, idx[1], 255, 4095);
        t.set_bucket(2, idx[2], 65535, 65535);
        assert_eq!(t.insert(&key, 1), PairEstimate { count: None, sum: None });
        assert_eq!(t.query(3, &flow(1)).average_ns(0), None);
    }

    #[test]
    fn exact_without_collisions() {
        let g = LatencyTowerGeometry::nic_default();
        for mode in [InsertMode::Cm, InsertMode::Cu, InsertMode::Acu] {
            let mut t = LatencyTower::new(g.clone(), mode).unwrap();
            for n in 0..100u32 {
                t.insert_hop(7, &flow(1), 1000 + 16 * n);
                t.insert_hop(9, &flow(1), 160);
            }
            let e = t.query(7, &flow(1));
            assert_eq!(e.count, Some(100));
            assert_eq!(
                e.average_ns(4),
                Some(1000.0 + 16.0 * 99.0 / 2.0 + 8.0),
                "1000 ns is 62.5 units: rounds to 63"
            );
            assert_eq!(t.query(9, &flow(1)).average_ns(4), Some(160.0));
            assert_eq!(t.query(8, &flow(1)), PairEstimate { count: Some(0), sum: Some(0) });
        }
    }

    /// The fused insert (each bucket read once) leaves the cells and returns the estimates
    /// of the field-by-field reference, hop for hop, in every mode: narrow cells that
    /// overflow within the run, latencies from 0 to past the widest sum cell, few buckets
    /// so that pairs collide.
    #[test]
    fn fused_insert_equals_the_field_by_field_reference() {
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        // The last two take the window kernel (byte-aligned buckets of at most 64 bits, d =
        // 3): narrow cells, and the NIC's widths on few buckets.
        let geometries: [&[(u8, u8, u32)]; 5] = [
            &[(3, 6, 29), (5, 9, 17), (7, 12, 11)],
            &[(2, 5, 13), (6, 11, 7)],
            &[(2, 4, 31), (3, 7, 19), (5, 9, 13), (8, 32, 5)],
            &[(8, 8, 29), (8, 16, 17), (16, 32, 11)],
            &[(8, 24, 13), (16, 32, 7), (32, 32, 5)],
        ];
        for (mode, cells) in [InsertMode::Cm, InsertMode::Cu, InsertMode::Acu]
            .into_iter()
            .flat_map(|m| geometries.iter().map(move |&c| (m, c)))
        {
            let g = LatencyTowerGeometry::from_cells(cells, 2);
            let mut fast = LatencyTower::new(g.clone(), mode).unwrap();
            let mut slow = LatencyTower::new(g, mode).unwrap();
            assert_eq!(fast.windowed, cells.len() == 3 && cells[0].0 == 8, "{cells:?}");
            for n in 0..20_000 {
                let r = next();
                let key = switch_key((r % 7) as u16, &flow((r >> 8) as u8 % 23));
                let units = match n % 4 {
                    0 => 0,
                    1 => r >> 40 & 3,
                    2 => r >> 40 & 255,
                    _ => r >> 32 & 0x1_ffff,
                };
                assert_eq!(
                    fast.insert(&key, units),
                    slow.insert_reference(&key, units),
                    "{mode:?} {cells:?} hop {n}"
                );
            }
            for a in 0..cells.len() {
                assert_eq!(fast.array_bytes(a), slow.array_bytes(a), "{mode:?} {cells:?} array {a}");
            }
        }
    }

    #[test]
    fn snapshot_bytes_round_trip() {
        let mut t = small(InsertMode::Acu);
        for n in 0..300u32 {
            t.insert_hop((n % 5) as u16, &flow((n % 7) as u8), n * 3);
        }
        let mut u = small(InsertMode::Acu);
        for a in 0..3 {
            assert!(u.load_array(a, &t.array_bytes(a)));
        }
        assert_eq!(u.query(2, &flow(3)), t.query(2, &flow(3)));
        assert!(!u.load_array(0, &t.array_bytes(0)[1..]));
    }
}
