//! Frame builders: the structured random generator (every layer of the software model,
//! with random defects) and the hand-made edge frames.
//!
//! Every frame is built by the contract's frame builder; what a defect needs beyond it
//! (a wrong version, IHL, length or data offset, a checksum of 0) is patched in through
//! the header views.
use super::{feat, Frame, Rng};
use smartnic::contract::frame::{ipv6_ext, ETHERTYPE_ARP, ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_VLAN};
use smartnic::contract::key::{PROTO_TCP, PROTO_UDP};
use smartnic::contract::shim::{Hop, IntShim, ShimHeader, ETHERTYPE_SHIM};
use smartnic::contract::wire::builder::{FrameSpec, Lengths, Tag, L3, L4};
use smartnic::contract::wire::ipv4::{self, Ipv4Packet, Ipv4Repr};
use smartnic::contract::wire::ipv6::{self, Ipv6Packet, Ipv6Repr};
use smartnic::contract::wire::ipv6_ext::{Ipv6ExtHeader, Ipv6ExtRepr};
use smartnic::contract::wire::tcp::{TcpPacket, TcpRepr};
use smartnic::contract::wire::udp::UdpRepr;
use smartnic::contract::wire::vlan::TAG_ETHERTYPES;

const EXT: [u8; 5] = [0, 43, 60, 44, 51];

/// TCP (random bytes, data offset usually 5..=15 with or without its options, any
/// reserved bits) or UDP (random bytes, so any length field): the header, the data offset
/// to patch in (TCP), and a random payload.
fn l4(r: &mut Rng, proto: u8, ft: &mut u32) -> (L4, Option<(u8, u16)>, Vec<u8>) {
    *ft |= match proto {
        PROTO_TCP => feat::TCP,
        PROTO_UDP => feat::UDP,
        _ => 0,
    };
    let (hdr, patch) = match proto {
        PROTO_TCP => {
            let b = r.bytes(12);
            let off = if r.chance(0.9) { 5 + r.below(11) as u8 } else { r.below(16) as u8 };
            let low = r.below(16) as u16;
            let t = r.bytes(7);
            let options = if off > 5 && r.chance(0.5) { r.bytes((off as usize - 5) * 4) } else { Vec::new() };
            let be = |i: usize, b: &[u8]| u16::from_be_bytes([b[i], b[i + 1]]);
            let be32 = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
            let flags = low << 8 | t[0] as u16;
            let tcp = TcpRepr {
                src_port: be(0, &b),
                dst_port: be(2, &b),
                seq: be32(4),
                ack: be32(8),
                flags,
                window: be(1, &t),
                checksum: be(3, &t),
                urgent: be(5, &t),
                options,
            };
            (L4::Tcp(tcp), Some((off, flags)))
        }
        PROTO_UDP => {
            let b = r.bytes(8);
            let be = |i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
            (L4::Udp(UdpRepr { src_port: be(0), dst_port: be(2), length: be(4), checksum: be(6) }), None)
        }
        _ => (L4::Raw(Vec::new()), None),
    };
    let max = if r.chance(0.5) { 8 } else { 200 };
    let pay = r.below(max) as usize;
    (hdr, patch, r.bytes(pay))
}

fn pick_proto(r: &mut Rng) -> u8 {
    match r.below(10) {
        0..=3 => PROTO_TCP,
        4..=7 => PROTO_UDP,
        8 => [1, 47, 58, 132][r.below(4) as usize],
        _ => r.next() as u8,
    }
}

/// What a random L3 packet needs after the builder: bytes it cannot state on its own.
#[derive(Default)]
struct Patches {
    /// IPv4 version/IHL byte and total length; IPv6 first byte.
    ver_byte: u8,
    total_len: u16,
    /// Offset of each IPv6 fragment header from the IPv6 header, and its reserved byte.
    frag_reserved: Vec<(usize, u8)>,
    /// TCP data offset and low 12 bits, and the transport header's offset from L3.
    tcp: Option<(u8, u16)>,
    l4_at: usize,
}

/// A random IPv4 packet: any version, IHL 0..15 with random options, random total length
/// and fragment field; the checksum is left 0.
fn ipv4(r: &mut Rng, ft: &mut u32) -> (L3, Vec<u8>, Patches) {
    let ihl =
        if r.chance(0.9) { 5 + if r.chance(0.5) { 0 } else { r.below(11) as u8 } } else { r.below(16) as u8 };
    let proto = pick_proto(r);
    let (l4, tcp, payload) = l4(r, proto, ft);
    let hlen = ihl as usize * 4;
    if ihl > 5 {
        *ft |= feat::V4_OPTIONS;
    }
    let ver = if r.chance(0.95) { 0x40 } else { (r.below(16) as u8) << 4 };
    let total = (hlen + l4.header_len() + payload.len()) as u16;
    let total = match r.below(10) {
        0 => r.next() as u16,
        1 => total.saturating_sub(r.below(30) as u16),
        _ => total,
    };
    let ident = r.next() as u16;
    let frag: u16 = match r.below(10) {
        0 => r.next() as u16,
        1 if r.chance(0.5) => 0x0001, // offset 1 (8 bytes)
        1 => 0x2000,
        _ => 0x4000,
    };
    let a = r.bytes(8);
    let options = r.bytes(hlen.saturating_sub(20));
    let mut header = Ipv4Repr::new([a[0], a[1], a[2], a[3]], [a[4], a[5], a[6], a[7]], proto, 0);
    header.ident = ident;
    header.flags = (frag >> 13) as u8;
    header.frag_offset = frag & ipv4::field::FRAG_OFFSET_MASK;
    header.options = options;
    header.total_len = header.header_len() as u16;
    let patches = Patches {
        ver_byte: ver | ihl,
        total_len: total,
        tcp,
        l4_at: header.header_len(),
        ..Default::default()
    };
    (L3::Ipv4 { header, l4 }, payload, patches)
}

/// A random IPv6 packet: 0..10 extension headers of every skipped kind (now and then a long
/// one), any version, a payload length that is right, short, random or 0.
fn ipv6(r: &mut Rng, ft: &mut u32) -> (L3, Vec<u8>, Patches) {
    let proto = pick_proto(r);
    let n_ext = if r.chance(0.5) { 0 } else { r.below(11) as usize };
    let mut types: Vec<u8> = (0..n_ext).map(|_| EXT[r.below(5) as usize]).collect();
    types.push(proto);
    let mut ext = Vec::new();
    let mut patches = Patches::default();
    let mut at = ipv6::field::HEADER_LEN;
    for i in 0..n_ext {
        let (t, next) = (types[i], types[i + 1]);
        let len = match t {
            ipv6_ext::FRAGMENT => 8,
            ipv6_ext::AUTH => (r.below(4) as usize + 2) * 4,
            // Now and then a long option header (up to 2048 bytes).
            _ if r.chance(0.05) => (r.below(256) as usize + 1) * 8,
            _ => (r.below(3) as usize + 1) * 8,
        };
        *ft |= match t {
            ipv6_ext::FRAGMENT => feat::V6_FRAG,
            ipv6_ext::AUTH => feat::V6_AH,
            _ if len > 24 => feat::V6_EXT_LONG,
            _ => 0,
        };
        let h = r.bytes(len);
        let mut data = h[2..].to_vec();
        if t == ipv6_ext::FRAGMENT {
            // M flag only, offset 1 (bit 3 of the field), both, or anything.
            let off: u16 = if r.chance(0.8) { [0u16, 1, 8, 9][r.below(4) as usize] } else { r.next() as u16 };
            data[..2].copy_from_slice(&off.to_be_bytes());
            patches.frag_reserved.push((at, h[1]));
        }
        ext.push(Ipv6ExtRepr { kind: t, next_header: next, data });
        at += len;
    }
    let (l4, tcp, payload) = l4(r, proto, ft);
    let chain = at - ipv6::field::HEADER_LEN + l4.header_len() + payload.len();
    if n_ext > 0 {
        *ft |= feat::V6_EXT;
    }
    let ver = if r.chance(0.95) { 0x60 } else { (r.below(16) as u8) << 4 };
    let plen = match r.below(10) {
        0 => 0,
        1 => r.next() as u16,
        2 => (chain as u16).saturating_sub(r.below(20) as u16),
        _ => chain as u16,
    };
    let a = r.bytes(32);
    let src: [u8; 16] = a[..16].try_into().unwrap();
    let dst: [u8; 16] = a[16..].try_into().unwrap();
    let header = Ipv6Repr::new(src, dst, types[0], plen);
    patches.ver_byte = ver;
    patches.tcp = tcp;
    patches.l4_at = at;
    (L3::Ipv6 { header, ext, l4 }, payload, patches)
}

/// Writes into the built frame what the builder cannot state (see [`Patches`]); `l3` is
/// the L3 packet's offset.
fn apply(f: &mut [u8], l3: usize, v6: bool, p: &Patches) {
    if v6 {
        Ipv6Packet::new_unchecked(&mut f[l3..]).set_ver_tc_byte(p.ver_byte);
        for &(at, b) in &p.frag_reserved {
            let mut h = Ipv6ExtHeader::new_checked(&mut f[l3 + at..], ipv6_ext::FRAGMENT).unwrap();
            h.set_len_byte(b);
        }
    } else {
        let mut ip = Ipv4Packet::new_unchecked(&mut f[l3..]);
        ip.set_ver_ihl(p.ver_byte);
        ip.set_total_len(p.total_len);
        ip.set_checksum(0);
    }
    if let Some((off, flags)) = p.tcp {
        TcpPacket::new_unchecked(&mut f[l3 + p.l4_at..]).set_offset_flags(off, flags);
    }
}

/// A random frame through every layer the parser knows, with random defects.
pub fn structured(r: &mut Rng) -> Frame {
    let mut ft = 0;
    let macs = r.bytes(12);
    let ntags = match r.below(20) {
        0..=9 => 0,
        10..=14 => 1,
        15..=18 => 2,
        _ => 3,
    };
    let tags: Vec<Tag> =
        (0..ntags).map(|_| Tag { tpid: TAG_ETHERTYPES[r.below(3) as usize], tci: r.next() as u16 }).collect();
    let l3: u16 = match r.below(20) {
        0..=8 => ETHERTYPE_IPV4,
        9..=17 => ETHERTYPE_IPV6,
        18 => ETHERTYPE_ARP,
        _ => r.next() as u16,
    };
    ft |= [0, feat::VLAN1, feat::VLAN2, 0][ntags];
    // The shim's hops, a next type that disagrees with what follows, an unknown kind.
    let mut shim = None;
    let (mut next_type, mut bad_kind) = (None, None);
    if r.chance(0.4) {
        ft |= feat::SHIM;
        let n = if r.chance(0.9) { r.below(17) as usize } else { 17 + r.below(4) as usize };
        next_type = match r.below(20) {
            0 => Some(ETHERTYPE_SHIM),
            1 => Some(ETHERTYPE_VLAN),
            _ => None,
        };
        let hops: Vec<Hop> =
            (0..n).map(|_| Hop { switch_id: r.next() as u16, latency_ns: r.next() as u32 }).collect();
        shim = Some(hops);
        if r.chance(0.05) {
            bad_kind = Some(r.next() as u8);
        }
    }
    let (l3, payload, patches) = match l3 {
        ETHERTYPE_IPV4 => ipv4(r, &mut ft),
        ETHERTYPE_IPV6 => ipv6(r, &mut ft),
        ethertype => {
            let n = 28 + r.below(40) as usize;
            (L3::Other { ethertype, body: r.bytes(n) }, Vec::new(), Patches::default())
        }
    };
    let v6 = matches!(l3, L3::Ipv6 { .. });
    let ip = !matches!(l3, L3::Other { .. });
    let spec = FrameSpec {
        tags,
        shim,
        payload,
        lengths: Lengths::Stated,
        ..FrameSpec::new(macs[..6].try_into().unwrap(), macs[6..].try_into().unwrap(), l3)
    };
    let mut f = spec.build().unwrap_or_else(|e| panic!("structured frame: {e}"));
    let l3_at = spec.l2_len();
    if let Some(at) = spec.shim.as_ref().map(|h| l3_at - IntShim::encoded_len(h.len())) {
        let mut s = ShimHeader::new_unchecked(&mut f[at..]);
        if let Some(t) = next_type {
            s.set_next_type(t);
        }
        if let Some(k) = bad_kind {
            s.set_kind(k);
        }
    }
    if ip {
        apply(&mut f, l3_at, v6, &patches);
    }
    if f.len() < 60 && r.chance(0.5) {
        f.resize(60, 0);
    }
    if r.chance(0.25) {
        let n = 1 + r.below(f.len() as u64) as usize;
        f.truncate(n);
    }
    if r.chance(0.1) {
        let i = r.below(f.len() as u64) as usize;
        f[i] = r.next() as u8;
    }
    let mut fr = Frame::new(f);
    fr.feat = ft;
    if r.chance(0.02) {
        fr.tuser = true;
    }
    if r.chance(0.02) {
        let b = r.below(fr.beats() as u64) as usize;
        let k = if b + 1 == fr.beats() { [0x00, 0x05, 0xFE, 0x80][r.below(4) as usize] } else { 0x7F };
        fr.keep = Some((b, k));
    }
    fr
}

const DST: [u8; 6] = [0x02, 0, 0, 0, 0, 1];
const SRC: [u8; 6] = [0x02, 0, 0, 0, 0, 2];

/// A hand-made frame: `tags` 802.1Q tags (VLAN 7), an INT stack of `hops` hops (switch
/// i + 1, latency 1000 * (i + 1) ns) if given, then `l3`, with the lengths as stated and the
/// IPv4 checksum 0 (the parser reads neither).
pub fn frame(tags: usize, hops: Option<usize>, l3: L3) -> Vec<u8> {
    let v4 = matches!(l3, L3::Ipv4 { .. });
    let hops = hops.map(|n| {
        (0..n as u32).map(|i| Hop { switch_id: i as u16 + 1, latency_ns: 1000 * (i + 1) }).collect()
    });
    let spec = FrameSpec {
        tags: vec![Tag { tpid: ETHERTYPE_VLAN, tci: 7 }; tags],
        shim: hops,
        lengths: Lengths::Stated,
        ..FrameSpec::new(DST, SRC, l3)
    };
    let mut f = spec.build().unwrap_or_else(|e| panic!("{e}"));
    if v4 {
        Ipv4Packet::new_unchecked(&mut f[spec.l2_len()..]).set_checksum(0);
    }
    f
}

/// IPv4 10.0.0.1 -> 10.0.0.2, TTL 64, no flags, `opt_words` zero option words, total
/// length stating `l4len` bytes after the header.
pub fn ipv4_l3(proto: u8, opt_words: usize, l4len: usize, l4: L4) -> L3 {
    let mut header = Ipv4Repr::new([10, 0, 0, 1], [10, 0, 0, 2], proto, 0);
    header.flags = 0;
    header.options = vec![0; 4 * opt_words];
    header.total_len = (header.header_len() + l4len) as u16;
    L3::Ipv4 { header, l4 }
}

/// IPv6 0x20.. -> 0x30.., hop limit 64, payload length `plen`.
pub fn ipv6_l3(next: u8, plen: u16, ext: Vec<Ipv6ExtRepr>, l4: L4) -> L3 {
    let src: [u8; 16] = core::array::from_fn(|i| 0x20 + i as u8);
    let dst: [u8; 16] = core::array::from_fn(|i| 0x30 + i as u8);
    L3::Ipv6 { header: Ipv6Repr::new(src, dst, next, plen), ext, l4 }
}

/// UDP 5000 -> 53, length 8.
pub fn udp() -> L4 {
    L4::Udp(UdpRepr::new(5000, 53))
}

/// TCP 1234 -> 80, data offset 5, no flags.
pub fn tcp() -> L4 {
    L4::Tcp(TcpRepr::new(1234, 80))
}

/// Ethernet with `tags` tags + IPv4 (total length stating `l4len` bytes after the header)
/// + UDP.
pub fn v4_udp(tags: usize, l4len: usize) -> Vec<u8> {
    frame(tags, None, ipv4_l3(PROTO_UDP, 0, l4len, udp()))
}

/// Ethernet + `ethertype` and nothing after it.
pub fn bare(ethertype: u16) -> Vec<u8> {
    frame(0, None, L3::Other { ethertype, body: Vec::new() })
}

/// The hand-made edge frames: (name, frame). Their verdicts come from the software model
/// (tuser and holes: malformed); the test also checks the class named here.
pub fn edges() -> Vec<(&'static str, Frame, u8)> {
    use smartnic_hdl::parser::{CLASS_IP as IP, CLASS_MALFORMED as MAL, CLASS_NON_IP as NON};
    let mut v: Vec<(&'static str, Frame, u8)> = Vec::new();
    let v4udp = v4_udp(0, 8);
    v.push(("ipv4 udp", Frame::new(v4udp.clone()), IP));
    v.push(("runt 14 bytes (ARP EtherType)", Frame::new(bare(ETHERTYPE_ARP)), NON));
    v.push(("runt 13 bytes", Frame::new(bare(ETHERTYPE_ARP)[..13].to_vec()), MAL));
    v.push(("1 byte", Frame::new(vec![0x55]), MAL));
    v.push(("14-byte IPv4 EtherType", Frame::new(bare(ETHERTYPE_IPV4)), MAL));
    v.push(("truncated IPv4 (19 of 20)", Frame::new(v4udp[..14 + 19].to_vec()), MAL));
    v.push(("truncated UDP (7 of 8)", Frame::new(v4udp[..v4udp.len() - 1].to_vec()), MAL));
    let mut ihl4 = v4udp.clone();
    Ipv4Packet::new_unchecked(&mut ihl4[14..]).set_ver_ihl(0x44);
    v.push(("IHL 4", Frame::new(ihl4), MAL));
    let mut opts = frame(0, None, ipv4_l3(PROTO_TCP, 10, 20, tcp()));
    v.push(("IPv4 IHL 15 + TCP", Frame::new(opts.clone()), IP));
    opts.truncate(opts.len() - 1);
    v.push(("truncated TCP (19 of 20)", Frame::new(opts), MAL));
    let mut off4 = frame(0, None, ipv4_l3(PROTO_TCP, 0, 20, tcp()));
    TcpPacket::new_unchecked(&mut off4[14 + 20..]).set_offset_flags(4, 0);
    v.push(("TCP data offset 4", Frame::new(off4), MAL));
    let v6 = frame(0, None, ipv6_l3(PROTO_TCP, 20, Vec::new(), tcp()));
    v.push(("ipv6 tcp", Frame::new(v6.clone()), IP));
    v.push(("truncated IPv6 (39 of 40)", Frame::new(v6[..14 + 39].to_vec()), MAL));
    let ext = vec![
        Ipv6ExtRepr::options(ipv6_ext::HOP_BY_HOP, ipv6_ext::FRAGMENT, 1),
        Ipv6ExtRepr::fragment(PROTO_UDP, 0, false, 1),
    ];
    let v6x = frame(2, None, ipv6_l3(ipv6_ext::HOP_BY_HOP, 16 + 8, ext, udp()));
    v.push(("2 VLANs + IPv6 hop-by-hop + fragment + UDP", Frame::new(v6x), IP));
    let s16 = frame(1, Some(16), ipv4_l3(PROTO_UDP, 0, 8, udp()));
    v.push(("VLAN + shim 16 hops", Frame::new(s16), IP));
    let s17 = frame(0, Some(17), ipv4_l3(PROTO_UDP, 0, 8, udp()));
    v.push(("shim with 17 hops", Frame::new(s17), MAL));
    let s0 = frame(2, Some(0), ipv6_l3(PROTO_UDP, 8, Vec::new(), udp()));
    v.push(("2 VLANs + shim 0 hops + IPv6", Frame::new(s0), IP));
    v.push(("3 VLAN tags", Frame::new(frame(3, None, ipv4_l3(PROTO_UDP, 0, 8, udp()))), MAL));
    let mut tu = Frame::new(v4udp.clone());
    tu.tuser = true;
    v.push(("tuser on the last beat", tu, MAL));
    let mut hole = Frame::new(v4udp.clone());
    hole.keep = Some((1, 0xF7));
    v.push(("tkeep hole mid-frame", hole, MAL));
    let mut hole_last = Frame::new(v4udp.clone());
    hole_last.keep = Some((hole_last.beats() - 1, 0x05));
    v.push(("tkeep hole in the last beat", hole_last, MAL));
    let mut zero_last = Frame::new(v4udp);
    zero_last.keep = Some((zero_last.beats() - 1, 0x00));
    v.push(("tkeep 0 on the last beat", zero_last, MAL));
    let arp = L3::Other { ethertype: ETHERTYPE_ARP, body: Vec::new() };
    v.push(("shim-only 20 bytes (0 hops, next ARP)", Frame::new(frame(0, Some(0), arp)), NON));
    let nested = L3::Other { ethertype: ETHERTYPE_SHIM, body: vec![0; 40] };
    v.push(("nested shim", Frame::new(frame(0, Some(0), nested)), MAL));
    v
}
