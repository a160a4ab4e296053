//! The snapshot file: one epoch of one device's sketches, self-describing and checksummed.
//!
//! Written by the driver after a readout and by `smartnic sketch run` for software
//! sketches, so that every downstream tool (query, report, eval) reads one format and
//! rebuilds its decoder from the file alone. Layout (little-endian):
//!
//! ```text
//! header   magic "SNICSNAP" | version u16 | source u8 | reserved u8 | epoch u64 |
//!          time_ns u64 | firmware: device u32, version u32, build_time u32, git_hash u32 |
//!          packets u64 | section count u16
//! section  kind u16 | then per kind:
//!   TOWER  mode u8 | arrays u8 | per array: width u8, depth u32, crc, len u64, bytes
//!   SUMAX  depth u32 | size_w u8 | delay_cells u8 | delay_w u8 | time_w u8 |
//!          time_shift u8 | delay base_ns u32 | bins/octave u8 | arrays u8 |
//!          per array: crc, len u64, bytes
//!   LATENCY_TOWER (version 2)  mode u8 | latency_shift u8 | arrays u8 |
//!          per array: count_w u8, sum_w u8, depth u32, crc, len u64, bytes
//!   KEY_TABLE (version 2)  threshold u32 | misses u64 | ways u8 | depth u32 |
//!          per way: crc, len u64, bytes
//!   RECORDS (version 2)  len u64 | the record stream's bytes
//!   crc    poly u32 | init u32 | xorout u32 | refin u8 | refout u8
//! trailer  CRC-32C u32 of every byte before it
//! ```
//! Counter bytes are the packed LSB-first layout of the software sketches
//! (`smartnic_contract::packing`), `ceil(depth * bucket_bits / 8)` bytes per array; a
//! latency-tower bucket is its count cell then its sum cell, a key-table slot the
//! contract's `per_switch::slot` bits. The record stream is `smartnic_contract::wire::record`'s.
//!
//! The flow sketches' sections ([`Section`]) and the per-switch ones ([`PerSwitchSection`])
//! are kept apart in memory, so code that walks the flow sketches never meets a kind it
//! cannot rebuild; the writer puts the flow sketches first. The header's version is the
//! lowest that holds the file's sections (1 without per-switch sections), and the reader
//! takes every version from `MIN_VERSION` on, the per-switch kinds from version 2 on.

use nom::bytes::complete::{tag, take};
use nom::number::complete::{le_u16, le_u32, le_u64, u8 as le_u8};
use nom::IResult;
use smartnic_contract::geometry::{ArrayGeometry, DelayBinRule, InsertMode, SuMaxGeometry, TowerGeometry};
use smartnic_contract::hash::CrcParams;
use smartnic_contract::snapshot::{kind, MAGIC, MIN_VERSION, PER_SWITCH_VERSION, VERSION};
use std::io::Write;
use std::path::Path;

mod per_switch;
mod spill;
pub use per_switch::PerSwitchSection;
pub use spill::{RecordSpill, SPILL_SUFFIX};

/// What the firmware-ID block said (all zero for software snapshots).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FirmwareId {
    pub device: u32,
    pub version: u32,
    pub build_time: u32,
    pub git_hash: u32,
}

/// One sketch's counters with the geometry needed to decode them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Section {
    Tower { geometry: TowerGeometry, mode: InsertMode, arrays: Vec<Vec<u8>> },
    SuMax { geometry: SuMaxGeometry, arrays: Vec<Vec<u8>> },
}

/// A snapshot: one epoch of counters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// `smartnic_contract::snapshot::source::*`.
    pub source: u8,
    pub epoch: u64,
    /// Wall-clock time of the readout, ns since the Unix epoch.
    pub time_ns: u64,
    pub firmware: FirmwareId,
    /// Packets recorded in this epoch.
    pub packets: u64,
    /// The flow sketches.
    pub sections: Vec<Section>,
    /// The per-switch half's state of the epoch (empty when the snapshot has none).
    pub per_switch: Vec<PerSwitchSection>,
}

/// Why a snapshot could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("not a snapshot file (bad magic)")]
    BadMagic,
    #[error(
        "snapshot format version {0} is not supported (this build reads versions {MIN_VERSION} to {VERSION})"
    )]
    Version(u16),
    #[error("snapshot is truncated or malformed near byte {0}")]
    Malformed(usize),
    #[error("snapshot checksum mismatch: stored {stored:#010x}, computed {computed:#010x} (file corrupt)")]
    Checksum { stored: u32, computed: u32 },
    #[error("snapshot section {section}: unknown sketch kind {kind}")]
    UnknownKind { section: usize, kind: u16 },
    #[error("snapshot section {section}: {what}")]
    Invalid { section: usize, what: String },
    #[error("{} trailing bytes after the last section", .0)]
    Trailing(usize),
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{0} is a directory: give the snapshot a file name (e.g. {0}/epoch.snap)")]
    IsDirectory(String),
}

/// The snapshot's checksum: CRC-32C (the contract's `snapshot::CHECKSUM`), by the CPU's
/// CRC32 instruction where it has one. Why not the table-driven `crc` crate that holds the
/// contract's parameters: a snapshot with per-switch records runs to megabytes, checked
/// on every read and computed on every write, and `sketch run` writes it after its last
/// packet (7.5 MB on the 5M-packet trace: 2.0 ms by sixteen-byte tables, 0.3 ms here).
/// The tests check this function against the contract's bitwise definition.
fn checksum(bytes: &[u8]) -> u32 {
    crc32c::crc32c(bytes)
}

/// Packed byte length of `depth` entries of `bits` bits (the contract's packing rule).
pub use smartnic_contract::packing::packed_len;

impl Snapshot {
    /// Encodes the snapshot with its trailing checksum.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_to(&mut out).expect("writing into a vector never fails");
        out
    }

    /// Writes the snapshot with its trailing checksum into `out`, section by section, the
    /// checksum computed on the way. Why not [`encode`](Self::encode) and one write: a
    /// snapshot with per-switch records runs to megabytes, `sketch run` writes it after
    /// its last packet, and building the whole file in memory first cost a third of that
    /// tail (7 of 24 ms on the 5M-packet trace). Give `out` a buffer (`BufWriter`): the
    /// header and the geometry go in small pieces, the arrays and the record stream whole.
    pub fn write_to<W: Write>(&self, out: W) -> std::io::Result<()> {
        let mut out = Checksummed { inner: out, crc: 0 };
        self.emit_header(&mut out)?;
        for s in &self.sections {
            emit_section(s, &mut out)?;
        }
        for s in &self.per_switch {
            s.emit(&mut out)?;
        }
        let Checksummed { mut inner, crc } = out;
        inner.write_all(&crc.to_le_bytes())?;
        inner.flush()
    }

    fn emit_header<W: Write>(&self, out: &mut W) -> std::io::Result<()> {
        out.write_all(&MAGIC)?;
        out.write_all(&self.version().to_le_bytes())?;
        out.write_all(&[self.source, 0])?;
        out.write_all(&self.epoch.to_le_bytes())?;
        out.write_all(&self.time_ns.to_le_bytes())?;
        let f = &self.firmware;
        for w in [f.device, f.version, f.build_time, f.git_hash] {
            out.write_all(&w.to_le_bytes())?;
        }
        out.write_all(&self.packets.to_le_bytes())?;
        out.write_all(&((self.sections.len() + self.per_switch.len()) as u16).to_le_bytes())
    }

    /// The format version the file is stamped with: the lowest that holds its sections.
    pub fn version(&self) -> u16 {
        if self.per_switch.is_empty() {
            MIN_VERSION
        } else {
            PER_SWITCH_VERSION
        }
    }

    /// Decodes and validates a snapshot (checksum first, then structure and geometry).
    pub fn decode(buf: &[u8]) -> Result<Self, SnapshotError> {
        if buf.len() < MAGIC.len() || buf[..MAGIC.len()] != MAGIC {
            return Err(SnapshotError::BadMagic);
        }
        let version = match buf.get(8..10).map(|v| u16::from_le_bytes([v[0], v[1]])) {
            Some(v) if (MIN_VERSION..=VERSION).contains(&v) => v,
            Some(v) => return Err(SnapshotError::Version(v)),
            None => return Err(SnapshotError::Malformed(buf.len())),
        };
        if buf.len() < 4 {
            return Err(SnapshotError::Malformed(buf.len()));
        }
        let (body, trailer) = buf.split_at(buf.len() - 4);
        let stored = u32::from_le_bytes(trailer.try_into().unwrap());
        let computed = checksum(body);
        if stored != computed {
            return Err(SnapshotError::Checksum { stored, computed });
        }
        let at = |rest: &[u8]| body.len() - rest.len();
        let (rest, (source, epoch, time_ns, firmware, packets, count)) =
            header(body).map_err(|e| SnapshotError::Malformed(at(nom_rest(&e, body))))?;
        let (mut sections, mut per_switch) = (Vec::new(), Vec::new());
        let mut rest = rest;
        for i in 0..count as usize {
            let k = rest.get(..2).map(|b| u16::from_le_bytes([b[0], b[1]]));
            rest = match k {
                Some(k) if version >= PER_SWITCH_VERSION && per_switch::is_kind(k) => {
                    let (r, s) = per_switch::parse(i, k, &rest[2..], at(rest) + 2)?;
                    per_switch.push(s);
                    r
                }
                Some(k) if per_switch::is_kind(k) => {
                    let what = format!("per-switch kind {k} in a version-{version} file (it needs version {PER_SWITCH_VERSION})");
                    return Err(SnapshotError::Invalid { section: i, what });
                }
                _ => {
                    let (r, s) =
                        section(rest).map_err(|e| SnapshotError::Malformed(at(nom_rest(&e, rest))))?;
                    sections.push(validate(i, s)?);
                    r
                }
            };
        }
        if !rest.is_empty() {
            return Err(SnapshotError::Trailing(rest.len()));
        }
        Ok(Snapshot { source, epoch, time_ns, firmware, packets, sections, per_switch })
    }

    /// Writes the file atomically and durably ([`write_durably`]): a crash never leaves a
    /// torn snapshot under the final name, and a failed write never leaves the temporary
    /// file. An existing directory is refused before anything is written.
    pub fn write_file(&self, path: &Path) -> Result<(), SnapshotError> {
        if path.is_dir() {
            return Err(SnapshotError::IsDirectory(path.display().to_string()));
        }
        write_durably_with(path, |f| self.write_to(std::io::BufWriter::with_capacity(WRITE_BUFFER, f)))
            .map_err(|source| SnapshotError::Io { path: path.display().to_string(), source })
    }

    pub fn read_file(path: &Path) -> Result<Self, SnapshotError> {
        let buf = std::fs::read(path)
            .map_err(|source| SnapshotError::Io { path: path.display().to_string(), source })?;
        Self::decode(&buf)
    }
}

/// What the name of a snapshot's temporary file ends with ([`temp_path`]).
pub const TEMP_SUFFIX: &str = ".tmp-snapshot";

/// The temporary name `path` is written under before the rename: the full file name plus
/// [`TEMP_SUFFIX`], in the same directory (a rename never crosses file systems).
pub fn temp_path(path: &Path) -> std::path::PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(TEMP_SUFFIX);
    path.with_file_name(name)
}

/// Writes `bytes` under the temporary name, syncs them to the disk, renames the file over
/// `path` and syncs the directory, so that once this returns the new file survives a power
/// loss whole; on any failure the temporary file is removed (best effort: it may never have
/// been created) and `path` is as it was.
pub fn write_durably(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_durably_with(path, |f| f.write_all(bytes))
}

/// [`write_durably`] with the bytes written by `write` into the temporary file, for a
/// writer that streams them instead of holding them all.
pub fn write_durably_with<F>(path: &Path, write: F) -> std::io::Result<()>
where
    F: FnOnce(&mut std::fs::File) -> std::io::Result<()>,
{
    let tmp = temp_path(path);
    let result = write_synced(&tmp, write).and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
        return result;
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::File::open(dir)?.sync_all()
}

/// Creates `path`, has `write` fill it and waits until its bytes are on the disk.
fn write_synced<F>(path: &Path, write: F) -> std::io::Result<()>
where
    F: FnOnce(&mut std::fs::File) -> std::io::Result<()>,
{
    let mut f = std::fs::File::create(path)?;
    write(&mut f)?;
    f.sync_all()
}

/// The buffer between a snapshot's pieces and its file: large enough that the header and
/// geometry fields reach the kernel in few writes.
const WRITE_BUFFER: usize = 256 * 1024;

/// A writer that checksums every byte it passes on (the file's trailer is the CRC-32C of
/// every byte before it).
struct Checksummed<W> {
    inner: W,
    /// The checksum of the bytes passed on so far.
    crc: u32,
}

impl<W: Write> Write for Checksummed<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.crc = crc32c::crc32c_append(self.crc, &buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn nom_rest<'a>(e: &nom::Err<nom::error::Error<&'a [u8]>>, whole: &'a [u8]) -> &'a [u8] {
    match e {
        nom::Err::Error(e) | nom::Err::Failure(e) => e.input,
        nom::Err::Incomplete(_) => &whole[whole.len()..],
    }
}

fn emit_crc<W: Write>(p: &CrcParams, out: &mut W) -> std::io::Result<()> {
    for w in [p.poly, p.init, p.xorout] {
        out.write_all(&w.to_le_bytes())?;
    }
    out.write_all(&[p.refin as u8, p.refout as u8])
}

fn emit_bytes<W: Write>(data: &[u8], out: &mut W) -> std::io::Result<()> {
    out.write_all(&(data.len() as u64).to_le_bytes())?;
    out.write_all(data)
}

fn emit_section<W: Write>(s: &Section, out: &mut W) -> std::io::Result<()> {
    match s {
        Section::Tower { geometry, mode, arrays } => {
            out.write_all(&kind::TOWER.to_le_bytes())?;
            out.write_all(&[*mode as u8, geometry.arrays.len() as u8])?;
            for (a, data) in geometry.arrays.iter().zip(arrays) {
                out.write_all(&[a.width])?;
                out.write_all(&a.depth.to_le_bytes())?;
                emit_crc(&a.hash, out)?;
                emit_bytes(data, out)?;
            }
        }
        Section::SuMax { geometry: g, arrays } => {
            out.write_all(&kind::SUMAX.to_le_bytes())?;
            out.write_all(&g.depth.to_le_bytes())?;
            out.write_all(&[g.size_width, g.delay_cells, g.delay_width, g.time_width, g.time_shift])?;
            out.write_all(&g.delay_bins.base_ns.to_le_bytes())?;
            out.write_all(&[g.delay_bins.bins_per_octave, g.hashes.len() as u8])?;
            for (h, data) in g.hashes.iter().zip(arrays) {
                emit_crc(h, out)?;
                emit_bytes(data, out)?;
            }
        }
    }
    Ok(())
}

type Header = (u8, u64, u64, FirmwareId, u64, u16);

fn header(i: &[u8]) -> IResult<&[u8], Header> {
    let (i, _) = tag(&MAGIC[..])(i)?;
    let (i, _version) = le_u16(i)?;
    let (i, source) = le_u8(i)?;
    let (i, _reserved) = le_u8(i)?;
    let (i, epoch) = le_u64(i)?;
    let (i, time_ns) = le_u64(i)?;
    let (i, device) = le_u32(i)?;
    let (i, version) = le_u32(i)?;
    let (i, build_time) = le_u32(i)?;
    let (i, git_hash) = le_u32(i)?;
    let (i, packets) = le_u64(i)?;
    let (i, count) = le_u16(i)?;
    let fw = FirmwareId { device, version, build_time, git_hash };
    Ok((i, (source, epoch, time_ns, fw, packets, count)))
}

fn crc_params(i: &[u8]) -> IResult<&[u8], CrcParams> {
    let (i, poly) = le_u32(i)?;
    let (i, init) = le_u32(i)?;
    let (i, xorout) = le_u32(i)?;
    let (i, refin) = le_u8(i)?;
    let (i, refout) = le_u8(i)?;
    Ok((i, CrcParams { poly, init, xorout, refin: refin != 0, refout: refout != 0 }))
}

fn bytes(i: &[u8]) -> IResult<&[u8], Vec<u8>> {
    let (i, len) = le_u64(i)?;
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    let (i, data) = take(len)(i)?;
    Ok((i, data.to_vec()))
}

/// What a section announced that this build cannot decode.
#[derive(Debug)]
enum Unknown {
    Kind(u16),
    Mode(u8),
}

/// A parsed section, or what was unknown in it.
type Parsed = Result<Section, Unknown>;

fn section(i: &[u8]) -> IResult<&[u8], Parsed> {
    let (i, k) = le_u16(i)?;
    match k {
        kind::TOWER => tower_section(i),
        kind::SUMAX => sumax_section(i),
        other => Ok((i, Err(Unknown::Kind(other)))),
    }
}

fn tower_section(i: &[u8]) -> IResult<&[u8], Parsed> {
    let (mut i, (mode, n)) = nom::sequence::pair(le_u8, le_u8)(i)?;
    let (mut geo, mut arrays) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let (r, width) = le_u8(i)?;
        let (r, depth) = le_u32(r)?;
        let (r, hash) = crc_params(r)?;
        let (r, data) = bytes(r)?;
        geo.push(ArrayGeometry { width, depth, hash });
        arrays.push(data);
        i = r;
    }
    let geometry = TowerGeometry { arrays: geo };
    let parsed = match InsertMode::from_u8(mode) {
        Some(mode) => Ok(Section::Tower { geometry, mode, arrays }),
        None => Err(Unknown::Mode(mode)),
    };
    Ok((i, parsed))
}

fn sumax_section(i: &[u8]) -> IResult<&[u8], Parsed> {
    let (i, depth) = le_u32(i)?;
    let (i, w) = take(5usize)(i)?;
    let (i, base_ns) = le_u32(i)?;
    let (i, bins_per_octave) = le_u8(i)?;
    let (mut i, n) = le_u8(i)?;
    let (mut hashes, mut arrays) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let (r, h) = crc_params(i)?;
        let (r, data) = bytes(r)?;
        hashes.push(h);
        arrays.push(data);
        i = r;
    }
    let geometry = SuMaxGeometry {
        hashes,
        depth,
        size_width: w[0],
        delay_cells: w[1],
        delay_width: w[2],
        time_width: w[3],
        time_shift: w[4],
        delay_bins: DelayBinRule { base_ns, bins_per_octave },
    };
    Ok((i, Ok(Section::SuMax { geometry, arrays })))
}

/// Checks geometry and that every array has exactly the bytes its geometry needs.
fn validate(section: usize, s: Parsed) -> Result<Section, SnapshotError> {
    let invalid = |what: String| SnapshotError::Invalid { section, what };
    let s = match s {
        Ok(s) => s,
        Err(Unknown::Mode(m)) => return Err(invalid(format!("unknown TowerSketch insertion mode {m}"))),
        Err(Unknown::Kind(kind)) => return Err(SnapshotError::UnknownKind { section, kind }),
    };
    let expected: Vec<usize> = match &s {
        Section::Tower { geometry, .. } => {
            geometry.validate().map_err(|e| invalid(e.to_string()))?;
            geometry.arrays.iter().map(|a| packed_len(a.depth, a.width as u64)).collect()
        }
        Section::SuMax { geometry, .. } => {
            geometry.validate().map_err(|e| invalid(e.to_string()))?;
            let bits = geometry.bucket_bits();
            geometry.hashes.iter().map(|_| packed_len(geometry.depth, bits)).collect()
        }
    };
    let arrays = match &s {
        Section::Tower { arrays, .. } | Section::SuMax { arrays, .. } => arrays,
    };
    for (a, (data, want)) in arrays.iter().zip(&expected).enumerate() {
        if data.len() != *want {
            return Err(invalid(format!("array {a} holds {} bytes, its geometry needs {want}", data.len())));
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests;
