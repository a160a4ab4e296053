//! The readout-stream engine (`hdl::readout::stream`) under Verilator against the
//! contract's encoder: the testbench answers every lane's reads from its window's memory
//! (each lane its own fixed read latency, answers in order, as the core's RAMs do), lets
//! lanes read only on some clocks, and takes the stream under several `tready` patterns.
//! Every stream must parse back to the same windows, hold the same chunks as
//! `contract::wire::readout::encode` of the same memories word for word (the lanes
//! interleave them, so the chunks are compared window by window), be as long as
//! `stream_words`, keep every beat whole but the last, mark only the last with `tlast`,
//! and report its words, clocks and stalls. Windows: every packing shape of the NIC
//! (8/16/32-bit arrays, SuMax's 11 cells, a latency bucket's two cells read as one, a table
//! slot's 12 words) plus odd widths that straddle words, with counters at zero, at their
//! maximum and random.
use smartnic_contract::packing::mask;
use smartnic_contract::wire::readout::{self, StreamHeader, WindowSpec, HEADER_WORDS};
use smartnic_hdl::flow;
use smartnic_hdl::readout::lane::LaneRead;
use smartnic_hdl::readout::stream::StreamEngine;
use smartnic_sim_tb::{Model, PortId};
use std::collections::VecDeque;
mod common;

const NL: usize = 9;

/// A sink's `tready` (or a lane's `go`) as a function of the clock.
type Ready = Box<dyn Fn(u64) -> bool>;

fn specs() -> Vec<WindowSpec> {
    let spec = |words: u64, widths: &[u8]| WindowSpec { words, widths: widths.to_vec() };
    vec![
        spec(2000, &[8]),
        spec(970, &[16]),
        spec(33, &[32]),
        spec(11 * 90, &[32, 16, 16, 16, 16, 16, 16, 16, 16, 32, 32]),
        spec(2 * 400, &[8, 24]),
        spec(12 * 50, &readout::slot_word_widths()),
        spec(301, &[5]),
        spec(3 * 17, &[7, 31, 1]),
        spec(1, &[13]),
    ]
}

/// How each window is read: window 4 (a latency bucket) a row at a time, the others a word
/// at a time; latencies from 1 to 8.
fn reads(specs: &[WindowSpec]) -> Vec<LaneRead> {
    specs
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let latency = [2, 2, 2, 3, 2, 2, 1, 8, 5][i];
            if i == 4 {
                LaneRead::per_row(s, latency)
            } else {
                LaneRead::per_word(s, latency)
            }
        })
        .collect()
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

/// The answer to a read of cell `col` of row `row` of window `w`: the counter word, or for
/// a row read the row's words packed into one cell.
fn answer(spec: &WindowSpec, read: &LaneRead, mem: &[u32], row: usize, col: usize) -> u64 {
    if read.widths.len() == spec.widths.len() {
        return mem[row * spec.widths.len() + col] as u64;
    }
    let (mut v, mut at) = (0u64, 0);
    for (k, &w) in spec.widths.iter().enumerate() {
        v |= (mem[row * spec.widths.len() + k] as u64) << at;
        at += w;
    }
    v
}

struct Ports {
    start: PortId,
    go: Vec<PortId>,
    room: Vec<PortId>,
    rd: Vec<PortId>,
    row: Vec<PortId>,
    col: Vec<PortId>,
    data: Vec<PortId>,
    tdata: PortId,
    tkeep: PortId,
    tvalid: PortId,
    tlast: PortId,
    tready: PortId,
    busy: PortId,
}

impl Ports {
    fn of(m: &Model, lanes: usize) -> Self {
        let each = |n: &str| (0..lanes).map(|i| m.port(&format!("{n}${i}"))).collect::<Vec<_>>();
        Ports {
            start: m.port("start"),
            go: each("go"),
            room: each("room"),
            rd: each("rd"),
            row: each("row"),
            col: each("col"),
            data: each("data"),
            tdata: m.port("tdata"),
            tkeep: m.port("tkeep"),
            tvalid: m.port("tvalid"),
            tlast: m.port("tlast"),
            tready: m.port("tready"),
            busy: m.port("busy"),
        }
    }
}

/// What one stream looked like from outside.
struct Run {
    words: Vec<u64>,
    lasts: Vec<usize>,
    stalls: u64,
    clocks: u64,
    reads: u64,
}

/// Runs one stream: each lane's reads answered after its latency, `go(clock)` whether the
/// lanes may read (lanes 3 and 4 only together, like a lockstep group), `ready(clock)` the
/// sink.
fn run_stream(
    m: &mut Model,
    p: &Ports,
    win: (&[WindowSpec], &[LaneRead], &[Vec<u32>]),
    go: &dyn Fn(u64) -> bool,
    ready: &dyn Fn(u64) -> bool,
) -> Run {
    let (specs, reads, mem) = win;
    let n = specs.len();
    let mut pending: Vec<VecDeque<(u64, u64)>> = vec![VecDeque::new(); n];
    let (mut words, mut lasts, mut stalls, mut nreads) = (Vec::new(), Vec::new(), 0u64, 0u64);
    m.set(p.start, 1);
    m.tick();
    m.set(p.start, 0);
    let mut clock = 0u64;
    loop {
        clock += 1;
        assert!(clock < 2_000_000, "stream never ended");
        for (i, q) in pending.iter_mut().enumerate() {
            match q.front() {
                Some(&(due, v)) if due == clock => {
                    q.pop_front();
                    m.set_words(p.data[i], &[v as u32, (v >> 32) as u32]);
                }
                _ => m.set_words(p.data[i], &[0xDEAD_BEEF, 0xFEED_F00D]),
            }
        }
        let r = ready(clock);
        m.set(p.tready, r as u128);
        let g = go(clock);
        let rooms: Vec<bool> = (0..n).map(|i| m.get(p.room[i]) == 1).collect();
        for i in 0..n {
            let allowed = if i == 3 || i == 4 { rooms[3] && rooms[4] } else { rooms[i] };
            m.set(p.go[i], (allowed && g) as u128);
        }
        m.eval();
        for i in 0..n {
            if m.get(p.rd[i]) == 1 {
                let (row, col) = (m.get(p.row[i]) as usize, m.get(p.col[i]) as usize);
                let v = answer(&specs[i], &reads[i], &mem[i], row, col);
                pending[i].push_back((clock + reads[i].latency as u64, v));
                nreads += 1;
            }
        }
        if m.get(p.tvalid) == 1 {
            if r {
                let last = m.get(p.tlast) == 1;
                let keep = m.get(p.tkeep) as u32;
                let d = m.get_words(p.tdata).to_vec();
                let kept = if last { 2 } else { 4 };
                assert_eq!(keep, if last { 0xFFFF } else { u32::MAX }, "tkeep of beat {}", words.len() / 4);
                if last {
                    lasts.push(words.len() + 1);
                }
                words.extend((0..kept).map(|k| d[2 * k] as u64 | (d[2 * k + 1] as u64) << 32));
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
    assert!(pending.iter().all(VecDeque::is_empty), "answers left over");
    Run { words, lasts, stalls, clocks: clock, reads: nreads }
}

/// The stream with its chunks regrouped window by window (each window's in its order),
/// without the trailer: what `encode` writes for the same contents.
fn regrouped(w: &[u64], windows: usize) -> Vec<u64> {
    let mut per: Vec<Vec<u64>> = vec![Vec::new(); windows];
    let mut at = HEADER_WORDS;
    while w[at] as u8 != readout::END_MARK {
        let n = (w[at] >> 40) as usize;
        per[w[at] as u8 as usize].extend_from_slice(&w[at..at + 1 + n]);
        at += 1 + n;
    }
    let mut out = w[..HEADER_WORDS].to_vec();
    out.extend(per.concat());
    out.push(w[at]);
    out
}

#[test]
fn streams_hold_the_contract_encoders_chunks_under_backpressure() {
    let specs = specs();
    let reads = reads(&specs);
    let mut engine = StreamEngine::<NL>::new(&specs, &reads).unwrap();
    let v = flow::to_verilog("readout_stream", &mut engine).unwrap();
    let mut m = Model::of_verilog("readout_stream", &v).unwrap_or_else(|e| panic!("{e}"));
    let p = Ports::of(&m, NL);
    m.reset(2);
    let mut rng = common::Operands::new(0x5EED_0F57_2EA3);
    let patterns: Vec<(&str, Ready)> = vec![
        ("always ready", Box::new(|_| true)),
        ("ready 1 in 2", Box::new(|c| c % 2 == 0)),
        ("ready 1 in 7", Box::new(|c| c % 7 == 3)),
        ("long stalls", Box::new(|c| (c / 50) % 3 == 0)),
        ("pseudo-random", Box::new(|c| (c.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 61) & 1 == 1)),
    ];
    let gos: Vec<(&str, Ready)> = vec![
        ("reads always", Box::new(|_| true)),
        ("reads 2 in 3", Box::new(|c| c % 3 != 1)),
        ("reads in bursts", Box::new(|c| (c.wrapping_mul(0xD1B5_4A32_D192_ED03) >> 62) != 0)),
    ];
    let cells: u64 = reads.iter().map(|r| r.rows * r.widths.len() as u64).sum();
    let slowest = reads.iter().map(|r| r.rows * r.widths.len() as u64).max().unwrap();
    let mut n = 0u32;
    for (gname, go) in &gos {
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
            let run = run_stream(&mut m, &p, (&specs, &reads, &mem), go.as_ref(), ready.as_ref());
            let what = format!("{gname}, {name}");
            let (parsed, len) = readout::parse(&run.words, &specs).unwrap_or_else(|e| {
                panic!("{what}: {e}; stream starts {:x?}", &run.words[..run.words.len().min(24)])
            });
            assert_eq!((parsed.windows, len), (mem.clone(), run.words.len()), "{what}");
            assert_eq!(len, readout::stream_words(&specs), "{what}");
            assert_eq!(run.reads, cells, "{what}: every cell read once");
            let pairs: Vec<(&WindowSpec, &[u32])> =
                specs.iter().zip(&mem).map(|(s, c)| (s, c.as_slice())).collect();
            let want = readout::encode(&h, &pairs, h.sequence).unwrap();
            let got = regrouped(&run.words, specs.len());
            let first = got.iter().zip(&want).position(|(a, b)| a != b);
            assert!(first.is_none() && got.len() + 1 == want.len(), "{what}: first difference at {first:?}");
            assert_eq!(run.lasts, vec![len - 1], "{what}: tlast on the last beat only");
            n += 1;
            assert_eq!(m.get_by_name("streams"), n as u128);
            assert_eq!(m.get_by_name("last_words"), len as u128);
            assert_eq!(m.get_by_name("last_stalls"), run.stalls as u128, "{what}");
            let clocks = m.get_by_name("last_clocks") as u64;
            assert!(clocks + 2 >= run.clocks && clocks <= run.clocks + 2, "{clocks} vs {}", run.clocks);
            if *name == "always ready" && *gname == "reads always" {
                eprintln!(
                    "{len} words ({} beats), {cells} cells in {NL} lanes (slowest {slowest}) in {clocks} clocks",
                    len.div_ceil(4)
                );
                assert_eq!(run.stalls, 0);
                // Lanes read in parallel: the slowest lane's reads, or the beats, whichever
                // is more, plus a bounded cost (lane pick, latency, the last chunk).
                let bound = slowest.max(len.div_ceil(4) as u64 * 17 / 16) + 150;
                assert!(clocks <= bound, "{clocks} clocks, bound {bound}");
            }
        }
    }
}

#[test]
fn start_while_busy_is_ignored_and_reset_idles() {
    let specs = vec![WindowSpec { words: 500, widths: vec![32] }];
    let reads = vec![LaneRead::per_word(&specs[0], 2)];
    let mut engine = StreamEngine::<1>::new(&specs, &reads).unwrap();
    let v = flow::to_verilog("readout_stream_one", &mut engine).unwrap();
    let mut m = Model::of_verilog("readout_stream_one", &v).unwrap_or_else(|e| panic!("{e}"));
    m.reset(2);
    m.set_by_name("go$0", 1);
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
    let long = WindowSpec { words: 1 << 21, widths: vec![8] };
    assert!(StreamEngine::<1>::new(std::slice::from_ref(&long), &[LaneRead::per_word(&long, 2)]).is_err());
    assert!(StreamEngine::<1>::new(&specs, &[LaneRead::per_word(&specs[0], 9)]).is_err(), "latency 9");
    assert!(StreamEngine::<2>::new(&specs, &reads).is_err(), "one window for two lanes");
    let odd = WindowSpec { words: 6, widths: vec![8, 24] };
    let short = LaneRead { rows: 2, widths: vec![32], latency: 2 };
    assert!(StreamEngine::<1>::new(&[odd], &[short]).is_err(), "reads that miss the window's bits");
}
