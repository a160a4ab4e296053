//! `key_table`: SketchINT's flow-key table in hardware, bit-exact with
//! `host::sketch::key_table::KeyTable::offer` for any packet order at one packet per clock,
//! in two banks.
//!
//! A packet *offers* itself when its flow estimate is strictly above `threshold`; `est_inf`
//! (every counter overflowed) stands for the widest counter's marker, `2^32 - 1`, as
//! `Tower::query` returns it, so it is above every threshold but `2^32 - 1`. Its key is hashed once per
//! way ([`HashUnit`], the geometry's members); each way ([`KeyWay`]) reads the key's slot in
//! the packet's bank, forwards the writes still in flight (by bank and slot, as
//! `sketch::forward_track`), and at s2 the rule of the model decides: the key already in
//! either way, nothing; else the first way whose slot is empty takes the key with its path;
//! else a miss. Every offered packet writes both slots back (changed or not), so the last
//! three writes of a way are its in-flight state and back-to-back packets of one flow see
//! each other exactly as in sequential order.
//!
//! # Pipeline (a packet entering at cycle `t`)
//!
//! | cycle | what |
//! |---|---|
//! | `t` | `valid`, `key`, `estimate`/`est_inf`, `threshold`, `hops`, `path`, `bank` enter; the offer is decided |
//! | `t+2` | s0: both ways read the key's slot of the packet's bank |
//! | `t+4` | s2: the forwarded slots are compared with the key; the new slot values |
//! | `t+5` | wr: both slots written; `done` and the packet's outcome ([`LATENCY`] - 1 clocks after entry) |
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset of the valid pipeline (not the RAMs or miss counters) |
//! | `valid`, `key`, `bank` | in | 1, 104, 1 | a packet: its flow key (byte 0 in bits 103:96, as the hash unit) and bank |
//! | `estimate`, `est_inf` | in | 32, 1 | the flow tower's estimate right after the packet's insertion; `est_inf`: no estimate, every counter overflowed |
//! | `threshold` | in | 32 | the table threshold (a register); offer when `estimate > threshold` (`est_inf`: `2^32 - 1 > threshold`) |
//! | `hops`, `path` | in | 5, 256 | the INT stack's hop count and switch IDs, hop `j` in bits `16j+15:16j`; hops beyond 16 are dropped and path bits of absent hops ignored (the model keeps the first 16 hops) |
//! | `done` | out | 1 | a packet's outcome (one per `valid`, in order) |
//! | `offered`, `inserted`, `way`, `present`, `full` | out | 1 each | with `done`: offered; stored (in way `way`); already stored; every way taken (a miss) |
//! | `misses0`, `misses1` | out | 32 | misses of bank 0 and 1 since the bank's last clear (saturating) |
//! | `idle` | out | 1 | no packet in flight |
//! | `rd_bank`, `rd_way`, `rd_addr`, `rd_word` | in | 1, 1, `A`, 4 | readout: 32-bit word `rd_word` (0..=11) of slot `rd_addr` of way `rd_way` in bank `rd_bank` (which must hold no packet) |
//! | `rd_data` | out | 32 | that word, [`READ_LATENCY`] clocks later: slot bits `32 rd_word ..` in the contract's packing (`per_switch::slot`, LSB first, zero above bit 365; an empty slot reads as zeros) |
//! | `clr`, `clr_bank`, `clr_addr` | in | 1, 1, `A` | clear sweep: empty slot `clr_addr` of both ways of bank `clr_bank` (its valid bit), and zero that bank's miss counter |
//!
//! The table is always two banks (the snapshot stores one table per epoch bank) of two
//! ways (`KeyTableGeometry::with_capacity`); the depth is `2^A` slots per way.
use super::key_way::{KeyWay, SLOT_BITS};
use crate::hash::{self, HashUnit, KEY_BITS};
use crate::sketch::Sink;
use rust_hdl::prelude::*;
use smartnic_contract::per_switch::{slot, KeyTableGeometry};
use smartnic_contract::shim::MAX_HOPS;

/// Ways of the table.
pub const WAYS: usize = 2;
/// Width of the `path` port: [`MAX_HOPS`] switch IDs.
pub const PATH_BITS: usize = MAX_HOPS as usize * slot::SWITCH_WIDTH as usize;
/// Width of the `hops` port (the slot's hop-count field).
pub const HOPS_BITS: usize = slot::HOPS_WIDTH as usize;
/// 32-bit words of one slot on the readout port: the contract's table-window layout.
pub const SLOT_WORDS: usize = smartnic_contract::regs::per_switch::SLOT_WORDS as usize;
/// Clocks from a packet at the inputs to its slots' write (inclusive); `done` shows in
/// the last one.
pub const LATENCY: usize = hash::LATENCY + 4;
/// Clocks from `rd_*` to `rd_data`.
pub const READ_LATENCY: usize = 2;
/// Taps of the packet's delay lines: tap `j` holds what entered `j + 1` clocks ago; s0
/// reads tap 1, s2 tap 3.
const TAPS: usize = hash::LATENCY + 2;
const _: () = assert!(PATH_BITS == 256 && HOPS_BITS == 5 && SLOT_WORDS == 12 && TAPS == 4);

/// The flow-key table of two banks of two ways of `2^A` slots (see the module docs).
#[derive(LogicBlock)]
pub struct KeyTable<const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub valid: Signal<In, Bit>,
    pub key: Signal<In, Bits<KEY_BITS>>,
    pub estimate: Signal<In, Bits<32>>,
    pub est_inf: Signal<In, Bit>,
    pub threshold: Signal<In, Bits<32>>,
    pub hops: Signal<In, Bits<HOPS_BITS>>,
    pub path: Signal<In, Bits<PATH_BITS>>,
    pub bank: Signal<In, Bit>,
    pub done: Signal<Out, Bit>,
    pub offered: Signal<Out, Bit>,
    pub inserted: Signal<Out, Bit>,
    pub way: Signal<Out, Bit>,
    pub present: Signal<Out, Bit>,
    pub full: Signal<Out, Bit>,
    pub misses0: Signal<Out, Bits<32>>,
    pub misses1: Signal<Out, Bits<32>>,
    pub idle: Signal<Out, Bit>,
    pub rd_bank: Signal<In, Bit>,
    pub rd_way: Signal<In, Bit>,
    pub rd_addr: Signal<In, Bits<A>>,
    pub rd_word: Signal<In, Bits<4>>,
    pub rd_data: Signal<Out, Bits<32>>,
    pub clr: Signal<In, Bit>,
    pub clr_bank: Signal<In, Bit>,
    pub clr_addr: Signal<In, Bits<A>>,
    h0: HashUnit<A>,
    h1: HashUnit<A>,
    sinks: [Sink<32>; WAYS],
    way0: KeyWay<A>,
    way1: KeyWay<A>,
    pack: SlotPack,
    word: WordSel,
    // Delay lines of the packet (tap j: entered j + 1 clocks ago).
    v_d: [DFF<Bit>; TAPS],
    o_d: [DFF<Bit>; TAPS],
    b_d: [DFF<Bit>; TAPS],
    key_d: [DFF<Bits<KEY_BITS>>; TAPS],
    hops_d: [DFF<Bits<HOPS_BITS>>; TAPS],
    path_d: [DFF<Bits<PATH_BITS>>; TAPS],
    // The outcome at wr.
    done_q: DFF<Bit>,
    offered_q: DFF<Bit>,
    inserted_q: DFF<Bit>,
    way_q: DFF<Bit>,
    present_q: DFF<Bit>,
    full_q: DFF<Bit>,
    bank_q: DFF<Bit>,
    misses: [DFF<Bits<32>>; 2],
    // Readout: way and word one clock after the request, the word registered.
    ro_way: DFF<Bit>,
    ro_word: DFF<Bits<4>>,
    ro_data: DFF<Bits<32>>,
    offer: Signal<Local, Bit>,
    ro_valid: Signal<Local, Bit>,
    m0: Signal<Local, Bit>,
    m1: Signal<Local, Bit>,
    hit: Signal<Local, Bit>,
    ins0: Signal<Local, Bit>,
    ins1: Signal<Local, Bit>,
    bank_no: [Constant<Bit>; 2],
    one: Constant<Bits<32>>,
    sat: Constant<Bits<32>>,
}

/// The NIC's table (`KeyTableGeometry::nic_default`: 2 ways of 512 slots): block `key_table`.
pub type KeyTableNic = KeyTable<9>;

impl<const A: usize> KeyTable<A> {
    /// The table for `geometry`: exactly [`WAYS`] ways of `2^A` slots; the hashes are the
    /// geometry's.
    pub fn new(geometry: &KeyTableGeometry) -> Result<Self, String> {
        geometry.validate().map_err(|e| e.to_string())?;
        check_shape(geometry, A)?;
        Ok(KeyTable {
            clock: Default::default(),
            reset: Default::default(),
            valid: Default::default(),
            key: Default::default(),
            estimate: Default::default(),
            est_inf: Default::default(),
            threshold: Default::default(),
            hops: Default::default(),
            path: Default::default(),
            bank: Default::default(),
            done: Default::default(),
            offered: Default::default(),
            inserted: Default::default(),
            way: Default::default(),
            present: Default::default(),
            full: Default::default(),
            misses0: Default::default(),
            misses1: Default::default(),
            idle: Default::default(),
            rd_bank: Default::default(),
            rd_way: Default::default(),
            rd_addr: Default::default(),
            rd_word: Default::default(),
            rd_data: Default::default(),
            clr: Default::default(),
            clr_bank: Default::default(),
            clr_addr: Default::default(),
            h0: HashUnit::new(&geometry.ways[0]),
            h1: HashUnit::new(&geometry.ways[1]),
            sinks: Default::default(),
            way0: Default::default(),
            way1: Default::default(),
            pack: Default::default(),
            word: Default::default(),
            v_d: Default::default(),
            o_d: Default::default(),
            b_d: Default::default(),
            key_d: Default::default(),
            hops_d: Default::default(),
            path_d: Default::default(),
            done_q: Default::default(),
            offered_q: Default::default(),
            inserted_q: Default::default(),
            way_q: Default::default(),
            present_q: Default::default(),
            full_q: Default::default(),
            bank_q: Default::default(),
            misses: Default::default(),
            ro_way: Default::default(),
            ro_word: Default::default(),
            ro_data: Default::default(),
            offer: Default::default(),
            ro_valid: Default::default(),
            m0: Default::default(),
            m1: Default::default(),
            hit: Default::default(),
            ins0: Default::default(),
            ins1: Default::default(),
            bank_no: std::array::from_fn(|b| Constant::new(b == 1)),
            one: Constant::new(1u64.to_bits()),
            sat: Constant::new((u32::MAX as u64).to_bits()),
        })
    }
}

/// Checks that `geometry` has [`WAYS`] ways of exactly `2^a` slots; the error names both.
pub fn check_shape(geometry: &KeyTableGeometry, a: usize) -> Result<(), String> {
    if geometry.ways.len() != WAYS || geometry.depth as u64 != 1u64 << a {
        return Err(format!(
            "the table has {WAYS} ways of 2^{a} slots, the geometry {} ways of {} slots",
            geometry.ways.len(),
            geometry.depth
        ));
    }
    Ok(())
}

impl<const A: usize> Logic for KeyTable<A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, done_q, offered_q, inserted_q, way_q, present_q, full_q, bank_q, ro_way, ro_word,
            ro_data
        );
        // t: the offer (strictly above the threshold; all overflowed is the marker 2^32 - 1).
        self.offer.next = self.valid.val()
            & ((self.est_inf.val() & (self.threshold.val() != self.sat.val()))
                | (self.estimate.val() > self.threshold.val()));
        self.h0.clock.next = self.clock.val();
        self.h0.reset.next = self.reset.val();
        self.h0.key.next = self.key.val();
        self.h0.key_valid.next = self.offer.val();
        self.h1.clock.next = self.clock.val();
        self.h1.reset.next = self.reset.val();
        self.h1.key.next = self.key.val();
        self.h1.key_valid.next = self.offer.val();
        self.sinks[0].x.next = self.h0.hash.val();
        self.sinks[1].x.next = self.h1.hash.val();
        // Delay lines: the packet to s0 (bank) and s2 (key, hops, path, valid, offer).
        self.v_d[0].d.next = self.valid.val() & !self.reset.val();
        self.o_d[0].d.next = self.offer.val() & !self.reset.val();
        self.b_d[0].d.next = self.bank.val();
        self.key_d[0].d.next = self.key.val();
        self.hops_d[0].d.next = self.hops.val();
        self.path_d[0].d.next = self.path.val();
        for j in 0..TAPS {
            self.v_d[j].clock.next = self.clock.val();
            self.o_d[j].clock.next = self.clock.val();
            self.b_d[j].clock.next = self.clock.val();
            self.key_d[j].clock.next = self.clock.val();
            self.hops_d[j].clock.next = self.clock.val();
            self.path_d[j].clock.next = self.clock.val();
        }
        for j in 1..TAPS {
            self.v_d[j].d.next = self.v_d[j - 1].q.val() & !self.reset.val();
            self.o_d[j].d.next = self.o_d[j - 1].q.val() & !self.reset.val();
            self.b_d[j].d.next = self.b_d[j - 1].q.val();
            self.key_d[j].d.next = self.key_d[j - 1].q.val();
            self.hops_d[j].d.next = self.hops_d[j - 1].q.val();
            self.path_d[j].d.next = self.path_d[j - 1].q.val();
        }
        // s0: both ways read the key's slot in the packet's bank.
        self.way0.clock.next = self.clock.val();
        self.way0.reset.next = self.reset.val();
        self.way0.valid.next = self.h0.valid.val();
        self.way0.addr.next = self.h0.index.val();
        self.way0.bank.next = self.b_d[1].q.val();
        self.way1.clock.next = self.clock.val();
        self.way1.reset.next = self.reset.val();
        self.way1.valid.next = self.h1.valid.val();
        self.way1.addr.next = self.h1.index.val();
        self.way1.bank.next = self.b_d[1].q.val();
        // s2: the model's rule on the forwarded slots (key bits at 6 = `slot::KEY`, a literal
        // because rust-hdl reads indices from their text; `slot_pack_verilog` asserts it).
        self.pack.key.next = self.key_d[3].q.val();
        self.pack.hops.next = self.hops_d[3].q.val();
        self.pack.path.next = self.path_d[3].q.val();
        self.m0.next = self.way0.cur.val().get_bit(0)
            & (self.way0.cur.val().get_bits::<KEY_BITS>(6) == self.pack.slot.val().get_bits::<KEY_BITS>(6));
        self.m1.next = self.way1.cur.val().get_bit(0)
            & (self.way1.cur.val().get_bits::<KEY_BITS>(6) == self.pack.slot.val().get_bits::<KEY_BITS>(6));
        self.hit.next = self.m0.val() | self.m1.val();
        self.ins0.next = !self.hit.val() & !self.way0.cur.val().get_bit(0);
        self.ins1.next = !self.hit.val() & self.way0.cur.val().get_bit(0) & !self.way1.cur.val().get_bit(0);
        if self.ins0.val() {
            self.way0.wr_in.next = self.pack.slot.val();
        } else {
            self.way0.wr_in.next = self.way0.cur.val();
        }
        if self.ins1.val() {
            self.way1.wr_in.next = self.pack.slot.val();
        } else {
            self.way1.wr_in.next = self.way1.cur.val();
        }
        self.done_q.d.next = self.v_d[3].q.val() & !self.reset.val();
        self.offered_q.d.next = self.o_d[3].q.val();
        self.inserted_q.d.next = self.o_d[3].q.val() & (self.ins0.val() | self.ins1.val());
        self.way_q.d.next = self.o_d[3].q.val() & self.ins1.val();
        self.present_q.d.next = self.o_d[3].q.val() & self.hit.val();
        self.full_q.d.next = self.o_d[3].q.val()
            & !self.hit.val()
            & self.way0.cur.val().get_bit(0)
            & self.way1.cur.val().get_bit(0);
        self.bank_q.d.next = self.b_d[3].q.val();
        // wr: a miss counts in its bank; the clear sweep of a bank zeroes its counter.
        for b in 0..2 {
            self.misses[b].clock.next = self.clock.val();
            self.misses[b].d.next = self.misses[b].q.val();
            if self.done_q.q.val()
                & self.full_q.q.val()
                & (self.bank_q.q.val() == self.bank_no[b].val())
                & (self.misses[b].q.val() != self.sat.val())
            {
                self.misses[b].d.next = self.misses[b].q.val() + self.one.val();
            }
            if self.clr.val() & (self.clr_bank.val() == self.bank_no[b].val()) {
                self.misses[b].d.next = 0.into();
            }
        }
        // Readout and clear: both ways at the same slot; the way and word select after.
        self.way0.rd_bank.next = self.rd_bank.val();
        self.way0.rd_addr.next = self.rd_addr.val();
        self.way0.clr.next = self.clr.val();
        self.way0.clr_bank.next = self.clr_bank.val();
        self.way0.clr_addr.next = self.clr_addr.val();
        self.way1.rd_bank.next = self.rd_bank.val();
        self.way1.rd_addr.next = self.rd_addr.val();
        self.way1.clr.next = self.clr.val();
        self.way1.clr_bank.next = self.clr_bank.val();
        self.way1.clr_addr.next = self.clr_addr.val();
        self.ro_way.d.next = self.rd_way.val();
        self.ro_word.d.next = self.rd_word.val();
        if self.ro_way.q.val() {
            self.word.x.next = self.way1.rd_q.val();
            self.ro_valid.next = self.way1.rd_q.val().get_bit(0);
        } else {
            self.word.x.next = self.way0.rd_q.val();
            self.ro_valid.next = self.way0.rd_q.val().get_bit(0);
        }
        self.word.sel.next = self.ro_word.q.val();
        // An empty slot is all zeros in the packing (the clear wrote its valid bit only).
        if self.ro_valid.val() {
            self.ro_data.d.next = self.word.y.val();
        } else {
            self.ro_data.d.next = 0.into();
        }
        // Outputs.
        self.done.next = self.done_q.q.val();
        self.offered.next = self.offered_q.q.val();
        self.inserted.next = self.inserted_q.q.val();
        self.way.next = self.way_q.q.val();
        self.present.next = self.present_q.q.val();
        self.full.next = self.full_q.q.val();
        self.misses0.next = self.misses[0].q.val();
        self.misses1.next = self.misses[1].q.val();
        self.rd_data.next = self.ro_data.q.val();
        self.idle.next = !(self.valid.val()
            | self.v_d[0].q.val()
            | self.v_d[1].q.val()
            | self.v_d[2].q.val()
            | self.v_d[3].q.val()
            | self.done_q.q.val()
            | self.way0.busy.val()
            | self.way1.busy.val());
    }
}

/// The slot of a packet in the contract's packing ([`slot`]): valid, the hop count (at most
/// [`MAX_HOPS`]), the key bytes in order (byte 0 lowest, each LSB first: the reverse of the
/// `key` port's byte order) and the present hops' switch IDs (absent hops zero). Pure
/// wiring and a mask: custom Verilog, as rust-hdl has no concatenation in `update`.
#[derive(LogicBlock, Default)]
pub struct SlotPack {
    pub key: Signal<In, Bits<KEY_BITS>>,
    pub hops: Signal<In, Bits<HOPS_BITS>>,
    pub path: Signal<In, Bits<PATH_BITS>>,
    pub slot: Signal<Out, Bits<SLOT_BITS>>,
}

/// The slot packing in Rust ([`SlotPack`]'s simulation and the tests): `key` as the port
/// (byte 0 most significant), `path` hop 0 lowest; returns the slot's bits LSB first.
pub fn pack_slot(key: u128, hops: u32, path: &[u16; MAX_HOPS as usize]) -> Vec<bool> {
    let n = hops.min(MAX_HOPS as u32) as usize;
    let mut bits = vec![false; SLOT_BITS];
    bits[slot::VALID as usize] = true;
    for i in 0..HOPS_BITS {
        bits[slot::HOPS as usize + i] = (n >> i) & 1 == 1;
    }
    for j in 0..KEY_BITS / 8 {
        let byte = (key >> (KEY_BITS - 8 - 8 * j)) as u8;
        for i in 0..8 {
            bits[slot::KEY as usize + 8 * j + i] = (byte >> i) & 1 == 1;
        }
    }
    for (h, &s) in path.iter().enumerate().take(n) {
        for i in 0..slot::SWITCH_WIDTH as usize {
            bits[slot::PATH as usize + 16 * h + i] = (s >> i) & 1 == 1;
        }
    }
    bits
}

impl Logic for SlotPack {
    fn update(&mut self) {
        let key = self.key.val();
        let k = (key.get_bits::<64>(0).to_u64() as u128) | (key.get_bits::<40>(64).to_u64() as u128) << 64;
        let p = self.path.val();
        let path = std::array::from_fn(|h| p.get_bits::<16>(16 * h).to_u64() as u16);
        let bits = pack_slot(k, self.hops.val().to_u64() as u32, &path);
        let mut out = Bits::<SLOT_BITS>::default();
        for (i, &b) in bits.iter().enumerate() {
            out = out.replace_bit(i, b);
        }
        self.slot.next = out;
    }
    fn connect(&mut self) {
        self.slot.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(slot_pack_verilog())
    }
}

/// [`SlotPack`]'s Verilog, from the contract's field offsets.
fn slot_pack_verilog() -> String {
    const _: () = assert!(slot::VALID == 0 && slot::HOPS == 1 && slot::KEY == 6 && slot::PATH == 110);
    let w = slot::SWITCH_WIDTH as usize;
    let mut parts: Vec<String> = (0..MAX_HOPS as usize)
        .rev()
        .map(|h| format!("((n > 5'd{h}) ? path[{}:{}] : {w}'d0)", w * h + w - 1, w * h))
        .collect();
    parts.extend((0..KEY_BITS / 8).map(|b| format!("key[{}:{}]", 8 * b + 7, 8 * b)));
    parts.extend(["n".to_string(), "1'b1".to_string()]);
    format!(
        "wire [4:0] n = (hops > 5'd{m}) ? 5'd{m} : hops;\nalways @(*) slot = {{{}}};",
        parts.join(", "),
        m = MAX_HOPS
    )
}

/// Word `sel` (32 bits, LSB first, zero past the slot) of a slot: the readout's select.
#[derive(LogicBlock, Default)]
pub struct WordSel {
    pub x: Signal<In, Bits<SLOT_BITS>>,
    pub sel: Signal<In, Bits<4>>,
    pub y: Signal<Out, Bits<32>>,
}

impl Logic for WordSel {
    fn update(&mut self) {
        let s = self.sel.val().to_u64() as usize;
        let x = self.x.val();
        let mut y = 0u64;
        for i in 0..32 {
            let b = 32 * s + i;
            if b < SLOT_BITS && x.get_bit(b) {
                y |= 1 << i;
            }
        }
        self.y.next = y.to_bits();
    }
    fn connect(&mut self) {
        self.y.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "wire [511:0] xp = {{{}'d0, x}};\nalways @(*) y = xp[{{sel, 5'd0}} +: 32];",
            512 - SLOT_BITS
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nic_geometry_matches_the_generics() {
        assert!(KeyTableNic::new(&KeyTableGeometry::nic_default()).is_ok());
        let e = KeyTableNic::new(&KeyTableGeometry::with_capacity(512)).err().unwrap();
        assert!(e.contains("2^9 slots") && e.contains("256 slots"), "{e}");
        let mut g = KeyTableGeometry::nic_default();
        g.ways.pop();
        assert!(KeyTableNic::new(&g).err().unwrap().contains("geometry 1 ways"));
    }

    #[test]
    fn latency_and_slot_words() {
        assert_eq!((LATENCY, READ_LATENCY, SLOT_WORDS), (6, 2, 12));
        assert_eq!(SLOT_BITS as u64, slot::BITS);
    }

    /// The packing puts byte 0 of the key (the port's top byte) lowest and zeroes absent hops.
    #[test]
    fn pack_slot_follows_the_contract() {
        let key = 0xAB_u128 << 96 | 0x06;
        let mut path = [0xFFFF_u16; 16];
        path[0] = 0x1234;
        let bits = pack_slot(key, 1, &path);
        let field = |at: u64, w: usize| (0..w).fold(0u32, |v, i| v | (bits[at as usize + i] as u32) << i);
        assert_eq!((field(slot::VALID, 1), field(slot::HOPS, 5)), (1, 1));
        assert_eq!((field(slot::KEY, 8), field(slot::KEY + 96, 8)), (0xAB, 0x06));
        assert_eq!((field(slot::PATH, 16), field(slot::PATH + 16, 16)), (0x1234, 0));
        // 31 hops keep the first 16, as the model's path does.
        let long = pack_slot(key, 31, &path);
        let hops = (0..5).fold(0, |v, i| v | (long[slot::HOPS as usize + i] as u32) << i);
        assert_eq!(hops, 16);
        assert!(long[slot::PATH as usize + 16 * 15 + 15], "hop 15 stored");
        let v = slot_pack_verilog();
        assert!(
            v.contains("((n > 5'd15) ? path[255:240] : 16'd0)") && v.contains("key[103:96], n, 1'b1}"),
            "{v}"
        );
    }
}
