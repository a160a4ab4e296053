//! Identifiers of the snapshot file (the codec lives in `smartnic-driver::snapshot`, which
//! both the driver's readout and the host's software sketches use to write it).
//!
//! Layout, all integers little-endian:
//! ```text
//! magic "SNICSNAP" | version u16 | flags u16 | header fields ... | sections ... | crc32c u32
//! ```
//! The trailing CRC-32C covers every byte before it.

/// File magic.
pub const MAGIC: [u8; 8] = *b"SNICSNAP";
/// Format version written by this contract revision.
pub const VERSION: u16 = 1;

/// Sketch kinds a snapshot section can hold.
pub mod kind {
    pub const TOWER: u16 = 1;
    pub const SUMAX: u16 = 2;
}

/// Where a snapshot's counters came from.
pub mod source {
    pub const SOFTWARE: u8 = 0;
    pub const SIMULATOR: u8 = 1;
    pub const HARDWARE: u8 = 2;
}

/// CRC-32C (Castagnoli, reflected) parameters of the file checksum.
pub const CHECKSUM: crate::hash::CrcParams = crate::hash::CrcParams {
    poly: 0x1EDC_6F41,
    init: 0xFFFF_FFFF,
    xorout: 0xFFFF_FFFF,
    refin: true,
    refout: true,
};
