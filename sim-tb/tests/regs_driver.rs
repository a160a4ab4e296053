//! The driver on the generated register block: `DeviceMap::discover`, `enumerate` and
//! `read_snapshot` through `SimBar` (AXI4-Lite transactions on the Verilator model).
use smartnic_contract::geometry::{marker, InsertMode, SuMaxGeometry, TowerGeometry};
use smartnic_contract::per_switch::PerSwitchGeometry;
use smartnic_contract::regs::block_type;
use smartnic_driver::access::RegisterAccess;
use smartnic_driver::blocks::PerSwitchConfig;
use smartnic_driver::blocks::{enumerate, DeviceMap};
use smartnic_driver::readout::{pack, read_snapshot, ReadoutConfig};
use smartnic_driver::snapshot::{PerSwitchSection, Section};
use smartnic_hdl::regs::{default_firmware, RegMap};
use smartnic_sim_tb::simbar::{Fabric, LiveInputs, RegPorts, RegsFabric, Rng, SimBar, WindowResponder};
use smartnic_sim_tb::Model;

#[test]
fn driver_discovers_the_generated_register_block() {
    let mut bar = SimBar::regs_default(|m| RegsFabric::new(m, |_, _| 0)).unwrap_or_else(|e| panic!("{e}"));
    let map = RegMap::nic_default();
    let chain = enumerate(&mut bar).unwrap();
    let types: Vec<u32> = chain.iter().map(|b| b.ty).collect();
    assert_eq!(
        types,
        [
            block_type::FIRMWARE_ID,
            block_type::STATS,
            block_type::EPOCH,
            block_type::TOWER,
            block_type::SUMAX,
            block_type::PER_SWITCH,
            block_type::STREAM
        ]
    );
    for (b, p) in chain.iter().zip(&map.layout.blocks) {
        assert_eq!((b.offset, b.ty), (p.base, p.ty));
    }
    let dev = DeviceMap::discover(&mut bar).unwrap();
    let fw = default_firmware();
    assert_eq!(
        (dev.firmware.device, dev.firmware.version, dev.firmware.build_time, dev.firmware.git_hash),
        (fw.device, fw.version, fw.build_time, fw.git_hash)
    );
    assert_eq!(dev.firmware.device, smartnic_contract::regs::PCI_DEVICE_ID as u32);
    assert_eq!(dev.bar_size, map.layout.bar_size as u64);
    let tower = dev.tower.as_ref().unwrap();
    assert_eq!(tower.geometry, TowerGeometry::sketchint_fpga());
    assert_eq!(tower.mode, InsertMode::Cm);
    let windows: Vec<u32> = map.layout.tower_windows.iter().map(|w| w.base).collect();
    assert_eq!(tower.windows, windows);
    let sumax = dev.sumax.as_ref().unwrap();
    assert_eq!(sumax.geometry, SuMaxGeometry::nic_default());
    let windows: Vec<u32> = map.layout.sumax_windows.iter().map(|w| w.base).collect();
    assert_eq!(sumax.windows, windows);
    let ps = dev.per_switch.as_ref().unwrap();
    assert_eq!(ps.geometry, PerSwitchGeometry::nic_default());
    assert_eq!(ps.config, PerSwitchConfig::nic_default(), "the register file's reset configuration");
    let windows: Vec<u32> = map.layout.latency_windows.iter().map(|w| w.base).collect();
    assert_eq!(ps.latency_windows, windows);
    let windows: Vec<u32> = map.layout.table_windows.iter().map(|w| w.base).collect();
    assert_eq!(ps.table_windows, windows);
    // MODE written through the driver's access is what discovery reads back.
    bar.write32(tower.base + smartnic_contract::regs::tower::MODE, InsertMode::Acu as u32).unwrap();
    let dev = DeviceMap::discover(&mut bar).unwrap();
    assert_eq!(dev.tower.as_ref().unwrap().mode, InsertMode::Acu);
    assert!(bar.fabric.acu);
    eprintln!("{}{:?}", dev.describe(), bar.stats);
}

/// A software epoch engine behind the register block: two banks of window words, SWAP
/// after a few drain clocks, CLEAR after a sweep, EPOCH/SEQUENCE/packet counters.
struct EpochFabric {
    ports: RegPorts,
    live: LiveInputs,
    windows: WindowResponder,
    /// `banks[b][window]`: the words of every window in bank `b`.
    banks: [Vec<Vec<u32>>; 2],
    active: usize,
    swap_in: Option<u64>,
    clear_in: Option<u64>,
    swaps: u32,
    clears: u32,
}

impl EpochFabric {
    fn new(m: &mut Model, map: &RegMap) -> Self {
        let ports = RegPorts::of(m, "");
        let bank: Vec<Vec<u32>> = map.windows.iter().map(|w| vec![0; w.size as usize / 4]).collect();
        let live = LiveInputs { epoch: 1, ..Default::default() };
        live.apply(m, &ports);
        EpochFabric {
            ports,
            live,
            windows: WindowResponder::new(2, 6, 9),
            banks: [bank.clone(), bank],
            active: 1,
            swap_in: None,
            clear_in: None,
            swaps: 0,
            clears: 0,
        }
    }
}

impl Fabric for EpochFabric {
    fn clock(&mut self, m: &mut Model, cycle: u64) {
        let before = self.live;
        if m.get(self.ports.swap) == 1 && self.swap_in.is_none() {
            self.swap_in = Some(cycle + 7);
            self.live.swap_pending = true;
        }
        if m.get(self.ports.clear) == 1 && self.clear_in.is_none() {
            self.clear_in = Some(cycle + 20);
            self.live.clear_busy = true;
        }
        if self.swap_in.is_some_and(|c| c <= cycle) {
            self.swap_in = None;
            self.active ^= 1;
            self.live.epoch = self.live.epoch.wrapping_add(1);
            self.live.sequence = self.live.sequence.wrapping_add(1);
            self.live.idle_packets = self.live.active_packets;
            self.live.active_packets = 0;
            self.live.swap_pending = false;
            self.swaps += 1;
        }
        if self.clear_in.is_some_and(|c| c <= cycle) {
            self.clear_in = None;
            for w in &mut self.banks[self.active ^ 1] {
                w.fill(0);
            }
            self.live.sequence = self.live.sequence.wrapping_add(1);
            self.live.clear_busy = false;
            self.clears += 1;
        }
        if self.live != before {
            self.live.apply(m, &self.ports);
        }
        let idle = &self.banks[self.active ^ 1];
        self.windows.clock(m, &self.ports, cycle, |sel, index| idle[sel][index as usize]);
    }
}

/// The whole readout protocol on the generated registers: swap, read every window word
/// through AXI, clear; the snapshot is exactly the bank that was active.
#[test]
fn read_snapshot_through_the_generated_registers() {
    let map = RegMap::nic_default();
    let mut bar = SimBar::regs_default(|m| EpochFabric::new(m, &map)).unwrap_or_else(|e| panic!("{e}"));
    let dev = DeviceMap::discover(&mut bar).unwrap();
    let (t, s) = (TowerGeometry::sketchint_fpga(), SuMaxGeometry::nic_default());
    let p = PerSwitchGeometry::nic_default();
    // Word widths of every window: tower counters, SuMax cells, latency (count, sum); the
    // table ways stay empty (zero slots).
    let widths: Vec<Vec<u8>> = t
        .arrays
        .iter()
        .map(|a| vec![a.width])
        .chain(s.hashes.iter().map(|_| s.cell_widths()))
        .chain(p.latency.arrays.iter().map(|a| vec![a.count_width, a.sum_width]))
        .chain(p.table.ways.iter().map(|_| vec![0]))
        .collect();
    // Fill the active bank with random counters that fit their widths.
    let mut r = Rng::new(21);
    let a = bar.fabric.active;
    for (w, cells) in bar.fabric.banks[a].iter_mut().zip(&widths) {
        for (i, v) in w.iter_mut().enumerate() {
            let width = cells[i % cells.len()];
            *v = if width == 0 { 0 } else { (r.next_u64() as u32) & marker(width) };
        }
    }
    bar.fabric.live.active_packets = 123_456_789;
    bar.fabric.live.table_misses = 77;
    let expect = bar.fabric.banks[a].clone();
    let cfg = ReadoutConfig { source: smartnic_contract::snapshot::source::SIMULATOR, ..Default::default() };
    let (snap, stats) = read_snapshot(&mut bar, &dev, &cfg).unwrap();
    assert_eq!(snap.epoch, 1, "the idle bank holds EPOCH - 1");
    assert_eq!(snap.packets, 123_456_789);
    let mut k = 0;
    for sec in &snap.sections {
        let arrays = match sec {
            Section::Tower { arrays, mode, .. } => {
                assert_eq!(*mode, InsertMode::Cm);
                arrays
            }
            Section::SuMax { arrays, .. } => arrays,
        };
        for got in arrays {
            assert_eq!(got, &pack(&expect[k], &widths[k], "expected").unwrap(), "window {k}");
            k += 1;
        }
    }
    let [PerSwitchSection::LatencyTower { arrays, .. }, PerSwitchSection::KeyTable { misses, ways, .. }, PerSwitchSection::Records { stream }] =
        &snap.per_switch[..]
    else {
        panic!("per-switch sections: {:?}", snap.per_switch.iter().map(|s| s.kind()).collect::<Vec<_>>())
    };
    for got in arrays {
        assert_eq!(got, &pack(&expect[k], &widths[k], "expected").unwrap(), "window {k}");
        k += 1;
    }
    assert_eq!(*misses, 77);
    assert!(ways.iter().all(|w| w.iter().all(|&b| b == 0)) && stream.is_empty());
    k += ways.len();
    assert_eq!(k, map.windows.len());
    assert_eq!((bar.fabric.swaps, bar.fabric.clears), (1, 1));
    assert!(bar.fabric.banks[a].iter().all(|w| w.iter().all(|&v| v == 0)), "the read bank was cleared");
    assert_eq!(bar.fabric.windows.overlapping, 0);
    assert_eq!(bar.fabric.windows.requests.len() as u64, dev.window_words());
    eprintln!("{stats:?}; {} clocks", bar.model().cycles());
}
