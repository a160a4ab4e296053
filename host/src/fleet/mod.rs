//! Network-wide SQL over many NICs' Parquet epochs ([`crate::export::parquet`]'s layout):
//! Apache DataFusion embedded, so one host needs nothing else; the same directory and the
//! same queries run on Apache Spark (`scripts/fleet-spark`) when a fleet outgrows one
//! machine.
//!
//! - the engine: `smartnic-fleet` (crate `host/fleet`), a binary of its own that
//!   `smartnic fleet query` runs ([`crate::companion`] finds it), so the NIC's CLI does not
//!   carry DataFusion.
//! - [`queries`]: the named questions an operator asks first (flow sizes across NICs,
//!   per-switch latency percentiles, per-switch heavy hitters, NIC health), written in the
//!   SQL both engines speak.
//! - [`synth`]: a synthetic fleet of any size, for the scale figures.

pub mod queries;
pub mod synth;
