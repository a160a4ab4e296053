//! Errors of the trace file readers.
//!
//! Why a dedicated type: a capture that is cut short or corrupted must never be silently
//! shortened, so every problem names the byte offset in the file where it was found and
//! what was wrong there. The CLI prints these as they are; tests match on [`Problem`].

/// A problem found at a given byte offset of a trace file.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// Shown as the OS error alone; callers add which file (the CLI says "trace <path>").
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("at byte offset {offset}: {problem}")]
    Format { offset: u64, problem: Problem },
}

impl TraceError {
    pub(crate) fn at(offset: u64, problem: Problem) -> Self {
        TraceError::Format { offset, problem }
    }

    /// The format problem, if this is not an I/O error.
    pub fn problem(&self) -> Option<&Problem> {
        match self {
            TraceError::Format { problem, .. } => Some(problem),
            TraceError::Io(_) => None,
        }
    }

    /// The byte offset of a format problem.
    pub fn offset(&self) -> Option<u64> {
        match self {
            TraceError::Format { offset, .. } => Some(*offset),
            TraceError::Io(_) => None,
        }
    }
}

/// What was wrong in the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    #[error("unknown file magic {0:02x?} (expected pcap, pcapng; use --format records for 21-byte records)")]
    UnknownMagic([u8; 4]),
    #[error("file is {found}, not {asked} as --format says")]
    WrongFormat { asked: &'static str, found: &'static str },
    #[error("{what} truncated: need {need} bytes, file has {got}")]
    Truncated { what: &'static str, need: u64, got: u64 },
    #[error("pcap record of {len} captured bytes exceeds the limit of {limit}")]
    RecordTooLarge { len: u32, limit: u32 },
    #[error("unsupported {what} version {major}.{minor}")]
    Version { what: &'static str, major: u16, minor: u16 },
    #[error("pcapng byte-order magic {0:02x?} is neither 0x1A2B3C4D nor its swap")]
    ByteOrderMagic([u8; 4]),
    #[error("pcapng block length {0} is invalid (must be >= 12, a multiple of 4 and <= 16 MiB)")]
    BlockLength(u32),
    #[error("pcapng block length {head} does not match trailing length {tail}")]
    BlockLengthMismatch { head: u32, tail: u32 },
    #[error("pcapng block before the first section header block")]
    NoSection,
    #[error("pcapng {block} block body is inconsistent: {detail}")]
    BadBlock { block: &'static str, detail: &'static str },
    #[error("pcapng packet names interface {0}, which no interface description block declared")]
    UnknownInterface(u32),
    #[error("pcapng if_tsresol value {0:#04x} is out of range")]
    TsResol(u8),
}
