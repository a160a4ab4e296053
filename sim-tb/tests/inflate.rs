//! The inflated-latency check (`hdl::per_switch::inflate`) under Verilator against the
//! contract's rule (`per_switch::InflateRule::inflated`), one hop a clock: random operands
//! over the whole 32-bit range and near the decision boundary (`units * count` within 1 % of
//! `Delta_l * sum`, where the LUT logs decide), every edge case (count 0, hop 0, sum 0,
//! overflowed fields), and several thresholds (Delta_l = 5, 2.5, 1, 100).
use smartnic_contract::lut::{log2_table, Log2Params};
use smartnic_contract::per_switch::InflateRule;
use smartnic_hdl::flow;
use smartnic_hdl::per_switch::inflate::{InflateCheck, LATENCY};
mod common;
use smartnic_sim_tb::Model;
use std::collections::VecDeque;

/// One hop: units, count (None = overflowed), sum (None = overflowed).
type Case = (u64, Option<u64>, Option<u64>);

/// The shared seeded stream, with the operand shape this test wants.
struct Rng(common::Operands);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0.raw()
    }
    /// A value of a random bit length (so small and large operands are both common).
    fn wide(&mut self) -> u64 {
        let bits = self.next() % 33;
        if bits == 0 {
            0
        } else {
            self.next() & ((1u64 << bits) - 1)
        }
    }
}

fn cases(rng: &mut Rng, ratio_x256: u32, n: usize) -> Vec<Case> {
    let mut v: Vec<Case> = vec![
        (0, Some(5), Some(5)),
        (7, Some(0), Some(0)),
        (7, Some(3), Some(0)),
        (0, Some(3), Some(0)),
        (7, None, Some(3)),
        (7, Some(3), None),
        (u32::MAX as u64, Some(u32::MAX as u64), Some(1)),
        (1, Some(1), Some(u32::MAX as u64)),
    ];
    for i in 0..n {
        let c = if i % 3 == 0 {
            // Near the boundary: units ~ ratio * sum / count.
            let count = 1 + rng.next() % 5000;
            let sum = rng.next() % (1 << 24);
            let exact = (ratio_x256 as u128 * sum as u128 / (256 * count as u128)) as u64;
            let jitter = (exact / 100).max(1);
            let units = (exact + rng.next() % (2 * jitter + 1)).saturating_sub(jitter).min(u32::MAX as u64);
            (units, Some(count), Some(sum))
        } else {
            let f = |r: &mut Rng| if r.next().is_multiple_of(50) { None } else { Some(r.wide()) };
            (rng.wide(), f(rng), f(rng))
        };
        v.push(c);
    }
    v
}

#[test]
fn the_log_domain_check_is_the_contract_rule() {
    let v = flow::to_verilog("inflate_check", &mut InflateCheck::default()).unwrap();
    let mut m = Model::of_verilog("inflate_check", &v).unwrap_or_else(|e| panic!("{e}"));
    let p = Log2Params::DEFAULT;
    let table = log2_table(p);
    let ports = ["valid", "units", "count_inf", "count", "sum_inf", "sum", "threshold"].map(|n| m.port(n));
    let (done, hit) = (m.port("done"), m.port("hit"));
    let mut rng = Rng(common::Operands::new(0x2545_F491_4F6C_DD1D));
    let (mut checked, mut hits) = (0u64, 0u64);
    for ratio in [InflateRule::SKETCHINT_RATIO_X256, 640, 256, 25_600] {
        let rule = InflateRule::from_ratio_x256(&table, p, ratio);
        m.set_by_name("reset", 1);
        m.tick();
        m.set_by_name("reset", 0);
        m.set(ports[6], rule.threshold as u128);
        let cs = cases(&mut rng, ratio, 60_000);
        let mut want: VecDeque<bool> = VecDeque::new();
        let (mut clock, mut i) = (0usize, 0usize);
        for c in cs.iter().map(Some).chain(std::iter::repeat_n(None, LATENCY + 1)) {
            match c {
                Some(&(units, count, sum)) => {
                    m.set(ports[0], 1);
                    m.set(ports[1], units as u128);
                    m.set(ports[2], count.is_none() as u128);
                    m.set(ports[3], count.unwrap_or(u32::MAX as u64) as u128);
                    m.set(ports[4], sum.is_none() as u128);
                    m.set(ports[5], sum.unwrap_or(u32::MAX as u64) as u128);
                    want.push_back(rule.inflated(&table, p, units, count, sum));
                }
                None => m.set(ports[0], 0),
            }
            m.eval();
            if m.get(done) == 1 {
                assert!(clock >= LATENCY, "a verdict before the pipeline could fill");
                let w = want.pop_front().expect("a verdict for every hop");
                assert_eq!(m.get(hit) == 1, w, "ratio {ratio}/256, case {i}: {:?}", cs[i]);
                hits += w as u64;
                checked += 1;
                i += 1;
            }
            m.tick();
            clock += 1;
        }
        assert!(want.is_empty(), "every hop got its verdict, one a clock");
    }
    eprintln!("{checked} hops checked against the contract rule, {hits} inflated");
    assert!(hits > 10_000 && hits < checked - 10_000, "both verdicts are exercised");
}
