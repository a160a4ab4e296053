//! `smartnic snapshot report`'s expensive step, MRAC's EM for the flow-size distribution, on its
//! worst case (criterion).
//!
//! Worst case: one 32-bit TowerSketch array of 2^16 counters holding 2^16 distinct values
//! (a 262 KB snapshot), values `1..=65536`, 10 EM iterations (the report's default). Every
//! value above `MULTI_PART_MAX` may split into two flows, and with a dense support each one
//! has up to `v / 2` candidate pairs: the reference walk visits ~10^9 pairs per iteration.
//! `mrac` (the product path) sums those pairs by FFT. The reference walk is timed on
//! smaller sets to show its quadratic growth (at 2^16 values one run takes minutes).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use smartnic::tasks::distribution::{mrac, mrac_with, CounterHistogram, PairMethod, DEFAULT_ITERATIONS};

/// `n` counters holding the distinct values `1..=n`.
fn distinct(n: u64) -> CounterHistogram {
    (1..=n).map(|v| (v, 1)).collect()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("mrac_distinct_values");
    g.sample_size(10);
    let worst = distinct(1 << 16);
    g.bench_function("auto/65536", |b| b.iter(|| mrac(&worst, 1 << 16, DEFAULT_ITERATIONS)));
    for n in [2048u64, 4096, 8192] {
        let h = distinct(n);
        g.bench_with_input(BenchmarkId::new("walk", n), &h, |b, h| {
            b.iter(|| mrac_with(h, n, DEFAULT_ITERATIONS, PairMethod::Walk))
        });
        g.bench_with_input(BenchmarkId::new("fft", n), &h, |b, h| {
            b.iter(|| mrac_with(h, n, DEFAULT_ITERATIONS, PairMethod::Fft))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
