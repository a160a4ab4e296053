//! The board front (`hdl::board::front::BoardFront`) under Verilator with five unrelated
//! clocks: four MAC clocks (6.4 ns +- 3 %, each its own random period and phase) and the
//! core clock (4.0, 5.0, 3.3 and 6.0 ns runs), driven edge by edge from Rust.
//!
//! Each port's AXI-Stream carries a beat on every MAC clock (frames back to back, no idle
//! cycle: faster than the 10G wire, which adds 20 bytes of preamble and gap per frame):
//! - minimum frames (64 bytes, IPv4/UDP, 0..2 hops);
//! - the shortest IP frames (34 bytes, 5 beats): the most records a port can send;
//! - 16-hop INT stacks in their minimum frames (144 bytes, 18 beats): the worst hop rate;
//! - the parser tests' structured frames (VLAN tags, shims, IPv4 options, IPv6 extension
//!   headers, TCP/UDP, random defects), runts of 1..59 bytes, `tuser` and `tkeep` holes,
//!   with random idle cycles.
//!
//! Checks: the merged records of each port are exactly the software model's
//! (`smartnic::trace::frame::parse_frame`) IP frames of that port, in that port's order
//! (class, key, length, timestamp = the port's `now` at the first beat, delay, hop count,
//! shim code, every hop's switch ID and latency); the per-port counters equal the frames
//! sent of each class; `accepted` equals the IP frames; no FIFO refused a record, none held
//! more than `MAX_FILL` (the bound argued in `board::front`). Printed:
//! records and hops merged per core clock, and the FIFOs' high-water marks.
//!
//! Then an overload (a 40 ns core clock): the FIFOs fill and refuse records, each refusal
//! is counted, and the merged records are each port's in order less the refused ones.
mod parser_util;

use parser_util::frames::structured;
use parser_util::{expect, Frame, Rng};
use smartnic::trace::frame::{parse_frame, FrameClass, LINKTYPE_ETHERNET};
use smartnic_contract::shim::{Hop, ETHERTYPE_SHIM};
use smartnic_contract::FlowKey;
use smartnic_hdl::board::front::{self, DEPTH, MAX_FILL};
use smartnic_hdl::board::port_merge::PORTS;
use smartnic_hdl::parser::CLASS_IP;
use smartnic_sim_tb::frames::{udp4_frame, MAX_MIN_FRAME_HOPS, MIN_FRAME};
use smartnic_sim_tb::{Model, PortId};

/// A merged record as the test compares it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Rec {
    class: u8,
    key: u128,
    len: u32,
    ts: u64,
    delay: u64,
    sc: u8,
    hops: Vec<(u16, u32)>,
}

/// One beat of a port's stream (`None`: an idle clock).
type Beat = Option<(u64, u8, bool, bool)>;

/// A port's traffic: its beats, and the records and class counts the software expects.
#[derive(Default)]
struct PortTraffic {
    beats: Vec<Beat>,
    want: Vec<Rec>,
    classes: [u64; 4],
}

/// The `now` a port shows at beat index `i`: the port in the top bits, so a record with
/// another port's timestamp shows.
fn now_of(port: usize, base: u64, i: usize) -> u64 {
    (port as u64) << 56 | (base + i as u64)
}

/// The hop count and VLAN tag count of an IP frame's shim, and its hops.
fn shim_of(data: &[u8]) -> (u8, Vec<(u16, u32)>) {
    match (smartnic_contract::wire::vlan::walk_l2(data), parse_frame(LINKTYPE_ETHERNET, data)) {
        (Ok(l2), FrameClass::Ip { hops, .. }) if l2.ethertype == ETHERTYPE_SHIM => {
            (l2.tags as u8, hops.iter().map(|h| (h.switch_id, h.latency_ns)).collect())
        }
        _ => (0, Vec::new()),
    }
}

impl PortTraffic {
    /// Appends `f` after `gap` idle clocks; `base` is the port's `now` at beat index 0.
    fn push(&mut self, port: usize, base: u64, f: &Frame, gap: usize) {
        self.beats.extend(std::iter::repeat_n(None, gap));
        let first = self.beats.len();
        let nb = f.beats();
        for b in 0..nb {
            let mut w = [0u8; 8];
            let hi = (8 * b + 8).min(f.data.len());
            w[..hi - 8 * b].copy_from_slice(&f.data[8 * b..hi]);
            let last = b + 1 == nb;
            let mut keep = if last { ((1u32 << (hi - 8 * b)) - 1) as u8 } else { 0xFF };
            if let Some((kb, k)) = f.keep {
                if kb == b {
                    keep = k;
                }
            }
            self.beats.push(Some((u64::from_le_bytes(w), keep, last, last && f.tuser)));
        }
        let (class, key, delay) = expect(f);
        self.classes[class as usize] += 1;
        if class == CLASS_IP {
            let (sc, hops) = shim_of(&f.data);
            let ts = now_of(port, base, first);
            self.want.push(Rec { class, key, len: f.data.len() as u32, ts, delay, sc, hops });
        }
    }
}

/// Seeded random hops.
fn random_hops(r: &mut Rng, n: usize) -> Vec<Hop> {
    (0..n).map(|_| Hop { switch_id: r.next() as u16, latency_ns: r.next() as u32 }).collect()
}

fn random_key(r: &mut Rng) -> FlowKey {
    let x = r.next();
    FlowKey::from_v4(
        (x as u32).to_be_bytes(),
        ((x >> 32) as u32).to_be_bytes(),
        r.next() as u16,
        r.next() as u16,
        17,
    )
}

/// The shortest IP frame: Ethernet and a 20-byte IPv4 header of a protocol without ports
/// (34 bytes, 5 beats): the most records a port can send.
fn short_ip(r: &mut Rng) -> Vec<u8> {
    let mut f = r.bytes(12);
    f.extend_from_slice(&[
        0x08,
        0x00,
        0x45,
        0,
        0,
        20,
        0,
        0,
        0,
        0,
        64,
        [1, 47, 50][r.below(3) as usize],
        0,
        0,
    ]);
    f.extend_from_slice(&r.bytes(8));
    let sum = smartnic_contract::wire::ipv4::checksum(&f[14..34]);
    f[24..26].copy_from_slice(&sum.to_be_bytes());
    f
}

/// The traffic kinds of the module docs.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Minimum,
    ShortIp,
    FullStacks,
    Mixed,
}

fn traffic(kind: Kind, port: usize, base: u64, frames: usize, r: &mut Rng) -> PortTraffic {
    let mut t = PortTraffic::default();
    for _ in 0..frames {
        let (f, gap) = match kind {
            Kind::Minimum => {
                let n = r.below(MAX_MIN_FRAME_HOPS as u64 + 1) as usize;
                let hops = random_hops(r, n);
                let vlan = r.chance(0.5).then_some(7);
                let shim = (!r.chance(0.25)).then_some(&hops[..]);
                (Frame::new(udp4_frame(&random_key(r), vlan, shim, MIN_FRAME)), 0)
            }
            Kind::ShortIp => (Frame::new(short_ip(r)), 0),
            Kind::FullStacks => {
                let hops = random_hops(r, 16);
                (Frame::new(udp4_frame(&random_key(r), None, Some(&hops), 144)), 0)
            }
            Kind::Mixed => {
                let f = match r.below(10) {
                    0 => {
                        let n = 1 + r.below(59) as usize;
                        Frame::new(r.bytes(n))
                    }
                    1 => {
                        let hops = random_hops(r, 16);
                        Frame::new(udp4_frame(&random_key(r), Some(3), Some(&hops), 148))
                    }
                    _ => structured(r),
                };
                (f, if r.chance(0.2) { r.below(4) as usize } else { 0 })
            }
        };
        t.push(port, base, &f, gap);
    }
    t
}

/// Port ids of the top.
struct Ports {
    mac_clock: [PortId; PORTS],
    mac_reset: [PortId; PORTS],
    tdata: [PortId; PORTS],
    tkeep: [PortId; PORTS],
    tlast: [PortId; PORTS],
    tuser: [PortId; PORTS],
    tvalid: [PortId; PORTS],
    now: [PortId; PORTS],
    core_clock: PortId,
    core_reset: PortId,
    m_valid: PortId,
    m_port: PortId,
    m_class: PortId,
    m_key: PortId,
    m_len: PortId,
    m_ts: PortId,
    m_delay: PortId,
    m_hops: PortId,
    m_sc: PortId,
    m_rec: PortId,
}

impl Ports {
    fn of(m: &Model) -> Ports {
        let arr = |n: &str| -> [PortId; PORTS] { std::array::from_fn(|p| m.port(&format!("{n}${p}"))) };
        Ports {
            mac_clock: arr("mac_clock"),
            mac_reset: arr("mac_reset"),
            tdata: arr("tdata"),
            tkeep: arr("tkeep"),
            tlast: arr("tlast"),
            tuser: arr("tuser"),
            tvalid: arr("tvalid"),
            now: arr("now"),
            core_clock: m.port("core_clock"),
            core_reset: m.port("core_reset"),
            m_valid: m.port("m_valid"),
            m_port: m.port("m_port"),
            m_class: m.port("m_class"),
            m_key: m.port("m_key"),
            m_len: m.port("m_len"),
            m_ts: m.port("m_ts"),
            m_delay: m.port("m_delay"),
            m_hops: m.port("m_hops"),
            m_sc: m.port("m_sc"),
            m_rec: m.port("m_rec"),
        }
    }
}

/// Clock `c` (0..4 the MACs, 4 the core): period in ps and the time of its next edge.
struct Clock {
    half_ps: u64,
    next_ps: u64,
    high: bool,
}

/// The simulated board: the model, its five clocks and the time.
struct Bench {
    m: Model,
    p: Ports,
    clocks: Vec<Clock>,
    /// Core clock rising edges so far.
    core_cycles: u64,
}

/// What one run measured.
#[derive(Debug, Default)]
struct Measure {
    records: u64,
    hops: u64,
    /// Core clocks from the first beat to the last merged record.
    core_clocks: u64,
}

impl Bench {
    fn new(m: Model, mac_ps: [u64; PORTS], core_ps: u64, r: &mut Rng) -> Bench {
        let p = Ports::of(&m);
        let clocks = mac_ps
            .iter()
            .chain(std::iter::once(&core_ps))
            .map(|&t| Clock { half_ps: t / 2, next_ps: r.below(t), high: false })
            .collect();
        let mut b = Bench { m, p, clocks, core_cycles: 0 };
        for c in 0..PORTS {
            b.m.set(b.p.mac_clock[c], 0);
            b.m.set(b.p.tvalid[c], 0);
        }
        b.m.set(b.p.core_clock, 0);
        b
    }

    /// Runs to the next clock edge; returns the clock and whether it rose.
    fn edge(&mut self) -> (usize, bool) {
        let c = (0..self.clocks.len()).min_by_key(|&c| self.clocks[c].next_ps).unwrap();
        let ck = &mut self.clocks[c];
        ck.high = !ck.high;
        ck.next_ps += ck.half_ps;
        let (high, port) = (ck.high, if c < PORTS { self.p.mac_clock[c] } else { self.p.core_clock });
        self.m.set(port, high as u128);
        self.m.eval();
        if c == PORTS && high {
            self.core_cycles += 1;
        }
        (c, high)
    }

    /// Holds every reset for 8 clocks of the slowest domain, then releases them together.
    fn reset(&mut self) {
        for c in 0..PORTS {
            self.m.set(self.p.mac_reset[c], 1);
        }
        self.m.set(self.p.core_reset, 1);
        let mut rises = [0u32; PORTS + 1];
        while rises.iter().any(|&n| n < 8) {
            let (c, up) = self.edge();
            rises[c] += up as u32;
        }
        for c in 0..PORTS {
            self.m.set(self.p.mac_reset[c], 0);
        }
        self.m.set(self.p.core_reset, 0);
    }

    fn read_record(&mut self) -> (usize, Rec) {
        let g = |m: &mut Model, p: PortId| m.get(p);
        let port = g(&mut self.m, self.p.m_port) as usize;
        let n = g(&mut self.m, self.p.m_hops) as usize;
        let words = self.m.get_words(self.p.m_rec).to_vec();
        let hw = |k: usize| (words[k / 2] >> (16 * (k % 2))) as u16;
        let hops = (0..n.min(16))
            .map(|j| (hw(3 * j), (hw(3 * j + 1) as u32) << 16 | hw(3 * j + 2) as u32))
            .collect();
        let rec = Rec {
            class: g(&mut self.m, self.p.m_class) as u8,
            key: g(&mut self.m, self.p.m_key),
            len: g(&mut self.m, self.p.m_len) as u32,
            ts: g(&mut self.m, self.p.m_ts) as u64,
            delay: g(&mut self.m, self.p.m_delay) as u64,
            sc: g(&mut self.m, self.p.m_sc) as u8,
            hops,
        };
        assert_eq!(rec.hops.len(), n, "hop count {n} above 16");
        (port, rec)
    }

    /// Drives each port's beats (one per MAC clock) and collects the merged records per
    /// port until every beat is sent (and 8 idle clocks after it) and the merge has been
    /// quiet for 64 core clocks.
    fn run(&mut self, ports: &[PortTraffic; PORTS], base: u64) -> ([Vec<Rec>; PORTS], Measure) {
        let mut next = [0usize; PORTS];
        let mut got: [Vec<Rec>; PORTS] = Default::default();
        let mut meas = Measure::default();
        let start = self.core_cycles;
        let mut quiet = 0u64;
        loop {
            let (c, up) = self.edge();
            if !up {
                continue;
            }
            if c < PORTS {
                // After port c's edge: present its next beat (sampled at its next edge).
                let i = next[c];
                let beat = ports[c].beats.get(i).copied().flatten();
                let (d, keep, last, user) = beat.unwrap_or((0, 0, false, false));
                self.m.set(self.p.tvalid[c], beat.is_some() as u128);
                self.m.set(self.p.tdata[c], d as u128);
                self.m.set(self.p.tkeep[c], keep as u128);
                self.m.set(self.p.tlast[c], last as u128);
                self.m.set(self.p.tuser[c], user as u128);
                self.m.set(self.p.now[c], now_of(c, base, i) as u128);
                next[c] += 1;
                continue;
            }
            if self.m.get(self.p.m_valid) == 1 {
                let (port, rec) = self.read_record();
                meas.records += 1;
                meas.hops += rec.hops.len() as u64;
                meas.core_clocks = self.core_cycles - start;
                got[port].push(rec);
                quiet = 0;
            } else {
                quiet += 1;
            }
            // Every port past its last beat by more than the parser's latency and its counters'
            // clock, so a last frame without a record is counted too.
            let sent = (0..PORTS).all(|p| next[p] > ports[p].beats.len() + 8);
            if sent && quiet > 64 {
                return (got, meas);
            }
        }
    }
}

fn model() -> Model {
    let v = front::nic_verilog().unwrap_or_else(|e| panic!("{e}"));
    let m = Model::of_verilog("board_front", &v).unwrap_or_else(|e| panic!("{e}"));
    match m.build().build_seconds {
        Some(s) => eprintln!("built board_front in {s:.1} s"),
        None => eprintln!("reused board_front model"),
    }
    m
}

/// Runs the three traffic kinds with the given clocks and checks everything.
fn check_clocks(m: Model, mac_ps: [u64; PORTS], core_ps: u64, seed: u64, frames: usize) -> Model {
    let mut r = Rng(seed);
    let mut b = Bench::new(m, mac_ps, core_ps, &mut r);
    b.reset();
    let mut classes = [[0u64; 4]; PORTS];
    let mut ip = [0u64; PORTS];
    let mut base = 1_000;
    for kind in [Kind::Minimum, Kind::ShortIp, Kind::FullStacks, Kind::Mixed] {
        let ports: [PortTraffic; PORTS] = std::array::from_fn(|p| traffic(kind, p, base, frames, &mut r));
        let (got, meas) = b.run(&ports, base);
        for p in 0..PORTS {
            if let Kind::ShortIp = kind {
                assert_eq!(ports[p].want.len(), frames, "every short frame is IP");
            }
            assert_eq!(got[p].len(), ports[p].want.len(), "{kind:?}, port {p}: records merged");
            for (i, (g, w)) in got[p].iter().zip(&ports[p].want).enumerate() {
                assert_eq!(g, w, "{kind:?}, port {p}, IP frame {i}: merged record != software model");
            }
            for (sum, n) in classes[p].iter_mut().zip(ports[p].classes) {
                *sum += n;
            }
            ip[p] += ports[p].want.len() as u64;
        }
        let clocks = meas.core_clocks.max(1) as f64;
        eprintln!(
            "MAC {mac_ps:?} ps, core {core_ps} ps, {kind:?}: {} records, {} hops in {} core clocks: \
             {:.3} records and {:.3} hops a core clock",
            meas.records,
            meas.hops,
            meas.core_clocks,
            meas.records as f64 / clocks,
            meas.hops as f64 / clocks
        );
        base += 1 << 40;
    }
    let mut fills = [0u64; PORTS];
    for p in 0..PORTS {
        let c = |m: &mut Model, n: &str| m.get_by_name(&format!("{n}${p}")) as u64;
        let counters = [
            c(&mut b.m, "frames"),
            c(&mut b.m, "ip_packets"),
            c(&mut b.m, "non_ip"),
            c(&mut b.m, "malformed"),
        ];
        let sent: u64 = classes[p].iter().sum();
        assert_eq!(
            counters,
            [sent, classes[p][1], classes[p][2], classes[p][3]],
            "port {p}: frames, IP, non-IP, malformed"
        );
        assert_eq!(c(&mut b.m, "accepted"), ip[p], "port {p}: records accepted by the merge");
        assert_eq!(c(&mut b.m, "overflow"), 0, "port {p}: records refused by its FIFO");
        fills[p] = c(&mut b.m, "max_fill");
        assert!((1..=MAX_FILL as u64).contains(&fills[p]), "port {p}: high-water mark {}", fills[p]);
    }
    eprintln!("MAC {mac_ps:?} ps, core {core_ps} ps: FIFO high-water marks {fills:?} of {DEPTH}");
    b.m
}

/// Four MAC clocks of 6.4 ns +- 3 %, each its own.
fn mac_periods(r: &mut Rng) -> [u64; PORTS] {
    std::array::from_fn(|_| 6_208 + r.below(385))
}

/// A core clock far too slow for the ports (40 ns against 4 x 8-beat frames per 51 ns): the
/// FIFOs fill, refuse records and count them, and what gets through is each port's records
/// in order.
fn check_overload(m: Model, seed: u64) -> Model {
    let mut r = Rng(seed);
    let mac = mac_periods(&mut r);
    let mut b = Bench::new(m, mac, 40_000, &mut r);
    b.reset();
    let base = 1_000;
    let ports: [PortTraffic; PORTS] = std::array::from_fn(|p| traffic(Kind::Minimum, p, base, 300, &mut r));
    let (got, meas) = b.run(&ports, base);
    for p in 0..PORTS {
        let c = |m: &mut Model, n: &str| m.get_by_name(&format!("{n}${p}")) as u64;
        let want = &ports[p].want;
        let mut w = want.iter();
        for (i, g) in got[p].iter().enumerate() {
            assert!(
                w.any(|x| x == g),
                "overload, port {p}: merged record {i} is not the next of the port's records"
            );
        }
        let refused = c(&mut b.m, "overflow");
        assert!(refused > 0, "port {p}: the overload refused nothing");
        assert_eq!(
            got[p].len() as u64 + refused,
            want.len() as u64,
            "port {p}: merged + refused = IP frames"
        );
        assert_eq!(c(&mut b.m, "accepted"), got[p].len() as u64, "port {p}: accepted");
        assert_eq!(c(&mut b.m, "max_fill"), DEPTH as u64, "port {p}: a full FIFO's high-water mark");
        assert_eq!(c(&mut b.m, "frames"), want.len() as u64, "port {p}: frames");
    }
    eprintln!(
        "overload (core 40 ns): {} of {} records merged, {:.3} a core clock",
        meas.records,
        ports.iter().map(|t| t.want.len()).sum::<usize>(),
        meas.records as f64 / meas.core_clocks as f64
    );
    b.m
}

#[test]
fn four_ports_at_line_rate_merge_into_the_core_clock() {
    let mut m = model();
    let mut r = Rng(0x5EED_B0A2D);
    for (core_ps, frames) in [(4_000, 2_000), (5_000, 500), (3_300, 500), (6_000, 500)] {
        let mac = mac_periods(&mut r);
        m = check_clocks(m, mac, core_ps, r.next(), frames);
    }
    check_overload(m, r.next());
}
