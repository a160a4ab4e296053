//! Reading speed of the trace layer (criterion): a generated pcap of 500K packets with
//! INT stacks (2-5 hops), held in memory so the figure is the parser's, not the disk's.
//! `stream` is the streaming reader packet by packet; `pipeline` the same packets in
//! batches from the parser thread; `stats` the exact flow statistics (`trace stats`).
//! `per_switch_*` is the NIC's per-switch half at its default geometry over the parsed
//! packets (the flow estimates given), packet by packet and batched with prefetching.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use smartnic::sketch::per_switch::{PerSwitch, PerSwitchConfig};
use smartnic::trace::gen::{generate, GenConfig, ShimConfig};
use smartnic::trace::pipeline::{for_each_batch, BATCH};
use smartnic::trace::stats::{compute_from, Keep};
use smartnic::trace::{Format, Packet, PacketReader, TraceError};

const PACKETS: u64 = 500_000;

fn trace() -> Vec<u8> {
    let cfg = GenConfig {
        packets: PACKETS,
        flows: 20_000,
        shim: Some(ShimConfig::default()),
        ..GenConfig::default()
    };
    let mut pcap = Vec::new();
    generate(&cfg, &mut pcap, None).expect("generate");
    pcap
}

fn bench(c: &mut Criterion) {
    let bytes = trace();
    let mut g = c.benchmark_group("read_500K_int_pcap");
    g.throughput(Throughput::Elements(PACKETS));
    g.sample_size(10);
    g.bench_function("stream", |b| {
        b.iter(|| {
            let mut r = PacketReader::from_reader(&bytes[..], Format::Auto).unwrap();
            let mut n = 0u64;
            while let Some(p) = r.next_packet().unwrap() {
                n += p.key.as_bytes()[0] as u64;
            }
            n
        })
    });
    g.bench_function("pipeline", |b| {
        b.iter(|| {
            let mut r = PacketReader::from_reader(&bytes[..], Format::Auto).unwrap();
            let mut n = 0u64;
            for_each_batch::<_, TraceError, _>(&mut r, BATCH, |batch| {
                n += batch.len() as u64;
                Ok(())
            })
            .unwrap();
            n
        })
    });
    g.bench_function("stats", |b| {
        b.iter(|| {
            let mut r = PacketReader::from_reader(&bytes[..], Format::Auto).unwrap();
            compute_from(&mut r, Keep::Top(10), |_| {}).unwrap().totals.flows
        })
    });
    let packets: Vec<Packet> = {
        let mut r = PacketReader::from_reader(&bytes[..], Format::Auto).unwrap();
        std::iter::from_fn(|| r.next_packet().unwrap()).collect()
    };
    let estimates: Vec<u64> = (0..packets.len() as u64).map(|n| n % 1500).collect();
    g.bench_function("per_switch_one", |b| {
        b.iter(|| {
            let mut half = PerSwitch::new(PerSwitchConfig::nic_default()).unwrap();
            packets.iter().zip(&estimates).for_each(|(p, &e)| half.observe(0, p, e));
            half.stats().inflated
        })
    });
    g.bench_function("per_switch_batch", |b| {
        b.iter(|| {
            let mut half = PerSwitch::new(PerSwitchConfig::nic_default()).unwrap();
            for (p, e) in packets.chunks(BATCH).zip(estimates.chunks(BATCH)) {
                half.observe_batch(0, p, e);
            }
            half.stats().inflated
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
