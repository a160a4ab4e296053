//! `trace stats`: exact per-flow statistics of a trace.
//!
//! Why: this is the reference against which sketches are judged on real captures, and
//! the check that a generated trace parses back to its ground truth. The output uses the
//! field names of [`super::truth`], so a `--json` report and a truth file compare
//! directly.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use serde::Serialize;
use smartnic_contract::FlowKey;

use super::capture::{Format, PacketReader};
use super::error::TraceError;
use super::frame::{Classified, FrameError};
use super::pipeline::{for_each_batch, BATCH};
use super::truth::{rank, FlowAcc, FlowRecord, Totals};
use super::{prefetch, Packet};

/// A fast hash of a 13-byte flow key (multiply-rotate over its two words, as rustc's own
/// hash tables do). The table is filled once per trace on one machine; SipHash's
/// resistance to chosen collisions bought nothing there and cost a third of `trace stats`.
#[inline(always)]
fn key_hash(key: &FlowKey) -> u64 {
    let b = key.as_bytes();
    let lo = u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
    let mut hi = [0u8; 8];
    hi[..b.len() - 8].copy_from_slice(&b[8..]);
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let h = lo.wrapping_mul(K);
    (h.rotate_left(5) ^ u64::from_le_bytes(hi)).wrapping_mul(K)
}

/// How many packets ahead [`FlowTable::add_packets`] starts each of its look-ups: the
/// table's slot `3 * AHEAD` packets ahead, the flow's entry `2 * AHEAD` ahead, its hop
/// list and the packet's own `AHEAD` ahead, so a packet's cache misses are in flight long
/// before it.
const AHEAD: usize = 8;

/// An open-addressed map from flow key to its index in [`FlowTable::flows`].
///
/// Why not `HashMap`: `trace stats` misses the cache on every packet (170K flows of a
/// CAIDA-sized trace are far beyond L2), and a packet's slot and entry can only be
/// prefetched if their addresses can be computed ahead; this table's can. A slot packs a
/// 32-bit tag of the hash (so a probe rarely touches another flow's entry) and the flow's
/// index plus one (0: empty); linear probing, at most half full.
struct Index {
    slots: Vec<u64>,
    /// `slots.len() - 1` (a power of two minus one).
    mask: usize,
}

impl Default for Index {
    fn default() -> Self {
        Index { slots: vec![0; MIN_SLOTS], mask: MIN_SLOTS - 1 }
    }
}

/// Slots of an empty table.
const MIN_SLOTS: usize = 1024;

impl Index {
    /// Where the probe for hash `h` starts.
    #[inline(always)]
    fn home(&self, h: u64) -> usize {
        (h >> 32) as usize & self.mask
    }

    /// Requests the cache line of `h`'s first slot.
    #[inline(always)]
    fn prefetch(&self, h: u64) {
        prefetch(&self.slots[self.home(h)]);
    }

    /// The flow index stored under tag `h` at the first slot, if any (a hint: it may be
    /// another flow's with the same tag, or miss a flow further along the probe).
    #[inline(always)]
    fn hint(&self, h: u64) -> Option<usize> {
        let s = self.slots[self.home(h)];
        (s != 0 && s as u32 == h as u32).then(|| (s >> 32) as usize - 1)
    }

    /// The index of the flow whose key `is_key` recognises, or the free slot to store it.
    #[inline(always)]
    fn find(&self, h: u64, is_key: impl Fn(usize) -> bool) -> Result<usize, usize> {
        let mut at = self.home(h);
        loop {
            let s = self.slots[at];
            if s == 0 {
                return Err(at);
            }
            let i = (s >> 32) as usize - 1;
            if s as u32 == h as u32 && is_key(i) {
                return Ok(i);
            }
            at = (at + 1) & self.mask;
        }
    }

    /// Stores flow `i` of hash `h` in the free slot `at` found by [`Index::find`].
    fn put(&mut self, at: usize, h: u64, i: usize) {
        self.slots[at] = ((i as u64 + 1) << 32) | (h as u32 as u64);
    }

    /// Room for `flows` flows at most half full: doubles and re-slots `hashes` when needed.
    fn reserve(&mut self, flows: usize, hashes: impl Iterator<Item = u64>) {
        if self.slots.len() >= 2 * flows.max(1) {
            return;
        }
        let len = (2 * flows).next_power_of_two().max(MIN_SLOTS);
        *self = Index { slots: vec![0; len], mask: len - 1 };
        for (i, h) in hashes.enumerate() {
            let mut at = self.home(h);
            while self.slots[at] != 0 {
                at = (at + 1) & self.mask;
            }
            self.put(at, h, i);
        }
    }
}

/// Accumulates packets into flows and counts what was not IP.
#[derive(Default)]
pub struct FlowTable {
    /// Every flow in order of first appearance, with its key's hash.
    flows: Vec<(FlowKey, u64, FlowAcc)>,
    index: Index,
    totals: Totals,
    malformed: BTreeMap<String, u64>,
}

impl FlowTable {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add_packet(&mut self, p: &Packet) {
        self.add_hashed(p, key_hash(&p.key));
    }

    /// [`FlowTable::add_packet`] of each packet in order, with the cache misses of later
    /// packets' look-ups overlapped (see [`AHEAD`]); the same table either way.
    pub fn add_packets(&mut self, packets: &[Packet]) {
        let mut hashes = [0u64; 4 * AHEAD];
        for (n, p) in packets.iter().enumerate().take(3 * AHEAD) {
            hashes[n] = key_hash(&p.key);
            self.index.prefetch(hashes[n]);
        }
        for (n, p) in packets.iter().enumerate() {
            if let Some(q) = packets.get(n + 3 * AHEAD) {
                let h = key_hash(&q.key);
                hashes[(n + 3 * AHEAD) % (4 * AHEAD)] = h;
                self.index.prefetch(h);
            }
            if n + 2 * AHEAD < packets.len() {
                if let Some(i) = self.index.hint(hashes[(n + 2 * AHEAD) % (4 * AHEAD)]) {
                    // An entry spans two cache lines.
                    prefetch(&self.flows[i]);
                    prefetch((&self.flows[i] as *const _ as *const u8).wrapping_add(64));
                }
            }
            if let Some(q) = packets.get(n + AHEAD) {
                prefetch(q.hops.as_ptr());
                if let Some(i) = self.index.hint(hashes[(n + AHEAD) % (4 * AHEAD)]) {
                    self.flows[i].2.prefetch_hops();
                }
            }
            self.add_hashed(p, hashes[n % (4 * AHEAD)]);
        }
    }

    /// Adds `p`, whose key hashes to `h`.
    #[inline(always)]
    fn add_hashed(&mut self, p: &Packet, h: u64) {
        let t = &mut self.totals;
        if t.packets == 0 {
            t.first_ns = p.ts_ns;
            t.last_ns = p.ts_ns;
        }
        t.first_ns = t.first_ns.min(p.ts_ns);
        t.last_ns = t.last_ns.max(p.ts_ns);
        t.packets += 1;
        t.bytes += p.wire_len as u64;
        t.delay_ns += p.delay_ns();
        let flows = &self.flows;
        let i = match self.index.find(h, |i| flows[i].0 == p.key) {
            Ok(i) => i,
            Err(_) => self.new_flow(p.key, h),
        };
        self.flows[i].2.add(p.ts_ns, p.wire_len, &p.hops);
    }

    /// Appends an empty flow for `key` (hash `h`) and indexes it; returns its index.
    #[cold]
    fn new_flow(&mut self, key: FlowKey, h: u64) -> usize {
        let i = self.flows.len();
        self.index.reserve(i + 1, self.flows.iter().map(|f| f.1));
        self.flows.push((key, h, FlowAcc::default()));
        let at = self.index.find(h, |_| false).expect_err("a new key is not in the index");
        self.index.put(at, h, i);
        i
    }

    pub fn add_non_ip(&mut self) {
        self.totals.non_ip += 1;
    }

    pub fn add_malformed(&mut self, e: &FrameError) {
        self.totals.malformed += 1;
        *self.malformed.entry(e.name().to_string()).or_default() += 1;
    }

    /// Counts the frames `reader` skipped (non-IP, malformed by reason), for a table fed
    /// with its packets only.
    pub fn add_skipped<R: Read>(&mut self, reader: &PacketReader<R>) {
        self.totals.non_ip += reader.counts().non_ip;
        for (reason, n) in reader.malformed_by_reason() {
            self.totals.malformed += n;
            *self.malformed.entry(reason.to_string()).or_default() += n;
        }
    }

    pub fn add(&mut self, c: &Classified) {
        match c {
            Classified::Packet(p) => self.add_packet(p),
            Classified::NonIp => self.add_non_ip(),
            Classified::Malformed(e) => self.add_malformed(e),
        }
    }

    /// Finishes: totals plus all flows, most packets first.
    pub fn finish(self) -> TraceStats {
        self.finish_keeping(Keep::All)
    }

    /// Finishes with records for the flows `keep` names only, most packets first; the
    /// totals still count every flow.
    ///
    /// Why: a record is a string and two maps per flow, and making, sorting and freeing
    /// them for 170K flows, after the last packet and for a listing of ten, was close to
    /// half of `trace stats` on a 5M-packet trace (0.55 against 0.30 s). The flows are
    /// ranked on their accumulators instead, and only the kept ones become records.
    pub fn finish_keeping(self, keep: Keep) -> TraceStats {
        let FlowTable { mut flows, index, mut totals, malformed } = self;
        drop(index);
        totals.flows = flows.len() as u64;
        totals.duration_ns = totals.last_ns - totals.first_ns;
        let ranked = |a: &(FlowKey, u64, FlowAcc), b: &(FlowKey, u64, FlowAcc)| {
            rank(a.2.packets, &a.0, b.2.packets, &b.0)
        };
        if let Keep::Top(n) = keep {
            if n < flows.len() {
                flows.select_nth_unstable_by(n, ranked);
                flows.truncate(n);
            }
        }
        flows.sort_unstable_by(ranked);
        TraceStats {
            totals,
            malformed_by_reason: malformed,
            // Each accumulator is freed as its record is made, so with every flow kept the
            // peak holds the records and not both.
            flows: flows.into_iter().map(|(k, _, a)| a.record(&k)).collect(),
        }
    }
}

/// Which flows a finished [`FlowTable`] makes records of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// Every flow.
    All,
    /// The largest `n` (by packets, ties by key bytes), as [`super::truth::sort_flows`] orders them.
    Top(usize),
}

/// The statistics of a whole trace.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceStats {
    pub totals: Totals,
    /// Malformed frames by reason (see `FrameError::name`).
    pub malformed_by_reason: BTreeMap<String, u64>,
    /// The kept flows ([`Keep`]; every flow unless told otherwise), most packets first
    /// (ties by key bytes).
    pub flows: Vec<FlowRecord>,
}

/// What `--json` prints: totals, malformed reasons, the top flows and optionally all.
#[derive(Serialize)]
pub struct StatsReport<'a> {
    pub totals: &'a Totals,
    pub malformed_by_reason: &'a BTreeMap<String, u64>,
    pub top: &'a [FlowRecord],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flows: Option<&'a [FlowRecord]>,
}

impl TraceStats {
    /// The report with the `top` largest flows, and every flow when `all`.
    pub fn report(&self, top: usize, all: bool) -> StatsReport<'_> {
        StatsReport {
            totals: &self.totals,
            malformed_by_reason: &self.malformed_by_reason,
            top: &self.flows[..top.min(self.flows.len())],
            flows: all.then_some(&self.flows[..]),
        }
    }
}

/// Reads `path` and computes its statistics, every flow's record included.
pub fn compute(path: &Path, format: Format) -> Result<TraceStats, TraceError> {
    compute_from(&mut PacketReader::open_as(path, format)?, Keep::All, |_| {})
}

/// The statistics of everything `reader` holds, parsed on a second thread while the flow
/// table fills, with records of the flows `keep` names; `progress` gets the packet count
/// after every batch.
pub fn compute_from<R: Read + Send>(
    reader: &mut PacketReader<R>,
    keep: Keep,
    mut progress: impl FnMut(u64),
) -> Result<TraceStats, TraceError> {
    let mut table = FlowTable::new();
    let mut n = 0u64;
    for_each_batch(reader, BATCH, |batch| {
        table.add_packets(batch);
        n += batch.len() as u64;
        progress(n);
        Ok::<_, TraceError>(())
    })?;
    table.add_skipped(reader);
    Ok(table.finish_keeping(keep))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::capture::CaptureReader;
    use crate::trace::gen::{generate, GenConfig, ShimConfig};
    use crate::trace::pcap::{PcapWriter, LINKTYPE_ETHERNET};

    /// A generated trace with INT stacks and ARP frames, and after every 50th frame a
    /// malformed one (an Ethernet header cut short, or an IPv4 EtherType with 3 bytes).
    fn mixed_trace() -> Vec<u8> {
        let cfg = GenConfig {
            packets: 3000,
            flows: 200,
            non_ip: 0.1,
            shim: Some(ShimConfig::default()),
            ..GenConfig::default()
        };
        let mut clean = Vec::new();
        generate(&cfg, &mut clean, None).unwrap();
        let mut r = CaptureReader::new(&clean[..]).unwrap();
        let mut w = PcapWriter::new(Vec::new(), 65535, LINKTYPE_ETHERNET).unwrap();
        let mut n = 0u64;
        while let Some(f) = r.next_frame().unwrap() {
            w.write(f.ts_ns, f.orig_len, f.data).unwrap();
            n += 1;
            if n.is_multiple_of(50) {
                let cut: &[u8] = if n.is_multiple_of(100) {
                    &[0; 10]
                } else {
                    &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0x45, 0, 0]
                };
                w.write(f.ts_ns, cut.len() as u32, cut).unwrap();
            }
        }
        w.into_inner().unwrap()
    }

    /// The open-addressed table (one by one, and batched with its look-ahead) holds what a
    /// plain map of accumulators holds, through several growths of its index (5000 flows).
    #[test]
    fn flow_table_equals_a_map_of_accumulators() {
        let mut stream = smartnic_contract::vectors::KeyStream::new(3);
        let keys: Vec<FlowKey> = (0..5000).map(|_| stream.next_key()).collect();
        let hop = |n: u64| smartnic_contract::shim::Hop { switch_id: (n % 9) as u16, latency_ns: n as u32 };
        let packets: Vec<Packet> = (0..40_000u64)
            .map(|n| Packet {
                ts_ns: n * 13 % 7919,
                wire_len: 64 + (n % 1400) as u32,
                key: keys[((n * n) % 5000) as usize],
                hops: (0..n % 4).map(|k| hop(n + k)).collect(),
            })
            .collect();
        let mut want: BTreeMap<FlowKey, FlowAcc> = BTreeMap::new();
        for p in &packets {
            want.entry(p.key).or_default().add(p.ts_ns, p.wire_len, &p.hops);
        }
        let mut one = FlowTable::new();
        packets.iter().for_each(|p| one.add_packet(p));
        let mut batched = FlowTable::new();
        packets.chunks(999).for_each(|b| batched.add_packets(b));
        for table in [one, batched] {
            let stats = table.finish();
            assert_eq!(stats.totals.flows, want.len() as u64);
            assert_eq!(stats.totals.packets, 40_000);
            let mut got = stats.flows.clone();
            got.sort_by(|a, b| a.key.cmp(&b.key));
            let mut exp: Vec<FlowRecord> = want.iter().map(|(k, a)| a.record(k)).collect();
            exp.sort_by(|a, b| a.key.cmp(&b.key));
            assert_eq!(got, exp);
        }
    }

    /// Keeping the top `n` gives the first `n` records of the full listing, ties at the cut
    /// included (many flows of one packet share a count, ranked by key), and the same totals.
    #[test]
    fn keeping_the_top_is_the_head_of_the_full_listing() {
        let bytes = mixed_trace();
        let table = || {
            let mut r = PacketReader::from_reader(&bytes[..], Format::Auto).unwrap();
            let mut t = FlowTable::new();
            while let Some(c) = r.next_classified().unwrap() {
                t.add(&c);
            }
            t
        };
        let all = table().finish();
        let ones = all.flows.iter().filter(|f| f.packets == all.flows.last().unwrap().packets).count();
        assert!(ones > 2, "ties at the tail: {ones}");
        let n = all.flows.len();
        for keep in [0, 1, 7, n - ones / 2, n, n + 3] {
            let top = table().finish_keeping(Keep::Top(keep));
            assert_eq!(top.totals, all.totals);
            assert_eq!(top.malformed_by_reason, all.malformed_by_reason);
            assert_eq!(top.flows[..], all.flows[..keep.min(n)], "keep {keep}");
        }
    }

    /// The pipelined statistics are those of the frame-by-frame table, malformed reasons
    /// and non-IP counts included.
    #[test]
    fn pipelined_stats_equal_frame_by_frame_stats() {
        let bytes = mixed_trace();
        let mut reader = PacketReader::from_reader(&bytes[..], Format::Auto).unwrap();
        let mut table = FlowTable::new();
        while let Some(c) = reader.next_classified().unwrap() {
            table.add(&c);
        }
        let want = table.finish();
        assert!(want.totals.non_ip > 100 && want.malformed_by_reason.len() == 2, "{:?}", want.totals);
        let mut reader = PacketReader::from_reader(&bytes[..], Format::Auto).unwrap();
        let got = compute_from(&mut reader, Keep::All, |_| {}).unwrap();
        assert_eq!(got, want);
    }
}
