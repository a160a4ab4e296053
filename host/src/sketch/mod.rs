//! Software sketches: bit-exact models of the NIC's pipelines (TowerSketch, SuMax) and the
//! baselines the papers compare against (Count-Min, CU, ElasticSketch).
//!
//! | module | block |
//! |---|---|
//! | [`hashing`] | several family CRCs of a key at once |
//! | [`cell`] | overflow marker and the omega (running-minimum) rule |
//! | [`tower`] | TowerSketch with CM / CU / approximate-CU insertion |
//! | [`sumax`] | SuMax with sum and max cells |
//! | [`latency_tower`] | the per-switch latency tower: count and latency-sum cells per (flow, switch) |
//! | [`key_table`] | the flow-key table of heavy flows and their paths |
//! | [`per_switch`] | the NIC's per-switch half: hops into the latency tower, inflated-latency records, the key table |
//! | [`per_switch_worker`] | the per-switch half on a thread of its own, fed flat batches |
//! | [`elastic`] | ElasticSketch baseline |
//! | [`kind`] | the named sketch configurations the CLI and the accuracy lab build |
//! | [`snapshot`] | sketches to snapshot sections and back |
//! | [`merge`] | snapshots of several NICs or stream parts merged into one |

pub mod cell;
pub mod elastic;
pub mod hashing;
pub mod key_table;
pub mod kind;
pub mod latency_tower;
pub mod merge;
pub mod per_switch;
pub mod per_switch_worker;
pub mod snapshot;
pub mod sumax;
pub mod tower;

pub use elastic::Elastic;
pub use kind::{AnySketch, SketchKind};
pub use sumax::{SuMax, SuMaxEstimate};
pub use tower::Tower;
