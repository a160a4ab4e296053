//! IPFIX export (RFC 7011) over UDP: each epoch's flows and (flow, switch) pairs as data
//! records, with the templates that describe them, so any IPFIX collector can store them
//! and count what the network lost on the way.
//!
//! # What is sent
//!
//! For every flow the snapshot knows (the flows of the NIC's key table, or a list of
//! candidate keys; see [`EpochRecords::from_snapshot`]) one **flow record**, and for every
//! switch on a flow's path (the key table's path, in order) one **hop record**. Values are
//! the report library's answers for the snapshot ([`crate::tasks`]): the flow sketch's
//! packet estimate, and the latency tower's count and average latency of the pair.
//!
//! No **octetDeltaCount**: the NIC's sketches count packets, not bytes, so a snapshot has
//! no byte estimate and the element is left out rather than filled with a guess.
//!
//! Flow keys hold 32-bit addresses: the contract folds an IPv6 address into 32 bits before
//! hashing, so records made from a snapshot always use the IPv4 templates. The IPv6
//! templates carry full 128-bit addresses for sources that know them.
//!
//! # Templates
//!
//! Every element has a fixed length (no variable-length encoding is ever needed). Element
//! IDs with a PEN are enterprise-specific ([`PEN`]); the others are IANA's.
//!
//! | template | ID | elements in order |
//! |---|---|---|
//! | flow, IPv4 | 256 | sourceIPv4Address (8), destinationIPv4Address (12), sourceTransportPort (7), destinationTransportPort (11), protocolIdentifier (4), packetDeltaCount (2), smartnicEpoch |
//! | flow, IPv6 | 257 | sourceIPv6Address (27), destinationIPv6Address (28), then as flow IPv4 |
//! | hop, IPv4 | 258 | the flow IPv4 5-tuple, smartnicEpoch, smartnicSwitchId, smartnicHopIndex, smartnicHopPackets, smartnicAvgLatencyNs |
//! | hop, IPv6 | 259 | the flow IPv6 5-tuple, then as hop IPv4 |
//!
//! | element | PEN:ID | type | bytes | meaning |
//! |---|---|---|---|---|
//! | sourceIPv4Address | 8 | ipv4Address | 4 | flow key's source address |
//! | destinationIPv4Address | 12 | ipv4Address | 4 | flow key's destination address |
//! | sourceIPv6Address | 27 | ipv6Address | 16 | source address (IPv6 templates) |
//! | destinationIPv6Address | 28 | ipv6Address | 16 | destination address (IPv6 templates) |
//! | sourceTransportPort | 7 | unsigned16 | 2 | source port (0 for protocols without ports) |
//! | destinationTransportPort | 11 | unsigned16 | 2 | destination port (0 likewise) |
//! | protocolIdentifier | 4 | unsigned8 | 1 | IP protocol |
//! | packetDeltaCount | 2 | unsigned64 | 8 | the flow's packets in the epoch, as the flow sketch estimates them |
//! | smartnicEpoch | 32473:1 | unsigned64 | 8 | the epoch (the snapshot's epoch number) |
//! | smartnicSwitchId | 32473:2 | unsigned16 | 2 | switch ID from the INT stack |
//! | smartnicHopIndex | 32473:3 | unsigned16 | 2 | position of the switch on the path, 1 = first; never 0 |
//! | smartnicHopPackets | 32473:4 | unsigned64 | 8 | the latency tower's packet count of the (flow, switch) pair; 2^64 - 1 = no estimate |
//! | smartnicAvgLatencyNs | 32473:5 | unsigned64 | 8 | average latency of the pair, ns, rounded to the nearest ns; 2^64 - 1 = no estimate |
//!
//! # Messages
//!
//! Message header as RFC 7011 section 3.1: version 10, length, export time (seconds since
//! the Unix epoch), sequence number = data records sent in this observation domain before
//! the message (modulo 2^32, so a collector counts lost records as the gap between what it
//! expected and what arrived), observation domain ID. Every message is at most `mtu` bytes
//! ([`DEFAULT_MTU`], IPFIX message length = UDP payload).
//!
//! **Templates ride in every message**, in a template set (ID 2) before the data sets,
//! holding the templates of the record kinds that message carries. Over UDP a template
//! message can be lost or overtaken, and a collector that restarts knows nothing; with the
//! templates in every message, every message that arrives can be decoded on its own, at a
//! cost of at most two template records (about 100 bytes) per message. RFC 7011 section
//! 8.4 asks UDP exporters to resend templates periodically; this is the shortest period.

mod decode;
mod elements;
mod exporter;
mod message;
mod record;
mod snapshot;

pub use decode::{DecodeError, Decoded, Decoder, Gap, SequenceTracker};
pub use elements::{ie, Element, Template, PEN, TEMPLATES};
pub use exporter::{ExportError, ExportOptions, ExportStats, IpfixExporter};
pub use message::{min_mtu, Encoder, Message, DEFAULT_MTU, HEADER_LEN, SET_HEADER_LEN, VERSION};
pub use record::{Addrs, FlowId, Record, NO_ESTIMATE};
pub use snapshot::EpochRecords;
