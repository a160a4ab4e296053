//! `smartnic demo` through the simulated NIC (the `smartnic-sim` service, Verilator core) on
//! a small trace: the demo succeeds, and every epoch snapshot it read out over the driver
//! holds, section for section, the counters of the software TowerSketch and SuMax built
//! here over the same epoch's packets (checked by this test, not by the demo's own
//! comparison).

use smartnic::demo::{run, verdict, DemoConfig};
use smartnic::simulator::{no_progress, SIM_ENV};
use smartnic::sketch::snapshot::to_section;
use smartnic::sketch::SketchKind;
use smartnic::trace::{Packet, PacketReader};
use smartnic_driver::snapshot::{Section, Snapshot};
use std::path::Path;

const PACKETS: u64 = 6_000;
const EPOCH_PACKETS: u64 = 2_500;

/// The IP packets of the demo's trace, as the software parser reads them.
fn packets(pcap: &Path) -> Vec<Packet> {
    let mut reader = PacketReader::open(pcap).unwrap();
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
        packets: PACKETS,
        flows: 700,
        epoch_packets: EPOCH_PACKETS,
        seed: 12,
        top: 4,
        software: false,
    };
    run(&cfg, no_progress)
        .and_then(|report| verdict(&report))
        .unwrap_or_else(|e| panic!("demo through the simulated NIC failed: {e:#}"));
    let packets = packets(&dir.path().join("trace.pcap"));
    assert_eq!(packets.len() as u64, PACKETS);
    let chunks: Vec<&[Packet]> = packets.chunks(EPOCH_PACKETS as usize).collect();
    assert_eq!(chunks.len(), 3);
    for (e, chunk) in chunks.into_iter().enumerate() {
        let snap = Snapshot::read_file(&dir.path().join(format!("nic/epoch-{e:06}.snap"))).unwrap();
        assert_eq!((snap.epoch, snap.packets), (e as u64, chunk.len() as u64));
        let mut want = [SketchKind::TowerAcu.build_nic().unwrap(), SketchKind::Sumax.build_nic().unwrap()];
        chunk.iter().for_each(|p| want.iter_mut().for_each(|s| s.insert(p)));
        assert_eq!(snap.sections.len(), want.len(), "epoch {e}: sections");
        for w in &want {
            let w = to_section(w).unwrap();
            let got = snap.sections.iter().find(|s| name(s) == name(&w)).unwrap();
            assert!(*got == w, "epoch {e}: the NIC's {} differs from the software model", name(&w));
        }
    }
}
