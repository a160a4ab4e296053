//! The generated log-add-exp multiplier and divider under Verilator against
//! `lut::mul_log` / `lut::div_log`: every pair of 8-bit operands, every pair of 32-bit edge
//! operands, 10M random 32-bit pairs (uniform bit lengths); one operation per clock;
//! relative error vs f64 inside the bounds of host/src/arith/bounds.rs (recomputed here).
mod common;
use common::*;
use smartnic_contract::lut::{div_log, exp2_table, log2_table, mul_log, Exp2Params, Log2Params};
use smartnic_hdl::arith::div::{DivLog32, DEFAULT_OUT_FRAC};
use smartnic_hdl::arith::mul::{MulLog32, LATENCY};
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
    l2: Vec<u32>,
    e2: Vec<u32>,
    lp: Log2Params,
    ep: Exp2Params,
    /// Relative bound factors (lo, hi) and absolute slack in output ulps.
    bound: (f64, f64, f64),
    max_rel: f64,
    results: u64,
    chunks: u64,
}

impl Run {
    fn new(name: &str, op: Op) -> Run {
        let (lp, ep) = (Log2Params::DEFAULT, Exp2Params::DEFAULT);
        assert_eq!((MulLog32::log2_params(), MulLog32::exp2_params()), (lp, ep));
        assert_eq!((DivLog32::log2_params(), DivLog32::exp2_params()), (lp, ep));
        let mut m = block(name);
        m.reset(2);
        let pipe = Pipe::new(m, &["x", "y", "in_valid"], &["value", "valid", "div_zero"], LATENCY);
        // bounds.rs: a = log2(1 + 2^-q), t = 2^-(frac+1), d = 2^-(q_e+1), r = 2^-(frac_e+1).
        let a = (1.0 + 2f64.powi(-(lp.q as i32))).log2();
        let t = 2f64.powi(-(lp.frac as i32) - 1);
        let d = 2f64.powi(-(ep.q as i32) - 1);
        let r = 2f64.powi(-(ep.frac as i32) - 1);
        let (elo, ehi) = (2f64.powf(-d) * (1.0 - r), 2f64.powf(d) * (1.0 + r));
        let bound = match op {
            Op::Mul => (2f64.powf(-2.0 * (a + t)) * elo, 2f64.powf(2.0 * t) * ehi, 0.5),
            Op::Div(_) => (2f64.powf(-(a + 2.0 * t)) * elo, 2f64.powf(a + 2.0 * t) * ehi, 0.5),
        };
        Run {
            pipe,
            op,
            l2: log2_table(lp),
            e2: exp2_table(ep),
            lp,
            ep,
            bound,
            max_rel: 0.0,
            results: 0,
            chunks: 0,
        }
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
                    Op::Mul => {
                        (Some(mul_log(&self.l2, self.lp, &self.e2, self.ep, x, y)), x as f64 * y as f64)
                    }
                    Op::Div(f) => (
                        div_log(&self.l2, self.lp, &self.e2, self.ep, x, y, f),
                        x as f64 / y as f64 * 2f64.powi(f as i32),
                    ),
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
        eprintln!(
            "{name} q={} frac={}: {ops} ops in {secs:.1} s, {} results in {cycles} cycles ({} chunks, {} drain clocks each), max rel error vs f64 (exact >= 1e6) {:.3e}, bound {:.3e}",
            self.lp.q,
            self.lp.frac,
            self.results,
            self.chunks,
            LATENCY - 1,
            self.max_rel,
            (1.0 - lo).max(hi - 1.0)
        );
        assert_eq!(self.results, ops);
        assert_eq!(cycles, ops + self.chunks * (LATENCY as u64 - 1), "one result per clock");
        assert!(self.max_rel <= (1.0 - lo).max(hi - 1.0));
    }
}

fn pairs_for_run() -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = (0..1u64 << 16).map(|i| (i >> 8, i & 255)).collect();
    let e = edge_inputs(32);
    v.extend(e.iter().flat_map(|&a| e.iter().map(move |&b| (a, b))));
    let mut ops = Operands::new(0x3D1F);
    v.extend((0..RANDOM_OPS).map(|_| (ops.next(32), ops.next(32))));
    v
}

#[test]
fn mul_exhaustive_8x8_edges_and_10m_random() {
    let t = Instant::now();
    let mut r = Run::new("mul", Op::Mul);
    let pairs = pairs_for_run();
    r.check(&pairs);
    r.finish("mul", t.elapsed().as_secs_f64(), pairs.len() as u64);
}

#[test]
fn div_exhaustive_8x8_edges_and_10m_random() {
    let t = Instant::now();
    let mut r = Run::new("div", Op::Div(DEFAULT_OUT_FRAC));
    let pairs = pairs_for_run();
    r.check(&pairs);
    r.finish("div", t.elapsed().as_secs_f64(), pairs.len() as u64);
}
