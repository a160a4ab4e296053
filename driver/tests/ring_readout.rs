//! The record stream from the record ring against the register-level emulation: records
//! pushed before, between and during readouts arrive exactly once, in order, equal to what
//! the register drain of an identical device returns and at the same register reads minus
//! the pops; a host without a ring turns the ring off and pops; every way the ring can
//! break (a damaged padding word, a word that did not arrive, an impossible RING_WORDS, a
//! record the ring frames but the stream refuses, the device vanishing) is an error that
//! names it, with no snapshot file written and no record lost.

mod support;
use smartnic_driver::access::{AccessError, RecordRing, RegisterAccess};
use smartnic_driver::blocks::DeviceMap;
use smartnic_driver::contract::geometry::{SuMaxGeometry, TowerGeometry};
use smartnic_driver::contract::key::FlowKey;
use smartnic_driver::contract::per_switch::PerSwitchGeometry;
use smartnic_driver::contract::regs::layout::FirmwareInfo;
use smartnic_driver::contract::regs::{block_type, per_switch as ps, stream as st};
use smartnic_driver::contract::snapshot::source;
use smartnic_driver::contract::wire::record::{InflatedRecord, Record};
use smartnic_driver::contract::wire::record_ring::words_for;
use smartnic_driver::emulated::{EmulatedNic, RingFault};
use smartnic_driver::readout::{
    min_reads, min_writes, read_snapshot, read_snapshot_to_file, ReadoutConfig, ReadoutError, ReadoutStats,
    RecordsVia, FIXED_WRITES, MAX_RING_WORDS,
};
use smartnic_driver::snapshot::{PerSwitchSection, Snapshot};
use std::time::Duration;
use support::small_device as device;

/// A device whose records come by the ring.
fn ring_device() -> (EmulatedNic, DeviceMap) {
    let (mut nic, map) = device();
    nic.enable_ring();
    (nic, map)
}

fn cfg() -> ReadoutConfig {
    ReadoutConfig { source: source::SIMULATOR, poll_timeout: Duration::from_millis(20), ..Default::default() }
}

fn inflated(n: u32) -> Record {
    Record::Inflated(InflatedRecord {
        epoch: n,
        flow: FlowKey::from_v4([10, 0, (n >> 8) as u8, n as u8], [10, 9, 9, 9], 4000, 443, 6),
        switch_id: n as u16,
        latency_ns: 1000 + n,
    })
}

/// A record of a later kind, 2 words (no padding in the ring).
fn even(n: u8) -> Record {
    Record::Unknown { kind: 9, bytes: vec![9, 2, 0, n, 0xFF, 0xEE, 0xDD, n] }
}

fn stream(records: &[Record]) -> Vec<u8> {
    records.iter().flat_map(Record::emit).collect()
}

fn records_of(snap: &Snapshot) -> &[u8] {
    match snap.per_switch.last() {
        Some(PerSwitchSection::Records { stream }) => stream,
        other => panic!("a records section, got {other:?}"),
    }
}

fn stream_base(nic: &EmulatedNic) -> u32 {
    nic.layout().block(block_type::STREAM).unwrap().base
}

/// The device, and a record pushed into it right after the readout read the register that
/// says how many words to take (RING_WORDS or RECORD_WORDS): a record the NIC produces
/// while the readout takes the others.
struct PushDuring<'a> {
    nic: &'a mut EmulatedNic,
    at: u32,
    record: Option<Record>,
}

impl RegisterAccess for PushDuring<'_> {
    fn bar_size(&self) -> u64 {
        self.nic.bar_size()
    }
    fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
        let v = self.nic.read32(offset)?;
        if offset == self.at {
            if let Some(r) = self.record.take() {
                self.nic.push_record(&r);
            }
        }
        Ok(v)
    }
    fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
        self.nic.write32(offset, value)
    }
    fn ring(&mut self) -> Option<&mut dyn RecordRing> {
        self.nic.ring()
    }
}

/// One readout of `nic` with `during` pushed after its count register was read.
fn read_with(
    nic: &mut EmulatedNic,
    map: &DeviceMap,
    at: u32,
    during: Option<Record>,
) -> (Snapshot, ReadoutStats) {
    read_snapshot(&mut PushDuring { nic, at, record: during }, map, &cfg()).unwrap()
}

/// Three readouts of two identical devices, one with the ring, one without: records pushed
/// before each readout, between readouts and during the first two arrive exactly once, in
/// order, and each readout's section is the same on both devices; the ring costs the same
/// register reads as the drain without its pops.
#[test]
fn ring_records_arrive_once_in_order_like_the_register_drain() {
    let (mut a, map) = ring_device();
    let (mut b, _) = device();
    let (ring_at, pop_at) =
        (stream_base(&a) + st::RING_WORDS, map.per_switch.as_ref().unwrap().base + ps::RECORD_WORDS);
    let before = [vec![inflated(1), even(2), inflated(3)], vec![inflated(4)], vec![]];
    let during = [Some(inflated(5)), Some(even(6)), None];
    let between = [vec![inflated(7), inflated(8)], vec![even(9), inflated(10)], vec![]];
    let (mut got_a, mut got_b, mut all) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..3 {
        for r in &before[i] {
            a.push_record(r);
            b.push_record(r);
        }
        let (sa, ta) = read_with(&mut a, &map, ring_at, during[i].clone());
        let (sb, tb) = read_with(&mut b, &map, pop_at, during[i].clone());
        assert_eq!(records_of(&sa), records_of(&sb), "readout {i}: the ring and the drain agree");
        assert_eq!(sa.per_switch, sb.per_switch, "readout {i}");
        assert_eq!((ta.records_via, tb.records_via), (Some(RecordsVia::Ring), Some(RecordsVia::Registers)));
        assert_eq!(ta.ring_words, ring_words(&sa), "readout {i}: whole records, odd ones padded");
        assert_eq!(ta.record_words, 0, "no pops from the ring");
        assert_eq!(tb.record_words as usize, records_of(&sb).len() / 4);
        assert_eq!(ta.reads, min_reads(&map), "readout {i}: the ring takes no register read per word");
        assert_eq!(tb.reads, min_reads(&map) + tb.record_words, "readout {i}");
        assert_eq!((ta.writes, tb.writes), (min_writes(&map), min_writes(&map)), "readout {i}");
        got_a.extend_from_slice(records_of(&sa));
        got_b.extend_from_slice(records_of(&sb));
        all.extend(before[i].iter().cloned());
        all.extend(during[i].iter().cloned());
        for r in &between[i] {
            a.push_record(r);
            b.push_record(r);
        }
        all.extend(between[i].iter().cloned());
    }
    assert_eq!(got_a, stream(&all), "every record once, in order");
    assert_eq!(got_b, got_a);
    assert_eq!((a.ring_words(), a.record_words(), b.record_words()), (0, 0, 0));
    assert_eq!(a.taken(), a.read32(stream_base(&a) + st::RING_WORDS).unwrap(), "taken == RING_WORDS");
    assert_eq!(min_writes(&map), FIXED_WRITES + 1, "RING_CONTROL once per readout");
}

/// Ring words of a records section: each record's words, rounded up to a whole ring word.
fn ring_words(snap: &Snapshot) -> u64 {
    let s = records_of(snap);
    let mut lens = Vec::new();
    let mut at = 0;
    while at < s.len() {
        let w = s[at + 1] as usize;
        lens.push(w);
        at += 4 * w;
    }
    words_for(lens)
}

/// A device without a host ring: the readout turns a ring a previous host left on off
/// (RING_CONTROL <- 0) before popping, so the records come by registers, none lost.
#[test]
fn without_a_host_ring_the_ring_is_turned_off_and_the_records_popped() {
    let (mut nic, map) = device();
    let control = stream_base(&nic) + st::RING_CONTROL;
    nic.write32(control, st::RING_ENABLE).unwrap();
    let recs = [inflated(1), even(2)];
    recs.iter().for_each(|r| nic.push_record(r));
    let (snap, stats) = read_snapshot(&mut nic, &map, &cfg()).unwrap();
    assert_eq!(nic.read32(control).unwrap(), 0, "RING_CONTROL written 0");
    assert_eq!(records_of(&snap), stream(&recs));
    assert_eq!(
        (stats.records_via, stats.record_words, stats.ring_words),
        (Some(RecordsVia::Registers), 9, 0)
    );
    assert_eq!((stats.writes, stats.reads), (min_writes(&map), min_reads(&map) + 9));
    // A bitstream without the stream block: no RING_CONTROL write, today's readout.
    let (t, s) = (TowerGeometry::from_widths_depths(&[(8, 64)]), SuMaxGeometry::with_depth(1, 4));
    let mut flows = EmulatedNic::new(FirmwareInfo::default(), &t, &s);
    let m = DeviceMap::discover(&mut flows).unwrap();
    let (_, stats) = read_snapshot(&mut flows, &m, &cfg()).unwrap();
    assert_eq!((stats.writes, min_writes(&m), stats.records_via), (FIXED_WRITES, FIXED_WRITES, None));
}

/// An empty ring (RING_WORDS == taken) is an empty records section, through the ring.
#[test]
fn an_empty_ring_gives_an_empty_records_section() {
    let (mut nic, map) = ring_device();
    for _ in 0..2 {
        let (snap, stats) = read_snapshot(&mut nic, &map, &cfg()).unwrap();
        assert_eq!(snap.per_switch.last(), Some(&PerSwitchSection::Records { stream: Vec::new() }));
        assert_eq!((stats.records_via, stats.ring_words), (Some(RecordsVia::Ring), 0));
        assert_eq!(stats.reads, min_reads(&map));
    }
    assert_eq!(nic.read32(stream_base(&nic) + st::RING_CONTROL).unwrap(), st::RING_ENABLE);
}

/// A damaged padding word is a record-ring error at its byte, holding every byte taken; no
/// file is written.
#[test]
fn a_damaged_pad_is_refused_with_the_bytes_kept() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.snap");
    let (mut nic, map) = ring_device();
    [inflated(1), inflated(2)].iter().for_each(|r| nic.push_record(r));
    nic.fault_next_ring(RingFault::FlipPad);
    let e = read_snapshot_to_file(&mut nic, &map, &cfg(), &out).unwrap_err();
    let ReadoutError::RecordRing { offset, words, bytes, .. } = &e else { panic!("{e}") };
    assert_eq!((*offset, *words, bytes.len()), (28, 8, 64));
    assert_eq!(&bytes[..28], &inflated(1).emit()[..], "the bytes taken are kept");
    let msg = e.to_string();
    assert!(
        msg.starts_with("record ring: ") && msg.contains("padding word") && msg.contains("byte 28 of the 64"),
        "{msg}"
    );
    assert!(!out.exists(), "no snapshot file");
}

/// Fewer words arrive than RING_WORDS says: the take times out naming what arrived, takes
/// nothing and writes no file; the next readout takes every record.
#[test]
fn a_short_ring_times_out_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.snap");
    let (mut nic, map) = ring_device();
    let recs = [inflated(1), even(2), inflated(3)];
    recs.iter().for_each(|r| nic.push_record(r));
    nic.fault_next_ring(RingFault::Short);
    let e = read_snapshot_to_file(&mut nic, &map, &cfg(), &out).unwrap_err();
    assert!(matches!(e, ReadoutError::Access(AccessError::RingTimeout { words: 9, arrived: 8, .. })), "{e}");
    assert!(e.to_string().contains("received 8 of the 9 words"), "{e}");
    assert!(!out.exists(), "no snapshot file");
    assert_eq!((nic.ring_words(), nic.taken()), (9, 0), "nothing taken");
    let (snap, stats) = read_snapshot_to_file(&mut nic, &map, &cfg(), &out).unwrap();
    assert_eq!((records_of(&snap), stats.ring_words), (&stream(&recs)[..], 9));
    assert!(out.exists());
}

/// A RING_WORDS more than [`MAX_RING_WORDS`] ahead of what was taken is a broken register:
/// refused before any take; a device that vanished there is named as gone instead.
#[test]
fn an_impossible_ring_count_is_refused_before_any_take() {
    struct Stuck<'a>(&'a mut EmulatedNic, u32, u32);
    impl RegisterAccess for Stuck<'_> {
        fn bar_size(&self) -> u64 {
            self.0.bar_size()
        }
        fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
            match offset == self.1 {
                true => Ok(self.2),
                false => self.0.read32(offset),
            }
        }
        fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
            self.0.write32(offset, value)
        }
        fn ring(&mut self) -> Option<&mut dyn RecordRing> {
            self.0.ring()
        }
    }
    let (mut nic, map) = ring_device();
    nic.push_record(&inflated(1));
    let at = stream_base(&nic) + st::RING_WORDS;
    let e = read_snapshot(&mut Stuck(&mut nic, at, MAX_RING_WORDS + 1), &map, &cfg()).unwrap_err();
    assert!(matches!(e, ReadoutError::RingWords { sent: 0x100_0001, taken: 0, max: 0x100_0000 }), "{e}");
    assert!(e.to_string().starts_with("RING_WORDS reads 16777217 and this host took 0 ring words"), "{e}");
    assert_eq!((nic.taken(), nic.ring_words(), nic.record_words()), (0, 0, 7), "nothing taken");
    // A count just within the bound waits for words that never come: a timeout.
    let e = read_snapshot(&mut Stuck(&mut nic, at, 5), &map, &cfg()).unwrap_err();
    assert!(matches!(e, ReadoutError::Access(AccessError::RingTimeout { words: 5, arrived: 4, .. })), "{e}");
    // The good readout after both.
    let (snap, _) = read_snapshot(&mut nic, &map, &cfg()).unwrap();
    assert_eq!(records_of(&snap), stream(&[inflated(1)]));
}

/// Whole records the ring frames correctly but the record stream refuses (an inflated
/// record of 8 words): a record-ring error at the record's byte in the ring (after the
/// padding word before it).
#[test]
fn a_record_the_stream_refuses_is_named_at_its_ring_byte() {
    let (mut nic, map) = ring_device();
    nic.push_record(&inflated(1));
    nic.push_record_words(&[0x0108_0000, 0, 0, 0, 0, 0, 0, 0]);
    let e = read_snapshot(&mut nic, &map, &cfg()).unwrap_err();
    let ReadoutError::RecordRing { offset, words, .. } = &e else { panic!("{e}") };
    assert_eq!((*offset, *words), (32, 8));
    assert!(e.to_string().contains("kind and words"), "{e}");
}

/// The device vanishing at any read of a readout through the ring is `device gone`.
#[test]
fn a_device_vanishing_at_any_read_of_a_ring_readout_is_device_gone() {
    let (_, map) = device();
    let total = min_reads(&map);
    for n in (0..total).rev().step_by(5).chain([total - 1, total - 2, total - 3, total - 4]) {
        let (mut nic, map) = ring_device();
        nic.push_record(&inflated(1));
        nic.vanish_after_reads(n);
        let e = read_snapshot(&mut nic, &map, &cfg()).unwrap_err();
        assert!(e.to_string().starts_with("device gone"), "vanish after {n} reads: {e}");
    }
}

/// The device and its ring as after a long run: RING_WORDS and the words taken both `k`
/// further on (mod 2^32), as the NIC and the host count them.
struct LongRun<'a> {
    nic: &'a mut EmulatedNic,
    k: u32,
}

impl RegisterAccess for LongRun<'_> {
    fn bar_size(&self) -> u64 {
        self.nic.bar_size()
    }
    fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
        let v = self.nic.read32(offset)?;
        let gone = v == u32::MAX;
        Ok(if offset == stream_base(self.nic) + st::RING_WORDS && !gone { v.wrapping_add(self.k) } else { v })
    }
    fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
        self.nic.write32(offset, value)
    }
    fn ring(&mut self) -> Option<&mut dyn RecordRing> {
        Some(self)
    }
}

impl RecordRing for LongRun<'_> {
    fn taken(&self) -> u32 {
        self.nic.taken().wrapping_add(self.k)
    }
    fn take(&mut self, words: u32, timeout: Duration) -> Result<Vec<u64>, AccessError> {
        self.nic.take(words, timeout)
    }
}

/// RING_WORDS and the words taken wrap at 2^32 together: records across the wrap arrive
/// once; a device that vanished reads RING_WORDS as all ones and is named gone, not a
/// ring that stalled, even where all ones minus the words taken looks like a small count.
#[test]
fn ring_counts_wrap_and_a_vanished_device_is_gone_whatever_was_taken() {
    let (mut nic, map) = ring_device();
    let k = u32::MAX - 5;
    nic.push_record(&inflated(1));
    nic.push_record(&inflated(2));
    let (snap, stats) = read_snapshot(&mut LongRun { nic: &mut nic, k }, &map, &cfg()).unwrap();
    assert_eq!((records_of(&snap), stats.ring_words), (&stream(&[inflated(1), inflated(2)])[..], 8));
    assert_eq!(LongRun { nic: &mut nic, k }.taken(), 2, "taken wrapped past 2^32");
    // RING_WORDS is the first read after the pass and the drain's MODE and TABLE_THRESHOLD.
    let (mut nic, map) = ring_device();
    nic.push_record(&inflated(3));
    nic.vanish_after_reads(min_reads(&map) - 4);
    let e = read_snapshot(&mut LongRun { nic: &mut nic, k: u32::MAX - 15 }, &map, &cfg()).unwrap_err();
    assert!(e.to_string().starts_with("device gone"), "{e}");
}

/// The NIC's default geometry with ten records: the ring reads exactly `min_reads`
/// (725,010), the register drain 70 more (725,080).
#[test]
fn default_geometry_reads_no_record_words_through_the_ring() {
    let (t, s, p) =
        (TowerGeometry::sketchint_fpga(), SuMaxGeometry::nic_default(), PerSwitchGeometry::nic_default());
    let mut costs = Vec::new();
    for ring in [true, false] {
        let mut nic = EmulatedNic::with_per_switch(FirmwareInfo::default(), &t, &s, &p);
        nic.latency = 0;
        if ring {
            nic.enable_ring();
        }
        let map = DeviceMap::discover(&mut nic).unwrap();
        (1..=10).for_each(|n| nic.push_record(&inflated(n)));
        let (snap, stats) = read_snapshot(&mut nic, &map, &cfg()).unwrap();
        assert_eq!(records_of(&snap).len(), 280);
        costs.push((stats.reads, stats.record_words, stats.ring_words, stats.writes));
    }
    assert_eq!(costs, [(725_010, 0, 40, 3), (725_080, 70, 0, 3)]);
}
