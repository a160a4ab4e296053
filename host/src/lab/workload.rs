//! The lab's traffic: flows between random host pairs, sizes from the papers' workloads,
//! Poisson arrivals at a target load, per-flow pacing, all from one seed.
//!
//! Why these choices: PINT, HPCC and LightGuardian evaluate on the web-search workload of
//! the DCTCP paper (Alizadeh et al., SIGCOMM 2010), which LightGuardian calls "DCTCP";
//! [`WEB_SEARCH_CDF`] is the CDF those simulations ship, interpolated linearly. Zipf and
//! fixed sizes are there for skew and hand-computable tests.
//!
//! Load: the flows of all hosts form one Poisson process; host `h` starts flows at rate
//! `lambda_h = load * rate_h / mean flow size` (payload bits, as those simulations count;
//! headers add about 4 % on the wire), so the merged process has rate `sum lambda_h` and each
//! flow's source is host `h` with probability `lambda_h / sum`. The destination is any other
//! host, uniformly.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use smartnic_contract::key::{FlowKey, PROTO_TCP, PROTO_UDP};
use smartnic_contract::wire::builder::{FrameSpec, L3, L4};
use smartnic_contract::wire::ethernet::MIN_FRAME_LEN;
use smartnic_contract::wire::ipv4::{Ipv4Packet, Ipv4Repr};
use smartnic_contract::wire::tcp::{self, TcpRepr};
use smartnic_contract::wire::udp::{self, UdpRepr};
use smartnic_p4::topology::{NodeId, Topology};
use std::collections::HashSet;
use std::str::FromStr;

/// The web-search flow-size CDF: (bytes, cumulative percent), interpolated linearly.
pub const WEB_SEARCH_CDF: [(f64, f64); 12] = [
    (0.0, 0.0),
    (10_000.0, 15.0),
    (20_000.0, 20.0),
    (30_000.0, 30.0),
    (50_000.0, 40.0),
    (80_000.0, 53.0),
    (200_000.0, 60.0),
    (1_000_000.0, 70.0),
    (2_000_000.0, 80.0),
    (5_000_000.0, 90.0),
    (10_000_000.0, 97.0),
    (30_000_000.0, 100.0),
];

/// Default maximum segment size: a 1500-byte IPv4 MTU minus 40 bytes of IP and TCP headers.
pub const DEFAULT_MSS: u32 = 1460;

/// Flow sizes (payload bytes).
#[derive(Clone, Debug, PartialEq)]
pub enum SizeDist {
    /// [`WEB_SEARCH_CDF`].
    WebSearch,
    /// `k` full segments, `k` on `1..=max_bytes / mss` with probability proportional to `k^-s`.
    Zipf { s: f64, max_bytes: u64 },
    /// Every flow has this many bytes.
    Fixed(u64),
}

impl FromStr for SizeDist {
    type Err = String;
    /// `web-search` (alias `dctcp`), `zipf:S:MAX_BYTES` or `fixed:BYTES`.
    fn from_str(s: &str) -> Result<Self, String> {
        let parts: Vec<&str> = s.split(':').collect();
        let bytes = |v: &str| crate::cli::size::parse_bytes(v);
        match parts.as_slice() {
            ["web-search"] | ["websearch"] | ["dctcp"] => Ok(SizeDist::WebSearch),
            ["zipf", sk, max] => {
                let s: f64 = sk.parse().map_err(|_| format!("zipf exponent `{sk}` is not a number"))?;
                if !(s.is_finite() && s >= 0.0) {
                    return Err(format!("zipf exponent `{sk}` must be finite and >= 0"));
                }
                Ok(SizeDist::Zipf { s, max_bytes: bytes(max)? })
            }
            ["fixed", n] => Ok(SizeDist::Fixed(bytes(n)?)),
            _ => Err(format!("`{s}`: expected web-search, dctcp, zipf:S:MAX_BYTES or fixed:BYTES")),
        }
    }
}

/// A size sampler built once per run (the Zipf CDF table is computed up front).
struct Sizes {
    dist: SizeDist,
    mss: u32,
    zipf_cdf: Vec<f64>,
}

impl Sizes {
    fn new(dist: &SizeDist, mss: u32) -> Self {
        let zipf_cdf = match *dist {
            SizeDist::Zipf { s, max_bytes } => {
                let k = (max_bytes / mss as u64).max(1);
                let mut acc = 0.0;
                let mut cdf: Vec<f64> = (1..=k)
                    .map(|i| {
                        acc += (i as f64).powf(-s);
                        acc
                    })
                    .collect();
                cdf.iter_mut().for_each(|c| *c /= acc);
                cdf
            }
            _ => Vec::new(),
        };
        Sizes { dist: dist.clone(), mss, zipf_cdf }
    }

    /// The mean flow size in bytes (what the arrival rate is computed from).
    fn mean(&self) -> f64 {
        match self.dist {
            SizeDist::WebSearch => {
                WEB_SEARCH_CDF.windows(2).map(|w| (w[1].1 - w[0].1) / 100.0 * (w[0].0 + w[1].0) / 2.0).sum()
            }
            SizeDist::Zipf { .. } => {
                let mut prev = 0.0;
                let mut sum = 0.0;
                for (i, c) in self.zipf_cdf.iter().enumerate() {
                    sum += (c - prev) * ((i + 1) as f64 * self.mss as f64);
                    prev = *c;
                }
                sum
            }
            SizeDist::Fixed(n) => n as f64,
        }
    }

    /// One flow size, at least one byte.
    fn sample(&self, rng: &mut ChaCha8Rng) -> u64 {
        let u: f64 = rng.gen();
        let bytes = match self.dist {
            SizeDist::WebSearch => web_search_quantile(u * 100.0),
            SizeDist::Zipf { .. } => {
                let k = self.zipf_cdf.partition_point(|&c| c < u) + 1;
                k as u64 * self.mss as u64
            }
            SizeDist::Fixed(n) => n,
        };
        bytes.max(1)
    }
}

/// The size at cumulative percent `p` of [`WEB_SEARCH_CDF`] (linear between the points).
pub fn web_search_quantile(p: f64) -> u64 {
    for w in WEB_SEARCH_CDF.windows(2) {
        let ((x0, p0), (x1, p1)) = (w[0], w[1]);
        if p <= p1 && p1 > p0 {
            return (x0 + (x1 - x0) * (p - p0).max(0.0) / (p1 - p0)).round() as u64;
        }
    }
    WEB_SEARCH_CDF[WEB_SEARCH_CDF.len() - 1].0 as u64
}

/// TCP or UDP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Proto {
    Tcp,
    Udp,
}

impl FromStr for Proto {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "tcp" => Ok(Proto::Tcp),
            "udp" => Ok(Proto::Udp),
            _ => Err(format!("`{s}`: expected tcp or udp")),
        }
    }
}

/// What traffic to generate.
#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    pub sizes: SizeDist,
    /// Offered load per host, a fraction of its link rate (> 0).
    pub load: f64,
    pub mss: u32,
    pub proto: Proto,
    /// Each flow sends at this fraction of its host's link rate (0 < pace <= 1).
    pub pace: f64,
    /// Stop after this many packets in total (the last flow is cut to fit).
    pub max_packets: Option<u64>,
    /// Start no flow at or after this time (ns).
    pub duration_ns: Option<u64>,
    /// Start at most this many flows.
    pub max_flows: Option<u64>,
    pub seed: u64,
}

impl Default for Workload {
    fn default() -> Self {
        Workload {
            sizes: SizeDist::WebSearch,
            load: 0.3,
            mss: DEFAULT_MSS,
            proto: Proto::Tcp,
            pace: 1.0,
            max_packets: Some(100_000),
            duration_ns: None,
            max_flows: None,
            seed: 1,
        }
    }
}

/// One flow of the workload.
#[derive(Clone, Debug, PartialEq)]
pub struct Flow {
    pub src: NodeId,
    pub dst: NodeId,
    pub key: FlowKey,
    /// Payload bytes the flow carries.
    pub size_bytes: u64,
    /// Packets the flow sends (its size in segments, or fewer when the packet cap cut it).
    pub packets: u32,
    pub start_ns: u64,
    /// Payload bytes per packet (the last packet carries the rest).
    pub mss: u32,
    /// Sending rate, bits per second (pace x the host's link rate).
    pub rate_bps: f64,
    /// The frame's headers as the host sends it (Ethernet, IPv4, TCP or UDP), patched per
    /// packet by [`Flow::packet`].
    pub template: Vec<u8>,
}

impl Flow {
    /// Payload bytes of packet `i`.
    pub fn payload(&self, i: u32) -> u32 {
        let sent = i as u64 * self.mss as u64;
        (self.size_bytes.saturating_sub(sent)).min(self.mss as u64).max(1) as u32
    }

    /// Writes packet `i`'s headers into `out` (cleared first) and returns the number of zero
    /// bytes after them on the wire: the payload and the Ethernet padding up to
    /// [`MIN_FRAME_LEN`]. Only the lengths, the IPv4 ID and checksum and the TCP sequence
    /// number change from packet to packet.
    pub fn packet(&self, i: u32, out: &mut Vec<u8>) -> u32 {
        out.clear();
        out.extend_from_slice(&self.template);
        let payload = self.payload(i);
        let ip = smartnic_contract::wire::ethernet::field::HEADER_LEN;
        let l4 = ip + smartnic_contract::wire::ipv4::field::MIN_HEADER_LEN;
        let l3_len = (out.len() - ip) as u32 + payload;
        match self.key.proto() {
            PROTO_TCP => {
                let seq = (i as u64 * self.mss as u64) as u32;
                out[l4 + tcp::field::SEQ.start..l4 + tcp::field::SEQ.end].copy_from_slice(&seq.to_be_bytes());
            }
            _ => {
                let len = (l3_len - smartnic_contract::wire::ipv4::field::MIN_HEADER_LEN as u32) as u16;
                out[l4 + udp::field::LENGTH.start..l4 + udp::field::LENGTH.end]
                    .copy_from_slice(&len.to_be_bytes());
            }
        }
        let mut v = Ipv4Packet::new_unchecked(&mut out[ip..]);
        v.set_total_len(l3_len as u16);
        v.set_ident(i as u16);
        v.fill_checksum();
        let wire = out.len() as u32 + payload;
        payload + (MIN_FRAME_LEN as u32).saturating_sub(wire)
    }
}

/// The flows of a run, in start order.
pub fn generate(t: &Topology, w: &Workload) -> Result<Vec<Flow>, String> {
    check(t, w)?;
    let sizes = Sizes::new(&w.sizes, w.mss);
    let hosts: Vec<NodeId> = t.hosts().collect();
    let lambdas: Vec<f64> = hosts
        .iter()
        .map(|&h| t.link(h, 0).rate_bps as f64)
        .map(|r| w.load * r / (sizes.mean() * 8.0))
        .collect();
    let total: f64 = lambdas.iter().sum();
    let mut rng = ChaCha8Rng::seed_from_u64(w.seed);
    let mut keys = HashSet::new();
    let mut flows = Vec::new();
    let (mut t_ns, mut packets) = (0.0f64, 0u64);
    loop {
        t_ns += -(1.0 - rng.gen::<f64>()).ln() / total * 1e9;
        if w.duration_ns.is_some_and(|d| t_ns >= d as f64)
            || w.max_packets.is_some_and(|m| packets >= m)
            || w.max_flows.is_some_and(|m| flows.len() as u64 >= m)
        {
            break;
        }
        let si = pick(&lambdas, total, &mut rng);
        let di = (si + rng.gen_range(1..hosts.len())) % hosts.len();
        let size = sizes.sample(&mut rng);
        let mut n = size.div_ceil(w.mss as u64);
        if let Some(m) = w.max_packets {
            n = n.min(m - packets);
        }
        packets += n;
        let key = unique_key(t, hosts[si], hosts[di], w.proto, &mut rng, &mut keys);
        let size = size.min(n * w.mss as u64);
        flows.push(Flow::new(t, (hosts[si], hosts[di]), key, size, t_ns as u64, w.mss, w.pace)?);
    }
    Ok(flows)
}

impl Flow {
    /// A flow of `size_bytes` from `ends.0` to `ends.1` with 5-tuple `key`, starting at
    /// `start_ns`, in `mss`-byte segments sent at `pace` x the source's link rate.
    pub fn new(
        t: &Topology,
        ends: (NodeId, NodeId),
        key: FlowKey,
        size_bytes: u64,
        start_ns: u64,
        mss: u32,
        pace: f64,
    ) -> Result<Flow, String> {
        let packets = size_bytes.max(1).div_ceil(mss as u64);
        Ok(Flow {
            src: ends.0,
            dst: ends.1,
            key,
            size_bytes,
            packets: u32::try_from(packets).map_err(|_| "a flow of more than 2^32 packets".to_string())?,
            start_ns,
            mss,
            rate_bps: pace * t.link(ends.0, 0).rate_bps as f64,
            template: template(t, ends.0, &key)?,
        })
    }
}

/// The workload's numbers make sense for this topology.
pub fn check(t: &Topology, w: &Workload) -> Result<(), String> {
    if t.hosts().count() < 2 {
        return Err("the topology needs at least two hosts to carry flows".into());
    }
    if !(w.load.is_finite() && w.load > 0.0) {
        return Err(format!("load {} must be a positive fraction of the link rate", w.load));
    }
    if !(w.pace.is_finite() && w.pace > 0.0 && w.pace <= 1.0) {
        return Err(format!("pace {} must be in (0, 1]", w.pace));
    }
    if w.mss == 0 || w.mss > 9000 {
        return Err(format!("mss {} must be between 1 and 9000 bytes", w.mss));
    }
    if w.max_packets.is_none() && w.duration_ns.is_none() && w.max_flows.is_none() {
        return Err("give a packet cap, a flow count or a duration, or the run never ends".into());
    }
    if let SizeDist::Fixed(0) = w.sizes {
        return Err("fixed flow size must be at least 1 byte".into());
    }
    Ok(())
}

/// Index `i` with probability `weights[i] / total`.
fn pick(weights: &[f64], total: f64, rng: &mut ChaCha8Rng) -> usize {
    let mut u = rng.gen::<f64>() * total;
    for (i, w) in weights.iter().enumerate() {
        if u < *w {
            return i;
        }
        u -= w;
    }
    weights.len() - 1
}

/// A 5-tuple between two hosts that no earlier flow of the run has (random ports).
fn unique_key(
    t: &Topology,
    src: NodeId,
    dst: NodeId,
    proto: Proto,
    rng: &mut ChaCha8Rng,
    seen: &mut HashSet<FlowKey>,
) -> FlowKey {
    let (s, d) = (t.host_ip(src).unwrap().octets(), t.host_ip(dst).unwrap().octets());
    let p = match proto {
        Proto::Tcp => PROTO_TCP,
        Proto::Udp => PROTO_UDP,
    };
    loop {
        let key = FlowKey::from_v4(s, d, rng.gen_range(1024..=65535), rng.gen_range(1024..=65535), p);
        if seen.insert(key) {
            return key;
        }
    }
}

/// The headers a host sends for `key`: to its edge switch's MAC, IPv4 TTL 64 (the
/// contract's default), TCP with ACK|PSH or UDP; lengths are patched per packet.
fn template(t: &Topology, src: NodeId, key: &FlowKey) -> Result<Vec<u8>, String> {
    let ip = Ipv4Repr::new(key.src_ip(), key.dst_ip(), key.proto(), 0);
    let l4 = if key.proto() == PROTO_TCP {
        let mut h = TcpRepr::new(key.src_port(), key.dst_port());
        h.flags = tcp::flags::ACK | tcp::flags::PSH;
        h.window = 0xFFFF;
        L4::Tcp(h)
    } else {
        L4::Udp(UdpRepr::new(key.src_port(), key.dst_port()))
    };
    let spec = FrameSpec::new(t.mac(t.edge_of(src)), t.mac(src), L3::Ipv4 { header: ip, l4 });
    let mut out = Vec::new();
    spec.emit_headers(&mut out).map_err(|e| e.to_string())?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use smartnic_p4::topology::{fat_tree, DEFAULT_DELAY_NS, DEFAULT_RATE_BPS};

    #[test]
    fn web_search_quantiles_follow_the_cdf() {
        assert_eq!(web_search_quantile(15.0), 10_000);
        assert_eq!(web_search_quantile(17.5), 15_000);
        assert_eq!(web_search_quantile(100.0), 30_000_000);
        let mean = Sizes::new(&SizeDist::WebSearch, DEFAULT_MSS).mean();
        // The published mean of the web-search workload is about 1.6 MB.
        assert!((1.5e6..1.8e6).contains(&mean), "{mean}");
    }

    #[test]
    fn packet_cap_is_exact_and_keys_unique() {
        let t = fat_tree(4, DEFAULT_RATE_BPS, DEFAULT_DELAY_NS).unwrap();
        let w = Workload { max_packets: Some(5_000), ..Workload::default() };
        let flows = generate(&t, &w).unwrap();
        assert_eq!(flows.iter().map(|f| f.packets as u64).sum::<u64>(), 5_000);
        let keys: HashSet<_> = flows.iter().map(|f| f.key).collect();
        assert_eq!(keys.len(), flows.len());
        assert!(flows.iter().all(|f| f.src != f.dst));
        assert!(flows.windows(2).all(|p| p[0].start_ns <= p[1].start_ns));
    }

    #[test]
    fn packets_are_the_builders_frames() {
        let t = fat_tree(4, DEFAULT_RATE_BPS, DEFAULT_DELAY_NS).unwrap();
        for proto in [Proto::Tcp, Proto::Udp] {
            let w = Workload { proto, sizes: SizeDist::Fixed(3000), ..Workload::default() };
            let f = &generate(&t, &w).unwrap()[0];
            let mut hdr = Vec::new();
            let tail = f.packet(2, &mut hdr);
            assert_eq!(tail, 3000 - 2 * 1460);
            let mut full = hdr.clone();
            full.resize(hdr.len() + tail as usize, 0);
            let mut spec_ip = Ipv4Repr::new(f.key.src_ip(), f.key.dst_ip(), f.key.proto(), 0);
            spec_ip.ident = 2;
            let l4 = match proto {
                Proto::Tcp => {
                    let mut h = TcpRepr::new(f.key.src_port(), f.key.dst_port());
                    h.flags = tcp::flags::ACK | tcp::flags::PSH;
                    h.window = 0xFFFF;
                    h.seq = 2 * 1460;
                    L4::Tcp(h)
                }
                Proto::Udp => L4::Udp(UdpRepr::new(f.key.src_port(), f.key.dst_port())),
            };
            let mut spec =
                FrameSpec::new(t.mac(t.edge_of(f.src)), t.mac(f.src), L3::Ipv4 { header: spec_ip, l4 });
            spec.payload = vec![0; 80];
            spec.min_len = MIN_FRAME_LEN;
            assert_eq!(full, spec.build().unwrap(), "{proto:?}");
        }
    }

    #[test]
    fn bad_workloads_are_named() {
        let t = fat_tree(4, DEFAULT_RATE_BPS, DEFAULT_DELAY_NS).unwrap();
        let e = generate(&t, &Workload { load: 0.0, ..Workload::default() }).unwrap_err();
        assert!(e.contains("load"), "{e}");
        let e = generate(&t, &Workload { max_packets: None, ..Workload::default() }).unwrap_err();
        assert!(e.contains("duration"), "{e}");
        assert!("zipf:x:1MB".parse::<SizeDist>().unwrap_err().contains("exponent"));
    }
}
