//! The record buffer (`hdl::per_switch::record_fifo`) under Verilator against a queue model:
//! every stored record comes out word by word in order, a record that finds the buffer full
//! is counted and never stored, `words` is exact every clock. Traffic: bursts of a record
//! every clock until full (drops), slow and fast readers, pushes and pops in the same clock,
//! the empty buffer written and read back to back.
use smartnic_hdl::flow;
use smartnic_hdl::per_switch::record_fifo::{RecordFifo, DEPTH, REC_WORDS};
mod common;
use smartnic_sim_tb::Model;
use std::collections::VecDeque;

/// The shared seeded stream.
struct Rng(common::Operands);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0.raw()
    }
}

#[test]
fn records_out_in_order_and_drops_counted() {
    let v = flow::to_verilog("record_fifo", &mut RecordFifo::default()).unwrap();
    let mut m = Model::of_verilog("record_fifo", &v).unwrap_or_else(|e| panic!("{e}"));
    let (in_valid, rec, pop) = (m.port("in_valid"), m.port("rec"), m.port("pop"));
    let (head, head_valid, words, dropped) =
        (m.port("head"), m.port("head_valid"), m.port("words"), m.port("dropped"));
    m.set_by_name("reset", 1);
    m.tick();
    m.set_by_name("reset", 0);
    let mut rng = Rng(common::Operands::new(0x1234_5678_9ABC_DEF1));
    // Model: stored words in order, records stored, drops.
    let mut queue: VecDeque<u32> = VecDeque::new();
    let (mut drops, mut serial, mut popped) = (0u64, 0u32, 0u64);
    // Phases: (clocks, push probability %, pop probability %).
    let phases = [
        (3000, 100, 0),
        (6000, 100, 50),
        (20_000, 30, 100),
        (20_000, 90, 30),
        (30_000, 5, 100),
        (5000, 100, 100),
    ];
    for (clocks, push_pct, pop_pct) in phases {
        for _ in 0..clocks {
            // Outputs of this clock (before the edge): what the host sees.
            let hv = m.get(head_valid) == 1;
            // Room is judged on the records stored at the start of the clock.
            let stored = queue.len().div_ceil(REC_WORDS);
            assert_eq!(m.get(words) as usize, queue.len(), "words after {serial} records");
            let do_pop = hv && rng.next() % 100 < pop_pct;
            if do_pop {
                let w = m.get(head) as u32;
                assert_eq!(Some(w), queue.pop_front(), "word {popped}");
                popped += 1;
            }
            m.set(pop, do_pop as u128);
            let do_push = rng.next() % 100 < push_pct;
            m.set(in_valid, do_push as u128);
            if do_push {
                // Record `serial`: word i = serial << 8 | i (word 0 in the top bits).
                let ws: Vec<u32> = (0..REC_WORDS as u32).map(|i| serial << 8 | i).collect();
                // The port's words are least significant first: word 0 goes last.
                let port: Vec<u32> = ws.iter().rev().copied().collect();
                m.set_words(rec, &port);
                if stored < DEPTH {
                    queue.extend(ws);
                } else {
                    drops += 1;
                }
                serial += 1;
            }
            m.tick();
        }
    }
    assert_eq!(m.get(dropped) as u64, drops, "drops counted");
    assert!(drops > 1000 && popped > 40_000, "{drops} drops, {popped} words read");
    eprintln!("{serial} records offered, {drops} dropped, {popped} words read");
}
