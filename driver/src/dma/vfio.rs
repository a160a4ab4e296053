//! [`VfioDma`]: DMA memory mapped for the device through the VFIO IOMMU (pci-driver's
//! `PciIommu::map`): anonymous memory of this process, given bus addresses (IOVAs) from
//! the IOMMU's valid ranges, bumped upwards, never reused while the memory lives.
//!
//! It holds the device's VFIO container, not the device, so the BAR access that drives the
//! DMA engine (its register space is BAR `smartnic_contract::xdma::DMA_BAR`) can own the
//! device beside it. Not yet run on a board.

use super::{DmaError, DmaMemory};
use memmap2::MmapMut;
use pci_driver::backends::vfio::{VfioContainer, VfioPciDevice};
use pci_driver::device::PciDevice;
use pci_driver::regions::Permissions;
use std::sync::Arc;

/// One mapping: its IOVA and the memory behind it.
struct Mapping {
    iova: u64,
    mem: MmapMut,
}

/// DMA memory of a device opened through VFIO. Mappings are removed when it is dropped.
pub struct VfioDma {
    container: Arc<VfioContainer>,
    maps: Vec<Mapping>,
    /// The next free IOVA.
    next: u64,
}

impl VfioDma {
    /// DMA memory for `device` (every device of its VFIO container can reach it).
    pub fn new(device: &VfioPciDevice) -> Result<Self, DmaError> {
        let container = Arc::clone(device.container());
        // Never IOVA 0: a zeroed descriptor's addresses must point at nothing.
        let next =
            device.iommu().valid_iova_ranges().first().map(|r| r.start.max(4096)).ok_or_else(|| {
                DmaError::Alloc { len: 0, what: "the IOMMU offers no IOVA range for the device".into() }
            })?;
        Ok(VfioDma { container, maps: Vec::new(), next })
    }

    /// The IOVA for `len` bytes at the next aligned address inside a valid range.
    fn place(&self, len: u64, align: u64) -> Option<u64> {
        let iommu = self.container.iommu();
        iommu.valid_iova_ranges().iter().find_map(|r| {
            let at = self.next.max(r.start).next_multiple_of(align);
            (at.checked_add(len)? <= r.end).then_some(at)
        })
    }

    fn find(&self, iova: u64, len: usize) -> Result<(&Mapping, usize), DmaError> {
        self.maps
            .iter()
            .find(|m| iova >= m.iova && iova - m.iova + len as u64 <= m.mem.len() as u64)
            .map(|m| (m, (iova - m.iova) as usize))
            .ok_or(DmaError::Unmapped { iova, len })
    }
}

impl DmaMemory for VfioDma {
    fn alloc(&mut self, len: usize) -> Result<u64, DmaError> {
        let iommu = self.container.iommu();
        let align = iommu.alignment().max(4096);
        let size = len.max(1).next_multiple_of(align);
        let fail = |what: String| DmaError::Alloc { len, what };
        let mem = MmapMut::map_anon(size).map_err(|e| fail(format!("anonymous memory: {e}")))?;
        let iova =
            self.place(size as u64, align as u64).ok_or_else(|| fail("no free IOVA range left".into()))?;
        // SAFETY: `mem` is a live mapping of `size` bytes owned by `self.maps` until the
        // IOMMU mapping is removed in `drop`, so the device never reaches freed memory.
        unsafe { iommu.map(iova, size, mem.as_ptr(), Permissions::ReadWrite) }
            .map_err(|e| fail(format!("VFIO_IOMMU_MAP_DMA: {e}")))?;
        self.next = iova + size as u64;
        self.maps.push(Mapping { iova, mem });
        Ok(iova)
    }

    fn read(&self, iova: u64, out: &mut [u8]) -> Result<(), DmaError> {
        let (m, off) = self.find(iova, out.len())?;
        // The device writes behind the compiler's back: read the bytes as volatile, after
        // a fence that orders them after the register read that said they are there.
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        let src = m.mem[off..].as_ptr();
        for (i, b) in out.iter_mut().enumerate() {
            // SAFETY: `off + i` is inside the mapping (checked by `find`).
            *b = unsafe { std::ptr::read_volatile(src.add(i)) };
        }
        Ok(())
    }

    fn write(&mut self, iova: u64, data: &[u8]) -> Result<(), DmaError> {
        let (m, off) = self.find(iova, data.len())?;
        let dst = m.mem[off..].as_ptr() as *mut u8;
        for (i, b) in data.iter().enumerate() {
            // SAFETY: inside the mapping (checked by `find`); the mapping is writable
            // (MmapMut) and only this process and the device touch it.
            unsafe { std::ptr::write_volatile(dst.add(i), *b) };
        }
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }
}

impl Drop for VfioDma {
    fn drop(&mut self) {
        let iommu = self.container.iommu();
        for m in &self.maps {
            // Nothing useful to do if this fails: the container going away unmaps it too.
            let _ = iommu.unmap(m.iova, m.mem.len());
        }
    }
}
