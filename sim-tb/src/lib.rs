//! Verilator models of the generated Verilog, driven from Rust.
pub use smartnic_contract as contract;
