//! A synthetic fleet: many NICs' epochs written as the exporter writes real ones, for
//! measuring how queries grow with the fleet (`smartnic fleet synth`).
//!
//! The network: `hosts` hosts, one NIC each, under a two-tier leaf-spine fabric (`leaves`
//! leaf switches of `hosts / leaves` hosts, `spines` spines). Each NIC sees flows towards
//! its own host from random sources, sized Zipf(1.1), each with the path source leaf ->
//! spine -> destination leaf (the shared leaf alone for a flow inside one leaf). A switch's latency is
//! its own base (a few spines run hot) plus noise; a hop's count is the flow's. Nothing here
//! comes from a sketch: these are synthetic counters, in the real tables' schema, through
//! the real writer ([`ParquetStore`], unsynced: the data can be made again).

use std::net::Ipv4Addr;
use std::path::Path;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::export::ipfix::{Addrs, FlowId, Record};
use crate::export::parquet::{EpochRows, Health, ParquetError, ParquetStore};

/// What to generate.
#[derive(Clone, Copy, Debug)]
pub struct SynthConfig {
    pub nics: usize,
    pub epochs: u64,
    /// Flows each NIC reports per epoch.
    pub flows: usize,
    pub leaves: u16,
    pub spines: u16,
    pub seed: u64,
}

/// What was written.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct SynthStats {
    pub files: u64,
    pub flow_rows: u64,
    pub hop_rows: u64,
    pub health_rows: u64,
}

/// Device name of NIC `i`.
pub fn device_name(i: usize) -> String {
    format!("sim:nic{i:05}")
}

/// Writes the fleet under `dir`, calling `progress` after each NIC.
pub fn write_fleet(
    dir: &Path,
    cfg: &SynthConfig,
    mut progress: impl FnMut(usize),
) -> Result<SynthStats, ParquetError> {
    let store = ParquetStore::unsynced(dir);
    let mut stats = SynthStats::default();
    for nic in 0..cfg.nics {
        let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ (nic as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        for epoch in 0..cfg.epochs {
            let rows = nic_epoch(cfg, nic, epoch, &mut rng);
            stats.flow_rows +=
                rows.records.iter().filter(|r| matches!(r, Record::Flow { .. })).count() as u64;
            stats.hop_rows += rows.records.iter().filter(|r| matches!(r, Record::Hop { .. })).count() as u64;
            stats.health_rows += 1;
            stats.files += store.write_epoch(&rows)?.len() as u64;
        }
        progress(nic + 1);
    }
    Ok(stats)
}

/// Host `h`'s address: 10.(h / 250).(h % 250).1.
fn host_addr(h: usize) -> Ipv4Addr {
    Ipv4Addr::new(10, (h / 250) as u8, (h % 250) as u8, 1)
}

fn leaf_of(cfg: &SynthConfig, host: usize) -> u16 {
    (host % usize::from(cfg.leaves)) as u16
}

/// Switch IDs: leaves 1..=leaves, spines after them.
fn leaf_id(leaf: u16) -> u16 {
    1 + leaf
}

fn spine_id(cfg: &SynthConfig, spine: u16) -> u16 {
    1 + cfg.leaves + spine
}

/// A switch's base latency, ns: leaves 800, spines 1500, every fourth spine hot (6000).
fn base_latency(cfg: &SynthConfig, switch: u16) -> f64 {
    match switch.checked_sub(1 + cfg.leaves) {
        None => 800.0,
        Some(s) if s % 4 == 0 => 6000.0,
        Some(_) => 1500.0,
    }
}

/// One NIC's epoch: flows into its host.
fn nic_epoch(cfg: &SynthConfig, nic: usize, epoch: u64, rng: &mut ChaCha8Rng) -> EpochRows {
    let hosts = cfg.nics.max(2);
    let mut records = Vec::with_capacity(cfg.flows * 4);
    let mut hops = Vec::new();
    let mut total = 0u64;
    for f in 0..cfg.flows {
        let src_host = (nic + 1 + rng.gen_range(0..hosts - 1)) % hosts;
        let flow = FlowId {
            addrs: Addrs::V4 { src: host_addr(src_host), dst: host_addr(nic) },
            src_port: rng.gen_range(1024..=65535),
            dst_port: [80, 443, 8080, 9000][f % 4],
            proto: if f % 5 == 0 { 17 } else { 6 },
        };
        // Zipf(1.1) by rank: the f-th flow's share, scaled so the largest has ~100K.
        let packets = (100_000.0 / ((f + 1) as f64).powf(1.1)).ceil() as u64 + rng.gen_range(0..3);
        total += packets;
        records.push(Record::Flow { flow, epoch, packets });
        for (i, sw) in path(cfg, src_host, nic, rng).into_iter().enumerate() {
            let latency = base_latency(cfg, sw) * rng.gen_range(0.5..1.5);
            hops.push(Record::Hop {
                flow,
                epoch,
                switch_id: sw,
                hop_index: i as u16 + 1,
                hop_packets: Some(packets),
                avg_latency_ns: Some(latency.round() as u64),
            });
        }
    }
    records.extend(hops);
    let time_ns = 1_764_000_000_000_000_000 + epoch * 1_000_000_000;
    let health = Health {
        frames: Some(total * (epoch + 1)),
        sketched: Some(total * (epoch + 1)),
        bytes: Some(total * (epoch + 1) * 700),
        non_ip: Some(0),
        malformed: Some(0),
        records_dropped: Some(0),
        failure: None,
        readout_seconds: Some(rng.gen_range(0.001..0.003)),
    };
    EpochRows {
        device: device_name(nic),
        epoch: Some(epoch),
        time_ns,
        snapshot_packets: Some(total),
        records,
        health,
    }
}

/// The switches from `src` to `dst`: leaf, spine, leaf; the one leaf when both hosts share
/// it.
fn path(cfg: &SynthConfig, src: usize, dst: usize, rng: &mut ChaCha8Rng) -> Vec<u16> {
    let (a, b) = (leaf_of(cfg, src), leaf_of(cfg, dst));
    if a == b {
        return vec![leaf_id(a)];
    }
    vec![leaf_id(a), spine_id(cfg, rng.gen_range(0..cfg.spines)), leaf_id(b)]
}
