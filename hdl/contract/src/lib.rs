//! The SmartNIC device contract.
//!
//! Everything that two sides of the system must agree on is defined here exactly once:
//! the hardware generator (`smartnic-hdl`), the driver and the host software models all use
//! these definitions, and the checked-in test vectors under `vectors/` pin them so that a
//! change is visible in review. (The switch-side P4 programs of `p4/` are not written yet.)
//!
//! | module | what it fixes |
//! |---|---|
//! | [`board`] | the VC709 board top's ports and pins, its XDC, the BPI flash and the Si5324 start-up sequence |
//! | [`frame`] | EtherTypes, header field byte ranges, skipped IPv6 extension headers and the parsers' limits |
//! | [`key`] | the 13-byte flow key and the IPv6 folding rule |
//! | [`hash`] | the CRC-32 hash family, one parameter set per array, and index reduction |
//! | [`interval`] | the inter-arrival rule of SuMax's max cells (backwards time counts as 0) |
//! | [`geometry`] | sketch geometries (TowerSketch, SuMax, baselines) and their paper defaults |
//! | [`lut`] | LUT contents for log2/exp2 and the multiplicative encoder |
//! | [`packing`] | the counter packing rule (LSB-first bit fields) of readout windows, snapshots and the software sketches |
//! | [`per_switch`] | per-switch telemetry: the hop key, the latency tower, the inflated-latency rule, the flow-key table |
//! | [`regs`] | register-block type IDs and the block header layout |
//! | [`shim`] | the telemetry shim header switches add and the NIC strips (kept at [`wire::shim`]) |
//! | [`snapshot`] | identifiers and layout constants of the snapshot file |
//! | [`vectors`] | the shared test-vector file format |
//! | [`wire`] | header views, reprs and the one frame builder: every frame is read and built through them |
//! | [`xdma`] | the PCIe DMA engine's card-to-host registers, descriptor and writeback (PG195) |

pub mod board;
pub mod frame;
pub mod geometry;
pub mod hash;
pub mod interval;
pub mod key;
pub mod lut;
pub mod packing;
pub mod per_switch;
pub mod regs;
pub mod snapshot;
pub mod vectors;
pub mod wire;
pub mod xdma;

pub use wire::shim;

pub use geometry::{ArrayGeometry, InsertMode, SuMaxGeometry, TowerGeometry};
pub use hash::CrcParams;
pub use key::{FlowKey, KEY_LEN};
