//! The counter packing rule, and bit-packed counter storage that follows it.
//!
//! Counters of any width 1..=32 bits are packed back to back, LSB first (counter `i` of
//! width `w` occupies bits `i*w .. i*w+w`; a SuMax bucket's cells follow each other in
//! bucket order) in little-endian 64-bit words. Serialised with [`PackedBits::to_bytes`]
//! this is the snapshot file's layout: the software sketches keep their counters in a
//! [`PackedBits`], and the driver packs the words it reads from a readout window with
//! [`pack_words`], so both sides write the same bytes by the same code.
//!
//! Power-of-two widths never straddle a word, so the hot path is one aligned load and
//! store per counter; other widths take a second word when they cross a boundary (a branch
//! that is never taken for Tower's 2/4/8/16/32-bit arrays, so it costs nothing there).

/// Bit fields packed into 64-bit words (plus one word of padding so a straddling field
/// at the very end still has its second word). The words are owned (`Vec<u64>`, the
/// default) or borrowed ([`PackedBits::view_mut`]): the accessors are the same code for
/// both.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackedBits<S = Vec<u64>> {
    words: S,
    bits: u64,
}

/// A borrowed view of a [`PackedBits`]'s words. Why: a kernel that holds views in a local
/// array keeps each buffer's address in a register; through `&mut PackedBits` it re-read
/// the address from the sketch after every store into the counters (the compiler cannot
/// tell the two apart). Tower's batch kernels gained 18 % (CM) to 36 % (ACU) from views.
pub type PackedView<'a> = PackedBits<&'a mut [u64]>;

impl PackedBits {
    /// A zeroed buffer of `bits` bits.
    pub fn new(bits: u64) -> Self {
        PackedBits { words: vec![0; bits.div_ceil(64) as usize + 1], bits }
    }

    /// Builds from raw bytes (as stored in a snapshot); `None` if too short.
    pub fn from_bytes(raw: &[u8], bits: u64) -> Option<Self> {
        let len = bits.div_ceil(8) as usize;
        if raw.len() < len {
            return None;
        }
        let mut p = Self::new(bits);
        for (w, chunk) in p.words.iter_mut().zip(raw[..len].chunks(8)) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            *w = u64::from_le_bytes(b);
        }
        Some(p)
    }

    /// The packed bytes, `ceil(bits / 8)` of them.
    pub fn to_bytes(&self) -> Vec<u8> {
        let len = self.bits.div_ceil(8) as usize;
        self.words.iter().flat_map(|w| w.to_le_bytes()).take(len).collect()
    }

    pub fn bits(&self) -> u64 {
        self.bits
    }

    /// The same bits over a borrow of the words (see [`PackedView`]).
    #[inline(always)]
    pub fn view_mut(&mut self) -> PackedView<'_> {
        PackedBits { words: &mut self.words, bits: self.bits }
    }

    /// Zeroes every field.
    pub fn clear(&mut self) {
        self.words.fill(0);
    }
}

impl<S: AsRef<[u64]> + AsMut<[u64]>> PackedBits<S> {
    /// The words, padding included.
    #[inline(always)]
    fn w(&self) -> &[u64] {
        self.words.as_ref()
    }

    #[inline(always)]
    fn wm(&mut self) -> &mut [u64] {
        self.words.as_mut()
    }

    /// Reads the `width`-bit field at bit offset `off`.
    #[inline(always)]
    pub fn get(&self, off: u64, width: u8) -> u32 {
        let (w, sh) = ((off >> 6) as usize, (off & 63) as u32);
        let mut v = self.w()[w] >> sh;
        if sh + width as u32 > 64 {
            v |= self.w()[w + 1] << (64 - sh);
        }
        (v & mask(width)) as u32
    }

    /// Writes `value` (truncated to `width` bits) into the field at bit offset `off`.
    #[inline(always)]
    pub fn set(&mut self, off: u64, width: u8, value: u32) {
        let (w, sh) = ((off >> 6) as usize, (off & 63) as u32);
        let m = mask(width);
        let v = value as u64 & m;
        let words = self.wm();
        words[w] = (words[w] & !(m << sh)) | (v << sh);
        if sh + width as u32 > 64 {
            let hi = 64 - sh;
            words[w + 1] = (words[w + 1] & !(m >> hi)) | (v >> hi);
        }
    }

    /// Reads the `width`-bit field at bit offset `off`, which lies inside one word
    /// (`width` divides 64 and `off` is a multiple of it): one load and a shift, no
    /// straddle test. Kernels whose layout guarantees the alignment call it with a width
    /// that is a constant once inlined, so the mask and shifts fold too.
    #[inline(always)]
    pub fn get_in_word(&self, off: u64, width: u8) -> u32 {
        self.check_word(off);
        // SAFETY: the word of `off` was just checked to be in the buffer.
        unsafe { self.get_in_word_unchecked(off, width) }
    }

    /// [`PackedBits::get_in_word`] without the bounds check, for kernels that proved the
    /// bounds of all their offsets at once (against [`PackedBits::capacity`]).
    ///
    /// # Safety
    /// `off` must be below [`PackedBits::capacity`].
    #[inline(always)]
    pub unsafe fn get_in_word_unchecked(&self, off: u64, width: u8) -> u32 {
        debug_assert!(in_word(off, width), "{width}-bit field at bit {off}");
        debug_assert!(off < self.capacity(), "bit {off} past the buffer");
        // SAFETY: the caller keeps `off` below the capacity, so its word is in `words`.
        let word = unsafe { *self.w().get_unchecked((off >> 6) as usize) };
        ((word >> (off & 63)) & mask(width)) as u32
    }

    /// Writes `value` (truncated to `width` bits) into the field at `off`, under the
    /// alignment of [`PackedBits::get_in_word`].
    #[inline(always)]
    pub fn set_in_word(&mut self, off: u64, width: u8, value: u32) {
        debug_assert!(in_word(off, width), "{width}-bit field at bit {off}");
        let (w, sh) = ((off >> 6) as usize, off & 63);
        let m = mask(width);
        let words = self.wm();
        words[w] = (words[w] & !(m << sh)) | ((value as u64 & m) << sh);
    }

    /// Adds `delta` to the field at `off`, under the alignment of
    /// [`PackedBits::get_in_word`]; the caller knows the sum fits the field (an add that
    /// carried out of it would change the next field). One add into the word, no mask.
    #[inline(always)]
    pub fn add_in_word(&mut self, off: u64, width: u8, delta: u32) {
        self.check_word(off);
        // SAFETY: the word of `off` was just checked to be in the buffer.
        unsafe { self.add_in_word_unchecked(off, width, delta) }
    }

    /// [`PackedBits::add_in_word`] without the bounds check (see
    /// [`PackedBits::get_in_word_unchecked`]).
    ///
    /// # Safety
    /// `off` must be below [`PackedBits::capacity`].
    #[inline(always)]
    pub unsafe fn add_in_word_unchecked(&mut self, off: u64, width: u8, delta: u32) {
        debug_assert!(in_word(off, width), "{width}-bit field at bit {off}");
        debug_assert!(off < self.capacity(), "bit {off} past the buffer");
        debug_assert!(
            unsafe { self.get_in_word_unchecked(off, width) } as u64 + delta as u64 <= mask(width),
            "carry out of a field"
        );
        // SAFETY: the caller keeps `off` below the capacity, so its word is in `words`.
        unsafe { *self.wm().get_unchecked_mut((off >> 6) as usize) += (delta as u64) << (off & 63) };
    }

    /// [`PackedBits::increment_unless`] for a field under the alignment of
    /// [`PackedBits::get_in_word`]: one load, one add, one store, no branch.
    #[inline(always)]
    pub fn increment_in_word(&mut self, off: u64, width: u8, marker: u32) {
        self.check_word(off);
        // SAFETY: the word of `off` was just checked to be in the buffer.
        unsafe { self.increment_in_word_unchecked(off, width, marker) }
    }

    /// [`PackedBits::increment_in_word`] without the bounds check (see
    /// [`PackedBits::get_in_word_unchecked`]).
    ///
    /// # Safety
    /// `off` must be below [`PackedBits::capacity`].
    #[inline(always)]
    pub unsafe fn increment_in_word_unchecked(&mut self, off: u64, width: u8, marker: u32) {
        debug_assert!(in_word(off, width), "{width}-bit field at bit {off}");
        debug_assert!(off < self.capacity(), "bit {off} past the buffer");
        let sh = off & 63;
        // SAFETY: the caller keeps `off` below the capacity, so its word is in `words`.
        let word = unsafe { self.wm().get_unchecked_mut((off >> 6) as usize) };
        // Branch-free: narrow counters sit at the marker often enough that a branch here
        // mispredicts on a large share of packets.
        let live = (((*word >> sh) & mask(width)) as u32 != marker) as u64;
        *word += live << sh;
    }

    /// Bits the buffer holds, padding included: every offset below it is in bounds for
    /// the unchecked accessors. At least [`PackedBits::bits`].
    #[inline(always)]
    pub fn capacity(&self) -> u64 {
        self.w().len() as u64 * 64
    }

    /// Panics unless the word of bit `off` is in the buffer.
    #[inline(always)]
    fn check_word(&self, off: u64) {
        assert!(off < self.capacity(), "bit {off} past the buffer of {} bits", self.bits);
    }

    /// The 64 bits from bit offset `off` on, `off` a multiple of 8: a field of up to 64
    /// bits that starts on a byte boundary is the low bits of this. One unaligned load,
    /// where [`PackedBits::get`] takes a word, a shift and a straddle test per field; with
    /// [`PackedBits::set_window`], kernels whose buckets start on byte boundaries read and
    /// write a whole bucket at once. The padding word keeps the window of any field inside
    /// the buffer.
    #[inline(always)]
    pub fn window(&self, off: u64) -> u64 {
        let at = self.window_byte(off);
        #[cfg(target_endian = "little")]
        // SAFETY: `window_byte` checked that bytes `at..at + 8` lie inside `words`; the
        // read is unaligned, and on a little-endian machine the words' bytes are the
        // packed stream in order.
        return unsafe { self.w().as_ptr().cast::<u8>().add(at).cast::<u64>().read_unaligned() };
        #[cfg(not(target_endian = "little"))]
        return (self.get(off, 32) as u64) | (self.get(off + 32, 32) as u64) << 32;
    }

    /// Writes the 64 bits from bit offset `off` on (a multiple of 8): the inverse of
    /// [`PackedBits::window`]. The caller keeps the bits that are not its bucket's.
    #[inline(always)]
    pub fn set_window(&mut self, off: u64, value: u64) {
        let at = self.window_byte(off);
        #[cfg(target_endian = "little")]
        // SAFETY: as in `window`, bytes `at..at + 8` lie inside `words`.
        unsafe {
            self.wm().as_mut_ptr().cast::<u8>().add(at).cast::<u64>().write_unaligned(value)
        };
        #[cfg(not(target_endian = "little"))]
        {
            self.set(off, 32, value as u32);
            self.set(off + 32, 32, (value >> 32) as u32);
        }
    }

    /// The byte where the window at bit `off` starts, checked to leave 8 bytes in the words.
    #[inline(always)]
    fn window_byte(&self, off: u64) -> usize {
        debug_assert!(off.is_multiple_of(8), "window at bit {off}");
        let at = (off >> 3) as usize;
        assert!(at + 8 <= self.w().len() * 8, "window at bit {off} past the buffer");
        at
    }

    /// The buffer as bytes, the padding word included: on a little-endian machine the
    /// packed stream in order (callers check `cfg!(target_endian = "little")`), so a kernel
    /// whose cells start on byte boundaries loads and stores each as its own bytes. SuMax's
    /// does: a cell is one 2- or 4-byte store, where an in-word write is a read-modify-write
    /// of its word (38 against 25 Mpps).
    pub fn stream_bytes_mut(&mut self) -> &mut [u8] {
        let len = self.w().len() * 8;
        // SAFETY: the words' memory is `len` initialized bytes, any byte pattern is a valid
        // `u64`, `u8` has no alignment, and the slice borrows `self` mutably.
        unsafe { std::slice::from_raw_parts_mut(self.wm().as_mut_ptr().cast::<u8>(), len) }
    }

    /// Read-modify-write of one field: `f` maps the old value to the new one, or `None`
    /// to leave it. One load and at most one store on the fast path.
    #[inline(always)]
    pub fn update(&mut self, off: u64, width: u8, f: impl FnOnce(u32) -> Option<u32>) {
        if let Some(v) = f(self.get(off, width)) {
            self.set(off, width, v);
        }
    }

    /// Adds one to the field at `off` unless it holds `marker` (Count-Min with a sticky
    /// overflow marker). `marker` must be the field's largest value, so `v + 1` never
    /// carries out of the field and the add can go straight into the word.
    #[inline(always)]
    pub fn increment_unless(&mut self, off: u64, width: u8, marker: u32) {
        if (off & 63) + width as u64 <= 64 {
            self.increment_in_word(off, width, marker);
        } else {
            self.update(off, width, |v| (v != marker).then_some(v + 1));
        }
    }

    /// Hints the CPU to pull the field at bit offset `off` into cache (no effect on
    /// values; a no-op off x86_64). Used to overlap the cache misses of upcoming packets.
    #[inline(always)]
    pub fn prefetch(&self, off: u64) {
        let p = self.w().as_ptr().wrapping_add((off >> 6) as usize);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch is a hint that never faults, whatever the address, and SSE is
        // part of the x86_64 baseline.
        unsafe {
            use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(p as *const i8);
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = p;
    }
}

#[inline(always)]
/// The largest value of a `width`-bit field (0..=32 bits): what the packing rule admits,
/// and the mask the stream engine and its software twin cut a window word with.
pub fn mask(width: u8) -> u64 {
    (1u64 << width) - 1
}

/// Whether a `width`-bit field at `off` lies inside one word: the in-word accessors'
/// debug check.
fn in_word(off: u64, width: u8) -> bool {
    (off & 63) + width as u64 <= 64
}

/// Bytes of `depth` packed entries of `bits` bits each: `ceil(depth * bits / 8)`.
pub fn packed_len(depth: u32, bits: u64) -> usize {
    (depth as u64 * bits).div_ceil(8) as usize
}

/// A counter that does not fit its width (a failed read or a corrupt window).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooWide {
    /// Index of the word in the input.
    pub index: usize,
    pub value: u32,
    pub width: u8,
}

/// Packs `words` in the packing rule, word `i` taking `widths[i % widths.len()]` bits (Tower:
/// one width; SuMax: the cell widths of one bucket in order). A word above its width's
/// maximum is an error, never silently truncated.
pub fn pack_words(words: &[u32], widths: &[u8]) -> Result<Vec<u8>, TooWide> {
    let per_row: u64 = widths.iter().map(|&w| w as u64).sum();
    let rows = words.len() as u64 / widths.len().max(1) as u64;
    let mut p = PackedBits::new(rows * per_row);
    let mut off = 0u64;
    for (index, (&value, &width)) in words.iter().zip(widths.iter().cycle()).enumerate() {
        if value as u64 > mask(width) {
            return Err(TooWide { index, value, width });
        }
        p.set(off, width, value);
        off += width as u64;
    }
    Ok(p.to_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_do_not_disturb_neighbours() {
        for width in 1..=32u8 {
            let n = 70u64;
            let mut p = PackedBits::new(n * width as u64);
            let m = ((1u64 << width) - 1) as u32;
            let val = |i: u64| (i as u32).wrapping_mul(2_654_435_761) & m;
            for i in 0..n {
                p.set(i * width as u64, width, val(i));
            }
            for i in (0..n).step_by(3) {
                p.update(i * width as u64, width, |v| Some(!v));
            }
            for i in (1..n).step_by(3) {
                p.increment_unless(i * width as u64, width, m);
            }
            for i in 0..n {
                let want = match i % 3 {
                    0 => !val(i) & m,
                    1 if val(i) != m => val(i) + 1,
                    _ => val(i),
                };
                assert_eq!(p.get(i * width as u64, width), want, "width {width} index {i}");
            }
            assert_eq!(PackedBits::from_bytes(&p.to_bytes(), p.bits()).unwrap(), p);
        }
    }

    /// The in-word accessors read and write what `get`, `set` and `increment_unless` do, at
    /// aligned offsets of every width that divides 64 (up to 32), markers included, and
    /// leave the neighbours alone.
    #[test]
    fn in_word_accessors_equal_get_and_set() {
        for width in [1u8, 2, 4, 8, 16, 32] {
            let m = mask(width) as u32;
            let mut p = PackedBits::new(512);
            for i in 0..512 / width as u64 {
                p.set(
                    i * width as u64,
                    width,
                    (i as u32).wrapping_mul(0x9e37_79b9) | ((i % 4 == 0) as u32 * m),
                );
            }
            let mut q = p.clone();
            for i in 0..512 / width as u64 {
                let off = i * width as u64;
                assert_eq!(q.get_in_word(off, width), p.get(off, width), "{width}-bit field {i}");
                // SAFETY: `off` is below the 512 bits the buffer holds.
                assert_eq!(unsafe { q.get_in_word_unchecked(off, width) }, p.get(off, width));
                if i % 2 == 0 {
                    p.increment_unless(off, width, m);
                    q.increment_in_word(off, width, m);
                } else if i % 3 == 0 && p.get(off, width) < m {
                    p.set(off, width, p.get(off, width) + 1);
                    q.add_in_word(off, width, 1);
                } else {
                    p.set(off, width, !(i as u32));
                    q.set_in_word(off, width, !(i as u32));
                }
                assert_eq!(q, p, "{width}-bit field {i}");
            }
        }
    }

    /// The checked in-word accessors refuse an offset past the buffer (the unchecked ones
    /// leave that proof to their caller).
    #[test]
    #[should_panic(expected = "past the buffer")]
    fn in_word_accessors_check_bounds() {
        let mut p = PackedBits::new(100);
        p.add_in_word(p.capacity(), 8, 1);
    }

    /// A window is the 64 bits `get` reads from its offset on, and writing one back
    /// changes exactly those bits, at every byte offset up to the last field's.
    #[test]
    fn windows_equal_fields_at_every_byte() {
        let mut p = PackedBits::new(8 * 40 + 5);
        for i in 0..(p.bits() / 8) {
            p.set(i * 8, 8, (i as u32).wrapping_mul(167) ^ 0x5a);
        }
        for off in (0..p.bits()).step_by(8) {
            let want = (0..2).fold(0u64, |v, h| v | (p.get(off + 32 * h, 32) as u64) << (32 * h));
            assert_eq!(p.window(off), want, "window at bit {off}");
            let mut q = p.clone();
            q.set_window(off, !want);
            for bit in (0..p.bits() + 64).step_by(4) {
                let inside = (off..off + 64).contains(&bit);
                let expect = if inside { !p.get(bit, 4) & 0xf } else { p.get(bit, 4) };
                assert_eq!(q.get(bit, 4), expect, "window at bit {off}, nibble at bit {bit}");
            }
        }
    }

    /// Reads a field bit by bit (independent of `PackedBits::get`).
    fn bit_get(bytes: &[u8], off: u64, width: u8) -> u32 {
        (0..width as u64).fold(0, |v, b| {
            let bit = off + b;
            v | (((bytes[(bit / 8) as usize] >> (bit % 8)) & 1) as u32) << b
        })
    }

    #[test]
    fn pack_words_is_lsb_first_for_any_width() {
        for w in [1u8, 2, 3, 5, 8, 12, 16, 31, 32] {
            let words: Vec<u32> =
                (0..37u32).map(|i| i.wrapping_mul(2_654_435_761) & mask(w) as u32).collect();
            let bytes = pack_words(&words, &[w]).unwrap();
            assert_eq!(bytes.len(), packed_len(37, w as u64));
            for (i, &v) in words.iter().enumerate() {
                assert_eq!(bit_get(&bytes, i as u64 * w as u64, w), v, "width {w} counter {i}");
            }
        }
        assert_eq!(pack_words(&[0x1, 0x2], &[4]).unwrap(), vec![0x21]);
    }

    #[test]
    fn pack_words_mixed_cells_in_bucket_order() {
        let widths = [32u8, 16, 16, 32, 32];
        let words: Vec<u32> = (0..10).map(|i| 1000 + i).collect();
        let bytes = pack_words(&words, &widths).unwrap();
        assert_eq!(bytes.len(), packed_len(2, 128));
        assert_eq!(bit_get(&bytes, 0, 32), 1000);
        assert_eq!(bit_get(&bytes, 32, 16), 1001);
        assert_eq!(bit_get(&bytes, 128 + 48, 16), 1007);
    }

    #[test]
    fn pack_words_rejects_values_wider_than_the_counter() {
        assert_eq!(pack_words(&[1, 256], &[8]), Err(TooWide { index: 1, value: 256, width: 8 }));
        // 32-bit counters may hold all ones (the overflow marker).
        assert!(pack_words(&[u32::MAX], &[32]).is_ok());
    }

    #[test]
    fn layout_is_lsb_first() {
        let mut p = PackedBits::new(16);
        p.set(0, 4, 0xA);
        p.set(4, 4, 0x5);
        p.set(8, 8, 0xC3);
        assert_eq!(p.to_bytes(), vec![0x5A, 0xC3]);
        assert_eq!(PackedBits::from_bytes(&[0x5A, 0xC3], 16).unwrap(), p);
        assert!(PackedBits::from_bytes(&[0x5A], 16).is_none());
    }
}
