use super::*;
use smartnic_contract::snapshot::source;

fn sample() -> Snapshot {
    let tower = TowerGeometry::from_widths_depths(&[(2, 40), (4, 20), (8, 10)]);
    let tower_arrays = tower
        .arrays
        .iter()
        .map(|a| (0..packed_len(a.depth, a.width as u64)).map(|b| b as u8 ^ a.width).collect())
        .collect();
    let sumax = SuMaxGeometry::with_depth(2, 7);
    let bits = sumax.bucket_bits();
    let sumax_arrays = (0..2).map(|a| vec![a as u8 + 1; packed_len(7, bits)]).collect();
    Snapshot {
        source: source::SIMULATOR,
        epoch: 42,
        time_ns: 1_700_000_000_000_000_000,
        firmware: FirmwareId { device: 0x7038, version: 0x0001_0000, build_time: 5, git_hash: 0xabcdef01 },
        packets: 123_456,
        sections: vec![
            Section::Tower { geometry: tower, mode: InsertMode::Acu, arrays: tower_arrays },
            Section::SuMax { geometry: sumax, arrays: sumax_arrays },
        ],
    }
}

#[test]
fn round_trip() {
    let s = sample();
    assert_eq!(Snapshot::decode(&s.encode()).unwrap(), s);
}

#[test]
fn checksum_matches_contract_parameters() {
    let ours = smartnic_contract::snapshot::CHECKSUM.checksum(b"123456789");
    assert_eq!(CRC32C.checksum(b"123456789"), ours);
}

#[test]
fn every_single_bit_flip_is_detected() {
    let bytes = sample().encode();
    for i in 0..bytes.len() {
        let mut b = bytes.clone();
        b[i] ^= 0x10;
        assert!(Snapshot::decode(&b).is_err(), "flip at byte {i} went unnoticed");
    }
}

#[test]
fn every_truncation_is_an_error() {
    let bytes = sample().encode();
    for len in 0..bytes.len() {
        assert!(Snapshot::decode(&bytes[..len]).is_err(), "truncated to {len} accepted");
    }
}

/// Re-seals a modified body with a valid checksum, to reach the structural checks.
fn reseal(mut body: Vec<u8>) -> Vec<u8> {
    let crc = CRC32C.checksum(&body);
    body.extend_from_slice(&crc.to_le_bytes());
    body
}

#[test]
fn structural_errors_are_named() {
    let bytes = sample().encode();
    let body = bytes[..bytes.len() - 4].to_vec();
    let mut v = body.clone();
    v[8] = 9;
    assert!(matches!(Snapshot::decode(&reseal(v)), Err(SnapshotError::Version(9))));
    assert!(matches!(Snapshot::decode(b"NOTASNAPxxxxxx"), Err(SnapshotError::BadMagic)));
    // The first section's kind sits right after the fixed 54-byte header, its mode after it.
    let mut v = body.clone();
    v[54] = 77;
    assert!(matches!(Snapshot::decode(&reseal(v)), Err(SnapshotError::UnknownKind { section: 0, kind: 77 })));
    let mut v = body.clone();
    v[56] = 9;
    assert!(matches!(Snapshot::decode(&reseal(v)), Err(SnapshotError::Invalid { section: 0, .. })));
    let mut v = body;
    v.push(0);
    assert!(matches!(Snapshot::decode(&reseal(v)), Err(SnapshotError::Trailing(1))));
}

#[test]
fn wrong_array_length_is_rejected() {
    let mut s = sample();
    if let Section::Tower { arrays, .. } = &mut s.sections[0] {
        arrays[1].pop();
    }
    let err = Snapshot::decode(&s.encode()).unwrap_err().to_string();
    assert!(err.contains("array 1 holds 9 bytes, its geometry needs 10"), "{err}");
}

#[test]
fn write_is_atomic_and_readable() {
    let dir = std::env::temp_dir().join(format!("snap-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("a.snap");
    sample().write_file(&path).unwrap();
    assert_eq!(Snapshot::read_file(&path).unwrap(), sample());
    assert!(!temp_path(&path).exists());
    let missing = Snapshot::read_file(&dir.join("missing.snap")).unwrap_err().to_string();
    assert!(missing.contains("missing.snap"), "{missing}");
    std::fs::remove_dir_all(&dir).unwrap();
}

proptest::proptest! {
    #[test]
    fn random_bytes_never_panic(data in proptest::collection::vec(proptest::num::u8::ANY, 0..200)) {
        let _ = Snapshot::decode(&data);
        let mut with_magic = MAGIC.to_vec();
        with_magic.extend_from_slice(&data);
        let _ = Snapshot::decode(&with_magic);
    }
}

/// A one-section SuMax snapshot with `edit` applied to its geometry (arrays sized to the
/// edited geometry, so only the field itself can be at fault).
fn sumax_snapshot(edit: impl FnOnce(&mut SuMaxGeometry)) -> Snapshot {
    let mut g = SuMaxGeometry::with_depth(2, 5);
    edit(&mut g);
    let len = packed_len(g.depth, g.bucket_bits());
    let arrays = g.hashes.iter().map(|_| vec![0xA5; len]).collect();
    Snapshot { sections: vec![Section::SuMax { geometry: g, arrays }], ..sample() }
}

/// Hostile geometry fields are refused on decode, by the contract's validation, with an
/// error naming the section and the field (a time shift of 62 or more used to decode and
/// then print wrong times, or overflow a shift in debug builds).
#[test]
fn hostile_geometry_fields_are_named() {
    type Edit = fn(&mut SuMaxGeometry);
    let cases: [(Edit, &str); 9] = [
        (|g| g.time_shift = 62, "time_shift 62"),
        (|g| g.time_shift = 63, "time_shift 63"),
        (|g| g.time_shift = 255, "time_shift 255"),
        (|g| g.time_width = 0, "time_width 0"),
        (|g| g.size_width = 33, "size_width 33"),
        (|g| g.delay_width = 0, "delay_width 0"),
        (|g| g.delay_cells = 0, "delay_cells 0"),
        (|g| g.delay_cells = 200, "delay_cells 200"),
        (|g| g.hashes[0].poly = 0x1EDC_6F40, "CRC polynomial 0x1edc6f40"),
    ];
    for (edit, named) in cases {
        let bytes = sumax_snapshot(edit).encode();
        let e = Snapshot::decode(&bytes).unwrap_err();
        assert!(matches!(e, SnapshotError::Invalid { section: 0, .. }), "{named}: {e}");
        let msg = e.to_string();
        assert!(msg.starts_with("snapshot section 0: ") && msg.contains(named), "{named}: {msg}");
    }
    let mut tower = sample();
    if let Section::Tower { geometry, .. } = &mut tower.sections[0] {
        geometry.arrays[2].hash.poly = 0x8000_0000;
    }
    let e = Snapshot::decode(&tower.encode()).unwrap_err().to_string();
    assert!(e.contains("array 2: CRC polynomial 0x80000000 lacks the x^0 term"), "{e}");
}

/// The same refusal through a file on disk, as `report` and `query` read it.
#[test]
fn hostile_time_shift_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hostile.snap");
    std::fs::write(&path, sumax_snapshot(|g| g.time_shift = 63).encode()).unwrap();
    let e = Snapshot::read_file(&path).unwrap_err().to_string();
    assert!(e.contains("time_shift 63 with time_width 32"), "{e}");
}

/// `-o DIR` with an existing directory: a clear error, and no temporary file anywhere.
#[test]
fn writing_onto_a_directory_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("out");
    std::fs::create_dir(&target).unwrap();
    let e = sample().write_file(&target).unwrap_err();
    assert!(matches!(e, SnapshotError::IsDirectory(_)), "{e}");
    assert!(e.to_string().contains("is a directory"), "{e}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, ["out"], "only the directory itself remains");
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
}

/// A rename that fails (here onto a non-empty directory, bypassing the directory check)
/// removes the temporary file it wrote.
#[test]
fn a_failed_rename_removes_the_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("busy");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("keep"), b"x").unwrap();
    assert!(write_atomically(&target, b"data").is_err());
    assert!(!temp_path(&target).exists());
    assert!(target.join("keep").exists());
}
