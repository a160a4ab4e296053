//! The readout-stream engine (`hdl::readout::stream`) under Verilator against the
//! contract's encoder: the testbench answers the engine's window reads from per-window
//! memories (a fixed read latency, answers in order, as the core's windows do) and takes
//! the stream under several `tready` patterns; every stream must equal
//! `contract::wire::readout::encode` of the same memories word for word, parse back to the
//! same windows, mark only its trailer with `tlast`, and report its words, clocks and
//! stalls. Windows: every packing shape of the NIC (8/16/32-bit arrays, SuMax's 11 cells,
//! a latency bucket's two cells, a table slot's 12 words) plus odd widths that straddle
//! words, with counters at zero, at their maximum and random.
use smartnic_contract::packing::mask;
use smartnic_contract::wire::readout::{self, StreamHeader, WindowSpec};
use smartnic_hdl::flow;
use smartnic_hdl::readout::stream::StreamEngine;
use smartnic_sim_tb::Model;
use std::collections::VecDeque;
mod common;

const IW: usize = 12;

/// A sink's `tready` as a function of the clock.
type Ready = Box<dyn Fn(u64) -> bool>;

fn specs() -> Vec<WindowSpec> {
    let spec = |words: u64, widths: &[u8]| WindowSpec { words, widths: widths.to_vec() };
    vec![
        spec(200, &[8]),
        spec(97, &[16]),
        spec(33, &[32]),
        spec(11 * 9, &[32, 16, 16, 16, 16, 16, 16, 16, 16, 32, 32]),
        spec(2 * 40, &[8, 24]),
        spec(12 * 5, &readout::slot_word_widths()),
        spec(301, &[5]),
        spec(3 * 17, &[7, 31, 1]),
        spec(1, &[13]),
    ]
}

/// Window contents: a mix of zeros, all-ones and random counters.
fn contents(specs: &[WindowSpec], rng: &mut common::Operands) -> Vec<Vec<u32>> {
    specs
        .iter()
        .map(|s| {
            (0..s.words as usize)
                .map(|k| {
                    let w = s.widths[k % s.widths.len()];
                    let max = mask(w) as u32;
                    match rng.raw() % 4 {
                        0 => 0,
                        1 => max,
                        _ => rng.raw() as u32 & max,
                    }
                })
                .collect()
        })
        .collect()
}

struct Ports {
    start: smartnic_sim_tb::PortId,
    req: smartnic_sim_tb::PortId,
    sel: smartnic_sim_tb::PortId,
    index: smartnic_sim_tb::PortId,
    ack: smartnic_sim_tb::PortId,
    data: smartnic_sim_tb::PortId,
    tdata: smartnic_sim_tb::PortId,
    tvalid: smartnic_sim_tb::PortId,
    tlast: smartnic_sim_tb::PortId,
    tready: smartnic_sim_tb::PortId,
    busy: smartnic_sim_tb::PortId,
}

/// What one stream looked like from outside.
struct Run {
    words: Vec<u64>,
    lasts: Vec<usize>,
    stalls: u64,
    clocks: u64,
}

/// Runs one stream: `latency` clocks from request to answer, `ready(clock)` the sink.
fn run_stream(
    m: &mut Model,
    p: &Ports,
    mem: &[Vec<u32>],
    latency: usize,
    ready: &dyn Fn(u64) -> bool,
) -> Run {
    let mut pending: VecDeque<(u64, u32)> = VecDeque::new();
    let (mut words, mut lasts, mut stalls) = (Vec::new(), Vec::new(), 0u64);
    m.set(p.start, 1);
    m.tick();
    m.set(p.start, 0);
    let mut clock = 0u64;
    loop {
        clock += 1;
        assert!(clock < 2_000_000, "stream never ended");
        // Answers due this clock.
        match pending.front() {
            Some(&(due, v)) if due == clock => {
                pending.pop_front();
                m.set(p.ack, 1);
                m.set(p.data, v as u128);
            }
            _ => {
                m.set(p.ack, 0);
                m.set(p.data, 0xDEAD_BEEF);
            }
        }
        let r = ready(clock);
        m.set(p.tready, r as u128);
        m.eval();
        if m.get(p.req) == 1 {
            let (w, k) = (m.get(p.sel) as usize, m.get(p.index) as usize);
            pending.push_back((clock + latency as u64, mem[w][k]));
        }
        if m.get(p.tvalid) == 1 {
            if r {
                if m.get(p.tlast) == 1 {
                    lasts.push(words.len());
                }
                words.push(m.get(p.tdata) as u64);
            } else {
                stalls += 1;
            }
        }
        let busy = m.get(p.busy) == 1;
        m.tick();
        if !busy {
            break;
        }
    }
    assert!(pending.is_empty(), "answers left over");
    Run { words, lasts, stalls, clocks: clock }
}

#[test]
fn streams_equal_the_contract_encoder_under_backpressure() {
    let specs = specs();
    let mut engine = StreamEngine::<IW>::new(&specs).unwrap();
    let v = flow::to_verilog("readout_stream", &mut engine).unwrap();
    let mut m = Model::of_verilog("readout_stream", &v).unwrap_or_else(|e| panic!("{e}"));
    let p = Ports {
        start: m.port("start"),
        req: m.port("req"),
        sel: m.port("sel"),
        index: m.port("index"),
        ack: m.port("ack"),
        data: m.port("data"),
        tdata: m.port("tdata"),
        tvalid: m.port("tvalid"),
        tlast: m.port("tlast"),
        tready: m.port("tready"),
        busy: m.port("busy"),
    };
    m.reset(2);
    let mut rng = common::Operands::new(0x5EED_0F57_2EA3);
    let patterns: Vec<(&str, Ready)> = vec![
        ("always ready", Box::new(|_| true)),
        ("ready 1 in 2", Box::new(|c| c % 2 == 0)),
        ("ready 1 in 7", Box::new(|c| c % 7 == 3)),
        ("long stalls", Box::new(|c| (c / 50) % 3 == 0)),
        ("pseudo-random", Box::new(|c| (c.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 61) & 1 == 1)),
    ];
    let mut n = 0u32;
    for latency in [1usize, 3, 7] {
        for (name, ready) in &patterns {
            let mem = contents(&specs, &mut rng);
            let h = StreamHeader {
                epoch: 1000 + n,
                sequence: 2 * n + 1,
                table_misses: n * 3,
                idle_packets: (rng.raw() >> 20) | 1 << 40,
            };
            m.set_by_name("epoch", h.epoch as u128);
            m.set_by_name("seq_no", h.sequence as u128);
            m.set_by_name("table_misses", h.table_misses as u128);
            m.set_by_name("idle_packets", h.idle_packets as u128);
            let run = run_stream(&mut m, &p, &mem, latency, ready.as_ref());
            let pairs: Vec<(&WindowSpec, &[u32])> =
                specs.iter().zip(&mem).map(|(s, c)| (s, c.as_slice())).collect();
            let want = readout::encode(&h, &pairs, h.sequence).unwrap();
            let first = run.words.iter().zip(&want).position(|(a, b)| a != b);
            assert!(
                first.is_none() && run.words.len() == want.len(),
                "latency {latency}, {name}: {} words, want {}; first difference at {first:?}",
                run.words.len(),
                want.len()
            );
            assert_eq!(run.lasts, vec![want.len() - 1], "tlast on the trailer only");
            let (parsed, len) = readout::parse(&run.words, &specs).unwrap();
            assert_eq!((parsed.windows, len), (mem, want.len()));
            n += 1;
            assert_eq!(m.get_by_name("streams"), n as u128);
            assert_eq!(m.get_by_name("last_words"), want.len() as u128);
            assert_eq!(m.get_by_name("last_stalls"), run.stalls as u128, "{name}");
            let clocks = m.get_by_name("last_clocks") as u64;
            assert!(clocks + 2 >= run.clocks && clocks <= run.clocks + 2, "{clocks} vs {}", run.clocks);
            if *name == "always ready" {
                let reads: u64 = specs.iter().map(|s| s.words).sum();
                eprintln!("latency {latency}: {} words, {reads} window reads in {clocks} clocks", want.len());
                assert_eq!(run.stalls, 0);
                // One read a clock, plus a bounded cost per window (chunk, flush, the drain
                // of the read latency).
                assert!(clocks <= reads + specs.len() as u64 * (latency as u64 + 4) + 16, "{clocks} clocks");
            }
        }
    }
}

#[test]
fn start_while_busy_is_ignored_and_reset_idles() {
    let specs = vec![WindowSpec { words: 500, widths: vec![32] }];
    let mut engine = StreamEngine::<IW>::new(&specs).unwrap();
    let v = flow::to_verilog("readout_stream_one", &mut engine).unwrap();
    let mut m = Model::of_verilog("readout_stream_one", &v).unwrap_or_else(|e| panic!("{e}"));
    m.reset(2);
    m.set_by_name("tready", 0);
    m.set_by_name("start", 1);
    m.tick();
    assert_eq!(m.get_by_name("busy"), 1);
    // Starts while busy (and a sink that takes nothing) change nothing.
    for _ in 0..200 {
        m.tick();
    }
    m.set_by_name("start", 0);
    assert_eq!(m.get_by_name("busy"), 1);
    assert_eq!(m.get_by_name("streams"), 0);
    m.set_by_name("reset", 1);
    m.tick();
    m.set_by_name("reset", 0);
    m.set_by_name("tready", 1);
    // The purge presents nothing and ends with the FIFO empty.
    for _ in 0..40 {
        assert_eq!(m.get_by_name("tvalid"), 0);
        m.tick();
    }
    assert_eq!(m.get_by_name("busy"), 0);
    assert_eq!(m.get_by_name("streams"), 0);
    assert!(StreamEngine::<IW>::new(&[WindowSpec { words: 1 << IW, widths: vec![8] }]).is_err());
    assert!(StreamEngine::<IW>::new(&[]).is_err());
}
