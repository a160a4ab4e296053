//! Bodies of the fuzz targets in `fuzz/`, one `pub fn <target>(data: &[u8])` each.
//!
//! Why here and not in the fuzz crate: the same code must run under libFuzzer (the
//! `fuzz_target!` wrappers are one-liners calling these) and under plain `cargo test`,
//! which replays every file of `fuzz/regressions/<target>/` through them
//! (`host/tests/fuzz_regressions.rs`), so a crash found once stays fixed without a fuzzer
//! in CI. Each body runs the code on arbitrary bytes and asserts what must hold for any
//! input: no panic, every outcome accounted for, parse/emit round trips, and that two
//! layers reading the same bytes agree.

use std::io::Cursor;

use smartnic_contract::regs::layout::FirmwareInfo;
use smartnic_contract::regs::{block_type, epoch, Layout};
use smartnic_contract::shim::{IntShim, ShimError, KIND_INT_STACK, MAX_HOPS};
use smartnic_contract::{FlowKey, SuMaxGeometry, TowerGeometry, KEY_LEN};
use smartnic_driver::access::RegisterAccess;
use smartnic_driver::backend::FileBar;
use smartnic_driver::blocks::DeviceMap;
use smartnic_driver::emulated::EmulatedNic;
use smartnic_driver::readout::{read_snapshot, ReadoutConfig};
use smartnic_driver::service::{serve, StreamBar, MAGIC as SERVICE_MAGIC};
use smartnic_driver::snapshot::{Snapshot, SnapshotError};

use crate::sketch::snapshot::{from_section, per_switch_state, PerSwitchState};
use crate::sketch::AnySketch;
use crate::tasks::{cardinality, distribution, entropy, flow_size, heavy, sumax};
use crate::trace::frame::{LINKTYPE_ETHERNET, LINKTYPE_IPV4, LINKTYPE_IPV6, LINKTYPE_RAW};
use crate::trace::pcap::{PcapHeader, PcapReader};
use crate::trace::{parse_frame, records, CaptureReader, Classified, Format, FrameClass, PacketReader};

/// A fuzz target body: runs the code on `data` and panics when an invariant breaks.
pub type Body = fn(&[u8]);

/// Every target: its name (the `fuzz/fuzz_targets/<name>.rs` wrapper and the
/// `fuzz/regressions/<name>/` folder) and its body.
pub const TARGETS: &[(&str, Body)] = &[
    ("frame", frame),
    ("capture", capture),
    ("snapshot", snapshot),
    ("shim", shim),
    ("service_server", service_server),
    ("service_client", service_client),
    ("bar_discovery", bar_discovery),
];

/// MRAC iterations on fuzzed snapshots: the EM's cost per iteration is what matters for
/// robustness, and a few iterations keep the target fast enough to reach its figure.
const EM_ITERATIONS: usize = 2;

/// Link types the parser knows, plus ones it must call not IP.
const UNKNOWN_LINKTYPES: [u32; 3] = [0, 113, 0xFFFF];

/// Frames longer than this skip the encapsulation checks: a frame-length limit (which
/// counts the link header) may then legitimately tell the wrapped frame apart.
const WRAP_CHECK_MAX: usize = 9000;

/// The frame parser over every link type; raw-IP, Ethernet and VLAN encapsulations of the
/// same IP bytes must give the same answer, and an IPv4 key must hold the header's fields.
pub fn frame(data: &[u8]) {
    for lt in UNKNOWN_LINKTYPES {
        assert_eq!(parse_frame(lt, data), FrameClass::NonIp, "link type {lt}");
    }
    let v4 = parse_frame(LINKTYPE_IPV4, data);
    let v6 = parse_frame(LINKTYPE_IPV6, data);
    let raw = parse_frame(LINKTYPE_RAW, data);
    let eth = parse_frame(LINKTYPE_ETHERNET, data);
    for c in [&v4, &v6, &raw, &eth] {
        check_class(c);
    }
    let expected_raw = match data.first().map(|b| b >> 4) {
        Some(4) => &v4,
        Some(6) => &v6,
        _ => &FrameClass::NonIp,
    };
    assert_eq!(&raw, expected_raw, "raw IP must parse as the IP version it announces");
    if let FrameClass::Ip { key, hops } = &v4 {
        assert!(hops.is_empty());
        assert_eq!(key.src_ip(), data[12..16]);
        assert_eq!(key.dst_ip(), data[16..20]);
        assert_eq!(key.proto(), data[9]);
    }
    if data.len() <= WRAP_CHECK_MAX {
        for (ethertype, bare) in [(0x0800u16, &v4), (0x86DD, &v6)] {
            let untagged = ethernet(&[], ethertype, data);
            assert_eq!(&parse_frame(LINKTYPE_ETHERNET, &untagged), bare, "Ethernet {ethertype:#06x}");
            let tagged = ethernet(&[0x81, 0x00, 0x00, 0x07], ethertype, data);
            assert_eq!(&parse_frame(LINKTYPE_ETHERNET, &tagged), bare, "VLAN {ethertype:#06x}");
        }
    }
}

/// An Ethernet frame: zero MACs, `tags` (VLAN tag bytes), the EtherType, the payload.
fn ethernet(tags: &[u8], ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0u8; 12];
    f.extend_from_slice(tags);
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

fn check_class(c: &FrameClass) {
    match c {
        FrameClass::Ip { hops, .. } => assert!(hops.len() <= MAX_HOPS as usize),
        FrameClass::Malformed(e) => assert!(!e.name().is_empty() && !e.to_string().is_empty()),
        FrameClass::NonIp => {}
    }
}

/// The capture readers: pcap/pcapng through [`PacketReader`] (counts add up, errors name
/// an offset inside the input), raw frames in increasing offsets, a pcap re-written and
/// re-read gives the same frames, and the same bytes as 21-byte records.
pub fn capture(data: &[u8]) {
    packets_and_counts(data);
    raw_frames(data);
    pcap_round_trip(data);
    records_view(data);
}

fn packets_and_counts(data: &[u8]) {
    let Ok(mut r) = PacketReader::from_reader(data, Format::Auto) else { return };
    let (mut seen, mut packets, mut malformed) = (0u64, 0u64, 0u64);
    loop {
        match r.next_classified() {
            Ok(Some(c)) => {
                seen += 1;
                match c {
                    Classified::Packet(_) => packets += 1,
                    Classified::Malformed(_) => malformed += 1,
                    Classified::NonIp => {}
                }
            }
            Ok(None) => break,
            Err(e) => {
                check_trace_error(&e, data.len());
                break;
            }
        }
    }
    let counts = r.counts();
    assert_eq!(counts.packets + counts.non_ip + counts.malformed, seen);
    assert_eq!((counts.packets, counts.malformed), (packets, malformed));
    assert_eq!(r.first_malformed().is_some(), malformed > 0);
}

fn check_trace_error(e: &crate::trace::TraceError, len: usize) {
    assert!(!e.to_string().is_empty());
    if let Some(off) = e.offset() {
        assert!(off <= len as u64, "error offset {off} beyond the {len}-byte input: {e}");
    }
}

fn raw_frames(data: &[u8]) {
    let Ok(mut r) = CaptureReader::new(data) else { return };
    let mut last = None;
    loop {
        match r.next_frame() {
            Ok(Some(f)) => {
                assert!(last.is_none_or(|l| f.offset > l), "frame offsets must increase");
                assert!(f.offset as usize + f.data.len() <= data.len());
                last = Some(f.offset);
            }
            Ok(None) => break,
            Err(e) => {
                check_trace_error(&e, data.len());
                break;
            }
        }
    }
}

/// One frame as the pcap reader returns it: timestamp, original length, bytes.
type Frame = (u64, u32, Vec<u8>);

fn pcap_round_trip(data: &[u8]) {
    let Ok(mut r) = PcapReader::new(data) else { return };
    let h = *r.header();
    let mut frames: Vec<Frame> = Vec::new();
    while let Ok(Some(f)) = r.next_frame() {
        frames.push((f.ts_ns, f.orig_len, f.data.to_vec()));
    }
    let mut w =
        crate::trace::pcap::PcapWriter::with_format(Vec::new(), h.endian, h.nanos, h.snaplen, h.linktype)
            .expect("writing to memory");
    let mut written = Vec::new();
    for (ts, orig, bytes) in &frames {
        if w.write(*ts, *orig, bytes).is_ok() {
            written.push((*ts, *orig, bytes.clone()));
        }
    }
    let out = w.into_inner().expect("writing to memory");
    let mut again = PcapReader::new(&out[..]).expect("a written pcap header reads back");
    // The writer always emits version 2.4; everything else of the header must survive.
    assert_eq!(PcapHeader { version: h.version, ..*again.header() }, h);
    let mut reread: Vec<Frame> = Vec::new();
    while let Some(f) = again.next_frame().expect("a written pcap reads back") {
        reread.push((f.ts_ns, f.orig_len, f.data.to_vec()));
    }
    assert_eq!(reread, written, "pcap write/read round trip");
}

fn records_view(data: &[u8]) {
    let mut r = PacketReader::from_reader(data, Format::Records).expect("records have no header");
    let mut n = 0usize;
    let err = loop {
        match r.next_packet() {
            Ok(Some(p)) => {
                let rec: &[u8; records::RECORD_LEN] =
                    data[n * records::RECORD_LEN..][..records::RECORD_LEN].try_into().unwrap();
                assert_eq!(records::encode(&p.key, p.ts_ns), *rec);
                n += 1;
            }
            Ok(None) => break None,
            Err(e) => break Some(e),
        }
    };
    assert_eq!(n, data.len() / records::RECORD_LEN);
    assert_eq!(err.is_some(), !data.len().is_multiple_of(records::RECORD_LEN));
    if let Some(e) = err {
        assert_eq!(e.offset(), Some((n * records::RECORD_LEN) as u64));
    }
    assert_eq!(r.counts().packets, n as u64);
}

/// The snapshot decoder on the bytes as given and with the trailer replaced by the
/// checksum the decoder computed (so mutations reach the structure), then every task on
/// every section of a decoded snapshot.
pub fn snapshot(data: &[u8]) {
    match Snapshot::decode(data) {
        Ok(s) => check_snapshot(&s),
        Err(SnapshotError::Checksum { computed, .. }) => {
            let mut fixed = data.to_vec();
            let n = fixed.len() - 4;
            fixed[n..].copy_from_slice(&computed.to_le_bytes());
            match Snapshot::decode(&fixed) {
                Ok(s) => check_snapshot(&s),
                Err(e) => assert!(!matches!(e, SnapshotError::Checksum { .. }), "trailer was fixed: {e}"),
            }
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}

/// A decoded snapshot re-encodes to bytes that decode to it, and every section that
/// rebuilds into a sketch answers every task.
fn check_snapshot(s: &Snapshot) {
    let again = Snapshot::decode(&s.encode()).expect("an encoded snapshot decodes");
    assert_eq!(&again, s, "snapshot encode/decode round trip");
    let keys = probe_keys(&s.encode());
    for (i, sec) in s.sections.iter().enumerate() {
        if let Ok(sketch) = from_section(i, sec) {
            run_tasks(&sketch, &keys);
        }
    }
    if let Ok(state) = per_switch_state(s) {
        per_switch_tasks(&state, &keys);
    }
}

/// SketchINT's per-switch tasks on a decoded snapshot's per-switch half.
fn per_switch_tasks(state: &PerSwitchState, keys: &[FlowKey]) {
    use crate::tasks::per_switch::{inflated_pairs, pair_latency_ns, per_switch_changes, per_switch_heavy};
    if let Some(t) = &state.latency {
        for k in keys {
            for switch in [0, 1, u16::MAX] {
                let avg = pair_latency_ns(t, switch, k);
                assert!(avg.is_none_or(|ns| ns >= 0.0), "average latency {avg:?}");
            }
        }
    }
    if let Some(t) = &state.table {
        assert!(t.table.entries().all(|e| e.path.len() <= MAX_HOPS as usize), "paths fit the slot");
        let size = |k: &FlowKey| u64::from(k.0[0]);
        let _ = per_switch_heavy(t.table.entries(), size, 0);
        let same = per_switch_changes(t.table.entries(), t.table.entries(), size, size, 0);
        assert!(same.is_empty(), "a table never changed from itself");
    }
    if let Some(r) = &state.records {
        assert_eq!(inflated_pairs(r).values().sum::<u64>(), r.len() as u64, "every record in one pair");
    }
}

/// A few flow keys to query: fixed ones and some taken from the input's bytes.
fn probe_keys(data: &[u8]) -> Vec<FlowKey> {
    let mut keys = vec![FlowKey::from_v4([10, 0, 0, 1], [10, 0, 0, 2], 1234, 80, 6), FlowKey([0; KEY_LEN])];
    keys.extend(data.rchunks_exact(KEY_LEN).take(2).map(|c| FlowKey(c.try_into().unwrap())));
    keys
}

/// Every measurement task that works on `sketch`, with what must hold of the answers.
fn run_tasks(sketch: &AnySketch, keys: &[FlowKey]) {
    let card = cardinality::estimate(sketch);
    assert!(card.zeros <= card.counters);
    assert!(!card.estimate.is_nan() && card.estimate >= 0.0, "cardinality {card:?}");
    let dist = distribution::estimate(sketch, EM_ITERATIONS);
    assert!(!dist.flows().is_nan(), "distribution flows");
    let hist = dist.log2_histogram();
    assert!(hist.windows(2).all(|w| w[0].0 < w[1].0), "size classes in order");
    assert!(!entropy::of_distribution(&dist).is_nan(), "entropy");
    for k in keys {
        let _ = flow_size::estimate(sketch, k);
    }
    let heavy = heavy::from_candidates(sketch, keys, 0);
    assert!(heavy.windows(2).all(|w| w[0].1 >= w[1].1), "heavy hitters largest first");
    assert!(heavy::changes(sketch, sketch, keys, 0).is_empty(), "a sketch never changed from itself");
    let _ = sketch.memory_bytes();
    if let AnySketch::SuMax(s) = sketch {
        sumax_tasks(s, keys);
    }
}

fn sumax_tasks(s: &crate::sketch::SuMax, keys: &[FlowKey]) {
    let summary = sumax::delay_summary(s);
    assert_eq!(summary.edges_ns.len(), summary.packets.len());
    let _ = (summary.quantile_bin_edge(0.5), summary.quantile_bin_edge(0.99), sumax::bin_edges(s));
    let unit = sumax::time_unit_ns(s);
    let received = sumax::received_columns(s.geometry().depth, 0.5, 1);
    for k in keys {
        let e = s.query(k);
        assert_eq!(e.delay_hist.len(), s.geometry().delay_cells as usize);
        let _ = (sumax::max_interarrival_ns(s, k), e.max_interval.checked_mul(unit));
        let _ = sumax::query_received(s, k, &received);
        let _ = sumax::time_distance(s, e.last_arrival, e.max_interval);
        let _ = sumax::time_cell_of(s, u64::from_le_bytes(k.0[..8].try_into().unwrap()));
    }
    let flows: Vec<(&FlowKey, u64)> = keys.iter().map(|k| (k, 1)).collect();
    let _ = sumax::partial_accuracy(s, flows, &received);
}

/// The contract's shim parser: what it accepts re-emits byte for byte (flags aside) and
/// parses back to itself; what it refuses is refused for the reason the bytes give.
pub fn shim(data: &[u8]) {
    match IntShim::parse(data) {
        Ok((shim, rest)) => {
            let used = data.len() - rest.len();
            assert_eq!(rest, &data[used..]);
            assert_eq!(used, shim.len());
            assert!(shim.hops.len() <= MAX_HOPS as usize);
            let mut out = Vec::new();
            shim.emit(&mut out);
            assert_eq!(out.len(), used);
            assert_eq!((out[0], &out[2..]), (data[0], &data[2..used]), "emit reproduces the input");
            let (back, tail) = IntShim::parse(&out).expect("an emitted shim parses");
            assert_eq!((back, tail.len()), (shim.clone(), 0));
            let _ = shim.total_latency_ns();
        }
        Err(e) => {
            assert!(!e.to_string().is_empty());
            let expected = if data.len() < 6 {
                ShimError::Truncated
            } else if data[0] != KIND_INT_STACK {
                ShimError::UnknownKind(data[0])
            } else {
                let n = u16::from_be_bytes([data[4], data[5]]);
                if n > MAX_HOPS {
                    ShimError::TooManyHops(n)
                } else {
                    ShimError::Truncated
                }
            };
            assert_eq!(e, expected);
        }
    }
}

/// A small device: the fuzz bodies need many executions per second, not a big BAR.
fn small_geometry() -> (TowerGeometry, SuMaxGeometry) {
    (TowerGeometry::from_widths_depths(&[(8, 16), (16, 8), (32, 4)]), SuMaxGeometry::with_depth(2, 4))
}

fn small_nic() -> EmulatedNic {
    let (t, s) = small_geometry();
    let mut nic =
        EmulatedNic::new(FirmwareInfo { device: 0x7038, version: 1 << 16, ..Default::default() }, &t, &s);
    nic.latency = 0;
    nic
}

/// The simulator service's server end on arbitrary request bytes against an in-memory
/// device: it greets, then answers or refuses, and never panics.
pub fn service_server(data: &[u8]) {
    let mut nic = small_nic();
    let mut out = Vec::new();
    let r = serve(&mut nic, data, &mut out);
    assert!(out.starts_with(SERVICE_MAGIC), "the service greets first");
    assert_eq!(out[8..16], nic.bar_size().to_le_bytes());
    if let Err(e) = r {
        assert!(!e.to_string().is_empty());
    }
}

/// The client end ([`StreamBar`]) on arbitrary reply bytes: byte 0 is the number of
/// operations, the next bytes choose them, the rest is what the "service" answers.
pub fn service_client(data: &[u8]) {
    let Some((&n, rest)) = data.split_first() else { return };
    let (ops, replies) = rest.split_at((n as usize % 16).min(rest.len()));
    let Ok(mut bar) = StreamBar::connect(Box::new(Cursor::new(replies.to_vec())), Box::new(std::io::sink()))
    else {
        return;
    };
    let size = bar.bar_size();
    for &op in ops {
        let offset = (op as u32 >> 3) * 4 + (op as u32 & 1) * 2;
        let r = match op & 6 {
            0 => bar.read32(offset).map(drop),
            2 => bar.write32(offset, op as u32).map(drop),
            4 => bar.read_block(offset, &mut [0u32; 3]),
            _ => bar.command("replay 1").map(drop),
        };
        if let Err(e) = r {
            assert!(!e.to_string().is_empty());
        }
    }
    if let Ok(map) = DeviceMap::discover(&mut bar) {
        assert_eq!(map.bar_size, size);
        let _ = read_snapshot(&mut bar, &map, &fast_readout());
    }
}

fn fast_readout() -> ReadoutConfig {
    ReadoutConfig {
        source: smartnic_contract::snapshot::source::SIMULATOR,
        poll_timeout: std::time::Duration::ZERO,
        max_retries: 1,
        clear: true,
        path: smartnic_driver::readout::ReadoutPath::Auto,
    }
}

/// Register-block discovery on an arbitrary BAR image. Byte 0 picks the BAR: even, an
/// emulated device whose registers the rest overwrites as `(offset u32, value u32)` LE
/// pairs (so mutations start from a valid chain); odd, a file-backed BAR holding the rest
/// as its image. A device that discovers is read out, and its snapshot must decode and
/// answer every task: what discovery accepts, the host must be able to use.
pub fn bar_discovery(data: &[u8]) {
    let Some((&mode, image)) = data.split_first() else { return };
    if mode & 1 == 0 {
        let mut nic = poked_nic(image);
        discover_and_read(&mut nic);
    } else {
        file_bar(image);
    }
}

fn poked_nic(pokes: &[u8]) -> EmulatedNic {
    let mut nic = small_nic();
    let words = nic.bar_size() as u32 / 4;
    for p in pokes.chunks_exact(8) {
        let offset = u32::from_le_bytes(p[..4].try_into().unwrap()) % words * 4;
        nic.poke(offset, u32::from_le_bytes(p[4..].try_into().unwrap()));
    }
    // Swap once so that poked window words become the active bank, which the readout's
    // own swap brings back into view.
    let layout: &Layout = nic.layout();
    let e = layout.block(block_type::EPOCH).expect("the layout has an epoch block").base;
    nic.write32(e + epoch::CONTROL, epoch::CONTROL_SWAP).expect("CONTROL is in the BAR");
    nic
}

fn discover_and_read<A: RegisterAccess + ?Sized>(dev: &mut A) {
    let map = match DeviceMap::discover(dev) {
        Ok(m) => m,
        Err(e) => return assert!(!e.to_string().is_empty()),
    };
    let _ = map.describe();
    for w in map.windows() {
        assert!(w.base as u64 + w.len <= map.bar_size, "{} inside the BAR", w.kind);
    }
    if let Ok((snap, _)) = read_snapshot(dev, &map, &fast_readout()) {
        let decoded = Snapshot::decode(&snap.encode()).expect("a readout snapshot decodes");
        check_snapshot(&decoded);
    }
}

fn file_bar(image: &[u8]) {
    let path = std::env::temp_dir().join(format!(
        "smartnic-fuzz-bar-{}-{:?}.img",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::write(&path, image).expect("writing the BAR image");
    if let Ok(mut bar) = FileBar::open(&path) {
        discover_and_read(&mut bar);
    }
    let _ = std::fs::remove_file(&path);
}

/// Small seed inputs per target, built by the project's own writers (trace generator,
/// snapshot encoder, device layout): `(target, name, bytes)`.
pub fn seeds() -> Vec<(&'static str, String, Vec<u8>)> {
    let mut out = Vec::new();
    let cfg = crate::trace::GenConfig {
        packets: 40,
        flows: 8,
        ipv6: 0.3,
        vlan: 0.3,
        non_ip: 0.1,
        shim: Some(Default::default()),
        ..Default::default()
    };
    let mut pcap = Vec::new();
    let mut recs = Vec::new();
    crate::trace::generate(&cfg, &mut pcap, Some(&mut recs)).expect("generating a trace");
    out.push(("capture", "gen.pcap".to_string(), pcap.clone()));
    out.push(("capture", "gen.records".to_string(), recs));
    let mut r = CaptureReader::new(&pcap[..]).expect("generated pcap");
    let mut k = 0;
    while let Ok(Some(f)) = r.next_frame() {
        if k < 12 {
            out.push(("frame", format!("gen-{k}"), f.data.to_vec()));
            if f.data.len() > 14 && f.data[12..14] == [0x88, 0xB5] {
                out.push(("shim", format!("gen-{k}"), f.data[14..].to_vec()));
            }
        }
        k += 1;
    }
    let (t, s) = small_geometry();
    let mut nic = small_nic();
    for w in 0..nic.layout().tower_windows.len() + nic.layout().sumax_windows.len() {
        for (i, v) in nic.active_mut(w).iter_mut().enumerate() {
            *v = (i as u32 * 7 + w as u32) % 200;
        }
    }
    nic.set_active_packets(40);
    let map = DeviceMap::discover(&mut nic).expect("emulated device discovers");
    let (snap, _) = read_snapshot(&mut nic, &map, &fast_readout()).expect("emulated readout");
    out.push(("snapshot", "emulated.snap".to_string(), snap.encode()));
    let layout = Layout::new(&t, &s);
    let mut image = vec![0u8; layout.bar_size as usize];
    for (o, v) in layout.constant_registers(FirmwareInfo::default(), &t, &s) {
        image[o as usize..o as usize + 4].copy_from_slice(&v.to_le_bytes());
    }
    out.push(("bar_discovery", "image".to_string(), [&[1u8][..], &image].concat()));
    out.push(("bar_discovery", "no-pokes".to_string(), vec![0]));
    let mut session = Vec::new();
    for (op, args) in [(b'r', vec![0u32]), (b'b', vec![0, 4]), (b'w', vec![0x100, 1]), (b'c', vec![3])] {
        session.push(op);
        args.iter().for_each(|a| session.extend_from_slice(&a.to_le_bytes()));
    }
    session.extend_from_slice(b"abcq");
    let mut replies = Vec::new();
    serve(&mut small_nic(), &session[..], &mut replies).expect("serving into memory");
    out.push(("service_server", "session".to_string(), session));
    out.push(("service_client", "replies".to_string(), [&[4u8, 0, 2, 4, 6][..], &replies].concat()));
    out
}
