//! `HopSerializer`: every hop of an IP packet's INT stack becomes one insertion, one per
//! clock: key = switch ID ++ flow key (the contract's `per_switch::switch_key`), value =
//! that hop's latency, in stack (path) order, packets in arrival order.
//!
//! # Why it never backs up at line rate
//! The hops of a frame arrive before its flow key (the shim sits between Ethernet and IP),
//! so a frame's hops can only be issued after its descriptor. A frame of `h` hops is at
//! least `48 + 6h` bytes (Ethernet 14, the shim 6 + 6h, IPv4 20, UDP 8) and at least 60
//! (the MAC's minimum without FCS), so on the 64-bit bus it lasts
//! `beats(h) = ceil(max(60, 48 + 6h) / 8) >= h` beats for `h <= 24` (18 beats for 16 hops),
//! and any frame lasts at least one beat. The hops of frame `f` are issued during the beats of the frames after it;
//! the work waiting when a descriptor arrives is then at most 16 minus the beats of the
//! new frame ([`MAX_WAIT`]), so at most two records wait while one is issued (the
//! Verilator proof drives the worst sequences: 16-hop stacks in minimum frames back to
//! back, interleaved with runts and 1-hop frames, and checks `lost` stays 0 and that no hop
//! waits more than [`MAX_WAIT`] clocks).
//!
//! The bound depends on the bus carrying 8 bytes a clock at the core clock. A 128-bit bus
//! at the same clock (16 bytes a beat) makes a 16-hop frame last 11 beats for 16 hops: the
//! serializer would fall behind by 5 hops a frame and needs two insertions a clock (a
//! second latency-tower port or a 2x core clock).
//!
//! # Behind the board's four ports
//! The board's merge hands in a record a clock at most, one port's after another's, so
//! records come faster than beats: the ring holds [`SLOTS`] = 16, enough for every port's
//! record at once and a backlog of twelve more. While the hops stay under one a clock on
//! average the ring drains; four ports of deep stacks in short frames bring more (16-hop
//! stacks in minimum frames on all four: 2.2 hops a core clock), and then a record that
//! finds the ring full is refused whole and counted in `lost`, its packet still counted by
//! the flow sketches. An accepted record's last hop leaves at most [`MAX_WAIT_ANY`] clocks
//! after it came.
//!
//! # Datapath
//! - **Input**: the descriptor with its frame's 16 hop records, already extracted by a
//!   [`HopCapture`](super::hop_capture::HopCapture) in front (the core's, on its one port's
//!   beats, or each board port's, whose records cross into the core clock): the record is
//!   key, bank, hop count and 16 hops.
//! - **Store**: records (hop count, bank, epoch, key and 16 hops: [`SLOT_BITS`] bits) go
//!   into a ring of [`SLOTS`] in distributed RAM ([`DistRam`]: written at the clock's end,
//!   read combinationally), at `head + count`, written once and never moved; a record with
//!   no room is counted in `lost` (never behind one port, by the bound above).
//! - **Issue**: the head slot is read, hop `j` of it selected and registered onto the
//!   outputs; the next record follows without a gap.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | synchronous reset of the queue and `lost` |
//! | `d_valid`, `d_ip` | in | 1, 1 | a descriptor, and its class is IP |
//! | `d_hops` | in | 5 | the frame's hop count (0 without a shim) |
//! | `d_rec` | in | 768 | its hop records (`HopCapture`'s `rec`: halfword `k` in bits `16k + 15 : 16k`, hop `j` = halfwords `3j .. 3j + 2`) |
//! | `d_key`, `d_bank`, `d_epoch` | in | 104, 1, 32 | the flow key, the epoch bank the packet is recorded in and that epoch's number |
//! | `h_valid` | out | 1 | a hop is issued this clock |
//! | `h_key` | out | 120 | switch ID (bits 119:104) ++ flow key |
//! | `h_switch`, `h_latency` | out | 16, 32 | the hop record |
//! | `h_bank`, `h_epoch`, `h_last` | out | 1, 32, 1 | the packet's bank and epoch; the packet's last hop |
//! | `x_path` | out | 256 | the descriptor's path in its own clock: switch ID of hop `j` in bits `16j+15:16j` (bits of absent hops are stale capture; the flow-key table's `path` port) |
//! | `lost` | out | 32 | records refused for lack of room since reset (saturating) |
//! | `idle` | out | 1 | nothing active or queued |
use super::hop_capture::{HW_PER_HOP, REC_BITS, REC_HW};
use crate::arith::Widen;
use crate::hash::KEY_BITS;
use crate::parser::konst;
use crate::per_switch::dist_ram::DistRam;
use rust_hdl::prelude::*;

pub use super::hop_capture::HOPS;
/// Width of `x_path`: a switch ID per hop.
pub const PATH_BITS: usize = HOPS * 16;
/// Address bits of the ring.
pub const SLOT_ADDR: usize = 4;
/// Records the ring holds (the one being issued and those waiting).
pub const SLOTS: usize = 1 << SLOT_ADDR;
/// Most clocks a hop waits between its descriptor and its issue, which the epoch engine's
/// drain must cover: a frame of `h` hops finds at most `16 - beats(h)` hops of earlier
/// frames waiting (the 16-hop frame before it issues while its `beats(h) >= 8` beats pass),
/// so its last hop leaves `1 + h + max(0, 16 - beats(h))` clocks after the descriptor (the
/// one is the output register), at most 17 (a 16-hop frame is 18 beats and finds nothing
/// waiting; a 2-hop frame finds 8 hops). The Verilator proof measures 17 on the worst
/// sequences.
pub const MAX_WAIT: usize = 17;
/// Most clocks a hop waits when descriptors may come every clock (the board's four ports
/// merged into one core): the records ahead of an accepted one hold at most
/// `(SLOTS - 1) x 16` hops, then its own 16 and the output register: `1 + SLOTS x 16`.
pub const MAX_WAIT_ANY: usize = 1 + SLOTS * HOPS;
/// Width of the hop key.
pub const HOP_KEY_BITS: usize = KEY_BITS + 16;
/// A slot: the 16 hops (bits 0..768), the hop count, the bank, the epoch, the flow key.
const N_AT: usize = REC_BITS;
const BANK_AT: usize = N_AT + 5;
const EPOCH_AT: usize = BANK_AT + 1;
const KEY_AT: usize = EPOCH_AT + 32;
/// Width of a slot.
pub const SLOT_BITS: usize = KEY_AT + KEY_BITS;

// The literal indices of `update`.
const _: () = assert!(REC_HW == 48 && HW_PER_HOP == 3 && SLOT_BITS == 910 && SLOT_BITS < 1 << 10);

/// The hop serializer (see the module docs).
#[derive(LogicBlock)]
pub struct HopSerializer {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub d_valid: Signal<In, Bit>,
    pub d_ip: Signal<In, Bit>,
    pub d_hops: Signal<In, Bits<5>>,
    pub d_rec: Signal<In, Bits<REC_BITS>>,
    pub d_key: Signal<In, Bits<KEY_BITS>>,
    pub d_bank: Signal<In, Bit>,
    pub d_epoch: Signal<In, Bits<32>>,
    pub h_valid: Signal<Out, Bit>,
    pub h_key: Signal<Out, Bits<HOP_KEY_BITS>>,
    pub h_switch: Signal<Out, Bits<16>>,
    pub h_latency: Signal<Out, Bits<32>>,
    pub h_bank: Signal<Out, Bit>,
    pub h_epoch: Signal<Out, Bits<32>>,
    pub h_last: Signal<Out, Bit>,
    pub x_path: Signal<Out, Bits<PATH_BITS>>,
    pub lost: Signal<Out, Bits<32>>,
    pub idle: Signal<Out, Bit>,
    // The ring: `count` records from `head`, the head's hop `j` issued next.
    ring: DistRam<SLOT_BITS, SLOT_ADDR>,
    head: DFF<Bits<SLOT_ADDR>>,
    count: DFF<Bits<{ SLOT_ADDR + 1 }>>,
    j: DFF<Bits<5>>,
    // The issued hop, registered.
    o_valid: DFF<Bit>,
    o_hw: [DFF<Bits<16>>; HW_PER_HOP],
    o_key: DFF<Bits<KEY_BITS>>,
    o_bank: DFF<Bit>,
    o_epoch: DFF<Bits<32>>,
    o_last: DFF<Bit>,
    n_lost: DFF<Bits<32>>,
    // Wires.
    push: Signal<Local, Bit>,
    /// The ring has room for the descriptor's record (a slot free, or the head's last hop
    /// leaving this clock).
    room: Signal<Local, Bit>,
    issue: Signal<Local, Bit>,
    pop: Signal<Local, Bit>,
    cur: Signal<Local, Bits<SLOT_BITS>>,
    cur_n: Signal<Local, Bits<5>>,
    cur_hw: [Signal<Local, Bits<16>>; HW_PER_HOP],
    /// Halfword offsets in a record (`16k`).
    rec_at: [Constant<Bits<10>>; REC_HW],
    // The slot written: the fields widened and placed.
    w_rec: Widen<SLOT_BITS, REC_BITS>,
    w_n: Widen<SLOT_BITS, 5>,
    w_bank: Widen<SLOT_BITS, 1>,
    bank1: Signal<Local, Bits<1>>,
    one1: Constant<Bits<1>>,
    zero1: Constant<Bits<1>>,
    w_epoch: Widen<SLOT_BITS, 32>,
    w_key: Widen<SLOT_BITS, KEY_BITS>,
    lat_hi: Widen<32, 16>,
    lat_lo: Widen<32, 16>,
    key_sw: Widen<HOP_KEY_BITS, 16>,
    key_flow: Widen<HOP_KEY_BITS, KEY_BITS>,
    /// The path: hop `j`'s switch ID widened and placed, ORed into `path_acc[j]`.
    path_sw: [Widen<PATH_BITS, 16>; HOPS],
    path_acc: [Signal<Local, Bits<PATH_BITS>>; HOPS],
    path_at: [Constant<Bits<9>>; HOPS],
    // Constants.
    n_at: Constant<Bits<10>>,
    bank_at: Constant<Bits<10>>,
    epoch_at: Constant<Bits<10>>,
    key_at: Constant<Bits<10>>,
    zero32: Constant<Bits<32>>,
    hop_c: [Constant<Bits<5>>; HOPS],
    full: Constant<Bits<{ SLOT_ADDR + 1 }>>,
    one_c: Constant<Bits<{ SLOT_ADDR + 1 }>>,
    zero_c: Constant<Bits<{ SLOT_ADDR + 1 }>>,
    one_h: Constant<Bits<SLOT_ADDR>>,
    zero_h: Constant<Bits<SLOT_ADDR>>,
    zero5: Constant<Bits<5>>,
    one5: Constant<Bits<5>>,
    sixteen: Constant<Bits<32>>,
    flow_bits: Constant<Bits<HOP_KEY_BITS>>,
    one32: Constant<Bits<32>>,
    max32: Constant<Bits<32>>,
}

impl Default for HopSerializer {
    fn default() -> Self {
        HopSerializer {
            clock: Default::default(),
            reset: Default::default(),
            d_valid: Default::default(),
            d_ip: Default::default(),
            d_hops: Default::default(),
            d_rec: Default::default(),
            d_key: Default::default(),
            d_bank: Default::default(),
            d_epoch: Default::default(),
            h_valid: Default::default(),
            h_key: Default::default(),
            h_switch: Default::default(),
            h_latency: Default::default(),
            h_bank: Default::default(),
            h_epoch: Default::default(),
            h_last: Default::default(),
            x_path: Default::default(),
            lost: Default::default(),
            idle: Default::default(),
            ring: Default::default(),
            head: Default::default(),
            count: Default::default(),
            j: Default::default(),
            o_valid: Default::default(),
            o_hw: Default::default(),
            o_key: Default::default(),
            o_bank: Default::default(),
            o_epoch: Default::default(),
            o_last: Default::default(),
            n_lost: Default::default(),
            push: Default::default(),
            room: Default::default(),
            issue: Default::default(),
            pop: Default::default(),
            cur: Default::default(),
            cur_n: Default::default(),
            cur_hw: Default::default(),
            rec_at: std::array::from_fn(|k| konst!(16 * k)),
            w_rec: Default::default(),
            w_n: Default::default(),
            w_bank: Default::default(),
            bank1: Default::default(),
            one1: konst!(1),
            zero1: konst!(0),
            w_epoch: Default::default(),
            w_key: Default::default(),
            lat_hi: Default::default(),
            lat_lo: Default::default(),
            key_sw: Default::default(),
            key_flow: Default::default(),
            path_sw: Default::default(),
            path_acc: std::array::from_fn(|_| Default::default()),
            path_at: std::array::from_fn(|j| konst!(16 * j)),
            n_at: konst!(N_AT),
            bank_at: konst!(BANK_AT),
            epoch_at: konst!(EPOCH_AT),
            key_at: konst!(KEY_AT),
            zero32: konst!(0),
            hop_c: std::array::from_fn(|i| konst!(i)),
            full: konst!(SLOTS),
            one_c: konst!(1),
            zero_c: konst!(0),
            one_h: konst!(1),
            zero_h: konst!(0),
            zero5: konst!(0),
            one5: konst!(1),
            sixteen: konst!(16),
            flow_bits: konst!(KEY_BITS),
            one32: konst!(1),
            max32: konst!(u32::MAX),
        }
    }
}

impl Logic for HopSerializer {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, head, count, j, o_valid, o_key, o_bank, o_epoch, o_last, n_lost);
        for k in 0..HW_PER_HOP {
            self.o_hw[k].clock.next = self.clock.val();
            self.o_hw[k].d.next = self.o_hw[k].q.val();
        }
        // ---- The descriptor's path: switch IDs (halfword 0 of each hop) side by side.
        for j in 0..HOPS {
            self.path_sw[j].x.next = self.d_rec.val().get_bits::<16>(self.rec_at[3 * j].val().index());
        }
        self.path_acc[0].next = self.path_sw[0].y.val() << self.path_at[0].val();
        for j in 1..HOPS {
            self.path_acc[j].next =
                self.path_acc[j - 1].val() | (self.path_sw[j].y.val() << self.path_at[j].val());
        }
        for j in (HOPS - 1)..HOPS {
            self.x_path.next = self.path_acc[j].val();
        }
        self.push.next = self.d_valid.val() & self.d_ip.val() & (self.d_hops.val() != self.zero5.val());

        // ---- Issue: hop `j` of the head slot, then the next record without a gap. (Array
        // indices are literals and loop variables: `#[hdl_gen]` evaluates them from their
        // text.)
        self.ring.clock.next = self.clock.val();
        self.ring.read_address.next = self.head.q.val();
        self.cur.next = self.ring.read_data.val();
        self.cur_n.next = self.cur.val().get_bits::<5>(self.n_at.val().index());
        for k in 0..HW_PER_HOP {
            self.cur_hw[k].next = self.cur.val().get_bits::<16>(self.rec_at[k].val().index());
        }
        for jj in 0..HOPS {
            if self.j.q.val() == self.hop_c[jj].val() {
                self.cur_hw[0].next = self.cur.val().get_bits::<16>(self.rec_at[jj * 3].val().index());
                self.cur_hw[1].next = self.cur.val().get_bits::<16>(self.rec_at[jj * 3 + 1].val().index());
                self.cur_hw[2].next = self.cur.val().get_bits::<16>(self.rec_at[jj * 3 + 2].val().index());
            }
        }
        self.issue.next = self.count.q.val() != self.zero_c.val();
        self.pop.next = self.issue.val() & ((self.j.q.val() + self.one5.val()) == self.cur_n.val());
        if self.issue.val() {
            if self.pop.val() {
                self.j.d.next = self.zero5.val();
                self.head.d.next = self.head.q.val() + self.one_h.val();
            } else {
                self.j.d.next = self.j.q.val() + self.one5.val();
            }
        }
        self.o_valid.d.next = self.issue.val() & !self.reset.val();
        for k in 0..HW_PER_HOP {
            self.o_hw[k].d.next = self.cur_hw[k].val();
        }
        self.o_key.d.next = self.cur.val().get_bits::<KEY_BITS>(self.key_at.val().index());
        self.o_bank.d.next = self.cur.val().get_bit(self.bank_at.val().index());
        self.o_epoch.d.next = self.cur.val().get_bits::<32>(self.epoch_at.val().index());
        self.o_last.d.next = self.pop.val();

        // ---- Store the descriptor's record at the tail (`head + count` mod SLOTS). With the
        // ring full it still fits when the head's last hop leaves this clock: the tail is
        // then the head's slot, read this clock and written at its end.
        self.w_rec.x.next = self.d_rec.val();
        self.w_n.x.next = self.d_hops.val();
        if self.d_bank.val() {
            self.bank1.next = self.one1.val();
        } else {
            self.bank1.next = self.zero1.val();
        }
        self.w_bank.x.next = self.bank1.val();
        self.w_epoch.x.next = self.d_epoch.val();
        self.w_key.x.next = self.d_key.val();
        self.ring.write_address.next = self.head.q.val() + self.count.q.val().get_bits::<SLOT_ADDR>(0);
        self.ring.write_data.next = self.w_rec.y.val()
            | (self.w_n.y.val() << self.n_at.val())
            | (self.w_bank.y.val() << self.bank_at.val())
            | (self.w_epoch.y.val() << self.epoch_at.val())
            | (self.w_key.y.val() << self.key_at.val());
        self.room.next = (self.count.q.val() != self.full.val()) | self.pop.val();
        self.ring.write_enable.next = self.push.val() & self.room.val() & !self.reset.val();
        if self.push.val() & self.room.val() {
            if !self.pop.val() {
                self.count.d.next = self.count.q.val() + self.one_c.val();
            }
        } else {
            if self.push.val() & (self.n_lost.q.val() != self.max32.val()) {
                self.n_lost.d.next = self.n_lost.q.val() + self.one32.val();
            }
            if self.pop.val() {
                self.count.d.next = self.count.q.val() - self.one_c.val();
            }
        }

        if self.reset.val() {
            self.head.d.next = self.zero_h.val();
            self.count.d.next = self.zero_c.val();
            self.j.d.next = self.zero5.val();
            self.n_lost.d.next = self.zero32.val();
        }

        // ---- Outputs, from registers.
        self.lat_hi.x.next = self.o_hw[1].q.val();
        self.lat_lo.x.next = self.o_hw[2].q.val();
        self.key_sw.x.next = self.o_hw[0].q.val();
        self.key_flow.x.next = self.o_key.q.val();
        self.h_valid.next = self.o_valid.q.val();
        self.h_switch.next = self.o_hw[0].q.val();
        self.h_latency.next = (self.lat_hi.y.val() << self.sixteen.val()) | self.lat_lo.y.val();
        self.h_key.next = (self.key_sw.y.val() << self.flow_bits.val()) | self.key_flow.y.val();
        self.h_bank.next = self.o_bank.q.val();
        self.h_epoch.next = self.o_epoch.q.val();
        self.h_last.next = self.o_last.q.val();
        self.lost.next = self.n_lost.q.val();
        self.idle.next = (self.count.q.val() == self.zero_c.val()) & !self.o_valid.q.val();
    }
}
