//! The readout stream: one epoch's idle bank, every readout window in turn, as the NIC's
//! stream engine writes it to the host (by DMA, through the card-to-host channel) instead
//! of one 32-bit register read per counter.
//!
//! The stream lands in host memory, so unlike the network headers of this module it is
//! little-endian, in 64-bit words, like the snapshot file and the packing rule
//! ([`crate::packing`]): a window's payload is exactly the bytes `pack_words` gives for the
//! words the MMIO path reads from that window, so both paths build the same snapshot.
//!
//! ```text
//! word 0      MAGIC ("SNICRDS1")
//! word 1      bits 0..16 VERSION, 16..32 window count, 32..64 EPOCH at the start
//! word 2      bits 0..32 SEQUENCE at the start, 32..64 TABLE_MISSES (0 without the per-switch half)
//! word 3      IDLE_PACKETS
//! chunks, each
//!   chunk     bits 0..8 window w, 8..16 zero, 16..40 offset o, 40..64 payload words n
//!   n words   words o..o+n of window w's payload: its counter words packed with the
//!             window's widths (the last word zero-padded)
//! end         bits 0..8 END_MARK, 8..32 zero, 32..64 SEQUENCE at the end
//! trailer     bits 0..32 CRC-32C (`snapshot::CHECKSUM`) of every byte before the trailer,
//!             32..64 TRAILER_TAG
//! ```
//!
//! Every window's payload is covered exactly once, its chunks in offset order; chunks of
//! different windows may interleave. A chunk may be empty (`n = 0`, at the window's end
//! offset): a filler. The NIC's engine reads every window at once (one lane per window),
//! cuts each window into chunks of [`CHUNK_PAYLOAD`] words ([`window_chunks`]: full chunks,
//! the rest, then empty chunks until the window's words fill whole 256-bit beats of
//! [`BEAT_WORDS`] words) and sends whole chunks in whatever order the lanes fill them, so
//! its streams differ from [`encode`]'s (window order) only in the order of the chunks.
//! The stream's length follows from its chunks, so it can be found in a larger buffer; it
//! is [`stream_words`] whatever the order.
//!
//! A host trusts a stream only when the CRC holds and SEQUENCE did not move between start
//! and end (a swap or clear during the stream would have changed the idle bank under it).
//! [`crc_columns`] is the per-word CRC step as a matrix, so the engine folds one 64-bit
//! word per clock with constants derived from the same CRC definition, and
//! [`crc_columns_words`] the step over a whole beat.

use crate::geometry::{SuMaxGeometry, TowerGeometry};
use crate::packing::{pack_words, PackedBits, TooWide};
use crate::per_switch::PerSwitchGeometry;
use crate::snapshot::CHECKSUM;

/// Word 0 of every stream.
pub const MAGIC: u64 = u64::from_le_bytes(*b"SNICRDS1");
/// Format version of this contract revision: 2 since streams are cut into
/// [`window_chunks`] of whole 256-bit beats (version 1 had one chunk per window), so a host
/// of one version sizes its buffer for the other's streams wrongly and says so instead.
pub const VERSION: u16 = 2;
/// Words before the first window chunk.
pub const HEADER_WORDS: usize = 4;
/// Bits 32..64 of the trailer.
pub const TRAILER_TAG: u32 = u32::from_le_bytes(*b"ENDS");

/// What one window contributes: `words` counter words, word `k` of `widths[k % len]` bits
/// (one width for a Tower array; a SuMax bucket's cells; a latency bucket's count and sum;
/// a table slot's words).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowSpec {
    pub words: u64,
    pub widths: Vec<u8>,
}

impl WindowSpec {
    /// Packed bits of the window's words.
    pub fn bits(&self) -> u64 {
        let n = self.widths.len() as u64;
        let row: u64 = self.widths.iter().map(|&w| w as u64).sum();
        let tail: u64 = self.widths[..(self.words % n) as usize].iter().map(|&w| w as u64).sum();
        self.words / n * row + tail
    }

    /// 64-bit payload words of the window's chunk.
    pub fn payload_words(&self) -> u64 {
        self.bits().div_ceil(64)
    }
}

/// The windows of a bitstream in `win_sel` order (the order of `regs::Layout::windows`):
/// Tower arrays, SuMax arrays, then latency arrays and table ways with the per-switch half.
pub fn window_specs(t: &TowerGeometry, s: &SuMaxGeometry, p: Option<&PerSwitchGeometry>) -> Vec<WindowSpec> {
    let mut v: Vec<WindowSpec> =
        t.arrays.iter().map(|a| WindowSpec { words: a.depth as u64, widths: vec![a.width] }).collect();
    let cells = s.cell_widths();
    v.extend(
        s.hashes
            .iter()
            .map(|_| WindowSpec { words: s.depth as u64 * cells.len() as u64, widths: cells.clone() }),
    );
    if let Some(p) = p {
        for a in &p.latency.arrays {
            v.push(WindowSpec { words: 2 * a.depth as u64, widths: vec![a.count_width, a.sum_width] });
        }
        let slot = slot_word_widths();
        for _ in &p.table.ways {
            v.push(WindowSpec { words: p.table.depth as u64 * slot.len() as u64, widths: slot.clone() });
        }
    }
    v
}

/// The widths of a table window's words in turn: 32 bits for every word of a slot but the
/// last, which holds the rest of `per_switch::slot::BITS`.
pub fn slot_word_widths() -> Vec<u8> {
    let bits = crate::per_switch::slot::BITS;
    (0..crate::regs::per_switch::SLOT_WORDS as u64).map(|j| (bits - 32 * j).min(32) as u8).collect()
}

/// The registers a stream carries besides the windows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamHeader {
    pub epoch: u32,
    pub sequence: u32,
    pub table_misses: u32,
    pub idle_packets: u64,
}

/// A checked stream: its header, every window's words (as MMIO would read them) and
/// SEQUENCE at its end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadoutStream {
    pub header: StreamHeader,
    pub windows: Vec<Vec<u32>>,
    pub sequence_end: u32,
}

impl ReadoutStream {
    /// True when SEQUENCE did not move while the stream was written.
    pub fn consistent(&self) -> bool {
        self.sequence_end == self.header.sequence
    }
}

/// Why a buffer is not a stream of the expected windows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamError {
    Truncated { need: usize, have: usize },
    Ragged { bytes: usize },
    Magic { found: u64 },
    Version(u16),
    WindowCount { found: u16, want: usize },
    Chunk { at: usize, found: u64 },
    Missing { window: usize, have: u64, want: u64 },
    Trailer { found: u32 },
    Crc { stored: u32, computed: u32 },
}

impl core::fmt::Display for StreamError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Truncated { need, have } => {
                write!(f, "readout stream truncated: {have} words, the windows need {need}")
            }
            Self::Ragged { bytes } => {
                write!(f, "readout stream is {bytes} bytes, not a whole number of 64-bit words")
            }
            Self::Magic { found } => write!(f, "not a readout stream (word 0 is {found:#018x})"),
            Self::Version(v) => {
                write!(f, "readout stream version {v} is not supported (this build reads version {VERSION})")
            }
            Self::WindowCount { found, want } => {
                write!(f, "readout stream has {found} windows, the device map has {want}")
            }
            Self::Chunk { at, found } => write!(
                f,
                "readout stream word {at}: {found:#018x} is not the next chunk of a window (bad window, \
                 offset or length)"
            ),
            Self::Missing { window, have, want } => {
                write!(f, "readout stream ends with window {window} at {have} of its {want} payload words")
            }
            Self::Trailer { found } => write!(
                f,
                "readout stream trailer tag {found:#010x} is wrong (the stream was cut or overwritten)"
            ),
            Self::Crc { stored, computed } => {
                write!(
                    f,
                    "readout stream CRC {stored:#010x} should be {computed:#010x}: corrupted in transfer"
                )
            }
        }
    }
}

impl std::error::Error for StreamError {}

/// Marks the end word (no window has this number).
pub const END_MARK: u8 = 0xFF;
/// Largest chunk payload (24-bit field) and payload offset.
pub const MAX_CHUNK_WORDS: u64 = (1 << 24) - 1;

/// 64-bit words of one beat of the card-to-host channel (256 bits, XDMA's width at Gen3 x8).
pub const BEAT_WORDS: u64 = 4;
/// Payload words of a full chunk: with its chunk word, 64 words, 16 beats.
pub const CHUNK_PAYLOAD: u64 = 63;

/// The chunks `(offset, words)` of a window of `p` payload words: full chunks of
/// [`CHUNK_PAYLOAD`], the rest, then empty chunks at offset `p` until the window's words
/// (chunk words and payload) are a whole number of beats.
pub fn window_chunks(p: u64) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = (0..p.div_ceil(CHUNK_PAYLOAD))
        .map(|i| (i * CHUNK_PAYLOAD, CHUNK_PAYLOAD.min(p - i * CHUNK_PAYLOAD)))
        .collect();
    while !(v.len() as u64 + p).is_multiple_of(BEAT_WORDS) {
        v.push((p, 0));
    }
    v
}

/// Words a window of `p` payload words takes in the stream (a multiple of [`BEAT_WORDS`]).
pub fn window_words(p: u64) -> u64 {
    (p + p.div_ceil(CHUNK_PAYLOAD)).next_multiple_of(BEAT_WORDS)
}

/// Words of the stream: the header, every window's chunks ([`window_chunks`]), the end word
/// and the trailer. The same for any order of the chunks.
pub fn stream_words(specs: &[WindowSpec]) -> usize {
    HEADER_WORDS + specs.iter().map(|s| window_words(s.payload_words()) as usize).sum::<usize>() + 2
}

/// The chunk word of `n` payload words from offset `o` of window `w`.
pub fn chunk_word(w: usize, o: u64, n: u64) -> u64 {
    w as u64 | o << 16 | n << 40
}

/// The stream of these window contents with every window's chunks ([`window_chunks`]) in
/// window order: the software reference the hardware is compared with, chunk by chunk. A
/// word above its width is an error, as in the packing rule.
pub fn encode(
    h: &StreamHeader,
    windows: &[(&WindowSpec, &[u32])],
    sequence_end: u32,
) -> Result<Vec<u64>, TooWide> {
    let payloads = payloads(windows)?;
    let order: Vec<(usize, u64, u64)> = payloads
        .iter()
        .enumerate()
        .flat_map(|(i, p)| window_chunks(p.len() as u64).into_iter().map(move |(o, n)| (i, o, n)))
        .collect();
    Ok(assemble(h, &payloads, &order, sequence_end))
}

/// Each window's payload words.
pub fn payloads(windows: &[(&WindowSpec, &[u32])]) -> Result<Vec<Vec<u64>>, TooWide> {
    windows
        .iter()
        .map(|(spec, words)| {
            let bytes = pack_words(words, &spec.widths)?;
            let mut payload: Vec<u64> = bytes.chunks(8).map(le_word).collect();
            payload.resize(spec.payload_words() as usize, 0);
            Ok(payload)
        })
        .collect()
}

/// A stream of the given chunks `(window, offset, words)` in that order.
pub fn assemble(
    h: &StreamHeader,
    payloads: &[Vec<u64>],
    order: &[(usize, u64, u64)],
    sequence_end: u32,
) -> Vec<u64> {
    let mut w = vec![
        MAGIC,
        VERSION as u64 | (payloads.len() as u64) << 16 | (h.epoch as u64) << 32,
        h.sequence as u64 | (h.table_misses as u64) << 32,
        h.idle_packets,
    ];
    for &(i, o, n) in order {
        w.push(chunk_word(i, o, n));
        w.extend_from_slice(&payloads[i][o as usize..(o + n) as usize]);
    }
    w.push(END_MARK as u64 | (sequence_end as u64) << 32);
    let crc = crc_of(&w);
    w.push(crc as u64 | (TRAILER_TAG as u64) << 32);
    w
}

/// Checks and decodes the stream at the start of `w` (which may be longer: a DMA buffer);
/// returns it and its length in words.
pub fn parse(w: &[u64], specs: &[WindowSpec]) -> Result<(ReadoutStream, usize), StreamError> {
    let truncated = |need: usize| StreamError::Truncated { need, have: w.len() };
    if w.len() < HEADER_WORDS + 2 {
        return Err(truncated(HEADER_WORDS + 2));
    }
    if w[0] != MAGIC {
        return Err(StreamError::Magic { found: w[0] });
    }
    let version = w[1] as u16;
    if version != VERSION {
        return Err(StreamError::Version(version));
    }
    let count = (w[1] >> 16) as u16;
    if count as usize != specs.len() {
        return Err(StreamError::WindowCount { found: count, want: specs.len() });
    }
    let want: Vec<u64> = specs.iter().map(WindowSpec::payload_words).collect();
    let mut payloads: Vec<Vec<u64>> = want.iter().map(|&n| Vec::with_capacity(n as usize)).collect();
    let mut at = HEADER_WORDS;
    loop {
        let c = *w.get(at).ok_or_else(|| truncated(at + 2))?;
        if c as u8 == END_MARK && (c >> 8) as u32 & 0xFF_FFFF == 0 {
            break;
        }
        let (win, o, n) = (c as u8 as usize, c >> 16 & MAX_CHUNK_WORDS, c >> 40);
        let ok =
            win < specs.len() && (c >> 8) as u8 == 0 && o == payloads[win].len() as u64 && o + n <= want[win];
        if !ok {
            return Err(StreamError::Chunk { at, found: c });
        }
        let data = w.get(at + 1..at + 1 + n as usize).ok_or_else(|| truncated(at + 3 + n as usize))?;
        payloads[win].extend_from_slice(data);
        at += 1 + n as usize;
    }
    if let Some(window) = (0..specs.len()).find(|&i| payloads[i].len() as u64 != want[i]) {
        return Err(StreamError::Missing { window, have: payloads[window].len() as u64, want: want[window] });
    }
    let trailer = *w.get(at + 1).ok_or_else(|| truncated(at + 2))?;
    if (trailer >> 32) as u32 != TRAILER_TAG {
        return Err(StreamError::Trailer { found: (trailer >> 32) as u32 });
    }
    let computed = crc_of(&w[..at + 1]);
    if trailer as u32 != computed {
        return Err(StreamError::Crc { stored: trailer as u32, computed });
    }
    let header = StreamHeader {
        epoch: (w[1] >> 32) as u32,
        sequence: w[2] as u32,
        table_misses: (w[2] >> 32) as u32,
        idle_packets: w[3],
    };
    let windows = payloads.iter().zip(specs).map(|(p, spec)| unpack(p, spec)).collect();
    Ok((ReadoutStream { header, windows, sequence_end: (w[at] >> 32) as u32 }, at + 2))
}

/// [`parse`] of a byte buffer (as a DMA lands it).
pub fn parse_bytes(b: &[u8], specs: &[WindowSpec]) -> Result<(ReadoutStream, usize), StreamError> {
    if !b.len().is_multiple_of(8) {
        return Err(StreamError::Ragged { bytes: b.len() });
    }
    parse(&b.chunks(8).map(le_word).collect::<Vec<_>>(), specs)
}

/// The window's counter words back out of its payload.
fn unpack(payload: &[u64], spec: &WindowSpec) -> Vec<u32> {
    let bytes: Vec<u8> = payload.iter().flat_map(|w| w.to_le_bytes()).collect();
    let p = PackedBits::from_bytes(&bytes, spec.bits()).expect("payload holds the window's bits");
    let mut off = 0u64;
    (0..spec.words as usize)
        .map(|k| {
            let width = spec.widths[k % spec.widths.len()];
            let v = p.get(off, width);
            off += width as u64;
            v
        })
        .collect()
}

fn le_word(c: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b[..c.len()].copy_from_slice(c);
    u64::from_le_bytes(b)
}

/// CRC-32C of the words' little-endian bytes.
pub fn crc_of(words: &[u64]) -> u32 {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    CHECKSUM.checksum(&bytes)
}

/// The CRC register step over one 64-bit word (its 8 little-endian bytes) as a matrix:
/// `step(r, w) = XOR of state[j] for each set bit j of r, XOR of data[b] for each set bit b
/// of w`. The engine starts from `CHECKSUM.init`, folds every word, and writes
/// `CHECKSUM.finish` of the register.
pub fn crc_columns() -> ([u32; 32], [u32; 64]) {
    let state = core::array::from_fn(|j| CHECKSUM.register_step(1 << j, &[0; 8]));
    let data = core::array::from_fn(|b| CHECKSUM.register_step(0, &(1u64 << b).to_le_bytes()));
    (state, data)
}

/// [`crc_columns`] for `k` words folded at once (a beat: `k` = [`BEAT_WORDS`]): the state
/// columns, then one column per bit of the `64 * k` data bits, word 0's bits first (the
/// bytes in stream order).
pub fn crc_columns_words(k: usize) -> ([u32; 32], Vec<u32>) {
    let state = core::array::from_fn(|j| CHECKSUM.register_step(1 << j, &vec![0; 8 * k]));
    let data = (0..64 * k)
        .map(|b| {
            let mut bytes = vec![0u8; 8 * k];
            bytes[b / 8] = 1 << (b % 8);
            CHECKSUM.register_step(0, &bytes)
        })
        .collect();
    (state, data)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specs() -> Vec<WindowSpec> {
        vec![
            WindowSpec { words: 5, widths: vec![8] },
            WindowSpec { words: 6, widths: vec![32, 16, 4] },
            WindowSpec { words: 3, widths: vec![32] },
        ]
    }

    fn contents(specs: &[WindowSpec]) -> Vec<Vec<u32>> {
        specs
            .iter()
            .map(|s| {
                (0..s.words as usize)
                    .map(|k| {
                        let w = s.widths[k % s.widths.len()];
                        (0x9E37_79B9u32.wrapping_mul(k as u32 + 7)) & (u32::MAX >> (32 - w))
                    })
                    .collect()
            })
            .collect()
    }

    fn stream() -> (Vec<u64>, Vec<Vec<u32>>) {
        let s = specs();
        let c = contents(&s);
        let h = StreamHeader { epoch: 7, sequence: 12, table_misses: 3, idle_packets: 1 << 40 };
        let pairs: Vec<(&WindowSpec, &[u32])> = s.iter().zip(&c).map(|(s, c)| (s, c.as_slice())).collect();
        (encode(&h, &pairs, 12).unwrap(), c)
    }

    #[test]
    fn round_trip() {
        let (w, c) = stream();
        assert_eq!(w.len(), stream_words(&specs()));
        let mut long = w.clone();
        long.extend([0xAB; 5]);
        let (r, len) = parse(&long, &specs()).unwrap();
        assert_eq!(len, w.len());
        assert_eq!(r.windows, c);
        assert_eq!(r.header.epoch, 7);
        assert_eq!(r.header.idle_packets, 1 << 40);
        assert!(r.consistent());
        let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
        assert_eq!(parse_bytes(&bytes, &specs()).unwrap().0, r);
        assert!(matches!(parse_bytes(&bytes[..9], &specs()), Err(StreamError::Ragged { bytes: 9 })));
    }

    #[test]
    fn payload_is_the_packing_rule() {
        let (w, c) = stream();
        // Window 0: five 8-bit counters in one word.
        let bytes = pack_words(&c[0], &[8]).unwrap();
        assert_eq!(w[HEADER_WORDS], chunk_word(0, 0, 1));
        assert_eq!(chunk_word(3, 5, 7), 3 | 5 << 16 | 7 << 40);
        assert_eq!(w[HEADER_WORDS + 1].to_le_bytes()[..5], bytes[..]);
        assert_eq!(specs()[1].bits(), 2 * 52);
    }

    #[test]
    fn every_single_bit_flip_is_caught() {
        let (w, _) = stream();
        for i in 0..w.len() {
            for b in [0, 31, 63] {
                let mut x = w.clone();
                x[i] ^= 1 << b;
                assert!(parse(&x, &specs()).is_err(), "flip of word {i} bit {b} passed");
            }
        }
        assert!(matches!(parse(&w[..w.len() - 1], &specs()), Err(StreamError::Truncated { .. })));
    }

    #[test]
    fn interleaved_chunks_give_the_same_windows() {
        let s = specs();
        let c = contents(&s);
        let pairs: Vec<(&WindowSpec, &[u32])> = s.iter().zip(&c).map(|(s, c)| (s, c.as_slice())).collect();
        let p = payloads(&pairs).unwrap();
        assert_eq!(p.iter().map(Vec::len).collect::<Vec<_>>(), [1, 2, 2]);
        let h = StreamHeader::default();
        let order = [(1, 0, 1), (2, 0, 1), (0, 0, 1), (2, 1, 1), (1, 1, 1)];
        let (r, _) = parse(&assemble(&h, &p, &order, 0), &s).unwrap();
        assert_eq!(r.windows, c);
        // Out of order within a window, a window twice, a window short: refused.
        for (bad, what) in [
            (vec![(1, 1, 1), (1, 0, 1), (0, 0, 1), (2, 0, 2)], "out of order"),
            (vec![(0, 0, 1), (0, 0, 1), (1, 0, 2), (2, 0, 2)], "twice"),
            (vec![(0, 0, 1), (1, 0, 2), (2, 0, 1)], "short"),
        ] {
            assert!(parse(&assemble(&h, &p, &bad, 0), &s).is_err(), "{what} passed");
        }
    }

    #[test]
    fn crc_columns_fold_like_the_bytewise_crc() {
        let (state, data) = crc_columns();
        let words: Vec<u64> = (0..50u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i << 3)).collect();
        let mut r = CHECKSUM.init;
        for &w in &words {
            let mut n = 0;
            for (j, c) in state.iter().enumerate() {
                if r >> j & 1 == 1 {
                    n ^= c;
                }
            }
            for (b, c) in data.iter().enumerate() {
                if w >> b & 1 == 1 {
                    n ^= c;
                }
            }
            r = n;
        }
        assert_eq!(CHECKSUM.finish(r), crc_of(&words));
    }

    #[test]
    fn a_stream_of_another_version_is_refused() {
        let (mut w, _) = stream();
        w[1] = w[1] & !0xFFFF | 1;
        assert!(matches!(parse(&w, &specs()), Err(StreamError::Version(1))));
    }

    #[test]
    fn window_chunks_cover_the_payload_in_whole_beats() {
        for p in 1..400u64 {
            let c = window_chunks(p);
            assert_eq!(c.iter().map(|&(_, n)| n).sum::<u64>(), p, "p = {p}");
            assert!(c.windows(2).all(|w| w[0].0 + w[0].1 == w[1].0), "p = {p}: not contiguous");
            assert!(c.iter().all(|&(_, n)| n <= CHUNK_PAYLOAD));
            let fillers = c.iter().filter(|&&(o, n)| n == 0 && o == p).count() as u64;
            assert!(fillers < BEAT_WORDS, "p = {p}: {fillers} fillers");
            assert_eq!(window_words(p), c.len() as u64 + p);
            assert!(window_words(p).is_multiple_of(BEAT_WORDS));
        }
    }

    #[test]
    fn crc_columns_words_fold_a_beat_like_four_words() {
        let (s1, d1) = crc_columns();
        let (s4, d4) = crc_columns_words(BEAT_WORDS as usize);
        let fold = |state: &[u32], data: &[u32], r: u32, w: &[u64]| {
            let mut n = 0;
            for (j, c) in state.iter().enumerate() {
                if r >> j & 1 == 1 {
                    n ^= c;
                }
            }
            for (b, c) in data.iter().enumerate() {
                if w[b / 64] >> (b % 64) & 1 == 1 {
                    n ^= c;
                }
            }
            n
        };
        let words: Vec<u64> = (0..40u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i << 7)).collect();
        let mut one = CHECKSUM.init;
        for w in &words {
            one = fold(&s1, &d1, one, std::slice::from_ref(w));
        }
        let mut four = CHECKSUM.init;
        for beat in words.chunks(4) {
            four = fold(&s4, &d4, four, beat);
        }
        assert_eq!(one, four);
        assert_eq!(CHECKSUM.finish(four), crc_of(&words));
    }

    #[test]
    fn default_specs_follow_the_layout() {
        let t = TowerGeometry::sketchint_fpga();
        let s = SuMaxGeometry::nic_default();
        let p = PerSwitchGeometry::nic_default();
        let specs = window_specs(&t, &s, Some(&p));
        let layout = crate::regs::Layout::with_per_switch(&t, &s, &p);
        let placed = layout.windows();
        assert_eq!(specs.len(), placed.len());
        for (spec, w) in specs.iter().zip(&placed) {
            assert_eq!(spec.words * 4, w.size as u64);
        }
    }
}
