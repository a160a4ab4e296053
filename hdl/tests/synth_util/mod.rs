//! Shared by the `*_synth` tests: Yosys figures are deterministic for a given netlist, so a
//! test pins each block's LUT and FF counts near what was measured. A change of more than
//! [`TOLERANCE_PCT`] is a change of the design (or of Yosys; measured with 0.23) that someone should look at and
//! then record as the new measurement.

use smartnic_hdl::synth::SynthReport;

/// How far (percent of the measured figure) a LUT or FF count may move before the test fails.
pub const TOLERANCE_PCT: f64 = 3.0;

/// Asserts `got` is within [`TOLERANCE_PCT`] of `measured`; `what` names the figure.
pub fn assert_near(what: &str, got: u64, measured: u64, r: &SynthReport) {
    let slack = (measured as f64 * TOLERANCE_PCT / 100.0).ceil() as u64;
    assert!(
        got.abs_diff(measured) <= slack,
        "{what} = {got}, measured {measured} (± {TOLERANCE_PCT} % = ± {slack}); if the design changed on purpose, \
         record the new figure: {r:?}"
    );
}

/// [`assert_near`] for the report's LUT and FF counts.
pub fn assert_logic(r: &SynthReport, lut: u64, ff: u64) {
    assert_near("LUT", r.lut, lut, r);
    assert_near("FF", r.ff, ff, r);
}
