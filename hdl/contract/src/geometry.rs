//! Sketch geometries: build-time parameters of the hardware and run-time parameters of the
//! software models. One type per sketch; the paper defaults are constructors.

use crate::hash::{member, CrcParams};

/// How a TowerSketch spreads an increment over its arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum InsertMode {
    /// Count-Min: every hashed, non-overflowed counter is incremented (SketchINT's FPGA).
    Cm = 0,
    /// Conservative update: only the smallest non-overflowed counter(s) (software only:
    /// it needs all d reads before any write).
    Cu = 1,
    /// Approximate CU with a running minimum carried from the narrowest array to the widest
    /// (LightGuardian's omega rule, Algorithm 1, applied to TowerSketch): pipeline friendly.
    Acu = 2,
}

impl InsertMode {
    pub fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(Self::Cm),
            1 => Some(Self::Cu),
            2 => Some(Self::Acu),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::Cm => "cm",
            Self::Cu => "cu",
            Self::Acu => "acu",
        }
    }
}

/// One counter array: `depth` counters of `width` bits, indexed by `hash`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ArrayGeometry {
    /// Counter width in bits, 1..=32.
    pub width: u8,
    /// Number of counters (any value >= 1; powers of two map to a bit slice in hardware).
    pub depth: u32,
    pub hash: CrcParams,
}

impl ArrayGeometry {
    /// The overflow marker `2^width - 1`: never changes once reached, skipped by queries.
    pub fn marker(&self) -> u32 {
        marker(self.width)
    }
    pub fn memory_bits(&self) -> u64 {
        self.width as u64 * self.depth as u64
    }
}

/// The overflow marker of a `width`-bit counter (SketchINT IV-B): `2^width - 1`.
pub const fn marker(width: u8) -> u32 {
    if width >= 32 {
        u32::MAX
    } else {
        (1u32 << width) - 1
    }
}

/// Largest supported counter width.
pub const MAX_WIDTH: u8 = 32;

/// Why a geometry is unusable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GeometryError {
    NoArrays,
    TooManyArrays { arrays: usize, max: usize },
    Width { array: usize, width: u8 },
    Depth { array: usize },
}

impl core::fmt::Display for GeometryError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::NoArrays => write!(f, "a sketch needs at least one array"),
            Self::TooManyArrays { arrays, max } => {
                write!(f, "{arrays} arrays requested, at most {max} are supported")
            }
            Self::Width { array, width } => {
                write!(f, "array {array}: counter width {width} is outside 1..=32 bits")
            }
            Self::Depth { array } => write!(f, "array {array}: depth must be at least 1"),
        }
    }
}

impl std::error::Error for GeometryError {}

/// TowerSketch: arrays ordered from the narrowest counters to the widest.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TowerGeometry {
    pub arrays: Vec<ArrayGeometry>,
}

impl TowerGeometry {
    /// SketchINT's FPGA configuration on the VC709: d=3, 8/16/32-bit counters,
    /// 2^16/2^15/2^14 counters (64 KiB per array).
    pub fn sketchint_fpga() -> Self {
        Self::from_widths_depths(&[(8, 1 << 16), (16, 1 << 15), (32, 1 << 14)])
    }

    /// SketchINT's CPU configuration: d=5, 2/4/8/16/32-bit counters, the same memory per
    /// array, `total_bytes` overall.
    pub fn sketchint_cpu(total_bytes: u64) -> Self {
        Self::equal_memory(&[2, 4, 8, 16, 32], total_bytes)
    }

    /// Arrays of the given widths, each getting `total_bytes / d` of memory.
    pub fn equal_memory(widths: &[u8], total_bytes: u64) -> Self {
        let per_array_bits = total_bytes * 8 / widths.len().max(1) as u64;
        let pairs: Vec<(u8, u32)> =
            widths.iter().map(|&w| (w, (per_array_bits / w as u64).max(1) as u32)).collect();
        Self::from_widths_depths(&pairs)
    }

    /// Arrays from `(width, depth)` pairs, hashed by family members 0, 1, 2, ...
    pub fn from_widths_depths(pairs: &[(u8, u32)]) -> Self {
        let arrays = pairs
            .iter()
            .enumerate()
            .map(|(i, &(width, depth))| ArrayGeometry { width, depth, hash: member(i) })
            .collect();
        TowerGeometry { arrays }
    }

    pub fn validate(&self) -> Result<(), GeometryError> {
        validate_arrays(&self.arrays)
    }

    pub fn memory_bits(&self) -> u64 {
        self.arrays.iter().map(ArrayGeometry::memory_bits).sum()
    }
}

/// Checks width and depth of every array.
pub fn validate_arrays(arrays: &[ArrayGeometry]) -> Result<(), GeometryError> {
    if arrays.is_empty() {
        return Err(GeometryError::NoArrays);
    }
    for (i, a) in arrays.iter().enumerate() {
        if a.width == 0 || a.width > MAX_WIDTH {
            return Err(GeometryError::Width { array: i, width: a.width });
        }
        if a.depth == 0 {
            return Err(GeometryError::Depth { array: i });
        }
    }
    Ok(())
}

/// SuMax's log-spaced delay bins: bin 0 holds delays below `base_ns`; above it each octave
/// is split into `bins_per_octave` bins (measured with the LUT log2 of [`crate::lut`]); the
/// last bin takes everything beyond. The bit-exact rule is `host::arith::delay_bin`, the
/// hardware is the `delay_bin` block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DelayBinRule {
    pub base_ns: u32,
    pub bins_per_octave: u8,
}

/// SuMax (LightGuardian 4.4): `d` arrays of `depth` buckets. Each bucket holds a flow-size
/// sum cell, `delay_cells` delay sum cells, a max inter-arrival cell and a last-arrival cell.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SuMaxGeometry {
    /// One hash per array.
    pub hashes: Vec<CrcParams>,
    /// Buckets per array.
    pub depth: u32,
    /// Width of the flow-size cell (packets).
    pub size_width: u8,
    /// lambda_d: number of delay cells per bucket.
    pub delay_cells: u8,
    /// Width of each delay cell (packets in that delay bin).
    pub delay_width: u8,
    /// Width of the max inter-arrival cell and of the last-arrival cell.
    pub time_width: u8,
    /// Time cells count units of `2^time_shift` ns.
    pub time_shift: u8,
    pub delay_bins: DelayBinRule,
}

impl SuMaxGeometry {
    /// The NIC default: d=3 arrays of 2^13 buckets, 32-bit flow size, lambda_d=8 16-bit
    /// delay cells with octave bins from 1 us (<1, 1-2, 2-4, ... 32-64, >=64 us: end-to-end
    /// delays of multi-hop paths spread over several octaves), 32-bit time cells in
    /// 1.024 us units.
    pub fn nic_default() -> Self {
        Self::with_depth(3, 1 << 13)
    }

    /// The default cell layout with `d` arrays of `depth` buckets.
    pub fn with_depth(d: usize, depth: u32) -> Self {
        SuMaxGeometry {
            hashes: (0..d).map(member).collect(),
            depth,
            size_width: 32,
            delay_cells: 8,
            delay_width: 16,
            time_width: 32,
            time_shift: 10,
            delay_bins: DelayBinRule { base_ns: 1000, bins_per_octave: 1 },
        }
    }

    /// Largest depth whose buckets fit in `total_bytes` with this cell layout.
    pub fn fit_depth(&self, total_bytes: u64) -> u32 {
        let per_bucket = self.bucket_bits() * self.hashes.len().max(1) as u64;
        ((total_bytes * 8) / per_bucket).max(1) as u32
    }

    /// Cell widths of one bucket, in storage order:
    /// flow size, delay cells 0..lambda_d, max inter-arrival, last arrival.
    pub fn cell_widths(&self) -> Vec<u8> {
        let mut w = vec![self.size_width];
        w.extend(std::iter::repeat_n(self.delay_width, self.delay_cells as usize));
        w.push(self.time_width);
        w.push(self.time_width);
        w
    }

    pub fn bucket_bits(&self) -> u64 {
        self.cell_widths().iter().map(|&w| w as u64).sum()
    }

    pub fn memory_bits(&self) -> u64 {
        self.bucket_bits() * self.depth as u64 * self.hashes.len() as u64
    }

    pub fn validate(&self) -> Result<(), GeometryError> {
        if self.hashes.is_empty() {
            return Err(GeometryError::NoArrays);
        }
        if self.depth == 0 {
            return Err(GeometryError::Depth { array: 0 });
        }
        for w in self.cell_widths() {
            if w == 0 || w > MAX_WIDTH {
                return Err(GeometryError::Width { array: 0, width: w });
            }
        }
        Ok(())
    }
}

/// Index of the cells inside a SuMax bucket (see [`SuMaxGeometry::cell_widths`]).
pub mod sumax_cell {
    pub const SIZE: usize = 0;
    pub const FIRST_DELAY: usize = 1;
    /// Max inter-arrival cell index for `lambda_d` delay cells.
    pub const fn interval(delay_cells: u8) -> usize {
        1 + delay_cells as usize
    }
    /// Last-arrival cell index for `lambda_d` delay cells.
    pub const fn last(delay_cells: u8) -> usize {
        2 + delay_cells as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fpga_default_is_64k_per_array() {
        let g = TowerGeometry::sketchint_fpga();
        assert_eq!(g.arrays.len(), 3);
        for a in &g.arrays {
            assert_eq!(a.memory_bits(), 1 << 19);
        }
        g.validate().unwrap();
    }

    #[test]
    fn cpu_config_has_equal_memory() {
        let g = TowerGeometry::sketchint_cpu(2 << 20);
        let bits: Vec<u64> = g.arrays.iter().map(|a| a.memory_bits()).collect();
        assert!(bits.windows(2).all(|w| w[0].abs_diff(w[1]) < 32));
        assert!(g.memory_bits() <= (2 << 20) * 8);
    }

    #[test]
    fn markers() {
        assert_eq!(marker(1), 1);
        assert_eq!(marker(8), 255);
        assert_eq!(marker(32), u32::MAX);
    }

    #[test]
    fn invalid_width_rejected() {
        let g = TowerGeometry::from_widths_depths(&[(33, 4)]);
        assert_eq!(g.validate(), Err(GeometryError::Width { array: 0, width: 33 }));
    }

    #[test]
    fn sumax_layout() {
        let g = SuMaxGeometry::nic_default();
        assert_eq!(g.cell_widths(), vec![32, 16, 16, 16, 16, 16, 16, 16, 16, 32, 32]);
        assert_eq!(sumax_cell::last(g.delay_cells), 10);
    }
}
