//! `HopCapture`: a frame's INT hop records, captured as its beats pass and handed out, whole,
//! in the clock of the frame's descriptor. The capture half of
//! [`HopSerializer`](super::hop_serializer::HopSerializer), and what each port of the board
//! front ([`crate::board::port_front`]) sends with its descriptor.
//!
//! # Why two buffers
//! The hops of a frame arrive before its descriptor (the parser decides two clocks after
//! the last beat, [`crate::parser::LATENCY`]), and the next frame's beats start in the clock
//! after that last beat. Frame bytes 16..127 are written into one of two buffers (`wsel`
//! toggles at every last beat) and read from the other side (`rsel` toggles at every
//! descriptor: the parser gives exactly one per frame, in order). The next frame only
//! reaches its first captured beat (beat 2) two clocks after its own first beat, so a buffer
//! is never overwritten before its descriptor has read it, even behind a 1-beat runt.
//!
//! # Datapath
//! - **Capture**: halfword `h` of a buffer is frame bytes `16 + 2h`, `17 + 2h` (beat
//!   `2 + h / 4`, bits `16 (h % 4)` of `tdata`), stored big-endian; frame bytes 16..127 hold
//!   the hop records of a 16-hop stack behind two VLAN tags (they end at byte 123).
//! - **Extract** (combinational, the descriptor's clock): the shim sits at byte
//!   `s = 14 + 4 d_sc`, so hop `j` is halfwords `(s - 10) / 2 + 3j + {0, 1, 2}` of the
//!   frame's buffer: switch ID, latency high, latency low.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | synchronous reset of the beat counter and both buffer selects |
//! | `tdata`, `tvalid`, `tlast` | in | 64, 1, 1 | the AXI-Stream beats the parser sees (`tdata[7:0]` first on the wire) |
//! | `d_valid`, `d_sc` | in | 1, 2 | the parser's descriptor and its shim position code |
//! | `rec` | out | 768 | the descriptor's 16 hops as 48 halfwords, halfword `k` in bits `16k + 15 : 16k`: hop `j` = halfwords `3j`, `3j + 1`, `3j + 2` (switch ID, latency 31:16, latency 15:0); hops at or past the hop count are stale capture |
use crate::arith::Widen;
use crate::parser::konst;
use rust_hdl::prelude::*;
use smartnic_contract::shim::MAX_HOPS;

/// Hops a record holds.
pub const HOPS: usize = MAX_HOPS as usize;
/// Halfwords per hop record (switch ID, latency high, latency low).
pub const HW_PER_HOP: usize = 3;
/// Halfwords of a record's hops.
pub const REC_HW: usize = HOPS * HW_PER_HOP;
/// Width of a record's hops packed side by side (halfword `k` in bits `16k + 15 : 16k`).
pub const REC_BITS: usize = 16 * REC_HW;
/// First frame byte captured (the hop area starts at byte 20 at the earliest).
const FIRST_BYTE: usize = 16;
/// Halfwords captured per frame: frame bytes 16..128.
const CAP_HW: usize = 56;

// The shim positions the parser reports (`sc` = 0, 1, 2 for 0, 1, 2 VLAN tags) put hop `j`
// at halfword `(s - 10) / 2 + 3 j` of the capture; the last of a full stack must fit.
const _: () = assert!((22 - 10) / 2 + REC_HW <= CAP_HW && (FIRST_BYTE + 2 * CAP_HW) == 128);
// The literal indices of `update`.
const _: () = assert!(REC_HW == 48 && HW_PER_HOP == 3);

/// The hop capture (see the module docs).
#[derive(LogicBlock)]
pub struct HopCapture {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub tdata: Signal<In, Bits<64>>,
    pub tvalid: Signal<In, Bit>,
    pub tlast: Signal<In, Bit>,
    pub d_valid: Signal<In, Bit>,
    pub d_sc: Signal<In, Bits<2>>,
    pub rec: Signal<Out, Bits<REC_BITS>>,
    t: DFF<Bits<5>>,
    wsel: DFF<Bit>,
    rsel: DFF<Bit>,
    cap0: [DFF<Bits<16>>; CAP_HW],
    cap1: [DFF<Bits<16>>; CAP_HW],
    /// Beat indices 2..16 (the captured beats).
    beat: [Constant<Bits<5>>; 14],
    /// Bit offset of each 16-bit lane of `tdata`.
    lane: [Constant<Bits<6>>; 4],
    t_max: Constant<Bits<5>>,
    zero5: Constant<Bits<5>>,
    one5: Constant<Bits<5>>,
    sc1: Constant<Bits<2>>,
    sc2: Constant<Bits<2>>,
    eight: Constant<Bits<16>>,
    /// The extracted halfwords, each widened, placed at bit `16k` and ORed into `acc[k]`
    /// (`#[hdl_gen]` has no concatenation).
    hw: [Signal<Local, Bits<16>>; REC_HW],
    w_hw: [Widen<REC_BITS, 16>; REC_HW],
    acc: [Signal<Local, Bits<REC_BITS>>; REC_HW],
    hw_at: [Constant<Bits<10>>; REC_HW],
}

impl Default for HopCapture {
    fn default() -> Self {
        HopCapture {
            clock: Default::default(),
            reset: Default::default(),
            tdata: Default::default(),
            tvalid: Default::default(),
            tlast: Default::default(),
            d_valid: Default::default(),
            d_sc: Default::default(),
            rec: Default::default(),
            t: Default::default(),
            wsel: Default::default(),
            rsel: Default::default(),
            cap0: std::array::from_fn(|_| Default::default()),
            cap1: std::array::from_fn(|_| Default::default()),
            beat: std::array::from_fn(|i| konst!(i + 2)),
            lane: std::array::from_fn(|i| konst!(16 * i)),
            t_max: konst!(16),
            zero5: konst!(0),
            one5: konst!(1),
            sc1: konst!(1),
            sc2: konst!(2),
            eight: konst!(8),
            hw: std::array::from_fn(|_| Default::default()),
            w_hw: std::array::from_fn(|_| Default::default()),
            acc: std::array::from_fn(|_| Default::default()),
            hw_at: std::array::from_fn(|k| konst!(16 * k)),
        }
    }
}

impl Logic for HopCapture {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, t, wsel, rsel);
        for h in 0..CAP_HW {
            self.cap0[h].clock.next = self.clock.val();
            self.cap0[h].d.next = self.cap0[h].q.val();
            self.cap1[h].clock.next = self.clock.val();
            self.cap1[h].d.next = self.cap1[h].q.val();
        }
        // ---- Capture: halfword h of the buffer is frame bytes 16 + 2h, 17 + 2h, which sit
        // in beat 2 + h / 4 at bits 16 (h % 4) of `tdata`; stored big-endian.
        if self.tvalid.val() {
            if self.tlast.val() {
                self.t.d.next = self.zero5.val();
                self.wsel.d.next = !self.wsel.q.val();
            } else if self.t.q.val() != self.t_max.val() {
                self.t.d.next = self.t.q.val() + self.one5.val();
            }
            for h in 0..CAP_HW {
                if self.t.q.val() == self.beat[h / 4].val() {
                    if self.wsel.q.val() {
                        self.cap1[h].d.next =
                            (self.tdata.val().get_bits::<16>(self.lane[h % 4].val().index())
                                << self.eight.val())
                                | (self.tdata.val().get_bits::<16>(self.lane[h % 4].val().index())
                                    >> self.eight.val());
                    } else {
                        self.cap0[h].d.next =
                            (self.tdata.val().get_bits::<16>(self.lane[h % 4].val().index())
                                << self.eight.val())
                                | (self.tdata.val().get_bits::<16>(self.lane[h % 4].val().index())
                                    >> self.eight.val());
                    }
                }
            }
        }

        // ---- Extract the descriptor's hops from its frame's buffer.
        for k in 0..REC_HW {
            if self.rsel.q.val() {
                if self.d_sc.val() == self.sc2.val() {
                    self.hw[k].next = self.cap1[6 + k].q.val();
                } else if self.d_sc.val() == self.sc1.val() {
                    self.hw[k].next = self.cap1[4 + k].q.val();
                } else {
                    self.hw[k].next = self.cap1[2 + k].q.val();
                }
            } else if self.d_sc.val() == self.sc2.val() {
                self.hw[k].next = self.cap0[6 + k].q.val();
            } else if self.d_sc.val() == self.sc1.val() {
                self.hw[k].next = self.cap0[4 + k].q.val();
            } else {
                self.hw[k].next = self.cap0[2 + k].q.val();
            }
        }
        for k in 0..REC_HW {
            self.w_hw[k].x.next = self.hw[k].val();
        }
        self.acc[0].next = self.w_hw[0].y.val() << self.hw_at[0].val();
        for k in 1..REC_HW {
            self.acc[k].next = self.acc[k - 1].val() | (self.w_hw[k].y.val() << self.hw_at[k].val());
        }
        for k in (REC_HW - 1)..REC_HW {
            self.rec.next = self.acc[k].val();
        }
        if self.d_valid.val() {
            self.rsel.d.next = !self.rsel.q.val();
        }

        if self.reset.val() {
            self.t.d.next = self.zero5.val();
            self.wsel.d.next = false;
            self.rsel.d.next = false;
        }
    }
}
