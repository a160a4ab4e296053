//! Register map: Corundum-style register blocks, so the driver discovers what a bitstream
//! contains instead of assuming it. Each block starts with a three-word header
//! (type, version, next-pointer); the chain starts at BAR offset 0 with the firmware-ID
//! block and ends at a next-pointer of 0. Offsets are bytes from the start of the BAR.
//!
//! The block bodies are below, one module each; [`layout`] places the blocks and the
//! readout windows for a given geometry, so the HDL generator, the driver and the
//! simulated device derive the same map. Registers are 32 bits; a 64-bit counter is two
//! words, low first: read high, low, high again and retry if the high word moved.
//!
//! Readout windows map the idle bank's counters one per 32-bit word (zero-extended), in
//! counter order; for SuMax, bucket `b` cell `c` is word `b * cells + c`.

pub mod layout;
pub use layout::{Layout, Placed};

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
    pub const PER_SWITCH: u32 = 0x534E_0040;
    pub const STREAM: u32 = 0x534E_0050;
}

/// Version word of every block defined by this contract revision (major.minor as 16.16).
pub const BLOCK_VERSION: u32 = 0x0001_0000;

/// Firmware-ID block body.
pub mod firmware_id {
    /// PCI-style device identifier of the bitstream's design.
    pub const DEVICE: u32 = 0xC;
    /// Design version (16.16; the generated design reports `smartnic_hdl::regs::map::FW_VERSION`).
    pub const VERSION: u32 = 0x10;
    /// Build timestamp, seconds since the Unix epoch.
    pub const BUILD_TIME: u32 = 0x14;
    /// First 32 bits of the git commit of the generator.
    pub const GIT_HASH: u32 = 0x18;
    /// Size of the block body in bytes.
    pub const SIZE: u32 = 0x20;
}

/// Statistics block body: 64-bit frame counters since reset (lo, hi word pairs).
/// `SKETCHED + NON_IP + MALFORMED = FRAMES` always holds. Every frame is counted once,
/// when its last beat has been parsed, in all the counters that apply to it.
pub mod stats {
    /// Frames received (every class).
    pub const FRAMES: u32 = 0x10;
    /// Frames whose flow key entered the sketches (IPv4/IPv6, well formed, `tuser` low).
    pub const SKETCHED: u32 = 0x18;
    /// Sum of the frames' lengths as delivered by the MAC (every class; no FCS, no
    /// preamble), so a wire-rate figure adds 24 bytes per frame.
    pub const BYTES: u32 = 0x20;
    /// Frames that are not IPv4/IPv6 (ARP, LLDP, ...): counted, not sketched.
    pub const NON_IP: u32 = 0x28;
    /// Runts, truncated headers and frames with `tuser` (MAC error) set.
    pub const MALFORMED: u32 = 0x30;
    pub const SIZE: u32 = 0x38;
}

/// Epoch block body: two banks per sketch, one active (recording) and one idle (readable).
pub mod epoch {
    /// Write-only. Bit 0 SWAP: the idle bank becomes active, the active one idle once the
    /// packets already in the pipeline have landed. Bit 1 CLEAR: zero the idle bank (and
    /// IDLE_PACKETS). A packet's bank is fixed when it enters, so a swap splits the stream
    /// exactly. Overlaps: a SWAP while SWAP_PENDING and a CLEAR while CLEAR_BUSY are
    /// ignored; a CLEAR during a drain starts when the drain ends; a SWAP during a clear
    /// waits for the clear (no packet enters a bank being cleared); both bits in one write
    /// mean clear, then swap.
    pub const CONTROL: u32 = 0x10;
    pub const CONTROL_SWAP: u32 = 1 << 0;
    pub const CONTROL_CLEAR: u32 = 1 << 1;
    /// Bit 0 SWAP_PENDING (draining in-flight packets), bit 1 CLEAR_BUSY. The other bits
    /// read 0, so a STATUS of all ones always means a lost device.
    pub const STATUS: u32 = 0x14;
    pub const STATUS_SWAP_PENDING: u32 = 1 << 0;
    pub const STATUS_CLEAR_BUSY: u32 = 1 << 1;
    /// Number of the active epoch; the active bank is `EPOCH & 1`, and after a swap the
    /// idle bank holds epoch `EPOCH - 1`. Wraps at 2^32.
    pub const EPOCH: u32 = 0x18;
    /// Incremented by every completed swap and every completed clear (wrapping at 2^32): a
    /// readout that sees the same value before and after read a consistent idle bank.
    pub const SEQUENCE: u32 = 0x1C;
    /// Packets recorded in the idle bank's epoch (64-bit); 0 after a clear.
    pub const IDLE_PACKETS: u32 = 0x20;
    /// Packets recorded so far in the active epoch (64-bit).
    pub const ACTIVE_PACKETS: u32 = 0x28;
    pub const SIZE: u32 = 0x30;
}

/// A CRC parameter set as registers (used by the sketch blocks, per array).
pub mod crc {
    pub const POLY: u32 = 0x0;
    pub const INIT: u32 = 0x4;
    pub const XOROUT: u32 = 0x8;
    /// Bit 0 refin, bit 1 refout.
    pub const FLAGS: u32 = 0xC;
    pub const SIZE: u32 = 0x10;
}

/// TowerSketch block body, then one array descriptor per array.
pub mod tower {
    /// Insertion mode (`InsertMode as u8`), read/write: 0 CM, 2 ACU. Live state (not in
    /// `Layout::constant_registers`); the hardware must make it readable.
    pub const MODE: u32 = 0x10;
    pub const ARRAYS: u32 = 0x14;
    pub const ARRAY0: u32 = 0x20;
    pub const ARRAY_STRIDE: u32 = 0x20;
    /// Offsets inside an array descriptor.
    pub const A_WIDTH: u32 = 0x0;
    pub const A_DEPTH: u32 = 0x4;
    /// BAR offset of the array's readout window.
    pub const A_WINDOW: u32 = 0x8;
    pub const A_CRC: u32 = 0x10;
}

/// SuMax block body, then one array descriptor per array.
pub mod sumax {
    pub const DEPTH: u32 = 0x10;
    pub const ARRAYS: u32 = 0x14;
    /// Cells per bucket.
    pub const CELLS: u32 = 0x18;
    pub const TIME_SHIFT: u32 = 0x1C;
    pub const DELAY_BASE_NS: u32 = 0x20;
    pub const DELAY_BINS_PER_OCTAVE: u32 = 0x24;
    /// Cell widths, one byte per cell, four per word (cell 0 in bits 7:0), up to 16 cells.
    pub const CELL_WIDTHS: u32 = 0x28;
    pub const MAX_CELLS: usize = 16;
    pub const ARRAY0: u32 = 0x40;
    pub const ARRAY_STRIDE: u32 = 0x20;
    pub const A_WINDOW: u32 = 0x8;
    pub const A_CRC: u32 = 0x10;
}

/// Per-switch block body (SketchINT's per-flow per-switch half): the latency tower's and
/// the flow-key table's configuration and geometry, the record stream, then one descriptor
/// per latency array and per table way. Latency window `i` holds bucket `b`'s packet count
/// at word `2b` and its latency sum at word `2b + 1`; table window `w` holds slot `s` as
/// [`per_switch::SLOT_WORDS`] words from word `SLOT_WORDS * s` (bits `32 j ..` of the
/// contract's slot packing, `crate::per_switch::slot`, in word `j`; an empty slot reads 0).
pub mod per_switch {
    /// Latency tower insertion mode, read/write: 0 CM, 2 ACU (as the tower's MODE).
    pub const MODE: u32 = 0x10;
    /// The inflated-latency threshold, read/write: `InflateRule::threshold` (the log2 of
    /// Delta_l in the contract's log domain), [`THRESHOLD_BITS`] bits.
    pub const INFLATE_THRESHOLD: u32 = 0x14;
    /// Read/write: a packet whose flow estimate is strictly above this offers its key.
    pub const TABLE_THRESHOLD: u32 = 0x18;
    /// Offers the idle bank's table refused for want of a free way (saturating).
    pub const TABLE_MISSES: u32 = 0x1C;
    /// 32-bit words waiting in the record stream.
    pub const RECORD_WORDS: u32 = 0x20;
    /// Records dropped because the stream's buffer was full, since reset.
    pub const RECORD_DROPPED: u32 = 0x24;
    /// Read-to-pop: the stream's head word, removed by the read (`wire::record` words,
    /// big-endian). A read of an empty stream returns 0 and removes nothing, so a reader
    /// pops exactly RECORD_WORDS words.
    pub const RECORD_POP: u32 = 0x28;
    /// Sum cells count units of `2^LATENCY_SHIFT` ns.
    pub const LATENCY_SHIFT: u32 = 0x2C;
    pub const LATENCY_ARRAYS: u32 = 0x30;
    pub const TABLE_WAYS: u32 = 0x34;
    /// Slots per way.
    pub const TABLE_DEPTH: u32 = 0x38;
    /// Bits of a slot (`crate::per_switch::slot::BITS`).
    pub const SLOT_BITS: u32 = 0x3C;
    /// Latency array descriptors (at most [`MAX_LATENCY_ARRAYS`]).
    pub const LAT0: u32 = 0x40;
    pub const LAT_STRIDE: u32 = 0x20;
    pub const MAX_LATENCY_ARRAYS: usize = 3;
    /// Way descriptors (at most [`MAX_WAYS`]), after the latency arrays'.
    pub const WAY0: u32 = LAT0 + LAT_STRIDE * MAX_LATENCY_ARRAYS as u32;
    pub const WAY_STRIDE: u32 = 0x20;
    pub const MAX_WAYS: usize = 2;
    /// Inside a latency array descriptor: the count width (bits 7:0) and the sum width
    /// (bits 15:8).
    pub const A_WIDTHS: u32 = 0x0;
    pub const A_DEPTH: u32 = 0x4;
    /// BAR offset of the array's or way's readout window (both descriptors).
    pub const A_WINDOW: u32 = 0x8;
    pub const A_CRC: u32 = 0x10;
    /// Packets whose INT hops the hop serializer refused since reset (saturating): its ring
    /// of captured records was full, which behind one port never happens and behind the
    /// board's four only above one hop a core clock on average. Such a packet is in the
    /// flow sketches but its hops are in neither the latency tower nor the records.
    pub const HOPS_REFUSED: u32 = WAY0 + WAY_STRIDE * MAX_WAYS as u32;
    pub const SIZE: u32 = HOPS_REFUSED + 4;
    /// Words of one latency bucket in its window (count, sum).
    pub const BUCKET_WORDS: u32 = 2;
    /// Words of one table slot in its window.
    pub const SLOT_WORDS: u32 = crate::per_switch::slot::BITS.div_ceil(32) as u32;
    /// Bits of INFLATE_THRESHOLD.
    pub const THRESHOLD_BITS: u32 = crate::lut::Log2Params::DEFAULT.frac as u32 + 6;
    const _: () = assert!(SIZE <= super::layout::BLOCK_SLOT && SLOT_WORDS == 12 && THRESHOLD_BITS == 22);
}

/// Readout-stream block body: the card-to-host channels. The readout engine writes the idle
/// bank of every window as one stream (`crate::wire::readout`) to channel 0, instead of one
/// register read per counter (while it runs, a window read over the BAR reads 0); the record
/// ring (RING_*) carries the record stream on channel 1.
pub mod stream {
    /// Write-only. Bit 0 START: stream the idle bank (ignored while BUSY). The host starts
    /// it after a swap has completed and clears the bank after the stream has ended.
    pub const CONTROL: u32 = 0x10;
    pub const CONTROL_START: u32 = 1 << 0;
    /// Bit 0 BUSY: a stream is being written. The other bits read 0.
    pub const STATUS: u32 = 0x14;
    pub const STATUS_BUSY: u32 = 1 << 0;
    /// Streams completed since reset (wrapping).
    pub const STREAMS: u32 = 0x18;
    /// 64-bit words of the last completed stream.
    pub const LAST_WORDS: u32 = 0x1C;
    /// Clocks of the last stream, from START to its last word accepted.
    pub const LAST_CLOCKS: u32 = 0x20;
    /// Clocks of the last stream in which the channel held a word back (`tready` low).
    pub const LAST_STALLS: u32 = 0x24;
    /// Read/write. Bit 0 ENABLE: the record stream leaves on its own card-to-host channel
    /// (the record ring, `crate::wire::record_ring`) as the NIC produces it, instead of
    /// waiting in the record buffer for RECORD_POP reads. While set (and after it is cleared,
    /// until the ring has sent the record it is in), RECORD_POP reads 0 and pops nothing.
    /// The NIC takes the bit between records, never inside one: set it with no record half
    /// popped (pop whole records, as RECORD_WORDS counts them), or the ring waits for that
    /// record's last words.
    pub const RING_CONTROL: u32 = 0x28;
    pub const RING_ENABLE: u32 = 1 << 0;
    /// 64-bit words the record ring's channel has accepted since reset (wrapping). The host
    /// takes exactly this many words from its ring, counted in the same numbering, so a
    /// readout never waits for a record that is still in the NIC and never splits one.
    pub const RING_WORDS: u32 = 0x2C;
    pub const SIZE: u32 = 0x30;
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
        PER_SWITCH => "per-switch",
        STREAM => "readout-stream",
        _ => return None,
    })
}
