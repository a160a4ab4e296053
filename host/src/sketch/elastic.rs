//! ElasticSketch (Yang et al., SIGCOMM 2018), the accuracy baseline SketchINT compares
//! against: a heavy part of buckets that vote large flows in and out, and a light part that
//! is a Count-Min sketch of 8-bit counters for everything else.
//!
//! Parameters as the Elastic paper recommends for software: a quarter of the memory for the
//! heavy part, buckets of 7 entries plus a shared negative vote, eviction threshold
//! lambda = 8, one array of 8-bit counters in the light part. Software only (no hardware
//! model), used by `smartnic sketch eval`.

use super::cell::cm_step;
use super::hashing::HashBank;
use smartnic_contract::hash::{index, member};
use smartnic_contract::FlowKey;

/// Entries per heavy bucket.
pub const ENTRIES: usize = 7;
/// Eviction threshold: evict when negative votes / smallest positive vote >= LAMBDA.
pub const LAMBDA: u32 = 8;
/// Bytes of one heavy entry (13-byte key + 32-bit vote with the flag in its top bit).
const ENTRY_BYTES: u64 = 17;
const BUCKET_BYTES: u64 = ENTRY_BYTES * ENTRIES as u64 + 4;

#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    key: FlowKey,
    votes: u32,
    /// True if some packets of this flow went to the light part before it got the slot.
    flag: bool,
}

#[derive(Clone, Debug, Default)]
struct Bucket {
    entries: [Option<Entry>; ENTRIES],
    neg_votes: u32,
}

/// An ElasticSketch of a given total memory.
#[derive(Clone, Debug)]
pub struct Elastic {
    heavy: Vec<Bucket>,
    light: Vec<u8>,
    hashes: HashBank,
}

impl Elastic {
    pub fn new(total_bytes: u64) -> Self {
        let heavy_bytes = total_bytes / 4;
        let buckets = (heavy_bytes / BUCKET_BYTES).max(1);
        let light = (total_bytes - heavy_bytes).max(1);
        Elastic {
            heavy: vec![Bucket::default(); buckets as usize],
            light: vec![0; light as usize],
            hashes: HashBank::new(&[member(0), member(1)]),
        }
    }

    fn slots(&self, key: &FlowKey) -> (usize, usize) {
        let h = self.hashes.hash(key);
        (index(h[0], self.heavy.len() as u32) as usize, index(h[1], self.light.len() as u32) as usize)
    }

    fn light_add(&mut self, slot: usize, n: u32) {
        let c = self.light[slot] as u32;
        self.light[slot] = cm_step(c, 255, n as u64).unwrap_or(c) as u8;
    }

    pub fn insert(&mut self, key: &FlowKey) {
        let (b, l) = self.slots(key);
        let bucket = &mut self.heavy[b];
        if let Some(e) = bucket.entries.iter_mut().flatten().find(|e| e.key == *key) {
            e.votes += 1;
            return;
        }
        if let Some(slot) = bucket.entries.iter_mut().find(|e| e.is_none()) {
            *slot = Some(Entry { key: *key, votes: 1, flag: false });
            return;
        }
        bucket.neg_votes += 1;
        let (min_i, min_votes) = bucket
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| (i, e.map_or(0, |e| e.votes)))
            .min_by_key(|&(_, v)| v)
            .expect("buckets have entries");
        if bucket.neg_votes >= LAMBDA * min_votes {
            let evicted = bucket.entries[min_i].take().expect("full bucket");
            bucket.entries[min_i] = Some(Entry { key: *key, votes: 1, flag: true });
            bucket.neg_votes = 0;
            let (_, el) = self.slots(&evicted.key);
            self.light_add(el, evicted.votes);
        } else {
            self.light_add(l, 1);
        }
    }

    pub fn query(&self, key: &FlowKey) -> u64 {
        let (b, l) = self.slots(key);
        let light = self.light[l] as u64;
        match self.heavy[b].entries.iter().flatten().find(|e| e.key == *key) {
            Some(e) if e.flag => e.votes as u64 + light,
            Some(e) => e.votes as u64,
            None => light,
        }
    }

    /// Flows held in the heavy part with their estimates (heavy-hitter candidates).
    pub fn heavy_flows(&self) -> Vec<(FlowKey, u64)> {
        self.heavy
            .iter()
            .flat_map(|b| b.entries.iter().flatten())
            .map(|e| (e.key, self.query(&e.key)))
            .collect()
    }

    /// Flows held in the heavy part that never had a packet in the light part (flag unset):
    /// the flows linear counting on the light part cannot see.
    pub fn heavy_only_flows(&self) -> u64 {
        self.heavy.iter().flat_map(|b| b.entries.iter().flatten()).filter(|e| !e.flag).count() as u64
    }

    /// The light part's counters (for distribution and cardinality estimates).
    pub fn light_counters(&self) -> &[u8] {
        &self.light
    }

    /// Empties both parts (a new epoch).
    pub fn clear(&mut self) {
        self.heavy.fill(Bucket::default());
        self.light.fill(0);
    }

    pub fn memory_bytes(&self) -> u64 {
        self.heavy.len() as u64 * BUCKET_BYTES + self.light.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u32) -> FlowKey {
        let b = n.to_be_bytes();
        FlowKey::from_v4([10, b[1], b[2], b[3]], [10, 9, 9, 9], 1, 2, 17)
    }

    /// With room for every flow in the heavy part, every estimate is exact.
    #[test]
    fn exact_when_heavy_part_has_room() {
        let mut e = Elastic::new(1 << 20);
        for n in 0..50u32 {
            for _ in 0..=n {
                e.insert(&key(n));
            }
        }
        for n in 0..50u32 {
            assert_eq!(e.query(&key(n)), n as u64 + 1);
        }
        assert_eq!(e.heavy_flows().len(), 50);
        assert_eq!(e.heavy_only_flows(), 50);
    }

    /// One bucket, full of small flows: a large newcomer first goes to the light part, then
    /// votes the smallest flow out (negative votes >= LAMBDA x its votes), which moves that
    /// flow's count to the light part. Nothing is ever underestimated.
    #[test]
    fn eviction_by_negative_votes() {
        let mut e = Elastic::new(4 * BUCKET_BYTES + 64);
        assert_eq!(e.heavy.len(), 1);
        for n in 0..ENTRIES as u32 {
            e.insert(&key(n));
        }
        let big = key(1000);
        for _ in 0..LAMBDA - 1 {
            e.insert(&big);
        }
        assert!(!e.heavy_flows().iter().any(|(k, _)| *k == big), "not evicted yet");
        e.insert(&big);
        assert!(e.heavy_flows().iter().any(|(k, _)| *k == big), "evicted on the LAMBDA-th vote");
        assert_eq!(e.heavy_only_flows(), ENTRIES as u64 - 1, "the newcomer is flagged");
        assert!(e.query(&big) >= LAMBDA as u64);
        for n in 0..ENTRIES as u32 {
            assert!(e.query(&key(n)) >= 1);
        }
    }

    #[test]
    fn light_counters_saturate_at_255() {
        let mut e = Elastic::new(4 * BUCKET_BYTES + 1);
        for n in 0..ENTRIES as u32 {
            e.insert(&key(n));
        }
        for _ in 0..400 {
            e.insert(&key(5000));
            e.heavy[0].neg_votes = 0;
        }
        assert_eq!(e.light_counters().iter().copied().max(), Some(255));
    }
}
