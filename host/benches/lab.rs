//! Speed of the network lab (criterion): packet-hops simulated per second on one core.
//!
//! One element is one packet forwarded by one switch (ingress twin, queue, egress twin),
//! so criterion's throughput line reads directly in packet-hops per second. Frames go to
//! a sink that keeps nothing: this measures the simulation, not the disk. The cases vary
//! the load (how long queues get), the flow sizes (web-search's long flows against many
//! small fixed-size ones) and the network (k = 4 and k = 8 fat-trees: 16 and 128 hosts).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use smartnic::lab::engine::LabConfig;
use smartnic::lab::workload::{SizeDist, Workload};
use smartnic::lab::{run, NullSink};
use smartnic_p4::topology::{fat_tree, DEFAULT_DELAY_NS, DEFAULT_RATE_BPS};

const PACKETS: u64 = 200_000;

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("lab");
    g.sample_size(10);
    let cases = [
        (4, 0.3, SizeDist::WebSearch, "web-search"),
        (4, 0.7, SizeDist::WebSearch, "web-search"),
        (4, 0.3, SizeDist::Fixed(20_000), "fixed-20KB"),
        (4, 0.7, SizeDist::Fixed(20_000), "fixed-20KB"),
        (8, 0.3, SizeDist::WebSearch, "web-search"),
        (8, 0.7, SizeDist::WebSearch, "web-search"),
    ];
    for (k, load, sizes, name) in cases {
        let t = fat_tree(k, DEFAULT_RATE_BPS, DEFAULT_DELAY_NS).unwrap();
        let cfg = LabConfig {
            workload: Workload { sizes, load, max_packets: Some(PACKETS), ..Workload::default() },
            ..LabConfig::default()
        };
        let hops = run(&t, &cfg, &mut NullSink).unwrap().totals.packet_hops;
        g.throughput(Throughput::Elements(hops));
        g.bench_function(format!("fat-tree-{k}/{name}/load-{load}"), |b| {
            b.iter(|| run(&t, &cfg, &mut NullSink).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
