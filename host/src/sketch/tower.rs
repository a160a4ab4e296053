//! TowerSketch (SketchINT section IV): `d` arrays of equal memory, narrow counters in the
//! first arrays and wide ones in the last, with CM, CU or approximate-CU insertion.
//!
//! This is the bit-exact specification of the hardware pipeline: for the same geometry,
//! hashes and packet order, every counter equals the NIC's.

use super::cell::{self, omega_step, value, INF};
use super::hashing::{HashBank, KernelBuild};
use smartnic_contract::geometry::{GeometryError, InsertMode, TowerGeometry};
use smartnic_contract::hash::index;
use smartnic_contract::packing::{mask, PackedBits, PackedView};
use smartnic_contract::FlowKey;

/// Most arrays a sketch may have (bounds the stack buffers of the hot path).
pub const MAX_ARRAYS: usize = super::hashing::MAX_MEMBERS;

/// One counter array.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Array {
    width: u8,
    marker: u32,
    depth: u32,
    bits: PackedBits,
}

impl Array {
    #[inline(always)]
    fn get(&self, i: u32) -> u32 {
        self.bits.get(i as u64 * self.width as u64, self.width)
    }
    #[inline(always)]
    fn set(&mut self, i: u32, v: u32) {
        self.bits.set(i as u64 * self.width as u64, self.width, v)
    }
    #[inline(always)]
    fn update(&mut self, i: u32, f: impl FnOnce(u32) -> Option<u32>) {
        self.bits.update(i as u64 * self.width as u64, self.width, f)
    }

    /// Adds `other`'s counters into these, each saturating at the marker. Widths that
    /// divide 32 (every width of the NIC's and the papers' towers) go 32 bits at a time,
    /// all counters of a chunk in one [`saturating_lanes_add`]: the counter-wise loop cost
    /// a get and a set per counter, 6.6M of them for a 2 MiB d=5 tower, more than the
    /// insertion it was merging. Other widths, and the tail, take the counter-wise loop.
    fn merge_from(&mut self, other: &Array) {
        let total = self.depth as u64 * self.width as u64;
        let whole = if 32 % self.width as u64 == 0 { total / 32 * 32 } else { 0 };
        for off in (0..whole).step_by(32) {
            let sum = saturating_lanes_add(self.bits.get(off, 32), other.bits.get(off, 32), self.width);
            self.bits.set(off, 32, sum);
        }
        self.merge_counters(other, (whole / self.width as u64) as u32);
    }

    /// The counter-wise merge from counter `from` on: `min(a + b, marker)` each.
    fn merge_counters(&mut self, other: &Array, from: u32) {
        for i in from..self.depth {
            let sum = self.get(i) as u64 + other.get(i) as u64;
            self.set(i, sum.min(self.marker as u64) as u32);
        }
    }
}

/// Lane-wise `min(a + b, 2^width - 1)` of the `32 / width` counters packed in `a` and
/// `b` (`width` divides 32): the counters' marker is their all-ones value, so saturating
/// at it is a saturating add. The low bits of every lane are added with the top bits
/// masked (no carry crosses a lane), the top bits are added by xor, the carry out of each
/// lane is the majority of the two top bits and the carry into them, and a lane that
/// carried out is filled with ones.
#[inline(always)]
fn saturating_lanes_add(a: u32, b: u32, width: u8) -> u32 {
    if width == 32 {
        return a.saturating_add(b);
    }
    let (a, b) = (a as u64, b as u64);
    let lane = (1u64 << width) - 1;
    let ones = 0xFFFF_FFFFu64 / lane; // 1 at the bottom of every lane
    let top = ones << (width - 1);
    let low = (a & !top) + (b & !top);
    let sum = low ^ ((a ^ b) & top);
    let carry = ((a & b) | ((a ^ b) & low)) & top;
    (sum | ((carry >> (width - 1)) * lane)) as u32
}

/// A TowerSketch with its insertion mode.
#[derive(Clone, Debug)]
pub struct Tower {
    geometry: TowerGeometry,
    mode: InsertMode,
    arrays: Vec<Array>,
    hashes: HashBank,
}

impl Tower {
    pub fn new(geometry: TowerGeometry, mode: InsertMode) -> Result<Self, GeometryError> {
        geometry.validate()?;
        if geometry.arrays.len() > MAX_ARRAYS {
            let arrays = geometry.arrays.len();
            return Err(GeometryError::TooManyArrays { arrays, max: MAX_ARRAYS });
        }
        let arrays = geometry
            .arrays
            .iter()
            .map(|a| Array {
                width: a.width,
                marker: a.marker(),
                depth: a.depth,
                bits: PackedBits::new(a.memory_bits()),
            })
            .collect();
        let params: Vec<_> = geometry.arrays.iter().map(|a| a.hash).collect();
        Ok(Tower { hashes: HashBank::new(&params), geometry, mode, arrays })
    }

    pub fn geometry(&self) -> &TowerGeometry {
        &self.geometry
    }

    pub fn mode(&self) -> InsertMode {
        self.mode
    }

    /// Counter indices of `key`, one per array.
    #[inline(always)]
    pub fn indices(&self, key: &FlowKey) -> [u32; MAX_ARRAYS] {
        let mut h = self.hashes.hash(key);
        for (x, a) in h.iter_mut().zip(&self.arrays) {
            *x = index(*x, a.depth);
        }
        h
    }

    /// Records one packet of `key`.
    #[inline]
    pub fn insert(&mut self, key: &FlowKey) {
        let idx = self.indices(key);
        self.insert_indices(&idx);
    }

    /// Records one packet of `key` and returns its estimate right after: exactly
    /// [`Tower::insert`] then [`Tower::query`], with the `d` hashes computed once (the
    /// per-switch half asks for every packet's estimate, and hashing is most of a query).
    #[inline]
    pub fn insert_and_query(&mut self, key: &FlowKey) -> u64 {
        let idx = self.indices(key);
        self.insert_indices(&idx);
        self.query_indices(&idx[..self.arrays.len()])
    }

    /// [`Tower::insert_and_query`] of each key in order, the estimates written to
    /// `estimates` (cleared first): the same counters and answers, by the kernels of
    /// [`Tower::insert_batch`], each packet's estimate read back right after its insertion.
    /// The per-switch half needs every packet's estimate.
    pub fn insert_and_query_batch(&mut self, keys: &[FlowKey], estimates: &mut Vec<u64>) {
        estimates.clear();
        self.batch(keys, Some(estimates))
    }

    #[inline(always)]
    fn insert_indices(&mut self, idx: &[u32; MAX_ARRAYS]) {
        match self.mode {
            InsertMode::Cm => self.insert_cm(idx),
            InsertMode::Cu => self.insert_cu(idx),
            InsertMode::Acu => self.insert_acu(idx),
        }
    }

    /// Records one packet of each key, in order: exactly `keys.len()` calls of
    /// [`Tower::insert`], but faster. The counters of the packet `LOOKAHEAD` places ahead
    /// are prefetched while the current one is updated, so the cache misses of several
    /// packets overlap instead of being waited for one at a time (the arrays are far
    /// larger than L1, and each packet touches `d` unrelated cache lines).
    pub fn insert_batch(&mut self, keys: &[FlowKey]) {
        self.batch(keys, None)
    }

    /// The batch paths' entry: the build the CPU and the hashes suit
    /// ([`HashBank::kernel_build`]). Each key's estimate after its insertion goes to
    /// `estimates` when given.
    fn batch(&mut self, keys: &[FlowKey], estimates: Option<&mut Vec<u64>>) {
        match self.hashes.kernel_build() {
            // SAFETY (both): this CPU has the features the build is compiled for.
            #[cfg(target_arch = "x86_64")]
            KernelBuild::CarryLess => unsafe { self.batch_carry_less(keys, estimates) },
            #[cfg(target_arch = "x86_64")]
            KernelBuild::Avx2 => unsafe { self.batch_avx2(keys, estimates) },
            _ => self.batch_any(keys, estimates),
        }
    }

    /// [`Tower::batch_avx2`] with the hashing by carry-less multiplication inlined
    /// ([`HashBank::kernel_build`]): the 2 MiB CU d=3 tower 79 to 102 Mpps.
    ///
    /// # Safety
    /// The CPU must support AVX2, BMI2, AVX-512F, AVX-512BW and VPCLMULQDQ.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,bmi2,avx512f,avx512bw,vpclmulqdq")]
    unsafe fn batch_carry_less(&mut self, keys: &[FlowKey], estimates: Option<&mut Vec<u64>>) {
        self.batch_any(keys, estimates)
    }

    /// [`Tower::batch`] compiled for AVX2 (one instruction per 32-byte hash row) and BMI2
    /// (single-micro-op variable shifts for the packed counters).
    ///
    /// # Safety
    /// The CPU must support AVX2 and BMI2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,bmi2")]
    unsafe fn batch_avx2(&mut self, keys: &[FlowKey], estimates: Option<&mut Vec<u64>>) {
        self.batch_any(keys, estimates)
    }

    /// Picks the kernel: fixed `d` (3 and 5, the NIC's and the CPU papers' towers) gets
    /// loops the compiler unrolls with the arrays in registers, and the papers' and the
    /// NIC's counter widths get kernels with the widths as constants ([`FixedWidths`]);
    /// other geometries take the general loop. All of them leave exactly the counters of
    /// one `insert` per key, and give the estimates of `insert_and_query`.
    #[inline(always)]
    fn batch_any(&mut self, keys: &[FlowKey], est: Option<&mut Vec<u64>>) {
        let (mode, h) = (self.mode, &self.hashes);
        if let Ok(arrays) = <&mut [Array; 3]>::try_from(self.arrays.as_mut_slice()) {
            return match arrays.each_ref().map(|a| a.width) {
                Fpga3::WIDTHS => batch_fixed::<3, Fpga3>(arrays, h, mode, keys, est),
                Flat3::WIDTHS => batch_fixed::<3, Flat3>(arrays, h, mode, keys, est),
                _ => batch_fixed::<3, AnyWidths>(arrays, h, mode, keys, est),
            };
        }
        if let Ok(arrays) = <&mut [Array; 5]>::try_from(self.arrays.as_mut_slice()) {
            return match arrays.each_ref().map(|a| a.width) {
                Cpu5::WIDTHS => batch_fixed::<5, Cpu5>(arrays, h, mode, keys, est),
                Flat5::WIDTHS => batch_fixed::<5, Flat5>(arrays, h, mode, keys, est),
                _ => batch_fixed::<5, AnyWidths>(arrays, h, mode, keys, est),
            };
        }
        self.batch_general(keys, est)
    }

    /// The prefetching batch loop for any number of arrays.
    #[inline(always)]
    fn batch_general(&mut self, keys: &[FlowKey], mut estimates: Option<&mut Vec<u64>>) {
        let mut ring = [[0u32; MAX_ARRAYS]; LOOKAHEAD];
        for (n, key) in keys.iter().take(LOOKAHEAD).enumerate() {
            ring[n] = self.prefetch(key);
        }
        let d = self.arrays.len();
        for n in 0..keys.len() {
            let idx = ring[n % LOOKAHEAD];
            if let Some(ahead) = keys.get(n + LOOKAHEAD) {
                ring[n % LOOKAHEAD] = self.prefetch(ahead);
            }
            self.insert_indices(&idx);
            if let Some(e) = estimates.as_deref_mut() {
                e.push(self.query_indices(&idx[..d]));
            }
        }
    }

    /// Records `keys` on `shards` threads, each into its own copy of the arrays, then
    /// adds the copies into `self` ([`Tower::merge`]).
    ///
    /// - CM: the packets are cut into contiguous runs; counting commutes, so the result is
    ///   exactly [`Tower::insert_batch`]'s, counter for counter.
    /// - CU and ACU: the packets are split by a hash of the key, so every flow lives in
    ///   one shard; the update then depends on which flows share a shard, and the counters
    ///   differ from the sequential ones. Bounds: no counter exceeds the CM counter of the
    ///   same packets (a packet raises a counter by at most one), so the estimate keeps
    ///   CM's error bound; and for CU every counter a flow maps to is at least that flow's
    ///   count in its shard, so the merged estimate never falls below the true count. The
    ///   NIC equality holds for the sequential path only.
    pub fn insert_sharded(&mut self, keys: &[FlowKey], shards: usize) {
        let shards = shards.clamp(1, keys.len().max(1));
        if shards == 1 {
            return self.insert_batch(keys);
        }
        let mut empty = self.clone();
        empty.clear();
        let mut parts: Vec<Tower> = vec![empty; shards - 1];
        let mode = self.mode;
        std::thread::scope(|scope| {
            let mut all: Vec<&mut Tower> = std::iter::once(&mut *self).chain(parts.iter_mut()).collect();
            for (n, t) in all.drain(..).enumerate() {
                scope.spawn(move || match mode {
                    InsertMode::Cm => {
                        t.insert_batch(&keys[n * keys.len() / shards..(n + 1) * keys.len() / shards])
                    }
                    InsertMode::Cu | InsertMode::Acu => t.insert_shard(keys, n, shards),
                });
            }
        });
        self.merge_tree(parts);
    }

    /// Adds every tower of `parts` into `self` in pairwise rounds, the merges of a round on
    /// their own threads: about `log2(n)` merge times deep instead of `n`, which is what
    /// lets many shards scale (one 2 MiB merge costs as much as ~80K packets). The
    /// saturating sum is associative and commutative, so the counters are those of the
    /// sequential merge.
    fn merge_tree(&mut self, mut parts: Vec<Tower>) {
        while parts.len() > 1 {
            let upper = parts.split_off(parts.len().div_ceil(2));
            std::thread::scope(|scope| {
                for (a, b) in parts.iter_mut().zip(&upper) {
                    scope.spawn(move || a.merge(b).expect("shards share the geometry"));
                }
            });
        }
        if let Some(last) = parts.pop() {
            self.merge(&last).expect("shards share the geometry");
        }
    }

    /// Inserts the keys of `keys` that [`shard_of`] gives to shard `n` of `shards`, in order.
    fn insert_shard(&mut self, keys: &[FlowKey], n: usize, shards: usize) {
        const CHUNK: usize = 256;
        let mut mine = Vec::with_capacity(CHUNK);
        for chunk in keys.chunks(CHUNK) {
            mine.clear();
            mine.extend(chunk.iter().filter(|k| shard_of(k, shards) == n));
            self.insert_batch(&mine);
        }
    }

    /// Adds `other`'s counters into these, counter by counter, saturating at each array's
    /// overflow marker (an overflowed counter stays overflowed). For CM this is exactly
    /// the sketch of both packet streams. Refused when the geometries differ.
    pub fn merge(&mut self, other: &Tower) -> Result<(), GeometryMismatch> {
        if self.geometry != other.geometry {
            return Err(GeometryMismatch);
        }
        for (a, b) in self.arrays.iter_mut().zip(&other.arrays) {
            a.merge_from(b);
        }
        Ok(())
    }

    /// Indices of `key`, with their counters' cache lines requested.
    #[inline(always)]
    fn prefetch(&self, key: &FlowKey) -> [u32; MAX_ARRAYS] {
        let idx = self.indices(key);
        for (a, &i) in self.arrays.iter().zip(&idx) {
            a.bits.prefetch(i as u64 * a.width as u64);
        }
        idx
    }

    #[inline(always)]
    fn insert_cm(&mut self, idx: &[u32; MAX_ARRAYS]) {
        for (a, &i) in self.arrays.iter_mut().zip(idx) {
            a.bits.increment_unless(i as u64 * a.width as u64, a.width, a.marker);
        }
    }

    /// Exact CU: only the smallest non-overflowed counter(s) grow.
    #[inline(always)]
    fn insert_cu(&mut self, idx: &[u32; MAX_ARRAYS]) {
        let d = self.arrays.len();
        let mut vals = [INF; MAX_ARRAYS];
        for ((v, a), &i) in vals.iter_mut().zip(&self.arrays).zip(idx) {
            *v = value(a.get(i), a.marker);
        }
        let min = vals[..d].iter().copied().min().unwrap_or(INF);
        if min == INF {
            return;
        }
        for ((a, &i), &v) in self.arrays.iter_mut().zip(idx).zip(&vals) {
            if v == min {
                a.set(i, cell::store(min + 1, a.marker));
            }
        }
    }

    /// Approximate CU: the running minimum travels from the narrowest array to the widest.
    #[inline(always)]
    fn insert_acu(&mut self, idx: &[u32; MAX_ARRAYS]) {
        let mut omega = INF;
        for (a, &i) in self.arrays.iter_mut().zip(idx) {
            let marker = a.marker;
            a.update(i, |v| omega_step(v, marker, 1, &mut omega));
        }
    }

    /// Estimated size of `key`: the minimum over non-overflowed counters. When every
    /// counter has overflowed the flow is at least the widest array's marker, returned as is.
    pub fn query(&self, key: &FlowKey) -> u64 {
        let idx = self.indices(key);
        self.query_indices(&idx)
    }

    /// Like [`Tower::query`], from precomputed indices; arrays whose index is `None`
    /// (not received, see partial reconstruction) are skipped.
    pub fn query_indices(&self, idx: &[u32]) -> u64 {
        let min = self.arrays.iter().zip(idx).map(|(a, &i)| value(a.get(i), a.marker)).min().unwrap_or(INF);
        if min == INF {
            self.saturated_value()
        } else {
            min
        }
    }

    /// What a flow overflowing every array is reported as.
    pub fn saturated_value(&self) -> u64 {
        self.arrays.iter().map(|a| a.marker as u64).max().unwrap_or(0)
    }

    /// Counter `i` of array `array` (stored form, the marker included).
    pub fn counter(&self, array: usize, i: u32) -> u32 {
        self.arrays[array].get(i)
    }

    /// Overwrites counter `i` of array `array` (value truncated to the counter width).
    pub fn set_counter(&mut self, array: usize, i: u32, v: u32) {
        self.arrays[array].set(i, v)
    }

    /// Packed bytes of one array (the snapshot layout).
    pub fn array_bytes(&self, array: usize) -> Vec<u8> {
        self.arrays[array].bits.to_bytes()
    }

    /// Replaces one array's counters from packed bytes; false if too short.
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

    /// Zeroes every counter (a new epoch).
    pub fn clear(&mut self) {
        self.arrays.iter_mut().for_each(|a| a.bits.clear());
    }

    pub fn memory_bytes(&self) -> u64 {
        self.geometry.memory_bits().div_ceil(8)
    }
}

/// Two towers of different geometries cannot be merged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot merge towers of different geometries")]
pub struct GeometryMismatch;

/// The shard of `key` among `shards` for [`Tower::insert_sharded`]: a multiply-shift of
/// the key's bytes folded into 64 bits (cheap, and independent of the arrays' CRCs).
#[inline]
pub fn shard_of(key: &FlowKey, shards: usize) -> usize {
    let b = key.as_bytes();
    let mut lo = [0u8; 8];
    lo.copy_from_slice(&b[..8]);
    let mut hi = [0u8; 8];
    hi[..b.len() - 8].copy_from_slice(&b[8..]);
    let h =
        (u64::from_le_bytes(lo) ^ u64::from_le_bytes(hi).rotate_left(29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (((h >> 32) * shards as u64) >> 32) as usize
}

/// How many packets ahead the batch loops hash and prefetch: enough to keep several
/// cache misses in flight (each packet touches `d` unrelated lines), few enough that the
/// lines are still in L1 when their packet comes.
const LOOKAHEAD: usize = 4;

/// The counter widths of a batch kernel. The kernels are written once, over `D` arrays of
/// any widths; a geometry whose widths are known at compile time gets its own copy, in
/// which every width, mask, shift and marker is a constant, and each counter is read and
/// written inside one word (its width divides 64, so no counter straddles two): the
/// straddle test, the multiply by a width in a register and the marker loads drop out.
trait FixedWidths<const D: usize> {
    /// Each array's counter width, or `None` when only the arrays know it.
    const FIXED: Option<[u8; D]>;

    /// The widths of `lanes` (constants for a fixed set).
    #[inline(always)]
    fn widths(lanes: &[Lane; D]) -> [u8; D] {
        Self::FIXED.unwrap_or(lanes.map(|l| l.width))
    }

    /// Array `k`'s overflow marker, its counters' all-ones value.
    #[inline(always)]
    fn marker(lanes: &[Lane; D], k: usize) -> u32 {
        match Self::FIXED {
            Some(w) => mask(w[k]) as u32,
            None => lanes[k].marker,
        }
    }

    /// The counter of `width` bits at `off`.
    ///
    /// # Safety
    /// For a fixed set, `off` must be below `bits.capacity()` (the kernels' offsets are,
    /// once [`batch_loop`] checked its arrays): these read and write without a bounds
    /// check, which was an eighth of CU's time.
    #[inline(always)]
    unsafe fn get(bits: &PackedView<'_>, off: u64, width: u8) -> u32 {
        match Self::FIXED {
            // SAFETY: the caller keeps `off` below the capacity.
            Some(_) => unsafe { bits.get_in_word_unchecked(off, width) },
            None => bits.get(off, width),
        }
    }

    /// Adds one to the counter holding `stored` when `grow` (the counter is then below its
    /// marker, so the one goes straight into the word).
    ///
    /// # Safety
    /// As [`FixedWidths::get`].
    #[inline(always)]
    unsafe fn grow(bits: &mut PackedView<'_>, off: u64, width: u8, stored: u32, grow: bool) {
        match Self::FIXED {
            // SAFETY: the caller keeps `off` below the capacity.
            Some(_) => unsafe { bits.add_in_word_unchecked(off, width, grow as u32) },
            None => bits.set(off, width, stored + grow as u32),
        }
    }

    /// # Safety
    /// As [`FixedWidths::get`].
    #[inline(always)]
    unsafe fn increment_unless(bits: &mut PackedView<'_>, off: u64, width: u8, marker: u32) {
        match Self::FIXED {
            // SAFETY: the caller keeps `off` below the capacity.
            Some(_) => unsafe { bits.increment_in_word_unchecked(off, width, marker) },
            None => bits.increment_unless(off, width, marker),
        }
    }
}

/// Widths read from the arrays at run time.
struct AnyWidths;
impl<const D: usize> FixedWidths<D> for AnyWidths {
    const FIXED: Option<[u8; D]> = None;
}

/// Declares a fixed width set. Every width must divide 64
/// (`fixed_widths_hold_their_kernels_assumptions` checks).
macro_rules! fixed_widths {
    ($(#[$doc:meta])* $name:ident, $d:literal, $widths:expr) => {
        $(#[$doc])*
        struct $name;
        impl $name {
            const WIDTHS: [u8; $d] = $widths;
        }
        impl FixedWidths<$d> for $name {
            const FIXED: Option<[u8; $d]> = Some(Self::WIDTHS);
        }
    };
}

fixed_widths!(
    /// SketchINT's CPU tower (`TowerGeometry::sketchint_cpu`).
    Cpu5, 5, [2, 4, 8, 16, 32]
);
fixed_widths!(
    /// The NIC's tower (`TowerGeometry::sketchint_fpga`) and the papers' d=3 tower.
    Fpga3, 3, [8, 16, 32]
);
fixed_widths!(
    /// Count-Min and CU of five 32-bit rows.
    Flat5, 5, [32; 5]
);
fixed_widths!(
    /// Count-Min and CU of three 32-bit rows (`SketchKind::Cm`, `SketchKind::Cu`).
    Flat3, 3, [32; 3]
);

/// [`Tower::insert_batch`] for exactly `D` arrays of widths `W`, one loop per mode so the
/// per-packet step has no mode branch.
#[inline(always)]
fn batch_fixed<const D: usize, W: FixedWidths<D>>(
    arrays: &mut [Array; D],
    hashes: &HashBank,
    mode: InsertMode,
    keys: &[FlowKey],
    est: Option<&mut Vec<u64>>,
) {
    // Whether estimates are wanted is a constant of the loop: a test per packet cost the
    // insert-only loop 5 %.
    match (mode, est) {
        (InsertMode::Cm, None) => batch_loop::<D, W, Cm, false>(arrays, hashes, keys, &mut Vec::new()),
        (InsertMode::Cu, None) => batch_loop::<D, W, Cu, false>(arrays, hashes, keys, &mut Vec::new()),
        (InsertMode::Acu, None) => batch_loop::<D, W, Acu, false>(arrays, hashes, keys, &mut Vec::new()),
        (InsertMode::Cm, Some(e)) => batch_loop::<D, W, Cm, true>(arrays, hashes, keys, e),
        (InsertMode::Cu, Some(e)) => batch_loop::<D, W, Cu, true>(arrays, hashes, keys, e),
        (InsertMode::Acu, Some(e)) => batch_loop::<D, W, Acu, true>(arrays, hashes, keys, e),
    }
}

/// One packet's update of the batch kernels, by mode. A trait, not a function passed in:
/// a function item went through an `Fn::call` shim that was neither inlined nor compiled
/// for AVX2 (29 % of CU's profile).
trait Step {
    /// # Safety
    /// Every offset of `off` is below its array's capacity (see [`FixedWidths::get`]).
    unsafe fn apply<const D: usize, W: FixedWidths<D>>(
        bits: &mut [PackedView<'_>; D],
        lanes: &[Lane; D],
        off: &[u64; D],
    );
}

/// Count-Min.
struct Cm;
/// Exact conservative update.
struct Cu;
/// Approximate conservative update.
struct Acu;

/// Count-Min: every non-overflowed counter grows (branch-free in `increment_unless`).
impl Step for Cm {
    #[inline(always)]
    unsafe fn apply<const D: usize, W: FixedWidths<D>>(
        bits: &mut [PackedView<'_>; D],
        lanes: &[Lane; D],
        off: &[u64; D],
    ) {
        let widths = W::widths(lanes);
        for k in 0..D {
            // SAFETY: the caller's offsets are in bounds.
            unsafe { W::increment_unless(&mut bits[k], off[k], widths[k], W::marker(lanes, k)) };
        }
    }
}

/// Exact CU without data-dependent branches: every counter is written back, plus one
/// where it equals the minimum. A counter equal to a finite minimum is below its marker,
/// so `+ 1` is exactly `cell::store(min + 1, marker)` of the reference path.
impl Step for Cu {
    #[inline(always)]
    unsafe fn apply<const D: usize, W: FixedWidths<D>>(
        bits: &mut [PackedView<'_>; D],
        lanes: &[Lane; D],
        off: &[u64; D],
    ) {
        let widths = W::widths(lanes);
        let mut stored = [0u32; D];
        let mut min = INF;
        for k in 0..D {
            // SAFETY: the caller's offsets are in bounds.
            stored[k] = unsafe { W::get(&bits[k], off[k], widths[k]) };
            min = min.min(value(stored[k], W::marker(lanes, k)));
        }
        let live = min != INF;
        for k in 0..D {
            let grow = live & (value(stored[k], W::marker(lanes, k)) == min);
            // SAFETY: as above.
            unsafe { W::grow(&mut bits[k], off[k], widths[k], stored[k], grow) };
        }
    }
}

/// Approximate CU for one packet (`alpha = 1`) without data-dependent branches
/// ([`cell::unit_omega_step`]).
impl Step for Acu {
    #[inline(always)]
    unsafe fn apply<const D: usize, W: FixedWidths<D>>(
        bits: &mut [PackedView<'_>; D],
        lanes: &[Lane; D],
        off: &[u64; D],
    ) {
        let widths = W::widths(lanes);
        let mut omega = INF;
        for k in 0..D {
            // SAFETY: the caller's offsets are in bounds.
            let s = unsafe { W::get(&bits[k], off[k], widths[k]) };
            let grow = cell::unit_omega_grows(s, W::marker(lanes, k), &mut omega);
            // SAFETY: as above.
            unsafe { W::grow(&mut bits[k], off[k], widths[k], s, grow) };
        }
    }
}

/// What the batch kernels read of one array per counter, copied out of the arrays so it
/// stays in registers while the counters are written.
#[derive(Clone, Copy)]
struct Lane {
    width: u8,
    marker: u32,
    depth: u32,
}

/// Hash `LOOKAHEAD` packets ahead and prefetch their counters, then apply step `S` to the
/// current packet's indices (and, with `QUERY`, push its estimate onto `estimates`).
#[inline(always)]
fn batch_loop<const D: usize, W: FixedWidths<D>, S: Step, const QUERY: bool>(
    arrays: &mut [Array; D],
    hashes: &HashBank,
    keys: &[FlowKey],
    estimates: &mut Vec<u64>,
) {
    let lanes = arrays.each_ref().map(|a| Lane { width: a.width, marker: a.marker, depth: a.depth });
    let mut bits = arrays.each_mut().map(|a| a.bits.view_mut());
    // Every offset below is `index(hash, depth) * width` with the index below `depth`, so
    // it is below `depth * width`: checked here once against each array's buffer, for
    // the unchecked accesses of the steps.
    let widths = W::widths(&lanes);
    for k in 0..D {
        assert!(
            lanes[k].depth as u64 * widths[k] as u64 <= bits[k].capacity(),
            "array {k} smaller than its geometry"
        );
    }
    let mut ring = [[0u64; D]; LOOKAHEAD];
    for (slot, key) in ring.iter_mut().zip(keys) {
        *slot = hash_prefetch::<D, W>(&bits, &lanes, hashes, key);
    }
    for n in 0..keys.len() {
        let off = ring[n % LOOKAHEAD];
        if let Some(ahead) = keys.get(n + LOOKAHEAD) {
            ring[n % LOOKAHEAD] = hash_prefetch::<D, W>(&bits, &lanes, hashes, ahead);
        }
        // SAFETY: `off` came from `hash_prefetch`, in bounds by the check above.
        unsafe {
            S::apply::<D, W>(&mut bits, &lanes, &off);
            if QUERY {
                estimates.push(query_fixed::<D, W>(&bits, &lanes, &off));
            }
        }
    }
}

/// [`Tower::query_indices`] at bit offsets: the smallest non-overflowed counter, or the
/// widest marker when every counter has overflowed.
///
/// # Safety
/// As [`Step::apply`].
#[inline(always)]
unsafe fn query_fixed<const D: usize, W: FixedWidths<D>>(
    bits: &[PackedView<'_>; D],
    lanes: &[Lane; D],
    off: &[u64; D],
) -> u64 {
    let widths = W::widths(lanes);
    let (mut min, mut saturated) = (INF, 0u64);
    for k in 0..D {
        let marker = W::marker(lanes, k);
        // SAFETY: the caller's offsets are in bounds.
        min = min.min(value(unsafe { W::get(&bits[k], off[k], widths[k]) }, marker));
        saturated = saturated.max(marker as u64);
    }
    if min == INF {
        saturated
    } else {
        min
    }
}

/// The `D` counter bit offsets of `key`, their cache lines requested.
#[inline(always)]
fn hash_prefetch<const D: usize, W: FixedWidths<D>>(
    bits: &[PackedView<'_>; D],
    lanes: &[Lane; D],
    hashes: &HashBank,
    key: &FlowKey,
) -> [u64; D] {
    let h: [u32; D] = if D <= 4 {
        hashes.hash_narrow::<D>(key)
    } else {
        let h = hashes.hash(key);
        std::array::from_fn(|i| h[i])
    };
    let widths = W::widths(lanes);
    let mut off = [0u64; D];
    for k in 0..D {
        off[k] = index(h[k], lanes[k].depth) as u64 * widths[k] as u64;
        bits[k].prefetch(off[k]);
    }
    off
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u8) -> FlowKey {
        FlowKey::from_v4([10, 0, 0, n], [10, 0, 1, 1], 1000 + n as u16, 80, 6)
    }

    /// A tower whose counters at `key`'s indices hold `values`.
    fn primed(pairs: &[(u8, u32)], mode: InsertMode, values: &[u32]) -> (Tower, [u32; MAX_ARRAYS]) {
        let mut t = Tower::new(TowerGeometry::from_widths_depths(pairs), mode).unwrap();
        let idx = t.indices(&key(1));
        for (a, &v) in values.iter().enumerate() {
            t.set_counter(a, idx[a], v);
        }
        (t, idx)
    }

    fn counters(t: &Tower, idx: &[u32; MAX_ARRAYS]) -> Vec<u32> {
        (0..t.arrays.len()).map(|a| t.counter(a, idx[a])).collect()
    }

    /// SketchINT Figure 3: 8 x 2-bit, 4 x 4-bit, 2 x 8-bit counters (16 bits per array).
    /// The flow's 2-bit counter has overflowed (value 3): it is not incremented, and the
    /// query skips it.
    #[test]
    fn sketchint_figure3_overflowed_counter_is_skipped() {
        let fig3 = [(2, 8), (4, 4), (8, 2)];
        let (mut t, idx) = primed(&fig3, InsertMode::Cm, &[3, 5, 9]);
        t.insert(&key(1));
        assert_eq!(counters(&t, &idx), vec![3, 6, 10]);
        assert_eq!(t.query(&key(1)), 6);
    }

    #[test]
    fn hand_computed_modes() {
        let g = [(4, 16), (8, 8), (16, 4)];
        let cases = [
            (InsertMode::Cm, [5, 3, 4], vec![6, 4, 5]),
            (InsertMode::Cu, [5, 3, 4], vec![5, 4, 4]),
            // omega: 5+1=6 -> omega 6; 3+1=4 < 6 -> omega 4; 4+1 >= 4 and 4 >= 4: unchanged.
            (InsertMode::Acu, [5, 3, 4], vec![6, 4, 4]),
            // CU raises every counter equal to the minimum.
            (InsertMode::Cu, [3, 3, 7], vec![4, 4, 7]),
            // Overflowed first array: CU ignores it, ACU starts its chain at array 1.
            (InsertMode::Cu, [15, 9, 2], vec![15, 9, 3]),
            (InsertMode::Acu, [15, 9, 2], vec![15, 10, 3]),
            // ACU raises a cell below omega up to omega.
            (InsertMode::Acu, [1, 3, 1], vec![2, 3, 2]),
        ];
        for (mode, start, want) in cases {
            let (mut t, idx) = primed(&g, mode, &start);
            t.insert(&key(1));
            assert_eq!(counters(&t, &idx), want, "{mode:?} from {start:?}");
        }
    }

    /// Every width saturates at 2^w - 2, then turns into the marker 2^w - 1 for good.
    #[test]
    fn saturation_at_every_width() {
        for w in 1..=32u8 {
            for mode in [InsertMode::Cm, InsertMode::Cu, InsertMode::Acu] {
                let m = smartnic_contract::geometry::marker(w);
                let start = m.saturating_sub(2);
                let (mut t, idx) = primed(&[(w, 3)], mode, &[start]);
                if m >= 2 {
                    t.insert(&key(1));
                    assert_eq!(t.counter(0, idx[0]), m - 1, "w={w} {mode:?}");
                    assert_eq!(t.query(&key(1)), (m - 1) as u64);
                }
                t.insert(&key(1));
                assert_eq!(t.counter(0, idx[0]), m, "w={w} {mode:?} reaches the marker");
                t.insert(&key(1));
                assert_eq!(t.counter(0, idx[0]), m, "w={w} {mode:?} marker is sticky");
                assert_eq!(t.query(&key(1)), m as u64, "all overflowed reads as the marker");
            }
        }
    }

    /// The prefetching batch path (both builds of it) is the sequential path, counter for
    /// counter.
    #[test]
    fn batch_insert_equals_sequential_insert() {
        let keys: Vec<FlowKey> = (0..5000u32).map(|n| key((n * n % 251) as u8)).collect();
        for mode in [InsertMode::Cm, InsertMode::Cu, InsertMode::Acu] {
            let g = TowerGeometry::from_widths_depths(&[(2, 64), (4, 32), (8, 16), (12, 8)]);
            let mut seq = Tower::new(g.clone(), mode).unwrap();
            keys.iter().for_each(|k| seq.insert(k));
            let mut batch = Tower::new(g.clone(), mode).unwrap();
            batch.insert_batch(&keys[..3]);
            batch.insert_batch(&keys[3..]);
            // The portable body too, whatever this CPU dispatches to.
            let mut any = Tower::new(g, mode).unwrap();
            any.batch_any(&keys, None);
            for a in 0..4 {
                assert_eq!(seq.array_bytes(a), batch.array_bytes(a), "{mode:?} array {a}");
                assert_eq!(seq.array_bytes(a), any.array_bytes(a), "{mode:?} array {a} (portable)");
            }
        }
    }

    /// The batched insert-and-query is `insert_and_query` key by key: same answers, same
    /// counters, with narrow arrays that saturate.
    #[test]
    fn insert_and_query_batch_equals_one_by_one() {
        let keys: Vec<FlowKey> = (0..4000u32).map(|n| key((n * n % 97) as u8)).collect();
        // Runtime widths, then the NIC's (`FixedWidths`) and four arrays (the general loop).
        let geometries: [&[(u8, u32)]; 3] = [
            &[(2, 64), (4, 32), (8, 16)],
            &[(8, 64), (16, 32), (32, 16)],
            &[(2, 64), (4, 32), (8, 16), (3, 8)],
        ];
        for (mode, pairs) in [InsertMode::Cm, InsertMode::Cu, InsertMode::Acu]
            .into_iter()
            .flat_map(|m| geometries.map(|g| (m, g)))
        {
            let g = TowerGeometry::from_widths_depths(pairs);
            let mut one = Tower::new(g.clone(), mode).unwrap();
            let want: Vec<u64> = keys.iter().map(|k| one.insert_and_query(k)).collect();
            let mut batch = Tower::new(g, mode).unwrap();
            let (mut got, mut part) = (Vec::new(), Vec::new());
            for chunk in keys.chunks(333) {
                batch.insert_and_query_batch(chunk, &mut part);
                got.extend_from_slice(&part);
            }
            assert_eq!(got, want, "{mode:?} {pairs:?}");
            for a in 0..pairs.len() {
                assert_eq!(one.array_bytes(a), batch.array_bytes(a), "{mode:?} {pairs:?} array {a}");
            }
        }
    }

    /// The fixed width sets are what their kernels assume: each width divides 64 (no
    /// counter straddles a word), the marker they derive is the geometry's, and each set
    /// is a geometry the constructors build.
    #[test]
    fn fixed_widths_hold_their_kernels_assumptions() {
        fn check<const D: usize, W: FixedWidths<D>>(built: &TowerGeometry) {
            let widths = W::FIXED.expect("a fixed set");
            let lanes = [Lane { width: 0, marker: 0, depth: 0 }; D];
            for (k, &w) in widths.iter().enumerate() {
                assert!(w <= 32 && 64 % w == 0, "width {w}");
                assert_eq!(W::marker(&lanes, k), smartnic_contract::geometry::marker(w), "width {w}");
            }
            assert_eq!(built.arrays.iter().map(|a| a.width).collect::<Vec<_>>(), widths);
        }
        check::<5, Cpu5>(&TowerGeometry::sketchint_cpu(2 << 20));
        check::<3, Fpga3>(&TowerGeometry::sketchint_fpga());
        check::<5, Flat5>(&TowerGeometry::equal_memory(&[32; 5], 1 << 20));
        check::<3, Flat3>(&TowerGeometry::equal_memory(&[32; 3], 1 << 20));
    }

    /// Sequential `insert`, the specification, counter for counter.
    fn assert_batch_equals_sequential(pairs: &[(u8, u32)], mode: InsertMode, keys: &[FlowKey]) {
        let g = TowerGeometry::from_widths_depths(pairs);
        let mut seq = Tower::new(g.clone(), mode).unwrap();
        seq.hashes = seq.hashes.clone().tables_only();
        keys.iter().for_each(|k| seq.insert(k));
        // Both hashings (carry-less where the CPU has it, and table rows) in the batch path.
        for tables in [false, true] {
            let mut batch = Tower::new(g.clone(), mode).unwrap();
            if tables {
                batch.hashes = batch.hashes.clone().tables_only();
            }
            let (head, tail) = keys.split_at(keys.len() / 3);
            batch.insert_batch(head);
            batch.insert_batch(tail);
            for a in 0..pairs.len() {
                assert_eq!(seq.array_bytes(a), batch.array_bytes(a), "{mode:?} {pairs:?} array {a} {tables}");
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        /// The fixed-`d` kernels (d = 3 and 5, each mode) equal the sequential path, with
        /// few flows over small arrays so narrow counters collide, saturate and overflow.
        #[test]
        fn fixed_d_kernels_equal_sequential(
            seed in 0u64..u64::MAX,
            flows in 1u8..40,
            packets in 0usize..3000,
            narrow in proptest::sample::select(vec![1u8, 2, 3, 4]),
        ) {
            let mut stream = smartnic_contract::vectors::KeyStream::new(seed);
            let pool: Vec<FlowKey> = (0..flows).map(|_| stream.next_key()).collect();
            let keys: Vec<FlowKey> =
                (0..packets).map(|n| pool[(n * n + seed as usize % 7) % pool.len()]).collect();
            let d3 = [(narrow, 64), (8, 32), (32, 16)];
            let d5 = [(narrow, 128), (4, 64), (8, 32), (16, 16), (32, 8)];
            // The fixed-width kernels' sets (`FixedWidths`), at small depths.
            let cpu5 = [(2, 128), (4, 64), (8, 32), (16, 16), (32, 8)];
            let fpga3 = [(8, 64), (16, 32), (32, 16)];
            let flat5 = [(32, 7), (32, 5), (32, 3), (32, 11), (32, 2)];
            let flat3 = [(32, 7), (32, 5), (32, 3)];
            for mode in [InsertMode::Cm, InsertMode::Cu, InsertMode::Acu] {
                assert_batch_equals_sequential(&d3, mode, &keys);
                assert_batch_equals_sequential(&d5, mode, &keys);
                for fixed in [&cpu5[..], &fpga3, &flat5, &flat3] {
                    assert_batch_equals_sequential(fixed, mode, &keys);
                }
            }
        }
    }

    /// Sharded CM is the sequential CM, counter for counter, narrow counters saturated
    /// included; sharded CU and ACU stay within their stated bounds: no counter above the
    /// CM counter of the same packets, and (CU) no flow estimated below its true count.
    #[test]
    fn sharded_insert_is_exact_for_cm_and_bounded_for_cu_acu() {
        let mut stream = smartnic_contract::vectors::KeyStream::new(11);
        let pool: Vec<FlowKey> = (0..300).map(|_| stream.next_key()).collect();
        let keys: Vec<FlowKey> = (0..20_000usize).map(|n| pool[(n * n / 7 + n) % pool.len()]).collect();
        let g = TowerGeometry::from_widths_depths(&[(2, 256), (4, 128), (8, 64), (16, 32), (32, 16)]);
        let mut truth = std::collections::HashMap::new();
        keys.iter().for_each(|k| *truth.entry(*k).or_insert(0u64) += 1);
        let mut cm = Tower::new(g.clone(), InsertMode::Cm).unwrap();
        keys.iter().for_each(|k| cm.insert(k));
        for shards in 1..=7 {
            let mut sharded = Tower::new(g.clone(), InsertMode::Cm).unwrap();
            sharded.insert_sharded(&keys, shards);
            for a in 0..5 {
                assert_eq!(sharded.array_bytes(a), cm.array_bytes(a), "CM, {shards} shards, array {a}");
            }
            for mode in [InsertMode::Cu, InsertMode::Acu] {
                let mut t = Tower::new(g.clone(), mode).unwrap();
                t.insert_sharded(&keys, shards);
                for (a, arr) in t.arrays.iter().enumerate() {
                    for i in 0..arr.depth {
                        assert!(t.counter(a, i) <= cm.counter(a, i), "{mode:?} {shards} shards a{a}[{i}]");
                    }
                }
                if mode == InsertMode::Cu {
                    for (k, &n) in &truth {
                        assert!(t.query(k) >= n, "CU, {shards} shards, {k}: {} < {n}", t.query(k));
                    }
                }
            }
        }
    }

    /// The 32-bit-chunk merge equals the counter-wise merge at every width, on counters
    /// drawn near zero, near the marker and at it (so lanes saturate beside lanes that do
    /// not), with depths that leave a tail past the last whole chunk.
    #[test]
    fn chunked_merge_equals_counterwise_merge() {
        let mut rng = 0x2545_F491_4F6C_DD1Du64;
        let mut draw = |marker: u32| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            match rng % 4 {
                0 => marker,
                1 => marker - (rng >> 8) as u32 % marker.min(4),
                _ => (rng >> 8) as u32 & marker,
            }
        };
        for (width, depth) in [(1, 77), (2, 1000), (4, 333), (8, 97), (16, 41), (32, 9), (3, 50), (12, 35)] {
            let g = TowerGeometry::from_widths_depths(&[(width, depth)]);
            let (mut a, mut b) =
                (Tower::new(g.clone(), InsertMode::Cm).unwrap(), Tower::new(g, InsertMode::Cm).unwrap());
            let marker = a.arrays[0].marker;
            for i in 0..depth {
                a.set_counter(0, i, draw(marker));
                b.set_counter(0, i, draw(marker));
            }
            let mut counterwise = a.arrays[0].clone();
            counterwise.merge_counters(&b.arrays[0], 0);
            a.merge(&b).unwrap();
            for i in 0..depth {
                assert_eq!(a.counter(0, i), counterwise.get(i), "width {width}, counter {i}");
            }
        }
    }

    /// `insert_and_query` leaves the counters of `insert` and answers what `query` answers
    /// after it, in every mode, through saturation of the narrow arrays.
    #[test]
    fn insert_and_query_equals_insert_then_query() {
        let g = TowerGeometry::from_widths_depths(&[(2, 64), (4, 32), (8, 16)]);
        for mode in [InsertMode::Cm, InsertMode::Cu, InsertMode::Acu] {
            let mut simple = Tower::new(g.clone(), mode).unwrap();
            let mut fused = simple.clone();
            for n in 0..3000usize {
                let k = key((n * n % 61) as u8);
                simple.insert(&k);
                assert_eq!(fused.insert_and_query(&k), simple.query(&k), "{mode:?} packet {n}");
            }
            for a in 0..3 {
                assert_eq!(fused.array_bytes(a), simple.array_bytes(a), "{mode:?} array {a}");
            }
        }
    }

    #[test]
    fn merge_refuses_another_geometry() {
        let mut a = Tower::new(TowerGeometry::from_widths_depths(&[(8, 16)]), InsertMode::Cm).unwrap();
        let b = Tower::new(TowerGeometry::from_widths_depths(&[(8, 32)]), InsertMode::Cm).unwrap();
        assert_eq!(a.merge(&b), Err(GeometryMismatch));
        assert_eq!(GeometryMismatch.to_string(), "cannot merge towers of different geometries");
    }

    #[test]
    fn snapshot_bytes_round_trip() {
        let mut t = Tower::new(TowerGeometry::sketchint_fpga(), InsertMode::Acu).unwrap();
        for n in 0..200u8 {
            t.insert(&key(n % 37));
        }
        let mut u = Tower::new(TowerGeometry::sketchint_fpga(), InsertMode::Acu).unwrap();
        for a in 0..3 {
            assert!(u.load_array(a, &t.array_bytes(a)));
        }
        for n in 0..37u8 {
            assert_eq!(u.query(&key(n)), t.query(&key(n)));
        }
        assert!(!u.load_array(0, &t.array_bytes(0)[1..]));
    }
}
