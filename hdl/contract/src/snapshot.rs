//! Identifiers of the snapshot file. The codec, and with it the full layout, is
//! `smartnic_driver::snapshot`, which both the driver's readout and the host's software
//! sketches use to write the file.
//!
//! All integers little-endian; the file opens with [`MAGIC`] and [`VERSION`], then the
//! [`source`] byte and a reserved byte, and ends with a CRC-32C ([`CHECKSUM`]) of every byte
//! before it:
//! ```text
//! magic "SNICSNAP" | version u16 | source u8 | reserved u8 | epoch, time, firmware ID,
//! packets, section count | sections, each tagged with a `kind` u16 | crc32c u32
//! ```
//!
//! Version 2 added the per-switch section kinds ([`kind::LATENCY_TOWER`],
//! [`kind::KEY_TABLE`], [`kind::RECORDS`]); nothing else changed. A writer stamps the lowest
//! version that holds its sections, so a file of flow sketches alone stays version 1 and
//! readers of version 1 keep reading it.

/// File magic.
pub const MAGIC: [u8; 8] = *b"SNICSNAP";
/// Newest format version of this contract revision (what a file with per-switch
/// sections carries).
pub const VERSION: u16 = 2;
/// Oldest format version a reader of this revision still decodes.
pub const MIN_VERSION: u16 = 1;
/// The first version whose files may hold the per-switch kinds.
pub const PER_SWITCH_VERSION: u16 = 2;

/// Sketch kinds a snapshot section can hold.
pub mod kind {
    pub const TOWER: u16 = 1;
    pub const SUMAX: u16 = 2;
    /// Per-switch latency tower (`crate::per_switch::LatencyTowerGeometry`), version 2.
    pub const LATENCY_TOWER: u16 = 3;
    /// Flow-key table of heavy flows (`crate::per_switch::KeyTableGeometry`), version 2.
    pub const KEY_TABLE: u16 = 4;
    /// The drained record stream (`crate::wire::record`), version 2.
    pub const RECORDS: u16 = 5;
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
