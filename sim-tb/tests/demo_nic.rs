//! `smartnic demo` through the simulated NIC (the `smartnic-sim` service, Verilator core) on
//! a small network run, the NICs of its three busiest hosts: the demo succeeds, and every epoch snapshot it
//! read out over the driver holds, section for section, the counters of the software
//! TowerSketch and SuMax built here over the same epoch's packets of that host's capture,
//! and the per-switch half's sections (latency tower, key table, records) of its model
//! (checked by this test, not by the demo's own comparison).

use smartnic::demo::{run, verdict, DemoConfig};
use smartnic::simulator::{no_progress, SIM_ENV};
use smartnic::sketch::per_switch::{PerSwitch, PerSwitchConfig};
use smartnic::sketch::snapshot::{per_switch_sections, to_section};
use smartnic::sketch::SketchKind;
use smartnic::trace::{Packet, PacketReader};
use smartnic_contract::geometry::InsertMode;
use smartnic_driver::snapshot::{Section, Snapshot};
use std::path::Path;

const EPOCH_PACKETS: u64 = 400;
const HOSTS: usize = 3;

/// The IP packets of a capture, as the software parser reads them.
fn packets(capture: &Path) -> Vec<Packet> {
    let mut reader = PacketReader::open(capture).unwrap();
    let mut packets = Vec::new();
    while let Some(p) = reader.next_packet().unwrap() {
        packets.push(p);
    }
    packets
}

/// Name of a section's sketch, for the failure message (the sections themselves are
/// hundreds of KiB and are not printed).
fn name(s: &Section) -> &'static str {
    match s {
        Section::Tower { .. } => "TowerSketch",
        Section::SuMax { .. } => "SuMax",
    }
}

#[test]
fn nic_demo_epochs_equal_the_software_sketches() {
    let dir = tempfile::tempdir().unwrap();
    std::env::set_var(SIM_ENV, env!("CARGO_BIN_EXE_smartnic-sim"));
    let cfg = DemoConfig {
        out: dir.path().to_path_buf(),
        packets: 6_000,
        load: 0.5,
        epoch_packets: EPOCH_PACKETS,
        seed: 2,
        top: 4,
        software: false,
        hosts: Some(HOSTS),
    };
    let report =
        run(&cfg, no_progress).unwrap_or_else(|e| panic!("demo through the simulated NIC failed: {e:#}"));
    verdict(&report).unwrap();
    assert_eq!(report.hosts.len(), HOSTS);
    let (mut epochs_checked, mut records) = (0, 0);
    for h in &report.hosts {
        let packets = packets(&dir.path().join(format!("lab/hosts/{}.pcapng", h.host)));
        assert_eq!(h.packets, packets.len() as u64);
        for (e, chunk) in packets.chunks(EPOCH_PACKETS as usize).enumerate() {
            let path = dir.path().join(format!("nic/{}/epoch-{e:06}.snap", h.host));
            let snap = Snapshot::read_file(&path).unwrap();
            assert_eq!((snap.epoch, snap.packets), (e as u64, chunk.len() as u64), "{}", path.display());
            let mut want =
                [SketchKind::TowerAcu.build_nic().unwrap(), SketchKind::Sumax.build_nic().unwrap()];
            chunk.iter().for_each(|p| want.iter_mut().for_each(|s| s.insert(p)));
            assert_eq!(snap.sections.len(), want.len(), "{}: sections", path.display());
            for w in &want {
                let w = to_section(w).unwrap();
                let got = snap.sections.iter().find(|s| name(s) == name(&w)).unwrap();
                assert!(
                    *got == w,
                    "{}: the NIC's {} differs from the software model",
                    path.display(),
                    name(&w)
                );
            }
            // The per-switch half: the model over the same packets (ACU, the flow tower's
            // estimate after each packet), latency tower and key table equal, and with
            // 400-packet epochs the record buffer never fills: the records equal too.
            let half = PerSwitch::of_epoch(PerSwitchConfig::nic_default(), InsertMode::Acu, e as u32, chunk)
                .unwrap();
            let want = per_switch_sections(&half, half.records());
            assert!(
                snap.per_switch == want,
                "{}: the NIC's per-switch half differs from the model",
                path.display()
            );
            records += half.records().len();
            epochs_checked += 1;
        }
    }
    assert!(records > 0, "inflated-latency records came out of the NICs");
    eprintln!("{epochs_checked} epochs, {records} inflated-latency records equal");
    assert!(epochs_checked >= 3, "the run crossed epochs ({epochs_checked} checked)");
}
