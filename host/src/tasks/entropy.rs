//! Entropy of the flow sizes from a flow-size distribution (SketchINT V-A):
//! `H = -sum_i m_i (i / M) log2(i / M)` where `m_i` flows have size `i` and
//! `M = sum_i i m_i`. The base of the logarithm cancels out of every relative error.

use super::SizeDistribution;

/// Entropy (bits) of a distribution given as `(size, number of flows)` pairs.
pub fn from_pairs<I: IntoIterator<Item = (u64, f64)>>(pairs: I) -> f64 {
    let pairs: Vec<(u64, f64)> = pairs.into_iter().filter(|&(i, m)| i > 0 && m > 0.0).collect();
    let total: f64 = pairs.iter().map(|&(i, m)| i as f64 * m).sum();
    if total <= 0.0 {
        return 0.0;
    }
    -pairs
        .iter()
        .map(|&(i, m)| {
            let p = i as f64 / total;
            m * p * p.log2()
        })
        .sum::<f64>()
}

/// Entropy of an estimated (or exact) distribution.
pub fn of_distribution(d: &SizeDistribution) -> f64 {
    from_pairs(d.iter())
}

/// Exact entropy of a list of flow sizes.
pub fn of_sizes<I: IntoIterator<Item = u64>>(sizes: I) -> f64 {
    of_distribution(&SizeDistribution::from_sizes(sizes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_hand() {
        // Four flows of one packet: each p = 1/4, H = 2 bits.
        assert!((of_sizes([1, 1, 1, 1]) - 2.0).abs() < 1e-12);
        // Sizes 2 and 6: p = 1/4, 3/4: H = 0.811278...
        assert!((of_sizes([2, 6]) - 0.8112781244591328).abs() < 1e-12);
        assert_eq!(of_sizes([5]), 0.0);
        assert_eq!(of_sizes([]), 0.0);
    }
}
