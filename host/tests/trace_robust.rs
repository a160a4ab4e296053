//! Robustness of the trace readers: damaged files give errors that name the offset or
//! count frames as malformed; pcapng in both byte orders with mixed interfaces; and a
//! seeded fuzz loop of >= 100k inputs that must never panic.

use nom::number::Endianness;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use smartnic::trace::frame::{parse_frame, FrameClass, FrameError, LINKTYPE_ETHERNET, LINKTYPE_IPV4};
use smartnic::trace::gen::{generate, GenConfig, ShimConfig};
use smartnic::trace::pcap::{PcapReader, PcapWriter};
use smartnic::trace::pcapng::{PcapNgReader, PcapNgWriter};
use smartnic::trace::records::RecordReader;
use smartnic::trace::stats::FlowTable;
use smartnic::trace::{CaptureReader, Classified, Format, PacketReader, Problem, TraceError};
use smartnic_contract::shim::{Hop, IntShim};
use smartnic_contract::FlowKey;

/// IPv4 (IHL 5) + UDP header, total length `20 + 8 + payload`.
fn ipv4_udp(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16) -> Vec<u8> {
    let mut f = vec![0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0];
    f.extend_from_slice(&src);
    f.extend_from_slice(&dst);
    f.extend_from_slice(&sport.to_be_bytes());
    f.extend_from_slice(&dport.to_be_bytes());
    f.extend_from_slice(&[0, 8, 0, 0]);
    f
}

fn eth(ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2];
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

fn shim_frame(hops: &[Hop], ip: &[u8]) -> Vec<u8> {
    let mut s = Vec::new();
    IntShim { next_type: 0x0800, hops: hops.to_vec() }.emit(&mut s);
    s.extend_from_slice(ip);
    eth(0x88B5, &s)
}

fn key_a() -> FlowKey {
    FlowKey::from_v4([10, 0, 0, 1], [10, 0, 0, 2], 1111, 53, 17)
}

fn pcap_of(frames: &[Vec<u8>]) -> Vec<u8> {
    let mut w = PcapWriter::new(Vec::new(), 65535, 1).unwrap();
    for (i, f) in frames.iter().enumerate() {
        w.write(1_000 + i as u64, f.len() as u32 + 100, f).unwrap();
    }
    w.into_inner().unwrap()
}

fn read_all(bytes: &[u8]) -> Result<(FlowTable, u64), TraceError> {
    let mut r = PacketReader::from_reader(bytes, Format::Auto)?;
    let mut t = FlowTable::new();
    let mut n = 0;
    while let Some(c) = r.next_classified()? {
        t.add(&c);
        n += 1;
    }
    Ok((t, n))
}

#[test]
fn frames_are_classified_and_counted() {
    let ip = ipv4_udp([10, 0, 0, 1], [10, 0, 0, 2], 1111, 53);
    let hop = Hop { switch_id: 9, latency_ns: 700 };
    let mut bad_ihl = ip.clone();
    bad_ihl[0] = 0x43;
    let mut bad_shim = shim_frame(&[hop], &ip);
    bad_shim[14] = 7; // unknown shim kind
    let frames = vec![
        eth(0x0800, &ip),
        shim_frame(&[hop, Hop { switch_id: 3, latency_ns: 5 }], &ip),
        eth(0x0806, &[0; 28]),
        eth(0x0800, &ip[..15]),
        eth(0x0800, &bad_ihl),
        bad_shim,
        vec![1, 2, 3],
    ];
    let (t, n) = read_all(&pcap_of(&frames)).unwrap();
    assert_eq!(n, 7);
    let s = t.finish();
    assert_eq!(s.totals.packets, 2);
    assert_eq!(s.totals.non_ip, 1);
    assert_eq!(s.totals.malformed, 4);
    assert_eq!(s.totals.flows, 1);
    assert_eq!(s.totals.bytes, (ip.len() as u64 + 14 + 100) * 2 + 18);
    let f = &s.flows[0];
    assert_eq!(f.key, key_a().to_string());
    assert_eq!((f.first_ns, f.last_ns, f.max_iat_ns), (1000, 1001, 1));
    assert_eq!(f.hop_latency_ns, [(3, 5), (9, 700)].into());
    assert_eq!(f.delay_ns, 705);
    let reasons: Vec<(&str, u64)> = s.malformed_by_reason.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(
        reasons,
        vec![("bad_ihl", 1), ("bad_shim", 1), ("ethernet_truncated", 1), ("ipv4_truncated", 1)]
    );
}

#[test]
fn damaged_pcap_files_are_errors_with_offsets() {
    let ip = ipv4_udp([10, 0, 0, 1], [10, 0, 0, 2], 1111, 53);
    let good = pcap_of(&[eth(0x0800, &ip), eth(0x0800, &ip)]);
    let rec_len = 16 + 14 + ip.len();
    let second = 24 + rec_len as u64;

    // Truncated inside the second record's data, and inside its header.
    for cut in [good.len() - 1, 24 + rec_len + 5] {
        let e = read_all(&good[..cut]).err().expect("truncation must be an error");
        assert_eq!(e.offset(), Some(second), "cut {cut}: {e}");
        assert!(matches!(e.problem(), Some(Problem::Truncated { .. })), "{e}");
    }
    // A clean cut at a record boundary is just a shorter file.
    assert_eq!(read_all(&good[..24 + rec_len]).unwrap().1, 1);

    // incl_len beyond the snap length, and a huge incl_len.
    let mut w = PcapWriter::new(Vec::new(), 40, 1).unwrap();
    w.write(1, 60, &eth(0x0800, &ip)).unwrap();
    let e = read_all(&w.into_inner().unwrap()).err().unwrap();
    assert_eq!(e.problem(), Some(&Problem::RecordTooLarge { len: 42, limit: 40 }));
    let mut huge = good.clone();
    huge[24 + 8..24 + 12].copy_from_slice(&u32::MAX.to_le_bytes());
    let e = read_all(&huge).err().unwrap();
    assert_eq!(e.offset(), Some(24));
    assert!(matches!(e.problem(), Some(Problem::RecordTooLarge { len: u32::MAX, .. })));

    // Garbage and short headers, a bad version.
    let e = read_all(b"GARBAGE GARBAGE GARBAGE GARBAGE").err().unwrap();
    assert_eq!(e.problem(), Some(&Problem::UnknownMagic(*b"GARB")));
    assert!(e.to_string().contains("--format records"), "{e}");
    let e = read_all(&good[..10]).err().unwrap();
    assert!(matches!(e.problem(), Some(Problem::Truncated { got: 10, .. })), "{e}");
    let e = read_all(&good[..2]).err().unwrap();
    assert!(matches!(e.problem(), Some(Problem::Truncated { got: 2, .. })), "{e}");
    let mut v = good.clone();
    v[4] = 9;
    assert!(matches!(read_all(&v).err().unwrap().problem(), Some(Problem::Version { major: 9, .. })));
    assert!(read_all(&[]).is_err());
}

#[test]
fn pcap_both_byte_orders_and_resolutions() {
    let ip = ipv4_udp([10, 0, 0, 1], [10, 0, 0, 2], 1111, 53);
    let frame = eth(0x0800, &ip);
    for endian in [Endianness::Little, Endianness::Big] {
        for nanos in [false, true] {
            let mut w = PcapWriter::with_format(Vec::new(), endian, nanos, 65535, 1).unwrap();
            w.write(5_123_456_789, 1500, &frame).unwrap();
            let bytes = w.into_inner().unwrap();
            let mut r = PcapReader::new(&bytes[..]).unwrap();
            assert_eq!(r.header().nanos, nanos);
            let f = r.next_frame().unwrap().unwrap();
            assert_eq!(f.ts_ns, if nanos { 5_123_456_789 } else { 5_123_456_000 });
            assert_eq!((f.orig_len, f.data), (1500, &frame[..]));
            assert!(r.next_frame().unwrap().is_none());
        }
    }
}

/// One pcapng section with two interfaces (Ethernet at ns resolution, raw IPv4 at
/// 1/1024 s), an unknown block, EPBs on both, and an SPB.
fn pcapng_section(e: Endianness) -> Vec<u8> {
    let ip = ipv4_udp([10, 0, 0, 1], [10, 0, 0, 2], 1111, 53);
    let mut w = PcapNgWriter::new(Vec::new(), e).unwrap();
    w.add_interface(1, 0, Some(9)).unwrap();
    w.write_block(0x0000_0BAD, &[1, 2, 3, 4, 5]).unwrap();
    w.add_interface(228, 0, Some(0x80 | 10)).unwrap();
    w.write_epb(0, 7_000_000_123, 90, &eth(0x0800, &ip)).unwrap();
    w.write_epb(1, 2048, 28, &ip).unwrap();
    w.write_spb(64, &eth(0x0806, &[0; 28])).unwrap();
    w.write_epb(0, 7_000_000_500, 60, &eth(0x0800, &ip[..10])).unwrap();
    w.into_inner().unwrap()
}

#[test]
fn pcapng_both_endians_mixed_interfaces_and_sections() {
    let le = pcapng_section(Endianness::Little);
    let be = pcapng_section(Endianness::Big);
    assert_ne!(le, be);
    let expect = |bytes: &[u8]| {
        let mut r = PcapNgReader::new(bytes).unwrap();
        let mut seen = Vec::new();
        while let Some(f) = r.next_frame().unwrap() {
            seen.push((f.ts_ns, f.orig_len, f.linktype, parse_frame(f.linktype, f.data)));
        }
        seen
    };
    let ip_class = FrameClass::Ip { key: key_a(), hops: vec![] };
    let want = vec![
        (7_000_000_123, 90, 1, ip_class.clone()),
        (2_000_000_000, 28, 228, ip_class.clone()),
        // The SPB inherits the previous packet's timestamp.
        (2_000_000_000, 64, 1, FrameClass::NonIp),
        (7_000_000_500, 60, 1, FrameClass::Malformed(FrameError::Ipv4Truncated)),
    ];
    assert_eq!(expect(&le), want);
    assert_eq!(expect(&be), want);
    // Two sections of different byte order in one file: interfaces reset per section.
    let both = [le.clone(), be.clone()].concat();
    let (t, n) = read_all(&both).unwrap();
    assert_eq!(n, 8);
    let s = t.finish();
    assert_eq!((s.totals.packets, s.totals.non_ip, s.totals.malformed), (4, 2, 2));
    assert_eq!(s.flows[0].packets, 4);
    assert!(matches!(CaptureReader::new(&both[..]).unwrap(), CaptureReader::PcapNg(_)));
}

#[test]
fn damaged_pcapng_files_are_errors_with_offsets() {
    let le = pcapng_section(Endianness::Little);
    let idb0 = 28u64;
    // Trailing length mismatch in the first IDB.
    let mut b = le.clone();
    let idb_len = u32::from_le_bytes(b[32..36].try_into().unwrap()) as usize;
    b[28 + idb_len - 4] ^= 0x40;
    let e = read_all(&b).err().unwrap();
    assert_eq!(e.offset(), Some(idb0));
    assert!(matches!(e.problem(), Some(Problem::BlockLengthMismatch { .. })), "{e}");
    // Length not a multiple of 4, and absurdly large.
    for len in [13u32, 0x7FFF_FFF0] {
        let mut b = le.clone();
        b[32..36].copy_from_slice(&len.to_le_bytes());
        let e = read_all(&b).err().unwrap();
        assert_eq!(e.problem(), Some(&Problem::BlockLength(len)));
        assert_eq!(e.offset(), Some(idb0));
    }
    // Any cut inside the file is a truncation error (or a clean end at a block boundary).
    let mut boundaries = vec![];
    let mut at = 0usize;
    while at < le.len() {
        boundaries.push(at);
        at += u32::from_le_bytes(le[at + 4..at + 8].try_into().unwrap()) as usize;
    }
    for cut in 1..le.len() {
        let r = read_all(&le[..cut]);
        if boundaries.contains(&cut) {
            assert!(r.is_ok(), "cut {cut}");
        } else {
            let e = r.err().unwrap_or_else(|| panic!("cut {cut} should fail"));
            assert!(e.offset().is_some(), "{e}");
        }
    }
    // A packet naming an undeclared interface.
    let mut w = PcapNgWriter::new(Vec::new(), Endianness::Big).unwrap();
    w.add_interface(1, 0, None).unwrap();
    w.write_epb(3, 0, 10, &[0; 10]).unwrap();
    let e = read_all(&w.into_inner().unwrap()).err().unwrap();
    assert_eq!(e.problem(), Some(&Problem::UnknownInterface(3)));
    // Bad byte-order magic.
    let mut b = le.clone();
    b[8] = 0;
    assert!(matches!(read_all(&b).err().unwrap().problem(), Some(Problem::ByteOrderMagic(_))));
}

#[test]
fn records_truncation_is_an_error() {
    let mut r = RecordReader::new(&[0u8; 50][..]);
    assert!(r.next_record().unwrap().is_some());
    assert!(r.next_record().unwrap().is_some());
    let e = r.next_record().unwrap_err();
    assert_eq!(e.offset(), Some(42));
    assert!(matches!(e.problem(), Some(Problem::Truncated { got: 8, .. })));
}

/// Drains a capture, bounding the frame count; returns whether it ended in an error.
fn drain(bytes: &[u8]) -> bool {
    let Ok(mut r) = PacketReader::from_reader(bytes, Format::Auto) else { return true };
    for _ in 0..100_000 {
        match r.next_classified() {
            Ok(Some(Classified::Packet(p))) => assert!(p.hops.len() <= 16),
            Ok(Some(_)) => {}
            Ok(None) => return false,
            Err(e) => {
                assert!(!e.to_string().is_empty());
                return true;
            }
        }
    }
    panic!("a small input cannot hold 100k frames");
}

fn mutate(rng: &mut ChaCha8Rng, base: &[u8]) -> Vec<u8> {
    let mut b = base.to_vec();
    match rng.gen_range(0..4) {
        0 => {
            for _ in 0..rng.gen_range(1..8) {
                let i = rng.gen_range(0..b.len());
                b[i] = rng.gen();
            }
        }
        1 => b.truncate(rng.gen_range(0..b.len())),
        2 => {
            let i = rng.gen_range(0..b.len());
            b[i] ^= 1 << rng.gen_range(0..8);
        }
        _ => {
            let i = rng.gen_range(0..b.len());
            let n = rng.gen_range(1..16).min(b.len() - i);
            let junk: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
            b.splice(i..i, junk);
        }
    }
    b
}

#[test]
fn fuzz_file_and_frame_parsers_never_panic() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xF0220);
    let cfg = GenConfig {
        packets: 12,
        flows: 4,
        ipv6: 0.5,
        vlan: 0.5,
        non_ip: 0.2,
        shim: Some(ShimConfig { min_hops: 1, max_hops: 4, ..ShimConfig::default() }),
        ..GenConfig::default()
    };
    let mut pcap = Vec::new();
    generate(&cfg, &mut pcap, None).unwrap();
    let mut frames = Vec::new();
    let mut r = PcapReader::new(&pcap[..]).unwrap();
    while let Some(f) = r.next_frame().unwrap() {
        frames.push(f.data.to_vec());
    }
    let ng = [pcapng_section(Endianness::Little), pcapng_section(Endianness::Big)];
    let bases: [&[u8]; 3] = [&pcap, &ng[0], &ng[1]];

    let mut inputs = 0u64;
    let mut errors = 0u64;
    // Random files, some with a valid magic in front.
    let magics: [&[u8]; 5] = [
        &[0xD4, 0xC3, 0xB2, 0xA1],
        &[0xA1, 0xB2, 0x3C, 0x4D],
        &[0x0A, 0x0D, 0x0D, 0x0A],
        &[0x0A, 0x0D, 0x0D, 0x0A, 28, 0, 0, 0, 0x4D, 0x3C, 0x2B, 0x1A],
        &[],
    ];
    for _ in 0..20_000 {
        let mut b = magics[rng.gen_range(0..magics.len())].to_vec();
        let n = rng.gen_range(0..200);
        b.extend((0..n).map(|_| rng.gen::<u8>()));
        errors += drain(&b) as u64;
        let mut rr = RecordReader::new(&b[..]);
        while let Ok(Some(_)) = rr.next_record() {}
        inputs += 1;
    }
    // Mutated valid captures.
    for i in 0..30_000 {
        let b = mutate(&mut rng, bases[i % 3]);
        errors += drain(&b) as u64;
        inputs += 1;
    }
    // Random and mutated frames on every link type the parser knows.
    let mut ip_frames = 0u64;
    for i in 0..60_000 {
        let f = if i % 3 == 0 {
            (0..rng.gen_range(0..120)).map(|_| rng.gen::<u8>()).collect()
        } else {
            let j = rng.gen_range(0..frames.len());
            mutate(&mut rng, &frames[j])
        };
        let link = [LINKTYPE_ETHERNET, LINKTYPE_ETHERNET, LINKTYPE_IPV4, 101, 229][i % 5];
        if let FrameClass::Ip { hops, .. } = parse_frame(link, &f) {
            assert!(hops.len() <= 16);
            ip_frames += 1;
        }
        inputs += 1;
    }
    assert!(inputs >= 100_000);
    // The loop must exercise both outcomes, or it is not testing much.
    assert!(errors > 10_000 && errors < 50_000, "errors {errors}");
    assert!(ip_frames > 5_000, "ip frames {ip_frames}");
}
