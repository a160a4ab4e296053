//! The readout protocol end to end against the register-level emulation (and a file-backed
//! BAR): exact counters, exact transaction counts, and every fault an error with no file.

use smartnic_driver::access::{AccessError, RegisterAccess};
use smartnic_driver::backend::FileBar;
use smartnic_driver::blocks::{BlockError, DeviceMap};
use smartnic_driver::contract::geometry::{marker, InsertMode, SuMaxGeometry, TowerGeometry};
use smartnic_driver::contract::regs::layout::FirmwareInfo;
use smartnic_driver::contract::regs::{epoch, header, DEVICE_GONE};
use smartnic_driver::contract::snapshot::source;
use smartnic_driver::emulated::EmulatedNic;
use smartnic_driver::readout::{
    min_reads, read_snapshot, read_snapshot_to_file, ReadoutConfig, ReadoutError, FIXED_WRITES,
};
use smartnic_driver::snapshot::{FirmwareId, Section, Snapshot, SnapshotError};
use std::time::Duration;

const FW: FirmwareInfo =
    FirmwareInfo { device: 0x7038, version: 0x0001_0002, build_time: 1_731_000_000, git_hash: 0x5EED };

fn small() -> (TowerGeometry, SuMaxGeometry) {
    (TowerGeometry::from_widths_depths(&[(8, 64), (16, 32), (32, 16)]), SuMaxGeometry::with_depth(2, 8))
}

fn cfg() -> ReadoutConfig {
    ReadoutConfig { source: source::SIMULATOR, poll_timeout: Duration::from_millis(20), ..Default::default() }
}

/// Reads `width`-bit entry `i` of a packed array, bit by bit (independent of the packer).
fn get(bytes: &[u8], off: u64, width: u8) -> u32 {
    (0..width as u64).fold(0, |v, b| {
        let bit = off + b;
        v | (((bytes[(bit / 8) as usize] >> (bit % 8)) & 1) as u32) << b
    })
}

/// Fills every active-bank window with distinct values that fit their counters (including
/// the overflow marker) and returns them.
fn load(nic: &mut EmulatedNic, t: &TowerGeometry, s: &SuMaxGeometry, seed: u32) -> Vec<Vec<u32>> {
    let widths = s.cell_widths();
    let mut all = Vec::new();
    for w in 0..nic.tower_arrays() + s.hashes.len() {
        let bank = nic.active_mut(w);
        for (i, v) in bank.iter_mut().enumerate() {
            let width = if w < t.arrays.len() { t.arrays[w].width } else { widths[i % widths.len()] };
            let x = (i as u32 ^ seed).wrapping_mul(0x9E37_79B9).rotate_left(w as u32 + 7);
            *v = if i % 97 == 3 { marker(width) } else { x & marker(width) };
        }
        all.push(bank.to_vec());
    }
    all
}

/// Checks that `snap` holds exactly `words` in the snapshot layout.
fn assert_holds(snap: &Snapshot, t: &TowerGeometry, s: &SuMaxGeometry, words: &[Vec<u32>]) {
    let Section::Tower { geometry, mode, arrays } = &snap.sections[0] else { panic!("tower first") };
    assert_eq!((geometry, *mode), (t, InsertMode::Cm));
    for (a, (g, bytes)) in geometry.arrays.iter().zip(arrays).enumerate() {
        for (i, &v) in words[a].iter().enumerate() {
            assert_eq!(get(bytes, i as u64 * g.width as u64, g.width), v, "tower array {a} counter {i}");
        }
    }
    let Section::SuMax { geometry, arrays } = &snap.sections[1] else { panic!("sumax second") };
    assert_eq!(geometry, s);
    let widths = s.cell_widths();
    for (a, bytes) in arrays.iter().enumerate() {
        let mut off = 0u64;
        for (i, &v) in words[t.arrays.len() + a].iter().enumerate() {
            let w = widths[i % widths.len()];
            assert_eq!(get(bytes, off, w), v, "sumax array {a} word {i}");
            off += w as u64;
        }
    }
}

#[test]
fn idle_bank_counters_come_back_exactly_and_the_bank_is_cleared() {
    let (t, s) = small();
    let mut nic = EmulatedNic::new(FW, &t, &s);
    let map = DeviceMap::discover(&mut nic).unwrap();
    let words = load(&mut nic, &t, &s, 1);
    nic.set_active_packets(123_456_789_012);
    let (snap, stats) = read_snapshot(&mut nic, &map, &cfg()).unwrap();
    assert_eq!(snap.source, source::SIMULATOR);
    assert_eq!(snap.epoch, 0, "the first swap makes epoch 0 idle");
    assert_eq!(snap.packets, 123_456_789_012);
    assert_eq!(
        snap.firmware,
        FirmwareId {
            device: FW.device,
            version: FW.version,
            build_time: FW.build_time,
            git_hash: FW.git_hash
        }
    );
    assert_holds(&snap, &t, &s, &words);
    // The idle bank was cleared, the new active bank is the old (zero) idle one.
    for w in 0..words.len() {
        assert!(nic.idle(w).iter().all(|&v| v == 0), "window {w} cleared");
    }
    assert_eq!((nic.epoch(), nic.sequence(), nic.idle_packets()), (1, 2, 0));
    // Latency 2: three STATUS reads per swap and per clear instead of one.
    assert_eq!(stats.status_polls, 6);
    assert_eq!(stats.reads, min_reads(&map) + 4);
    assert_eq!((stats.writes, stats.retries), (FIXED_WRITES, 0));

    // The next epoch's counters, epoch number 1.
    let words = load(&mut nic, &t, &s, 2);
    let (snap, _) = read_snapshot(&mut nic, &map, &cfg()).unwrap();
    assert_eq!((snap.epoch, snap.packets), (1, 0));
    assert_holds(&snap, &t, &s, &words);
}

#[test]
fn default_geometry_costs_one_read_per_counter_plus_eleven() {
    let (t, s) = (TowerGeometry::sketchint_fpga(), SuMaxGeometry::nic_default());
    let mut nic = EmulatedNic::new(FW, &t, &s);
    nic.latency = 0;
    nic.set_mode(InsertMode::Acu);
    let map = DeviceMap::discover(&mut nic).unwrap();
    let words = load(&mut nic, &t, &s, 3);
    let (snap, stats) = read_snapshot(&mut nic, &map, &cfg()).unwrap();
    let Section::Tower { mode, .. } = &snap.sections[0] else { panic!() };
    assert_eq!(*mode, InsertMode::Acu);
    let mut tower_default = snap.clone();
    if let Section::Tower { mode, .. } = &mut tower_default.sections[0] {
        *mode = InsertMode::Cm;
    }
    assert_holds(&tower_default, &t, &s, &words);
    let window_words = (1 << 16) + (1 << 15) + (1 << 14) + 3 * 8192 * 11;
    assert_eq!(stats.window_words, window_words);
    assert_eq!(stats.reads, window_words + 11);
    assert_eq!(stats.reads, min_reads(&map));
    assert_eq!(stats.bytes_read, 4 * (window_words + 11));
    assert_eq!((stats.writes, stats.bytes_written), (2, 8));
    // ~0.385 s of MMIO at 1 us per non-posted read.
    assert_eq!(stats.mmio_time(Duration::from_micros(1)), Duration::from_micros(385_035));
    // The file holds the packed counters: 196,608 + 688,128 bytes.
    let packed: usize = snap
        .sections
        .iter()
        .map(|s| match s {
            Section::Tower { arrays, .. } | Section::SuMax { arrays, .. } => {
                arrays.iter().map(Vec::len).sum::<usize>()
            }
        })
        .sum();
    assert_eq!(packed, 196_608 + 688_128);
}

#[test]
fn snapshot_file_round_trips_and_damaged_files_are_rejected() {
    let (t, s) = small();
    let mut nic = EmulatedNic::new(FW, &t, &s);
    let map = DeviceMap::discover(&mut nic).unwrap();
    load(&mut nic, &t, &s, 4);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("epoch.snap");
    let (snap, _) = read_snapshot_to_file(&mut nic, &map, &cfg(), &path).unwrap();
    assert_eq!(Snapshot::read_file(&path).unwrap(), snap);
    let good = std::fs::read(&path).unwrap();

    let cut = dir.path().join("cut.snap");
    for len in [0, 7, 20, good.len() / 2, good.len() - 1] {
        std::fs::write(&cut, &good[..len]).unwrap();
        assert!(Snapshot::read_file(&cut).is_err(), "truncated to {len} bytes");
    }
    let flipped = dir.path().join("flipped.snap");
    let mut bad = good.clone();
    let mid = bad.len() / 2;
    bad[mid] ^= 0x10;
    std::fs::write(&flipped, &bad).unwrap();
    assert!(matches!(Snapshot::read_file(&flipped), Err(SnapshotError::Checksum { .. })));
    assert!(matches!(Snapshot::read_file(&dir.path().join("none.snap")), Err(SnapshotError::Io { .. })));
}

/// Runs a readout that must fail, checks no file (nor temporary) was written, returns the error.
fn fails(nic: &mut EmulatedNic, map: &DeviceMap, cfg: &ReadoutConfig) -> ReadoutError {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("epoch.snap");
    let e = read_snapshot_to_file(nic, map, cfg, &path).map(|_| ()).unwrap_err();
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "a failed readout wrote a file ({e})");
    e
}

fn ready() -> (EmulatedNic, DeviceMap) {
    let (t, s) = small();
    let mut nic = EmulatedNic::new(FW, &t, &s);
    let map = DeviceMap::discover(&mut nic).unwrap();
    load(&mut nic, &t, &s, 5);
    (nic, map)
}

#[test]
fn a_device_vanishing_at_any_read_is_device_gone() {
    let (mut nic, map) = ready();
    let total = {
        let (mut probe, _) = ready();
        read_snapshot(&mut probe, &map, &cfg()).unwrap().1.reads
    };
    for k in 0..total {
        let (mut n, _) = ready();
        n.vanish_after_reads(k);
        let e = fails(&mut n, &map, &cfg());
        assert!(
            matches!(e, ReadoutError::Access(AccessError::DeviceGone { .. })),
            "vanish after {k} reads: {e}"
        );
        assert!(e.to_string().contains("device gone"));
    }
    nic.vanish_after_reads(total);
    read_snapshot(&mut nic, &map, &cfg()).expect("vanishing after the last read does not matter");
}

#[test]
fn a_torn_read_is_retried_and_then_refused() {
    let (t, s) = small();
    let (mut nic, map) = ready();
    let words: Vec<Vec<u32>> = (0..5).map(|w| nic.active_mut(w).to_vec()).collect();
    nic.tear_next_readouts(2);
    let (snap, stats) = read_snapshot(&mut nic, &map, &cfg()).unwrap();
    assert_eq!(stats.retries, 2);
    assert_eq!(stats.reads, min_reads(&map) + 4 + 2 * (map.window_words() + 7));
    assert_holds(&snap, &t, &s, &words);

    let (mut nic, map) = ready();
    nic.tear_next_readouts(100);
    let e = fails(&mut nic, &map, &ReadoutConfig { max_retries: 2, ..cfg() });
    assert!(matches!(e, ReadoutError::Torn { tries: 3, .. }), "{e}");
    assert!(e.to_string().starts_with("torn snapshot"), "{e}");
    assert!(nic.idle(0).iter().any(|&v| v != 0), "a torn readout must not clear the bank");
}

#[test]
fn stuck_swap_and_stuck_clear_time_out() {
    let (mut nic, map) = ready();
    nic.stick_swap();
    let e = fails(&mut nic, &map, &cfg());
    assert!(matches!(e, ReadoutError::Timeout { what: "SWAP", .. }), "{e}");
    assert!(e.to_string().contains("SWAP did not complete"), "{e}");

    let (mut nic, map) = ready();
    nic.stick_clear();
    let e = fails(&mut nic, &map, &cfg());
    assert!(matches!(e, ReadoutError::Timeout { what: "CLEAR", .. }), "{e}");
    // The next readout waits for the stuck clear before swapping, and gives up too.
    let e = fails(&mut nic, &map, &cfg());
    assert!(
        matches!(e, ReadoutError::Timeout { what: "a swap or clear started by someone else", .. }),
        "{e}"
    );
}

#[test]
fn a_counter_wider_than_its_array_is_refused() {
    let (mut nic, map) = ready();
    nic.active_mut(0)[9] = 0x1FF; // 8-bit array
    let e = fails(&mut nic, &map, &cfg());
    assert!(
        matches!(&e, ReadoutError::CounterOutOfRange { index: 9, value: 0x1FF, width: 8, window } if window == "towersketch array 0"),
        "{e}"
    );
    // All ones in a 16-bit array while the device is still there.
    let (mut nic2, map2) = ready();
    nic2.active_mut(1)[0] = DEVICE_GONE;
    let e = fails(&mut nic2, &map2, &cfg());
    assert!(matches!(e, ReadoutError::CounterOutOfRange { value: DEVICE_GONE, width: 16, .. }), "{e}");
}

#[test]
fn a_corrupt_register_chain_is_named() {
    type Is = fn(&BlockError) -> bool;
    let cases: [(u32, u32, Is); 4] = [
        (0x200 + header::NEXT, 0x100, |e| matches!(e, BlockError::Loop { at: 0x200, next: 0x100 })),
        (0x100 + header::NEXT, 0x1FE, |e| matches!(e, BlockError::Misaligned { .. })),
        (0x300 + header::NEXT, 0x7FFF_F000, |e| matches!(e, BlockError::OutOfRange { at: 0x300, .. })),
        (header::TYPE, DEVICE_GONE, |e| {
            matches!(e, BlockError::Access(AccessError::DeviceGone { offset: 0 }))
        }),
    ];
    for (offset, value, is) in cases {
        let (mut nic, _) = ready();
        nic.poke(offset, value);
        let e = DeviceMap::discover(&mut nic).unwrap_err();
        assert!(is(&e), "poke {offset:#x} = {value:#x}: {e}");
    }
}

#[test]
fn a_plain_file_bar_has_no_epoch_engine_and_says_so() {
    let (t, s) = small();
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("bar.img");
    let mut bar = FileBar::create_device(&img, FW, &t, &s).unwrap();
    let map = DeviceMap::discover(&mut bar).unwrap();
    assert_eq!(map.tower.as_ref().unwrap().geometry, t);
    let out = dir.path().join("epoch.snap");
    let e = read_snapshot_to_file(&mut bar, &map, &cfg(), &out).map(|_| ()).unwrap_err();
    assert!(matches!(e, ReadoutError::SwapIgnored { sequence: 0 }), "{e}");
    assert!(!out.exists());
    // STATUS with reserved bits set is not an epoch block this driver understands.
    bar.write32(map.epoch + epoch::STATUS, 0x100).unwrap();
    let e = read_snapshot_to_file(&mut bar, &map, &cfg(), &out).map(|_| ()).unwrap_err();
    assert!(matches!(e, ReadoutError::BadStatus { status: 0x100 }), "{e}");
    assert!(!out.exists());
    // A device that disappears under the file (all ones everywhere) is device gone.
    let len = bar.bar_size();
    std::fs::write(&img, vec![0xFF; len as usize]).unwrap();
    let e = DeviceMap::discover(&mut bar).unwrap_err();
    assert!(matches!(e, BlockError::Access(AccessError::DeviceGone { offset: 0 })), "{e}");
    let e = read_snapshot(&mut bar, &map, &cfg()).map(|_| ()).unwrap_err();
    assert!(matches!(e, ReadoutError::Access(AccessError::DeviceGone { .. })), "{e}");
}
