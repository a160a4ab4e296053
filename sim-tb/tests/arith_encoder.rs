//! The generated multiplicative encoder under Verilator against `lut::encode_fx`: every
//! 16-bit value with half-up rounding and with randomized rounding (the LFSR sequence from
//! the seed, compared with `lut::lfsr_advance` on the `lfsr` port every clock), every 64-bit
//! edge value, 10M random 32- and 64-bit values with a random rounding mode each; one
//! operation per clock; the code vs the exact `log_{(1+eps)^2} v` inside the bound that
//! follows from the log2 bound (`a = log2(1 + 2^-q)`, `t = 2^-(frac+1)`), `K_fx`'s rounding
//! and the rounding step.
mod common;
use common::*;
use smartnic_contract::lut::{
    encode_fx, encoder_k, lfsr_advance, lfsr_seed, log2_table, EncoderParams, Rounding, ENC_K_FRAC,
    LFSR_DEFAULT_SEED,
};
use smartnic_hdl::arith::encoder::LATENCY;
use smartnic_sim_tb::pipe::CHUNK;
use smartnic_sim_tb::Pipe;
use std::time::Instant;

struct Run {
    pipe: Pipe,
    p: EncoderParams,
    k: u32,
    l2: Vec<u32>,
    /// LFSR state after every operation so far.
    state: u32,
    results: u64,
    chunks: u64,
    randomized: u64,
    /// alpha - exact code (log2 v * K), min/max, for half-up and randomized rounding.
    err: [(f64, f64); 2],
}

impl Run {
    fn new(seed: u32) -> Run {
        let p = EncoderParams::DEFAULT;
        let mut m = block("encoder");
        let sp = m.port("seed");
        m.set(sp, seed as u128);
        m.reset(2);
        let mut pipe = Pipe::new(m, &["v", "v_valid", "rnd"], &["alpha", "valid", "lfsr"], LATENCY);
        let state = lfsr_seed(seed);
        assert_eq!(pipe.model.get(pipe.model.port("lfsr")) as u32, state, "reset loads the seed");
        Run {
            pipe,
            p,
            k: encoder_k(p.eps_ppm),
            l2: log2_table(p.log2),
            state,
            results: 0,
            chunks: 0,
            randomized: 0,
            err: [(0.0, 0.0); 2],
        }
    }

    /// Encodes `(v, randomized)` pairs.
    fn check(&mut self, ops: &[(u64, bool)]) {
        for chunk in ops.chunks(CHUNK) {
            let mut rows = Vec::with_capacity(chunk.len() * 4);
            let mut want = Vec::with_capacity(chunk.len());
            let mut after = Vec::with_capacity(chunk.len());
            for &(v, rnd) in chunk {
                push64(&mut rows, v);
                rows.extend([1, rnd as u32]);
                let rounding = if rnd {
                    self.state = lfsr_advance(self.state);
                    self.randomized += 1;
                    Rounding::Random(self.state as u16)
                } else {
                    Rounding::HalfUp
                };
                want.push(encode_fx(&self.l2, &self.p, self.k, v, rounding));
                after.push(self.state);
            }
            let out = self.pipe.run(&rows);
            assert!(self.pipe.idle_rows().chunks(3).all(|r| r[1] == 0), "valid outside an operation");
            self.chunks += 1;
            let n = chunk.len();
            for (i, o) in out.chunks(3).enumerate() {
                let (v, rnd) = chunk[i];
                assert_eq!((o[0], o[1]), (want[i], 1), "encode({v:#x}, randomized {rnd})");
                // The state at the result: operations up to i + 3 have reached stage 4.
                assert_eq!(o[2], after[(i + 3).min(n - 1)], "lfsr at result {i}");
                self.results += 1;
                if v >= 2 && o[0] < self.p.alpha_max() {
                    let exact = (v as f64).log2() / (2.0 * (1.0 + self.p.eps()).log2());
                    let e = &mut self.err[rnd as usize];
                    let d = o[0] as f64 - exact;
                    *e = (e.0.min(d), e.1.max(d));
                }
            }
        }
    }

    fn finish(&self, what: &str, secs: f64, ops: u64) {
        let cycles = self.pipe.model.cycles() - 2;
        // Bound: the log2 error [-(a+t), t] times K', K_fx's rounding over log2 v < 64,
        // and the rounding step (+-1/2 half up, (-1, 1) randomized).
        let kp = self.k as f64 / 2f64.powi(ENC_K_FRAC as i32);
        let a = (1.0 + 2f64.powi(-(self.p.log2.q as i32))).log2();
        let t = 2f64.powi(-(self.p.log2.frac as i32) - 1);
        let kc = 64.0 * 2f64.powi(-(ENC_K_FRAC as i32) - 1);
        let bound = |s: f64| (-(a + t) * kp - kc - s, t * kp + kc + s);
        let (bh, br) = (bound(0.5), bound(1.0));
        eprintln!(
            "encoder {what}: {ops} ops ({} randomized) in {secs:.1} s, {} results in {cycles} cycles ({} chunks, {} drain clocks each); alpha - exact: half-up [{:.3}, {:.3}] bound [{:.3}, {:.3}], randomized [{:.3}, {:.3}] bound [{:.3}, {:.3}]",
            self.randomized,
            self.results,
            self.chunks,
            LATENCY - 1,
            self.err[0].0,
            self.err[0].1,
            bh.0,
            bh.1,
            self.err[1].0,
            self.err[1].1,
            br.0,
            br.1
        );
        assert_eq!(self.results, ops);
        assert_eq!(cycles, ops + self.chunks * (LATENCY as u64 - 1), "one result per clock");
        assert!(self.err[0].0 >= bh.0 && self.err[0].1 <= bh.1);
        assert!(self.err[1].0 > br.0 && self.err[1].1 < br.1);
    }
}

#[test]
fn encoder_exhaustive_16_bit_both_roundings() {
    let t = Instant::now();
    let mut r = Run::new(0xDEAD_BEEF);
    let half: Vec<(u64, bool)> = (0..1u64 << 16).map(|v| (v, false)).collect();
    r.check(&half);
    assert_eq!(r.state, 0xDEAD_BEEF, "half-up operations leave the LFSR alone");
    let rand: Vec<(u64, bool)> = (0..1u64 << 16).map(|v| (v, true)).collect();
    r.check(&rand);
    r.finish("16-bit", t.elapsed().as_secs_f64(), 2 << 16);
    assert_eq!(r.randomized, 1 << 16);
}

#[test]
fn encoder_edges_and_10m_random_32_and_64_bit() {
    let t = Instant::now();
    let mut r = Run::new(0);
    assert_eq!(r.state, LFSR_DEFAULT_SEED, "seed 0 is replaced by the default seed");
    let mut ops = Operands::new(0xE7C0);
    let mut v: Vec<(u64, bool)> = edge_inputs(64).into_iter().flat_map(|x| [(x, false), (x, true)]).collect();
    v.extend((0..RANDOM_OPS).map(|i| {
        let bits = if i % 2 == 0 { 32 } else { 64 };
        (ops.next(bits), ops.raw() & 1 == 1)
    }));
    r.check(&v);
    r.finish("edges + random", t.elapsed().as_secs_f64(), v.len() as u64);
    assert!(r.randomized > RANDOM_OPS as u64 / 3);
}

/// Bubbles and reset: valid follows v_valid, a bubble does not advance the LFSR, a reset
/// reloads the seed and kills what is in flight.
#[test]
fn encoder_bubbles_and_reset() {
    let mut r = Run::new(12345);
    let (p, k, l2) = (r.p, r.k, r.l2.clone());
    let mut ops = Operands::new(4);
    let mut rows = Vec::new();
    let mut want = Vec::new();
    let mut st = r.state;
    for i in 0..5000u64 {
        let (v, valid, rnd) = (ops.next(64), i % 3 != 1, ops.raw() & 1 == 1);
        push64(&mut rows, v);
        rows.extend([valid as u32, rnd as u32]);
        want.push(valid.then(|| {
            if rnd {
                st = lfsr_advance(st);
                encode_fx(&l2, &p, k, v, Rounding::Random(st as u16))
            } else {
                encode_fx(&l2, &p, k, v, Rounding::HalfUp)
            }
        }));
    }
    let out = r.pipe.run(&rows);
    for (o, w) in out.chunks(3).zip(&want) {
        match w {
            None => assert_eq!(o[1], 0),
            Some(a) => assert_eq!((o[0], o[1]), (*a, 1)),
        }
    }
    let m = &mut r.pipe.model;
    let (vv, valid, lfsr, seed) = (m.port("v_valid"), m.port("valid"), m.port("lfsr"), m.port("seed"));
    assert_eq!(m.get(lfsr) as u32, st);
    m.set(vv, 1);
    m.tick();
    m.set(seed, 77);
    m.reset(1);
    m.set(vv, 0);
    assert_eq!(m.get(lfsr), 77);
    for _ in 0..LATENCY + 1 {
        assert_eq!(m.get(valid), 0);
        m.tick();
    }
}
