//! The generated multiplicative decoder under Verilator against `lut::decode_fx` on every
//! 16-bit code (the whole input space of the registered block), one operation per clock,
//! with the result inside the exp2 bound of host/src/arith/bounds.rs around
//! `2^(alpha * C_fx / 2^30)`; and bubbles.
mod common;
use common::*;
use smartnic_contract::lut::{decode_fx, encoder_c, exp2_table, EncoderParams, ENC_C_FRAC};
use smartnic_hdl::arith::decoder::LATENCY;
use smartnic_sim_tb::Pipe;

#[test]
fn decoder_exhaustive_16_bit_codes() {
    let p = EncoderParams::DEFAULT;
    let (e2, c) = (exp2_table(p.exp2), encoder_c(p.eps_ppm));
    let mut m = block("decoder");
    m.reset(2);
    let mut pipe = Pipe::new(m, &["alpha", "alpha_valid"], &["value", "valid"], LATENCY);
    let rows: Vec<u32> = (0..1u32 << 16).flat_map(|a| [a, 1]).collect();
    let out = pipe.run(&rows);
    assert!(pipe.idle_rows().chunks(3).all(|r| r[2] == 0));
    // bounds.rs exp2: input rounded to q_e fraction bits (d), word rounding (r), half an ulp.
    let d = 2f64.powi(-(p.exp2.q as i32) - 1);
    let r = 2f64.powi(-(p.exp2.frac as i32) - 1);
    let (lo, hi) = (2f64.powf(-d) * (1.0 - r), 2f64.powf(d) * (1.0 + r));
    let (mut max_rel, mut saturated) = (0f64, 0);
    for (a, o) in out.chunks(3).enumerate() {
        let got = word64(o);
        assert_eq!((got, o[2]), (decode_fx(&e2, &p, c, a as u32), 1), "decode({a})");
        let exact = 2f64.powf(a as f64 * c as f64 / 2f64.powi(ENC_C_FRAC as i32));
        if got == u64::MAX {
            saturated += 1;
            assert!(exact * lo >= 1.8e19, "saturated too early at {a}");
            continue;
        }
        let g = got as f64;
        assert!(
            g >= exact * lo - 0.5 - 1e-9 * exact && g <= exact * hi + 0.5 + 1e-9 * exact,
            "decode({a}) = {got}, {exact}"
        );
        if exact >= 1e6 {
            max_rel = max_rel.max((g / exact - 1.0).abs());
        }
    }
    let cycles = pipe.model.cycles() - 2;
    eprintln!(
        "decoder: 65536 codes, {cycles} cycles, {saturated} saturated, max rel error vs 2^(alpha C) {max_rel:.3e} (bound {:.3e})",
        (1.0 - lo).max(hi - 1.0)
    );
    assert_eq!(cycles, (1 << 16) + LATENCY as u64 - 1, "one result per clock");
    assert!(saturated > 0 && max_rel <= (1.0 - lo).max(hi - 1.0));
}

#[test]
fn decoder_bubbles_and_reset() {
    let p = EncoderParams::DEFAULT;
    let (e2, c) = (exp2_table(p.exp2), encoder_c(p.eps_ppm));
    let mut m = block("decoder");
    m.reset(1);
    let mut pipe = Pipe::new(m, &["alpha", "alpha_valid"], &["value", "valid"], LATENCY);
    let mut ops = Operands::new(21);
    let mut rows = Vec::new();
    let mut want = Vec::new();
    for i in 0..5000u64 {
        let (a, v) = (ops.next(16) as u32, i % 3 != 1);
        rows.extend([a, v as u32]);
        want.push(v.then(|| decode_fx(&e2, &p, c, a)));
    }
    let out = pipe.run(&rows);
    for (o, w) in out.chunks(3).zip(&want) {
        match w {
            None => assert_eq!(o[2], 0),
            Some(x) => assert_eq!((word64(o), o[2]), (*x, 1)),
        }
    }
    let (av, valid) = (pipe.model.port("alpha_valid"), pipe.model.port("valid"));
    pipe.model.set(av, 1);
    pipe.model.tick();
    pipe.model.reset(1);
    pipe.model.set(av, 0);
    for _ in 0..LATENCY + 1 {
        assert_eq!(pipe.model.get(valid), 0);
        pipe.model.tick();
    }
}
