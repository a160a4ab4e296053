//! The streamed readout against the register-level emulation, whose stream engine is the
//! software twin of the core's: the snapshot a stream gives equals the register readout's
//! of the same banks, and every way a stream can arrive broken (a flipped bit, cut short,
//! SEQUENCE moving under it, no channel, no stream block) is an error that names it, with
//! no snapshot file written.

mod support;
use smartnic_driver::access::RegisterAccess;
use smartnic_driver::blocks::DeviceMap;
use smartnic_driver::contract::geometry::{SuMaxGeometry, TowerGeometry};
use smartnic_driver::contract::packing::mask;
use smartnic_driver::contract::regs::layout::FirmwareInfo;
use smartnic_driver::contract::snapshot::source;
use smartnic_driver::contract::wire::readout::{stream_words, StreamError};
use smartnic_driver::emulated::{EmulatedNic, StreamFault};
use smartnic_driver::readout::{
    read_snapshot, read_snapshot_to_file, stream::specs, ReadoutConfig, ReadoutError, ReadoutPath,
};
use std::time::Duration;
use support::small_device as device;

fn cfg(path: ReadoutPath) -> ReadoutConfig {
    ReadoutConfig {
        source: source::SIMULATOR,
        poll_timeout: Duration::from_millis(20),
        path,
        ..Default::default()
    }
}

/// Fills the active bank of every window with values that fit their widths (the largest
/// among them); table slots stay empty (their hop counts are checked separately).
fn load(nic: &mut EmulatedNic, map: &DeviceMap, seed: u32) {
    let specs = specs(map).unwrap();
    let tables = map.per_switch.as_ref().unwrap().table_windows.len();
    for (i, spec) in specs.iter().enumerate().take(specs.len() - tables) {
        let n = spec.widths.len();
        for (k, v) in nic.active_mut(i).iter_mut().enumerate() {
            let w = spec.widths[k % n];
            let max = mask(w) as u32;
            *v = if k % 7 == 0 { max } else { (k as u32 ^ seed).wrapping_mul(0x9E37_79B9) & max };
        }
    }
    nic.set_active_packets(1000 + seed as u64);
}

#[test]
fn a_streamed_snapshot_equals_the_register_readout_of_the_same_banks() {
    let (mut a, map) = device();
    let (mut b, _) = device();
    assert!(map.stream.is_some());
    for seed in [1, 2] {
        load(&mut a, &map, seed);
        load(&mut b, &map, seed);
        a.enable_stream();
        let (sa, st) = read_snapshot(&mut a, &map, &cfg(ReadoutPath::Auto)).unwrap();
        let (sb, rt) = read_snapshot(&mut b, &map, &cfg(ReadoutPath::Auto)).unwrap();
        let got = st.stream.expect("a device with a channel streams");
        assert!(rt.stream.is_none(), "a device without one reads registers");
        assert_eq!(got.words as usize, stream_words(&specs(&map).unwrap()));
        assert_eq!((sa.epoch, sa.packets), (sb.epoch, sb.packets));
        assert_eq!(sa.sections, sb.sections);
        assert_eq!(sa.per_switch, sb.per_switch);
        assert!(st.reads * 20 < rt.reads, "{} reads by stream, {} by registers", st.reads, rt.reads);
    }
}

#[test]
fn a_broken_stream_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.snap");
    let faults = [
        (StreamFault::FlipBit { word: 9, bit: 3 }, "CRC"),
        (StreamFault::FlipBit { word: 0, bit: 0 }, "not a readout stream"),
        (StreamFault::Truncate { words: 30 }, "truncated"),
    ];
    for (fault, says) in faults {
        let (mut nic, map) = device();
        load(&mut nic, &map, 5);
        nic.enable_stream();
        nic.fault_next_stream(fault);
        let e = read_snapshot_to_file(&mut nic, &map, &cfg(ReadoutPath::Stream), &out).unwrap_err();
        assert!(matches!(e, ReadoutError::Stream { .. }), "{fault:?}: {e}");
        assert!(e.to_string().contains(says), "{fault:?}: {e}");
        assert!(!out.exists(), "{fault:?}: a file was written");
    }
    let ReadoutError::Stream { error: StreamError::Crc { .. }, .. } = ({
        let (mut nic, map) = device();
        nic.enable_stream();
        nic.fault_next_stream(StreamFault::FlipBit { word: 40, bit: 63 });
        read_snapshot(&mut nic, &map, &cfg(ReadoutPath::Stream)).unwrap_err()
    }) else {
        panic!("a flipped payload bit is a CRC error");
    };
}

#[test]
fn a_stream_torn_by_a_swap_is_read_again_then_refused() {
    let (mut nic, map) = device();
    load(&mut nic, &map, 3);
    nic.enable_stream();
    // One torn stream: read again, the snapshot is good.
    nic.fault_next_stream(StreamFault::Torn);
    let (_, st) = read_snapshot(&mut nic, &map, &cfg(ReadoutPath::Stream)).unwrap();
    assert_eq!(st.retries, 1);
    // Torn on every pass: refused as torn.
    for _ in 0..4 {
        nic.fault_next_stream(StreamFault::Torn);
    }
    let e = read_snapshot(&mut nic, &map, &cfg(ReadoutPath::Stream)).unwrap_err();
    assert!(matches!(e, ReadoutError::Torn { tries: 4, .. }), "{e}");
}

#[test]
fn no_channel_or_no_stream_block_is_named() {
    let (mut nic, map) = device();
    let e = read_snapshot(&mut nic, &map, &cfg(ReadoutPath::Stream)).unwrap_err();
    assert!(matches!(e, ReadoutError::NoChannel), "{e}");
    let (t, s) = (TowerGeometry::from_widths_depths(&[(8, 64)]), SuMaxGeometry::with_depth(1, 4));
    let mut flows_only = EmulatedNic::new(FirmwareInfo::default(), &t, &s);
    let m = DeviceMap::discover(&mut flows_only).unwrap();
    assert!(m.stream.is_none());
    let e = read_snapshot(&mut flows_only, &m, &cfg(ReadoutPath::Stream)).unwrap_err();
    assert!(matches!(e, ReadoutError::NoStream), "{e}");
    assert!(e.to_string().contains("by registers"), "{e}");
    // Auto falls back to registers on both.
    assert!(read_snapshot(&mut nic, &map, &cfg(ReadoutPath::Auto)).unwrap().1.stream.is_none());
    assert_eq!(flows_only.read32(0).unwrap(), smartnic_driver::contract::regs::block_type::FIRMWARE_ID);
}
