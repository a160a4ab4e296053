//! `HopHashUnit<K>` and `HopFront<A0, A1, A2>`: the CRC-32 hash unit over the 15-byte hop
//! key (`per_switch::switch_key`: switch ID ++ flow key) and the staggered three-array
//! front of the latency tower.
//!
//! The unit is [`crate::hash::HashUnit`] for a 120-bit key, declared by the same
//! `crc_unit!` body: the affine map derived by [`crate::hash::CrcMatrix::of_len`] from the
//! contract's `CrcParams::checksum` over 15 bytes, as an XOR tree of four registered 30-bit
//! groups (at most 30 inputs an output bit: two LUT6 levels) folded in a second stage.
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset of the valid pipeline |
//! | `key`, `key_valid` | in | 120, 1 | hop key, byte 0 (switch ID MSB) in bits 119:112 |
//! | `hash`, `index`, `valid` | out | 32, `K`, 1 | as the `hash` block, [`LATENCY`] clocks later |
//!
//! The front (`HopFront`) puts three units on the same key and delays array `i`'s index by
//! `i` clocks, exactly as `sketch::hash_front::HashFront` does for the flow key:
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset of the valid bits |
//! | `key`, `key_valid` | in | 120, 1 | hop key |
//! | `valid{i}`, `index{i}` | out | 1, `Ai` | array `i`'s hop, `2 + i` clocks after the key |
//! | `busy` | out | 1 | a key is in the front |
use crate::hash::{bytes_to_u128, GROUPS};
use crate::sketch::Sink;
use rust_hdl::prelude::*;
use smartnic_contract::hash::CrcParams;
use smartnic_contract::per_switch::SWITCH_KEY_LEN;

/// Width of the hop key port.
pub const HOP_KEY_BITS: usize = SWITCH_KEY_LEN * 8;
/// Clocks from `key` to `hash`/`index`/`valid` (as the flow-key unit).
pub const LATENCY: usize = crate::hash::LATENCY;
/// Key bits per stage-1 group.
pub const GROUP_BITS: usize = HOP_KEY_BITS / GROUPS;
const _: () = assert!(GROUP_BITS * GROUPS == HOP_KEY_BITS && GROUP_BITS == 30);

/// Hop key bytes to the `key` port value (byte 0 most significant).
pub fn hop_key_to_u128(key: &[u8; SWITCH_KEY_LEN]) -> u128 {
    bytes_to_u128(key)
}

crate::hash::crc_unit!(
    /// The pipelined CRC-32 unit over the hop key (see the module docs).
    HopHashUnit,
    HOP_KEY_BITS,
    SWITCH_KEY_LEN,
    30,
    29
);

/// Three hop hash units with staggered outputs (see the module docs).
#[derive(LogicBlock)]
pub struct HopFront<const A0: usize, const A1: usize, const A2: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub key: Signal<In, Bits<HOP_KEY_BITS>>,
    pub key_valid: Signal<In, Bit>,
    pub valid0: Signal<Out, Bit>,
    pub index0: Signal<Out, Bits<A0>>,
    pub valid1: Signal<Out, Bit>,
    pub index1: Signal<Out, Bits<A1>>,
    pub valid2: Signal<Out, Bit>,
    pub index2: Signal<Out, Bits<A2>>,
    pub busy: Signal<Out, Bit>,
    h0: HopHashUnit<A0>,
    h1: HopHashUnit<A1>,
    h2: HopHashUnit<A2>,
    sinks: [Sink<32>; 3],
    k1_valid: DFF<Bit>,
    i1_addr: DFF<Bits<A1>>,
    i1_valid: DFF<Bit>,
    i2_addr: [DFF<Bits<A2>>; 2],
    i2_valid: [DFF<Bit>; 2],
}

impl<const A0: usize, const A1: usize, const A2: usize> HopFront<A0, A1, A2> {
    /// Array `i` hashes with `params[i]`.
    pub fn new(params: [&CrcParams; 3]) -> Self {
        HopFront {
            clock: Default::default(),
            reset: Default::default(),
            key: Default::default(),
            key_valid: Default::default(),
            valid0: Default::default(),
            index0: Default::default(),
            valid1: Default::default(),
            index1: Default::default(),
            valid2: Default::default(),
            index2: Default::default(),
            busy: Default::default(),
            h0: HopHashUnit::new(params[0]),
            h1: HopHashUnit::new(params[1]),
            h2: HopHashUnit::new(params[2]),
            sinks: Default::default(),
            k1_valid: Default::default(),
            i1_addr: Default::default(),
            i1_valid: Default::default(),
            i2_addr: Default::default(),
            i2_valid: Default::default(),
        }
    }
}

impl<const A0: usize, const A1: usize, const A2: usize> Logic for HopFront<A0, A1, A2> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, k1_valid, i1_addr, i1_valid);
        self.h0.clock.next = self.clock.val();
        self.h0.reset.next = self.reset.val();
        self.h0.key.next = self.key.val();
        self.h0.key_valid.next = self.key_valid.val();
        self.h1.clock.next = self.clock.val();
        self.h1.reset.next = self.reset.val();
        self.h1.key.next = self.key.val();
        self.h1.key_valid.next = self.key_valid.val();
        self.h2.clock.next = self.clock.val();
        self.h2.reset.next = self.reset.val();
        self.h2.key.next = self.key.val();
        self.h2.key_valid.next = self.key_valid.val();
        self.sinks[0].x.next = self.h0.hash.val();
        self.sinks[1].x.next = self.h1.hash.val();
        self.sinks[2].x.next = self.h2.hash.val();
        self.k1_valid.d.next = self.key_valid.val() & !self.reset.val();
        self.i1_addr.d.next = self.h1.index.val();
        self.i1_valid.d.next = self.h1.valid.val() & !self.reset.val();
        self.i2_addr[0].clock.next = self.clock.val();
        self.i2_valid[0].clock.next = self.clock.val();
        self.i2_addr[1].clock.next = self.clock.val();
        self.i2_valid[1].clock.next = self.clock.val();
        self.i2_addr[0].d.next = self.h2.index.val();
        self.i2_valid[0].d.next = self.h2.valid.val() & !self.reset.val();
        self.i2_addr[1].d.next = self.i2_addr[0].q.val();
        self.i2_valid[1].d.next = self.i2_valid[0].q.val() & !self.reset.val();
        self.valid0.next = self.h0.valid.val();
        self.index0.next = self.h0.index.val();
        self.valid1.next = self.i1_valid.q.val();
        self.index1.next = self.i1_addr.q.val();
        self.valid2.next = self.i2_valid[1].q.val();
        self.index2.next = self.i2_addr[1].q.val();
        self.busy.next = self.key_valid.val()
            | self.k1_valid.q.val()
            | self.h0.valid.val()
            | self.i1_valid.q.val()
            | self.i2_valid[0].q.val()
            | self.i2_valid[1].q.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::CrcMatrix;
    use smartnic_contract::hash::FAMILY;
    use smartnic_contract::per_switch::switch_key;
    use smartnic_contract::vectors::KeyStream;

    /// The 15-byte matrix is the contract's checksum for every family member.
    #[test]
    fn hop_matrix_reproduces_checksum() {
        let mut ks = KeyStream::new(15);
        for p in FAMILY {
            let m = CrcMatrix::of_len(&p, SWITCH_KEY_LEN);
            for n in 0..500u16 {
                let key = switch_key(n.wrapping_mul(977), &ks.next_key());
                assert_eq!(m.apply(&key), p.checksum(&key));
            }
        }
    }

    /// rust-hdl's own simulation: hop keys through the unit, latency and index checked.
    #[test]
    fn rust_hdl_simulation_matches_checksum() {
        const K: usize = 14;
        let p = FAMILY[1];
        let mut ks = KeyStream::new(3);
        let keys: Vec<[u8; SWITCH_KEY_LEN]> =
            (0..64u16).map(|n| switch_key(n * 31, &ks.next_key())).collect();
        let mut uut = HopHashUnit::<K>::new(&p);
        uut.connect_all();
        let mut sim = Simulation::new();
        sim.add_clock(5, |x: &mut Box<HopHashUnit<K>>| x.clock.next = !x.clock.val());
        sim.add_testbench(move |mut sim: Sim<HopHashUnit<K>>| {
            let mut x = sim.init()?;
            x.reset.next = true;
            wait_clock_cycles!(sim, clock, x, 2);
            x.reset.next = false;
            let mut expected = std::collections::VecDeque::new();
            for cycle in 0..keys.len() + LATENCY {
                let feed = keys.get(cycle);
                let v = feed.map(hop_key_to_u128).unwrap_or(0);
                let mut bits = Bits::<HOP_KEY_BITS>::default();
                bits.set_bits::<64>(0, (v as u64).to_bits());
                bits.set_bits::<{ HOP_KEY_BITS - 64 }>(64, ((v >> 64) as u64).to_bits());
                x.key.next = bits;
                x.key_valid.next = feed.is_some();
                expected.push_back(feed.map(|k| p.checksum(k)));
                wait_clock_cycle!(sim, clock, x);
                if expected.len() == LATENCY {
                    let want = expected.pop_front().unwrap();
                    sim_assert_eq!(sim, x.valid.val(), want.is_some(), x);
                    if let Some(h) = want {
                        sim_assert_eq!(sim, x.hash.val(), h as u64, x);
                        sim_assert_eq!(sim, x.index.val(), (h >> (32 - K)) as u64, x);
                    }
                }
            }
            sim.done(x)
        });
        sim.run(Box::new(uut), 100_000).unwrap();
    }
}
