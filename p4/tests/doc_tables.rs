//! Every public module of the crate is in its file's module table.

#[path = "../../hdl/contract/tests/support/doc_table.rs"]
mod doc_table;

#[test]
fn every_public_module_is_in_its_table() {
    doc_table::self_test();
    doc_table::check_crate(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
}
