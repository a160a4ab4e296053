//! Counter-cell rules shared by every sketch: the overflow marker and the running-minimum
//! (omega) update of LightGuardian's Algorithm 1.
//!
//! Values are handled as `u64` with the overflow marker `2^w - 1` read as [`INF`]: an
//! overflowed counter is +infinity, never changes, and queries skip it (SketchINT IV-B).

/// The value of an overflowed counter.
pub const INF: u64 = u64::MAX;

/// Value of a stored counter (`marker` reads as [`INF`]).
#[inline(always)]
pub fn value(stored: u32, marker: u32) -> u64 {
    if stored == marker {
        INF
    } else {
        stored as u64
    }
}

/// Stored form of a value: anything at or above the marker saturates to the marker.
#[inline(always)]
pub fn store(v: u64, marker: u32) -> u32 {
    if v >= marker as u64 {
        marker
    } else {
        v as u32
    }
}

/// Count-Min step: add `alpha` unless overflowed. Returns the new stored value, if any.
#[inline(always)]
pub fn cm_step(stored: u32, marker: u32, alpha: u64) -> Option<u32> {
    match value(stored, marker) {
        INF => None,
        v => Some(store(v + alpha, marker)),
    }
}

/// One array of the approximate conservative update (LightGuardian Algorithm 1):
/// - `cell + alpha < omega`: the cell becomes `cell + alpha`, and so does `omega`;
/// - else if `cell < omega`: the cell is raised to `omega`;
/// - else the cell is unchanged.
///
/// `omega` starts at [`INF`] for each packet. Overflowed cells never change.
#[inline(always)]
pub fn omega_step(stored: u32, marker: u32, alpha: u64, omega: &mut u64) -> Option<u32> {
    let v = value(stored, marker);
    if v == INF {
        return None;
    }
    let cand = store(v + alpha, marker);
    let cand_v = value(cand, marker);
    if cand_v < *omega {
        *omega = cand_v;
        Some(cand)
    } else if v < *omega {
        Some(store(*omega, marker))
    } else {
        None
    }
}

/// [`omega_step`] for `alpha = 1` without data-dependent branches, returning the new
/// stored value (the old one when unchanged). With `alpha = 1` the three cases fold into
/// one rule: a live cell below the running minimum becomes `cell + 1` (raising it to
/// `omega` gives the same value, since then `omega = cell + 1`, or the cell saturates to
/// its marker either way), and the minimum becomes `min(omega, value(cell + 1))`. The
/// batch kernels of the approximate CU and of SuMax's sum cells take this form: their
/// branches followed the counters and mispredicted on every skewed trace.
#[inline(always)]
pub fn unit_omega_step(stored: u32, marker: u32, omega: &mut u64) -> u32 {
    stored + unit_omega_grows(stored, marker, omega) as u32
}

/// [`unit_omega_step`] as whether the cell grows by one. A growing cell is below its
/// marker (an overflowed cell's value is infinite), so kernels add the one straight into
/// the packed word.
#[inline(always)]
pub fn unit_omega_grows(stored: u32, marker: u32, omega: &mut u64) -> bool {
    let grow = value(stored, marker) < *omega;
    let next = stored as u64 + 1;
    *omega = (*omega).min(if next >= marker as u64 { INF } else { next });
    grow
}

/// [`omega_step`] for any `alpha` without data-dependent branches, returning the new
/// stored value (the old one when unchanged). The three cases of a live cell `v` fold into
/// `max(v, min(v + alpha, omega))`, saturated at the marker, and the minimum into
/// `min(omega, value(v + alpha))`: growing sets both to `v + alpha`, raising gives `omega`
/// (then `omega <= v + alpha`), and a cell at or above `omega` keeps `v`. The per-switch
/// half's latency sums take a hop's latency as `alpha`, and the branches of [`omega_step`]
/// followed the cells there.
#[inline(always)]
pub fn omega_step_select(stored: u32, marker: u32, alpha: u64, omega: &mut u64) -> u32 {
    let v = stored as u64;
    let grown = v + alpha;
    let grown_value = if grown >= marker as u64 { INF } else { grown };
    let live = stored != marker;
    let next = store(v.max(grown.min(*omega)), marker);
    *omega = if live { (*omega).min(grown_value) } else { *omega };
    if live {
        next
    } else {
        stored
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The branch-free unit step is `omega_step(.., 1, ..)` for every stored value and
    /// running minimum of small widths, the marker and an infinite minimum included.
    #[test]
    fn unit_omega_step_equals_omega_step_with_alpha_one() {
        for width in 1..=5u32 {
            let marker = (1u32 << width) - 1;
            for stored in 0..=marker {
                for omega in (0..=marker as u64 + 2).chain([INF]) {
                    let (mut a, mut b) = (omega, omega);
                    let slow = omega_step(stored, marker, 1, &mut a).unwrap_or(stored);
                    let fast = unit_omega_step(stored, marker, &mut b);
                    assert_eq!((fast, b), (slow, a), "width {width}, cell {stored}, omega {omega}");
                }
            }
        }
    }

    /// The select form is `omega_step` for every stored value, alpha and running minimum
    /// of small widths, the marker and an infinite minimum included.
    #[test]
    fn omega_step_select_equals_omega_step() {
        for width in 1..=4u32 {
            let marker = (1u32 << width) - 1;
            for stored in 0..=marker {
                for alpha in 0..=marker as u64 + 2 {
                    for omega in (0..=marker as u64 + 2).chain([INF]) {
                        let (mut a, mut b) = (omega, omega);
                        let slow = omega_step(stored, marker, alpha, &mut a).unwrap_or(stored);
                        let fast = omega_step_select(stored, marker, alpha, &mut b);
                        assert_eq!(
                            (fast, b),
                            (slow, a),
                            "width {width}, cell {stored}, alpha {alpha}, omega {omega}"
                        );
                    }
                }
            }
        }
    }

    /// LightGuardian Figure 2, flow-size cells: [6, 9, 3] with alpha = 3 become [9, 9, 6].
    #[test]
    fn lightguardian_figure2_sum_cells() {
        let marker = u32::MAX;
        let mut omega = INF;
        let cells: Vec<u32> =
            [6u32, 9, 3].iter().map(|&c| omega_step(c, marker, 3, &mut omega).unwrap_or(c)).collect();
        assert_eq!(cells, vec![9, 9, 6]);
        assert_eq!(omega, 6);
    }

    /// The middle branch: a cell below omega but with cell + alpha >= omega is raised to omega.
    #[test]
    fn omega_raises_cell_to_running_minimum() {
        let mut omega = 5;
        assert_eq!(omega_step(4, 255, 3, &mut omega), Some(5));
        assert_eq!(omega, 5);
        assert_eq!(omega_step(5, 255, 3, &mut omega), None);
        assert_eq!(omega_step(7, 255, 3, &mut omega), None);
    }

    #[test]
    fn overflow_marker_is_sticky() {
        // 2-bit counter: counts 0, 1, 2, then 3 is the marker.
        assert_eq!(cm_step(2, 3, 1), Some(3));
        assert_eq!(cm_step(3, 3, 1), None);
        let mut omega = INF;
        assert_eq!(omega_step(3, 3, 1, &mut omega), None);
        assert_eq!(omega, INF);
        // With omega infinite, an overflowing cell saturates to the marker.
        assert_eq!(omega_step(2, 3, 1, &mut omega), Some(3));
        assert_eq!(omega, INF);
    }

    #[test]
    fn wide_omega_saturates_narrow_cell() {
        let mut omega = 1000;
        assert_eq!(omega_step(200, 255, 1000, &mut omega), Some(255));
    }
}
