//! Cardinality (number of flows) by linear counting (Whang et al. 1990) on the array with
//! the most counters (SketchINT V-A): `n^ = -m ln(V / m)` with `m` counters of which `V`
//! are zero. ElasticSketch adds the flows held in its heavy part to linear counting on its
//! light part; SuMax counts on the flow-size cells of its first array (LightGuardian 6.1).

use crate::sketch::{AnySketch, Elastic, SuMax, Tower};
use smartnic_contract::geometry::sumax_cell;

/// Linear counting over `m` counters with `zeros` empty ones. With no empty counter the
/// estimator is unbounded; it then returns `m ln m` (as if one counter were empty), the
/// largest value the array can vouch for, and [`Cardinality::saturated`] says so.
pub fn linear_counting(m: u64, zeros: u64) -> f64 {
    if m == 0 {
        return 0.0;
    }
    let m = m as f64;
    let v = (zeros as f64).max(1.0);
    -m * (v / m).ln()
}

/// A cardinality estimate and what it came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Cardinality {
    pub estimate: f64,
    /// Counters used by linear counting and how many were zero.
    pub counters: u64,
    pub zeros: u64,
    /// Flows counted exactly (ElasticSketch's heavy part), included in `estimate`.
    pub exact_flows: u64,
    /// No zero counter: the estimate is a lower bound.
    pub saturated: bool,
}

fn lc(counters: u64, zeros: u64, exact_flows: u64) -> Cardinality {
    Cardinality {
        estimate: exact_flows as f64 + linear_counting(counters, zeros),
        counters,
        zeros,
        exact_flows,
        saturated: zeros == 0 && counters > 0,
    }
}

/// The array with the most counters (the first of equals).
pub fn tower(t: &Tower) -> Cardinality {
    let arrays = &t.geometry().arrays;
    let (a, depth) = arrays.iter().enumerate().map(|(i, g)| (i, g.depth)).fold((0, 0), |best, x| {
        if x.1 > best.1 {
            x
        } else {
            best
        }
    });
    let zeros = (0..depth).filter(|&i| t.counter(a, i) == 0).count() as u64;
    lc(depth as u64, zeros, 0)
}

/// SuMax: the flow-size cells of the first array.
pub fn sumax(s: &SuMax) -> Cardinality {
    let depth = s.geometry().depth;
    let zeros = (0..depth).filter(|&i| s.cell(0, i, sumax_cell::SIZE) == 0).count() as u64;
    lc(depth as u64, zeros, 0)
}

/// ElasticSketch: linear counting on the light part plus the heavy-part flows that have no
/// packets in the light part (unflagged). A flagged flow already left its mark in the light
/// part, so counting it again would count it twice.
pub fn elastic(e: &Elastic) -> Cardinality {
    let light = e.light_counters();
    let zeros = light.iter().filter(|&&c| c == 0).count() as u64;
    lc(light.len() as u64, zeros, e.heavy_only_flows())
}

pub fn estimate(sketch: &AnySketch) -> Cardinality {
    match sketch {
        AnySketch::Tower(t) => tower(t),
        AnySketch::SuMax(s) => sumax(s),
        AnySketch::Elastic(e) => elastic(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_counting_by_hand() {
        // 100 counters, 50 zero: -100 ln 0.5 = 69.31...
        assert!((linear_counting(100, 50) - 69.314718).abs() < 1e-5);
        assert_eq!(linear_counting(100, 100), 0.0);
        assert!((linear_counting(100, 0) - 100.0 * 100f64.ln()).abs() < 1e-9);
        assert_eq!(linear_counting(0, 0), 0.0);
    }
}
