//! The readout protocol: swap banks, read the idle bank consistently, clear it, and turn
//! the window words into a [`Snapshot`].
//!
//! ```text
//! STATUS                      wait until no swap/clear is in progress
//! SEQUENCE -> s0
//! CONTROL  <- SWAP            poll STATUS until SWAP_PENDING drops (timeout)
//! repeat up to 1 + max_retries times:
//!   SEQUENCE -> s1            (s1 == s0 on the first pass: the swap did nothing)
//!   EPOCH    -> active epoch  (the idle bank holds epoch - 1)
//!   every window              (read_block, one 32-bit read per counter; with the
//!                              per-switch block, its latency arrays and table ways too)
//!   IDLE_PACKETS (64-bit)
//!   TABLE_MISSES              (per-switch block only: the idle bank's)
//!   SEQUENCE -> s2, STATUS    (all ones: device gone; s2 != s1: torn, read again)
//! pack the words (each must fit its counter width; table slots at most MAX_HOPS hops)
//! per-switch block only:
//!   MODE, TABLE_THRESHOLD     (what the epoch ran with)
//!   the records, from the record ring when the device has one:
//!     RING_CONTROL <- ENABLE, RING_WORDS -> w, take w - taken ring words
//!   else (RING_CONTROL <- 0 with the stream block):
//!     RECORD_WORDS -> n       pop exactly n words (RECORD_POP)
//!   (whole records or an error)
//!   RECORD_DROPPED, HOPS_REFUSED, STATUS
//!                             (losses since reset, into ReadoutStats; all ones: gone)
//! CONTROL  <- CLEAR           poll STATUS until CLEAR_BUSY drops (timeout)
//! ```
//!
//! A readout either returns a snapshot that is exactly the idle bank of one epoch, or an
//! error; [`read_snapshot_to_file`] writes the file only after success. The record stream
//! is drained once per readout, after the banked windows were read and checked, so a
//! readout that fails before it leaves the records in the device (or in the ring, not yet
//! taken); records the NIC still holds when RING_WORDS or RECORD_WORDS is read arrive at
//! the next readout, each carrying its epoch ([`per_switch`]).

use crate::access::{AccessError, Counting, RegisterAccess};
use crate::blocks::{BlockError, DeviceMap, Window, WindowKind};
use crate::snapshot::{packed_len, Section, Snapshot, SnapshotError};
use smartnic_contract::packing::{pack_words, TooWide};
use smartnic_contract::regs::epoch;
use smartnic_contract::snapshot::source;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

mod per_switch;
pub mod stream;
pub use per_switch::{
    collect_ring, start_ring, RecordsVia, MAX_RECORD_WORDS, MAX_RING_WORDS, PER_SWITCH_READS,
    RING_CONTROL_WRITES,
};
pub use stream::{can_stream, read_snapshot_streamed, StreamStats};

/// How a readout behaves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadoutConfig {
    /// `smartnic_contract::snapshot::source::HARDWARE` or `SIMULATOR`: what the caller opened.
    pub source: u8,
    /// How long a swap or clear may stay pending before the readout gives up.
    pub poll_timeout: Duration,
    /// Extra passes over the windows when SEQUENCE moved during one (a torn snapshot).
    pub max_retries: u32,
    /// Clear the idle bank after a successful read (the normal case).
    pub clear: bool,
    /// How the windows travel: by stream when the device can, or by registers.
    pub path: ReadoutPath,
}

/// How a readout moves the idle bank's windows to the host.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReadoutPath {
    /// The readout stream when the bitstream has the stream block and the device a
    /// card-to-host channel ([`can_stream`]), else register reads.
    #[default]
    Auto,
    /// One register read per counter (the fallback every device has).
    Registers,
    /// The readout stream, or an error naming why it cannot be used.
    Stream,
}

impl Default for ReadoutConfig {
    fn default() -> Self {
        ReadoutConfig {
            source: source::HARDWARE,
            poll_timeout: Duration::from_secs(1),
            max_retries: 3,
            clear: true,
            path: ReadoutPath::Auto,
        }
    }
}

/// Why a readout produced no snapshot.
#[derive(Debug, thiserror::Error)]
pub enum ReadoutError {
    /// Includes [`AccessError::DeviceGone`]: a read of all ones where it is impossible.
    #[error(transparent)]
    Access(#[from] AccessError),
    #[error(
        "{what} did not complete within {waited:?} (STATUS {status:#x}): the epoch engine is \
         stuck; reload the bitstream or reset the card"
    )]
    Timeout { what: &'static str, waited: Duration, status: u32 },
    #[error("STATUS read {status:#010x}, which has reserved bits set: not a SmartNIC epoch block, or a broken one")]
    BadStatus { status: u32 },
    #[error("SWAP completed but SEQUENCE stayed at {sequence}: the banks were not swapped (is this a real device?)")]
    SwapIgnored { sequence: u32 },
    #[error(
        "torn snapshot: SEQUENCE moved during each of {tries} reads of the idle bank (last \
         {before} -> {after}); another process is swapping or clearing this device"
    )]
    Torn { tries: u32, before: u32, after: u32 },
    #[error(
        "{window} counter {index} read {value:#x}, above the largest {width}-bit value: a failed \
         read or a corrupt readout window; no snapshot written"
    )]
    CounterOutOfRange { window: String, index: usize, value: u32, width: u8 },
    #[error(
        "{window} slot {slot} holds {hops} hops, more than the {max} a path has: a failed read \
         or a corrupt readout window; no snapshot written",
        max = smartnic_contract::shim::MAX_HOPS
    )]
    BadSlot { window: String, slot: u64, hops: u32 },
    #[error(
        "record stream: {what} at byte {offset} of the {} bytes drained (RECORD_WORDS announced \
         {announced} words): the device's record buffer is broken; the drained bytes are kept \
         in this error and no snapshot was written",
        stream.len()
    )]
    RecordStream { offset: usize, announced: u32, what: String, stream: Vec<u8> },
    #[error(
        "RECORD_WORDS reads {words}, more than the {max} a record buffer can hold: a broken \
         register; nothing was popped and no snapshot written"
    )]
    RecordWords { words: u32, max: u32 },
    #[error(
        "record ring: {what} at byte {offset} of the {} bytes taken ({words} ring words, \
         RING_WORDS): the ring's records are damaged (on the card-to-host channel or in the \
         NIC); the bytes taken are kept in this error and no snapshot was written",
        bytes.len()
    )]
    RecordRing { offset: usize, words: u32, what: String, bytes: Vec<u8> },
    #[error(
        "RING_WORDS reads {sent} and this host took {taken} ring words: {} waiting is more \
         than the {max} one readout takes, a broken register or a ring that is not this \
         host's; nothing was taken and no snapshot written",
        sent.wrapping_sub(*taken)
    )]
    RingWords { sent: u32, taken: u32, max: u32 },
    #[error("this device has no record ring: its records are read by registers")]
    NoRing,
    #[error(
        "this bitstream has no readout-stream block (or no Tower and SuMax to stream): read \
         it out by registers instead"
    )]
    NoStream,
    #[error("this device has no card-to-host channel for the readout stream: read it out by registers")]
    NoChannel,
    #[error(
        "a readout stream is still running on the device (stream STATUS BUSY): another reader \
         is using it, or the card-to-host channel stopped taking words; wait, or reset the card"
    )]
    StreamBusy,
    #[error("readout stream of {words} words refused: {error}; no snapshot written")]
    Stream { error: smartnic_contract::wire::readout::StreamError, words: usize },
    #[error(
        "the engine reports {engine} stream words, the host received {host} (stream STATUS \
         {status:#x}): words were lost or duplicated on the card-to-host channel"
    )]
    StreamCount { engine: u32, host: usize, status: u32 },
    /// A per-switch register the readout reads again (MODE) holds a value the block cannot.
    #[error(transparent)]
    Block(#[from] BlockError),
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
}

/// What one readout cost on the bus.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadoutStats {
    /// 32-bit register reads: each a non-posted PCIe read (~1 us round trip).
    pub reads: u64,
    /// 32-bit register writes (posted).
    pub writes: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Words of the readout windows per pass.
    pub window_words: u64,
    /// STATUS reads spent waiting for the swap and the clear.
    pub status_polls: u64,
    /// Passes repeated because SEQUENCE moved.
    pub retries: u32,
    /// Words popped from the record stream (one read each, on top of [`min_reads`]); 0
    /// when the records came from the ring.
    pub record_words: u64,
    /// How the records section came (`None` without the per-switch block).
    pub records_via: Option<RecordsVia>,
    /// 64-bit words taken from the record ring (no register reads); 0 by registers.
    pub ring_words: u64,
    /// RECORD_DROPPED after the drain: records the device's stream buffer dropped since
    /// reset because it was full (`None` without the per-switch block). A rise between two
    /// readouts means records were lost on the device; the snapshot has no field for it.
    pub records_dropped: Option<u32>,
    /// HOPS_REFUSED after the drain: packets whose INT hops the device refused since reset
    /// (its hop serializer's ring was full), in the flow sketches but in neither the latency
    /// tower nor the records (`None` without the per-switch block). Like
    /// `records_dropped`, a rise between two readouts is loss the snapshot cannot show.
    pub hops_refused: Option<u32>,
    /// Wall-clock time of the readout.
    pub elapsed: Duration,
    /// The readout stream's figures, when the windows came by stream.
    pub stream: Option<StreamStats>,
}

impl ReadoutStats {
    /// Time the reads take at `per_read` each (writes are posted and cost ~nothing).
    pub fn mmio_time(&self, per_read: Duration) -> Duration {
        per_read * u32::try_from(self.reads).unwrap_or(u32::MAX)
    }
}

/// Register reads of one clean readout besides the windows: STATUS, SEQUENCE, one STATUS
/// poll for the swap, SEQUENCE, EPOCH, IDLE_PACKETS (3), SEQUENCE, STATUS, one STATUS poll
/// for the clear.
pub const FIXED_READS: u64 = 11;
/// Register writes of one readout: SWAP and CLEAR.
pub const FIXED_WRITES: u64 = 2;

/// Writes one clean register readout of `map` makes: [`FIXED_WRITES`], plus
/// [`RING_CONTROL_WRITES`] with the per-switch and the stream block (the record ring turned
/// on or off, whichever way the records come).
pub fn min_writes(map: &DeviceMap) -> u64 {
    let ring = if map.per_switch.is_some() && map.stream.is_some() { RING_CONTROL_WRITES } else { 0 };
    FIXED_WRITES + ring
}

/// Reads one clean readout of `map` needs when the swap and the clear complete by their
/// first STATUS poll and the record stream is empty: every window word once, plus
/// [`FIXED_READS`], plus [`PER_SWITCH_READS`] with the per-switch block (whether the
/// records come from the ring or by registers). Each extra poll or retry adds to it, and
/// each record word popped ([`ReadoutStats::record_words`]; none from the ring).
pub fn min_reads(map: &DeviceMap) -> u64 {
    let per_switch = if map.per_switch.is_some() { PER_SWITCH_READS } else { 0 };
    map.window_words() + FIXED_READS + per_switch
}

/// Runs the readout protocol on `dev` and returns the idle bank as a snapshot: by stream
/// or by registers as `cfg.path` says ([`ReadoutPath::Auto`]: by stream when it can).
pub fn read_snapshot<A: RegisterAccess + ?Sized>(
    dev: &mut A,
    map: &DeviceMap,
    cfg: &ReadoutConfig,
) -> Result<(Snapshot, ReadoutStats), ReadoutError> {
    let streamed = match cfg.path {
        ReadoutPath::Registers => false,
        ReadoutPath::Stream => true,
        ReadoutPath::Auto => can_stream(dev, map),
    };
    if streamed {
        return read_snapshot_streamed(dev, map, cfg);
    }
    read_snapshot_registers(dev, map, cfg)
}

/// The readout by register reads, one per counter (see the module docs).
pub fn read_snapshot_registers<A: RegisterAccess + ?Sized>(
    dev: &mut A,
    map: &DeviceMap,
    cfg: &ReadoutConfig,
) -> Result<(Snapshot, ReadoutStats), ReadoutError> {
    counted(dev, map, |d, stats| run(d, map, cfg, stats))
}

/// Runs one readout `body` on `dev` behind a transaction counter and fills the
/// [`ReadoutStats`] both readout paths report (bus transactions, wall time).
fn counted<A: RegisterAccess + ?Sized>(
    dev: &mut A,
    map: &DeviceMap,
    body: impl FnOnce(&mut Counting<&mut A>, &mut ReadoutStats) -> Result<Snapshot, ReadoutError>,
) -> Result<(Snapshot, ReadoutStats), ReadoutError> {
    let start = Instant::now();
    let mut d = Counting::new(dev);
    let mut stats = ReadoutStats { window_words: map.window_words(), ..Default::default() };
    let result = body(&mut d, &mut stats);
    stats.reads = d.count.reads;
    stats.writes = d.count.writes;
    stats.bytes_read = d.count.bytes_read();
    stats.bytes_written = d.count.bytes_written();
    stats.elapsed = start.elapsed();
    result.map(|s| (s, stats))
}

/// The start of every readout: waits out a swap or clear someone else started, reads
/// SEQUENCE, writes SWAP and polls until it completed; returns SEQUENCE before the swap.
fn swap<A: RegisterAccess + ?Sized>(
    d: &mut A,
    e: u32,
    cfg: &ReadoutConfig,
    stats: &mut ReadoutStats,
) -> Result<u32, ReadoutError> {
    let busy = epoch::STATUS_SWAP_PENDING | epoch::STATUS_CLEAR_BUSY;
    stats.status_polls += poll(d, e, busy, "a swap or clear started by someone else", cfg.poll_timeout)? - 1;
    let s0 = d.read32(e + epoch::SEQUENCE)?;
    d.write32(e + epoch::CONTROL, epoch::CONTROL_SWAP)?;
    stats.status_polls += poll(d, e, epoch::STATUS_SWAP_PENDING, "SWAP", cfg.poll_timeout)?;
    Ok(s0)
}

/// [`read_snapshot`], then writes the snapshot to `path` (atomically). Nothing is written
/// when the readout fails.
pub fn read_snapshot_to_file<A: RegisterAccess + ?Sized>(
    dev: &mut A,
    map: &DeviceMap,
    cfg: &ReadoutConfig,
    path: &Path,
) -> Result<(Snapshot, ReadoutStats), ReadoutError> {
    let (snap, stats) = read_snapshot(dev, map, cfg)?;
    snap.write_file(path)?;
    Ok((snap, stats))
}

fn run<A: RegisterAccess + ?Sized>(
    d: &mut Counting<&mut A>,
    map: &DeviceMap,
    cfg: &ReadoutConfig,
    stats: &mut ReadoutStats,
) -> Result<Snapshot, ReadoutError> {
    let e = map.epoch;
    let s0 = swap(d, e, cfg, stats)?;
    let time_ns = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |t| t.as_nanos() as u64);
    let windows = map.windows();
    let mut words: Vec<Vec<u32>> = windows.iter().map(|w| vec![0; w.words() as usize]).collect();
    let mut last = (s0, s0);
    for pass in 0..=cfg.max_retries {
        let s1 = d.read32(e + epoch::SEQUENCE)?;
        if pass == 0 && s1 == s0 {
            live_status(d, e)?;
            return Err(ReadoutError::SwapIgnored { sequence: s1 });
        }
        let active = d.read32(e + epoch::EPOCH)?;
        for (w, buf) in windows.iter().zip(&mut words) {
            d.read_block(w.base, buf)?;
        }
        let packets = d.read64(e + epoch::IDLE_PACKETS)?;
        let misses = per_switch::read_misses(d, map)?;
        let s2 = d.read32(e + epoch::SEQUENCE)?;
        live_status(d, e)?;
        if s2 != s1 {
            last = (s1, s2);
            stats.retries += 1;
            continue;
        }
        let pass = Pass { active, time_ns, packets, misses };
        return finish(d, map, cfg, stats, pass, &words);
    }
    Err(ReadoutError::Torn { tries: cfg.max_retries + 1, before: last.0, after: last.1 })
}

/// What a consistent pass over the idle bank found besides its windows' words.
struct Pass {
    /// EPOCH in the pass (the idle bank holds the epoch before it).
    active: u32,
    time_ns: u64,
    packets: u64,
    /// The idle bank's TABLE_MISSES (with the per-switch block).
    misses: Option<u32>,
}

/// The end of every readout, by registers or by stream: the windows' words packed and
/// checked into the snapshot, the per-switch sections and the record drain, the clear.
fn finish<A: RegisterAccess + ?Sized>(
    d: &mut A,
    map: &DeviceMap,
    cfg: &ReadoutConfig,
    stats: &mut ReadoutStats,
    pass: Pass,
    words: &[Vec<u32>],
) -> Result<Snapshot, ReadoutError> {
    let e = map.epoch;
    let packed = pack_windows(map, &map.windows(), words)?;
    let mut snap = Snapshot {
        source: cfg.source,
        epoch: pass.active.wrapping_sub(1) as u64,
        time_ns: pass.time_ns,
        firmware: map.firmware,
        packets: pass.packets,
        sections: flow_sections(map, packed.tower, packed.sumax),
        per_switch: Vec::new(),
    };
    if let (Some(p), Some(misses)) = (&map.per_switch, pass.misses) {
        let (sections, drained) =
            per_switch::sections(d, map, p, cfg.poll_timeout, packed.latency, packed.table, misses)?;
        snap.per_switch = sections;
        stats.record_words = drained.words;
        stats.records_via = Some(drained.via);
        stats.ring_words = drained.ring_words;
        stats.records_dropped = Some(drained.dropped);
        stats.hops_refused = Some(drained.hops_refused);
    }
    if cfg.clear {
        d.write32(e + epoch::CONTROL, epoch::CONTROL_CLEAR)?;
        stats.status_polls += poll(d, e, epoch::STATUS_CLEAR_BUSY, "CLEAR", cfg.poll_timeout)?;
    }
    Ok(snap)
}

/// Reads STATUS: all ones is a lost device, other reserved bits a broken block.
fn live_status<A: RegisterAccess + ?Sized>(d: &mut A, e: u32) -> Result<u32, ReadoutError> {
    let s = d.read32_live(e + epoch::STATUS)?;
    if s & !(epoch::STATUS_SWAP_PENDING | epoch::STATUS_CLEAR_BUSY) != 0 {
        return Err(ReadoutError::BadStatus { status: s });
    }
    Ok(s)
}

/// Polls STATUS until none of `bits` is set; returns the number of reads.
fn poll<A: RegisterAccess + ?Sized>(
    d: &mut A,
    e: u32,
    bits: u32,
    what: &'static str,
    timeout: Duration,
) -> Result<u64, ReadoutError> {
    let start = Instant::now();
    let mut polls = 0;
    loop {
        let s = live_status(d, e)?;
        polls += 1;
        if s & bits == 0 {
            return Ok(polls);
        }
        let waited = start.elapsed();
        if waited > timeout {
            return Err(ReadoutError::Timeout { what, waited, status: s });
        }
        if polls.is_multiple_of(1024) {
            std::thread::yield_now();
        }
    }
}

/// The packed windows of one pass, by kind, each in window order.
#[derive(Default)]
struct Packed {
    tower: Vec<Vec<u8>>,
    sumax: Vec<Vec<u8>>,
    latency: Vec<Vec<u8>>,
    table: Vec<Vec<u8>>,
}

/// Packs the words of each window in its section's packing, checking every counter fits
/// its width (and every table slot's hop count). `words[i]` holds the words of
/// `windows[i]`.
fn pack_windows(map: &DeviceMap, windows: &[Window], words: &[Vec<u32>]) -> Result<Packed, ReadoutError> {
    let mut p = Packed::default();
    for (w, words) in windows.iter().zip(words) {
        let widths = map.counter_widths(w.kind).expect("the windows come from this map");
        let bytes = pack(words, &widths, &w.kind.array())?;
        let rows = (w.words() / widths.len() as u64) as u32;
        debug_assert_eq!(bytes.len(), packed_len(rows, widths.iter().map(|&b| b as u64).sum()));
        match w.kind {
            WindowKind::TowerArray(_) => p.tower.push(bytes),
            WindowKind::SuMaxArray(_) => p.sumax.push(bytes),
            WindowKind::LatencyArray(_) => p.latency.push(bytes),
            WindowKind::TableWay(_) => {
                per_switch::check_slots(&bytes, rows, &w.kind.array())?;
                p.table.push(bytes);
            }
        }
    }
    Ok(p)
}

/// The flow sketches' sections from their packed windows.
fn flow_sections(map: &DeviceMap, tower: Vec<Vec<u8>>, sumax: Vec<Vec<u8>>) -> Vec<Section> {
    let mut sections = Vec::new();
    if let Some(t) = &map.tower {
        sections.push(Section::Tower { geometry: t.geometry.clone(), mode: t.mode, arrays: tower });
    }
    if let Some(s) = &map.sumax {
        sections.push(Section::SuMax { geometry: s.geometry.clone(), arrays: sumax });
    }
    sections
}

/// Packs the words of one window in the contract's packing rule
/// ([`smartnic_contract::packing::pack_words`]). A word above its width's maximum is an error
/// that names the window (the readout checks that the device is still there before packing,
/// so this is a failed read or a corrupt window).
pub fn pack(words: &[u32], widths: &[u8], window: &str) -> Result<Vec<u8>, ReadoutError> {
    pack_words(words, widths).map_err(|TooWide { index, value, width }| ReadoutError::CounterOutOfRange {
        window: window.to_owned(),
        index,
        value,
        width,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_names_the_window_of_a_value_wider_than_the_counter() {
        let e = pack(&[1, 256], &[8], "towersketch array 0").unwrap_err();
        assert!(matches!(e, ReadoutError::CounterOutOfRange { index: 1, value: 256, width: 8, .. }), "{e}");
        assert!(e.to_string().contains("towersketch array 0 counter 1"));
        assert_eq!(pack(&[0x1, 0x2], &[4], "t").unwrap(), vec![0x21]);
    }
}
