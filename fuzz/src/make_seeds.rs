//! Writes small seed inputs for every fuzz target into `DIR/<target>/` (default
//! `fuzz/corpus`), built by the project's own writers (`smartnic::fuzz_bodies::seeds`).
fn main() -> std::io::Result<()> {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "fuzz/corpus".into()));
    for (target, name, bytes) in smartnic::fuzz_bodies::seeds() {
        let d = dir.join(target);
        std::fs::create_dir_all(&d)?;
        std::fs::write(d.join(format!("seed-{name}")), bytes)?;
    }
    Ok(())
}
