//! The SmartNIC host library: bit-exact software sketches, traces, arithmetic models,
//! measurement tasks and reports. The `smartnic` binary is a thin CLI over it.
pub use smartnic_contract as contract;

pub mod arith;
pub mod cli;
pub mod eval;
#[doc(hidden)]
pub mod fuzz_bodies;
pub mod metrics;
pub mod sketch;
pub mod tasks;
pub mod trace;
