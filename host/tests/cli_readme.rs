//! The README's CLI section is generated from the grammar and the examples table
//! (`smartnic::cli::examples`), so it cannot drift from what `--help` shows.

use smartnic::cli::{command, examples};
use std::path::PathBuf;

const BEGIN: &str = "<!-- cli:begin (generated from host/src/cli/examples.rs; do not edit) -->\n";
const END: &str = "<!-- cli:end -->";
const REGENERATE: &str = "SMARTNIC_WRITE_README=1 cargo test -p smartnic --test cli_readme";

#[test]
fn readme_cli_section_is_the_rendered_grammar() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let (head, rest) =
        readme.split_once(BEGIN).unwrap_or_else(|| panic!("README.md lacks the line {BEGIN:?}"));
    let (block, tail) =
        rest.split_once(END).unwrap_or_else(|| panic!("README.md lacks {END:?} after {BEGIN:?}"));
    let rendered = examples::readme(&command());
    if block == rendered {
        return;
    }
    // Regeneration is asked for explicitly; the test still fails so a write never passes as a check.
    if std::env::var_os("SMARTNIC_WRITE_README").is_some() {
        std::fs::write(&path, format!("{head}{BEGIN}{rendered}{END}{tail}")).unwrap();
        panic!("README.md's CLI section rewritten; run the test again without SMARTNIC_WRITE_README");
    }
    panic!(
        "README.md's CLI section differs from the grammar and examples table; regenerate it with\n  \
         {REGENERATE}\n--- README.md\n{block}--- generated\n{rendered}"
    );
}
