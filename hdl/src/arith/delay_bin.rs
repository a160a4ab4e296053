//! `delay_bin`: SuMax's log-spaced delay bins, bit-exact with `lut::delay_bin`.
//!
//! `bin = 0` if `delay < base_ns`, else `min(cells - 1, 1 + ((bins_per_octave *
//! (log2_fx(delay) - log2_fx(base))) >> frac))`: a [`Log2Unit`] (whose `x = 0` result is
//! `log2_fx(1)`, so a zero delay is measured as 1), minus the constant `log2_fx(max(base,
//! 1))` (computed in [`DelayBin::new`] with the contract function), times `bins_per_octave`
//! ([`ConstMul`]), shifted right by `frac`, plus one, clamped to `cells - 1`. The
//! comparison `delay < base` is made on the delay itself (the log2 is not injective) and
//! travels with the operation. `cells <= 1` gives bin 0 (the clamp is to 0).
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset of the valid pipeline |
//! | `delay`, `delay_valid` | in | `W`, 1 | a delay in ns |
//! | `bin`, `valid` | out | 8, 1 | its bin, [`LATENCY`] clocks later |
//!
//! Pipeline ([`LATENCY`] = 7): log2 (4), `bins_per_octave * (ld - lb)` (2), shift, +1 and
//! clamp (1). Parameters: `W` (delay width, const generic), the [`DelayBinRule`] and
//! `cells` in [`DelayBin::new`]; log2 with the default `q = 10`, `frac = 16`.
use super::constmul::{self, ConstMul};
use super::log2::{self, Log2Unit};
use rust_hdl::prelude::*;
use smartnic_contract::geometry::{DelayBinRule, SuMaxGeometry};
use smartnic_contract::lut::{log2_fx, log2_table, Log2Params};

pub const LATENCY: usize = log2::LATENCY + constmul::LATENCY + 1;

#[derive(LogicBlock)]
pub struct DelayBin<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub delay: Signal<In, Bits<W>>,
    pub delay_valid: Signal<In, Bit>,
    pub bin: Signal<Out, Bits<8>>,
    pub valid: Signal<Out, Bit>,
    log: Log2Unit<W, 10, 16, 22, 11>,
    below: [DFF<Bit>; 6],
    ok: [DFF<Bit>; 2],
    kmul: ConstMul<22, 32>,
    steps: Signal<Local, Bits<32>>,
    b7: DFF<Bits<8>>,
    ok7: DFF<Bit>,
    base: Constant<Bits<W>>,
    lb: Constant<Bits<22>>,
    frac_sh: Constant<Bits<8>>,
    cm1: Constant<Bits<32>>,
    one: Constant<Bits<32>>,
    zero8: Constant<Bits<8>>,
}

impl<const W: usize> DelayBin<W> {
    pub fn new(rule: &DelayBinRule, cells: u8) -> Self {
        let p = Log2Params::DEFAULT;
        assert!(
            (1..=64).contains(&W) && (W == 64 || (rule.base_ns as u64) < 1u64 << W),
            "base does not fit W bits"
        );
        let lb = log2_fx(&log2_table(p), p, (rule.base_ns as u64).max(1)).unwrap_or(0);
        let cm1 = cells.max(1) as u64 - 1;
        DelayBin {
            clock: Default::default(),
            reset: Default::default(),
            delay: Default::default(),
            delay_valid: Default::default(),
            bin: Default::default(),
            valid: Default::default(),
            log: Log2Unit::new(),
            below: Default::default(),
            ok: Default::default(),
            kmul: ConstMul::new(rule.bins_per_octave as u32),
            steps: Default::default(),
            b7: Default::default(),
            ok7: Default::default(),
            base: Constant::new((rule.base_ns as u64).to_bits()),
            lb: Constant::new((lb as u64).to_bits()),
            frac_sh: Constant::new((p.frac as u64).to_bits()),
            cm1: Constant::new(cm1.to_bits()),
            one: Constant::new(1u64.to_bits()),
            zero8: Constant::new(0u64.to_bits()),
        }
    }
}

impl<const W: usize> Logic for DelayBin<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, b7, ok7);
        clock!(self, clock, log, kmul);
        for i in 0..6 {
            self.below[i].clock.next = self.clock.val();
        }
        for i in 0..2 {
            self.ok[i].clock.next = self.clock.val();
        }
        // Stages 1-4: log2 of the delay; delay < base alongside.
        self.log.reset.next = self.reset.val();
        self.log.x.next = self.delay.val();
        self.log.x_valid.next = self.delay_valid.val();
        self.below[0].d.next = self.delay.val() < self.base.val();
        for i in 1..6 {
            self.below[i].d.next = self.below[i - 1].q.val();
        }
        // Stages 5-6: bins_per_octave * (log2 delay - log2 base) (>= 0 unless below).
        self.kmul.a.next = self.log.value.val() - self.lb.val();
        self.ok[0].d.next = (self.log.valid.val() | self.log.zero.val()) & !self.reset.val();
        self.ok[1].d.next = self.ok[0].q.val() & !self.reset.val();
        // Stage 7: shift, +1, clamp.
        self.steps.next = (self.kmul.p.val() >> self.frac_sh.val()) + self.one.val();
        if self.below[5].q.val() {
            self.b7.d.next = self.zero8.val();
        } else if self.steps.val() > self.cm1.val() {
            self.b7.d.next = self.cm1.val().get_bits::<8>(0);
        } else {
            self.b7.d.next = self.steps.val().get_bits::<8>(0);
        }
        self.ok7.d.next = self.ok[1].q.val() & !self.reset.val();
        self.bin.next = self.b7.q.val();
        self.valid.next = self.ok7.q.val();
    }
}

/// The registered unit: 32-bit delays, the NIC's SuMax rule (octave bins from 1 us).
pub type DelayBin32 = DelayBin<32>;

/// The NIC's rule and cell count: `SuMaxGeometry::nic_default()`.
pub fn nic_rule() -> (DelayBinRule, u8) {
    let g = SuMaxGeometry::nic_default();
    (g.delay_bins, g.delay_cells)
}

/// The registered delay-bin unit.
pub fn delay_bin32() -> DelayBin32 {
    let (rule, cells) = nic_rule();
    DelayBin32::new(&rule, cells)
}
