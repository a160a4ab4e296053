//! What every binary of the host does around its command: errors printed once as
//! `error: ...` with exit status 1, and a reader that closes stdout early (`... | head`)
//! ending the program quietly with 141, as a shell reports SIGPIPE. `smartnic` and
//! `smartnic-fleet` both run their commands through [`main`].
use std::io;
use std::panic::{self, AssertUnwindSafe};

/// Exit status when stdout is closed under us (`smartnic snapshot report x | head`): 128 + SIGPIPE,
/// what a shell reports for a program the signal stopped.
pub const CLOSED_STDOUT_STATUS: i32 = 141;

/// Runs `command` as a program's whole work and exits with its status.
pub fn main(command: impl FnOnce() -> anyhow::Result<()>) {
    quiet_on_closed_stdout();
    match panic::catch_unwind(AssertUnwindSafe(command)) {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            eprintln!("error: {e:#}");
            std::process::exit(1);
        }
        // Unwinding has dropped everything the command held (child processes, files),
        // so stopping here is as clean as a normal return.
        Err(payload) if panic_message(&*payload).is_some_and(is_closed_stdout) => {
            std::process::exit(CLOSED_STDOUT_STATUS)
        }
        Err(payload) => panic::resume_unwind(payload),
    }
}

/// `println!` panics when stdout is a pipe whose reader has gone (the process ignores
/// SIGPIPE, as every Rust program does, so the write fails with EPIPE instead). A reader
/// that stops early is not an error: print nothing for that panic and let `main` exit with
/// [`CLOSED_STDOUT_STATUS`]. Every other panic keeps the default report.
///
/// SIGPIPE is not restored to its default action instead: the simulator service is reached
/// over a socket, and a service that died must be reported, not kill the CLI silently.
fn quiet_on_closed_stdout() {
    let default = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        if !panic_message(info.payload()).is_some_and(is_closed_stdout) {
            default(info);
        }
    }));
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> Option<&str> {
    payload.downcast_ref::<String>().map(String::as_str).or_else(|| payload.downcast_ref::<&str>().copied())
}

/// Whether a panic message is `print!`'s report of a broken pipe on stdout:
/// `failed printing to stdout: <description> (os error <errno>)`. The errno is turned
/// back into an `io::Error` so the test is by error kind, not by text.
fn is_closed_stdout(msg: &str) -> bool {
    let Some(rest) = msg.strip_prefix("failed printing to stdout: ") else {
        return false;
    };
    let code = rest.rsplit_once("(os error ").and_then(|(_, c)| c.strip_suffix(')')?.parse().ok());
    code.is_some_and(|c| io::Error::from_raw_os_error(c).kind() == io::ErrorKind::BrokenPipe)
}
