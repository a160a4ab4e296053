//! Register access over a byte stream: how the `smartnic` CLI talks to the simulated NIC,
//! which runs as a separate service process (`smartnic-sim`, in `sim-tb`) so the host
//! binary stays free of the HDL toolchain while the driver's readout code path stays the
//! one a real board uses.
//!
//! Protocol (little-endian). On connect the server sends `"SNICSIM1"` and the BAR size
//! (u64). Each request is one opcode byte and its arguments; each reply starts with a
//! status byte ([`status`]):
//!
//! | request | arguments | reply payload |
//! |---|---|---|
//! | `r` read32 | offset u32 | value u32 |
//! | `w` write32 | offset u32, value u32 | none |
//! | `b` read_block | offset u32, words u32 | words x u32 |
//! | `c` command | length u32, UTF-8 text | length u32, UTF-8 text |
//! | `q` quit | none | none (the server returns) |
//!
//! A failed request replies with its status code, then a u32 offset and a length-prefixed
//! message, so [`AccessError::DeviceGone`] and friends survive the trip.

use crate::access::{AccessError, RegisterAccess};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::process::{Child, Command, Stdio};

/// Greeting that opens every session.
pub const MAGIC: &[u8; 8] = b"SNICSIM1";
/// Most words one block request may ask for (bounds the server's buffer).
pub const MAX_BLOCK_WORDS: u32 = 1 << 22;

/// Reply status codes.
pub mod status {
    pub const OK: u8 = 0;
    pub const DEVICE_GONE: u8 = 1;
    pub const OUT_OF_RANGE: u8 = 2;
    pub const MISALIGNED: u8 = 3;
    pub const FAILED: u8 = 4;
}

/// A device that can be served: registers plus free-form commands (e.g. "replay 10000"
/// for the simulator's packet source).
pub trait Served: RegisterAccess {
    /// Runs a service command; the default knows none.
    fn command(&mut self, line: &str) -> Result<String, String> {
        Err(format!("unknown command `{line}`"))
    }
}

/// Serves `dev` on `input`/`output` until a quit request or the end of `input`.
pub fn serve<D: Served + ?Sized>(dev: &mut D, input: impl Read, output: impl Write) -> io::Result<()> {
    let (mut rd, mut wr) = (BufReader::new(input), BufWriter::new(output));
    wr.write_all(MAGIC)?;
    wr.write_all(&dev.bar_size().to_le_bytes())?;
    wr.flush()?;
    loop {
        let mut op = [0u8; 1];
        if rd.read(&mut op)? == 0 {
            return Ok(());
        }
        match op[0] {
            b'r' => {
                let off = read_u32(&mut rd)?;
                reply(&mut wr, dev.read32(off).map(|v| v.to_le_bytes().to_vec()))?;
            }
            b'w' => {
                let (off, val) = (read_u32(&mut rd)?, read_u32(&mut rd)?);
                reply(&mut wr, dev.write32(off, val).map(|_| Vec::new()))?;
            }
            b'b' => {
                let (off, n) = (read_u32(&mut rd)?, read_u32(&mut rd)?);
                let r = if n > MAX_BLOCK_WORDS {
                    Err(AccessError::OutOfRange {
                        offset: off as u64,
                        len: 4 * n as u64,
                        bar_size: dev.bar_size(),
                    })
                } else {
                    let mut words = vec![0u32; n as usize];
                    dev.read_block(off, &mut words)
                        .map(|_| words.iter().flat_map(|w| w.to_le_bytes()).collect())
                };
                reply(&mut wr, r)?;
            }
            b'c' => {
                let line = read_text(&mut rd)?;
                match dev.command(&line) {
                    Ok(out) => {
                        wr.write_all(&[status::OK])?;
                        write_text(&mut wr, &out)?;
                    }
                    Err(msg) => {
                        wr.write_all(&[status::FAILED, 0, 0, 0, 0])?;
                        write_text(&mut wr, &msg)?;
                    }
                }
            }
            b'q' => return wr.flush(),
            other => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("bad request opcode {other:#x}"),
                ))
            }
        }
        wr.flush()?;
    }
}

fn reply(wr: &mut impl Write, r: Result<Vec<u8>, AccessError>) -> io::Result<()> {
    match r {
        Ok(payload) => {
            wr.write_all(&[status::OK])?;
            wr.write_all(&payload)
        }
        Err(e) => {
            let (code, off) = match &e {
                AccessError::DeviceGone { offset } => (status::DEVICE_GONE, *offset),
                AccessError::OutOfRange { offset, .. } => (status::OUT_OF_RANGE, *offset as u32),
                AccessError::Misaligned { offset } => (status::MISALIGNED, *offset as u32),
                _ => (status::FAILED, 0),
            };
            wr.write_all(&[code])?;
            wr.write_all(&off.to_le_bytes())?;
            write_text(wr, &e.to_string())
        }
    }
}

fn read_u32(rd: &mut impl Read) -> io::Result<u32> {
    let mut b = [0u8; 4];
    rd.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

fn read_text(rd: &mut impl Read) -> io::Result<String> {
    let n = read_u32(rd)?;
    if n > 1 << 20 {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "text field longer than 1 MiB"));
    }
    let mut b = vec![0u8; n as usize];
    rd.read_exact(&mut b)?;
    String::from_utf8(b).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

fn write_text(wr: &mut impl Write, s: &str) -> io::Result<()> {
    wr.write_all(&(s.len() as u32).to_le_bytes())?;
    wr.write_all(s.as_bytes())
}

/// The client: a [`RegisterAccess`] whose device lives behind a byte stream, usually the
/// stdin/stdout of a spawned service process.
pub struct StreamBar {
    rd: BufReader<Box<dyn Read + Send>>,
    wr: BufWriter<Box<dyn Write + Send>>,
    bar_size: u64,
    child: Option<Child>,
}

impl StreamBar {
    /// Connects over the given streams and reads the greeting.
    pub fn connect(rd: Box<dyn Read + Send>, wr: Box<dyn Write + Send>) -> io::Result<Self> {
        let mut rd = BufReader::new(rd);
        let mut magic = [0u8; 8];
        rd.read_exact(&mut magic)?;
        if &magic != MAGIC {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the service did not greet with SNICSIM1",
            ));
        }
        let mut size = [0u8; 8];
        rd.read_exact(&mut size)?;
        Ok(StreamBar { rd, wr: BufWriter::new(wr), bar_size: u64::from_le_bytes(size), child: None })
    }

    /// Spawns `cmd` with piped stdin/stdout and connects to it. Its stderr is inherited, so
    /// the service's own progress and errors reach the user.
    pub fn spawn(mut cmd: Command) -> io::Result<Self> {
        let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn()?;
        let (out, inp) = (child.stdout.take().expect("piped"), child.stdin.take().expect("piped"));
        let mut bar = Self::connect(Box::new(out), Box::new(inp)).map_err(|e| match e.kind() {
            io::ErrorKind::UnexpectedEof => {
                let status = child.wait().map(|s| s.to_string()).unwrap_or_else(|_| "unknown status".into());
                io::Error::new(
                    e.kind(),
                    format!("the service exited before greeting ({status}); its own error is above"),
                )
            }
            _ => e,
        })?;
        bar.child = Some(child);
        Ok(bar)
    }

    /// Runs a service command and returns its answer.
    pub fn command(&mut self, line: &str) -> Result<String, AccessError> {
        let io = |what: &str| {
            let what = format!("simulator service: {what} `{line}`");
            move |source| AccessError::Io { what, source }
        };
        self.wr.write_all(b"c").map_err(io("sending"))?;
        write_text(&mut self.wr, line).map_err(io("sending"))?;
        self.wr.flush().map_err(io("sending"))?;
        let ok = self.status().map_err(io("reading the answer to"))?;
        let text = read_text(&mut self.rd).map_err(io("reading the answer to"))?;
        if ok {
            Ok(text)
        } else {
            Err(AccessError::Command { line: line.to_string(), message: text })
        }
    }

    /// Reads the status byte: true for OK; false (with the offset word consumed) otherwise.
    fn status(&mut self) -> io::Result<bool> {
        let mut s = [0u8; 1];
        self.rd.read_exact(&mut s)?;
        if s[0] == status::OK {
            return Ok(true);
        }
        read_u32(&mut self.rd)?;
        Ok(false)
    }

    fn request(&mut self, req: &[u8], payload: &mut [u8]) -> Result<(), AccessError> {
        let io = |source| AccessError::Io { what: "simulator service connection".into(), source };
        self.wr.write_all(req).map_err(io)?;
        self.wr.flush().map_err(io)?;
        let mut s = [0u8; 1];
        self.rd.read_exact(&mut s).map_err(io)?;
        if s[0] == status::OK {
            return self.rd.read_exact(payload).map_err(io);
        }
        let off = read_u32(&mut self.rd).map_err(io)?;
        let msg = read_text(&mut self.rd).map_err(io)?;
        Err(match s[0] {
            status::DEVICE_GONE => AccessError::DeviceGone { offset: off },
            status::MISALIGNED => AccessError::Misaligned { offset: off as u64 },
            status::OUT_OF_RANGE => AccessError::OutOfRange {
                offset: off as u64,
                len: payload.len() as u64,
                bar_size: self.bar_size,
            },
            _ => AccessError::Io { what: "simulated device".into(), source: io::Error::other(msg) },
        })
    }
}

impl RegisterAccess for StreamBar {
    fn bar_size(&self) -> u64 {
        self.bar_size
    }

    fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
        let mut req = vec![b'r'];
        req.extend_from_slice(&offset.to_le_bytes());
        let mut v = [0u8; 4];
        self.request(&req, &mut v)?;
        Ok(u32::from_le_bytes(v))
    }

    fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
        let mut req = vec![b'w'];
        req.extend_from_slice(&offset.to_le_bytes());
        req.extend_from_slice(&value.to_le_bytes());
        self.request(&req, &mut [])
    }

    /// One request for the whole block; the service still performs 32-bit reads in order.
    fn read_block(&mut self, offset: u32, out: &mut [u32]) -> Result<(), AccessError> {
        crate::access::check_range(self.bar_size, offset, 4 * out.len() as u64)?;
        for (k, chunk) in out.chunks_mut(MAX_BLOCK_WORDS as usize).enumerate() {
            let at = offset + 4 * (k * MAX_BLOCK_WORDS as usize) as u32;
            let mut req = vec![b'b'];
            req.extend_from_slice(&at.to_le_bytes());
            req.extend_from_slice(&(chunk.len() as u32).to_le_bytes());
            let mut bytes = vec![0u8; 4 * chunk.len()];
            self.request(&req, &mut bytes)?;
            for (w, b) in chunk.iter_mut().zip(bytes.chunks_exact(4)) {
                *w = u32::from_le_bytes(b.try_into().expect("4 bytes"));
            }
        }
        Ok(())
    }
}

impl Drop for StreamBar {
    /// Asks the service to quit and reaps it.
    fn drop(&mut self) {
        let _ = self.wr.write_all(b"q").and_then(|_| self.wr.flush());
        if let Some(mut c) = self.child.take() {
            let _ = c.wait();
        }
    }
}

impl Served for crate::emulated::EmulatedNic {}

#[cfg(test)]
mod tests;
