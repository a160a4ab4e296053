//! Exports of each epoch's answers in the formats operators' systems already read.
//!
//! | module | format |
//! |---|---|
//! | [`ipfix`] | IPFIX (RFC 7011) over UDP: per-flow and per-(flow, switch) records of an epoch |
//! | [`parquet`] | Parquet files per device and epoch: flows, hops and health tables, for SQL engines |
//!
//! An exporter is a library type, independent of how epochs arrive: the one-shot
//! `smartnic snapshot export` and the collector daemon feed it the same snapshots.

pub mod ipfix;
pub mod parquet;
