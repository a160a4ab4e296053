//! The generated log2 unit under Verilator against `lut::log2_fx`: every 16-bit input,
//! every edge input of 64 bits, 10M random 64-bit inputs (uniform bit length), one
//! operation per clock; error vs f64 inside the contract's bound.
mod common;
use common::*;
use smartnic_contract::lut::{log2_fx, log2_table, Log2Params};
use smartnic_hdl::arith::log2::{Log2Default, LATENCY};
use smartnic_sim_tb::pipe::CHUNK;
use smartnic_sim_tb::Pipe;
use std::time::Instant;

struct Stats {
    ops: u64,
    max_lo: f64,
    max_hi: f64,
}

/// Streams `xs` and checks every output row; returns (results, cycles).
fn check(p: &mut Pipe, xs: &[u64], table: &[u32], lp: Log2Params, st: &mut Stats) -> (u64, u64) {
    let c0 = p.model.cycles();
    let mut results = 0;
    for chunk in xs.chunks(CHUNK) {
        let mut rows = Vec::with_capacity(chunk.len() * 3);
        for &x in chunk {
            push64(&mut rows, x);
            rows.push(1);
        }
        let out = p.run(&rows);
        assert!(p.idle_rows().chunks(3).all(|r| r[1] == 0 && r[2] == 0), "valid bit outside an operation");
        for (i, r) in out.chunks(3).enumerate() {
            let x = chunk[i];
            let want = log2_fx(table, lp, x);
            let (value, valid, zero) = (r[0], r[1], r[2]);
            match want {
                Some(v) => {
                    assert_eq!((value, valid, zero), (v, 1, 0), "log2({x:#x})");
                    let err = value as f64 / (1u64 << lp.frac) as f64 - (x as f64).log2();
                    st.max_lo = st.max_lo.min(err);
                    st.max_hi = st.max_hi.max(err);
                }
                None => assert_eq!((value, valid, zero), (0, 0, 1), "log2(0)"),
            }
            results += (valid | zero) as u64;
        }
        st.ops += chunk.len() as u64;
    }
    (results, p.model.cycles() - c0)
}

#[test]
fn log2_exhaustive_16_bit_edges_and_10m_random() {
    let lp = Log2Params::DEFAULT;
    assert_eq!(Log2Default::params(), lp);
    let table = log2_table(lp);
    let mut m = block("log2");
    m.reset(2);
    let mut p = Pipe::new(m, &["x", "x_valid"], &["value", "valid", "zero"], LATENCY);
    let mut st = Stats { ops: 0, max_lo: 0.0, max_hi: 0.0 };
    let t = Instant::now();

    let all16: Vec<u64> = (0..1u64 << 16).collect();
    let (r, c) = check(&mut p, &all16, &table, lp, &mut st);
    assert_eq!((r, c), (1 << 16, (1 << 16) + LATENCY as u64 - 1), "one result per clock");

    let edges = edge_inputs(64);
    let (r, _) = check(&mut p, &edges, &table, lp, &mut st);
    assert_eq!(r, edges.len() as u64);

    let mut ops = Operands::new(0x1062);
    let xs: Vec<u64> = (0..RANDOM_OPS).map(|_| ops.next(64)).collect();
    let (r, c) = check(&mut p, &xs, &table, lp, &mut st);
    let chunks = RANDOM_OPS.div_ceil(CHUNK) as u64;
    assert_eq!(r, RANDOM_OPS as u64);
    assert_eq!(c, RANDOM_OPS as u64 + chunks * (LATENCY as u64 - 1), "one result per clock");

    // Contract bound: log2 x - log2(1 + 2^-q) - 2^-(frac+1) <= out <= log2 x + 2^-(frac+1).
    let a = (1.0 + 2f64.powi(-(lp.q as i32))).log2();
    let t_half = 2f64.powi(-(lp.frac as i32) - 1);
    eprintln!(
        "log2 q={} frac={}: {} ops in {:.1} s, {r} results in {c} cycles ({:.6}/cycle), error vs f64 in [{:.3e}, {:.3e}], bound [{:.3e}, {:.3e}]",
        lp.q,
        lp.frac,
        st.ops,
        t.elapsed().as_secs_f64(),
        r as f64 / c as f64,
        st.max_lo,
        st.max_hi,
        -(a + t_half),
        t_half
    );
    assert!(st.max_lo >= -(a + t_half) - 1e-12 && st.max_hi <= t_half + 1e-12);
    // The truncation error is actually reached (the bound is not vacuous).
    assert!(st.max_lo < -0.9 * a);
}

/// Bubbles and reset: valid/zero follow x_valid exactly, a reset kills what is in flight.
#[test]
fn log2_bubbles_and_reset() {
    let lp = Log2Params::DEFAULT;
    let table = log2_table(lp);
    let mut m = block("log2");
    m.reset(1);
    let mut p = Pipe::new(m, &["x", "x_valid"], &["value", "valid", "zero"], LATENCY);
    let mut ops = Operands::new(5);
    let mut rows = Vec::new();
    let mut want = Vec::new();
    for i in 0..5000u64 {
        let x = ops.next(64);
        let v = i % 3 != 1;
        push64(&mut rows, x);
        rows.push(v as u32);
        want.push(v.then(|| log2_fx(&table, lp, x)));
    }
    let out = p.run(&rows);
    for (r, w) in out.chunks(3).zip(&want) {
        match w {
            None => assert_eq!((r[1], r[2]), (0, 0)),
            Some(Some(v)) => assert_eq!((r[0], r[1], r[2]), (*v, 1, 0)),
            Some(None) => assert_eq!((r[1], r[2]), (0, 1)),
        }
    }
    let (xv, valid) = (p.model.port("x_valid"), p.model.port("valid"));
    p.model.set(xv, 1);
    p.model.tick();
    p.model.reset(1);
    p.model.set(xv, 0);
    for _ in 0..LATENCY + 1 {
        assert_eq!(p.model.get(valid), 0);
        p.model.tick();
    }
}
