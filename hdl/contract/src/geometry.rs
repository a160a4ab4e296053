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

/// Bits of the nanosecond timestamp SuMax time cells are cut from: a time cell holds bits
/// `time_shift .. time_shift + time_width`, so a cell value times `2^time_shift` is always
/// a nanosecond count that fits 64 bits.
pub const TIMESTAMP_BITS: u32 = 64;

/// Most delay cells a SuMax bucket can hold: the register block describes at most
/// [`crate::regs::sumax::MAX_CELLS`] cells, three of which are size, interval and last.
pub const MAX_DELAY_CELLS: u8 = crate::regs::sumax::MAX_CELLS as u8 - 3;

/// Why a geometry is unusable. Every variant names the field at fault, so a hostile
/// snapshot or register block is refused with a message that says what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GeometryError {
    NoArrays,
    TooManyArrays {
        arrays: usize,
        max: usize,
    },
    Width {
        array: usize,
        width: u8,
    },
    Depth {
        array: usize,
    },
    /// A cell width outside 1..=32 (`field` names the sketch and the field).
    CellWidth {
        field: &'static str,
        width: u8,
    },
    /// SuMax `depth` of 0.
    SuMaxDepth,
    /// SuMax `delay_cells` outside `1..=max`.
    DelayCells {
        cells: u8,
        max: u8,
    },
    /// `time_shift + time_width` beyond the 64-bit nanosecond timestamp.
    TimeShift {
        shift: u8,
        width: u8,
    },
    /// A CRC polynomial without the `x^0` term (`array` is the array it hashes).
    Polynomial {
        array: usize,
        poly: u32,
    },
    /// A latency-tower `latency_shift` above its maximum.
    LatencyShift {
        shift: u8,
        max: u8,
    },
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
            Self::CellWidth { field, width } => {
                write!(f, "{field} {width} is outside 1..=32 bits")
            }
            Self::SuMaxDepth => write!(f, "SuMax depth must be at least 1"),
            Self::DelayCells { cells, max } => {
                write!(f, "SuMax delay_cells {cells} is outside 1..={max}")
            }
            Self::TimeShift { shift, width } => write!(
                f,
                "SuMax time_shift {shift} with time_width {width} reaches bit {} of the 64-bit \
                 ns timestamp (time_shift + time_width must be at most {TIMESTAMP_BITS})",
                *shift as u32 + *width as u32
            ),
            Self::Polynomial { array, poly } => {
                write!(f, "array {array}: CRC polynomial {poly:#010x} lacks the x^0 term")
            }
            Self::LatencyShift { shift, max } => {
                write!(f, "latency tower latency_shift {shift} is above {max} (units of 2^shift ns)")
            }
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

/// Checks width, depth and hash of every array.
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
        validate_hash(i, &a.hash)?;
    }
    Ok(())
}

/// A CRC polynomial must have its `x^0` term (the implicit top bit is not stored): without
/// it the low bit of every remainder is always zero and half the counters are never hit.
pub fn validate_hash(array: usize, p: &CrcParams) -> Result<(), GeometryError> {
    if p.poly & 1 == 0 {
        return Err(GeometryError::Polynomial { array, poly: p.poly });
    }
    Ok(())
}

/// A SuMax cell width, named by its field.
fn validate_cell_width(field: &'static str, width: u8) -> Result<(), GeometryError> {
    if width == 0 || width > MAX_WIDTH {
        return Err(GeometryError::CellWidth { field, width });
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

    /// Every field whose value a later computation depends on: the one check shared by the
    /// snapshot decoder, register-block discovery and the sketch constructors. A valid
    /// geometry keeps every derived quantity in range: cell masks (widths 1..=32), cell
    /// indices (1..=[`MAX_DELAY_CELLS`] delay cells), `time cell << time_shift` in 64 bits.
    pub fn validate(&self) -> Result<(), GeometryError> {
        if self.hashes.is_empty() {
            return Err(GeometryError::NoArrays);
        }
        for (i, h) in self.hashes.iter().enumerate() {
            validate_hash(i, h)?;
        }
        if self.depth == 0 {
            return Err(GeometryError::SuMaxDepth);
        }
        // The cell count first: with no delay cells there is no delay width to speak of.
        if self.delay_cells == 0 || self.delay_cells > MAX_DELAY_CELLS {
            return Err(GeometryError::DelayCells { cells: self.delay_cells, max: MAX_DELAY_CELLS });
        }
        validate_cell_width("SuMax size_width", self.size_width)?;
        validate_cell_width("SuMax delay_width", self.delay_width)?;
        validate_cell_width("SuMax time_width", self.time_width)?;
        if self.time_shift as u32 + self.time_width as u32 > TIMESTAMP_BITS {
            return Err(GeometryError::TimeShift { shift: self.time_shift, width: self.time_width });
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

    /// Every SuMax field a later computation depends on is checked, and the error names it.
    #[test]
    fn sumax_hostile_fields_are_named() {
        let ok = SuMaxGeometry::nic_default();
        ok.validate().unwrap();
        type Edit = fn(&mut SuMaxGeometry);
        let cases: [(Edit, &str); 10] = [
            (|g| g.time_shift = 62, "time_shift 62"),
            (|g| g.time_shift = 63, "time_shift 63"),
            (|g| g.time_shift = 255, "time_shift 255"),
            (|g| g.time_width = 0, "time_width 0"),
            (|g| g.time_width = 33, "time_width 33"),
            (|g| g.size_width = 0, "size_width 0"),
            (|g| g.delay_width = 40, "delay_width 40"),
            (|g| g.delay_cells = 0, "delay_cells 0"),
            (|g| g.delay_cells = MAX_DELAY_CELLS + 1, "delay_cells 14"),
            (|g| g.hashes[1].poly = 0x04C1_1DB6, "array 1: CRC polynomial 0x04c11db6"),
        ];
        for (edit, named) in cases {
            let mut g = ok.clone();
            edit(&mut g);
            let e = g.validate().unwrap_err().to_string();
            assert!(e.contains(named), "{named}: {e}");
        }
        let mut g = ok.clone();
        g.depth = 0;
        assert_eq!(g.validate(), Err(GeometryError::SuMaxDepth));
    }

    /// The time rule is exactly "the cell fits the 64-bit ns timestamp": a 2-bit time cell
    /// may sit at bit 62, a 32-bit one at most at bit 32.
    #[test]
    fn time_shift_limit_is_the_timestamp_width() {
        let mut g = SuMaxGeometry::nic_default();
        (g.time_width, g.time_shift) = (2, 62);
        g.validate().unwrap();
        (g.time_width, g.time_shift) = (32, 32);
        g.validate().unwrap();
        g.time_shift = 33;
        assert_eq!(g.validate(), Err(GeometryError::TimeShift { shift: 33, width: 32 }));
    }

    #[test]
    fn tower_hash_polynomial_is_checked() {
        let mut g = TowerGeometry::sketchint_fpga();
        g.arrays[2].hash.poly &= !1;
        assert!(matches!(g.validate(), Err(GeometryError::Polynomial { array: 2, .. })));
        g.arrays[2].depth = 0;
        g.arrays[2].hash.poly |= 1;
        assert_eq!(g.validate(), Err(GeometryError::Depth { array: 2 }));
    }
}
