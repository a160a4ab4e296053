//! `HashFront<A0, A1, A2>`: the front of every three-array sketch pipeline (TowerSketch and
//! SuMax, one bank or two): three [`HashUnit`]s on the same key, array `i`'s index delayed
//! `i` clocks so the arrays run staggered by one clock and a running minimum can travel
//! from array 0 to array 2 through one register per array.
//!
//! | cycle | what |
//! |---|---|
//! | 0 | `key`, `key_valid` enter the three hash units |
//! | 2 | `valid0`, `index0` (hash member 0) |
//! | 3 | `valid1`, `index1` (member 1, one delay register) |
//! | 4 | `valid2`, `index2` (member 2, two delay registers) |
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset of the valid bits |
//! | `key`, `key_valid` | in | 104, 1 | flow key (as the `hash` block) |
//! | `valid{i}`, `index{i}` | out | 1, `Ai` | array `i`'s packet, `2 + i` clocks after the key |
//! | `busy` | out | 1 | a key is in the front (cycle 0 to the last array's start) |
use super::Sink;
use crate::hash::{self, HashUnit, KEY_BITS};
use rust_hdl::prelude::*;
use smartnic_contract::hash::CrcParams;

/// Clocks from `key` to `valid0`/`index0`; array `i` starts `i` clocks later.
pub const LATENCY: usize = hash::LATENCY;

/// Three hash units with staggered outputs (see the module docs).
#[derive(LogicBlock)]
pub struct HashFront<const A0: usize, const A1: usize, const A2: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub key: Signal<In, Bits<KEY_BITS>>,
    pub key_valid: Signal<In, Bit>,
    pub valid0: Signal<Out, Bit>,
    pub index0: Signal<Out, Bits<A0>>,
    pub valid1: Signal<Out, Bit>,
    pub index1: Signal<Out, Bits<A1>>,
    pub valid2: Signal<Out, Bit>,
    pub index2: Signal<Out, Bits<A2>>,
    pub busy: Signal<Out, Bit>,
    h0: HashUnit<A0>,
    h1: HashUnit<A1>,
    h2: HashUnit<A2>,
    // The units' full CRC outputs: the pipelines use the index only.
    sinks: [Sink<32>; 3],
    k1_valid: DFF<Bit>,
    i1_addr: DFF<Bits<A1>>,
    i1_valid: DFF<Bit>,
    i2_addr: [DFF<Bits<A2>>; 2],
    i2_valid: [DFF<Bit>; 2],
}

impl<const A0: usize, const A1: usize, const A2: usize> HashFront<A0, A1, A2> {
    /// Array `i` hashes with `params[i]`.
    pub fn new(params: [&CrcParams; 3]) -> Self {
        HashFront {
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
            h0: HashUnit::new(params[0]),
            h1: HashUnit::new(params[1]),
            h2: HashUnit::new(params[2]),
            sinks: Default::default(),
            k1_valid: Default::default(),
            i1_addr: Default::default(),
            i1_valid: Default::default(),
            i2_addr: Default::default(),
            i2_valid: Default::default(),
        }
    }
}

impl<const A0: usize, const A1: usize, const A2: usize> Logic for HashFront<A0, A1, A2> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, k1_valid, i1_addr, i1_valid);
        // Hash units: all three see the same key.
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
        // Index delay lines (and the valid bit of hash stage 1, for `busy`).
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
        // Outputs.
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
