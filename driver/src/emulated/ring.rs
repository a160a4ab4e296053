//! The emulated device's record ring: RING_CONTROL and RING_WORDS of the stream block, and
//! the host ring the record stream arrives in (`smartnic_contract::wire::record_ring`).
//!
//! While RING_CONTROL's ENABLE bit is set, the records in the record buffer leave for the
//! ring, whole records only, as [`encode`] writes them. The emulation has no clock, so
//! they move when the host looks: a read of RING_WORDS or RECORD_WORDS, or a
//! [`take`](RecordRing::take), first moves every whole waiting record into the ring. The
//! host ring is offered to the driver (`RegisterAccess::ring`) only after
//! [`EmulatedNic::enable_ring`], so the register readout tests keep their path; the
//! registers behave the same either way, as the hardware's do.

use super::EmulatedNic;
use crate::access::{AccessError, RecordRing};
use smartnic_contract::regs::stream::{RING_CONTROL, RING_ENABLE, RING_WORDS};
use smartnic_contract::wire::record::{field, from_words};
use smartnic_contract::wire::record_ring::{encode, PAD};
use std::collections::VecDeque;
use std::time::Duration;

/// Damage done to the record ring (to test the host's checks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingFault {
    /// The next take's first padding word has a bit flipped (a corrupted DMA write).
    FlipPad,
    /// The ring's last word has not arrived at the next take (the channel stalled): the take
    /// times out and takes nothing; the word arrives after it.
    Short,
}

/// The ring's state: the NIC's side (RING_CONTROL, RING_WORDS) and the host's (the words
/// arrived and not yet taken, and how many were taken).
#[derive(Clone, Debug)]
pub(super) struct EmulatedRing {
    /// The stream block's base.
    base: u32,
    /// The host ring is offered to the driver ([`EmulatedNic::enable_ring`]).
    pub offered: bool,
    /// RING_CONTROL's ENABLE bit.
    enabled: bool,
    /// RING_WORDS: words the channel accepted since reset (wrapping).
    sent: u32,
    /// Words taken by the host (wrapping, the same numbering).
    taken: u32,
    /// Words in the host ring, not yet taken.
    words: VecDeque<u64>,
    /// Faults for the next takes, first first.
    faults: Vec<RingFault>,
}

impl EmulatedRing {
    pub fn new(base: u32) -> Self {
        EmulatedRing {
            base,
            offered: false,
            enabled: false,
            sent: 0,
            taken: 0,
            words: VecDeque::new(),
            faults: Vec::new(),
        }
    }

    /// True while the record stream leaves by the ring (RECORD_POP then reads 0).
    pub fn enabled(&self) -> bool {
        self.enabled
    }
}

impl EmulatedNic {
    /// Offers the record ring to the driver (`RegisterAccess::ring`), so readouts take the
    /// records from it (off by default: the register readout tests keep their path).
    pub fn enable_ring(&mut self) {
        self.ring.as_mut().expect("a device built with_per_switch has the stream block").offered = true;
    }

    /// Damages the record ring (see [`RingFault`]).
    pub fn fault_next_ring(&mut self, f: RingFault) {
        self.ring.as_mut().expect("a device built with_per_switch has the stream block").faults.push(f);
    }

    /// Words in the host ring not yet taken.
    pub fn ring_words(&self) -> usize {
        self.ring.as_ref().map_or(0, |r| r.words.len())
    }

    /// RING_CONTROL and RING_WORDS (`None`: not one of them). RING_WORDS first moves the
    /// waiting records into the ring.
    pub(super) fn ring_read(&mut self, offset: u32) -> Option<u32> {
        let rel = offset.checked_sub(self.ring.as_ref()?.base)?;
        match rel {
            RING_CONTROL => self.ring.as_ref().map(|r| r.enabled as u32 * RING_ENABLE),
            RING_WORDS => {
                self.fill_ring();
                self.ring.as_ref().map(|r| r.sent)
            }
            _ => None,
        }
    }

    /// A write to RING_CONTROL (false: not that register). Only ENABLE is kept.
    pub(super) fn ring_write(&mut self, offset: u32, value: u32) -> bool {
        match &mut self.ring {
            Some(r) if offset == r.base + RING_CONTROL => {
                r.enabled = value & RING_ENABLE != 0;
                true
            }
            _ => false,
        }
    }

    /// While the ring is enabled, moves every whole record waiting in the record buffer into
    /// the ring, as the NIC sends them (a partial or 0-word record stays where it is).
    pub(super) fn fill_ring(&mut self) {
        let (Some(r), Some(p)) = (&mut self.ring, &mut self.per_switch) else { return };
        if !r.enabled {
            return;
        }
        let mut whole = 0;
        while let Some(&head) = p.records.get(whole) {
            let len = head.to_be_bytes()[field::WORDS] as usize;
            if len == 0 || whole + len > p.records.len() {
                break;
            }
            whole += len;
        }
        let moved: Vec<u32> = p.records.drain(..whole).collect();
        let ring = encode(&from_words(&moved)).expect("whole records of at least one word");
        r.sent = r.sent.wrapping_add(ring.len() as u32);
        r.words.extend(ring);
    }
}

impl RecordRing for EmulatedNic {
    fn taken(&self) -> u32 {
        self.ring.as_ref().map_or(0, |r| r.taken)
    }

    fn take(&mut self, words: u32, timeout: Duration) -> Result<Vec<u64>, AccessError> {
        self.fill_ring();
        let r = self.ring.as_mut().expect("the ring is offered only with the stream block");
        let short = r.faults.first() == Some(&RingFault::Short);
        let arrived = r.words.len() - short as usize;
        if words as usize > arrived {
            if short {
                r.faults.remove(0);
            }
            return Err(AccessError::RingTimeout { waited: timeout, words, arrived });
        }
        let mut out: Vec<u64> = r.words.drain(..words as usize).collect();
        r.taken = r.taken.wrapping_add(words);
        if r.faults.first() == Some(&RingFault::FlipPad) {
            if let Some(w) = out.iter_mut().find(|w| **w as u32 == PAD) {
                *w ^= 1;
                r.faults.remove(0);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::RegisterAccess;
    use smartnic_contract::geometry::{SuMaxGeometry, TowerGeometry};
    use smartnic_contract::key::FlowKey;
    use smartnic_contract::per_switch::{KeyTableGeometry, LatencyTowerGeometry, PerSwitchGeometry};
    use smartnic_contract::regs::layout::FirmwareInfo;
    use smartnic_contract::regs::{block_type, per_switch};
    use smartnic_contract::wire::record::{InflatedRecord, Record};
    use smartnic_contract::wire::record_ring::decode;

    fn nic() -> (EmulatedNic, u32, u32) {
        let p = PerSwitchGeometry {
            latency: LatencyTowerGeometry::from_cells(&[(8, 16, 4)], 0),
            table: KeyTableGeometry::with_capacity(2),
        };
        let (t, s) = (TowerGeometry::from_widths_depths(&[(8, 8)]), SuMaxGeometry::with_depth(1, 2));
        let n = EmulatedNic::with_per_switch(FirmwareInfo::default(), &t, &s, &p);
        let st = n.layout().block(block_type::STREAM).unwrap().base;
        let ps = n.layout().block(block_type::PER_SWITCH).unwrap().base;
        (n, st, ps)
    }

    fn inflated(i: u8) -> Record {
        Record::Inflated(InflatedRecord {
            epoch: i as u32,
            flow: FlowKey::from_v4([10, 0, 0, i], [10, 0, 0, 2], 1, 2, 6),
            switch_id: i as u16,
            latency_ns: 5,
        })
    }

    /// Records move into the ring only while ENABLE is set, whole, padded, counted in
    /// RING_WORDS; RECORD_POP pops nothing meanwhile.
    #[test]
    fn enabled_records_move_into_the_ring_whole() {
        let (mut n, st, ps) = nic();
        assert!(n.ring().is_none(), "offered only after enable_ring");
        n.push_record(&inflated(1));
        assert_eq!(n.read32(st + RING_WORDS).unwrap(), 0, "disabled: nothing moves");
        n.write32(st + RING_CONTROL, 0xFFFF_FFFF).unwrap();
        assert_eq!(n.read32(st + RING_CONTROL).unwrap(), RING_ENABLE);
        n.push_record_words(&[0x0102_0000]); // the first word of a 2-word record
        assert_eq!(n.read32(ps + per_switch::RECORD_POP).unwrap(), 0, "no pops while the ring runs");
        assert_eq!(n.read32(st + RING_WORDS).unwrap(), 4, "7 words and a pad");
        assert_eq!(n.record_words(), 1, "the partial record stays in the buffer");
        n.push_record_words(&[0xAABB_CCDD]);
        n.enable_ring();
        let ring = n.ring().unwrap();
        assert_eq!(ring.taken(), 0);
        let got = ring.take(5, Duration::ZERO).unwrap();
        assert_eq!(decode(&got).unwrap()[28..], [1, 2, 0, 0, 0xAA, 0xBB, 0xCC, 0xDD]);
        assert_eq!((n.taken(), n.ring_words(), n.record_words()), (5, 0, 0));
        let e = n.take(1, Duration::from_millis(3)).unwrap_err();
        assert!(matches!(e, AccessError::RingTimeout { words: 1, arrived: 0, .. }), "{e}");
    }

    #[test]
    fn faults_damage_the_next_take() {
        let (mut n, st, _) = nic();
        n.enable_ring();
        n.write32(st + RING_CONTROL, RING_ENABLE).unwrap();
        n.push_record(&inflated(1));
        n.fault_next_ring(RingFault::Short);
        n.fault_next_ring(RingFault::FlipPad);
        let e = n.take(4, Duration::ZERO).unwrap_err();
        assert!(matches!(e, AccessError::RingTimeout { words: 4, arrived: 3, .. }), "{e}");
        let got = n.take(4, Duration::ZERO).unwrap();
        assert_eq!(got[3] as u32, PAD ^ 1);
        assert_eq!(decode(&got).unwrap_err().0, 28);
    }
}
