//! The lab's exact ground truth: what every flow sent, what arrived, where each lost packet
//! was lost and why, and per flow per switch what the switch saw (packets, bytes, hop
//! latencies, inter-arrival gaps, repeated visits). Every network-wide accuracy figure is
//! scored against this file, so it is kept by the engine as events happen, never
//! reconstructed from the captures.

use super::faults::FaultRecord;
use serde::Serialize;
use smartnic_p4::twin::DropReason;

/// Version of the `truth.json` layout; bump on any change of its fields.
pub const TRUTH_VERSION: u32 = 1;

/// Buckets of [`FlowSwitch::latency_log2_hist`]: bucket `b` counts latencies whose bit
/// length is `b` (0 ns in bucket 0, `[2^(b-1), 2^b)` ns in bucket `b`; 2^30 ns and more in
/// the last). Held inline (serde writes arrays of up to 32), so counting a hop follows no
/// pointer.
pub const LATENCY_BUCKETS: usize = 32;

/// The whole truth of one run.
#[derive(Clone, Debug, Serialize)]
pub struct Truth {
    pub version: u32,
    pub seed: u64,
    /// Time of the last event, ns.
    pub end_ns: u64,
    pub totals: Totals,
    pub faults: Vec<FaultRecord>,
    pub switches: Vec<SwitchTotals>,
    pub flows: Vec<FlowTruth>,
    pub lost: Vec<Lost>,
}

/// Whole-run counts.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Totals {
    pub flows: u64,
    pub packets_sent: u64,
    pub packets_received: u64,
    pub packets_dropped: u64,
    /// Packets forwarded by a switch (one packet crossing five switches counts five).
    pub packet_hops: u64,
}

/// What one switch did, over all flows.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct SwitchTotals {
    pub name: String,
    pub switch_id: u16,
    pub arrivals: u64,
    /// Arrivals whose transmission started on an egress port.
    pub forwarded: u64,
    /// Arrivals lost at this switch (ingress drops and full queues).
    pub dropped: u64,
}

/// One flow.
#[derive(Clone, Debug, Serialize)]
pub struct FlowTruth {
    pub id: u32,
    /// SRC:PORT>DST:PORT/PROTO, as every tool prints a flow key.
    pub key: String,
    pub src: String,
    pub dst: String,
    pub start_ns: u64,
    pub size_bytes: u64,
    pub packets_sent: u64,
    /// Wire bytes as the source host sent them.
    pub bytes_sent: u64,
    pub packets_received: u64,
    /// Wire bytes as the destination received them (INT stack included).
    pub bytes_received: u64,
    pub packets_dropped: u64,
    pub paths: Vec<PathTruth>,
    pub switches: Vec<FlowSwitch>,
    /// The switch IDs of `switches`, in the same order: searched instead of the records.
    #[serde(skip)]
    ids: Vec<u16>,
}

/// One path a flow's packets took: the switch IDs in order (a loop repeats them).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct PathTruth {
    pub switches: Vec<u16>,
    pub packets: u64,
    pub delivered: u64,
}

/// One flow at one switch.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct FlowSwitch {
    pub switch_id: u16,
    /// Arrivals, a looping packet counted once per visit.
    pub arrivals: u64,
    /// Distinct packets that arrived (a looping packet once).
    pub packets: u64,
    /// Wire bytes of the arrivals.
    pub bytes: u64,
    pub forwarded: u64,
    pub dropped: u64,
    /// Hop latencies (transmission start minus arrival) of the forwarded arrivals.
    pub latency_sum_ns: u64,
    pub latency_min_ns: u64,
    pub latency_max_ns: u64,
    pub latency_log2_hist: [u64; LATENCY_BUCKETS],
    /// Largest gap between two consecutive arrivals of the flow here.
    pub max_interarrival_ns: u64,
    /// Most visits of one packet to this switch (1 without a loop).
    pub max_visits: u32,
    #[serde(skip)]
    last_arrival: Option<u64>,
}

/// One lost packet.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Lost {
    pub flow: u32,
    /// The packet's index in its flow (0, 1, ...).
    pub packet: u32,
    /// The switch's name, or the port `NODE>PEER` of a link loss.
    pub at: String,
    pub switch_id: Option<u16>,
    pub time_ns: u64,
    pub reason: DropReason,
}

impl FlowSwitch {
    fn new(switch_id: u16) -> Self {
        FlowSwitch {
            switch_id,
            arrivals: 0,
            packets: 0,
            bytes: 0,
            forwarded: 0,
            dropped: 0,
            latency_sum_ns: 0,
            latency_min_ns: u64::MAX,
            latency_max_ns: 0,
            latency_log2_hist: [0; LATENCY_BUCKETS],
            max_interarrival_ns: 0,
            max_visits: 0,
            last_arrival: None,
        }
    }

    /// An arrival at `t`, the packet's `visit`-th at this switch.
    pub fn arrive(&mut self, t: u64, bytes: u64, visit: u32) {
        self.arrivals += 1;
        self.packets += u64::from(visit == 1);
        self.bytes += bytes;
        self.max_visits = self.max_visits.max(visit);
        if let Some(prev) = self.last_arrival {
            self.max_interarrival_ns = self.max_interarrival_ns.max(t - prev);
        }
        self.last_arrival = Some(t);
    }

    /// A transmission start `latency` ns after the arrival.
    pub fn forward(&mut self, latency: u64) {
        self.forwarded += 1;
        self.latency_sum_ns += latency;
        self.latency_min_ns = self.latency_min_ns.min(latency);
        self.latency_max_ns = self.latency_max_ns.max(latency);
        let bucket = ((64 - latency.leading_zeros()) as usize).min(LATENCY_BUCKETS - 1);
        self.latency_log2_hist[bucket] += 1;
    }
}

impl FlowTruth {
    pub fn new(id: u32, key: String, src: String, dst: String, start_ns: u64, size_bytes: u64) -> Self {
        FlowTruth {
            id,
            key,
            src,
            dst,
            start_ns,
            size_bytes,
            packets_sent: 0,
            bytes_sent: 0,
            packets_received: 0,
            bytes_received: 0,
            packets_dropped: 0,
            paths: Vec::new(),
            switches: Vec::new(),
            ids: Vec::new(),
        }
    }

    /// This flow's record at switch `id` (created on first use; paths are short, so a
    /// linear search over the IDs beats a map).
    pub fn at(&mut self, id: u16) -> &mut FlowSwitch {
        match self.ids.iter().position(|&s| s == id) {
            Some(i) => &mut self.switches[i],
            None => {
                self.ids.push(id);
                self.switches.push(FlowSwitch::new(id));
                self.switches.last_mut().unwrap()
            }
        }
    }

    /// A packet's life ended on `path`.
    pub fn path(&mut self, path: &[u16], delivered: bool) {
        let d = u64::from(delivered);
        match self.paths.iter_mut().find(|p| p.switches == path) {
            Some(p) => {
                p.packets += 1;
                p.delivered += d;
            }
            None => self.paths.push(PathTruth { switches: path.to_vec(), packets: 1, delivered: d }),
        }
    }

    /// Tidies the record for output: an unused minimum reads 0, switches in ID order.
    pub fn finish(&mut self) {
        for s in &mut self.switches {
            if s.forwarded == 0 {
                s.latency_min_ns = 0;
            }
        }
        self.switches.sort_by_key(|s| s.switch_id);
        self.ids = self.switches.iter().map(|s| s.switch_id).collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_bit_lengths() {
        let mut s = FlowSwitch::new(1);
        for l in [0, 1, 2, 3, 1024, u32::MAX as u64] {
            s.forward(l);
        }
        let h = &s.latency_log2_hist;
        assert_eq!((h[0], h[1], h[2], h[11], h[31]), (1, 1, 2, 1, 1));
        assert_eq!((s.latency_min_ns, s.latency_max_ns), (0, u32::MAX as u64));
    }

    #[test]
    fn interarrival_and_visits() {
        let mut s = FlowSwitch::new(1);
        s.arrive(10, 100, 1);
        s.arrive(50, 100, 1);
        s.arrive(60, 100, 2);
        assert_eq!((s.arrivals, s.packets, s.max_visits, s.max_interarrival_ns), (3, 2, 2, 40));
    }
}
