//! Register-access back ends: a memory-mapped regular file ([`FileBar`], tests and fault
//! injection), the kernel's sysfs `resourceN` files ([`SysfsBar`]) and VFIO through the
//! `pci-driver` crate (`VfioBar`, cargo feature `vfio`, on by default). The Verilator model implements the same trait in
//! `sim-tb`.

mod file;
mod sysfs;
#[cfg(feature = "vfio")]
mod vfio;

pub use file::FileBar;
pub use sysfs::SysfsBar;
#[cfg(feature = "vfio")]
pub use vfio::{VfioBar, VfioPaths};

use crate::access::{check_range, AccessError};
use crate::discover::DiscoverError;
use memmap2::{MmapOptions, MmapRaw};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// Why a back end could not be opened. Every message says what to do next; the OS error,
/// where there is one, is the error's `source` (printed by `{:#}` and anyhow chains).
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    Discover(#[from] DiscoverError),
    #[error(
        "no PCI device {bdf} ({} does not exist); list the SmartNICs with \
         `lspci -D -d 10ee:` and check the BDF",
        path.display()
    )]
    NoDevice { bdf: String, path: PathBuf },
    #[error(
        "{bdf} is {vendor:04x}:{device:04x}, not a SmartNIC ({want_vendor:04x}:{want_device:04x}); \
         pick the right BDF from `lspci -d 10ee:`"
    )]
    WrongDevice { bdf: String, vendor: u16, device: u16, want_vendor: u16, want_device: u16 },
    #[error("{bdf} has no BAR {bar} ({} does not exist): is the bitstream loaded?", path.display())]
    NoBar { bdf: String, bar: u8, path: PathBuf },
    #[error(
        "permission denied opening {}: run as root, or bind the device to vfio-pci and use \
         the VFIO back end (see driver/README.md, \"Binding a VC709 to vfio-pci\")",
        path.display()
    )]
    Permission { path: PathBuf },
    #[error(
        "{bdf}: memory space is disabled and could not be enabled; as root run \
         `echo 1 > {}` (or `setpci -s {bdf} COMMAND=0x02`)",
        path.display()
    )]
    Disabled {
        bdf: String,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{}: {len} bytes is not a usable BAR (needs a non-zero multiple of 4 up to 4 GiB)", path.display())]
    BadSize { path: PathBuf, len: u64 },
    #[error("{}: the IOMMU is off (no iommu_group link); boot with `intel_iommu=on iommu=pt` (Intel) \
             or `amd_iommu=on` (AMD) on the kernel command line, then reboot", path.display())]
    NoIommu { path: PathBuf },
    #[error("{} does not exist: the vfio-pci module is not loaded; run `sudo modprobe vfio-pci`", path.display())]
    NoVfio { path: PathBuf },
    #[error("{bdf} is bound to {}, not vfio-pci; bind it with:\n{commands}",
            driver.as_deref().unwrap_or("no driver"))]
    NotBoundToVfio { bdf: String, driver: Option<String>, commands: String },
    #[error(
        "IOMMU group {group} is not usable: every device in it must be bound to vfio-pci (or \
         have no driver), but {others}; bind those to vfio-pci too, or move the card to a slot \
         with its own group"
    )]
    GroupNotViable { group: u32, others: String },
    #[error(
        "permission denied opening {}: run as root, or give your user the group device with \
         `sudo chown $USER {}`",
        path.display(), path.display()
    )]
    GroupPermission { path: PathBuf },
    #[error("VFIO could not open {bdf}")]
    Vfio {
        bdf: String,
        #[source]
        source: io::Error,
    },
    #[error("{}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl OpenError {
    /// Maps an error from opening `path` for register access.
    pub(crate) fn opening(path: &Path, source: io::Error) -> Self {
        match source.kind() {
            io::ErrorKind::PermissionDenied => OpenError::Permission { path: path.to_owned() },
            _ => OpenError::Io { path: path.to_owned(), source },
        }
    }
}

/// A BAR seen through a shared memory mapping, accessed with volatile 32-bit loads and
/// stores through raw pointers (never memcpy: MMIO windows take 32-bit reads only).
///
/// The mapping is a [`MmapRaw`]: it has no `Deref` to `[u8]`, so no Rust reference to the
/// device's memory is ever formed. A reference would let the compiler assume the bytes do
/// not change behind it and merge, reorder or invent accesses; device registers change on
/// their own and some have side effects on read.
pub(crate) struct MmapBar {
    map: MmapRaw,
}

impl MmapBar {
    /// Maps the first `len` bytes of `file` read-write and shared.
    pub(crate) fn map(file: &File, len: u64, path: &Path) -> Result<Self, OpenError> {
        if len == 0 || !len.is_multiple_of(4) || len > 1 << 32 {
            return Err(OpenError::BadSize { path: path.to_owned(), len });
        }
        let map = MmapOptions::new()
            .len(len as usize)
            .map_raw(file)
            .map_err(|source| OpenError::Io { path: path.to_owned(), source })?;
        Ok(MmapBar { map })
    }

    pub(crate) fn len(&self) -> u64 {
        self.map.len() as u64
    }

    /// The word at `offset`, after checking that `words` words from there are aligned and
    /// inside the mapping.
    fn word(&self, offset: u32, words: usize) -> Result<*mut u32, AccessError> {
        check_range(self.len(), offset, 4 * words as u64)?;
        // The mapping is page-aligned and `offset` a multiple of 4, so the pointer is
        // aligned for u32; in bounds by the check above.
        Ok(self.map.as_mut_ptr().wrapping_add(offset as usize).cast::<u32>())
    }

    pub(crate) fn read32(&self, offset: u32) -> Result<u32, AccessError> {
        let p = self.word(offset, 1)?;
        // SAFETY: `p` is aligned and inside the live mapping (see `word`); a volatile load
        // through a raw pointer forms no reference to the shared memory.
        Ok(u32::from_le(unsafe { p.read_volatile() }))
    }

    pub(crate) fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
        let p = self.word(offset, 1)?;
        // SAFETY: as in `read32`, with a volatile store.
        unsafe { p.write_volatile(value.to_le()) };
        Ok(())
    }

    pub(crate) fn read_block(&self, offset: u32, out: &mut [u32]) -> Result<(), AccessError> {
        let base = self.word(offset, out.len())?;
        for (i, w) in out.iter_mut().enumerate() {
            // SAFETY: the whole block was range-checked by `word`; aligned as in read32.
            *w = u32::from_le(unsafe { base.add(i).read_volatile() });
        }
        Ok(())
    }

    pub(crate) fn flush(&self) -> io::Result<()> {
        self.map.flush()
    }
}
