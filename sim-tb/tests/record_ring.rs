//! The record ring's writer (`hdl::readout::ring`) under Verilator against the contract's
//! ring encoder (`wire::record_ring::encode`): records of 1, 2, 3 and 7 words (the
//! inflated-latency record) from a buffer whose head comes and goes, a channel that holds
//! `tready` low at random, and the enable switched on and off under traffic. While the ring
//! is off the test pops records over the "register path" itself. Checked: the ring's words
//! are exactly the encoding of the records it popped, the two paths together took every
//! record once, in order, never splitting one; `tdata` holds while `tvalid` waits; `words`
//! counts the accepted words.
use smartnic_contract::wire::record_ring::encode;
use smartnic_hdl::flow;
use smartnic_hdl::per_switch::record_fifo::{DEPTH, REC_WORDS};
use smartnic_hdl::readout::ring::RingWriter;
mod common;
use smartnic_sim_tb::Model;
use std::collections::VecDeque;

/// Record `n` of `len` words: a header (kind 1 + n % 5, `len` words) and numbered words.
fn record(n: u32, len: u32) -> Vec<u32> {
    let header = (1 + n % 5) << 24 | len << 16 | (n & 0xFFFF);
    std::iter::once(header).chain((1..len).map(|i| n << 8 | i)).collect()
}

/// Words the record buffer holds (512 inflated-latency records).
const BUFFER_WORDS: usize = DEPTH * REC_WORDS;

fn bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_be_bytes()).collect()
}

#[test]
fn ring_words_are_the_contract_encoding_of_whole_records() {
    let v = flow::to_verilog("ring", &mut RingWriter::default()).unwrap();
    let mut m = Model::of_verilog("ring", &v).unwrap_or_else(|e| panic!("{e}"));
    let [enable, head, head_valid, head_first, pop, tdata, tvalid, tready, on, words] =
        ["enable", "head", "head_valid", "head_first", "pop", "tdata", "tvalid", "tready", "on", "words"]
            .map(|p| m.port(p));
    m.set_by_name("reset", 1);
    m.tick();
    m.set_by_name("reset", 0);
    let mut rng = common::Operands::new(0x005E_ED0F_2140);
    let lens = [7, 7, 1, 2, 3, 7, 7, 7];
    let mut buffer: VecDeque<u32> = VecDeque::new();
    let (mut made, mut by_ring, mut by_regs, mut sent) = (0u32, Vec::new(), Vec::new(), Vec::new());
    // Words of the head record still to pop, by either path (0: the head starts a record).
    let mut head_left = 0u32;
    let mut ring_popped: Vec<u32> = Vec::new();
    let mut held: Option<u64> = None;
    // Phases: (clocks, new-record %, head-visible %, tready %, enable).
    let phases = [
        (4000, 20, 100, 100, true),
        (4000, 60, 70, 40, true),
        (3000, 30, 100, 100, false),
        (6000, 50, 90, 20, true),
        (2000, 40, 100, 100, false),
        (8000, 10, 50, 90, true),
        (BUFFER_WORDS + 200, 0, 100, 100, true),
    ];
    // ENABLE as written: like the driver, the test sets it only with no record half popped
    // over the register path (RECORD_POP reads 0 once it is set).
    let mut en_now = false;
    for (clocks, new_pct, vis_pct, ready_pct, en) in phases {
        for _ in 0..clocks {
            if en != en_now && (!en || head_left == 0) {
                en_now = en;
            }
            m.set(enable, en_now as u128);
            // The record buffer holds 512 inflated-latency records; what finds it full is
            // dropped there, before the ring sees it.
            if rng.raw() % 100 < new_pct && buffer.len() + 7 <= BUFFER_WORDS {
                buffer.extend(record(made, lens[made as usize % lens.len()]));
                made += 1;
            }
            let visible = !buffer.is_empty() && rng.raw() % 100 < vis_pct;
            m.set(head_valid, visible as u128);
            m.set(head, buffer.front().copied().unwrap_or(0xDEAD_BEEF) as u128);
            m.set(head_first, (head_left == 0) as u128);
            let ready = rng.raw() % 100 < ready_pct;
            m.set(tready, ready as u128);
            m.eval();
            // The channel: tdata holds while tvalid waits.
            if m.get(tvalid) == 1 {
                let d = m.get(tdata) as u64;
                assert!(held.is_none_or(|h| h == d), "tdata changed while waiting");
                held = Some(d);
                if ready {
                    sent.push(d);
                    held = None;
                }
            } else {
                assert!(held.is_none(), "tvalid dropped before tready");
            }
            let ring_on = m.get(on) == 1;
            let asks = m.get(pop) == 1;
            assert!(!asks || ring_on, "the ring pops only while on");
            let taken = if asks && visible {
                ring_popped.push(buffer[0]);
                true
            } else if !ring_on && !en_now && visible && !asks && rng.raw() % 100 < 60 {
                // The register path pops a word at a time (RECORD_POP reads 0 while the ring
                // is on or enabled).
                by_regs.push(buffer[0]);
                true
            } else {
                false
            };
            if taken {
                let w = buffer.pop_front().unwrap();
                if head_left == 0 {
                    head_left = (w >> 16) & 0xFF;
                }
                head_left -= 1;
            }
            m.tick();
        }
        assert_eq!(m.get(words) as usize, sent.len(), "words counted");
    }
    for _ in 0..64 {
        m.set(tready, 1);
        m.set(head_valid, 0);
        m.eval();
        if m.get(tvalid) == 1 {
            sent.push(m.get(tdata) as u64);
        }
        m.tick();
    }
    assert!(buffer.is_empty(), "{} words left in the buffer", buffer.len());
    by_ring.extend(encode(&bytes(&ring_popped)).expect("the ring popped whole records"));
    assert_eq!(sent, by_ring, "ring words = the contract's encoding of the records the ring popped");
    // Every record once, in order, over the two paths: rebuild the sequence by record number.
    let mut all: Vec<u32> = ring_popped.iter().chain(&by_regs).copied().collect();
    let mut want: Vec<u32> = (0..made).flat_map(|n| record(n, lens[n as usize % lens.len()])).collect();
    all.sort_unstable();
    want.sort_unstable();
    assert_eq!(all, want, "every record taken exactly once");
    assert!(by_regs.len() > 1000 && ring_popped.len() > 10_000, "{} / {}", by_regs.len(), ring_popped.len());
    eprintln!(
        "{made} records: {} words by the ring in {} channel words, {} by the register path",
        ring_popped.len(),
        sent.len(),
        by_regs.len()
    );
}
