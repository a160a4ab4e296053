//! The per-switch half end to end against the register-level emulation: discovery of its
//! block, its windows read out into snapshot v2 sections equal to what a test put in, the
//! record stream drained once per readout with nothing lost or duplicated, its faults, and
//! its configuration written and read back.

use smartnic_driver::access::{AccessError, RegisterAccess};
use smartnic_driver::blocks::{BlockError, DeviceMap, PerSwitchConfig, WindowKind};
use smartnic_driver::config::{read_per_switch_config, write_per_switch_config, ConfigError};
use smartnic_driver::contract::geometry::{marker, InsertMode, SuMaxGeometry, TowerGeometry};
use smartnic_driver::contract::key::FlowKey;
use smartnic_driver::contract::lut::{log2_fx, log2_table, Log2Params};
use smartnic_driver::contract::packing::PackedBits;
use smartnic_driver::contract::per_switch::{
    slot, KeyTableGeometry, LatencyTowerGeometry, PerSwitchGeometry, DEFAULT_TABLE_THRESHOLD,
};
use smartnic_driver::contract::regs::layout::FirmwareInfo;
use smartnic_driver::contract::regs::{block_type, crc, per_switch as ps};
use smartnic_driver::contract::snapshot::source;
use smartnic_driver::contract::wire::record::{to_words, InflatedRecord, Record};
use smartnic_driver::emulated::EmulatedNic;
use smartnic_driver::readout::{
    min_reads, read_snapshot, ReadoutConfig, ReadoutError, FIXED_READS, MAX_RECORD_WORDS,
};
use smartnic_driver::snapshot::{PerSwitchSection, Snapshot};
use std::time::Duration;

const FW: FirmwareInfo =
    FirmwareInfo { device: 0x7038, version: 0x0001_0004, build_time: 7, git_hash: 0xBEEF };

fn flows() -> (TowerGeometry, SuMaxGeometry) {
    (TowerGeometry::from_widths_depths(&[(8, 64), (16, 32)]), SuMaxGeometry::with_depth(2, 8))
}

/// Three latency arrays (one with a 24-bit sum, two 32-bit sums) and two ways of 4 slots.
fn half() -> PerSwitchGeometry {
    PerSwitchGeometry {
        latency: LatencyTowerGeometry::from_cells(&[(8, 24, 16), (16, 32, 8), (32, 32, 8)], 4),
        table: KeyTableGeometry::with_capacity(8),
    }
}

fn device() -> (EmulatedNic, DeviceMap) {
    let (t, s) = flows();
    let mut nic = EmulatedNic::with_per_switch(FW, &t, &s, &half());
    nic.latency = 0; // swap and clear done by their first poll: reads are min_reads exactly
    let map = DeviceMap::discover(&mut nic).unwrap();
    (nic, map)
}

fn cfg() -> ReadoutConfig {
    ReadoutConfig { source: source::SIMULATOR, poll_timeout: Duration::from_millis(20), ..Default::default() }
}

fn base(nic: &EmulatedNic) -> u32 {
    nic.layout().block(block_type::PER_SWITCH).unwrap().base
}

/// Fills every latency bucket of the active bank with (count, sum) values that fit their
/// cells, the largest values of both widths among them, and returns the expected section
/// bytes, packed here bit by bit in the section's layout (count cell first).
fn load_latency(nic: &mut EmulatedNic, g: &LatencyTowerGeometry, seed: u32) -> Vec<Vec<u8>> {
    let mut expected = Vec::new();
    for (a, arr) in g.arrays.iter().enumerate() {
        let w = nic.latency_window(a);
        let bits = arr.bucket_bits();
        let mut packed = PackedBits::new(bits * arr.depth as u64);
        for b in 0..arr.depth as usize {
            let x = (b as u32 ^ seed).wrapping_mul(0x9E37_79B9).rotate_left(a as u32 + 3);
            let (count, sum) = match b % 5 {
                0 => (marker(arr.count_width), marker(arr.sum_width)),
                1 => (marker(arr.count_width) - 1, 0),
                _ => (x & marker(arr.count_width), x.rotate_left(11) & marker(arr.sum_width)),
            };
            let bank = nic.active_mut(w);
            (bank[2 * b], bank[2 * b + 1]) = (count, sum);
            packed.set(b as u64 * bits, arr.count_width, count);
            packed.set(b as u64 * bits + arr.count_width as u64, arr.sum_width, sum);
        }
        expected.push(packed.to_bytes());
    }
    expected
}

/// A slot holding `key` and `path`, in the contract's slot bits.
fn slot_bits(key: &FlowKey, path: &[u16]) -> PackedBits {
    let mut s = PackedBits::new(slot::BITS);
    s.set(slot::VALID, 1, 1);
    s.set(slot::HOPS, slot::HOPS_WIDTH, path.len() as u32);
    for (j, &b) in key.as_bytes().iter().enumerate() {
        s.set(slot::KEY + 8 * j as u64, 8, b as u32);
    }
    for (h, &id) in path.iter().enumerate() {
        s.set(slot::PATH + slot::SWITCH_WIDTH as u64 * h as u64, slot::SWITCH_WIDTH, id as u32);
    }
    s
}

/// The window words of a slot: bits `32 j ..` of the slot in word `j`.
fn slot_words(s: &PackedBits) -> Vec<u32> {
    (0..ps::SLOT_WORDS as u64).map(|j| s.get(32 * j, (slot::BITS - 32 * j).min(32) as u8)).collect()
}

fn flow(n: u8) -> FlowKey {
    FlowKey::from_v4([10, 0, 0, n], [255, 255, 255, 255], 0xFFFF, 443, 17)
}

/// Puts `entries` (way, slot, key, path) into the active bank's table and returns the
/// expected way bytes.
fn load_table(
    nic: &mut EmulatedNic,
    g: &KeyTableGeometry,
    entries: &[(usize, u32, FlowKey, Vec<u16>)],
) -> Vec<Vec<u8>> {
    let mut ways: Vec<PackedBits> =
        g.ways.iter().map(|_| PackedBits::new(slot::BITS * g.depth as u64)).collect();
    for (way, at, key, path) in entries {
        let s = slot_bits(key, path);
        let words = slot_words(&s);
        let w = nic.table_window(*way);
        let from = *at as usize * ps::SLOT_WORDS as usize;
        nic.active_mut(w)[from..from + words.len()].copy_from_slice(&words);
        for bit in 0..slot::BITS {
            ways[*way].set(*at as u64 * slot::BITS + bit, 1, s.get(bit, 1));
        }
    }
    ways.iter().map(PackedBits::to_bytes).collect()
}

fn entries() -> Vec<(usize, u32, FlowKey, Vec<u16>)> {
    vec![
        (0, 0, flow(1), vec![0x0101, 0x0202, 0xFFFF]),
        (0, 3, flow(2), (1..=16).collect()),
        (1, 2, flow(3), vec![]),
        (1, 3, flow(4), vec![7]),
    ]
}

fn inflated(n: u8) -> Record {
    Record::Inflated(InflatedRecord {
        epoch: n as u32,
        flow: flow(n),
        switch_id: 0x0100 + n as u16,
        latency_ns: u32::MAX - n as u32,
    })
}

fn stream(records: &[Record]) -> Vec<u8> {
    records.iter().flat_map(Record::emit).collect()
}

fn sections(snap: &Snapshot) -> (&PerSwitchSection, &PerSwitchSection, &PerSwitchSection) {
    match &snap.per_switch[..] {
        [l, t, r] => (l, t, r),
        other => panic!("three per-switch sections, got {other:?}"),
    }
}

#[test]
fn discovery_reads_the_per_switch_block_and_its_windows() {
    let (nic, map) = device();
    let p = map.per_switch.as_ref().expect("the block is found");
    assert_eq!(p.base, base(&nic));
    assert_eq!(p.geometry, half());
    assert_eq!(p.config, PerSwitchConfig::nic_default());
    let l = nic.layout();
    assert_eq!(p.latency_windows, l.latency_windows.iter().map(|w| w.base).collect::<Vec<_>>());
    assert_eq!(p.table_windows, l.table_windows.iter().map(|w| w.base).collect::<Vec<_>>());
    use WindowKind::*;
    let kinds: Vec<WindowKind> = map.windows().iter().map(|w| w.kind).collect();
    assert_eq!(
        kinds,
        [
            TowerArray(0),
            TowerArray(1),
            SuMaxArray(0),
            SuMaxArray(1),
            LatencyArray(0),
            LatencyArray(1),
            LatencyArray(2),
            TableWay(0),
            TableWay(1)
        ]
    );
    let placed: Vec<(u32, u64)> = l.windows().iter().map(|w| (w.base, w.size as u64)).collect();
    let found: Vec<(u32, u64)> = map.windows().iter().map(|w| (w.base, w.len)).collect();
    assert_eq!(found, placed, "the contract's window order and sizes");
    assert_eq!(map.window_words(), 64 + 32 + 2 * 8 * 11 + 2 * (16 + 8 + 8) + 2 * 12 * 4);
    assert_eq!(map.counter_widths(LatencyArray(0)), Some(vec![8, 24]));
    let slot_widths = map.counter_widths(TableWay(1)).unwrap();
    assert_eq!((slot_widths.len(), slot_widths.iter().map(|&w| w as u64).sum::<u64>()), (12, slot::BITS));
    assert_eq!((map.counter_widths(LatencyArray(3)), map.counter_widths(TableWay(2))), (None, None));
    assert_eq!(LatencyArray(1).to_string(), "per-switch latency array 1 window");
    assert_eq!(TableWay(0).array(), "per-switch table way 0");
    let d = map.describe();
    assert!(d.lines().any(|l| l.contains("per-switch ") && l.ends_with("type 0x534e0040 v1.0")), "{d}");
    assert!(d.contains("per-switch table way 1 window, 192 bytes"), "{d}");
    // The configuration is a line of its own (`device status` prints it once, with the ratio).
    assert!(!d.contains("per-switch mode"), "{d}");
    let p = map.describe_per_switch().unwrap();
    assert!(p.contains("per-switch mode cm, inflate threshold"), "{p}");
}

/// A full readout: the latency tower (largest values of every width included), the table
/// with its paths, the idle bank's misses and the record stream come back exactly; the
/// bank and its misses are cleared; records pushed later come in the next readout only.
#[test]
fn a_full_readout_returns_what_the_device_held() {
    let (mut nic, map) = device();
    let g = half();
    let lat = load_latency(&mut nic, &g.latency, 1);
    let ways = load_table(&mut nic, &g.table, &entries());
    nic.set_active_misses(u32::MAX);
    let first = [
        inflated(1),
        inflated(2),
        Record::Unknown { kind: 9, bytes: vec![9, 2, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF] },
    ];
    first.iter().for_each(|r| nic.push_record(r));
    nic.set_active_packets(1234);

    let (snap, stats) = read_snapshot(&mut nic, &map, &cfg()).unwrap();
    let (l, t, r) = sections(&snap);
    assert_eq!(
        l,
        &PerSwitchSection::LatencyTower { geometry: g.latency.clone(), mode: InsertMode::Cm, arrays: lat }
    );
    let want_table = PerSwitchSection::KeyTable {
        geometry: g.table.clone(),
        threshold: DEFAULT_TABLE_THRESHOLD,
        misses: u32::MAX as u64,
        ways,
    };
    assert_eq!(t, &want_table);
    assert_eq!(r, &PerSwitchSection::Records { stream: stream(&first) });
    assert_eq!((snap.epoch, snap.packets), (0, 1234));
    assert_eq!(Snapshot::decode(&snap.encode()).unwrap(), snap, "the readout's snapshot decodes (v2)");
    assert_eq!(stats.record_words, 7 + 7 + 2);
    assert_eq!(stats.records_dropped, Some(0));
    assert_eq!(stats.reads, min_reads(&map) + stats.record_words, "{stats:?}");
    assert_eq!(min_reads(&map), map.window_words() + FIXED_READS + 7);
    assert_eq!(nic.record_words(), 0);
    for i in 0..3 {
        assert!(nic.idle(nic.latency_window(i)).iter().all(|&w| w == 0), "latency array {i} cleared");
    }

    let second = [inflated(3), inflated(4)];
    second.iter().for_each(|r| nic.push_record(r));
    let (snap2, _) = read_snapshot(&mut nic, &map, &cfg()).unwrap();
    let (l, t, r) = sections(&snap2);
    let PerSwitchSection::LatencyTower { arrays, .. } = l else { panic!() };
    assert!(arrays.iter().flatten().all(|&b| b == 0), "the other bank was empty");
    let PerSwitchSection::KeyTable { misses, ways, .. } = t else { panic!() };
    assert_eq!(*misses, 0, "the active bank's misses");
    assert!(ways.iter().flatten().all(|&b| b == 0));
    let PerSwitchSection::Records { stream: s2 } = r else { panic!() };
    assert_eq!(s2, &stream(&second), "only the records pushed since the last readout");
    let mut all = stream(&first);
    all.extend(s2);
    assert_eq!(all, stream(&[first.to_vec(), second.to_vec()].concat()), "nothing lost or duplicated");
}

/// A bitstream without the block reads out exactly as before: no per-switch sections, a
/// version 1 file, the same reads.
#[test]
fn a_bitstream_without_the_block_has_no_per_switch_sections() {
    let (t, s) = flows();
    let mut nic = EmulatedNic::new(FW, &t, &s);
    nic.latency = 0;
    let map = DeviceMap::discover(&mut nic).unwrap();
    assert!(map.per_switch.is_none());
    assert!(map
        .windows()
        .iter()
        .all(|w| matches!(w.kind, WindowKind::TowerArray(_) | WindowKind::SuMaxArray(_))));
    let (snap, stats) = read_snapshot(&mut nic, &map, &cfg()).unwrap();
    assert!(snap.per_switch.is_empty());
    assert_eq!(snap.version(), 1);
    assert_eq!(
        (stats.reads, stats.record_words, stats.records_dropped, stats.hops_refused),
        (map.window_words() + FIXED_READS, 0, None, None)
    );
    assert!(matches!(read_per_switch_config(&mut nic, &map), Err(ConfigError::NoPerSwitch)));
}

/// A torn pass is read again; the record stream is drained once, after the good pass.
#[test]
fn a_torn_pass_drains_the_records_once() {
    let (mut nic, map) = device();
    let recs = [inflated(5), inflated(6)];
    recs.iter().for_each(|r| nic.push_record(r));
    nic.tear_next_readouts(2);
    let (snap, stats) = read_snapshot(&mut nic, &map, &cfg()).unwrap();
    assert_eq!(stats.retries, 2);
    assert_eq!(sections(&snap).2, &PerSwitchSection::Records { stream: stream(&recs) });
    assert_eq!(stats.reads, min_reads(&map) + 14 + 2 * (map.window_words() + 8));
}

/// Records that do not fit the device's buffer are dropped there and counted; the readout
/// reports RECORD_DROPPED and stores what was kept.
#[test]
fn dropped_records_are_reported() {
    let (mut nic, map) = device();
    nic.set_record_capacity(14);
    (1..=3).for_each(|n| nic.push_record(&inflated(n)));
    let (snap, stats) = read_snapshot(&mut nic, &map, &cfg()).unwrap();
    assert_eq!(stats.records_dropped, Some(1));
    assert_eq!(sections(&snap).2, &PerSwitchSection::Records { stream: stream(&[inflated(1), inflated(2)]) });
}

/// Packets whose hops the device refused (its hop serializer's ring full) are counted there;
/// the readout reports HOPS_REFUSED, 0 on a device that refused none.
#[test]
fn refused_hops_are_reported() {
    let (mut nic, map) = device();
    let (_, stats) = read_snapshot(&mut nic, &map, &cfg()).unwrap();
    assert_eq!(stats.hops_refused, Some(0));
    nic.set_hops_refused(7);
    let (_, stats) = read_snapshot(&mut nic, &map, &cfg()).unwrap();
    assert_eq!(stats.hops_refused, Some(7));
}

/// RECORD_POP of an empty stream reads 0 and removes nothing.
#[test]
fn popping_an_empty_stream_reads_zero() {
    let (mut nic, _) = device();
    let pop = base(&nic) + ps::RECORD_POP;
    assert_eq!(nic.read32(pop).unwrap(), 0);
    nic.push_record(&inflated(1));
    let words = to_words(&inflated(1).emit());
    let got: Vec<u32> = (0..7).map(|_| nic.read32(pop).unwrap()).collect();
    assert_eq!(got, words);
    assert_eq!((nic.read32(pop).unwrap(), nic.record_words()), (0, 0));
}

/// A stream that ends inside a record is a broken device: an error naming the damage that
/// keeps every byte drained, and no snapshot.
#[test]
fn a_partial_record_is_refused_and_its_bytes_kept() {
    let (mut nic, map) = device();
    nic.push_record(&inflated(1));
    let half_record = &to_words(&inflated(2).emit())[..3];
    nic.push_record_words(half_record);
    let e = read_snapshot(&mut nic, &map, &cfg()).unwrap_err();
    let ReadoutError::RecordStream { offset, announced, stream: kept, .. } = &e else { panic!("{e}") };
    assert_eq!((*offset, *announced), (28, 10));
    let mut want = stream(&[inflated(1)]);
    want.extend(half_record.iter().flat_map(|w| w.to_be_bytes()));
    assert_eq!(kept, &want, "nothing drained is lost");
    let msg = e.to_string();
    assert!(
        msg.starts_with("record stream: ")
            && msg.contains("truncated")
            && msg.contains("byte 28 of the 40 bytes"),
        "{msg}"
    );
}

/// A device announcing more words than it holds answers 0 once empty: the drain stops at
/// that zero header instead of trusting RECORD_WORDS.
#[test]
fn a_zero_record_header_stops_the_drain() {
    let (mut nic, map) = device();
    nic.push_record(&inflated(1));
    nic.push_record_words(&[0x0100_0000, 0xAAAA_AAAA]);
    let e = read_snapshot(&mut nic, &map, &cfg()).unwrap_err();
    assert!(matches!(&e, ReadoutError::RecordStream { offset: 28, .. }), "{e}");
    assert!(e.to_string().contains("a record header announcing 0 words"), "{e}");
    assert_eq!(nic.record_words(), 1, "the words after the damage stay in the device");
}

/// A RECORD_WORDS no buffer can hold is refused before any pop (a register stuck at a
/// large value would otherwise cost billions of reads).
#[test]
fn an_impossible_record_count_is_refused_before_any_pop() {
    struct Stuck<'a>(&'a mut EmulatedNic, u32);
    impl RegisterAccess for Stuck<'_> {
        fn bar_size(&self) -> u64 {
            self.0.bar_size()
        }
        fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
            match offset == self.1 {
                true => Ok(MAX_RECORD_WORDS + 1),
                false => self.0.read32(offset),
            }
        }
        fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
            self.0.write32(offset, value)
        }
    }
    let (mut nic, map) = device();
    nic.push_record(&inflated(1));
    let at = base(&nic) + ps::RECORD_WORDS;
    let e = read_snapshot(&mut Stuck(&mut nic, at), &map, &cfg()).unwrap_err();
    assert!(matches!(e, ReadoutError::RecordWords { words: 65536, max: 65535 }), "{e}");
    assert!(e.to_string().starts_with("RECORD_WORDS reads 65536, more than the 65535"), "{e}");
    assert_eq!(nic.record_words(), 7, "nothing popped");
}

/// A latency or table word wider than its cell fails naming the window, before the record
/// stream is touched.
#[test]
fn a_value_wider_than_its_cell_names_the_window() {
    let (mut nic, map) = device();
    nic.push_record(&inflated(1));
    let w = nic.latency_window(0);
    nic.active_mut(w)[2 * 5 + 1] = 1 << 24;
    let e = read_snapshot(&mut nic, &map, &cfg()).unwrap_err();
    assert!(
        matches!(&e, ReadoutError::CounterOutOfRange { index: 11, value: 0x100_0000, width: 24, .. }),
        "{e}"
    );
    assert!(e.to_string().starts_with("per-switch latency array 0 counter 11 read 0x1000000"), "{e}");
    assert_eq!(nic.record_words(), 7, "a failed readout leaves the records in the device");

    let (mut nic, map) = device();
    let w = nic.table_window(1);
    nic.active_mut(w)[ps::SLOT_WORDS as usize * 2 + 11] = 1 << (slot::BITS - 352);
    let e = read_snapshot(&mut nic, &map, &cfg()).unwrap_err();
    assert!(
        e.to_string().starts_with("per-switch table way 1 counter 35 read 0x4000, above the largest 14-bit"),
        "{e}"
    );
}

/// A valid slot claiming more hops than a path holds is a corrupt window (the snapshot
/// could not be read back).
#[test]
fn a_slot_with_too_many_hops_is_refused() {
    let (mut nic, map) = device();
    let mut s = slot_bits(&flow(1), &[1, 2]);
    s.set(slot::HOPS, slot::HOPS_WIDTH, 17);
    let w = nic.table_window(0);
    nic.active_mut(w)[12..24].copy_from_slice(&slot_words(&s));
    let e = read_snapshot(&mut nic, &map, &cfg()).unwrap_err();
    assert!(matches!(&e, ReadoutError::BadSlot { slot: 1, hops: 17, .. }), "{e}");
    assert!(
        e.to_string().starts_with("per-switch table way 0 slot 1 holds 17 hops, more than the 16"),
        "{e}"
    );
}

/// The device vanishing at any read of a per-switch readout is `device gone`.
#[test]
fn a_device_vanishing_at_any_read_is_device_gone() {
    let (_, map) = device();
    let total = min_reads(&map) + 14;
    for n in (0..total).rev().step_by(7).chain([total - 1, total - 2, total - 3, total - 8]) {
        let (mut nic, map) = device();
        nic.push_record(&inflated(1));
        nic.push_record(&inflated(2));
        nic.latency = 0;
        nic.vanish_after_reads(n);
        let e = read_snapshot(&mut nic, &map, &cfg()).unwrap_err();
        assert!(e.to_string().starts_with("device gone"), "vanish after {n} reads: {e}");
    }
}

/// Every corrupt per-switch descriptor is refused naming the block and its address.
#[test]
fn a_corrupt_per_switch_descriptor_names_the_block() {
    let lat1 = ps::LAT0 + ps::LAT_STRIDE;
    let way1 = ps::WAY0 + ps::WAY_STRIDE;
    let cases: Vec<(u32, u32, &str)> = vec![
        (ps::SLOT_BITS, 365, "SLOT_BITS at 0x53c reads 365, this driver reads 366-bit slots"),
        (ps::LATENCY_ARRAYS, 0, "LATENCY_ARRAYS at 0x530 reads 0 (1..=3"),
        (ps::LATENCY_ARRAYS, 4, "LATENCY_ARRAYS at 0x530 reads 4"),
        (ps::TABLE_WAYS, 3, "TABLE_WAYS at 0x534 reads 3 (1..=2"),
        (ps::TABLE_DEPTH, 0, "key table: array 0: depth must be at least 1"),
        (ps::LATENCY_SHIFT, 21, "latency_shift 21"),
        (ps::LATENCY_SHIFT, 300, "LATENCY_SHIFT at 0x52c reads 300"),
        (lat1 + ps::A_WIDTHS, 33 << 8 | 16, "sum_width 33"),
        (lat1 + ps::A_WIDTHS, 0x1_0000 | 16, "latency array 1: widths 0x10010"),
        (lat1 + ps::A_DEPTH, 0, "latency tower: array 1: depth must be at least 1"),
        (lat1 + ps::A_CRC + crc::FLAGS, 4, "latency array 1: CRC flags 0x4"),
        (way1 + ps::A_CRC + crc::POLY, 0x04C1_1DB6, "key table: array 1: CRC polynomial 0x04c11db6"),
        (ps::MODE, 1, "MODE at 0x510 reads 1, not CM (0) or ACU (2)"),
        (
            way1 + ps::A_WINDOW,
            0x1004,
            "per-switch table way 1 window at 0x1004 overlaps towersketch array 0 window at 0x1000",
        ),
        (
            ps::LAT0 + ps::A_WINDOW,
            0x7FFF_FFF0,
            "per-switch latency array 0 window at 0x7ffffff0: register access",
        ),
    ];
    for (reg, value, named) in cases {
        let (t, s) = flows();
        let mut nic = EmulatedNic::with_per_switch(FW, &t, &s, &half());
        let b = base(&nic);
        assert_eq!(b, 0x500, "the messages above name offsets in the block at 0x500");
        nic.poke(b + reg, value);
        let e = DeviceMap::discover(&mut nic).unwrap_err();
        assert!(matches!(e, BlockError::Invalid { block: "per-switch", at: 0x500, .. }), "{named}: {e}");
        let msg = e.to_string();
        assert!(msg.starts_with("per-switch block at 0x500: ") && msg.contains(named), "{named}: {msg}");
    }
}

/// Mode and thresholds are written, read back, and what the next readout's table section
/// states, even through a map discovered before the change.
#[test]
fn configuration_is_written_read_back_and_read_out() {
    let (mut nic, map) = device();
    let p = Log2Params::DEFAULT;
    let table = log2_table(p);
    assert_eq!(
        PerSwitchConfig::nic_default().inflate_threshold,
        log2_fx(&table, p, 5).unwrap(),
        "Delta_l = 5"
    );
    let want = PerSwitchConfig::from_ratio_x256(InsertMode::Acu, 640, 1500);
    assert_eq!(want.inflate_threshold, log2_fx(&table, p, 640).unwrap() - (8 << p.frac));
    assert_eq!(write_per_switch_config(&mut nic, &map, &want).unwrap(), want);
    assert_eq!(read_per_switch_config(&mut nic, &map).unwrap(), want);
    let b = base(&nic);
    assert_eq!(nic.read32(b + ps::MODE).unwrap(), InsertMode::Acu as u32);
    assert_eq!(nic.read32(b + ps::TABLE_THRESHOLD).unwrap(), 1500);

    let (snap, _) = read_snapshot(&mut nic, &map, &cfg()).unwrap();
    let (l, t, _) = sections(&snap);
    assert!(matches!(l, PerSwitchSection::LatencyTower { mode: InsertMode::Acu, .. }), "{l:?}");
    assert!(matches!(t, PerSwitchSection::KeyTable { threshold: 1500, .. }), "{t:?}");

    let cu = PerSwitchConfig { mode: InsertMode::Cu, ..want };
    assert!(matches!(write_per_switch_config(&mut nic, &map, &cu), Err(ConfigError::Mode(InsertMode::Cu))));
    let wide = PerSwitchConfig { inflate_threshold: 1 << 22, ..want };
    let e = write_per_switch_config(&mut nic, &map, &wide).unwrap_err();
    assert!(e.to_string().contains("INFLATE_THRESHOLD 0x400000 does not fit the register's 22 bits"), "{e}");
    assert_eq!(read_per_switch_config(&mut nic, &map).unwrap(), want, "refused before any write");
}

/// A device that does not keep a write is named, register and values.
#[test]
fn a_register_the_device_does_not_keep_is_named() {
    struct Ignores<'a>(&'a mut EmulatedNic, u32);
    impl RegisterAccess for Ignores<'_> {
        fn bar_size(&self) -> u64 {
            self.0.bar_size()
        }
        fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
            self.0.read32(offset)
        }
        fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
            if offset == self.1 {
                return Ok(());
            }
            self.0.write32(offset, value)
        }
    }
    let (mut nic, map) = device();
    let reg = base(&nic) + ps::TABLE_THRESHOLD;
    let want = PerSwitchConfig::from_ratio_x256(InsertMode::Cm, 256 * 3, 99);
    let e = write_per_switch_config(&mut Ignores(&mut nic, reg), &map, &want).unwrap_err();
    assert!(
        matches!(e, ConfigError::NotKept { register: "TABLE_THRESHOLD", wrote: 99, read: 750, .. }),
        "{e}"
    );
    assert_eq!(
        e.to_string(),
        format!("per-switch TABLE_THRESHOLD at {reg:#x}: wrote 0x63, the device kept 0x2ee")
    );
}

/// The NIC's default geometry with the per-switch half: one read per window word (the flow
/// sketches' 385,024 plus 327,680 latency and 12,288 table words), the 11 fixed reads, the
/// half's 7, and one per record word drained.
#[test]
fn default_geometry_costs_one_read_per_word_plus_eighteen_and_the_records() {
    let (t, s, p) =
        (TowerGeometry::sketchint_fpga(), SuMaxGeometry::nic_default(), PerSwitchGeometry::nic_default());
    let mut nic = EmulatedNic::with_per_switch(FW, &t, &s, &p);
    nic.latency = 0;
    let map = DeviceMap::discover(&mut nic).unwrap();
    (1..=10).for_each(|n| nic.push_record(&inflated(n)));
    let (snap, stats) = read_snapshot(&mut nic, &map, &cfg()).unwrap();
    let flow_words = (1 << 16) + (1 << 15) + (1 << 14) + 3 * 8192 * 11;
    let half_words = 2 * ((1 << 16) + (1 << 16) + (1 << 15)) + 2 * 512 * 12;
    assert_eq!((half_words, stats.window_words), (339_968, 724_992));
    assert_eq!(stats.window_words, flow_words + half_words);
    assert_eq!(min_reads(&map), 725_010);
    assert_eq!((stats.record_words, stats.reads), (70, 725_080));
    assert_eq!(stats.mmio_time(Duration::from_micros(1)), Duration::from_micros(725_080));
    let packed: Vec<usize> = snap
        .per_switch
        .iter()
        .map(|s| match s {
            PerSwitchSection::LatencyTower { arrays, .. } => arrays.iter().map(Vec::len).sum(),
            PerSwitchSection::KeyTable { ways, .. } => ways.iter().map(Vec::len).sum(),
            PerSwitchSection::Records { stream } => stream.len(),
        })
        .collect();
    // 2^16 x (32, 48) + 2^15 x 64 bits; 2 x 512 slots of 366 bits; 10 records of 28 bytes.
    assert_eq!(packed, [262_144 + 393_216 + 262_144, 2 * 23_424, 280]);
}
