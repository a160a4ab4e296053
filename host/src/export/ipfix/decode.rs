//! A decoder of what this exporter sends, for tests and for checking a capture: it learns
//! templates from the template sets (RFC 7011 3.4.1) as any collector does, decodes data
//! sets by the templates it learned, and counts lost records from the sequence numbers.
//! It reads fixed-length fields only (this exporter never sends variable-length ones).

use std::collections::HashMap;

use super::elements::{Element, Template, TEMPLATES};
use super::message::{HEADER_LEN, SET_HEADER_LEN, TEMPLATE_SET_ID, VERSION};
use super::record::Record;

/// Why a message could not be decoded.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("message of {0} bytes is shorter than the {HEADER_LEN}-byte header")]
    Short(usize),
    #[error("version {0}, not IPFIX ({VERSION})")]
    Version(u16),
    #[error("header length {header} but {actual} bytes received")]
    Length { header: usize, actual: usize },
    #[error("set at byte {at}: length {len} runs outside the message")]
    SetLength { at: usize, len: usize },
    #[error("template set at byte {0} is truncated")]
    TemplateTruncated(usize),
    #[error("template {0} is not one this exporter publishes (its fields differ)")]
    UnknownTemplate(u16),
    #[error("data set {0} arrived before its template")]
    NoTemplate(u16),
}

/// One decoded message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    pub export_time: u32,
    pub sequence: u32,
    pub domain: u32,
    pub records: Vec<Record>,
}

/// Templates learned so far, per observation domain.
#[derive(Clone, Debug, Default)]
pub struct Decoder {
    templates: HashMap<(u32, u16), &'static Template>,
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

impl Decoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Decodes one message: its header, its template sets (remembered), its data sets.
    pub fn decode(&mut self, b: &[u8]) -> Result<Decoded, DecodeError> {
        if b.len() < HEADER_LEN {
            return Err(DecodeError::Short(b.len()));
        }
        if be16(b, 0) != VERSION {
            return Err(DecodeError::Version(be16(b, 0)));
        }
        let len = usize::from(be16(b, 2));
        if len != b.len() {
            return Err(DecodeError::Length { header: len, actual: b.len() });
        }
        let domain = be32(b, 12);
        let mut out = Decoded { export_time: be32(b, 4), sequence: be32(b, 8), domain, records: Vec::new() };
        let mut at = HEADER_LEN;
        while at < len {
            if at + SET_HEADER_LEN > len {
                return Err(DecodeError::SetLength { at, len: len - at });
            }
            let (id, slen) = (be16(b, at), usize::from(be16(b, at + 2)));
            if slen < SET_HEADER_LEN || at + slen > len {
                return Err(DecodeError::SetLength { at, len: slen });
            }
            let body = &b[at + SET_HEADER_LEN..at + slen];
            if id == TEMPLATE_SET_ID {
                self.templates_from(domain, body, at)?;
            } else {
                self.data_from(domain, id, body, &mut out.records)?;
            }
            at += slen;
        }
        Ok(out)
    }

    /// Learns the template records of a template set.
    fn templates_from(&mut self, domain: u32, body: &[u8], at: usize) -> Result<(), DecodeError> {
        let mut i = 0;
        while i + 4 <= body.len() {
            let (id, count) = (be16(body, i), usize::from(be16(body, i + 2)));
            i += 4;
            let mut fields = Vec::with_capacity(count);
            for _ in 0..count {
                if i + 4 > body.len() {
                    return Err(DecodeError::TemplateTruncated(at));
                }
                let (raw, flen) = (be16(body, i), be16(body, i + 2));
                i += 4;
                let pen = if raw & 0x8000 != 0 {
                    if i + 4 > body.len() {
                        return Err(DecodeError::TemplateTruncated(at));
                    }
                    i += 4;
                    Some(be32(body, i - 4))
                } else {
                    None
                };
                fields.push((raw & 0x7fff, pen, flen));
            }
            let known = TEMPLATES.iter().find(|t| t.id == id && same_fields(t.elements, &fields));
            self.templates.insert((domain, id), known.ok_or(DecodeError::UnknownTemplate(id))?);
        }
        Ok(())
    }

    /// Decodes the records of a data set (trailing bytes shorter than a record are
    /// padding, RFC 7011 3.3.1).
    fn data_from(&self, domain: u32, id: u16, body: &[u8], out: &mut Vec<Record>) -> Result<(), DecodeError> {
        let t = self.templates.get(&(domain, id)).ok_or(DecodeError::NoTemplate(id))?;
        for rec in body.chunks_exact(t.record_len()) {
            let mut fields = Vec::with_capacity(t.elements.len());
            let mut at = 0;
            for e in t.elements {
                fields.push(&rec[at..at + usize::from(e.len)]);
                at += usize::from(e.len);
            }
            out.push(Record::parse(t, &fields));
        }
        Ok(())
    }
}

/// Do the field specifiers state exactly these elements?
fn same_fields(elements: &[Element], fields: &[(u16, Option<u32>, u16)]) -> bool {
    elements.len() == fields.len() && elements.iter().zip(fields).all(|(e, f)| (e.id, e.pen, e.len) == *f)
}

/// Records lost between two messages of one observation domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gap {
    /// The sequence number the collector expected.
    pub expected: u32,
    /// The sequence number that arrived.
    pub got: u32,
    /// Records lost (`got - expected`, modulo 2^32).
    pub lost: u32,
}

/// What a collector does with sequence numbers: expects each message to start where the
/// previous one's records ended, and reports the difference as lost records.
#[derive(Clone, Debug, Default)]
pub struct SequenceTracker {
    next: Option<u32>,
    /// Records lost so far.
    pub lost: u64,
}

impl SequenceTracker {
    /// Notes a message (its header's sequence number and its record count); `Some` when
    /// records were lost before it.
    pub fn observe(&mut self, sequence: u32, records: usize) -> Option<Gap> {
        let gap = self.next.filter(|&e| e != sequence).map(|expected| Gap {
            expected,
            got: sequence,
            lost: sequence.wrapping_sub(expected),
        });
        if let Some(g) = gap {
            self.lost += u64::from(g.lost);
        }
        self.next = Some(sequence.wrapping_add(records as u32));
        gap
    }
}

#[cfg(test)]
mod tests {
    use super::super::message::{Encoder, DEFAULT_MTU};
    use super::super::record::FlowId;
    use super::*;
    use smartnic_contract::FlowKey;

    fn flows(n: u8, epoch: u64) -> Vec<Record> {
        (0..n)
            .map(|i| {
                let key = FlowKey::from_v4([10, 0, 0, i], [10, 0, 9, 9], 5000 + u16::from(i), 443, 6);
                Record::Flow { flow: FlowId::from_key(&key), epoch, packets: u64::from(i) * 10 }
            })
            .collect()
    }

    #[test]
    fn a_dropped_message_shows_as_a_gap_of_its_records() {
        let mut e = Encoder::new(7, 300).unwrap();
        let mut msgs = e.encode(&flows(30, 1), 0);
        msgs.extend(e.encode(&flows(30, 2), 0));
        assert!(msgs.len() >= 4);
        let dropped = msgs.remove(2);
        let (mut dec, mut seq) = (Decoder::new(), SequenceTracker::default());
        let mut gaps = Vec::new();
        let mut received = 0;
        for m in &msgs {
            let d = dec.decode(&m.bytes).unwrap();
            received += d.records.len();
            gaps.extend(seq.observe(d.sequence, d.records.len()));
        }
        assert_eq!(gaps.len(), 1);
        assert_eq!(gaps[0].lost as usize, dropped.records);
        assert_eq!(gaps[0].expected, dropped.sequence);
        assert_eq!(seq.lost as usize + received, 60, "received + lost = sent");
    }

    #[test]
    fn in_order_messages_show_no_gap_even_across_the_wrap() {
        let mut seq = SequenceTracker::default();
        assert_eq!(seq.observe(u32::MAX - 1, 5), None);
        assert_eq!(seq.observe(3, 2), None, "u32::MAX - 1 + 5 wraps to 3");
        let g = seq.observe(9, 1).unwrap();
        assert_eq!((g.expected, g.lost), (5, 4));
    }

    #[test]
    fn damaged_messages_are_named() {
        let mut e = Encoder::new(1, DEFAULT_MTU).unwrap();
        let m = e.encode(&flows(2, 0), 0).remove(0).bytes;
        let mut d = Decoder::new();
        assert_eq!(d.decode(&m[..10]), Err(DecodeError::Short(10)));
        assert_eq!(
            d.decode(&m[..m.len() - 1]).unwrap_err(),
            DecodeError::Length { header: m.len(), actual: m.len() - 1 }
        );
        let mut v9 = m.clone();
        v9[1] = 9;
        assert_eq!(d.decode(&v9), Err(DecodeError::Version(9)));
        // The data set alone, without the template set before it.
        let tlen = usize::from(be16(&m, 18));
        let mut no_t = m[..HEADER_LEN].to_vec();
        no_t.extend_from_slice(&m[HEADER_LEN + tlen..]);
        let n = no_t.len() as u16;
        no_t[2..4].copy_from_slice(&n.to_be_bytes());
        assert_eq!(Decoder::new().decode(&no_t), Err(DecodeError::NoTemplate(256)));
    }
}
