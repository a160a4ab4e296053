//! Parquet export: every epoch of every NIC as rows of three tables, one file per table,
//! device and epoch, in a directory any SQL engine over Parquet reads as three tables
//! (`smartnic fleet query` embeds DataFusion; Spark reads the same directory).
//!
//! # Layout
//!
//! ```text
//! DIR/flows/<device>/t<time_ns>-epoch-<n>.parquet
//! DIR/hops/<device>/t<time_ns>-epoch-<n>.parquet
//! DIR/health/<device>/t<time_ns>-epoch-<n>.parquet
//! ```
//!
//! `<device>` is the device's spec as a plain name (`collect::device_dir`); the readout
//! time comes first in a file name because a reset NIC's epoch numbers start over. Every
//! row carries its `device` and `epoch` (the directories are not Hive partitions, so no
//! engine has to infer a column from a path). A file is written under a temporary name
//! that does not end in `.parquet`, synced and renamed ([`write_durably`]): a reader that
//! takes `*.parquet` never sees half a file.
//!
//! # Tables
//!
//! Every integer is a signed 64-bit or 32-bit column: Spark has no unsigned types (it
//! reads an unsigned 64-bit Parquet column as a decimal), and no value here reaches 2^63.
//! Addresses are text (dotted IPv4, or IPv6 as `std::net` prints it), so a query compares
//! them with literals. A NULL is an answer the snapshot does not have.
//!
//! **flows**: one row per flow the snapshot knows (the key table's flows), the rows of
//! [`crate::export::ipfix::EpochRecords`]' flow records:
//!
//! | column | type | meaning |
//! |---|---|---|
//! | `device` | utf8 | the device spec |
//! | `epoch` | int64 | the NIC's epoch number |
//! | `time_ns` | int64 | readout time, ns since the Unix epoch |
//! | `src_ip`, `dst_ip` | utf8 | the flow's addresses |
//! | `src_port`, `dst_port` | int32 | its ports (0 for protocols without ports) |
//! | `proto` | int32 | IP protocol |
//! | `packets` | int64 | the flow sketch's packet estimate in the epoch |
//!
//! **hops**: one row per switch on each flow's path (the IPFIX hop records):
//!
//! | column | type | meaning |
//! |---|---|---|
//! | `device` ... `proto` | | as in flows |
//! | `switch_id` | int32 | switch ID from the INT stack |
//! | `hop_index` | int32 | position on the path, 1 = first |
//! | `hop_packets` | int64, null | the latency tower's packet count of the (flow, switch) pair; NULL without an estimate |
//! | `avg_latency_ns` | int64, null | the pair's average latency, ns; NULL without an estimate |
//!
//! **health**: one row per device and epoch, written by the collector also when the
//! readout failed (a one-shot export from a file has only the snapshot's part):
//!
//! | column | type | meaning |
//! |---|---|---|
//! | `device`, `epoch`, `time_ns` | | as above (`epoch` NULL when no snapshot was read) |
//! | `snapshot_packets` | int64, null | packets the snapshot's epoch recorded |
//! | `frames`, `sketched`, `bytes`, `non_ip`, `malformed` | int64, null | the NIC's frame counters since reset |
//! | `records_dropped` | int64, null | records the NIC's record stream dropped since reset |
//! | `readout_ok` | boolean | a snapshot was read out this epoch |
//! | `failure` | utf8, null | why not (`open`, `gone`, `readout`) |
//! | `readout_seconds` | float64, null | time to open and read out |

mod rows;
mod write;

pub use rows::{EpochRows, Health};
pub use write::{file_name, read_table, table_dir, ParquetStore, TABLES};

use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Schema, SchemaRef};

use smartnic_driver::snapshot::{temp_path, write_durably};

/// The columns every table starts with.
fn key_fields() -> Vec<Field> {
    vec![
        Field::new("device", DataType::Utf8, false),
        Field::new("epoch", DataType::Int64, false),
        Field::new("time_ns", DataType::Int64, false),
    ]
}

/// A flow's 5-tuple columns.
fn flow_fields() -> Vec<Field> {
    vec![
        Field::new("src_ip", DataType::Utf8, false),
        Field::new("dst_ip", DataType::Utf8, false),
        Field::new("src_port", DataType::Int32, false),
        Field::new("dst_port", DataType::Int32, false),
        Field::new("proto", DataType::Int32, false),
    ]
}

/// The `flows` table's schema.
pub fn flows_schema() -> SchemaRef {
    let mut f = key_fields();
    f.extend(flow_fields());
    f.push(Field::new("packets", DataType::Int64, false));
    Arc::new(Schema::new(f))
}

/// The `hops` table's schema.
pub fn hops_schema() -> SchemaRef {
    let mut f = key_fields();
    f.extend(flow_fields());
    f.extend([
        Field::new("switch_id", DataType::Int32, false),
        Field::new("hop_index", DataType::Int32, false),
        Field::new("hop_packets", DataType::Int64, true),
        Field::new("avg_latency_ns", DataType::Int64, true),
    ]);
    Arc::new(Schema::new(f))
}

/// The `health` table's schema (its `epoch` is NULL when the readout failed).
pub fn health_schema() -> SchemaRef {
    let mut f = vec![
        Field::new("device", DataType::Utf8, false),
        Field::new("epoch", DataType::Int64, true),
        Field::new("time_ns", DataType::Int64, false),
        Field::new("snapshot_packets", DataType::Int64, true),
    ];
    for name in ["frames", "sketched", "bytes", "non_ip", "malformed", "records_dropped"] {
        f.push(Field::new(name, DataType::Int64, true));
    }
    f.extend([
        Field::new("readout_ok", DataType::Boolean, false),
        Field::new("failure", DataType::Utf8, true),
        Field::new("readout_seconds", DataType::Float64, true),
    ]);
    Arc::new(Schema::new(f))
}

/// The schema of table `name` (one of [`TABLES`]).
pub fn schema_of(name: &str) -> Option<SchemaRef> {
    match name {
        "flows" => Some(flows_schema()),
        "hops" => Some(hops_schema()),
        "health" => Some(health_schema()),
        _ => None,
    }
}

/// Why an epoch could not be exported.
#[derive(Debug, thiserror::Error)]
pub enum ParquetError {
    #[error("building the {table} rows: {source}")]
    Arrow { table: &'static str, source: arrow::error::ArrowError },
    #[error("encoding {table} as Parquet: {source}")]
    Encode { table: &'static str, source: parquet::errors::ParquetError },
    #[error("reading {path}: {source}")]
    Read { path: String, source: parquet::errors::ParquetError },
    /// A file whose footer read but whose pages do not decode (truncated or corrupt data).
    #[error("decoding {path}: {source}")]
    Decode { path: String, source: arrow::error::ArrowError },
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("snapshot: {0}")]
    Snapshot(#[from] crate::sketch::snapshot::SectionError),
}

/// Writes `bytes` to `path` under a temporary name then renamed, synced when `durable`,
/// naming the file in the error.
fn write_file(path: &std::path::Path, bytes: &[u8], durable: bool) -> Result<(), ParquetError> {
    let io = |source| ParquetError::Io { path: path.display().to_string(), source };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    if durable {
        return write_durably(path, bytes).map_err(io);
    }
    let tmp = temp_path(path);
    std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path)).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(e)
    })
}
