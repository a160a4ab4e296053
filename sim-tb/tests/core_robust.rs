//! The whole core (`SimNic`, block `core`) on the inputs where the NIC and its software twin
//! once disagreed, each checked against an expectation computed here independently of both
//! models, and against the software sketches epoch by epoch (harness: `core_check`):
//!
//! - frames around the old 16-bit length limit (65,528..65,549 bytes, IPv4 total length
//!   65,535) and a 185,000-byte IPv6 jumbogram: IP on both sides, BYTES exact;
//! - IPv6 non-first fragments whose data would read as an extension header or a transport
//!   header: IP with the fragment header's next header as protocol and ports 0;
//! - a flow whose timestamps go backwards: the SuMax max-interval cell ignores the negative
//!   gaps (contract `interval::gap`) instead of recording almost the whole time range.
mod core_check;

use core_check::{read_stats, CoreRun, Plan};
use smartnic_contract::frame::ipv6_ext;
use smartnic_contract::geometry::{InsertMode, SuMaxGeometry};
use smartnic_contract::key::PROTO_UDP;
use smartnic_contract::wire::builder::{FrameSpec, L3, L4};
use smartnic_contract::wire::ipv6::Ipv6Repr;
use smartnic_contract::wire::ipv6_ext::Ipv6ExtRepr;
use smartnic_contract::wire::udp::UdpRepr;
use smartnic_contract::FlowKey;
use smartnic_sim_tb::frames::udp4_frame;
use smartnic_sim_tb::simnic::SimFrame;

const SRC6: [u8; 16] = [0x20; 16];
const DST6: [u8; 16] = [0x30; 16];

/// Ethernet + IPv6 from [`SRC6`] to [`DST6`]: extension headers `ext` (the first of kind
/// `next`), transport header `l4`, then `payload`.
fn ipv6_spec(next: u8, ext: Vec<Ipv6ExtRepr>, l4: L4, payload: &[u8]) -> FrameSpec {
    let l3 = L3::Ipv6 { header: Ipv6Repr::new(SRC6, DST6, next, 0), ext, l4 };
    FrameSpec {
        payload: payload.to_vec(),
        ..FrameSpec::new([0x02, 0, 0, 0, 0, 1], [0x02, 0, 0, 0, 0, 2], l3)
    }
}

/// An IPv6 fragment (offset in 8-byte units, the fragment's next header `next`) whose data
/// reads as a destination-options header running past the packet, then a UDP header.
fn ipv6_fragment(offset: u16, next: u8) -> Vec<u8> {
    let data = [0xAA, 0xFF, 0x13, 0x88, 0x00, 0x35, 0x00, 0x10, 1, 2, 3, 4, 5, 6, 7, 8];
    let frag = Ipv6ExtRepr::fragment(next, offset, true, 0xC0FF_EE01);
    ipv6_spec(ipv6_ext::FRAGMENT, vec![frag], L4::Raw(Vec::new()), &data).build().unwrap()
}

#[test]
fn long_frames_later_ipv6_fragments_and_backwards_time() {
    let udp = |i: u8| FlowKey::from_v4([10, 1, 0, i], [10, 2, 0, i], 4000 + i as u16, 53, PROTO_UDP);
    let mut frames = Vec::new();
    let mut ts = 1_000_000u64;
    let mut next_ts = || {
        ts += 1_000;
        ts
    };
    // Long frames, each between two short ones.
    let long_key = udp(1);
    let lens = [65_528, 65_529, 65_535, 65_536, 65_537, 65_549];
    for len in lens {
        frames.push(SimFrame::new(next_ts(), udp4_frame(&udp(9), None, None, 64)));
        frames.push(SimFrame::new(next_ts(), udp4_frame(&long_key, None, None, len)));
    }
    let udp6 = L4::Udp(UdpRepr::new(4000, 53));
    let jumbo = FrameSpec { len: Some(185_000), fill: 0x3C, ..ipv6_spec(PROTO_UDP, Vec::new(), udp6, &[]) };
    let jumbo = jumbo.build().unwrap();
    let jumbo_key = FlowKey::from_v6(SRC6, DST6, 4000, 53, PROTO_UDP);
    frames.push(SimFrame::new(next_ts(), jumbo.clone()));
    // Later IPv6 fragments (offset 185), three next headers; a first fragment parses on.
    let later = [ipv6_ext::DEST_OPTS, PROTO_UDP, 59];
    for next in later {
        for _ in 0..3 {
            frames.push(SimFrame::new(next_ts(), ipv6_fragment(185, next)));
        }
    }
    frames.push(SimFrame::new(next_ts(), ipv6_fragment(0, PROTO_UDP)));
    // A flow whose time goes backwards twice; other traffic in between.
    let back_key = udp(2);
    let back_ts = [5_000_000u64, 5_100_000, 5_050_000, 5_200_000, 5_199_000, 5_260_000];
    for &t in &back_ts {
        frames.push(SimFrame::new(t, udp4_frame(&back_key, None, None, 64)));
        frames.push(SimFrame::new(next_ts(), udp4_frame(&udp(9), None, None, 64)));
    }
    let bytes: u64 = frames.iter().map(|f| f.data.len() as u64).sum();
    let n = frames.len() as u64;

    let mut run = CoreRun::new(InsertMode::Cm);
    let plan = Plan { every: 1_000, swap_burst: 2_000, readout_gap: 600, snapshots: None };
    run.feed(&mut frames.into_iter(), plan);
    let s = run.finish("robust", plan);
    // Every frame is IP: nothing malformed, BYTES exact.
    let [frames_c, sketched, bytes_c, non_ip, malformed] = read_stats(&mut run.nic, &run.dev);
    assert_eq!((frames_c, sketched, non_ip, malformed), (n, n, 0, 0), "frames, sketched, non-IP, malformed");
    assert_eq!(bytes_c, bytes, "BYTES = the sum of the frame lengths");
    assert_eq!(s.epochs, 1);
    let c = &run.checks[0];
    assert_eq!(c.tower.query(&long_key), lens.len() as u64, "long frames sketched");
    assert_eq!(c.tower.query(&jumbo_key), 1, "jumbogram sketched");
    for next in later {
        let key = FlowKey::from_v6(SRC6, DST6, 0, 0, next);
        assert_eq!(c.tower.query(&key), 3, "later fragments with next header {next}: ports 0");
    }
    let first = FlowKey::from_v6(SRC6, DST6, 0xAAFF, 0x1388, PROTO_UDP);
    assert_eq!(c.tower.query(&first), 1, "first fragment: the UDP ports");
    // The max interval: the largest forward step of the flow's time values.
    let shift = SuMaxGeometry::nic_default().time_shift;
    let t: Vec<u64> = back_ts.iter().map(|x| x >> shift).collect();
    let want = t.windows(2).map(|w| w[1].saturating_sub(w[0])).max().unwrap();
    let got = c.sumax.query(&back_key);
    assert_eq!((got.size, got.max_interval), (back_ts.len() as u64, want), "size and max interval");
    assert_eq!(got.last_arrival, *t.last().unwrap());
}
