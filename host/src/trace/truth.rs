//! Per-flow ground truth: the exact answers every sketch is measured against.
//!
//! Why one record type for both sides: the generator writes the truth of what it
//! emitted, `trace stats` computes the same record from parsed bytes, and accuracy code
//! compares sketch answers with either. The field names are therefore shared, and a
//! test can check a parsed trace against its generator's truth field by field.
//!
//! Definitions (per flow, packets taken in file order):
//! - `packets`, `bytes`: count and sum of wire lengths (pcap original length);
//! - `first_ns`, `last_ns`: smallest and largest timestamp;
//! - `max_iat_ns`: largest gap between consecutive packets of the flow (a timestamp that
//!   goes backwards counts as gap 0); 0 for a one-packet flow;
//! - `hop_latency_ns[s]`, `hop_packets[s]`: sum of the latencies reported by switch `s`
//!   and the number of hop records of `s` (INT stack), so averages are exact;
//! - `delay_ns`: sum over packets of the whole-path delay (sum of hop latencies).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use smartnic_contract::shim::Hop;
use smartnic_contract::FlowKey;

/// The exact statistics of one flow.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowRecord {
    /// The flow key in `FlowKey`'s Display form, `a.b.c.d:p>e.f.g.h:q/proto`.
    pub key: String,
    pub packets: u64,
    pub bytes: u64,
    pub first_ns: u64,
    pub last_ns: u64,
    pub max_iat_ns: u64,
    pub hop_latency_ns: BTreeMap<u16, u64>,
    pub hop_packets: BTreeMap<u16, u64>,
    pub delay_ns: u64,
}

/// Whole-trace totals.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    /// IP packets.
    pub packets: u64,
    /// Sum of the wire lengths of the IP packets.
    pub bytes: u64,
    /// Distinct flow keys.
    pub flows: u64,
    /// Frames that were not IP.
    pub non_ip: u64,
    /// Frames that were malformed.
    pub malformed: u64,
    /// First and last IP packet timestamp, and their difference (0 when empty).
    pub first_ns: u64,
    pub last_ns: u64,
    pub duration_ns: u64,
    /// Sum of all packets' path delays.
    pub delay_ns: u64,
}

/// Running statistics of one flow.
#[derive(Clone, Debug, Default)]
pub struct FlowAcc {
    pub packets: u64,
    pub bytes: u64,
    pub first_ns: u64,
    pub last_ns: u64,
    pub max_iat_ns: u64,
    prev_ns: u64,
    /// Per switch: (switch ID, latency sum, hop records), in the order the flow first
    /// crossed them (sorted by switch ID in its record). A flow crosses a handful of
    /// switches, so a vector beats two maps per hop; and a packet on the flow's usual path
    /// finds its hop `i` at entry `i`, one predictable comparison instead of a search.
    hops: Vec<(u16, u64, u64)>,
    pub delay_ns: u64,
}

impl FlowAcc {
    /// Adds one packet.
    pub fn add(&mut self, ts_ns: u64, wire_len: u32, hops: &[Hop]) {
        if self.packets == 0 {
            self.first_ns = ts_ns;
            self.last_ns = ts_ns;
        } else {
            self.max_iat_ns = self.max_iat_ns.max(ts_ns.saturating_sub(self.prev_ns));
            self.first_ns = self.first_ns.min(ts_ns);
            self.last_ns = self.last_ns.max(ts_ns);
        }
        self.prev_ns = ts_ns;
        self.packets += 1;
        self.bytes += wire_len as u64;
        for (i, h) in hops.iter().enumerate() {
            let at = match self.hops.get(i) {
                Some(e) if e.0 == h.switch_id => i,
                _ => self.entry(h.switch_id),
            };
            self.hops[at].1 += h.latency_ns as u64;
            self.hops[at].2 += 1;
            self.delay_ns += h.latency_ns as u64;
        }
    }

    /// The index of `switch_id`'s entry, appended if the flow had not crossed it yet.
    fn entry(&mut self, switch_id: u16) -> usize {
        self.hops.iter().position(|e| e.0 == switch_id).unwrap_or_else(|| {
            self.hops.push((switch_id, 0, 0));
            self.hops.len() - 1
        })
    }

    /// Hints the CPU to pull the per-switch list in before [`FlowAcc::add`] needs it.
    #[inline(always)]
    pub fn prefetch_hops(&self) {
        super::prefetch(self.hops.as_ptr());
    }

    /// The finished record of flow `key`.
    pub fn record(&self, key: &FlowKey) -> FlowRecord {
        let mut hops = self.hops.clone();
        hops.sort_unstable_by_key(|e| e.0);
        FlowRecord {
            key: key.to_string(),
            packets: self.packets,
            bytes: self.bytes,
            first_ns: self.first_ns,
            last_ns: self.last_ns,
            max_iat_ns: self.max_iat_ns,
            hop_latency_ns: hops.iter().map(|&(s, l, _)| (s, l)).collect(),
            hop_packets: hops.iter().map(|&(s, _, n)| (s, n)).collect(),
            delay_ns: self.delay_ns,
        }
    }
}

/// Sorts flows the way every listing shows them: most packets first, then by key bytes.
pub fn sort_flows(flows: &mut [(FlowKey, FlowRecord)]) {
    flows.sort_unstable_by(|a, b| rank(a.1.packets, &a.0, b.1.packets, &b.0));
}

/// The listing order of two flows of `pa` and `pb` packets: most packets first, then by key
/// bytes.
#[inline]
pub fn rank(pa: u64, ka: &FlowKey, pb: u64, kb: &FlowKey) -> std::cmp::Ordering {
    pb.cmp(&pa).then(ka.cmp(kb))
}

/// The ground-truth file written next to a generated trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Truth {
    /// The generator configuration that produced the trace.
    pub config: super::gen::GenConfig,
    pub totals: Totals,
    /// All flows, most packets first (ties by key bytes).
    pub flows: Vec<FlowRecord>,
}

impl Truth {
    /// Reads a truth file.
    pub fn read(path: &std::path::Path) -> anyhow::Result<Self> {
        let f = std::io::BufReader::new(std::fs::File::open(path)?);
        Ok(serde_json::from_reader(f)?)
    }

    /// Writes the truth as JSON.
    pub fn write(&self, path: &std::path::Path) -> anyhow::Result<()> {
        let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
        serde_json::to_writer(&mut f, self)?;
        std::io::Write::flush(&mut f)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Paths that change (ECMP), shorten, and repeat a switch: the per-switch sums are a
    /// plain map's.
    #[test]
    fn per_switch_sums_whatever_the_path() {
        let mut rng = smartnic_contract::vectors::KeyStream::new(9);
        let mut a = FlowAcc::default();
        let mut want: BTreeMap<u16, (u64, u64)> = BTreeMap::new();
        let paths: [&[u16]; 4] = [&[7, 3, 9, 1], &[7, 4, 9, 1], &[7, 3], &[5, 5, 2, 7, 3, 9]];
        for n in 0..2000u64 {
            let path = paths[(rng.next_u64() % 4) as usize];
            let hops: Vec<Hop> = path
                .iter()
                .map(|&s| Hop { switch_id: s, latency_ns: (rng.next_u64() % 5000) as u32 })
                .collect();
            for h in &hops {
                let e = want.entry(h.switch_id).or_default();
                e.0 += h.latency_ns as u64;
                e.1 += 1;
            }
            a.add(n, 64, &hops);
        }
        let r = a.record(&FlowKey::default());
        assert_eq!(r.hop_latency_ns, want.iter().map(|(&s, &(l, _))| (s, l)).collect());
        assert_eq!(r.hop_packets, want.iter().map(|(&s, &(_, c))| (s, c)).collect());
        assert_eq!(r.hop_packets.len(), 7);
    }

    #[test]
    fn accumulator_by_hand() {
        let mut a = FlowAcc::default();
        let h = |s, l| Hop { switch_id: s, latency_ns: l };
        a.add(100, 64, &[h(1, 10), h(2, 20)]);
        a.add(150, 1500, &[h(1, 5)]);
        a.add(140, 100, &[]);
        a.add(400, 60, &[h(2, 1)]);
        let r = a.record(&FlowKey::default());
        assert_eq!(r.packets, 4);
        assert_eq!(r.bytes, 1724);
        assert_eq!((r.first_ns, r.last_ns), (100, 400));
        // gaps: 50, 0 (backwards), 260
        assert_eq!(r.max_iat_ns, 260);
        assert_eq!(r.hop_latency_ns, BTreeMap::from([(1, 15), (2, 21)]));
        assert_eq!(r.hop_packets, BTreeMap::from([(1, 2), (2, 2)]));
        assert_eq!(r.delay_ns, 36);
        assert_eq!(r.key, "0.0.0.0:0>0.0.0.0:0/0");
    }
}
