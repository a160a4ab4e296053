//! `smartnic snapshot merge`: several snapshot files (NICs of a fleet, or runs over parts
//! of one stream) into one; what each section becomes is in [`crate::sketch::merge`].

use crate::sketch::merge::{merge_snapshots, MergeError};
use anyhow::{bail, Context};
use clap::Args;
use smartnic_driver::snapshot::{Section, Snapshot};
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Snapshot files of the same sketches (geometry, hash parameters, insertion mode).
    #[arg(required = true, num_args = 2.., value_name = "SNAPSHOT")]
    pub inputs: Vec<PathBuf>,
    /// Merged snapshot file (written whole or not at all; never one of the inputs).
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// Leave the SuMax sections out (they do not merge: see `snapshot merge --help`); a
    /// NIC's snapshots always hold one, so merging NICs' towers and per-switch halves needs
    /// this. The output then has no SuMax section.
    #[arg(long)]
    pub drop_sumax: bool,
}

/// What was merged, for `--json`.
#[derive(serde::Serialize)]
struct Summary {
    output: String,
    inputs: Vec<String>,
    sections: usize,
    per_switch_sections: usize,
    packets: u64,
}

pub fn run(args: &MergeArgs, json: bool) -> anyhow::Result<()> {
    refuse_overwriting_an_input(args)?;
    let snaps = args
        .inputs
        .iter()
        .map(|p| Snapshot::read_file(p).with_context(|| format!("cannot use snapshot {}", p.display())))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let snaps = if args.drop_sumax { snaps.into_iter().map(without_sumax).collect() } else { snaps };
    let merged = merge_snapshots(&snaps).map_err(|e| match e {
        MergeError::SuMax { .. } => anyhow::anyhow!("{e}; --drop-sumax merges the rest without them"),
        e => anyhow::anyhow!("{e} (snapshots numbered in the order given)"),
    })?;
    write_whole(&args.output, &merged.encode())?;
    let summary = Summary {
        output: args.output.display().to_string(),
        inputs: args.inputs.iter().map(|p| p.display().to_string()).collect(),
        sections: merged.sections.len(),
        per_switch_sections: merged.per_switch.len(),
        packets: merged.packets,
    };
    if json {
        return super::print_json(&summary);
    }
    println!(
        "merged {} snapshots ({} flow sections, {} per-switch sections, {} packets) into {}",
        summary.inputs.len(),
        summary.sections,
        summary.per_switch_sections,
        summary.packets,
        summary.output
    );
    Ok(())
}

/// `snap` less its SuMax sections.
fn without_sumax(mut snap: Snapshot) -> Snapshot {
    snap.sections.retain(|s| !matches!(s, Section::SuMax { .. }));
    snap
}

/// The output may not name an input: a failed or partial merge would lose it.
fn refuse_overwriting_an_input(args: &MergeArgs) -> anyhow::Result<()> {
    let Ok(out) = args.output.canonicalize() else { return Ok(()) };
    for p in &args.inputs {
        if p.canonicalize().is_ok_and(|p| p == out) {
            bail!("output {} is one of the inputs; choose another -o", args.output.display());
        }
    }
    Ok(())
}

/// Writes `bytes` to a temporary file beside `path` and renames it over `path`, so a
/// reader never sees a half-written snapshot.
fn write_whole(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let name = path.file_name().with_context(|| format!("output {} is not a file name", path.display()))?;
    let tmp = path.with_file_name(format!(".{}.tmp-{}", name.to_string_lossy(), std::process::id()));
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        anyhow::anyhow!("cannot move the merged snapshot to {}: {e}", path.display())
    })
}
