//! Bit-packed counter storage.
//!
//! Counters of any width 1..=32 bits are packed back to back, LSB first, in a byte buffer
//! (counter `i` of width `w` occupies bits `i*w .. i*w+w`). This is the snapshot file's
//! layout too, so a snapshot is a plain copy of the buffer.
//!
//! Access reads one unaligned little-endian `u64` window starting at the counter's first
//! byte: a field of at most 32 bits starting at bit offset < 8 always fits in it, so every
//! width takes the same branch-free path (measured against `bitvec` in the `sketch`
//! benchmark: this path is several times faster for the narrow widths Tower uses).

/// A byte buffer holding bit fields, padded so that any field can be read as a `u64`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackedBits {
    bytes: Vec<u8>,
    bits: u64,
}

/// Bytes of slack after the last field so the 8-byte window never runs off the end.
const PAD: usize = 8;

impl PackedBits {
    /// A zeroed buffer of `bits` bits.
    pub fn new(bits: u64) -> Self {
        let len = bits.div_ceil(8) as usize;
        PackedBits { bytes: vec![0; len + PAD], bits }
    }

    /// Builds from raw bytes (as stored in a snapshot); `None` if too short.
    pub fn from_bytes(raw: &[u8], bits: u64) -> Option<Self> {
        let len = bits.div_ceil(8) as usize;
        if raw.len() < len {
            return None;
        }
        let mut p = Self::new(bits);
        p.bytes[..len].copy_from_slice(&raw[..len]);
        Some(p)
    }

    /// The packed bytes without padding.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.bytes.len() - PAD]
    }

    pub fn bits(&self) -> u64 {
        self.bits
    }

    /// Reads the `width`-bit field at bit offset `off`.
    #[inline(always)]
    pub fn get(&self, off: u64, width: u8) -> u32 {
        let byte = (off >> 3) as usize;
        let shift = (off & 7) as u32;
        let window = u64::from_le_bytes(self.bytes[byte..byte + 8].try_into().unwrap());
        ((window >> shift) & mask(width)) as u32
    }

    /// Writes `value` (truncated to `width` bits) into the field at bit offset `off`.
    #[inline(always)]
    pub fn set(&mut self, off: u64, width: u8, value: u32) {
        let byte = (off >> 3) as usize;
        let shift = (off & 7) as u32;
        let slot: &mut [u8; 8] = (&mut self.bytes[byte..byte + 8]).try_into().unwrap();
        let mut window = u64::from_le_bytes(*slot);
        let m = mask(width) << shift;
        window = (window & !m) | (((value as u64) << shift) & m);
        *slot = window.to_le_bytes();
    }

    /// Zeroes every field.
    pub fn clear(&mut self) {
        self.bytes.fill(0);
    }
}

#[inline(always)]
fn mask(width: u8) -> u64 {
    (1u64 << width) - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_do_not_disturb_neighbours() {
        for width in 1..=32u8 {
            let n = 50u64;
            let mut p = PackedBits::new(n * width as u64);
            let m = ((1u64 << width) - 1) as u32;
            for i in 0..n {
                p.set(i * width as u64, width, (i as u32).wrapping_mul(2_654_435_761) & m);
            }
            for i in 0..n {
                let want = (i as u32).wrapping_mul(2_654_435_761) & m;
                assert_eq!(p.get(i * width as u64, width), want, "width {width} index {i}");
            }
        }
    }

    #[test]
    fn layout_is_lsb_first() {
        let mut p = PackedBits::new(16);
        p.set(0, 4, 0xA);
        p.set(4, 4, 0x5);
        p.set(8, 8, 0xC3);
        assert_eq!(p.as_bytes(), &[0x5A, 0xC3]);
        assert_eq!(PackedBits::from_bytes(&[0x5A, 0xC3], 16).unwrap(), p);
        assert!(PackedBits::from_bytes(&[0x5A], 16).is_none());
    }
}
