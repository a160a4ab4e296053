//! `TimeRmw<TW, A>`: the read-modify-write datapath of one SuMax array's two max cells
//! (LightGuardian 4.4), without the RAMs: [`super::sumax_time::TimeCells`] puts it behind
//! one RAM per cell and bank (one bank, or two for the epoch scheme).
//! Same stages and the same [`ForwardTrack`] as the counter arrays; both cells share it.
//!
//! # Update rule (`host::sketch::sumax::SuMax::insert_at`)
//!
//! With `prev` the last-arrival cell and `iv` the interval cell before the update and `t` the
//! packet's time (already `time_of`-converted, `TW` bits):
//!
//! - `gap = 0` if `prev == 0` (no packet yet), else `d = (t - prev) mod 2^TW` if
//!   `d < 2^(TW-1)`, else 0 (time went backwards): the contract's `interval::gap`;
//! - `iv' = max(iv, gap)`; `last' = t` (assigned, never a marker: time cells have none).
//!
//! # Pipeline (a packet entering at cycle `s0`)
//!
//! | cycle | stage | what |
//! |---|---|---|
//! | s0 | `valid`, `bank`, `addr` | the caller's RAMs read the bucket |
//! | s1 | compare | `last_q`/`iv_q` = the RAM outputs of the packet's bank (`s1_bank`); forwarding compare |
//! | s2 | compute | `prev`/`iv` = forwarded or RAM (registered); `t` is read here; result to `wr` |
//! | s3 | wr | `wr_*` drive both cells' write ports |
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset of the valid bits |
//! | `valid`, `bank`, `addr` | in | 1, 1, `A` | a packet's bank and bucket (s0) |
//! | `s1_bank` | out | 1 | bank of the packet at s1: selects the RAM outputs |
//! | `last_q`, `iv_q` | in | `TW` | the RAM outputs for the packet at s1 |
//! | `rd_last`, `rd_iv` | out | `TW` | `last_q`, `iv_q` one clock later (whatever the ports read) |
//! | `t` | in | `TW` | the packet's time, at s2 |
//! | `wr_valid`, `wr_bank`, `wr_addr`, `wr_last`, `wr_iv` | out | 1, 1, `A`, `TW`, `TW` | the write-back of the packet in `wr` |
use super::forward_track::ForwardTrack;
use super::BitSink;
use rust_hdl::prelude::*;

/// The RMW datapath of one array's max cells (see the module docs).
#[derive(LogicBlock)]
pub struct TimeRmw<const TW: usize, const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub valid: Signal<In, Bit>,
    pub bank: Signal<In, Bit>,
    pub addr: Signal<In, Bits<A>>,
    pub s1_bank: Signal<Out, Bit>,
    pub last_q: Signal<In, Bits<TW>>,
    pub iv_q: Signal<In, Bits<TW>>,
    pub rd_last: Signal<Out, Bits<TW>>,
    pub rd_iv: Signal<Out, Bits<TW>>,
    pub t: Signal<In, Bits<TW>>,
    pub wr_valid: Signal<Out, Bit>,
    pub wr_bank: Signal<Out, Bit>,
    pub wr_addr: Signal<Out, Bits<A>>,
    pub wr_last: Signal<Out, Bits<TW>>,
    pub wr_iv: Signal<Out, Bits<TW>>,
    track: ForwardTrack<A>,
    // Nobody waits for the time cells alone: the sum lanes report `busy`.
    sink_busy: BitSink,
    rdq_last: DFF<Bits<TW>>,
    rdq_iv: DFF<Bits<TW>>,
    prev: Signal<Local, Bits<TW>>,
    iv: Signal<Local, Bits<TW>>,
    diff: Signal<Local, Bits<TW>>,
    gap: Signal<Local, Bits<TW>>,
    w_last: DFF<Bits<TW>>,
    w_iv: DFF<Bits<TW>>,
    d1_last: DFF<Bits<TW>>,
    d1_iv: DFF<Bits<TW>>,
    d2_last: DFF<Bits<TW>>,
    d2_iv: DFF<Bits<TW>>,
    zero: Constant<Bits<TW>>,
    /// `2^(TW-1)`: a difference this large or larger is a backwards step.
    half: Constant<Bits<TW>>,
}

impl<const TW: usize, const A: usize> TimeRmw<TW, A> {
    pub fn new() -> Self {
        assert!((1..=32).contains(&TW), "time width TW={TW} must be 1..=32");
        assert!((1..=24).contains(&A), "address width A={A} must be 1..=24");
        TimeRmw {
            clock: Default::default(),
            reset: Default::default(),
            valid: Default::default(),
            bank: Default::default(),
            addr: Default::default(),
            s1_bank: Default::default(),
            last_q: Default::default(),
            iv_q: Default::default(),
            rd_last: Default::default(),
            rd_iv: Default::default(),
            t: Default::default(),
            wr_valid: Default::default(),
            wr_bank: Default::default(),
            wr_addr: Default::default(),
            wr_last: Default::default(),
            wr_iv: Default::default(),
            track: Default::default(),
            sink_busy: Default::default(),
            rdq_last: Default::default(),
            rdq_iv: Default::default(),
            prev: Default::default(),
            iv: Default::default(),
            diff: Default::default(),
            gap: Default::default(),
            w_last: Default::default(),
            w_iv: Default::default(),
            d1_last: Default::default(),
            d1_iv: Default::default(),
            d2_last: Default::default(),
            d2_iv: Default::default(),
            zero: Constant::new(0u64.to_bits()),
            half: Constant::new((1u64 << (TW - 1)).to_bits()),
        }
    }
}

impl<const TW: usize, const A: usize> Default for TimeRmw<TW, A> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const TW: usize, const A: usize> Logic for TimeRmw<TW, A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, rdq_last, rdq_iv, w_last, w_iv, d1_last, d1_iv, d2_last, d2_iv);
        self.track.clock.next = self.clock.val();
        self.track.reset.next = self.reset.val();
        self.track.valid.next = self.valid.val();
        self.track.bank.next = self.bank.val();
        self.track.addr.next = self.addr.val();
        self.sink_busy.x.next = self.track.busy.val();
        // s1: the RAM outputs, registered.
        self.rdq_last.d.next = self.last_q.val();
        self.rdq_iv.d.next = self.iv_q.val();
        // s2: the bucket's current cells, then the max rule.
        if self.track.sel1.val() {
            if self.track.sel0.val() {
                self.prev.next = self.d2_last.q.val();
                self.iv.next = self.d2_iv.q.val();
            } else {
                self.prev.next = self.d1_last.q.val();
                self.iv.next = self.d1_iv.q.val();
            }
        } else if self.track.sel0.val() {
            self.prev.next = self.w_last.q.val();
            self.iv.next = self.w_iv.q.val();
        } else {
            self.prev.next = self.rdq_last.q.val();
            self.iv.next = self.rdq_iv.q.val();
        }
        self.diff.next = self.t.val() - self.prev.val();
        if (self.prev.val() != self.zero.val()) & (self.diff.val() < self.half.val()) {
            self.gap.next = self.diff.val();
        } else {
            self.gap.next = self.zero.val();
        }
        if self.gap.val() > self.iv.val() {
            self.w_iv.d.next = self.gap.val();
        } else {
            self.w_iv.d.next = self.iv.val();
        }
        self.w_last.d.next = self.t.val();
        // s3: the write-back; keep the last three writes for forwarding.
        self.d1_last.d.next = self.w_last.q.val();
        self.d1_iv.d.next = self.w_iv.q.val();
        self.d2_last.d.next = self.d1_last.q.val();
        self.d2_iv.d.next = self.d1_iv.q.val();
        // Outputs.
        self.s1_bank.next = self.track.s1_bank.val();
        self.rd_last.next = self.rdq_last.q.val();
        self.rd_iv.next = self.rdq_iv.q.val();
        self.wr_valid.next = self.track.wr_valid.val();
        self.wr_bank.next = self.track.wr_bank.val();
        self.wr_addr.next = self.track.wr_addr.val();
        self.wr_last.next = self.w_last.q.val();
        self.wr_iv.next = self.w_iv.q.val();
    }
}
