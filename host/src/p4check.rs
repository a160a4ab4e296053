//! `scripts/p4-check`'s Rust half: splitting a switch's lab log into bmv2's per-port input
//! files, and comparing what bmv2's `simple_switch` sent with what the twin sent.
//!
//! The lab logs each switch's traffic as two pcapng files whose interface is the port
//! (`<switch>.in.pcapng`: every frame received, by ingress port; `<switch>.out.pcapng`:
//! the twin's output, by egress port). bmv2 in file mode reads `p<port>_in.pcap` and writes
//! `p<port>_out.pcap`. Frames are compared byte for byte per egress port, as multisets (bmv2
//! may interleave ports differently), except the one field that comes from the switch's
//! clock: the latency of the hop record this switch appended. That field is checked for
//! range instead: v1model timestamps count microseconds, so it must be a multiple of 1000 ns
//! and at most [`MAX_LATENCY_NS`].

use crate::trace::capture::CaptureReader;
use crate::trace::pcap::PcapWriter;
use anyhow::{Context, Result};
use serde::Serialize;
use smartnic_contract::shim::{field as shim, ETHERTYPE_SHIM};
use smartnic_contract::wire::shim::{Hop, ShimHeader};
use smartnic_contract::wire::vlan::walk_l2;
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

/// The largest hop latency bmv2 may report: 4 s. bmv2 in file mode feeds its input as fast as
/// it can, so its own queues hold packets for up to a second on a busy switch; the program's
/// bit<32> field wraps past 4.29 s, and a wrapped value would not be a whole microsecond.
pub const MAX_LATENCY_NS: u32 = 4_000_000_000;

/// bmv2's name for a port's input file in `dir`.
pub fn port_file(dir: &Path, port: u32, dir_kind: &str) -> std::path::PathBuf {
    dir.join(format!("p{port}_{dir_kind}.pcap"))
}

/// Frames (timestamp in ns, bytes) by port.
pub type PortFrames = BTreeMap<u32, Vec<(u64, Vec<u8>)>>;

/// Frames of a capture grouped by interface (port), in file order.
pub fn frames_by_port(path: &Path) -> Result<PortFrames> {
    let mut r = CaptureReader::open(path).with_context(|| format!("open {}", path.display()))?;
    let mut out = PortFrames::new();
    while let Some(f) = r.next_frame().with_context(|| format!("read {}", path.display()))? {
        anyhow::ensure!(
            f.data.len() == f.orig_len as usize,
            "{}: frame at byte {} is cut short",
            path.display(),
            f.offset
        );
        out.entry(f.interface).or_default().push((f.ts_ns, f.data.to_vec()));
    }
    Ok(out)
}

/// Writes `p<port>_in.pcap` (microsecond pcap, as libpcap reads everywhere) for every port of
/// a switch's input log, and an empty one for every port only its output log uses (bmv2
/// opens an input file for each port it is given); returns the ports and their frame counts.
pub fn split(input: &Path, output: &Path, dir: &Path) -> Result<BTreeMap<u32, usize>> {
    std::fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))?;
    let mut counts = BTreeMap::new();
    let mut by_port = frames_by_port(input)?;
    for port in frames_by_port(output)?.into_keys() {
        by_port.entry(port).or_default();
    }
    for (port, frames) in by_port {
        let path = port_file(dir, port, "in");
        let file = File::create(&path).with_context(|| format!("create {}", path.display()))?;
        let mut w =
            PcapWriter::with_format(BufWriter::new(file), nom::number::Endianness::Little, false, 65535, 1)?;
        for (ts, data) in &frames {
            w.write(*ts, data.len() as u32, data)?;
        }
        w.into_inner()?;
        counts.insert(port, frames.len());
    }
    Ok(counts)
}

/// What the comparison of one switch found.
#[derive(Debug, Default, Serialize, PartialEq, Eq)]
pub struct Report {
    pub switch_id: u16,
    /// Frames the twin sent.
    pub expected: usize,
    /// Frames bmv2 sent.
    pub actual: usize,
    /// Frames equal on the same port (after masking this switch's latency).
    pub matched: usize,
    /// Twin frames bmv2 did not send.
    pub missing: usize,
    /// bmv2 frames the twin did not send.
    pub unexpected: usize,
    /// bmv2 frames whose latency is not a whole number of microseconds up to [`MAX_LATENCY_NS`].
    pub latency_out_of_range: usize,
    /// The largest latency bmv2 reported.
    pub max_latency_ns: u32,
    /// Twin frames by INT hop count after this switch (a path's fifth switch sends 5).
    pub by_hops: BTreeMap<u16, usize>,
}

impl Report {
    /// Everything the twin sent was sent by bmv2 and nothing else, every latency in range.
    pub fn ok(&self) -> bool {
        self.missing == 0
            && self.unexpected == 0
            && self.latency_out_of_range == 0
            && self.expected == self.actual
    }
}

/// This switch's hop record: the last one, if `switch_id` wrote it. Its offset in the frame,
/// the record, and the hop count.
fn own_hop(frame: &[u8], switch_id: u16) -> Option<(usize, Hop, u16)> {
    let l2 = walk_l2(frame).ok().filter(|l2| l2.ethertype == ETHERTYPE_SHIM)?;
    let shim = ShimHeader::new_checked(&frame[l2.payload_at..]).ok()?;
    let n = shim.hop_count();
    let last = shim.hop(n.checked_sub(1)? as usize);
    let at = l2.payload_at + shim.header_len() - shim::HOP_LEN;
    (last.switch_id == switch_id).then_some((at, last, n))
}

/// The frame with this switch's latency zeroed, its latency, and its hop count.
fn masked(frame: &[u8], switch_id: u16) -> (Vec<u8>, Option<u32>, u16) {
    let mut f = frame.to_vec();
    match own_hop(frame, switch_id) {
        Some((at, hop, n)) => {
            f[at + shim::HOP_LATENCY.start..at + shim::HOP_LATENCY.end].fill(0);
            (f, Some(hop.latency_ns), n)
        }
        None => (f, None, 0),
    }
}

/// Compares the twin's frames with bmv2's, port by port.
pub fn compare(
    expected: &BTreeMap<u32, Vec<Vec<u8>>>,
    actual: &BTreeMap<u32, Vec<Vec<u8>>>,
    switch_id: u16,
) -> Report {
    let mut r = Report { switch_id, ..Report::default() };
    let ports: std::collections::BTreeSet<u32> = expected.keys().chain(actual.keys()).copied().collect();
    for port in ports {
        let mut want: HashMap<Vec<u8>, usize> = HashMap::new();
        for f in expected.get(&port).into_iter().flatten() {
            let (m, _, hops) = masked(f, switch_id);
            *r.by_hops.entry(hops).or_default() += 1;
            *want.entry(m).or_default() += 1;
            r.expected += 1;
        }
        for f in actual.get(&port).into_iter().flatten() {
            r.actual += 1;
            let (m, lat, _) = masked(f, switch_id);
            if let Some(l) = lat {
                r.max_latency_ns = r.max_latency_ns.max(l);
                if l % 1000 != 0 || l > MAX_LATENCY_NS {
                    r.latency_out_of_range += 1;
                }
            }
            match want.get_mut(&m) {
                Some(c) if *c > 0 => {
                    *c -= 1;
                    r.matched += 1;
                }
                _ => r.unexpected += 1,
            }
        }
        r.missing += want.values().sum::<usize>();
    }
    r
}

/// Reads bmv2's `p<port>_out.pcap` files for `ports` (a missing file, or the empty file
/// bmv2 leaves for a port that sent nothing, is no frames).
pub fn read_outputs(dir: &Path, ports: impl IntoIterator<Item = u32>) -> Result<BTreeMap<u32, Vec<Vec<u8>>>> {
    let mut out = BTreeMap::new();
    for port in ports {
        let path = port_file(dir, port, "out");
        if std::fs::metadata(&path).map_or(true, |m| m.len() == 0) {
            continue;
        }
        let frames = frames_by_port(&path)?.into_values().flatten().map(|(_, d)| d).collect();
        out.insert(port, frames);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use smartnic_contract::shim::Hop;
    use smartnic_contract::wire::builder::{FrameSpec, L3, L4};
    use smartnic_contract::wire::ipv4::Ipv4Repr;
    use smartnic_contract::wire::udp::UdpRepr;

    fn frame(hops: &[(u16, u32)], payload: u8) -> Vec<u8> {
        let l3 = L3::Ipv4 {
            header: Ipv4Repr::new([10, 0, 0, 2], [10, 0, 1, 2], 17, 0),
            l4: L4::Udp(UdpRepr::new(1, 2)),
        };
        let mut s = FrameSpec::new([2; 6], [4; 6], l3);
        s.shim = Some(hops.iter().map(|&(switch_id, latency_ns)| Hop { switch_id, latency_ns }).collect());
        s.payload = vec![payload; 8];
        s.build().unwrap()
    }

    fn ports(frames: Vec<(u32, Vec<u8>)>) -> BTreeMap<u32, Vec<Vec<u8>>> {
        let mut m: BTreeMap<u32, Vec<Vec<u8>>> = BTreeMap::new();
        for (p, f) in frames {
            m.entry(p).or_default().push(f);
        }
        m
    }

    #[test]
    fn own_latency_is_masked_and_range_checked() {
        let twin = ports(vec![(1, frame(&[(3, 77), (9, 1234)], 0)), (2, frame(&[(9, 5)], 1))]);
        let bmv2 = ports(vec![(2, frame(&[(9, 3000)], 1)), (1, frame(&[(3, 77), (9, 2000)], 0))]);
        let r = compare(&twin, &bmv2, 9);
        assert!(r.ok(), "{r:?}");
        assert_eq!((r.matched, r.max_latency_ns), (2, 3000));
        assert_eq!(r.by_hops, BTreeMap::from([(1, 1), (2, 1)]));
    }

    #[test]
    fn differences_are_counted() {
        let twin = ports(vec![(1, frame(&[(9, 0)], 0)), (1, frame(&[(9, 0)], 1))]);
        // Another upstream latency (not this switch's field) differs; a wrong port; a
        // latency that is not a whole microsecond.
        let bmv2 = ports(vec![(2, frame(&[(9, 0)], 0)), (1, frame(&[(9, 1500)], 1))]);
        let r = compare(&twin, &bmv2, 9);
        assert_eq!((r.matched, r.missing, r.unexpected, r.latency_out_of_range), (1, 1, 1, 1));
        assert!(!r.ok());
        let upstream = compare(
            &ports(vec![(1, frame(&[(3, 1), (9, 0)], 0))]),
            &ports(vec![(1, frame(&[(3, 2), (9, 0)], 0))]),
            9,
        );
        assert_eq!(upstream.unexpected, 1, "only this switch's latency is masked");
    }
}
