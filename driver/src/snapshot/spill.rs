//! The record stream of a long epoch, kept in a file beside its snapshot while the epoch
//! runs, and the snapshot written around it at the epoch's end.
//!
//! Why: an epoch's inflated-latency records are part of its snapshot, and an epoch as long
//! as a whole trace (`sketch run` without `--epoch-packets`) produces them in proportion to
//! its packets: about 1.5 bytes a packet on the 5M-packet test trace. Held in memory they
//! made a run's memory grow with the trace. Spilled, they cost a buffer; at the end the
//! kernel copies them into the snapshot file (no pass through user memory), and their
//! checksum, computed as they came, joins the file's by CRC combination.

use super::{per_switch, temp_path, PerSwitchSection, Snapshot, SnapshotError, WRITE_BUFFER};
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// What the name of a spill file ends with (after the snapshot's own name).
pub const SPILL_SUFFIX: &str = ".records-spill";

/// Record bytes gathered before they go to the file in one write.
const SPILL_BUFFER: usize = 1 << 20;

/// The head of an epoch's record stream, in a file of its own until the snapshot is
/// written ([`Snapshot::write_file_spilled`]). The file is removed when the spill is
/// dropped, written into a snapshot or not.
#[derive(Debug)]
pub struct RecordSpill {
    file: File,
    path: PathBuf,
    /// Bytes appended, buffered ones included.
    len: u64,
    /// CRC-32C of every byte appended.
    crc: u32,
    buf: Vec<u8>,
}

impl RecordSpill {
    /// An empty spill for the snapshot to be written at `snapshot`, beside it: the
    /// snapshot's directory is on the disk it goes to, where a temporary directory may be
    /// memory.
    pub fn create(snapshot: &Path) -> std::io::Result<Self> {
        let mut name = temp_path(snapshot).into_os_string();
        name.push(SPILL_SUFFIX);
        let path = PathBuf::from(name);
        let file =
            std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path)?;
        Ok(RecordSpill { file, path, len: 0, crc: 0, buf: Vec::with_capacity(SPILL_BUFFER) })
    }

    /// Appends the next records of the stream (whole records, in stream order).
    pub fn append(&mut self, stream: &[u8]) -> std::io::Result<()> {
        self.crc = crc32c::crc32c_append(self.crc, stream);
        self.len += stream.len() as u64;
        self.buf.extend_from_slice(stream);
        if self.buf.len() >= SPILL_BUFFER {
            self.flush_buffer()?;
        }
        Ok(())
    }

    /// Bytes of record stream held.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The file the spill is kept in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn flush_buffer(&mut self) -> std::io::Result<()> {
        self.file.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }
}

impl Drop for RecordSpill {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Snapshot {
    /// [`write_file`](Self::write_file) for a snapshot whose record stream begins in
    /// `spill`: the file's stream is the spill's bytes, then the stream of the snapshot's
    /// records section (the records that came after the last spill). The snapshot must
    /// end with its records section, as the writers order them.
    pub fn write_file_spilled(&self, path: &Path, mut spill: RecordSpill) -> Result<(), SnapshotError> {
        let io = |source| SnapshotError::Io { path: path.display().to_string(), source };
        if path.is_dir() {
            return Err(SnapshotError::IsDirectory(path.display().to_string()));
        }
        let Some((PerSwitchSection::Records { stream }, before)) = self.per_switch.split_last() else {
            let what = "spilled records, but the snapshot does not end with a records section".into();
            return Err(SnapshotError::Invalid {
                section: self.sections.len() + self.per_switch.len(),
                what,
            });
        };
        spill.flush_buffer().map_err(io)?;
        super::write_durably_with(path, |f| self.write_around(f, before, stream, &mut spill)).map_err(io)
    }

    /// Writes everything before the record stream through a buffer, the spill by the
    /// kernel's file-to-file copy, then the rest of the stream and the checksum.
    fn write_around(
        &self,
        f: &mut File,
        before: &[PerSwitchSection],
        stream: &[u8],
        spill: &mut RecordSpill,
    ) -> std::io::Result<()> {
        let mut out =
            super::Checksummed { inner: std::io::BufWriter::with_capacity(WRITE_BUFFER, &mut *f), crc: 0 };
        self.emit_header(&mut out)?;
        for s in &self.sections {
            super::emit_section(s, &mut out)?;
        }
        for s in before {
            s.emit(&mut out)?;
        }
        per_switch::emit_records_head(spill.len + stream.len() as u64, &mut out)?;
        let super::Checksummed { inner, crc } = out;
        let f = inner.into_inner().map_err(|e| e.into_error())?;
        spill.file.seek(SeekFrom::Start(0))?;
        let copied = std::io::copy(&mut spill.file, f)?;
        if copied != spill.len {
            let e = format!("{}: {copied} of {} bytes copied", spill.path.display(), spill.len);
            return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, e));
        }
        let crc = crc32c::crc32c_combine(crc, spill.crc, spill.len as usize);
        f.write_all(stream)?;
        f.write_all(&crc32c::crc32c_append(crc, stream).to_le_bytes())
    }
}
