use super::*;
use crate::blocks::DeviceMap;
use crate::emulated::EmulatedNic;
use crate::readout::{read_snapshot, ReadoutConfig};
use smartnic_contract::geometry::{SuMaxGeometry, TowerGeometry};
use smartnic_contract::regs::layout::FirmwareInfo;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

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

/// The greeting of a fake service with a 4 KiB BAR, as `printf` text.
const GREETING: &str = r"SNICSIM1\000\020\000\000\000\000\000\000";

/// A deadline short enough for tests; a hang would take the fake services' 30 s.
const SHORT: Duration = Duration::from_millis(300);
/// The deadline of tests whose service must greet first: `sh` may take longer than
/// [`SHORT`] to start on a loaded machine, and these tests are about what comes after.
const GREETED: Duration = Duration::from_secs(3);

fn fake(script: &str) -> Command {
    let mut c = Command::new("sh");
    c.arg("-c").arg(script);
    c
}

/// Runs `f` and checks it returned well within the fake services' 30 s sleep.
fn quickly<T>(f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let r = f();
    assert!(start.elapsed() < Duration::from_secs(5), "took {:?}", start.elapsed());
    r
}

#[test]
fn a_silent_service_fails_the_greeting_in_time() {
    let err = quickly(|| StreamBar::spawn_with_deadline(fake("sleep 30"), SHORT).err().unwrap());
    assert!(err.to_string().contains("stopped answering: no greeting within 300ms"), "{err}");
}

#[test]
fn half_a_greeting_fails_in_time() {
    let err =
        quickly(|| StreamBar::spawn_with_deadline(fake("printf SNICS; sleep 30"), SHORT).err().unwrap());
    assert!(err.to_string().contains("stopped answering"), "{err}");
}

#[test]
fn a_service_that_stops_after_greeting_fails_each_request_in_time() {
    let mut bar =
        StreamBar::spawn_with_deadline(fake(&format!("printf '{GREETING}'; sleep 30")), GREETED).unwrap();
    assert_eq!(bar.bar_size(), 0x1000);
    let err = quickly(|| bar.read32(0).unwrap_err()).to_string();
    assert!(err.contains("stopped answering: nothing for 3s while reading a register"), "{err}");
    // The stream is out of step now: later requests fail at once with the same reason.
    let err = quickly(|| bar.command("packets").unwrap_err()).to_string();
    assert!(err.contains("stopped answering"), "{err}");
    quickly(|| drop(bar));
}

#[test]
fn a_killed_service_is_named_as_killed() {
    let script = format!("printf '{GREETING}'; kill -9 $$");
    let mut bar = StreamBar::spawn_with_deadline(fake(&script), GREETED).unwrap();
    let err = quickly(|| bar.command("replay 10").unwrap_err()).to_string();
    assert!(err.contains("was killed") && err.contains("SIGKILL"), "{err}");
    assert!(err.contains("while running `replay 10`"), "{err}");
}

#[test]
fn an_exiting_service_is_named_with_its_status() {
    let mut bar =
        StreamBar::spawn_with_deadline(fake(&format!("printf '{GREETING}'; exit 3")), GREETED).unwrap();
    let err = quickly(|| bar.read32(4).unwrap_err()).to_string();
    assert!(err.contains("exited with status 3"), "{err}");
    let err = StreamBar::spawn_with_deadline(fake("printf SNIC; exit 7"), SHORT).err().unwrap().to_string();
    assert!(err.contains("exited with status 7 before greeting"), "{err}");
}

/// An emulated device whose `slow` command takes longer than the client's deadline.
struct Slow(EmulatedNic);

impl RegisterAccess for Slow {
    fn bar_size(&self) -> u64 {
        self.0.bar_size()
    }
    fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
        self.0.read32(offset)
    }
    fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
        self.0.write32(offset, value)
    }
}

impl Served for Slow {
    fn command(&mut self, line: &str) -> Result<String, String> {
        std::thread::sleep(4 * SHORT);
        Ok(format!("done {line}"))
    }
}

#[test]
fn a_long_request_stays_alive_past_the_deadline() {
    let (a, b) = UnixStream::pair().unwrap();
    let t = TowerGeometry::from_widths_depths(&[(8, 64)]);
    let s = SuMaxGeometry::with_depth(1, 8);
    let server = std::thread::spawn(move || {
        let mut dev = Slow(EmulatedNic::new(FirmwareInfo::default(), &t, &s));
        serve(&mut dev, b.try_clone().unwrap(), b).unwrap();
    });
    let mut bar = StreamBar::connect_socket(a, 2 * SHORT).unwrap();
    assert_eq!(bar.command("slow").unwrap(), "done slow", "keepalives carried the request");
    assert_eq!(bar.read32(0).unwrap(), smartnic_contract::regs::block_type::FIRMWARE_ID);
    drop(bar);
    server.join().unwrap();
}

#[test]
fn a_slow_start_stays_alive_past_the_deadline() {
    let (a, b) = UnixStream::pair().unwrap();
    let server = std::thread::spawn(move || {
        let start = || -> Result<EmulatedNic, String> {
            std::thread::sleep(4 * SHORT);
            let t = TowerGeometry::from_widths_depths(&[(8, 64)]);
            Ok(EmulatedNic::new(FirmwareInfo::default(), &t, &SuMaxGeometry::with_depth(1, 8)))
        };
        serve_with(start, b.try_clone().unwrap(), b).unwrap();
    });
    let mut bar = StreamBar::connect_socket(a, 2 * SHORT).unwrap();
    assert_eq!(bar.read32(0).unwrap(), smartnic_contract::regs::block_type::FIRMWARE_ID);
    drop(bar);
    server.join().unwrap();

    // A start that fails ends the session before the greeting, with the start's message.
    let (a, b) = UnixStream::pair().unwrap();
    let server = std::thread::spawn(move || {
        serve_with(|| Err::<EmulatedNic, _>("no model"), b.try_clone().unwrap(), b).unwrap_err().to_string()
    });
    let err = StreamBar::connect_socket(a, 2 * SHORT).err().unwrap();
    assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    assert_eq!(server.join().unwrap(), "no model");
}

/// A served device with a card-to-host channel that answers a fixed stream.
struct Channelled {
    nic: EmulatedNic,
    armed: Option<usize>,
    stream: Vec<u64>,
}

impl RegisterAccess for Channelled {
    fn bar_size(&self) -> u64 {
        self.nic.bar_size()
    }
    fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
        self.nic.read32(offset)
    }
    fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
        self.nic.write32(offset, value)
    }
    fn c2h(&mut self) -> Option<&mut dyn C2hChannel> {
        Some(self)
    }
}

impl C2hChannel for Channelled {
    fn arm(&mut self, words: usize) -> Result<(), AccessError> {
        self.armed = Some(words);
        Ok(())
    }
    fn wait(&mut self, timeout: Duration) -> Result<Vec<u64>, AccessError> {
        match self.armed.take() {
            Some(n) => Ok(self.stream.iter().copied().take(n).collect()),
            None => Err(AccessError::StreamTimeout { waited: timeout, words: 0 }),
        }
    }
}

impl Served for Channelled {}

#[test]
fn the_card_to_host_channel_crosses_the_service() {
    let (a, b) = UnixStream::pair().unwrap();
    let t = TowerGeometry::from_widths_depths(&[(8, 64), (16, 32), (32, 16)]);
    let s = SuMaxGeometry::with_depth(2, 8);
    let stream: Vec<u64> = (0..1000u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
    let want = stream.clone();
    let server = std::thread::spawn(move || {
        let nic = EmulatedNic::new(FirmwareInfo::default(), &t, &s);
        let mut dev = Channelled { nic, armed: None, stream };
        serve(&mut dev, b.try_clone().unwrap(), b).unwrap();
    });
    let mut bar = StreamBar::connect(Box::new(a.try_clone().unwrap()), Box::new(a)).unwrap();
    let ch = bar.c2h().expect("the served device has a channel");
    ch.arm(700).unwrap();
    assert_eq!(ch.wait(Duration::from_secs(1)).unwrap(), want[..700]);
    // A wait without an arm fails with the device's message; the connection stays usable.
    let e = ch.wait(Duration::from_millis(5)).unwrap_err().to_string();
    assert!(e.contains("no complete readout stream"), "{e}");
    assert_eq!(bar.read32(0).unwrap(), smartnic_contract::regs::block_type::FIRMWARE_ID);
    drop(bar);
    server.join().unwrap();
    // A device without a channel says so, and the client offers none.
    let (mut plain, _server) = connected();
    assert!(plain.c2h().is_none());
    assert_eq!(plain.read32(0).unwrap(), smartnic_contract::regs::block_type::FIRMWARE_ID);
}

/// A served per-switch device with its record ring, the client on the other end.
fn ring_served(faults: &[crate::emulated::RingFault]) -> (StreamBar, std::thread::JoinHandle<EmulatedNic>) {
    use smartnic_contract::per_switch::{KeyTableGeometry, LatencyTowerGeometry, PerSwitchGeometry};
    let (a, b) = UnixStream::pair().unwrap();
    let p = PerSwitchGeometry {
        latency: LatencyTowerGeometry::from_cells(&[(8, 16, 4)], 0),
        table: KeyTableGeometry::with_capacity(2),
    };
    let (t, s) = (TowerGeometry::from_widths_depths(&[(8, 8)]), SuMaxGeometry::with_depth(1, 2));
    let faults = faults.to_vec();
    let server = std::thread::spawn(move || {
        let mut nic = EmulatedNic::with_per_switch(FirmwareInfo::default(), &t, &s, &p);
        nic.enable_ring();
        (1..=3).for_each(|i| nic.push_record(&ring_record(i)));
        faults.into_iter().for_each(|f| nic.fault_next_ring(f));
        serve(&mut nic, b.try_clone().unwrap(), b).unwrap();
        nic
    });
    (StreamBar::connect(Box::new(a.try_clone().unwrap()), Box::new(a)).unwrap(), server)
}

fn ring_record(i: u8) -> smartnic_contract::wire::record::Record {
    use smartnic_contract::wire::record::{InflatedRecord, Record};
    Record::Inflated(InflatedRecord {
        epoch: i as u32,
        flow: smartnic_contract::key::FlowKey::from_v4([10, 0, 0, i], [10, 0, 0, 9], 7, 8, 17),
        switch_id: i as u16,
        latency_ns: 100 * i as u32,
    })
}

/// `t` and `k` carry the record ring: a readout through the service takes the records
/// from the ring and the device's count of words taken follows; a take that times out
/// keeps its kind and takes nothing; a device without a ring offers none.
#[test]
fn the_record_ring_crosses_the_service() {
    use crate::readout::RecordsVia;
    let (mut bar, server) = ring_served(&[crate::emulated::RingFault::Short]);
    assert_eq!(bar.ring().expect("the served device has a ring").taken(), 0);
    let map = DeviceMap::discover(&mut bar).unwrap();
    let cfg = ReadoutConfig { poll_timeout: Duration::from_millis(20), ..ReadoutConfig::default() };
    let e = read_snapshot(&mut bar, &map, &cfg).unwrap_err();
    assert!(
        matches!(
            e,
            crate::readout::ReadoutError::Access(AccessError::RingTimeout { words: 12, arrived: 11, .. })
        ),
        "{e}"
    );
    assert_eq!(bar.ring().unwrap().taken(), 0, "nothing taken");
    let (snap, stats) = read_snapshot(&mut bar, &map, &cfg).unwrap();
    assert_eq!((stats.records_via, stats.ring_words), (Some(RecordsVia::Ring), 12));
    let want: Vec<u8> = (1..=3).flat_map(|i| ring_record(i).emit()).collect();
    assert_eq!(snap.per_switch.last(), Some(&crate::snapshot::PerSwitchSection::Records { stream: want }));
    let ring = bar.ring().unwrap();
    assert_eq!(ring.taken(), 12, "the device's count, read back");
    assert_eq!(ring.take(0, Duration::ZERO).unwrap(), Vec::<u64>::new());
    let e = ring.take(1, Duration::from_millis(1)).unwrap_err();
    assert!(matches!(e, AccessError::RingTimeout { words: 1, arrived: 0, .. }), "{e}");
    assert_eq!(bar.read32(0).unwrap(), smartnic_contract::regs::block_type::FIRMWARE_ID);
    drop(bar);
    assert_eq!(crate::access::RecordRing::taken(&server.join().unwrap()), 12);
    // A device without a ring says so: the client offers none, and a take is refused.
    let (mut plain, _server) = connected();
    assert!(plain.ring().is_none());
    let e = plain.take(1, Duration::ZERO).unwrap_err().to_string();
    assert!(e.contains("this device has no record ring"), "{e}");
    assert_eq!(plain.read32(0).unwrap(), smartnic_contract::regs::block_type::FIRMWARE_ID);
}
