//! The Rust side of the register block: everything the circuit decodes, computed from the
//! contract's [`Layout`] (never typed by hand), and the software reference the tests and
//! the simulated BAR compare against.
use smartnic_contract::geometry::{SuMaxGeometry, TowerGeometry};
use smartnic_contract::per_switch::PerSwitchGeometry;
use smartnic_contract::regs::layout::{FirmwareInfo, Placed, WINDOWS_BASE};
use smartnic_contract::regs::{block_type, epoch, per_switch, stats, stream, tower, Layout, PCI_DEVICE_ID};

/// Word-address bits of the control area (the first [`WINDOWS_BASE`] bytes), which the
/// constant lookup decodes.
pub const CTRL_WORD_BITS: usize = 10;
const _: () = assert!(WINDOWS_BASE == 4 << CTRL_WORD_BITS);

/// Width of `win_sel`: up to 16 readout windows.
pub const SEL_BITS: usize = 4;

/// Design version the generated register block reports (16.16).
pub const FW_VERSION: u32 = 0x0001_0000;

/// The firmware ID of the generated design: the contract's PCI device ID, [`FW_VERSION`],
/// build time and git hash 0 (the generator is deterministic; a board build passes its own
/// [`FirmwareInfo`]).
pub fn default_firmware() -> FirmwareInfo {
    FirmwareInfo { device: PCI_DEVICE_ID as u32, version: FW_VERSION, build_time: 0, git_hash: 0 }
}

/// A live (read-only) register of the block, fed by an input port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Live {
    /// Statistics counter `n` (frames, sketched, bytes, non_ip, malformed), `hi` word or low.
    Stat {
        n: usize,
        hi: bool,
    },
    Status,
    Epoch,
    Sequence,
    IdlePackets {
        hi: bool,
    },
    ActivePackets {
        hi: bool,
    },
    Mode,
    /// The per-switch block's registers (contract `regs::per_switch`): the read/write
    /// MODE and thresholds read back, the rest fed by ports.
    PsMode,
    InflateThreshold,
    TableThreshold,
    TableMisses,
    RecordWords,
    RecordDropped,
    HopsRefused,
    /// Read-to-pop: the read takes the stream's head word.
    RecordPop,
    /// The readout-stream block (contract `regs::stream`), fed by the engine's ports.
    StreamStatus,
    StreamCount,
    StreamWords,
    StreamClocks,
    StreamStalls,
    /// The record ring (contract `regs::stream::RING_*`): ENABLE read back, and the words
    /// its channel accepted.
    RingControl,
    RingWords,
}

/// Names of the statistics input ports, in register order.
pub const STAT_PORTS: [&str; 5] = ["frames", "sketched", "bytes", "non_ip", "malformed"];
const STAT_OFFSETS: [u32; 5] =
    [stats::FRAMES, stats::SKETCHED, stats::BYTES, stats::NON_IP, stats::MALFORMED];

/// The decoded register map of one configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegMap {
    pub layout: Layout,
    pub firmware: FirmwareInfo,
    /// `Layout::constant_registers`: `(byte offset, value)`, sorted.
    pub constants: Vec<(u32, u32)>,
    /// Live registers: `(byte offset, what)`.
    pub live: Vec<(u32, Live)>,
    /// Byte offset of epoch CONTROL (write only, reads 0).
    pub control: u32,
    /// Byte offset of the readout-stream block's CONTROL (write only, reads 0).
    pub stream_control: u32,
    /// Byte offset of the tower MODE register (read/write).
    pub mode: u32,
    /// Readout windows in `win_sel` order: tower arrays, SuMax arrays, latency arrays,
    /// table ways (`Layout::windows`).
    pub windows: Vec<Placed>,
}

impl RegMap {
    /// The map of a bitstream with the flow sketches `t`, `s` and the per-switch half `p`.
    pub fn new(
        fw: FirmwareInfo,
        t: &TowerGeometry,
        s: &SuMaxGeometry,
        p: &PerSwitchGeometry,
    ) -> Result<Self, String> {
        if p.latency.arrays.len() > per_switch::MAX_LATENCY_ARRAYS
            || p.table.ways.len() > per_switch::MAX_WAYS
        {
            return Err(format!(
                "{} latency arrays and {} ways: the per-switch block describes at most {} and {}",
                p.latency.arrays.len(),
                p.table.ways.len(),
                per_switch::MAX_LATENCY_ARRAYS,
                per_switch::MAX_WAYS
            ));
        }
        let layout = Layout::with_per_switch(t, s, p);
        let constants = layout.constant_registers(fw, t, s);
        if let Some(&(off, _)) = constants.iter().find(|c| c.0 >= WINDOWS_BASE) {
            return Err(format!("constant register {off:#x} lies outside the control area"));
        }
        let base = |ty| layout.block(ty).map(|b| b.base).ok_or(format!("layout has no block {ty:#x}"));
        let (sb, eb, tb) = (base(block_type::STATS)?, base(block_type::EPOCH)?, base(block_type::TOWER)?);
        let (pb, stb) = (base(block_type::PER_SWITCH)?, base(block_type::STREAM)?);
        let mut live = Vec::new();
        for (n, &off) in STAT_OFFSETS.iter().enumerate() {
            live.push((sb + off, Live::Stat { n, hi: false }));
            live.push((sb + off + 4, Live::Stat { n, hi: true }));
        }
        live.extend([
            (eb + epoch::STATUS, Live::Status),
            (eb + epoch::EPOCH, Live::Epoch),
            (eb + epoch::SEQUENCE, Live::Sequence),
            (eb + epoch::IDLE_PACKETS, Live::IdlePackets { hi: false }),
            (eb + epoch::IDLE_PACKETS + 4, Live::IdlePackets { hi: true }),
            (eb + epoch::ACTIVE_PACKETS, Live::ActivePackets { hi: false }),
            (eb + epoch::ACTIVE_PACKETS + 4, Live::ActivePackets { hi: true }),
            (tb + tower::MODE, Live::Mode),
            (pb + per_switch::MODE, Live::PsMode),
            (pb + per_switch::INFLATE_THRESHOLD, Live::InflateThreshold),
            (pb + per_switch::TABLE_THRESHOLD, Live::TableThreshold),
            (pb + per_switch::TABLE_MISSES, Live::TableMisses),
            (pb + per_switch::RECORD_WORDS, Live::RecordWords),
            (pb + per_switch::RECORD_DROPPED, Live::RecordDropped),
            (pb + per_switch::HOPS_REFUSED, Live::HopsRefused),
            (pb + per_switch::RECORD_POP, Live::RecordPop),
            (stb + stream::STATUS, Live::StreamStatus),
            (stb + stream::STREAMS, Live::StreamCount),
            (stb + stream::LAST_WORDS, Live::StreamWords),
            (stb + stream::LAST_CLOCKS, Live::StreamClocks),
            (stb + stream::LAST_STALLS, Live::StreamStalls),
            (stb + stream::RING_CONTROL, Live::RingControl),
            (stb + stream::RING_WORDS, Live::RingWords),
        ]);
        let (control, mode, stream_control) = (eb + epoch::CONTROL, tb + tower::MODE, stb + stream::CONTROL);
        for &(off, _) in &live {
            if constants.iter().any(|c| c.0 == off) || off == control || off == stream_control {
                return Err(format!("live register {off:#x} is also a constant or CONTROL"));
            }
        }
        let windows = layout.windows();
        if windows.len() > 1 << SEL_BITS {
            return Err(format!("{} readout windows; win_sel has {SEL_BITS} bits", windows.len()));
        }
        Ok(RegMap { layout, firmware: fw, constants, live, control, stream_control, mode, windows })
    }

    /// The board's configuration: SketchINT's FPGA tower, the NIC SuMax, the NIC's
    /// per-switch half, [`default_firmware`].
    pub fn nic_default() -> Self {
        let (t, s, p) =
            (TowerGeometry::sketchint_fpga(), SuMaxGeometry::nic_default(), PerSwitchGeometry::nic_default());
        Self::new(default_firmware(), &t, &s, &p).expect("the default map decodes")
    }

    /// The offset of live register `what`.
    pub fn live_offset(&self, what: Live) -> Option<u32> {
        self.live.iter().find(|l| l.1 == what).map(|l| l.0)
    }

    /// Address bits the AXI4-Lite port needs to cover the BAR.
    pub fn addr_bits(&self) -> usize {
        self.layout.bar_size.trailing_zeros() as usize
    }

    /// The constant at `offset`, if any.
    pub fn constant(&self, offset: u32) -> Option<u32> {
        self.constants.binary_search_by_key(&offset, |c| c.0).ok().map(|i| self.constants[i].1)
    }

    /// The live register at `offset`, if any.
    pub fn live_at(&self, offset: u32) -> Option<Live> {
        self.live.iter().find(|l| l.0 == offset).map(|l| l.1)
    }

    /// `(win_sel, win_index)` of a window word at byte `offset`, if it is one.
    pub fn window_of(&self, offset: u32) -> Option<(usize, u32)> {
        let off = offset & !3;
        self.windows
            .iter()
            .position(|w| off >= w.base && off < w.base + w.size)
            .map(|i| (i, (off - self.windows[i].base) / 4))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use smartnic_contract::regs::header;

    #[test]
    fn default_map_decodes_without_overlap() {
        let m = RegMap::nic_default();
        assert_eq!(m.addr_bits(), 22);
        assert_eq!(m.windows.len(), 11);
        assert_eq!(m.live.len(), 33);
        assert_eq!(m.constant(header::TYPE), Some(block_type::FIRMWARE_ID));
        assert_eq!(m.constant(smartnic_contract::regs::firmware_id::DEVICE), Some(0x7038));
        assert_eq!(m.window_of(m.windows[0].base), Some((0, 0)));
        assert_eq!(m.window_of(m.windows[5].base + 8), Some((5, 2)));
        assert_eq!(m.window_of(m.windows[0].base + m.windows[0].size), Some((1, 0)));
        assert_eq!(m.window_of(m.windows[5].base + m.windows[5].size), Some((6, 0)));
        assert_eq!(m.window_of(m.windows[10].base + 4 * 12 * 511 + 44), Some((10, 12 * 511 + 11)));
        assert_eq!(m.window_of(m.windows[10].base + m.windows[10].size), None);
        assert_eq!(m.window_of(0x10), None);
        for &(off, _) in &m.live {
            assert!(m.window_of(off).is_none() && off < WINDOWS_BASE);
        }
    }
}
