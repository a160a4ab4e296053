//! The per-switch block (contract `regs::per_switch`): the latency tower's and the flow-key
//! table's geometry, their readout windows, and the half's live configuration (mode and
//! thresholds), decoded from the registers alone like the flow sketches' blocks.

use super::{check_body, hardware_mode, read_crc, BlockError};
use crate::access::RegisterAccess;
use smartnic_contract::geometry::InsertMode;
use smartnic_contract::per_switch::{
    slot, KeyTableGeometry, LatencyArray, LatencyTowerGeometry, PerSwitchGeometry,
};
use smartnic_contract::regs::per_switch::*;

/// The block's name in every message that blames it.
pub(super) const NAME: &str = "per-switch";

/// The per-switch half's read/write registers: what the datapath runs with now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PerSwitchConfig {
    /// The latency tower's insertion mode (CM or ACU).
    pub mode: InsertMode,
    /// INFLATE_THRESHOLD: `InflateRule::threshold`, the log2 of Delta_l in the contract's
    /// log domain.
    pub inflate_threshold: u32,
    /// TABLE_THRESHOLD: a flow whose estimate is strictly above this offers its key.
    pub table_threshold: u32,
}

/// The per-switch block: geometry, configuration at discovery and the windows' offsets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PerSwitchBlock {
    pub base: u32,
    pub geometry: PerSwitchGeometry,
    /// The configuration when the device was discovered (the readout reads the mode and
    /// table threshold again, since they can be changed between readouts).
    pub config: PerSwitchConfig,
    /// BAR offset of each latency array's window (bucket `b`: count at word `2b`, sum at
    /// word `2b + 1`).
    pub latency_windows: Vec<u32>,
    /// BAR offset of each table way's window (slot `s`: [`SLOT_WORDS`] words from word
    /// `SLOT_WORDS * s`).
    pub table_windows: Vec<u32>,
}

impl PerSwitchBlock {
    /// The widths of a table window's words in turn (the contract's
    /// [`smartnic_contract::wire::readout::slot_word_widths`]): packing a window's words with
    /// them is the section's slot packing, and a word with a bit above its width is a
    /// corrupt window.
    pub fn slot_word_widths() -> Vec<u8> {
        smartnic_contract::wire::readout::slot_word_widths()
    }
}

/// Reads the mode and thresholds of the block at `base`; a mode other than CM or ACU is
/// refused naming the block.
pub fn read_config<A: RegisterAccess + ?Sized>(
    dev: &mut A,
    base: u32,
) -> Result<PerSwitchConfig, BlockError> {
    let mode = read_mode(dev, base)?;
    let inflate_threshold = dev.read32_live(base + INFLATE_THRESHOLD)?;
    let table_threshold = dev.read32(base + TABLE_THRESHOLD)?;
    Ok(PerSwitchConfig { mode, inflate_threshold, table_threshold })
}

/// MODE as an insertion mode (0 CM, 2 ACU; the tower's rule).
pub fn read_mode<A: RegisterAccess + ?Sized>(dev: &mut A, base: u32) -> Result<InsertMode, BlockError> {
    let raw = dev.read32_live(base + MODE)?;
    hardware_mode(raw).ok_or_else(|| BlockError::Invalid {
        block: NAME,
        at: base,
        what: format!("MODE at {:#x} reads {raw}, not CM (0) or ACU (2)", base + MODE),
    })
}

/// Decodes the per-switch block at `base`: counts within the block's descriptor slots,
/// SLOT_BITS equal to the contract's, every descriptor valid (the contract's geometry
/// validation), each fault named with the block and the register's offset.
pub fn read_per_switch<A: RegisterAccess + ?Sized>(
    dev: &mut A,
    base: u32,
) -> Result<PerSwitchBlock, BlockError> {
    let bad = |what: String| BlockError::Invalid { block: NAME, at: base, what };
    check_body(dev, NAME, base, SIZE)?;
    let slot_bits = dev.read32_live(base + SLOT_BITS)?;
    if slot_bits as u64 != slot::BITS {
        return Err(bad(format!(
            "SLOT_BITS at {:#x} reads {slot_bits}, this driver reads {}-bit slots",
            base + SLOT_BITS,
            slot::BITS
        )));
    }
    let arrays = count(dev, base, LATENCY_ARRAYS, "LATENCY_ARRAYS", MAX_LATENCY_ARRAYS)?;
    let ways = count(dev, base, TABLE_WAYS, "TABLE_WAYS", MAX_WAYS)?;
    let (latency, latency_windows) = read_latency(dev, base, arrays)?;
    let (table, table_windows) = read_table(dev, base, ways)?;
    // Each part validated on its own, so the message says which part an array belongs to.
    latency.validate().map_err(|e| bad(format!("latency tower: {e}")))?;
    table.validate().map_err(|e| bad(format!("key table: {e}")))?;
    let geometry = PerSwitchGeometry { latency, table };
    let config = read_config(dev, base)?;
    Ok(PerSwitchBlock { base, geometry, config, latency_windows, table_windows })
}

/// A descriptor count register: 1..=`max`.
fn count<A: RegisterAccess + ?Sized>(
    dev: &mut A,
    base: u32,
    reg: u32,
    name: &str,
    max: usize,
) -> Result<u32, BlockError> {
    let n = dev.read32_live(base + reg)?;
    if n == 0 || n as usize > max {
        let what = format!("{name} at {:#x} reads {n} (1..={max} fit the block)", base + reg);
        return Err(BlockError::Invalid { block: NAME, at: base, what });
    }
    Ok(n)
}

fn read_latency<A: RegisterAccess + ?Sized>(
    dev: &mut A,
    base: u32,
    n: u32,
) -> Result<(LatencyTowerGeometry, Vec<u32>), BlockError> {
    let bad = |what: String| BlockError::Invalid { block: NAME, at: base, what };
    let shift = dev.read32_live(base + LATENCY_SHIFT)?;
    let latency_shift = u8::try_from(shift)
        .map_err(|_| bad(format!("LATENCY_SHIFT at {:#x} reads {shift}", base + LATENCY_SHIFT)))?;
    let (mut arrays, mut windows) = (Vec::new(), Vec::new());
    for i in 0..n {
        let d = base + LAT0 + i * LAT_STRIDE;
        let widths = dev.read32_live(d + A_WIDTHS)?;
        if widths >> 16 != 0 {
            let at = d + A_WIDTHS;
            return Err(bad(format!(
                "latency array {i}: widths {widths:#x} at {at:#x} have reserved bits set"
            )));
        }
        let depth = dev.read32_live(d + A_DEPTH)?;
        windows.push(dev.read32_live(d + A_WINDOW)?);
        let hash = read_crc(dev, d + A_CRC)?.map_err(|e| bad(format!("latency array {i}: {e}")))?;
        let (count_width, sum_width) = (widths as u8, (widths >> 8) as u8);
        arrays.push(LatencyArray { count_width, sum_width, depth, hash });
    }
    Ok((LatencyTowerGeometry { arrays, latency_shift }, windows))
}

fn read_table<A: RegisterAccess + ?Sized>(
    dev: &mut A,
    base: u32,
    n: u32,
) -> Result<(KeyTableGeometry, Vec<u32>), BlockError> {
    let depth = dev.read32_live(base + TABLE_DEPTH)?;
    let (mut ways, mut windows) = (Vec::new(), Vec::new());
    for w in 0..n {
        let d = base + WAY0 + w * WAY_STRIDE;
        windows.push(dev.read32_live(d + A_WINDOW)?);
        let hash = read_crc(dev, d + A_CRC)?.map_err(|e| BlockError::Invalid {
            block: NAME,
            at: base,
            what: format!("table way {w}: {e}"),
        })?;
        ways.push(hash);
    }
    Ok((KeyTableGeometry { ways, depth }, windows))
}
