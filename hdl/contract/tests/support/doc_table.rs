//! The module-table check every crate's `doc_tables` test includes (`#[path]`): a crate's
//! `lib.rs`, and every `mod.rs` that has one, open with a `| module | ... |` table naming
//! each public module as `` [`name`] `` in its first column. A module added without its row
//! leaves a newcomer's map silently wrong; this turns that into a failing test.

use std::path::{Path, PathBuf};

/// Header of a module table in a `//!` comment.
const TABLE_HEADER: &str = "//! | module |";

/// Whether `src` (a Rust file's text) has a module table.
pub fn has_table(src: &str) -> bool {
    src.lines().any(|l| l.trim_start().starts_with(TABLE_HEADER))
}

/// Names in the first column of the module table: every `` [`name`] `` of a row.
fn listed(src: &str) -> Vec<&str> {
    src.lines()
        .filter_map(|l| l.trim_start().strip_prefix("//! |"))
        .filter_map(|row| row.split('|').next())
        .flat_map(|cell| cell.split("[`").skip(1).filter_map(|s| s.split("`]").next()))
        .map(str::trim)
        .collect()
}

/// Every `pub mod name;` of `src` that a reader can see (not under `#[doc(hidden)]`).
fn public_modules(src: &str) -> Vec<&str> {
    let mut hidden = false;
    let mut out = Vec::new();
    for line in src.lines().map(str::trim) {
        if let Some(name) = line.strip_prefix("pub mod ").and_then(|s| s.strip_suffix(';')) {
            if !hidden {
                out.push(name.trim());
            }
        }
        hidden = line == "#[doc(hidden)]";
    }
    out
}

/// The public modules of `src` missing from its module table.
pub fn unlisted(src: &str) -> Vec<&str> {
    let listed = listed(src);
    public_modules(src).into_iter().filter(|m| !listed.contains(m)).collect()
}

/// `lib.rs` and every `mod.rs` under `dir`, sorted.
fn module_roots(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(module_roots(&path));
        } else if matches!(path.file_name().and_then(|n| n.to_str()), Some("lib.rs" | "mod.rs")) {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// Panics naming every module missing from its table under `src_dir` (a crate's `src/`),
/// and if the crate's `lib.rs` has no module table at all.
pub fn check_crate(src_dir: &Path) {
    let lib = std::fs::read_to_string(src_dir.join("lib.rs")).unwrap();
    assert!(has_table(&lib), "{}/lib.rs has no `| module | ... |` table", src_dir.display());
    let mut missing = Vec::new();
    for path in module_roots(src_dir) {
        let src = std::fs::read_to_string(&path).unwrap();
        if has_table(&src) {
            missing.extend(unlisted(&src).into_iter().map(|m| format!("{}: {m}", path.display())));
        }
    }
    assert!(
        missing.is_empty(),
        "public modules missing from their file's module table:\n{}",
        missing.join("\n")
    );
}

/// The check itself, on inline sources (each crate's test runs it, so a broken parser of
/// tables cannot pass as "no module missing").
pub fn self_test() {
    let src = "//! | module | what |\n//! |---|---|\n//! | [`a`] | A, unlike [`c`] |\n//! | [`b`], [`d`] | B |\n\
               pub mod a;\npub mod b;\npub mod c;\n#[doc(hidden)]\npub mod hidden;\npub mod d;\nmod private;\n";
    assert!(has_table(src));
    assert_eq!(unlisted(src), vec!["c"]);
    assert!(!has_table("//! no table\npub mod a;\n"));
}
