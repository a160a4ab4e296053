//! Progress bars for long runs: drawn on stderr only when it is a terminal, so scripts and
//! `--json` consumers see clean output.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar over `total` items (or a spinner when the total is unknown).
pub fn bar(total: Option<u64>, what: &str) -> ProgressBar {
    let pb = match total {
        Some(n) => ProgressBar::new(n).with_style(
            ProgressStyle::with_template("{msg} [{bar:30}] {human_pos}/{human_len} ({per_sec}, eta {eta})")
                .expect("static template")
                .progress_chars("=> "),
        ),
        None => ProgressBar::new_spinner().with_style(
            ProgressStyle::with_template("{msg} {spinner} {human_pos} ({per_sec})").expect("static template"),
        ),
    };
    pb.set_draw_target(ProgressDrawTarget::stderr_with_hz(5));
    pb.set_message(what.to_string());
    pb
}
