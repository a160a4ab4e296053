//! Regenerates the checked-in test vectors under `hdl/contract/vectors/`.
use std::path::Path;

fn main() -> std::io::Result<()> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors");
    std::fs::write(dir.join("hash.txt"), smartnic_contract::vectors::render_hash_vectors())?;
    std::fs::write(dir.join("lut.txt"), smartnic_contract::lut::render_lut_vectors())?;
    println!("wrote {}", dir.display());
    Ok(())
}
