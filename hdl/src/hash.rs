//! `hash`: the pipelined CRC-32 hash unit.
//!
//! Computes one member of the contract's CRC-32 family ([`CrcParams`]) over the 13-byte flow
//! key and reduces it to a table index, one key per clock, as a pure XOR tree.
//!
//! # Why an XOR tree
//!
//! For a fixed message length a CRC is affine over GF(2): `crc(k) = M·k ⊕ c` with
//! `c = crc(0…0)` and column `b` of `M` equal to `crc(e_b) ⊕ c` for the unit key `e_b`. The
//! columns are computed in Rust (in [`HashUnit::new`], outside `update`) from
//! [`CrcParams::checksum`] itself, so the circuit cannot disagree with the contract's
//! reference: every parameter set (poly, init, xor-out, reflection) is just another matrix.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock` | in | 1 | system clock |
//! | `reset` | in | 1 | synchronous, active high: clears the valid pipeline only |
//! | `key` | in | 104 | flow key, byte 0 (srcIP MSB) in bits 103:96, byte 12 (proto) in bits 7:0 |
//! | `key_valid` | in | 1 | `key` carries a key this cycle |
//! | `hash` | out | 32 | CRC-32 of the key `LATENCY` clocks after it entered |
//! | `index` | out | `K` | top `K` bits of `hash` = `hash::index(hash, 1 << K)` |
//! | `valid` | out | 1 | `hash`/`index` are valid (the `key_valid` of `LATENCY` clocks ago) |
//!
//! # Parameters
//!
//! - `params: CrcParams` (constructor): the family member; only constants change.
//! - `K` (const generic, `1..=32`): index width; the table depth is `2^K`.
//!
//! # Pipeline ([`LATENCY`] = 2, one key per clock, no stall)
//!
//! 1. **partial**: the 104 key bits are split into [`GROUPS`] groups of [`GROUP_BITS`]
//!    bits; each group's contribution `M_g·k_g` (32 bits) is registered. Per output bit
//!    this is an XOR of at most 26 inputs: two LUT6 levels.
//! 2. **fold**: `hash = c ⊕ part_0 ⊕ … ⊕ part_3`, registered; one LUT level.
//!
//! `index` is wiring from the stage-2 register. The key input is expected to come from a
//! register (it does, in the parser), so stage 1 begins at a flop.
use rust_hdl::prelude::*;
use smartnic_contract::hash::CrcParams;
use smartnic_contract::KEY_LEN;

/// Width of the `key` port.
pub const KEY_BITS: usize = KEY_LEN * 8;
/// Clocks from `key`/`key_valid` to `hash`/`index`/`valid`.
pub const LATENCY: usize = 2;
/// Number of stage-1 partial XOR groups (fixed: the fold below names them).
pub const GROUPS: usize = 4;
/// Key bits per stage-1 group.
pub const GROUP_BITS: usize = KEY_BITS / GROUPS;
const _: () = assert!(GROUP_BITS * GROUPS == KEY_BITS && GROUP_BITS == 26 && GROUPS == 4);

/// The affine map of a CRC over a key of fixed length: `crc(k) = offset ⊕ XOR of
/// column[b] for every set bit b of k` (bit numbering as the `key` port: the highest bit
/// is the MSB of byte 0). [`CrcMatrix::new`] is the 13-byte flow key of [`HashUnit`];
/// [`CrcMatrix::of_len`] any other length up to 16 bytes (the per-switch half's 15-byte
/// hop key), derived from the same [`CrcParams::checksum`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CrcMatrix {
    pub offset: u32,
    /// One column per key bit, bit 0 first.
    pub column: Vec<u32>,
}

/// Longest key a [`CrcMatrix`] takes: its rows are `u128` masks.
pub const MAX_MATRIX_KEY_LEN: usize = 16;

impl CrcMatrix {
    /// The matrix over the 13-byte flow key.
    pub fn new(params: &CrcParams) -> Self {
        Self::of_len(params, KEY_LEN)
    }

    /// The matrix over keys of `len` bytes (1..=[`MAX_MATRIX_KEY_LEN`]).
    pub fn of_len(params: &CrcParams, len: usize) -> Self {
        assert!((1..=MAX_MATRIX_KEY_LEN).contains(&len), "key length {len} must be 1..=16 bytes");
        let offset = params.checksum(&vec![0u8; len]);
        let column = (0..len * 8).map(|b| params.checksum(&unit_key(b, len)) ^ offset).collect();
        CrcMatrix { offset, column }
    }

    /// Software evaluation of the matrix (used to cross-check the derivation); `key` has
    /// the matrix's length.
    pub fn apply(&self, key: &[u8]) -> u32 {
        assert_eq!(key.len() * 8, self.column.len(), "key length of this matrix");
        let k = bytes_to_u128(key);
        (0..self.column.len()).filter(|&b| (k >> b) & 1 == 1).fold(self.offset, |acc, b| acc ^ self.column[b])
    }

    /// Mask of key bits that feed output bit `j` (row `j` of the matrix).
    pub fn row(&self, j: usize) -> u128 {
        (0..self.column.len()).filter(|&b| (self.column[b] >> j) & 1 == 1).fold(0u128, |m, b| m | 1 << b)
    }
}

/// The `len`-byte key with only port bit `b` set.
fn unit_key(b: usize, len: usize) -> Vec<u8> {
    let mut key = vec![0u8; len];
    key[len - 1 - b / 8] = 1 << (b % 8);
    key
}

/// Key bytes (at most 16) to a port value, byte 0 most significant.
pub fn bytes_to_u128(key: &[u8]) -> u128 {
    key.iter().fold(0u128, |acc, &b| acc << 8 | b as u128)
}

/// Key bytes to the `key` port value (byte 0 most significant).
pub fn key_to_u128(key: &[u8; KEY_LEN]) -> u128 {
    bytes_to_u128(key)
}

/// Key bytes to the `key` port value as rust-hdl bits.
pub fn key_to_bits(key: &[u8; KEY_LEN]) -> Bits<KEY_BITS> {
    let v = key_to_u128(key);
    let mut bits = Bits::<KEY_BITS>::default();
    bits.set_bits::<64>(0, (v as u64).to_bits());
    bits.set_bits::<{ KEY_BITS - 64 }>(64, ((v >> 64) as u64).to_bits());
    bits
}

/// Declares a pipelined CRC-32 unit (ports, pipeline and XOR tree as in the module docs)
/// over a key of `$len` bytes = `$kb` bits, split into [`GROUPS`] stage-1 groups of `$gb`
/// bits (`$last` = `$gb - 1`). One body for every key length: rust-hdl needs the group
/// width as a literal in the index arithmetic, so it is a macro argument, not a generic.
macro_rules! crc_unit {
    ($(#[$meta:meta])* $name:ident, $kb:ident, $len:ident, $gb:tt, $last:tt) => {
        $(#[$meta])*
        #[derive(LogicBlock)]
        pub struct $name<const K: usize> {
            pub clock: Signal<In, Clock>,
            pub reset: Signal<In, Bit>,
            pub key: Signal<In, Bits<$kb>>,
            pub key_valid: Signal<In, Bit>,
            pub hash: Signal<Out, Bits<32>>,
            pub index: Signal<Out, Bits<K>>,
            pub valid: Signal<Out, Bit>,
            // Stage 1: each key bit's term (its matrix column or zero), the per-group XOR
            // chains of the terms (local wires) and their registers.
            term: [Signal<Local, Bits<32>>; $kb],
            acc: [Signal<Local, Bits<32>>; $kb],
            part: [DFF<Bits<32>>; $crate::hash::GROUPS],
            part_valid: DFF<Bit>,
            // Stage 2: folded hash.
            hash_q: DFF<Bits<32>>,
            hash_valid: DFF<Bit>,
            // The matrix (computed from the CrcParams in `new`).
            column: [Constant<Bits<32>>; $kb],
            offset: Constant<Bits<32>>,
            index_shift: Constant<Bits<5>>,
        }

        impl<const K: usize> $name<K> {
            /// A hash unit for one family member.
            pub fn new(params: &smartnic_contract::hash::CrcParams) -> Self {
                const _: () = assert!($gb * $crate::hash::GROUPS == $kb && $last + 1 == $gb);
                assert!((1..=32).contains(&K), "index width K={K} must be 1..=32");
                let m = $crate::hash::CrcMatrix::of_len(params, $len);
                $name {
                    clock: Default::default(),
                    reset: Default::default(),
                    key: Default::default(),
                    key_valid: Default::default(),
                    hash: Default::default(),
                    index: Default::default(),
                    valid: Default::default(),
                    term: std::array::from_fn(|_| Default::default()),
                    acc: std::array::from_fn(|_| Default::default()),
                    part: Default::default(),
                    part_valid: Default::default(),
                    hash_q: Default::default(),
                    hash_valid: Default::default(),
                    column: std::array::from_fn(|b| Constant::new(m.column[b].to_bits())),
                    offset: Constant::new(m.offset.to_bits()),
                    index_shift: Constant::new((32 - K).to_bits()),
                }
            }
        }

        impl<const K: usize> Logic for $name<K> {
            #[hdl_gen]
            fn update(&mut self) {
                dff_setup!(self, clock, part_valid, hash_q, hash_valid);
                // Stage 1: group g XORs the matrix columns of its set key bits. Each bit
                // selects its own term and the chain only XORs terms: a chain of muxes
                // (`acc = bit ? acc ^ column : acc`) is the same logic, but Yosys then needs
                // one `opt` round over the whole design per link to see through it.
                for b in 0..$kb {
                    if self.key.val().get_bit(b) {
                        self.term[b].next = self.column[b].val();
                    } else {
                        self.term[b].next = 0.into();
                    }
                }
                for g in 0..GROUPS {
                    self.part[g].clock.next = self.clock.val();
                    self.acc[g * $gb].next = self.term[g * $gb].val();
                    for i in 1..$gb {
                        self.acc[g * $gb + i].next =
                            self.acc[g * $gb + i - 1].val() ^ self.term[g * $gb + i].val();
                    }
                    self.part[g].d.next = self.acc[g * $gb + $last].val();
                }
                self.part_valid.d.next = self.key_valid.val() & !self.reset.val();
                // Stage 2: fold the groups and the CRC of the all-zero key.
                self.hash_q.d.next = self.offset.val()
                    ^ self.part[0].q.val()
                    ^ self.part[1].q.val()
                    ^ self.part[2].q.val()
                    ^ self.part[3].q.val();
                self.hash_valid.d.next = self.part_valid.q.val() & !self.reset.val();
                // Outputs: the index is the top K bits (wiring).
                self.hash.next = self.hash_q.q.val();
                self.index.next = self.hash_q.q.val().get_bits::<K>(self.index_shift.val().index());
                self.valid.next = self.hash_valid.q.val();
            }
        }
    };
}
pub(crate) use crc_unit;

crc_unit!(
    /// The pipelined CRC-32 hash unit over the 13-byte flow key (see the module docs).
    HashUnit,
    KEY_BITS,
    KEY_LEN,
    26,
    25
);

#[cfg(test)]
mod tests {
    use super::*;
    use smartnic_contract::hash::FAMILY;
    use smartnic_contract::vectors::{parse_hash_vectors, KeyStream, HASH_FILE};

    #[test]
    fn matrix_reproduces_checksum_for_every_member() {
        let mut ks = KeyStream::new(7);
        for p in FAMILY {
            let m = CrcMatrix::new(&p);
            for _ in 0..2000 {
                let mut key = [0u8; KEY_LEN];
                for chunk in key.chunks_mut(8) {
                    let r = ks.next_u64().to_be_bytes();
                    chunk.copy_from_slice(&r[..chunk.len()]);
                }
                assert_eq!(m.apply(&key), p.checksum(&key));
            }
        }
    }

    #[test]
    fn matrix_handles_reflected_params() {
        let iscsi = CrcParams { poly: 0x1EDC_6F41, init: !0, xorout: !0, refin: true, refout: true };
        let m = CrcMatrix::new(&iscsi);
        let key = *b"0123456789abc";
        assert_eq!(m.apply(&key), iscsi.checksum(&key));
    }

    #[test]
    fn rows_cover_about_half_the_key() {
        let m = CrcMatrix::new(&FAMILY[0]);
        for j in 0..32 {
            let n = m.row(j).count_ones();
            assert!((20..=84).contains(&n), "output bit {j} depends on {n} key bits");
        }
    }

    /// rust-hdl's own simulation of `update`: vectors through the pipeline, checking latency,
    /// the valid bit and the index.
    #[test]
    fn rust_hdl_simulation_matches_vectors() {
        const K: usize = 16;
        let vectors = parse_hash_vectors(HASH_FILE);
        for (member, p) in FAMILY.iter().enumerate().take(2) {
            let mut uut = HashUnit::<K>::new(p);
            uut.connect_all();
            let mut sim = Simulation::new();
            sim.add_clock(5, |x: &mut Box<HashUnit<K>>| x.clock.next = !x.clock.val());
            let vecs = vectors.clone();
            sim.add_testbench(move |mut sim: Sim<HashUnit<K>>| {
                let mut x = sim.init()?;
                x.reset.next = true;
                wait_clock_cycles!(sim, clock, x, 2);
                x.reset.next = false;
                sim_assert!(sim, !x.valid.val(), x);
                let mut expected = std::collections::VecDeque::new();
                let mut seen = 0;
                for cycle in 0..vecs.len() + LATENCY + 2 {
                    let feed = vecs.get(cycle).filter(|_| cycle % 3 != 1);
                    x.key.next = feed.map(|v| key_to_bits(&v.0 .0)).unwrap_or_default();
                    x.key_valid.next = feed.is_some();
                    expected.push_back(feed.map(|v| v.1[member]));
                    wait_clock_cycle!(sim, clock, x);
                    // The testbench returns from a wait just after the edge: a key set
                    // before wait n is visible after wait n + LATENCY - 1.
                    if expected.len() == LATENCY {
                        let want = expected.pop_front().unwrap();
                        sim_assert_eq!(sim, x.valid.val(), want.is_some(), x);
                        if let Some(h) = want {
                            sim_assert_eq!(sim, x.hash.val(), h as u64, x);
                            sim_assert_eq!(sim, x.index.val(), (h >> (32 - K)) as u64, x);
                            seen += 1;
                        }
                    }
                }
                sim_assert!(sim, seen > vecs.len() / 2, x);
                sim.done(x)
            });
            sim.run(Box::new(uut), 100_000).unwrap();
        }
    }
}
