//! The generated direct-table multiplier and divider (PINT's alternative to log-add-exp)
//! under Verilator against `lut::mul_direct` / `lut::div_direct`: every pair of 8-bit
//! operands, every pair of 32-bit edge operands, 10M random 32-bit pairs (uniform bit
//! lengths); one operation per clock; relative error vs f64 inside the bounds of
//! host/src/arith/bounds.rs (`mul_direct`, `div_direct`, recomputed here).
mod common;
use common::*;
use smartnic_contract::lut::{div_direct, div_direct_table, mul_direct, mul_direct_table, DirectParams};
use smartnic_hdl::arith::div_direct::{DivDirect32, DEFAULT_OUT_FRAC};
use smartnic_hdl::arith::mul_direct::{MulDirect32, LATENCY};
use smartnic_sim_tb::pipe::CHUNK;
use smartnic_sim_tb::Pipe;
use std::time::Instant;

#[derive(Clone, Copy)]
enum Op {
    Mul,
    Div(u8),
}

struct Run {
    pipe: Pipe,
    op: Op,
    table: Vec<u32>,
    p: DirectParams,
    /// Relative bound factors (lo, hi) and absolute slack in output ulps (bounds.rs's
    /// `2^-(out_frac+1)` is half an ulp of the value with `out_frac` fraction bits).
    bound: (f64, f64, f64),
    max_rel: f64,
    results: u64,
    chunks: u64,
}

impl Run {
    fn new(name: &str, op: Op) -> Run {
        let p = DirectParams::DEFAULT;
        assert_eq!((MulDirect32::params(false), DivDirect32::params(true)), (p, p));
        let mut m = block(name);
        m.reset(2);
        let pipe = Pipe::new(m, &["x", "y", "in_valid"], &["value", "valid", "div_zero"], LATENCY);
        // bounds.rs: operands truncated to h bits below the leading one; quotient words
        // rounded by 2^-frac relative; output rounded by half an ulp.
        let h = 2f64.powi(p.half() as i32);
        let (table, bound) = match op {
            Op::Mul => (mul_direct_table(p), ((h / (h + 1.0)).powi(2), 1.0, 0.0)),
            Op::Div(_) => {
                let w = 2f64.powi(-(p.frac as i32));
                (div_direct_table(p), (h / (h + 1.0) * (1.0 - w), (h + 1.0) / h * (1.0 + w), 0.5))
            }
        };
        Run { pipe, op, table, p, bound, max_rel: 0.0, results: 0, chunks: 0 }
    }

    fn check(&mut self, pairs: &[(u64, u64)]) {
        for chunk in pairs.chunks(CHUNK) {
            let rows: Vec<u32> = chunk.iter().flat_map(|&(x, y)| [x as u32, y as u32, 1]).collect();
            let out = self.pipe.run(&rows);
            assert!(self.pipe.idle_rows().chunks(4).all(|r| r[2] == 0 && r[3] == 0));
            self.chunks += 1;
            for (i, o) in out.chunks(4).enumerate() {
                let (x, y) = chunk[i];
                let (got, valid, dz) = (word64(o), o[2], o[3]);
                let (want, exact) = match self.op {
                    Op::Mul => (Some(mul_direct(&self.table, self.p, x, y)), x as f64 * y as f64),
                    Op::Div(f) => {
                        (div_direct(&self.table, self.p, x, y, f), x as f64 / y as f64 * 2f64.powi(f as i32))
                    }
                };
                match want {
                    Some(w) => assert_eq!((got, valid, dz), (w, 1, 0), "{x} op {y}"),
                    None => assert_eq!((got, valid, dz), (u64::MAX, 0, 1), "{x} / 0"),
                }
                self.results += 1;
                if want.is_some() && got != u64::MAX {
                    let (lo, hi, abs) = self.bound;
                    let g = got as f64;
                    let slack = 1e-12 * exact + 1e-12;
                    assert!(
                        g >= exact * lo - abs - slack && g <= exact * hi + abs + slack,
                        "{x} op {y} = {got}, exact {exact}"
                    );
                    if exact >= 1e6 {
                        self.max_rel = self.max_rel.max((g / exact - 1.0).abs());
                    }
                }
            }
        }
    }

    fn finish(&self, name: &str, secs: f64, ops: u64) {
        let (lo, hi, _) = self.bound;
        let cycles = self.pipe.model.cycles() - 2;
        let bound = (1.0 - lo).max(hi - 1.0);
        eprintln!(
            "{name} q={} frac={}: {ops} ops in {secs:.1} s, {} results in {cycles} cycles ({} chunks, {} drain clocks each), max rel error vs f64 (exact >= 1e6) {:.3e}, bound {bound:.3e}",
            self.p.q,
            self.p.frac,
            self.results,
            self.chunks,
            LATENCY - 1,
            self.max_rel,
        );
        assert_eq!(self.results, ops);
        assert_eq!(cycles, ops + self.chunks * (LATENCY as u64 - 1), "one result per clock");
        assert!(self.max_rel <= bound);
        // The truncation error is actually reached (the bound is not vacuous).
        assert!(self.max_rel > 0.8 * bound, "max rel {} vs bound {bound}", self.max_rel);
    }
}

fn pairs_for_run() -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = (0..1u64 << 16).map(|i| (i >> 8, i & 255)).collect();
    let e = edge_inputs(32);
    v.extend(e.iter().flat_map(|&a| e.iter().map(move |&b| (a, b))));
    let mut ops = Operands::new(0x5D1E);
    v.extend((0..RANDOM_OPS).map(|_| (ops.next(32), ops.next(32))));
    v
}

#[test]
fn mul_direct_exhaustive_8x8_edges_and_10m_random() {
    let t = Instant::now();
    let mut r = Run::new("mul_direct", Op::Mul);
    let pairs = pairs_for_run();
    r.check(&pairs);
    r.finish("mul_direct", t.elapsed().as_secs_f64(), pairs.len() as u64);
}

#[test]
fn div_direct_exhaustive_8x8_edges_and_10m_random() {
    let t = Instant::now();
    let mut r = Run::new("div_direct", Op::Div(DEFAULT_OUT_FRAC));
    let pairs = pairs_for_run();
    r.check(&pairs);
    r.finish("div_direct", t.elapsed().as_secs_f64(), pairs.len() as u64);
}

/// Bubbles and reset: valid follows in_valid exactly, a reset kills what is in flight.
#[test]
fn direct_bubbles_and_reset() {
    let p = DirectParams::DEFAULT;
    let table = div_direct_table(p);
    let mut m = block("div_direct");
    m.reset(1);
    let mut pipe = Pipe::new(m, &["x", "y", "in_valid"], &["value", "valid", "div_zero"], LATENCY);
    let mut ops = Operands::new(9);
    let mut rows = Vec::new();
    let mut want = Vec::new();
    for i in 0..5000u64 {
        let (x, y) = (ops.next(32), ops.next(8));
        let v = i % 3 != 1;
        rows.extend([x as u32, y as u32, v as u32]);
        want.push(v.then(|| div_direct(&table, p, x, y, DEFAULT_OUT_FRAC)));
    }
    let out = pipe.run(&rows);
    for (r, w) in out.chunks(4).zip(&want) {
        match w {
            None => assert_eq!((r[2], r[3]), (0, 0)),
            Some(Some(v)) => assert_eq!((word64(r), r[2], r[3]), (*v, 1, 0)),
            Some(None) => assert_eq!((word64(r), r[2], r[3]), (u64::MAX, 0, 1)),
        }
    }
    let (iv, valid) = (pipe.model.port("in_valid"), pipe.model.port("valid"));
    pipe.model.set(iv, 1);
    pipe.model.tick();
    pipe.model.reset(1);
    pipe.model.set(iv, 0);
    for _ in 0..LATENCY + 1 {
        assert_eq!(pipe.model.get(valid), 0);
        pipe.model.tick();
    }
}
