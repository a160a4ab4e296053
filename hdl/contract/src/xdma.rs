//! The host's view of the board's PCIe DMA engine: the DMA/Bridge Subsystem for PCI Express
//! (XDMA, product guide PG195) with its two AXI4-Stream card-to-host (C2H) channels, channel
//! 0 carrying the readout stream (`crate::wire::readout`) and channel 1 the record ring
//! (`crate::wire::record_ring`).
//!
//! Everything here is from PG195's register space and descriptor chapters, table by table
//! (the table names are cited on each item), and is used by both the driver
//! (`smartnic_driver::dma`) and the behavioural model of the engine (`smartnic_sim_tb::xdma`).
//!
//! ```text
//! DMA BAR offset = target << 12 | channel << 8 | register     (PG195 "Register Space")
//!   target 0x1  C2H Channel Registers (0x1)     identifier, control, status, completed count
//!   target 0x5  C2H SGDMA Registers (0x5)       first descriptor address, adjacent, credits
//!   target 0x6  SGDMA Common Registers (0x6)    descriptor credit mode
//!
//! descriptor (32 bytes, little-endian dwords)                 (PG195 "Descriptors")
//!   0x00  magic 0xAD4B [31:16] | Nxt_adj [13:8] | Control [7:0] (STOP, COMPLETED, EOP)
//!   0x04  Len [27:0]        bytes
//!   0x08  Src_adr lo/hi     C2H stream: the address of the descriptor's writeback
//!   0x10  Dst_adr lo/hi     host buffer
//!   0x18  Nxt_adr lo/hi     next descriptor
//!
//! C2H stream writeback (8 bytes)                              (PG195 "C2H Stream Writeback")
//!   0x00  WB magic 0x52B4 [31:16] | EOP [0]
//!   0x04  Length            bytes written by the descriptor
//! ```

/// The BAR of the DMA register space: with the PCIe to AXI4-Lite master on BAR0 (the
/// register file, `constraints/build.tcl`) and 32-bit BARs, the DMA is BAR1 (PG195 "Target
/// Bridge", its 32-bit BAR table; 64-bit BARs would put it at BAR2).
pub const DMA_BAR: u8 = 1;

/// Stride between the per-channel register groups of one target.
pub const CHANNEL_STRIDE: u32 = 0x100;
/// Bytes of the DMA register space the host maps (four targets' worth is far less; the
/// engine decodes 64 KiB: PG195 "Register Space").
pub const REG_SPACE: u64 = 0x1_0000;
/// The card-to-host channels the NIC uses: the readout stream and the record ring.
pub const READOUT_CHANNEL: u32 = 0;
pub const RING_CHANNEL: u32 = 1;
/// Card-to-host channels the NIC's engine is built with: the readout stream and the record
/// ring (the bitstream's `xdma_wnum_chnl`).
pub const C2H_CHANNELS: u32 = 2;
const _: () = assert!(READOUT_CHANNEL < C2H_CHANNELS && RING_CHANNEL < C2H_CHANNELS);
/// The engine's channels per direction (PG195: up to four).
pub const MAX_CHANNELS: u32 = 4;
/// Bytes of the board's C2H AXI4-Stream data path (256 bits at 250 MHz for PCIe Gen3 x8:
/// `axi_data_width {256_bit}`, `axisten_freq {250}` in `constraints/build.tcl`). A C2H
/// stream descriptor's Len must be a multiple of it (PG195 "C2H Channel Status (0x40)":
/// invalid_length).
pub const DATA_WIDTH_BYTES: u32 = 32;

/// Target field (address bits 15:12) of each register group.
pub mod target {
    pub const C2H_CHANNEL: u32 = 0x1;
    pub const C2H_SGDMA: u32 = 0x5;
    pub const SGDMA_COMMON: u32 = 0x6;
}

/// Base offset of C2H channel `ch`'s channel registers (PG195 "C2H Channel Registers (0x1)").
pub const fn c2h_channel(ch: u32) -> u32 {
    (target::C2H_CHANNEL << 12) | (ch * CHANNEL_STRIDE)
}

/// Base offset of C2H channel `ch`'s SGDMA registers (PG195 "C2H SGDMA Registers (0x5)").
pub const fn c2h_sgdma(ch: u32) -> u32 {
    (target::C2H_SGDMA << 12) | (ch * CHANNEL_STRIDE)
}

/// Base offset of the SGDMA common registers (PG195 "SGDMA Common Registers (0x6)").
pub const SGDMA_COMMON: u32 = target::SGDMA_COMMON << 12;

/// C2H channel registers, offsets from [`c2h_channel`].
pub mod channel {
    /// PG195 "C2H Channel Identifier (0x00)" (see [`super::identifier`]).
    pub const IDENTIFIER: u32 = 0x00;
    /// PG195 "C2H Channel Control (0x04)": read/write; 0x08 sets, 0x0C clears bits.
    pub const CONTROL: u32 = 0x04;
    pub const CONTROL_W1S: u32 = 0x08;
    pub const CONTROL_W1C: u32 = 0x0C;
    /// Run: set to start the SGDMA engine (it fetches the first descriptor from the SGDMA
    /// registers); clear to stop it (a busy engine completes its current descriptor).
    pub const RUN: u32 = 1 << 0;
    /// ie_* bits: the matching STATUS bits are logged only while these are set.
    pub const IE_DESCRIPTOR_STOPPED: u32 = 1 << 1;
    pub const IE_DESCRIPTOR_COMPLETED: u32 = 1 << 2;
    pub const IE_ALIGN_MISMATCH: u32 = 1 << 3;
    pub const IE_MAGIC_STOPPED: u32 = 1 << 4;
    pub const IE_INVALID_LENGTH: u32 = 1 << 5;
    pub const IE_IDLE_STOPPED: u32 = 1 << 6;
    /// All ones enables Status.Read_error logging and stops the engine on an error.
    pub const IE_READ_ERROR: u32 = 0x1F << 9;
    /// All ones enables Status.Desc_error logging and stops the engine on an error.
    pub const IE_DESC_ERROR: u32 = 0x1F << 19;
    /// What the driver writes with RUN: every condition it checks logged.
    pub const IE_ALL: u32 = IE_DESCRIPTOR_STOPPED
        | IE_DESCRIPTOR_COMPLETED
        | IE_ALIGN_MISMATCH
        | IE_MAGIC_STOPPED
        | IE_INVALID_LENGTH
        | IE_IDLE_STOPPED
        | IE_READ_ERROR
        | IE_DESC_ERROR;

    /// PG195 "C2H Channel Status (0x40)": RW1C (write ones to clear); 0x44 is the same bits,
    /// cleared by the read (RC).
    pub const STATUS: u32 = 0x40;
    pub const STATUS_RC: u32 = 0x44;
    /// The SGDMA engine is busy (read only).
    pub const BUSY: u32 = 1 << 0;
    /// The engine completed a descriptor with STOP set.
    pub const DESCRIPTOR_STOPPED: u32 = 1 << 1;
    /// The engine completed a descriptor with COMPLETED set.
    pub const DESCRIPTOR_COMPLETED: u32 = 1 << 2;
    /// A descriptor's source and destination addresses are not aligned alike.
    pub const ALIGN_MISMATCH: u32 = 1 << 3;
    /// The engine met a descriptor without the magic and stopped.
    pub const MAGIC_STOPPED: u32 = 1 << 4;
    /// A descriptor's length is not a multiple of the stream's data width.
    pub const INVALID_LENGTH: u32 = 1 << 5;
    /// The engine went idle after RUN was cleared.
    pub const IDLE_STOPPED: u32 = 1 << 6;
    /// read_error[4:0] (C2H: 1 slave error, 0 decode error).
    pub const READ_ERROR: u32 = 0x1F << 9;
    /// descr_error[4:0] (a descriptor fetch failed: 4 unexpected completion, 3 header EP,
    /// 2 parity error, 1 completer abort, 0 unsupported request).
    pub const DESC_ERROR: u32 = 0x1F << 19;
    /// The status bits that mean the channel failed (it stops on each of them).
    pub const ERRORS: u32 = ALIGN_MISMATCH | MAGIC_STOPPED | INVALID_LENGTH | READ_ERROR | DESC_ERROR;
    /// descr_error bit 0: unsupported request (the fetch address is not host memory).
    pub const DESC_ERROR_UNSUPPORTED: u32 = 1 << 19;

    /// PG195 "C2H Channel Completed Descriptor Count (0x48)": descriptors completed since
    /// RUN was last set (reset to 0 on its rising edge).
    pub const COMPLETED: u32 = 0x48;

    /// The names of the set bits of a STATUS value, for error messages.
    pub fn status_names(status: u32) -> Vec<&'static str> {
        const NAMES: [(u32, &str); 10] = [
            (BUSY, "busy"),
            (DESCRIPTOR_STOPPED, "descriptor_stopped"),
            (DESCRIPTOR_COMPLETED, "descriptor_completed"),
            (ALIGN_MISMATCH, "align_mismatch"),
            (MAGIC_STOPPED, "magic_stopped"),
            (INVALID_LENGTH, "invalid_length"),
            (IDLE_STOPPED, "idle_stopped"),
            (READ_ERROR, "read_error"),
            (DESC_ERROR, "descr_error"),
            (!(BUSY | DESCRIPTOR_STOPPED | DESCRIPTOR_COMPLETED | ERRORS | IDLE_STOPPED), "reserved"),
        ];
        NAMES.iter().filter(|(m, _)| status & m != 0).map(|&(_, n)| n).collect()
    }
}

/// C2H SGDMA registers, offsets from [`c2h_sgdma`].
pub mod sgdma {
    /// PG195 "C2H SGDMA Identifier (0x00)".
    pub const IDENTIFIER: u32 = 0x00;
    /// PG195 "C2H SGDMA Descriptor Low Address (0x80)" / "High Address (0x84)": the first
    /// descriptor fetched after RUN is set.
    pub const DESC_LO: u32 = 0x80;
    pub const DESC_HI: u32 = 0x84;
    /// PG195 "C2H SGDMA Descriptor Adjacent (0x88)": extra descriptors adjacent to the first
    /// (bits 5:0).
    pub const DESC_ADJACENT: u32 = 0x88;
    /// PG195 "C2H SGDMA Descriptor Credits (0x8C)": a write adds credits (bits 9:0), a read
    /// returns those left. Used only in descriptor credit mode.
    pub const DESC_CREDITS: u32 = 0x8C;
    /// The most credits one write adds.
    pub const MAX_CREDITS_PER_WRITE: u32 = (1 << 10) - 1;
}

/// SGDMA common registers, offsets from [`SGDMA_COMMON`].
pub mod common {
    /// PG195 "SGDMA Descriptor Credit Mode Enable (0x20)" (0x24 sets, 0x28 clears bits):
    /// a channel in credit mode fetches only as many descriptors as it was given credits,
    /// so a host ring is never overwritten before the host has taken it.
    pub const CREDIT_MODE: u32 = 0x20;
    pub const CREDIT_MODE_W1S: u32 = 0x24;
    pub const CREDIT_MODE_W1C: u32 = 0x28;
    /// The credit-mode bit of C2H channel `ch` (c2h_dsc_credit_enable, bits 19:16).
    pub const fn c2h_credit_bit(ch: u32) -> u32 {
        1 << (16 + ch)
    }
}

/// The identifier registers (PG195 "C2H Channel Identifier (0x00)", "C2H SGDMA Identifier
/// (0x00)"): subsystem 0x1FC [31:20], target [19:16], stream [15], channel [11:8],
/// version [7:0].
pub mod identifier {
    pub const SUBSYSTEM: u32 = 0x1FC;
    /// Bit 15: the channel is AXI4-Stream (0: memory mapped).
    pub const STREAM: u32 = 1 << 15;
    /// Version 6: 2017.1 to the current release.
    pub const VERSION: u32 = 0x06;
    /// The bits the driver checks (all but the version).
    pub const MASK: u32 = 0xFFFF_FF00;

    /// The identifier of a register group of `target` for channel `ch` (version bits 0).
    pub const fn of(target: u32, ch: u32, stream: bool) -> u32 {
        SUBSYSTEM << 20 | target << 16 | (stream as u32) << 15 | ch << 8
    }

    /// What a stream C2H channel `ch`'s channel identifier must read (under [`MASK`]).
    pub const fn c2h_stream(ch: u32) -> u32 {
        of(super::target::C2H_CHANNEL, ch, true)
    }
}

/// Descriptor magic (PG195 "Descriptors": bits 31:16 of the first dword).
pub const DESCRIPTOR_MAGIC: u16 = 0xAD4B;
/// Bytes of one descriptor.
pub const DESCRIPTOR_BYTES: usize = 32;
/// Descriptors are 32-byte aligned in host memory.
pub const DESCRIPTOR_ALIGN: u64 = 32;
/// Largest Len (28 bits).
pub const MAX_LEN: u32 = (1 << 28) - 1;
/// Largest Nxt_adj (6 bits).
pub const MAX_ADJACENT: u8 = (1 << 6) - 1;

/// Descriptor control bits (PG195 "Descriptor Control Field Bits").
pub mod control {
    /// The engine stops after this descriptor.
    pub const STOP: u8 = 1 << 0;
    /// Status.descriptor_completed is logged when this descriptor completes.
    pub const COMPLETED: u8 = 1 << 1;
    /// End of packet (H2C streams; a C2H stream reports its own EOP in the writeback).
    pub const EOP: u8 = 1 << 4;
    /// The bits PG195 defines.
    pub const DEFINED: u8 = STOP | COMPLETED | EOP;
}

/// One SGDMA descriptor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Descriptor {
    /// [`control`] bits.
    pub control: u8,
    /// Nxt_adj: descriptors adjacent to the next one (a fetch hint, 0 is always valid).
    pub adjacent: u8,
    /// Len: bytes this descriptor moves (for a C2H stream, the buffer's room).
    pub len: u32,
    /// Src_adr: for a C2H stream, where the engine writes this descriptor's writeback.
    pub src: u64,
    /// Dst_adr: the host buffer.
    pub dst: u64,
    /// Nxt_adr: the next descriptor (ignored after STOP).
    pub next: u64,
}

/// Why bytes are not a descriptor or a writeback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// Fewer bytes than the structure.
    Short { need: usize, have: usize },
    /// The magic is not the one PG195 defines.
    Magic { found: u16, want: u16 },
    /// A field holds bits PG195 reserves.
    Reserved { field: &'static str, value: u32 },
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::Short { need, have } => write!(f, "{have} bytes where {need} are needed"),
            DecodeError::Magic { found, want } => write!(f, "magic {found:#06x}, not {want:#06x}"),
            DecodeError::Reserved { field, value } => write!(f, "{field} {value:#x} sets reserved bits"),
        }
    }
}

impl std::error::Error for DecodeError {}

fn dword(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn qword(b: &[u8], at: usize) -> u64 {
    dword(b, at) as u64 | (dword(b, at + 4) as u64) << 32
}

fn check_len(b: &[u8], need: usize) -> Result<(), DecodeError> {
    if b.len() < need {
        return Err(DecodeError::Short { need, have: b.len() });
    }
    Ok(())
}

impl Descriptor {
    /// The 32 bytes the engine fetches. Fields wider than PG195's are the caller's error;
    /// they are masked here and [`decode`](Self::decode) would not give them back.
    pub fn encode(&self) -> [u8; DESCRIPTOR_BYTES] {
        let mut b = [0u8; DESCRIPTOR_BYTES];
        let d0 = (DESCRIPTOR_MAGIC as u32) << 16
            | ((self.adjacent & MAX_ADJACENT) as u32) << 8
            | self.control as u32;
        b[0..4].copy_from_slice(&d0.to_le_bytes());
        b[4..8].copy_from_slice(&(self.len & MAX_LEN).to_le_bytes());
        b[8..16].copy_from_slice(&self.src.to_le_bytes());
        b[16..24].copy_from_slice(&self.dst.to_le_bytes());
        b[24..32].copy_from_slice(&self.next.to_le_bytes());
        b
    }

    /// A descriptor from its bytes: the magic checked, reserved bits refused.
    pub fn decode(b: &[u8]) -> Result<Self, DecodeError> {
        check_len(b, DESCRIPTOR_BYTES)?;
        let d0 = dword(b, 0);
        let magic = (d0 >> 16) as u16;
        if magic != DESCRIPTOR_MAGIC {
            return Err(DecodeError::Magic { found: magic, want: DESCRIPTOR_MAGIC });
        }
        if d0 & 0xC000 != 0 || d0 as u8 & !control::DEFINED != 0 {
            return Err(DecodeError::Reserved { field: "control dword", value: d0 });
        }
        let len = dword(b, 4);
        if len > MAX_LEN {
            return Err(DecodeError::Reserved { field: "Len", value: len });
        }
        Ok(Descriptor {
            control: d0 as u8,
            adjacent: (d0 >> 8) as u8 & MAX_ADJACENT,
            len,
            src: qword(b, 8),
            dst: qword(b, 16),
            next: qword(b, 24),
        })
    }
}

/// Writeback magic (PG195 "C2H Stream Writeback": bits 31:16 of the first dword).
pub const WRITEBACK_MAGIC: u16 = 0x52B4;
/// Bytes of one C2H stream writeback.
pub const WRITEBACK_BYTES: usize = 8;

/// What a C2H stream descriptor received, written by the engine when the descriptor closes
/// (full, or at the end of a packet).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Writeback {
    /// The packet ended in this descriptor (`tlast`).
    pub eop: bool,
    /// Bytes written to the descriptor's buffer.
    pub length: u32,
}

impl Writeback {
    pub fn encode(&self) -> [u8; WRITEBACK_BYTES] {
        let mut b = [0u8; WRITEBACK_BYTES];
        b[0..4].copy_from_slice(&((WRITEBACK_MAGIC as u32) << 16 | self.eop as u32).to_le_bytes());
        b[4..8].copy_from_slice(&self.length.to_le_bytes());
        b
    }

    /// A writeback from its bytes: the magic checked (a slot the engine has not written yet
    /// reads as the host cleared it, without the magic), reserved bits refused.
    pub fn decode(b: &[u8]) -> Result<Self, DecodeError> {
        check_len(b, WRITEBACK_BYTES)?;
        let d0 = dword(b, 0);
        let magic = (d0 >> 16) as u16;
        if magic != WRITEBACK_MAGIC {
            return Err(DecodeError::Magic { found: magic, want: WRITEBACK_MAGIC });
        }
        if d0 & 0xFFFE != 0 {
            return Err(DecodeError::Reserved { field: "writeback status", value: d0 });
        }
        Ok(Writeback { eop: d0 & 1 != 0, length: dword(b, 4) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_offsets_follow_the_target_channel_register_split() {
        assert_eq!(c2h_channel(0) + channel::CONTROL, 0x1004);
        assert_eq!(c2h_channel(1) + channel::STATUS, 0x1140);
        assert_eq!(c2h_channel(1) + channel::COMPLETED, 0x1148);
        assert_eq!(c2h_sgdma(0) + sgdma::DESC_LO, 0x5080);
        assert_eq!(c2h_sgdma(1) + sgdma::DESC_CREDITS, 0x518C);
        assert_eq!(SGDMA_COMMON + common::CREDIT_MODE_W1S, 0x6024);
        assert_eq!(common::c2h_credit_bit(1), 0x2_0000);
        // A stream C2H channel 1 of a 2017.1-or-later core reads 0x1FC18106.
        assert_eq!(identifier::c2h_stream(1) | identifier::VERSION, 0x1FC1_8106);
        assert_eq!(identifier::of(target::C2H_SGDMA, 0, true), 0x1FC5_8000);
    }

    /// A descriptor as the engine reads it, byte by byte, and back.
    #[test]
    fn descriptor_encodes_to_the_pg195_layout_and_back() {
        let d = Descriptor {
            control: control::STOP | control::COMPLETED,
            adjacent: 3,
            len: 0x0001_0000,
            src: 0x1_2345_6780,
            dst: 0xDEAD_BEEF_0000_1000,
            next: 0x40,
        };
        let b = d.encode();
        #[rustfmt::skip]
        let want = [
            0x03, 0x03, 0x4B, 0xAD,  0x00, 0x00, 0x01, 0x00,
            0x80, 0x67, 0x45, 0x23,  0x01, 0x00, 0x00, 0x00,
            0x00, 0x10, 0x00, 0x00,  0xEF, 0xBE, 0xAD, 0xDE,
            0x40, 0x00, 0x00, 0x00,  0x00, 0x00, 0x00, 0x00,
        ];
        assert_eq!(b, want);
        assert_eq!(Descriptor::decode(&b), Ok(d));
    }

    #[test]
    fn descriptor_decode_names_what_is_wrong() {
        let b = Descriptor::default().encode();
        assert_eq!(Descriptor::decode(&b[..31]), Err(DecodeError::Short { need: 32, have: 31 }));
        let mut bad = b;
        bad[3] = 0xAC;
        assert_eq!(Descriptor::decode(&bad), Err(DecodeError::Magic { found: 0xAC4B, want: 0xAD4B }));
        let mut bad = b;
        bad[0] = 0x08;
        assert!(matches!(
            Descriptor::decode(&bad),
            Err(DecodeError::Reserved { field: "control dword", .. })
        ));
        let mut bad = b;
        bad[7] = 0x10;
        assert!(matches!(Descriptor::decode(&bad), Err(DecodeError::Reserved { field: "Len", .. })));
        assert!(DecodeError::Magic { found: 0, want: DESCRIPTOR_MAGIC }.to_string().contains("0xad4b"));
    }

    #[test]
    fn writeback_encodes_and_decodes() {
        let w = Writeback { eop: true, length: 4096 };
        let b = w.encode();
        assert_eq!(b, [0x01, 0x00, 0xB4, 0x52, 0x00, 0x10, 0x00, 0x00]);
        assert_eq!(Writeback::decode(&b), Ok(w));
        // A slot the host zeroed and the engine has not written.
        assert_eq!(Writeback::decode(&[0; 8]), Err(DecodeError::Magic { found: 0, want: WRITEBACK_MAGIC }));
        let mut bad = b;
        bad[0] = 0x03;
        assert!(matches!(Writeback::decode(&bad), Err(DecodeError::Reserved { .. })));
    }

    #[test]
    fn status_names_cover_every_bit() {
        assert_eq!(channel::status_names(channel::BUSY | channel::MAGIC_STOPPED), ["busy", "magic_stopped"]);
        assert_eq!(channel::status_names(1 << 31), ["reserved"]);
        assert_eq!(channel::status_names(1 << 20), ["descr_error"]);
    }
}
