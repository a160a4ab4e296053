//! Verilator models of the generated Verilog, driven from Rust.
//!
//! A test asks for a block by name (or passes its own generated Verilog), gets a [`Model`]
//! and drives it cycle by cycle:
//!
//! ```no_run
//! use smartnic_sim_tb::Model;
//! let mut m = Model::of_block("hash").unwrap(); // generate, verilate (cached), dlopen
//! let (key, key_valid, hash) = (m.port("key"), m.port("key_valid"), m.port("hash"));
//! m.reset(2);
//! m.set(key, 0x0a00_0001_0a00_0002_04d2_0050_06);
//! m.set(key_valid, 1);
//! m.tick_n(2);
//! println!("{:08x}", m.get(hash));
//! ```
//!
//! [`simbar::SimBar`] is the driver's Verilator back end: a model with an AXI4-Lite port
//! as a `smartnic_driver::access::RegisterAccess`; [`simnic::SimNic`] is the whole simulated
//! NIC (the core top with a packet source on its AXI-Stream port) behind the same trait;
//! [`xdma::XdmaModel`] is a behavioural model of the board's PCIe DMA engine's card-to-host
//! channels (registers, descriptors, writebacks, back-pressure), no Verilog;
//! [`capture::CaptureModel`] is the hop capture as its own model, run in lockstep in front
//! of the blocks that take its records;
//! [`simnic_dma`] puts it at the end of the simulated NIC's two card-to-host channels, so
//! the driver reads the NIC out by DMA with its own descriptor code.
//!
//! Models are built by [`build::build_model`] into `target/verilator/<block>-<hash>/` (see
//! there for the cache) as a shared library with a small generated C++ harness. If Verilator
//! is not installed the build returns an error naming the package to install; tests
//! `unwrap` it and fail.
pub use smartnic_contract as contract;

pub mod build;
pub mod capture;
pub mod frames;
pub mod model;
pub mod pipe;
pub mod simbar;
pub mod simnic;
pub mod simnic_dma;
pub mod xdma;

pub use build::{build_block, build_model, Dir, ModelBuild, Port};
pub use model::{Model, PortId};
pub use pipe::Pipe;
