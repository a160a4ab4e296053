//! [`XdmaC2h`]: the board's two card-to-host channels driven through the DMA engine's own
//! registers (PG195), with descriptors and buffers in [`DmaMemory`].
//!
//! ```text
//! channel 0, readout stream (C2hChannel)       channel 1, record ring (RecordRing)
//!   arm(words):                                  open: credit mode on, a circular chain
//!     chain of ceil(8 words / room) buffers,       of N buffers, RUN, N credits
//!     STOP|COMPLETED on the last one,            take(words):
//!     writebacks zeroed, RUN                       harvest every completed descriptor
//!   wait(timeout):                                   (writeback length, buffer copied out,
//!     poll STATUS (errors) and COMPLETED,             one credit back), in ring order
//!     read each completed writeback, copy          enough words: take exactly `words`
//!     its bytes; EOP: stop, return the words       none new: flush (clear RUN, wait idle:
//!     every buffer full, no EOP: Overrun             the open descriptor closes with what
//!                                                    it holds), restart at the next
//!                                                    descriptor with N credits
//! ```
//! A C2H stream descriptor closes when its buffer is full or the packet ends (PG195 "DMA
//! C2H Stream"); the record ring has no end of packet, so its last words sit in an open
//! descriptor until a flush closes it. Credit mode (PG195 "SGDMA Descriptor Credit Mode
//! Enable") keeps the engine from refilling a buffer the host has not copied out: with no
//! credits the engine holds the stream back (the NIC's channel stalls, its record buffer
//! counts what it drops).

use super::{words_of, DmaError, DmaMemory};
use crate::access::{AccessError, C2hChannel, RecordRing, RegisterAccess};
use smartnic_contract::xdma::{
    c2h_channel, c2h_sgdma, channel, common, control, identifier, sgdma, Descriptor, Writeback,
    DATA_WIDTH_BYTES, DESCRIPTOR_BYTES, MAX_LEN, READOUT_CHANNEL, RING_CHANNEL, SGDMA_COMMON,
    WRITEBACK_BYTES,
};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Buffers of the readout stream's chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamConfig {
    /// Bytes per descriptor (rounded down to a multiple of the data path's width; at most
    /// PG195's 28-bit Len).
    pub buffer_bytes: u32,
}

impl Default for StreamConfig {
    /// 256 KiB buffers: the default geometry's 1.29 MB stream takes 5 descriptors.
    fn default() -> Self {
        StreamConfig { buffer_bytes: 256 << 10 }
    }
}

/// The record ring's buffers and numbering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingConfig {
    /// Buffers in the circular chain (1 to 1023: the credits one write can give).
    pub buffers: u32,
    /// Bytes per buffer (rounded down to a multiple of the data path's width).
    pub buffer_bytes: u32,
    /// The NIC's RING_WORDS when the ring starts: taken words are counted from here.
    pub taken: u32,
}

impl Default for RingConfig {
    /// 64 buffers of 4 KiB: 32,768 ring words in flight, about 4,700 inflated-latency records.
    fn default() -> Self {
        RingConfig { buffers: 64, buffer_bytes: 4096, taken: 0 }
    }
}

/// `bytes` made a valid C2H stream descriptor length: a multiple of the data path's width,
/// at least one beat, at most PG195's 28-bit Len.
fn whole(bytes: u32) -> u32 {
    bytes.clamp(DATA_WIDTH_BYTES, MAX_LEN) / DATA_WIDTH_BYTES * DATA_WIDTH_BYTES
}

/// A chain of descriptors, their writeback slots and their buffers in DMA memory.
struct Chain {
    /// Bus address of descriptor 0 (descriptor i at `desc + 32 i`).
    desc: u64,
    /// Bus address of writeback slot 0 (slot i at `wb + 8 i`).
    wb: u64,
    /// Bus addresses of the buffers.
    bufs: Vec<u64>,
    /// Bytes per buffer.
    room: u32,
}

impl Chain {
    fn alloc<M: DmaMemory>(mem: &mut M, n: usize, room: u32) -> Result<Chain, DmaError> {
        let desc = mem.alloc(n * DESCRIPTOR_BYTES)?;
        let wb = mem.alloc(n * WRITEBACK_BYTES)?;
        let bufs = (0..n).map(|_| mem.alloc(room as usize)).collect::<Result<_, _>>()?;
        Ok(Chain { desc, wb, bufs, room })
    }

    fn desc_at(&self, i: usize) -> u64 {
        self.desc + (i * DESCRIPTOR_BYTES) as u64
    }

    fn wb_at(&self, i: usize) -> u64 {
        self.wb + (i * WRITEBACK_BYTES) as u64
    }

    /// Writes descriptors 0..n linked in order: the last one STOPs (a stream), or links back
    /// to the first (a ring). Their writeback slots are zeroed (no magic: not written yet).
    fn link<M: DmaMemory>(&self, mem: &mut M, n: usize, circular: bool) -> Result<(), DmaError> {
        for i in 0..n {
            let last = i + 1 == n;
            let d = Descriptor {
                control: if last && !circular { control::STOP | control::COMPLETED } else { 0 },
                adjacent: 0,
                len: self.room,
                src: self.wb_at(i),
                dst: self.bufs[i],
                next: if last {
                    if circular {
                        self.desc_at(0)
                    } else {
                        0
                    }
                } else {
                    self.desc_at(i + 1)
                },
            };
            mem.write(self.desc_at(i), &d.encode())?;
        }
        mem.write(self.wb, &vec![0; n * WRITEBACK_BYTES])
    }

    /// Descriptor `i`'s writeback, checked against its buffer, and the bytes it wrote.
    fn take<M: DmaMemory>(&self, mem: &mut M, ch: u32, i: usize) -> Result<(Writeback, Vec<u8>), DmaError> {
        let mut b = [0; WRITEBACK_BYTES];
        mem.read(self.wb_at(i), &mut b)?;
        let w =
            Writeback::decode(&b).map_err(|error| DmaError::Writeback { channel: ch, index: i, error })?;
        if w.length > self.room {
            return Err(DmaError::WritebackLength {
                channel: ch,
                index: i,
                length: w.length,
                room: self.room,
            });
        }
        if !w.length.is_multiple_of(8) {
            return Err(DmaError::PartialWord { channel: ch, bytes: w.length as usize });
        }
        let mut data = vec![0; w.length as usize];
        mem.read(self.bufs[i], &mut data)?;
        mem.write(self.wb_at(i), &[0; WRITEBACK_BYTES])?;
        Ok((w, data))
    }
}

/// The readout stream's channel state.
struct Stream {
    chain: Option<Chain>,
    /// Descriptors of the armed stream.
    armed: usize,
    /// Words armed for.
    words: usize,
    /// Descriptors harvested since RUN.
    seen: u32,
    data: Vec<u8>,
}

/// The record ring's channel state.
struct Ring {
    chain: Chain,
    /// Next descriptor to harvest, in ring order.
    next: usize,
    /// Descriptors harvested since RUN was last set.
    seen: u32,
    /// Words arrived and not taken, in order.
    ready: VecDeque<u64>,
    taken: u32,
}

/// The DMA engine's C2H channels 0 (readout stream) and 1 (record ring) driven through its
/// registers `regs` (the DMA BAR, or a model of it), with buffers in `mem`.
pub struct XdmaC2h<R, M> {
    regs: R,
    mem: M,
    cfg: StreamConfig,
    stream: Stream,
    ring: Ring,
}

impl<R: RegisterAccess, M: DmaMemory> XdmaC2h<R, M> {
    /// Checks both channels are stream C2H channels and starts the record ring (its channel
    /// runs from now on, as the NIC's ring does once RING_CONTROL is on).
    pub fn open(regs: R, mut mem: M, cfg: StreamConfig, ring: RingConfig) -> Result<Self, DmaError> {
        let n = ring.buffers.clamp(1, sgdma::MAX_CREDITS_PER_WRITE) as usize;
        let chain = Chain::alloc(&mut mem, n, whole(ring.buffer_bytes))?;
        let ring = Ring { chain, next: 0, seen: 0, ready: VecDeque::new(), taken: ring.taken };
        let stream = Stream { chain: None, armed: 0, words: 0, seen: 0, data: Vec::new() };
        let mut x = XdmaC2h { regs, mem, cfg, stream, ring };
        x.check_identifier(READOUT_CHANNEL)?;
        x.check_identifier(RING_CHANNEL)?;
        let n = x.ring.chain.bufs.len();
        x.ring.chain.link(&mut x.mem, n, true)?;
        x.regs.write32(SGDMA_COMMON + common::CREDIT_MODE_W1S, common::c2h_credit_bit(RING_CHANNEL))?;
        x.start_ring()?;
        Ok(x)
    }

    /// The register access (a model of the engine is driven through it in tests).
    pub fn regs_mut(&mut self) -> &mut R {
        &mut self.regs
    }

    /// The DMA memory.
    pub fn mem(&self) -> &M {
        &self.mem
    }

    /// Words arrived in the ring and not yet taken (after the last take's harvest).
    pub fn ring_ready(&self) -> usize {
        self.ring.ready.len()
    }

    /// Stops both channels (clears RUN; a busy engine completes its current descriptor).
    pub fn stop(&mut self) -> Result<(), DmaError> {
        for ch in [READOUT_CHANNEL, RING_CHANNEL] {
            self.regs.write32(c2h_channel(ch) + channel::CONTROL_W1C, channel::RUN)?;
        }
        Ok(())
    }

    fn check_identifier(&mut self, ch: u32) -> Result<(), DmaError> {
        let found = self.regs.read32_live(c2h_channel(ch) + channel::IDENTIFIER)?;
        let want = identifier::c2h_stream(ch);
        if found & identifier::MASK != want {
            return Err(DmaError::Identifier { channel: ch, found, want, mask: identifier::MASK });
        }
        Ok(())
    }

    /// Points channel `ch` at descriptor `first`, clears its status and sets RUN (which
    /// resets its completed count).
    fn run(&mut self, ch: u32, first: u64) -> Result<(), DmaError> {
        let (c, s) = (c2h_channel(ch), c2h_sgdma(ch));
        self.regs.write32(c + channel::CONTROL_W1C, channel::RUN)?;
        self.regs.write32(s + sgdma::DESC_LO, first as u32)?;
        self.regs.write32(s + sgdma::DESC_HI, (first >> 32) as u32)?;
        self.regs.write32(s + sgdma::DESC_ADJACENT, 0)?;
        self.regs.write32(c + channel::STATUS, u32::MAX)?;
        self.regs.write32(c + channel::CONTROL, channel::RUN | channel::IE_ALL)?;
        Ok(())
    }

    /// STATUS and COMPLETED of channel `ch`: an error bit or a count below `seen` is an error.
    fn poll(&mut self, ch: u32, seen: u32) -> Result<(u32, u32), DmaError> {
        let c = c2h_channel(ch);
        let status = self.regs.read32_live(c + channel::STATUS)?;
        let completed = self.regs.read32(c + channel::COMPLETED)?;
        if status & channel::ERRORS != 0 {
            self.regs.write32(c + channel::CONTROL_W1C, channel::RUN)?;
            let names = channel::status_names(status).join(", ");
            return Err(DmaError::ChannelError { channel: ch, status, names, completed });
        }
        if completed < seen {
            return Err(DmaError::CountBackwards { channel: ch, before: seen, after: completed });
        }
        Ok((status, completed))
    }

    /// Clears RUN on `ch` and waits (until `deadline`) for the engine to go idle; false if
    /// it stayed busy.
    fn halt(&mut self, ch: u32, deadline: Instant) -> Result<bool, DmaError> {
        let c = c2h_channel(ch);
        self.regs.write32(c + channel::CONTROL_W1C, channel::RUN)?;
        loop {
            if self.regs.read32_live(c + channel::STATUS)? & channel::BUSY == 0 {
                return Ok(true);
            }
            if Instant::now() >= deadline {
                return Ok(false);
            }
        }
    }

    // ---- channel 0: the readout stream ----

    fn arm_stream(&mut self, words: usize) -> Result<(), DmaError> {
        let room = whole(self.cfg.buffer_bytes);
        let n = (words.max(1) * 8).div_ceil(room as usize);
        let fits = self.stream.chain.as_ref().is_some_and(|c| c.bufs.len() >= n && c.room == room);
        if !fits {
            self.stream.chain = Some(Chain::alloc(&mut self.mem, n, room)?);
        }
        let chain = self.stream.chain.as_ref().unwrap();
        chain.link(&mut self.mem, n, false)?;
        let first = chain.desc_at(0);
        self.regs.write32(SGDMA_COMMON + common::CREDIT_MODE_W1C, common::c2h_credit_bit(READOUT_CHANNEL))?;
        self.stream = Stream { chain: self.stream.chain.take(), armed: n, words, seen: 0, data: Vec::new() };
        self.run(READOUT_CHANNEL, first)
    }

    /// Copies out every descriptor completed since the last poll; true at the end of packet.
    fn harvest_stream(&mut self, completed: u32) -> Result<bool, DmaError> {
        let chain = self.stream.chain.as_ref().expect("armed");
        while self.stream.seen < completed {
            let i = self.stream.seen as usize;
            if i >= self.stream.armed {
                return Err(DmaError::Overrun { words: self.stream.words });
            }
            let (w, data) = chain.take(&mut self.mem, READOUT_CHANNEL, i)?;
            self.stream.data.extend_from_slice(&data);
            self.stream.seen += 1;
            if w.eop {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn wait_stream(&mut self, timeout: Duration) -> Result<Vec<u64>, AccessError> {
        let deadline = Instant::now() + timeout;
        if self.stream.chain.is_none() {
            return Err(AccessError::StreamTimeout { waited: Duration::ZERO, words: 0 });
        }
        loop {
            let (status, completed) = self.poll(READOUT_CHANNEL, self.stream.seen)?;
            if self.harvest_stream(completed)? {
                self.regs.write32(c2h_channel(READOUT_CHANNEL) + channel::CONTROL_W1C, channel::RUN)?;
                return Ok(words_of(&std::mem::take(&mut self.stream.data)).collect());
            }
            if self.stream.seen as usize == self.stream.armed || status & channel::DESCRIPTOR_STOPPED != 0 {
                return Err(DmaError::Overrun { words: self.stream.words }.into());
            }
            if Instant::now() >= deadline {
                return Err(self.stream_timeout(timeout));
            }
        }
    }

    /// Stops a stream that did not end in time and counts every word that reached the host
    /// (stopping closes the open descriptor with what it holds).
    fn stream_timeout(&mut self, timeout: Duration) -> AccessError {
        let counted = self.halt(READOUT_CHANNEL, Instant::now() + timeout).and_then(|_| {
            let (_, completed) = self.poll(READOUT_CHANNEL, self.stream.seen)?;
            self.harvest_stream(completed)
        });
        match counted {
            Ok(_) => AccessError::StreamTimeout { waited: timeout, words: self.stream.data.len() / 8 },
            Err(e) => e.into(),
        }
    }

    // ---- channel 1: the record ring ----

    /// RUN at the next descriptor to fill, with a credit for every buffer (all are free: a
    /// harvest copies a buffer out before its credit goes back).
    fn start_ring(&mut self) -> Result<(), DmaError> {
        let first = self.ring.chain.desc_at(self.ring.next);
        self.ring.seen = 0;
        self.run(RING_CHANNEL, first)?;
        let credits = (self.ring.chain.bufs.len() as u32).min(sgdma::MAX_CREDITS_PER_WRITE);
        self.regs.write32(c2h_sgdma(RING_CHANNEL) + sgdma::DESC_CREDITS, credits)?;
        Ok(())
    }

    /// Copies out every ring descriptor completed since the last harvest and, while the
    /// channel runs (`credit`), gives their credits back; the number harvested. (A stopped
    /// channel gets all its credits at the restart: credits given now would add to those
    /// and let the engine refill buffers the host has not copied out.)
    fn harvest_ring(&mut self, credit: bool) -> Result<u32, DmaError> {
        let (_, completed) = self.poll(RING_CHANNEL, self.ring.seen)?;
        let n = completed - self.ring.seen;
        for _ in 0..n {
            let (_, data) = self.ring.chain.take(&mut self.mem, RING_CHANNEL, self.ring.next)?;
            self.ring.ready.extend(words_of(&data));
            self.ring.next = (self.ring.next + 1) % self.ring.chain.bufs.len();
        }
        self.ring.seen = completed;
        if credit && n > 0 {
            self.regs.write32(c2h_sgdma(RING_CHANNEL) + sgdma::DESC_CREDITS, n)?;
        }
        Ok(n)
    }

    /// Closes the ring's open descriptor (clear RUN: the engine completes it with what it
    /// holds), harvests it and restarts the ring after it.
    fn flush_ring(&mut self, deadline: Instant) -> Result<bool, DmaError> {
        if !self.halt(RING_CHANNEL, deadline)? {
            return Ok(false);
        }
        self.harvest_ring(false)?;
        self.start_ring()?;
        Ok(true)
    }

    fn take_ring(&mut self, words: u32, timeout: Duration) -> Result<Vec<u64>, AccessError> {
        let deadline = Instant::now() + timeout;
        loop {
            let got = self.harvest_ring(true)?;
            if self.ring.ready.len() >= words as usize {
                self.ring.taken = self.ring.taken.wrapping_add(words);
                return Ok(self.ring.ready.drain(..words as usize).collect());
            }
            if got == 0 && !self.flush_ring(deadline)? || Instant::now() >= deadline {
                let arrived = self.ring.ready.len();
                return Err(AccessError::RingTimeout { waited: timeout, words, arrived });
            }
        }
    }
}

impl<R: RegisterAccess, M: DmaMemory> C2hChannel for XdmaC2h<R, M> {
    fn arm(&mut self, words: usize) -> Result<(), AccessError> {
        Ok(self.arm_stream(words)?)
    }

    fn wait(&mut self, timeout: Duration) -> Result<Vec<u64>, AccessError> {
        self.wait_stream(timeout)
    }
}

impl<R: RegisterAccess, M: DmaMemory> RecordRing for XdmaC2h<R, M> {
    fn taken(&self) -> u32 {
        self.ring.taken
    }

    fn take(&mut self, words: u32, timeout: Duration) -> Result<Vec<u64>, AccessError> {
        self.take_ring(words, timeout)
    }
}
