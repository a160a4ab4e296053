//! The per-switch half on a thread of its own, with the flow tower whose estimates feed
//! its table, fed batch by batch.
//!
//! Why: in `sketch run` the half costs more than the flow sketches together (every packet
//! carries several hops, each a latency-tower insertion and a detector check), yet it only
//! needs each packet's key, hops and flow estimate, never the other flow sketches. On its
//! own thread it overlaps with them and with the parser instead of adding to them. The flow
//! tower comes along because its estimates are the half's input, and because the two
//! threads before it (the parser, and the main thread's other sketches) would otherwise
//! carry more work than this one on two cores. The tower and the half see the same packets
//! in the same order as on the caller's thread, so every counter, bucket, table slot and
//! record is exactly what [`Tower::insert_and_query_batch`] and [`PerSwitch::observe_batch`]
//! leave there.
//!
//! Batches cross as the parser's own [`SharedBatch`]es (no copy of the keys and hops), with
//! a range of their packets, through a bounded channel, so memory stays [`DEPTH`] batches
//! whatever the trace length. The half's records can go to a [`RecordSpill`] beside the
//! epoch's snapshot as they come ([`Spill`]), so they do not grow with the epoch either.

use std::ops::Range;
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::per_switch::PerSwitch;
use super::Tower;
use crate::trace::pipeline::{thread_cpu_s, SharedBatch, StageTime};
use smartnic_contract::wire::record::InflatedRecord;
use smartnic_contract::FlowKey;
use smartnic_driver::snapshot::RecordSpill;

/// Batches in flight to the half's thread.
pub const DEPTH: usize = 4;

/// What an epoch's end hands back.
#[derive(Debug)]
pub struct EpochState {
    pub tower: Tower,
    /// The half, without its records (drained into `spill` and `records`).
    pub half: PerSwitch,
    /// The head of the epoch's record stream, when the thread spilled any.
    pub spill: Option<RecordSpill>,
    /// The epoch's records after the spilled ones.
    pub records: Vec<InflatedRecord>,
}

/// Where the thread spills an epoch's records: into a [`RecordSpill`] for the snapshot at
/// `snapshot` (made at the first spill), each time `records` of them are held.
#[derive(Clone, Debug)]
pub struct Spill {
    pub snapshot: PathBuf,
    pub records: usize,
}

/// Records held before the thread spills them in `sketch run`: 16K records are 460 KB of
/// stream, against the 5.7 MB the 5M-packet test trace's single epoch produces.
pub const SPILL_RECORDS: usize = 16 * 1024;

enum Job {
    /// Insert packets `range` of a batch in an epoch.
    Batch(u32, SharedBatch, Range<usize>),
    /// Send the tower and the half as they stand (every batch sent before inserted), then
    /// start the next epoch cleared, its records spilled as given. A failed spill is
    /// sent instead of the state.
    Take(SyncSender<std::io::Result<EpochState>>, Option<Spill>),
}

/// A flow [`Tower`] and the [`PerSwitch`] half it feeds, running on their own thread.
pub struct PerSwitchWorker {
    jobs: Option<SyncSender<Job>>,
    thread: Option<JoinHandle<StageTime>>,
    /// How long the caller waited on the thread: for room in the job channel, or for an
    /// epoch's state.
    waited: Duration,
}

impl PerSwitchWorker {
    /// Starts `tower` and `half` on a new thread, the first epoch's records spilled as
    /// `spill` says (`None`: held until taken).
    pub fn start(tower: Tower, half: PerSwitch, spill: Option<Spill>) -> Self {
        let (jobs, inbox) = sync_channel(DEPTH);
        let thread = std::thread::Builder::new()
            .name("per-switch".into())
            .spawn(move || serve(tower, half, spill, &inbox))
            .expect("spawning the per-switch thread");
        PerSwitchWorker { jobs: Some(jobs), thread: Some(thread), waited: Duration::ZERO }
    }

    /// Hands packets `range` of `batch` to the thread, to insert in `epoch`.
    pub fn send(&mut self, epoch: u32, batch: SharedBatch, range: Range<usize>) {
        assert!(range.end <= batch.len(), "packets of the batch");
        let sending = Instant::now();
        if self.sender().send(Job::Batch(epoch, batch, range)).is_err() {
            self.died();
        }
        self.waited += sending.elapsed();
    }

    /// The tower and the half once every batch sent so far is inserted, and the half's
    /// records; the thread goes on with both cleared, as an epoch's end does, the next
    /// epoch's records spilled as `next` says. An error is a spill that failed.
    pub fn take(&mut self, next: Option<Spill>) -> std::io::Result<EpochState> {
        let asked = Instant::now();
        let (reply, answer) = sync_channel(1);
        if self.sender().send(Job::Take(reply, next)).is_err() {
            self.died();
        }
        let state = answer.recv().unwrap_or_else(|_| self.died());
        self.waited += asked.elapsed();
        state
    }

    /// Ends the thread once every batch sent is inserted; returns its time, and how long
    /// the caller waited on it (seconds).
    pub fn finish(mut self) -> (StageTime, f64) {
        self.jobs = None;
        let thread = self.thread.take().expect("the thread lives until finished or dropped");
        let time = thread.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (time, self.waited.as_secs_f64())
    }

    fn sender(&self) -> &SyncSender<Job> {
        self.jobs.as_ref().expect("the job channel lives until drop")
    }

    /// The thread has gone: only a panic ends it early, so pass that panic on.
    fn died(&mut self) -> ! {
        self.jobs = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            _ => panic!("the per-switch thread ended without a panic"),
        }
    }
}

impl Drop for PerSwitchWorker {
    /// Closes the job channel and waits for the thread (its panic, if any, was already
    /// passed on by the call that met it, or is dropped here while unwinding).
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The thread: inserts each batch into the tower, then the half with each packet's
/// estimate right after its insertion (the half never reads the tower, so the whole
/// batch's estimates can come first); spills the records as `spill` says; hands out both
/// on request. Returns its time, the wait being for jobs.
fn serve(mut tower: Tower, mut half: PerSwitch, spill: Option<Spill>, inbox: &Receiver<Job>) -> StageTime {
    let (mut keys, mut estimates): (Vec<FlowKey>, Vec<u64>) = (Vec::new(), Vec::new());
    let mut spilling = Spilling { to: spill, ..Spilling::default() };
    let mut waited = Duration::ZERO;
    loop {
        let asked = Instant::now();
        let Ok(job) = inbox.recv() else { break };
        waited += asked.elapsed();
        match job {
            Job::Batch(epoch, batch, range) => {
                let packets = &batch[range];
                keys.clear();
                keys.extend(packets.iter().map(|p| p.key));
                tower.insert_and_query_batch(&keys, &mut estimates);
                half.observe_batch(epoch, packets, &estimates);
                spilling.maybe(&mut half);
            }
            Job::Take(reply, next) => {
                // Drained first, so the records move instead of being copied with the half.
                let records = half.drain_records();
                let state = spilling.end(next).map(|spill| EpochState {
                    tower: tower.clone(),
                    half: half.clone(),
                    spill,
                    records,
                });
                let _ = reply.send(state);
                tower.clear();
                half.clear();
            }
        }
    }
    StageTime { cpu_s: thread_cpu_s(), waited_s: waited.as_secs_f64() }
}

/// The epoch's record spill as the thread keeps it.
#[derive(Default)]
struct Spilling {
    to: Option<Spill>,
    spill: Option<RecordSpill>,
    /// The first failure, reported at the epoch's end; nothing is spilled after it.
    failed: Option<std::io::Error>,
    /// The records' bytes on their way to the spill.
    stream: Vec<u8>,
}

impl Spilling {
    /// Spills the half's records once it holds the spill's count.
    fn maybe(&mut self, half: &mut PerSwitch) {
        let Some(to) = self.to.as_ref().filter(|to| half.records().len() >= to.records) else { return };
        if self.failed.is_some() {
            return;
        }
        let records = half.drain_records();
        self.stream.clear();
        super::snapshot::emit_records(&records, &mut self.stream);
        let spill = match self.spill.take() {
            Some(s) => Ok(s),
            None => RecordSpill::create(&to.snapshot),
        };
        match spill.and_then(|mut s| s.append(&self.stream).map(|()| s)) {
            Ok(s) => self.spill = Some(s),
            Err(e) => self.failed = Some(e),
        }
    }

    /// The epoch's spill (or its failure); the next epoch spills as `next` says.
    fn end(&mut self, next: Option<Spill>) -> std::io::Result<Option<RecordSpill>> {
        self.to = next;
        let spill = self.spill.take();
        match self.failed.take() {
            Some(e) => Err(e),
            None => Ok(spill),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sketch::per_switch::PerSwitchConfig;
    use crate::trace::Packet;
    use smartnic_contract::geometry::{InsertMode, TowerGeometry};
    use smartnic_contract::per_switch::{KeyTableGeometry, LatencyTowerGeometry};
    use smartnic_contract::shim::Hop;
    use smartnic_contract::FlowKey;

    /// Packets with 0 to 6 hops over 41 flows.
    fn packets(n: u32) -> Vec<Packet> {
        (0..n)
            .map(|i| {
                let key = FlowKey::from_v4([10, 0, 0, (i % 41) as u8], [10, 0, 1, 1], 1000, 80, 6);
                let hops = (0..i % 7)
                    .map(|h| Hop { switch_id: (h * 3 + i % 5) as u16, latency_ns: i * 37 % 9000 })
                    .collect();
                Packet { ts_ns: u64::from(i), wire_len: 64, key, hops }
            })
            .collect()
    }

    /// Fed through the thread in batches, epoch after epoch, the tower and the half are the
    /// ones fed on the caller's thread: the same counters, buckets, table, records and
    /// counts at every epoch end. The records are spilled every 40 (one epoch to a file
    /// that cannot be made, whose failure the epoch's end reports); the spill and the rest
    /// make the caller's record stream, in order.
    #[test]
    fn the_thread_observes_what_the_caller_would() {
        let dir = tempfile::tempdir().unwrap();
        let spill = |epoch: usize| {
            let name =
                if epoch == 2 { "missing/epoch.snap".to_string() } else { format!("epoch-{epoch}.snap") };
            Some(Spill { snapshot: dir.path().join(name), records: 40 })
        };
        let config = PerSwitchConfig {
            latency: LatencyTowerGeometry::from_cells(&[(4, 10, 61), (6, 14, 31), (8, 16, 13)], 4),
            mode: InsertMode::Acu,
            table: KeyTableGeometry::with_capacity(8),
            table_threshold: 3,
            inflate_ratio_x256: 2 * 256,
        };
        let packets = packets(5000);
        let geometry = TowerGeometry::from_widths_depths(&[(4, 37), (8, 19), (16, 11)]);
        let mut tower = Tower::new(geometry, InsertMode::Acu).unwrap();
        let mut here = PerSwitch::new(config.clone()).unwrap();
        let mut worker = PerSwitchWorker::start(tower.clone(), here.clone(), spill(0));
        let (mut inflated, mut estimates) = (0, Vec::new());
        for (epoch, ps) in packets.chunks(1700).enumerate() {
            let batch = SharedBatch::detached(ps.to_vec());
            for (n, p) in ps.chunks(300).enumerate() {
                let keys: Vec<FlowKey> = p.iter().map(|p| p.key).collect();
                tower.insert_and_query_batch(&keys, &mut estimates);
                here.observe_batch(epoch as u32, p, &estimates);
                worker.send(epoch as u32, batch.clone(), n * 300..n * 300 + p.len());
            }
            let taken = worker.take(spill(epoch + 1));
            if epoch == 2 {
                let e = taken.unwrap_err();
                assert_eq!(e.kind(), std::io::ErrorKind::NotFound, "{e}");
                tower.clear();
                here.clear();
                here.drain_records();
                continue;
            }
            let EpochState { tower: their_tower, half: there, spill, records } = taken.unwrap();
            for a in 0..3 {
                assert_eq!(their_tower.array_bytes(a), tower.array_bytes(a), "epoch {epoch}");
                assert_eq!(there.latency.array_bytes(a), here.latency.array_bytes(a), "epoch {epoch}");
            }
            for w in 0..2 {
                assert_eq!(there.table.way_bytes(w), here.table.way_bytes(w), "epoch {epoch}");
            }
            assert_eq!(there.stats(), here.stats(), "epoch {epoch}");
            inflated += here.stats().inflated;
            assert_eq!(spilled_then(spill, &there, &records), here.drain_records(), "epoch {epoch}");
            assert!(there.records().is_empty(), "the records come apart from the half");
            assert!(here.stats().table_inserts > 0, "the table filled: the estimates count");
            tower.clear();
            here.clear();
        }
        assert!(inflated > 200, "the detector fired {inflated} times: the test proves too little");
    }

    /// The record stream `spill` and `records` make, read back through a snapshot file.
    fn spilled_then(
        spill: Option<RecordSpill>,
        half: &PerSwitch,
        records: &[InflatedRecord],
    ) -> Vec<InflatedRecord> {
        use crate::sketch::snapshot::{per_switch_sections, per_switch_state, software_snapshot};
        let spill = spill.expect("every epoch spills: it holds more than 40 records");
        assert!(!spill.is_empty() && records.len() < 40);
        let mut snap = software_snapshot(&[], 0, 0).unwrap();
        snap.per_switch = per_switch_sections(half, records);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("back.snap");
        snap.write_file_spilled(&path, spill).unwrap();
        let back = smartnic_driver::snapshot::Snapshot::read_file(&path).unwrap();
        per_switch_state(&back).unwrap().records.unwrap()
    }
}
