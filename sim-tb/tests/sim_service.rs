//! `smartnic sim` end to end: the `smartnic-sim` service (Verilator core) replays a
//! trace, the host reads each epoch out over the driver's stream back end, and every
//! TowerSketch snapshot equals the software sketch over the same epoch's packets; the
//! NIC's frame counters agree with the software parser on every frame of the trace,
//! whatever the capture holds (empty records, raw IP, frames after the last IP packet,
//! no IP packet at all).

use smartnic::contract::geometry::InsertMode;
use smartnic::simulator::{no_progress, replay, EpochPlan, ReplayConfig, SimReport, SIM_ENV};
use smartnic::sketch::snapshot::to_section;
use smartnic::sketch::SketchKind;
use smartnic::trace::capture::CaptureReader;
use smartnic::trace::frame::{ETHERTYPE_ARP, LINKTYPE_ETHERNET, LINKTYPE_RAW};
use smartnic::trace::pcap::PcapWriter;
use smartnic::trace::{generate_files, Counts, GenConfig, Packet, PacketReader, ShimConfig};
use smartnic_driver::snapshot::{Section, Snapshot};
use std::path::Path;

/// Replays `pcap` through the simulated NIC (what `smartnic sim run` does) into `dir/sim`.
fn sim(pcap: &Path, epoch_packets: u64, dir: &Path) -> (SimReport, std::path::PathBuf) {
    std::env::set_var(SIM_ENV, env!("CARGO_BIN_EXE_smartnic-sim"));
    let out = dir.join("sim");
    let cfg = ReplayConfig {
        trace: pcap.to_path_buf(),
        epochs: EpochPlan::Every(epoch_packets),
        mode: InsertMode::Acu,
        output: out.clone(),
    };
    (replay(&cfg, no_progress).unwrap(), out)
}

/// The software parser's packets and counts over `pcap`.
fn software(pcap: &Path) -> (Vec<Packet>, Counts) {
    let mut reader = PacketReader::open(pcap).unwrap();
    let mut packets = Vec::new();
    while let Some(p) = reader.next_packet().unwrap() {
        packets.push(p);
    }
    (packets, reader.counts())
}

/// Every epoch snapshot's TowerSketch equals the software sketch over its packets.
fn check_towers(out: &Path, packets: &[Packet], per: usize) {
    let chunks: Vec<&[Packet]> = if packets.is_empty() { vec![&[]] } else { packets.chunks(per).collect() };
    for (e, chunk) in chunks.into_iter().enumerate() {
        let snap = Snapshot::read_file(&out.join(format!("epoch-{e:06}.snap"))).unwrap();
        assert_eq!((snap.epoch, snap.packets), (e as u64, chunk.len() as u64));
        let mut tower = SketchKind::TowerAcu.build_nic().unwrap();
        chunk.iter().for_each(|p| tower.insert(p));
        let want = to_section(&tower).unwrap();
        let got = snap.sections.iter().find(|s| matches!(s, Section::Tower { .. })).unwrap();
        // Compared without Debug-printing half a megabyte of counters on failure.
        let (
            Section::Tower { geometry: g1, mode: m1, arrays: a1 },
            Section::Tower { geometry: g2, mode: m2, arrays: a2 },
        ) = (got, &want)
        else {
            unreachable!()
        };
        assert_eq!((g1, m1), (g2, m2), "epoch {e}: geometry or mode");
        for (i, (x, y)) in a1.iter().zip(a2).enumerate() {
            let diff = x.iter().zip(y).filter(|(p, q)| p != q).count();
            assert_eq!(diff, 0, "epoch {e} array {i}: {diff} packed bytes differ from the software model");
        }
    }
}

/// The NIC counted every frame as the software parser classifies it.
fn check_counts(r: &SimReport, sw: &Counts) {
    let frames = sw.packets + sw.non_ip + sw.malformed;
    let nic = r.nic;
    assert_eq!(
        (nic.frames, nic.sketched, nic.non_ip, nic.malformed),
        (frames, sw.packets, sw.non_ip, sw.malformed),
        "NIC counters (frames, sketched, non-IP, malformed) against the software parser"
    );
    assert_eq!(r.packets, sw.packets);
}

/// The manifest lists the report's epoch files and says the run is complete.
fn check_manifest(out: &Path, r: &SimReport) {
    let m = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(m.contains("\"complete\": true"), "{m}");
    assert_eq!(m.matches("\"file\": \"epoch-").count(), r.epochs.len(), "{m}");
    for e in &r.epochs {
        let name = Path::new(&e.path).file_name().unwrap().to_str().unwrap();
        assert!(m.contains(&format!("\"file\": \"{name}\"")), "{m}");
    }
}

/// An ARP frame of 60 bytes.
fn arp() -> Vec<u8> {
    let mut f = vec![0xFFu8; 12];
    f.extend_from_slice(&ETHERTYPE_ARP.to_be_bytes());
    f.resize(60, 0);
    f
}

/// Writes `frames` as a pcap of `linktype`.
fn write_pcap(path: &Path, linktype: u32, frames: &[(u64, Vec<u8>)]) {
    let mut w = PcapWriter::new(Vec::new(), 65535, linktype).unwrap();
    for (ts, f) in frames {
        w.write(*ts, f.len() as u32, f).unwrap();
    }
    std::fs::write(path, w.into_inner().unwrap()).unwrap();
}

/// The frames of a generated trace.
fn generated(cfg: &GenConfig, dir: &Path) -> Vec<(u64, Vec<u8>)> {
    let pcap = dir.join("gen.pcap");
    generate_files(cfg, &pcap, &dir.join("gen.json"), None).unwrap();
    let mut r = CaptureReader::open(&pcap).unwrap();
    let mut v = Vec::new();
    while let Some(f) = r.next_frame().unwrap() {
        v.push((f.ts_ns, f.data.to_vec()));
    }
    v
}

#[test]
fn simulated_nic_epochs_equal_software_towers() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("t.pcap");
    let cfg = GenConfig {
        seed: 11,
        packets: 25_000,
        flows: 2_000,
        vlan: 0.2,
        non_ip: 0.05,
        shim: Some(ShimConfig::default()),
        ..GenConfig::default()
    };
    generate_files(&cfg, &pcap, &dir.path().join("t.json"), None).unwrap();
    let (report, out) = sim(&pcap, 10_000, dir.path());
    assert_eq!(report.packets, 25_000);
    assert_eq!(report.epochs.len(), 3);
    let (packets, counts) = software(&pcap);
    check_towers(&out, &packets, 10_000);
    check_counts(&report, &counts);
    check_manifest(&out, &report);
}

/// Empty records, a runt and non-IP frames among the packets and after the last one all
/// reach the NIC, which counts them as the software does.
#[test]
fn every_frame_reaches_the_nic_empty_records_included() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = GenConfig { seed: 3, packets: 600, flows: 50, non_ip: 0.05, ..GenConfig::default() };
    let mut frames = vec![(500, Vec::new())];
    frames.extend(generated(&cfg, dir.path()));
    frames.insert(300, (frames[299].0, Vec::new()));
    let end = frames.last().unwrap().0;
    for (i, f) in [arp(), Vec::new(), arp()[..9].to_vec(), arp(), Vec::new()].into_iter().enumerate() {
        frames.push((end + 100 * (i as u64 + 1), f));
    }
    let pcap = dir.path().join("t.pcap");
    write_pcap(&pcap, LINKTYPE_ETHERNET, &frames);
    let (packets, counts) = software(&pcap);
    assert_eq!((packets.len(), counts.malformed), (600, 5), "4 empty records and a runt");
    let (report, out) = sim(&pcap, 400, dir.path());
    assert_eq!(report.epochs.len(), 2);
    check_counts(&report, &counts);
    check_towers(&out, &packets, 400);
    check_manifest(&out, &report);
}

/// A trace without IP packets: one epoch of 0 packets, every frame counted.
#[test]
fn a_trace_without_ip_packets_is_one_empty_epoch() {
    let dir = tempfile::tempdir().unwrap();
    let frames: Vec<(u64, Vec<u8>)> =
        vec![(1_000, arp()), (2_000, Vec::new()), (3_000, arp()[..8].to_vec()), (4_000, arp())];
    let pcap = dir.path().join("arp.pcap");
    write_pcap(&pcap, LINKTYPE_ETHERNET, &frames);
    let (packets, counts) = software(&pcap);
    assert_eq!((packets.len(), counts.non_ip, counts.malformed), (0, 2, 2));
    let (report, out) = sim(&pcap, 1_000, dir.path());
    assert_eq!(report.epochs.len(), 1);
    check_counts(&report, &counts);
    check_towers(&out, &packets, 1_000);
    check_manifest(&out, &report);
}

/// A raw-IP capture (LINKTYPE 101, IPv4 and IPv6) reaches the NIC as Ethernet frames: the
/// NIC sketches what the software sketches; a raw record of another IP version is not IP and
/// an empty one is malformed, on both sides.
#[test]
fn a_raw_ip_capture_is_framed_as_ethernet() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = GenConfig { seed: 8, packets: 500, flows: 60, ipv6: 0.3, ..GenConfig::default() };
    let mut frames: Vec<(u64, Vec<u8>)> = generated(&cfg, dir.path())
        .into_iter()
        .map(|(ts, f)| {
            assert!(matches!(u16::from_be_bytes([f[12], f[13]]), 0x0800 | 0x86DD), "plain Ethernet + IP");
            (ts, f[14..].to_vec())
        })
        .collect();
    let end = frames.last().unwrap().0;
    frames.insert(100, (frames[99].0, vec![0x25; 40]));
    frames.push((end + 100, Vec::new()));
    let pcap = dir.path().join("raw.pcap");
    write_pcap(&pcap, LINKTYPE_RAW, &frames);
    let (packets, counts) = software(&pcap);
    assert_eq!((packets.len(), counts.non_ip, counts.malformed), (500, 1, 1));
    let (report, out) = sim(&pcap, 300, dir.path());
    assert_eq!(report.epochs.len(), 2);
    check_counts(&report, &counts);
    check_towers(&out, &packets, 300);
}
