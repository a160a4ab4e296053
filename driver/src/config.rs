//! Configuring the device's read/write registers: the per-switch half's insertion mode,
//! inflated-latency threshold and table threshold. Every write is read back, so a device
//! that kept something else (a narrower register, a mode it does not implement) is an
//! error naming the register, never a silent difference between what the operator asked
//! for and what the datapath runs with.

use crate::access::{AccessError, RegisterAccess};
use crate::blocks::{read_config, BlockError, DeviceMap, PerSwitchConfig};
use smartnic_contract::geometry::InsertMode;
use smartnic_contract::lut::{log2_table, Log2Params};
use smartnic_contract::per_switch::{InflateRule, DEFAULT_TABLE_THRESHOLD};
use smartnic_contract::regs::per_switch::{INFLATE_THRESHOLD, MODE, TABLE_THRESHOLD, THRESHOLD_BITS};

/// Why the configuration was not applied.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error(transparent)]
    Access(#[from] AccessError),
    #[error(transparent)]
    Block(#[from] BlockError),
    #[error("the device has no per-switch block: this bitstream has no per-switch half to configure")]
    NoPerSwitch,
    #[error("insertion mode {0:?} is not one the per-switch half implements (CM or ACU)")]
    Mode(InsertMode),
    #[error("INFLATE_THRESHOLD {0:#x} does not fit the register's {THRESHOLD_BITS} bits")]
    ThresholdTooWide(u32),
    #[error("per-switch {register} at {offset:#x}: wrote {wrote:#x}, the device kept {read:#x}")]
    NotKept { register: &'static str, offset: u32, wrote: u32, read: u32 },
}

impl PerSwitchConfig {
    /// The configuration for `Delta_l = ratio_x256 / 256` (at least 1), the threshold in the
    /// contract's log domain (`InflateRule::from_ratio_x256` with the default log2 unit,
    /// the one the NIC's check uses).
    pub fn from_ratio_x256(mode: InsertMode, ratio_x256: u32, table_threshold: u32) -> Self {
        let p = Log2Params::DEFAULT;
        let rule = InflateRule::from_ratio_x256(&log2_table(p), p, ratio_x256);
        PerSwitchConfig { mode, inflate_threshold: rule.threshold, table_threshold }
    }

    /// The NIC's reset configuration: CM, SketchINT's Delta_l = 5 and the contract's
    /// default table threshold.
    pub fn nic_default() -> Self {
        Self::from_ratio_x256(InsertMode::Cm, InflateRule::SKETCHINT_RATIO_X256, DEFAULT_TABLE_THRESHOLD)
    }
}

/// Reads the per-switch half's configuration now.
pub fn read_per_switch_config<A: RegisterAccess + ?Sized>(
    dev: &mut A,
    map: &DeviceMap,
) -> Result<PerSwitchConfig, ConfigError> {
    let p = map.per_switch.as_ref().ok_or(ConfigError::NoPerSwitch)?;
    Ok(read_config(dev, p.base)?)
}

/// Writes `cfg` into the per-switch block, reads every register back and returns what the
/// device holds (equal to `cfg`, or an error naming the register that differs). A mode the
/// half does not implement or a threshold wider than its register is refused before any
/// write.
pub fn write_per_switch_config<A: RegisterAccess + ?Sized>(
    dev: &mut A,
    map: &DeviceMap,
    cfg: &PerSwitchConfig,
) -> Result<PerSwitchConfig, ConfigError> {
    let p = map.per_switch.as_ref().ok_or(ConfigError::NoPerSwitch)?;
    if cfg.mode == InsertMode::Cu {
        return Err(ConfigError::Mode(cfg.mode));
    }
    if cfg.inflate_threshold >> THRESHOLD_BITS != 0 {
        return Err(ConfigError::ThresholdTooWide(cfg.inflate_threshold));
    }
    let writes = [
        ("MODE", MODE, cfg.mode as u32),
        ("INFLATE_THRESHOLD", INFLATE_THRESHOLD, cfg.inflate_threshold),
        ("TABLE_THRESHOLD", TABLE_THRESHOLD, cfg.table_threshold),
    ];
    for &(_, reg, value) in &writes {
        dev.write32(p.base + reg, value)?;
    }
    // Read back through the block's decoder: a lost device is `DeviceGone`, a mode the
    // device cannot hold an error naming the block.
    let now = read_config(dev, p.base)?;
    let kept = [now.mode as u32, now.inflate_threshold, now.table_threshold];
    for ((register, reg, wrote), read) in writes.into_iter().zip(kept) {
        if read != wrote {
            return Err(ConfigError::NotKept { register, offset: p.base + reg, wrote, read });
        }
    }
    Ok(now)
}
