//! The per-switch half of a readout: its windows' words into snapshot sections, and the
//! record stream taken once per readout, from the record ring or by register pops.
//!
//! ```text
//! in the consistent pass:  TABLE_MISSES (the idle bank's)
//! after it:                MODE, TABLE_THRESHOLD
//! the device has a record ring (stream block, RegisterAccess::ring):
//!                          RING_CONTROL <- RING_ENABLE, RING_WORDS -> w,
//!                          take w - taken ring words, RECORD_DROPPED, HOPS_REFUSED, STATUS
//! it has none, the stream block exists:
//!                          RING_CONTROL <- 0, then as without the stream block
//! no stream block:         RECORD_WORDS -> n, RECORD_POP x n, RECORD_DROPPED, HOPS_REFUSED,
//!                          STATUS
//! ```
//! The record stream is not banked: a readout takes exactly the words RING_WORDS or
//! RECORD_WORDS announced (whole records: the NIC pushes and sends records whole), so
//! records the NIC produces meanwhile, or still holds, arrive at the next readout and none
//! is read twice. Each record carries its own epoch, so records of the active epoch may
//! arrive in this readout's section. Both ways read the same number of registers
//! ([`PER_SWITCH_READS`]); the ring takes no pops, and writes RING_CONTROL once
//! ([`RING_CONTROL_WRITES`]), as the register drain does on a bitstream with the stream
//! block (so a ring a previous host left on is turned off before popping).

use super::{live_status, ReadoutError};
use crate::access::{AccessError, RegisterAccess};
use crate::blocks::{read_mode, DeviceMap, PerSwitchBlock};
use crate::snapshot::PerSwitchSection;
use smartnic_contract::packing::PackedBits;
use smartnic_contract::per_switch::slot;
use smartnic_contract::regs::per_switch::{
    HOPS_REFUSED, RECORD_DROPPED, RECORD_POP, RECORD_WORDS, TABLE_MISSES, TABLE_THRESHOLD,
};
use smartnic_contract::regs::stream::{RING_CONTROL, RING_ENABLE, RING_WORDS};
use smartnic_contract::regs::DEVICE_GONE;
use smartnic_contract::shim::MAX_HOPS;
use smartnic_contract::wire::record::{field, from_words, parse_stream};
use smartnic_contract::wire::record_ring;
use std::time::Duration;

/// Reads of the per-switch half in one clean readout besides its windows and the record
/// words popped: TABLE_MISSES in the pass, then MODE, TABLE_THRESHOLD, RECORD_WORDS (or
/// RING_WORDS with the record ring), RECORD_DROPPED, HOPS_REFUSED and a STATUS check after
/// the drain.
pub const PER_SWITCH_READS: u64 = 7;

/// Writes of the per-switch half in one readout on a bitstream with the stream block: the
/// RING_CONTROL write that turns the record ring on (a host with a ring) or off (one
/// without). Without the stream block: none.
pub const RING_CONTROL_WRITES: u64 = 1;

/// The most ring words one readout takes: a larger `RING_WORDS - taken` is a broken
/// register (or a ring that was not this host's), refused before any take. 2^24 words are
/// 128 MiB, about 4.8 million inflated-latency records: far more than one epoch produces.
pub const MAX_RING_WORDS: u32 = 1 << 24;

/// How a readout's records section came to the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordsVia {
    /// Popped over the BAR, one RECORD_POP read per 32-bit word.
    Registers,
    /// Taken from the record ring in host memory, no register read per word.
    Ring,
}

impl RecordsVia {
    /// "ring" or "registers", as reports print it.
    pub fn name(self) -> &'static str {
        match self {
            RecordsVia::Registers => "registers",
            RecordsVia::Ring => "ring",
        }
    }
}

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
    pub via: RecordsVia,
    /// Words popped (by registers).
    pub words: u64,
    /// Ring words taken (from the ring).
    pub ring_words: u64,
    /// RECORD_DROPPED after the drain.
    pub dropped: u32,
    /// HOPS_REFUSED after the drain.
    pub hops_refused: u32,
}

/// The per-switch sections of a readout whose pass succeeded: the latency tower and the
/// key table from their packed windows, then the record stream drained (from the ring
/// when the device has one, waiting up to `timeout` for its words). `latency` and
/// `table` hold the packed windows in order.
pub(super) fn sections<A: RegisterAccess + ?Sized>(
    d: &mut A,
    map: &DeviceMap,
    p: &PerSwitchBlock,
    timeout: Duration,
    latency: Vec<Vec<u8>>,
    table: Vec<Vec<u8>>,
    misses: u32,
) -> Result<(Vec<PerSwitchSection>, Drained), ReadoutError> {
    let mode = read_mode(d, p.base)?;
    let threshold = d.read32(p.base + TABLE_THRESHOLD)?;
    let (stream, drained) = records(d, map, p.base, timeout)?;
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

/// The record stream of one readout: from the record ring when the bitstream has the
/// stream block and the device a ring, else popped by registers (with the stream block,
/// after turning a ring a previous host may have left on off, so RECORD_POP pops again).
fn records<A: RegisterAccess + ?Sized>(
    d: &mut A,
    map: &DeviceMap,
    base: u32,
    timeout: Duration,
) -> Result<(Vec<u8>, Drained), ReadoutError> {
    match map.stream {
        Some(_) if start_ring(d, map)? => take_ring(d, map, base, timeout),
        Some(stream) => {
            d.write32(stream + RING_CONTROL, 0)?;
            drain_records(d, base, map.epoch)
        }
        None => drain_records(d, base, map.epoch),
    }
}

/// Turns the record ring on when the bitstream has the stream block and the device a ring
/// (true), else changes nothing (false). A readout does it too; a host calls it before
/// traffic so that records go to the ring from the first packet, not from the first
/// readout (until then they wait in the NIC's buffer, which drops what finds it full).
pub fn start_ring<A: RegisterAccess + ?Sized>(d: &mut A, map: &DeviceMap) -> Result<bool, AccessError> {
    match map.stream {
        Some(stream) if d.ring().is_some() => d.write32(stream + RING_CONTROL, RING_ENABLE).map(|_| true),
        _ => Ok(false),
    }
}

/// The records of a readout from the ring ([`start_ring`] turned it on), then
/// RECORD_DROPPED, HOPS_REFUSED and STATUS.
fn take_ring<A: RegisterAccess + ?Sized>(
    d: &mut A,
    map: &DeviceMap,
    base: u32,
    timeout: Duration,
) -> Result<(Vec<u8>, Drained), ReadoutError> {
    let (stream, n) = collect_ring(d, map, timeout)?;
    let dropped = d.read32(base + RECORD_DROPPED)?;
    let hops_refused = d.read32(base + HOPS_REFUSED)?;
    live_status(d, map.epoch)?;
    Ok((stream, Drained { via: RecordsVia::Ring, words: 0, ring_words: n as u64, dropped, hops_refused }))
}

/// Takes from the device's record ring exactly the words the NIC's channel accepted and
/// this host has not taken (RING_WORDS - taken), waiting up to `timeout` for them, and
/// returns the record stream they hold and their number. Damage is an error holding every
/// byte taken; a count above [`MAX_RING_WORDS`] is refused before any take; a RING_WORDS
/// of all ones is checked against STATUS first (a lost device reads all ones). A readout
/// does this; so does a host that turns the ring off (RING_CONTROL 0) and collects what it
/// sent before it stopped.
pub fn collect_ring<A: RegisterAccess + ?Sized>(
    d: &mut A,
    map: &DeviceMap,
    timeout: Duration,
) -> Result<(Vec<u8>, u32), ReadoutError> {
    let stream_block = map.stream.ok_or(ReadoutError::NoStream)?;
    let sent = d.read32(stream_block + RING_WORDS)?;
    if sent == DEVICE_GONE {
        // A count that can hold all ones (once every 2^32 words): STATUS says whether the
        // device is gone, before trusting it.
        live_status(d, map.epoch)?;
    }
    let taken = ring_of(d)?.taken();
    let n = sent.wrapping_sub(taken);
    if n > MAX_RING_WORDS {
        return Err(ReadoutError::RingWords { sent, taken, max: MAX_RING_WORDS });
    }
    let words = ring_of(d)?.take(n, timeout)?;
    if words.len() != n as usize {
        return Err(AccessError::RingTimeout { waited: timeout, words: n, arrived: words.len() }.into());
    }
    let stream =
        record_ring::decode(&words).map_err(|(offset, e)| ring_damaged(&words, offset, e.to_string()))?;
    if let (_, Some((at, e))) = parse_stream(&stream) {
        return Err(ring_damaged(&words, ring_offset(&stream, at), e.to_string()));
    }
    Ok((stream, n))
}

/// The ring byte offset of the record at `at` of a decoded stream: each record of an odd
/// number of words before it had a padding word in the ring.
fn ring_offset(stream: &[u8], at: usize) -> usize {
    let (mut pos, mut pads) = (0, 0);
    while pos < at {
        let words = stream[pos + field::WORDS] as usize;
        pads += words % 2;
        pos += 4 * words.max(1);
    }
    at + 4 * pads
}

/// The device's record ring (checked by the caller: a device offers it or not).
fn ring_of<A: RegisterAccess + ?Sized>(
    d: &mut A,
) -> Result<&mut dyn crate::access::RecordRing, ReadoutError> {
    d.ring().ok_or(ReadoutError::NoRing)
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
    let hops_refused = d.read32(base + HOPS_REFUSED)?;
    live_status(d, epoch)?;
    let stream = from_words(&words);
    if let (_, Some((at, e))) = parse_stream(&stream) {
        return Err(damaged(stream, at, n, e.to_string()));
    }
    Ok((
        stream,
        Drained { via: RecordsVia::Registers, words: n as u64, ring_words: 0, dropped, hops_refused },
    ))
}

/// A damaged ring: the offset (in the bytes of the words taken, pads included) and every
/// byte taken, so nothing the ring held is lost.
fn ring_damaged(words: &[u64], offset: usize, what: String) -> ReadoutError {
    let bytes = words.iter().flat_map(|w| w.to_be_bytes()).collect();
    ReadoutError::RecordRing { offset, words: words.len() as u32, what, bytes }
}

fn damaged(stream: Vec<u8>, offset: usize, announced: u32, what: String) -> ReadoutError {
    ReadoutError::RecordStream { offset, announced, what, stream }
}
