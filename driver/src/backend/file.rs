//! A BAR backed by a regular file: the register image of a device, for tests and fault
//! injection (edit the file, or poke it through the trait, and see what the driver says).
//!
//! The file is plain memory: writes stay, reads return what was written. It has no epoch
//! semantics of its own (a SWAP written to CONTROL just sits there); wrap it in
//! [`crate::emulated::EmulatedNic`] to get them. The per-switch half's read/write
//! registers (MODE, INFLATE_THRESHOLD, TABLE_THRESHOLD) are plain words too: an image made
//! by [`FileBar::create_device_with_per_switch`] starts at the register file's reset values,
//! and a configuration written through the trait stays in the file for the next process.
//! Do not shrink the file while it is mapped: reading past the new end raises SIGBUS.

use super::{MmapBar, OpenError};
use crate::access::{AccessError, RegisterAccess};
use crate::blocks::PerSwitchConfig;
use smartnic_contract::geometry::{SuMaxGeometry, TowerGeometry};
use smartnic_contract::per_switch::PerSwitchGeometry;
use smartnic_contract::regs::layout::FirmwareInfo;
use smartnic_contract::regs::{block_type, per_switch, Layout};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

/// A register image in a file, mapped read-write.
pub struct FileBar {
    bar: MmapBar,
    path: PathBuf,
}

impl FileBar {
    /// Maps an existing image; the BAR size is the file size.
    pub fn open(path: &Path) -> Result<Self, OpenError> {
        let file =
            OpenOptions::new().read(true).write(true).open(path).map_err(|e| OpenError::opening(path, e))?;
        let len = file.metadata().map_err(|source| OpenError::Io { path: path.to_owned(), source })?.len();
        Ok(FileBar { bar: MmapBar::map(&file, len, path)?, path: path.to_owned() })
    }

    /// Creates (or truncates) an image of `layout.bar_size` zero bytes holding `registers`
    /// (`(offset, value)` pairs, e.g. [`Layout::constant_registers`]) and maps it.
    pub fn create(path: &Path, layout: &Layout, registers: &[(u32, u32)]) -> Result<Self, OpenError> {
        let io = |source| OpenError::Io { path: path.to_owned(), source };
        let file = File::create(path).map_err(|e| OpenError::opening(path, e))?;
        file.set_len(layout.bar_size as u64).map_err(io)?;
        drop(file);
        let mut bar = Self::open(path)?;
        for &(offset, value) in registers {
            bar.write32(offset, value).map_err(|e| OpenError::Io {
                path: path.to_owned(),
                source: std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()),
            })?;
        }
        bar.flush()?;
        Ok(bar)
    }

    /// The image of a device with these geometries: the contract's layout and constant
    /// registers; counters, epoch state and windows all zero.
    pub fn create_device(
        path: &Path,
        fw: FirmwareInfo,
        tower: &TowerGeometry,
        sumax: &SuMaxGeometry,
    ) -> Result<Self, OpenError> {
        let layout = Layout::new(tower, sumax);
        Self::create(path, &layout, &layout.constant_registers(fw, tower, sumax))
    }

    /// The image of a device with the per-switch half too (`Layout::with_per_switch`): the
    /// constant registers, and the half's read/write registers at the register file's reset
    /// values ([`PerSwitchConfig::nic_default`]: CM, SketchINT's Delta_l = 5, the contract's
    /// default table threshold), so the image reads like a board just out of reset.
    pub fn create_device_with_per_switch(
        path: &Path,
        fw: FirmwareInfo,
        tower: &TowerGeometry,
        sumax: &SuMaxGeometry,
        half: &PerSwitchGeometry,
    ) -> Result<Self, OpenError> {
        let layout = Layout::with_per_switch(tower, sumax, half);
        let mut registers = layout.constant_registers(fw, tower, sumax);
        registers.extend(per_switch_resets(&layout));
        Self::create(path, &layout, &registers)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the mapping back to the file (so another process sees a consistent image).
    pub fn flush(&self) -> Result<(), OpenError> {
        self.bar.flush().map_err(|source| OpenError::Io { path: self.path.clone(), source })
    }
}

/// The per-switch block's live registers at reset, as `(offset, value)` pairs; none when
/// `layout` has no per-switch block.
fn per_switch_resets(layout: &Layout) -> Vec<(u32, u32)> {
    let Some(block) = layout.block(block_type::PER_SWITCH) else { return Vec::new() };
    let reset = PerSwitchConfig::nic_default();
    vec![
        (block.base + per_switch::MODE, reset.mode as u32),
        (block.base + per_switch::INFLATE_THRESHOLD, reset.inflate_threshold),
        (block.base + per_switch::TABLE_THRESHOLD, reset.table_threshold),
    ]
}

impl RegisterAccess for FileBar {
    fn bar_size(&self) -> u64 {
        self.bar.len()
    }
    fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
        self.bar.read32(offset)
    }
    fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
        self.bar.write32(offset, value)
    }
    fn read_block(&mut self, offset: u32, out: &mut [u32]) -> Result<(), AccessError> {
        self.bar.read_block(offset, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use smartnic_contract::regs::{block_type, header};

    fn small() -> (TowerGeometry, SuMaxGeometry) {
        (TowerGeometry::from_widths_depths(&[(8, 64), (16, 32)]), SuMaxGeometry::with_depth(2, 16))
    }

    #[test]
    fn created_image_holds_the_constant_registers_and_persists() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bar.img");
        let (t, s) = small();
        let fw = FirmwareInfo { device: 0x7038, version: 0x1_0002, build_time: 5, git_hash: 0xABCD };
        let mut bar = FileBar::create_device(&path, fw, &t, &s).unwrap();
        let layout = Layout::new(&t, &s);
        assert_eq!(bar.bar_size(), layout.bar_size as u64);
        for (off, v) in layout.constant_registers(fw, &t, &s) {
            assert_eq!(bar.read32(off).unwrap(), v, "register {off:#x}");
        }
        bar.write32(0x2000, 0xDEAD_BEEF).unwrap();
        bar.flush().unwrap();
        drop(bar);
        let raw = std::fs::read(&path).unwrap();
        assert_eq!(raw.len() as u32, layout.bar_size);
        assert_eq!(&raw[0x2000..0x2004], &0xDEAD_BEEFu32.to_le_bytes());
        let mut again = FileBar::open(&path).unwrap();
        assert_eq!(again.read32(header::TYPE).unwrap(), block_type::FIRMWARE_ID);
        assert_eq!(again.read32(0x2000).unwrap(), 0xDEAD_BEEF);
    }

    #[test]
    fn a_per_switch_image_starts_at_reset_and_keeps_a_written_configuration() {
        use crate::blocks::DeviceMap;
        use crate::config::{read_per_switch_config, write_per_switch_config};
        use smartnic_contract::geometry::InsertMode;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bar.img");
        let (t, s) = small();
        let half = PerSwitchGeometry::nic_default();
        let fw = FirmwareInfo { device: 0x7038, version: 0x1_0002, build_time: 5, git_hash: 0xABCD };
        let mut bar = FileBar::create_device_with_per_switch(&path, fw, &t, &s, &half).unwrap();
        let map = DeviceMap::discover(&mut bar).unwrap();
        let block = map.per_switch.as_ref().expect("the image has the per-switch block");
        assert_eq!(block.geometry, half);
        assert_eq!(block.config, PerSwitchConfig::nic_default());
        let cfg = PerSwitchConfig::from_ratio_x256(InsertMode::Acu, 3 * 256, 1500);
        assert_eq!(write_per_switch_config(&mut bar, &map, &cfg).unwrap(), cfg);
        bar.flush().unwrap();
        drop(bar);
        let mut again = FileBar::open(&path).unwrap();
        let map = DeviceMap::discover(&mut again).unwrap();
        assert_eq!(read_per_switch_config(&mut again, &map).unwrap(), cfg);
    }

    #[test]
    fn a_flow_sketch_image_has_no_per_switch_block() {
        let dir = tempfile::tempdir().unwrap();
        let (t, s) = small();
        let fw = FirmwareInfo { device: 0x7038, version: 0x1_0002, build_time: 5, git_hash: 0xABCD };
        let mut bar = FileBar::create_device(&dir.path().join("bar.img"), fw, &t, &s).unwrap();
        assert!(per_switch_resets(&Layout::new(&t, &s)).is_empty());
        assert!(crate::blocks::DeviceMap::discover(&mut bar).unwrap().per_switch.is_none());
    }

    #[test]
    fn accesses_outside_the_file_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bar.img");
        std::fs::write(&path, [0u8; 64]).unwrap();
        let mut bar = FileBar::open(&path).unwrap();
        assert!(matches!(bar.read32(64), Err(AccessError::OutOfRange { .. })));
        assert!(matches!(bar.write32(62, 0), Err(AccessError::Misaligned { .. })));
        let mut out = [0u32; 4];
        assert!(matches!(bar.read_block(56, &mut out), Err(AccessError::OutOfRange { .. })));
    }

    #[test]
    fn unusable_files_are_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty");
        std::fs::write(&empty, []).unwrap();
        assert!(matches!(FileBar::open(&empty), Err(OpenError::BadSize { len: 0, .. })));
        let odd = dir.path().join("odd");
        std::fs::write(&odd, [0u8; 6]).unwrap();
        assert!(matches!(FileBar::open(&odd), Err(OpenError::BadSize { len: 6, .. })));
        let missing = dir.path().join("missing");
        let e = FileBar::open(&missing).err().unwrap();
        assert!(matches!(e, OpenError::Io { .. }), "{e}");
        assert!(e.to_string().contains("missing"));
    }
}
