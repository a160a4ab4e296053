//! The per-switch sections of format version 2: the latency tower, the flow-key table and
//! the drained record stream of one epoch (layouts in the parent module's doc).
//!
//! Every field is read by name, so a section cut short or holding a value its geometry
//! cannot have is refused with an error that names the field (and for truncation the
//! byte offset in the file), never decoded into something a task would misread.

use super::{packed_len, SnapshotError};
use smartnic_contract::geometry::InsertMode;
use smartnic_contract::hash::CrcParams;
use smartnic_contract::packing::PackedBits;
use smartnic_contract::per_switch::{slot, KeyTableGeometry, LatencyArray, LatencyTowerGeometry};
use smartnic_contract::shim::MAX_HOPS;
use smartnic_contract::snapshot::kind;
use smartnic_contract::wire::record::parse_stream;

/// One per-switch section: the NIC's state of one epoch beside its flow sketches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PerSwitchSection {
    /// Packet count and latency sum per (flow, switch); `arrays` in the packing of the
    /// software model's `array_bytes` (buckets in order, count cell first).
    LatencyTower { geometry: LatencyTowerGeometry, mode: InsertMode, arrays: Vec<Vec<u8>> },
    /// The heavy flows' keys and paths: `ways` in the packing of `way_bytes` (slots of
    /// `smartnic_contract::per_switch::slot::BITS` bits). `threshold` is the table
    /// threshold the epoch ran with, `misses` the offers refused for want of a free way.
    KeyTable { geometry: KeyTableGeometry, threshold: u32, misses: u64, ways: Vec<Vec<u8>> },
    /// The record stream as drained (`InflatedRecord::emit` and later kinds, concatenated).
    Records { stream: Vec<u8> },
}

/// Is `k` a per-switch section kind?
pub fn is_kind(k: u16) -> bool {
    matches!(k, kind::LATENCY_TOWER | kind::KEY_TABLE | kind::RECORDS)
}

impl PerSwitchSection {
    /// The section's `kind` tag.
    pub fn kind(&self) -> u16 {
        match self {
            PerSwitchSection::LatencyTower { .. } => kind::LATENCY_TOWER,
            PerSwitchSection::KeyTable { .. } => kind::KEY_TABLE,
            PerSwitchSection::Records { .. } => kind::RECORDS,
        }
    }

    /// Writes the section (kind tag included).
    pub(super) fn emit<W: std::io::Write>(&self, out: &mut W) -> std::io::Result<()> {
        if let PerSwitchSection::Records { stream } = self {
            emit_records_head(stream.len() as u64, out)?;
            return out.write_all(stream);
        }
        out.write_all(&self.kind().to_le_bytes())?;
        match self {
            PerSwitchSection::LatencyTower { geometry, mode, arrays } => {
                out.write_all(&[*mode as u8, geometry.latency_shift, geometry.arrays.len() as u8])?;
                for (a, data) in geometry.arrays.iter().zip(arrays) {
                    out.write_all(&[a.count_width, a.sum_width])?;
                    out.write_all(&a.depth.to_le_bytes())?;
                    super::emit_crc(&a.hash, out)?;
                    super::emit_bytes(data, out)?;
                }
            }
            PerSwitchSection::KeyTable { geometry, threshold, misses, ways } => {
                out.write_all(&threshold.to_le_bytes())?;
                out.write_all(&misses.to_le_bytes())?;
                out.write_all(&[geometry.ways.len() as u8])?;
                out.write_all(&geometry.depth.to_le_bytes())?;
                for (h, data) in geometry.ways.iter().zip(ways) {
                    super::emit_crc(h, out)?;
                    super::emit_bytes(data, out)?;
                }
            }
            PerSwitchSection::Records { .. } => unreachable!("written above"),
        }
        Ok(())
    }
}

/// Writes the start of a records section holding a stream of `len` bytes: everything
/// before the stream's bytes.
pub(super) fn emit_records_head<W: std::io::Write>(len: u64, out: &mut W) -> std::io::Result<()> {
    out.write_all(&kind::RECORDS.to_le_bytes())?;
    out.write_all(&len.to_le_bytes())
}

/// Reads named fields off a section, tracking the offset in the file for errors.
struct Fields<'a> {
    rest: &'a [u8],
    /// File offset of `rest[0]`.
    at: usize,
    section: usize,
}

impl<'a> Fields<'a> {
    fn fault(&self, what: String) -> SnapshotError {
        SnapshotError::Invalid { section: self.section, what }
    }

    fn take(&mut self, n: usize, field: &str) -> Result<&'a [u8], SnapshotError> {
        if self.rest.len() < n {
            let left = self.rest.len();
            return Err(
                self.fault(format!("{field}: truncated at byte {} (needs {n} bytes, {left} left)", self.at))
            );
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        self.at += n;
        Ok(head)
    }

    fn u8(&mut self, field: &str) -> Result<u8, SnapshotError> {
        Ok(self.take(1, field)?[0])
    }

    fn u32(&mut self, field: &str) -> Result<u32, SnapshotError> {
        Ok(u32::from_le_bytes(self.take(4, field)?.try_into().unwrap_or_default()))
    }

    fn u64(&mut self, field: &str) -> Result<u64, SnapshotError> {
        Ok(u64::from_le_bytes(self.take(8, field)?.try_into().unwrap_or_default()))
    }

    fn crc(&mut self, field: &str) -> Result<CrcParams, SnapshotError> {
        let poly = self.u32(field)?;
        let init = self.u32(field)?;
        let xorout = self.u32(field)?;
        let refin = self.u8(field)? != 0;
        let refout = self.u8(field)? != 0;
        Ok(CrcParams { poly, init, xorout, refin, refout })
    }

    /// A `len u64 | bytes` field.
    fn bytes(&mut self, field: &str) -> Result<Vec<u8>, SnapshotError> {
        let len = self.u64(&format!("{field} length"))?;
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        Ok(self.take(len, field)?.to_vec())
    }
}

/// Parses and validates a per-switch section of kind `k` whose body starts at file offset
/// `at`; returns what follows it.
pub(super) fn parse(
    section: usize,
    k: u16,
    body: &[u8],
    at: usize,
) -> Result<(&[u8], PerSwitchSection), SnapshotError> {
    let mut f = Fields { rest: body, at, section };
    let s = match k {
        kind::LATENCY_TOWER => latency_tower(&mut f)?,
        kind::KEY_TABLE => key_table(&mut f)?,
        _ => records(&mut f)?,
    };
    Ok((f.rest, s))
}

fn latency_tower(f: &mut Fields) -> Result<PerSwitchSection, SnapshotError> {
    let mode = f.u8("latency tower mode")?;
    let latency_shift = f.u8("latency tower latency_shift")?;
    let n = f.u8("latency tower arrays")?;
    let (mut geo, mut arrays) = (Vec::new(), Vec::new());
    for a in 0..n {
        let count_width = f.u8(&format!("latency tower array {a} count_w"))?;
        let sum_width = f.u8(&format!("latency tower array {a} sum_w"))?;
        let depth = f.u32(&format!("latency tower array {a} depth"))?;
        let hash = f.crc(&format!("latency tower array {a} crc"))?;
        arrays.push(f.bytes(&format!("latency tower array {a} bytes"))?);
        geo.push(LatencyArray { count_width, sum_width, depth, hash });
    }
    let Some(mode) = InsertMode::from_u8(mode) else {
        return Err(
            f.fault(format!("latency tower mode {mode} is not an insertion mode (0 CM, 1 CU, 2 ACU)"))
        );
    };
    let geometry = LatencyTowerGeometry { arrays: geo, latency_shift };
    geometry.validate().map_err(|e| f.fault(format!("latency tower geometry: {e}")))?;
    let need = geometry.arrays.iter().map(|a| packed_len(a.depth, a.bucket_bits()));
    check_lengths(f, "latency tower array", &arrays, need)?;
    Ok(PerSwitchSection::LatencyTower { geometry, mode, arrays })
}

fn key_table(f: &mut Fields) -> Result<PerSwitchSection, SnapshotError> {
    let threshold = f.u32("key table threshold")?;
    let misses = f.u64("key table misses")?;
    let n = f.u8("key table ways")?;
    let depth = f.u32("key table depth")?;
    let (mut hashes, mut ways) = (Vec::new(), Vec::new());
    for w in 0..n {
        hashes.push(f.crc(&format!("key table way {w} crc"))?);
        ways.push(f.bytes(&format!("key table way {w} bytes"))?);
    }
    let geometry = KeyTableGeometry { ways: hashes, depth };
    geometry.validate().map_err(|e| f.fault(format!("key table geometry: {e}")))?;
    let need = geometry.ways.iter().map(|_| packed_len(depth, slot::BITS));
    check_lengths(f, "key table way", &ways, need)?;
    for (w, raw) in ways.iter().enumerate() {
        check_slots(f, w, raw, depth)?;
    }
    Ok(PerSwitchSection::KeyTable { geometry, threshold, misses, ways })
}

fn records(f: &mut Fields) -> Result<PerSwitchSection, SnapshotError> {
    let start = f.at + 8;
    let stream = f.bytes("records")?;
    if let (_, Some((offset, e))) = parse_stream(&stream) {
        return Err(f.fault(format!(
            "records: damaged record at stream offset {offset} (byte {} of the file): {e}",
            start + offset
        )));
    }
    Ok(PerSwitchSection::Records { stream })
}

/// Every array holds exactly the bytes its geometry needs.
fn check_lengths(
    f: &Fields,
    what: &str,
    arrays: &[Vec<u8>],
    need: impl Iterator<Item = usize>,
) -> Result<(), SnapshotError> {
    for (a, (data, want)) in arrays.iter().zip(need).enumerate() {
        if data.len() != want {
            return Err(f.fault(format!("{what} {a} holds {} bytes, its geometry needs {want}", data.len())));
        }
    }
    Ok(())
}

/// Every valid slot of a way states at most [`MAX_HOPS`] hops (the slot's 5-bit field
/// could say 31).
fn check_slots(f: &Fields, way: usize, raw: &[u8], depth: u32) -> Result<(), SnapshotError> {
    let Some(bits) = PackedBits::from_bytes(raw, slot::BITS * depth as u64) else {
        return Err(f.fault(format!("key table way {way}: {} bytes do not hold {depth} slots", raw.len())));
    };
    for i in 0..depth as u64 {
        let at = i * slot::BITS;
        let hops = bits.get(at + slot::HOPS, slot::HOPS_WIDTH);
        if bits.get(at + slot::VALID, 1) == 1 && hops > MAX_HOPS as u32 {
            return Err(f.fault(format!("key table way {way} slot {i}: hop count {hops} exceeds {MAX_HOPS}")));
        }
    }
    Ok(())
}
