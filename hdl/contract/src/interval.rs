//! The inter-arrival rule of SuMax's max cells (LightGuardian section 4.4), shared by the NIC's
//! time datapath (`smartnic-hdl`, `sketch/time_rmw.rs`) and the software SuMax.
//!
//! Time cells hold `time_width`-bit values that wrap (a 32-bit cell of 1024 ns units wraps
//! every 73 minutes), so a difference of two of them is only known modulo `2^time_width`.
//! The rule reads it as serial-number arithmetic (RFC 1982): a difference below half the
//! range is a forward gap; half the range or more is a timestamp that went backwards (common
//! in merged captures), and counts as gap 0, the same as the ground truth's rule. Without it a
//! packet 100 us "early" would record a gap of almost the whole range (4.4e12 ns).

/// The gap recorded between a bucket's last arrival `prev` and a packet at time `t`, both
/// `width`-bit time-cell values (1 <= `width` <= 32). `prev = 0` means "no packet yet": gap 0.
pub fn gap(t: u32, prev: u32, width: u8) -> u32 {
    debug_assert!((1..=32).contains(&width));
    if prev == 0 {
        return 0;
    }
    let mask = if width >= 32 { u32::MAX } else { (1u32 << width) - 1 };
    let d = t.wrapping_sub(prev) & mask;
    if d >> (width - 1) & 1 == 1 {
        0
    } else {
        d
    }
}

#[cfg(test)]
mod tests {
    use super::gap;

    #[test]
    fn forward_backward_and_wrap() {
        assert_eq!(gap(110, 10, 32), 100);
        assert_eq!(gap(5, 0, 32), 0, "first packet");
        assert_eq!(gap(10, 110, 32), 0, "backwards");
        assert_eq!(gap(3, u32::MAX - 2, 32), 6, "forward across the wrap");
        assert_eq!(gap(0x7FFF_FFFF + 1, 1, 32), 0x7FFF_FFFF, "largest forward gap");
        assert_eq!(gap(0x8000_0000 + 1, 1, 32), 0, "half the range reads as backwards");
        // Narrow cells: the same rule at width 8.
        assert_eq!(gap(200, 100, 8), 100);
        assert_eq!(gap(100, 200, 8), 0);
        assert_eq!(gap(2, 250, 8), 8);
        assert_eq!(gap(228, 100, 8), 0, "128 = half of 2^8");
        assert_eq!(gap(227, 100, 8), 127);
    }
}
