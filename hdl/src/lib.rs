//! rust-hdl circuits of the SmartNIC: one block per module, each beside its tests, and the
//! Verilog generator.
pub use smartnic_contract as contract;
