//! `NsClock`: the time in ns that the board's four ports stamp their frames with (the
//! parsers' `now`), counted at the 10G MACs' clock. The four MACs' receive streams share
//! one clock on this board (the 10G subsystem's `coreclk_out`, 156.25 MHz), so one counter
//! serves them all and the four ports' timestamps are comparable to the nanosecond.
//!
//! A clock of 6.4 ns is not a whole number of ns, so the counter adds 6 or 7 ns a clock in
//! a fixed pattern of [`STEPS`] clocks ([`steps`]: 6, 6, 7, 6, 7) that adds up to exactly
//! 32 ns: the count never drifts from true time by more than a ns.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | the MACs' clock; reset restarts the time at 0 |
//! | `now` | out | 64 | ns since reset |
use crate::parser::konst;
use rust_hdl::prelude::*;

/// Clocks in the step pattern.
pub const STEPS: usize = 5;
/// The MACs' clock period in ps (156.25 MHz).
pub const MAC_CLOCK_PS: u64 = 6_400;

/// The ns added at each clock of the pattern: clock `k` adds the whole ns between
/// `k x period` and `(k + 1) x period`, so `STEPS` clocks add `STEPS x period` exactly.
pub fn steps() -> [u64; STEPS] {
    assert_eq!(STEPS as u64 * MAC_CLOCK_PS % 1000, 0, "the pattern must end on a whole ns");
    std::array::from_fn(|k| ((k as u64 + 1) * MAC_CLOCK_PS) / 1000 - (k as u64 * MAC_CLOCK_PS) / 1000)
}

// The literal index of `update` (the pattern's last clock).
const _: () = assert!(STEPS == 5);

/// The counter (see the module docs).
#[derive(LogicBlock)]
pub struct NsClock {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub now: Signal<Out, Bits<64>>,
    ns: DFF<Bits<64>>,
    phase: DFF<Bits<3>>,
    step: [Constant<Bits<64>>; STEPS],
    phase_c: [Constant<Bits<3>>; STEPS],
    zero64: Constant<Bits<64>>,
    one3: Constant<Bits<3>>,
}

impl Default for NsClock {
    fn default() -> Self {
        let s = steps();
        NsClock {
            clock: Default::default(),
            reset: Default::default(),
            now: Default::default(),
            ns: Default::default(),
            phase: Default::default(),
            step: std::array::from_fn(|k| konst!(s[k])),
            phase_c: std::array::from_fn(|k| konst!(k)),
            zero64: konst!(0),
            one3: konst!(1),
        }
    }
}

impl Logic for NsClock {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, ns, phase);
        for k in 0..STEPS {
            if self.phase.q.val() == self.phase_c[k].val() {
                self.ns.d.next = self.ns.q.val() + self.step[k].val();
            }
        }
        if self.phase.q.val() == self.phase_c[4].val() {
            self.phase.d.next = self.phase_c[0].val();
        } else {
            self.phase.d.next = self.phase.q.val() + self.one3.val();
        }
        if self.reset.val() {
            self.ns.d.next = self.zero64.val();
            self.phase.d.next = self.phase_c[0].val();
        }
        self.now.next = self.ns.q.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pattern_adds_up_to_the_period() {
        assert_eq!(steps(), [6, 6, 7, 6, 7]);
        assert_eq!(steps().iter().sum::<u64>() * 1000, STEPS as u64 * MAC_CLOCK_PS);
    }
}
