//! Opening a capture file of either format behind one reader.
//!
//! Why: every consumer (stats, sketch replay, accuracy runs) wants "the frames of this
//! file" and should not care whether it is pcap or pcapng. The format is recognised by
//! its magic, so a misnamed file still opens, and an unknown magic is an error that says
//! which formats exist.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use super::error::{Problem, TraceError};
use super::frame::{classify, classify_into, Classified, FrameError};
use super::pcap::{self, PcapReader};
use super::pcapng::{self, PcapNgReader};
use super::records::RecordReader;
use super::Packet;

/// One captured frame, borrowed from the reader's buffer until the next call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawFrame<'a> {
    /// Byte offset of the record (or block) in the file.
    pub offset: u64,
    /// Timestamp in nanoseconds since the epoch.
    pub ts_ns: u64,
    /// Original length of the frame on the wire.
    pub orig_len: u32,
    /// LINKTYPE_* of the frame (1 = Ethernet).
    pub linktype: u32,
    /// The pcapng interface the frame was captured on (0 in a pcap file): a switch port in
    /// the lab's per-switch logs.
    pub interface: u32,
    /// Captured bytes (possibly fewer than `orig_len`).
    pub data: &'a [u8],
}

/// Reads until `buf` is full or the input ends; returns how many bytes were read.
pub(crate) fn read_full<R: Read>(r: &mut R, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// A pcap or pcapng reader chosen by the file's magic.
pub enum CaptureReader<R> {
    Pcap(PcapReader<R>),
    PcapNg(PcapNgReader<R>),
}

impl CaptureReader<BufReader<File>> {
    /// Opens a capture file with a buffered, streaming reader.
    pub fn open(path: &Path) -> Result<Self, TraceError> {
        let f = File::open(path)?;
        Self::new(BufReader::with_capacity(1 << 16, f))
    }
}

impl<R: Read> CaptureReader<R> {
    /// Recognises the format from the first four bytes.
    pub fn new(mut inner: R) -> Result<Self, TraceError> {
        let mut magic = [0u8; 4];
        let n = read_full(&mut inner, &mut magic)?;
        if n < 4 {
            return Err(TraceError::at(
                0,
                Problem::Truncated { what: "capture file magic", need: 4, got: n as u64 },
            ));
        }
        if pcap::sniff(magic).is_some() {
            Ok(CaptureReader::Pcap(PcapReader::after_magic(inner, magic)?))
        } else if magic == pcapng::SHB_TYPE_BYTES {
            Ok(CaptureReader::PcapNg(PcapNgReader::after_magic(inner)?))
        } else {
            Err(TraceError::at(0, Problem::UnknownMagic(magic)))
        }
    }

    /// The next frame, `None` at a clean end of file.
    pub fn next_frame(&mut self) -> Result<Option<RawFrame<'_>>, TraceError> {
        match self {
            CaptureReader::Pcap(r) => r.next_frame(),
            CaptureReader::PcapNg(r) => r.next_frame(),
        }
    }
}

/// Which file format to read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// pcap or pcapng, recognised by the file's magic.
    #[default]
    Auto,
    Pcap,
    Pcapng,
    /// The papers' 21-byte records (13-byte key + u64 LE timestamp); no magic.
    Records,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::Pcap => "pcap",
            Format::Pcapng => "pcapng",
            Format::Records => "records",
        }
    }
}

/// Frames that did not become packets, by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    /// IP packets returned.
    pub packets: u64,
    /// Frames that were not IP.
    pub non_ip: u64,
    /// Malformed frames.
    pub malformed: u64,
}

enum Source<R> {
    Capture(CaptureReader<R>),
    Records(RecordReader<R>),
}

/// Packets of a trace file of any supported format, with non-IP and malformed frames
/// counted (and skipped).
///
/// Why: most consumers (sketch replay, accuracy runs) want only the IP packets but must
/// still report how many frames were not counted; this is the one place that does it.
pub struct PacketReader<R = BufReader<File>> {
    src: Source<R>,
    counts: Counts,
    first_malformed: Option<(u64, FrameError)>,
    /// Malformed frames by [`FrameError::name`].
    malformed_by_reason: BTreeMap<&'static str, u64>,
}

impl PacketReader<BufReader<File>> {
    /// Opens a pcap or pcapng file (recognised by its magic).
    pub fn open(path: &Path) -> Result<Self, TraceError> {
        Self::open_as(path, Format::Auto)
    }

    /// Opens a file in the given format; `Format::Records` reads 21-byte records.
    pub fn open_as(path: &Path, format: Format) -> Result<Self, TraceError> {
        let f = BufReader::with_capacity(1 << 16, File::open(path)?);
        Self::from_reader(f, format)
    }
}

impl<R: Read> PacketReader<R> {
    /// Reads from any byte stream.
    pub fn from_reader(inner: R, format: Format) -> Result<Self, TraceError> {
        let src = match format {
            Format::Records => Source::Records(RecordReader::new(inner)),
            _ => {
                let r = CaptureReader::new(inner)?;
                let found = match r {
                    CaptureReader::Pcap(_) => Format::Pcap,
                    CaptureReader::PcapNg(_) => Format::Pcapng,
                };
                if format != Format::Auto && format != found {
                    return Err(TraceError::at(
                        0,
                        Problem::WrongFormat { asked: format.name(), found: found.name() },
                    ));
                }
                Source::Capture(r)
            }
        };
        Ok(PacketReader {
            src,
            counts: Counts::default(),
            first_malformed: None,
            malformed_by_reason: BTreeMap::new(),
        })
    }

    /// The next frame, classified (non-IP and malformed frames are returned, and counted).
    pub fn next_classified(&mut self) -> Result<Option<Classified>, TraceError> {
        let c = match &mut self.src {
            Source::Records(r) => r.next_packet()?.map(Classified::Packet),
            Source::Capture(r) => match r.next_frame()? {
                None => None,
                Some(frame) => {
                    let c = classify(&frame);
                    if let Classified::Malformed(e) = c {
                        let offset = frame.offset;
                        self.note_malformed(offset, e);
                    }
                    Some(c)
                }
            },
        };
        match &c {
            Some(Classified::Packet(_)) => self.counts.packets += 1,
            Some(Classified::NonIp) => self.counts.non_ip += 1,
            Some(Classified::Malformed(_)) => self.counts.malformed += 1,
            None => {}
        }
        Ok(c)
    }

    /// [`PacketReader::next_packet`] into an existing packet, reusing its hop vector's
    /// memory (no allocation per packet); `Ok(false)` at the end, `p` then unspecified.
    pub fn next_packet_into(&mut self, p: &mut Packet) -> Result<bool, TraceError> {
        loop {
            let Source::Capture(r) = &mut self.src else {
                return Ok(self.next_packet()?.map(|q| *p = q).is_some());
            };
            let Some(frame) = r.next_frame()? else { return Ok(false) };
            match classify_into(&frame, p) {
                Ok(true) => {
                    self.counts.packets += 1;
                    return Ok(true);
                }
                Ok(false) => self.counts.non_ip += 1,
                Err(e) => {
                    let offset = frame.offset;
                    self.note_malformed(offset, e);
                    self.counts.malformed += 1;
                }
            }
        }
    }

    /// The next IP packet; non-IP and malformed frames are counted and skipped.
    pub fn next_packet(&mut self) -> Result<Option<Packet>, TraceError> {
        loop {
            match self.next_classified()? {
                None => return Ok(None),
                Some(Classified::Packet(p)) => return Ok(Some(p)),
                Some(_) => {}
            }
        }
    }

    /// Keeps the first malformed frame and counts each by reason.
    fn note_malformed(&mut self, offset: u64, e: FrameError) {
        self.first_malformed.get_or_insert((offset, e));
        *self.malformed_by_reason.entry(e.name()).or_default() += 1;
    }

    /// Malformed frames so far, by reason ([`FrameError::name`]).
    pub fn malformed_by_reason(&self) -> &BTreeMap<&'static str, u64> {
        &self.malformed_by_reason
    }

    /// What has been read so far.
    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// File offset and reason of the first malformed frame, for error reports.
    pub fn first_malformed(&self) -> Option<(u64, FrameError)> {
        self.first_malformed
    }
}

/// Reads every frame of `path` and hands each, classified, to `f`.
///
/// Why a callback: consumers that keep their own state (stats, sketch replay) share the
/// reading and classification code. Stops at the first file-level error.
pub fn scan<F: FnMut(Classified)>(path: &Path, format: Format, mut f: F) -> Result<(), TraceError> {
    let mut r = PacketReader::open_as(path, format)?;
    while let Some(c) = r.next_classified()? {
        f(c);
    }
    Ok(())
}
