//! Shared harness of the parser's Verilator tests: frames -> AXI-Stream beats (back to
//! back, zero gaps unless asked), descriptors checked row by row against
//! `smartnic::trace::frame::parse_frame`, counters checked at the end.
#![allow(dead_code)]
use smartnic::trace::frame::{parse_frame, FrameClass, LINKTYPE_ETHERNET};
use smartnic_hdl::hash::key_to_u128;
use smartnic_hdl::parser::{CLASS_IP, CLASS_MALFORMED, CLASS_NON_IP, LATENCY};
use smartnic_sim_tb::{Model, PortId};

pub mod frames;

/// splitmix64: a small seeded generator for frames and gaps.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in 0..n.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn chance(&mut self, p: f64) -> bool {
        ((self.next() >> 11) as f64 / (1u64 << 53) as f64) < p
    }
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// One frame to drive: its bytes, `tuser` on the last beat, and an optional `tkeep`
/// override `(beat, keep)` (a hole).
#[derive(Clone, Debug)]
pub struct Frame {
    pub data: Vec<u8>,
    pub tuser: bool,
    pub keep: Option<(usize, u8)>,
    /// What the structured generator put in (`feat::*` bits), for coverage counts.
    pub feat: u32,
}

/// Feature bits of [`Frame::feat`].
pub mod feat {
    pub const VLAN1: u32 = 1;
    pub const VLAN2: u32 = 2;
    pub const SHIM: u32 = 4;
    pub const V4_OPTIONS: u32 = 8;
    pub const V6_EXT: u32 = 16;
    pub const V6_EXT_LONG: u32 = 32;
    pub const V6_FRAG: u32 = 64;
    pub const V6_AH: u32 = 128;
    pub const TCP: u32 = 256;
    pub const UDP: u32 = 512;
    pub const NAMES: [&str; 10] =
        ["vlan1", "vlan2", "shim", "v4_options", "v6_ext", "v6_ext_long", "v6_frag", "v6_ah", "tcp", "udp"];
}

impl Frame {
    pub fn new(data: Vec<u8>) -> Self {
        Frame { data, tuser: false, keep: None, feat: 0 }
    }
    pub fn beats(&self) -> usize {
        self.data.len().div_ceil(8)
    }
}

/// What the descriptor must say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Desc {
    pub class: u8,
    pub key: u128,
    pub len: u32,
    pub ts: u64,
    pub delay: u64,
    /// INT stack hop count and shim position code (`d_hops`, `d_sc`).
    pub hops: u8,
    pub sc: u8,
}

/// The software model's verdict on a frame (tuser and tkeep holes make it malformed).
pub fn expect(f: &Frame) -> (u8, u128, u64) {
    if f.tuser || f.keep.is_some() {
        return (CLASS_MALFORMED, 0, 0);
    }
    match parse_frame(LINKTYPE_ETHERNET, &f.data) {
        FrameClass::Ip { key, hops } => {
            (CLASS_IP, key_to_u128(key.as_bytes()), hops.iter().map(|h| h.latency_ns as u64).sum())
        }
        FrameClass::NonIp => (CLASS_NON_IP, 0, 0),
        FrameClass::Malformed(_) => (CLASS_MALFORMED, 0, 0),
    }
}

/// The hop count and VLAN tag count of an IP frame's shim, (0, 0) without one.
fn shim_of(f: &Frame) -> (u8, u8) {
    use smartnic_contract::shim::ETHERTYPE_SHIM;
    match (smartnic_contract::wire::vlan::walk_l2(&f.data), parse_frame(LINKTYPE_ETHERNET, &f.data)) {
        (Ok(l2), FrameClass::Ip { hops, .. }) if l2.ethertype == ETHERTYPE_SHIM => {
            (hops.len() as u8, l2.tags as u8)
        }
        _ => (0, 0),
    }
}

/// Totals of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub frames: u64,
    pub ip: u64,
    pub non_ip: u64,
    pub malformed: u64,
    pub cycles: u64,
    pub beats: u64,
}

pub struct Harness {
    pub m: Model,
    inputs: Vec<PortId>,
    outputs: Vec<PortId>,
    /// Value of `now` in the next row.
    pub now: u64,
    pub tally: Tally,
    garbage: Rng,
    /// The parser's longest frame when it is narrower than the contract's (a `LenParser`
    /// built for the length-limit test): longer frames must read malformed, at this length.
    pub max_len: Option<usize>,
}

const IN_WORDS: usize = 8; // tdata 2, tkeep, tlast, tuser, tvalid, now 2
const OUT_WORDS: usize = 14; // d_valid, d_class, d_key 4, d_len, d_ts 2, d_delay 2, tready, d_hops, d_sc

pub fn model() -> Model {
    let m = Model::of_block("parser").unwrap_or_else(|e| panic!("{e}"));
    match m.build().build_seconds {
        Some(s) => eprintln!("built parser in {s:.1} s"),
        None => eprintln!("reused parser model"),
    }
    m
}

impl Harness {
    pub fn new() -> Harness {
        Harness::with_model(model())
    }

    /// The harness around another build of the parser (same ports).
    pub fn with_model(mut m: Model) -> Harness {
        let names_in = ["tdata", "tkeep", "tlast", "tuser", "tvalid", "now"];
        let names_out =
            ["d_valid", "d_class", "d_key", "d_len", "d_ts", "d_delay", "tready", "d_hops", "d_sc"];
        let inputs = names_in.iter().map(|n| m.port(n)).collect();
        let outputs = names_out.iter().map(|n| m.port(n)).collect();
        m.reset(2);
        Harness { m, inputs, outputs, now: 1000, tally: Tally::default(), garbage: Rng(99), max_len: None }
    }

    /// Drives `frames` back to back (an idle row with probability `gap` before each beat)
    /// and checks every descriptor: exactly one per frame, `LATENCY - 1` rows after the row
    /// of its last beat, equal to the software model's. `LATENCY - 1` idle rows at the end
    /// drain the last descriptor. Returns the number of rows driven before the drain.
    pub fn run(&mut self, frames: &[Frame], gap: f64, gaps: &mut Rng) -> u64 {
        let mut rows: Vec<u32> = Vec::new();
        // Per row: the frame whose last beat it carries.
        let mut last_of: Vec<Option<usize>> = Vec::new();
        let mut first_now = vec![0u64; frames.len()];
        for (fi, f) in frames.iter().enumerate() {
            let nb = f.beats();
            for b in 0..nb {
                while gap > 0.0 && gaps.chance(gap) {
                    // Idle row: tvalid 0 with garbage data.
                    let g = self.garbage.next();
                    rows.extend_from_slice(&[g as u32, (g >> 32) as u32, 0xFF, 1, 1, 0]);
                    rows.extend_from_slice(&[self.now as u32, (self.now >> 32) as u32]);
                    last_of.push(None);
                    self.now += 1;
                }
                if b == 0 {
                    first_now[fi] = self.now;
                }
                let mut word = [0u8; 8];
                let lo = 8 * b;
                let hi = (lo + 8).min(f.data.len());
                let g = self.garbage.next().to_le_bytes();
                word.copy_from_slice(&g); // bytes beyond tkeep are garbage
                word[..hi - lo].copy_from_slice(&f.data[lo..hi]);
                let last = b + 1 == nb;
                let mut keep: u32 = if last { (1u32 << (hi - lo)) - 1 } else { 0xFF };
                if let Some((kb, k)) = f.keep {
                    if kb == b {
                        keep = k as u32;
                    }
                }
                let d = u64::from_le_bytes(word);
                rows.extend_from_slice(&[d as u32, (d >> 32) as u32, keep, last as u32]);
                rows.extend_from_slice(&[(last && f.tuser) as u32, 1]);
                rows.extend_from_slice(&[self.now as u32, (self.now >> 32) as u32]);
                last_of.push(last.then_some(fi));
                self.now += 1;
                self.tally.beats += 1;
            }
        }
        let n = last_of.len() as u64;
        for _ in 1..LATENCY {
            rows.extend_from_slice(&[0, 0, 0, 0, 0, 0, self.now as u32, (self.now >> 32) as u32]);
            self.now += 1;
        }
        // The descriptor expected in each row.
        let mut desc_at: Vec<Option<usize>> = vec![None; LATENCY - 1];
        desc_at.extend(&last_of);
        let out = self.m.stream(&self.inputs, &rows, &self.outputs);
        assert_eq!(rows.len(), desc_at.len() * IN_WORDS);
        for (r, lf) in desc_at.iter().enumerate() {
            let o = &out[r * OUT_WORDS..(r + 1) * OUT_WORDS];
            assert_eq!(o[11], 1, "tready low at row {r}");
            match lf {
                None => assert_eq!(o[0], 0, "descriptor without a last beat at row {r}"),
                Some(fi) => {
                    let f = &frames[*fi];
                    assert_eq!(o[0], 1, "no descriptor for frame {fi} (len {}) at row {r}", f.data.len());
                    let key = o[2..6].iter().rev().fold(0u128, |a, &w| a << 32 | w as u128);
                    let got = Desc {
                        class: o[1] as u8,
                        key,
                        len: o[6],
                        ts: o[7] as u64 | (o[8] as u64) << 32,
                        delay: o[9] as u64 | (o[10] as u64) << 32,
                        hops: o[12] as u8,
                        sc: o[13] as u8,
                    };
                    let (class, key, delay) = match self.max_len {
                        Some(max) if f.data.len() > max => (CLASS_MALFORMED, 0, 0),
                        _ => expect(f),
                    };
                    // A non-contiguous last tkeep counts no bytes of the last beat.
                    let len = match f.keep {
                        Some((kb, k)) if kb + 1 == f.beats() && !(k as u16 + 1).is_power_of_two() => 8 * kb,
                        Some((kb, 0)) if kb + 1 == f.beats() => 8 * kb,
                        _ => f.data.len(),
                    };
                    let len = self.max_len.map_or(len, |max| len.min(max));
                    let (hops, sc) = if class == CLASS_IP { shim_of(f) } else { (0, 0) };
                    let want = Desc { class, key, len: len as u32, ts: first_now[*fi], delay, hops, sc };
                    if got != want {
                        panic!(
                            "frame {fi}: hardware {got:x?} != software {want:x?}\nsoftware: {:?}\nbytes ({}): {}",
                            parse_frame(LINKTYPE_ETHERNET, &f.data),
                            f.data.len(),
                            f.data.iter().map(|b| format!("{b:02x}")).collect::<String>()
                        );
                    }
                    self.tally.frames += 1;
                    match class {
                        CLASS_IP => self.tally.ip += 1,
                        CLASS_NON_IP => self.tally.non_ip += 1,
                        _ => self.tally.malformed += 1,
                    }
                }
            }
        }
        self.tally.cycles += n;
        n
    }

    /// Two idle clocks, then the counters must equal the tally and add up.
    pub fn check_counters(&mut self) {
        let idle = [0u32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        let out = self.m.stream(&self.inputs, &idle, &self.outputs);
        assert!(out.chunks(OUT_WORDS).all(|o| o[0] == 0));
        let c = |m: &mut Model, n: &str| m.get_by_name(n) as u64;
        let (frames, ip, non_ip, mal) = (
            c(&mut self.m, "frames"),
            c(&mut self.m, "ip_packets"),
            c(&mut self.m, "non_ip"),
            c(&mut self.m, "malformed"),
        );
        assert_eq!(frames, ip + non_ip + mal, "counters do not add up");
        assert_eq!(
            (frames, ip, non_ip, mal),
            (self.tally.frames, self.tally.ip, self.tally.non_ip, self.tally.malformed),
            "counters"
        );
    }
}
