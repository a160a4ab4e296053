//! Conversion between software sketches and snapshot sections, both ways: a software run
//! writes the same file a NIC readout does, and any snapshot rebuilds queryable sketches
//! (the flow sketches with [`from_section`], the per-switch half with [`per_switch_state`]).

use super::key_table::KeyTable;
use super::latency_tower::LatencyTower;
use super::per_switch::PerSwitch;
use super::{AnySketch, SuMax, Tower};
use smartnic_contract::wire::record::{parse_stream, InflatedRecord, Record, INFLATED_LEN};
use smartnic_driver::snapshot::{FirmwareId, PerSwitchSection, Section, Snapshot};

/// Why a sketch cannot become a snapshot section or back.
#[derive(Debug, thiserror::Error)]
pub enum SectionError {
    #[error("ElasticSketch is a software-only baseline and has no snapshot format; use `smartnic sketch eval` to compare it")]
    NotSnapshottable,
    #[error("snapshot section {0} has an invalid geometry: {1}")]
    Geometry(usize, smartnic_contract::geometry::GeometryError),
    #[error("snapshot section {0}: array {1} does not match its geometry")]
    Array(usize, usize),
    #[error("snapshot section {0}: {1}")]
    PerSwitch(usize, String),
    #[error(
        "snapshot holds more than one {0} section (section {1}); a snapshot is one NIC's epoch and has one"
    )]
    Duplicate(&'static str, usize),
}

/// The snapshot section holding `sketch`'s counters.
pub fn to_section(sketch: &AnySketch) -> Result<Section, SectionError> {
    Ok(match sketch {
        AnySketch::Tower(t) => Section::Tower {
            geometry: t.geometry().clone(),
            mode: t.mode(),
            arrays: (0..t.geometry().arrays.len()).map(|a| t.array_bytes(a)).collect(),
        },
        AnySketch::SuMax(s) => Section::SuMax {
            geometry: s.geometry().clone(),
            arrays: (0..s.geometry().hashes.len()).map(|a| s.array_bytes(a)).collect(),
        },
        AnySketch::Elastic(_) => return Err(SectionError::NotSnapshottable),
    })
}

/// Every flow sketch of `snap`, rebuilt in section order (see [`from_section`]).
pub fn sketches_of(snap: &Snapshot) -> Result<Vec<AnySketch>, SectionError> {
    snap.sections.iter().enumerate().map(|(i, s)| from_section(i, s)).collect()
}

/// Rebuilds a queryable sketch from section `n` of a snapshot.
pub fn from_section(n: usize, section: &Section) -> Result<AnySketch, SectionError> {
    let (mut sketch, arrays) = match section {
        Section::Tower { geometry, mode, arrays } => {
            let t = Tower::new(geometry.clone(), *mode).map_err(|e| SectionError::Geometry(n, e))?;
            (AnySketch::Tower(t), arrays)
        }
        Section::SuMax { geometry, arrays } => {
            let s = SuMax::new(geometry.clone()).map_err(|e| SectionError::Geometry(n, e))?;
            (AnySketch::SuMax(s), arrays)
        }
    };
    for (a, raw) in arrays.iter().enumerate() {
        let ok = match &mut sketch {
            AnySketch::Tower(t) => t.load_array(a, raw),
            AnySketch::SuMax(s) => s.load_array(a, raw),
            AnySketch::Elastic(_) => unreachable!("snapshots never hold ElasticSketch"),
        };
        if !ok {
            return Err(SectionError::Array(n, a));
        }
    }
    Ok(sketch)
}

/// A software snapshot of `sketches` for epoch `epoch` holding `packets` packets.
pub fn software_snapshot(sketches: &[AnySketch], epoch: u64, packets: u64) -> Result<Snapshot, SectionError> {
    let time_ns =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    Ok(Snapshot {
        source: smartnic_contract::snapshot::source::SOFTWARE,
        epoch,
        time_ns,
        firmware: FirmwareId::default(),
        packets,
        sections: sketches.iter().map(to_section).collect::<Result<_, _>>()?,
        per_switch: Vec::new(),
    })
}

/// The snapshot sections of one epoch of the per-switch half: its latency tower, its key
/// table (with the threshold it ran with and its misses) and `records`, the record stream
/// drained during the epoch.
pub fn per_switch_sections(ps: &PerSwitch, records: &[InflatedRecord]) -> Vec<PerSwitchSection> {
    vec![
        latency_section(&ps.latency),
        table_section(&ps.table, ps.config().table_threshold),
        PerSwitchSection::Records { stream: record_stream(records) },
    ]
}

/// The records as the NIC's stream holds them, back to back. Why not a `flat_map`: it
/// collects byte by byte into a vector of unknown length, and `sketch run` builds this
/// stream (200K records, 5.7 MB, on the 5M-packet trace) after its last packet, while
/// nothing else runs.
fn record_stream(records: &[InflatedRecord]) -> Vec<u8> {
    let mut stream = Vec::new();
    emit_records(records, &mut stream);
    stream
}

/// Appends `records` to `stream` as [`record_stream`] lays them out (sized once).
pub(crate) fn emit_records(records: &[InflatedRecord], stream: &mut Vec<u8>) {
    stream.reserve(records.len() * INFLATED_LEN);
    records.iter().for_each(|r| stream.extend_from_slice(&r.emit()));
}

/// The snapshot section of a latency tower.
pub fn latency_section(t: &LatencyTower) -> PerSwitchSection {
    PerSwitchSection::LatencyTower {
        geometry: t.geometry().clone(),
        mode: t.mode(),
        arrays: (0..t.geometry().arrays.len()).map(|a| t.array_bytes(a)).collect(),
    }
}

/// The snapshot section of a flow-key table that ran with `threshold`.
pub fn table_section(t: &KeyTable, threshold: u32) -> PerSwitchSection {
    PerSwitchSection::KeyTable {
        geometry: t.geometry().clone(),
        threshold,
        misses: t.misses(),
        ways: (0..t.geometry().ways.len()).map(|w| t.way_bytes(w)).collect(),
    }
}

/// The flow-key table of a snapshot and the threshold its epoch ran with.
#[derive(Clone, Debug)]
pub struct TableState {
    pub table: KeyTable,
    /// Flows whose estimate exceeded this were offered to the table.
    pub threshold: u32,
}

/// The per-switch half as a snapshot holds it, rebuilt into queryable models; a part the
/// snapshot lacks is `None`.
#[derive(Clone, Debug, Default)]
pub struct PerSwitchState {
    pub latency: Option<LatencyTower>,
    pub table: Option<TableState>,
    /// The inflated-latency records of the epoch, in stream order.
    pub records: Option<Vec<InflatedRecord>>,
    /// Records of kinds this build does not read (skipped, counted).
    pub unknown_records: u64,
}

impl PerSwitchState {
    /// Does the snapshot hold any part of the per-switch half?
    pub fn is_empty(&self) -> bool {
        self.latency.is_none() && self.table.is_none() && self.records.is_none()
    }
}

/// Rebuilds the per-switch half from a snapshot's per-switch sections (at most one of each
/// kind; their section numbers follow the flow sketches', as the writer orders them).
pub fn per_switch_state(snap: &Snapshot) -> Result<PerSwitchState, SectionError> {
    let mut out = PerSwitchState::default();
    for (j, sec) in snap.per_switch.iter().enumerate() {
        let n = snap.sections.len() + j;
        match sec {
            PerSwitchSection::LatencyTower { .. } => {
                once(&out.latency, "latency tower", n)?;
                out.latency = Some(latency_tower(n, sec)?);
            }
            PerSwitchSection::KeyTable { .. } => {
                once(&out.table, "key table", n)?;
                out.table = Some(table_state(n, sec)?);
            }
            PerSwitchSection::Records { stream } => {
                once(&out.records, "records", n)?;
                let (records, err) = parse_stream(stream);
                if let Some((at, e)) = err {
                    return Err(SectionError::PerSwitch(
                        n,
                        format!("records: damaged record at stream offset {at}: {e}"),
                    ));
                }
                let mut inflated = Vec::new();
                for r in records {
                    match r {
                        Record::Inflated(r) => inflated.push(r),
                        Record::Unknown { .. } => out.unknown_records += 1,
                    }
                }
                out.records = Some(inflated);
            }
        }
    }
    Ok(out)
}

/// Refuses a second section of a kind already read.
fn once<T>(slot: &Option<T>, what: &'static str, n: usize) -> Result<(), SectionError> {
    match slot {
        Some(_) => Err(SectionError::Duplicate(what, n)),
        None => Ok(()),
    }
}

/// The latency tower of `sec`, snapshot section `n` (a section of another kind is an
/// error).
pub fn latency_tower(n: usize, sec: &PerSwitchSection) -> Result<LatencyTower, SectionError> {
    let PerSwitchSection::LatencyTower { geometry, mode, arrays } = sec else {
        return Err(SectionError::PerSwitch(n, "not a latency tower section".into()));
    };
    if arrays.len() != geometry.arrays.len() {
        let msg = format!("latency tower: {} arrays, geometry has {}", arrays.len(), geometry.arrays.len());
        return Err(SectionError::PerSwitch(n, msg));
    }
    let mut t = LatencyTower::new(geometry.clone(), *mode).map_err(|e| SectionError::Geometry(n, e))?;
    for (a, raw) in arrays.iter().enumerate() {
        if !t.load_array(a, raw) {
            return Err(SectionError::Array(n, a));
        }
    }
    Ok(t)
}

/// The flow-key table of `sec`, snapshot section `n`, with its threshold and misses.
pub fn table_state(n: usize, sec: &PerSwitchSection) -> Result<TableState, SectionError> {
    let PerSwitchSection::KeyTable { geometry, threshold, misses, ways } = sec else {
        return Err(SectionError::PerSwitch(n, "not a key table section".into()));
    };
    if ways.len() != geometry.ways.len() {
        let msg = format!("key table: {} ways, geometry has {}", ways.len(), geometry.ways.len());
        return Err(SectionError::PerSwitch(n, msg));
    }
    let mut table = KeyTable::new(geometry.clone()).map_err(|e| SectionError::Geometry(n, e))?;
    for (w, raw) in ways.iter().enumerate() {
        table.load_way(w, raw).map_err(|e| SectionError::PerSwitch(n, e))?;
    }
    table.set_misses(*misses);
    Ok(TableState { table, threshold: *threshold })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sketch::per_switch::PerSwitchConfig;
    use crate::trace::Packet;
    use smartnic_contract::shim::Hop;
    use smartnic_contract::FlowKey;

    fn packet(n: u8, hops: &[(u16, u32)]) -> Packet {
        Packet {
            ts_ns: 0,
            wire_len: 100,
            key: FlowKey::from_v4([10, 0, 0, n], [10, 0, 1, 1], 1000, 80, 6),
            hops: hops.iter().map(|&(switch_id, latency_ns)| Hop { switch_id, latency_ns }).collect(),
        }
    }

    /// A per-switch half written into a snapshot file's bytes and read back answers the
    /// same: latency per pair, table entries and misses, records.
    #[test]
    fn per_switch_half_round_trips_through_a_snapshot() {
        let mut cfg = PerSwitchConfig::nic_default();
        cfg.table_threshold = 3;
        let mut ps = PerSwitch::new(cfg).unwrap();
        for i in 0..20u32 {
            let est = i as u64;
            ps.observe(5, &packet(1, &[(4, 1000), (7, if i == 15 { 90_000 } else { 2000 })]), est);
            ps.observe(5, &packet(2, &[(4, 500)]), est / 4);
        }
        let mut snap = software_snapshot(&[], 5, 40).unwrap();
        snap.per_switch = per_switch_sections(&ps, ps.records());
        let back = per_switch_state(&Snapshot::decode(&snap.encode()).unwrap()).unwrap();
        let lt = back.latency.unwrap();
        for (s, f) in [(4, 1), (7, 1), (4, 2), (9, 1)] {
            assert_eq!(
                lt.query(s, &packet(f, &[]).key),
                ps.latency.query(s, &packet(f, &[]).key),
                "switch {s} flow {f}"
            );
        }
        let t = back.table.unwrap();
        assert_eq!(t.threshold, 3);
        assert_eq!(t.table.entries().collect::<Vec<_>>(), ps.table.entries().collect::<Vec<_>>());
        assert_eq!(t.table.entries().count(), 2);
        assert_eq!(back.records.unwrap(), ps.records());
        assert_eq!(ps.records().len(), 1, "the 90 us hop at switch 7");
        assert_eq!(back.unknown_records, 0);
    }

    /// Two latency towers in one snapshot are refused by name, not silently merged.
    #[test]
    fn a_second_section_of_a_kind_is_refused() {
        let ps = PerSwitch::new(PerSwitchConfig::nic_default()).unwrap();
        let mut snap = software_snapshot(&[], 0, 0).unwrap();
        snap.per_switch = per_switch_sections(&ps, &[]);
        snap.per_switch.push(snap.per_switch[0].clone());
        let e = per_switch_state(&snap).unwrap_err().to_string();
        assert!(e.contains("more than one latency tower section (section 3)"), "{e}");
        assert!(per_switch_state(&software_snapshot(&[], 0, 0).unwrap()).unwrap().is_empty());
    }
}
