//! `smartnic sim` end to end: the `smartnic-sim` service (Verilator core) replays a
//! generated trace, the host reads each epoch out over the driver's stream back end, and
//! every TowerSketch snapshot equals the software sketch over the same epoch's packets.

use smartnic::cli::sim::{replay, SimArgs, SIM_ENV};
use smartnic::sketch::snapshot::to_section;
use smartnic::sketch::SketchKind;
use smartnic::trace::{generate_files, GenConfig, PacketReader, ShimConfig};
use smartnic_driver::snapshot::{Section, Snapshot};

#[test]
fn simulated_nic_epochs_equal_software_towers() {
    std::env::set_var(SIM_ENV, env!("CARGO_BIN_EXE_smartnic-sim"));
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
    let out = dir.path().join("sim");
    let args =
        SimArgs { trace: pcap.clone(), epoch_packets: 10_000, mode: "acu".into(), output: out.clone() };
    let report = replay(&args).unwrap();
    assert_eq!(report.packets, 25_000);
    assert_eq!(report.epochs.len(), 3);

    let mut reader = PacketReader::open(&pcap).unwrap();
    let mut packets = Vec::new();
    while let Some(p) = reader.next_packet().unwrap() {
        packets.push(p);
    }
    for (e, chunk) in packets.chunks(10_000).enumerate() {
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
