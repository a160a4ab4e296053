//! Traces: pcap/pcapng readers, the packet parser that turns a frame into a flow key,
//! the papers' 21-byte record format, and the seeded synthetic generator with its exact
//! ground truth.
//!
//! Why this layer exists: every accuracy and speed figure of the project starts from a
//! trace, so reading one must be exact (every frame is a packet, non-IP, or malformed,
//! and a damaged file is an error naming the byte offset) and generating one must be
//! reproducible (same seed, same bytes, exact truth).
//!
//! | module | what it does |
//! |---|---|
//! | [`pcap`] | classic pcap, both byte orders, µs and ns magic; reader and writer |
//! | [`pcapng`] | pcapng sections, interfaces (`if_tsresol`), EPB/SPB/OPB; reader and writer |
//! | [`capture`] | format by magic, [`PacketReader`] (packets + counts), [`scan`] |
//! | [`frame`] | Ethernet / VLAN / shim / IPv4 / IPv6 / TCP / UDP -> [`FlowKey`] and hops |
//! | [`pipeline`] | parsing on its own thread, batches through a bounded channel |
//! | [`records`] | the papers' 21-byte records (key + u64 LE ns) |
//! | [`gen`] | seeded Zipf generator with INT stacks |
//! | [`truth`] | per-flow ground-truth records shared by generator and stats |
//! | [`stats`] | exact statistics of any trace, same field names as the truth |
//! | [`error`] | [`TraceError`]: offset + problem |

use smartnic_contract::shim::Hop;
use smartnic_contract::FlowKey;

/// One IP packet as the sketches see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Ingress timestamp in nanoseconds.
    pub ts_ns: u64,
    /// Frame length on the wire in bytes (the pcap original length).
    pub wire_len: u32,
    pub key: FlowKey,
    /// INT stack hops when the frame carried the telemetry shim (empty otherwise).
    pub hops: Hops,
}

/// A packet's hops, held in the packet itself up to [`INLINE_HOPS`] (a longer stack spills
/// to an allocation of its own).
///
/// Why: as a `Vec`, every packet's hops were an allocation apart from it, written by the
/// parser and read by SuMax and the per-switch half each at another place in memory; held
/// in the packet they arrive with its key.
pub type Hops = smallvec::SmallVec<[Hop; INLINE_HOPS]>;

/// Hops a packet holds in place: a data-center path (ToR, aggregation, core, aggregation,
/// ToR) fits.
pub const INLINE_HOPS: usize = 5;

impl Packet {
    /// In-network delay: the sum of the hop latencies (0 without a shim).
    pub fn delay_ns(&self) -> u64 {
        self.hops.iter().map(|h| h.latency_ns as u64).sum()
    }
}

/// Hints the CPU to pull `x`'s cache line in; no effect on any value (a no-op off x86_64).
/// The batch loops request what a packet a few places ahead will touch (its hop list,
/// its table entry) so that several cache misses are in flight at once.
#[inline(always)]
pub(crate) fn prefetch<T>(x: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that never faults, whatever the address, and SSE is
    // part of the x86_64 baseline.
    unsafe {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(x as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

pub mod capture;
pub mod error;
pub mod frame;
pub mod gen;
pub mod pcap;
pub mod pcapng;
pub mod pipeline;
pub mod records;
pub mod stats;
pub mod truth;

pub use capture::{scan, CaptureReader, Counts, Format, PacketReader, RawFrame};
pub use error::{Problem, TraceError};
pub use frame::{classify, parse_frame, Classified, FrameClass, FrameError};
pub use gen::{generate, generate_files, GenConfig, Latency, ShimConfig};
pub use stats::{compute as compute_stats, FlowTable, TraceStats};
pub use truth::{FlowRecord, Totals, Truth};
