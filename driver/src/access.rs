//! Register access: the one trait every back end implements (VFIO, sysfs `resourceN`, a
//! file, the register-level emulation, and the Verilator model in `sim-tb`).
//!
//! Offsets are bytes from the start of the BAR; registers are 32 bits, little-endian,
//! 4-byte aligned. The trait reports only transport failures (range, alignment, I/O): it
//! does not know which registers can hold all ones, so the callers that do (block
//! enumeration, readout) use [`RegisterAccess::read32_live`] where the contract says a
//! register cannot read `DEVICE_GONE`.

use smartnic_contract::regs::DEVICE_GONE;

/// Why a register access failed.
#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    /// A register the contract says cannot hold all ones read all ones: PCIe returns that
    /// for every read of a device that is gone (surprise removal, reset, link down) or whose
    /// memory space is disabled.
    #[error(
        "device gone: register {offset:#x} read 0xffffffff, which it cannot hold \
         (card removed or reset, link down, or memory space disabled); \
         check `lspci -d 10ee:` and `dmesg`, then rescan or re-bind the device"
    )]
    DeviceGone { offset: u32 },
    #[error("register access {offset:#x}..{end:#x} is outside the {bar_size:#x}-byte BAR", end = .offset + .len)]
    OutOfRange { offset: u64, len: u64, bar_size: u64 },
    #[error("register offset {offset:#x} is not 32-bit aligned")]
    Misaligned { offset: u64 },
    #[error("64-bit register {offset:#x}: the high word changed on each of {tries} reads")]
    Unstable64 { offset: u32, tries: u32 },
    /// The card-to-host channel delivered no complete readout stream in time.
    #[error(
        "no complete readout stream within {waited:?} ({words} words arrived): the \
         card-to-host channel stalled or the stream engine stopped; check the DMA channel \
         (`dmesg`), then reset the card"
    )]
    StreamTimeout { waited: std::time::Duration, words: usize },
    /// The record ring did not receive the words the NIC says it sent.
    #[error(
        "the record ring received {arrived} of the {words} words the NIC sent within {waited:?}: \
         the card-to-host channel stalled; check the DMA channel (`dmesg`), then reset the card"
    )]
    RingTimeout { waited: std::time::Duration, words: u32, arrived: usize },
    /// A service (the simulator process) refused a command.
    #[error("simulator command `{line}` failed: {message}")]
    Command { line: String, message: String },
    /// The OS error is the `source` (shown by `{:#}` and anyhow chains).
    #[error("{what}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
}

/// How often [`RegisterAccess::read64`] re-reads when the high word moves. A counter's high
/// word moves at most once per 2^32 increments, so a second change means a broken device.
pub const READ64_TRIES: u32 = 3;

/// The card-to-host channel of a device: a host buffer the NIC's stream engine writes
/// (a DMA ring through VFIO, the vendor driver's character device, or the simulated NIC's
/// host buffer).
pub trait C2hChannel {
    /// Gets the channel ready for one stream of `words` 64-bit words (posts its buffer).
    fn arm(&mut self, words: usize) -> Result<(), AccessError>;
    /// Waits up to `timeout` for the stream's last word and returns what arrived.
    fn wait(&mut self, timeout: std::time::Duration) -> Result<Vec<u64>, AccessError>;
}

/// The record ring of a device: a ring in host memory that the NIC's record stream
/// arrives in, 64-bit words (`smartnic_contract::wire::record_ring`) on its own card-to-host
/// channel, as the NIC produces them (a DMA ring through VFIO, the vendor driver's character
/// device, or the simulated NIC's host ring).
///
/// Words are counted in the device's numbering: the NIC's RING_WORDS register counts the
/// words its channel accepted since reset, and [`taken`](Self::taken) the words this host
/// has taken, both wrapping at 2^32 the same way, so `RING_WORDS - taken` is what is
/// waiting in the ring or on the link.
pub trait RecordRing {
    /// Words taken from the ring so far, in the device's numbering (mod 2^32).
    fn taken(&self) -> u32;
    /// Waits up to `timeout` until `words` more words have arrived, and takes exactly those
    /// (later words stay for the next call).
    fn take(&mut self, words: u32, timeout: std::time::Duration) -> Result<Vec<u64>, AccessError>;
}

/// 32-bit register access to one BAR.
///
/// `&mut self` everywhere: a simulator advances its clock on every access, and no back end
/// needs to be shared between threads during a readout.
pub trait RegisterAccess {
    /// Size of the BAR in bytes.
    fn bar_size(&self) -> u64;

    /// One 32-bit read (one non-posted PCIe read on hardware).
    fn read32(&mut self, offset: u32) -> Result<u32, AccessError>;

    /// One 32-bit write (one posted PCIe write on hardware).
    fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError>;

    /// Reads `out.len()` consecutive registers starting at `offset`, each with a 32-bit
    /// access (the readout windows accept only 32-bit reads). Back ends may override this
    /// for speed; the transactions must stay 32-bit reads in increasing address order.
    fn read_block(&mut self, offset: u32, out: &mut [u32]) -> Result<(), AccessError> {
        check_range(self.bar_size(), offset, 4 * out.len() as u64)?;
        for (i, w) in out.iter_mut().enumerate() {
            *w = self.read32(offset + 4 * i as u32)?;
        }
        Ok(())
    }

    /// A 64-bit counter stored as two words, low word first: read high, low, high again,
    /// and retry if the high word moved (a carry between the two reads). A high word of
    /// all ones is [`AccessError::DeviceGone`]: every 64-bit register of the contract is a
    /// counter since reset that cannot reach 2^63 in the life of a device.
    fn read64(&mut self, offset: u32) -> Result<u64, AccessError> {
        let mut hi = self.read32(offset + 4)?;
        for _ in 0..READ64_TRIES {
            if hi == DEVICE_GONE {
                return Err(AccessError::DeviceGone { offset: offset + 4 });
            }
            let lo = self.read32(offset)?;
            let hi2 = self.read32(offset + 4)?;
            if hi2 == hi {
                return Ok((hi as u64) << 32 | lo as u64);
            }
            hi = hi2;
        }
        Err(AccessError::Unstable64 { offset, tries: READ64_TRIES })
    }

    /// The device's card-to-host channel, if it has one: where the NIC's readout stream
    /// arrives (`crate::readout::stream`). Register-only back ends have none.
    fn c2h(&mut self) -> Option<&mut dyn C2hChannel> {
        None
    }

    /// The device's record ring, if it has one (`crate::readout::per_switch`). Register-only
    /// back ends have none, and records are popped over the BAR.
    fn ring(&mut self) -> Option<&mut dyn RecordRing> {
        None
    }

    /// [`read32`](Self::read32) of a register that cannot hold all ones (a block header, a
    /// status word with reserved bits, a descriptor): all ones is [`AccessError::DeviceGone`].
    fn read32_live(&mut self, offset: u32) -> Result<u32, AccessError> {
        match self.read32(offset)? {
            DEVICE_GONE => Err(AccessError::DeviceGone { offset }),
            v => Ok(v),
        }
    }
}

/// Register offsets are 32-bit: of a larger BAR (a 64-bit BAR may be any power of two) only
/// the first 4 GiB can be addressed, so ranges are checked against this much at most, and
/// `offset + k` for any `k < len` of a checked range never overflows a `u32`.
pub const ADDRESSABLE: u64 = 1 << 32;

/// Checks that `len` bytes at `offset` are aligned and inside a BAR of `bar_size` bytes (and
/// within the [`ADDRESSABLE`] part of it).
pub fn check_range(bar_size: u64, offset: u32, len: u64) -> Result<(), AccessError> {
    if !offset.is_multiple_of(4) {
        return Err(AccessError::Misaligned { offset: offset as u64 });
    }
    if offset as u64 + len > bar_size.min(ADDRESSABLE) {
        return Err(AccessError::OutOfRange { offset: offset as u64, len, bar_size });
    }
    Ok(())
}

impl<A: RegisterAccess + ?Sized> RegisterAccess for &mut A {
    fn bar_size(&self) -> u64 {
        (**self).bar_size()
    }
    fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
        (**self).read32(offset)
    }
    fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
        (**self).write32(offset, value)
    }
    fn read_block(&mut self, offset: u32, out: &mut [u32]) -> Result<(), AccessError> {
        (**self).read_block(offset, out)
    }
    fn c2h(&mut self) -> Option<&mut dyn C2hChannel> {
        (**self).c2h()
    }
    fn ring(&mut self) -> Option<&mut dyn RecordRing> {
        (**self).ring()
    }
}

impl<A: RegisterAccess + ?Sized> RegisterAccess for Box<A> {
    fn bar_size(&self) -> u64 {
        (**self).bar_size()
    }
    fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
        (**self).read32(offset)
    }
    fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
        (**self).write32(offset, value)
    }
    fn read_block(&mut self, offset: u32, out: &mut [u32]) -> Result<(), AccessError> {
        (**self).read_block(offset, out)
    }
    fn c2h(&mut self) -> Option<&mut dyn C2hChannel> {
        (**self).c2h()
    }
    fn ring(&mut self) -> Option<&mut dyn RecordRing> {
        (**self).ring()
    }
}

/// Register transactions seen by a [`Counting`] wrapper.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Transactions {
    /// 32-bit reads: each one a non-posted PCIe read that waits for its completion.
    pub reads: u64,
    /// 32-bit writes: posted, the CPU does not wait for them.
    pub writes: u64,
}

impl Transactions {
    pub fn bytes_read(&self) -> u64 {
        4 * self.reads
    }
    pub fn bytes_written(&self) -> u64 {
        4 * self.writes
    }
}

/// Counts the register transactions going through it (a block read counts one read per
/// word, which is what it costs on the bus).
pub struct Counting<A> {
    pub inner: A,
    pub count: Transactions,
}

impl<A: RegisterAccess> Counting<A> {
    pub fn new(inner: A) -> Self {
        Counting { inner, count: Transactions::default() }
    }
}

impl<A: RegisterAccess> RegisterAccess for Counting<A> {
    fn bar_size(&self) -> u64 {
        self.inner.bar_size()
    }
    fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
        self.count.reads += 1;
        self.inner.read32(offset)
    }
    fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
        self.count.writes += 1;
        self.inner.write32(offset, value)
    }
    fn read_block(&mut self, offset: u32, out: &mut [u32]) -> Result<(), AccessError> {
        self.count.reads += out.len() as u64;
        self.inner.read_block(offset, out)
    }
    fn c2h(&mut self) -> Option<&mut dyn C2hChannel> {
        self.inner.c2h()
    }
    fn ring(&mut self) -> Option<&mut dyn RecordRing> {
        self.inner.ring()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A BAR of plain words whose word 1 (high half of the 64-bit register at 0) changes
    /// after every read of it, a set number of times.
    struct Words {
        w: Vec<u32>,
        bumps: u32,
    }

    impl RegisterAccess for Words {
        fn bar_size(&self) -> u64 {
            4 * self.w.len() as u64
        }
        fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
            check_range(self.bar_size(), offset, 4)?;
            let v = self.w[offset as usize / 4];
            if offset == 4 && self.bumps > 0 {
                self.bumps -= 1;
                self.w[1] += 1;
            }
            Ok(v)
        }
        fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
            check_range(self.bar_size(), offset, 4)?;
            self.w[offset as usize / 4] = value;
            Ok(())
        }
    }

    #[test]
    fn read64_is_low_word_first() {
        let mut d = Words { w: vec![0x89AB_CDEF, 0x0123_4567, 0], bumps: 0 };
        assert_eq!(d.read64(0).unwrap(), 0x0123_4567_89AB_CDEF);
    }

    #[test]
    fn read64_retries_when_high_word_moves() {
        let mut d = Words { w: vec![7, 1, 0], bumps: 1 };
        // hi=1 (then 2), lo=7, hi=2: moved; lo=7, hi=2: stable.
        assert_eq!(d.read64(0).unwrap(), 2 << 32 | 7);
        let mut d = Words { w: vec![7, 1, 0], bumps: 10 };
        assert!(matches!(d.read64(0), Err(AccessError::Unstable64 { offset: 0, tries: READ64_TRIES })));
    }

    #[test]
    fn read64_of_all_ones_is_device_gone() {
        let mut d = Words { w: vec![u32::MAX, u32::MAX], bumps: 0 };
        let e = d.read64(0).unwrap_err();
        assert!(matches!(e, AccessError::DeviceGone { offset: 4 }), "{e}");
        assert!(e.to_string().contains("device gone"));
    }

    #[test]
    fn default_block_read_checks_range_and_alignment() {
        let mut d = Words { w: vec![1, 2, 3, 4], bumps: 0 };
        let mut out = [0; 2];
        d.read_block(8, &mut out).unwrap();
        assert_eq!(out, [3, 4]);
        let e = d.read_block(12, &mut out).unwrap_err();
        assert!(matches!(e, AccessError::OutOfRange { offset: 12, len: 8, bar_size: 16 }));
        assert!(e.to_string().contains("0xc..0x14"), "{e}");
        assert!(matches!(d.read_block(2, &mut out), Err(AccessError::Misaligned { offset: 2 })));
    }

    /// A BAR larger than 4 GiB: ranges end at the last 32-bit offset, so a block header read
    /// at `at + 8` after a check of `at` can never wrap.
    #[test]
    fn ranges_past_the_32_bit_offsets_are_out_of_range() {
        let huge = 1u64 << 40;
        assert!(check_range(huge, u32::MAX - 3, 4).is_ok());
        let e = check_range(huge, u32::MAX - 3, 8).unwrap_err();
        assert!(matches!(e, AccessError::OutOfRange { offset: 0xFFFF_FFFC, len: 8, .. }), "{e}");
    }

    #[test]
    fn live_read_rejects_all_ones_and_counting_counts() {
        let mut d = Counting::new(Words { w: vec![5, u32::MAX], bumps: 0 });
        assert_eq!(d.read32_live(0).unwrap(), 5);
        assert!(matches!(d.read32_live(4), Err(AccessError::DeviceGone { offset: 4 })));
        let mut out = [0; 2];
        d.read_block(0, &mut out).unwrap();
        d.write32(0, 9).unwrap();
        assert_eq!(d.count, Transactions { reads: 4, writes: 1 });
        assert_eq!((d.count.bytes_read(), d.count.bytes_written()), (16, 4));
    }
}
