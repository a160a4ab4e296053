//! Layering rules of the workspace (DESIGN section 2), checked on the resolved dependency
//! graph: the host's software-only build links no PCIe code, and the host never links the
//! hardware generator.

use std::process::Command;

/// `cargo tree` of the host's normal dependencies, with extra arguments.
fn tree(extra: &[&str]) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["tree", "-p", "smartnic", "-e", "normal", "--prefix", "none", "--offline"])
        .args(extra)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo tree");
    assert!(out.status.success(), "cargo tree failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("utf-8 tree")
}

fn links(tree: &str, krate: &str) -> bool {
    tree.lines().any(|l| l.split_whitespace().next() == Some(krate))
}

#[test]
fn software_only_build_links_no_pcie_code() {
    let soft = tree(&["--no-default-features"]);
    assert!(links(&soft, "smartnic-driver"), "the snapshot codec and readout come from the driver:\n{soft}");
    assert!(!links(&soft, "pci-driver"), "--no-default-features still links pci-driver:\n{soft}");
    let full = tree(&[]);
    assert!(links(&full, "pci-driver"), "the default build has the VFIO back end:\n{full}");
}

#[test]
fn host_never_links_the_hardware_generator() {
    let full = tree(&["--all-features"]);
    for krate in ["smartnic-hdl", "rust-hdl"] {
        assert!(!links(&full, krate), "the host links {krate}:\n{full}");
    }
}
