//! Fast evaluation of several family CRCs of a fixed-length key at once: the 13-byte flow
//! key of the flow sketches, the 15-byte hop key of the latency tower.
//!
//! For a fixed message length a CRC is affine over GF(2): `crc(k) = c0 ^ XOR_p T_p[k_p]`,
//! where `c0` is the CRC of the all-zero key and `T_p[x]` the contribution of value `x` in
//! key byte `p`. Precomputing `T` for all `d` members turns `d` sequential table CRCs (a
//! 13-step dependency chain each) into 13 independent loads of `d` words, which is what
//! lets one core insert tens of millions of packets per second.
//!
//! A row holds the contribution of one byte value to every member: 16 bytes for banks of
//! up to four members (53 KiB of rows for a flow key), 32 bytes beyond (104 KiB), so a row
//! is one vector XOR either way. Bytes, not nibbles: the nibble tables (13 KiB) fitted L1
//! beside the counters and once measured 10 % faster, but with the counter kernels now
//! shorter, half the loads and XORs weigh more (2 MiB towers on one core: d=5 TowerCM 81
//! to 98 Mpps, d=3 CU 89 to 111). And a bank of three members on 8-lane rows compiled to
//! scalar XORs, where the 4-lane rows are one vector each. The tables are derived from the
//! contract's bitwise reference, and tests check them against the `crc` crate.
//!
//! Where the CPU multiplies carry-less in AVX-512 lanes, a bank skips the rows for keys of
//! 9 to 16 bytes ([`clmul`]: three multiplications a key for up to four members, six for
//! up to eight, and no loads). The batch kernels then take their carry-less build
//! ([`KernelBuild`]).

use smartnic_contract::hash::CrcParams;
use smartnic_contract::{FlowKey, KEY_LEN};

mod clmul;

/// The compiled builds of the batch kernels ([`HashBank::kernel_build`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelBuild {
    /// AVX2, BMI2, AVX-512 (F, BW) and VPCLMULQDQ: carry-less hashing inlined.
    CarryLess,
    /// AVX2 and BMI2, hashing by table rows.
    Avx2,
    /// The baseline of the target.
    Portable,
}

/// Most members one bank evaluates.
pub const MAX_MEMBERS: usize = 8;

/// The lanes of one table row.
trait Lanes: Copy + Default + std::fmt::Debug {
    const N: usize;
    fn lanes(&self) -> &[u32];
    fn lanes_mut(&mut self) -> &mut [u32];
}

/// A row of a bank of up to four members, 16-byte aligned (one vector).
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(16))]
struct Narrow([u32; 4]);

/// A row of a bank of five to eight members, 32-byte aligned (one AVX2 vector).
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(32))]
struct Wide([u32; MAX_MEMBERS]);

impl Lanes for Narrow {
    const N: usize = 4;
    #[inline(always)]
    fn lanes(&self) -> &[u32] {
        &self.0
    }
    fn lanes_mut(&mut self) -> &mut [u32] {
        &mut self.0
    }
}

impl Lanes for Wide {
    const N: usize = MAX_MEMBERS;
    #[inline(always)]
    fn lanes(&self) -> &[u32] {
        &self.0
    }
    fn lanes_mut(&mut self) -> &mut [u32] {
        &mut self.0
    }
}

/// Rows indexed `[byte position][byte value]`. Fixed-size arrays, so the hot path has no
/// length to check.
type Table<R, const L: usize> = Box<[[R; 256]; L]>;

/// The rows of a bank, as wide as its members need.
#[derive(Clone, Debug)]
enum Rows<const L: usize> {
    Narrow(Table<Narrow, L>),
    Wide(Table<Wide, L>),
}

/// The CRCs of up to [`MAX_MEMBERS`] family members over `L`-byte keys (flow keys unless
/// told otherwise).
#[derive(Clone, Debug)]
pub struct HashBank<const L: usize = KEY_LEN> {
    d: usize,
    rows: Rows<L>,
    /// The CRCs of the all-zero key (entries `d..` zero).
    zero: [u32; MAX_MEMBERS],
    params: Vec<CrcParams>,
    /// The carry-less path, where the CPU has it.
    #[cfg(target_arch = "x86_64")]
    lanes: Option<clmul::Lanes>,
}

impl HashBank<KEY_LEN> {
    /// The CRCs of `key`: entry `m` for member `m` (entries `d..` are zero).
    #[inline(always)]
    pub fn hash(&self, key: &FlowKey) -> [u32; MAX_MEMBERS] {
        self.hash_bytes(key.as_bytes())
    }

    /// The first `N` entries of [`HashBank::hash`] (`N` at most 4, for kernels of a
    /// constant member count up to four): no widening to [`MAX_MEMBERS`] lanes.
    #[inline(always)]
    pub fn hash_narrow<const N: usize>(&self, key: &FlowKey) -> [u32; N] {
        debug_assert!(N <= Narrow::N);
        if let Some(lin) = self.linear4(key.as_bytes()) {
            return std::array::from_fn(|i| self.zero[i] ^ lin[i]);
        }
        let Rows::Narrow(t) = &self.rows else {
            let h = self.hash(key);
            return std::array::from_fn(|i| h[i]);
        };
        xor_rows(std::array::from_fn(|i| self.zero[i]), &t[..], key.as_bytes())
    }

    /// Writes the `d` CRCs of `key` into `out[..d]`.
    #[inline]
    pub fn hash_into(&self, key: &FlowKey, out: &mut [u32]) {
        out[..self.d].copy_from_slice(&self.hash(key)[..self.d]);
    }
}

impl<const L: usize> HashBank<L> {
    /// A bank of the given members; panics beyond [`MAX_MEMBERS`] (sketch constructors
    /// reject such geometries first).
    pub fn new(params: &[CrcParams]) -> Self {
        let d = params.len();
        assert!(d <= MAX_MEMBERS, "a hash bank holds at most {MAX_MEMBERS} members");
        let mut zero = [0u32; MAX_MEMBERS];
        for (z, p) in zero.iter_mut().zip(params) {
            *z = p.checksum(&[0; L]);
        }
        let bases: Vec<Vec<u32>> = params.iter().zip(&zero).map(|(p, &z)| bit_basis::<L>(p, z)).collect();
        let rows = if d <= Narrow::N { Rows::Narrow(table(&bases)) } else { Rows::Wide(table(&bases)) };
        #[cfg(target_arch = "x86_64")]
        let lanes = (params.iter().all(|p| !p.refin && !p.refout) && clmul::Lanes::available()).then(|| {
            clmul::Lanes::new(&params.iter().map(|p| clmul::Member::new(p.poly)).collect::<Vec<_>>())
        });
        HashBank {
            d,
            rows,
            zero,
            params: params.to_vec(),
            #[cfg(target_arch = "x86_64")]
            lanes,
        }
    }

    /// Whether the bank hashes by carry-less multiplication.
    pub fn carry_less(&self) -> bool {
        #[cfg(target_arch = "x86_64")]
        return self.lanes.is_some();
        #[cfg(not(target_arch = "x86_64"))]
        false
    }

    /// The same bank hashing with its tables only: tests compare the two paths.
    #[cfg(test)]
    pub(crate) fn tables_only(mut self) -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            self.lanes = None;
        }
        self
    }

    /// Which build of a batch kernel suits this CPU and this bank: the carry-less one when
    /// the bank hashes by carry-less multiplication (its kernels must be compiled with
    /// the AVX-512 features for the multiplications to be inlined), else AVX2 and BMI2
    /// where the CPU has them.
    pub fn kernel_build(&self) -> KernelBuild {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("bmi2") {
            return if self.lanes.is_some() { KernelBuild::CarryLess } else { KernelBuild::Avx2 };
        }
        KernelBuild::Portable
    }

    /// The carry-less lanes, when the bank has them and takes `N`-byte keys that way.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn lanes_for<const N: usize>(&self) -> Option<&clmul::Lanes> {
        self.lanes.as_ref().filter(|_| (clmul::MIN_LEN..=clmul::MAX_LEN).contains(&N))
    }

    /// The linear parts of the first four members' CRCs of the `N` bytes `bytes` (a key,
    /// or a key's last `N` bytes) by carry-less multiplication, where the bank has it.
    #[inline(always)]
    fn linear4<const N: usize>(&self, bytes: &[u8; N]) -> Option<[u32; 4]> {
        #[cfg(target_arch = "x86_64")]
        if let Some(lanes) = self.lanes_for::<N>() {
            // SAFETY: `lanes` exists only where the CPU has its features (`HashBank::new`).
            return Some(unsafe { lanes.linear4(bytes) });
        }
        None
    }

    /// [`HashBank::linear4`] for every member.
    #[inline(always)]
    fn linear8<const N: usize>(&self, bytes: &[u8; N]) -> Option<[u32; MAX_MEMBERS]> {
        #[cfg(target_arch = "x86_64")]
        if let Some(lanes) = self.lanes_for::<N>() {
            // SAFETY: as above.
            return Some(unsafe { lanes.linear8(bytes) });
        }
        None
    }

    /// [`HashBank::part`] of the key's last `N` bytes (the flow in a hop key).
    #[inline(always)]
    pub fn suffix_part<const N: usize>(&self, part: &[u8; N]) -> [u32; MAX_MEMBERS] {
        match self.linear8(part) {
            Some(lin) => lin,
            None => self.part(L - N, part),
        }
    }

    pub fn len(&self) -> usize {
        self.d
    }

    pub fn is_empty(&self) -> bool {
        self.d == 0
    }

    pub fn params(&self) -> &[CrcParams] {
        &self.params
    }

    /// What the bytes `part`, at byte `at` of a key, add to its CRCs. By the affinity
    /// above, a key's CRCs are [`HashBank::hash_parts`] of the contributions of parts that
    /// cover it once each; a part shared by many keys (the flow in every hop key of a
    /// packet) is then evaluated once. Panics when the part does not fit the key.
    #[inline(always)]
    pub fn part(&self, at: usize, part: &[u8]) -> [u32; MAX_MEMBERS] {
        match &self.rows {
            Rows::Narrow(t) => widen(xor_rows([0; 4], &t[at..at + part.len()], part)),
            Rows::Wide(t) => xor_rows([0; MAX_MEMBERS], &t[at..at + part.len()], part),
        }
    }

    /// What a big-endian `u16` at bytes `at..at + 2` of a key adds to the CRCs of a bank of
    /// up to four members, as one row of each byte ([`Field16::part`]); `None` for a wider
    /// bank.
    ///
    /// Why: the latency tower adds a hop's switch ID to the part of its flow, hop after
    /// hop. [`HashBank::part`] took a branch on the rows' width, a slice and three scalar
    /// loads a row for it; the two rows here are two vector loads.
    pub fn field16(&self, at: usize) -> Option<Field16<'_>> {
        let Rows::Narrow(t) = &self.rows else { return None };
        Some(Field16 { high: &t[at], low: &t[at + 1] })
    }

    /// The first four lanes of `part` with the CRCs of the all-zero key added: what a
    /// kernel computes once for a key's fixed bytes, so that each key that varies only in a
    /// [`Field16`] hashes with two XORs more.
    #[inline(always)]
    pub fn with_zero4(&self, part: &[u32; MAX_MEMBERS]) -> [u32; 4] {
        std::array::from_fn(|i| part[i] ^ self.zero[i])
    }

    /// The CRCs of a key from the contributions ([`HashBank::part`]) of parts covering each
    /// of its bytes exactly once.
    #[inline(always)]
    pub fn hash_parts(&self, parts: &[[u32; MAX_MEMBERS]]) -> [u32; MAX_MEMBERS] {
        let mut acc = self.zero;
        for p in parts {
            for (o, x) in acc.iter_mut().zip(p) {
                *o ^= x;
            }
        }
        acc
    }

    /// The CRCs of the `L` bytes `key`: entry `m` for member `m` (entries `d..` are zero).
    #[inline(always)]
    pub fn hash_bytes(&self, key: &[u8; L]) -> [u32; MAX_MEMBERS] {
        if let Some(lin) = self.linear8(key) {
            return self.hash_parts(&[lin]);
        }
        // The whole table, not a slice of it: no bounds to check.
        let part = match &self.rows {
            Rows::Narrow(t) => widen(xor_rows([0; 4], &t[..], key)),
            Rows::Wide(t) => xor_rows([0; MAX_MEMBERS], &t[..], key),
        };
        self.hash_parts(&[part])
    }
}

/// The rows of a two-byte field of a narrow bank ([`HashBank::field16`]).
#[derive(Clone, Copy, Debug)]
pub struct Field16<'a> {
    high: &'a [Narrow; 256],
    low: &'a [Narrow; 256],
}

impl Field16<'_> {
    /// What `value` in the field adds to the CRCs of the bank's (up to four) members.
    /// Written out rather than through `xor_rows` over the two rows: that form took the
    /// per-switch thread from 0.388 to 0.427 s on 5M packets.
    #[inline(always)]
    pub fn part(&self, value: u16) -> [u32; 4] {
        let ([h, l], high, low) = (value.to_be_bytes(), self.high, self.low);
        let (a, b) = (high[h as usize].0, low[l as usize].0);
        std::array::from_fn(|i| a[i] ^ b[i])
    }

    /// The two rows whose XOR is [`Field16::part`] of `value`, for a kernel that XORs them
    /// in vectors of its own.
    #[inline(always)]
    pub fn rows(&self, value: u16) -> (&[u32; 4], &[u32; 4]) {
        let [h, l] = value.to_be_bytes();
        (&self.high[h as usize].0, &self.low[l as usize].0)
    }
}

/// `init` XOR row `bytes[p]` of `rows[p]` for every position `p`, in the rows' first `N`
/// lanes. The XORs run on an accumulator of `N` lanes, as wide as the rows or narrower: on
/// an 8-lane one of which four lanes were used, the compiler split the rows into scalar
/// XORs (d=3 CU 89 against 111 Mpps).
#[inline(always)]
fn xor_rows<const N: usize, R: Lanes>(init: [u32; N], rows: &[[R; 256]], bytes: &[u8]) -> [u32; N] {
    debug_assert!(N <= R::N);
    let mut acc = init;
    for (rows, &b) in rows.iter().zip(bytes) {
        let row = rows[b as usize].lanes();
        for i in 0..N {
            acc[i] ^= row[i];
        }
    }
    acc
}

/// Four lanes as the first of [`MAX_MEMBERS`], the rest zero.
#[inline(always)]
fn widen(lanes: [u32; 4]) -> [u32; MAX_MEMBERS] {
    std::array::from_fn(|i| if i < 4 { lanes[i] } else { 0 })
}

/// The rows of the members whose bit bases are `bases`: row `[p][v]` holds, in lane `m`,
/// the XOR of member `m`'s basis vectors of the bits set in value `v` at byte `p`.
fn table<R: Lanes, const L: usize>(bases: &[Vec<u32>]) -> Table<R, L> {
    let rows: Box<[[R; 256]]> = vec![[R::default(); 256]; L].into_boxed_slice();
    let mut table: Table<R, L> = rows.try_into().expect("L rows");
    for (p, rows) in table.iter_mut().enumerate() {
        for (v, row) in rows.iter_mut().enumerate() {
            for (lane, basis) in row.lanes_mut().iter_mut().zip(bases) {
                *lane =
                    (0..8).filter(|bit| v & (0x80 >> bit) != 0).fold(0, |acc, bit| acc ^ basis[p * 8 + bit]);
            }
        }
    }
    table
}

/// The linear contribution of each of the `8 L` key bits (MSB of byte 0 first).
fn bit_basis<const L: usize>(p: &CrcParams, zero: u32) -> Vec<u32> {
    (0..L * 8)
        .map(|bit| {
            let mut k = [0u8; L];
            k[bit / 8] = 0x80 >> (bit % 8);
            p.checksum(&k) ^ zero
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use smartnic_contract::hash::FAMILY;
    use smartnic_contract::vectors::{parse_hash_vectors, HASH_FILE};

    #[test]
    fn bank_matches_checked_in_vectors() {
        let bank = HashBank::new(&FAMILY);
        let mut out = [0u32; FAMILY.len()];
        for (key, want) in parse_hash_vectors(HASH_FILE) {
            bank.hash_into(&key, &mut out);
            assert_eq!(out, want, "key {key}");
            // A wide bank's narrow form is its first lanes.
            assert_eq!(bank.hash_narrow::<3>(&key)[..], want[..3], "key {key}");
        }
    }

    /// Banks of one to four members (the narrow rows): the same CRCs, zeros past their
    /// members.
    #[test]
    fn narrow_banks_match_checked_in_vectors() {
        for d in 1..=4 {
            let bank = HashBank::new(&FAMILY[..d]);
            for (key, want) in parse_hash_vectors(HASH_FILE) {
                let got = bank.hash(&key);
                assert_eq!(got[..d], want[..d], "{d} members, key {key}");
                assert!(got[d..].iter().all(|&x| x == 0), "{d} members, key {key}");
                assert_eq!(bank.hash_narrow::<4>(&key)[..], got[..4], "{d} members, key {key}");
            }
        }
    }

    /// The 15-byte hop keys hash like any other message of the family.
    #[test]
    fn hop_key_bank_matches_reference() {
        use smartnic_contract::per_switch::{switch_key, SWITCH_KEY_LEN};
        let bank = HashBank::<SWITCH_KEY_LEN>::new(&FAMILY);
        let mut stream = smartnic_contract::vectors::KeyStream::new(7);
        for s in 0..500u16 {
            let k = switch_key(s.wrapping_mul(977), &stream.next_key());
            let got = bank.hash_bytes(&k);
            for (m, p) in FAMILY.iter().enumerate() {
                assert_eq!(got[m], p.checksum(&k), "member {m}");
            }
        }
    }

    /// A hop key hashed from its two parts (switch ID, flow), each evaluated apart, is the
    /// reference CRC of the whole key, for every member.
    #[test]
    fn parts_of_a_hop_key_hash_like_the_key() {
        use smartnic_contract::per_switch::{field, switch_key, SWITCH_KEY_LEN};
        let bank = HashBank::<SWITCH_KEY_LEN>::new(&FAMILY);
        let mut stream = smartnic_contract::vectors::KeyStream::new(11);
        for s in 0..500u16 {
            let (id, flow) = (s.wrapping_mul(40_503), stream.next_key());
            let k = switch_key(id, &flow);
            let parts = [
                bank.part(field::FLOW.start, flow.as_bytes()),
                bank.part(field::SWITCH_ID.start, &id.to_be_bytes()),
            ];
            let got = bank.hash_parts(&parts);
            for (m, p) in FAMILY.iter().enumerate() {
                assert_eq!(got[m], p.checksum(&k), "member {m}, switch {id}");
            }
        }
    }

    /// The latency kernel's form: the flow's share with the zero key's CRCs
    /// (`with_zero4`), XOR the switch ID's two rows (`field16`), is the reference CRC of
    /// the hop key, for banks of one to four members and every switch ID; a bank of five
    /// has no `field16`.
    #[test]
    fn field16_and_flow_share_hash_like_the_hop_key() {
        use smartnic_contract::per_switch::{field, switch_key, SWITCH_KEY_LEN};
        let mut stream = smartnic_contract::vectors::KeyStream::new(13);
        for d in 1..=4 {
            let bank = HashBank::<SWITCH_KEY_LEN>::new(&FAMILY[..d]);
            let sw = bank.field16(field::SWITCH_ID.start).expect("a narrow bank");
            for id in 0..=u16::MAX {
                let flow = stream.next_key();
                let share = bank.with_zero4(&bank.suffix_part(flow.as_bytes()));
                let part = sw.part(id);
                let k = switch_key(id, &flow);
                for (m, p) in FAMILY[..d].iter().enumerate() {
                    assert_eq!(share[m] ^ part[m], p.checksum(&k), "member {m} of {d}, switch {id}");
                }
            }
        }
        assert!(HashBank::<SWITCH_KEY_LEN>::new(&FAMILY[..5]).field16(field::SWITCH_ID.start).is_none());
    }

    /// Flow keys to compare the two hashings on: a stream of keys, the all-zero and
    /// all-ones keys, and every single-bit key.
    fn edge_and_stream_keys(seed: u64) -> Vec<FlowKey> {
        let mut stream = smartnic_contract::vectors::KeyStream::new(seed);
        let mut keys: Vec<FlowKey> = (0..3000).map(|_| stream.next_key()).collect();
        keys.extend([FlowKey([0; KEY_LEN]), FlowKey([0xFF; KEY_LEN])]);
        keys.extend((0..KEY_LEN * 8).map(|bit| {
            let mut k = [0u8; KEY_LEN];
            k[bit / 8] = 0x80 >> (bit % 8);
            FlowKey(k)
        }));
        keys
    }

    /// The carry-less path gives the table rows' CRCs, for banks of one to seven members:
    /// flow keys (`hash`, `hash_narrow`), whole hop keys, and a hop key's flow alone
    /// (`suffix_part`). The path must exist on this CPU, or it would go untested.
    #[test]
    fn carry_less_equals_table_rows() {
        use smartnic_contract::per_switch::{field, switch_key, SWITCH_KEY_LEN};
        let keys = edge_and_stream_keys(19);
        for members in
            [&FAMILY[..1], &FAMILY[5..7], &FAMILY[..3], &FAMILY[2..5], &FAMILY[3..7], &FAMILY[..5], &FAMILY]
        {
            let fast = HashBank::new(members);
            #[cfg(target_arch = "x86_64")]
            assert!(
                fast.carry_less(),
                "this CPU lacks AVX-512 (F, BW) or VPCLMULQDQ: the carry-less path cannot be tested"
            );
            let rows = fast.clone().tables_only();
            assert!(!rows.carry_less());
            let hop_fast = HashBank::<SWITCH_KEY_LEN>::new(members);
            let hop_rows = hop_fast.clone().tables_only();
            for (n, key) in keys.iter().enumerate() {
                assert_eq!(fast.hash(key), rows.hash(key), "{members:?} {key}");
                assert_eq!(fast.hash_narrow::<4>(key), rows.hash_narrow::<4>(key), "{members:?} {key}");
                assert_eq!(
                    hop_fast.suffix_part(key.as_bytes()),
                    hop_rows.part(field::FLOW.start, key.as_bytes()),
                    "{members:?} {key}"
                );
                let hop = switch_key(n as u16 ^ 0xA5C3, key);
                assert_eq!(hop_fast.hash_bytes(&hop), hop_rows.hash_bytes(&hop), "{members:?} {key}");
            }
        }
    }

    /// The vector builds that batch kernels pick: carry-less where the bank has the path,
    /// table rows where it has not.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn kernel_build_follows_the_bank() {
        assert!(std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("bmi2"));
        assert_eq!(HashBank::<KEY_LEN>::new(&FAMILY[..3]).kernel_build(), KernelBuild::CarryLess);
        assert_eq!(HashBank::<KEY_LEN>::new(&FAMILY[..3]).tables_only().kernel_build(), KernelBuild::Avx2);
        assert_eq!(HashBank::<KEY_LEN>::new(&FAMILY).kernel_build(), KernelBuild::CarryLess);
        let reflected = [smartnic_contract::hash::ECMP];
        assert_eq!(HashBank::<KEY_LEN>::new(&reflected).kernel_build(), KernelBuild::Avx2);
    }

    #[test]
    fn bank_matches_crc_crate() {
        let bank = HashBank::new(&FAMILY);
        // `crc::Crc` wants a `'static` algorithm; leaking seven small structs in a test is fine.
        let crcs: Vec<crc::Crc<u32>> = FAMILY
            .iter()
            .map(|p| {
                let alg: &'static crc::Algorithm<u32> = Box::leak(Box::new(crc::Algorithm {
                    width: 32,
                    poly: p.poly,
                    init: p.init,
                    refin: p.refin,
                    refout: p.refout,
                    xorout: p.xorout,
                    check: 0,
                    residue: 0,
                }));
                crc::Crc::<u32>::new(alg)
            })
            .collect();
        let mut stream = smartnic_contract::vectors::KeyStream::new(42);
        let mut out = [0u32; FAMILY.len()];
        for _ in 0..2000 {
            let key = stream.next_key();
            bank.hash_into(&key, &mut out);
            for (c, got) in crcs.iter().zip(out) {
                assert_eq!(c.checksum(key.as_bytes()), got);
            }
        }
    }
}
