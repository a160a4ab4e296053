//! The NIC's per-switch half (SketchINT section V-B; rules in
//! `smartnic_contract::per_switch`): what turns every hop of a packet's INT stack into a
//! (flow, switch) insertion and keeps the heavy flows' keys.
//!
//! | module | block |
//! |---|---|
//! | [`hop_hash`] | `HopHashUnit<K>`, `HopFront<A0, A1, A2>`: the CRC-32 XOR tree over the 120-bit hop key, three units staggered one clock per array |
//! | [`cell_step`] | `CellStep<W>`: a count or sum cell's omega step with any `alpha`, its forwarding registers and the estimate chain |
//! | [`latency_array`] | `LatencyArray<WC, WS, A, B>`: one array of count and sum cells in `B` banks, one forwarding track, readout and clear ports |
//! | [`latency_tower`] | `LatencyTowerPipeline<.., B>`: the latency tower (block `latency_tower`), CM and ACU, estimates before each hop, bit-exact with `host::sketch::LatencyTower` |
//! | [`inflate`] | `InflateCheck`: the inflated-latency rule in the log domain (three LUT log2 units, two adders), one hop a clock |
//! | [`record_fifo`] | `RecordFifo`: the record stream's buffer, whole records in (one a clock), words out; a full buffer counts drops |
//! | [`key_way`] | `KeyWay<A>`: one way of the flow-key table, slots of 366 bits in two banks, read-modify-write with forwarding, readout and clear ports |
//! | [`key_table`] | `KeyTable<A>`: the flow-key table (block `key_table`), two ways, two banks, the offer rule and SketchINT's insertion, bit-exact with `host::sketch::key_table::KeyTable` |
//! | [`half`] | `PerSwitchHalf`: serializer -> latency tower -> inflated-latency check -> record buffer, composed at one hop a clock |
//! | [`hop_capture`] | `HopCapture`: a frame's 16 INT hop records, captured as the beats pass, handed out in its descriptor's clock |
//! | [`hop_serializer`] | every hop of an IP packet's INT stack as one (switch ++ flow, latency) insertion a clock, records waiting in a 16-slot ring |
//! | [`dist_ram`] | `DistRam<W, A>`: distributed RAM, written at the edge, read combinationally (the serializer's ring) |

pub mod cell_step;
pub mod dist_ram;
pub mod half;
pub mod hop_capture;
pub mod hop_hash;
pub mod hop_serializer;
pub mod inflate;
pub mod key_table;
pub mod key_way;
pub mod latency_array;
pub mod latency_tower;
pub mod record_fifo;
