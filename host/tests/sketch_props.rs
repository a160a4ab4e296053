//! Property tests of the software sketches: the guarantees the papers prove, checked on
//! random streams and random (small, collision-heavy) geometries.

use proptest::prelude::*;
use smartnic::sketch::cell::{value, INF};
use smartnic::sketch::{SuMax, Tower};
use smartnic_contract::geometry::{marker, InsertMode, SuMaxGeometry, TowerGeometry};
use smartnic_contract::FlowKey;
use std::collections::HashMap;

fn key(n: u16) -> FlowKey {
    FlowKey::from_v4([10, 1, (n >> 8) as u8, n as u8], [192, 168, 0, 1], n, 443, 6)
}

/// Narrow-to-wide arrays, the last one 16 bits wide so no flow of the (< 2^15 packet)
/// streams can overflow every array.
fn geometry() -> impl Strategy<Value = TowerGeometry> {
    proptest::collection::vec((1u8..=12, 1u32..40), 1..5).prop_map(|mut v| {
        v.sort_by_key(|&(w, _)| w);
        v.push((16, 7));
        TowerGeometry::from_widths_depths(&v)
    })
}

fn stream() -> impl Strategy<Value = Vec<u16>> {
    proptest::collection::vec(0u16..60, 1..3000)
}

fn run(g: &TowerGeometry, mode: InsertMode, s: &[u16]) -> Tower {
    let mut t = Tower::new(g.clone(), mode).unwrap();
    for &f in s {
        t.insert(&key(f));
    }
    t
}

fn truth(s: &[u16]) -> HashMap<u16, u64> {
    let mut m = HashMap::new();
    for &f in s {
        *m.entry(f).or_insert(0) += 1;
    }
    m
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn no_mode_underestimates(g in geometry(), s in stream()) {
        for mode in [InsertMode::Cm, InsertMode::Cu, InsertMode::Acu] {
            let t = run(&g, mode, &s);
            for (f, n) in truth(&s) {
                prop_assert!(t.query(&key(f)) >= n, "{mode:?}: flow {f} has {n}, estimate {}", t.query(&key(f)));
            }
        }
    }

    #[test]
    fn cu_and_acu_counters_never_exceed_cm(g in geometry(), s in stream()) {
        let cm = run(&g, InsertMode::Cm, &s);
        for mode in [InsertMode::Cu, InsertMode::Acu] {
            let t = run(&g, mode, &s);
            for (a, arr) in g.arrays.iter().enumerate() {
                let m = marker(arr.width);
                for i in 0..arr.depth {
                    let (x, y) = (value(t.counter(a, i), m), value(cm.counter(a, i), m));
                    prop_assert!(x <= y || y == INF, "{mode:?} array {a}[{i}]: {x} > CM {y}");
                }
            }
            for f in truth(&s).keys() {
                prop_assert!(t.query(&key(*f)) <= cm.query(&key(*f)));
            }
        }
    }

    #[test]
    fn sumax_never_underestimates_size_or_delay_bins(depth in 1u32..30, d in 1usize..4, s in stream()) {
        let mut sm = SuMax::new(SuMaxGeometry::with_depth(d, depth)).unwrap();
        let mut bins: HashMap<(u16, u8), u64> = HashMap::new();
        for (t, &f) in s.iter().enumerate() {
            let delay = (f as u64 * 977 + t as u64 * 13) % 20_000;
            *bins.entry((f, sm.delay_bin(delay))).or_insert(0) += 1;
            sm.insert(&key(f), 1_000_000 + t as u64 * 5_000, delay);
        }
        for (f, n) in truth(&s) {
            let e = sm.query(&key(f));
            prop_assert!(e.size >= n);
            for b in 0..sm.geometry().delay_cells {
                let want = bins.get(&(f, b)).copied().unwrap_or(0);
                prop_assert!(e.delay_hist[b as usize] >= want, "flow {f} bin {b}");
            }
        }
    }
}
