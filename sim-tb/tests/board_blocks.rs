//! The board's small blocks under Verilator: the card-to-host upsizer
//! (`hdl::board::axis_upsize`) and the ports' ns time (`hdl::board::ns_clock`).
use smartnic_hdl::board::axis_upsize::AxisUpsize;
use smartnic_hdl::board::ns_clock::{NsClock, MAC_CLOCK_PS};
use smartnic_hdl::flow;
use smartnic_sim_tb::simbar::Rng;
use smartnic_sim_tb::Model;

/// Random words with random `tlast` in, random `tready` out: the beats carry exactly the
/// words in order, four a beat or fewer up to a `tlast`, `tkeep` over the words a beat
/// holds and zeros past them, and a word goes through every clock while the channel takes.
#[test]
fn the_upsizer_packs_every_word_in_order() {
    let v = flow::to_verilog("axis_upsize", &mut AxisUpsize::default()).unwrap();
    let mut m = Model::of_verilog("axis_upsize", &v).unwrap_or_else(|e| panic!("{e}"));
    let (s_tdata, s_tvalid, s_tlast, s_tready) =
        (m.port("s_tdata"), m.port("s_tvalid"), m.port("s_tlast"), m.port("s_tready"));
    let (m_tdata, m_tkeep, m_tvalid, m_tlast, m_tready) =
        (m.port("m_tdata"), m.port("m_tkeep"), m.port("m_tvalid"), m.port("m_tlast"), m.port("m_tready"));
    m.set_by_name("reset", 1);
    m.tick();
    m.set_by_name("reset", 0);
    let mut r = Rng::new(0xA515);
    // Words sent and words out of the beats: (word, tlast on it).
    let mut sent: Vec<(u64, bool)> = Vec::new();
    let mut got: Vec<(u64, bool)> = Vec::new();
    let (mut next, mut beats, mut full_rate_clocks) = (1u64, 0u64, 0u64);
    let words = 40_000;
    for clock in 0..400_000u64 {
        // Phases: the channel always takes (full rate), or stalls at random.
        let always = clock % 20_000 < 10_000;
        let valid = sent.len() < words && (always || r.chance(80));
        // The last word ends the stream (words short of a beat wait for more or a tlast).
        let last = r.chance(7) || sent.len() + 1 == words;
        m.set(s_tdata, next as u128);
        m.set(s_tvalid, valid as u128);
        m.set(s_tlast, last as u128);
        m.set(m_tready, (always || r.chance(50)) as u128);
        m.eval();
        if valid && m.get(s_tready) == 1 {
            sent.push((next, last));
            next = next.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            full_rate_clocks += always as u64;
        }
        if m.get(m_tvalid) == 1 && m.get(m_tready) == 1 {
            let w = m.get_words(m_tdata).to_vec();
            let keep = m.get(m_tkeep) as u32;
            let n = (keep.count_ones() / 8) as usize;
            assert!(n >= 1 && keep == ((1u64 << (8 * n)) - 1) as u32, "tkeep {keep:#x}");
            let is_last = m.get(m_tlast) == 1;
            for k in 0..4 {
                let word = w[2 * k] as u64 | (w[2 * k + 1] as u64) << 32;
                if k < n {
                    got.push((word, is_last && k + 1 == n));
                } else {
                    assert_eq!(word, 0, "beat {beats}: lane {k} past the beat's words");
                }
            }
            assert!(n == 4 || is_last, "beat {beats}: {n} words without tlast");
            beats += 1;
        }
        m.tick();
        if sent.len() == words && got.len() == words {
            break;
        }
    }
    assert_eq!(got.len(), words, "every word came out");
    assert_eq!(got, sent, "the words, in order, tlast on its word");
    // At full rate the upsizer took a word every clock it was offered one.
    assert!(full_rate_clocks > 20_000, "{full_rate_clocks}");
    eprintln!("{words} words in {beats} beats");
}

/// The ns count after `n` clocks is the time `n` clocks of 6.4 ns take, to the ns below.
#[test]
fn the_ns_clock_keeps_true_time() {
    let v = flow::to_verilog("ns_clock", &mut NsClock::default()).unwrap();
    let mut m = Model::of_verilog("ns_clock", &v).unwrap_or_else(|e| panic!("{e}"));
    let now = m.port("now");
    m.set_by_name("reset", 1);
    m.tick();
    m.set_by_name("reset", 0);
    for n in 0..200_000u64 {
        m.eval();
        assert_eq!(m.get(now) as u64, n * MAC_CLOCK_PS / 1000, "after {n} clocks");
        m.tick();
    }
}
