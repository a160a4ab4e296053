//! The streamed readout: the same protocol as the register readout, but the windows
//! arrive as one readout stream (`smartnic_contract::wire::readout`) on the card-to-host
//! channel instead of one register read per counter.
//!
//! ```text
//! STATUS, SEQUENCE -> s0, CONTROL <- SWAP, poll SWAP_PENDING  (as the register readout)
//! SEQUENCE -> s1                  (s1 == s0: the swap did nothing)
//! repeat up to 1 + max_retries times:
//!   arm the channel               (a buffer for the stream)
//!   stream CONTROL <- START
//!   wait for the stream           (the channel's trailer; then stream STATUS must be idle)
//!   parse: magic, version, windows, chunks, CRC; SEQUENCE at start == s1 == SEQUENCE at end
//!                                 (else torn: start again)
//! pack the windows' words and check them (exactly as the register readout does)
//! per-switch block: its sections, the record stream from the ring or by register reads
//! CONTROL <- CLEAR, poll CLEAR_BUSY
//! ```
//! EPOCH, IDLE_PACKETS and TABLE_MISSES come from the stream's header, written by the
//! engine in the clock it started, so they belong to the bank it read.

use super::{counted, finish, live_status, swap, Pass, ReadoutConfig, ReadoutError, ReadoutStats};
use crate::access::{Counting, RegisterAccess};
use crate::blocks::DeviceMap;
use crate::snapshot::Snapshot;
use smartnic_contract::regs::{epoch, stream};
use smartnic_contract::wire::readout::{parse, stream_words, window_specs, ReadoutStream, WindowSpec};
use std::time::SystemTime;

/// What a streamed readout cost, besides [`ReadoutStats`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamStats {
    /// Words of the stream (the STREAM block's LAST_WORDS agrees).
    pub words: u64,
    /// The engine's clocks from START to the trailer taken (LAST_CLOCKS).
    pub clocks: u32,
    /// Clocks in which the channel held a word back (LAST_STALLS).
    pub stalls: u32,
}

/// The windows of `map` as the stream engine walks them (`None` without both flow
/// sketches: the engine is built with them).
pub fn specs(map: &DeviceMap) -> Option<Vec<WindowSpec>> {
    let (t, s) = (map.tower.as_ref()?, map.sumax.as_ref()?);
    Some(window_specs(&t.geometry, &s.geometry, map.per_switch.as_ref().map(|p| &p.geometry)))
}

/// True when `dev` can read `map` out by stream: the bitstream has the stream block (and
/// both flow sketches) and the device a card-to-host channel.
pub fn can_stream<A: RegisterAccess + ?Sized>(dev: &mut A, map: &DeviceMap) -> bool {
    map.stream.is_some() && specs(map).is_some() && dev.c2h().is_some()
}

/// Runs the streamed readout on `dev`; `map` must have the stream block and `dev` a
/// card-to-host channel.
pub fn read_snapshot_streamed<D: RegisterAccess + ?Sized>(
    dev: &mut D,
    map: &DeviceMap,
    cfg: &ReadoutConfig,
) -> Result<(Snapshot, ReadoutStats), ReadoutError> {
    let base = map.stream.ok_or(ReadoutError::NoStream)?;
    let specs = specs(map).ok_or(ReadoutError::NoStream)?;
    let mut sst = StreamStats::default();
    let (snap, mut stats) = counted(dev, map, |d, stats| run(d, map, (base, &specs), cfg, stats, &mut sst))?;
    stats.stream = Some(sst);
    Ok((snap, stats))
}

fn run<D: RegisterAccess + ?Sized>(
    d: &mut Counting<&mut D>,
    map: &DeviceMap,
    (base, specs): (u32, &[WindowSpec]),
    cfg: &ReadoutConfig,
    stats: &mut ReadoutStats,
    sst: &mut StreamStats,
) -> Result<Snapshot, ReadoutError> {
    let e = map.epoch;
    let s0 = swap(d, e, cfg, stats)?;
    let time_ns = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |t| t.as_nanos() as u64);
    let s1 = d.read32(e + epoch::SEQUENCE)?;
    if s1 == s0 {
        live_status(d, e)?;
        return Err(ReadoutError::SwapIgnored { sequence: s1 });
    }
    let mut last = (s1, s1);
    for _ in 0..=cfg.max_retries {
        let got = one_stream(d, base, specs, cfg, sst)?;
        let h = got.header;
        if !(got.consistent() && h.sequence == s1) {
            last = (h.sequence, got.sequence_end);
            stats.retries += 1;
            continue;
        }
        let misses = map.per_switch.as_ref().map(|_| h.table_misses);
        let pass = Pass { active: h.epoch, time_ns, packets: h.idle_packets, misses };
        return finish(d, map, cfg, stats, pass, &got.windows);
    }
    Err(ReadoutError::Torn { tries: cfg.max_retries + 1, before: last.0, after: last.1 })
}

/// One START: the stream, checked and decoded, and the engine's figures.
fn one_stream<D: RegisterAccess + ?Sized>(
    d: &mut Counting<&mut D>,
    base: u32,
    specs: &[WindowSpec],
    cfg: &ReadoutConfig,
    sst: &mut StreamStats,
) -> Result<ReadoutStream, ReadoutError> {
    let want = stream_words(specs);
    stream_idle(d, base)?;
    d.c2h().ok_or(ReadoutError::NoChannel)?.arm(want)?;
    d.write32(base + stream::CONTROL, stream::CONTROL_START)?;
    let words = d.c2h().ok_or(ReadoutError::NoChannel)?.wait(cfg.poll_timeout)?;
    let status = stream_idle(d, base)?;
    let (got, len) =
        parse(&words, specs).map_err(|e| ReadoutError::Stream { error: e, words: words.len() })?;
    // The channel must have delivered exactly the one stream the engine says it wrote.
    let last = d.read32(base + stream::LAST_WORDS)?;
    if last as usize != len || len != words.len() {
        return Err(ReadoutError::StreamCount { engine: last, host: words.len(), status });
    }
    sst.words = len as u64;
    sst.clocks = d.read32(base + stream::LAST_CLOCKS)?;
    sst.stalls = d.read32(base + stream::LAST_STALLS)?;
    Ok(got)
}

/// Reads the stream block's STATUS: all ones is a lost device, BUSY a stream still running
/// (another reader's, or this one's that never ended), other bits a broken block.
fn stream_idle<A: RegisterAccess + ?Sized>(d: &mut A, base: u32) -> Result<u32, ReadoutError> {
    let s = d.read32_live(base + stream::STATUS)?;
    if s & !stream::STATUS_BUSY != 0 {
        return Err(ReadoutError::BadStatus { status: s });
    }
    if s & stream::STATUS_BUSY != 0 {
        return Err(ReadoutError::StreamBusy);
    }
    Ok(s)
}
