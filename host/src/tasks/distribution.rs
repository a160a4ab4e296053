//! Flow-size distribution by MRAC (Kumar et al., SIGMETRICS 2004): expectation
//! maximisation over how each counter's value splits into flows.
//!
//! MRAC on one array of `m` counters whose values form the histogram `y_v`:
//! - start with `n_s = y_s` (every counter holds one flow of its value);
//! - E step: for every counter value `v`, every way `beta` of writing `v` as a sum of flow
//!   sizes has probability proportional to `prod_s (n_s / m)^(c_s) / c_s!` (Poisson
//!   arrivals of `n_s / m` flows of size `s` per counter); the new `n_s` is the expected
//!   number of flows of size `s`, `sum_v y_v E[c_s | v]`;
//! - repeat.
//!
//! Sizes never seen as a counter value start at 0 and stay 0 (a product with a zero
//! factor), so partitions only use parts from the observed values; that keeps the E step
//! small. Like the reference implementations, the number of flows in one counter is
//! capped by the counter value (6 for small values down to 2 above 600; 1 above 2^20).
//! Above 600 the two-flow splits of every value are summed by FFT convolution once their
//! enumeration would cost more (many distinct values: it grows as their square), so a
//! snapshot of 2^16 distinct counter values takes 1.5 s instead of 92 s (`benches/report.rs`).
//!
//! Per sketch (SketchINT V-A, LightGuardian 6.1):
//! - TowerSketch: MRAC on each array `A_i` separately, ignoring overflowed counters; `A_i`
//!   answers for sizes in `[2^delta_(i-1) - 1, 2^delta_i - 1)` (with `delta_0 = 0`), and the
//!   answers are concatenated. For CM and CU (three 32-bit arrays) the first array covers
//!   every size.
//! - SuMax: MRAC on the flow-size cells of the first array.
//! - ElasticSketch: MRAC on the light part plus the heavy part's flows at their estimates.

use std::collections::BTreeMap;
use std::sync::Arc;

use rustfft::num_complex::Complex64;
use rustfft::{Fft, FftPlanner};

use crate::sketch::{AnySketch, Elastic, SuMax, Tower};
use smartnic_contract::geometry::{marker, sumax_cell};

/// Default EM iterations (MRAC converges in a handful on the papers' traces).
pub const DEFAULT_ITERATIONS: usize = 10;

/// Counter values above this are taken as one flow (no partition enumeration).
pub const SINGLE_FLOW_ABOVE: u64 = 1 << 20;

/// How many flows one counter of value `v` may hold in the E step.
pub fn max_flows_in_counter(v: u64) -> usize {
    match v {
        0..=50 => 6,
        51..=100 => 5,
        101..=250 => 4,
        251..=600 => 3,
        601..=SINGLE_FLOW_ABOVE => 2,
        _ => 1,
    }
}

/// An estimated (or exact) number of flows per flow size.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct SizeDistribution(pub BTreeMap<u64, f64>);

impl SizeDistribution {
    /// The exact distribution of a list of flow sizes (size 0 ignored).
    pub fn from_sizes<I: IntoIterator<Item = u64>>(sizes: I) -> Self {
        let mut m = BTreeMap::new();
        for s in sizes.into_iter().filter(|&s| s > 0) {
            *m.entry(s).or_insert(0.0) += 1.0;
        }
        SizeDistribution(m)
    }

    /// `(size, flows)` pairs in increasing size.
    pub fn iter(&self) -> impl Iterator<Item = (u64, f64)> + '_ {
        self.0.iter().map(|(&s, &n)| (s, n))
    }

    /// Number of flows.
    pub fn flows(&self) -> f64 {
        self.0.values().sum()
    }

    /// Number of packets (`sum s n_s`).
    pub fn packets(&self) -> f64 {
        self.iter().map(|(s, n)| s as f64 * n).sum()
    }

    /// Flows of size `s`.
    pub fn get(&self, s: u64) -> f64 {
        self.0.get(&s).copied().unwrap_or(0.0)
    }

    /// WMRE against `truth` over every size either side has (sizes with 0 on both sides
    /// add nothing, so this equals the sum over `1..=z`).
    pub fn wmre(&self, truth: &SizeDistribution) -> f64 {
        let mut keys: Vec<u64> = self.0.keys().chain(truth.0.keys()).copied().collect();
        keys.sort_unstable();
        keys.dedup();
        crate::metrics::wmre_pairs(keys.into_iter().map(|s| (truth.get(s), self.get(s))))
    }

    /// Flows per power-of-two size class: `[1,2), [2,4), [4,8), ...` as
    /// `(lower bound, flows)`; the report's histogram.
    pub fn log2_histogram(&self) -> Vec<(u64, f64)> {
        let mut out: Vec<(u64, f64)> = Vec::new();
        for (s, n) in self.iter() {
            let lo = 1u64 << (63 - s.leading_zeros());
            match out.last_mut() {
                Some((l, acc)) if *l == lo => *acc += n,
                _ => out.push((lo, n)),
            }
        }
        out
    }

    fn add_range(&mut self, other: &SizeDistribution, lo: u64, hi: u64) {
        for (s, n) in other.0.range(lo..hi) {
            *self.0.entry(*s).or_insert(0.0) += n;
        }
    }
}

/// Histogram of counter values `v -> number of counters` (values 0 and overflowed counters
/// left out by the callers).
pub type CounterHistogram = BTreeMap<u64, u64>;

/// MRAC over `m` counters whose nonzero values have histogram `hist`.
///
/// Cost: values of at most [`MULTI_PART_MAX`] enumerate their partitions (bounded by that
/// value); larger values split into at most two flows, and the sum over those pairs is
/// either enumerated (exactly the reference walk, `O(n^2)` for `n` distinct values in the
/// worst case) or, when that would cost more, computed as two convolutions by FFT
/// (`O(V log V)` per iteration with `V <= 2^21` set by the largest value), equal to the
/// walk within float round-off. See [`PairMethod`].
pub fn mrac(hist: &CounterHistogram, m: u64, iterations: usize) -> SizeDistribution {
    mrac_with(hist, m, iterations, PairMethod::Auto)
}

/// Largest counter value whose E step enumerates partitions into more than two flows
/// (see [`max_flows_in_counter`]); every larger value splits into at most two.
pub const MULTI_PART_MAX: u64 = 600;

/// How the E step sums over the two-flow splits of values above [`MULTI_PART_MAX`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairMethod {
    /// The partition walk: every pair `(s, v - s)` of the support, one at a time.
    Walk,
    /// Two FFT convolutions over the value range.
    Fft,
    /// The walk when it visits fewer pairs than the FFTs cost, else the FFT.
    Auto,
}

/// [`mrac`] with the pair method chosen by the caller (tests compare the two).
pub fn mrac_with(hist: &CounterHistogram, m: u64, iterations: usize, method: PairMethod) -> SizeDistribution {
    mrac_on(hist, m, iterations, method, crate::parallel::threads(0))
}

/// [`mrac_with`] with the walk's values spread over `threads` threads (the same result
/// for any count: see [`EStep::values`]).
fn mrac_on(
    hist: &CounterHistogram,
    m: u64,
    iterations: usize,
    method: PairMethod,
    threads: usize,
) -> SizeDistribution {
    let mut out = SizeDistribution::default();
    if m == 0 {
        return out;
    }
    // Values above SINGLE_FLOW_ABOVE are single flows; the EM runs on the rest.
    let small: Vec<(u64, u64)> = hist
        .iter()
        .filter(|&(&v, &c)| v > 0 && c > 0 && v <= SINGLE_FLOW_ABOVE)
        .map(|(&v, &c)| (v, c))
        .collect();
    for (&v, &c) in hist.range(SINGLE_FLOW_ABOVE + 1..) {
        if c > 0 {
            out.0.insert(v, c as f64);
        }
    }
    let support: Vec<u64> = small.iter().map(|&(v, _)| v).collect();
    let mut n: Vec<f64> = small.iter().map(|&(_, c)| c as f64).collect();
    let mut dense = vec![u32::MAX; support.last().map_or(0, |&v| v as usize + 1)];
    for (i, &v) in support.iter().enumerate() {
        dense[v as usize] = i as u32;
    }
    // The first `walked` support values go through the walk, the rest through the FFT.
    let multi = support.partition_point(|&v| v <= MULTI_PART_MAX);
    let use_fft = match method {
        PairMethod::Walk => false,
        PairMethod::Fft => multi < support.len(),
        PairMethod::Auto => walk_pairs(&support, multi) > PairConv::cost(&support),
    };
    let walked = if use_fft { multi } else { support.len() };
    let mut conv = use_fft.then(|| PairConv::new(&support));
    let mut w = vec![0.0; support.len()];
    for _ in 0..iterations {
        for (w, &ns) in w.iter_mut().zip(&n) {
            *w = ns / m as f64;
        }
        let mut next = vec![0.0; support.len()];
        let walk = EStep { support: &support, dense: &dense, w: &w };
        walk.values(&small[..walked], threads, &mut next);
        if let Some(conv) = &mut conv {
            conv.step(&support, &small[walked..], walked, &w, &mut next);
        }
        n = next;
    }
    for (&s, &ns) in support.iter().zip(&n) {
        if ns > 0.0 {
            *out.0.entry(s).or_insert(0.0) += ns;
        }
    }
    out
}

/// Pairs the walk visits for the values from `support[from]` on (all split into at most
/// two flows): for each value `v`, the support values in `[v / 2, v]`.
fn walk_pairs(support: &[u64], from: usize) -> u64 {
    support[from..]
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let hi = from + i + 1;
            (hi - support[..hi].partition_point(|&s| s.saturating_mul(2) < v)) as u64
        })
        .sum()
}

/// The two-flow part of the E step as convolutions over the value range.
///
/// With `w_s = n_s / m` (zero off the support) and values `v` that split into at most two
/// flows, the walk's partition weights are `w_v` for `{v}` and `w_s w_t` for `{s, t}`,
/// `s + t = v`, halved when `s = t` (the `1 / c_s!`). Summed over unordered pairs that is
/// half the ordered sum, so `Z(v) = w_v + (w * w)(v) / 2`. Each split adds its weight times
/// the multiplicity of a part to that part's expectation: for part `s` of value `v`, over
/// ordered pairs, `w_s w_(v-s)` (once for `s != t`, twice `w_s^2 / 2` for `s = t`). With
/// `r_v = count_v / Z(v)` the new `n_s` gains `r_s w_s` (the single split) plus
/// `w_s sum_v r_v w_(v-s)`, a correlation of `r` with `w`.
///
/// The transforms are `rustfft`'s, planned once per MRAC run (one length for every
/// iteration); its inverse is unscaled, so values read back are divided by the length.
struct PairConv {
    forward: Arc<dyn Fft<f64>>,
    inverse: Arc<dyn Fft<f64>>,
    /// Work space shared by both transforms (no allocation per iteration).
    scratch: Vec<Complex64>,
    /// FFT of `w`, reused by both convolutions of an iteration.
    w_hat: Vec<Complex64>,
    buf: Vec<Complex64>,
}

impl PairConv {
    /// FFT length for a support: room for the linear convolution of values up to the
    /// largest one. A power of two, so the transform takes the library's fastest path
    /// and [`PairConv::cost`] describes it.
    fn len(support: &[u64]) -> usize {
        (2 * (support.last().copied().unwrap_or(0) as usize + 1)).next_power_of_two()
    }

    /// The cost of one E step by FFT in the walk's unit (one visited pair): four
    /// transforms of `N log2 N / 2` butterflies each, a butterfly taken as one pair visit.
    fn cost(support: &[u64]) -> u64 {
        let n = Self::len(support) as u64;
        2 * n * n.trailing_zeros() as u64
    }

    fn new(support: &[u64]) -> Self {
        Self::with_len(Self::len(support))
    }

    /// Transforms of length `n`, planned once.
    fn with_len(n: usize) -> Self {
        let mut planner = FftPlanner::<f64>::new();
        let forward = planner.plan_fft_forward(n);
        let inverse = planner.plan_fft_inverse(n);
        let scratch_len = forward.get_inplace_scratch_len().max(inverse.get_inplace_scratch_len());
        let zero = Complex64::new(0.0, 0.0);
        PairConv {
            forward,
            inverse,
            scratch: vec![zero; scratch_len],
            w_hat: vec![zero; n],
            buf: vec![zero; n],
        }
    }

    /// `1 / N`: the scale of a value read back after [`Self::inverse_buf`].
    fn unscale(&self) -> f64 {
        1.0 / self.buf.len() as f64
    }

    /// Zeroes `x` and sets its real parts at `at` to `values` (a real signal on the value
    /// range).
    fn load(x: &mut [Complex64], at: impl IntoIterator<Item = (usize, f64)>) {
        x.fill(Complex64::new(0.0, 0.0));
        for (i, v) in at {
            x[i].re = v;
        }
    }

    /// Forward transform of `buf` in place.
    fn forward_buf(&mut self) {
        self.forward.process_with_scratch(&mut self.buf, &mut self.scratch);
    }

    /// Inverse transform of `buf` in place, unscaled (see [`Self::unscale`]).
    fn inverse_buf(&mut self) {
        self.inverse.process_with_scratch(&mut self.buf, &mut self.scratch);
    }

    /// Loads `w` (per support value) and keeps its transform in `w_hat`.
    fn set_weights(&mut self, support: &[u64], w: &[f64]) {
        Self::load(&mut self.w_hat, support.iter().zip(w).map(|(&s, &ws)| (s as usize, ws)));
        self.forward.process_with_scratch(&mut self.w_hat, &mut self.scratch);
    }

    /// `buf` becomes `(w * w)(v)` for every `v` (times `N`): the ordered pair sums.
    fn self_convolve_weights(&mut self) {
        for (b, &a) in self.buf.iter_mut().zip(&self.w_hat) {
            *b = a * a;
        }
        self.inverse_buf();
    }

    /// `buf`, holding a signal `r`, becomes `sum_v r_v w_(v-s)` for every `s` (times `N`):
    /// the correlation of `r` with the weights.
    fn correlate_with_weights(&mut self) {
        self.forward_buf();
        for (b, &a) in self.buf.iter_mut().zip(&self.w_hat) {
            *b *= a.conj();
        }
        self.inverse_buf();
    }

    /// Adds the E-step contributions of the values `pairs` (support indices from `first`)
    /// to `next`, given the weights `w` of the whole support.
    fn step(&mut self, support: &[u64], pairs: &[(u64, u64)], first: usize, w: &[f64], next: &mut [f64]) {
        let unscale = self.unscale();
        self.set_weights(support, w);
        self.self_convolve_weights();
        // Round-off can leave tiny negative values where the true sum is 0; every true
        // value is >= 0.
        let pair_sum: Vec<f64> =
            pairs.iter().map(|&(v, _)| (self.buf[v as usize].re * unscale).max(0.0)).collect();
        let mut r = Vec::with_capacity(pairs.len());
        for (i, (&(v, count), ps)) in pairs.iter().zip(pair_sum).enumerate() {
            let wv = w[first + i];
            let z = wv + ps / 2.0;
            if z > 0.0 {
                let rv = count as f64 / z;
                r.push((v as usize, rv));
                next[first + i] += rv * wv;
            }
        }
        Self::load(&mut self.buf, r);
        self.correlate_with_weights();
        for ((nx, &s), &ws) in next.iter_mut().zip(support).zip(w) {
            if ws != 0.0 {
                *nx += ws * (self.buf[s as usize].re * unscale).max(0.0);
            }
        }
    }
}

/// Most values of one block of [`EStep::values`]: a block's walked parts wait in memory
/// until it is folded.
const BLOCK_VALUES: usize = 512;
/// Most parts a block may hold (each value's possible parts are the support values up to
/// it): at most 4M of 16 bytes, 64 MiB, whatever the support.
const BLOCK_PARTS: usize = 1 << 22;

/// The E step of the walked values, shared by the threads that walk them.
struct EStep<'a> {
    support: &'a [u64],
    /// Support index of each value (`u32::MAX` when absent).
    dense: &'a [u32],
    /// `n_s / m` for each support value.
    w: &'a [f64],
}

impl EStep<'_> {
    /// Adds to `next` every walked value's expected flows: `count / Z(v)` times each
    /// support value's weighted multiplicity over the partitions of `v`. The values are
    /// walked on up to `threads` threads a block at a time, and each block is folded into
    /// `next` in value order, so every sum adds the same products in the same order as
    /// one thread would: the result is the same to the bit.
    fn values(&self, small: &[(u64, u64)], threads: usize, next: &mut [f64]) {
        let mut start = 0;
        while start < small.len() {
            let (mut end, mut parts) = (start, 0);
            while end < small.len() && end - start < BLOCK_VALUES && (parts < BLOCK_PARTS || end == start) {
                parts += end + 1;
                end += 1;
            }
            let block: Vec<usize> = (start..end).collect();
            let walked =
                crate::parallel::map_with(&block, threads, || self.em(), |em, &vi| em.value(vi, small[vi].0));
            for (&vi, (z, part)) in block.iter().zip(walked) {
                if z > 0.0 {
                    let scale = small[vi].1 as f64 / z;
                    for (j, a) in part {
                        next[j] += a * scale;
                    }
                }
            }
            start = end;
        }
    }

    /// One thread's walker.
    fn em(&self) -> Em<'_> {
        Em {
            support: self.support,
            dense: self.dense,
            w: self.w,
            acc: vec![0.0; self.support.len()],
            stack: Vec::new(),
            z: 0.0,
            plain: false,
        }
    }
}

/// The E step's partition walk over the support.
struct Em<'a> {
    support: &'a [u64],
    dense: &'a [u32],
    w: &'a [f64],
    /// Per support value: sum over partitions of weight x multiplicity.
    acc: Vec<f64>,
    stack: Vec<usize>,
    /// Sum of partition weights.
    z: f64,
    /// Walk the last two parts like the others, a call per pair (only the test that
    /// compares the two ways sets it).
    plain: bool,
}

impl Em<'_> {
    /// The partitions of `v = support[vi]`: their total weight `Z(v)` and each support
    /// value's weighted multiplicity (the nonzero ones, in support order; the walker is
    /// left cleared for the next value).
    fn value(&mut self, vi: usize, v: u64) -> (f64, Vec<(usize, f64)>) {
        self.z = 0.0;
        self.stack.clear();
        self.walk(v, vi, max_flows_in_counter(v), 1.0, u64::MAX, 0);
        // Parts are at most `v`: only the first `vi + 1` entries can be nonzero.
        let mut part = Vec::new();
        for (j, a) in self.acc[..=vi].iter_mut().enumerate() {
            if *a != 0.0 {
                part.push((j, *a));
                *a = 0.0;
            }
        }
        (self.z, part)
    }

    /// Partitions of `rem` into at most `left` parts from the support, non-increasing,
    /// each part at most `support[max_i]`; `prev` / `run` track the run of equal parts for
    /// the `1 / c_s!` factor.
    fn walk(&mut self, rem: u64, max_i: usize, left: usize, weight: f64, prev: u64, run: u32) {
        if left == 1 {
            if let Some(k) = self.last_part(rem, max_i) {
                self.leaf_part(k, weight, prev, run);
            }
            return;
        }
        // With two parts left the last step (the lookup of the last part, its leaf) is
        // taken here rather than by a call one level down: the same leaves in the same
        // order, without a call per pair.
        let inline_last = left == 2 && !self.plain;
        let mut k = self.support[..=max_i].partition_point(|&s| s <= rem);
        while k > 0 {
            k -= 1;
            let s = self.support[k];
            if s.saturating_mul(left as u64) < rem {
                break;
            }
            if s == rem {
                self.leaf_part(k, weight, prev, run);
                continue;
            }
            let w = self.w[k];
            if w == 0.0 {
                continue;
            }
            let (c, wt) = if s == prev { (run + 1, weight * w / (run + 1) as f64) } else { (1, weight * w) };
            if inline_last {
                if let Some(k2) = self.last_part(rem - s, k) {
                    self.close(k2, wt, s, c, Some(k));
                }
                continue;
            }
            self.stack.push(k);
            self.walk(rem - s, k, left - 1, wt, s, c);
            self.stack.pop();
        }
    }

    /// The support index of a last part `rem`, when `rem` is a support value at most
    /// `support[max_i]`: one lookup instead of a scan.
    #[inline(always)]
    fn last_part(&self, rem: u64, max_i: usize) -> Option<usize> {
        let k = self.dense.get(rem as usize).copied().unwrap_or(u32::MAX);
        (k != u32::MAX && k as usize <= max_i).then_some(k as usize)
    }

    /// Closes a partition with part `support[k]`.
    #[inline]
    fn leaf_part(&mut self, k: usize, weight: f64, prev: u64, run: u32) {
        self.close(k, weight, prev, run, None);
    }

    /// Closes a partition with last part `support[k]` above the stack and, when given,
    /// `above` (a part the caller holds instead of pushing it): its weight goes to `Z`,
    /// to the last part, to the stack's parts, then to `above`, the order of a leaf under
    /// a pushed `above`.
    #[inline(always)]
    fn close(&mut self, k: usize, weight: f64, prev: u64, run: u32, above: Option<usize>) {
        let w = self.w[k];
        if w == 0.0 {
            return;
        }
        let s = self.support[k];
        let wt = if s == prev { weight * w / (run + 1) as f64 } else { weight * w };
        self.z += wt;
        self.acc[k] += wt;
        for &j in &self.stack {
            self.acc[j] += wt;
        }
        if let Some(j) = above {
            self.acc[j] += wt;
        }
    }
}

/// Histogram of one Tower array, overflowed counters left out.
pub fn tower_array_histogram(t: &Tower, array: usize) -> CounterHistogram {
    let g = &t.geometry().arrays[array];
    let mut h = CounterHistogram::new();
    for i in 0..g.depth {
        let c = t.counter(array, i);
        if c != 0 && c != g.marker() {
            *h.entry(c as u64).or_insert(0) += 1;
        }
    }
    h
}

/// The size range `[lo, hi)` array `i` answers for: `[2^delta_(i-1) - 1, 2^delta_i - 1)`.
pub fn tower_array_range(t: &Tower, array: usize) -> (u64, u64) {
    let arrays = &t.geometry().arrays;
    let lo = if array == 0 { 0 } else { arrays[array - 1].marker() as u64 };
    // Arrays narrower than an earlier one answer nothing new.
    let hi = arrays[array].marker() as u64;
    (lo.max(1), hi.max(lo.max(1)))
}

/// SketchINT: MRAC per array, each array answering for its own size range.
pub fn tower(t: &Tower, iterations: usize) -> SizeDistribution {
    let mut out = SizeDistribution::default();
    for a in 0..t.geometry().arrays.len() {
        let (lo, hi) = tower_array_range(t, a);
        if lo >= hi {
            continue;
        }
        let d = mrac(&tower_array_histogram(t, a), t.geometry().arrays[a].depth as u64, iterations);
        out.add_range(&d, lo, hi);
    }
    out
}

/// LightGuardian: MRAC on the flow-size cells of the first array.
pub fn sumax(s: &SuMax, iterations: usize) -> SizeDistribution {
    let m = marker(s.geometry().size_width);
    let mut h = CounterHistogram::new();
    for i in 0..s.geometry().depth {
        let c = s.cell(0, i, sumax_cell::SIZE);
        if c != 0 && c != m {
            *h.entry(c as u64).or_insert(0) += 1;
        }
    }
    mrac(&h, s.geometry().depth as u64, iterations)
}

/// ElasticSketch: MRAC on the light part, plus the heavy part's flows.
pub fn elastic(e: &Elastic, iterations: usize) -> SizeDistribution {
    let mut h = CounterHistogram::new();
    for &c in e.light_counters() {
        if c != 0 && c != u8::MAX {
            *h.entry(c as u64).or_insert(0) += 1;
        }
    }
    let mut d = mrac(&h, e.light_counters().len() as u64, iterations);
    for (_, n) in e.heavy_flows() {
        if n > 0 {
            *d.0.entry(n).or_insert(0.0) += 1.0;
        }
    }
    d
}

pub fn estimate(sketch: &AnySketch, iterations: usize) -> SizeDistribution {
    match sketch {
        AnySketch::Tower(t) => tower(t, iterations),
        AnySketch::SuMax(s) => sumax(s, iterations),
        AnySketch::Elastic(e) => elastic(e, iterations),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(pairs: &[(u64, u64)]) -> CounterHistogram {
        pairs.iter().copied().collect()
    }

    /// Without collisions possible (values that cannot be sums of each other within the
    /// cap), MRAC returns the counter histogram.
    #[test]
    fn no_collision_is_identity() {
        let d = mrac(&hist(&[(1000, 3), (1501, 2)]), 1_000_000, 5);
        assert!((d.get(1000) - 3.0).abs() < 1e-9);
        assert!((d.get(1501) - 2.0).abs() < 1e-9);
    }

    /// One E step by hand: m = 10 counters, values {1: 4, 2: 2}.
    /// w1 = 0.4, w2 = 0.2. A counter of value 2 is {2} with weight 0.2 or {1,1} with
    /// weight 0.4^2 / 2 = 0.08: P({2}) = 0.2/0.28, E[c_1] = 2 * 0.08/0.28.
    /// n1 = 4 + 2 * 2 * 0.08 / 0.28, n2 = 2 * 0.2 / 0.28.
    #[test]
    fn one_step_by_hand() {
        let d = mrac(&hist(&[(1, 4), (2, 2)]), 10, 1);
        assert!((d.get(1) - (4.0 + 4.0 * 0.08 / 0.28)).abs() < 1e-12, "{d:?}");
        assert!((d.get(2) - 2.0 * 0.2 / 0.28).abs() < 1e-12, "{d:?}");
    }

    /// A reproducible histogram: `n` distinct values drawn from `lo..=hi` (with some small
    /// ones, so both parts of the E step run), counts 1..=5.
    fn random_hist(seed: u64, n: usize, lo: u64, hi: u64) -> CounterHistogram {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut h = CounterHistogram::new();
        while h.len() < n {
            let v =
                if rng.gen_bool(0.2) { rng.gen_range(1..=MULTI_PART_MAX) } else { rng.gen_range(lo..=hi) };
            h.insert(v, rng.gen_range(1..=5));
        }
        h
    }

    /// The FFT E step against the reference walk (the algorithm before the FFT existed, kept
    /// as `PairMethod::Walk`): every estimated size within 1e-9 relative (or 1e-12 flows
    /// absolute), the same support, over dense and sparse value sets and many iterations.
    #[test]
    fn fft_pairs_match_the_walk() {
        let cases =
            [(1, 300, 601, 2_000), (2, 500, 601, 1 << 14), (3, 200, 5_000, 300_000), (4, 1_500, 601, 4_000)];
        for (seed, n, lo, hi) in cases {
            let h = random_hist(seed, n, lo, hi);
            let m = 3 * n as u64;
            for iterations in [1, 4, 10] {
                let walk = mrac_with(&h, m, iterations, PairMethod::Walk);
                let fft = mrac_with(&h, m, iterations, PairMethod::Fft);
                assert_eq!(walk.0.len(), fft.0.len(), "seed {seed}: supports differ");
                for ((s, a), (t, b)) in walk.iter().zip(fft.iter()) {
                    assert_eq!(s, t);
                    assert!(
                        (a - b).abs() <= 1e-9 * a.abs().max(1e-3),
                        "seed {seed} it {iterations} size {s}: {a} vs {b}"
                    );
                }
                assert!((walk.flows() - fft.flows()).abs() < 1e-9 * walk.flows());
            }
        }
    }

    /// Small inputs stay on the walk, so their results are bit for bit the reference's;
    /// a dense set of many distinct values above the multi-part range goes to the FFT.
    #[test]
    fn auto_walks_small_inputs_and_ffts_dense_ones() {
        let h = random_hist(5, 300, 601, 2_000);
        assert_eq!(mrac(&h, 900, 5), mrac_with(&h, 900, 5, PairMethod::Walk));
        let dense: CounterHistogram = (601..=20_600).map(|v| (v, 1)).collect();
        let support: Vec<u64> = dense.keys().copied().collect();
        assert!(walk_pairs(&support, 0) > PairConv::cost(&support));
        let few: Vec<u64> = (0..50).map(|i| 601 + 97 * i).collect();
        assert!(walk_pairs(&few, 0) < PairConv::cost(&few));
    }

    /// The transforms' conventions as the E step uses them (zero padding, unscaled inverse,
    /// conjugate for the correlation) against the direct sums on a small signal.
    #[test]
    fn pair_conv_convolves_and_correlates() {
        let support = [1u64, 2, 3];
        let w = [1.0, 2.0, -0.5];
        let mut c = PairConv::with_len(8);
        c.set_weights(&support, &w);
        c.self_convolve_weights();
        let at = |v: usize| w.get(v.wrapping_sub(1)).copied().unwrap_or(0.0);
        for v in 0..8 {
            let want: f64 = (0..=v).map(|s| at(s) * at(v - s)).sum();
            let got = c.buf[v] * c.unscale();
            assert!((got.re - want).abs() < 1e-12 && got.im.abs() < 1e-12, "v {v}: {got} vs {want}");
        }
        let r = [(2usize, 3.0), (4, -1.0), (6, 0.25)];
        PairConv::load(&mut c.buf, r);
        c.correlate_with_weights();
        for s in 0..4 {
            let want: f64 = r.iter().map(|&(v, rv)| rv * v.checked_sub(s).map_or(0.0, at)).sum();
            let got = c.buf[s] * c.unscale();
            assert!((got.re - want).abs() < 1e-12 && got.im.abs() < 1e-12, "s {s}: {got} vs {want}");
        }
    }

    /// The written-out last step adds the same terms in the same order as the plain walk
    /// (every level alike, a call per pair):
    /// every value's `Z` and parts to the bit (many-part values, pairs, repeated parts, and
    /// zero weights that prune).
    #[test]
    fn the_written_out_last_step_is_the_plain_walk() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let h = random_hist(5, 700, 1, 3_000);
        let support: Vec<u64> = h.keys().copied().collect();
        let mut dense = vec![u32::MAX; *support.last().unwrap() as usize + 1];
        for (i, &v) in support.iter().enumerate() {
            dense[v as usize] = i as u32;
        }
        let w: Vec<f64> =
            (0..support.len()).map(|_| if rng.gen_bool(0.1) { 0.0 } else { rng.gen::<f64>() }).collect();
        let step = EStep { support: &support, dense: &dense, w: &w };
        let (mut a, mut b) = (step.em(), step.em());
        b.plain = true;
        let bits = |(z, p): (f64, Vec<(usize, f64)>)| {
            (z.to_bits(), p.into_iter().map(|(j, x)| (j, x.to_bits())).collect::<Vec<_>>())
        };
        let mut leaves = 0;
        for (vi, &v) in support.iter().enumerate() {
            let got = a.value(vi, v);
            leaves += got.1.len();
            assert_eq!(bits(got), bits(b.value(vi, v)), "value {v}");
        }
        assert!(leaves > 10_000, "{leaves} parts");
    }

    /// The walk spread over threads gives the single thread's distribution to the bit
    /// (values up to 600 of many parts, and larger ones walked in pairs).
    #[test]
    fn threads_change_nothing() {
        for (seed, n, hi) in [(3, 400, 600), (4, 900, 5_000)] {
            let h = random_hist(seed, n, 1, hi);
            let one = mrac_on(&h, 6_000, 4, PairMethod::Walk, 1);
            for threads in [2, 3, 7] {
                let many = mrac_on(&h, 6_000, 4, PairMethod::Walk, threads);
                let bits = |d: &SizeDistribution| d.iter().map(|(s, n)| (s, n.to_bits())).collect::<Vec<_>>();
                assert_eq!(bits(&many), bits(&one), "seed {seed}, {threads} threads");
            }
        }
    }

    #[test]
    fn partition_cap() {
        assert_eq!(max_flows_in_counter(1), 6);
        assert_eq!(max_flows_in_counter(601), 2);
        assert_eq!(max_flows_in_counter(SINGLE_FLOW_ABOVE + 1), 1);
        // Values above the cap are taken as single flows.
        let d = mrac(&hist(&[(SINGLE_FLOW_ABOVE + 5, 2)]), 100, 3);
        assert_eq!(d.get(SINGLE_FLOW_ABOVE + 5), 2.0);
    }

    #[test]
    fn wmre_and_histogram() {
        let t = SizeDistribution::from_sizes([1, 1, 2, 3, 5]);
        assert_eq!(t.wmre(&t), 0.0);
        let e = SizeDistribution::from_sizes([1, 2, 2, 3, 5]);
        // |2-1| + |1-2| = 2 over (3 + 3 + 2 + 2) / 2 = 5.
        assert!((e.wmre(&t) - 0.4).abs() < 1e-12);
        assert_eq!(t.log2_histogram(), vec![(1, 2.0), (2, 2.0), (4, 1.0)]);
        assert_eq!(t.packets(), 12.0);
    }
}
