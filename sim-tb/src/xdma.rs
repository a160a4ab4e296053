//! A behavioural model of the board's PCIe DMA engine's card-to-host side (XDMA, PG195):
//! AXI4-Stream C2H channels 0 (readout stream) and 1 (record ring) in Rust, no Verilog.
//!
//! - **Registers**: [`XdmaModel`] is the engine's register space as a
//!   [`RegisterAccess`], so the driver's `XdmaC2h` programs it exactly as it programs the
//!   board's DMA BAR (`smartnic_contract::xdma`: channel identifier, control with RUN and
//!   W1S/W1C, status RW1C and read-to-clear, completed-descriptor count, first descriptor
//!   address and adjacent count, descriptor credits, credit mode).
//! - **Descriptors** are fetched from a [`DmaMemory`] by bus address (the same memory the
//!   driver allocates from: a `HeapDma` clone), decoded by the contract's
//!   `Descriptor::decode`; a bad magic stops the channel with `magic_stopped`, an
//!   unfetchable address with `descr_error` (unsupported request), a length that is not a
//!   multiple of the stream's data width with `invalid_length`.
//! - **Data**: the core's channel words arrive by [`XdmaModel::push`] (64-bit, `last` =
//!   `tlast`) while [`XdmaModel::ready`] (`tready`) is high, and are written little-endian
//!   into the open descriptor's buffer. A descriptor closes when full or at `tlast`: its
//!   C2H stream writeback (`Writeback`, EOP and length) goes to its Src_adr, the completed
//!   count goes up, and STOP ends the chain. Without an open descriptor (none posted, the
//!   chain stopped, or no credits in credit mode) `ready` is low: back-pressure.
//! - **Clock**: [`XdmaModel::step`] is one core clock. For the simulated NIC's ports: set
//!   the channel's `tready` from `ready`, `push` the word the clock carried, then `step`.
//!   Standalone (the driver's tests), words queued by [`XdmaModel::feed`] play the core:
//!   one word per clock per channel while `ready`, and every register access runs
//!   [`Timing::clocks_per_access`] clocks first, as the core keeps running while the host
//!   waits on the bus.
//!
//! Model assumptions (not measured on a board):
//! - The engine takes at most [`Timing::bytes_per_clock`] bytes a core clock per channel:
//!   32 (a 256-bit AXI4-Stream at 250 MHz, PCIe Gen3 x8's data path), far above the core's
//!   one 64-bit word a clock; that width is also the Len granularity it checks.
//! - Each descriptor costs [`Timing::descriptor_clocks`] clocks (fetch and writeback) in
//!   which the channel takes nothing: 16 by default, the engine's descriptor prefetch
//!   hiding the rest of a PCIe read round trip.
//! - Clearing RUN closes an open descriptor that holds data (writeback with its length,
//!   no EOP, counted as completed: PG195 "a busy engine completes the current
//!   descriptor"); an open descriptor with no data is dropped, not counted.
//! - A data or writeback write to an address outside the DMA memory is dropped and counted
//!   ([`XdmaModel::faults`]): on a board it is an IOMMU fault the engine never sees.
//!
//! (The driver's integration tests compile this file into themselves by path, so it uses
//! only the driver's and the contract's public items.)

use smartnic_driver::access::{check_range, AccessError, RegisterAccess};
use smartnic_driver::contract::xdma::{
    channel, common, control, identifier, sgdma, target, Descriptor, Writeback, DATA_WIDTH_BYTES,
    DESCRIPTOR_BYTES, REG_SPACE,
};
use smartnic_driver::dma::DmaMemory;
use std::collections::VecDeque;

/// Channels the model has (the NIC's two).
pub const CHANNELS: usize = 2;

/// The model's timing (see the module's assumptions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// Bytes a channel takes per core clock (and the Len granularity).
    pub bytes_per_clock: u32,
    /// Clocks a descriptor costs before it takes data.
    pub descriptor_clocks: u32,
    /// Clocks one register access lasts (standalone use; 0 when the simulated NIC's own
    /// register accesses run the clock).
    pub clocks_per_access: u32,
}

impl Default for Timing {
    /// 32 bytes a clock, 16 clocks a descriptor, 250 clocks (1 us at 250 MHz) an access.
    fn default() -> Self {
        Timing { bytes_per_clock: DATA_WIDTH_BYTES, descriptor_clocks: 16, clocks_per_access: 250 }
    }
}

/// Why a word was not taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PushError {
    /// `tready` was low: the caller must hold the word.
    NotReady { channel: usize },
}

/// The descriptor being filled.
#[derive(Clone, Copy, Debug)]
struct Open {
    d: Descriptor,
    filled: u32,
}

/// One C2H channel's engine.
#[derive(Clone, Debug, Default)]
struct Engine {
    control: u32,
    status: u32,
    completed: u32,
    desc: u64,
    adjacent: u32,
    credits: u32,
    /// The AXI4-Stream bit of the identifier (false: a memory-mapped channel).
    stream: bool,
    /// Fetching and filling descriptors (RUN set, no STOP reached, no error).
    active: bool,
    /// The next descriptor to fetch (None after STOP).
    next: Option<u64>,
    open: Option<Open>,
    /// Clocks before the open descriptor takes data.
    wait: u32,
    /// Bytes left to take this clock.
    budget: u32,
    /// Words taken since the model was made.
    accepted: u64,
    /// Words queued by `feed`: (word, tlast).
    source: VecDeque<(u64, bool)>,
}

/// The engine's C2H side over DMA memory `M`.
pub struct XdmaModel<M> {
    mem: M,
    timing: Timing,
    engines: [Engine; CHANNELS],
    credit_mode: u32,
    clock: u64,
    faults: u64,
}

impl<M: DmaMemory> XdmaModel<M> {
    /// An engine whose channels are idle, both AXI4-Stream.
    pub fn new(mem: M, timing: Timing) -> Self {
        let mut engines: [Engine; CHANNELS] = Default::default();
        for e in &mut engines {
            e.stream = true;
            e.budget = timing.bytes_per_clock;
        }
        XdmaModel { mem, timing, engines, credit_mode: 0, clock: 0, faults: 0 }
    }

    /// `tready` of channel `ch` for the current clock.
    pub fn ready(&self, ch: usize) -> bool {
        let e = &self.engines[ch];
        e.active && e.open.is_some() && e.wait == 0 && e.budget >= 8
    }

    /// Takes one 64-bit word of channel `ch` (`last`: `tlast`) in the current clock.
    pub fn push(&mut self, ch: usize, word: u64, last: bool) -> Result<(), PushError> {
        if !self.ready(ch) {
            return Err(PushError::NotReady { channel: ch });
        }
        let e = &mut self.engines[ch];
        let o = e.open.as_mut().unwrap();
        let at = o.d.dst + o.filled as u64;
        o.filled += 8;
        let full = o.filled >= o.d.len;
        e.budget -= 8;
        e.accepted += 1;
        if self.mem.write(at, &word.to_le_bytes()).is_err() {
            self.faults += 1;
        }
        if full || last {
            self.close(ch, last);
        }
        Ok(())
    }

    /// One core clock: each channel fetches a descriptor if it needs one and may, takes one
    /// queued word if it is ready, then the next clock's budget starts.
    pub fn step(&mut self) {
        for ch in 0..CHANNELS {
            self.fetch(ch);
            if self.ready(ch) {
                if let Some((w, last)) = self.engines[ch].source.pop_front() {
                    self.push(ch, w, last).expect("ready");
                }
            }
            let e = &mut self.engines[ch];
            e.budget = self.timing.bytes_per_clock;
            e.wait = e.wait.saturating_sub(1);
        }
        self.clock += 1;
    }

    /// Runs `clocks` clocks.
    pub fn run(&mut self, clocks: u64) {
        for _ in 0..clocks {
            self.step();
        }
    }

    /// Queues words for channel `ch` as the core would send them; `last` puts `tlast` on
    /// the final one.
    pub fn feed(&mut self, ch: usize, words: &[u64], last: bool) {
        let n = words.len();
        self.engines[ch].source.extend(words.iter().enumerate().map(|(i, &w)| (w, last && i + 1 == n)));
    }

    /// Words queued by `feed` and not taken yet.
    pub fn queued(&self, ch: usize) -> usize {
        self.engines[ch].source.len()
    }

    /// Words channel `ch` has taken since the model was made.
    pub fn accepted(&self, ch: usize) -> u64 {
        self.engines[ch].accepted
    }

    /// Core clocks run so far.
    pub fn clock(&self) -> u64 {
        self.clock
    }

    /// Writes dropped because their address was not DMA memory.
    pub fn faults(&self) -> u64 {
        self.faults
    }

    /// The first-descriptor address programmed on channel `ch`.
    pub fn descriptor_address(&self, ch: usize) -> u64 {
        self.engines[ch].desc
    }

    /// Makes channel `ch` a memory-mapped channel (its identifier's stream bit 0).
    pub fn set_memory_mapped(&mut self, ch: usize) {
        self.engines[ch].stream = false;
    }

    /// Fault: channel `ch`'s completed count jumps to `value` (an engine reset the host did
    /// not ask for).
    pub fn force_completed(&mut self, ch: usize, value: u32) {
        self.engines[ch].completed = value;
    }

    /// The DMA memory.
    pub fn mem(&self) -> &M {
        &self.mem
    }

    fn credit_mode(&self, ch: usize) -> bool {
        self.credit_mode & common::c2h_credit_bit(ch as u32) != 0
    }

    /// Logs status bits whose ie_* control bit is set (BUSY-free bits only).
    fn log(&mut self, ch: usize, bits: u32) {
        let e = &mut self.engines[ch];
        // The ie_* bits sit at the same positions as the status bits they enable.
        e.status |= bits & e.control;
    }

    /// Stops channel `ch` with an error status.
    fn fail(&mut self, ch: usize, bits: u32) {
        self.log(ch, bits);
        let e = &mut self.engines[ch];
        e.active = false;
        e.open = None;
    }

    /// Fetches the next descriptor if the channel runs, has none open, and may (a credit in
    /// credit mode).
    fn fetch(&mut self, ch: usize) {
        let (credit, e) = (self.credit_mode(ch), &self.engines[ch]);
        let Some(addr) = e.next.filter(|_| e.active && e.open.is_none() && (!credit || e.credits > 0)) else {
            return;
        };
        let mut b = [0; DESCRIPTOR_BYTES];
        if self.mem.read(addr, &mut b).is_err() {
            return self.fail(ch, channel::DESC_ERROR_UNSUPPORTED);
        }
        let d = match Descriptor::decode(&b) {
            Ok(d) => d,
            Err(_) => return self.fail(ch, channel::MAGIC_STOPPED),
        };
        if d.len == 0 || d.len % self.timing.bytes_per_clock != 0 {
            return self.fail(ch, channel::INVALID_LENGTH);
        }
        let e = &mut self.engines[ch];
        e.credits -= credit as u32;
        e.next = (d.control & control::STOP == 0).then_some(d.next);
        e.open = Some(Open { d, filled: 0 });
        e.wait = self.timing.descriptor_clocks;
    }

    /// Closes channel `ch`'s open descriptor: writeback, completed count, STOP.
    fn close(&mut self, ch: usize, eop: bool) {
        let Some(o) = self.engines[ch].open.take() else { return };
        let wb = Writeback { eop, length: o.filled };
        if self.mem.write(o.d.src, &wb.encode()).is_err() {
            self.faults += 1;
        }
        self.engines[ch].completed = self.engines[ch].completed.wrapping_add(1);
        if o.d.control & control::COMPLETED != 0 {
            self.log(ch, channel::DESCRIPTOR_COMPLETED);
        }
        if o.d.control & control::STOP != 0 {
            self.log(ch, channel::DESCRIPTOR_STOPPED);
            self.engines[ch].active = false;
        }
    }

    /// A new CONTROL value: RUN's rising edge starts the chain (completed count and status
    /// reset), its falling edge stops it (credits cleared, an open descriptor with data
    /// completed).
    fn set_control(&mut self, ch: usize, value: u32) {
        let was = self.engines[ch].control & channel::RUN != 0;
        self.engines[ch].control = value;
        let run = value & channel::RUN != 0;
        let e = &mut self.engines[ch];
        if run && !was {
            e.completed = 0;
            e.status = 0;
            e.active = true;
            e.next = Some(e.desc);
            e.open = None;
        } else if !run && was {
            if e.open.is_some_and(|o| o.filled > 0) {
                self.close(ch, false);
            }
            let e = &mut self.engines[ch];
            e.open = None;
            e.active = false;
            e.credits = 0;
            self.log(ch, channel::IDLE_STOPPED);
        }
    }

    fn status(&self, ch: usize) -> u32 {
        let e = &self.engines[ch];
        e.status | if e.active { channel::BUSY } else { 0 }
    }

    /// (target, channel, register) of a BAR offset, for a channel the model has.
    fn decode(offset: u32) -> Option<(u32, usize, u32)> {
        let ch = ((offset >> 8) & 0xF) as usize;
        let t = offset >> 12;
        (t == target::SGDMA_COMMON || ch < CHANNELS).then_some((t, ch, offset & 0xFF))
    }

    fn read_reg(&mut self, offset: u32) -> u32 {
        let Some((t, ch, reg)) = Self::decode(offset) else { return 0 };
        let stream = self.engines.get(ch).is_some_and(|e| e.stream);
        match (t, reg) {
            (target::C2H_CHANNEL, channel::IDENTIFIER) => {
                identifier::of(t, ch as u32, stream) | identifier::VERSION
            }
            (target::C2H_CHANNEL, channel::CONTROL | channel::CONTROL_W1S | channel::CONTROL_W1C) => {
                self.engines[ch].control
            }
            (target::C2H_CHANNEL, channel::STATUS) => self.status(ch),
            (target::C2H_CHANNEL, channel::STATUS_RC) => {
                let s = self.status(ch);
                self.engines[ch].status = 0;
                s
            }
            (target::C2H_CHANNEL, channel::COMPLETED) => self.engines[ch].completed,
            (target::C2H_SGDMA, sgdma::IDENTIFIER) => {
                identifier::of(t, ch as u32, stream) | identifier::VERSION
            }
            (target::C2H_SGDMA, sgdma::DESC_LO) => self.engines[ch].desc as u32,
            (target::C2H_SGDMA, sgdma::DESC_HI) => (self.engines[ch].desc >> 32) as u32,
            (target::C2H_SGDMA, sgdma::DESC_ADJACENT) => self.engines[ch].adjacent,
            (target::C2H_SGDMA, sgdma::DESC_CREDITS) => self.engines[ch].credits,
            (
                target::SGDMA_COMMON,
                common::CREDIT_MODE | common::CREDIT_MODE_W1S | common::CREDIT_MODE_W1C,
            ) => self.credit_mode,
            _ => 0,
        }
    }

    fn write_reg(&mut self, offset: u32, v: u32) {
        let Some((t, ch, reg)) = Self::decode(offset) else { return };
        match (t, reg) {
            (target::C2H_CHANNEL, channel::CONTROL) => self.set_control(ch, v),
            (target::C2H_CHANNEL, channel::CONTROL_W1S) => self.set_control(ch, self.engines[ch].control | v),
            (target::C2H_CHANNEL, channel::CONTROL_W1C) => {
                self.set_control(ch, self.engines[ch].control & !v)
            }
            (target::C2H_CHANNEL, channel::STATUS) => self.engines[ch].status &= !v,
            (target::C2H_SGDMA, sgdma::DESC_LO) => {
                let e = &mut self.engines[ch];
                e.desc = e.desc & !0xFFFF_FFFF | v as u64;
            }
            (target::C2H_SGDMA, sgdma::DESC_HI) => {
                let e = &mut self.engines[ch];
                e.desc = e.desc & 0xFFFF_FFFF | (v as u64) << 32;
            }
            (target::C2H_SGDMA, sgdma::DESC_ADJACENT) => self.engines[ch].adjacent = v & 0x3F,
            (target::C2H_SGDMA, sgdma::DESC_CREDITS) if self.credit_mode(ch) => {
                self.engines[ch].credits += v & sgdma::MAX_CREDITS_PER_WRITE;
            }
            (target::SGDMA_COMMON, common::CREDIT_MODE) => self.set_credit_mode(v),
            (target::SGDMA_COMMON, common::CREDIT_MODE_W1S) => self.set_credit_mode(self.credit_mode | v),
            (target::SGDMA_COMMON, common::CREDIT_MODE_W1C) => self.set_credit_mode(self.credit_mode & !v),
            _ => {}
        }
    }

    /// Credit mode bits; a channel leaving credit mode loses its credits.
    fn set_credit_mode(&mut self, v: u32) {
        self.credit_mode = v;
        for ch in 0..CHANNELS {
            if !self.credit_mode(ch) {
                self.engines[ch].credits = 0;
            }
        }
    }

    /// Time passes while the host waits on the bus.
    fn bus_time(&mut self) {
        self.run(self.timing.clocks_per_access as u64);
    }
}

impl<M: DmaMemory> RegisterAccess for XdmaModel<M> {
    fn bar_size(&self) -> u64 {
        REG_SPACE
    }

    fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
        check_range(REG_SPACE, offset, 4)?;
        self.bus_time();
        Ok(self.read_reg(offset))
    }

    fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
        check_range(REG_SPACE, offset, 4)?;
        self.bus_time();
        self.write_reg(offset, value);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use smartnic_driver::contract::xdma::{c2h_channel, c2h_sgdma, SGDMA_COMMON};
    use smartnic_driver::dma::HeapDma;

    fn model() -> (XdmaModel<HeapDma>, HeapDma) {
        let mem = HeapDma::new();
        (XdmaModel::new(mem.clone(), Timing { clocks_per_access: 0, ..Timing::default() }), mem)
    }

    /// A chain of `n` descriptors of `len` bytes each; the last one STOPs. Returns the
    /// descriptors' address and each (writeback, buffer) address.
    fn chain(mem: &mut HeapDma, n: usize, len: u32, circular: bool) -> (u64, Vec<(u64, u64)>) {
        let d = mem.alloc(32 * n).unwrap();
        let slots: Vec<_> =
            (0..n).map(|_| (mem.alloc(8).unwrap(), mem.alloc(len as usize).unwrap())).collect();
        for (i, &(wb, buf)) in slots.iter().enumerate() {
            let last = i + 1 == n;
            let desc = Descriptor {
                control: if last && !circular { control::STOP | control::COMPLETED } else { 0 },
                adjacent: 0,
                len,
                src: wb,
                dst: buf,
                next: if last { d } else { d + 32 * (i as u64 + 1) },
            };
            mem.write(d + 32 * i as u64, &desc.encode()).unwrap();
        }
        (d, slots)
    }

    fn start(m: &mut XdmaModel<HeapDma>, ch: u32, desc: u64) {
        m.write32(c2h_channel(ch) + channel::CONTROL_W1C, channel::RUN).unwrap();
        m.write32(c2h_sgdma(ch) + sgdma::DESC_LO, desc as u32).unwrap();
        m.write32(c2h_sgdma(ch) + sgdma::DESC_HI, (desc >> 32) as u32).unwrap();
        m.write32(c2h_channel(ch) + channel::CONTROL, channel::RUN | channel::IE_ALL).unwrap();
    }

    fn writeback(mem: &HeapDma, at: u64) -> Writeback {
        let mut b = [0; 8];
        mem.read(at, &mut b).unwrap();
        Writeback::decode(&b).unwrap()
    }

    #[test]
    fn identifiers_say_stream_c2h_channels() {
        let (mut m, _) = model();
        assert_eq!(m.read32(c2h_channel(1)).unwrap(), 0x1FC1_8106);
        assert_eq!(m.read32(c2h_sgdma(0)).unwrap(), 0x1FC5_8006);
        m.set_memory_mapped(0);
        assert_eq!(m.read32(c2h_channel(0)).unwrap(), 0x1FC1_0006);
    }

    /// Words fill descriptors in order, tlast closes one early with EOP, STOP ends the chain
    /// and back-pressure follows.
    #[test]
    fn words_fill_descriptors_and_tlast_closes_one() {
        let (mut m, mut mem) = model();
        let (d, slots) = chain(&mut mem, 3, 64, false);
        assert!(!m.ready(0), "no descriptor posted: tready low");
        start(&mut m, 0, d);
        m.feed(0, &(0..10).collect::<Vec<u64>>(), true);
        m.run(100);
        assert_eq!(m.queued(0), 0);
        assert_eq!(writeback(&mem, slots[0].0), Writeback { eop: false, length: 64 });
        assert_eq!(writeback(&mem, slots[1].0), Writeback { eop: true, length: 16 });
        let mut b = [0; 16];
        mem.read(slots[1].1, &mut b).unwrap();
        assert_eq!(b[..8], 8u64.to_le_bytes());
        assert_eq!(m.read32(c2h_channel(0) + channel::COMPLETED).unwrap(), 2);
        // The third descriptor takes the next packet; when it fills, STOP ends the chain.
        m.feed(0, &[1; 9], false);
        m.run(100);
        assert_eq!(m.queued(0), 1, "the ninth word waits: the chain stopped");
        assert!(!m.ready(0));
        let s = m.read32(c2h_channel(0) + channel::STATUS).unwrap();
        assert_eq!(s, channel::DESCRIPTOR_STOPPED | channel::DESCRIPTOR_COMPLETED);
        assert_eq!(m.accepted(0), 18);
    }

    #[test]
    fn a_descriptor_costs_its_clocks_and_bandwidth_is_per_clock() {
        let (mut m, mut mem) = model();
        let (d, _) = chain(&mut mem, 1, 1024, false);
        start(&mut m, 0, d);
        m.step(); // the fetch: the first of its 16 clocks
        for _ in 0..15 {
            assert!(!m.ready(0));
            m.step();
        }
        assert!(m.ready(0));
        for _ in 0..4 {
            m.push(0, 0, false).unwrap();
        }
        assert_eq!(m.push(0, 0, false), Err(PushError::NotReady { channel: 0 }), "32 bytes a clock");
        m.step();
        assert!(m.ready(0));
    }

    #[test]
    fn credit_mode_fetches_only_credited_descriptors() {
        let (mut m, mut mem) = model();
        let (d, slots) = chain(&mut mem, 2, 32, true);
        m.write32(SGDMA_COMMON + common::CREDIT_MODE_W1S, common::c2h_credit_bit(1)).unwrap();
        start(&mut m, 1, d);
        m.write32(c2h_sgdma(1) + sgdma::DESC_CREDITS, 1).unwrap();
        m.feed(1, &[7; 12], false);
        m.run(200);
        assert_eq!(m.accepted(1), 4, "one credit, one 32-byte descriptor");
        m.write32(c2h_sgdma(1) + sgdma::DESC_CREDITS, 2).unwrap();
        m.run(200);
        assert_eq!(m.accepted(1), 12, "around the ring to descriptor 0 again");
        assert_eq!(writeback(&mem, slots[0].0).length, 32);
        // RUN cleared: the credits go.
        m.write32(c2h_sgdma(1) + sgdma::DESC_CREDITS, 5).unwrap();
        assert_eq!(m.read32(c2h_sgdma(1) + sgdma::DESC_CREDITS).unwrap(), 5, "no clock ran: none used");
        m.write32(c2h_channel(1) + channel::CONTROL_W1C, channel::RUN).unwrap();
        assert_eq!(m.read32(c2h_sgdma(1) + sgdma::DESC_CREDITS).unwrap(), 0);
    }

    #[test]
    fn clearing_run_completes_a_descriptor_with_data_only() {
        let (mut m, mut mem) = model();
        let (d, slots) = chain(&mut mem, 2, 64, false);
        start(&mut m, 0, d);
        m.feed(0, &[5, 6, 7], false);
        m.run(50);
        m.write32(c2h_channel(0) + channel::CONTROL_W1C, channel::RUN).unwrap();
        assert_eq!(writeback(&mem, slots[0].0), Writeback { eop: false, length: 24 });
        assert_eq!(m.read32(c2h_channel(0) + channel::COMPLETED).unwrap(), 1);
        assert_eq!(m.read32(c2h_channel(0) + channel::STATUS_RC).unwrap(), channel::IDLE_STOPPED);
        assert_eq!(m.read32(c2h_channel(0) + channel::STATUS).unwrap(), 0, "read to clear");
        // Restarted at the same chain: the count starts at 0; stopped with nothing open,
        // nothing is counted.
        start(&mut m, 0, d);
        m.run(50);
        m.write32(c2h_channel(0) + channel::CONTROL_W1C, channel::RUN).unwrap();
        assert_eq!(m.read32(c2h_channel(0) + channel::COMPLETED).unwrap(), 0);
    }

    #[test]
    fn bad_descriptors_stop_the_channel_with_their_status() {
        let (mut m, mut mem) = model();
        let (d, _) = chain(&mut mem, 1, 64, false);
        mem.write(d + 3, &[0]).unwrap();
        start(&mut m, 0, d);
        m.step();
        assert_eq!(m.read32(c2h_channel(0) + channel::STATUS).unwrap(), channel::MAGIC_STOPPED);
        start(&mut m, 0, 0x10);
        m.step();
        assert_eq!(m.read32(c2h_channel(0) + channel::STATUS).unwrap(), channel::DESC_ERROR_UNSUPPORTED);
        let (d, _) = chain(&mut mem, 1, 40, false);
        start(&mut m, 0, d);
        m.step();
        assert_eq!(m.read32(c2h_channel(0) + channel::STATUS).unwrap(), channel::INVALID_LENGTH);
        assert!(!m.ready(0));
    }

    #[test]
    fn writes_outside_dma_memory_are_counted_not_done() {
        let (mut m, mut mem) = model();
        let (d, _) = chain(&mut mem, 1, 64, false);
        let mut desc = Descriptor::decode(&{
            let mut b = [0; 32];
            mem.read(d, &mut b).unwrap();
            b
        })
        .unwrap();
        desc.dst = 0x20;
        mem.write(d, &desc.encode()).unwrap();
        start(&mut m, 0, d);
        m.feed(0, &[1, 2], true);
        m.run(40);
        assert_eq!((m.accepted(0), m.faults()), (2, 2));
    }
}
