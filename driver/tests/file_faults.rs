//! Faults injected into a file-backed BAR (a device image on disk, edited between
//! accesses): a vanished device reads all ones, and a corrupt register chain or window
//! descriptor is named; no snapshot is ever written.

use smartnic_driver::access::{AccessError, RegisterAccess};
use smartnic_driver::backend::FileBar;
use smartnic_driver::blocks::{BlockError, DeviceMap};
use smartnic_driver::contract::geometry::{SuMaxGeometry, TowerGeometry};
use smartnic_driver::contract::regs::layout::{FirmwareInfo, Layout};
use smartnic_driver::contract::regs::{block_type, header, tower};
use smartnic_driver::readout::{read_snapshot_to_file, ReadoutConfig};

const FW: FirmwareInfo = FirmwareInfo { device: 0x7038, version: 0x0001_0000, build_time: 1, git_hash: 2 };

fn geometry() -> (TowerGeometry, SuMaxGeometry) {
    (TowerGeometry::from_widths_depths(&[(8, 64), (16, 32), (32, 16)]), SuMaxGeometry::with_depth(2, 8))
}

/// A fresh device image, with `edit` applied through a second handle on the same file.
fn image(dir: &std::path::Path, edit: impl FnOnce(&mut FileBar)) -> FileBar {
    let (t, s) = geometry();
    let path = dir.join("bar.img");
    let mut writer = FileBar::create_device(&path, FW, &t, &s).unwrap();
    edit(&mut writer);
    writer.flush().unwrap();
    FileBar::open(&path).unwrap()
}

#[test]
fn a_vanished_device_reads_all_ones_and_is_device_gone() {
    let dir = tempfile::tempdir().unwrap();
    let mut bar = image(dir.path(), |w| {
        let words = (w.bar_size() / 4) as u32;
        for i in 0..words {
            w.write32(4 * i, u32::MAX).unwrap();
        }
    });
    let e = DeviceMap::discover(&mut bar).unwrap_err();
    assert!(matches!(e, BlockError::Access(AccessError::DeviceGone { offset: 0 })), "{e}");
    assert!(e.to_string().contains("device gone"), "{e}");
}

#[test]
fn a_corrupt_chain_or_descriptor_is_named() {
    let (t, s) = geometry();
    let layout = Layout::new(&t, &s);
    let tower_base = layout.block(block_type::TOWER).unwrap().base;
    type Is = fn(&BlockError) -> bool;
    let cases: [(u32, u32, Is); 4] = [
        (tower_base + header::NEXT, 0, |e| {
            matches!(e, BlockError::Missing(_)) || matches!(e, BlockError::Invalid { .. })
        }),
        (0x100 + header::NEXT, 0x100, |e| matches!(e, BlockError::Loop { .. })),
        (0x200 + header::NEXT, 0x202, |e| matches!(e, BlockError::Misaligned { .. })),
        (tower_base + tower::ARRAY0 + tower::A_WINDOW, 0x10, |e| matches!(e, BlockError::Invalid { .. })),
    ];
    for (offset, value, is) in cases {
        let dir = tempfile::tempdir().unwrap();
        let mut bar = image(dir.path(), |w| w.write32(offset, value).unwrap());
        match DeviceMap::discover(&mut bar) {
            Err(e) => assert!(is(&e), "{offset:#x} = {value:#x}: {e}"),
            Ok(map) => {
                // A chain cut before SuMax still decodes; the readout must then refuse.
                let out = dir.path().join("x.snap");
                assert!(read_snapshot_to_file(&mut bar, &map, &ReadoutConfig::default(), &out).is_err());
                assert!(!out.exists());
            }
        }
    }
}

/// Hostile SuMax geometry registers in a device image are refused at discovery by the
/// contract's geometry validation (the one the snapshot decoder uses), the error naming
/// the sumax block by its own address and the field at fault.
#[test]
fn hostile_geometry_registers_are_named() {
    use smartnic_driver::contract::regs::sumax;
    let (t, s) = geometry();
    let base = Layout::new(&t, &s).block(block_type::SUMAX).unwrap().base;
    let cases: [(u32, u32, &str); 6] = [
        (sumax::TIME_SHIFT, 62, "time_shift 62"),
        (sumax::TIME_SHIFT, 63, "time_shift 63"),
        (sumax::TIME_SHIFT, 255, "time_shift 255"),
        (sumax::CELLS, 3, "delay_cells 0"),
        (sumax::DEPTH, 0, "depth must be at least 1"),
        (sumax::ARRAY0 + sumax::A_CRC, 0x04C1_1DB6, "array 0: CRC polynomial 0x04c11db6"),
    ];
    for (reg, value, named) in cases {
        let dir = tempfile::tempdir().unwrap();
        let mut bar = image(dir.path(), |w| w.write32(base + reg, value).unwrap());
        let e = DeviceMap::discover(&mut bar).unwrap_err();
        assert!(matches!(e, BlockError::Invalid { block: "sumax", at, .. } if at == base), "{named}: {e}");
        let msg = e.to_string();
        assert!(msg.starts_with(&format!("sumax block at {base:#x}: ")) && msg.contains(named), "{msg}");
    }
}

/// A window descriptor pointing outside the BAR is blamed on the block holding the
/// descriptor, by that block's address, not on the window's address.
#[test]
fn a_bad_window_names_the_block_that_holds_it() {
    let (t, s) = geometry();
    let layout = Layout::new(&t, &s);
    let tower_base = layout.block(block_type::TOWER).unwrap().base;
    let outside = layout.bar_size - 4;
    let dir = tempfile::tempdir().unwrap();
    let mut bar =
        image(dir.path(), |w| w.write32(tower_base + tower::ARRAY0 + tower::A_WINDOW, outside).unwrap());
    let e = DeviceMap::discover(&mut bar).unwrap_err();
    assert!(matches!(e, BlockError::Invalid { block: "towersketch", at, .. } if at == tower_base), "{e}");
    let msg = e.to_string();
    assert!(
        msg.starts_with(&format!(
            "towersketch block at {tower_base:#x}: towersketch array 0 window at {outside:#x}"
        )),
        "{msg}"
    );
}
