//! The per-switch half on a thread of its own, fed batch by batch.
//!
//! Why: in `sketch run` the half costs more than the flow sketches together (every packet
//! carries several hops, each a latency-tower insertion and a detector check), yet it only
//! needs each packet's key, hops and flow estimate, never the flow sketches themselves. On
//! its own thread it overlaps with the flow sketches and the parser instead of adding to
//! them. The half sees the same packets in the same order as on the caller's thread, so its
//! buckets, table and records are exactly [`PerSwitch::observe_batch`]'s.
//!
//! Batches cross as the parser's own [`SharedBatch`]es (no copy of the keys and hops),
//! with a range of their packets and a vector of estimates, through a bounded channel; the
//! estimate vectors come back for reuse, so memory stays [`DEPTH`] batches whatever the
//! trace length.

use std::ops::Range;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use super::per_switch::PerSwitch;
use crate::trace::pipeline::SharedBatch;
use smartnic_contract::wire::record::InflatedRecord;

/// Batches in flight to the half's thread.
pub const DEPTH: usize = 4;

/// Packets `range` of a parsed batch, with each one's flow estimate right after its
/// insertion into the flow tower (`estimates[n]` for packet `range.start + n`).
pub struct HopWork {
    pub packets: SharedBatch,
    pub range: Range<usize>,
    pub estimates: Vec<u64>,
}

enum Job {
    /// Observe packets in an epoch.
    Batch(u32, HopWork),
    /// Send the half as it stands (every batch sent before observed) and its records, then
    /// start the next epoch cleared.
    Take(SyncSender<(PerSwitch, Vec<InflatedRecord>)>),
}

/// A [`PerSwitch`] running on its own thread.
pub struct PerSwitchWorker {
    jobs: Option<SyncSender<Job>>,
    spare: Receiver<Vec<u64>>,
    thread: Option<JoinHandle<()>>,
}

impl PerSwitchWorker {
    /// Starts `half` on a new thread.
    pub fn start(half: PerSwitch) -> Self {
        let (jobs, inbox) = sync_channel(DEPTH);
        let (give_back, spare) = sync_channel(DEPTH + 2);
        let thread = std::thread::Builder::new()
            .name("per-switch".into())
            .spawn(move || serve(half, &inbox, &give_back))
            .expect("spawning the per-switch thread");
        PerSwitchWorker { jobs: Some(jobs), spare, thread: Some(thread) }
    }

    /// An emptied estimate vector to fill (a returned one when there is one).
    pub fn estimates(&self) -> Vec<u64> {
        self.spare.try_recv().unwrap_or_default()
    }

    /// Hands `work` (its estimates filled) to the half, to observe in `epoch`.
    pub fn send(&mut self, epoch: u32, work: HopWork) {
        assert_eq!(work.estimates.len(), work.range.len(), "one estimate per packet");
        assert!(work.range.end <= work.packets.len(), "packets of the batch");
        if self.sender().send(Job::Batch(epoch, work)).is_err() {
            self.died();
        }
    }

    /// The half once every batch sent so far is observed, and its records (drained: the
    /// half comes without them); the thread goes on with the same half cleared
    /// ([`PerSwitch::clear`]), as an epoch's end does.
    pub fn take(&mut self) -> (PerSwitch, Vec<InflatedRecord>) {
        let (reply, answer) = sync_channel(1);
        if self.sender().send(Job::Take(reply)).is_err() {
            self.died();
        }
        answer.recv().unwrap_or_else(|_| self.died())
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

/// The thread: observes each batch and returns its estimates emptied (the batch itself goes
/// back to the parser as it is dropped), hands out the half on request.
fn serve(mut half: PerSwitch, inbox: &Receiver<Job>, give_back: &SyncSender<Vec<u64>>) {
    for job in inbox {
        match job {
            Job::Batch(epoch, HopWork { packets, range, mut estimates }) => {
                half.observe_batch(epoch, &packets[range], &estimates);
                drop(packets);
                estimates.clear();
                // A full return channel only means the sender has vectors enough.
                let _ = give_back.try_send(estimates);
            }
            Job::Take(reply) => {
                // Drained first, so the records move instead of being copied with the half.
                let records = half.drain_records();
                let _ = reply.send((half.clone(), records));
                half.clear();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sketch::per_switch::PerSwitchConfig;
    use crate::trace::Packet;
    use smartnic_contract::geometry::InsertMode;
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

    /// Fed through the thread in batches, epoch after epoch, the half is the one fed on the
    /// caller's thread: the same buckets, table, records and counts at every epoch end.
    #[test]
    fn the_thread_observes_what_the_caller_would() {
        let config = PerSwitchConfig {
            latency: LatencyTowerGeometry::from_cells(&[(4, 10, 61), (6, 14, 31), (8, 16, 13)], 4),
            mode: InsertMode::Acu,
            table: KeyTableGeometry::with_capacity(8),
            table_threshold: 3,
            inflate_ratio_x256: 2 * 256,
        };
        let packets = packets(5000);
        let estimates: Vec<u64> = (0..packets.len() as u64).map(|n| n * 5 % 11).collect();
        let mut here = PerSwitch::new(config.clone()).unwrap();
        let mut worker = PerSwitchWorker::start(here.clone());
        let mut inflated = 0;
        for (epoch, (ps, es)) in packets.chunks(1700).zip(estimates.chunks(1700)).enumerate() {
            let batch = SharedBatch::detached(ps.to_vec());
            for (n, (p, e)) in ps.chunks(300).zip(es.chunks(300)).enumerate() {
                here.observe_batch(epoch as u32, p, e);
                let mut estimates = worker.estimates();
                assert!(estimates.is_empty());
                estimates.extend_from_slice(e);
                let range = n * 300..n * 300 + p.len();
                worker.send(epoch as u32, HopWork { packets: batch.clone(), range, estimates });
            }
            let (there, records) = worker.take();
            for a in 0..3 {
                assert_eq!(there.latency.array_bytes(a), here.latency.array_bytes(a), "epoch {epoch}");
            }
            for w in 0..2 {
                assert_eq!(there.table.way_bytes(w), here.table.way_bytes(w), "epoch {epoch}");
            }
            assert_eq!(there.stats(), here.stats(), "epoch {epoch}");
            inflated += here.stats().inflated;
            assert_eq!(records, here.drain_records(), "epoch {epoch}");
            assert!(there.records().is_empty(), "the records come apart from the half");
            here.clear();
        }
        assert!(inflated > 0, "the detector never fired: the test proves too little");
    }
}
