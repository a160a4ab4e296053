//! IPFIX messages (RFC 7011 section 3): the header, the template set, the data sets, and
//! the packing of an epoch's records into messages no longer than the MTU.

use super::elements::{Template, TEMPLATES};
use super::record::Record;

/// IPFIX's version number in the message header.
pub const VERSION: u16 = 10;
/// Bytes of the message header.
pub const HEADER_LEN: usize = 16;
/// Bytes of a set header (set ID, length).
pub const SET_HEADER_LEN: usize = 4;
/// Set ID of a template set.
pub const TEMPLATE_SET_ID: u16 = 2;
/// Default largest message (UDP payload): leaves room for IP and UDP headers and tunnels
/// under a 1500-byte Ethernet MTU.
pub const DEFAULT_MTU: usize = 1400;

/// One encoded message and what it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub bytes: Vec<u8>,
    /// The header's sequence number: data records sent before this message.
    pub sequence: u32,
    /// Data records in this message.
    pub records: usize,
}

/// Turns records into messages for one observation domain, counting the records sent.
#[derive(Clone, Debug)]
pub struct Encoder {
    domain: u32,
    mtu: usize,
    sequence: u32,
}

/// The smallest message that holds one record of any template with its template.
pub fn min_mtu() -> usize {
    TEMPLATES
        .iter()
        .map(|t| HEADER_LEN + 2 * SET_HEADER_LEN + t.template_len() + t.record_len())
        .max()
        .unwrap_or(HEADER_LEN)
}

impl Encoder {
    /// An encoder for observation domain `domain` whose messages are at most `mtu` bytes;
    /// `None` when `mtu` cannot hold one record with its template ([`min_mtu`]) or exceeds
    /// what the header's 16-bit length can state.
    pub fn new(domain: u32, mtu: usize) -> Option<Self> {
        (min_mtu()..=usize::from(u16::MAX)).contains(&mtu).then_some(Encoder { domain, mtu, sequence: 0 })
    }

    /// The sequence number the next message will carry.
    pub fn sequence(&self) -> u32 {
        self.sequence
    }

    /// Packs `records` (in order) into messages stamped `export_time` (seconds since the Unix
    /// epoch); every message starts with the templates of the records it carries.
    pub fn encode(&mut self, records: &[Record], export_time: u32) -> Vec<Message> {
        let mut out = Vec::new();
        let mut draft = Draft::default();
        for r in records {
            if !draft.is_empty() && draft.len() + draft.growth(r) > self.mtu {
                out.push(self.finish(std::mem::take(&mut draft), export_time));
            }
            draft.push(r);
        }
        if !draft.is_empty() {
            out.push(self.finish(draft, export_time));
        }
        out
    }

    /// Serializes a draft and advances the sequence number by its records.
    fn finish(&mut self, d: Draft, export_time: u32) -> Message {
        let len = d.len();
        let mut b = Vec::with_capacity(len);
        b.extend_from_slice(&VERSION.to_be_bytes());
        b.extend_from_slice(&(len as u16).to_be_bytes());
        b.extend_from_slice(&export_time.to_be_bytes());
        b.extend_from_slice(&self.sequence.to_be_bytes());
        b.extend_from_slice(&self.domain.to_be_bytes());
        emit_template_set(&d.templates, &mut b);
        for set in &d.sets {
            b.extend_from_slice(&set.template.id.to_be_bytes());
            b.extend_from_slice(&((SET_HEADER_LEN + set.bytes.len()) as u16).to_be_bytes());
            b.extend_from_slice(&set.bytes);
        }
        debug_assert_eq!(b.len(), len);
        let m = Message { bytes: b, sequence: self.sequence, records: d.records };
        self.sequence = self.sequence.wrapping_add(d.records as u32);
        m
    }
}

/// Appends a template set (ID 2) holding `templates`; nothing when there are none.
pub fn emit_template_set(templates: &[&Template], b: &mut Vec<u8>) {
    if templates.is_empty() {
        return;
    }
    let len = SET_HEADER_LEN + templates.iter().map(|t| t.template_len()).sum::<usize>();
    b.extend_from_slice(&TEMPLATE_SET_ID.to_be_bytes());
    b.extend_from_slice(&(len as u16).to_be_bytes());
    for t in templates {
        b.extend_from_slice(&t.id.to_be_bytes());
        b.extend_from_slice(&(t.elements.len() as u16).to_be_bytes());
        for e in t.elements {
            match e.pen {
                None => b.extend_from_slice(&e.id.to_be_bytes()),
                Some(_) => b.extend_from_slice(&(e.id | 0x8000).to_be_bytes()),
            }
            b.extend_from_slice(&e.len.to_be_bytes());
            if let Some(pen) = e.pen {
                b.extend_from_slice(&pen.to_be_bytes());
            }
        }
    }
}

/// A message being filled: its templates and data sets (a new set when the template
/// changes).
#[derive(Default)]
struct Draft {
    templates: Vec<&'static Template>,
    sets: Vec<DataSet>,
    records: usize,
}

struct DataSet {
    template: &'static Template,
    bytes: Vec<u8>,
}

impl Draft {
    fn is_empty(&self) -> bool {
        self.records == 0
    }

    /// The message's length so far.
    fn len(&self) -> usize {
        let templates: usize = self.templates.iter().map(|t| t.template_len()).sum();
        let template_set = if self.templates.is_empty() { 0 } else { SET_HEADER_LEN + templates };
        HEADER_LEN + template_set + self.sets.iter().map(|s| SET_HEADER_LEN + s.bytes.len()).sum::<usize>()
    }

    /// Bytes `r` adds: the record, a set header when it opens a set, its template (and
    /// the template set's header) when the message lacks it.
    fn growth(&self, r: &Record) -> usize {
        let t = r.template();
        let set = match self.sets.last() {
            Some(s) if s.template.id == t.id => 0,
            _ => SET_HEADER_LEN,
        };
        let template = match (self.templates.iter().any(|x| x.id == t.id), self.templates.is_empty()) {
            (true, _) => 0,
            (false, true) => SET_HEADER_LEN + t.template_len(),
            (false, false) => t.template_len(),
        };
        t.record_len() + set + template
    }

    fn push(&mut self, r: &Record) {
        let t = r.template();
        if !self.templates.iter().any(|x| x.id == t.id) {
            self.templates.push(t);
        }
        match self.sets.last_mut() {
            Some(s) if s.template.id == t.id => r.emit(&mut s.bytes),
            _ => {
                let mut bytes = Vec::new();
                r.emit(&mut bytes);
                self.sets.push(DataSet { template: t, bytes });
            }
        }
        self.records += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::super::elements::{FLOW_V4, HOP_V4};
    use super::super::record::FlowId;
    use super::*;
    use smartnic_contract::FlowKey;

    fn flow(n: u8) -> Record {
        let key = FlowKey::from_v4([10, 0, 0, n], [10, 0, 0, 2], 1000, 80, 6);
        Record::Flow { flow: FlowId::from_key(&key), epoch: 5, packets: 100 + u64::from(n) }
    }

    /// RFC 7011 Figure 3 (message header) and Figure 4 (set header), hand-checked.
    #[test]
    fn header_and_set_header_as_the_rfc_draws_them() {
        let mut e = Encoder::new(0x0102_0304, DEFAULT_MTU).unwrap();
        let m = e.encode(&[flow(1)], 0x5f5e_1000).remove(0);
        let b = &m.bytes;
        #[rustfmt::skip]
        let header = [
            0x00, 0x0a,             // Version Number 10
            0x00, 0x59,             // Length: 16 + (4 + 36) + (4 + 29) = 89
            0x5f, 0x5e, 0x10, 0x00, // Export Time
            0x00, 0x00, 0x00, 0x00, // Sequence Number: no records before
            0x01, 0x02, 0x03, 0x04, // Observation Domain ID
        ];
        let len =
            HEADER_LEN + SET_HEADER_LEN + FLOW_V4.template_len() + SET_HEADER_LEN + FLOW_V4.record_len();
        assert_eq!(len, 16 + 4 + 36 + 4 + 29);
        assert_eq!(&b[..16], &header);
        assert_eq!(b.len(), len);
        // Template set: Set ID 2, length 40; template 256 with 7 fields.
        assert_eq!(&b[16..24], &[0, 2, 0, 40, 0x01, 0x00, 0, 7]);
        // Field specifiers (Figure 5): sourceIPv4Address (8) length 4, ... then the
        // enterprise bit with smartnicEpoch (1) length 8 and the PEN.
        #[rustfmt::skip]
        let fields = [
            0, 8, 0, 4,   0, 12, 0, 4,   0, 7, 0, 2,   0, 11, 0, 2,   0, 4, 0, 1,   0, 2, 0, 8,
            0x80, 1, 0, 8, 0x00, 0x00, 0x7e, 0xd9, // PEN 32473
        ];
        assert_eq!(&b[24..56], &fields);
        // Data set: Set ID 256, length 4 + 29.
        assert_eq!(&b[56..60], &[0x01, 0x00, 0, 33]);
        assert_eq!(&b[60..64], &[10, 0, 0, 1]);
    }

    #[test]
    fn sequence_counts_the_records_before_each_message() {
        let mut e = Encoder::new(1, 200).unwrap();
        let recs: Vec<Record> = (0..20).map(flow).collect();
        let msgs = e.encode(&recs, 0);
        assert!(msgs.len() > 1);
        let mut before = 0;
        for m in &msgs {
            assert_eq!(m.sequence, before);
            assert_eq!(u32::from_be_bytes(m.bytes[8..12].try_into().unwrap()), before);
            assert!(m.bytes.len() <= 200);
            before += m.records as u32;
        }
        assert_eq!(before, 20);
        assert_eq!(e.sequence(), 20, "the next epoch continues the count");
    }

    #[test]
    fn messages_fill_up_to_the_mtu_exactly() {
        let one = HEADER_LEN + SET_HEADER_LEN + FLOW_V4.template_len() + SET_HEADER_LEN;
        let mtu = one + 4 * FLOW_V4.record_len();
        let mut e = Encoder::new(1, mtu).unwrap();
        let msgs = e.encode(&(0..9).map(flow).collect::<Vec<_>>(), 0);
        let counts: Vec<usize> = msgs.iter().map(|m| m.records).collect();
        assert_eq!(counts, vec![4, 4, 1]);
        assert_eq!(msgs[0].bytes.len(), mtu);
    }

    #[test]
    fn a_second_kind_brings_its_template_and_set() {
        let mut e = Encoder::new(1, DEFAULT_MTU).unwrap();
        let hop = Record::Hop {
            flow: *flow(1).flow(),
            epoch: 5,
            switch_id: 3,
            hop_index: 1,
            hop_packets: Some(4),
            avg_latency_ns: Some(900),
        };
        let m = e.encode(&[flow(1), hop, flow(2)], 0).remove(0);
        let tset = SET_HEADER_LEN + FLOW_V4.template_len() + HOP_V4.template_len();
        let want = HEADER_LEN + tset + 3 * SET_HEADER_LEN + 2 * FLOW_V4.record_len() + HOP_V4.record_len();
        assert_eq!(m.bytes.len(), want);
        assert_eq!(u16::from_be_bytes([m.bytes[18], m.bytes[19]]) as usize, tset);
    }

    #[test]
    fn too_small_an_mtu_is_refused() {
        assert!(Encoder::new(1, min_mtu() - 1).is_none());
        assert!(Encoder::new(1, min_mtu()).is_some());
        assert!(Encoder::new(1, 70_000).is_none());
    }
}
