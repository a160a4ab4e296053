//! The driver's readout of the per-switch half against the software model: a model bank
//! filled by hops, table offers and inflated-latency records is copied into the emulated
//! device's registers (latency buckets as count/sum words, table slots as the contract's
//! window words, misses, the record stream), configured through the driver, read out, and
//! the snapshot's per-switch sections must equal `per_switch_sections` of the model byte for
//! byte, and answer the same queries once rebuilt.

use smartnic::sketch::per_switch::{PerSwitch, PerSwitchConfig};
use smartnic::sketch::snapshot::{per_switch_sections, per_switch_state};
use smartnic_contract::geometry::{InsertMode, SuMaxGeometry, TowerGeometry};
use smartnic_contract::packing::PackedBits;
use smartnic_contract::per_switch::{slot, KeyTableGeometry, LatencyTowerGeometry};
use smartnic_contract::regs::layout::FirmwareInfo;
use smartnic_contract::regs::per_switch::SLOT_WORDS;
use smartnic_contract::wire::record::{InflatedRecord, Record};
use smartnic_contract::FlowKey;
use smartnic_driver::blocks::{DeviceMap, PerSwitchConfig as Registers};
use smartnic_driver::config::write_per_switch_config;
use smartnic_driver::emulated::EmulatedNic;
use smartnic_driver::readout::{read_snapshot, ReadoutConfig};

fn flow(n: u32) -> FlowKey {
    FlowKey::from_v4([10, 1, (n >> 8) as u8, n as u8], [10, 2, 0, 1], 1000 + n as u16, 80, 6)
}

/// A small model bank: narrow counts that overflow, colliding buckets, a table too small
/// for every heavy flow (so it misses), paths of every length up to 16 hops.
fn model() -> (PerSwitch, Vec<InflatedRecord>) {
    let config = PerSwitchConfig {
        latency: LatencyTowerGeometry::from_cells(&[(4, 12, 32), (8, 24, 16), (16, 32, 16)], 4),
        mode: InsertMode::Acu,
        table: KeyTableGeometry::with_capacity(8),
        table_threshold: 40,
        inflate_ratio_x256: 3 * 256,
    };
    let mut ps = PerSwitch::new(config).unwrap();
    let mut records = Vec::new();
    for i in 0..3000u32 {
        let (f, switch) = (flow(i % 50), (i % 7) as u16 + 1);
        let latency = if i % 97 == 0 { 4_000_000 } else { 100 + (i * 37) % 900 };
        ps.latency.insert_hop(switch, &f, latency);
        if i % 97 == 0 {
            records.push(InflatedRecord { epoch: 3, flow: f, switch_id: switch, latency_ns: latency });
        }
    }
    for n in 0..30u32 {
        let path: Vec<u16> = (0..(n % 17) as u16).map(|h| 0x100 * h + n as u16).collect();
        ps.table.offer(&flow(n), &path);
    }
    assert!(ps.table.misses() > 0, "the table is too small for every flow");
    assert!((0..32).any(|b| ps.latency.bucket(0, b).0 == 15), "some 4-bit count overflowed");
    (ps, records)
}

/// Copies the model bank into the emulated device's active bank and record stream.
fn load(nic: &mut EmulatedNic, ps: &PerSwitch, records: &[InflatedRecord]) {
    let g = ps.latency.geometry().clone();
    for (a, arr) in g.arrays.iter().enumerate() {
        let w = nic.latency_window(a);
        for b in 0..arr.depth {
            let (count, sum) = ps.latency.bucket(a, b);
            let bank = nic.active_mut(w);
            (bank[2 * b as usize], bank[2 * b as usize + 1]) = (count, sum);
        }
    }
    let depth = ps.table.geometry().depth;
    for way in 0..ps.table.geometry().ways.len() {
        let bits = PackedBits::from_bytes(&ps.table.way_bytes(way), slot::BITS * depth as u64).unwrap();
        let w = nic.table_window(way);
        for s in 0..depth as u64 {
            for j in 0..SLOT_WORDS as u64 {
                let width = (slot::BITS - 32 * j).min(32) as u8;
                nic.active_mut(w)[(s * SLOT_WORDS as u64 + j) as usize] =
                    bits.get(s * slot::BITS + 32 * j, width);
            }
        }
    }
    nic.set_active_misses(ps.table.misses() as u32);
    records.iter().for_each(|r| nic.push_record(&Record::Inflated(*r)));
}

#[test]
fn a_readout_of_the_per_switch_half_equals_the_software_model() {
    let (ps, records) = model();
    let (t, s) = (TowerGeometry::from_widths_depths(&[(8, 16)]), SuMaxGeometry::with_depth(1, 4));
    let geometry = smartnic_contract::per_switch::PerSwitchGeometry {
        latency: ps.latency.geometry().clone(),
        table: ps.table.geometry().clone(),
    };
    let mut nic = EmulatedNic::with_per_switch(FirmwareInfo::default(), &t, &s, &geometry);
    let map = DeviceMap::discover(&mut nic).unwrap();
    let c = ps.config();
    let regs = Registers::from_ratio_x256(c.mode, c.inflate_ratio_x256, c.table_threshold);
    write_per_switch_config(&mut nic, &map, &regs).unwrap();
    load(&mut nic, &ps, &records);

    let (snap, stats) = read_snapshot(&mut nic, &map, &ReadoutConfig::default()).unwrap();
    assert_eq!(snap.per_switch, per_switch_sections(&ps, &records));
    assert_eq!(stats.record_words, 7 * records.len() as u64);

    let state = per_switch_state(&snap).unwrap();
    let lt = state.latency.unwrap();
    for n in 0..50 {
        for switch in 1..=7u16 {
            let f = flow(n);
            assert_eq!(lt.query(switch, &f), ps.latency.query(switch, &f), "flow {n} at switch {switch}");
        }
    }
    let table = state.table.unwrap();
    assert_eq!(table.threshold, 40);
    assert_eq!(table.table.entries().collect::<Vec<_>>(), ps.table.entries().collect::<Vec<_>>());
    assert_eq!(state.records.unwrap(), records);
}
