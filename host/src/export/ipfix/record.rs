//! The data records: a flow's packets in an epoch, and one switch of its path.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use smartnic_contract::FlowKey;

use super::elements::{ie, Element, Template, FLOW_V4, FLOW_V6, HOP_V4, HOP_V6};

/// The value sent for a count or latency the tower has no estimate of (every cell it
/// reads overflowed): all ones, which no real count or average reaches.
pub const NO_ESTIMATE: u64 = u64::MAX;

/// A flow's two addresses, of one family (a record cannot mix them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Addrs {
    V4 { src: Ipv4Addr, dst: Ipv4Addr },
    V6 { src: Ipv6Addr, dst: Ipv6Addr },
}

/// A flow's 5-tuple as the records carry it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowId {
    pub addrs: Addrs,
    pub src_port: u16,
    pub dst_port: u16,
    pub proto: u8,
}

impl FlowId {
    /// The 5-tuple of a flow key (32-bit addresses: IPv6 keys are already folded).
    pub fn from_key(k: &FlowKey) -> Self {
        FlowId {
            addrs: Addrs::V4 { src: Ipv4Addr::from(k.src_ip()), dst: Ipv4Addr::from(k.dst_ip()) },
            src_port: k.src_port(),
            dst_port: k.dst_port(),
            proto: k.proto(),
        }
    }

    /// The source address, whatever its family.
    pub fn src(&self) -> IpAddr {
        match self.addrs {
            Addrs::V4 { src, .. } => src.into(),
            Addrs::V6 { src, .. } => src.into(),
        }
    }

    /// The destination address, whatever its family.
    pub fn dst(&self) -> IpAddr {
        match self.addrs {
            Addrs::V4 { dst, .. } => dst.into(),
            Addrs::V6 { dst, .. } => dst.into(),
        }
    }

    fn is_v6(&self) -> bool {
        matches!(self.addrs, Addrs::V6 { .. })
    }
}

/// One data record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record {
    /// A flow's packet estimate in an epoch.
    Flow { flow: FlowId, epoch: u64, packets: u64 },
    /// One switch of a flow's path: the latency tower's answers for the pair.
    Hop {
        flow: FlowId,
        epoch: u64,
        switch_id: u16,
        /// 1 = the first switch of the path.
        hop_index: u16,
        /// The pair's packet count; `None` when the tower has no estimate.
        hop_packets: Option<u64>,
        /// The pair's average latency in whole ns; `None` without an estimate.
        avg_latency_ns: Option<u64>,
    },
}

/// A field's value: an address or an unsigned integer (written big-endian at the
/// element's length).
enum Value {
    Addr(IpAddr),
    Uint(u64),
}

impl Record {
    /// The template this record is sent with.
    pub fn template(&self) -> &'static Template {
        match (self, self.flow().is_v6()) {
            (Record::Flow { .. }, false) => &FLOW_V4,
            (Record::Flow { .. }, true) => &FLOW_V6,
            (Record::Hop { .. }, false) => &HOP_V4,
            (Record::Hop { .. }, true) => &HOP_V6,
        }
    }

    /// The record's flow.
    pub fn flow(&self) -> &FlowId {
        match self {
            Record::Flow { flow, .. } | Record::Hop { flow, .. } => flow,
        }
    }

    /// Appends the record's fields in its template's order.
    pub fn emit(&self, out: &mut Vec<u8>) {
        for e in self.template().elements {
            match self.value(e) {
                Value::Addr(IpAddr::V4(a)) => out.extend_from_slice(&a.octets()),
                Value::Addr(IpAddr::V6(a)) => out.extend_from_slice(&a.octets()),
                Value::Uint(v) => out.extend_from_slice(&v.to_be_bytes()[8 - usize::from(e.len)..]),
            }
        }
    }

    /// The value of element `e` (one of the record's template's elements).
    fn value(&self, e: &Element) -> Value {
        let f = self.flow();
        let opt = |v: Option<u64>| Value::Uint(v.unwrap_or(NO_ESTIMATE));
        match (*e, self) {
            (ie::SOURCE_IPV4 | ie::SOURCE_IPV6, _) => Value::Addr(f.src()),
            (ie::DESTINATION_IPV4 | ie::DESTINATION_IPV6, _) => Value::Addr(f.dst()),
            (ie::SOURCE_PORT, _) => Value::Uint(f.src_port.into()),
            (ie::DESTINATION_PORT, _) => Value::Uint(f.dst_port.into()),
            (ie::PROTOCOL, _) => Value::Uint(f.proto.into()),
            (ie::EPOCH, Record::Flow { epoch, .. } | Record::Hop { epoch, .. }) => Value::Uint(*epoch),
            (ie::PACKETS, Record::Flow { packets, .. }) => Value::Uint(*packets),
            (ie::SWITCH_ID, Record::Hop { switch_id, .. }) => Value::Uint((*switch_id).into()),
            (ie::HOP_INDEX, Record::Hop { hop_index, .. }) => Value::Uint((*hop_index).into()),
            (ie::HOP_PACKETS, Record::Hop { hop_packets, .. }) => opt(*hop_packets),
            (ie::AVG_LATENCY_NS, Record::Hop { avg_latency_ns, .. }) => opt(*avg_latency_ns),
            (e, r) => unreachable!("{} is not an element of the {} template", e.name, r.template().name),
        }
    }

    /// Rebuilds a record from its template and the fields' bytes (in template order, each
    /// exactly the element's length): the decoder's inverse of [`Record::emit`].
    pub(crate) fn parse(t: &Template, fields: &[&[u8]]) -> Record {
        let get = |e: Element| t.elements.iter().position(|x| *x == e).map(|i| fields[i]);
        let uint = |e: Element| get(e).map_or(0, |b| b.iter().fold(0u64, |v, &x| (v << 8) | u64::from(x)));
        let some = |v: u64| (v != NO_ESTIMATE).then_some(v);
        let addrs = match (get(ie::SOURCE_IPV4), get(ie::DESTINATION_IPV4)) {
            (Some(s), Some(d)) => Addrs::V4 { src: v4(s), dst: v4(d) },
            _ => Addrs::V6 {
                src: v6(get(ie::SOURCE_IPV6).unwrap_or(&[0; 16])),
                dst: v6(get(ie::DESTINATION_IPV6).unwrap_or(&[0; 16])),
            },
        };
        let flow = FlowId {
            addrs,
            src_port: uint(ie::SOURCE_PORT) as u16,
            dst_port: uint(ie::DESTINATION_PORT) as u16,
            proto: uint(ie::PROTOCOL) as u8,
        };
        let epoch = uint(ie::EPOCH);
        if get(ie::SWITCH_ID).is_none() {
            return Record::Flow { flow, epoch, packets: uint(ie::PACKETS) };
        }
        Record::Hop {
            flow,
            epoch,
            switch_id: uint(ie::SWITCH_ID) as u16,
            hop_index: uint(ie::HOP_INDEX) as u16,
            hop_packets: some(uint(ie::HOP_PACKETS)),
            avg_latency_ns: some(uint(ie::AVG_LATENCY_NS)),
        }
    }
}

fn v4(b: &[u8]) -> Ipv4Addr {
    let mut a = [0; 4];
    a.copy_from_slice(&b[..4]);
    a.into()
}

fn v6(b: &[u8]) -> Ipv6Addr {
    let mut a = [0; 16];
    a.copy_from_slice(&b[..16]);
    a.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flow record's bytes, field by field as the flow IPv4 template lists them.
    #[test]
    fn flow_record_bytes_follow_the_template() {
        let key = FlowKey::from_v4([10, 0, 0, 1], [192, 168, 1, 2], 1234, 80, 6);
        let r = Record::Flow { flow: FlowId::from_key(&key), epoch: 7, packets: 0x0102_0304 };
        let mut out = Vec::new();
        r.emit(&mut out);
        #[rustfmt::skip]
        let want = [
            10, 0, 0, 1,            // sourceIPv4Address
            192, 168, 1, 2,         // destinationIPv4Address
            0x04, 0xd2,             // sourceTransportPort 1234
            0x00, 0x50,             // destinationTransportPort 80
            6,                      // protocolIdentifier
            0, 0, 0, 0, 1, 2, 3, 4, // packetDeltaCount
            0, 0, 0, 0, 0, 0, 0, 7, // smartnicEpoch
        ];
        assert_eq!(out, want);
        assert_eq!(out.len(), FLOW_V4.record_len());
    }

    #[test]
    fn a_hop_without_estimates_sends_all_ones() {
        let flow = FlowId {
            addrs: Addrs::V6 { src: Ipv6Addr::LOCALHOST, dst: Ipv6Addr::UNSPECIFIED },
            src_port: 1,
            dst_port: 2,
            proto: 17,
        };
        let r = Record::Hop {
            flow,
            epoch: 1,
            switch_id: 0x0a0b,
            hop_index: 3,
            hop_packets: None,
            avg_latency_ns: None,
        };
        let mut out = Vec::new();
        r.emit(&mut out);
        assert_eq!(out.len(), HOP_V6.record_len());
        assert_eq!(&out[15..16], &[1], "::1 ends in 1");
        assert_eq!(&out[45..49], &[0x0a, 0x0b, 0, 3], "switch ID, hop index");
        assert_eq!(&out[49..], &[0xff; 16], "no estimate: all ones");
    }
}
