//! What several driver tests share.
use smartnic_driver::blocks::DeviceMap;
use smartnic_driver::contract::geometry::{SuMaxGeometry, TowerGeometry};
use smartnic_driver::contract::per_switch::{KeyTableGeometry, LatencyTowerGeometry, PerSwitchGeometry};
use smartnic_driver::contract::regs::layout::FirmwareInfo;
use smartnic_driver::emulated::EmulatedNic;

/// A small emulated NIC with every block (two tower arrays, two SuMax arrays, two latency
/// arrays, a 2 x 8 key table) whose swap and clear are done by their first poll, so a
/// readout's reads are exactly `min_reads`; and its map.
pub fn small_device() -> (EmulatedNic, DeviceMap) {
    let (t, s) = (TowerGeometry::from_widths_depths(&[(8, 64), (16, 32)]), SuMaxGeometry::with_depth(2, 8));
    let p = PerSwitchGeometry {
        latency: LatencyTowerGeometry::from_cells(&[(8, 24, 16), (16, 32, 8)], 4),
        table: KeyTableGeometry::with_capacity(8),
    };
    let mut nic = EmulatedNic::with_per_switch(FirmwareInfo::default(), &t, &s, &p);
    nic.latency = 0;
    let map = DeviceMap::discover(&mut nic).unwrap();
    (nic, map)
}
