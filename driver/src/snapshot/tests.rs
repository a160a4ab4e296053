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
        per_switch: Vec::new(),
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
    assert_eq!(checksum(b"123456789"), ours);
}

/// The fast checksum is the contract's, at every length and alignment its word loops
/// split differently (and appended piecewise, as a streamed write computes it).
#[test]
fn checksum_equals_the_contract_bitwise() {
    let contract = smartnic_contract::snapshot::CHECKSUM;
    let data: Vec<u8> = (0..5000u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
    for start in 0..9 {
        for len in (0..300).chain([1023, 1024, 1025, 4096 - start]) {
            let piece = &data[start..start + len];
            assert_eq!(checksum(piece), contract.checksum(piece), "start {start} len {len}");
            let (a, b) = piece.split_at(len / 3);
            assert_eq!(crc32c::crc32c_append(checksum(a), b), checksum(piece), "split {start} {len}");
        }
    }
}

#[test]
fn every_single_bit_flip_is_detected() {
    let bytes = sample_v2().encode();
    for i in 0..bytes.len() {
        let mut b = bytes.clone();
        b[i] ^= 0x10;
        assert!(Snapshot::decode(&b).is_err(), "flip at byte {i} went unnoticed");
    }
}

#[test]
fn every_truncation_is_an_error() {
    let bytes = sample_v2().encode();
    for len in 0..bytes.len() {
        assert!(Snapshot::decode(&bytes[..len]).is_err(), "truncated to {len} accepted");
    }
}

/// Re-seals a modified body with a valid checksum, to reach the structural checks.
fn reseal(mut body: Vec<u8>) -> Vec<u8> {
    let crc = checksum(&body);
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
    assert!(write_durably(&target, b"data").is_err());
    assert!(!temp_path(&target).exists());
    assert!(target.join("keep").exists());
}

/// [`sample`] with [`per_switch_sample`]'s sections, its record stream repeated past
/// `bytes`.
fn with_records_past(bytes: usize) -> Snapshot {
    let mut snap = Snapshot { per_switch: per_switch_sample(), ..sample() };
    let PerSwitchSection::Records { stream } = &mut snap.per_switch[2] else { panic!("records last") };
    let one = stream.clone();
    while stream.len() <= bytes {
        stream.extend_from_slice(&one);
    }
    snap
}

/// The file `write_file` streams is `encode`'s bytes exactly, with a record stream larger
/// than the write buffer (written past it) and small fields on both sides of it.
#[test]
fn the_streamed_file_is_the_encoding() {
    let snap = with_records_past(2 * WRITE_BUFFER);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.snap");
    snap.write_file(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes, snap.encode());
    assert_eq!(Snapshot::decode(&bytes).unwrap(), snap);
}

/// A writer that fails part way (a full disk) fails the write; `write_durably_with` then
/// leaves the earlier file as it was and no temporary file.
#[test]
fn a_write_failing_midway_keeps_the_old_file() {
    struct FullAfter(usize);
    impl std::io::Write for FullAfter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.0 == 0 {
                return Err(std::io::Error::new(std::io::ErrorKind::StorageFull, "disk full"));
            }
            let n = buf.len().min(self.0);
            self.0 -= n;
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let snap = sample();
    let whole = snap.encode().len();
    for room in [0, 1, 40, whole - 4, whole - 1] {
        let e = snap.write_to(FullAfter(room)).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::StorageFull, "room {room}");
    }
    snap.write_to(FullAfter(whole)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kept.snap");
    snap.write_file(&path).unwrap();
    let e = write_durably_with(&path, |f| {
        std::io::Write::write_all(f, b"part of a file")?;
        Err(std::io::Error::new(std::io::ErrorKind::StorageFull, "disk full"))
    });
    assert!(e.is_err());
    assert!(!temp_path(&path).exists());
    assert_eq!(std::fs::read(&path).unwrap(), snap.encode());
}

/// A record stream split between a spill (past its buffer, so partly in its file) and the
/// snapshot's own section is written as the one stream, the file equal to `encode` of the
/// whole; the spill file is gone afterwards.
#[test]
fn a_spilled_record_stream_is_written_whole() {
    let whole = with_records_past(3 << 20);
    let PerSwitchSection::Records { stream } = whole.per_switch[2].clone() else { panic!("records last") };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spilled.snap");
    for cut in [0, smartnic_contract::wire::record::INFLATED_LEN, stream.len() / 2, stream.len()] {
        let mut spill = RecordSpill::create(&path).unwrap();
        for piece in stream[..cut].chunks(100_000) {
            spill.append(piece).unwrap();
        }
        assert_eq!(spill.len(), cut as u64);
        let spill_path = spill.path().to_path_buf();
        let mut rest = whole.clone();
        rest.per_switch[2] = PerSwitchSection::Records { stream: stream[cut..].to_vec() };
        rest.write_file_spilled(&path, spill).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), whole.encode(), "cut at {cut}");
        assert!(!spill_path.exists(), "cut at {cut}");
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, ["spilled.snap"]);
}

/// Spilled records with no records section to end the snapshot are refused, not dropped
/// silently, and nothing is written.
#[test]
fn spilled_records_need_a_records_section() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.snap");
    let mut spill = RecordSpill::create(&path).unwrap();
    spill.append(&[0; 28]).unwrap();
    let e = sample().write_file_spilled(&path, spill).unwrap_err().to_string();
    assert!(e.contains("does not end with a records section"), "{e}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// The per-switch sections of [`sample`]: a small latency tower, a two-way table with two
/// stored flows, and two inflated-latency records.
fn per_switch_sample() -> Vec<PerSwitchSection> {
    use smartnic_contract::per_switch::{slot, KeyTableGeometry, LatencyTowerGeometry};
    use smartnic_contract::wire::record::InflatedRecord;
    let lt = LatencyTowerGeometry::from_cells(&[(4, 8, 16), (8, 12, 8)], 4);
    let lt_arrays =
        lt.arrays.iter().map(|a| vec![a.count_width ^ 0x5A; packed_len(a.depth, a.bucket_bits())]).collect();
    let table = KeyTableGeometry::with_capacity(8);
    let ways = (0..2).map(|w| table_way(table.depth, &[(w as u64 + 1, &[7, 8, 9][..w + 1])])).collect();
    let rec = |n: u8, switch_id| InflatedRecord {
        epoch: 42,
        flow: smartnic_contract::FlowKey::from_v4([10, 0, 0, n], [10, 0, 1, 1], 1000, 80, 6),
        switch_id,
        latency_ns: 9000,
    };
    let stream = [rec(1, 7), rec(2, 8)].iter().flat_map(|r| r.emit()).collect();
    assert_eq!(slot::BITS, 366);
    vec![
        PerSwitchSection::LatencyTower { geometry: lt, mode: InsertMode::Cu, arrays: lt_arrays },
        PerSwitchSection::KeyTable { geometry: table, threshold: 750, misses: 3, ways },
        PerSwitchSection::Records { stream },
    ]
}

/// One way of `depth` slots holding `(slot, path)` entries (key bytes all `slot`).
fn table_way(depth: u32, entries: &[(u64, &[u16])]) -> Vec<u8> {
    use smartnic_contract::per_switch::slot;
    let mut bits = smartnic_contract::packing::PackedBits::new(slot::BITS * depth as u64);
    for &(i, path) in entries {
        let at = i * slot::BITS;
        bits.set(at + slot::VALID, 1, 1);
        bits.set(at + slot::HOPS, slot::HOPS_WIDTH, path.len() as u32);
        for j in 0..13 {
            bits.set(at + slot::KEY + 8 * j, 8, i as u32);
        }
        for (h, &s) in path.iter().enumerate() {
            bits.set(at + slot::PATH + 16 * h as u64, slot::SWITCH_WIDTH, s as u32);
        }
    }
    bits.to_bytes()
}

/// [`sample`] with the per-switch sections: a version-2 file.
fn sample_v2() -> Snapshot {
    Snapshot { per_switch: per_switch_sample(), ..sample() }
}

#[test]
fn per_switch_sections_round_trip_as_version_2() {
    let s = sample_v2();
    let bytes = s.encode();
    assert_eq!(&bytes[8..10], &2u16.to_le_bytes());
    assert_eq!(Snapshot::decode(&bytes).unwrap(), s);
    for p in &s.per_switch {
        let one = Snapshot { per_switch: vec![p.clone()], sections: Vec::new(), ..sample() };
        assert_eq!(Snapshot::decode(&one.encode()).unwrap(), one, "{}", p.kind());
    }
}

/// A file of flow sketches alone is still written as version 1, so older readers keep
/// reading NIC readouts; and a version-1 file decodes.
#[test]
fn flow_sketches_alone_stay_version_1() {
    let bytes = sample().encode();
    assert_eq!(&bytes[8..10], &1u16.to_le_bytes());
    assert_eq!(Snapshot::decode(&bytes).unwrap(), sample());
}

/// The per-switch kinds do not exist in version 1: such a file is refused by kind.
#[test]
fn per_switch_kinds_need_version_2() {
    let bytes = sample_v2().encode();
    let mut body = bytes[..bytes.len() - 4].to_vec();
    body[8] = 1;
    let e = Snapshot::decode(&reseal(body)).unwrap_err().to_string();
    assert_eq!(e, "snapshot section 2: per-switch kind 3 in a version-1 file (it needs version 2)");
    let v3 = {
        let mut b = bytes[..bytes.len() - 4].to_vec();
        b[8] = 3;
        reseal(b)
    };
    let e = Snapshot::decode(&v3).unwrap_err().to_string();
    assert!(e.contains("version 3 is not supported (this build reads versions 1 to 2)"), "{e}");
}

/// Cutting the per-switch part anywhere (and resealing) names the field it cut; only a
/// cut inside a section's 2-byte kind tag (before the kind is known) is a plain offset.
#[test]
fn every_per_switch_truncation_names_its_field() {
    let full = sample_v2().encode();
    let body = &full[..full.len() - 4];
    // Where each per-switch section starts: the encoding of the sections before it.
    let starts: Vec<usize> = (0..3)
        .map(|k| Snapshot { per_switch: per_switch_sample()[..k].to_vec(), ..sample() }.encode().len() - 4)
        .collect();
    for cut in starts[0]..body.len() {
        let e = Snapshot::decode(&reseal(body[..cut].to_vec())).unwrap_err();
        let msg = e.to_string();
        if starts.iter().any(|&s| cut == s + 1) {
            assert!(matches!(e, SnapshotError::Malformed(at) if at == cut - 1), "cut at {cut}: {msg}");
            continue;
        }
        let named = ["latency tower", "key table", "records"].iter().any(|f| msg.contains(f));
        let at_start = starts.contains(&cut) && matches!(e, SnapshotError::Malformed(_));
        assert!(named && msg.contains("truncated at byte") || at_start, "cut at {cut}: {msg}");
    }
}

/// A one-per-switch-section snapshot with `edit` applied, resealed with its checksum.
fn edited(which: usize, edit: impl FnOnce(&mut PerSwitchSection)) -> Vec<u8> {
    let mut p = per_switch_sample().swap_remove(which);
    edit(&mut p);
    Snapshot { per_switch: vec![p], sections: Vec::new(), ..sample() }.encode()
}

/// Hostile per-switch fields are refused on decode with an error naming the section and
/// the field, through the contract's geometry rules where they apply.
#[test]
fn hostile_per_switch_fields_are_named() {
    use PerSwitchSection as P;
    type Edit = fn(&mut PerSwitchSection);
    let cases: [(usize, Edit, &str); 15] = [
        (
            0,
            |p| {
                if let P::LatencyTower { geometry, .. } = p {
                    geometry.arrays[0].count_width = 0
                }
            },
            "count_width 0",
        ),
        (
            0,
            |p| {
                if let P::LatencyTower { geometry, .. } = p {
                    geometry.arrays[1].sum_width = 33
                }
            },
            "sum_width 33",
        ),
        (
            0,
            |p| {
                if let P::LatencyTower { geometry, .. } = p {
                    geometry.latency_shift = 21
                }
            },
            "latency_shift 21",
        ),
        (
            0,
            |p| {
                if let P::LatencyTower { geometry, .. } = p {
                    geometry.arrays[1].hash.poly = 2
                }
            },
            "CRC polynomial 0x00000002",
        ),
        (
            0,
            |p| {
                if let P::LatencyTower { geometry, arrays, .. } = p {
                    geometry.arrays.clear();
                    arrays.clear()
                }
            },
            "latency tower geometry: a sketch needs at least one array",
        ),
        (
            0,
            |p| {
                if let P::LatencyTower { arrays, .. } = p {
                    arrays[1].push(0)
                }
            },
            "latency tower array 1 holds 21 bytes, its geometry needs 20",
        ),
        (
            1,
            |p| {
                if let P::KeyTable { geometry, ways, .. } = p {
                    geometry.ways.clear();
                    ways.clear()
                }
            },
            "key table geometry: ",
        ),
        (
            1,
            |p| {
                if let P::KeyTable { geometry, ways, .. } = p {
                    geometry.depth = 0;
                    ways.iter_mut().for_each(Vec::clear)
                }
            },
            "key table geometry: ",
        ),
        (
            1,
            |p| {
                if let P::KeyTable { geometry, .. } = p {
                    geometry.ways[1].poly = 4
                }
            },
            "CRC polynomial 0x00000004",
        ),
        (
            1,
            |p| {
                if let P::KeyTable { ways, .. } = p {
                    ways[0].pop();
                }
            },
            "key table way 0 holds 182 bytes, its geometry needs 183",
        ),
        (
            1,
            |p| {
                if let P::KeyTable { ways, .. } = p {
                    ways[1] = table_way(4, &[(3, &[1; 17])])
                }
            },
            "key table way 1 slot 3: hop count 17 exceeds 16",
        ),
        (
            1,
            |p| {
                if let P::KeyTable { ways, .. } = p {
                    ways[0] = table_way(4, &[(0, &[1; 31])])
                }
            },
            "key table way 0 slot 0: hop count 31 exceeds 16",
        ),
        (
            2,
            |p| {
                if let P::Records { stream } = p {
                    stream.truncate(40)
                }
            },
            "records: damaged record at stream offset 28",
        ),
        (
            2,
            |p| {
                if let P::Records { stream } = p {
                    stream[29] = 0
                }
            },
            "words 0",
        ),
        (
            2,
            |p| {
                if let P::Records { stream } = p {
                    stream[1] = 8
                }
            },
            "records: damaged record at stream offset 0",
        ),
    ];
    for (which, edit, named) in cases {
        let e = Snapshot::decode(&edited(which, edit)).unwrap_err();
        assert!(matches!(e, SnapshotError::Invalid { section: 0, .. }), "{named}: {e}");
        let msg = e.to_string();
        assert!(msg.starts_with("snapshot section 0: ") && msg.contains(named), "{named}: {msg}");
    }
    // The mode byte sits right after the section's kind (header 54 + kind 2).
    let mut body = edited(0, |_| {});
    body.truncate(body.len() - 4);
    body[56] = 9;
    let e = Snapshot::decode(&reseal(body)).unwrap_err().to_string();
    assert!(e.contains("latency tower mode 9 is not an insertion mode"), "{e}");
}

proptest::proptest! {
    /// Any byte of the per-switch part overwritten (and the file resealed) decodes or is
    /// refused with a message; never a panic, and what decodes re-encodes to itself.
    #[test]
    fn mutated_per_switch_bytes_never_panic(pos in 0usize..10_000, byte in proptest::num::u8::ANY) {
        let full = sample_v2().encode();
        let flow_part = sample().encode().len() - 4;
        let mut body = full[..full.len() - 4].to_vec();
        let i = flow_part + pos % (body.len() - flow_part);
        body[i] = byte;
        match Snapshot::decode(&reseal(body)) {
            Ok(s) => proptest::prop_assert_eq!(Snapshot::decode(&s.encode()).unwrap(), s),
            Err(e) => proptest::prop_assert!(!e.to_string().is_empty()),
        }
    }
}
