//! Conversion between software sketches and snapshot sections, both ways: a software run
//! writes the same file a NIC readout does, and any snapshot rebuilds queryable sketches.

use super::{AnySketch, SuMax, Tower};
use smartnic_driver::snapshot::{FirmwareId, Section, Snapshot};

/// Why a sketch cannot become a snapshot section or back.
#[derive(Debug, thiserror::Error)]
pub enum SectionError {
    #[error("ElasticSketch is a software-only baseline and has no snapshot format; use `smartnic sketch eval` to compare it")]
    NotSnapshottable,
    #[error("snapshot section {0} has an invalid geometry: {1}")]
    Geometry(usize, smartnic_contract::geometry::GeometryError),
    #[error("snapshot section {0}: array {1} does not match its geometry")]
    Array(usize, usize),
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
    })
}
