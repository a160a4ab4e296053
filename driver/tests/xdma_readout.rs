//! The driver's readouts through the DMA engine: the register-level emulation's stream
//! engine and record ring hand their words to the behavioural model of the XDMA
//! (`sim-tb/src/xdma.rs`, compiled in by path) instead of to their own host buffers, and the
//! readout takes them through `XdmaC2h` (`WithDma`). The snapshots equal the register
//! readouts of an identical device with no channels, records included.

#[path = "../../sim-tb/src/xdma.rs"]
#[allow(dead_code)]
mod xdma;

mod support;
use smartnic_driver::access::{AccessError, C2hChannel, RecordRing, RegisterAccess};
use smartnic_driver::blocks::DeviceMap;
use smartnic_driver::contract::key::FlowKey;
use smartnic_driver::contract::packing::mask;
use smartnic_driver::contract::regs::{block_type, stream as st};
use smartnic_driver::contract::snapshot::source;
use smartnic_driver::contract::wire::record::{InflatedRecord, Record};
use smartnic_driver::contract::xdma::{READOUT_CHANNEL, RING_CHANNEL};
use smartnic_driver::dma::{HeapDma, RingConfig, StreamConfig, WithDma, XdmaC2h};
use smartnic_driver::emulated::EmulatedNic;
use smartnic_driver::readout::{read_snapshot, stream::specs, ReadoutConfig, ReadoutPath, RecordsVia};
use std::time::Duration;
use support::small_device as device;
use xdma::{Timing, XdmaModel};

type Dma = XdmaC2h<XdmaModel<HeapDma>, HeapDma>;

/// The emulated NIC whose channels end in the DMA model: a START's stream and the ring
/// words a RING_WORDS read has counted are fed to the model's channels 0 and 1, as the
/// core's ports would.
struct Board {
    nic: EmulatedNic,
    start: u32,
    ring_words: u32,
}

impl RegisterAccess for Board {
    fn bar_size(&self) -> u64 {
        self.nic.bar_size()
    }
    fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
        self.nic.read32(offset)
    }
    fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
        self.nic.write32(offset, value)
    }
}

/// `Board` and the DMA channels, each word of the NIC's channels handed to the model.
struct Wired {
    inner: WithDma<Board, Dma>,
}

impl Wired {
    /// The words the emulation's channels hold now (its stream after a START), moved into
    /// the model.
    fn pass_words(&mut self, started: bool) -> Result<(), AccessError> {
        let Wired { inner: WithDma { bar, dma } } = self;
        if started {
            let words = bar.nic.c2h().unwrap().wait(Duration::ZERO)?;
            dma.regs_mut().feed(READOUT_CHANNEL as usize, &words, true);
        }
        let n = bar.nic.ring_words() as u32;
        let words = bar.nic.ring().unwrap().take(n, Duration::ZERO)?;
        dma.regs_mut().feed(RING_CHANNEL as usize, &words, false);
        Ok(())
    }
}

impl RegisterAccess for Wired {
    fn bar_size(&self) -> u64 {
        self.inner.bar_size()
    }
    fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
        let v = self.inner.read32(offset)?;
        if offset == self.inner.bar.ring_words {
            self.pass_words(false)?;
        }
        Ok(v)
    }
    fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
        if offset == self.inner.bar.start {
            self.inner.bar.nic.c2h().unwrap().arm(0)?;
        }
        self.inner.write32(offset, value)?;
        if offset == self.inner.bar.start {
            self.pass_words(value & st::CONTROL_START != 0)?;
        }
        Ok(())
    }
    fn c2h(&mut self) -> Option<&mut dyn C2hChannel> {
        self.inner.c2h()
    }
    fn ring(&mut self) -> Option<&mut dyn RecordRing> {
        self.inner.ring()
    }
}

/// Values that fit each window's widths in every active bank but the key table's.
fn load(nic: &mut EmulatedNic, map: &DeviceMap, seed: u32) {
    let specs = specs(map).unwrap();
    let tables = map.per_switch.as_ref().unwrap().table_windows.len();
    for (i, spec) in specs.iter().enumerate().take(specs.len() - tables) {
        let n = spec.widths.len();
        for (k, v) in nic.active_mut(i).iter_mut().enumerate() {
            *v = (k as u32 ^ seed).wrapping_mul(0x9E37_79B9) & mask(spec.widths[k % n]) as u32;
        }
    }
    nic.set_active_packets(500 + seed as u64);
}

fn inflated(n: u32) -> Record {
    Record::Inflated(InflatedRecord {
        epoch: n,
        flow: FlowKey::from_v4([10, 0, 0, n as u8], [10, 9, 9, 9], 4000, 443, 6),
        switch_id: n as u16,
        latency_ns: 1000 + n,
    })
}

#[test]
fn readouts_through_the_dma_engine_equal_the_register_readouts() {
    let (mut nic, map) = device();
    let (mut plain, _) = device();
    nic.enable_stream();
    nic.enable_ring();
    let base = nic.layout().block(block_type::STREAM).unwrap().base;
    let board = Board { nic, start: base + st::CONTROL, ring_words: base + st::RING_WORDS };
    let mem = HeapDma::new();
    let model = XdmaModel::new(mem.clone(), Timing::default());
    let ring = RingConfig { buffers: 4, buffer_bytes: 256, taken: 0 };
    let dma = XdmaC2h::open(model, mem, StreamConfig { buffer_bytes: 1024 }, ring).unwrap();
    let mut dev = Wired { inner: WithDma { bar: board, dma } };
    let cfg = ReadoutConfig { source: source::SIMULATOR, path: ReadoutPath::Auto, ..Default::default() };
    for epoch in 0..3u32 {
        load(&mut dev.inner.bar.nic, &map, epoch);
        load(&mut plain, &map, epoch);
        // Enough records to go round the ring's 4 buffers of 32 words several times.
        for r in (0..40).map(|i| inflated(epoch * 100 + i)) {
            dev.inner.bar.nic.push_record(&r);
            plain.push_record(&r);
        }
        let (a, sa) = read_snapshot(&mut dev, &map, &cfg).unwrap();
        let (b, sb) = read_snapshot(&mut plain, &map, &cfg).unwrap();
        assert!(sa.stream.is_some() && sb.stream.is_none(), "by DMA, and by registers");
        assert_eq!(sa.records_via, Some(RecordsVia::Ring));
        assert_eq!(sa.ring_words, 40 * 4, "40 records of 7 words, each padded to 4 ring words");
        assert_eq!((a.epoch, a.packets), (b.epoch, b.packets));
        assert_eq!(a.sections, b.sections, "epoch {epoch}");
        assert_eq!(a.per_switch, b.per_switch, "epoch {epoch}: records and per-switch sections");
    }
    assert_eq!(dev.inner.dma.taken(), 3 * 160);
}
