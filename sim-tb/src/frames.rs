//! Minimum-size IPv4/UDP frames for the core's stress traces, and the adversarial trace
//! built from them.
//!
//! - [`udp4_frame`]: one Ethernet frame (no FCS) of exactly `len` bytes (at least
//!   [`MIN_FRAME`] = 64, 8 beats of the 64-bit stream): destination/source MAC, an optional
//!   802.1Q tag, an optional telemetry shim (`smartnic_contract::shim`, kind INT_STACK) and
//!   an IPv4 header (IHL 5, correct checksum) whose total length covers the rest of the frame,
//!   a UDP header and zero payload. The flow key is the frame's 5-tuple, so
//!   `smartnic::trace::frame::parse_frame` returns exactly `key` and the shim's hops.
//! - [`Adversarial`]: an endless seeded trace of such frames in which (almost) every packet
//!   repeats the flow of the packet 1..=16 places before it, so packets of one flow are 1..16
//!   packets apart (8..128 clocks back to back: several of them in every sketch pipeline
//!   at once, and on both sides of every epoch swap), with a fresh flow now and then so the
//!   trace has many flows. About half the frames carry an INT stack of 0..=2 hops
//!   (all that fits in 64 bytes) whose latencies are log-uniform from 0 to ~260 us plus the
//!   delay-bin edges and the 32-bit extremes, so every SuMax delay cell is hit.
use crate::simnic::SimFrame;
use smartnic_contract::frame::ETHERTYPE_VLAN;
use smartnic_contract::key::PROTO_UDP;
use smartnic_contract::shim::Hop;
use smartnic_contract::vectors::KeyStream;
use smartnic_contract::wire::builder::{FrameSpec, Tag, L3, L4};
use smartnic_contract::wire::ipv4::Ipv4Repr;
use smartnic_contract::wire::udp::UdpRepr;
use smartnic_contract::FlowKey;

/// The minimum Ethernet frame without FCS that the tests send: 64 bytes = 8 beats.
pub const MIN_FRAME: usize = 64;
/// Hops of an INT stack that fit in a [`MIN_FRAME`] frame with an 802.1Q tag.
pub const MAX_MIN_FRAME_HOPS: usize = 2;

/// An IPv4/UDP frame of exactly `len` bytes carrying `key` (which must be a UDP key), with
/// an 802.1Q tag of VLAN `vlan` if given and an INT stack with `hops` if given (an empty
/// slice is a shim of zero hops). Panics if the headers do not fit in `len`.
pub fn udp4_frame(key: &FlowKey, vlan: Option<u16>, hops: Option<&[Hop]>, len: usize) -> Vec<u8> {
    assert_eq!(key.proto(), PROTO_UDP, "udp4_frame builds UDP frames");
    let header = Ipv4Repr::new(key.src_ip(), key.dst_ip(), PROTO_UDP, 0);
    let l3 = L3::Ipv4 { header, l4: L4::Udp(UdpRepr::new(key.src_port(), key.dst_port())) };
    let s = key.src_ip();
    let spec = FrameSpec {
        tags: vlan.map(|id| Tag { tpid: ETHERTYPE_VLAN, tci: id & 0x0FFF }).into_iter().collect(),
        shim: hops.map(<[Hop]>::to_vec),
        len: Some(len),
        ..FrameSpec::new([0x02, 0x00, 0x5e, 0x00, 0x00, 0x01], [0x02, 0x00, 0x5e, s[1], s[2], s[3]], l3)
    };
    let f = spec.build().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(f.len(), len, "{len} bytes cannot hold {} bytes of headers", f.len());
    f
}

/// A random IPv4 UDP flow key.
pub fn random_udp_key(rng: &mut KeyStream) -> FlowKey {
    let r = rng.next_u64().to_be_bytes();
    let p = rng.next_u64();
    FlowKey::from_v4([10, r[0], r[1], r[2]], [r[3], r[4], r[5], r[6]], p as u16, (p >> 16) as u16, PROTO_UDP)
}

/// A per-hop latency (ns): mostly log-uniform over 0..2^18 (every delay bin of the NIC rule:
/// below 1 us, the octaves 1..64 us, and beyond), sometimes a bin edge `1000 * 2^k + {-1, 0,
/// 1}`, rarely 0 or `u32::MAX` (two such hops sum past 32 bits).
pub fn random_latency(rng: &mut KeyStream) -> u32 {
    let r = rng.next_u64();
    match r % 64 {
        0 => 0,
        1 => u32::MAX,
        2..=9 => {
            let edge = 1000u32 << ((r >> 8) % 8);
            edge + ((r >> 16) % 3) as u32 - 1
        }
        _ => {
            let bits = (r >> 8) % 19;
            ((r >> 16) & ((1u64 << bits) - 1)) as u32
        }
    }
}

/// How a flow's frames look (fixed per flow, as on a real path).
#[derive(Clone, Copy, Debug)]
struct Flow {
    key: FlowKey,
    vlan: Option<u16>,
}

/// The adversarial trace (see the module docs), an endless iterator of [`MIN_FRAME`] frames.
pub struct Adversarial {
    rng: KeyStream,
    /// Flow of each of the last 16 packets, `recent[n % 16]` for packet `n`.
    recent: [usize; 16],
    flows: Vec<Flow>,
    sent: u64,
    /// A fresh flow with probability `1 / fresh_every` (and for the first packet).
    fresh_every: u64,
    ts_ns: u64,
}

impl Adversarial {
    /// The trace of `seed`; `fresh_every` > 0.
    pub fn new(seed: u64, fresh_every: u64) -> Self {
        assert!(fresh_every > 0);
        Adversarial {
            rng: KeyStream::new(seed),
            recent: [0; 16],
            flows: Vec::new(),
            sent: 0,
            fresh_every,
            ts_ns: 1_700_000_000_000_000_000,
        }
    }

    /// Flows started so far.
    pub fn flows(&self) -> usize {
        self.flows.len()
    }

    /// Timestamp of the last frame (ns).
    pub fn now(&self) -> u64 {
        self.ts_ns
    }

    /// Moves the clock forward to `ts_ns` (for traffic generated elsewhere in between).
    pub fn skip_to(&mut self, ts_ns: u64) {
        self.ts_ns = self.ts_ns.max(ts_ns);
    }

    fn new_flow(&mut self) -> usize {
        let key = random_udp_key(&mut self.rng);
        let vlan = self.rng.next_u64().is_multiple_of(4).then_some(10);
        self.flows.push(Flow { key, vlan });
        self.flows.len() - 1
    }
}

impl Iterator for Adversarial {
    type Item = SimFrame;

    fn next(&mut self) -> Option<SimFrame> {
        let back = 1 + self.rng.next_u64() % 16;
        let fresh = self.sent < back || self.rng.next_u64().is_multiple_of(self.fresh_every);
        let flow = if fresh { self.new_flow() } else { self.recent[((self.sent - back) % 16) as usize] };
        self.recent[(self.sent % 16) as usize] = flow;
        self.sent += 1;
        // Arrival gaps of 0..4 us (several packets per 1.024 us time unit, and gaps of a
        // few units), now and then a pause of up to ~1 s.
        let r = self.rng.next_u64();
        self.ts_ns += if r.is_multiple_of(1000) { (r >> 10) % 1_000_000_000 } else { (r >> 10) % 4096 };
        let shim = self.rng.next_u64() % 8;
        let hops: Vec<Hop> = (0..shim.min(MAX_MIN_FRAME_HOPS as u64))
            .map(|i| Hop { switch_id: i as u16 + 1, latency_ns: random_latency(&mut self.rng) })
            .collect();
        let f = self.flows[flow];
        // 0..3: no shim; 4: an empty INT stack; 5..7: 1 or 2 hops.
        let hops = (shim >= 4).then_some(&hops[..]);
        Some(SimFrame::new(self.ts_ns, udp4_frame(&f.key, f.vlan, hops, MIN_FRAME)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use smartnic::trace::frame::{parse_frame, FrameClass, LINKTYPE_ETHERNET};
    use smartnic_contract::wire::ipv4::Ipv4Packet;

    #[test]
    fn frames_parse_to_their_key_and_hops() {
        let mut rng = KeyStream::new(3);
        for n in 0..2000 {
            let key = random_udp_key(&mut rng);
            let hops: Vec<Hop> = (0..n % 3)
                .map(|i| Hop { switch_id: i as u16, latency_ns: random_latency(&mut rng) })
                .collect();
            let vlan = (n % 5 == 0).then_some(7);
            let shim = (n % 4 != 0).then_some(&hops[..]);
            let f = udp4_frame(&key, vlan, shim, MIN_FRAME);
            assert_eq!(f.len(), MIN_FRAME);
            let ip = 14 + 4 * vlan.is_some() as usize + shim.map_or(0, |h| 6 + 6 * h.len());
            let p = Ipv4Packet::new_checked(&f[ip..]).unwrap();
            assert!(p.verify_checksum(), "IPv4 header checksum");
            match parse_frame(LINKTYPE_ETHERNET, &f) {
                FrameClass::Ip { key: k, hops: h } => {
                    assert_eq!(k, key);
                    assert_eq!(h, if shim.is_some() { hops.clone() } else { vec![] });
                }
                other => panic!("frame {n}: {other:?}"),
            }
        }
    }

    #[test]
    fn adversarial_repeats_recent_flows() {
        let frames: Vec<SimFrame> = Adversarial::new(9, 8).take(20_000).collect();
        let keys: Vec<FlowKey> = frames
            .iter()
            .map(|f| match parse_frame(LINKTYPE_ETHERNET, &f.data) {
                FrameClass::Ip { key, .. } => key,
                other => panic!("{other:?}"),
            })
            .collect();
        let mut fresh = 0;
        for (i, k) in keys.iter().enumerate() {
            if !keys[i.saturating_sub(16)..i].contains(k) {
                fresh += 1;
            }
        }
        // 1/8 fresh flows (plus the first 16 packets' share).
        assert!((2000..3000).contains(&fresh), "{fresh} fresh flows");
        assert!(frames.windows(2).all(|w| w[0].ts_ns <= w[1].ts_ns));
    }
}
