//! `AxisUpsize`: a 64-bit AXI-Stream into the 256-bit one of XDMA's card-to-host channels
//! (PG195: 256 bits at 250 MHz for Gen3 x8). Four words make a beat, the first in bits
//! 63:0; a word with `tlast` ends its beat early, with `tkeep` covering only the words it
//! holds (8 bytes each). No word is lost or reordered, and one word a clock goes through
//! while the channel takes a beat every fourth clock.
//!
//! # How
//! Words wait in three lanes (`lane0..2`, `count` of them full). A word that fills the
//! fourth lane, or carries `tlast`, makes the beat: the lanes and the word go into the
//! output register with their `tkeep` and `tlast`, and the lanes start again. A word is
//! taken (`s_tready`) whenever the output register is empty or leaving this clock, so a
//! beat never waits for room.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | the channel's clock; reset empties the lanes and the output |
//! | `s_tdata`, `s_tvalid`, `s_tlast`, `s_tready` | | 64, 1, 1, 1 | the 64-bit stream in |
//! | `m_tdata`, `m_tkeep`, `m_tvalid`, `m_tlast`, `m_tready` | | 256, 32, 1, 1, 1 | the 256-bit stream out |
use crate::arith::Widen;
use crate::parser::konst;
use rust_hdl::prelude::*;

/// The upsizer (see the module docs).
#[derive(LogicBlock)]
pub struct AxisUpsize {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_tdata: Signal<In, Bits<64>>,
    pub s_tvalid: Signal<In, Bit>,
    pub s_tlast: Signal<In, Bit>,
    pub s_tready: Signal<Out, Bit>,
    pub m_tdata: Signal<Out, Bits<256>>,
    pub m_tkeep: Signal<Out, Bits<32>>,
    pub m_tvalid: Signal<Out, Bit>,
    pub m_tlast: Signal<Out, Bit>,
    pub m_tready: Signal<In, Bit>,
    lane: [DFF<Bits<64>>; 3],
    count: DFF<Bits<2>>,
    o_word: [DFF<Bits<64>>; 4],
    o_keep: DFF<Bits<32>>,
    o_valid: DFF<Bit>,
    o_last: DFF<Bit>,
    take: Signal<Local, Bit>,
    w_word: [Widen<256, 64>; 4],
    word_at: [Constant<Bits<9>>; 4],
    count_c: [Constant<Bits<2>>; 4],
    keep_c: [Constant<Bits<32>>; 4],
    zero64: Constant<Bits<64>>,
    one2: Constant<Bits<2>>,
}

impl Default for AxisUpsize {
    fn default() -> Self {
        AxisUpsize {
            clock: Default::default(),
            reset: Default::default(),
            s_tdata: Default::default(),
            s_tvalid: Default::default(),
            s_tlast: Default::default(),
            s_tready: Default::default(),
            m_tdata: Default::default(),
            m_tkeep: Default::default(),
            m_tvalid: Default::default(),
            m_tlast: Default::default(),
            m_tready: Default::default(),
            lane: Default::default(),
            count: Default::default(),
            o_word: Default::default(),
            o_keep: Default::default(),
            o_valid: Default::default(),
            o_last: Default::default(),
            take: Default::default(),
            w_word: Default::default(),
            word_at: std::array::from_fn(|k| konst!(64 * k)),
            count_c: std::array::from_fn(|k| konst!(k)),
            // A beat of k + 1 words keeps 8 (k + 1) bytes.
            keep_c: std::array::from_fn(|k| konst!((1u64 << (8 * (k + 1))) - 1)),
            zero64: konst!(0),
            one2: konst!(1),
        }
    }
}

impl Logic for AxisUpsize {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, count, o_keep, o_valid, o_last);
        for k in 0..3 {
            self.lane[k].clock.next = self.clock.val();
            self.lane[k].d.next = self.lane[k].q.val();
        }
        for k in 0..4 {
            self.o_word[k].clock.next = self.clock.val();
            self.o_word[k].d.next = self.o_word[k].q.val();
        }
        // A word is taken when the output register is empty or leaving.
        self.s_tready.next = !self.o_valid.q.val() | self.m_tready.val();
        self.take.next = self.s_tvalid.val() & (!self.o_valid.q.val() | self.m_tready.val());
        if self.o_valid.q.val() & self.m_tready.val() {
            self.o_valid.d.next = false;
        }
        if self.take.val() {
            if self.s_tlast.val() | (self.count.q.val() == self.count_c[3].val()) {
                // The beat: the full lanes, the word in the next, nothing after it.
                for k in 0..4 {
                    self.o_word[k].d.next = self.zero64.val();
                }
                for k in 0..3 {
                    if self.count.q.val() > self.count_c[k].val() {
                        self.o_word[k].d.next = self.lane[k].q.val();
                    }
                }
                for c in 0..4 {
                    if self.count.q.val() == self.count_c[c].val() {
                        self.o_word[c].d.next = self.s_tdata.val();
                        self.o_keep.d.next = self.keep_c[c].val();
                    }
                }
                self.o_last.d.next = self.s_tlast.val();
                self.o_valid.d.next = true;
                self.count.d.next = self.count_c[0].val();
            } else {
                for c in 0..3 {
                    if self.count.q.val() == self.count_c[c].val() {
                        self.lane[c].d.next = self.s_tdata.val();
                    }
                }
                self.count.d.next = self.count.q.val() + self.one2.val();
            }
        }
        if self.reset.val() {
            self.count.d.next = self.count_c[0].val();
            self.o_valid.d.next = false;
        }
        for k in 0..4 {
            self.w_word[k].x.next = self.o_word[k].q.val();
        }
        self.m_tdata.next = (self.w_word[0].y.val() << self.word_at[0].val())
            | (self.w_word[1].y.val() << self.word_at[1].val())
            | (self.w_word[2].y.val() << self.word_at[2].val())
            | (self.w_word[3].y.val() << self.word_at[3].val());
        self.m_tkeep.next = self.o_keep.q.val();
        self.m_tvalid.next = self.o_valid.q.val();
        self.m_tlast.next = self.o_last.q.val();
    }
}
