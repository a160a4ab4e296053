//! Insertion throughput of every software sketch (criterion).
//!
//! Workload: SketchINT's CPU setting, a Zipf(1.0) trace of 2M packets over 170K flows
//! (sizes from the trace generator, packet order shuffled with a fixed seed), 2 MiB of
//! counters per sketch; TowerSketch is d=5 with 2/4/8/16/32-bit counters (d=3: 8/16/32).
//! One packet is one element, so criterion's throughput line reads directly in packets per
//! second. Every TowerSketch (and the CM/CU baselines, Towers of equal 32-bit widths) uses
//! the prefetching `insert_batch`, the path bulk consumers take; `tower-cm-single` measures
//! one `insert` call per packet for comparison.
//!
//! `SMARTNIC_KEYS_OUT=<file>` also writes the workload's keys to `<file>` in the record
//! layout of SketchINT's CPU tools (13-byte key, then an 8-byte timestamp, here the packet
//! number, little-endian), so other implementations can be timed on the same packets.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use smartnic::sketch::{AnySketch, SketchKind, Tower};
use smartnic::trace::gen::zipf_sizes;
use smartnic::trace::Packet;
use smartnic_contract::geometry::{InsertMode, TowerGeometry};
use smartnic_contract::shim::Hop;
use smartnic_contract::vectors::KeyStream;
use smartnic_contract::FlowKey;

const PACKETS: u64 = 2_000_000;
const FLOWS: u64 = 170_000;
const MEMORY: u64 = 2 << 20;

fn workload() -> Vec<FlowKey> {
    let mut keys = KeyStream::new(7);
    let mut stream: Vec<FlowKey> = zipf_sizes(PACKETS, FLOWS, 1.0)
        .into_iter()
        .flat_map(|n| std::iter::repeat_n(keys.next_key(), n as usize))
        .collect();
    stream.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(1));
    stream
}

/// The workload as packets for SuMax: one hop each, timestamps 700 ns apart and delays
/// spread over 0..50 us.
fn sumax_packets(keys: &[FlowKey]) -> Vec<Packet> {
    let packet = |(i, k): (usize, &FlowKey)| {
        let i = i as u64;
        let hop = Hop { switch_id: 1, latency_ns: ((i * 2_654_435_761) % 50_000) as u32 };
        Packet { ts_ns: 1_000_000 + i * 700, wire_len: 64, key: *k, hops: [hop].into_iter().collect() }
    };
    keys.iter().enumerate().map(packet).collect()
}

/// Prints the average relative error over all flows of each Tower mode inserted on 1
/// and 2 shards (CM: equal by construction; CU/ACU: what sharding costs).
fn sharded_accuracy(keys: &[FlowKey]) {
    let mut truth = std::collections::HashMap::new();
    keys.iter().for_each(|k| *truth.entry(*k).or_insert(0u64) += 1);
    for kind in [SketchKind::TowerCm, SketchKind::TowerCu, SketchKind::TowerAcu, SketchKind::Cu] {
        let AnySketch::Tower(fresh) = kind.build(MEMORY) else { continue };
        let are: Vec<String> = [1, 2]
            .iter()
            .map(|&shards| {
                let mut t = fresh.clone();
                t.insert_sharded(keys, shards);
                let sum: f64 = truth.iter().map(|(k, &n)| t.query(k).abs_diff(n) as f64 / n as f64).sum();
                format!("{shards} shard(s) ARE {:.4}", sum / truth.len() as f64)
            })
            .collect();
        eprintln!("accuracy {}: {}", kind.name(), are.join(", "));
    }
}

/// Writes `keys` as 21-byte records (key, then the packet number as an 8-byte timestamp).
fn write_key_file(path: &str, keys: &[FlowKey]) {
    let mut out = Vec::with_capacity(keys.len() * 21);
    for (n, k) in keys.iter().enumerate() {
        out.extend_from_slice(k.as_bytes());
        out.extend_from_slice(&(n as u64).to_le_bytes());
    }
    if let Err(e) = std::fs::write(path, out) {
        panic!("cannot write the key file {path}: {e}");
    }
}

fn insert_all(sketch: &mut AnySketch, keys: &[FlowKey], packets: &[Packet]) {
    match sketch {
        AnySketch::Tower(t) => t.insert_batch(keys),
        AnySketch::Elastic(e) => keys.iter().for_each(|k| e.insert(k)),
        AnySketch::SuMax(s) => s.insert_packets(packets),
    }
}

/// The Tower configurations of the published CPU comparison that [`SketchKind`] does not
/// name (other depths of the same 2 MiB).
fn extra_towers() -> Vec<(&'static str, Tower)> {
    let t = |widths: &[u8], mode| Tower::new(TowerGeometry::equal_memory(widths, MEMORY), mode).unwrap();
    vec![
        ("tower-cm-d3", t(&[8, 16, 32], InsertMode::Cm)),
        ("tower-cu-d3", t(&[8, 16, 32], InsertMode::Cu)),
        ("tower-acu-d3", t(&[8, 16, 32], InsertMode::Acu)),
        ("cm-d5", t(&[32; 5], InsertMode::Cm)),
        ("cu-d5", t(&[32; 5], InsertMode::Cu)),
    ]
}

fn bench(c: &mut Criterion) {
    let keys = workload();
    let packets = sumax_packets(&keys);
    if let Ok(path) = std::env::var("SMARTNIC_KEYS_OUT") {
        write_key_file(&path, &keys);
    }
    sharded_accuracy(&keys);
    let mut g = c.benchmark_group("insert_2M_zipf1.0_2MiB");
    g.throughput(Throughput::Elements(keys.len() as u64));
    g.sample_size(10);
    let named = SketchKind::ALL.iter().map(|k| (k.name(), k.build(MEMORY)));
    let extra = extra_towers().into_iter().map(|(n, t)| (n, AnySketch::Tower(t)));
    for (name, fresh) in named.chain(extra) {
        g.bench_function(name, |b| {
            b.iter_batched_ref(|| fresh.clone(), |s| insert_all(s, &keys, &packets), BatchSize::LargeInput)
        });
    }
    for kind in [SketchKind::TowerCm, SketchKind::TowerCu, SketchKind::TowerAcu, SketchKind::Cu] {
        let AnySketch::Tower(fresh) = kind.build(MEMORY) else { continue };
        for shards in [1, 2] {
            g.bench_function(format!("{}-sharded-{shards}", kind.name()), |b| {
                b.iter_batched_ref(
                    || fresh.clone(),
                    |t| t.insert_sharded(&keys, shards),
                    BatchSize::LargeInput,
                )
            });
        }
    }
    if let AnySketch::Tower(fresh) = SketchKind::TowerCm.build(MEMORY) {
        // The hashing share of TowerCM: the five CRCs and indices alone, no counter touched.
        g.bench_function("tower-indices-only", |b| {
            b.iter(|| keys.iter().fold(0u32, |s, k| s ^ fresh.indices(k)[4]))
        });
        g.bench_function("tower-cm-single", |b| {
            b.iter_batched_ref(
                || fresh.clone(),
                |t| keys.iter().for_each(|k| t.insert(k)),
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
    bench_merge(c, &keys);
}

/// The fixed cost of one extra shard in [`Tower::insert_sharded`]: merging one filled
/// 2 MiB copy into another (the scaling model's `M`, paid once per shard past the first).
fn bench_merge(c: &mut Criterion, keys: &[FlowKey]) {
    let mut g = c.benchmark_group("merge_2MiB");
    g.sample_size(10);
    for kind in [SketchKind::TowerCm, SketchKind::Cu] {
        let AnySketch::Tower(mut filled) = kind.build(MEMORY) else { continue };
        filled.insert_batch(keys);
        g.bench_function(kind.name(), |b| {
            b.iter_batched_ref(|| filled.clone(), |t| t.merge(&filled), BatchSize::LargeInput)
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
