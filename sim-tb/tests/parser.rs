//! The generated parser under Verilator, frame by frame against the software model
//! (`smartnic::trace::frame::parse_frame`): generated traces, structured random frames with
//! defects, hand-made edge frames, all back to back with zero gaps (and once with random
//! idle cycles), and the cycles per frame of back-to-back 64-byte frames.
mod parser_util;

use parser_util::frames::{edges, structured};
use parser_util::{expect, feat, Frame, Harness, Rng};
use smartnic::contract::wire::ipv4::Ipv4Packet;
use smartnic::trace::gen::{generate, GenConfig, ShimConfig};
use smartnic::trace::CaptureReader;
use smartnic_hdl::parser::CLASS_IP;
use std::time::Instant;

/// Frames of a generated pcap (shim, IPv6, VLAN and non-IP fractions), read back with the
/// host's capture reader.
fn generated(seed: u64, packets: u64) -> Vec<Frame> {
    let cfg = GenConfig {
        seed,
        packets,
        flows: packets / 10,
        ipv6: 0.3,
        vlan: 0.3,
        non_ip: 0.1,
        shim: Some(ShimConfig { min_hops: 1, max_hops: 16, switches: 64, ..Default::default() }),
        ..Default::default()
    };
    let mut pcap = Vec::new();
    generate(&cfg, &mut pcap, None).unwrap();
    let mut r = CaptureReader::new(std::io::Cursor::new(pcap)).unwrap();
    let mut frames = Vec::new();
    while let Some(f) = r.next_frame().unwrap() {
        // The generator captures the headers (`data`) of a longer wire frame (`orig_len`):
        // the captured bytes are what the parser sees.
        assert!(f.orig_len as usize >= f.data.len());
        frames.push(Frame::new(f.data.to_vec()));
    }
    frames
}

#[test]
fn generated_traces_match_the_software_model() {
    let mut h = Harness::new();
    let start = Instant::now();
    let mut none = Rng(0);
    for seed in [1, 2] {
        let frames = generated(seed, 15_000);
        h.run(&frames, 0.0, &mut none);
    }
    h.check_counters();
    let t = h.tally;
    eprintln!("generated: {t:?} in {:.1} s", start.elapsed().as_secs_f64());
    assert!(t.ip > 25_000 && t.non_ip > 2000, "{t:?}");
    assert_eq!(t.cycles, t.beats, "zero gaps: one beat per clock");
}

#[test]
fn structured_random_frames_match_the_software_model() {
    let mut h = Harness::new();
    let mut r = Rng(7);
    let start = Instant::now();
    let mut none = Rng(0);
    let mut classes = [0u64; 4];
    // IP verdicts per feature: every layer is exercised on frames that parse.
    let mut ip_with = [0u64; feat::NAMES.len()];
    for _ in 0..20 {
        let frames: Vec<Frame> = (0..5000).map(|_| structured(&mut r)).collect();
        for f in &frames {
            let class = expect(f).0;
            classes[class as usize] += 1;
            for (i, n) in ip_with.iter_mut().enumerate() {
                *n += (class == CLASS_IP && f.feat & (1 << i) != 0) as u64;
            }
        }
        h.run(&frames, 0.0, &mut none);
    }
    // The same generator with idle cycles between beats (tvalid low, garbage on the bus).
    let mut gaps = Rng(8);
    let frames: Vec<Frame> = (0..10_000).map(|_| structured(&mut r)).collect();
    h.run(&frames, 0.2, &mut gaps);
    h.check_counters();
    eprintln!("structured: {:?} classes {classes:?} in {:.1} s", h.tally, start.elapsed().as_secs_f64());
    let cover: Vec<String> = feat::NAMES.iter().zip(&ip_with).map(|(n, c)| format!("{n} {c}")).collect();
    eprintln!("IP frames with: {}", cover.join(", "));
    assert!(ip_with.iter().all(|&c| c >= 200), "thin coverage: {}", cover.join(", "));
    // Every outcome is well represented.
    assert!(classes[1] > 30_000 && classes[2] > 3000 && classes[3] > 20_000, "{classes:?}");
}

#[test]
fn edge_frames() {
    let mut h = Harness::new();
    let mut none = Rng(0);
    let cases = edges();
    for (name, f, class) in &cases {
        assert_eq!(expect(f).0, *class, "software verdict on `{name}`");
    }
    // Each edge frame alone, then all of them back to back, twice (so every frame follows
    // every kind of predecessor).
    for (_, f, _) in &cases {
        h.run(std::slice::from_ref(f), 0.0, &mut none);
    }
    let all: Vec<Frame> = cases.iter().chain(cases.iter().rev()).map(|c| c.1.clone()).collect();
    h.run(&all, 0.0, &mut none);
    h.check_counters();
}

#[test]
fn back_to_back_64_byte_frames_take_8_cycles_each() {
    let mut h = Harness::new();
    let mut r = Rng(3);
    let mut none = Rng(0);
    let frames: Vec<Frame> = (0..10_000)
        .map(|i| {
            let mut f = parser_util::frames::v4_udp(0, 30);
            f.extend(r.bytes(22));
            Ipv4Packet::new_unchecked(&mut f[14..]).set_src_addr([10, 0, 0, i as u8]);
            assert_eq!(f.len(), 64);
            Frame::new(f)
        })
        .collect();
    let rows = h.run(&frames, 0.0, &mut none);
    h.check_counters();
    let per_frame = rows as f64 / frames.len() as f64;
    eprintln!(
        "back-to-back 64-byte frames: {rows} cycles for {} frames = {per_frame} cycles/frame",
        frames.len()
    );
    assert_eq!(rows, 8 * frames.len() as u64);
    assert_eq!(h.tally.ip, frames.len() as u64);
}

/// Frame lengths around every limit the parser's old 16-bit length had (8191/8192/8193
/// beats, 2^16 bytes) and the largest IP packets captures hold: IPv4 total length 65,535
/// behind Ethernet, two VLAN tags and a 16-hop shim (65,659 bytes), a 185,000-byte IPv6
/// jumbogram (payload length 0, a BIG TCP capture). Every one is IP with its exact length, on
/// both sides, back to back with short frames; the BYTES counter is checked at core level in
/// `core.rs`.
#[test]
fn longest_frames() {
    use parser_util::frames::{frame, ipv4_l3, ipv6_l3, udp, v4_udp};
    let mut h = Harness::new();
    let mut none = Rng(0);
    let short = v4_udp(0, 8);
    let padded = |n: usize| {
        let mut f = short.clone();
        f.resize(n, 0xA5);
        Frame::new(f)
    };
    let mut frames = vec![Frame::new(short.clone())];
    for n in [65_520, 65_527, 65_528, 65_529, 65_535, 65_536, 65_537, 65_543, 65_544, 65_545, 65_560] {
        frames.push(padded(n));
        frames.push(Frame::new(short.clone()));
    }
    // IPv4 of total length 65,535 (the largest) behind every optional layer.
    let mut big = frame(2, Some(16), ipv4_l3(17, 0, 65_535 - 20, udp()));
    big.resize(big.len() + 65_535 - 28, 0x5A);
    assert_eq!(big.len(), 14 + 8 + 6 + 96 + 65_535);
    frames.push(Frame::new(big));
    // An IPv6 jumbogram-style capture: payload length 0, 185,000 bytes.
    let mut jumbo = frame(0, None, ipv6_l3(17, 0, Vec::new(), udp()));
    jumbo.resize(185_000, 0x3C);
    frames.push(Frame::new(jumbo));
    frames.push(Frame::new(short.clone()));
    for f in &frames {
        assert!(matches!(expect(f).0, CLASS_IP), "software verdict on a {}-byte frame", f.data.len());
    }
    h.run(&frames, 0.0, &mut none);
    h.check_counters();
    assert_eq!((h.tally.ip, h.tally.malformed), (frames.len() as u64, 0));
}

/// The length limit itself, on a parser built with 17-bit lengths (`LenParser<17>`, longest
/// frame 131,071 bytes) so the frames around it simulate in a moment; the NIC's 32-bit
/// parser is the same logic at 4 GB. Frames of 2^17 - 9 .. 2^17 + 9 bytes and a 300,000-byte
/// one: up to the limit IP with the exact length, past it malformed with the length stopped
/// at the limit; the frames after each are parsed normally.
#[test]
fn length_limit_of_a_narrow_parser() {
    use parser_util::frames::v4_udp;
    use smartnic_hdl::parser::LenParser;
    const LB: usize = 17;
    let v = smartnic_hdl::flow::to_verilog("parser_len17", &mut LenParser::<LB>::new()).unwrap();
    let m = smartnic_sim_tb::Model::of_verilog("parser_len17", &v).unwrap_or_else(|e| panic!("{e}"));
    let mut h = Harness::with_model(m);
    let max = LenParser::<LB>::MAX_LEN as usize;
    h.max_len = Some(max);
    let short = v4_udp(1, 8);
    let mut frames = Vec::new();
    for n in (max - 9..=max + 9).chain([300_000]) {
        let mut f = short.clone();
        f.resize(n, 0x77);
        frames.push(Frame::new(f));
        frames.push(Frame::new(short.clone()));
    }
    let mut none = Rng(0);
    h.run(&frames, 0.0, &mut none);
    h.check_counters();
    let long = (max - 9..=max + 9).filter(|&n| n > max).count() as u64 + 1;
    assert_eq!((h.tally.ip, h.tally.malformed), (frames.len() as u64 - long, long));
}
