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

#[cfg(test)]
mod tests {
    use super::*;

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
