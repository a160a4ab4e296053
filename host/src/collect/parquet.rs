//! The Parquet sink: every epoch of the device as rows of the flows, hops and health tables
//! ([`crate::export::parquet`]), under the directory `smartnic fleet query` reads.
//!
//! An epoch without a snapshot (the device was gone, the readout failed) still writes its
//! health row, so the fleet's tables show the gap instead of hiding it.

use super::{EpochReport, Sink};
use crate::export::parquet::{EpochRows, Health, ParquetStore};
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

/// Writes each epoch's tables under one directory.
pub struct ParquetSink(ParquetStore);

impl ParquetSink {
    pub fn new(dir: PathBuf) -> anyhow::Result<Self> {
        std::fs::create_dir_all(&dir)
            .map_err(|e| anyhow::anyhow!("--parquet {}: cannot create the directory: {e}", dir.display()))?;
        Ok(ParquetSink(ParquetStore::new(dir)))
    }
}

/// The device's health in this epoch, from the readout's outcome.
pub fn health_of(report: &EpochReport) -> Health {
    let o = report.outcome;
    Health {
        frames: o.frames.map(|f| f.frames),
        sketched: o.frames.map(|f| f.sketched),
        bytes: o.frames.map(|f| f.bytes),
        non_ip: o.frames.map(|f| f.non_ip),
        malformed: o.frames.map(|f| f.malformed),
        records_dropped: o.stats.as_ref().and_then(|s| s.records_dropped).map(u64::from),
        failure: o.failure.as_ref().map(|(f, _)| f.name().to_string()),
        readout_seconds: Some(o.elapsed.as_secs_f64()),
    }
}

impl Sink for ParquetSink {
    fn name(&self) -> &'static str {
        "parquet"
    }

    fn publish(&mut self, report: &EpochReport) -> anyhow::Result<()> {
        let health = health_of(report);
        let rows = match &report.outcome.snapshot {
            Some(snap) => EpochRows::from_snapshot(report.device, snap, None, health)?,
            None => {
                let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
                EpochRows::failed(report.device, now, health)
            }
        };
        self.0.write_epoch(&rows)?;
        Ok(())
    }
}
