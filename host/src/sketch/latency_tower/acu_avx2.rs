//! The approximate-CU step of a hop on the NIC's three windowed buckets, both fields at
//! once in one AVX2 vector.
//!
//! Why: in the per-switch half the scalar step (two fields, three arrays, each cell a
//! marker test, a saturating add and the running minimum) was a third of the thread's
//! time. Here the six cells sit in the 32-bit lanes of one vector, counts in the low half
//! and latency sums in the high half (`[c0 c1 c2 pad | s0 s1 s2 pad]`), and each rule of
//! [`super::step_pair`] is one vector operation over all six: the running minimum of the
//! arrays before each one (Algorithm 1's omega) is a prefix minimum within each half.
//!
//! Every lane value is a cell value below its marker, or `u32::MAX` for "overflowed"
//! ([`crate::sketch::cell::INF`]): a live cell never holds `u32::MAX`, since its marker is
//! at most that. The pad lanes hold an overflowed cell, so they never lower a minimum.
//!
//! A hop's bucket offsets ([`locate`]) are one vector too: its three hashes, each scaled
//! to its array's depth and bucket width in a 64-bit lane.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use super::kernel::BucketLayout;
use super::PairEstimate;

/// What the step needs of the three arrays' bucket layout, as vectors (built once a batch).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(super) struct Layout {
    /// Each array's count width, in the 64-bit lanes of a window vector.
    count_width: __m256i,
    count_mask: __m256i,
    sum_mask: __m256i,
    /// The window bits past each bucket (the next bucket's).
    rest_mask: __m256i,
    /// Each cell's overflow marker, in the cell's lane; `u32::MAX` in the pad lanes.
    markers: __m256i,
    /// All ones in the pad lanes.
    pads: __m256i,
}

/// Each array's depth and bucket width, in the 64-bit lanes of vectors (built once a
/// batch): what [`locate`] turns a hop's hashes into bucket offsets by.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(super) struct Depths {
    depth: __m256i,
    bucket_bits: __m256i,
}

#[cfg(target_arch = "x86_64")]
impl Depths {
    /// The vectors of three arrays' depths and bucket widths (in bits, below 2^32).
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn new(depth: [u32; 3], bucket_bits: [u64; 3]) -> Self {
        assert!(bucket_bits.iter().all(|&b| b <= u32::MAX as u64), "a bucket narrower than 2^32 bits");
        Depths { depth: from_lanes(depth.map(u64::from)), bucket_bits: from_lanes(bucket_bits) }
    }
}

/// The bit offset of each array's bucket for the hop whose hashes are `flow ^ high ^ low`
/// (its flow's share and the two rows of its switch ID): `index(h, depth) * bucket_bits`
/// per array, each product in a 64-bit lane.
///
/// Why by hand: the compiler's own vectorising of the scalar form came and went with the
/// build (a build of the crate as one unit took the per-switch thread's locate pass from
/// 11 to 15 % of the run).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
pub(super) unsafe fn locate(d: &Depths, flow: &[u32; 4], high: &[u32; 4], low: &[u32; 4]) -> [u64; 3] {
    // SAFETY (the loads): each reads the 16 bytes of a [u32; 4].
    let load = |v: &[u32; 4]| unsafe { _mm_loadu_si128(v.as_ptr().cast()) };
    let h = _mm_xor_si128(_mm_xor_si128(load(flow), load(high)), load(low));
    // index(h, depth) = (h * depth) >> 32, on the low 32 bits of each 64-bit lane.
    let index = _mm256_srli_epi64::<32>(_mm256_mul_epu32(_mm256_cvtepu32_epi64(h), d.depth));
    to_lanes(_mm256_mul_epu32(index, d.bucket_bits))
}

/// Three 64-bit values in the low lanes of a vector, the fourth lane zero.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn from_lanes(v: [u64; 3]) -> __m256i {
    _mm256_set_epi64x(0, v[2] as i64, v[1] as i64, v[0] as i64)
}

/// The three low 64-bit lanes of `v` ([`from_lanes`] undone).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn to_lanes(v: __m256i) -> [u64; 3] {
    let (lo, hi) = (_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v));
    [_mm_cvtsi128_si64(lo) as u64, _mm_extract_epi64::<1>(lo) as u64, _mm_cvtsi128_si64(hi) as u64]
}

/// Lane order of a window vector's cells packed as `c | s << 32` per 64-bit lane, gathered
/// into the step's order (counts low, sums high).
#[cfg(target_arch = "x86_64")]
const TO_STEP: [i32; 8] = [0, 2, 4, 6, 1, 3, 5, 7];
/// The inverse of [`TO_STEP`].
#[cfg(target_arch = "x86_64")]
const TO_WINDOWS: [i32; 8] = [0, 4, 1, 5, 2, 6, 3, 7];

#[cfg(target_arch = "x86_64")]
impl Layout {
    /// The vectors of three arrays' layouts.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn new(a: [BucketLayout; 3]) -> Self {
        let lanes64 = |f: fn(&BucketLayout) -> u64| from_lanes(a.each_ref().map(f));
        let m = |k: usize, count: bool| (if count { a[k].count_marker } else { a[k].sum_marker }) as i32;
        Layout {
            count_width: lanes64(|l| l.count_width as u64),
            count_mask: lanes64(|l| l.count_mask),
            sum_mask: lanes64(|l| l.sum_mask),
            rest_mask: lanes64(|l| l.rest_mask),
            markers: _mm256_setr_epi32(
                m(0, true),
                m(1, true),
                m(2, true),
                -1,
                m(0, false),
                m(1, false),
                m(2, false),
                -1,
            ),
            pads: _mm256_setr_epi32(0, 0, 0, -1, 0, 0, 0, -1),
        }
    }
}

/// The hop of `units` on the buckets whose windows are `win` (approximate CU on both
/// fields, the count growing by one): the pair's estimates before the hop, and the windows
/// to write back, their bits past each bucket kept. Equals [`super::step_pair`] in
/// [`smartnic_contract::geometry::InsertMode::Acu`] on the cells cut out of the windows.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
pub(super) unsafe fn step(l: &Layout, win: [u64; 3], units: u32) -> (PairEstimate, [u64; 3]) {
    let w = from_lanes(win);
    let count = _mm256_and_si256(w, l.count_mask);
    let sum = _mm256_and_si256(_mm256_srlv_epi64(w, l.count_width), l.sum_mask);
    let packed = _mm256_or_si256(count, _mm256_slli_epi64::<32>(sum));
    let order = _mm256_loadu_si256(TO_STEP.as_ptr().cast());
    let stored = _mm256_or_si256(_mm256_permutevar8x32_epi32(packed, order), l.pads);
    let (before, next) = acu(stored, l.markers, units);
    let back = _mm256_permutevar8x32_epi32(next, _mm256_loadu_si256(TO_WINDOWS.as_ptr().cast()));
    let low = _mm256_and_si256(back, _mm256_set1_epi64x(u32::MAX as i64));
    let cells = _mm256_or_si256(low, _mm256_sllv_epi64(_mm256_srli_epi64::<32>(back), l.count_width));
    let out = _mm256_or_si256(_mm256_and_si256(w, l.rest_mask), cells);
    (before, to_lanes(out))
}

/// The rules on the cells `stored` (step lane order) under `markers`: the estimates
/// before, and the cells after.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn acu(stored: __m256i, markers: __m256i, units: u32) -> (PairEstimate, __m256i) {
    let dead = _mm256_cmpeq_epi32(stored, markers);
    // A cell's value: overflowed cells (and the pads) read as u32::MAX.
    let value = _mm256_or_si256(stored, dead);
    let before = lane_minima(value);
    let alpha = _mm256_setr_epi32(1, 1, 1, 0, units as i32, units as i32, units as i32, 0);
    // The grown cell, u32::MAX where the add carried out of 32 bits (above every marker).
    let sum = _mm256_add_epi32(stored, alpha);
    let carried = _mm256_andnot_si256(_mm256_cmpeq_epi32(sum, stored), ge(stored, sum));
    let grown = _mm256_or_si256(sum, carried);
    // Its value: u32::MAX at or above the marker, and for an overflowed cell (no share in
    // the running minimum).
    let grown_value = _mm256_or_si256(_mm256_or_si256(grown, ge(grown, markers)), dead);
    let omega = prefix_min_before(grown_value);
    // max(v, min(v + alpha, omega)), saturated at the marker; an overflowed cell stays
    // its marker (max with the marker, then min with it).
    let next = _mm256_min_epu32(_mm256_max_epu32(stored, _mm256_min_epu32(grown, omega)), markers);
    (before, next)
}

/// `a >= b` per unsigned 32-bit lane, as all ones.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn ge(a: __m256i, b: __m256i) -> __m256i {
    _mm256_cmpeq_epi32(_mm256_max_epu32(a, b), a)
}

/// In each half, lane `k` becomes the minimum of lanes `0..k` (u32::MAX for lane 0): the
/// running minimum each array sees from the arrays before it.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn prefix_min_before(v: __m256i) -> __m256i {
    let first = _mm256_setr_epi32(-1, 0, 0, 0, -1, 0, 0, 0);
    let one = _mm256_or_si256(_mm256_bslli_epi128::<4>(v), first);
    let two = _mm256_or_si256(_mm256_bslli_epi128::<4>(one), first);
    _mm256_min_epu32(one, two)
}

/// The smallest value of each half (counts, sums), `None` when it is u32::MAX (every cell
/// overflowed).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn lane_minima(v: __m256i) -> PairEstimate {
    let a = _mm256_min_epu32(v, _mm256_shuffle_epi32::<0b10_11_00_01>(v));
    let b = _mm256_min_epu32(a, _mm256_shuffle_epi32::<0b01_00_11_10>(a));
    let finite = |x: i32| (x != -1).then_some(x as u32 as u64);
    PairEstimate { count: finite(_mm256_extract_epi32::<0>(b)), sum: finite(_mm256_extract_epi32::<4>(b)) }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use crate::sketch::latency_tower::step_pair;
    use rand::{Rng, SeedableRng};
    use smartnic_contract::geometry::InsertMode;
    use smartnic_contract::hash::index;
    use smartnic_contract::packing::mask;
    use smartnic_contract::per_switch::LatencyTowerGeometry;

    /// A cell value of `width` bits that often sits on an edge: 0, 1, just below or at the
    /// marker, or anywhere.
    fn cell(rng: &mut impl Rng, width: u8) -> u64 {
        let marker = mask(width);
        match rng.gen_range(0..6) {
            0 => 0,
            1 => 1,
            2 => marker - 1,
            3 => marker,
            4 => marker - rng.gen_range(0..=marker.min(4096)),
            _ => rng.gen_range(0..=marker),
        }
    }

    /// A hop's units, edges included: none, one, small, a 28-bit latency, the largest.
    fn units(rng: &mut impl Rng) -> u32 {
        match rng.gen_range(0..5) {
            0 => 0,
            1 => 1,
            2 => rng.gen_range(0..4096),
            3 => rng.gen_range(0..1 << 28),
            _ => u32::MAX,
        }
    }

    /// The vector step equals the scalar rule (`step_pair` in approximate CU) on the NIC's
    /// layout: the estimates before, every cell after, and the window bits past each
    /// bucket untouched, over 200K hops whose cells sit on the overflow edges and whose
    /// sums carry past 32 bits.
    #[test]
    fn vector_step_equals_the_scalar_rule() {
        assert!(std::is_x86_feature_detected!("avx2"), "the vector step needs an AVX2 CPU to be tested");
        let g = LatencyTowerGeometry::nic_default();
        let a: Vec<_> = g.arrays.iter().collect();
        let cw: [u8; 3] = std::array::from_fn(|k| a[k].count_width);
        let sw: [u8; 3] = std::array::from_fn(|k| a[k].sum_width);
        let rest: [u64; 3] = std::array::from_fn(|k| !(u64::MAX >> (64 - a[k].bucket_bits())));
        let lanes: [BucketLayout; 3] = std::array::from_fn(|k| BucketLayout {
            count_width: cw[k],
            count_mask: mask(cw[k]),
            sum_mask: mask(sw[k]),
            rest_mask: rest[k],
            count_marker: a[k].count_marker(),
            sum_marker: a[k].sum_marker(),
        });
        // SAFETY: AVX2 was asserted above.
        let layout = unsafe { Layout::new(lanes) };
        let markers = (lanes.map(|l| l.count_marker), lanes.map(|l| l.sum_marker));
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
        for _ in 0..200_000 {
            let count: [u32; 3] = std::array::from_fn(|k| cell(&mut rng, cw[k]) as u32);
            let sum: [u32; 3] = std::array::from_fn(|k| cell(&mut rng, sw[k]) as u32);
            let win: [u64; 3] = std::array::from_fn(|k| {
                (rng.gen::<u64>() & rest[k]) | count[k] as u64 | (sum[k] as u64) << cw[k]
            });
            let u = units(&mut rng);
            let (want, count_after, sum_after) = step_pair(InsertMode::Acu, (count, sum), markers, u as u64);
            // SAFETY: as above.
            let (got, out) = unsafe { step(&layout, win, u) };
            assert_eq!(got, want, "estimates of {count:?} {sum:?} + {u}");
            for k in 0..3 {
                let cells = count_after[k] as u64 | (sum_after[k] as u64) << cw[k];
                assert_eq!(out[k], (win[k] & rest[k]) | cells, "array {k} of {count:?} {sum:?} + {u}");
            }
        }
    }

    /// The vector locate equals `index(h, depth) * bucket_bits` per array, on random
    /// hashes and rows, for the NIC's arrays and for depths and widths at their edges (a
    /// depth of one, the largest depth, 64-bit buckets).
    #[test]
    fn vector_locate_equals_the_scalar_index() {
        assert!(std::is_x86_feature_detected!("avx2"), "the vector locate needs an AVX2 CPU to be tested");
        let g = LatencyTowerGeometry::nic_default();
        let nic: Vec<_> = g.arrays.iter().map(|a| (a.depth, a.bucket_bits())).collect();
        let arrays = [
            [nic[0], nic[1], nic[2]],
            [(1, 64), (u32::MAX, 64), (u32::MAX - 1, 1)],
            [(3, 48), (1 << 31, 32), ((1 << 31) + 1, 40)],
        ];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(18);
        for a in arrays {
            // SAFETY: AVX2 was asserted above.
            let d = unsafe { Depths::new(a.map(|(depth, _)| depth), a.map(|(_, bits)| bits)) };
            for n in 0..100_000u32 {
                let mut v = || -> [u32; 4] { std::array::from_fn(|_| rng.gen()) };
                let (flow, high, low) =
                    if n == 0 { ([0; 4], [0; 4], [u32::MAX; 4]) } else { (v(), v(), v()) };
                let want: [u64; 3] =
                    std::array::from_fn(|k| index(flow[k] ^ high[k] ^ low[k], a[k].0) as u64 * a[k].1);
                // SAFETY: as above.
                assert_eq!(
                    unsafe { locate(&d, &flow, &high, &low) },
                    want,
                    "{a:?} {flow:?} {high:?} {low:?}"
                );
            }
        }
    }
}
