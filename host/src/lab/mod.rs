//! The network lab: a seeded discrete-event simulation of a data-center network whose
//! switches run the P4 twins ([`smartnic_p4::twin`]), producing what each end host's NIC
//! receives and the exact ground truth to score the NIC's answers against.
//!
//! | module | what |
//! |---|---|
//! | [`topo`] | topologies from a command-line spec (`fat-tree:4`, `leaf-spine:4,2,8`, a file) |
//! | [`workload`] | flows: web-search, Zipf or fixed sizes, Poisson arrivals at a load, pacing |
//! | [`faults`] | blackhole, loop, path change, random drop, jitter: syntax and installation |
//! | [`engine`] | the event queue, port queues at link rate, the twins at every switch |
//! | [`truth`] | the ground truth per flow, per flow per switch, per lost packet |
//! | [`output`] | per-host pcapng captures, `truth.json`, the switch logs and entries |

pub mod engine;
pub mod faults;
pub mod output;
pub mod topo;
pub mod truth;
pub mod workload;

pub use engine::{run, run_flows, LabConfig, LabError, NullSink, Sink, SwitchIo};
pub use truth::Truth;
