//! The SmartNIC host library: bit-exact software sketches, traces, arithmetic models,
//! measurement tasks and reports. The `smartnic` binary is a thin CLI over it.
//!
//! | module | what |
//! |---|---|
//! | [`trace`] | pcap/pcapng readers, the frame parser (frame -> flow key), the seeded generator and its ground truth |
//! | [`sketch`] | bit-exact software sketches (TowerSketch, SuMax) and the baselines; snapshot sections to and from sketches |
//! | [`arith`] | bit-exact models of the NIC's lookup-table arithmetic |
//! | [`tasks`] | measurement tasks answered from sketch counters |
//! | [`metrics`] | accuracy metrics as the papers define them (ARE, AAE, RE, WMRE) |
//! | [`eval`] | the accuracy lab: sketches of several kinds and sizes over one trace against the exact answers |
//! | [`parallel`] | independent pieces of work over threads, results in input order (the lab's pairs, MRAC's E step) |
//! | [`epoch_file`] | one epoch read out of a device into `DIR/epoch-NNNNNN.snap`, written once and atomically |
//! | [`manifest`] | `manifest.json`, the list of epoch files a complete `--epoch-packets` run wrote |
//! | [`simulator`] | the simulated NIC: start the `smartnic-sim` service, replay a trace through it epoch by epoch and read every epoch out over the driver |
//! | [`lab`] | the network lab: a discrete-event data-center network whose switches run the P4 twins; per-host captures and exact ground truth |
//! | [`demo`] | the end-to-end demo: generate a trace, run it through the simulated NIC (or software), compare every epoch with the bit-exact model |
//! | [`p4check`] | `scripts/p4-check`'s comparison of bmv2's output with the switch twins' (the `p4-compare` binary) |
//! | [`companion`] | the programs `smartnic` runs beside itself (the simulated NIC, the fleet's SQL engine): found, or an error that says how to build them |
//! | [`collect`] | the collector daemon: every device read out each epoch, snapshots kept, Prometheus metrics served |
//! | [`export`] | exports of each epoch's answers: IPFIX (RFC 7011) over UDP, Parquet tables |
//! | [`fleet`] | network-wide SQL over many NICs' Parquet epochs: the named queries and a synthetic fleet (the DataFusion engine is the `smartnic-fleet` binary, `host/fleet`; the same queries on Spark) |
//! | [`cli`] | the `smartnic` command line, one module per command |
pub use smartnic_contract as contract;

pub mod arith;
pub mod cli;
pub mod collect;
pub mod companion;
pub mod demo;
pub mod epoch_file;
pub mod eval;
pub mod export;
pub mod fleet;
#[doc(hidden)]
pub mod fuzz_bodies;
pub mod lab;
pub mod manifest;
pub mod metrics;
pub mod p4check;
pub mod parallel;
pub mod simulator;
pub mod sketch;
pub mod tasks;
pub mod trace;
