//! The manifest of an `--epoch-packets` run (`sketch run`, `sim`): `manifest.json` in the
//! output directory, listing every epoch file with its packet count.
//!
//! Why: epoch files are written one by one as the trace is read, so a run that fails
//! mid-trace (a damaged capture, a lost simulator) leaves complete-looking epoch files
//! behind. The manifest is written last, atomically (temporary file, then rename), and a
//! stale one is removed before the first epoch is written: a directory with a manifest
//! holds exactly the epochs it lists, from one run that read the whole trace; a directory
//! without one holds a partial set.

use anyhow::Context;
use serde::Serialize;
use std::path::Path;

/// File name of the manifest inside the output directory.
pub const MANIFEST: &str = "manifest.json";

/// What `--help` says about the manifest (a macro so `concat!` can put it into help texts).
macro_rules! help {
    () => {
        "With --epoch-packets, manifest.json is written into the directory after the last \
         epoch (atomically): it lists the epoch files and their packet counts with \
         \"complete\": true. A directory without it holds a partial run (the trace was not \
         read to its end)."
    };
}
pub(crate) use help;

/// One epoch file of the run.
#[derive(Clone, Debug, Serialize)]
pub struct EpochEntry {
    /// File name inside the directory.
    pub file: String,
    pub epoch: u64,
    /// IP packets in the epoch.
    pub packets: u64,
}

/// The whole run.
#[derive(Clone, Debug, Serialize)]
pub struct Manifest {
    /// Always true: an incomplete run writes no manifest.
    pub complete: bool,
    pub trace: String,
    pub epoch_packets: u64,
    /// IP packets, non-IP and malformed frames of the whole trace.
    pub packets: u64,
    pub non_ip: u64,
    pub malformed: u64,
    pub epochs: Vec<EpochEntry>,
}

/// Removes the manifest a previous run left in `dir`, so that a failure of this run cannot
/// leave an old manifest describing a mix of old and new epoch files.
pub fn remove_stale(dir: &Path) -> anyhow::Result<()> {
    let path = dir.join(MANIFEST);
    match std::fs::remove_file(&path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("cannot remove the previous run's {}", path.display()))
        }
        _ => Ok(()),
    }
}

/// Writes `m` as `dir/manifest.json` through a temporary file and a rename.
pub fn write(dir: &Path, m: &Manifest) -> anyhow::Result<()> {
    let path = dir.join(MANIFEST);
    let tmp = dir.join(format!("{MANIFEST}.partial"));
    let text = serde_json::to_string_pretty(m)? + "\n";
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, &path).with_context(|| format!("cannot write {}", path.display()))
}

/// The file name of `path` (epoch files live directly in the manifest's directory).
pub fn file_name(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}
