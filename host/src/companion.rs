//! Programs that ship beside `smartnic` and that it runs: the simulated NIC
//! (`smartnic-sim`) and the fleet's SQL engine (`smartnic-fleet`). Each is named by an
//! environment variable if set, else found beside the running `smartnic` (where cargo builds
//! it), and a missing one is an error that says how to build it.
use std::ffi::OsString;
use std::path::PathBuf;

use anyhow::bail;

/// A program `smartnic` runs, and how it is found and built.
#[derive(Clone, Copy, Debug)]
pub struct Companion {
    /// What it is, for errors ("the simulated NIC").
    pub what: &'static str,
    /// Its binary's file name.
    pub binary: &'static str,
    /// The environment variable that names another path to it.
    pub env: &'static str,
    /// The command that builds it.
    pub build: &'static str,
}

impl Companion {
    /// Its path: `$ENV`, else `binary` beside the running executable; an error if there is
    /// no file there.
    pub fn path(&self) -> anyhow::Result<PathBuf> {
        self.path_from(std::env::var_os(self.env))
    }

    fn path_from(&self, named: Option<OsString>) -> anyhow::Result<PathBuf> {
        let exe = match named {
            Some(p) => PathBuf::from(p),
            None => std::env::current_exe()?.with_file_name(self.binary),
        };
        if !exe.is_file() {
            bail!(
                "{} `{}` is not built; run `{}` (or name it with {}=PATH)",
                self.what,
                exe.display(),
                self.build,
                self.env
            );
        }
        Ok(exe)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOOL: Companion =
        Companion { what: "the tool", binary: "tool", env: "TOOL_PATH", build: "cargo build -p tool" };

    #[test]
    fn a_missing_companion_says_how_to_build_it_and_a_named_one_is_used() {
        let e = TOOL.path_from(Some("/nonexistent/tool".into())).unwrap_err().to_string();
        assert!(e.contains("the tool `/nonexistent/tool` is not built"), "{e}");
        assert!(e.contains("cargo build -p tool") && e.contains("TOOL_PATH=PATH"), "{e}");
        let here = std::env::current_exe().unwrap();
        assert_eq!(TOOL.path_from(Some(here.clone().into())).unwrap(), here);
        let beside = TOOL.path_from(None).unwrap_err().to_string();
        assert!(beside.contains(&here.with_file_name("tool").display().to_string()), "{beside}");
    }
}
