//! Accuracy metrics exactly as SketchINT (section VI) and LightGuardian (Appendix C) define
//! them.
//!
//! | metric | definition |
//! |---|---|
//! | ARE | `1/|Psi| * sum |n_i - n^_i| / n_i` over the flow set `Psi` |
//! | AAE | `1/|Psi| * sum |n_i - n^_i|` |
//! | PR / RR / F1 | correct reported / reported; correct reported / correct; `2 PR RR / (PR + RR)` |
//! | RE | `|True - Est| / True` |
//! | WMRE | `sum_i |m_i - m^_i| / sum_i (m_i + m^_i) / 2` over `i = 1..z` |
//!
//! Conventions for the empty cases (which the papers leave open): an empty flow set has
//! ARE = AAE = 0; when nothing is reported precision is 1 (no false report), when nothing
//! is true recall is 1 (nothing missed); F1 is 0 when PR + RR = 0; RE with True = 0 is 0
//! if Est = 0 and infinite otherwise; WMRE of two all-zero distributions is 0.

use std::collections::HashSet;
use std::hash::Hash;

/// Average relative error over `(true, estimate)` pairs; pairs with `true == 0` are
/// skipped (relative error is undefined there; flows in a flow set have size >= 1).
pub fn are<I: IntoIterator<Item = (f64, f64)>>(pairs: I) -> f64 {
    let (mut sum, mut n) = (0.0, 0usize);
    for (t, e) in pairs {
        if t != 0.0 {
            sum += (t - e).abs() / t.abs();
            n += 1;
        }
    }
    if n == 0 {
        0.0
    } else {
        sum / n as f64
    }
}

/// Average absolute error over `(true, estimate)` pairs.
pub fn aae<I: IntoIterator<Item = (f64, f64)>>(pairs: I) -> f64 {
    let (mut sum, mut n) = (0.0, 0usize);
    for (t, e) in pairs {
        sum += (t - e).abs();
        n += 1;
    }
    if n == 0 {
        0.0
    } else {
        sum / n as f64
    }
}

/// Relative error `|True - Est| / True`.
pub fn re(truth: f64, est: f64) -> f64 {
    if truth == 0.0 {
        if est == 0.0 {
            0.0
        } else {
            f64::INFINITY
        }
    } else {
        (truth - est).abs() / truth.abs()
    }
}

/// Weighted mean relative error of two distributions indexed alike (`truth[i]`, `est[i]`);
/// the shorter one is padded with zeros.
pub fn wmre(truth: &[f64], est: &[f64]) -> f64 {
    let z = truth.len().max(est.len());
    wmre_pairs((0..z).map(|i| (truth.get(i).copied().unwrap_or(0.0), est.get(i).copied().unwrap_or(0.0))))
}

/// WMRE over `(truth, estimate)` pairs, one per flow size: sum |t - e| / sum (t + e) / 2
/// (0 when both distributions are empty). Sizes absent from both sides add nothing, so
/// sparse callers pass only the sizes either side has.
pub fn wmre_pairs(pairs: impl IntoIterator<Item = (f64, f64)>) -> f64 {
    let (mut num, mut den) = (0.0, 0.0);
    for (t, e) in pairs {
        num += (t - e).abs();
        den += (t + e) / 2.0;
    }
    if den == 0.0 {
        0.0
    } else {
        num / den
    }
}

/// Precision, recall and F1 of a reported set against the true set.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Detection {
    pub reported: usize,
    pub truth: usize,
    pub correct: usize,
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
}

impl Detection {
    /// Compares `reported` with `truth` (duplicates count once).
    pub fn of<T: Eq + Hash>(reported: &HashSet<T>, truth: &HashSet<T>) -> Self {
        let correct = reported.intersection(truth).count();
        Self::from_counts(reported.len(), truth.len(), correct)
    }

    pub fn from_counts(reported: usize, truth: usize, correct: usize) -> Self {
        let precision = if reported == 0 { 1.0 } else { correct as f64 / reported as f64 };
        let recall = if truth == 0 { 1.0 } else { correct as f64 / truth as f64 };
        let f1 =
            if precision + recall == 0.0 { 0.0 } else { 2.0 * precision * recall / (precision + recall) };
        Detection { reported, truth, correct, precision, recall, f1 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_checked() {
        // |10-12|/10 = 0.2, |4-4|/4 = 0, |2-5|/2 = 1.5 -> ARE 1.7/3; AAE (2+0+3)/3.
        let p = [(10.0, 12.0), (4.0, 4.0), (2.0, 5.0)];
        assert!((are(p) - 1.7 / 3.0).abs() < 1e-12);
        assert!((aae(p) - 5.0 / 3.0).abs() < 1e-12);
        assert_eq!(re(200.0, 150.0), 0.25);
        assert_eq!(re(0.0, 0.0), 0.0);
        // |1-2| + |3-1| + |0-1| = 4 over ((1+2) + (3+1) + (0+1)) / 2 = 4 -> 1.
        assert_eq!(wmre(&[1.0, 3.0], &[2.0, 1.0, 1.0]), 1.0);
        assert_eq!(wmre(&[], &[]), 0.0);
        let r: HashSet<u32> = [1, 2, 3, 4].into();
        let t: HashSet<u32> = [2, 3, 4, 5, 6, 7].into();
        let d = Detection::of(&r, &t);
        assert_eq!((d.correct, d.precision, d.recall), (3, 0.75, 0.5));
        assert!((d.f1 - 0.6).abs() < 1e-12);
        assert_eq!(Detection::from_counts(0, 0, 0).f1, 1.0);
        assert_eq!(Detection::from_counts(3, 2, 0).f1, 0.0);
    }
}
