//! The readout stream end to end: the NIC core's stream engine writes the idle bank to the
//! card-to-host channel (the simulated host buffer) and the driver's streamed readout
//! (`read_snapshot_streamed`) builds the snapshot from it, while frames keep arriving. Every
//! epoch is checked against the software model exactly as the register readouts are (every
//! Tower counter, every SuMax cell, the latency tower, the key table, the drained records,
//! IDLE_PACKETS), through a channel that takes a word every clock, one that takes a word
//! every third clock (the engine stalls, nothing is lost), and readouts that alternate with
//! register readouts on the same run. The records come from the record ring for the first
//! four epochs (none dropped, however long the epoch) and over the BAR after that (the
//! driver turns the ring off between two records).
mod core_check;

use core_check::{generated_trace, CoreRun, Plan};
use smartnic_contract::geometry::InsertMode;
use smartnic_contract::wire::readout::stream_words;
use smartnic_contract::wire::record::{INFLATED_LEN, WORD};
use smartnic_contract::wire::record_ring::words_for;

/// Ring words of `n` inflated-latency records.
fn ring_words_for(n: usize) -> u64 {
    words_for(std::iter::repeat_n(INFLATED_LEN / WORD, n))
}
use smartnic_driver::readout::{min_reads, stream::specs};

#[test]
fn streamed_readouts_equal_the_software_model_under_traffic() {
    let mut run = CoreRun::new(InsertMode::Acu);
    assert!(run.dev.stream.is_some(), "the core has the readout-stream block");
    let want_words = stream_words(&specs(&run.dev).unwrap()) as u64;
    let mut frames = generated_trace(23, 70_000).into_iter();
    let plan = Plan { every: 12_000, swap_burst: 2_000, readout_gap: 600, snapshots: Some(2) };
    run.register_every = None;
    run.use_ring(true);
    run.feed(&mut frames, plan);
    // A channel that takes one word in three: the engine waits, the stream is the same.
    run.nic.set_c2h_every(3);
    run.feed(&mut frames, plan);
    run.nic.set_c2h_every(1);
    let by_ring = run.drained.len();
    assert_eq!(run.records_dropped, 0, "no record dropped while the ring ran");
    assert!(by_ring > 1000, "{by_ring} records by the ring");
    assert_eq!(run.ring_words, ring_words_for(by_ring), "ring words: 4 per 7-word record");
    // Streamed and register readouts in turn; records over the BAR.
    run.use_ring(false);
    run.register_every = Some(2);
    run.feed(&mut frames, Plan { snapshots: None, ..plan });
    let s = run.finish("streamed readouts", plan);
    assert!(s.epochs >= 6, "{} epochs", s.epochs);
    let streamed = run.streams.len();
    assert!(streamed >= 5 && streamed < s.epochs, "{streamed} of {} readouts streamed", s.epochs);
    let windows = specs(&run.dev).unwrap();
    let reads: u64 = windows.iter().map(|w| w.words).sum();
    for (i, st) in run.streams.iter().enumerate() {
        assert_eq!(st.words, want_words, "stream {i}: every stream has the map's length");
        let slow = (2..4).contains(&i);
        assert_eq!(st.stalls > 0, slow, "stream {i}: stalls only on the slow channel ({st:?})");
        // One window read a clock (or, on the slow channel, one word in three clocks,
        // whichever is slower in each window) and a few clocks per window.
        let pace = if slow { 3 } else { 1 };
        let bound: u64 =
            windows.iter().map(|w| w.words.max(pace * (w.payload_words() + 1)) + 16).sum::<u64>() + 64;
        assert!(
            (st.clocks as u64) <= bound && st.clocks as u64 >= reads,
            "stream {i}: {st:?}, bound {bound}"
        );
    }
    let (register, stream_reads) = (
        run.checks.iter().filter(|c| c.reads >= min_reads(&run.dev)).count(),
        run.checks.iter().map(|c| c.reads).min().unwrap(),
    );
    assert!(register >= 1, "some readouts were register readouts");
    eprintln!(
        "{} epochs, {streamed} streamed: {want_words} stream words ({} bytes) in {} clocks (fast channel) \
         vs {} register reads; a streamed readout made {stream_reads} register reads",
        s.epochs,
        want_words * 8,
        run.streams[0].clocks,
        min_reads(&run.dev)
    );
}
