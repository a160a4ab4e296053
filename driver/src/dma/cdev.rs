//! [`XdmaCdev`]: the two card-to-host channels through the `xdma` kernel driver (Xilinx's
//! dma_ip_drivers), which offers each C2H channel as a character device
//! `/dev/xdma<N>_c2h_<ch>`: a read of L bytes performs one C2H transfer of at most L bytes
//! and returns what arrived, ending early at the packet's end (`tlast`).
//!
//! A blocking read cannot be given a deadline, so each channel has a reader thread that
//! does the reads, and the host waits on its answers with a timeout. A read still running
//! when a wait times out is not lost: its bytes are the start of the next wait or take.
//! The readout stream is one read (a short read is the stream's end); the record ring has
//! no `tlast`, so its reads continue until the words asked for have arrived. Ordinary
//! files and pipes behave the same way, which is how the back end is tested without the
//! card (a stream through a pipe must arrive in one write the pipe can hold).

use super::{words_of, DmaError};
use crate::access::{AccessError, C2hChannel, RecordRing};
use smartnic_contract::xdma::{READOUT_CHANNEL, RING_CHANNEL};
use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

/// The character devices of the two channels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CdevPaths {
    pub stream: PathBuf,
    pub ring: PathBuf,
}

impl CdevPaths {
    /// `/dev/xdma<n>_c2h_0` and `/dev/xdma<n>_c2h_1`.
    pub fn xdma(n: u32) -> Self {
        let dev = |ch| PathBuf::from(format!("/dev/xdma{n}_c2h_{ch}"));
        CdevPaths { stream: dev(READOUT_CHANNEL), ring: dev(RING_CHANNEL) }
    }
}

/// One channel's reader: a thread that reads as many bytes as it is asked for.
struct Reader {
    path: String,
    ask: Sender<usize>,
    got: Receiver<std::io::Result<Vec<u8>>>,
    /// A read asked for and not answered yet.
    outstanding: bool,
    /// Bytes read and not yet returned (a timed-out wait's, or part of a word).
    pending: Vec<u8>,
}

impl Reader {
    fn open(path: &Path) -> Result<Reader, DmaError> {
        let name = path.display().to_string();
        let file = File::open(path).map_err(|source| DmaError::Cdev { path: name.clone(), source })?;
        let (ask, asked) = channel::<usize>();
        let (answer, got) = channel();
        std::thread::spawn(move || serve(file, asked, answer));
        Ok(Reader { path: name, ask, got, outstanding: false, pending: Vec::new() })
    }

    /// Reads until `pending` holds `bytes` bytes (`Ok(true)`), the file ends, a `transfer`
    /// read comes back short (the device's transfer ended at `tlast`), or `deadline` passes
    /// (all three `Ok(false)`; after the deadline the read is left running).
    fn fill(&mut self, bytes: usize, deadline: Instant, transfer: bool) -> Result<bool, DmaError> {
        while self.pending.len() < bytes {
            let want = bytes - self.pending.len();
            if !self.outstanding {
                let dead =
                    |_| DmaError::CdevRead { path: self.path.clone(), source: ErrorKind::BrokenPipe.into() };
                self.ask.send(want).map_err(dead)?;
                self.outstanding = true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.got.recv_timeout(left) {
                Ok(Ok(b)) => {
                    self.outstanding = false;
                    let short = b.len() < want;
                    self.pending.extend_from_slice(&b);
                    if b.is_empty() || transfer && short {
                        return Ok(false);
                    }
                }
                Ok(Err(source)) => {
                    self.outstanding = false;
                    return Err(DmaError::CdevRead { path: self.path.clone(), source });
                }
                Err(RecvTimeoutError::Timeout) => return Ok(false),
                Err(RecvTimeoutError::Disconnected) => {
                    let source = ErrorKind::BrokenPipe.into();
                    return Err(DmaError::CdevRead { path: self.path.clone(), source });
                }
            }
        }
        Ok(true)
    }

    /// Forgets what a previous stream left: bytes read and not returned, and the answer of a
    /// read that outlived its wait. A read still running is refused: its answer would be
    /// taken for the next stream's start.
    fn discard(&mut self) -> Result<(), DmaError> {
        if self.outstanding {
            match self.got.try_recv() {
                Ok(_) => self.outstanding = false,
                Err(_) => return Err(DmaError::CdevBusy { path: self.path.clone() }),
            }
        }
        self.pending.clear();
        Ok(())
    }
}

/// The reader thread: one read per request (at most the bytes asked for), answered with
/// what it returned (empty at the end of the file).
fn serve(mut file: File, asked: Receiver<usize>, answer: Sender<std::io::Result<Vec<u8>>>) {
    for n in asked {
        let mut buf = vec![0; n];
        let r = loop {
            match file.read(&mut buf) {
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                r => break r,
            }
        };
        let r = r.map(|k| {
            buf.truncate(k);
            buf
        });
        if answer.send(r).is_err() {
            return;
        }
    }
}

/// The readout stream and the record ring through the `xdma` driver's C2H devices.
pub struct XdmaCdev {
    stream: Reader,
    ring: Reader,
    /// Words armed for the next stream.
    words: usize,
    taken: u32,
}

impl XdmaCdev {
    /// Opens `/dev/xdma<n>_c2h_0` and `_1`; `taken` is the NIC's RING_WORDS now.
    pub fn open(n: u32, taken: u32) -> Result<Self, DmaError> {
        Self::open_paths(&CdevPaths::xdma(n), taken)
    }

    /// Opens the two channels' devices (or any files or pipes standing in for them).
    pub fn open_paths(paths: &CdevPaths, taken: u32) -> Result<Self, DmaError> {
        Ok(XdmaCdev {
            stream: Reader::open(&paths.stream)?,
            ring: Reader::open(&paths.ring)?,
            words: 0,
            taken,
        })
    }
}

impl C2hChannel for XdmaCdev {
    fn arm(&mut self, words: usize) -> Result<(), AccessError> {
        self.stream.discard()?;
        self.words = words;
        Ok(())
    }

    /// One stream: the words armed for, or fewer when the device ends the transfer (its
    /// packet ended); a partial word is an error.
    fn wait(&mut self, timeout: Duration) -> Result<Vec<u64>, AccessError> {
        let bytes = self.words * 8;
        let full = self.stream.fill(bytes, Instant::now() + timeout, true)?;
        let ended = !self.stream.outstanding;
        if !full && !ended {
            return Err(AccessError::StreamTimeout { waited: timeout, words: self.stream.pending.len() / 8 });
        }
        let have = self.stream.pending.len().min(bytes);
        if !have.is_multiple_of(8) {
            return Err(DmaError::PartialWord { channel: READOUT_CHANNEL, bytes: have }.into());
        }
        let data: Vec<u8> = self.stream.pending.drain(..have).collect();
        Ok(words_of(&data).collect())
    }
}

impl RecordRing for XdmaCdev {
    fn taken(&self) -> u32 {
        self.taken
    }

    fn take(&mut self, words: u32, timeout: Duration) -> Result<Vec<u64>, AccessError> {
        let bytes = words as usize * 8;
        if !self.ring.fill(bytes, Instant::now() + timeout, false)? {
            let arrived = self.ring.pending.len() / 8;
            return Err(AccessError::RingTimeout { waited: timeout, words, arrived });
        }
        let data: Vec<u8> = self.ring.pending.drain(..bytes).collect();
        self.taken = self.taken.wrapping_add(words);
        Ok(words_of(&data).collect())
    }
}
