//! Measurement tasks: what the host computes from sketch counters (a live software sketch
//! or a snapshot read out of the NIC).
//!
//! | module | task | paper |
//! |---|---|---|
//! | [`flow_size`] | per-flow size (min of the hashed counters) | SketchINT V-A, LightGuardian 6.1 |
//! | [`heavy`] | heavy hitters (candidate table or candidate keys), heavy changes | SketchINT V-A |
//! | [`distribution`] | flow-size distribution by MRAC's EM, per Tower array range | SketchINT V-A, LightGuardian 6.1 |
//! | [`entropy`] | entropy of the flow sizes from the distribution | SketchINT V-A |
//! | [`cardinality`] | number of flows by linear counting | SketchINT V-A |
//! | [`per_switch`] | per-flow per-switch latency, inflated latency, per-switch heavy hitters and heavy changes | SketchINT V-B |
//! | [`sumax`] | delay distribution, max inter-arrival, last arrival, partial reconstruction | LightGuardian 4.4, 6.1 |
//!
//! Every task works on [`crate::sketch::AnySketch`] where the sketch can answer it, and
//! on the concrete sketch types for callers that hold one.

pub mod cardinality;
pub mod distribution;
pub mod entropy;
pub mod flow_size;
pub mod heavy;
pub mod per_switch;
pub mod sumax;

pub use distribution::SizeDistribution;
