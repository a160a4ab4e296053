//! The generated exp2 unit under Verilator against `lut::exp2_fx`: EVERY input of its
//! 23-bit exponent port (2^23, a superset of the 16-bit inputs), for the registered
//! integer output and for a 16-fraction-bit output variant; one operation per clock;
//! error vs f64 inside the bound derived from the contract's rounding.
mod common;
use common::*;
use smartnic_contract::lut::{exp2_fx, exp2_table, Exp2Io, Exp2Params};
use smartnic_hdl::arith::exp2::{Exp2Default, DEFAULT_IO, LATENCY};
use smartnic_hdl::flow;
use smartnic_sim_tb::pipe::CHUNK;
use smartnic_sim_tb::{Model, Pipe};
use std::time::Instant;

const YW: u32 = 23;

fn run_all(m: Model, io: Exp2Io) {
    let ep = Exp2Params::DEFAULT;
    assert_eq!(Exp2Default::params(), ep);
    let table = exp2_table(ep);
    let mut p = Pipe::new(m, &["y", "y_valid"], &["value", "valid"], LATENCY);
    p.model.reset(2);
    let t = Instant::now();
    let (c0, mut results, mut chunks) = (p.model.cycles(), 0u64, 0u64);
    // Bound (host/src/arith/bounds.rs `exp2`): input rounding d = 2^-(q+1), word rounding
    // r = 2^-(frac+1), output rounding half an ulp (`exact` below is in output ulps).
    let d = 2f64.powi(-(ep.q as i32) - 1);
    let r = 2f64.powi(-(ep.frac as i32) - 1);
    let (lo, hi, abs) = (2f64.powf(-d) * (1.0 - r), 2f64.powf(d) * (1.0 + r), 0.5);
    let mut max_rel = 0f64;
    let n = 1u64 << YW;
    let ys: Vec<u32> = (0..n as u32).collect();
    for chunk in ys.chunks(CHUNK) {
        let rows: Vec<u32> = chunk.iter().flat_map(|&y| [y, 1]).collect();
        let out = p.run(&rows);
        assert!(p.idle_rows().chunks(3).all(|r| r[2] == 0), "valid bit outside an operation");
        chunks += 1;
        for (i, o) in out.chunks(3).enumerate() {
            let raw = chunk[i];
            let y = ((raw << (32 - YW)) as i32 >> (32 - YW)) as i64; // sign extend
            let want = exp2_fx(&table, ep, y, io);
            let got = word64(o);
            assert_eq!((got, o[2]), (want, 1), "exp2({y}) io {io:?}");
            results += 1;
            let max = if io.out_width == 64 { u64::MAX } else { (1 << io.out_width) - 1 };
            if got != max {
                let exact = (y as f64 / 65536.0).exp2() * 2f64.powi(io.out_frac as i32);
                let o = got as f64;
                assert!(
                    o >= exact * lo - abs - 1e-9 * exact && o <= exact * hi + abs + 1e-9 * exact,
                    "exp2({y}) = {got}, exact {exact}"
                );
                if exact >= 1e6 {
                    max_rel = max_rel.max((o / exact - 1.0).abs());
                }
            }
        }
    }
    let cycles = p.model.cycles() - c0;
    assert_eq!(results, n);
    assert_eq!(cycles, n + chunks * (LATENCY as u64 - 1), "one result per clock");
    eprintln!(
        "exp2 q={} frac={} out_frac={}: {n} inputs (all of {YW} bits) in {:.1} s, {results} results in {cycles} cycles, max rel error vs f64 (outputs >= 1e6) {max_rel:.3e}, bound {:.3e}",
        ep.q,
        ep.frac,
        io.out_frac,
        t.elapsed().as_secs_f64(),
        (1.0 - lo).max(hi - 1.0)
    );
    assert!(max_rel <= (1.0 - lo).max(hi - 1.0));
}

#[test]
fn exp2_every_23_bit_input_integer_output() {
    run_all(block("exp2"), DEFAULT_IO);
}

#[test]
fn exp2_every_23_bit_input_16_fraction_bits() {
    let io = Exp2Io { out_frac: 16, ..DEFAULT_IO };
    let name = "exp2_of16";
    let v = flow::to_verilog(name, &mut Exp2Default::new(io)).unwrap();
    let m = Model::of_verilog(name, &v).unwrap_or_else(|e| panic!("{e}"));
    report_build(m.build());
    run_all(m, io);
}
