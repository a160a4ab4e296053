//! The latency tower as a batch loop sees it: locate a hop (hash its key to its buckets),
//! request its buckets' cache lines, insert it.
//!
//! Why a kernel apart from [`LatencyTower`]'s methods: inserted through `&mut self`, every
//! hop re-read each array's depth, widths, markers and buffer from the tower (the compiler
//! cannot tell the buckets' stores from the tower's own fields) and walked the arrays in a
//! loop of run-time length. [`Windows`] copies those parameters into a value once per
//! batch, for the NIC's geometry (d = 3, every bucket a byte-aligned 64-bit window), so
//! they stay in registers or on the stack. [`Cells`] is any other geometry, through the
//! tower's own methods.

#[cfg(target_arch = "x86_64")]
use super::acu_avx2;
use super::{insert_cells, step_pair, Array, FlowPart, LatencyTower, PairEstimate};
use crate::sketch::hashing::{Field16, HashBank};
use crate::sketch::tower::MAX_ARRAYS;
use smartnic_contract::geometry::InsertMode;
use smartnic_contract::hash::index;
use smartnic_contract::packing::{mask, PackedView};
use smartnic_contract::per_switch::{field, SWITCH_KEY_LEN};
use smartnic_contract::FlowKey;

/// What a batch loop does with the tower, hop by hop. A hop is located (its buckets found)
/// well before it is inserted, so the hashing of later hops overlaps the insertions and
/// their cache lines are requested in time.
pub trait HopKernel {
    /// Where a hop's buckets are.
    type Loc: Copy + Default;
    /// The hashes' share of a flow, common to all its hops.
    type Flow: Copy;
    /// The share of `flow` ([`LatencyTower::flow_part`], or a kernel's own form of it).
    fn flow_part(&self, flow: &FlowKey) -> Self::Flow;
    /// The buckets of `flow`'s hop at `switch_id`.
    fn locate(&self, flow: &Self::Flow, switch_id: u16) -> Self::Loc;
    /// Requests the buckets' cache lines.
    fn prefetch(&self, loc: &Self::Loc);
    /// Records a hop of `units` at `loc`; returns the pair's estimates before the hop.
    fn insert(&mut self, loc: &Self::Loc, units: u64) -> PairEstimate;
}

/// One array of [`Windows`]: a view of its buckets and the layout of a bucket.
struct Window<'a> {
    bits: PackedView<'a>,
    depth: u32,
    bucket_bits: u64,
    layout: BucketLayout,
}

/// Where a bucket's two cells sit in its 64-bit window (the count in the low bits, the
/// latency sum above it), and their overflow markers: what the scalar step and the vector
/// step ([`acu_avx2::Layout`]) cut the cells out by.
#[derive(Clone, Copy, Debug)]
pub(super) struct BucketLayout {
    pub(super) count_width: u8,
    pub(super) count_mask: u64,
    pub(super) sum_mask: u64,
    /// The window's bits past the bucket (they belong to the next one).
    pub(super) rest_mask: u64,
    pub(super) count_marker: u32,
    pub(super) sum_marker: u32,
}

/// The tower of `D` arrays whose buckets start on byte boundaries and fit in 64 bits (the
/// NIC's 32-, 48- and 64-bit buckets): a hop's location is the bit offset of its bucket in
/// each array, and each bucket is one 64-bit window, loaded once and stored once.
pub struct Windows<'a, const D: usize> {
    hashes: &'a HashBank<SWITCH_KEY_LEN>,
    /// The switch ID's rows: a hop's hashes are its flow's share (with the zero key's
    /// CRCs, [`HashBank::with_zero4`]) XOR two rows.
    switch: Field16<'a>,
    mode: InsertMode,
    arrays: [Window<'a>; D],
}

impl<'a, const D: usize> Windows<'a, D> {
    /// The kernel of `tower`, when its geometry is `D` windowed arrays, at most four (the
    /// members of a narrow bank).
    pub(super) fn of(tower: &'a mut LatencyTower) -> Option<Self> {
        if !tower.windowed || D > 4 {
            return None;
        }
        let switch = tower.hashes.field16(field::SWITCH_ID.start)?;
        let arrays: &mut [Array; D] = tower.arrays.as_mut_slice().try_into().ok()?;
        Some(Windows {
            hashes: &tower.hashes,
            switch,
            mode: tower.mode,
            arrays: arrays.each_mut().map(window),
        })
    }
}

/// The window view of one array.
fn window(a: &mut Array) -> Window<'_> {
    Window {
        depth: a.depth,
        bucket_bits: a.bucket_bits,
        layout: BucketLayout {
            count_width: a.count_width,
            count_mask: mask(a.count_width),
            sum_mask: mask(a.sum_width),
            rest_mask: !(u64::MAX >> (64 - a.bucket_bits)),
            count_marker: a.count_marker,
            sum_marker: a.sum_marker,
        },
        bits: a.bits.view_mut(),
    }
}

impl<const D: usize> Windows<'_, D> {
    /// The insertion mode of the tower.
    pub fn mode(&self) -> InsertMode {
        self.mode
    }

    /// The bit offset of bucket `idx[k]` in each array `k`.
    #[inline(always)]
    pub(super) fn offsets(&self, idx: &[u32; MAX_ARRAYS]) -> [u64; D] {
        std::array::from_fn(|k| idx[k] as u64 * self.arrays[k].bucket_bits)
    }
}

impl<const D: usize> HopKernel for Windows<'_, D>
where
    [u64; D]: Default,
{
    type Loc = [u64; D];
    type Flow = [u32; 4];

    #[inline(always)]
    fn flow_part(&self, flow: &FlowKey) -> [u32; 4] {
        self.hashes.with_zero4(&FlowPart::of(self.hashes, flow).0)
    }

    #[inline(always)]
    fn locate(&self, flow: &[u32; 4], switch_id: u16) -> [u64; D] {
        let s = self.switch.part(switch_id);
        let h: [u32; 4] = std::array::from_fn(|k| flow[k] ^ s[k]);
        std::array::from_fn(|k| index(h[k], self.arrays[k].depth) as u64 * self.arrays[k].bucket_bits)
    }

    #[inline(always)]
    fn prefetch(&self, loc: &[u64; D]) {
        for (a, &at) in self.arrays.iter().zip(loc) {
            a.bits.prefetch(at);
        }
    }

    /// Both cells of each bucket cut out of its window, the mode's rule applied to each
    /// field ([`step_pair`]), each window written back once with the bits past its bucket
    /// kept.
    #[inline(always)]
    fn insert(&mut self, loc: &[u64; D], units: u64) -> PairEstimate {
        let win: [u64; D] = std::array::from_fn(|k| self.arrays[k].bits.window(loc[k]));
        let layout: [BucketLayout; D] = std::array::from_fn(|k| self.arrays[k].layout);
        let count: [u32; D] = std::array::from_fn(|k| (win[k] & layout[k].count_mask) as u32);
        let sum: [u32; D] =
            std::array::from_fn(|k| ((win[k] >> layout[k].count_width) & layout[k].sum_mask) as u32);
        let markers = (layout.map(|l| l.count_marker), layout.map(|l| l.sum_marker));
        let (before, count, sum) = step_pair(self.mode, (count, sum), markers, units);
        for (k, a) in self.arrays.iter_mut().enumerate() {
            let cells = count[k] as u64 | (sum[k] as u64) << layout[k].count_width;
            a.bits.set_window(loc[k], (win[k] & layout[k].rest_mask) | cells);
        }
        before
    }
}

/// [`Windows`] of the NIC's d = 3 in approximate CU, the NIC's default mode, with each
/// hop's step on both fields in one AVX2 vector and its three bucket offsets computed in
/// another ([`acu_avx2`]): the same locations as [`Windows::locate`], the same cells and
/// estimates as [`Windows::insert`].
#[cfg(target_arch = "x86_64")]
pub struct AcuWindows<'a> {
    windows: Windows<'a, 3>,
    layout: acu_avx2::Layout,
    depths: acu_avx2::Depths,
}

#[cfg(target_arch = "x86_64")]
impl<'a> AcuWindows<'a> {
    /// The kernel over `windows`, which must be in approximate CU.
    ///
    /// # Safety
    /// The CPU must support AVX2 (every [`AcuWindows`] relies on it).
    pub unsafe fn new(windows: Windows<'a, 3>) -> Self {
        assert_eq!(windows.mode, InsertMode::Acu, "the vector step is approximate CU's");
        // SAFETY: the caller's CPU has AVX2.
        let layout = unsafe { acu_avx2::Layout::new(windows.arrays.each_ref().map(|a| a.layout)) };
        let (depth, bits) =
            (windows.arrays.each_ref().map(|a| a.depth), windows.arrays.each_ref().map(|a| a.bucket_bits));
        // SAFETY: as above.
        let depths = unsafe { acu_avx2::Depths::new(depth, bits) };
        AcuWindows { windows, layout, depths }
    }
}

#[cfg(target_arch = "x86_64")]
impl HopKernel for AcuWindows<'_> {
    type Loc = [u64; 3];
    type Flow = [u32; 4];

    #[inline(always)]
    fn flow_part(&self, flow: &FlowKey) -> [u32; 4] {
        self.windows.flow_part(flow)
    }

    #[inline(always)]
    fn locate(&self, flow: &[u32; 4], switch_id: u16) -> [u64; 3] {
        let (high, low) = self.windows.switch.rows(switch_id);
        // SAFETY: an `AcuWindows` exists only on a CPU with AVX2 (`AcuWindows::new`).
        unsafe { acu_avx2::locate(&self.depths, flow, high, low) }
    }

    #[inline(always)]
    fn prefetch(&self, loc: &[u64; 3]) {
        self.windows.prefetch(loc)
    }

    #[inline(always)]
    fn insert(&mut self, loc: &[u64; 3], units: u64) -> PairEstimate {
        let a = &mut self.windows.arrays;
        let win = [a[0].bits.window(loc[0]), a[1].bits.window(loc[1]), a[2].bits.window(loc[2])];
        // A sum grown past 32 bits saturates either way, so units past u32::MAX (which a
        // 32-bit latency cannot give) would step as u32::MAX does.
        let units = units.min(u32::MAX as u64) as u32;
        // SAFETY: an `AcuWindows` exists only on a CPU with AVX2 (`AcuWindows::new`).
        let (before, out) = unsafe { acu_avx2::step(&self.layout, win, units) };
        for k in 0..3 {
            a[k].bits.set_window(loc[k], out[k]);
        }
        before
    }
}

/// Any geometry, through the tower's own per-hop methods.
pub struct Cells<'a>(pub(super) &'a mut LatencyTower);

impl HopKernel for Cells<'_> {
    type Loc = [u32; MAX_ARRAYS];
    type Flow = FlowPart;

    fn flow_part(&self, flow: &FlowKey) -> FlowPart {
        self.0.flow_part(flow)
    }

    #[inline(always)]
    fn locate(&self, flow: &FlowPart, switch_id: u16) -> [u32; MAX_ARRAYS] {
        self.0.hop_indices(flow, switch_id)
    }

    #[inline(always)]
    fn prefetch(&self, idx: &[u32; MAX_ARRAYS]) {
        for (a, &i) in self.0.arrays.iter().zip(idx) {
            a.bits.prefetch(i as u64 * a.bucket_bits);
        }
    }

    #[inline(always)]
    fn insert(&mut self, idx: &[u32; MAX_ARRAYS], units: u64) -> PairEstimate {
        let t = &mut *self.0;
        match <&mut [Array; 3]>::try_from(t.arrays.as_mut_slice()) {
            Ok(arrays) => insert_cells::<3>(arrays, t.mode, idx, units),
            Err(_) => insert_cells::<MAX_ARRAYS>(&mut t.arrays, t.mode, idx, units),
        }
    }
}
