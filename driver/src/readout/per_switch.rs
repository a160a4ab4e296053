//! The per-switch half of a readout: its windows' words into snapshot sections, and the
//! record stream drained once per readout.
//!
//! ```text
//! in the consistent pass:  TABLE_MISSES (the idle bank's)
//! after it:                MODE, TABLE_THRESHOLD
//!                          RECORD_WORDS -> n, RECORD_POP x n, RECORD_DROPPED, STATUS
//! ```
//! The record stream is not banked: a readout pops exactly the `n` words RECORD_WORDS
//! announced (whole records, the device pushes records whole), so records pushed while it
//! drains wait for the next readout and none is read twice. Each record carries its own
//! epoch, so records of the active epoch may arrive in this readout's section.

use super::{live_status, ReadoutError};
use crate::access::RegisterAccess;
use crate::blocks::{read_mode, DeviceMap, PerSwitchBlock};
use crate::snapshot::PerSwitchSection;
use smartnic_contract::packing::PackedBits;
use smartnic_contract::per_switch::slot;
use smartnic_contract::regs::per_switch::{
    RECORD_DROPPED, RECORD_POP, RECORD_WORDS, TABLE_MISSES, TABLE_THRESHOLD,
};
use smartnic_contract::shim::MAX_HOPS;
use smartnic_contract::wire::record::{field, from_words, parse_stream};

/// Reads of the per-switch half in one clean readout besides its windows and the record
/// words: TABLE_MISSES in the pass, then MODE, TABLE_THRESHOLD, RECORD_WORDS,
/// RECORD_DROPPED and a STATUS check after the drain.
pub const PER_SWITCH_READS: u64 = 6;

/// The idle bank's TABLE_MISSES, read inside the consistent pass (read as a plain word:
/// a saturated count is all ones).
pub(super) fn read_misses<A: RegisterAccess + ?Sized>(
    d: &mut A,
    map: &DeviceMap,
) -> Result<Option<u32>, ReadoutError> {
    Ok(map.per_switch.as_ref().map(|p| d.read32(p.base + TABLE_MISSES)).transpose()?)
}

/// The most words RECORD_WORDS may announce: a larger count is a broken register, refused
/// before any pop (trusting it would mean billions of reads). The record buffer's count is
/// 16 bits wide and its buffer far smaller.
pub const MAX_RECORD_WORDS: u32 = u16::MAX as u32;

/// What the drain took from the record stream, besides its bytes.
pub(super) struct Drained {
    /// Words popped.
    pub words: u64,
    /// RECORD_DROPPED after the drain.
    pub dropped: u32,
}

/// The per-switch sections of a readout whose pass succeeded: the latency tower and the
/// key table from their packed windows, then the record stream drained. `latency` and
/// `table` hold the packed windows in order; `epoch` is the epoch block's base.
pub(super) fn sections<A: RegisterAccess + ?Sized>(
    d: &mut A,
    epoch: u32,
    p: &PerSwitchBlock,
    latency: Vec<Vec<u8>>,
    table: Vec<Vec<u8>>,
    misses: u32,
) -> Result<(Vec<PerSwitchSection>, Drained), ReadoutError> {
    let mode = read_mode(d, p.base)?;
    let threshold = d.read32(p.base + TABLE_THRESHOLD)?;
    let (stream, drained) = drain_records(d, p.base, epoch)?;
    let g = &p.geometry;
    let sections = vec![
        PerSwitchSection::LatencyTower { geometry: g.latency.clone(), mode, arrays: latency },
        PerSwitchSection::KeyTable {
            geometry: g.table.clone(),
            threshold,
            misses: misses as u64,
            ways: table,
        },
        PerSwitchSection::Records { stream },
    ];
    Ok((sections, drained))
}

/// Every valid slot of a packed way states at most [`MAX_HOPS`] hops (the slot's 5-bit
/// field could say 31, which the snapshot reader refuses): more is a corrupt window.
pub(super) fn check_slots(way: &[u8], depth: u32, window: &str) -> Result<(), ReadoutError> {
    let bits =
        PackedBits::from_bytes(way, slot::BITS * depth as u64).expect("a packed way holds its depth's slots");
    for s in 0..depth as u64 {
        let at = s * slot::BITS;
        let hops = bits.get(at + slot::HOPS, slot::HOPS_WIDTH);
        if bits.get(at + slot::VALID, 1) == 1 && hops > MAX_HOPS as u32 {
            return Err(ReadoutError::BadSlot { window: window.to_owned(), slot: s, hops });
        }
    }
    Ok(())
}

/// Pops exactly the RECORD_WORDS words waiting and checks they are whole records. A record
/// header announcing 0 words stops the drain at once (a device that announced more words
/// than it holds answers 0 once empty); the bytes drained so far are kept in the error.
fn drain_records<A: RegisterAccess + ?Sized>(
    d: &mut A,
    base: u32,
    epoch: u32,
) -> Result<(Vec<u8>, Drained), ReadoutError> {
    let n = d.read32_live(base + RECORD_WORDS)?;
    if n > MAX_RECORD_WORDS {
        return Err(ReadoutError::RecordWords { words: n, max: MAX_RECORD_WORDS });
    }
    let mut words = Vec::with_capacity(n.min(1 << 16) as usize);
    let mut left = 0u32;
    for _ in 0..n {
        let w = d.read32(base + RECORD_POP)?;
        words.push(w);
        if left == 0 {
            left = w.to_be_bytes()[field::WORDS] as u32;
            if left == 0 {
                let at = 4 * (words.len() - 1);
                return Err(damaged(from_words(&words), at, n, "a record header announcing 0 words".into()));
            }
        }
        left -= 1;
    }
    let dropped = d.read32(base + RECORD_DROPPED)?;
    live_status(d, epoch)?;
    let stream = from_words(&words);
    if let (_, Some((at, e))) = parse_stream(&stream) {
        return Err(damaged(stream, at, n, e.to_string()));
    }
    Ok((stream, Drained { words: n as u64, dropped }))
}

fn damaged(stream: Vec<u8>, offset: usize, announced: u32, what: String) -> ReadoutError {
    ReadoutError::RecordStream { offset, announced, what, stream }
}
