//! `EmulatedNic`: a register-level emulation of the SmartNIC's BAR **for driver tests**.
//!
//! It is *not* the simulated NIC: no packet is parsed, no hash computed, no counter
//! incremented by traffic. The simulated NIC is the Verilator model of the generated
//! Verilog in `sim-tb`, which implements the same [`RegisterAccess`] trait. This double
//! only gives the driver a device with the contract's register map (built from
//! [`Layout`]), two banks per readout window with the epoch block's SWAP/CLEAR semantics,
//! counters a test puts into the active bank by hand, and hooks that inject the faults the
//! readout must survive:
//!
//! | hook | what the device does |
//! |---|---|
//! | [`vanish_after_reads`](EmulatedNic::vanish_after_reads) | after n more reads, every read returns all ones (surprise removal) |
//! | [`tear_next_readouts`](EmulatedNic::tear_next_readouts) | SEQUENCE moves while the windows are read (a concurrent swap or clear) |
//! | [`stick_swap`](EmulatedNic::stick_swap), [`stick_clear`](EmulatedNic::stick_clear) | SWAP_PENDING / CLEAR_BUSY never drop |
//! | [`poke`](EmulatedNic::poke) | overwrite any register, e.g. a block's NEXT pointer to corrupt the chain |
//! | [`set_record_capacity`](EmulatedNic::set_record_capacity) | the record stream's buffer holds this many words: a record that does not fit is dropped and counted |
//! | [`push_record_words`](EmulatedNic::push_record_words) | raw words into the record stream (e.g. half a record) |
//! | [`fault_next_ring`](EmulatedNic::fault_next_ring) | the record ring's next take: a damaged padding word, or a word that has not arrived |
//!
//! Semantics (from `smartnic_contract::regs::epoch`): writing SWAP sets SWAP_PENDING for
//! [`latency`](EmulatedNic::latency) STATUS reads, then exchanges the banks, moves
//! ACTIVE_PACKETS to IDLE_PACKETS, increments EPOCH and SEQUENCE. CLEAR sets CLEAR_BUSY for
//! as long, then zeroes the idle bank and IDLE_PACKETS and increments SEQUENCE. The readout
//! windows show the idle bank; CONTROL reads as 0.
//!
//! With the per-switch half ([`EmulatedNic::with_per_switch`], from
//! `smartnic_contract::regs::per_switch`): the latency and table windows have two banks like
//! the others, and so does TABLE_MISSES (it reads the idle bank's; a swap exchanges, a clear
//! zeroes it). MODE (0 or 2; other values are ignored), INFLATE_THRESHOLD (its low
//! `THRESHOLD_BITS` bits) and TABLE_THRESHOLD are read/write, with the hardware's reset
//! values. The record stream is a FIFO of words
//! a test pushes whole records into: RECORD_WORDS reads its length, RECORD_POP its head word
//! and removes it (0 and nothing removed when empty), RECORD_DROPPED the records refused
//! because they did not fit the buffer. The stream block's RING_CONTROL and RING_WORDS send
//! the record stream to a host ring instead (`emulated/ring.rs`; the driver sees the ring after
//! [`enable_ring`](EmulatedNic::enable_ring)); while the ring is on, RECORD_POP reads 0.

use crate::access::{check_range, AccessError, C2hChannel, RecordRing, RegisterAccess};
use crate::blocks::PerSwitchConfig;
use smartnic_contract::geometry::{InsertMode, SuMaxGeometry, TowerGeometry};
use smartnic_contract::per_switch::PerSwitchGeometry;
use smartnic_contract::regs::layout::FirmwareInfo;
use smartnic_contract::regs::{block_type, epoch, per_switch, tower, Layout, DEVICE_GONE};
use smartnic_contract::wire::record::{to_words, Record};
use std::collections::VecDeque;

mod ring;
mod stream;
pub use ring::RingFault;
pub use stream::StreamFault;

/// The per-switch block's live state (registers that are not plain words).
struct PerSwitchRegs {
    base: u32,
    /// TABLE_MISSES of the idle and the active bank.
    idle_misses: u32,
    active_misses: u32,
    records: VecDeque<u32>,
    /// Words the record buffer holds.
    capacity: usize,
    dropped: u32,
    /// HOPS_REFUSED (the emulation has no hop serializer: only a test sets it).
    hops_refused: u32,
}

/// Words the emulated record buffer holds unless a test says otherwise.
pub const RECORD_CAPACITY: usize = 1 << 12;

/// Register-level emulation of the SmartNIC BAR for driver tests (see the module docs).
pub struct EmulatedNic {
    regs: Vec<u32>,
    layout: Layout,
    /// Readout windows: (first word index, words) in `Layout::windows` order: Tower arrays,
    /// SuMax arrays, latency arrays, table ways.
    windows: Vec<(usize, usize)>,
    /// The active bank of every window (the idle bank lives in `regs`).
    active: Vec<Vec<u32>>,
    epoch_base: u32,
    mode_reg: u32,
    epoch: u32,
    sequence: u32,
    idle_packets: u64,
    active_packets: u64,
    swap_left: Option<u32>,
    clear_left: Option<u32>,
    /// STATUS reads a swap or clear stays pending/busy (0: done by the first read).
    pub latency: u32,
    reads: u64,
    vanish_at: Option<u64>,
    tears: u32,
    stuck_swap: bool,
    stuck_clear: bool,
    per_switch: Option<PerSwitchRegs>,
    /// The readout-stream engine (with the per-switch half's layout, which has its block).
    stream: Option<stream::EmulatedStream>,
    /// The record ring (in the stream block, so with the per-switch half's layout too).
    ring: Option<ring::EmulatedRing>,
}

impl EmulatedNic {
    /// A device with these geometries in its power-on state: epoch 0, both banks zero.
    pub fn new(fw: FirmwareInfo, t: &TowerGeometry, s: &SuMaxGeometry) -> Self {
        Self::from_layout(fw, Layout::new(t, s), t, s)
    }

    /// A device with the per-switch half `p` too, in its power-on state: both banks and
    /// both TABLE_MISSES zero, an empty record stream, the reset configuration
    /// ([`PerSwitchConfig::nic_default`]).
    pub fn with_per_switch(
        fw: FirmwareInfo,
        t: &TowerGeometry,
        s: &SuMaxGeometry,
        p: &PerSwitchGeometry,
    ) -> Self {
        let mut nic = Self::from_layout(fw, Layout::with_per_switch(t, s, p), t, s);
        let base = nic.layout.block(block_type::PER_SWITCH).expect("the layout has a per-switch block").base;
        let reset = PerSwitchConfig::nic_default();
        nic.poke(base + per_switch::MODE, reset.mode as u32);
        nic.poke(base + per_switch::INFLATE_THRESHOLD, reset.inflate_threshold);
        nic.poke(base + per_switch::TABLE_THRESHOLD, reset.table_threshold);
        nic.per_switch = Some(PerSwitchRegs {
            base,
            idle_misses: 0,
            active_misses: 0,
            records: VecDeque::new(),
            capacity: RECORD_CAPACITY,
            dropped: 0,
            hops_refused: 0,
        });
        let st = nic.layout.block(block_type::STREAM).expect("the layout has a stream block").base;
        let specs = smartnic_contract::wire::readout::window_specs(t, s, Some(p));
        nic.stream = Some(stream::EmulatedStream::new(st, specs));
        nic.ring = Some(ring::EmulatedRing::new(st));
        nic
    }

    fn from_layout(fw: FirmwareInfo, layout: Layout, t: &TowerGeometry, s: &SuMaxGeometry) -> Self {
        let mut regs = vec![0u32; layout.bar_size as usize / 4];
        for (o, v) in layout.constant_registers(fw, t, s) {
            regs[o as usize / 4] = v;
        }
        let windows: Vec<(usize, usize)> =
            layout.windows().iter().map(|w| (w.base as usize / 4, w.size as usize / 4)).collect();
        let active = windows.iter().map(|&(_, n)| vec![0; n]).collect();
        let epoch_base = layout.block(block_type::EPOCH).expect("layout has an epoch block").base;
        let mode_reg = layout.block(block_type::TOWER).expect("layout has a tower block").base + tower::MODE;
        EmulatedNic {
            regs,
            layout,
            windows,
            active,
            epoch_base,
            mode_reg,
            epoch: 0,
            sequence: 0,
            idle_packets: 0,
            active_packets: 0,
            swap_left: None,
            clear_left: None,
            latency: 2,
            reads: 0,
            vanish_at: None,
            tears: 0,
            stuck_swap: false,
            stuck_clear: false,
            per_switch: None,
            stream: None,
            ring: None,
        }
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Number of TowerSketch windows; the SuMax arrays' windows follow them, then (with
    /// the per-switch half) [`latency_window`](Self::latency_window) and
    /// [`table_window`](Self::table_window).
    pub fn tower_arrays(&self) -> usize {
        self.layout.tower_windows.len()
    }

    /// Window index of per-switch latency array `i` (for [`active_mut`](Self::active_mut)).
    pub fn latency_window(&self, i: usize) -> usize {
        assert!(i < self.layout.latency_windows.len(), "latency array {i} out of range");
        self.layout.tower_windows.len() + self.layout.sumax_windows.len() + i
    }

    /// Window index of per-switch table way `w`.
    pub fn table_window(&self, w: usize) -> usize {
        assert!(w < self.layout.table_windows.len(), "table way {w} out of range");
        self.layout.windows().len() - self.layout.table_windows.len() + w
    }

    /// The active bank of window `i` (what the next readout will return after its swap).
    pub fn active_mut(&mut self, window: usize) -> &mut [u32] {
        &mut self.active[window]
    }

    /// The idle bank of window `i` (what the windows show now).
    pub fn idle(&self, window: usize) -> &[u32] {
        let (base, n) = self.windows[window];
        &self.regs[base..base + n]
    }

    pub fn set_active_packets(&mut self, packets: u64) {
        self.active_packets = packets;
    }

    pub fn set_mode(&mut self, mode: InsertMode) {
        self.regs[self.mode_reg as usize / 4] = mode as u32;
    }

    pub fn epoch(&self) -> u32 {
        self.epoch
    }

    fn ps(&mut self) -> &mut PerSwitchRegs {
        self.per_switch.as_mut().expect("a device built with_per_switch")
    }

    /// Sets the active bank's TABLE_MISSES (per-switch devices only).
    pub fn set_active_misses(&mut self, misses: u32) {
        self.ps().active_misses = misses;
    }

    /// Pushes a whole record into the stream, or drops it and counts the drop when it does
    /// not fit the buffer (as the hardware's buffer does: never part of a record).
    pub fn push_record(&mut self, r: &Record) {
        let words = to_words(&r.emit());
        let ps = self.ps();
        if ps.records.len() + words.len() > ps.capacity {
            ps.dropped = ps.dropped.wrapping_add(1);
        } else {
            ps.records.extend(words);
        }
    }

    /// Fault: raw words into the stream, whole records or not (a broken buffer).
    /// HOPS_REFUSED from now on: packets whose hops the device refused since reset.
    pub fn set_hops_refused(&mut self, n: u32) {
        self.ps().hops_refused = n;
    }

    pub fn push_record_words(&mut self, words: &[u32]) {
        self.ps().records.extend(words);
    }

    /// Fault hook: the record buffer holds `words` words from now on (records already in it
    /// stay).
    pub fn set_record_capacity(&mut self, words: usize) {
        self.ps().capacity = words;
    }

    /// Words waiting in the record stream.
    pub fn record_words(&self) -> usize {
        self.per_switch.as_ref().map_or(0, |p| p.records.len())
    }

    pub fn sequence(&self) -> u32 {
        self.sequence
    }

    pub fn idle_packets(&self) -> u64 {
        self.idle_packets
    }

    /// Reads served so far.
    pub fn reads(&self) -> u64 {
        self.reads
    }

    /// Overwrites a register (any offset, bypassing the write semantics).
    pub fn poke(&mut self, offset: u32, value: u32) {
        self.regs[offset as usize / 4] = value;
    }

    /// Fault: after `n` more reads the device is gone and every read returns all ones.
    pub fn vanish_after_reads(&mut self, n: u64) {
        self.vanish_at = Some(self.reads + n);
    }

    /// Fault: during each of the next `n` readouts, SEQUENCE moves while the windows are
    /// read (as if another agent swapped or cleared): bumped on the read of the first
    /// window's first word, at most `n` times in all.
    pub fn tear_next_readouts(&mut self, n: u32) {
        self.tears = n;
    }

    /// Fault: a SWAP never completes (SWAP_PENDING stays set).
    pub fn stick_swap(&mut self) {
        self.stuck_swap = true;
    }

    /// Fault: a CLEAR never completes (CLEAR_BUSY stays set).
    pub fn stick_clear(&mut self) {
        self.stuck_clear = true;
    }

    fn status(&self) -> u32 {
        let mut s = 0;
        if self.swap_left.is_some() {
            s |= epoch::STATUS_SWAP_PENDING;
        }
        if self.clear_left.is_some() {
            s |= epoch::STATUS_CLEAR_BUSY;
        }
        s
    }

    /// One STATUS read's worth of progress on pending operations.
    fn tick(&mut self) {
        if let Some(left) = self.swap_left {
            if left == 0 && !self.stuck_swap {
                self.swap_left = None;
                self.swap();
            } else if left > 0 {
                self.swap_left = Some(left - 1);
            }
        }
        if let Some(left) = self.clear_left {
            if left == 0 && !self.stuck_clear {
                self.clear_left = None;
                self.clear();
            } else if left > 0 {
                self.clear_left = Some(left - 1);
            }
        }
    }

    fn swap(&mut self) {
        for (w, &(base, n)) in self.active.iter_mut().zip(&self.windows) {
            w.swap_with_slice(&mut self.regs[base..base + n]);
        }
        self.idle_packets = std::mem::take(&mut self.active_packets);
        if let Some(p) = &mut self.per_switch {
            p.idle_misses = std::mem::take(&mut p.active_misses);
        }
        self.epoch = self.epoch.wrapping_add(1);
        self.sequence = self.sequence.wrapping_add(1);
    }

    fn clear(&mut self) {
        for &(base, n) in &self.windows {
            self.regs[base..base + n].fill(0);
        }
        self.idle_packets = 0;
        if let Some(p) = &mut self.per_switch {
            p.idle_misses = 0;
        }
        self.sequence = self.sequence.wrapping_add(1);
    }

    /// The per-switch block's live registers (RECORD_POP pops, so `&mut`). While the record
    /// ring is on, the buffer empties into it first and RECORD_POP reads 0.
    fn per_switch_live(&mut self, offset: u32) -> Option<u32> {
        let rel = offset.checked_sub(self.per_switch.as_ref()?.base)?;
        let ring_on = self.ring.as_ref().is_some_and(|r| r.enabled());
        if ring_on && rel == per_switch::RECORD_WORDS {
            self.fill_ring();
        }
        let p = self.per_switch.as_mut()?;
        Some(match rel {
            per_switch::TABLE_MISSES => p.idle_misses,
            per_switch::RECORD_WORDS => p.records.len() as u32,
            per_switch::RECORD_DROPPED => p.dropped,
            per_switch::HOPS_REFUSED => p.hops_refused,
            per_switch::RECORD_POP if ring_on => 0,
            per_switch::RECORD_POP => p.records.pop_front().unwrap_or(0),
            _ => return None,
        })
    }

    /// Writes to the per-switch block's read/write registers, as the hardware's register
    /// file takes them: MODE only 0 (CM) or 2 (ACU), any other value ignored;
    /// INFLATE_THRESHOLD its low `THRESHOLD_BITS` bits. False for any other offset.
    fn per_switch_write(&mut self, offset: u32, value: u32) -> bool {
        let Some(p) = &self.per_switch else { return false };
        let modes = [InsertMode::Cm as u32, InsertMode::Acu as u32];
        let kept = match offset.checked_sub(p.base) {
            Some(per_switch::MODE) if !modes.contains(&value) => return true,
            Some(per_switch::MODE | per_switch::TABLE_THRESHOLD) => value,
            Some(per_switch::INFLATE_THRESHOLD) => value & ((1 << per_switch::THRESHOLD_BITS) - 1),
            _ => return false,
        };
        self.regs[offset as usize / 4] = kept;
        true
    }

    fn live(&self, offset: u32) -> Option<u32> {
        let rel = offset.checked_sub(self.epoch_base)?;
        Some(match rel {
            epoch::CONTROL => 0,
            epoch::STATUS => self.status(),
            epoch::EPOCH => self.epoch,
            epoch::SEQUENCE => self.sequence,
            epoch::IDLE_PACKETS => self.idle_packets as u32,
            r if r == epoch::IDLE_PACKETS + 4 => (self.idle_packets >> 32) as u32,
            epoch::ACTIVE_PACKETS => self.active_packets as u32,
            r if r == epoch::ACTIVE_PACKETS + 4 => (self.active_packets >> 32) as u32,
            _ => return None,
        })
    }
}

impl RegisterAccess for EmulatedNic {
    fn bar_size(&self) -> u64 {
        self.layout.bar_size as u64
    }

    fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
        check_range(self.bar_size(), offset, 4)?;
        self.reads += 1;
        if self.vanish_at.is_some_and(|at| self.reads > at) {
            return Ok(DEVICE_GONE);
        }
        if offset == self.epoch_base + epoch::STATUS {
            self.tick();
        }
        let word = offset as usize / 4;
        if self.tears > 0 && self.windows.first().is_some_and(|&(base, _)| base == word) {
            self.tears -= 1;
            self.sequence = self.sequence.wrapping_add(1);
        }
        if let Some(v) = self.per_switch_live(offset) {
            return Ok(v);
        }
        if let Some(v) = self.ring_read(offset) {
            return Ok(v);
        }
        if let Some(v) = self.stream.as_ref().and_then(|s| s.read(offset)) {
            return Ok(v);
        }
        Ok(self.live(offset).unwrap_or(self.regs[word]))
    }

    fn c2h(&mut self) -> Option<&mut dyn C2hChannel> {
        if self.stream.as_ref().is_some_and(|s| s.channel) {
            Some(self)
        } else {
            None
        }
    }

    fn ring(&mut self) -> Option<&mut dyn RecordRing> {
        if self.ring.as_ref().is_some_and(|r| r.offered) {
            Some(self)
        } else {
            None
        }
    }

    fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
        check_range(self.bar_size(), offset, 4)?;
        if self.vanish_at.is_some_and(|at| self.reads >= at) {
            return Ok(()); // posted writes to a lost device vanish silently
        }
        if offset == self.epoch_base + epoch::CONTROL {
            if value & epoch::CONTROL_SWAP != 0 && self.swap_left.is_none() {
                self.swap_left = Some(self.latency);
                if self.latency == 0 && !self.stuck_swap {
                    self.swap_left = None;
                    self.swap();
                }
            }
            if value & epoch::CONTROL_CLEAR != 0 && self.clear_left.is_none() {
                self.clear_left = Some(self.latency);
                if self.latency == 0 && !self.stuck_clear {
                    self.clear_left = None;
                    self.clear();
                }
            }
        } else if self
            .stream
            .as_ref()
            .is_some_and(|s| offset == s.base + smartnic_contract::regs::stream::CONTROL)
        {
            if value & smartnic_contract::regs::stream::CONTROL_START != 0 {
                self.start_stream();
            }
        } else if offset == self.mode_reg {
            self.regs[offset as usize / 4] = value;
        } else if self.ring_write(offset, value) {
            // RING_CONTROL: kept by ring_write.
        } else {
            self.per_switch_write(offset, value);
        }
        // Everything else is read-only.
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nic() -> EmulatedNic {
        EmulatedNic::new(
            FirmwareInfo::default(),
            &TowerGeometry::from_widths_depths(&[(8, 8), (16, 4)]),
            &SuMaxGeometry::with_depth(1, 2),
        )
    }

    #[test]
    fn swap_exchanges_banks_after_the_latency_and_clear_zeroes_the_idle_one() {
        let mut n = nic();
        let e = n.epoch_base;
        n.active_mut(0)[3] = 42;
        n.set_active_packets(7);
        n.write32(e + epoch::CONTROL, epoch::CONTROL_SWAP).unwrap();
        assert_eq!(n.read32(e + epoch::STATUS).unwrap(), epoch::STATUS_SWAP_PENDING);
        assert_eq!(n.read32(e + epoch::STATUS).unwrap(), epoch::STATUS_SWAP_PENDING);
        assert_eq!(n.read32(e + epoch::STATUS).unwrap(), 0);
        assert_eq!((n.epoch(), n.sequence(), n.idle_packets()), (1, 1, 7));
        let w0 = n.layout().tower_windows[0].base;
        assert_eq!(n.read32(w0 + 12).unwrap(), 42);
        assert_eq!(n.read64(e + epoch::IDLE_PACKETS).unwrap(), 7);
        n.write32(w0 + 12, 5).unwrap();
        assert_eq!(n.read32(w0 + 12).unwrap(), 42, "windows are read-only");
        n.write32(e + epoch::CONTROL, epoch::CONTROL_CLEAR).unwrap();
        while n.read32(e + epoch::STATUS).unwrap() != 0 {}
        assert_eq!(n.idle(0), &[0; 8]);
        assert_eq!((n.sequence(), n.idle_packets()), (2, 0));
    }

    /// The per-switch registers keep what the hardware's register file keeps.
    #[test]
    fn per_switch_registers_keep_what_the_hardware_keeps() {
        let p = PerSwitchGeometry {
            latency: smartnic_contract::per_switch::LatencyTowerGeometry::from_cells(&[(8, 16, 4)], 0),
            table: smartnic_contract::per_switch::KeyTableGeometry::with_capacity(2),
        };
        let (t, s) = (TowerGeometry::from_widths_depths(&[(8, 8)]), SuMaxGeometry::with_depth(1, 2));
        let mut n = EmulatedNic::with_per_switch(FirmwareInfo::default(), &t, &s, &p);
        let b = n.layout().block(block_type::PER_SWITCH).unwrap().base;
        n.write32(b + per_switch::MODE, 2).unwrap();
        n.write32(b + per_switch::MODE, 1).unwrap();
        assert_eq!(n.read32(b + per_switch::MODE).unwrap(), 2, "CU is not a mode of the half");
        n.write32(b + per_switch::INFLATE_THRESHOLD, u32::MAX).unwrap();
        assert_eq!(n.read32(b + per_switch::INFLATE_THRESHOLD).unwrap(), (1 << 22) - 1);
        n.write32(b + per_switch::TABLE_THRESHOLD, u32::MAX).unwrap();
        assert_eq!(n.read32(b + per_switch::TABLE_THRESHOLD).unwrap(), u32::MAX);
        n.write32(b + per_switch::TABLE_MISSES, 9).unwrap();
        assert_eq!(n.read32(b + per_switch::TABLE_MISSES).unwrap(), 0, "read-only");
    }

    #[test]
    fn faults() {
        let mut n = nic();
        let e = n.epoch_base;
        n.stick_swap();
        n.write32(e + epoch::CONTROL, epoch::CONTROL_SWAP).unwrap();
        for _ in 0..100 {
            assert_eq!(n.read32(e + epoch::STATUS).unwrap(), epoch::STATUS_SWAP_PENDING);
        }
        n.vanish_after_reads(1);
        assert_ne!(n.read32(0).unwrap(), DEVICE_GONE);
        assert_eq!(n.read32(0).unwrap(), DEVICE_GONE);
        let mut n = nic();
        n.tear_next_readouts(1);
        let w0 = n.layout().tower_windows[0].base;
        n.read32(w0).unwrap();
        n.read32(w0).unwrap();
        assert_eq!(n.sequence(), 1);
    }
}
