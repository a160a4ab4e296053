//! One epoch read out of a device (a board or the simulated NIC) into a directory of epoch
//! files, `DIR/epoch-NNNNNN.snap`: what `smartnic device readout --every` and the simulator
//! replay ([`crate::simulator`]) write each epoch, before [`crate::manifest`] lists them.

use anyhow::Context;
use smartnic_driver::access::RegisterAccess;
use smartnic_driver::blocks::DeviceMap;
use smartnic_driver::readout::{read_snapshot, ReadoutConfig, ReadoutStats};
use smartnic_driver::snapshot::Snapshot;
use std::path::{Path, PathBuf};

/// One epoch read out of a device into a directory of epoch files.
pub struct EpochFile {
    /// `DIR/epoch-NNNNNN.snap`, named by the epoch the snapshot holds.
    pub path: PathBuf,
    pub snapshot: Snapshot,
    pub stats: ReadoutStats,
}

/// Swaps banks, reads the idle one out and writes it as `dir/epoch-NNNNNN.snap`
/// (`smartnic device readout --every`, `smartnic sim run`).
///
/// The name needs the epoch the snapshot holds, so the snapshot stays in memory until it
/// is known and is then written once by [`Snapshot::write_file`], which is atomic and
/// removes its own temporary file when the write fails: no file of a failed write is
/// left in `dir` (a temporary file renamed afterwards would be, when that rename fails).
pub fn read_epoch_file<A: RegisterAccess + ?Sized>(
    dev: &mut A,
    map: &DeviceMap,
    cfg: &ReadoutConfig,
    dir: &Path,
) -> anyhow::Result<EpochFile> {
    let (snapshot, stats) =
        read_snapshot(dev, map, cfg).context("readout failed; no snapshot was written")?;
    let path = dir.join(format!("epoch-{:06}.snap", snapshot.epoch));
    snapshot
        .write_file(&path)
        .with_context(|| format!("epoch {} was read out but its snapshot was not written", snapshot.epoch))?;
    Ok(EpochFile { path, snapshot, stats })
}

#[cfg(test)]
mod tests {
    use super::*;
    use smartnic_contract::geometry::{SuMaxGeometry, TowerGeometry};
    use smartnic_contract::regs::layout::FirmwareInfo;
    use smartnic_driver::emulated::EmulatedNic;

    /// A device in its power-on state, its register map and a readout configuration.
    fn nic() -> (EmulatedNic, DeviceMap, ReadoutConfig) {
        let (t, s) = (TowerGeometry::sketchint_fpga(), SuMaxGeometry::with_depth(3, 8));
        let mut dev = EmulatedNic::new(FirmwareInfo::default(), &t, &s);
        let map = DeviceMap::discover(&mut dev).unwrap();
        (dev, map, ReadoutConfig::default())
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into())
            .collect();
        v.sort();
        v
    }

    /// An epoch file whose name is taken by a directory: the error names the file, and
    /// nothing is left beside the directory (no temporary file of the readout).
    #[test]
    fn an_epoch_file_that_cannot_be_written_leaves_nothing_behind() {
        let (mut dev, map, cfg) = nic();
        let first = tempfile::tempdir().unwrap();
        let ok = read_epoch_file(&mut dev, &map, &cfg, first.path()).unwrap();
        let name = ok.path.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(names(first.path()), std::slice::from_ref(&name));
        assert_eq!(Snapshot::read_file(&ok.path).unwrap(), ok.snapshot);

        // A fresh device reads out the same epoch, into a directory where that name is taken.
        let (mut dev, map, cfg) = nic();
        let blocked = tempfile::tempdir().unwrap();
        std::fs::create_dir(blocked.path().join(&name)).unwrap();
        let Err(e) = read_epoch_file(&mut dev, &map, &cfg, blocked.path()) else {
            panic!("an epoch file was written over a directory");
        };
        let err = format!("{e:#}");
        assert!(err.contains(&name) && err.contains("is a directory"), "{err}");
        assert_eq!(names(blocked.path()), [name]);
    }
}
