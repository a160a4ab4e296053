//! Merging snapshots of the same geometry and hash parameters, so that several NICs (or
//! several runs over parts of one stream) read as one.
//!
//! What each section kind becomes, and how exact it is:
//!
//! - **Flow tower** (`Section::Tower`): counter-wise sum saturating at the overflow marker
//!   ([`Tower::merge`]). In CM mode every packet adds one to the same counters whatever
//!   stream it came in, so the merge is *exactly* the sketch of the union stream. In CU and
//!   ACU modes a part only grows its minimal counters, and which counters are minimal
//!   depends on the part: the merged counters are only bounded, each at most the CM
//!   counter of the union, and every flow's merged estimate is still at least its true
//!   count (each part over-estimates its share). Towers of different modes are refused.
//! - **SuMax** (`Section::SuMax`): refused. Its max cells (largest inter-arrival gap) and
//!   last-arrival cells cannot be merged without inventing the gap between the parts'
//!   packets of a flow: the union's inter-arrival can differ from either part's.
//! - **Per-switch latency tower**: count and sum cells add saturating
//!   ([`LatencyTower::merge`]); in CM mode exactly the tower of the union stream, in ACU
//!   mode bounded like the flow tower.
//! - **Key table**: the union of the entries (a key in both keeps the first file's path);
//!   an entry that finds no free way in the merged table counts as a miss, and misses add.
//!   The tables must have run with the same threshold.
//! - **Records**: the streams concatenated in input order.
//! - **Header**: packets add; the epoch and firmware are the first file's (the merge is one
//!   epoch of the fleet, named after its first member); the readout time is the latest
//!   input's; the source is software.

use super::latency_tower::LatencyTower;
use super::snapshot::{
    from_section, latency_section, latency_tower, table_section, table_state, to_section, SectionError,
    TableState,
};
use super::{AnySketch, Tower};
use smartnic_driver::snapshot::{PerSwitchSection, Section, Snapshot};

/// Why snapshots cannot merge. `file` is the index of the input (0 = first), `section` the
/// index of the section within it.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("nothing to merge: give at least one snapshot")]
    Empty,
    #[error("snapshot {file} has {found} {what} sections, snapshot 0 has {expected}; only snapshots of the same sketches merge")]
    SectionCount { file: usize, what: &'static str, found: usize, expected: usize },
    #[error("snapshot {file} section {section} is a {found} section where snapshot 0 has a {expected}; section kinds and order must match")]
    Kind { file: usize, section: usize, found: &'static str, expected: &'static str },
    #[error(
        "snapshot {file} section {section} ({what}): geometry or hash parameters differ from snapshot 0's"
    )]
    Geometry { file: usize, section: usize, what: &'static str },
    #[error("snapshot {file} section {section} ({what}): insertion mode {found:?} differs from snapshot 0's {expected:?}")]
    Mode { file: usize, section: usize, what: &'static str, found: String, expected: String },
    #[error("snapshot {file} section {section} (key table): threshold {found} differs from snapshot 0's {expected}")]
    Threshold { file: usize, section: usize, found: u32, expected: u32 },
    #[error("snapshot {file} section {section} is SuMax: its max-interval and last-arrival cells do not merge (the union's inter-arrival gaps are in neither part), so SuMax snapshots are refused")]
    SuMax { file: usize, section: usize },
    #[error("snapshot {file}: {source}")]
    Section { file: usize, source: SectionError },
}

/// Merges `snaps` (see the module docs for what each section becomes).
pub fn merge_snapshots(snaps: &[Snapshot]) -> Result<Snapshot, MergeError> {
    let first = snaps.first().ok_or(MergeError::Empty)?;
    for (file, s) in snaps.iter().enumerate().skip(1) {
        check_counts(file, "flow", s.sections.len(), first.sections.len())?;
        check_counts(file, "per-switch", s.per_switch.len(), first.per_switch.len())?;
    }
    let sections = (0..first.sections.len()).map(|n| merge_flow(snaps, n)).collect::<Result<_, _>>()?;
    let per_switch =
        (0..first.per_switch.len()).map(|n| merge_per_switch(snaps, n)).collect::<Result<_, _>>()?;
    Ok(Snapshot {
        source: smartnic_contract::snapshot::source::SOFTWARE,
        epoch: first.epoch,
        time_ns: snaps.iter().map(|s| s.time_ns).max().unwrap_or(0),
        firmware: first.firmware,
        packets: snaps.iter().fold(0u64, |a, s| a.saturating_add(s.packets)),
        sections,
        per_switch,
    })
}

fn check_counts(file: usize, what: &'static str, found: usize, expected: usize) -> Result<(), MergeError> {
    if found != expected {
        return Err(MergeError::SectionCount { file, what, found, expected });
    }
    Ok(())
}

fn flow_kind(s: &Section) -> &'static str {
    match s {
        Section::Tower { .. } => "tower",
        Section::SuMax { .. } => "SuMax",
    }
}

fn per_switch_kind(s: &PerSwitchSection) -> &'static str {
    match s {
        PerSwitchSection::LatencyTower { .. } => "latency tower",
        PerSwitchSection::KeyTable { .. } => "key table",
        PerSwitchSection::Records { .. } => "records",
    }
}

/// Flow section `n` of every snapshot, merged.
fn merge_flow(snaps: &[Snapshot], n: usize) -> Result<Section, MergeError> {
    let mut acc: Option<Tower> = None;
    for (file, s) in snaps.iter().enumerate() {
        let sec = &s.sections[n];
        let expected = flow_kind(&snaps[0].sections[n]);
        if flow_kind(sec) != expected {
            return Err(MergeError::Kind { file, section: n, found: flow_kind(sec), expected });
        }
        let tower = match from_section(n, sec).map_err(|source| MergeError::Section { file, source })? {
            AnySketch::Tower(t) => t,
            _ => return Err(MergeError::SuMax { file, section: n }),
        };
        acc = Some(match acc {
            None => tower,
            Some(mut a) => {
                add_tower(&mut a, &tower, file, n)?;
                a
            }
        });
    }
    let merged = acc.expect("at least one snapshot");
    to_section(&AnySketch::Tower(merged)).map_err(|source| MergeError::Section { file: 0, source })
}

/// Adds `t` (of snapshot `file`) into `acc`, refusing another mode or geometry.
fn add_tower(acc: &mut Tower, t: &Tower, file: usize, section: usize) -> Result<(), MergeError> {
    if acc.mode() != t.mode() {
        let (found, expected) = (format!("{:?}", t.mode()), format!("{:?}", acc.mode()));
        return Err(MergeError::Mode { file, section, what: "tower", found, expected });
    }
    acc.merge(t).map_err(|_| MergeError::Geometry { file, section, what: "tower" })
}

/// Per-switch section `n` of every snapshot, merged.
fn merge_per_switch(snaps: &[Snapshot], n: usize) -> Result<PerSwitchSection, MergeError> {
    let expected = per_switch_kind(&snaps[0].per_switch[n]);
    for (file, s) in snaps.iter().enumerate() {
        let found = per_switch_kind(&s.per_switch[n]);
        if found != expected {
            return Err(MergeError::Kind { file, section: n, found, expected });
        }
    }
    match &snaps[0].per_switch[n] {
        PerSwitchSection::LatencyTower { .. } => merge_latency(snaps, n),
        PerSwitchSection::KeyTable { .. } => merge_tables(snaps, n),
        PerSwitchSection::Records { .. } => Ok(PerSwitchSection::Records {
            stream: snaps
                .iter()
                .flat_map(|s| match &s.per_switch[n] {
                    PerSwitchSection::Records { stream } => stream.clone(),
                    _ => Vec::new(),
                })
                .collect(),
        }),
    }
}

/// The latency tower of per-switch section `n` of snapshot `file`.
fn latency_of(s: &Snapshot, file: usize, n: usize) -> Result<LatencyTower, MergeError> {
    latency_tower(s.sections.len() + n, &s.per_switch[n])
        .map_err(|source| MergeError::Section { file, source })
}

fn merge_latency(snaps: &[Snapshot], n: usize) -> Result<PerSwitchSection, MergeError> {
    let mut acc = latency_of(&snaps[0], 0, n)?;
    for (file, s) in snaps.iter().enumerate().skip(1) {
        let t = latency_of(s, file, n)?;
        if acc.mode() != t.mode() {
            let (found, expected) = (format!("{:?}", t.mode()), format!("{:?}", acc.mode()));
            return Err(MergeError::Mode { file, section: n, what: "latency tower", found, expected });
        }
        if !acc.merge(&t) {
            return Err(MergeError::Geometry { file, section: n, what: "latency tower" });
        }
    }
    Ok(latency_section(&acc))
}

/// The key table of per-switch section `n` of snapshot `file`, with its threshold.
fn table_of(s: &Snapshot, file: usize, n: usize) -> Result<TableState, MergeError> {
    table_state(s.sections.len() + n, &s.per_switch[n]).map_err(|source| MergeError::Section { file, source })
}

fn merge_tables(snaps: &[Snapshot], n: usize) -> Result<PerSwitchSection, MergeError> {
    let TableState { table: mut acc, threshold } = table_of(&snaps[0], 0, n)?;
    for (file, s) in snaps.iter().enumerate().skip(1) {
        let TableState { table: t, threshold: th } = table_of(s, file, n)?;
        if t.geometry() != acc.geometry() {
            return Err(MergeError::Geometry { file, section: n, what: "key table" });
        }
        if th != threshold {
            return Err(MergeError::Threshold { file, section: n, found: th, expected: threshold });
        }
        acc.set_misses(acc.misses().saturating_add(t.misses()));
        // A refused offer counts itself as a miss inside `offer`.
        for e in t.entries() {
            acc.offer(&e.key, &e.path);
        }
    }
    Ok(table_section(&acc, threshold))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sketch::key_table::KeyTable;
    use proptest::prelude::*;
    use smartnic_contract::geometry::{InsertMode, TowerGeometry};
    use smartnic_contract::per_switch::LatencyTowerGeometry;
    use smartnic_contract::FlowKey;

    fn flow(n: u8) -> FlowKey {
        FlowKey::from_v4([10, 0, 0, n], [10, 0, 1, 1], 1000 + n as u16, 80, 6)
    }

    /// Small widths so that saturation at the marker is exercised too.
    fn small_geometry() -> TowerGeometry {
        TowerGeometry::from_widths_depths(&[(4, 16), (8, 8), (16, 4)])
    }

    fn tower_of(mode: InsertMode, keys: &[u8]) -> Tower {
        let mut t = Tower::new(small_geometry(), mode).unwrap();
        keys.iter().for_each(|&k| t.insert(&flow(k)));
        t
    }

    fn snap_of(t: Tower, packets: u64) -> Snapshot {
        super::super::snapshot::software_snapshot(&[AnySketch::Tower(t)], 7, packets).unwrap()
    }

    fn latency_of_stream(mode: InsertMode, hops: &[(u8, u16, u32)]) -> LatencyTower {
        let g = LatencyTowerGeometry::from_cells(&[(4, 8, 16), (8, 12, 8), (16, 16, 4)], 0);
        let mut t = LatencyTower::new(g, mode).unwrap();
        hops.iter().for_each(|&(f, sw, ns)| {
            t.insert_hop(sw, &flow(f), ns);
        });
        t
    }

    fn latency_snap(t: &LatencyTower) -> Snapshot {
        let mut s = snap_of(tower_of(InsertMode::Cm, &[]), 0);
        s.per_switch = vec![latency_section(t)];
        s
    }

    proptest! {
        /// CM: the merge of the two halves' towers is the tower of the whole stream.
        #[test]
        fn cm_tower_merge_is_the_union_sketch(keys in prop::collection::vec(0u8..40, 0..400), cut in 0usize..400) {
            let cut = cut.min(keys.len());
            let (a, b) = keys.split_at(cut);
            let merged = merge_snapshots(&[snap_of(tower_of(InsertMode::Cm, a), a.len() as u64),
                                           snap_of(tower_of(InsertMode::Cm, b), b.len() as u64)]).unwrap();
            let whole = snap_of(tower_of(InsertMode::Cm, &keys), keys.len() as u64);
            prop_assert_eq!(&merged.sections, &whole.sections);
            prop_assert_eq!(merged.packets, keys.len() as u64);
        }

        /// CM: the same identity for the per-switch latency tower (counts and sums).
        #[test]
        fn cm_latency_merge_is_the_union_sketch(
            hops in prop::collection::vec((0u8..20, 0u16..4, 0u32..5000), 0..300), cut in 0usize..300) {
            let cut = cut.min(hops.len());
            let (a, b) = hops.split_at(cut);
            let merged = merge_snapshots(&[latency_snap(&latency_of_stream(InsertMode::Cm, a)),
                                           latency_snap(&latency_of_stream(InsertMode::Cm, b))]).unwrap();
            let whole = latency_snap(&latency_of_stream(InsertMode::Cm, &hops));
            prop_assert_eq!(&merged.per_switch, &whole.per_switch);
        }

        /// ACU latency tower: every merged count and sum cell is at most the union's CM cell.
        #[test]
        fn acu_latency_merge_is_bounded(
            hops in prop::collection::vec((0u8..20, 0u16..4, 0u32..5000), 0..300), cut in 0usize..300) {
            let cut = cut.min(hops.len());
            let (a, b) = hops.split_at(cut);
            let mut m = latency_of_stream(InsertMode::Acu, a);
            prop_assert!(m.merge(&latency_of_stream(InsertMode::Acu, b)));
            let cm = latency_of_stream(InsertMode::Cm, &hops);
            for (arr, g) in cm.geometry().arrays.iter().enumerate() {
                for i in 0..g.depth {
                    let ((mc, ms), (cc, cs)) = (m.bucket(arr, i), cm.bucket(arr, i));
                    prop_assert!(mc <= cc && ms <= cs, "array {} bucket {}: ({}, {}) > ({}, {})", arr, i, mc, ms, cc, cs);
                }
            }
        }

        /// CU and ACU: every merged counter is at most the union's CM counter, and every
        /// flow's merged estimate is at least its true count.
        #[test]
        fn cu_acu_merge_is_bounded(keys in prop::collection::vec(0u8..40, 0..400), cut in 0usize..400, acu in any::<bool>()) {
            let mode = if acu { InsertMode::Acu } else { InsertMode::Cu };
            let cut = cut.min(keys.len());
            let (a, b) = keys.split_at(cut);
            let merged = merge_snapshots(&[snap_of(tower_of(mode, a), 0), snap_of(tower_of(mode, b), 0)]).unwrap();
            let AnySketch::Tower(m) = from_section(0, &merged.sections[0]).unwrap() else { panic!("tower") };
            let cm = tower_of(InsertMode::Cm, &keys);
            for (arr, g) in small_geometry().arrays.iter().enumerate() {
                for i in 0..g.depth {
                    prop_assert!(m.counter(arr, i) <= cm.counter(arr, i));
                }
            }
            for k in 0u8..40 {
                let truth = keys.iter().filter(|&&x| x == k).count() as u64;
                prop_assert!(m.query(&flow(k)) >= truth, "flow {} estimate {} < {}", k, m.query(&flow(k)), truth);
            }
        }
    }

    #[test]
    fn different_modes_are_refused() {
        let e = merge_snapshots(&[
            snap_of(tower_of(InsertMode::Cm, &[1]), 1),
            snap_of(tower_of(InsertMode::Cu, &[1]), 1),
        ])
        .unwrap_err();
        assert!(matches!(e, MergeError::Mode { file: 1, section: 0, .. }), "{e}");
        assert!(e.to_string().contains("insertion mode"), "{e}");
    }

    #[test]
    fn different_geometry_is_refused() {
        let other =
            Tower::new(TowerGeometry::from_widths_depths(&[(4, 32), (8, 8), (16, 4)]), InsertMode::Cm)
                .unwrap();
        let e =
            merge_snapshots(&[snap_of(tower_of(InsertMode::Cm, &[1]), 1), snap_of(other, 0)]).unwrap_err();
        assert!(matches!(e, MergeError::Geometry { file: 1, section: 0, .. }), "{e}");
    }

    #[test]
    fn different_hash_is_refused() {
        let mut g = small_geometry();
        g.arrays[1].hash = g.arrays[2].hash;
        let other = Tower::new(g, InsertMode::Cm).unwrap();
        let e =
            merge_snapshots(&[snap_of(tower_of(InsertMode::Cm, &[1]), 1), snap_of(other, 0)]).unwrap_err();
        assert!(e.to_string().contains("hash parameters differ"), "{e}");
    }

    #[test]
    fn section_kinds_and_counts_must_match() {
        let one = snap_of(tower_of(InsertMode::Cm, &[1]), 1);
        let mut two = one.clone();
        two.sections.push(two.sections[0].clone());
        let e = merge_snapshots(&[one.clone(), two]).unwrap_err();
        assert!(matches!(e, MergeError::SectionCount { file: 1, found: 2, expected: 1, .. }), "{e}");
        let lat = latency_snap(&latency_of_stream(InsertMode::Cm, &[]));
        let mut rec = lat.clone();
        rec.per_switch = vec![PerSwitchSection::Records { stream: vec![] }];
        let e = merge_snapshots(&[lat, rec]).unwrap_err();
        assert!(matches!(e, MergeError::Kind { file: 1, section: 0, .. }), "{e}");
    }

    #[test]
    fn sumax_is_refused_not_invented() {
        let s = super::super::SuMax::new(smartnic_contract::geometry::SuMaxGeometry::nic_default()).unwrap();
        let snap = super::super::snapshot::software_snapshot(&[AnySketch::SuMax(s)], 1, 0).unwrap();
        let e = merge_snapshots(&[snap.clone(), snap]).unwrap_err();
        assert!(matches!(e, MergeError::SuMax { file: 0, section: 0 }), "{e}");
    }

    #[test]
    fn empty_input_is_refused() {
        assert!(matches!(merge_snapshots(&[]), Err(MergeError::Empty)));
    }

    #[test]
    fn records_concatenate_and_header_sums() {
        let mut a = snap_of(tower_of(InsertMode::Cm, &[1]), 3);
        let mut b = snap_of(tower_of(InsertMode::Cm, &[2]), 4);
        b.epoch = 99;
        a.per_switch = vec![PerSwitchSection::Records { stream: vec![1, 2] }];
        b.per_switch = vec![PerSwitchSection::Records { stream: vec![3] }];
        let m = merge_snapshots(&[a, b]).unwrap();
        assert_eq!(m.per_switch, vec![PerSwitchSection::Records { stream: vec![1, 2, 3] }]);
        assert_eq!((m.packets, m.epoch), (7, 7));
        assert_eq!(m.source, smartnic_contract::snapshot::source::SOFTWARE);
    }

    #[test]
    fn key_tables_union_and_misses_add() {
        use smartnic_contract::per_switch::KeyTableGeometry;
        let table = |keys: &[u8], misses: u64| {
            let mut t = KeyTable::new(KeyTableGeometry::nic_default()).unwrap();
            keys.iter().for_each(|&k| {
                t.offer(&flow(k), &[k as u16, 9]);
            });
            t.set_misses(misses);
            let mut s = snap_of(tower_of(InsertMode::Cm, &[]), 0);
            s.per_switch = vec![table_section(&t, 5)];
            s
        };
        let m = merge_snapshots(&[table(&[1, 2], 2), table(&[2, 3], 3)]).unwrap();
        let TableState { table: t, threshold: th } = table_of(&m, 0, 0).unwrap();
        let mut keys: Vec<_> = t.entries().map(|e| e.key).collect();
        keys.sort();
        let mut want = vec![flow(1), flow(2), flow(3)];
        want.sort();
        assert_eq!((keys, t.misses(), th), (want, 5, 5));
    }
}
