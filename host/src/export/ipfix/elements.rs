//! The information elements and templates, defined once: the encoder, the decoder and the
//! published tables (module doc, README) all follow these lists.

/// The Private Enterprise Number of the enterprise-specific elements: 32473, the number
/// RFC 5612 reserves for documentation and examples. A deployment that owns a PEN may
/// substitute its own here; collectors then key the custom elements by that number.
pub const PEN: u32 = 32473;

/// One information element as a template field specifier states it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Element {
    /// The element's name (IANA's, or ours for enterprise-specific ones).
    pub name: &'static str,
    /// Element ID (without the enterprise bit).
    pub id: u16,
    /// `Some(PEN)` for an enterprise-specific element.
    pub pen: Option<u32>,
    /// Field length in bytes (always fixed).
    pub len: u16,
}

/// The elements of the templates, IANA's and enterprise-specific.
pub mod ie {
    use super::{Element, PEN};

    const fn iana(name: &'static str, id: u16, len: u16) -> Element {
        Element { name, id, pen: None, len }
    }
    const fn ours(name: &'static str, id: u16, len: u16) -> Element {
        Element { name, id, pen: Some(PEN), len }
    }

    pub const SOURCE_IPV4: Element = iana("sourceIPv4Address", 8, 4);
    pub const DESTINATION_IPV4: Element = iana("destinationIPv4Address", 12, 4);
    pub const SOURCE_IPV6: Element = iana("sourceIPv6Address", 27, 16);
    pub const DESTINATION_IPV6: Element = iana("destinationIPv6Address", 28, 16);
    pub const SOURCE_PORT: Element = iana("sourceTransportPort", 7, 2);
    pub const DESTINATION_PORT: Element = iana("destinationTransportPort", 11, 2);
    pub const PROTOCOL: Element = iana("protocolIdentifier", 4, 1);
    pub const PACKETS: Element = iana("packetDeltaCount", 2, 8);
    pub const EPOCH: Element = ours("smartnicEpoch", 1, 8);
    pub const SWITCH_ID: Element = ours("smartnicSwitchId", 2, 2);
    pub const HOP_INDEX: Element = ours("smartnicHopIndex", 3, 2);
    pub const HOP_PACKETS: Element = ours("smartnicHopPackets", 4, 8);
    pub const AVG_LATENCY_NS: Element = ours("smartnicAvgLatencyNs", 5, 8);
}

/// A template: its ID and its elements in record order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Template {
    pub id: u16,
    pub name: &'static str,
    pub elements: &'static [Element],
}

impl Template {
    /// Bytes of one data record.
    pub fn record_len(&self) -> usize {
        self.elements.iter().map(|e| usize::from(e.len)).sum()
    }

    /// Bytes of the template record (header + field specifiers, RFC 7011 3.4.1).
    pub fn template_len(&self) -> usize {
        4 + self.elements.iter().map(|e| if e.pen.is_some() { 8 } else { 4 }).sum::<usize>()
    }

    /// Is `id` one of this exporter's templates?
    pub fn by_id(id: u16) -> Option<&'static Template> {
        TEMPLATES.iter().find(|t| t.id == id)
    }
}

use ie::*;

pub const FLOW_V4: Template = Template {
    id: 256,
    name: "flow, IPv4",
    elements: &[SOURCE_IPV4, DESTINATION_IPV4, SOURCE_PORT, DESTINATION_PORT, PROTOCOL, PACKETS, EPOCH],
};
pub const FLOW_V6: Template = Template {
    id: 257,
    name: "flow, IPv6",
    elements: &[SOURCE_IPV6, DESTINATION_IPV6, SOURCE_PORT, DESTINATION_PORT, PROTOCOL, PACKETS, EPOCH],
};
pub const HOP_V4: Template = Template {
    id: 258,
    name: "hop, IPv4",
    elements: &[
        SOURCE_IPV4,
        DESTINATION_IPV4,
        SOURCE_PORT,
        DESTINATION_PORT,
        PROTOCOL,
        EPOCH,
        SWITCH_ID,
        HOP_INDEX,
        HOP_PACKETS,
        AVG_LATENCY_NS,
    ],
};
pub const HOP_V6: Template = Template {
    id: 259,
    name: "hop, IPv6",
    elements: &[
        SOURCE_IPV6,
        DESTINATION_IPV6,
        SOURCE_PORT,
        DESTINATION_PORT,
        PROTOCOL,
        EPOCH,
        SWITCH_ID,
        HOP_INDEX,
        HOP_PACKETS,
        AVG_LATENCY_NS,
    ],
};

/// Every template this exporter sends.
pub const TEMPLATES: &[Template] = &[FLOW_V4, FLOW_V6, HOP_V4, HOP_V6];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_ids_are_data_set_ids_and_distinct() {
        for (i, t) in TEMPLATES.iter().enumerate() {
            assert!(t.id >= 256, "RFC 7011 3.4.1: template IDs 0-255 are reserved");
            assert!(TEMPLATES[..i].iter().all(|o| o.id != t.id));
            assert!(t.elements.iter().all(|e| e.id < 0x8000), "the enterprise bit is not part of an ID");
        }
    }

    #[test]
    fn lengths_follow_the_elements() {
        assert_eq!(FLOW_V4.record_len(), 4 + 4 + 2 + 2 + 1 + 8 + 8);
        assert_eq!(FLOW_V4.template_len(), 4 + 6 * 4 + 8);
        assert_eq!(HOP_V6.record_len(), 16 + 16 + 2 + 2 + 1 + 8 + 2 + 2 + 8 + 8);
        assert_eq!(HOP_V6.template_len(), 4 + 5 * 4 + 5 * 8);
    }
}
