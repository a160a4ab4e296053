//! The flow-key table (SketchINT's "tiny hash table" of heavy flows): the keys and paths of
//! flows whose estimate reached the table threshold, `d` hashed ways, first come first
//! kept. Bit-exact specification of the NIC's table (rules in
//! [`smartnic_contract::per_switch`]); one table per epoch bank.

use super::hashing::HashBank;
use smartnic_contract::geometry::GeometryError;
use smartnic_contract::hash::index;
use smartnic_contract::packing::PackedBits;
use smartnic_contract::per_switch::{slot, KeyTableGeometry};
use smartnic_contract::shim::MAX_HOPS;
use smartnic_contract::{FlowKey, KEY_LEN};

/// A stored heavy flow: its key and the switch IDs of its path (at most [`MAX_HOPS`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Entry {
    pub key: FlowKey,
    pub path: Vec<u16>,
}

/// What [`KeyTable::offer`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// The key was already stored (its first path is kept).
    Present,
    /// Stored in this way.
    Inserted(usize),
    /// Every way's slot holds another key: counted as a miss, not stored.
    Full,
}

/// The table of one epoch bank.
#[derive(Clone, Debug)]
pub struct KeyTable {
    geometry: KeyTableGeometry,
    /// `ways[w][slot]`.
    ways: Vec<Vec<Option<Entry>>>,
    hashes: HashBank,
    misses: u64,
}

impl KeyTable {
    pub fn new(geometry: KeyTableGeometry) -> Result<Self, GeometryError> {
        geometry.validate()?;
        let n = geometry.ways.len();
        if n > super::hashing::MAX_MEMBERS {
            return Err(GeometryError::TooManyArrays { arrays: n, max: super::hashing::MAX_MEMBERS });
        }
        let ways = vec![vec![None; geometry.depth as usize]; n];
        Ok(KeyTable { hashes: HashBank::new(&geometry.ways), geometry, ways, misses: 0 })
    }

    pub fn geometry(&self) -> &KeyTableGeometry {
        &self.geometry
    }

    /// Slot of `key` in every way (entries `ways..` unused).
    #[inline]
    fn slots(&self, key: &FlowKey) -> [usize; super::hashing::MAX_MEMBERS] {
        let h = self.hashes.hash(key);
        h.map(|x| index(x, self.geometry.depth) as usize)
    }

    /// Offers a flow whose estimate reached the threshold (see [`Offer`]). A path longer
    /// than [`MAX_HOPS`] keeps its first hops (the NIC's parser refuses such stacks).
    pub fn offer(&mut self, key: &FlowKey, path: &[u16]) -> Offer {
        self.offer_with(key, || path.to_vec())
    }

    /// [`KeyTable::offer`] with the path built only when the key is stored: every packet of
    /// a heavy flow is offered, and all but the first find their key present, so the hot
    /// path allocates nothing.
    pub fn offer_with(&mut self, key: &FlowKey, path: impl FnOnce() -> Vec<u16>) -> Offer {
        let slots = self.slots(key);
        let mut free = None;
        for (w, way) in self.ways.iter().enumerate() {
            let s = slots[w];
            match &way[s] {
                Some(e) if e.key == *key => return Offer::Present,
                None if free.is_none() => free = Some((w, s)),
                _ => {}
            }
        }
        let Some((w, s)) = free else {
            self.misses += 1;
            return Offer::Full;
        };
        let mut path = path();
        path.truncate(MAX_HOPS as usize);
        self.ways[w][s] = Some(Entry { key: *key, path });
        Offer::Inserted(w)
    }

    /// Is `key` stored?
    pub fn contains(&self, key: &FlowKey) -> bool {
        let slots = self.slots(key);
        self.ways.iter().zip(slots).any(|(way, s)| way[s].as_ref().is_some_and(|e| e.key == *key))
    }

    /// Every stored entry, way by way, slot by slot.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.ways.iter().flatten().flatten()
    }

    /// Offers refused because every way was taken.
    pub fn misses(&self) -> u64 {
        self.misses
    }

    /// Empties the table (a new epoch).
    pub fn clear(&mut self) {
        self.ways.iter_mut().for_each(|w| w.iter_mut().for_each(|s| *s = None));
        self.misses = 0;
    }

    /// Packed bytes of one way (the snapshot layout: slots in order, [`slot`] bits each).
    pub fn way_bytes(&self, way: usize) -> Vec<u8> {
        let mut bits = PackedBits::new(slot::BITS * self.geometry.depth as u64);
        for (i, e) in self.ways[way].iter().enumerate() {
            if let Some(e) = e {
                pack_slot(&mut bits, i as u64 * slot::BITS, e);
            }
        }
        bits.to_bytes()
    }

    /// Replaces one way from packed bytes. Errors name the fault: too short, or a slot
    /// whose hop count is above [`MAX_HOPS`].
    pub fn load_way(&mut self, way: usize, raw: &[u8]) -> Result<(), String> {
        let depth = self.geometry.depth as u64;
        let bits = PackedBits::from_bytes(raw, slot::BITS * depth).ok_or_else(|| {
            format!("key table way {way}: {} bytes, need {}", raw.len(), (slot::BITS * depth).div_ceil(8))
        })?;
        for i in 0..depth {
            self.ways[way][i as usize] = unpack_slot(&bits, i * slot::BITS)
                .map_err(|h| format!("key table way {way} slot {i}: {h} hops"))?;
        }
        Ok(())
    }

    /// Sets the miss count (read back from a snapshot).
    pub fn set_misses(&mut self, misses: u64) {
        self.misses = misses;
    }
}

fn pack_slot(bits: &mut PackedBits, at: u64, e: &Entry) {
    bits.set(at + slot::VALID, 1, 1);
    bits.set(at + slot::HOPS, slot::HOPS_WIDTH, e.path.len() as u32);
    for (j, &b) in e.key.as_bytes().iter().enumerate() {
        bits.set(at + slot::KEY + 8 * j as u64, 8, b as u32);
    }
    for (h, &s) in e.path.iter().enumerate() {
        bits.set(at + slot::PATH + slot::SWITCH_WIDTH as u64 * h as u64, slot::SWITCH_WIDTH, s as u32);
    }
}

/// The entry of a slot (`None` when not valid); `Err(hops)` for an impossible hop count.
fn unpack_slot(bits: &PackedBits, at: u64) -> Result<Option<Entry>, u32> {
    if bits.get(at + slot::VALID, 1) == 0 {
        return Ok(None);
    }
    let hops = bits.get(at + slot::HOPS, slot::HOPS_WIDTH);
    if hops > MAX_HOPS as u32 {
        return Err(hops);
    }
    let mut key = [0u8; KEY_LEN];
    for (j, b) in key.iter_mut().enumerate() {
        *b = bits.get(at + slot::KEY + 8 * j as u64, 8) as u8;
    }
    let path = (0..hops as u64)
        .map(|h| bits.get(at + slot::PATH + slot::SWITCH_WIDTH as u64 * h, slot::SWITCH_WIDTH) as u16)
        .collect();
    Ok(Some(Entry { key: FlowKey(key), path }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(n: u32) -> FlowKey {
        FlowKey::from_v4([10, 0, (n >> 8) as u8, n as u8], [10, 0, 1, 1], 1000, 80, 6)
    }

    #[test]
    fn first_offer_inserts_then_present_then_full() {
        let mut t =
            KeyTable::new(KeyTableGeometry { ways: KeyTableGeometry::nic_default().ways, depth: 1 }).unwrap();
        assert_eq!(t.offer(&flow(1), &[1, 2, 3]), Offer::Inserted(0));
        assert_eq!(t.offer(&flow(1), &[9]), Offer::Present);
        assert_eq!(t.offer(&flow(2), &[4]), Offer::Inserted(1));
        assert_eq!(t.offer(&flow(3), &[5]), Offer::Full);
        assert_eq!(t.misses(), 1);
        assert!(t.contains(&flow(2)) && !t.contains(&flow(3)));
        let e: Vec<_> = t.entries().cloned().collect();
        assert_eq!(e[0], Entry { key: flow(1), path: vec![1, 2, 3] }, "the first path is kept");
    }

    #[test]
    fn ways_round_trip_through_bytes() {
        let mut t = KeyTable::new(KeyTableGeometry::with_capacity(64)).unwrap();
        for n in 0..40 {
            t.offer(&flow(n), &(0..(n % 17) as u16).collect::<Vec<_>>());
        }
        let mut u = KeyTable::new(KeyTableGeometry::with_capacity(64)).unwrap();
        for w in 0..2 {
            u.load_way(w, &t.way_bytes(w)).unwrap();
        }
        assert_eq!(u.entries().collect::<Vec<_>>(), t.entries().collect::<Vec<_>>());
        let mut raw = t.way_bytes(0);
        let e = u.load_way(0, &raw[1..]).unwrap_err();
        assert!(e.contains("way 0") && e.contains("need"), "{e}");
        // A valid slot 0 claiming 31 hops.
        raw[0] |= 0x3F;
        assert!(u.load_way(0, &raw).unwrap_err().contains("slot 0: 31 hops"));
    }
}
