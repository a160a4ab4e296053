//! DMA for the NIC's two card-to-host channels on the board's PCIe DMA engine (XDMA, PG195):
//! channel 0 the readout stream, channel 1 the record ring (`smartnic_contract::xdma`).
//!
//! | item | what |
//! |---|---|
//! | [`DmaMemory`] | host memory the device can write: allocate, bus address (IOVA), read, write |
//! | [`HeapDma`] | in-process memory with made-up IOVAs (tests and the engine's model) |
//! | `VfioDma` | memory mapped for the device through the VFIO IOMMU (feature `vfio`) |
//! | [`XdmaC2h`] | the engine driven by its registers: descriptor chains, run, completion, writebacks |
//! | [`XdmaCdev`] | the same two channels through the `xdma` kernel driver's character devices |
//! | [`WithDma`] | a NIC BAR and its card-to-host channels as one `RegisterAccess` |
//! | [`open_channels`] | the engine opened for a NIC: its map checked, the ring counted from RING_WORDS |

mod cdev;
mod engine;
mod heap;
#[cfg(feature = "vfio")]
mod vfio;

pub use cdev::{CdevPaths, XdmaCdev};
pub use engine::{RingConfig, StreamConfig, XdmaC2h};
pub use heap::HeapDma;
#[cfg(feature = "vfio")]
pub use vfio::VfioDma;

use crate::access::{AccessError, C2hChannel, RecordRing, RegisterAccess};
use crate::blocks::{BlockError, DeviceMap};
use smartnic_contract::regs::stream::RING_WORDS;
use smartnic_contract::xdma::DecodeError;

/// Why a NIC's DMA channels could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    #[error("the NIC's register map: {0}")]
    Map(#[from] BlockError),
    #[error("the bitstream has no readout-stream block, so nothing is sent on the DMA channels")]
    NoStream,
    #[error("reading the NIC's RING_WORDS: {0}")]
    Access(#[from] AccessError),
    #[error("the DMA engine: {0}")]
    Dma(#[from] DmaError),
}

/// Opens the DMA engine whose registers are `regs` for the NIC at `bar`, its buffers in
/// `mem` (default sizes): checks that the bitstream has the readout-stream block and counts
/// the record ring from the NIC's RING_WORDS now. The board (VFIO), the simulated NIC and
/// the board benches all open their channels here.
pub fn open_channels<A: RegisterAccess + ?Sized, R: RegisterAccess, M: DmaMemory>(
    bar: &mut A,
    regs: R,
    mem: M,
) -> Result<XdmaC2h<R, M>, AttachError> {
    let map = DeviceMap::discover(bar)?;
    let stream = map.stream.ok_or(AttachError::NoStream)?;
    let taken = bar.read32(stream + RING_WORDS)?;
    let ring = RingConfig { taken, ..RingConfig::default() };
    Ok(XdmaC2h::open(regs, mem, StreamConfig::default(), ring)?)
}

/// Host memory a device can write by DMA.
///
/// Addresses are bus addresses (what the device puts on PCIe: an IOVA behind an IOMMU).
/// Reads and writes go by bus address and must stay inside one allocation.
pub trait DmaMemory {
    /// Allocates `len` zeroed bytes the device can read and write, aligned to at least
    /// 4 KiB, and returns its bus address.
    fn alloc(&mut self, len: usize) -> Result<u64, DmaError>;
    /// Copies `out.len()` bytes at bus address `iova` into `out`.
    fn read(&self, iova: u64, out: &mut [u8]) -> Result<(), DmaError>;
    /// Writes `data` at bus address `iova` (the host's descriptors, or the device's writes in
    /// a model of the device).
    fn write(&mut self, iova: u64, data: &[u8]) -> Result<(), DmaError>;
}

/// Why a DMA channel failed. Each carries what the host saw, so nothing is lost.
#[derive(Debug, thiserror::Error)]
pub enum DmaError {
    /// An address range that is not inside one allocation.
    #[error("DMA address {iova:#x}..+{len} is not inside one allocation of host DMA memory")]
    Unmapped { iova: u64, len: usize },
    /// The memory could not be allocated or mapped for the device.
    #[error("cannot allocate {len} bytes of DMA memory: {what}")]
    Alloc { len: usize, what: String },
    /// The channel's identifier is not a stream C2H channel of the DMA engine.
    #[error(
        "the DMA engine's C2H channel {channel} identifier reads {found:#010x}, not a stream \
         channel ({want:#010x} under {mask:#010x}): wrong BAR, or the bitstream's XDMA has no such \
         AXI4-Stream channel"
    )]
    Identifier { channel: u32, found: u32, want: u32, mask: u32 },
    /// The channel's status reports an error (it stopped).
    #[error(
        "DMA C2H channel {channel} stopped with an error: status {status:#010x} ({names}), \
         {completed} descriptors completed; check the descriptors and `dmesg` for IOMMU faults"
    )]
    ChannelError { channel: u32, status: u32, names: String, completed: u32 },
    /// The completed-descriptor count went down without the host restarting the channel.
    #[error(
        "DMA C2H channel {channel}: the completed-descriptor count went from {before} to {after} \
         without a restart (the engine was reset behind the host's back)"
    )]
    CountBackwards { channel: u32, before: u32, after: u32 },
    /// A completed descriptor's writeback is not one.
    #[error("DMA C2H channel {channel}: descriptor {index}'s writeback is damaged: {error}")]
    Writeback { channel: u32, index: usize, error: DecodeError },
    /// A writeback's length is larger than its buffer.
    #[error("DMA C2H channel {channel}: descriptor {index} says it wrote {length} bytes into a {room}-byte buffer")]
    WritebackLength { channel: u32, index: usize, length: u32, room: u32 },
    /// The stream filled every buffer armed for it without ending.
    #[error(
        "the readout stream did not end within the {words} words armed for it (every buffer \
         filled, no end of packet): the stream engine and the host disagree on its length"
    )]
    Overrun { words: usize },
    /// Words that are not whole 64-bit words (a byte count not a multiple of 8).
    #[error("DMA C2H channel {channel} delivered {bytes} bytes, not whole 64-bit words")]
    PartialWord { channel: u32, bytes: usize },
    /// A C2H character device is missing or cannot be opened.
    #[error(
        "cannot open {path}: {source}; load the xdma kernel driver (`modprobe xdma`, from \
         Xilinx's dma_ip_drivers) and check the card is bound to it (`lspci -k -d 10ee:`)"
    )]
    Cdev {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// A read of a timed-out stream is still running on the device.
    #[error(
        "a read of the previous readout stream is still running on {path} (it timed out); \
         the xdma driver ends it at its own timeout: retry the readout after it"
    )]
    CdevBusy { path: String },
    /// A read of a C2H character device failed.
    #[error("read of {path} failed: {source}")]
    CdevRead {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// A register access failed.
    #[error(transparent)]
    Access(#[from] AccessError),
}

impl From<DmaError> for AccessError {
    /// The channel traits report [`AccessError`]: a DMA error travels as its `Io` source, so
    /// its message is kept and `DmaError::of` finds it again.
    fn from(e: DmaError) -> Self {
        match e {
            DmaError::Access(a) => a,
            e => AccessError::Io { what: e.to_string(), source: std::io::Error::other(e) },
        }
    }
}

impl DmaError {
    /// The DMA error an [`AccessError`] carries, if it is one.
    pub fn of(e: &AccessError) -> Option<&DmaError> {
        match e {
            AccessError::Io { source, .. } => source.get_ref()?.downcast_ref::<DmaError>(),
            _ => None,
        }
    }
}

/// A NIC's BAR with card-to-host channels beside it (`XdmaC2h` or `XdmaCdev`): register
/// access goes to the BAR, `c2h` and `ring` to the channels, so the readouts take the
/// stream and the records by DMA.
pub struct WithDma<A, C> {
    pub bar: A,
    pub dma: C,
}

impl<A: RegisterAccess, C: C2hChannel + RecordRing> RegisterAccess for WithDma<A, C> {
    fn bar_size(&self) -> u64 {
        self.bar.bar_size()
    }
    fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
        self.bar.read32(offset)
    }
    fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
        self.bar.write32(offset, value)
    }
    fn read_block(&mut self, offset: u32, out: &mut [u32]) -> Result<(), AccessError> {
        self.bar.read_block(offset, out)
    }
    fn c2h(&mut self) -> Option<&mut dyn C2hChannel> {
        Some(&mut self.dma)
    }
    fn ring(&mut self) -> Option<&mut dyn RecordRing> {
        Some(&mut self.dma)
    }
}

/// 64-bit words from little-endian bytes (the engine writes the stream's words as the host
/// reads a `u64`).
fn words_of(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    bytes.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dma_error_survives_the_access_error_and_is_found_again() {
        let e: AccessError = DmaError::Overrun { words: 5 }.into();
        assert!(e.to_string().contains("did not end within the 5 words"), "{e}");
        assert!(matches!(DmaError::of(&e), Some(DmaError::Overrun { words: 5 })));
        let e: AccessError = DmaError::Access(AccessError::Misaligned { offset: 2 }).into();
        assert!(matches!(e, AccessError::Misaligned { offset: 2 }));
        assert!(DmaError::of(&e).is_none());
    }

    #[test]
    fn words_are_little_endian() {
        let b = [1, 0, 0, 0, 0, 0, 0, 0x80, 2, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(words_of(&b).collect::<Vec<_>>(), [0x8000_0000_0000_0001, 2]);
    }
}
