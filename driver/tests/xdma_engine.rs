//! `XdmaC2h` against the behavioural model of the DMA engine (`sim-tb/src/xdma.rs`, compiled
//! in here by path: the model needs only the driver's and the contract's public items, and
//! the driver cannot depend on the crate that holds it). The driver programs the model
//! through its registers exactly as it would the board's DMA BAR; the model's words play
//! the NIC core's channels.
//!
//! A readout stream of the default geometry's 231,153 words arrives equal; the record ring
//! across many takes, around its buffer chain and through the u32 wrap of its count,
//! arrives equal and in order; the host taking nothing holds the channel back; every way
//! the channel fails is a named error, and nothing that arrived is lost.

#[path = "../../sim-tb/src/xdma.rs"]
#[allow(dead_code)]
mod xdma;

use smartnic_driver::access::{AccessError, C2hChannel, RecordRing, RegisterAccess};
use smartnic_driver::contract::xdma::{channel, Descriptor, RING_CHANNEL};
use smartnic_driver::dma::{DmaError, DmaMemory, HeapDma, RingConfig, StreamConfig, XdmaC2h};
use std::time::Duration;
use xdma::{Timing, XdmaModel};

const LONG: Duration = Duration::from_secs(60);
const SHORT: Duration = Duration::from_millis(30);

/// Seeded words (splitmix64), so a word out of place is seen.
fn words(seed: u64, n: usize) -> Vec<u64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        })
        .collect()
}

type Dma = XdmaC2h<XdmaModel<HeapDma>, HeapDma>;

fn open(stream: StreamConfig, ring: RingConfig) -> (Dma, HeapDma) {
    let mem = HeapDma::new();
    let model = XdmaModel::new(mem.clone(), Timing::default());
    (XdmaC2h::open(model, mem.clone(), stream, ring).unwrap(), mem)
}

fn dma_error(e: &AccessError) -> &DmaError {
    DmaError::of(e).unwrap_or_else(|| panic!("not a DMA error: {e}"))
}

#[test]
fn a_readout_stream_of_231153_words_arrives_equal_twice() {
    let (mut x, _) = open(StreamConfig::default(), RingConfig::default());
    for seed in [1, 2] {
        let want = words(seed, 231_153);
        let start = x.regs_mut().clock();
        x.arm(want.len()).unwrap();
        x.regs_mut().feed(0, &want, true);
        let got = x.wait(LONG).unwrap();
        assert_eq!(got.len(), want.len());
        assert!(got == want, "stream {seed} differs");
        let clocks = x.regs_mut().clock() - start;
        println!(
            "stream {seed}: {} words in {clocks} core clocks ({:.3} words/clock, {} descriptors)",
            want.len(),
            want.len() as f64 / clocks as f64,
            (want.len() * 8).div_ceil(StreamConfig::default().buffer_bytes as usize)
        );
    }
}

/// `tlast` before the armed length ends the stream there: the readout then names the
/// length mismatch (`ReadoutError::StreamCount`).
#[test]
fn a_stream_ends_at_tlast() {
    let (mut x, _) = open(StreamConfig { buffer_bytes: 256 }, RingConfig::default());
    x.arm(100).unwrap();
    let want = words(3, 60);
    x.regs_mut().feed(0, &want, true);
    assert_eq!(x.wait(LONG).unwrap(), want);
    // The next stream starts clean, in the same buffers.
    x.arm(100).unwrap();
    let want = words(4, 100);
    x.regs_mut().feed(0, &want, true);
    assert_eq!(x.wait(LONG).unwrap(), want);
}

#[test]
fn a_stalled_stream_is_a_stream_timeout_naming_the_words_that_came() {
    let (mut x, _) = open(StreamConfig { buffer_bytes: 256 }, RingConfig::default());
    x.arm(100).unwrap();
    x.regs_mut().feed(0, &words(5, 50), false);
    let e = x.wait(SHORT).unwrap_err();
    assert!(matches!(e, AccessError::StreamTimeout { words: 50, .. }), "{e}");
}

#[test]
fn a_stream_longer_than_armed_is_an_overrun() {
    let (mut x, _) = open(StreamConfig { buffer_bytes: 64 }, RingConfig::default());
    x.arm(16).unwrap();
    x.regs_mut().feed(0, &words(6, 20), true);
    let e = x.wait(LONG).unwrap_err();
    assert!(matches!(dma_error(&e), DmaError::Overrun { words: 16 }), "{e}");
    assert!(e.to_string().contains("did not end within the 16 words"), "{e}");
}

#[test]
fn a_descriptor_without_its_magic_is_a_channel_error_naming_the_status() {
    let (mut x, mut mem) = open(StreamConfig::default(), RingConfig::default());
    x.arm(100).unwrap();
    let first = x.regs_mut().descriptor_address(0);
    mem.write(first + 3, &[0x00]).unwrap();
    x.regs_mut().feed(0, &words(7, 100), true);
    let e = x.wait(LONG).unwrap_err();
    match dma_error(&e) {
        DmaError::ChannelError { channel: 0, status, completed: 0, .. } => {
            assert_eq!(status & channel::MAGIC_STOPPED, channel::MAGIC_STOPPED)
        }
        other => panic!("{other}"),
    }
    assert!(e.to_string().contains("magic_stopped"), "{e}");
}

#[test]
fn a_channel_that_is_not_a_stream_channel_is_refused_at_open() {
    let mem = HeapDma::new();
    let mut model = XdmaModel::new(mem.clone(), Timing::default());
    model.set_memory_mapped(1);
    let e = XdmaC2h::open(model, mem, StreamConfig::default(), RingConfig::default()).err().unwrap();
    assert!(matches!(e, DmaError::Identifier { channel: 1, found: 0x1FC1_0106, .. }), "{e}");
    assert!(e.to_string().contains("no such AXI4-Stream channel"), "{e}");
}

/// A register access that damages the first writeback of channel 0 before the host reads
/// the completed count (a corrupted DMA write), or makes it claim more than its buffer.
struct DamageWriteback {
    model: XdmaModel<HeapDma>,
    mem: HeapDma,
    bytes: [u8; 8],
}

impl RegisterAccess for DamageWriteback {
    fn bar_size(&self) -> u64 {
        self.model.bar_size()
    }
    fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
        let v = self.model.read32(offset)?;
        if offset == smartnic_driver::contract::xdma::c2h_channel(0) + channel::COMPLETED && v > 0 {
            let mut d = [0; 32];
            self.mem.read(self.model.descriptor_address(0), &mut d).unwrap();
            self.mem.write(Descriptor::decode(&d).unwrap().src, &self.bytes).unwrap();
        }
        Ok(v)
    }
    fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
        self.model.write32(offset, value)
    }
}

/// A check of which error it is.
type IsError = fn(&DmaError) -> bool;

#[test]
fn a_damaged_or_oversized_writeback_is_named() {
    let cases: [([u8; 8], IsError); 2] = [
        ([0x01, 0, 0xB4, 0x53, 64, 0, 0, 0], |e| {
            matches!(e, DmaError::Writeback { channel: 0, index: 0, .. })
        }),
        ([0x00, 0, 0xB4, 0x52, 0, 1, 0, 0], |e| {
            matches!(e, DmaError::WritebackLength { channel: 0, index: 0, length: 256, room: 64 })
        }),
    ];
    for (bytes, want) in cases {
        let mem = HeapDma::new();
        let model = XdmaModel::new(mem.clone(), Timing::default());
        let dev = DamageWriteback { model, mem: mem.clone(), bytes };
        let mut x =
            XdmaC2h::open(dev, mem, StreamConfig { buffer_bytes: 64 }, RingConfig::default()).unwrap();
        x.arm(16).unwrap();
        x.regs_mut().model.feed(0, &words(8, 16), true);
        let e = x.wait(LONG).unwrap_err();
        assert!(want(dma_error(&e)), "{e}");
    }
}

/// Many takes of many sizes, fed in bursts of many sizes: the ring of 4 buffers of 32 words
/// goes round hundreds of times, the taken count wraps past 2^32, and every word arrives
/// once, in order (takes of words still in an open descriptor flush it).
#[test]
fn the_ring_across_many_takes_wraps_its_chain_and_its_count_in_order() {
    let start = u32::MAX - 5_000;
    let (mut x, _) =
        open(StreamConfig::default(), RingConfig { buffers: 4, buffer_bytes: 256, taken: start });
    let all = words(9, 40_000);
    let sizes = words(10, 4_000);
    let (mut fed, mut got) = (0, Vec::new());
    let mut takes = 0;
    while got.len() < all.len() {
        let burst = ((sizes[takes % sizes.len()] % 300) as usize).min(all.len() - fed);
        x.regs_mut().feed(RING_CHANNEL as usize, &all[fed..fed + burst], false);
        fed += burst;
        let n = ((sizes[(takes + 1) % sizes.len()] >> 20) % 257) as usize;
        let n = n.min(fed - got.len()) as u32;
        let before = x.taken();
        got.extend(x.take(n, LONG).unwrap());
        assert_eq!(x.taken(), before.wrapping_add(n));
        takes += 1;
    }
    assert!(got == all, "ring words out of order or changed");
    assert_eq!(x.taken(), start.wrapping_add(all.len() as u32));
    assert!(x.taken() < start, "the count wrapped");
    println!(
        "ring: {} words in {takes} takes, {} core clocks, {} descriptors of 32 words",
        all.len(),
        x.regs_mut().clock(),
        all.len().div_ceil(32)
    );
}

/// A host that takes nothing: the ring's 4 buffers fill, credits run out and the channel
/// holds the rest back (tready low); a take recycles the buffers and the words flow again.
#[test]
fn the_ring_holds_the_channel_back_while_the_host_takes_nothing() {
    let ch = RING_CHANNEL as usize;
    let (mut x, _) = open(StreamConfig::default(), RingConfig { buffers: 4, buffer_bytes: 256, taken: 0 });
    let all = words(11, 1_000);
    x.regs_mut().feed(ch, &all, false);
    x.regs_mut().run(100_000);
    assert_eq!(x.regs_mut().accepted(ch), 128, "4 buffers of 32 words");
    assert!(!x.regs_mut().ready(ch));
    assert_eq!(x.regs_mut().queued(ch), 872);
    assert_eq!(x.take(128, LONG).unwrap(), all[..128]);
    x.regs_mut().run(100_000);
    assert_eq!(x.regs_mut().accepted(ch), 256, "the recycled buffers filled again");
    assert_eq!(x.take(872, LONG).unwrap(), all[128..]);
    assert_eq!(x.taken(), 1_000);
}

/// A take of words that have not all arrived times out naming what did, takes nothing, and
/// loses nothing: the next take has every word in order.
#[test]
fn a_ring_timeout_takes_nothing_and_loses_nothing() {
    let ch = RING_CHANNEL as usize;
    let (mut x, _) = open(StreamConfig::default(), RingConfig { buffers: 4, buffer_bytes: 256, taken: 7 });
    let all = words(12, 100);
    x.regs_mut().feed(ch, &all[..60], false);
    let e = x.take(100, SHORT).unwrap_err();
    assert!(matches!(e, AccessError::RingTimeout { words: 100, arrived: 60, .. }), "{e}");
    assert_eq!(x.taken(), 7);
    x.regs_mut().feed(ch, &all[60..], false);
    assert_eq!(x.take(100, LONG).unwrap(), all);
    assert_eq!(x.taken(), 107);
}

#[test]
fn a_completed_count_that_goes_backwards_is_named() {
    let ch = RING_CHANNEL as usize;
    let (mut x, _) = open(StreamConfig::default(), RingConfig { buffers: 4, buffer_bytes: 64, taken: 0 });
    x.regs_mut().feed(ch, &words(13, 16), false);
    x.take(8, LONG).unwrap();
    x.regs_mut().force_completed(ch, 1);
    let e = x.take(8, SHORT).unwrap_err();
    assert!(matches!(dma_error(&e), DmaError::CountBackwards { channel: 1, before: 2, after: 1 }), "{e}");
    assert!(e.to_string().contains("from 2 to 1"), "{e}");
}

/// A DMA BAR that reads all ones (the card is gone) is named so at open.
#[test]
fn a_lost_device_is_named_at_open() {
    struct Gone;
    impl RegisterAccess for Gone {
        fn bar_size(&self) -> u64 {
            1 << 16
        }
        fn read32(&mut self, _: u32) -> Result<u32, AccessError> {
            Ok(u32::MAX)
        }
        fn write32(&mut self, _: u32, _: u32) -> Result<(), AccessError> {
            Ok(())
        }
    }
    let e =
        XdmaC2h::open(Gone, HeapDma::new(), StreamConfig::default(), RingConfig::default()).err().unwrap();
    assert!(matches!(e, DmaError::Access(AccessError::DeviceGone { offset: 0x1000 })), "{e}");
}
