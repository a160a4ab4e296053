//! SuMax's log-spaced delay bins, per packet: [`smartnic_contract::lut::delay_bin`] with a
//! cached log2 table.

use smartnic_contract::geometry::DelayBinRule;
use smartnic_contract::lut::{self, Log2Params};

use super::Log2Unit;

/// The delay bin of `delay_ns` under `rule` with `cells` delay cells, using `log2`'s table.
#[inline]
pub fn delay_bin(rule: &DelayBinRule, delay_ns: u64, cells: u8, log2: &Log2Unit) -> u8 {
    lut::delay_bin(rule, delay_ns, cells, log2.params(), log2.table())
}

/// A SuMax delay binner: the rule, the number of delay cells and the log2 table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DelayBins {
    rule: DelayBinRule,
    cells: u8,
    log2: Log2Unit,
}

impl DelayBins {
    /// Binner with the contract's default log2 parameters (what the NIC builds).
    pub fn new(rule: DelayBinRule, cells: u8) -> Self {
        DelayBins { rule, cells, log2: Log2Unit::default() }
    }
    /// Binner with explicit log2 parameters.
    pub fn with_log2(rule: DelayBinRule, cells: u8, log2: Log2Params) -> Result<Self, lut::LutError> {
        Ok(DelayBins { rule, cells, log2: Log2Unit::new(log2)? })
    }
    /// The bin of one packet's delay: `0..cells`.
    #[inline]
    pub fn bin(&self, delay_ns: u64) -> u8 {
        delay_bin(&self.rule, delay_ns, self.cells, &self.log2)
    }
    pub fn rule(&self) -> DelayBinRule {
        self.rule
    }
    pub fn cells(&self) -> u8 {
        self.cells
    }
    /// Smallest delay (ns) that lands in bin `b` (`b < cells`), by binary search over the
    /// monotone bin function; used to label histograms.
    pub fn lower_edge(&self, b: u8) -> u64 {
        if b == 0 {
            return 0;
        }
        let (mut lo, mut hi) = (0u64, u64::MAX);
        if self.bin(hi) < b {
            return u64::MAX;
        }
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.bin(mid) >= b {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        lo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nic_default_octaves() {
        // SuMaxGeometry::nic_default: base 1 us, one bin per octave, 4 cells.
        let b = DelayBins::new(DelayBinRule { base_ns: 1000, bins_per_octave: 1 }, 4);
        assert_eq!(b.bin(0), 0);
        assert_eq!(b.bin(999), 0);
        assert_eq!(b.bin(1000), 1);
        assert_eq!(b.bin(1999), 1);
        assert_eq!(b.bin(2000), 2);
        assert_eq!(b.bin(3999), 2);
        assert_eq!(b.bin(4000), 3);
        assert_eq!(b.bin(u64::MAX), 3);
        assert_eq!(b.lower_edge(1), 1000);
        assert_eq!(b.lower_edge(2), 2000);
        assert_eq!(b.lower_edge(3), 4000);
    }

    #[test]
    fn exact_octave_edges_with_finer_bins() {
        let b = DelayBins::new(DelayBinRule { base_ns: 1500, bins_per_octave: 3 }, 32);
        for k in 0..9u64 {
            assert_eq!(b.bin(1500 << k), (1 + 3 * k) as u8);
        }
        for w in (0..31u8).collect::<Vec<_>>().windows(2) {
            assert!(b.lower_edge(w[0]) < b.lower_edge(w[1]));
        }
    }
}
