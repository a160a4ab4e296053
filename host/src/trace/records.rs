//! The papers' 21-byte record format: a 13-byte flow key followed by an 8-byte timestamp.
//!
//! Why: SketchINT, LightGuardian and the Tower/SuMax reference code read CAIDA traces
//! preprocessed into fixed 21-byte records, so keys can be replayed without re-parsing
//! packets and results compare with the published figures. Layout per record:
//!
//! ```text
//! +0   flow key, 13 bytes, exactly the contract's FlowKey bytes (network byte order)
//! +13  timestamp, u64 little-endian, nanoseconds
//! ```
//!
//! The timestamp is little-endian because the reference tools `fread` it into a native
//! integer on x86. The records carry no length, so packets read from them have
//! `wire_len` 0 and no hops. A file whose size is not a multiple of 21 ends with a
//! truncated record, which is an error naming its offset.

use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::Path;

use smartnic_contract::{FlowKey, KEY_LEN};

use super::capture::read_full;
use super::error::{Problem, TraceError};
use super::Packet;

/// Bytes per record.
pub const RECORD_LEN: usize = KEY_LEN + 8;

/// Encodes one record.
pub fn encode(key: &FlowKey, ts_ns: u64) -> [u8; RECORD_LEN] {
    let mut r = [0u8; RECORD_LEN];
    r[..KEY_LEN].copy_from_slice(key.as_bytes());
    r[KEY_LEN..].copy_from_slice(&ts_ns.to_le_bytes());
    r
}

/// Decodes one record.
pub fn decode(r: &[u8; RECORD_LEN]) -> (FlowKey, u64) {
    let key = FlowKey(r[..KEY_LEN].try_into().unwrap());
    let ts = u64::from_le_bytes(r[KEY_LEN..].try_into().unwrap());
    (key, ts)
}

/// Streaming reader of 21-byte records.
pub struct RecordReader<R> {
    inner: R,
    offset: u64,
}

impl RecordReader<BufReader<File>> {
    pub fn open(path: &Path) -> Result<Self, TraceError> {
        Ok(Self::new(BufReader::with_capacity(1 << 16, File::open(path)?)))
    }
}

impl<R: Read> RecordReader<R> {
    pub fn new(inner: R) -> Self {
        RecordReader { inner, offset: 0 }
    }

    /// The next record, `None` at a clean end of file.
    pub fn next_record(&mut self) -> Result<Option<(FlowKey, u64)>, TraceError> {
        let mut r = [0u8; RECORD_LEN];
        let n = read_full(&mut self.inner, &mut r)?;
        if n == 0 {
            return Ok(None);
        }
        if n < RECORD_LEN {
            return Err(TraceError::at(
                self.offset,
                Problem::Truncated { what: "21-byte record", need: RECORD_LEN as u64, got: n as u64 },
            ));
        }
        self.offset += RECORD_LEN as u64;
        Ok(Some(decode(&r)))
    }

    /// The next record as a [`Packet`] (wire length 0, no hops).
    pub fn next_packet(&mut self) -> Result<Option<Packet>, TraceError> {
        Ok(self.next_record()?.map(|(key, ts_ns)| Packet {
            ts_ns,
            wire_len: 0,
            key,
            hops: Default::default(),
        }))
    }
}

/// Writer of 21-byte records.
pub struct RecordWriter<W: Write> {
    out: W,
}

impl<W: Write> RecordWriter<W> {
    pub fn new(out: W) -> Self {
        RecordWriter { out }
    }

    pub fn write(&mut self, key: &FlowKey, ts_ns: u64) -> std::io::Result<()> {
        self.out.write_all(&encode(key, ts_ns))
    }

    pub fn into_inner(mut self) -> std::io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_bytes_round_trip() {
        let key = FlowKey::from_v4([1, 2, 3, 4], [5, 6, 7, 8], 0x0102, 0x0304, 6);
        let bytes = encode(&key, 0x0807_0605_0403_0201);
        assert_eq!(bytes, [1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 6, 1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(decode(&bytes), (key, 0x0807_0605_0403_0201));
    }

    #[test]
    fn truncated_tail_is_an_error() {
        let key = FlowKey::default();
        let mut w = RecordWriter::new(Vec::new());
        w.write(&key, 1).unwrap();
        w.write(&key, 2).unwrap();
        let mut b = w.into_inner().unwrap();
        b.pop();
        let mut r = RecordReader::new(&b[..]);
        assert_eq!(r.next_record().unwrap(), Some((key, 1)));
        let e = r.next_record().unwrap_err();
        assert_eq!(e.offset(), Some(21));
    }
}
