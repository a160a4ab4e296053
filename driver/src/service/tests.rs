use super::*;
use crate::blocks::DeviceMap;
use crate::emulated::EmulatedNic;
use crate::readout::{read_snapshot, ReadoutConfig};
use smartnic_contract::geometry::{SuMaxGeometry, TowerGeometry};
use smartnic_contract::regs::layout::FirmwareInfo;
use std::os::unix::net::UnixStream;

/// A small emulated device served on one end of a socket pair, the client on the other.
fn connected() -> (StreamBar, std::thread::JoinHandle<EmulatedNic>) {
    let (a, b) = UnixStream::pair().unwrap();
    let t = TowerGeometry::from_widths_depths(&[(8, 64), (16, 32), (32, 16)]);
    let s = SuMaxGeometry::with_depth(2, 8);
    let server = std::thread::spawn(move || {
        let mut nic =
            EmulatedNic::new(FirmwareInfo { device: 0x7038, version: 1 << 16, ..Default::default() }, &t, &s);
        for (k, w) in nic.active_mut(0).iter_mut().enumerate() {
            *w = k as u32 % 200;
        }
        nic.set_active_packets(1234);
        serve(&mut nic, b.try_clone().unwrap(), b).unwrap();
        nic
    });
    (StreamBar::connect(Box::new(a.try_clone().unwrap()), Box::new(a)).unwrap(), server)
}

#[test]
fn readout_over_the_stream_equals_readout_in_process() {
    let (mut bar, server) = connected();
    let map = DeviceMap::discover(&mut bar).unwrap();
    let (snap, stats) = read_snapshot(&mut bar, &map, &ReadoutConfig::default()).unwrap();
    assert_eq!(snap.packets, 1234);
    assert_eq!(stats.window_words, map.window_words());
    drop(bar);
    let nic = server.join().unwrap();
    assert_eq!(nic.sequence(), 2, "one swap and one clear went through the service");
}

#[test]
fn errors_keep_their_kind() {
    let (mut bar, _server) = connected();
    let size = bar.bar_size() as u32;
    assert!(matches!(bar.read32(size), Err(AccessError::OutOfRange { .. })));
    assert!(matches!(bar.read32(2), Err(AccessError::Misaligned { offset: 2 })));
    let mut words = [0u32; 4];
    assert!(matches!(bar.read_block(size - 8, &mut words), Err(AccessError::OutOfRange { .. })));
    let err = bar.command("replay 10").unwrap_err().to_string();
    assert!(err.contains("unknown command `replay 10`"), "{err}");
    assert_eq!(bar.read32(0).unwrap(), smartnic_contract::regs::block_type::FIRMWARE_ID);
}

#[test]
fn a_wrong_greeting_is_refused() {
    let (a, mut b) = UnixStream::pair().unwrap();
    b.write_all(b"HELLO!!!\0\0\0\0\0\0\0\0").unwrap();
    let err = StreamBar::connect(Box::new(a.try_clone().unwrap()), Box::new(a)).err().unwrap();
    assert!(err.to_string().contains("SNICSIM1"));
}
