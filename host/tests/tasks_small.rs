//! Measurement tasks on small hand-checked cases: every number here is worked out by hand
//! in the comments.

use smartnic::contract::geometry::{InsertMode, SuMaxGeometry, TowerGeometry};
use smartnic::contract::FlowKey;
use smartnic::sketch::{AnySketch, SketchKind, SuMax, Tower};
use smartnic::tasks::distribution::{self, tower_array_range, CounterHistogram};
use smartnic::tasks::heavy::{self, CandidateTable};
use smartnic::tasks::{cardinality, entropy, flow_size, sumax, SizeDistribution};

fn key(n: u32) -> FlowKey {
    let b = n.to_be_bytes();
    FlowKey::from_v4([10, b[1], b[2], b[3]], [192, 168, 0, 1], 1000, 80, 6)
}

/// SketchINT's CPU TowerSketch answers for [1,3), [3,15), [15,255), [255,65535) and
/// [65535, 2^32 - 1) with its 2/4/8/16/32-bit arrays.
#[test]
fn tower_array_ranges_follow_sketchint() {
    let t = Tower::new(TowerGeometry::sketchint_cpu(100_000), InsertMode::Cu).unwrap();
    let r: Vec<_> = (0..5).map(|a| tower_array_range(&t, a)).collect();
    assert_eq!(r, vec![(1, 3), (3, 15), (15, 255), (255, 65535), (65535, u32::MAX as u64)]);
    // CM/CU baselines: three 32-bit arrays, the first answers for everything.
    let cm = Tower::new(TowerGeometry::equal_memory(&[32, 32, 32], 100_000), InsertMode::Cm).unwrap();
    assert_eq!(tower_array_range(&cm, 0), (1, u32::MAX as u64));
    assert!(tower_array_range(&cm, 1).0 >= tower_array_range(&cm, 1).1, "empty range");
}

/// A Tower whose counters we set by hand: flow size is the minimum over non-overflowed
/// counters, cardinality is linear counting on the deepest array, and the distribution is
/// assembled from each array's range.
#[test]
fn tower_tasks_on_hand_set_counters() {
    // 2-bit x 8, 4-bit x 4, 8-bit x 2 (SketchINT Figure 3's shape).
    let mut t =
        Tower::new(TowerGeometry::from_widths_depths(&[(2, 8), (4, 4), (8, 2)]), InsertMode::Cm).unwrap();
    let k = key(1);
    let idx = t.indices(&k);
    t.set_counter(0, idx[0], 3); // overflowed 2-bit counter: skipped
    t.set_counter(1, idx[1], 9);
    t.set_counter(2, idx[2], 12);
    assert_eq!(t.query(&k), 9);
    let any = AnySketch::Tower(t.clone());
    assert_eq!(flow_size::estimate(&any, &k), 9);

    // Array 0 has 8 counters, one nonzero (the marker): 7 zero -> -8 ln(7/8) = 1.0683.
    let c = cardinality::tower(&t);
    assert_eq!((c.counters, c.zeros), (8, 7));
    assert!((c.estimate - 8.0 * (8.0f64 / 7.0).ln()).abs() < 1e-12);

    // Distribution: array 0 has nothing in [1,3) (its only counter overflowed); array 1
    // holds one counter of 9 in [3,15) and 8 ones... here only the one counter: value 9.
    // Array 2 ([15,255)) has one counter of 12, outside its range. So: one flow of size 9.
    let d = distribution::tower(&t, 5);
    assert_eq!(d.0.len(), 1, "{d:?}");
    assert!((d.get(9) - 1.0).abs() < 1e-12, "{d:?}");
}

/// MRAC on a histogram where a split is possible: two E steps by hand.
/// m = 4, values {1: 2, 2: 1}. Step 1: w1 = 0.5, w2 = 0.25; value 2 is {2} (0.25) or {1,1}
/// (0.5^2/2 = 0.125): P({2}) = 2/3, E[c1] = 2 * 1/3. n1 = 2 + 2/3 = 8/3, n2 = 2/3.
/// Step 2: w1 = 2/3, w2 = 1/6; {2}: 1/6, {1,1}: (2/3)^2/2 = 2/9; Z = 7/18;
/// P({2}) = 3/7, E[c1] = 2 * 4/7 = 8/7. n1 = 2 + 8/7, n2 = 3/7.
#[test]
fn mrac_two_steps_by_hand() {
    let h: CounterHistogram = [(1, 2), (2, 1)].into_iter().collect();
    let d1 = distribution::mrac(&h, 4, 1);
    assert!((d1.get(1) - 8.0 / 3.0).abs() < 1e-12 && (d1.get(2) - 2.0 / 3.0).abs() < 1e-12, "{d1:?}");
    let d2 = distribution::mrac(&h, 4, 2);
    assert!((d2.get(1) - (2.0 + 8.0 / 7.0)).abs() < 1e-12, "{d2:?}");
    assert!((d2.get(2) - 3.0 / 7.0).abs() < 1e-12, "{d2:?}");
    // Packets are conserved by every E step: 2*1 + 1*2 = 4.
    assert!((d2.packets() - 4.0).abs() < 1e-12);
}

#[test]
fn entropy_and_distribution_by_hand() {
    // Sizes 1, 1, 2: M = 4, H = -(2 * 1/4 log2 1/4 + 1/2 log2 1/2) = 1 + 0.5 = 1.5 bits.
    let d = SizeDistribution::from_sizes([1, 1, 2]);
    assert!((entropy::of_distribution(&d) - 1.5).abs() < 1e-12);
    assert_eq!(d.flows(), 3.0);
}

/// Heavy hitters with the table kept while inserting, and from candidate keys only.
#[test]
fn heavy_hitters_small_stream() {
    let mut s = SketchKind::TowerCu.build(200_000);
    let mut table = CandidateTable::new(10, 1024);
    // key(1): 30 packets, key(2): 11, key(3): 10 (not > 10), keys 100..200: 1 each.
    let mut stream = Vec::new();
    stream.extend(std::iter::repeat_n(key(1), 30));
    stream.extend(std::iter::repeat_n(key(2), 11));
    stream.extend(std::iter::repeat_n(key(3), 10));
    stream.extend((100..200).map(key));
    for k in &stream {
        heavy::insert_tracked(&mut s, &mut table, k, 0, 0);
    }
    let hh = heavy::from_table(&s, &table);
    assert_eq!(hh, vec![(key(1), 30), (key(2), 11)]);
    // Readout only: the same answer from candidate keys (duplicates and light keys allowed).
    let cands = [key(3), key(2), key(1), key(2), key(150)];
    assert_eq!(heavy::from_candidates(&s, &cands, 10), hh);
}

/// Heavy change between two hand-made epochs.
#[test]
fn heavy_change_small() {
    let (mut a, mut b) = (SketchKind::TowerCu.build(200_000), SketchKind::TowerCu.build(200_000));
    let (mut ta, mut tb) = (CandidateTable::new(5, 1024), CandidateTable::new(5, 1024));
    // key(1): 20 -> 2 (change 18); key(2): 8 -> 10 (change 2); key(3): 0 -> 9 (change 9).
    for (k, n, m) in [(key(1), 20, 2), (key(2), 8, 10), (key(3), 0, 9)] {
        for _ in 0..n {
            heavy::insert_tracked(&mut a, &mut ta, &k, 0, 0);
        }
        for _ in 0..m {
            heavy::insert_tracked(&mut b, &mut tb, &k, 0, 0);
        }
    }
    let cands: Vec<FlowKey> = ta.keys().iter().chain(tb.keys()).copied().collect();
    let ch = heavy::changes(&a, &b, &cands, 5);
    let got: Vec<(FlowKey, u64)> = ch.iter().map(|c| (c.key, c.delta())).collect();
    assert_eq!(got, vec![(key(1), 18), (key(3), 9)]);
}

/// SuMax: the epoch delay histogram is exact (first-array sums), per-flow delays and the
/// max inter-arrival time come back from the cells.
#[test]
fn sumax_delay_and_times_by_hand() {
    let mut s = SuMax::new(SuMaxGeometry::with_depth(3, 1 << 12)).unwrap();
    let bins = sumax::bins(&s);
    // Octave bins from 1 us: 500 ns -> bin 0, 1500 -> 1, 3000 -> 2, 5000 -> 3.
    assert_eq!([500, 1500, 3000, 5000].map(|d| bins.bin(d)), [0, 1, 2, 3]);
    let k = key(7);
    let unit = sumax::time_unit_ns(&s);
    let t0 = 1_000_000 * unit;
    // Gaps of 3, 10 and 2 time units: the maximum is 10 units.
    for (dt, delay) in [(0, 500), (3, 1500), (13, 1500), (15, 5000)] {
        s.insert(&k, t0 + dt * unit, delay);
    }
    s.insert(&key(8), t0, 3000);
    let e = s.query(&k);
    assert_eq!(e.size, 4);
    assert_eq!(&e.delay_hist[..4], &[1, 2, 0, 1]);
    assert_eq!(sumax::max_interarrival_ns(&s, &k), 10 * unit);
    assert_eq!(e.last_arrival, sumax::time_cell_of(&s, t0 + 15 * unit));
    let sum = sumax::delay_summary(&s);
    assert_eq!(&sum.packets[..4], &[1, 2, 1, 1]);
    assert_eq!(sum.total(), 5);
    assert_eq!(sum.edges_ns[..4], [0, 1000, 2000, 4000]);
    assert_eq!(sum.quantile_bin_edge(0.5), Some(1000));
    // Per-flow delay WMRE of the exact histogram is 0.
    assert_eq!(sumax::delay_wmre(&[1, 2, 0, 1], &e.delay_hist[..4]), 0.0);
}

/// Partial reconstruction: all columns = the full query; none = invalid; exactly the
/// flow's columns present = valid with the same answer.
#[test]
fn sumax_partial_valid_invalid() {
    let mut s = SuMax::new(SuMaxGeometry::with_depth(3, 256)).unwrap();
    for i in 0..50 {
        for _ in 0..=i % 5 {
            s.insert(&key(i), 1 << 20, 0);
        }
    }
    let all = vec![true; 256];
    let none = vec![false; 256];
    for i in 0..50 {
        let k = key(i);
        assert_eq!(sumax::query_received(&s, &k, &all), Some(s.query(&k)));
        assert_eq!(sumax::query_received(&s, &k, &none), None);
        assert_eq!(sumax::size_received(&s, &k, &none), None);
        // Only the flow's first-array column: valid, answer is that bucket's size cell.
        let idx = s.indices(&k);
        let mut one = none.clone();
        one[idx[0] as usize] = true;
        let got = sumax::size_received(&s, &k, &one).unwrap();
        assert!(got >= s.query(&k).size, "fewer buckets can only overestimate");
    }
}
