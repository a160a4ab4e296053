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
//! | `h` has a card-to-host channel | none | 1 or 0 (u32) |
//! | `a` arm the channel | words u32 | none |
//! | `s` wait for a stream | timeout ms u32 | words n u32, n x u64 |
//! | `t` the record ring | none | has one: 1 or 0 (u32), words taken (u32) |
//! | `k` take from the ring | words u32, timeout ms u32 | words n u32, n x u64 (n = words) |
//! | `q` quit | none | none (the server returns) |
//!
//! A failed request replies with its status code, then a u32 offset and a length-prefixed
//! message, so [`AccessError::DeviceGone`] and friends survive the trip
//! ([`AccessError::RingTimeout`] as [`status::RING_TIMEOUT`] with the words that arrived in
//! the offset field: the client knows what it asked for).
//!
//! **Deadlines.** While a request runs, and while a slow device starts before the greeting
//! ([`serve_with`]), the server sends a [`status::BUSY`] byte every [`KEEPALIVE`] (a
//! Verilator build or a `replay` of many packets may take minutes); the client skips them. So a live service is never silent for long, and the client gives every wait for a
//! byte a deadline ([`DEFAULT_DEADLINE`], [`StreamBar::set_deadline`]): a service that
//! stalls (no greeting, half a reply, nothing after the greeting) fails the request with
//! "stopped answering" instead of hanging the caller, and a service that died is named
//! with its exit status or signal.

use crate::access::{AccessError, C2hChannel, RecordRing, RegisterAccess};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Greeting that opens every session.
pub const MAGIC: &[u8; 8] = b"SNICSIM1";
/// Most words one block request may ask for (bounds the server's buffer).
pub const MAX_BLOCK_WORDS: u32 = 1 << 22;
/// How often the server says [`status::BUSY`] while a request runs.
pub const KEEPALIVE: Duration = Duration::from_millis(250);
/// How long the client waits for the next byte of a greeting or reply by default: many
/// keepalive periods, so only a stalled service reaches it.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(30);
/// How long a closing or failed client waits for the service process to exit on its own.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// Reply status codes.
pub mod status {
    pub const OK: u8 = 0;
    pub const DEVICE_GONE: u8 = 1;
    pub const OUT_OF_RANGE: u8 = 2;
    pub const MISALIGNED: u8 = 3;
    pub const FAILED: u8 = 4;
    /// Not a reply: the request is still running (sent every `KEEPALIVE`, any number of
    /// times before the reply's real status byte).
    pub const BUSY: u8 = 5;
    /// A take from the record ring timed out; the offset field holds the words arrived.
    pub const RING_TIMEOUT: u8 = 6;
}

/// A device that can be served: registers plus free-form commands (e.g. "replay 10000"
/// for the simulator's packet source).
pub trait Served: RegisterAccess {
    /// Runs a service command; the default knows none.
    fn command(&mut self, line: &str) -> Result<String, String> {
        Err(format!("unknown command `{line}`"))
    }
}

/// The server's output, shared with its keepalive thread.
struct Out<W: Write> {
    wr: BufWriter<W>,
    /// A request is running (its reply is not written yet).
    busy: bool,
    /// The session is over: the keepalive thread returns.
    done: bool,
}

/// The server's output and the keepalive thread's wake-up.
struct Link<W: Write> {
    out: Mutex<Out<W>>,
    wake: Condvar,
}

impl<W: Write> Link<W> {
    fn lock(&self) -> MutexGuard<'_, Out<W>> {
        self.out.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks a request as running: from now on the keepalive thread speaks for it.
    fn begin(&self) {
        self.lock().busy = true;
    }

    /// Writes a request's reply (ending its keepalives) and flushes.
    fn reply(&self, f: impl FnOnce(&mut BufWriter<W>) -> io::Result<()>) -> io::Result<()> {
        let mut o = self.lock();
        o.busy = false;
        f(&mut o.wr)?;
        o.wr.flush()
    }

    /// Sends [`status::BUSY`] every [`KEEPALIVE`] while a request runs, until `done`.
    fn keepalive(&self) {
        let mut o = self.lock();
        while !o.done {
            o = self.wake.wait_timeout(o, KEEPALIVE).unwrap_or_else(|e| e.into_inner()).0;
            if o.busy && !o.done {
                // A write error means the client is gone; the request's own reply will say so.
                let _ = o.wr.write_all(&[status::BUSY]).and_then(|_| o.wr.flush());
            }
        }
    }

    fn finish(&self) {
        self.lock().done = true;
        self.wake.notify_all();
    }
}

/// Serves `dev` on `input`/`output` until a quit request or the end of `input`, with a
/// keepalive thread that reports long requests as still running ([`status::BUSY`]).
pub fn serve<D: Served + ?Sized>(dev: &mut D, input: impl Read, output: impl Write + Send) -> io::Result<()> {
    with_link(output, |link| serve_requests(dev, BufReader::new(input), link))
}

/// [`serve`] for a device that takes long to start (the simulator builds its Verilator
/// model): keepalives run while `start` builds it, before the greeting, so a client's
/// deadline covers a stalled start but not a slow one. A failed start ends the session
/// with its message (the client sees the stream end before the greeting).
pub fn serve_with<D: Served, E: std::fmt::Display>(
    start: impl FnOnce() -> Result<D, E>,
    input: impl Read,
    output: impl Write + Send,
) -> io::Result<()> {
    with_link(output, |link| {
        link.begin();
        match start() {
            Ok(mut dev) => serve_requests(&mut dev, BufReader::new(input), link),
            Err(e) => Err(io::Error::other(e.to_string())),
        }
    })
}

/// Runs `session` with the output behind a [`Link`] and its keepalive thread.
fn with_link<W: Write + Send>(output: W, session: impl FnOnce(&Link<W>) -> io::Result<()>) -> io::Result<()> {
    let link = Link {
        out: Mutex::new(Out { wr: BufWriter::new(output), busy: false, done: false }),
        wake: Condvar::new(),
    };
    std::thread::scope(|s| {
        s.spawn(|| link.keepalive());
        let r = session(&link);
        link.finish();
        r
    })
}

/// The request loop of [`serve`].
fn serve_requests<D: Served + ?Sized, W: Write>(
    dev: &mut D,
    mut rd: impl Read,
    link: &Link<W>,
) -> io::Result<()> {
    let size = dev.bar_size();
    link.reply(|wr| {
        wr.write_all(MAGIC)?;
        wr.write_all(&size.to_le_bytes())
    })?;
    loop {
        let mut op = [0u8; 1];
        if rd.read(&mut op)? == 0 {
            return Ok(());
        }
        match op[0] {
            b'r' => {
                let off = read_u32(&mut rd)?;
                link.begin();
                let r = dev.read32(off).map(|v| v.to_le_bytes().to_vec());
                link.reply(|wr| reply(wr, r))?;
            }
            b'w' => {
                let (off, val) = (read_u32(&mut rd)?, read_u32(&mut rd)?);
                link.begin();
                let r = dev.write32(off, val).map(|_| Vec::new());
                link.reply(|wr| reply(wr, r))?;
            }
            b'b' => {
                let (off, n) = (read_u32(&mut rd)?, read_u32(&mut rd)?);
                link.begin();
                let r = read_block_reply(dev, off, n);
                link.reply(|wr| reply(wr, r))?;
            }
            b'c' => {
                let line = read_text(&mut rd)?;
                link.begin();
                let r = dev.command(&line);
                link.reply(|wr| match r {
                    Ok(out) => {
                        wr.write_all(&[status::OK])?;
                        write_text(wr, &out)
                    }
                    Err(msg) => {
                        wr.write_all(&[status::FAILED, 0, 0, 0, 0])?;
                        write_text(wr, &msg)
                    }
                })?;
            }
            b'h' => {
                link.begin();
                let has = dev.c2h().is_some() as u32;
                link.reply(|wr| reply(wr, Ok(has.to_le_bytes().to_vec())))?;
            }
            b'a' => {
                let words = read_u32(&mut rd)?;
                link.begin();
                let r = channel(dev).and_then(|c| c.arm(words as usize)).map(|_| Vec::new());
                link.reply(|wr| reply(wr, r))?;
            }
            b's' => {
                let ms = read_u32(&mut rd)?;
                link.begin();
                let r = channel(dev).and_then(|c| c.wait(Duration::from_millis(ms as u64))).map(|w| {
                    let mut b = (w.len() as u32).to_le_bytes().to_vec();
                    b.extend(w.iter().flat_map(|x| x.to_le_bytes()));
                    b
                });
                link.reply(|wr| reply(wr, r))?;
            }
            b't' => {
                link.begin();
                let r = dev.ring().map_or([0, 0], |r| [1, r.taken()]);
                link.reply(|wr| reply(wr, Ok(r.iter().flat_map(|v| v.to_le_bytes()).collect())))?;
            }
            b'k' => {
                let (words, ms) = (read_u32(&mut rd)?, read_u32(&mut rd)?);
                link.begin();
                let r = take_reply(dev, words, Duration::from_millis(ms as u64));
                link.reply(|wr| reply(wr, r))?;
            }
            b'q' => return link.reply(|_| Ok(())),
            other => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("bad request opcode {other:#x}"),
                ))
            }
        }
    }
}

/// The served device's channel, or the error a client without one gets.
fn channel<D: Served + ?Sized>(dev: &mut D) -> Result<&mut dyn C2hChannel, AccessError> {
    dev.c2h().ok_or_else(|| AccessError::Command {
        line: "card-to-host channel".into(),
        message: "this device has no card-to-host channel".into(),
    })
}

/// The payload of a take of `words` ring words: the count, then the words.
fn take_reply<D: Served + ?Sized>(
    dev: &mut D,
    words: u32,
    timeout: Duration,
) -> Result<Vec<u8>, AccessError> {
    let ring = dev.ring().ok_or_else(|| AccessError::Command {
        line: "record ring".into(),
        message: "this device has no record ring".into(),
    })?;
    let w = ring.take(words, timeout)?;
    let mut b = (w.len() as u32).to_le_bytes().to_vec();
    b.extend(w.iter().flat_map(|x| x.to_le_bytes()));
    Ok(b)
}

/// The payload of a block read of `n` words at `off` (bounded by [`MAX_BLOCK_WORDS`]).
fn read_block_reply<D: Served + ?Sized>(dev: &mut D, off: u32, n: u32) -> Result<Vec<u8>, AccessError> {
    if n > MAX_BLOCK_WORDS {
        return Err(AccessError::OutOfRange {
            offset: off as u64,
            len: 4 * n as u64,
            bar_size: dev.bar_size(),
        });
    }
    let mut words = vec![0u32; n as usize];
    dev.read_block(off, &mut words)?;
    Ok(words.iter().flat_map(|w| w.to_le_bytes()).collect())
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
                AccessError::RingTimeout { arrived, .. } => (status::RING_TIMEOUT, *arrived as u32),
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

/// The client: a [`RegisterAccess`] whose device lives behind a byte stream, usually a
/// spawned service process connected by a socket pair (its stdin and stdout).
pub struct StreamBar {
    rd: BufReader<Box<dyn Read + Send>>,
    wr: BufWriter<Box<dyn Write + Send>>,
    bar_size: u64,
    child: Option<Child>,
    /// The socket under `rd`/`wr` when the connection has deadlines.
    socket: Option<UnixStream>,
    deadline: Option<Duration>,
    /// Why the connection failed: a stream that lost a reply mid-way is out of step, so
    /// every later request fails with the same reason at once.
    broken: Option<String>,
    /// Whether the served device has a card-to-host channel (asked once).
    has_c2h: Option<bool>,
    /// The served device's record ring's words taken, as it said at the last `t` or `k`.
    ring_taken: u32,
}

impl StreamBar {
    /// Connects over the given streams and reads the greeting. Waits as long as the
    /// streams do (no deadline): see [`StreamBar::connect_socket`].
    pub fn connect(rd: Box<dyn Read + Send>, wr: Box<dyn Write + Send>) -> io::Result<Self> {
        let mut bar = StreamBar {
            rd: BufReader::new(rd),
            wr: BufWriter::new(wr),
            bar_size: 0,
            child: None,
            socket: None,
            deadline: None,
            broken: None,
            has_c2h: None,
            ring_taken: 0,
        };
        bar.greet()?;
        Ok(bar)
    }

    /// Connects over a socket and reads the greeting; every wait for a byte of the greeting
    /// or of a reply (and every blocked send) fails after `deadline`.
    pub fn connect_socket(socket: UnixStream, deadline: Duration) -> io::Result<Self> {
        let (rd, wr) = (socket.try_clone()?, socket.try_clone()?);
        let mut bar = StreamBar {
            rd: BufReader::new(Box::new(rd)),
            wr: BufWriter::new(Box::new(wr)),
            bar_size: 0,
            child: None,
            socket: Some(socket),
            deadline: None,
            broken: None,
            has_c2h: None,
            ring_taken: 0,
        };
        bar.set_deadline(deadline)?;
        bar.greet().map_err(|e| match stalled(&e) {
            true => io::Error::new(
                e.kind(),
                format!("the service stopped answering: no greeting within {deadline:?}"),
            ),
            false => e,
        })?;
        Ok(bar)
    }

    /// Spawns `cmd` with its stdin and stdout on a socket pair, connects to it with
    /// [`DEFAULT_DEADLINE`]. Its stderr is inherited, so the service's own progress and
    /// errors reach the user.
    pub fn spawn(cmd: Command) -> io::Result<Self> {
        Self::spawn_with_deadline(cmd, DEFAULT_DEADLINE)
    }

    /// [`StreamBar::spawn`] with another deadline.
    pub fn spawn_with_deadline(mut cmd: Command, deadline: Duration) -> io::Result<Self> {
        let (ours, theirs) = UnixStream::pair()?;
        cmd.stdin(Stdio::from(OwnedFd::from(theirs.try_clone()?)))
            .stdout(Stdio::from(OwnedFd::from(theirs)))
            .stderr(Stdio::inherit());
        let mut child = cmd.spawn()?;
        // Close our copies of the service's end, so its exit reads as the end of the stream.
        drop(cmd);
        match Self::connect_socket(ours, deadline) {
            Ok(mut bar) => {
                bar.child = Some(child);
                Ok(bar)
            }
            Err(e) => Err(io::Error::new(e.kind(), greeting_fault(&mut child, &e))),
        }
    }

    /// Sets how long any wait for the service may last (at least one millisecond); only
    /// connections made by [`StreamBar::connect_socket`] or [`StreamBar::spawn`] have one.
    pub fn set_deadline(&mut self, deadline: Duration) -> io::Result<()> {
        let d = deadline.max(Duration::from_millis(1));
        if let Some(s) = &self.socket {
            s.set_read_timeout(Some(d))?;
            s.set_write_timeout(Some(d))?;
            self.deadline = Some(d);
        }
        Ok(())
    }

    /// Reads the greeting (after the keepalives of a slow start) and the BAR size.
    fn greet(&mut self) -> io::Result<()> {
        let mut magic = [0u8; 8];
        magic[0] = self.status()?;
        self.rd.read_exact(&mut magic[1..])?;
        if &magic != MAGIC {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the service did not greet with SNICSIM1",
            ));
        }
        let mut size = [0u8; 8];
        self.rd.read_exact(&mut size)?;
        self.bar_size = u64::from_le_bytes(size);
        Ok(())
    }

    /// Runs a service command and returns its answer.
    pub fn command(&mut self, line: &str) -> Result<String, AccessError> {
        let doing = format!("running `{line}`");
        self.check()?;
        let mut req = vec![b'c'];
        write_text(&mut req, line).expect("writing to a Vec");
        let r = self.send(&req).and_then(|_| {
            let ok = self.status()? == status::OK;
            if !ok {
                read_u32(&mut self.rd)?;
            }
            Ok((ok, read_text(&mut self.rd)?))
        });
        match r {
            Ok((true, text)) => Ok(text),
            Ok((false, message)) => Err(AccessError::Command { line: line.to_string(), message }),
            Err(e) => Err(self.fault(&doing, e)),
        }
    }

    /// Fails at once when an earlier request broke the connection.
    fn check(&self) -> Result<(), AccessError> {
        match &self.broken {
            Some(why) => {
                Err(AccessError::Io { what: why.clone(), source: io::Error::other("connection out of step") })
            }
            None => Ok(()),
        }
    }

    fn send(&mut self, req: &[u8]) -> io::Result<()> {
        self.wr.write_all(req)?;
        self.wr.flush()
    }

    /// Reads a reply's status byte, skipping the keepalives before it.
    fn status(&mut self) -> io::Result<u8> {
        let mut s = [status::BUSY];
        while s[0] == status::BUSY {
            self.rd.read_exact(&mut s)?;
        }
        Ok(s[0])
    }

    /// Names a transport failure: the service stopped answering, exited (with its status
    /// or signal), or the connection failed otherwise; the connection is unusable after it.
    fn fault(&mut self, doing: &str, e: io::Error) -> AccessError {
        // The OS error of a timeout or a closed stream says less than `what` does (e.g.
        // "Resource temporarily unavailable", "failed to fill whole buffer"): replace it.
        let (what, source) = if stalled(&e) {
            let d = self.deadline.unwrap_or_default();
            let what = format!("the simulator service stopped answering: nothing for {d:?} while {doing}");
            (what, io::Error::new(io::ErrorKind::TimedOut, "deadline reached"))
        } else if ended(&e) {
            let how = match self.child.as_mut().and_then(|c| wait_exit(c, EXIT_GRACE)) {
                Some(st) => exit_text(st),
                None => "closed the connection".to_string(),
            };
            (
                format!("the simulator service {how} while {doing}"),
                io::Error::new(e.kind(), "connection closed"),
            )
        } else {
            (format!("simulator service connection failed while {doing}"), e)
        };
        self.broken = Some(what.clone());
        AccessError::Io { what, source }
    }

    fn request(&mut self, req: &[u8], payload: &mut [u8]) -> Result<(), AccessError> {
        self.check()?;
        let doing = match req[0] {
            b'r' => "reading a register",
            b'w' => "writing a register",
            b'h' => "asking for the card-to-host channel",
            b'a' => "arming the card-to-host channel",
            b't' => "asking for the record ring",
            _ => "reading a block of registers",
        };
        let r = self.send(req).and_then(|_| {
            let s = self.status()?;
            if s == status::OK {
                return self.rd.read_exact(payload).map(|_| Ok(()));
            }
            let off = read_u32(&mut self.rd)?;
            let msg = read_text(&mut self.rd)?;
            Ok(Err((s, off, msg)))
        });
        let (s, off, msg) = match r {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(failed)) => failed,
            Err(e) => return Err(self.fault(doing, e)),
        };
        Err(match s {
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

/// A wait that reached its deadline (a socket read timeout is `WouldBlock` on Linux).
fn stalled(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut)
}

/// The other end went away.
fn ended(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::UnexpectedEof | io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
    )
}

/// The child's exit status, if it exits within `grace`.
fn wait_exit(child: &mut Child, grace: Duration) -> Option<ExitStatus> {
    let end = Instant::now() + grace;
    loop {
        match child.try_wait() {
            Ok(Some(st)) => return Some(st),
            Ok(None) if Instant::now() < end => std::thread::sleep(Duration::from_millis(5)),
            _ => return None,
        }
    }
}

/// "exited with status 3" or "was killed (signal: 9 (SIGKILL))".
fn exit_text(st: ExitStatus) -> String {
    match st.code() {
        Some(c) => format!("exited with status {c}"),
        None => format!("was killed ({st})"),
    }
}

/// Why a spawned service's greeting failed; a stalled service is killed and reaped.
fn greeting_fault(child: &mut Child, e: &io::Error) -> String {
    if stalled(e) {
        let _ = child.kill();
        let _ = child.wait();
        return e.to_string();
    }
    match wait_exit(child, EXIT_GRACE) {
        Some(st) => format!("the service {} before greeting; its own error is above", exit_text(st)),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            format!("the service did not greet: {e}")
        }
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

    fn c2h(&mut self) -> Option<&mut dyn C2hChannel> {
        if self.has_channel() {
            Some(self)
        } else {
            None
        }
    }

    /// Asks the service each time (one round trip), so [`RecordRing::taken`] is the
    /// device's own count, never a stale copy.
    fn ring(&mut self) -> Option<&mut dyn RecordRing> {
        let mut v = [0u8; 8];
        self.request(b"t", &mut v).ok()?;
        let (has, taken) =
            (u32::from_le_bytes(v[..4].try_into().ok()?), u32::from_le_bytes(v[4..].try_into().ok()?));
        self.ring_taken = taken;
        (has == 1).then_some(self as &mut dyn RecordRing)
    }
}

impl StreamBar {
    /// Asks the service once whether its device has a card-to-host channel.
    fn has_channel(&mut self) -> bool {
        if self.has_c2h.is_none() {
            let mut v = [0u8; 4];
            self.has_c2h = Some(self.request(b"h", &mut v).is_ok_and(|_| u32::from_le_bytes(v) == 1));
        }
        self.has_c2h == Some(true)
    }

    /// A reply of `n` u64 words after its count.
    fn read_words(&mut self) -> io::Result<Vec<u64>> {
        let n = read_u32(&mut self.rd)? as usize;
        let mut b = vec![0u8; 8 * n];
        self.rd.read_exact(&mut b)?;
        Ok(b.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect())
    }
}

impl C2hChannel for StreamBar {
    fn arm(&mut self, words: usize) -> Result<(), AccessError> {
        let mut req = vec![b'a'];
        req.extend_from_slice(&(words as u32).to_le_bytes());
        self.request(&req, &mut [])
    }

    fn wait(&mut self, timeout: Duration) -> Result<Vec<u64>, AccessError> {
        self.check()?;
        let mut req = vec![b's'];
        req.extend_from_slice(&(timeout.as_millis().min(u32::MAX as u128) as u32).to_le_bytes());
        let r = self.send(&req).and_then(|_| {
            if self.status()? == status::OK {
                return self.read_words().map(Ok);
            }
            read_u32(&mut self.rd)?;
            Ok(Err(read_text(&mut self.rd)?))
        });
        match r {
            Ok(Ok(words)) => Ok(words),
            Ok(Err(message)) => {
                Err(AccessError::Command { line: "wait for a readout stream".into(), message })
            }
            Err(e) => Err(self.fault("waiting for a readout stream", e)),
        }
    }
}

impl RecordRing for StreamBar {
    fn taken(&self) -> u32 {
        self.ring_taken
    }

    fn take(&mut self, words: u32, timeout: Duration) -> Result<Vec<u64>, AccessError> {
        self.check()?;
        let mut req = vec![b'k'];
        req.extend_from_slice(&words.to_le_bytes());
        req.extend_from_slice(&(timeout.as_millis().min(u32::MAX as u128) as u32).to_le_bytes());
        let r = self.send(&req).and_then(|_| {
            let s = self.status()?;
            if s == status::OK {
                return self.read_ring_words(words).map(Ok);
            }
            let arrived = read_u32(&mut self.rd)?;
            Ok(Err((s, arrived, read_text(&mut self.rd)?)))
        });
        match r {
            Ok(Ok(got)) => {
                self.ring_taken = self.ring_taken.wrapping_add(words);
                Ok(got)
            }
            Ok(Err((status::RING_TIMEOUT, arrived, _))) => {
                Err(AccessError::RingTimeout { waited: timeout, words, arrived: arrived as usize })
            }
            Ok(Err((_, _, message))) => {
                Err(AccessError::Command { line: "take from the record ring".into(), message })
            }
            Err(e) => Err(self.fault("taking from the record ring", e)),
        }
    }
}

impl StreamBar {
    /// A take's reply: its count must be the `words` asked for (checked before reading
    /// them, so a broken reply cannot make the client allocate without bound).
    fn read_ring_words(&mut self, words: u32) -> io::Result<Vec<u64>> {
        let n = read_u32(&mut self.rd)?;
        if n != words {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the service answered a take of {words} ring words with {n}"),
            ));
        }
        let mut b = vec![0u8; 8 * n as usize];
        self.rd.read_exact(&mut b)?;
        Ok(b.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect())
    }
}

impl Drop for StreamBar {
    /// Asks the service to quit and reaps it; one that does not exit in time is killed.
    fn drop(&mut self) {
        if self.broken.is_none() {
            let _ = self.send(b"q");
        }
        if let Some(mut c) = self.child.take() {
            // A service that broke the connection is stuck or gone: no grace for it.
            let grace = if self.broken.is_some() { Duration::ZERO } else { EXIT_GRACE };
            if wait_exit(&mut c, grace).is_none() {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }
}

impl Served for crate::emulated::EmulatedNic {}

#[cfg(test)]
mod tests;
