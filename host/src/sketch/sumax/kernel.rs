//! SuMax as its batch loop sees it: locate a packet (hash its key to its buckets), request
//! its buckets' cache lines, update them.
//!
//! Why a kernel apart from [`SuMax`]'s methods: updated through `&mut self`, every packet
//! re-read each array's buffer and the cell layout from the sketch (the compiler cannot
//! tell the cells' stores from the sketch's own fields) and walked the arrays in a loop of
//! run-time length. [`WordCells`] copies the layout into a value once per batch, for the
//! NIC's cells (32-bit size and time cells, 16-bit delay cells, each on a byte boundary),
//! so it stays in registers or on the stack. [`General`] is any other layout, through the
//! sketch's own per-packet step.

use super::{SuMax, LOOKAHEAD};
use crate::arith::DelayBins;
use crate::sketch::cell::{unit_omega_step, INF};
use crate::sketch::hashing::HashBank;
use crate::sketch::per_switch::HopSource;
use crate::sketch::tower::MAX_ARRAYS;
use crate::trace::Packet;
use smartnic_contract::geometry::sumax_cell;
use smartnic_contract::hash::index;
use smartnic_contract::interval;
use smartnic_contract::FlowKey;

/// Packets ahead whose hop lists the batch loop requests.
const HOPS_AHEAD: usize = 8;

/// What the batch loop does with the sketch, packet by packet.
pub(super) trait PacketKernel {
    /// Where a packet's buckets are.
    type Loc: Copy + Default;
    /// The buckets of `key`, their first cache lines requested.
    fn locate(&self, key: &FlowKey) -> Self::Loc;
    /// Records a packet that arrived at `ts_ns` after `delay_ns` in the network.
    fn insert(&mut self, loc: &Self::Loc, ts_ns: u64, delay_ns: u64);
}

/// Records `packets` in order on kernel `k`, the buckets of the packet [`LOOKAHEAD`]
/// places ahead hashed and requested while the current one is updated.
#[inline(always)]
pub(super) fn batch_loop<K: PacketKernel>(mut k: K, packets: &[Packet]) {
    let mut ring = [K::Loc::default(); LOOKAHEAD];
    for (slot, p) in ring.iter_mut().zip(packets) {
        *slot = k.locate(&p.key);
    }
    for (n, p) in packets.iter().enumerate() {
        let loc = ring[n % LOOKAHEAD];
        if let Some(ahead) = packets.get(n + LOOKAHEAD) {
            ring[n % LOOKAHEAD] = k.locate(&ahead.key);
        }
        // A long hop list (the delay's terms) lives apart from the packet.
        packets.prefetch_hops(n + HOPS_AHEAD);
        k.insert(&loc, p.ts_ns, p.delay_ns());
    }
}

/// The NIC's cell layout on `D` arrays: a packet's location is the byte of its bucket in
/// each array, each cell a little-endian load and store at a constant byte offset.
pub(super) struct WordCells<'a, const D: usize> {
    hashes: &'a HashBank,
    bins: &'a DelayBins,
    time_shift: u8,
    time_mask: u64,
    depth: u32,
    arrays: [&'a mut [u8]; D],
    bucket_bytes: usize,
    size: usize,
    first_delay: usize,
    interval: usize,
    last: usize,
}

impl<'a, const D: usize> WordCells<'a, D> {
    /// The kernel of `s`, when its layout is the NIC's (`word_cells`) on `D` arrays on a
    /// little-endian machine (where a cell's bytes are the packed stream in order).
    pub(super) fn of(s: &'a mut SuMax) -> Option<Self> {
        if !(s.word_cells && cfg!(target_endian = "little")) {
            return None;
        }
        let arrays: &mut [_; D] = s.arrays.as_mut_slice().try_into().ok()?;
        let byte = |cell: usize| (s.cells[cell].offset / 8) as usize;
        let cells = s.geometry.delay_cells;
        Some(WordCells {
            hashes: &s.hashes,
            bins: &s.bins,
            time_shift: s.geometry.time_shift,
            time_mask: s.time_mask,
            depth: s.geometry.depth,
            bucket_bytes: (s.bucket_bits / 8) as usize,
            size: byte(sumax_cell::SIZE),
            first_delay: byte(sumax_cell::FIRST_DELAY),
            interval: byte(sumax_cell::interval(cells)),
            last: byte(sumax_cell::last(cells)),
            arrays: arrays.each_mut().map(|a| a.stream_bytes_mut()),
        })
    }
}

#[inline(always)]
fn get32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

#[inline(always)]
fn set32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

#[inline(always)]
fn get16(b: &[u8], at: usize) -> u32 {
    u16::from_le_bytes(b[at..at + 2].try_into().expect("2 bytes")) as u32
}

#[inline(always)]
fn set16(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 2].copy_from_slice(&(v as u16).to_le_bytes());
}

impl<const D: usize> PacketKernel for WordCells<'_, D>
where
    [usize; D]: Default,
{
    type Loc = [usize; D];

    #[inline(always)]
    fn locate(&self, key: &FlowKey) -> [usize; D] {
        let h = self.hashes.hash(key);
        let at: [usize; D] = std::array::from_fn(|k| index(h[k], self.depth) as usize * self.bucket_bytes);
        for (a, &i) in self.arrays.iter().zip(&at) {
            crate::trace::prefetch(a.as_ptr().wrapping_add(i));
        }
        at
    }

    /// Algorithm 1's unit step on the size cell and the packet's delay cell (each with its
    /// own running minimum), then the max inter-arrival and last-arrival cells: the cells
    /// of [`SuMax::insert_at`], written in the same order.
    #[inline(always)]
    fn insert(&mut self, loc: &[usize; D], ts_ns: u64, delay_ns: u64) {
        let t = ((ts_ns >> self.time_shift) & self.time_mask) as u32;
        let bin = self.bins.bin(delay_ns);
        let (mut omega_size, mut omega_delay) = (INF, INF);
        let delay = self.first_delay + 2 * bin as usize;
        for (a, &at) in self.arrays.iter_mut().zip(loc) {
            let b = &mut a[at..at + self.bucket_bytes];
            set32(b, self.size, unit_omega_step(get32(b, self.size), u32::MAX, &mut omega_size));
            set16(b, delay, unit_omega_step(get16(b, delay), u16::MAX as u32, &mut omega_delay));
            let gap = interval::gap(t, get32(b, self.last), 32);
            set32(b, self.interval, gap.max(get32(b, self.interval)));
            set32(b, self.last, t);
        }
    }
}

/// Any layout, through [`SuMax::insert_fast`].
pub(super) struct General<'a>(pub &'a mut SuMax);

impl PacketKernel for General<'_> {
    type Loc = [u32; MAX_ARRAYS];

    #[inline(always)]
    fn locate(&self, key: &FlowKey) -> [u32; MAX_ARRAYS] {
        let idx = self.0.indices(key);
        for (a, &i) in self.0.arrays.iter().zip(&idx) {
            a.prefetch(i as u64 * self.0.bucket_bits);
        }
        idx
    }

    #[inline(always)]
    fn insert(&mut self, idx: &[u32; MAX_ARRAYS], ts_ns: u64, delay_ns: u64) {
        let (t, bin) = (self.0.time_of(ts_ns), self.0.delay_bin(delay_ns));
        let d = self.0.arrays.len();
        self.0.insert_fast(&idx[..d], t, bin);
    }
}
