//! Placement of the register blocks and readout windows in the BAR for a given geometry.
//!
//! The control blocks sit in the first 4 KiB, one 256-byte slot each, in chain order
//! (firmware ID, statistics, epoch, TowerSketch, SuMax, and per-switch when the bitstream
//! has the per-switch half). The readout windows follow, each starting on a 4 KiB boundary,
//! in the order the blocks describe them (tower arrays, SuMax arrays, latency arrays, table
//! ways). The BAR is the next power of two above the last window.

use super::{
    block_type, crc, epoch, firmware_id, header, per_switch, stats, stream, sumax, tower, BLOCK_VERSION,
};
use crate::geometry::{SuMaxGeometry, TowerGeometry};
use crate::hash::CrcParams;
use crate::per_switch::PerSwitchGeometry;

/// Bytes reserved for each control block.
pub const BLOCK_SLOT: u32 = 0x100;
/// Start of the first readout window.
pub const WINDOWS_BASE: u32 = 0x1000;
const PAGE: u32 = 0x1000;

/// A block or window placed in the BAR.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placed {
    /// Block type (`block_type::*`), or 0 for a readout window.
    pub ty: u32,
    pub base: u32,
    /// Bytes used.
    pub size: u32,
}

/// What the firmware-ID block reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FirmwareInfo {
    pub device: u32,
    pub version: u32,
    pub build_time: u32,
    pub git_hash: u32,
}

/// The whole register map of one bitstream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Control blocks in chain order.
    pub blocks: Vec<Placed>,
    /// One readout window per TowerSketch array (one word per counter).
    pub tower_windows: Vec<Placed>,
    /// One readout window per SuMax array (one word per cell, bucket-major).
    pub sumax_windows: Vec<Placed>,
    /// The per-switch half's geometry, when the bitstream has it.
    pub per_switch: Option<PerSwitchGeometry>,
    /// One readout window per latency array (count, sum per bucket); empty without the half.
    pub latency_windows: Vec<Placed>,
    /// One readout window per table way (`per_switch::SLOT_WORDS` per slot); empty without
    /// the half.
    pub table_windows: Vec<Placed>,
    /// BAR size in bytes (a power of two).
    pub bar_size: u32,
}

impl Layout {
    /// Places the blocks and windows of a bitstream with the flow sketches only.
    pub fn new(t: &TowerGeometry, s: &SuMaxGeometry) -> Self {
        Self::place(t, s, None)
    }

    /// Places the blocks and windows of a bitstream with the per-switch half `p` too (the
    /// NIC core, which also has the readout-stream block).
    pub fn with_per_switch(t: &TowerGeometry, s: &SuMaxGeometry, p: &PerSwitchGeometry) -> Self {
        Self::place(t, s, Some(p))
    }

    fn place(t: &TowerGeometry, s: &SuMaxGeometry, p: Option<&PerSwitchGeometry>) -> Self {
        let mut sizes = vec![
            (block_type::FIRMWARE_ID, firmware_id::SIZE),
            (block_type::STATS, stats::SIZE),
            (block_type::EPOCH, epoch::SIZE),
            (block_type::TOWER, tower::ARRAY0 + tower::ARRAY_STRIDE * t.arrays.len() as u32),
            (block_type::SUMAX, sumax::ARRAY0 + sumax::ARRAY_STRIDE * s.hashes.len() as u32),
        ];
        if p.is_some() {
            // The core that has the per-switch half also has the readout-stream engine.
            sizes.push((block_type::PER_SWITCH, per_switch::SIZE));
            sizes.push((block_type::STREAM, stream::SIZE));
        }
        let blocks = sizes
            .iter()
            .enumerate()
            .map(|(i, &(ty, size))| Placed { ty, base: i as u32 * BLOCK_SLOT, size })
            .collect();
        let mut next = WINDOWS_BASE;
        let mut window = |words: u64| {
            let size = u32::try_from(words * 4).expect("a readout window fits a 32-bit BAR");
            let p = Placed { ty: 0, base: next, size };
            next = (next + size).div_ceil(PAGE) * PAGE;
            p
        };
        let tower_windows = t.arrays.iter().map(|a| window(a.depth as u64)).collect();
        let cells = s.cell_widths().len() as u64;
        let sumax_windows = s.hashes.iter().map(|_| window(s.depth as u64 * cells)).collect();
        let (mut latency_windows, mut table_windows) = (Vec::new(), Vec::new());
        if let Some(p) = p {
            let bucket = per_switch::BUCKET_WORDS as u64;
            latency_windows = p.latency.arrays.iter().map(|a| window(a.depth as u64 * bucket)).collect();
            let slot = per_switch::SLOT_WORDS as u64;
            table_windows = p.table.ways.iter().map(|_| window(p.table.depth as u64 * slot)).collect();
        }
        Layout {
            blocks,
            tower_windows,
            sumax_windows,
            per_switch: p.cloned(),
            latency_windows,
            table_windows,
            bar_size: next.next_power_of_two(),
        }
    }

    /// Every readout window in the order the register file numbers them (`win_sel`):
    /// tower arrays, SuMax arrays, latency arrays, table ways.
    pub fn windows(&self) -> Vec<Placed> {
        let all = [&self.tower_windows, &self.sumax_windows, &self.latency_windows, &self.table_windows];
        all.into_iter().flatten().copied().collect()
    }

    /// The block of type `ty`.
    pub fn block(&self, ty: u32) -> Option<Placed> {
        self.blocks.iter().copied().find(|b| b.ty == ty)
    }

    /// Every constant register of the map as `(offset, value)`: headers, firmware ID and
    /// geometry descriptions. Counters, epoch state and window contents are live state
    /// and not listed. The HDL generator builds its read mux from this; the simulated and
    /// file-backed devices are initialised from it.
    pub fn constant_registers(
        &self,
        fw: FirmwareInfo,
        t: &TowerGeometry,
        s: &SuMaxGeometry,
    ) -> Vec<(u32, u32)> {
        let mut r = Vec::new();
        for (i, b) in self.blocks.iter().enumerate() {
            let next = self.blocks.get(i + 1).map_or(0, |n| n.base);
            r.extend([(b.base + header::TYPE, b.ty), (b.base + header::VERSION, BLOCK_VERSION)]);
            r.push((b.base + header::NEXT, next));
        }
        let fw_base = self.blocks[0].base;
        r.extend([
            (fw_base + firmware_id::DEVICE, fw.device),
            (fw_base + firmware_id::VERSION, fw.version),
            (fw_base + firmware_id::BUILD_TIME, fw.build_time),
            (fw_base + firmware_id::GIT_HASH, fw.git_hash),
        ]);
        self.tower_registers(t, &mut r);
        self.sumax_registers(s, &mut r);
        self.per_switch_registers(&mut r);
        r.sort_unstable();
        r
    }

    fn tower_registers(&self, t: &TowerGeometry, r: &mut Vec<(u32, u32)>) {
        let base = self.block(block_type::TOWER).expect("tower block").base;
        r.push((base + tower::ARRAYS, t.arrays.len() as u32));
        for (i, (a, w)) in t.arrays.iter().zip(&self.tower_windows).enumerate() {
            let d = base + tower::ARRAY0 + tower::ARRAY_STRIDE * i as u32;
            r.extend([
                (d + tower::A_WIDTH, a.width as u32),
                (d + tower::A_DEPTH, a.depth),
                (d + tower::A_WINDOW, w.base),
            ]);
            crc_registers(d + tower::A_CRC, &a.hash, r);
        }
    }

    fn sumax_registers(&self, s: &SuMaxGeometry, r: &mut Vec<(u32, u32)>) {
        let base = self.block(block_type::SUMAX).expect("sumax block").base;
        let widths = s.cell_widths();
        r.extend([
            (base + sumax::DEPTH, s.depth),
            (base + sumax::ARRAYS, s.hashes.len() as u32),
            (base + sumax::CELLS, widths.len() as u32),
            (base + sumax::TIME_SHIFT, s.time_shift as u32),
            (base + sumax::DELAY_BASE_NS, s.delay_bins.base_ns),
            (base + sumax::DELAY_BINS_PER_OCTAVE, s.delay_bins.bins_per_octave as u32),
        ]);
        for (k, chunk) in widths.chunks(4).take(sumax::MAX_CELLS / 4).enumerate() {
            let word = chunk.iter().enumerate().fold(0u32, |acc, (j, &w)| acc | (w as u32) << (8 * j));
            r.push((base + sumax::CELL_WIDTHS + 4 * k as u32, word));
        }
        for (i, (h, w)) in s.hashes.iter().zip(&self.sumax_windows).enumerate() {
            let d = base + sumax::ARRAY0 + sumax::ARRAY_STRIDE * i as u32;
            r.push((d + sumax::A_WINDOW, w.base));
            crc_registers(d + sumax::A_CRC, h, r);
        }
    }
}

impl Layout {
    fn per_switch_registers(&self, r: &mut Vec<(u32, u32)>) {
        let (Some(p), Some(b)) = (&self.per_switch, self.block(block_type::PER_SWITCH)) else {
            return;
        };
        use per_switch::*;
        r.extend([
            (b.base + LATENCY_SHIFT, p.latency.latency_shift as u32),
            (b.base + LATENCY_ARRAYS, p.latency.arrays.len() as u32),
            (b.base + TABLE_WAYS, p.table.ways.len() as u32),
            (b.base + TABLE_DEPTH, p.table.depth),
            (b.base + SLOT_BITS, crate::per_switch::slot::BITS as u32),
        ]);
        let arrays = p.latency.arrays.iter().zip(&self.latency_windows).take(MAX_LATENCY_ARRAYS);
        for (i, (a, w)) in arrays.enumerate() {
            let d = b.base + LAT0 + LAT_STRIDE * i as u32;
            let widths = a.count_width as u32 | (a.sum_width as u32) << 8;
            r.extend([(d + A_WIDTHS, widths), (d + A_DEPTH, a.depth), (d + A_WINDOW, w.base)]);
            crc_registers(d + A_CRC, &a.hash, r);
        }
        for (i, (h, w)) in p.table.ways.iter().zip(&self.table_windows).take(MAX_WAYS).enumerate() {
            let d = b.base + WAY0 + WAY_STRIDE * i as u32;
            r.push((d + A_WINDOW, w.base));
            crc_registers(d + A_CRC, h, r);
        }
    }
}

fn crc_registers(base: u32, p: &CrcParams, r: &mut Vec<(u32, u32)>) {
    let flags = p.refin as u32 | (p.refout as u32) << 1;
    r.extend([(base + crc::POLY, p.poly), (base + crc::INIT, p.init), (base + crc::XOROUT, p.xorout)]);
    r.push((base + crc::FLAGS, flags));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nic() -> (TowerGeometry, SuMaxGeometry) {
        (TowerGeometry::sketchint_fpga(), SuMaxGeometry::nic_default())
    }

    #[test]
    fn default_map_fits_a_2mib_bar_without_overlap() {
        let (t, s) = nic();
        let l = Layout::new(&t, &s);
        assert_eq!(l.bar_size, 2 << 20);
        let mut all: Vec<Placed> =
            l.blocks.iter().chain(&l.tower_windows).chain(&l.sumax_windows).copied().collect();
        all.sort_by_key(|p| p.base);
        for w in all.windows(2) {
            assert!(w[0].base + w[0].size <= w[1].base, "{:?} overlaps {:?}", w[0], w[1]);
        }
        assert!(l.blocks.iter().all(|b| b.size <= BLOCK_SLOT));
        assert_eq!(l.tower_windows[0].size, 4 << 16);
        assert_eq!(l.sumax_windows[0].size, 4 * 8192 * 11);
        let last = all.last().unwrap();
        assert!(last.base + last.size <= l.bar_size);
    }

    #[test]
    fn chain_starts_with_firmware_id_and_ends() {
        let (t, s) = nic();
        let l = Layout::new(&t, &s);
        let regs = l.constant_registers(FirmwareInfo::default(), &t, &s);
        let read = |off| regs.iter().find(|r| r.0 == off).map(|r| r.1);
        let (mut at, mut seen) = (0u32, Vec::new());
        loop {
            seen.push(read(at + header::TYPE).unwrap());
            match read(at + header::NEXT).unwrap() {
                0 => break,
                n => at = n,
            }
        }
        assert_eq!(
            seen,
            vec![
                block_type::FIRMWARE_ID,
                block_type::STATS,
                block_type::EPOCH,
                block_type::TOWER,
                block_type::SUMAX
            ]
        );
        let tb = l.block(block_type::TOWER).unwrap().base;
        assert_eq!(read(tb + tower::ARRAYS), Some(3));
        assert_eq!(read(tb + tower::ARRAY0 + tower::ARRAY_STRIDE + tower::A_WIDTH), Some(16));
        assert_eq!(read(tb + tower::ARRAY0 + tower::A_CRC + crc::POLY), Some(t.arrays[0].hash.poly));
        let sb = l.block(block_type::SUMAX).unwrap().base;
        assert_eq!(read(sb + sumax::CELL_WIDTHS), Some(0x1010_1020));
        assert_eq!(read(sb + sumax::CELLS), Some(11));
        let offsets: Vec<u32> = regs.iter().map(|r| r.0).collect();
        assert!(offsets.windows(2).all(|w| w[0] < w[1]), "no register defined twice");
    }

    #[test]
    fn the_per_switch_half_adds_its_block_and_windows_after_the_flow_sketches() {
        let (t, s) = nic();
        let p = PerSwitchGeometry::nic_default();
        let l = Layout::with_per_switch(&t, &s, &p);
        let flows = Layout::new(&t, &s);
        assert_eq!(l.windows()[..6], flows.windows()[..]);
        // 3 latency arrays of 2 words a bucket and 2 ways of 12 words a slot take the BAR
        // past 2 MiB.
        assert_eq!(l.bar_size, 4 << 20);
        assert_eq!(l.latency_windows.iter().map(|w| w.size).collect::<Vec<_>>(), [8 << 16, 8 << 16, 8 << 15]);
        assert_eq!(l.table_windows.iter().map(|w| w.size).collect::<Vec<_>>(), [48 * 512, 48 * 512]);
        let mut all: Vec<Placed> = l.blocks.iter().copied().chain(l.windows()).collect();
        all.sort_by_key(|p| p.base);
        for w in all.windows(2) {
            assert!(w[0].base + w[0].size <= w[1].base, "{:?} overlaps {:?}", w[0], w[1]);
        }
        let last = all.last().unwrap();
        assert!(last.base + last.size <= l.bar_size);
        let regs = l.constant_registers(FirmwareInfo::default(), &t, &s);
        let read = |off| regs.iter().find(|r| r.0 == off).map(|r| r.1);
        let sb = l.block(block_type::SUMAX).unwrap().base;
        let pb = l.block(block_type::PER_SWITCH).unwrap().base;
        let stb = l.block(block_type::STREAM).unwrap().base;
        assert_eq!(read(sb + header::NEXT), Some(pb));
        assert_eq!(read(pb + header::NEXT), Some(stb));
        assert_eq!(read(stb + header::NEXT), Some(0));
        assert_eq!(read(stb + header::TYPE), Some(block_type::STREAM));
        assert!(flows.block(block_type::STREAM).is_none());
        assert_eq!(read(pb + per_switch::LATENCY_ARRAYS), Some(3));
        assert_eq!(read(pb + per_switch::TABLE_DEPTH), Some(512));
        let a1 = pb + per_switch::LAT0 + per_switch::LAT_STRIDE;
        assert_eq!(read(a1 + per_switch::A_WIDTHS), Some(16 | 32 << 8));
        assert_eq!(read(a1 + per_switch::A_WINDOW), Some(l.latency_windows[1].base));
        let w1 = pb + per_switch::WAY0 + per_switch::WAY_STRIDE;
        assert_eq!(read(w1 + per_switch::A_WINDOW), Some(l.table_windows[1].base));
        assert_eq!(read(w1 + per_switch::A_CRC + crc::POLY), Some(p.table.ways[1].poly));
        // Live registers are not constants.
        assert_eq!(read(pb + per_switch::RECORD_POP), None);
    }
}
