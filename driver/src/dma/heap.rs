//! [`HeapDma`]: DMA memory in the process's heap with made-up bus addresses, shared by the
//! driver and a model of the device (clones are handles to the same memory).

use super::{DmaError, DmaMemory};
use std::sync::{Arc, Mutex, MutexGuard};

/// Where the made-up bus addresses start: above 4 GiB, so every descriptor's high address
/// words are exercised.
const BASE: u64 = 0x1_0000_0000;
/// Allocations are 4 KiB aligned with an unmapped 4 KiB page between them, so a write that
/// runs past its buffer is an [`DmaError::Unmapped`], not a silent write into the next one.
const PAGE: u64 = 4096;

#[derive(Default)]
struct Regions {
    /// (bus address, bytes), in increasing address order.
    regions: Vec<(u64, Vec<u8>)>,
}

/// In-process DMA memory. A clone shares the memory (the model of the device holds one).
#[derive(Clone, Default)]
pub struct HeapDma {
    inner: Arc<Mutex<Regions>>,
}

impl HeapDma {
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes allocated so far.
    pub fn allocated(&self) -> usize {
        self.lock().regions.iter().map(|(_, b)| b.len()).sum()
    }

    fn lock(&self) -> MutexGuard<'_, Regions> {
        // A panic elsewhere while holding the lock leaves plain bytes behind: still usable.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Regions {
    /// The allocation holding `iova..iova + len` and the offset in it.
    fn find(&mut self, iova: u64, len: usize) -> Result<(&mut Vec<u8>, usize), DmaError> {
        let i = self.regions.partition_point(|(base, _)| *base <= iova);
        let unmapped = DmaError::Unmapped { iova, len };
        let (base, bytes) =
            self.regions.get_mut(i.checked_sub(1).ok_or(DmaError::Unmapped { iova, len })?).unwrap();
        let off = (iova - *base) as usize;
        match off.checked_add(len) {
            Some(end) if end <= bytes.len() => Ok((bytes, off)),
            _ => Err(unmapped),
        }
    }
}

impl DmaMemory for HeapDma {
    fn alloc(&mut self, len: usize) -> Result<u64, DmaError> {
        let mut r = self.lock();
        let next = r.regions.last().map_or(BASE, |(b, v)| (b + v.len() as u64).next_multiple_of(PAGE) + PAGE);
        if len == 0 || next.checked_add(len as u64).is_none() {
            return Err(DmaError::Alloc { len, what: "an empty or unaddressable allocation".into() });
        }
        r.regions.push((next, vec![0; len]));
        Ok(next)
    }

    fn read(&self, iova: u64, out: &mut [u8]) -> Result<(), DmaError> {
        let mut r = self.lock();
        let (b, off) = r.find(iova, out.len())?;
        out.copy_from_slice(&b[off..off + out.len()]);
        Ok(())
    }

    fn write(&mut self, iova: u64, data: &[u8]) -> Result<(), DmaError> {
        let mut r = self.lock();
        let (b, off) = r.find(iova, data.len())?;
        b[off..off + data.len()].copy_from_slice(data);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_aligned_apart_and_shared_by_clones() {
        let mut m = HeapDma::new();
        let a = m.alloc(10).unwrap();
        let b = m.alloc(4096).unwrap();
        assert_eq!((a % PAGE, b % PAGE), (0, 0));
        assert!(b >= a + 2 * PAGE, "a guard page between them");
        let mut dev = m.clone();
        dev.write(b + 4090, &[7; 6]).unwrap();
        let mut out = [0; 6];
        m.read(b + 4090, &mut out).unwrap();
        assert_eq!(out, [7; 6]);
        assert_eq!(m.allocated(), 4106);
    }

    #[test]
    fn accesses_outside_an_allocation_are_unmapped() {
        let mut m = HeapDma::new();
        let a = m.alloc(16).unwrap();
        assert!(matches!(m.write(a + 10, &[0; 7]), Err(DmaError::Unmapped { len: 7, .. })));
        assert!(matches!(m.read(a - 1, &mut [0; 1]), Err(DmaError::Unmapped { .. })));
        assert!(matches!(m.read(a + 4096, &mut [0; 1]), Err(DmaError::Unmapped { .. })));
        assert!(matches!(m.alloc(0), Err(DmaError::Alloc { len: 0, .. })));
        let e = m.read(0, &mut [0; 4]).unwrap_err();
        assert!(e.to_string().contains("0x0..+4"), "{e}");
    }
}
