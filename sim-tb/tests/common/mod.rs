//! Helpers shared by the arithmetic Verilator tests.
#![allow(dead_code)]
use smartnic_contract::vectors::KeyStream;
use smartnic_sim_tb::{Model, ModelBuild};

pub fn report_build(b: &ModelBuild) {
    match b.build_seconds {
        Some(s) => eprintln!("built {} in {s:.1} s ({})", b.block, b.dir.display()),
        None => eprintln!("reused {} ({})", b.block, b.dir.display()),
    }
}

pub fn block(name: &str) -> Model {
    let m = Model::of_block(name).unwrap_or_else(|e| panic!("{e}"));
    report_build(m.build());
    m
}

/// Operations per random run (the acceptance asks for >= 10M).
pub const RANDOM_OPS: usize = 10_000_000;

/// Random operands whose bit length is uniform in 0..=bits (so every exponent is covered
/// as often as every other), from a seeded stream.
pub struct Operands(KeyStream);

impl Operands {
    pub fn new(seed: u64) -> Self {
        Operands(KeyStream::new(seed))
    }
    pub fn raw(&mut self) -> u64 {
        self.0.next_u64()
    }
    /// A value of at most `bits` bits with a random length.
    pub fn next(&mut self, bits: u32) -> u64 {
        let r = self.0.next_u64();
        let len = (self.0.next_u64() % (bits as u64 + 1)) as u32;
        if len == 0 {
            0
        } else {
            r >> (64 - len)
        }
    }
}

/// 0, 1, every power of two below 2^bits and its neighbours, the all-ones value.
pub fn edge_inputs(bits: u32) -> Vec<u64> {
    let max = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
    let mut v = vec![0u64, 1, max, max - 1, max >> 1];
    for k in 0..bits {
        let p = 1u64 << k;
        v.extend([p, p - 1, p + 1]);
        v.push(p.wrapping_add(p >> 1));
    }
    v.retain(|&x| x <= max);
    v.sort_unstable();
    v.dedup();
    v
}

pub fn push64(row: &mut Vec<u32>, v: u64) {
    row.push(v as u32);
    row.push((v >> 32) as u32);
}

pub fn word64(w: &[u32]) -> u64 {
    w[0] as u64 | (w[1] as u64) << 32
}
