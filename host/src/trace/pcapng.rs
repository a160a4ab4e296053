//! pcapng files: a streaming reader and a small writer.
//!
//! Why: modern capture tools (Wireshark, dumpcap, tcpdump -w on some systems) write
//! pcapng, and a capture may mix interfaces with different link types and timestamp
//! resolutions. The reader handles the Section Header Block (either byte order, a new
//! section resets the interfaces), Interface Description Blocks with `if_tsresol` and
//! `if_tsoffset`, Enhanced, Simple and obsolete Packet Blocks, and skips every other
//! block type by its length. A Simple Packet Block has no timestamp; it inherits the
//! timestamp of the previous packet of the section (0 if none), documented here because
//! per-flow timing depends on it. Framing errors (bad lengths, truncation, unknown
//! interface) are [`TraceError`]s with the block's offset. The writer exists for tests and
//! conversions; it writes one section in the chosen byte order.

use std::io::{Read, Write};

use nom::number::complete::{u16 as nom_u16, u32 as nom_u32};
use nom::number::Endianness;
use nom::sequence::tuple;
use nom::IResult;

use super::capture::{read_full, RawFrame};
use super::error::{Problem, TraceError};
use super::pcap::{put16, put32};

/// Section Header Block type; a palindrome, so it reads the same in both byte orders.
pub const SHB_TYPE: u32 = 0x0A0D_0D0A;
pub const SHB_TYPE_BYTES: [u8; 4] = [0x0A, 0x0D, 0x0D, 0x0A];
pub const BYTE_ORDER_MAGIC: u32 = 0x1A2B_3C4D;
pub const IDB_TYPE: u32 = 1;
pub const OPB_TYPE: u32 = 2;
pub const SPB_TYPE: u32 = 3;
pub const EPB_TYPE: u32 = 6;
/// Largest block accepted; a longer length is taken as corruption.
pub const MAX_BLOCK_LEN: u32 = 16 << 20;
const OPT_END: u16 = 0;
const OPT_IF_TSRESOL: u16 = 9;
const OPT_IF_TSOFFSET: u16 = 14;

#[derive(Clone, Copy, Debug)]
struct Interface {
    linktype: u32,
    snaplen: u32,
    /// Timestamp units per second.
    units_per_sec: u64,
    offset_s: i64,
}

impl Interface {
    fn ts_ns(&self, ts: u64) -> u64 {
        let ns =
            ts as i128 * 1_000_000_000 / self.units_per_sec as i128 + self.offset_s as i128 * 1_000_000_000;
        ns.clamp(0, u64::MAX as i128) as u64
    }
}

/// Units per second of an `if_tsresol` byte: 10^-r, or 2^-r when the high bit is set.
pub fn tsresol_units(r: u8) -> Option<u64> {
    if r & 0x80 == 0 {
        10u64.checked_pow(r as u32)
    } else {
        1u64.checked_shl((r & 0x7F) as u32).filter(|_| (r & 0x7F) < 64)
    }
}

/// Streaming pcapng reader.
pub struct PcapNgReader<R> {
    inner: R,
    endian: Option<Endianness>,
    interfaces: Vec<Interface>,
    offset: u64,
    last_ts_ns: u64,
    buf: Vec<u8>,
}

fn u32_at(e: Endianness, b: &[u8]) -> u32 {
    let r: IResult<&[u8], u32> = nom_u32(e)(b);
    r.map(|(_, v)| v).unwrap_or(0)
}

/// interface, ts high, ts low, captured length, original length.
type EpbFields = (u32, u32, u32, u32, u32);
/// interface, drops, ts high, ts low, captured length, original length.
type OpbFields = (u16, u16, u32, u32, u32, u32);

fn epb_fields(e: Endianness) -> impl Fn(&[u8]) -> IResult<&[u8], EpbFields> {
    move |i| tuple((nom_u32(e), nom_u32(e), nom_u32(e), nom_u32(e), nom_u32(e)))(i)
}

fn opb_fields(e: Endianness) -> impl Fn(&[u8]) -> IResult<&[u8], OpbFields> {
    move |i| tuple((nom_u16(e), nom_u16(e), nom_u32(e), nom_u32(e), nom_u32(e), nom_u32(e)))(i)
}

fn option_header(e: Endianness) -> impl Fn(&[u8]) -> IResult<&[u8], (u16, u16)> {
    move |i| tuple((nom_u16(e), nom_u16(e)))(i)
}

fn pad4(n: usize) -> usize {
    (n + 3) & !3
}

impl<R: Read> PcapNgReader<R> {
    /// Opens a stream that starts with a Section Header Block.
    pub fn new(mut inner: R) -> Result<Self, TraceError> {
        let mut t = [0u8; 4];
        let n = read_full(&mut inner, &mut t)?;
        if n < 4 || t != SHB_TYPE_BYTES {
            return Err(TraceError::at(0, Problem::UnknownMagic(t)));
        }
        Self::after_magic(inner)
    }

    /// Continues after the caller consumed the SHB's four type bytes.
    pub fn after_magic(inner: R) -> Result<Self, TraceError> {
        let mut r = PcapNgReader {
            inner,
            endian: None,
            interfaces: Vec::new(),
            offset: 4,
            last_ts_ns: 0,
            buf: Vec::new(),
        };
        r.read_shb(0)?;
        Ok(r)
    }

    fn truncated(&self, start: u64, what: &'static str, need: u64, got: usize) -> TraceError {
        TraceError::at(start, Problem::Truncated { what, need, got: got as u64 })
    }

    /// Reads `len` bytes into the buffer or fails naming the block at `start`.
    fn fill(&mut self, start: u64, len: usize) -> Result<(), TraceError> {
        // Grow with the data actually present instead of trusting the length field, so a
        // corrupt length costs no large allocation.
        self.buf.clear();
        let got = (&mut self.inner).take(len as u64).read_to_end(&mut self.buf)?;
        self.offset += got as u64;
        if got < len {
            return Err(self.truncated(start, "pcapng block", len as u64, got));
        }
        Ok(())
    }

    fn check_len(start: u64, len: u32, min: u32) -> Result<(), TraceError> {
        if len < min || !len.is_multiple_of(4) || len > MAX_BLOCK_LEN {
            return Err(TraceError::at(start, Problem::BlockLength(len)));
        }
        Ok(())
    }

    /// Checks the trailing length copy at the end of the buffer.
    fn check_tail(&self, start: u64, e: Endianness, len: u32) -> Result<(), TraceError> {
        let tail = u32_at(e, &self.buf[self.buf.len() - 4..]);
        if tail != len {
            return Err(TraceError::at(start, Problem::BlockLengthMismatch { head: len, tail }));
        }
        Ok(())
    }

    /// Reads an SHB whose type bytes were already consumed.
    fn read_shb(&mut self, start: u64) -> Result<(), TraceError> {
        let mut h = [0u8; 8];
        let n = read_full(&mut self.inner, &mut h)?;
        self.offset += n as u64;
        if n < 8 {
            return Err(self.truncated(start, "pcapng section header", 12, 4 + n));
        }
        let bom: [u8; 4] = h[4..8].try_into().unwrap();
        let e = if u32::from_le_bytes(bom) == BYTE_ORDER_MAGIC {
            Endianness::Little
        } else if u32::from_be_bytes(bom) == BYTE_ORDER_MAGIC {
            Endianness::Big
        } else {
            return Err(TraceError::at(start + 8, Problem::ByteOrderMagic(bom)));
        };
        let len = u32_at(e, &h[0..4]);
        Self::check_len(start, len, 28)?;
        self.fill(start, len as usize - 12)?;
        self.check_tail(start, e, len)?;
        let major = u16::from_be_bytes([self.buf[0], self.buf[1]]);
        let (major, minor) = match e {
            Endianness::Big => (major, u16::from_be_bytes([self.buf[2], self.buf[3]])),
            _ => (
                u16::from_le_bytes([self.buf[0], self.buf[1]]),
                u16::from_le_bytes([self.buf[2], self.buf[3]]),
            ),
        };
        if major != 1 {
            return Err(TraceError::at(start + 12, Problem::Version { what: "pcapng", major, minor }));
        }
        self.endian = Some(e);
        self.interfaces.clear();
        self.last_ts_ns = 0;
        Ok(())
    }

    fn parse_idb(&self, start: u64, e: Endianness) -> Result<Interface, TraceError> {
        let body = &self.buf[..self.buf.len() - 4];
        let bad =
            |detail| TraceError::at(start, Problem::BadBlock { block: "interface description", detail });
        if body.len() < 8 {
            return Err(bad("shorter than its fixed fields"));
        }
        let linktype = u16::from_be_bytes([body[0], body[1]]);
        let linktype = match e {
            Endianness::Big => linktype as u32,
            _ => u16::from_le_bytes([body[0], body[1]]) as u32,
        };
        let mut iface =
            Interface { linktype, snaplen: u32_at(e, &body[4..8]), units_per_sec: 1_000_000, offset_s: 0 };
        let mut opts = &body[8..];
        while opts.len() >= 4 {
            let (rest, (code, len)) = option_header(e)(opts).map_err(|_| bad("bad option"))?;
            if code == OPT_END {
                break;
            }
            let padded = pad4(len as usize);
            if rest.len() < padded {
                return Err(bad("option overruns the block"));
            }
            let val = &rest[..len as usize];
            match code {
                OPT_IF_TSRESOL if len == 1 => {
                    iface.units_per_sec = tsresol_units(val[0])
                        .ok_or_else(|| TraceError::at(start, Problem::TsResol(val[0])))?;
                }
                OPT_IF_TSOFFSET if len == 8 => {
                    let b: [u8; 8] = val.try_into().unwrap();
                    iface.offset_s = match e {
                        Endianness::Big => i64::from_be_bytes(b),
                        _ => i64::from_le_bytes(b),
                    };
                }
                _ => {}
            }
            opts = &rest[padded..];
        }
        Ok(iface)
    }

    /// The next packet of the file, `None` at a clean end of file.
    pub fn next_frame(&mut self) -> Result<Option<RawFrame<'_>>, TraceError> {
        loop {
            let start = self.offset;
            let mut t = [0u8; 4];
            let n = read_full(&mut self.inner, &mut t)?;
            self.offset += n as u64;
            if n == 0 {
                return Ok(None);
            }
            if n < 4 {
                return Err(self.truncated(start, "pcapng block header", 8, n));
            }
            if t == SHB_TYPE_BYTES {
                self.read_shb(start)?;
                continue;
            }
            let e = self.endian.ok_or_else(|| TraceError::at(start, Problem::NoSection))?;
            let mut l = [0u8; 4];
            let n = read_full(&mut self.inner, &mut l)?;
            self.offset += n as u64;
            if n < 4 {
                return Err(self.truncated(start, "pcapng block header", 8, 4 + n));
            }
            let btype = u32_at(e, &t);
            let len = u32_at(e, &l);
            Self::check_len(start, len, 12)?;
            self.fill(start, len as usize - 8)?;
            self.check_tail(start, e, len)?;
            let body_len = self.buf.len() - 4;
            let (iface_id, ts, cap, orig, data_at) = match btype {
                IDB_TYPE => {
                    let iface = self.parse_idb(start, e)?;
                    self.interfaces.push(iface);
                    continue;
                }
                EPB_TYPE => {
                    let (_, (id, hi, lo, cap, orig)) = epb_fields(e)(&self.buf[..body_len])
                        .map_err(|_| bad_packet(start, "enhanced packet", "shorter than its fixed fields"))?;
                    (id, Some(((hi as u64) << 32) | lo as u64), cap, orig, 20)
                }
                OPB_TYPE => {
                    let (_, (id, _drops, hi, lo, cap, orig)) = opb_fields(e)(&self.buf[..body_len])
                        .map_err(|_| bad_packet(start, "packet", "shorter than its fixed fields"))?;
                    (id as u32, Some(((hi as u64) << 32) | lo as u64), cap, orig, 20)
                }
                SPB_TYPE => {
                    if body_len < 4 {
                        return Err(bad_packet(start, "simple packet", "shorter than its fixed fields"));
                    }
                    let orig = u32_at(e, &self.buf[..4]);
                    let snap = self.interfaces.first().map(|i| i.snaplen).unwrap_or(0);
                    let mut cap = orig.min((body_len - 4) as u32);
                    if snap != 0 {
                        cap = cap.min(snap);
                    }
                    (0, None, cap, orig, 4)
                }
                _ => continue, // unknown or uninteresting block: skipped by its length
            };
            let iface = *self
                .interfaces
                .get(iface_id as usize)
                .ok_or_else(|| TraceError::at(start, Problem::UnknownInterface(iface_id)))?;
            if data_at as u64 + cap as u64 > body_len as u64 {
                return Err(bad_packet(start, "packet", "captured length overruns the block"));
            }
            let ts_ns = match ts {
                Some(ts) => iface.ts_ns(ts),
                None => self.last_ts_ns,
            };
            self.last_ts_ns = ts_ns;
            return Ok(Some(RawFrame {
                offset: start,
                ts_ns,
                orig_len: orig,
                linktype: iface.linktype,
                interface: iface_id,
                data: &self.buf[data_at..data_at + cap as usize],
            }));
        }
    }
}

fn bad_packet(start: u64, block: &'static str, detail: &'static str) -> TraceError {
    TraceError::at(start, Problem::BadBlock { block, detail })
}

/// Writes one pcapng section.
pub struct PcapNgWriter<W: Write> {
    out: W,
    e: Endianness,
}

impl<W: Write> PcapNgWriter<W> {
    /// Writes the Section Header Block in byte order `e`.
    pub fn new(out: W, e: Endianness) -> std::io::Result<Self> {
        let mut w = PcapNgWriter { out, e };
        let mut body = Vec::new();
        put16(&mut body, e, 1);
        put16(&mut body, e, 0);
        body.extend_from_slice(&[0xFF; 8]); // section length unknown (-1)
                                            // The byte-order magic goes first in the body.
        let mut full = Vec::new();
        put32(&mut full, e, BYTE_ORDER_MAGIC);
        full.extend_from_slice(&body);
        w.write_block(SHB_TYPE, &full)?;
        Ok(w)
    }

    /// Writes any block: type, length, body padded to 4 bytes, trailing length.
    pub fn write_block(&mut self, btype: u32, body: &[u8]) -> std::io::Result<()> {
        let padded = pad4(body.len());
        let len = (12 + padded) as u32;
        let mut b = Vec::with_capacity(len as usize);
        put32(&mut b, self.e, btype);
        put32(&mut b, self.e, len);
        b.extend_from_slice(body);
        b.resize(8 + padded, 0);
        put32(&mut b, self.e, len);
        self.out.write_all(&b)
    }

    /// Declares an interface; `tsresol` is the raw `if_tsresol` byte (None = µs).
    pub fn add_interface(&mut self, linktype: u16, snaplen: u32, tsresol: Option<u8>) -> std::io::Result<()> {
        let mut body = Vec::new();
        put16(&mut body, self.e, linktype);
        put16(&mut body, self.e, 0);
        put32(&mut body, self.e, snaplen);
        if let Some(r) = tsresol {
            put16(&mut body, self.e, OPT_IF_TSRESOL);
            put16(&mut body, self.e, 1);
            body.extend_from_slice(&[r, 0, 0, 0]);
            put16(&mut body, self.e, OPT_END);
            put16(&mut body, self.e, 0);
        }
        self.write_block(IDB_TYPE, &body)
    }

    /// Writes an Enhanced Packet Block; `ts` is in the interface's units.
    pub fn write_epb(&mut self, iface: u32, ts: u64, orig_len: u32, data: &[u8]) -> std::io::Result<()> {
        let mut body = Vec::with_capacity(20 + data.len() + 3);
        for v in [iface, (ts >> 32) as u32, ts as u32, data.len() as u32, orig_len] {
            put32(&mut body, self.e, v);
        }
        body.extend_from_slice(data);
        self.write_block(EPB_TYPE, &body)
    }

    /// Writes a Simple Packet Block (interface 0, no timestamp).
    pub fn write_spb(&mut self, orig_len: u32, data: &[u8]) -> std::io::Result<()> {
        let mut body = Vec::with_capacity(4 + data.len() + 3);
        put32(&mut body, self.e, orig_len);
        body.extend_from_slice(data);
        self.write_block(SPB_TYPE, &body)
    }

    /// Flushes and returns the inner writer.
    pub fn into_inner(mut self) -> std::io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frames keep the interface they were written on (the lab's per-port switch logs).
    #[test]
    fn frames_name_their_interface() {
        let mut w = PcapNgWriter::new(Vec::new(), Endianness::Little).unwrap();
        for _ in 0..3 {
            w.add_interface(1, 0, Some(9)).unwrap();
        }
        w.write_epb(2, 5, 1, &[0xAA]).unwrap();
        w.write_epb(0, 6, 1, &[0xBB]).unwrap();
        let bytes = w.into_inner().unwrap();
        let mut r = PcapNgReader::new(&bytes[..]).unwrap();
        let f = r.next_frame().unwrap().unwrap();
        assert_eq!((f.interface, f.data), (2, &[0xAA][..]));
        let f = r.next_frame().unwrap().unwrap();
        assert_eq!((f.interface, f.data), (0, &[0xBB][..]));
    }

    #[test]
    fn tsresol_units_decimal_and_binary() {
        assert_eq!(tsresol_units(6), Some(1_000_000));
        assert_eq!(tsresol_units(9), Some(1_000_000_000));
        assert_eq!(tsresol_units(0x80 | 10), Some(1024));
        assert_eq!(tsresol_units(20), None);
        assert_eq!(tsresol_units(0xFF), None);
    }

    #[test]
    fn fixed_little_endian_epb() {
        // SHB (28 bytes), IDB (20 bytes, Ethernet, snaplen 0), EPB with 2 data bytes.
        let bytes: Vec<u8> = [
            &[0x0A, 0x0D, 0x0D, 0x0A, 28, 0, 0, 0, 0x4D, 0x3C, 0x2B, 0x1A, 1, 0, 0, 0][..],
            &[0xFF; 8][..],
            &[28, 0, 0, 0][..],
            &[1, 0, 0, 0, 20, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 20, 0, 0, 0][..],
            &[6, 0, 0, 0, 36, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0][..],
            &[2, 0, 0, 0, 64, 0, 0, 0, 0xAB, 0xCD, 0, 0, 36, 0, 0, 0][..],
        ]
        .concat();
        let mut r = PcapNgReader::new(&bytes[..]).unwrap();
        let f = r.next_frame().unwrap().unwrap();
        assert_eq!(f.ts_ns, 7_000);
        assert_eq!(f.orig_len, 64);
        assert_eq!(f.linktype, 1);
        assert_eq!(f.data, &[0xAB, 0xCD]);
        assert_eq!(f.offset, 48);
        assert!(r.next_frame().unwrap().is_none());

        let mut w = PcapNgWriter::new(Vec::new(), Endianness::Little).unwrap();
        w.add_interface(1, 0, None).unwrap();
        w.write_epb(0, 7, 64, &[0xAB, 0xCD]).unwrap();
        assert_eq!(w.into_inner().unwrap(), bytes);
    }
}
