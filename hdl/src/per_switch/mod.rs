//! The NIC's per-switch half (SketchINT section V-B; rules in
//! `smartnic_contract::per_switch`): what turns every hop of a packet's INT stack into a
//! (flow, switch) insertion and keeps the heavy flows' keys.
//!
//! | module | block |
//! |---|---|
//! | [`inflate`] | `InflateCheck`: the inflated-latency rule in the log domain (three LUT log2 units, two adders), one hop a clock |
//! | [`hop_serializer`] | every hop of an IP packet's INT stack as one (switch ++ flow, latency) insertion a clock |

pub mod hop_serializer;
pub mod inflate;
