//! The collector's snapshot files: one directory per device, every file written durably
//! and atomically, the `keep` newest kept.
//!
//! A file is named `t<time_ns>-epoch-<epoch>.snap` by the readout's wall-clock time (20
//! digits, so names sort in time) and the epoch it holds: a device that was reset counts its
//! epochs from 0 again, and a name by epoch alone would then replace a retained file.
//!
//! A write goes to `<name>.tmp-snapshot` beside the final name, is flushed to the disk
//! (`fsync`), renamed, and the directory is flushed so the rename survives a power cut. A
//! failed write (a full disk, a read-only file system) removes its temporary file and
//! leaves every retained file as it was; retention runs only after a write succeeded, so a
//! disk that is full never costs an older snapshot. Temporary files of a collector that was
//! killed are removed when the directory is opened.

use anyhow::Context;
use smartnic_driver::snapshot::{write_durably, Snapshot, TEMP_SUFFIX};
use std::path::{Path, PathBuf};

/// What a snapshot file's name ends with.
const SUFFIX: &str = ".snap";

/// One device's directory of snapshots.
#[derive(Debug)]
pub struct Store {
    dir: PathBuf,
    keep: usize,
}

impl Store {
    /// Opens (creating it if needed) `dir`, keeping the `keep` newest snapshots (at least 1),
    /// and removes temporary files an interrupted collector left.
    pub fn open(dir: &Path, keep: usize) -> anyhow::Result<Store> {
        anyhow::ensure!(keep >= 1, "--keep must be at least 1");
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        for stale in list(dir, TEMP_SUFFIX)? {
            std::fs::remove_file(&stale)
                .with_context(|| format!("cannot remove the stale temporary file {}", stale.display()))?;
        }
        Ok(Store { dir: dir.to_owned(), keep })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file name a snapshot is kept under.
    pub fn file_name(snap: &Snapshot) -> String {
        format!("t{:020}-epoch-{:06}{SUFFIX}", snap.time_ns, snap.epoch)
    }

    /// Writes `snap` durably under its name, then removes the oldest files beyond `keep`;
    /// returns the new file's path. A name already taken is refused, never replaced.
    pub fn write(&self, snap: &Snapshot) -> anyhow::Result<PathBuf> {
        let path = self.dir.join(Self::file_name(snap));
        anyhow::ensure!(!path.exists(), "{} exists already; it is kept as it is", path.display());
        write_durably(&path, &snap.encode()).with_context(|| {
            format!("epoch {} was read out but {} was not written", snap.epoch, path.display())
        })?;
        self.prune()?;
        Ok(path)
    }

    /// The retained snapshots, oldest first.
    pub fn retained(&self) -> anyhow::Result<Vec<PathBuf>> {
        list(&self.dir, SUFFIX)
    }

    /// Removes the oldest snapshots beyond `keep`.
    fn prune(&self) -> anyhow::Result<()> {
        let files = self.retained()?;
        let extra = files.len().saturating_sub(self.keep);
        for old in &files[..extra] {
            std::fs::remove_file(old).with_context(|| format!("cannot remove {}", old.display()))?;
        }
        Ok(())
    }
}

/// The files of `dir` whose names end with `suffix`, sorted by name.
fn list(dir: &Path, suffix: &str) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let e = e.with_context(|| format!("cannot list {}", dir.display()))?;
        if e.file_name().to_string_lossy().ends_with(suffix) {
            out.push(e.path());
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sketch::snapshot::software_snapshot;

    fn snap(epoch: u64, time_ns: u64) -> Snapshot {
        Snapshot { time_ns, ..software_snapshot(&[], epoch, epoch * 10).unwrap() }
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into())
            .collect();
        v.sort();
        v
    }

    /// Retention keeps exactly the `keep` newest, by readout time (a reset device's epoch
    /// 0 after epoch 7 is newer), and a stale temporary file is gone at open.
    #[test]
    fn retention_keeps_exactly_the_newest() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t1-epoch-000001.snap.tmp-snapshot"), b"half").unwrap();
        let store = Store::open(dir.path(), 3).unwrap();
        assert!(names(dir.path()).is_empty(), "the stale temporary file was kept");
        for (i, epoch) in [5u64, 6, 7, 0, 1].into_iter().enumerate() {
            store.write(&snap(epoch, 1_000 + i as u64)).unwrap();
        }
        let kept = names(dir.path());
        assert_eq!(kept.len(), 3, "{kept:?}");
        let epochs: Vec<u64> =
            store.retained().unwrap().iter().map(|p| Snapshot::read_file(p).unwrap().epoch).collect();
        assert_eq!(epochs, [7, 0, 1]);
    }

    /// A name that exists is never replaced.
    #[test]
    fn a_taken_name_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), 2).unwrap();
        let first = store.write(&snap(3, 9)).unwrap();
        let before = std::fs::read(&first).unwrap();
        let mut again = snap(3, 9);
        again.packets = 12345;
        let e = format!("{:#}", store.write(&again).unwrap_err());
        assert!(e.contains("exists already"), "{e}");
        assert_eq!(std::fs::read(&first).unwrap(), before);
    }
}
