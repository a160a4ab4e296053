//! Writing an epoch's tables: one Parquet file per table, each durable and atomic.

use std::path::{Path, PathBuf};

use arrow::record_batch::RecordBatch;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

use super::{write_file, EpochRows, ParquetError};
use crate::collect::device_dir;

/// The tables, in the order an epoch writes them (health last: a reader that sees an
/// epoch's health row finds its flows and hops already there).
pub const TABLES: [&str; 3] = ["flows", "hops", "health"];

/// `DIR/<table>/<device>/`.
pub fn table_dir(dir: &Path, table: &str, device: &str) -> PathBuf {
    dir.join(table).join(device_dir(device))
}

/// `t<time_ns>-epoch-<n>.parquet` (`epoch-none` for a failed readout's health row).
pub fn file_name(time_ns: u64, epoch: Option<u64>) -> String {
    match epoch {
        Some(e) => format!("t{time_ns:020}-epoch-{e}.parquet"),
        None => format!("t{time_ns:020}-epoch-none.parquet"),
    }
}

/// A directory of Parquet tables that epochs are appended to.
#[derive(Clone, Debug)]
pub struct ParquetStore {
    dir: PathBuf,
    /// Sync each file and its directory before going on (see [`ParquetStore::unsynced`]).
    durable: bool,
}

impl ParquetStore {
    /// A store whose every file survives a power loss once written.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        ParquetStore { dir: dir.into(), durable: true }
    }

    /// A store for data that can be made again (a synthetic fleet): files are still written
    /// under a temporary name and renamed, so no reader sees half a file, but not synced, which
    /// would cost two disk flushes per file.
    pub fn unsynced(dir: impl Into<PathBuf>) -> Self {
        ParquetStore { dir: dir.into(), durable: false }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes every table's rows of `rows` and returns the files, in [`TABLES`] order. A
    /// failure leaves the files written before it (each whole) and no partial file.
    pub fn write_epoch(&self, rows: &EpochRows) -> Result<Vec<PathBuf>, ParquetError> {
        let mut written = Vec::new();
        for table in TABLES {
            let Some(batch) = rows.batch(table) else { continue };
            let batch = batch.map_err(|source| ParquetError::Arrow { table, source })?;
            let path = table_dir(&self.dir, table, &rows.device).join(file_name(rows.time_ns, rows.epoch));
            write_file(&path, &encode(table, &batch)?, self.durable)?;
            written.push(path);
        }
        Ok(written)
    }
}

/// One batch as a whole Parquet file in memory (Snappy: every Parquet reader has it).
pub fn encode(table: &'static str, batch: &RecordBatch) -> Result<Vec<u8>, ParquetError> {
    let props = WriterProperties::builder().set_compression(Compression::SNAPPY).build();
    let enc = |source| ParquetError::Encode { table, source };
    let mut buf = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut buf, batch.schema(), Some(props)).map_err(enc)?;
    writer.write(batch).map_err(enc)?;
    writer.close().map_err(enc)?;
    Ok(buf)
}

/// Every row of `table` under `dir`, file by file in path order (the files a query reads:
/// `*.parquet` only, so temporary files are skipped). For tests and tools that want the
/// rows without an SQL engine.
pub fn read_table(dir: &Path, table: &str) -> Result<Vec<RecordBatch>, ParquetError> {
    let mut files = Vec::new();
    collect_files(&dir.join(table), &mut files)?;
    files.sort();
    let mut batches = Vec::new();
    for path in files {
        let name = path.display().to_string();
        let file =
            std::fs::File::open(&path).map_err(|source| ParquetError::Io { path: name.clone(), source })?;
        let reader = ParquetRecordBatchReaderBuilder::try_new(file)
            .and_then(|b| b.build())
            .map_err(|source| ParquetError::Read { path: name.clone(), source })?;
        for batch in reader {
            batches.push(batch.map_err(|source| ParquetError::Decode { path: name.clone(), source })?);
        }
    }
    Ok(batches)
}

/// The `*.parquet` files under `dir`, recursively (none when `dir` does not exist).
fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), ParquetError> {
    let io = |source| ParquetError::Io { path: dir.display().to_string(), source };
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io(e)),
    };
    for entry in entries {
        let path = entry.map_err(io)?.path();
        if path.is_dir() {
            collect_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "parquet") {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::Int64Array;
    use arrow::datatypes::{DataType, Field, Schema};

    use super::*;

    /// A file with a sound footer but damaged pages fails the read with its path, whether the
    /// damage shows while opening it or while decoding its pages: never a partial table.
    #[test]
    fn a_damaged_file_is_an_error_that_names_it() {
        let schema = Arc::new(Schema::new(vec![Field::new("bytes", DataType::Int64, false)]));
        let values = Int64Array::from_iter_values((0..4096).map(|i| i * 7919));
        let batch = RecordBatch::try_new(schema, vec![Arc::new(values)]).unwrap();
        let mut bytes = encode("flows", &batch).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("flows/nic/t1-epoch-0.parquet");
        write_file(&path, &bytes, false).unwrap();
        let rows: usize = read_table(dir.path(), "flows").unwrap().iter().map(|b| b.num_rows()).sum();
        assert_eq!(rows, 4096);

        // The data pages follow the 4-byte magic; the footer is the file's tail.
        let end = bytes.len() / 2;
        bytes[8..end].iter_mut().for_each(|b| *b ^= 0x5a);
        write_file(&path, &bytes, false).unwrap();
        let err = read_table(dir.path(), "flows").unwrap_err().to_string();
        assert!(err.contains("t1-epoch-0.parquet"), "{err}");
    }
}
