//! Register-block enumeration: walks the Corundum-style chain from offset 0, checks every
//! pointer, and decodes the firmware ID and the sketch geometries from the registers alone,
//! so the host builds its decoder from what the device says. The per-switch block is
//! optional: a bitstream without it has no per-switch windows ([`per_switch`]).

mod per_switch;
pub use per_switch::{read_config, read_mode, read_per_switch, PerSwitchBlock, PerSwitchConfig};

use crate::access::{check_range, AccessError, RegisterAccess};
use crate::snapshot::FirmwareId;
use smartnic_contract::geometry::{DelayBinRule, InsertMode, SuMaxGeometry, TowerGeometry};
use smartnic_contract::hash::CrcParams;
use smartnic_contract::regs::{
    block_name, block_type, crc, epoch, firmware_id, header, stats, sumax, tower, BLOCK_VERSION,
};
use smartnic_contract::ArrayGeometry;
use std::fmt;

/// Most blocks a chain may hold before it is considered broken.
pub const MAX_BLOCKS: usize = 64;

/// Why the register map could not be understood.
#[derive(Debug, thiserror::Error)]
pub enum BlockError {
    #[error(transparent)]
    Access(#[from] AccessError),
    #[error("register chain: block at {at:#x} points to {next:#x}, which is not 4-byte aligned")]
    Misaligned { at: u32, next: u32 },
    #[error("register chain: block at {at:#x} points to {next:#x}, outside the {bar_size:#x}-byte BAR")]
    OutOfRange { at: u32, next: u32, bar_size: u64 },
    #[error("register chain: block at {at:#x} points back to {next:#x} (a loop)")]
    Loop { at: u32, next: u32 },
    #[error("register chain: more than {MAX_BLOCKS} blocks (broken chain?)")]
    TooLong,
    #[error(
        "register chain: the first block is type {found:#010x}, not the firmware ID \
         ({:#010x}): is this a SmartNIC bitstream?",
        block_type::FIRMWARE_ID
    )]
    NotFirmwareId { found: u32 },
    #[error(
        "{name} block at {at:#x} has version {}.{}; this driver reads {}.x: update the driver",
        version >> 16, version & 0xFFFF, BLOCK_VERSION >> 16
    )]
    Version { name: &'static str, at: u32, version: u32 },
    #[error("{name} block appears twice (at {first:#x} and {second:#x})")]
    Duplicate { name: &'static str, first: u32, second: u32 },
    #[error("the device has no {0} block")]
    Missing(&'static str),
    #[error("{block} block at {at:#x}: {what}")]
    Invalid { block: &'static str, at: u32, what: String },
}

/// One block header as found in the chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockHeader {
    pub offset: u32,
    pub ty: u32,
    pub version: u32,
    pub next: u32,
}

impl BlockHeader {
    /// `firmware-id`, `towersketch`, ... or `unknown`.
    pub fn name(&self) -> &'static str {
        block_name(self.ty).unwrap_or("unknown")
    }
}

/// The TowerSketch block: geometry, insertion mode and one readout window per array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TowerBlock {
    pub base: u32,
    pub geometry: TowerGeometry,
    pub mode: InsertMode,
    /// BAR offset of each array's window (one word per counter).
    pub windows: Vec<u32>,
}

/// The SuMax block: geometry and one readout window per array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SuMaxBlock {
    pub base: u32,
    pub geometry: SuMaxGeometry,
    /// BAR offset of each array's window (bucket `b` cell `c` at word `b * cells + c`).
    pub windows: Vec<u32>,
}

impl SuMaxBlock {
    pub fn cells(&self) -> usize {
        self.geometry.cell_widths().len()
    }
}

/// Which sketch array a readout window holds. The readout packs each window by its kind,
/// and every message that names a window prints it through [`fmt::Display`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WindowKind {
    /// TowerSketch array `i`: one word per counter.
    TowerArray(usize),
    /// SuMax array `i`: bucket `b` cell `c` at word `b * cells + c`.
    SuMaxArray(usize),
    /// Per-switch latency array `i`: bucket `b`'s count at word `2b`, its sum at `2b + 1`.
    LatencyArray(usize),
    /// Per-switch table way `w`: slot `s` as `SLOT_WORDS` words from word `SLOT_WORDS * s`.
    TableWay(usize),
}

impl WindowKind {
    /// The type of the block whose descriptor places this window.
    pub fn block_type(self) -> u32 {
        match self {
            WindowKind::TowerArray(_) => block_type::TOWER,
            WindowKind::SuMaxArray(_) => block_type::SUMAX,
            WindowKind::LatencyArray(_) | WindowKind::TableWay(_) => block_type::PER_SWITCH,
        }
    }

    /// `towersketch`, `sumax` or `per-switch`: the name of that block.
    pub fn block(self) -> &'static str {
        block_name(self.block_type()).unwrap_or("unknown")
    }

    /// The array's index within its block.
    pub fn index(self) -> usize {
        match self {
            WindowKind::TowerArray(i)
            | WindowKind::SuMaxArray(i)
            | WindowKind::LatencyArray(i)
            | WindowKind::TableWay(i) => i,
        }
    }

    /// `towersketch array 0`, `per-switch latency array 1`, `per-switch table way 0`: the
    /// array itself, as counter errors name it.
    pub fn array(self) -> String {
        let what = match self {
            WindowKind::TowerArray(_) | WindowKind::SuMaxArray(_) => "array",
            WindowKind::LatencyArray(_) => "latency array",
            WindowKind::TableWay(_) => "table way",
        };
        format!("{} {what} {}", self.block(), self.index())
    }
}

/// `towersketch array 0 window`.
impl fmt::Display for WindowKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} window", self.array())
    }
}

/// One readout window: `len` bytes of the BAR from `base`, holding the array `kind` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub base: u32,
    pub len: u64,
    pub kind: WindowKind,
}

impl Window {
    /// 32-bit words in the window (one read each).
    pub fn words(&self) -> u64 {
        self.len / 4
    }
}

/// A range of the BAR that discovery must keep apart from the others: a readout window
/// (with the address of the block that describes it) or a block header.
enum Span {
    Window { window: Window, owner: u32 },
    Header(BlockHeader),
}

impl Span {
    fn base(&self) -> u32 {
        match self {
            Span::Window { window, .. } => window.base,
            Span::Header(h) => h.offset,
        }
    }

    fn len(&self) -> u64 {
        match self {
            Span::Window { window, .. } => window.len,
            Span::Header(_) => header::BODY as u64,
        }
    }

    /// The error naming this span's block (a header span is its own block).
    fn invalid(&self, what: String) -> BlockError {
        match self {
            Span::Window { window, owner } => {
                BlockError::Invalid { block: window.kind.block(), at: *owner, what }
            }
            Span::Header(h) => BlockError::Invalid { block: "register", at: h.offset, what },
        }
    }
}

/// `towersketch array 0 window` or `epoch block`.
impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Span::Window { window, .. } => window.kind.fmt(f),
            Span::Header(h) => write!(f, "{} block", h.name()),
        }
    }
}

/// Everything the driver knows about a device after enumeration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceMap {
    pub bar_size: u64,
    pub blocks: Vec<BlockHeader>,
    pub firmware: FirmwareId,
    pub epoch: u32,
    pub stats: Option<u32>,
    pub tower: Option<TowerBlock>,
    pub sumax: Option<SuMaxBlock>,
    /// The per-switch half, when the bitstream has it.
    pub per_switch: Option<PerSwitchBlock>,
    /// Base of the readout-stream block, when the bitstream can stream its windows to the
    /// card-to-host channel (`readout::stream`).
    pub stream: Option<u32>,
}

impl DeviceMap {
    /// Walks the chain and decodes every block this driver knows.
    pub fn discover<A: RegisterAccess + ?Sized>(dev: &mut A) -> Result<Self, BlockError> {
        let blocks = enumerate(dev)?;
        if blocks[0].ty != block_type::FIRMWARE_ID {
            return Err(BlockError::NotFirmwareId { found: blocks[0].ty });
        }
        let mut seen: Vec<&BlockHeader> = Vec::new();
        for b in &blocks {
            if block_name(b.ty).is_none() {
                continue; // unknown blocks are listed and skipped
            }
            if b.version >> 16 != BLOCK_VERSION >> 16 {
                return Err(BlockError::Version { name: b.name(), at: b.offset, version: b.version });
            }
            if let Some(first) = seen.iter().find(|s| s.ty == b.ty) {
                return Err(BlockError::Duplicate { name: b.name(), first: first.offset, second: b.offset });
            }
            seen.push(b);
        }
        let find = |ty| blocks.iter().find(|b| b.ty == ty).map(|b| b.offset);
        let fw = blocks[0].offset;
        let firmware = FirmwareId {
            device: dev.read32(fw + firmware_id::DEVICE)?,
            version: dev.read32(fw + firmware_id::VERSION)?,
            build_time: dev.read32(fw + firmware_id::BUILD_TIME)?,
            git_hash: dev.read32(fw + firmware_id::GIT_HASH)?,
        };
        let epoch = find(block_type::EPOCH).ok_or(BlockError::Missing("epoch"))?;
        check_body(dev, "epoch", epoch, epoch::SIZE)?;
        let stats = find(block_type::STATS);
        if let Some(s) = stats {
            check_body(dev, "stats", s, stats::SIZE)?;
        }
        let tower = find(block_type::TOWER).map(|b| read_tower(dev, b)).transpose()?;
        let sumax = find(block_type::SUMAX).map(|b| read_sumax(dev, b)).transpose()?;
        if tower.is_none() && sumax.is_none() {
            return Err(BlockError::Missing("sketch (towersketch or sumax)"));
        }
        let per_switch = find(block_type::PER_SWITCH).map(|b| read_per_switch(dev, b)).transpose()?;
        let stream = find(block_type::STREAM);
        if let Some(b) = stream {
            check_body(dev, "readout-stream", b, smartnic_contract::regs::stream::SIZE)?;
        }
        let map = DeviceMap {
            bar_size: dev.bar_size(),
            blocks,
            firmware,
            epoch,
            stats,
            tower,
            sumax,
            per_switch,
            stream,
        };
        map.check_windows()?;
        Ok(map)
    }

    /// Every readout window: Tower arrays, SuMax arrays, then the per-switch latency arrays
    /// and table ways (the contract's `Layout::windows` order, which the readout reads and
    /// the snapshot stores).
    pub fn windows(&self) -> Vec<Window> {
        self.placed_windows().into_iter().map(|(w, _)| w).collect()
    }

    /// Every readout window with the address of the block whose descriptor places it.
    fn placed_windows(&self) -> Vec<(Window, u32)> {
        let mut w = Vec::new();
        if let Some(t) = &self.tower {
            for (i, (a, &base)) in t.geometry.arrays.iter().zip(&t.windows).enumerate() {
                let kind = WindowKind::TowerArray(i);
                w.push((Window { base, len: 4 * a.depth as u64, kind }, t.base));
            }
        }
        if let Some(s) = &self.sumax {
            let len = 4 * s.geometry.depth as u64 * s.cells() as u64;
            for (i, &base) in s.windows.iter().enumerate() {
                w.push((Window { base, len, kind: WindowKind::SuMaxArray(i) }, s.base));
            }
        }
        if let Some(p) = &self.per_switch {
            w.extend(per_switch_windows(p).into_iter().map(|win| (win, p.base)));
        }
        w
    }

    /// The counter widths of a window's words, in turn (word `i` takes `widths[i % len]`
    /// bits): one width for a Tower array, the bucket's cell widths for a SuMax array.
    /// `None` when this map has no such array.
    pub fn counter_widths(&self, kind: WindowKind) -> Option<Vec<u8>> {
        match kind {
            WindowKind::TowerArray(i) => Some(vec![self.tower.as_ref()?.geometry.arrays.get(i)?.width]),
            WindowKind::SuMaxArray(i) => {
                let s = self.sumax.as_ref()?;
                (i < s.windows.len()).then(|| s.geometry.cell_widths())
            }
            WindowKind::LatencyArray(i) => {
                let a = self.per_switch.as_ref()?.geometry.latency.arrays.get(i)?;
                Some(vec![a.count_width, a.sum_width])
            }
            WindowKind::TableWay(w) => {
                (w < self.per_switch.as_ref()?.table_windows.len()).then(PerSwitchBlock::slot_word_widths)
            }
        }
    }

    /// Words in all readout windows (what one snapshot reads).
    pub fn window_words(&self) -> u64 {
        self.windows().iter().map(Window::words).sum()
    }

    /// Windows must be aligned, inside the BAR, and overlap neither each other nor a block.
    /// A bad window is reported against the block whose descriptor holds it (its name and
    /// its own address), with the window's address in the message.
    fn check_windows(&self) -> Result<(), BlockError> {
        let mut spans: Vec<Span> =
            self.placed_windows().into_iter().map(|(window, owner)| Span::Window { window, owner }).collect();
        for w in &spans {
            check_range(self.bar_size, w.base(), w.len())
                .map_err(|e| w.invalid(format!("{w} at {:#x}: {e}", w.base())))?;
        }
        spans.extend(self.blocks.iter().copied().map(Span::Header));
        spans.sort_by_key(|s| (s.base(), s.len()));
        for pair in spans.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            if a.base() as u64 + a.len() > b.base() as u64 {
                // Two block headers never overlap (the chain walk checked them), so one of
                // the two is a window: blame the block that placed it.
                let culprit = if matches!(b, Span::Window { .. }) { b } else { a };
                return Err(culprit.invalid(format!(
                    "{b} at {:#x} overlaps {a} at {:#x}",
                    b.base(),
                    a.base()
                )));
            }
        }
        Ok(())
    }

    /// One line per block, then one per readout window, for tools that print what they
    /// found (offsets as wide as the largest, names in one column).
    pub fn describe(&self) -> String {
        use std::fmt::Write as _;
        let mut s = String::new();
        let name = self.blocks.iter().map(|b| b.name().len()).max().unwrap_or(0);
        for b in &self.blocks {
            let _ = writeln!(
                s,
                "{:#08x}  {:<name$} type {:#010x} v{}.{}",
                b.offset,
                b.name(),
                b.ty,
                b.version >> 16,
                b.version & 0xFFFF
            );
        }
        for w in self.windows() {
            let _ = writeln!(s, "{:#08x}  {}, {} bytes", w.base, w.kind, w.len);
        }
        s
    }

    /// The per-switch block's configuration in one line (`None` without the block).
    pub fn describe_per_switch(&self) -> Option<String> {
        let p = self.per_switch.as_ref()?;
        let c = &p.config;
        Some(format!(
            "{:#08x}  per-switch mode {}, inflate threshold {:#x}, table threshold {}",
            p.base,
            c.mode.name(),
            c.inflate_threshold,
            c.table_threshold
        ))
    }
}

/// The per-switch block's windows: latency arrays (two words a bucket), then table ways.
fn per_switch_windows(p: &PerSwitchBlock) -> Vec<Window> {
    use smartnic_contract::regs::per_switch::{BUCKET_WORDS, SLOT_WORDS};
    let g = &p.geometry;
    let latency = g.latency.arrays.iter().zip(&p.latency_windows).enumerate().map(|(i, (a, &base))| Window {
        base,
        len: 4 * BUCKET_WORDS as u64 * a.depth as u64,
        kind: WindowKind::LatencyArray(i),
    });
    let way_len = 4 * SLOT_WORDS as u64 * g.table.depth as u64;
    let table = p.table_windows.iter().enumerate().map(|(w, &base)| Window {
        base,
        len: way_len,
        kind: WindowKind::TableWay(w),
    });
    latency.chain(table).collect()
}

/// Walks the block chain from offset 0 and returns the headers in chain order.
pub fn enumerate<A: RegisterAccess + ?Sized>(dev: &mut A) -> Result<Vec<BlockHeader>, BlockError> {
    let bar_size = dev.bar_size();
    let mut out: Vec<BlockHeader> = Vec::new();
    let mut at = 0u32;
    loop {
        check_range(bar_size, at, header::BODY as u64).map_err(|_| BlockError::OutOfRange {
            at: out.last().map_or(0, |b| b.offset),
            next: at,
            bar_size,
        })?;
        let ty = dev.read32_live(at + header::TYPE)?;
        let version = dev.read32_live(at + header::VERSION)?;
        let next = dev.read32_live(at + header::NEXT)?;
        out.push(BlockHeader { offset: at, ty, version, next });
        if next == 0 {
            return Ok(out);
        }
        if !next.is_multiple_of(4) {
            return Err(BlockError::Misaligned { at, next });
        }
        if check_range(bar_size, next, header::BODY as u64).is_err() {
            return Err(BlockError::OutOfRange { at, next, bar_size });
        }
        if out.iter().any(|b| b.offset == next) {
            return Err(BlockError::Loop { at, next });
        }
        if out.len() >= MAX_BLOCKS {
            return Err(BlockError::TooLong);
        }
        at = next;
    }
}

fn check_body<A: RegisterAccess + ?Sized>(
    dev: &A,
    block: &'static str,
    base: u32,
    size: u32,
) -> Result<(), BlockError> {
    check_range(dev.bar_size(), base, size as u64).map_err(|e| BlockError::Invalid {
        block,
        at: base,
        what: format!("body does not fit: {e}"),
    })
}

fn read_crc<A: RegisterAccess + ?Sized>(
    dev: &mut A,
    at: u32,
) -> Result<Result<CrcParams, String>, AccessError> {
    let poly = dev.read32(at + crc::POLY)?;
    let init = dev.read32(at + crc::INIT)?;
    let xorout = dev.read32(at + crc::XOROUT)?;
    let flags = dev.read32_live(at + crc::FLAGS)?;
    if flags & !3 != 0 {
        return Ok(Err(format!("CRC flags {flags:#x} at {:#x} have reserved bits set", at + crc::FLAGS)));
    }
    Ok(Ok(CrcParams { poly, init, xorout, refin: flags & 1 != 0, refout: flags & 2 != 0 }))
}

/// A MODE register's value as an insertion mode: the hardware implements CM (0) and ACU
/// (2); anything else (CU included) is not a mode a device can hold.
pub(crate) fn hardware_mode(raw: u32) -> Option<InsertMode> {
    u8::try_from(raw).ok().and_then(InsertMode::from_u8).filter(|m| *m != InsertMode::Cu)
}

/// Decodes the TowerSketch block at `base`.
pub fn read_tower<A: RegisterAccess + ?Sized>(dev: &mut A, base: u32) -> Result<TowerBlock, BlockError> {
    let bad = |what: String| BlockError::Invalid { block: "towersketch", at: base, what };
    let n = dev.read32_live(base + tower::ARRAYS)?;
    let max = (smartnic_contract::regs::layout::BLOCK_SLOT - tower::ARRAY0) / tower::ARRAY_STRIDE;
    if n == 0 || n > max {
        return Err(bad(format!("{n} arrays (1..={max} fit a block)")));
    }
    check_body(dev, "towersketch", base, tower::ARRAY0 + n * tower::ARRAY_STRIDE)?;
    let mode_raw = dev.read32_live(base + tower::MODE)?;
    let mode = hardware_mode(mode_raw)
        .ok_or_else(|| bad(format!("insertion mode {mode_raw} is not CM (0) or ACU (2)")))?;
    let (mut arrays, mut windows) = (Vec::new(), Vec::new());
    for i in 0..n {
        let d = base + tower::ARRAY0 + i * tower::ARRAY_STRIDE;
        let width = dev.read32_live(d + tower::A_WIDTH)?;
        let depth = dev.read32_live(d + tower::A_DEPTH)?;
        let window = dev.read32_live(d + tower::A_WINDOW)?;
        let hash = read_crc(dev, d + tower::A_CRC)?.map_err(|e| bad(format!("array {i}: {e}")))?;
        let width = u8::try_from(width).map_err(|_| bad(format!("array {i}: counter width {width}")))?;
        arrays.push(ArrayGeometry { width, depth, hash });
        windows.push(window);
    }
    let geometry = TowerGeometry { arrays };
    geometry.validate().map_err(|e| bad(e.to_string()))?;
    Ok(TowerBlock { base, geometry, mode, windows })
}

/// Decodes the SuMax block at `base`.
pub fn read_sumax<A: RegisterAccess + ?Sized>(dev: &mut A, base: u32) -> Result<SuMaxBlock, BlockError> {
    let bad = |what: String| BlockError::Invalid { block: "sumax", at: base, what };
    let depth = dev.read32_live(base + sumax::DEPTH)?;
    let n = dev.read32_live(base + sumax::ARRAYS)?;
    let cells = dev.read32_live(base + sumax::CELLS)?;
    let max = (smartnic_contract::regs::layout::BLOCK_SLOT - sumax::ARRAY0) / sumax::ARRAY_STRIDE;
    if n == 0 || n > max {
        return Err(bad(format!("{n} arrays (1..={max} fit a block)")));
    }
    if !(3..=sumax::MAX_CELLS as u32).contains(&cells) {
        return Err(bad(format!("{cells} cells per bucket (3..={} supported)", sumax::MAX_CELLS)));
    }
    check_body(dev, "sumax", base, sumax::ARRAY0 + n * sumax::ARRAY_STRIDE)?;
    let time_shift = dev.read32_live(base + sumax::TIME_SHIFT)?;
    let base_ns = dev.read32_live(base + sumax::DELAY_BASE_NS)?;
    let per_octave = dev.read32_live(base + sumax::DELAY_BINS_PER_OCTAVE)?;
    let mut widths = Vec::with_capacity(cells as usize);
    for k in 0..cells.div_ceil(4) {
        let word = dev.read32_live(base + sumax::CELL_WIDTHS + 4 * k)?;
        widths.extend(word.to_le_bytes());
    }
    widths.truncate(cells as usize);
    // Storage order: size, delay cells, max inter-arrival, last arrival.
    let delay_cells = cells as usize - 3;
    let delay = &widths[1..1 + delay_cells];
    let (time, last) = (widths[cells as usize - 2], widths[cells as usize - 1]);
    if delay.iter().any(|&w| w != delay[0]) || time != last {
        return Err(bad(format!(
            "cell widths {widths:?} do not follow the size/delay.../interval/last layout"
        )));
    }
    let small =
        |v: u32, what: &str| u8::try_from(v).map_err(|_| bad(format!("{what} {v} does not fit 8 bits")));
    let mut hashes = Vec::new();
    let mut windows = Vec::new();
    for i in 0..n {
        let d = base + sumax::ARRAY0 + i * sumax::ARRAY_STRIDE;
        windows.push(dev.read32_live(d + sumax::A_WINDOW)?);
        hashes.push(read_crc(dev, d + sumax::A_CRC)?.map_err(|e| bad(format!("array {i}: {e}")))?);
    }
    let geometry = SuMaxGeometry {
        hashes,
        depth,
        size_width: widths[0],
        delay_cells: delay_cells as u8,
        delay_width: delay.first().copied().unwrap_or(0),
        time_width: time,
        time_shift: small(time_shift, "time shift")?,
        delay_bins: DelayBinRule { base_ns, bins_per_octave: small(per_octave, "delay bins per octave")? },
    };
    geometry.validate().map_err(|e| bad(e.to_string()))?;
    Ok(SuMaxBlock { base, geometry, windows })
}

#[cfg(test)]
mod tests {
    use super::*;
    use smartnic_contract::regs::layout::FirmwareInfo;
    use smartnic_contract::regs::Layout;

    /// An in-memory BAR with the contract's constant registers.
    struct Mem(Vec<u32>);

    impl RegisterAccess for Mem {
        fn bar_size(&self) -> u64 {
            4 * self.0.len() as u64
        }
        fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
            check_range(self.bar_size(), offset, 4)?;
            Ok(self.0[offset as usize / 4])
        }
        fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
            check_range(self.bar_size(), offset, 4)?;
            self.0[offset as usize / 4] = value;
            Ok(())
        }
    }

    const FW: FirmwareInfo =
        FirmwareInfo { device: 0x7038, version: 0x1_0003, build_time: 1_700_000_000, git_hash: 0xC0FFEE };

    fn device(t: &TowerGeometry, s: &SuMaxGeometry) -> (Mem, Layout) {
        let l = Layout::new(t, s);
        let mut m = Mem(vec![0; l.bar_size as usize / 4]);
        for (o, v) in l.constant_registers(FW, t, s) {
            m.write32(o, v).unwrap();
        }
        (m, l)
    }

    #[test]
    fn default_geometry_round_trips_through_the_registers() {
        let (t, s) = (TowerGeometry::sketchint_fpga(), SuMaxGeometry::nic_default());
        let (mut m, l) = device(&t, &s);
        let map = DeviceMap::discover(&mut m).unwrap();
        assert_eq!(
            map.firmware,
            FirmwareId { device: 0x7038, version: 0x1_0003, build_time: 1_700_000_000, git_hash: 0xC0FFEE }
        );
        let names: Vec<&str> = map.blocks.iter().map(BlockHeader::name).collect();
        assert_eq!(names, ["firmware-id", "stats", "epoch", "towersketch", "sumax"]);
        let tw = map.tower.as_ref().unwrap();
        assert_eq!(tw.geometry, t);
        assert_eq!(tw.mode, InsertMode::Cm);
        assert_eq!(tw.windows, l.tower_windows.iter().map(|w| w.base).collect::<Vec<_>>());
        let sm = map.sumax.as_ref().unwrap();
        assert_eq!(sm.geometry, s);
        assert_eq!(sm.windows, l.sumax_windows.iter().map(|w| w.base).collect::<Vec<_>>());
        assert_eq!(map.epoch, l.block(block_type::EPOCH).unwrap().base);
        assert_eq!(map.window_words(), (1 << 16) + (1 << 15) + (1 << 14) + 3 * 8192 * 11);
        assert!(map.describe().contains("towersketch"));
    }

    #[test]
    fn odd_geometries_round_trip_too() {
        let mut t = TowerGeometry::from_widths_depths(&[(2, 1000), (4, 300), (8, 77), (16, 5), (32, 1)]);
        t.arrays[1].hash =
            CrcParams { poly: 0x1EDC_6F41, init: 0, xorout: 0x1234, refin: true, refout: false };
        let mut s = SuMaxGeometry::with_depth(1, 3);
        (s.delay_cells, s.delay_width, s.time_width, s.time_shift) = (13, 12, 24, 7);
        s.delay_bins = DelayBinRule { base_ns: 250, bins_per_octave: 4 };
        let (mut m, _) = device(&t, &s);
        m.write32(0x300 + tower::MODE, InsertMode::Acu as u32).unwrap();
        let map = DeviceMap::discover(&mut m).unwrap();
        assert_eq!(map.tower.as_ref().unwrap().geometry, t);
        assert_eq!(map.tower.unwrap().mode, InsertMode::Acu);
        assert_eq!(map.sumax.unwrap().geometry, s);
    }

    fn small() -> (Mem, Layout) {
        device(&TowerGeometry::from_widths_depths(&[(8, 64), (16, 32)]), &SuMaxGeometry::with_depth(2, 16))
    }

    #[test]
    fn broken_chains_are_named() {
        let (mut m, _) = small();
        m.write32(0x200 + header::NEXT, 0x100).unwrap();
        let e = DeviceMap::discover(&mut m).unwrap_err();
        assert!(matches!(e, BlockError::Loop { at: 0x200, next: 0x100 }), "{e}");
        assert!(e.to_string().contains("loop"));

        let (mut m, _) = small();
        m.write32(0x100 + header::NEXT, 0x202).unwrap();
        assert!(matches!(
            DeviceMap::discover(&mut m),
            Err(BlockError::Misaligned { at: 0x100, next: 0x202 })
        ));

        let (mut m, l) = small();
        m.write32(header::NEXT, l.bar_size - 8).unwrap();
        let e = DeviceMap::discover(&mut m).unwrap_err();
        assert!(matches!(e, BlockError::OutOfRange { at: 0, .. }), "{e}");

        let (mut m, _) = small();
        m.write32(header::TYPE, 0x1234).unwrap();
        assert!(matches!(DeviceMap::discover(&mut m), Err(BlockError::NotFirmwareId { found: 0x1234 })));

        let (mut m, _) = small();
        m.write32(0x300 + header::VERSION, 0x0002_0000).unwrap();
        let e = DeviceMap::discover(&mut m).unwrap_err();
        assert!(e.to_string().contains("version 2.0"), "{e}");

        let (mut m, _) = small();
        m.write32(0x400 + header::TYPE, block_type::TOWER).unwrap();
        assert!(matches!(
            DeviceMap::discover(&mut m),
            Err(BlockError::Duplicate { first: 0x300, second: 0x400, .. })
        ));

        let (mut m, _) = small();
        m.write32(0x100 + header::NEXT, 0x300).unwrap(); // skips the epoch block
        assert!(matches!(DeviceMap::discover(&mut m), Err(BlockError::Missing("epoch"))));
    }

    #[test]
    fn a_vanished_device_is_device_gone_not_a_chain_error() {
        let (mut m, _) = small();
        m.0.fill(u32::MAX);
        let e = DeviceMap::discover(&mut m).unwrap_err();
        assert!(matches!(e, BlockError::Access(AccessError::DeviceGone { offset: 0 })), "{e}");
    }

    #[test]
    fn unknown_blocks_are_skipped() {
        let (mut m, _) = small();
        // Insert an unknown block at 0x800 between stats and epoch.
        m.write32(0x100 + header::NEXT, 0x800).unwrap();
        m.write32(0x800 + header::TYPE, 0x5A5A_0001).unwrap();
        m.write32(0x800 + header::VERSION, 0x0009_0000).unwrap();
        m.write32(0x800 + header::NEXT, 0x200).unwrap();
        let map = DeviceMap::discover(&mut m).unwrap();
        assert_eq!(map.blocks.len(), 6);
        assert_eq!(map.blocks[2].name(), "unknown");
    }

    #[test]
    fn bad_descriptors_are_rejected() {
        let (mut m, _) = small();
        let tw = 0x300 + tower::ARRAY0;
        m.write32(tw + tower::A_WIDTH, 40).unwrap();
        let e = DeviceMap::discover(&mut m).unwrap_err();
        assert!(e.to_string().contains("width 40"), "{e}");

        let (mut m, _) = small();
        m.write32(tw + tower::A_CRC + crc::POLY, 0x04C1_1DB6).unwrap();
        let e = DeviceMap::discover(&mut m).unwrap_err().to_string();
        assert!(e.contains("towersketch block at 0x300: array 0: CRC polynomial 0x04c11db6"), "{e}");

        let (mut m, _) = small();
        m.write32(tw + tower::A_CRC + crc::FLAGS, 4).unwrap();
        assert!(DeviceMap::discover(&mut m).unwrap_err().to_string().contains("reserved bits"));

        let (mut m, _) = small();
        m.write32(0x300 + tower::MODE, 1).unwrap();
        assert!(DeviceMap::discover(&mut m).unwrap_err().to_string().contains("insertion mode 1"));

        let (mut m, _) = small();
        m.write32(0x400 + sumax::CELL_WIDTHS, 0x1010_0820).unwrap();
        assert!(DeviceMap::discover(&mut m).unwrap_err().to_string().contains("cell widths"));

        let (mut m, _) = small();
        m.write32(0x300 + tower::ARRAYS, 9).unwrap();
        assert!(DeviceMap::discover(&mut m).unwrap_err().to_string().contains("9 arrays"));
    }

    /// A window outside the BAR is reported against the block that describes it: its name
    /// and its own address, with the window's address in the message.
    #[test]
    fn a_bad_window_names_its_block_not_the_window_base() {
        let (mut m, l) = small();
        let bad = l.bar_size - 16;
        m.write32(0x300 + tower::ARRAY0 + tower::ARRAY_STRIDE + tower::A_WINDOW, bad).unwrap();
        let e = DeviceMap::discover(&mut m).unwrap_err();
        assert!(matches!(e, BlockError::Invalid { block: "towersketch", at: 0x300, .. }), "{e}");
        let msg = e.to_string();
        let want =
            format!("towersketch block at 0x300: towersketch array 1 window at {bad:#x}: register access");
        assert!(msg.starts_with(&want), "{msg}");

        let (mut m, _) = small();
        m.write32(0x400 + sumax::ARRAY0 + sumax::ARRAY_STRIDE + sumax::A_WINDOW, 6).unwrap();
        let e = DeviceMap::discover(&mut m).unwrap_err();
        assert!(matches!(e, BlockError::Invalid { block: "sumax", at: 0x400, .. }), "{e}");
        assert!(e
            .to_string()
            .contains("sumax array 1 window at 0x6: register offset 0x6 is not 32-bit aligned"));
    }

    /// Overlaps blame the block whose window lands on the other range, by its own address.
    #[test]
    fn an_overlapping_window_names_its_block() {
        let (mut m, l) = small();
        let onto = l.tower_windows[1].base;
        m.write32(0x400 + sumax::ARRAY0 + sumax::A_WINDOW, onto).unwrap();
        let e = DeviceMap::discover(&mut m).unwrap_err();
        assert!(matches!(e, BlockError::Invalid { block: "sumax", at: 0x400, .. }), "{e}");
        assert!(e.to_string().contains(&format!("sumax array 0 window at {onto:#x} overlaps")), "{e}");

        // A window placed over a block header (the epoch block at 0x200).
        let (mut m, _) = small();
        m.write32(0x300 + tower::ARRAY0 + tower::A_WINDOW, 0x1F0).unwrap();
        let e = DeviceMap::discover(&mut m).unwrap_err();
        assert!(matches!(e, BlockError::Invalid { block: "towersketch", at: 0x300, .. }), "{e}");
        assert!(
            e.to_string().contains("epoch block at 0x200 overlaps towersketch array 0 window at 0x1f0"),
            "{e}"
        );
    }

    /// Windows are typed: Tower arrays first, then SuMax arrays, each with its block's
    /// name in its text and the counter widths its words are packed with.
    #[test]
    fn windows_are_typed_by_the_array_they_hold() {
        let (mut m, l) = small();
        let map = DeviceMap::discover(&mut m).unwrap();
        let kinds: Vec<WindowKind> = map.windows().iter().map(|w| w.kind).collect();
        use WindowKind::{SuMaxArray, TowerArray};
        assert_eq!(kinds, [TowerArray(0), TowerArray(1), SuMaxArray(0), SuMaxArray(1)]);
        let w = map.windows();
        assert_eq!((w[1].base, w[1].len, w[1].words()), (l.tower_windows[1].base, 4 * 32, 32));
        assert_eq!((w[3].base, w[3].len), (l.sumax_windows[1].base, 4 * 16 * 11));

        assert_eq!(TowerArray(1).to_string(), "towersketch array 1 window");
        assert_eq!(SuMaxArray(0).to_string(), "sumax array 0 window");
        assert_eq!(TowerArray(3).array(), "towersketch array 3");
        assert_eq!((SuMaxArray(2).block(), SuMaxArray(2).index()), ("sumax", 2));
        assert_eq!(TowerArray(0).block_type(), block_type::TOWER);

        assert_eq!(map.counter_widths(TowerArray(1)), Some(vec![16]));
        let cells = map.sumax.as_ref().unwrap().geometry.cell_widths();
        assert_eq!(map.counter_widths(SuMaxArray(1)), Some(cells));
        assert_eq!(map.counter_widths(TowerArray(2)), None);
        assert_eq!(map.counter_widths(SuMaxArray(2)), None);
        let line = format!("{:#08x}  sumax array 1 window, {} bytes\n", w[3].base, w[3].len);
        assert!(map.describe().ends_with(&line), "{}", map.describe());
    }

    /// Hostile SuMax geometry registers are refused by the contract's validation, named by
    /// field: a time shift that pushes the time cells past the 64-bit timestamp, zero or
    /// too many delay cells, zero widths, zero depth.
    #[test]
    fn hostile_sumax_geometry_registers_are_named() {
        let cases: [(u32, u32, &str); 7] = [
            (sumax::TIME_SHIFT, 62, "time_shift 62"),
            (sumax::TIME_SHIFT, 63, "time_shift 63"),
            (sumax::TIME_SHIFT, 255, "time_shift 255"),
            (sumax::TIME_SHIFT, 256, "time shift 256 does not fit 8 bits"),
            (sumax::DEPTH, 0, "SuMax depth must be at least 1"),
            (sumax::CELLS, 3, "delay_cells 0"),
            (sumax::CELL_WIDTHS, 0x1010_1000, "size_width 0"),
        ];
        for (reg, value, named) in cases {
            let (mut m, _) = small();
            m.write32(0x400 + reg, value).unwrap();
            let e = DeviceMap::discover(&mut m).unwrap_err();
            assert!(matches!(e, BlockError::Invalid { block: "sumax", at: 0x400, .. }), "{named}: {e}");
            assert!(e.to_string().contains(named), "{named}: {e}");
        }
    }
}
