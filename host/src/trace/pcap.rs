//! Classic libpcap files: reader and writer.
//!
//! Why by hand with nom instead of a pcap crate: the NIC experiments replay multi-GB
//! CAIDA-style captures, so the reader streams through one reusable block (records are
//! cut out of it in place: no read call and no copy per record), and every inconsistency
//! (a record cut short, a captured length beyond the snap length) becomes a
//! [`TraceError`] naming the byte offset instead of a silently shorter trace. Both byte
//! orders and both the microsecond (`0xA1B2C3D4`) and nanosecond
//! (`0xA1B23C4D`) magics are read; the writer emits nanosecond little-endian files.

use std::io::{Read, Write};

use nom::number::complete::{i32 as nom_i32, u16 as nom_u16, u32 as nom_u32};
use nom::number::Endianness;
use nom::sequence::tuple;
use nom::IResult;

use super::capture::{read_full, RawFrame};
use super::error::{Problem, TraceError};

/// Magic of a microsecond-resolution file, as a big-endian number.
pub const MAGIC_MICROS: u32 = 0xA1B2_C3D4;
/// Magic of a nanosecond-resolution file, as a big-endian number.
pub const MAGIC_NANOS: u32 = 0xA1B2_3C4D;
/// Largest captured length accepted per record (libpcap's own maximum snap length).
pub const MAX_RECORD_LEN: u32 = 262_144;
/// Global header length.
pub const HEADER_LEN: usize = 24;
/// Per-record header length.
pub const RECORD_HEADER_LEN: usize = 16;

/// LINKTYPE_ETHERNET.
pub const LINKTYPE_ETHERNET: u32 = 1;

/// The decoded global header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PcapHeader {
    pub endian: Endianness,
    pub nanos: bool,
    pub version: (u16, u16),
    pub snaplen: u32,
    pub linktype: u32,
}

/// Returns `(endian, nanos)` if `magic` (the first four file bytes) is a pcap magic.
pub fn sniff(magic: [u8; 4]) -> Option<(Endianness, bool)> {
    match (u32::from_le_bytes(magic), u32::from_be_bytes(magic)) {
        (MAGIC_MICROS, _) => Some((Endianness::Little, false)),
        (MAGIC_NANOS, _) => Some((Endianness::Little, true)),
        (_, MAGIC_MICROS) => Some((Endianness::Big, false)),
        (_, MAGIC_NANOS) => Some((Endianness::Big, true)),
        _ => None,
    }
}

/// version major, minor, thiszone, sigfigs, snaplen, network.
type HeaderRest = (u16, u16, i32, u32, u32, u32);

/// Parses the 20 header bytes after the magic.
fn header_rest(e: Endianness) -> impl Fn(&[u8]) -> IResult<&[u8], HeaderRest> {
    move |i| tuple((nom_u16(e), nom_u16(e), nom_i32(e), nom_u32(e), nom_u32(e), nom_u32(e)))(i)
}

/// Field `i` (0..4) of a 16-byte record header: ts_sec, ts_frac, incl_len, orig_len.
#[inline(always)]
fn record_field(rh: &[u8], e: Endianness, i: usize) -> u32 {
    let b: [u8; 4] = rh[4 * i..4 * i + 4].try_into().expect("4 bytes");
    match e {
        Endianness::Big => u32::from_be_bytes(b),
        _ => u32::from_le_bytes(b),
    }
}

/// Bytes read from the input per refill: records are cut out of this block in place, so a
/// record costs no read call and no copy (a page-cached file is read in a few large reads).
/// Small enough to stay in L2 beside the parser's working set.
pub const BLOCK_LEN: usize = 256 * 1024;

/// The input's bytes not yet consumed: `buf[start..end]`.
struct Block {
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl Block {
    fn new() -> Self {
        Block { buf: Vec::new(), start: 0, end: 0 }
    }

    /// Makes `need` unconsumed bytes available, reading only while fewer are; returns how
    /// many are (fewer than `need` only at the end of the input). I/O errors are returned
    /// only when bytes were needed, as the record-by-record reads did.
    #[inline(always)]
    fn fill<R: Read>(&mut self, inner: &mut R, need: usize) -> std::io::Result<usize> {
        if self.end - self.start >= need {
            return Ok(need);
        }
        self.refill(inner, need)
    }

    /// [`Block::fill`] once the block holds fewer than `need` bytes (once a block's
    /// worth of records): kept out of line so the test above inlines into the reader.
    #[cold]
    #[inline(never)]
    fn refill<R: Read>(&mut self, inner: &mut R, need: usize) -> std::io::Result<usize> {
        self.buf.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        if self.buf.len() < need.max(BLOCK_LEN) {
            self.buf.resize(need.max(BLOCK_LEN), 0);
        }
        while self.end < need {
            match inner.read(&mut self.buf[self.end..]) {
                Ok(0) => break,
                Ok(k) => self.end += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(self.end.min(need))
    }
}

/// Streaming reader of a pcap file.
pub struct PcapReader<R> {
    inner: R,
    header: PcapHeader,
    offset: u64,
    block: Block,
}

impl<R: Read> PcapReader<R> {
    /// Reads the global header (magic included) from `inner`.
    pub fn new(mut inner: R) -> Result<Self, TraceError> {
        let mut magic = [0u8; 4];
        let n = read_full(&mut inner, &mut magic)?;
        if n < 4 {
            return Err(TraceError::at(
                0,
                Problem::Truncated { what: "pcap file header", need: HEADER_LEN as u64, got: n as u64 },
            ));
        }
        Self::after_magic(inner, magic)
    }

    /// Continues after the caller already consumed the four magic bytes.
    pub fn after_magic(mut inner: R, magic: [u8; 4]) -> Result<Self, TraceError> {
        let (endian, nanos) = sniff(magic).ok_or_else(|| TraceError::at(0, Problem::UnknownMagic(magic)))?;
        let mut rest = [0u8; HEADER_LEN - 4];
        let n = read_full(&mut inner, &mut rest)?;
        if n < rest.len() {
            return Err(TraceError::at(
                0,
                Problem::Truncated { what: "pcap file header", need: HEADER_LEN as u64, got: 4 + n as u64 },
            ));
        }
        let (_, (major, minor, _zone, _sigfigs, snaplen, network)) =
            header_rest(endian)(&rest).map_err(|_| {
                TraceError::at(4, Problem::Truncated { what: "pcap file header", need: 24, got: 24 })
            })?;
        if major != 2 {
            return Err(TraceError::at(4, Problem::Version { what: "pcap", major, minor }));
        }
        Ok(PcapReader {
            inner,
            header: PcapHeader {
                endian,
                nanos,
                version: (major, minor),
                snaplen,
                // The upper bits carry FCS information (pcap spec); the link type is the
                // low 16 bits.
                linktype: network & 0xFFFF,
            },
            offset: HEADER_LEN as u64,
            block: Block::new(),
        })
    }

    pub fn header(&self) -> &PcapHeader {
        &self.header
    }

    /// Byte offset of the next record.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The next record, `None` at a clean end of file.
    pub fn next_frame(&mut self) -> Result<Option<RawFrame<'_>>, TraceError> {
        let start = self.offset;
        let n = self.block.fill(&mut self.inner, RECORD_HEADER_LEN)?;
        if n == 0 {
            return Ok(None);
        }
        if n < RECORD_HEADER_LEN {
            return Err(TraceError::at(
                start,
                Problem::Truncated {
                    what: "pcap record header",
                    need: RECORD_HEADER_LEN as u64,
                    got: n as u64,
                },
            ));
        }
        let e = self.header.endian;
        let rh = &self.block.buf[self.block.start..self.block.start + RECORD_HEADER_LEN];
        let (sec, frac, incl, orig) =
            (record_field(rh, e, 0), record_field(rh, e, 1), record_field(rh, e, 2), record_field(rh, e, 3));
        let limit =
            if self.header.snaplen == 0 { MAX_RECORD_LEN } else { self.header.snaplen.min(MAX_RECORD_LEN) };
        if incl > limit {
            return Err(TraceError::at(start, Problem::RecordTooLarge { len: incl, limit }));
        }
        let len = RECORD_HEADER_LEN + incl as usize;
        let got = self.block.fill(&mut self.inner, len)? - RECORD_HEADER_LEN;
        if got < incl as usize {
            return Err(TraceError::at(
                start,
                Problem::Truncated { what: "pcap record data", need: incl as u64, got: got as u64 },
            ));
        }
        let at = self.block.start + RECORD_HEADER_LEN;
        self.block.start += len;
        self.offset = start + len as u64;
        let frac_ns = if self.header.nanos { frac as u64 } else { frac as u64 * 1000 };
        Ok(Some(RawFrame {
            offset: start,
            ts_ns: sec as u64 * 1_000_000_000 + frac_ns,
            orig_len: orig,
            linktype: self.header.linktype,
            interface: 0,
            data: &self.block.buf[at..at + incl as usize],
        }))
    }
}

/// Writer of pcap files (either byte order, either resolution).
pub struct PcapWriter<W: Write> {
    out: W,
    endian: Endianness,
    nanos: bool,
}

impl<W: Write> PcapWriter<W> {
    /// Writes a nanosecond, little-endian header with the given snap length and link type.
    pub fn new(out: W, snaplen: u32, linktype: u32) -> std::io::Result<Self> {
        Self::with_format(out, Endianness::Little, true, snaplen, linktype)
    }

    /// Writes a header in the given byte order and resolution.
    pub fn with_format(
        mut out: W,
        endian: Endianness,
        nanos: bool,
        snaplen: u32,
        linktype: u32,
    ) -> std::io::Result<Self> {
        let magic = if nanos { MAGIC_NANOS } else { MAGIC_MICROS };
        let mut h = Vec::with_capacity(HEADER_LEN);
        put32(&mut h, endian, magic);
        put16(&mut h, endian, 2);
        put16(&mut h, endian, 4);
        put32(&mut h, endian, 0);
        put32(&mut h, endian, 0);
        put32(&mut h, endian, snaplen);
        put32(&mut h, endian, linktype);
        out.write_all(&h)?;
        Ok(PcapWriter { out, endian, nanos })
    }

    /// Writes one record; `data` is the captured part of a frame of `orig_len` bytes.
    /// In microsecond files the timestamp is truncated to microseconds. A timestamp past
    /// the 32-bit seconds field (after 2106-02-07) is an error, never a wrapped time.
    pub fn write(&mut self, ts_ns: u64, orig_len: u32, data: &[u8]) -> std::io::Result<()> {
        let sec = u32::try_from(ts_ns / 1_000_000_000).map_err(|_| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("timestamp {ts_ns} ns is beyond the pcap format's 32-bit seconds"),
            )
        })?;
        let ns = (ts_ns % 1_000_000_000) as u32;
        let frac = if self.nanos { ns } else { ns / 1000 };
        let mut h = [0u8; RECORD_HEADER_LEN];
        let e = self.endian;
        let fields = [sec, frac, data.len() as u32, orig_len];
        for (chunk, v) in h.chunks_exact_mut(4).zip(fields) {
            chunk.copy_from_slice(&to_bytes32(e, v));
        }
        self.out.write_all(&h)?;
        self.out.write_all(data)
    }

    /// Flushes and returns the inner writer.
    pub fn into_inner(mut self) -> std::io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

pub(crate) fn to_bytes32(e: Endianness, v: u32) -> [u8; 4] {
    match e {
        Endianness::Big => v.to_be_bytes(),
        _ => v.to_le_bytes(),
    }
}

pub(crate) fn put32(out: &mut Vec<u8>, e: Endianness, v: u32) {
    out.extend_from_slice(&to_bytes32(e, v));
}

pub(crate) fn put16(out: &mut Vec<u8>, e: Endianness, v: u16) {
    match e {
        Endianness::Big => out.extend_from_slice(&v.to_be_bytes()),
        _ => out.extend_from_slice(&v.to_le_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_bytes_big_endian_micros() {
        // Global header (BE, µs, snaplen 64, Ethernet) + one 3-byte record at 1.000002 s.
        let bytes: Vec<u8> = [
            &[0xA1, 0xB2, 0xC3, 0xD4, 0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 64, 0, 0, 0, 1][..],
            &[0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 60, 0xAA, 0xBB, 0xCC][..],
        ]
        .concat();
        let mut r = PcapReader::new(&bytes[..]).unwrap();
        assert_eq!(r.header().endian, Endianness::Big);
        assert!(!r.header().nanos);
        let f = r.next_frame().unwrap().unwrap();
        assert_eq!(f.ts_ns, 1_000_002_000);
        assert_eq!(f.orig_len, 60);
        assert_eq!(f.data, &[0xAA, 0xBB, 0xCC]);
        assert!(r.next_frame().unwrap().is_none());

        // Writing the same content back gives the same bytes.
        let mut w =
            PcapWriter::with_format(Vec::new(), Endianness::Big, false, 64, LINKTYPE_ETHERNET).unwrap();
        w.write(1_000_002_000, 60, &[0xAA, 0xBB, 0xCC]).unwrap();
        assert_eq!(w.into_inner().unwrap(), bytes);
    }

    #[test]
    fn a_timestamp_past_32_bit_seconds_is_refused_not_wrapped() {
        let mut w = PcapWriter::new(Vec::new(), 100, LINKTYPE_ETHERNET).unwrap();
        let last = u32::MAX as u64 * 1_000_000_000 + 999_999_999;
        w.write(last, 1, &[1]).unwrap();
        let e = w.write(last + 1, 1, &[1]).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("32-bit seconds"), "{e}");
        let out = w.into_inner().unwrap();
        let mut r = PcapReader::new(&out[..]).unwrap();
        assert_eq!(r.next_frame().unwrap().unwrap().ts_ns, last);
        assert!(r.next_frame().unwrap().is_none(), "the refused record wrote nothing");
    }

    /// Hands out at most `step` bytes per read (a pipe, or a slow disk).
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    /// A frame as comparable values: offset, timestamp, original length, bytes.
    type Frame = (u64, u64, u32, Vec<u8>);
    /// The error that ended a file: its offset and message.
    type End = Option<(Option<u64>, String)>;

    /// Every frame, or the error that ends the file, as comparable values.
    fn frames<R: Read>(r: R) -> (Vec<Frame>, End) {
        let mut r = PcapReader::new(r).unwrap();
        let mut out = Vec::new();
        loop {
            match r.next_frame() {
                Ok(Some(f)) => out.push((f.offset, f.ts_ns, f.orig_len, f.data.to_vec())),
                Ok(None) => return (out, None),
                Err(e) => return (out, Some((e.offset(), e.to_string()))),
            }
        }
    }

    /// Records are cut out of the block whatever the read sizes: records straddling a
    /// block refill, one record larger than a block, and a file cut at every byte of its
    /// last two records, read whole and one to 7 bytes at a time, give the same frames and
    /// the same error (offset, what is cut, bytes needed and found).
    #[test]
    fn block_reads_equal_whatever_the_read_size() {
        // `records` records of up to 9000 bytes (one of the largest size when `big`), then
        // records of 3 and 5 bytes.
        let file = |records: u32, big: bool| {
            let mut w = PcapWriter::new(Vec::new(), 0, LINKTYPE_ETHERNET).unwrap();
            for n in 0..records {
                let len = if big && n == 17 { MAX_RECORD_LEN as usize } else { (n as usize * 7919) % 9000 };
                w.write(n as u64 * 1000, len as u32 + 4, &vec![n as u8; len]).unwrap();
            }
            w.write(99, 3, &[1, 2, 3]).unwrap();
            w.write(100, 5, &[4, 5, 6, 7, 8]).unwrap();
            w.into_inner().unwrap()
        };
        let bytes = file(40, true);
        let (all, end) = frames(&bytes[..]);
        assert_eq!((all.len(), end), (42, None));
        assert_eq!(all[17].3.len(), MAX_RECORD_LEN as usize);
        for step in [1, 3, 7, 4096, 1 << 20] {
            assert_eq!(frames(Trickle { data: &bytes, step }), (all.clone(), None), "step {step}");
        }
        let bytes = file(4, false);
        let last_two = bytes.len() - 2 * RECORD_HEADER_LEN - 8;
        for cut in last_two..bytes.len() {
            let want = frames(&bytes[..cut]);
            let clean = cut == last_two || cut == last_two + RECORD_HEADER_LEN + 3;
            assert_eq!(want.1.is_none(), clean, "cut {cut}");
            for step in [1, 5] {
                assert_eq!(frames(Trickle { data: &bytes[..cut], step }), want, "cut {cut} step {step}");
            }
        }
        let (_, err) = frames(&bytes[..bytes.len() - 2]);
        let (offset, msg) = err.unwrap();
        assert_eq!(offset, Some((bytes.len() - RECORD_HEADER_LEN - 5) as u64));
        assert!(msg.contains("pcap record data truncated: need 5 bytes, file has 3"), "{msg}");
        let (_, err) = frames(&bytes[..bytes.len() - 5 - 6]);
        assert!(err.unwrap().1.contains("pcap record header truncated: need 16 bytes, file has 10"));
    }

    #[test]
    fn truncated_record_names_offset() {
        let mut w = PcapWriter::new(Vec::new(), 100, LINKTYPE_ETHERNET).unwrap();
        w.write(5, 10, &[1; 10]).unwrap();
        w.write(6, 10, &[2; 10]).unwrap();
        let mut bytes = w.into_inner().unwrap();
        bytes.truncate(bytes.len() - 3);
        let mut r = PcapReader::new(&bytes[..]).unwrap();
        assert!(r.next_frame().unwrap().is_some());
        let e = r.next_frame().unwrap_err();
        assert_eq!(e.offset(), Some(24 + 16 + 10));
        assert!(matches!(e.problem(), Some(Problem::Truncated { need: 10, got: 7, .. })));
    }
}
