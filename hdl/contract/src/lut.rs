//! LUT contents for the lookup-table arithmetic (PINT section 4.3 and Appendix C).
//! Being written: see the arithmetic work in progress.

/// Renders `vectors/lut.txt` (LUT samples every side checks).
pub fn render_lut_vectors() -> String {
    String::new()
}
