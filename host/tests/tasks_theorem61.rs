//! LightGuardian Theorem 6.1, empirically: with a fraction theta of SuMax's columns
//! (sketchlets) received, the fraction of valid query results is 1 - (1 - theta)^d.
//! Which columns arrive is chosen by a seeded RNG; >= 100k flows per theta.

use smartnic::contract::geometry::SuMaxGeometry;
use smartnic::contract::vectors::KeyStream;
use smartnic::sketch::SuMax;
use smartnic::tasks::sumax::{partial_accuracy, received_columns, theorem_6_1_valid_rate};

#[test]
fn theorem_6_1_valid_rate_within_one_point() {
    let depth = 1 << 16;
    let mut s = SuMax::new(SuMaxGeometry::with_depth(3, depth)).unwrap();
    let mut keys = KeyStream::new(61);
    let flows: Vec<_> = (0..120_000).map(|i| (keys.next_key(), 1 + (i % 7) as u64)).collect();
    for (k, n) in &flows {
        for _ in 0..*n {
            s.insert(k, 1 << 30, 0);
        }
    }
    let mut prev_are = f64::INFINITY;
    for (theta, seed) in [(0.3, 1), (0.55, 2), (0.8, 3)] {
        let mask = received_columns(depth, theta, seed);
        let p = partial_accuracy(&s, flows.iter().map(|(k, n)| (k, *n)), &mask);
        let want = theorem_6_1_valid_rate(theta, 3);
        assert_eq!(p.flows, 120_000);
        assert!((p.theta - theta).abs() < 1e-4);
        assert!(
            (p.valid_rate - want).abs() < 0.01,
            "theta {theta}: valid {} vs 1-(1-theta)^3 = {want}",
            p.valid_rate
        );
        // More buckets per query can only lower the (over)estimate on average.
        assert!(p.are_valid <= prev_are, "theta {theta}: ARE {} after {prev_are}", p.are_valid);
        prev_are = p.are_valid;
    }
}
