//! Reading and parsing on a thread of their own, overlapped with whatever consumes the
//! packets.
//!
//! Why: a consumer such as `sketch run` or `trace stats` would otherwise wait on the file
//! and the frame parser for every packet, so its speed would be the sum of the two stages
//! instead of the slower one. The parser thread hands full batches through a bounded
//! channel (memory stays [`DEPTH`] batches whatever the trace length) and the consumer
//! hands the emptied vectors back, so the steady state allocates no batch.
//!
//! A consumer that keeps threads of its own busy (`sketch run`'s per-switch half) may
//! already fill every core; the parsing then runs on the consumer's thread instead
//! ([`Parsing::Inline`]), batch by batch, with the same batches and the same recycling.

use std::io::Read;
use std::ops::Deref;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::capture::PacketReader;
use super::error::TraceError;
use super::Packet;

/// Batches in flight between the parser and the consumer: enough to absorb a consumer's
/// pause (an epoch's snapshot write), small enough to keep memory bounded.
pub const DEPTH: usize = 4;

/// Packets per batch handed to the consumer.
pub const BATCH: usize = 4096;

/// Emptied vectors the parser keeps for reuse: the batches in flight to the consumer, and
/// as many again held further on (a consumer's own worker thread, [`SharedBatch`]).
const SPARE: usize = 2 * DEPTH + 2;

/// Where one stage of a pipelined run (a thread) spent its time: working, and blocked on
/// its neighbours. Tells which stage bounds a run: the one that never waits.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct StageTime {
    /// CPU time of the stage's thread, in seconds (`None` where the system does not tell).
    pub cpu_s: Option<f64>,
    /// Wall time the stage spent blocked: waiting for input, or for room to pass its
    /// output on, in seconds.
    pub waited_s: f64,
}

/// CPU time the calling thread has used so far, in seconds (Linux: the scheduler's count
/// in `/proc/thread-self/schedstat`; `None` elsewhere or when it cannot be read). The
/// scheduler adds a running thread's time to that count only at a tick or a switch, so a
/// thread that ran for less than a tick without blocking would read 0 s; a yield first
/// brings the count up to date (the scheduler accounts the running slice on a yield).
pub fn thread_cpu_s() -> Option<f64> {
    std::thread::yield_now();
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

/// What [`for_each_batch`] measured of its two sides.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PipelineTimes {
    /// The parser thread: its CPU time, and how long it waited for the consumer (for room
    /// in the channel, or for an emptied vector to come back). `None` when the parsing ran
    /// on the consumer's thread ([`Parsing::Inline`]).
    pub parser: Option<StageTime>,
    /// How long the consumer waited: for the parser's batches, or (parsing inline) for an
    /// emptied vector to come back from the threads it handed batches to. In seconds.
    pub consumer_waited_s: f64,
}

/// Where the reading and parsing run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Parsing {
    /// On a thread of their own, overlapped with the consumer.
    Thread,
    /// On the consumer's thread, before it consumes each batch.
    Inline,
}

impl Parsing {
    /// The placement for a consumer that keeps `consumer_threads` threads busy (its own
    /// included) on a machine with `cores` cores: a thread of its own while a core is left
    /// for it, inline otherwise.
    ///
    /// Why: one more busy thread than cores makes the scheduler share them in time
    /// slices, so the thread that bounds the run loses its core part of the time. On two
    /// cores `sketch run` (parser, main thread, per-switch half) took 0.55 s median on
    /// 5M packets with a parser thread and 0.50 s with the parsing inline.
    pub fn for_threads(consumer_threads: usize, cores: usize) -> Parsing {
        if consumer_threads < cores {
            Parsing::Thread
        } else {
            Parsing::Inline
        }
    }

    /// [`Parsing::for_threads`] on this machine's available cores.
    pub fn for_this_machine(consumer_threads: usize) -> Parsing {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Parsing::for_threads(consumer_threads, cores)
    }
}

/// A batch of parsed packets that threads share without copying it: clones are cheap, and
/// the last one dropped hands the vector back to the parser for reuse (its packets' hop
/// vectors keep their memory).
///
/// Why: `sketch run` hands each batch to the per-switch half's thread after the flow
/// sketches; copying the batch's keys and hops over cost the consumer's thread as much as
/// the flow tower's insertion.
#[derive(Clone, Debug)]
pub struct SharedBatch {
    /// `None` only while dropping.
    packets: Option<Arc<Vec<Packet>>>,
    home: SyncSender<Vec<Packet>>,
}

impl SharedBatch {
    /// A batch of `packets` that no parser takes back (tests, and callers that parsed on
    /// their own): the last clone dropped frees it.
    pub fn detached(packets: Vec<Packet>) -> Self {
        let (home, _) = sync_channel(0);
        SharedBatch { packets: Some(Arc::new(packets)), home }
    }
}

impl Deref for SharedBatch {
    type Target = [Packet];
    fn deref(&self) -> &[Packet] {
        self.packets.as_deref().expect("a batch holds its packets until dropped")
    }
}

impl Drop for SharedBatch {
    fn drop(&mut self) {
        if let Some(v) = self.packets.take().and_then(Arc::into_inner) {
            // A full return channel (or a finished parser) only means the vector is freed.
            let _ = self.home.try_send(v);
        }
    }
}

/// Hands every IP packet of `reader`, in file order, to `consume` in batches of at most
/// `batch` packets, with reading and parsing on a second thread, and returns where the two
/// sides' time went. Stops at the first error of either side and returns it;
/// `reader.counts()` afterwards tells what was read.
pub fn for_each_batch<R, E, F>(
    reader: &mut PacketReader<R>,
    batch: usize,
    mut consume: F,
) -> Result<PipelineTimes, E>
where
    R: Read + Send,
    E: From<TraceError>,
    F: FnMut(&[Packet]) -> Result<(), E>,
{
    for_each_shared_batch(reader, batch, Parsing::Thread, |b| consume(&b))
}

/// [`for_each_batch`] with each batch handed over as a [`SharedBatch`], which the consumer
/// may pass on to other threads; the vector returns to the parser when the last clone is
/// dropped. `parsing` tells where the reading and parsing run.
pub fn for_each_shared_batch<R, E, F>(
    reader: &mut PacketReader<R>,
    batch: usize,
    parsing: Parsing,
    consume: F,
) -> Result<PipelineTimes, E>
where
    R: Read + Send,
    E: From<TraceError>,
    F: FnMut(SharedBatch) -> Result<(), E>,
{
    let batch = batch.max(1);
    match parsing {
        Parsing::Thread => on_parser_thread(reader, batch, consume),
        Parsing::Inline => inline(reader, batch, consume),
    }
}

/// The parsing on the consumer's thread: each batch filled (in a vector handed back by
/// the consumer's threads, as the parser thread's are), then consumed.
fn inline<R, E, F>(reader: &mut PacketReader<R>, batch: usize, mut consume: F) -> Result<PipelineTimes, E>
where
    R: Read,
    E: From<TraceError>,
    F: FnMut(SharedBatch) -> Result<(), E>,
{
    let (home, empty) = sync_channel(SPARE);
    let (mut waited, mut made) = (Duration::ZERO, 0);
    loop {
        let mut packets =
            recycled(&empty, &mut made, &mut waited).unwrap_or_else(|| Vec::with_capacity(batch));
        let filled = fill(reader, &mut packets, batch);
        if !packets.is_empty() {
            consume(SharedBatch { packets: Some(Arc::new(packets)), home: home.clone() })?;
        }
        match filled {
            Ok(true) => {}
            Ok(false) => return Ok(PipelineTimes { parser: None, consumer_waited_s: waited.as_secs_f64() }),
            Err(e) => return Err(e.into()),
        }
    }
}

/// The parsing on a thread of its own, the batches handed over through a bounded channel.
fn on_parser_thread<R, E, F>(
    reader: &mut PacketReader<R>,
    batch: usize,
    mut consume: F,
) -> Result<PipelineTimes, E>
where
    R: Read + Send,
    E: From<TraceError>,
    F: FnMut(SharedBatch) -> Result<(), E>,
{
    std::thread::scope(|scope| {
        let (full_tx, full_rx) = sync_channel(DEPTH);
        let (empty_tx, empty_rx) = sync_channel(SPARE);
        let parser = scope.spawn(move || produce(reader, batch, &full_tx, &empty_rx));
        let mut waited = Duration::ZERO;
        loop {
            let asked = Instant::now();
            let Ok(sent) = full_rx.recv() else { break };
            waited += asked.elapsed();
            let packets: Vec<Packet> = sent?;
            consume(SharedBatch { packets: Some(Arc::new(packets)), home: empty_tx.clone() })?;
        }
        // The parser has ended (the channel closed): only a panic makes its join fail.
        let parser = parser.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        Ok(PipelineTimes { parser: Some(parser), consumer_waited_s: waited.as_secs_f64() })
    })
}

/// The parser thread: fills recycled (or new) vectors and sends them until the trace
/// ends, an error is sent (after the packets read before it), or the consumer has gone;
/// returns its time.
fn produce<R: Read>(
    reader: &mut PacketReader<R>,
    batch: usize,
    full: &SyncSender<Result<Vec<Packet>, TraceError>>,
    empty: &Receiver<Vec<Packet>>,
) -> StageTime {
    let mut waited = Duration::ZERO;
    let mut made = 0;
    loop {
        let mut packets =
            recycled(empty, &mut made, &mut waited).unwrap_or_else(|| Vec::with_capacity(batch));
        let filled = fill(reader, &mut packets, batch);
        let sending = Instant::now();
        if !packets.is_empty() && full.send(Ok(packets)).is_err() {
            break;
        }
        waited += sending.elapsed();
        match filled {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                let _ = full.send(Err(e));
                break;
            }
        }
    }
    StageTime { cpu_s: thread_cpu_s(), waited_s: waited.as_secs_f64() }
}

/// A returned vector to fill, or `None` to make a new one (counted in `made`). Past
/// [`SPARE`] vectors made, the parser waits for one to come back instead of making more: a
/// new vector's packets each make a fresh allocation of a hop list that spills, and while the
/// consumers still held the batches a parser that outran them allocated and freed a batch's
/// worth of lists again and again, which tripled its time. It waits [`RETURN_WAIT`] at
/// most, so a consumer that keeps batches only costs the allocations. Time spent waiting
/// is added to `waited`.
fn recycled(empty: &Receiver<Vec<Packet>>, made: &mut usize, waited: &mut Duration) -> Option<Vec<Packet>> {
    if let Ok(v) = empty.try_recv() {
        return Some(v);
    }
    if *made >= SPARE {
        let asked = Instant::now();
        let back = empty.recv_timeout(RETURN_WAIT);
        *waited += asked.elapsed();
        if let Ok(v) = back {
            return Some(v);
        }
    }
    *made += 1;
    None
}

/// How long the parser waits for a batch vector to come back before making a new one.
const RETURN_WAIT: std::time::Duration = std::time::Duration::from_millis(50);

/// Reads up to `batch` packets into `packets`, overwriting the packets a recycled vector
/// still holds (their hop vectors keep their memory) before pushing new ones; `Ok(false)`
/// once the trace has ended.
fn fill<R: Read>(
    reader: &mut PacketReader<R>,
    packets: &mut Vec<Packet>,
    batch: usize,
) -> Result<bool, TraceError> {
    packets.truncate(batch);
    let reused = packets.len();
    let mut n = 0;
    let more = loop {
        if n == batch {
            break Ok(true);
        }
        let read = match n < reused {
            true => reader.next_packet_into(&mut packets[n]),
            false => reader.next_packet().map(|p| p.map(|p| packets.push(p)).is_some()),
        };
        match read {
            Ok(true) => n += 1,
            Ok(false) => break Ok(false),
            Err(e) => break Err(e),
        }
    };
    // Only the packets read now are sent, never a recycled one.
    packets.truncate(n);
    more
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::capture::Format;
    use crate::trace::gen::{generate, GenConfig, ShimConfig};

    /// INT stacks of 1 to 8 hops (so a recycled packet often holds more hops than the next
    /// one, and stacks past `INLINE_HOPS` spill and come back in place), IPv6, VLAN tags and
    /// ARP frames between the packets.
    fn trace_bytes(packets: u64) -> Vec<u8> {
        let shim = ShimConfig { min_hops: 1, max_hops: 8, ..ShimConfig::default() };
        let cfg = GenConfig {
            packets,
            flows: 37,
            ipv6: 0.3,
            vlan: 0.3,
            non_ip: 0.2,
            shim: Some(shim),
            ..GenConfig::default()
        };
        let mut pcap = Vec::new();
        generate(&cfg, &mut pcap, None).expect("generate");
        pcap
    }

    fn sequential(bytes: &[u8]) -> Vec<Packet> {
        let mut r = PacketReader::from_reader(bytes, Format::Auto).unwrap();
        std::iter::from_fn(|| r.next_packet().unwrap()).collect()
    }

    const BOTH: [Parsing; 2] = [Parsing::Thread, Parsing::Inline];

    /// Every packet arrives once, in file order, whatever the batch size (including one
    /// that does not divide the trace and one larger than it) and wherever the parsing
    /// runs; batches dropped on another thread come back and are refilled.
    #[test]
    fn batches_are_the_streaming_reader_in_order() {
        let bytes = trace_bytes(1000);
        let want = sequential(&bytes);
        for (batch, parsing) in [1, 7, 333, 4096].into_iter().flat_map(|b| BOTH.map(|p| (b, p))) {
            let mut r = PacketReader::from_reader(&bytes[..], Format::Auto).unwrap();
            let mut got = Vec::new();
            let (keep, kept) = std::sync::mpsc::channel::<SharedBatch>();
            let holder = std::thread::spawn(move || kept.into_iter().count());
            for_each_shared_batch::<_, TraceError, _>(&mut r, batch, parsing, |b| {
                assert!(!b.is_empty() && b.len() <= batch);
                got.extend_from_slice(&b);
                keep.send(b).unwrap();
                Ok(())
            })
            .unwrap();
            drop(keep);
            assert!(holder.join().unwrap() > 0);
            assert_eq!(got, want, "batch {batch}, {parsing:?}");
            assert_eq!(r.counts().packets, 1000);
            assert!(r.counts().non_ip > 100, "the ARP frames are counted");
        }
    }

    /// A damaged file reaches the consumer as the reader's error, after the packets before
    /// it, wherever the parsing runs.
    #[test]
    fn reader_error_is_returned_after_the_good_packets() {
        let bytes = trace_bytes(100);
        let cut = &bytes[..bytes.len() - 5];
        let mut r = PacketReader::from_reader(cut, Format::Auto).unwrap();
        let before = std::iter::from_fn(|| r.next_packet().ok().flatten()).count();
        assert!(before >= 99);
        for parsing in BOTH {
            let mut r = PacketReader::from_reader(cut, Format::Auto).unwrap();
            let mut seen = 0;
            let err = for_each_shared_batch::<_, TraceError, _>(&mut r, 16, parsing, |b| {
                seen += b.len();
                Ok(())
            })
            .unwrap_err();
            assert_eq!(seen, before, "every packet before the damaged record, {parsing:?}");
            assert!(err.to_string().contains("truncated") || err.to_string().contains("short"), "{err}");
        }
    }

    /// A consumer that fails stops the pipeline (no hang on a blocked parser), and its
    /// first batch is the only one read when the parsing is inline.
    #[test]
    fn consumer_error_stops_the_parser() {
        let bytes = trace_bytes(5000);
        for parsing in BOTH {
            let mut r = PacketReader::from_reader(&bytes[..], Format::Auto).unwrap();
            let stop = |_| Err(TraceError::from(std::io::Error::other("stop")));
            let err = for_each_shared_batch(&mut r, 10, parsing, stop).unwrap_err();
            assert!(err.to_string().contains("stop"));
            if parsing == Parsing::Inline {
                assert_eq!(r.counts().packets, 10);
            }
        }
    }

    /// A parser thread while a core is left beside the consumer's threads, inline once
    /// they fill every core (`sketch run` on two cores, with its per-switch thread).
    #[test]
    fn parsing_is_inline_once_the_consumer_fills_the_cores() {
        assert_eq!(Parsing::for_threads(1, 2), Parsing::Thread);
        assert_eq!(Parsing::for_threads(2, 2), Parsing::Inline);
        assert_eq!(Parsing::for_threads(2, 3), Parsing::Thread);
        assert_eq!(Parsing::for_threads(1, 1), Parsing::Inline);
    }

    /// Hands out at most 64 bytes per read, sleeping first: a slow disk.
    struct Slow<'a>(&'a [u8]);

    impl Read for Slow<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            std::thread::sleep(Duration::from_micros(200));
            let n = buf.len().min(64).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    /// The waits land on the side that waits: a consumer that sleeps 5 ms a batch makes
    /// the parser wait (it parses 20 batches in far less than the 100 ms slept, and only
    /// `DEPTH` of them fit in the channel), and a slow reader makes the consumer wait. Each
    /// wait is within the run's wall time, and each thread's CPU time is told on Linux.
    /// A thread that ran for about a millisecond, never blocking, reports CPU time: the
    /// count is brought up to date before it is read.
    #[test]
    fn a_short_thread_reports_its_cpu_time() {
        for _ in 0..20 {
            let cpu = std::thread::spawn(|| {
                let start = Instant::now();
                while start.elapsed() < Duration::from_millis(1) {
                    std::hint::spin_loop();
                }
                thread_cpu_s()
            });
            let cpu = cpu.join().unwrap().expect("Linux tells a thread's CPU time");
            assert!(cpu > 0.0, "{cpu}");
        }
    }

    #[test]
    fn times_tell_which_side_waits() {
        let bytes = trace_bytes(2_000);
        let mut r = PacketReader::from_reader(&bytes[..], Format::Auto).unwrap();
        let started = Instant::now();
        let t = for_each_batch(&mut r, 100, |_| {
            std::thread::sleep(Duration::from_millis(5));
            Ok::<_, TraceError>(())
        })
        .unwrap();
        let wall = started.elapsed().as_secs_f64();
        let parser = t.parser.expect("a parser thread");
        assert!(parser.waited_s >= 0.03 && parser.waited_s <= wall, "{t:?} in {wall} s");
        assert!(t.consumer_waited_s <= wall, "{t:?} in {wall} s");
        let cpu = parser.cpu_s.expect("Linux tells a thread's CPU time");
        assert!(cpu > 0.0 && cpu < wall, "{t:?} in {wall} s");

        let bytes = trace_bytes(500);
        let mut r = PacketReader::from_reader(Slow(&bytes), Format::Auto).unwrap();
        let started = Instant::now();
        let t = for_each_batch(&mut r, 100, |_| Ok::<_, TraceError>(())).unwrap();
        let wall = started.elapsed().as_secs_f64();
        // One read per 64 bytes at 0.2 ms each: far more than 30 ms in all.
        assert!(bytes.len() / 64 > 150, "{} bytes", bytes.len());
        assert!(t.consumer_waited_s >= 0.03 && t.consumer_waited_s <= wall, "{t:?} in {wall} s");
        assert!(t.parser.expect("a parser thread").waited_s < t.consumer_waited_s, "{t:?}");
    }
}
