//! A version-1 snapshot file, as the driver wrote it before the per-switch sections
//! existed, still reads: same sections, and it re-encodes to the very same bytes (a file of
//! flow sketches alone is still stamped version 1).

use smartnic_driver::snapshot::{Section, Snapshot};

/// A readout of the emulated device by the version-1 writer (checked in, never rewritten).
const V1: &[u8] = include_bytes!("data/v1-emulated.snap");

#[test]
fn checked_in_version_1_file_reads_and_reencodes_identically() {
    assert_eq!(&V1[8..10], &1u16.to_le_bytes(), "the file is version 1");
    let snap = Snapshot::decode(V1).unwrap();
    assert!(snap.per_switch.is_empty());
    assert!(
        matches!(snap.sections[..], [Section::Tower { .. }, Section::SuMax { .. }]),
        "{:?}",
        snap.sections
    );
    assert_eq!(snap.encode(), V1);
}
