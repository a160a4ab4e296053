//! Register map: Corundum-style register blocks, so the driver discovers what a bitstream
//! contains instead of assuming it. Each block starts with a three-word header
//! (type, version, next-pointer); the chain starts at BAR offset 0 with the firmware-ID
//! block and ends at a next-pointer of 0. Offsets are bytes from the start of the BAR.
//!
//! Per-block register offsets beyond the header are defined with the blocks themselves.

/// Offsets inside every block header.
pub mod header {
    pub const TYPE: u32 = 0x0;
    pub const VERSION: u32 = 0x4;
    pub const NEXT: u32 = 0x8;
    /// First block-specific register.
    pub const BODY: u32 = 0xC;
}

/// Block type IDs ("SN" in the top half, a block number in the bottom half).
pub mod block_type {
    pub const FIRMWARE_ID: u32 = 0x534E_0001;
    pub const TOWER: u32 = 0x534E_0010;
    pub const SUMAX: u32 = 0x534E_0011;
    pub const EPOCH: u32 = 0x534E_0020;
    pub const STATS: u32 = 0x534E_0030;
    pub const READOUT: u32 = 0x534E_0040;
}

/// Version word of every block defined by this contract revision (major.minor as 16.16).
pub const BLOCK_VERSION: u32 = 0x0001_0000;

/// Firmware-ID block body.
pub mod firmware_id {
    /// PCI-style device identifier of the bitstream's design.
    pub const DEVICE: u32 = 0xC;
    /// Design version (16.16).
    pub const FW_VERSION: u32 = 0x10;
    /// Build timestamp, seconds since the Unix epoch.
    pub const BUILD_TIME: u32 = 0x14;
    /// First 32 bits of the git commit of the generator.
    pub const GIT_HASH: u32 = 0x18;
    /// Size of the block body in bytes.
    pub const SIZE: u32 = 0x20;
}

/// PCI vendor and device ID the bitstream presents (Xilinx vendor ID, our device).
pub const PCI_VENDOR_ID: u16 = 0x10EE;
pub const PCI_DEVICE_ID: u16 = 0x7038;

/// The value a lost PCIe device returns for every read.
pub const DEVICE_GONE: u32 = u32::MAX;

/// Name of a block type, for tools that print what they found.
pub fn block_name(ty: u32) -> Option<&'static str> {
    use block_type::*;
    Some(match ty {
        FIRMWARE_ID => "firmware-id",
        TOWER => "towersketch",
        SUMAX => "sumax",
        EPOCH => "epoch",
        STATS => "stats",
        READOUT => "readout",
        _ => return None,
    })
}
