//! The readout stream end to end: the NIC core's stream engine writes the idle bank to the
//! card-to-host channel (the simulated host buffer) and the driver's streamed readout
//! (`read_snapshot_streamed`) builds the snapshot from it, while frames keep arriving. Every
//! epoch is checked against the software model exactly as the register readouts are (every
//! Tower counter, every SuMax cell, the latency tower, the key table, the drained records,
//! IDLE_PACKETS), through a channel that takes a 256-bit beat every clock, one that takes a
//! beat every third clock (the engine stalls, nothing is lost), and readouts that alternate with
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
use smartnic_hdl::sketch_core::stream_reads;

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
    // A channel that takes one beat in three: the engine waits, the stream is the same.
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
    // The lanes read in parallel: the slowest lane's reads bound a stream from below (the
    // table's two ways share one port, so theirs add up).
    let lane_reads: Vec<u64> =
        stream_reads(&windows).iter().map(|r| r.rows * r.widths.len() as u64).collect();
    let reads = lane_reads[..9].iter().copied().max().unwrap().max(lane_reads[9] + lane_reads[10]);
    let beats = want_words.div_ceil(4);
    for (i, st) in run.streams.iter().enumerate() {
        assert_eq!(st.words, want_words, "stream {i}: every stream has the map's length");
        let slow = (2..4).contains(&i);
        assert_eq!(st.stalls > 0, slow, "stream {i}: stalls only on the slow channel ({st:?})");
        // The slowest lane's reads, or the beats at the channel's pace (and the lane picks
        // between 16-beat chunks: at most 2 of the channel's periods a chunk), whichever is
        // slower, and a few clocks per window.
        let pace = if slow { 3 } else { 1 };
        let bound = reads.max(pace * beats * 18 / 16) + 16 * windows.len() as u64 + 64;
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
        "{} epochs, {streamed} streamed: {want_words} stream words ({} bytes, {beats} beats) in {} clocks \
         (fast channel; slowest lane {reads} reads) vs {} register reads; a streamed readout made \
         {stream_reads} register reads",
        s.epochs,
        want_words * 8,
        run.streams[0].clocks,
        min_reads(&run.dev)
    );
}
