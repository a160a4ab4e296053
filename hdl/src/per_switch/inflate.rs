//! `InflateCheck`: the inflated-latency rule of the contract (`per_switch::InflateRule`) in
//! the log domain, one hop a clock, bit-exact with `InflateRule::inflated`: a hop of `units`
//! over a (flow, switch) pair whose estimates before it are `count` and `sum` is inflated
//! when `log2_fx(units) + log2_fx(count) > log2_fx(sum) + threshold`. No divider and no
//! multiplier: three LUT log2 units ([`crate::arith::log2`], the contract's table) and two
//! adders.
//!
//! Edge rules (the contract's): an overflowed field (`count_inf`, `sum_inf`), a count of 0
//! or a hop of 0 units is never inflated; a positive hop over a sum of 0 always is.
//!
//! # Pipeline ([`LATENCY`] = 6)
//!
//! | cycle | what |
//! |---|---|
//! | 0 | `valid`, `units`, `count`, `sum` (and their flags) enter the three log2 units |
//! | 4 | the logs are out; the flags have travelled beside them |
//! | 5 | `lhs = log(units) + log(count)`, `rhs = log(sum) + threshold` and the verdict's flags registered |
//! | 6 | `hit` registered |
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | synchronous reset of the valid pipeline |
//! | `valid` | in | 1 | a hop |
//! | `units` | in | 32 | the hop's latency in units (`LatencyTowerGeometry::units`) |
//! | `count_inf`, `count` | in | 1, 32 | the pair's count estimate before the hop (`count_inf`: every cell overflowed) |
//! | `sum_inf`, `sum` | in | 1, 32 | the pair's sum estimate before the hop |
//! | `threshold` | in | 22 | `InflateRule::threshold` (a register; constant between epochs) |
//! | `done`, `hit` | out | 1, 1 | [`LATENCY`] clocks after `valid`: the hop's verdict |
use crate::arith::log2::{self, Log2Unit};
use crate::arith::Widen;
use rust_hdl::prelude::*;
use smartnic_contract::lut::Log2Params;

/// Clocks from `valid` to `done`/`hit`.
pub const LATENCY: usize = log2::LATENCY + 2;
/// Width of a log2 value (the contract's default: 16 fraction bits, 6 integer bits).
pub const LOG_BITS: usize = 22;
/// Width of a sum of two logs.
const SUM_BITS: usize = LOG_BITS + 1;
const _: () = assert!(LOG_BITS == Log2Params::DEFAULT.frac as usize + 6);

/// The contract's log2 unit over 32-bit operands.
type Log2x32 = Log2Unit<32, 10, 16, LOG_BITS, 11>;

/// The inflated-latency check (see the module docs).
#[derive(LogicBlock, Default)]
pub struct InflateCheck {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub valid: Signal<In, Bit>,
    pub units: Signal<In, Bits<32>>,
    pub count_inf: Signal<In, Bit>,
    pub count: Signal<In, Bits<32>>,
    pub sum_inf: Signal<In, Bit>,
    pub sum: Signal<In, Bits<32>>,
    pub threshold: Signal<In, Bits<LOG_BITS>>,
    pub done: Signal<Out, Bit>,
    pub hit: Signal<Out, Bit>,
    lu: Log2x32,
    lc: Log2x32,
    ls: Log2x32,
    /// Either field overflowed, beside the logs (tap `i` = `i + 1` clocks after entry).
    inf: [DFF<Bit>; log2::LATENCY],
    wu: Widen<SUM_BITS, LOG_BITS>,
    wc: Widen<SUM_BITS, LOG_BITS>,
    ws: Widen<SUM_BITS, LOG_BITS>,
    wt: Widen<SUM_BITS, LOG_BITS>,
    r_valid: DFF<Bit>,
    /// Never inflated (a field overflowed, count 0, hop 0).
    r_never: DFF<Bit>,
    /// Always inflated (a positive hop over a sum of 0).
    r_always: DFF<Bit>,
    r_lhs: DFF<Bits<SUM_BITS>>,
    r_rhs: DFF<Bits<SUM_BITS>>,
    o_valid: DFF<Bit>,
    o_hit: DFF<Bit>,
    /// The three logs are out (each unit's `valid | zero`; they run in lockstep).
    out: Signal<Local, Bit>,
}

impl Logic for InflateCheck {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, r_valid, r_never, r_always, r_lhs, r_rhs, o_valid, o_hit);
        for i in 0..log2::LATENCY {
            self.inf[i].clock.next = self.clock.val();
        }
        self.lu.clock.next = self.clock.val();
        self.lc.clock.next = self.clock.val();
        self.ls.clock.next = self.clock.val();
        self.lu.reset.next = self.reset.val();
        self.lc.reset.next = self.reset.val();
        self.ls.reset.next = self.reset.val();
        self.lu.x.next = self.units.val();
        self.lc.x.next = self.count.val();
        self.ls.x.next = self.sum.val();
        self.lu.x_valid.next = self.valid.val();
        self.lc.x_valid.next = self.valid.val();
        self.ls.x_valid.next = self.valid.val();
        self.inf[0].d.next = self.count_inf.val() | self.sum_inf.val();
        for i in 1..log2::LATENCY {
            self.inf[i].d.next = self.inf[i - 1].q.val();
        }
        // Cycle 4 -> 5: the two sides and the edge verdicts.
        self.out.next = (self.ls.valid.val() | self.ls.zero.val())
            & (self.lu.valid.val() | self.lu.zero.val())
            & (self.lc.valid.val() | self.lc.zero.val());
        self.wu.x.next = self.lu.value.val();
        self.wc.x.next = self.lc.value.val();
        self.ws.x.next = self.ls.value.val();
        self.wt.x.next = self.threshold.val();
        self.r_valid.d.next = self.out.val() & !self.reset.val();
        // rust-hdl workaround: `#[hdl_gen]` reads an array index from its text with only
        // loop variables known, so the last tap `inf[LATENCY - 1]` is read in a one-pass loop.
        for i in (log2::LATENCY - 1)..log2::LATENCY {
            self.r_never.d.next = self.inf[i].q.val() | self.lc.zero.val() | self.lu.zero.val();
        }
        self.r_always.d.next = self.ls.zero.val();
        self.r_lhs.d.next = self.wu.y.val() + self.wc.y.val();
        self.r_rhs.d.next = self.ws.y.val() + self.wt.y.val();
        // Cycle 5 -> 6: the verdict.
        self.o_valid.d.next = self.r_valid.q.val() & !self.reset.val();
        self.o_hit.d.next = self.r_valid.q.val()
            & !self.r_never.q.val()
            & (self.r_always.q.val() | (self.r_lhs.q.val() > self.r_rhs.q.val()));
        self.done.next = self.o_valid.q.val();
        self.hit.next = self.o_hit.q.val();
    }
}
