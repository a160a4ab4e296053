//! The generated hash unit under Verilator against the contract: every checked-in vector for
//! every family member, and a million random keys at one key per clock.
use smartnic_contract::hash::{index, CrcParams, FAMILY};
use smartnic_contract::vectors::{parse_hash_vectors, KeyStream, HASH_FILE};
use smartnic_contract::KEY_LEN;
use smartnic_hdl::flow;
use smartnic_hdl::hash::{key_to_u128, HashUnit, LATENCY};
use smartnic_sim_tb::{Model, ModelBuild};
use std::collections::VecDeque;
use std::time::Instant;

const K: usize = 16;

fn model_for(member: usize) -> Model {
    let name = format!("hash_m{member}_k{K}");
    let v = flow::to_verilog(&name, &mut HashUnit::<K>::new(&FAMILY[member])).unwrap();
    let m = Model::of_verilog(&name, &v).unwrap_or_else(|e| panic!("{e}"));
    report_build(m.build());
    m
}

fn report_build(b: &ModelBuild) {
    match b.build_seconds {
        Some(s) => eprintln!("built {} in {s:.1} s ({})", b.block, b.dir.display()),
        None => eprintln!("reused {} ({})", b.block, b.dir.display()),
    }
}

/// Streams `keys` (None = bubble) through the model, one per clock, and checks every output
/// cycle against `params`: the valid bit LATENCY clocks after the key, the hash, the index.
/// Returns (cycles, results).
fn stream(
    m: &mut Model,
    params: &CrcParams,
    keys: impl Iterator<Item = Option<[u8; KEY_LEN]>>,
) -> (u64, u64) {
    let (key, key_valid) = (m.port("key"), m.port("key_valid"));
    let (hash, idx, valid) = (m.port("hash"), m.port("index"), m.port("valid"));
    let start = m.cycles();
    let mut in_flight: VecDeque<Option<u32>> = VecDeque::new();
    let mut results = 0u64;
    let mut check = |m: &mut Model, want: Option<u32>| {
        let v = m.get(valid);
        assert_eq!(v, want.is_some() as u128, "valid bit at cycle {}", m.cycles());
        if let Some(h) = want {
            assert_eq!(m.get(hash) as u32, h, "hash at cycle {}", m.cycles());
            assert_eq!(m.get(idx) as u32, index(h, 1 << K), "index at cycle {}", m.cycles());
            results += 1;
        }
    };
    for k in keys {
        match k {
            Some(k) => {
                m.set(key, key_to_u128(&k));
                m.set(key_valid, 1);
            }
            None => m.set(key_valid, 0),
        }
        in_flight.push_back(k.map(|k| params.checksum(&k)));
        m.tick();
        if in_flight.len() == LATENCY {
            let want = in_flight.pop_front().unwrap();
            check(m, want);
        }
    }
    m.set(key_valid, 0);
    while let Some(want) = in_flight.pop_front() {
        m.tick();
        check(m, want);
    }
    (m.cycles() - start, results)
}

#[test]
fn every_vector_of_every_member() {
    let vectors = parse_hash_vectors(HASH_FILE);
    assert!(vectors.len() >= 20);
    for (member, params) in FAMILY.iter().enumerate() {
        let mut m = model_for(member);
        m.reset(2);
        // The vectors themselves, back to back, then the same with the vector's own CRC
        // compared (guards against params.checksum and the file drifting apart).
        let (cycles, results) = stream(&mut m, params, vectors.iter().map(|v| Some(v.0 .0)));
        assert_eq!(results, vectors.len() as u64);
        assert_eq!(cycles, vectors.len() as u64 + LATENCY as u64 - 1);
        for (k, crcs) in &vectors {
            assert_eq!(params.checksum(&k.0), crcs[member], "vector file vs checksum");
        }
    }
}

fn random_key(ks: &mut KeyStream) -> [u8; KEY_LEN] {
    let a = ks.next_u64().to_be_bytes();
    let b = ks.next_u64().to_be_bytes();
    let mut k = [0u8; KEY_LEN];
    k[..8].copy_from_slice(&a);
    k[8..].copy_from_slice(&b[..KEY_LEN - 8]);
    k
}

/// At least 1M random keys, back to back: every result matches `CrcParams::checksum`, and the unit
/// accepts one key per clock (results per cycle tends to 1, with exactly LATENCY - 1 drain clocks).
#[test]
fn million_random_keys_one_per_clock() {
    const N: u64 = 1 << 20;
    let params = FAMILY[0];
    let mut m = Model::of_block("hash").unwrap_or_else(|e| panic!("{e}"));
    report_build(m.build());
    m.reset(2);
    let mut ks = KeyStream::new(0x5EED);
    let t = Instant::now();
    let (cycles, results) = stream(&mut m, &params, (0..N).map(|_| Some(random_key(&mut ks))));
    let secs = t.elapsed().as_secs_f64();
    eprintln!(
        "hash: {results} keys in {cycles} cycles ({:.6} results/cycle, latency {LATENCY}), {:.2} Mcycles/s incl. checksum",
        results as f64 / cycles as f64,
        cycles as f64 / secs / 1e6
    );
    assert_eq!(results, N);
    assert_eq!(cycles, N + LATENCY as u64 - 1);
}

/// Bubbles and a reset in mid-stream: the valid bit follows key_valid exactly, and a reset
/// kills what is in flight.
#[test]
fn bubbles_and_reset() {
    let params = FAMILY[0];
    let mut m = Model::of_block("hash").unwrap_or_else(|e| panic!("{e}"));
    m.reset(1);
    let mut ks = KeyStream::new(99);
    let keys: Vec<_> = (0..5000)
        .map(|_| {
            let k = random_key(&mut ks);
            (!k[0].is_multiple_of(3)).then_some(k)
        })
        .collect();
    let expect = keys.iter().filter(|k| k.is_some()).count() as u64;
    let (cycles, results) = stream(&mut m, &params, keys.into_iter());
    assert_eq!((cycles, results), (5000 + LATENCY as u64 - 1, expect));
    // Keys entered right before or during a reset never come out.
    let (key_valid, valid) = (m.port("key_valid"), m.port("valid"));
    m.set(key_valid, 1);
    m.tick();
    m.reset(1);
    m.set(key_valid, 0);
    for _ in 0..LATENCY + 1 {
        assert_eq!(m.get(valid), 0);
        m.tick();
    }
}

/// A VCD trace can be written and contains the ports.
#[test]
fn vcd_trace() {
    let b = smartnic_sim_tb::build_block("hash").unwrap_or_else(|e| panic!("{e}"));
    let mut m = Model::new(b, true).unwrap();
    let path = smartnic_sim_tb::build::trace_path("hash-smoke");
    m.trace(&path).unwrap();
    m.reset(2);
    m.set_by_name("key", 1);
    m.set_by_name("key_valid", 1);
    m.tick_n(4);
    drop(m);
    let vcd = std::fs::read_to_string(&path).unwrap();
    assert!(vcd.contains("key_valid") && vcd.contains("$enddefinitions"), "{}", &vcd[..vcd.len().min(400)]);
}
