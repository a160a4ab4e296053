//! The NIC core read out by DMA: the same frames into two simulated NICs, one whose
//! card-to-host channels end in ideal host buffers (the path `core_stream.rs` proves against
//! the software model) and one whose channels end in the board's DMA engine (the XDMA model,
//! `simnic_dma`), programmed by the driver's own `XdmaC2h`: descriptors in DMA memory, the
//! readout stream on channel 0 (256 KiB descriptors), the record ring on channel 1 (a
//! circular chain with credits). An epoch every 10,000 frames, each read once both NICs are idle (so both
//! hold the same state whatever clocks their readouts take); every snapshot and every
//! record equal between the two, and the DMA path's figures printed (engine clocks, bytes
//! per clock).
mod core_check;

use core_check::generated_trace;
use smartnic_driver::access::RegisterAccess;
use smartnic_driver::blocks::DeviceMap;
use smartnic_driver::readout::{read_snapshot, start_ring, ReadoutConfig, ReadoutPath, RecordsVia};
use smartnic_driver::snapshot::Snapshot;
use smartnic_sim_tb::simnic::{SimFrame, SimNic};
use smartnic_sim_tb::simnic_dma::dma_nic;

/// A snapshot without its wall-clock time (the two readouts ran at different times).
fn content(mut s: Snapshot) -> Snapshot {
    s.time_ns = 0;
    s
}

#[test]
fn dma_readouts_equal_the_ideal_channels() {
    let mut ideal = SimNic::new().unwrap_or_else(|e| panic!("{e}"));
    let (shared, mut dma) = dma_nic(SimNic::new().unwrap()).unwrap_or_else(|e| panic!("{e}"));
    let map = DeviceMap::discover(&mut ideal).unwrap();
    assert_eq!(DeviceMap::discover(&mut dma).unwrap(), map);
    assert!(start_ring(&mut ideal, &map).unwrap() && start_ring(&mut dma, &map).unwrap());
    let cfg = ReadoutConfig { path: ReadoutPath::Stream, ..smartnic::simulator::sim_readout_config() };
    let frames = generated_trace(41, 30_000);
    let feed = |frames: &[SimFrame], a: &mut SimNic, b: &mut SimNic| {
        a.queue(frames.iter().cloned());
        b.queue(frames.iter().cloned());
        a.run_frames(u64::MAX);
        b.run_frames(u64::MAX);
    };
    let mut records = 0;
    for (e, part) in frames.chunks(10_000).enumerate() {
        feed(part, &mut ideal, &mut shared.borrow_mut());
        ideal.drain();
        shared.borrow_mut().drain();
        let (a, sa) = read_snapshot(&mut ideal, &map, &cfg).unwrap();
        let c0 = shared.borrow_mut().cycles();
        let (b, sb) = read_snapshot(&mut dma, &map, &cfg).unwrap_or_else(|e| panic!("epoch {e}: {e:#}"));
        let clocks = shared.borrow_mut().cycles() - c0;
        assert_eq!((sa.records_via, sb.records_via), (Some(RecordsVia::Ring), Some(RecordsVia::Ring)));
        let (wa, wb) = (sa.stream.unwrap(), sb.stream.unwrap());
        assert_eq!(wa.words, wb.words, "epoch {e}: stream words");
        assert_eq!(sa.ring_words, sb.ring_words, "epoch {e}: ring words");
        assert_eq!(content(a.clone()), content(b), "epoch {e}: the DMA snapshot equals the ideal channel's");
        records += sb.ring_words;
        eprintln!(
            "epoch {e}: {} packets; by DMA: stream {} words in {} engine clocks ({} stalled), \
             {:.2} bytes/clock; ring {} words; readout {} clocks, {} register reads",
            a.packets,
            wb.words,
            wb.clocks,
            wb.stalls,
            8.0 * wb.words as f64 / wb.clocks as f64,
            sb.ring_words,
            clocks,
            sb.reads
        );
    }
    assert!(records > 1000, "{records} ring words: the trace inflates latency somewhere");
    // Nothing lost on the way: the engine took every ring word the NIC sent.
    let stream = map.stream.unwrap();
    let sent = dma.read32(stream + smartnic_contract::regs::stream::RING_WORDS).unwrap();
    assert_eq!(shared.borrow_mut().xdma().unwrap().accepted(1), sent as u64, "ring words the engine took");
    assert_eq!(shared.borrow_mut().xdma().unwrap().faults(), 0, "no write outside DMA memory");
}
