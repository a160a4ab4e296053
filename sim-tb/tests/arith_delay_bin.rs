//! The generated SuMax delay-bin unit under Verilator against `lut::delay_bin`: the NIC
//! rule (`SuMaxGeometry::nic_default()`: octaves from 1 us, 8 cells) on every 16-bit delay,
//! every `base * 2^k` and its neighbours, every 32-bit edge value and 10M random 32-bit
//! delays; a second rule (4 bins per octave from 3 us, 16 cells: a constant multiply with
//! several partial products and a fractional bin width) on every 16-bit delay, the edges
//! and 1M random delays; one operation per clock.
mod common;
use common::*;
use smartnic_contract::geometry::DelayBinRule;
use smartnic_contract::lut::{delay_bin, log2_table, Log2Params};
use smartnic_hdl::arith::delay_bin::{nic_rule, DelayBin32, LATENCY};
use smartnic_hdl::flow;
use smartnic_sim_tb::pipe::CHUNK;
use smartnic_sim_tb::{Model, Pipe};
use std::time::Instant;

struct Run {
    pipe: Pipe,
    rule: DelayBinRule,
    cells: u8,
    l2: Vec<u32>,
    results: u64,
    chunks: u64,
    /// How many results landed in each bin.
    hist: Vec<u64>,
}

impl Run {
    fn new(mut m: Model, rule: DelayBinRule, cells: u8) -> Run {
        m.reset(2);
        let pipe = Pipe::new(m, &["delay", "delay_valid"], &["bin", "valid"], LATENCY);
        let l2 = log2_table(Log2Params::DEFAULT);
        Run { pipe, rule, cells, l2, results: 0, chunks: 0, hist: vec![0; 256] }
    }

    fn check(&mut self, delays: &[u64]) {
        for chunk in delays.chunks(CHUNK) {
            let rows: Vec<u32> = chunk.iter().flat_map(|&d| [d as u32, 1]).collect();
            let out = self.pipe.run(&rows);
            assert!(self.pipe.idle_rows().chunks(2).all(|r| r[1] == 0), "valid outside an operation");
            self.chunks += 1;
            for (o, &d) in out.chunks(2).zip(chunk) {
                let want = delay_bin(&self.rule, d, self.cells, Log2Params::DEFAULT, &self.l2);
                assert_eq!(
                    (o[0], o[1]),
                    (want as u32, 1),
                    "delay_bin({d}) {:?} cells {}",
                    self.rule,
                    self.cells
                );
                self.hist[want as usize] += 1;
                self.results += 1;
            }
        }
    }

    fn finish(&self, what: &str, secs: f64, ops: u64) {
        let cycles = self.pipe.model.cycles() - 2;
        let used: Vec<u64> = self.hist[..self.cells as usize].to_vec();
        eprintln!(
            "delay_bin {what} {:?} cells {}: {ops} ops in {secs:.1} s, {} results in {cycles} cycles ({} chunks, {} drain clocks each), per-bin counts {used:?}",
            self.rule,
            self.cells,
            self.results,
            self.chunks,
            LATENCY - 1
        );
        assert_eq!(self.results, ops);
        assert_eq!(cycles, ops + self.chunks * (LATENCY as u64 - 1), "one result per clock");
        assert!(used.iter().all(|&n| n > 0), "every bin is reached: {used:?}");
    }
}

/// Every 16-bit delay, `base * 2^k` and neighbours (and the `bins_per_octave` subdivisions
/// of each octave), 32-bit edges, then `random` random 32-bit delays.
fn delays(rule: &DelayBinRule, random: usize, seed: u64) -> Vec<u64> {
    let mut v: Vec<u64> = (0..1u64 << 16).collect();
    let base = (rule.base_ns as u64).max(1);
    for k in 0..32 {
        let b = base << k;
        v.extend([b.saturating_sub(1), b, b + 1]);
        for j in 1..rule.bins_per_octave.max(1) as i32 {
            let s = (b as f64 * 2f64.powf(j as f64 / rule.bins_per_octave as f64)) as u64;
            v.extend([s.saturating_sub(1), s, s + 1]);
        }
    }
    v.extend(edge_inputs(32));
    v.retain(|&d| d <= u32::MAX as u64);
    let mut ops = Operands::new(seed);
    v.extend((0..random).map(|_| ops.next(32)));
    v
}

#[test]
fn delay_bin_nic_rule_exhaustive_16_bit_edges_and_10m_random() {
    let t = Instant::now();
    let (rule, cells) = nic_rule();
    assert_eq!((rule.base_ns, rule.bins_per_octave, cells), (1000, 1, 8), "the NIC rule");
    let mut r = Run::new(block("delay_bin"), rule, cells);
    let d = delays(&rule, RANDOM_OPS, 0xDE1A);
    r.check(&d);
    r.finish("nic", t.elapsed().as_secs_f64(), d.len() as u64);
}

#[test]
fn delay_bin_quarter_octaves_exhaustive_16_bit_edges_and_1m_random() {
    let t = Instant::now();
    let (rule, cells) = (DelayBinRule { base_ns: 3000, bins_per_octave: 4 }, 16);
    let v = flow::to_verilog("delay_bin_q4", &mut DelayBin32::new(&rule, cells)).unwrap();
    let m = Model::of_verilog("delay_bin_q4", &v).unwrap_or_else(|e| panic!("{e}"));
    report_build(m.build());
    let mut r = Run::new(m, rule, cells);
    let d = delays(&rule, 1_000_000, 0xDE1B);
    r.check(&d);
    r.finish("quarter octaves", t.elapsed().as_secs_f64(), d.len() as u64);
}

/// Bubbles and reset: valid follows delay_valid, a reset kills what is in flight.
#[test]
fn delay_bin_bubbles_and_reset() {
    let (rule, cells) = nic_rule();
    let l2 = log2_table(Log2Params::DEFAULT);
    let mut m = block("delay_bin");
    m.reset(1);
    let mut p = Pipe::new(m, &["delay", "delay_valid"], &["bin", "valid"], LATENCY);
    let mut ops = Operands::new(11);
    let mut rows = Vec::new();
    let mut want = Vec::new();
    for i in 0..5000u64 {
        let (d, valid) = (ops.next(32), i % 3 != 1);
        rows.extend([d as u32, valid as u32]);
        want.push(valid.then(|| delay_bin(&rule, d, cells, Log2Params::DEFAULT, &l2) as u32));
    }
    let out = p.run(&rows);
    for (o, w) in out.chunks(2).zip(&want) {
        match w {
            None => assert_eq!(o[1], 0),
            Some(b) => assert_eq!((o[0], o[1]), (*b, 1)),
        }
    }
    let (dv, valid) = (p.model.port("delay_valid"), p.model.port("valid"));
    p.model.set(dv, 1);
    p.model.tick();
    p.model.reset(1);
    p.model.set(dv, 0);
    for _ in 0..LATENCY + 1 {
        assert_eq!(p.model.get(valid), 0);
        p.model.tick();
    }
}
