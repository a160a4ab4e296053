//! The SmartNIC driver: register access, discovery, readout and snapshot files.
pub use smartnic_contract as contract;
pub mod access;
pub mod backend;
pub mod blocks;
pub mod discover;
pub mod emulated;
pub mod readout;
pub mod service;
pub mod snapshot;
