//! The executable twins of the P4 programs: what each program does to a packet, step for
//! step in the program's own order, on the same control-plane tables ([`crate::tables`]).
//!
//! | module | program |
//! |---|---|
//! | [`sketchint_int`] | `p4/programs/sketchint_int.p4`: LPM + ECMP forwarding, ACL, TTL, the INT shim |
//!
//! A switch handles a packet in two steps, as a v1model pipeline does: ingress decides the
//! egress port (or a drop, with its reason) when the packet arrives; egress rewrites the
//! packet when it leaves the queue, once the hop latency is known.

pub mod sketchint_int;

use std::fmt;

/// Why a switch dropped a packet (the lab's ground truth names the reason of every loss).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum DropReason {
    /// The parser stopped: a header was cut short, or the INT stack is deeper than the
    /// contract allows.
    Malformed,
    /// Not IPv4 (after the shim, if any): the program routes IPv4 only.
    NotIpv4,
    /// IPv4 with options: the program routes option-less IPv4 only (its checksum update
    /// covers the 20-byte header).
    Ipv4Options,
    /// An ACL entry matched (a blackhole).
    Acl,
    /// The TTL ran out (a forwarding loop, or a packet sent with TTL 1).
    TtlExpired,
    /// No route to the destination.
    NoRoute,
    /// Lost on a link or port by the network itself (the lab's random drop).
    Link,
    /// The egress queue was full.
    QueueFull,
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            DropReason::Malformed => "malformed",
            DropReason::NotIpv4 => "not-ipv4",
            DropReason::Ipv4Options => "ipv4-options",
            DropReason::Acl => "acl",
            DropReason::TtlExpired => "ttl-expired",
            DropReason::NoRoute => "no-route",
            DropReason::Link => "link",
            DropReason::QueueFull => "queue-full",
        };
        f.write_str(s)
    }
}
