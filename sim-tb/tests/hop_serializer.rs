//! The hop serializer (`hdl::per_switch::hop_serializer`) under Verilator, fed by a hop
//! capture (`hdl::per_switch::hop_capture`, its own model run in lockstep, its `rec` handed
//! to the serializer's `d_rec` in the same clock, as the core wires them): every hop of every
//! IP frame with an INT stack comes out once, in stack order and frame order, with its
//! frame's flow key and bank, one per clock at most, and none is lost or waits longer than
//! `MAX_WAIT` clocks, at line rate (a beat every clock, frames back to back).
//!
//! Traffic, each case with the parser's descriptor timing (two clocks after a frame's last
//! beat, one descriptor per frame, in order):
//! - 16-hop stacks in minimum frames, back to back (the bound's worst case);
//! - those interleaved with 1-beat runts and minimum frames of 0 and 1 hops (runts land
//!   while a 16-hop frame waits for its descriptor);
//! - random hop counts 0..=16, 0 to 2 VLAN tags, non-IP and malformed descriptors (which
//!   must issue nothing), random banks.
use smartnic_contract::FlowKey;
use smartnic_hdl::flow;
use smartnic_hdl::hash::key_to_u128;
use smartnic_hdl::per_switch::hop_serializer::{HopSerializer, MAX_WAIT, MAX_WAIT_ANY, SLOTS};
mod common;
use smartnic_sim_tb::capture::CaptureModel;
use smartnic_sim_tb::{Model, PortId};
use std::collections::VecDeque;

/// The parser's descriptor delay: stage 1 at the edge of the last beat, stage 2 one later.
const DESC_DELAY: usize = 2;

/// One frame of the test: its bytes and what its descriptor says.
#[derive(Clone, Debug)]
struct Frame {
    bytes: Vec<u8>,
    ip: bool,
    hops: Vec<(u16, u32)>,
    tags: u8,
    key: FlowKey,
    bank: bool,
}

/// A frame with `hops` hop records behind `tags` VLAN tags, IPv4 + UDP, at least 60 bytes
/// (the MAC's minimum without FCS).
fn frame(n: u64, tags: u8, hops: Vec<(u16, u32)>, ip: bool, bank: bool) -> Frame {
    let mut b = vec![0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2];
    for _ in 0..tags {
        b.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
    }
    b.extend_from_slice(&[0x88, 0xB5, 1, 0, 0x08, 0x00]);
    b.extend_from_slice(&(hops.len() as u16).to_be_bytes());
    for &(s, l) in &hops {
        b.extend_from_slice(&s.to_be_bytes());
        b.extend_from_slice(&l.to_be_bytes());
    }
    b.extend_from_slice(&[0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 1, 2]);
    b.extend_from_slice(&[0x12, 0x34, 0, 80, 0, 8, 0, 0]);
    if b.len() < 60 {
        b.resize(60, 0);
    }
    let key = FlowKey::from_v4([10, 0, (n >> 8) as u8, n as u8], [10, 0, 1, 2], n as u16, 80, 17);
    Frame { bytes: b, ip, hops, tags, key, bank }
}

/// A runt: one beat, not IP.
fn runt(n: u64) -> Frame {
    Frame {
        bytes: vec![0xEE; 8],
        ip: false,
        hops: Default::default(),
        tags: 0,
        key: FlowKey::default(),
        bank: n % 2 == 1,
    }
}

fn hops(n: u64, count: usize) -> Vec<(u16, u32)> {
    (0..count)
        .map(|j| ((n as u16).wrapping_mul(31).wrapping_add(j as u16 * 7 + 1), (n as u32) << 8 | j as u32))
        .collect()
}

struct Ports {
    d_valid: PortId,
    d_ip: PortId,
    d_hops: PortId,
    d_rec: PortId,
    d_key: PortId,
    d_bank: PortId,
    d_epoch: PortId,
    h_valid: PortId,
    h_key: PortId,
    h_switch: PortId,
    h_latency: PortId,
    h_bank: PortId,
    h_epoch: PortId,
    h_last: PortId,
    x_path: PortId,
    lost: PortId,
    idle: PortId,
}

/// An issued hop: (switch, latency, flow key, bank, last of its frame, epoch).
type Hop = (u16, u32, FlowKey, bool, bool, u32);

/// The hop on the outputs this clock (`h_valid` high), checked: `h_key`'s top 16 bits are
/// its switch ID.
fn read_hop(m: &mut Model, p: &Ports) -> Hop {
    let key = m.get(p.h_key);
    let mut kb = [0u8; 13];
    kb.copy_from_slice(&key.to_be_bytes()[3..]);
    let got: Hop = (
        m.get(p.h_switch) as u16,
        m.get(p.h_latency) as u32,
        FlowKey(kb),
        m.get(p.h_bank) == 1,
        m.get(p.h_last) == 1,
        m.get(p.h_epoch) as u32,
    );
    assert_eq!((key >> 104) as u16, got.0, "h_key's top 16 bits are the switch ID");
    got
}

struct Run {
    hops: u64,
    frames: u64,
    clocks: u64,
    max_wait: u64,
}

/// Sends `frames` back to back and checks every issued hop against the expectation.
fn run(m: &mut Model, p: &Ports, c: &mut CaptureModel, frames: &[Frame]) -> Run {
    c.idle();
    m.set(p.d_valid, 0);
    for x in [&mut *m, &mut c.m] {
        x.set_by_name("reset", 1);
        x.tick();
        x.set_by_name("reset", 0);
    }
    // Descriptors due: (clock, frame index).
    let mut desc: VecDeque<(u64, usize)> = VecDeque::new();
    // Expected hops with the clock of their descriptor.
    let mut expect: VecDeque<(u64, Hop)> = VecDeque::new();
    let beats: Vec<(usize, usize)> = frames
        .iter()
        .enumerate()
        .flat_map(|(f, fr)| (0..fr.bytes.len().div_ceil(8)).map(move |b| (f, b)))
        .collect();
    let (mut clock, mut issued, mut max_wait, mut paths) = (0u64, 0u64, 0u64, 0u64);
    let mut beat = beats.iter();
    loop {
        let cur = beat.next();
        if let Some(&(f, b)) = cur {
            let fr = &frames[f];
            let chunk = &fr.bytes[8 * b..fr.bytes.len().min(8 * b + 8)];
            let last = 8 * b + 8 >= fr.bytes.len();
            c.beat(Some((chunk, last)));
            if last {
                desc.push_back((clock + DESC_DELAY as u64, f));
            }
        } else {
            c.beat(None);
        }
        match desc.front() {
            Some(&(at, f)) if at == clock => {
                desc.pop_front();
                let fr = &frames[f];
                let rec = c.descriptor(Some(fr.tags));
                m.set_words(p.d_rec, &rec);
                m.set(p.d_valid, 1);
                m.set(p.d_ip, fr.ip as u128);
                m.set(p.d_hops, fr.hops.len() as u128);
                m.set(p.d_key, key_to_u128(fr.key.as_bytes()));
                m.set(p.d_bank, fr.bank as u128);
                // The epoch number: the frame's index, so a record mixed up with another
                // frame's shows.
                m.set(p.d_epoch, f as u128);
                if fr.ip {
                    for (j, &(s, l)) in fr.hops.iter().enumerate() {
                        expect.push_back((clock, (s, l, fr.key, fr.bank, j + 1 == fr.hops.len(), f as u32)));
                    }
                    // The path in the descriptor's clock: hop j's switch in bits 16j.. .
                    m.eval();
                    let words = m.get_words(p.x_path).to_vec();
                    for (j, &(s, _)) in fr.hops.iter().enumerate() {
                        let got = (words[j / 2] >> (16 * (j % 2))) as u16;
                        assert_eq!(got, s, "frame {f}: x_path hop {j}");
                    }
                    paths += 1;
                }
            }
            _ => {
                c.descriptor(None);
                m.set(p.d_valid, 0);
            }
        }
        m.eval();
        if m.get(p.h_valid) == 1 {
            let got = read_hop(m, p);
            let (at, want) =
                expect.pop_front().unwrap_or_else(|| panic!("clock {clock}: unexpected hop {got:?}"));
            assert_eq!(got, want, "hop {issued} (clock {clock})");
            max_wait = max_wait.max(clock - at);
            issued += 1;
        }
        m.tick();
        c.m.tick();
        clock += 1;
        if cur.is_none() && desc.is_empty() && expect.is_empty() && m.get(p.idle) == 1 {
            break;
        }
        assert!(clock < 40 * beats.len() as u64 + 100, "the serializer stalled");
    }
    assert_eq!(m.get(p.lost), 0, "no record was refused");
    assert_eq!(paths, frames.iter().filter(|f| f.ip).count() as u64, "every IP frame's path checked");
    assert!(max_wait <= MAX_WAIT as u64, "a hop waited {max_wait} clocks");
    Run { hops: issued, frames: frames.len() as u64, clocks: clock, max_wait }
}

fn model() -> (Model, Ports, CaptureModel) {
    let c = CaptureModel::new().unwrap_or_else(|e| panic!("{e}"));
    let v = flow::to_verilog("hop_serializer", &mut HopSerializer::default()).unwrap();
    let m = Model::of_verilog("hop_serializer", &v).unwrap_or_else(|e| panic!("{e}"));
    let p = Ports {
        d_valid: m.port("d_valid"),
        d_ip: m.port("d_ip"),
        d_hops: m.port("d_hops"),
        d_rec: m.port("d_rec"),
        d_key: m.port("d_key"),
        d_bank: m.port("d_bank"),
        d_epoch: m.port("d_epoch"),
        h_valid: m.port("h_valid"),
        h_key: m.port("h_key"),
        x_path: m.port("x_path"),
        h_switch: m.port("h_switch"),
        h_latency: m.port("h_latency"),
        h_bank: m.port("h_bank"),
        h_epoch: m.port("h_epoch"),
        h_last: m.port("h_last"),
        lost: m.port("lost"),
        idle: m.port("idle"),
    };
    (m, p, c)
}

/// The shared seeded stream.
struct Rng(common::Operands);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0.raw()
    }
}

#[test]
fn every_hop_once_in_order_at_line_rate() {
    let (mut m, p, mut c) = model();
    // 16-hop stacks in minimum frames, back to back.
    let full: Vec<Frame> = (0..2000).map(|n| frame(n, 0, hops(n, 16), true, n.is_multiple_of(3))).collect();
    let r = run(&mut m, &p, &mut c, &full);
    assert_eq!(r.hops, 16 * 2000);
    eprintln!(
        "16-hop back to back: {} frames, {} hops in {} clocks, max wait {}",
        r.frames, r.hops, r.clocks, r.max_wait
    );

    // The same with runts and 0/1-hop minimum frames between them, every VLAN depth.
    let mut mixed = Vec::new();
    for n in 0..3000u64 {
        mixed.push(match n % 6 {
            0 | 3 => frame(n, (n % 3) as u8, hops(n, 16), true, n.is_multiple_of(2)),
            1 => runt(n),
            2 => frame(n, 0, hops(n, 1), true, true),
            4 => frame(n, 2, Vec::new(), true, false),
            _ => runt(n),
        });
    }
    let want: u64 = mixed.iter().filter(|f| f.ip).map(|f| f.hops.len() as u64).sum();
    let r = run(&mut m, &p, &mut c, &mixed);
    assert_eq!(r.hops, want);
    eprintln!(
        "mixed with runts: {} frames, {} hops in {} clocks, max wait {}",
        r.frames, r.hops, r.clocks, r.max_wait
    );

    // Random hop counts, tags, classes and banks.
    let mut rng = Rng(common::Operands::new(0x9E37_79B9_7F4A_7C15));
    let random: Vec<Frame> = (0..20_000u64)
        .map(|n| {
            let x = rng.next();
            if x.is_multiple_of(11) {
                return runt(n);
            }
            let mut f = frame(
                n,
                (x >> 8) as u8 % 3,
                hops(n, (x >> 16) as usize % 17),
                !x.is_multiple_of(7),
                x >> 40 & 1 == 1,
            );
            f.key.0[12] = (x >> 24) as u8;
            f
        })
        .collect();
    let want: u64 = random.iter().filter(|f| f.ip).map(|f| f.hops.len() as u64).sum();
    let r = run(&mut m, &p, &mut c, &random);
    assert_eq!(r.hops, want);
    eprintln!("random: {} frames, {} hops in {} clocks, max wait {}", r.frames, r.hops, r.clocks, r.max_wait);
}

/// A record's hops as `d_rec` words: halfword `k` in bits `16k ..`, hop `j` = switch,
/// latency high, latency low at halfwords `3j ..`.
fn rec_words(hops: &[(u16, u32)]) -> Vec<u32> {
    let mut hw = [0u16; 48];
    for (j, &(s, l)) in hops.iter().enumerate() {
        hw[3 * j..3 * j + 3].copy_from_slice(&[s, (l >> 16) as u16, l as u16]);
    }
    (0..24).map(|i| hw[2 * i] as u32 | (hw[2 * i + 1] as u32) << 16).collect()
}

/// Behind the board's merge a record may come every clock: records wait in the ring of
/// `SLOTS` and leave in order, one hop a clock; a record that comes while the ring holds
/// `SLOTS` records and the head's last hop is not leaving is refused whole and counted.
/// The test keeps that rule as its own model, clock by clock, and checks every issued hop,
/// every refusal, and the wait bound `MAX_WAIT_ANY`.
#[test]
fn records_every_clock_wait_in_the_ring_or_are_refused_and_counted() {
    let (mut m, p, _) = model();
    m.set(p.d_valid, 0);
    m.set_by_name("reset", 1);
    m.tick();
    m.set_by_name("reset", 0);
    let mut rng = Rng(common::Operands::new(0x51_07));
    // The model: records accepted and not yet done (hops left, descriptor clock), the
    // hops due in order.
    let (mut ring, mut expect): (VecDeque<usize>, VecDeque<(u64, Hop)>) = (VecDeque::new(), VecDeque::new());
    let (mut head_left, mut refused, mut accepted, mut issued, mut max_wait) =
        (0usize, 0u64, 0u64, 0u64, 0u64);
    for clock in 0..60_000u64 {
        // Bursts of records every clock (16-hop stacks among them), then gaps to drain.
        let phase = clock % 400;
        let x = rng.next();
        let offer = if phase < 200 { !x.is_multiple_of(4) } else { x.is_multiple_of(9) };
        // The ring's state at the clock's start: the head issues its next hop, and its last
        // hop leaves this clock.
        let start_len = ring.len();
        if start_len > 0 && head_left == 0 {
            head_left = ring[0];
        }
        let pop = start_len > 0 && head_left == 1;
        if offer {
            let n = 1 + (x >> 8) as usize % 16;
            let f = frame(clock, 0, hops(clock, n), true, x >> 20 & 1 == 1);
            m.set(p.d_valid, 1);
            m.set(p.d_ip, 1);
            m.set(p.d_hops, n as u128);
            m.set_words(p.d_rec, &rec_words(&f.hops));
            m.set(p.d_key, key_to_u128(f.key.as_bytes()));
            m.set(p.d_bank, f.bank as u128);
            m.set(p.d_epoch, clock as u128);
            if ring.len() < SLOTS || pop {
                accepted += 1;
                ring.push_back(n);
                for (j, &(s, l)) in f.hops.iter().enumerate() {
                    expect.push_back((clock, (s, l, f.key, f.bank, j + 1 == n, clock as u32)));
                }
            } else {
                refused += 1;
            }
        } else {
            m.set(p.d_valid, 0);
        }
        // The head's hop leaves (a record offered this clock waits at least one).
        if start_len > 0 {
            head_left -= 1;
            if head_left == 0 {
                ring.pop_front();
            }
        }
        m.eval();
        if m.get(p.h_valid) == 1 {
            let got = read_hop(&mut m, &p);
            let (at, want) =
                expect.pop_front().unwrap_or_else(|| panic!("clock {clock}: unexpected hop {got:?}"));
            assert_eq!(got, want, "hop {issued} (clock {clock})");
            max_wait = max_wait.max(clock - at);
            issued += 1;
        }
        m.tick();
    }
    assert_eq!(m.get(p.lost), refused as u128, "lost counts every refused record");
    assert!(refused > 100 && accepted > 5_000, "the ring filled: {refused} refused, {accepted} accepted");
    assert!(max_wait <= MAX_WAIT_ANY as u64, "a hop waited {max_wait} clocks");
    eprintln!(
        "records every clock: {accepted} accepted, {refused} refused, {issued} hops, max wait {max_wait}"
    );
}
