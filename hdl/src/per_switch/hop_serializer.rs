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
//! new frame ([`MAX_WAIT`]), so at most two records wait while one is issued: [`QUEUE`] = 2
//! holds every case (the Verilator proof drives the worst sequences: 16-hop stacks in
//! minimum frames back to back, interleaved with runts and 1-hop frames, and checks `lost`
//! stays 0 and that no hop waits more than [`MAX_WAIT`] clocks).
//!
//! The bound depends on the bus carrying 8 bytes a clock at the core clock. A 128-bit bus
//! at the same clock (16 bytes a beat) makes a 16-hop frame last 11 beats for 16 hops: the
//! serializer would fall behind by 5 hops a frame and needs two insertions a clock (a
//! second latency-tower port or a 2x core clock). Four 10G ports merged into one core at
//! one descriptor a clock (the board issue) keep one frame per clock but up to 4x the hop
//! rate: the core clock must then run at least 4x the MAC's per-port beat rate, or the hop
//! pipeline must be duplicated per port.
//!
//! # Datapath
//! - **Input**: the descriptor with its frame's 16 hop records, already extracted by a
//!   [`HopCapture`](super::hop_capture::HopCapture) in front (the core's, on its one port's
//!   beats, or each board port's, whose records cross into the core clock): the record is
//!   key, bank, hop count and 16 hops.
//! - **Store**: records go into a ring of [`SLOTS`] = 3 (written once, never moved), at
//!   `head + count`; a record with no room is counted in `lost` (never, by the bound above).
//! - **Issue**: hop `j` of the head record is selected and registered onto the outputs;
//!   the next record follows without a gap.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | synchronous reset of the capture state, the queue and `lost` |
//! | `d_valid`, `d_ip` | in | 1, 1 | a descriptor, and its class is IP |
//! | `d_hops` | in | 5 | the frame's hop count (0 without a shim) |
//! | `d_rec` | in | 768 | its hop records (`HopCapture`'s `rec`: halfword `k` in bits `16k + 15 : 16k`, hop `j` = halfwords `3j .. 3j + 2`) |
//! | `d_key`, `d_bank`, `d_epoch` | in | 104, 1, 32 | the flow key, the epoch bank the packet is recorded in and that epoch's number |
//! | `h_valid` | out | 1 | a hop is issued this clock |
//! | `h_key` | out | 120 | switch ID (bits 119:104) ++ flow key |
//! | `h_switch`, `h_latency` | out | 16, 32 | the hop record |
//! | `h_bank`, `h_epoch`, `h_last` | out | 1, 32, 1 | the packet's bank and epoch; the packet's last hop |
//! | `x_path` | out | 256 | the descriptor's path in its own clock: switch ID of hop `j` in bits `16j+15:16j` (bits of absent hops are stale capture; the flow-key table's `path` port) |
//! | `lost` | out | 32 | records refused for lack of room since reset |
//! | `idle` | out | 1 | nothing active or queued |
use super::hop_capture::{HW_PER_HOP, REC_BITS, REC_HW};
use crate::arith::Widen;
use crate::hash::KEY_BITS;
use crate::parser::konst;
use rust_hdl::prelude::*;

pub use super::hop_capture::HOPS;
/// Width of `x_path`: a switch ID per hop.
pub const PATH_BITS: usize = HOPS * 16;
/// Records held: the one being issued and [`QUEUE`] waiting.
pub const SLOTS: usize = 3;
/// Records waiting behind the one being issued.
pub const QUEUE: usize = SLOTS - 1;
/// Halfwords of the ring.
const RING_HW: usize = SLOTS * REC_HW;
/// Most clocks a hop waits between its descriptor and its issue, which the epoch engine's
/// drain must cover: a frame of `h` hops finds at most `16 - beats(h)` hops of earlier
/// frames waiting (the 16-hop frame before it issues while its `beats(h) >= 8` beats pass),
/// so its last hop leaves `1 + h + max(0, 16 - beats(h))` clocks after the descriptor (the
/// one is the output register), at most 17 (a 16-hop frame is 18 beats and finds nothing
/// waiting; a 2-hop frame finds 8 hops). The Verilator proof measures 17 on the worst
/// sequences.
pub const MAX_WAIT: usize = 17;
/// Most clocks a hop waits when descriptors may come every clock (the board's four ports
/// merged into one core: more hops a clock than the one a clock issued): the records ahead
/// of an accepted one hold at most `QUEUE x 16` hops, then its own 16 and the output
/// register, so `1 + SLOTS x 16` = 49. A record that finds the ring full is refused whole
/// and counted in `lost`; its packet still reaches the flow sketches.
pub const MAX_WAIT_ANY: usize = 1 + SLOTS * HOPS;
/// Width of the hop key.
pub const HOP_KEY_BITS: usize = KEY_BITS + 16;

// The literal indices of `update`.
const _: () = assert!(REC_HW == 48 && HW_PER_HOP == 3 && SLOTS == 3);

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
    // The record ring: `count` records from `head`, the head's hop `j` issued next.
    s_n: [DFF<Bits<5>>; SLOTS],
    s_key: [DFF<Bits<KEY_BITS>>; SLOTS],
    s_bank: [DFF<Bit>; SLOTS],
    s_epoch: [DFF<Bits<32>>; SLOTS],
    s_hw: [DFF<Bits<16>>; RING_HW],
    head: DFF<Bits<2>>,
    count: DFF<Bits<2>>,
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
    tail: Signal<Local, Bits<2>>,
    cur_n: Signal<Local, Bits<5>>,
    cur_key: Signal<Local, Bits<KEY_BITS>>,
    cur_bank: Signal<Local, Bit>,
    cur_epoch: Signal<Local, Bits<32>>,
    cur_hw: [Signal<Local, Bits<16>>; HW_PER_HOP],
    /// The descriptor's record, halfword by halfword.
    rec: [Signal<Local, Bits<16>>; REC_HW],
    rec_at: [Constant<Bits<10>>; REC_HW],
    lat_hi: Widen<32, 16>,
    lat_lo: Widen<32, 16>,
    key_sw: Widen<HOP_KEY_BITS, 16>,
    key_flow: Widen<HOP_KEY_BITS, KEY_BITS>,
    /// The path: hop `j`'s switch ID widened and placed, ORed into `path_acc[j]`.
    path_sw: [Widen<PATH_BITS, 16>; HOPS],
    path_acc: [Signal<Local, Bits<PATH_BITS>>; HOPS],
    path_at: [Constant<Bits<9>>; HOPS],
    // Constants.
    zero32: Constant<Bits<32>>,
    slot_c: [Constant<Bits<2>>; SLOTS],
    hop_c: [Constant<Bits<5>>; HOPS],
    two2: Constant<Bits<2>>,
    one2: Constant<Bits<2>>,
    zero2: Constant<Bits<2>>,
    zero5: Constant<Bits<5>>,
    one5: Constant<Bits<5>>,
    sixteen: Constant<Bits<32>>,
    flow_bits: Constant<Bits<HOP_KEY_BITS>>,
    one32: Constant<Bits<32>>,
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
            s_n: Default::default(),
            s_key: Default::default(),
            s_bank: Default::default(),
            s_epoch: Default::default(),
            s_hw: std::array::from_fn(|_| Default::default()),
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
            tail: Default::default(),
            cur_n: Default::default(),
            cur_key: Default::default(),
            cur_bank: Default::default(),
            cur_epoch: Default::default(),
            cur_hw: Default::default(),
            rec: std::array::from_fn(|_| Default::default()),
            rec_at: std::array::from_fn(|k| konst!(16 * k)),
            lat_hi: Default::default(),
            lat_lo: Default::default(),
            key_sw: Default::default(),
            key_flow: Default::default(),
            path_sw: Default::default(),
            path_acc: std::array::from_fn(|_| Default::default()),
            path_at: std::array::from_fn(|j| konst!(16 * j)),
            zero32: konst!(0),
            slot_c: std::array::from_fn(|i| konst!(i)),
            hop_c: std::array::from_fn(|i| konst!(i)),
            two2: konst!(2),
            one2: konst!(1),
            zero2: konst!(0),
            zero5: konst!(0),
            one5: konst!(1),
            sixteen: konst!(16),
            flow_bits: konst!(KEY_BITS),
            one32: konst!(1),
        }
    }
}

impl Logic for HopSerializer {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, head, count, j, o_valid, o_key, o_bank, o_epoch, o_last, n_lost);
        for e in 0..SLOTS {
            self.s_n[e].clock.next = self.clock.val();
            self.s_n[e].d.next = self.s_n[e].q.val();
            self.s_key[e].clock.next = self.clock.val();
            self.s_key[e].d.next = self.s_key[e].q.val();
            self.s_bank[e].clock.next = self.clock.val();
            self.s_bank[e].d.next = self.s_bank[e].q.val();
            self.s_epoch[e].clock.next = self.clock.val();
            self.s_epoch[e].d.next = self.s_epoch[e].q.val();
        }
        for k in 0..RING_HW {
            self.s_hw[k].clock.next = self.clock.val();
            self.s_hw[k].d.next = self.s_hw[k].q.val();
        }
        for k in 0..HW_PER_HOP {
            self.o_hw[k].clock.next = self.clock.val();
            self.o_hw[k].d.next = self.o_hw[k].q.val();
        }
        // (Array indices below are literals plus loop variables: `#[hdl_gen]` evaluates them
        // from their text, so slot `e`'s hop `jj` is written `e * 48 + jj * 3`.)
        // ---- The descriptor's record, halfword by halfword.
        for k in 0..REC_HW {
            self.rec[k].next = self.d_rec.val().get_bits::<16>(self.rec_at[k].val().index());
        }
        // The path: switch IDs (halfword 0 of each hop) side by side.
        for j in 0..HOPS {
            self.path_sw[j].x.next = self.rec[3 * j].val();
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

        // ---- Issue: hop `j` of the head record, then the next record without a gap.
        self.cur_n.next = self.s_n[0].q.val();
        self.cur_key.next = self.s_key[0].q.val();
        self.cur_bank.next = self.s_bank[0].q.val();
        self.cur_epoch.next = self.s_epoch[0].q.val();
        for k in 0..HW_PER_HOP {
            self.cur_hw[k].next = self.s_hw[k].q.val();
        }
        for e in 0..SLOTS {
            if self.head.q.val() == self.slot_c[e].val() {
                self.cur_n.next = self.s_n[e].q.val();
                self.cur_key.next = self.s_key[e].q.val();
                self.cur_bank.next = self.s_bank[e].q.val();
                self.cur_epoch.next = self.s_epoch[e].q.val();
                for jj in 0..HOPS {
                    if self.j.q.val() == self.hop_c[jj].val() {
                        self.cur_hw[0].next = self.s_hw[e * 48 + jj * 3].q.val();
                        self.cur_hw[1].next = self.s_hw[e * 48 + jj * 3 + 1].q.val();
                        self.cur_hw[2].next = self.s_hw[e * 48 + jj * 3 + 2].q.val();
                    }
                }
            }
        }
        self.issue.next = self.count.q.val() != self.zero2.val();
        self.pop.next = self.issue.val() & ((self.j.q.val() + self.one5.val()) == self.cur_n.val());
        if self.issue.val() {
            if self.pop.val() {
                self.j.d.next = self.zero5.val();
                if self.head.q.val() == self.two2.val() {
                    self.head.d.next = self.zero2.val();
                } else {
                    self.head.d.next = self.head.q.val() + self.one2.val();
                }
            } else {
                self.j.d.next = self.j.q.val() + self.one5.val();
            }
        }
        self.o_valid.d.next = self.issue.val() & !self.reset.val();
        for k in 0..HW_PER_HOP {
            self.o_hw[k].d.next = self.cur_hw[k].val();
        }
        self.o_key.d.next = self.cur_key.val();
        self.o_bank.d.next = self.cur_bank.val();
        self.o_epoch.d.next = self.cur_epoch.val();
        self.o_last.d.next = self.pop.val();

        // ---- Store the descriptor's record at the tail (`head + count` mod 3). With the ring
        // full it still fits when the head's last hop leaves this clock: the tail is then
        // the head's slot, read this clock and written at its end.
        self.tail.next = self.head.q.val();
        for h in 0..SLOTS {
            for c in 0..SLOTS {
                if (self.head.q.val() == self.slot_c[h].val()) & (self.count.q.val() == self.slot_c[c].val())
                {
                    self.tail.next = self.slot_c[(h + c) % 3].val();
                }
            }
        }
        self.room.next = (self.count.q.val() != self.slot_c[2].val() + self.one2.val()) | self.pop.val();
        if self.push.val() & self.room.val() {
            for e in 0..SLOTS {
                if self.tail.val() == self.slot_c[e].val() {
                    self.s_n[e].d.next = self.d_hops.val();
                    self.s_key[e].d.next = self.d_key.val();
                    self.s_bank[e].d.next = self.d_bank.val();
                    self.s_epoch[e].d.next = self.d_epoch.val();
                    for k in 0..REC_HW {
                        self.s_hw[e * 48 + k].d.next = self.rec[k].val();
                    }
                }
            }
            if !self.pop.val() {
                self.count.d.next = self.count.q.val() + self.one2.val();
            }
        } else {
            if self.push.val() {
                self.n_lost.d.next = self.n_lost.q.val() + self.one32.val();
            }
            if self.pop.val() {
                self.count.d.next = self.count.q.val() - self.one2.val();
            }
        }

        if self.reset.val() {
            self.head.d.next = self.zero2.val();
            self.count.d.next = self.zero2.val();
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
        self.idle.next = (self.count.q.val() == self.zero2.val()) & !self.o_valid.q.val();
    }
}
