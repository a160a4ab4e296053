//! Frame builders: the structured random generator (every layer of the software model,
//! with random defects) and the hand-made edge frames.
use super::{feat, Frame, Rng};
use smartnic::contract::shim::{Hop, IntShim};

const TAGS: [u16; 3] = [0x8100, 0x88A8, 0x9100];
const EXT: [u8; 5] = [0, 43, 60, 44, 51];

fn be16(v: &mut Vec<u8>, x: u16) {
    v.extend_from_slice(&x.to_be_bytes());
}

/// L4 header + payload for `proto`.
fn l4(r: &mut Rng, proto: u8, ft: &mut u32) -> Vec<u8> {
    *ft |= match proto {
        6 => feat::TCP,
        17 => feat::UDP,
        _ => 0,
    };
    let mut v = Vec::new();
    match proto {
        6 => {
            v.extend(r.bytes(12));
            let off = if r.chance(0.9) { 5 + r.below(11) as u8 } else { r.below(16) as u8 };
            v.push(off << 4 | r.below(16) as u8);
            v.extend(r.bytes(7));
            if off > 5 && r.chance(0.5) {
                v.extend(r.bytes((off as usize - 5) * 4));
            }
        }
        17 => v.extend(r.bytes(8)),
        _ => {}
    }
    let max = if r.chance(0.5) { 8 } else { 200 };
    let pay = r.below(max) as usize;
    v.extend(r.bytes(pay));
    v
}

fn pick_proto(r: &mut Rng) -> u8 {
    match r.below(10) {
        0..=3 => 6,
        4..=7 => 17,
        8 => [1, 47, 58, 132][r.below(4) as usize],
        _ => r.next() as u8,
    }
}

fn ipv4(r: &mut Rng, ft: &mut u32) -> Vec<u8> {
    let ihl =
        if r.chance(0.9) { 5 + if r.chance(0.5) { 0 } else { r.below(11) as u8 } } else { r.below(16) as u8 };
    let proto = pick_proto(r);
    let l4 = l4(r, proto, ft);
    let hlen = ihl as usize * 4;
    if ihl > 5 {
        *ft |= feat::V4_OPTIONS;
    }
    let mut h = vec![0u8; hlen.max(20)];
    h[0] = if r.chance(0.95) { 0x40 } else { (r.below(16) as u8) << 4 } | ihl;
    let total = (hlen + l4.len()) as u16;
    let total = match r.below(10) {
        0 => r.next() as u16,
        1 => total.saturating_sub(r.below(30) as u16),
        _ => total,
    };
    h[2..4].copy_from_slice(&total.to_be_bytes());
    h[4..6].copy_from_slice(&(r.next() as u16).to_be_bytes());
    let frag: u16 = match r.below(10) {
        0 => r.next() as u16,
        1 if r.chance(0.5) => 0x0001, // offset 1 (8 bytes)
        1 => 0x2000,
        _ => 0x4000,
    };
    h[6..8].copy_from_slice(&frag.to_be_bytes());
    h[8] = 64;
    h[9] = proto;
    let a = r.bytes(8);
    h[12..20].copy_from_slice(&a);
    for b in h.iter_mut().skip(20) {
        *b = r.next() as u8;
    }
    h.truncate(hlen.max(20).min(if ihl < 5 { 20 } else { hlen }));
    h.extend(l4);
    h
}

fn ipv6(r: &mut Rng, ft: &mut u32) -> Vec<u8> {
    let proto = pick_proto(r);
    let n_ext = if r.chance(0.5) { 0 } else { r.below(11) as usize };
    let mut chain = Vec::new();
    let mut types: Vec<u8> = (0..n_ext).map(|_| EXT[r.below(5) as usize]).collect();
    types.push(proto);
    for i in 0..n_ext {
        let t = types[i];
        let next = types[i + 1];
        let len = match t {
            44 => 8,
            51 => (r.below(4) as usize + 2) * 4,
            // Now and then a long option header (up to 2048 bytes).
            _ if r.chance(0.05) => (r.below(256) as usize + 1) * 8,
            _ => (r.below(3) as usize + 1) * 8,
        };
        *ft |= match t {
            44 => feat::V6_FRAG,
            51 => feat::V6_AH,
            _ if len > 24 => feat::V6_EXT_LONG,
            _ => 0,
        };
        let mut h = r.bytes(len);
        h[0] = next;
        match t {
            44 => {
                // M flag only, offset 1 (bit 3 of the field), both, or anything.
                let off: u16 =
                    if r.chance(0.8) { [0u16, 1, 8, 9][r.below(4) as usize] } else { r.next() as u16 };
                h[2..4].copy_from_slice(&off.to_be_bytes());
            }
            51 => h[1] = (len / 4 - 2) as u8,
            _ => h[1] = (len / 8 - 1) as u8,
        }
        chain.extend(h);
    }
    chain.extend(l4(r, proto, ft));
    if n_ext > 0 {
        *ft |= feat::V6_EXT;
    }
    let mut h = vec![0u8; 40];
    h[0] = if r.chance(0.95) { 0x60 } else { (r.below(16) as u8) << 4 };
    let plen = match r.below(10) {
        0 => 0,
        1 => r.next() as u16,
        2 => (chain.len() as u16).saturating_sub(r.below(20) as u16),
        _ => chain.len() as u16,
    };
    h[4..6].copy_from_slice(&plen.to_be_bytes());
    h[6] = if n_ext > 0 { types[0] } else { proto };
    h[7] = 64;
    let a = r.bytes(32);
    h[8..40].copy_from_slice(&a);
    h.extend(chain);
    h
}

/// A random frame through every layer the parser knows, with random defects.
pub fn structured(r: &mut Rng) -> Frame {
    let mut ft = 0;
    let mut f = r.bytes(12);
    let ntags = match r.below(20) {
        0..=9 => 0,
        10..=14 => 1,
        15..=18 => 2,
        _ => 3,
    };
    for _ in 0..ntags {
        be16(&mut f, TAGS[r.below(3) as usize]);
        be16(&mut f, r.next() as u16);
    }
    let l3: u16 = match r.below(20) {
        0..=8 => 0x0800,
        9..=17 => 0x86DD,
        18 => 0x0806,
        _ => r.next() as u16,
    };
    ft |= [0, feat::VLAN1, feat::VLAN2, 0][ntags];
    if r.chance(0.4) {
        ft |= feat::SHIM;
        be16(&mut f, 0x88B5);
        let n = if r.chance(0.9) { r.below(17) as usize } else { 17 + r.below(4) as usize };
        let shim = IntShim {
            next_type: match r.below(20) {
                0 => 0x88B5,
                1 => 0x8100,
                _ => l3,
            },
            hops: (0..n).map(|_| Hop { switch_id: r.next() as u16, latency_ns: r.next() as u32 }).collect(),
        };
        let at = f.len();
        shim.emit(&mut f);
        if r.chance(0.05) {
            f[at] = r.next() as u8; // unknown kind
        }
    } else {
        be16(&mut f, l3);
    }
    match l3 {
        0x0800 => f.extend(ipv4(r, &mut ft)),
        0x86DD => f.extend(ipv6(r, &mut ft)),
        _ => {
            let n = 28 + r.below(40) as usize;
            f.extend(r.bytes(n))
        }
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

/// Ethernet + optional tags, EtherType.
pub fn eth(tags: usize, et: u16) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2];
    for _ in 0..tags {
        f.extend_from_slice(&[0x81, 0x00, 0x00, 0x07]);
    }
    f.extend_from_slice(&et.to_be_bytes());
    f
}

/// A well-formed IPv4 header (IHL 5 + `opt_words`) for `proto` with `l4len` bytes after it.
pub fn ipv4_hdr(proto: u8, opt_words: usize, l4len: usize) -> Vec<u8> {
    let hlen = 20 + 4 * opt_words;
    let mut h = vec![0u8; hlen];
    h[0] = 0x40 | (hlen / 4) as u8;
    h[2..4].copy_from_slice(&((hlen + l4len) as u16).to_be_bytes());
    h[8] = 64;
    h[9] = proto;
    h[12..20].copy_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2]);
    h
}

pub fn udp() -> Vec<u8> {
    vec![0x13, 0x88, 0x00, 0x35, 0, 8, 0, 0]
}

pub fn tcp() -> Vec<u8> {
    let mut t = vec![0u8; 20];
    t[..4].copy_from_slice(&[0x04, 0xD2, 0x00, 0x50]);
    t[12] = 0x50;
    t
}

pub fn ipv6_hdr(next: u8, plen: usize) -> Vec<u8> {
    let mut h = vec![0u8; 40];
    h[0] = 0x60;
    h[4..6].copy_from_slice(&(plen as u16).to_be_bytes());
    h[6] = next;
    h[7] = 64;
    for (i, b) in h[8..40].iter_mut().enumerate() {
        *b = 0x20 + i as u8;
    }
    h
}

/// Shim with `n` hops of latency 1000 * (i + 1) (the count field says `n`, the stack
/// holds `n.min(real)` hops).
pub fn shim(next: u16, n: u16, real: usize) -> Vec<u8> {
    let mut v = vec![1, 0];
    v.extend_from_slice(&next.to_be_bytes());
    v.extend_from_slice(&n.to_be_bytes());
    for i in 0..real {
        v.extend_from_slice(&(i as u16 + 1).to_be_bytes());
        v.extend_from_slice(&(1000 * (i as u32 + 1)).to_be_bytes());
    }
    v
}

/// The hand-made edge frames: (name, frame). Their verdicts come from the software model
/// (tuser and holes: malformed); the test also checks the class named here.
pub fn edges() -> Vec<(&'static str, Frame, u8)> {
    use smartnic_hdl::parser::{CLASS_IP as IP, CLASS_MALFORMED as MAL, CLASS_NON_IP as NON};
    let mut v: Vec<(&'static str, Frame, u8)> = Vec::new();
    let cat = |parts: &[&[u8]]| parts.concat();
    let v4udp = cat(&[&eth(0, 0x0800), &ipv4_hdr(17, 0, 8), &udp()]);
    v.push(("ipv4 udp", Frame::new(v4udp.clone()), IP));
    v.push(("runt 14 bytes (ARP EtherType)", Frame::new(eth(0, 0x0806)), NON));
    v.push(("runt 13 bytes", Frame::new(eth(0, 0x0806)[..13].to_vec()), MAL));
    v.push(("1 byte", Frame::new(vec![0x55]), MAL));
    v.push(("14-byte IPv4 EtherType", Frame::new(eth(0, 0x0800)), MAL));
    v.push(("truncated IPv4 (19 of 20)", Frame::new(v4udp[..14 + 19].to_vec()), MAL));
    v.push(("truncated UDP (7 of 8)", Frame::new(v4udp[..v4udp.len() - 1].to_vec()), MAL));
    let mut ihl4 = v4udp.clone();
    ihl4[14] = 0x44;
    v.push(("IHL 4", Frame::new(ihl4), MAL));
    let mut opts = cat(&[&eth(0, 0x0800), &ipv4_hdr(6, 10, 20), &tcp()]);
    v.push(("IPv4 IHL 15 + TCP", Frame::new(opts.clone()), IP));
    opts.truncate(opts.len() - 1);
    v.push(("truncated TCP (19 of 20)", Frame::new(opts), MAL));
    let mut off4 = cat(&[&eth(0, 0x0800), &ipv4_hdr(6, 0, 20), &tcp()]);
    off4[14 + 20 + 12] = 0x40;
    v.push(("TCP data offset 4", Frame::new(off4), MAL));
    let v6 = cat(&[&eth(0, 0x86DD), &ipv6_hdr(6, 20), &tcp()]);
    v.push(("ipv6 tcp", Frame::new(v6.clone()), IP));
    v.push(("truncated IPv6 (39 of 40)", Frame::new(v6[..14 + 39].to_vec()), MAL));
    let v6x = cat(&[
        &eth(2, 0x86DD),
        &ipv6_hdr(0, 16 + 8),
        &[44, 0, 0, 0, 0, 0, 0, 0],
        &[17, 0, 0, 0, 0, 0, 0, 1],
        &udp(),
    ]);
    v.push(("2 VLANs + IPv6 hop-by-hop + fragment + UDP", Frame::new(v6x), IP));
    let s16 = cat(&[&eth(1, 0x88B5), &shim(0x0800, 16, 16), &ipv4_hdr(17, 0, 8), &udp()]);
    v.push(("VLAN + shim 16 hops", Frame::new(s16), IP));
    let s17 = cat(&[&eth(0, 0x88B5), &shim(0x0800, 17, 17), &ipv4_hdr(17, 0, 8), &udp()]);
    v.push(("shim with 17 hops", Frame::new(s17), MAL));
    let s0 = cat(&[&eth(2, 0x88B5), &shim(0x86DD, 0, 0), &ipv6_hdr(17, 8), &udp()]);
    v.push(("2 VLANs + shim 0 hops + IPv6", Frame::new(s0), IP));
    v.push(("3 VLAN tags", Frame::new(cat(&[&eth(3, 0x0800), &ipv4_hdr(17, 0, 8), &udp()])), MAL));
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
    v.push((
        "shim-only 20 bytes (0 hops, next ARP)",
        Frame::new(cat(&[&eth(0, 0x88B5), &shim(0x0806, 0, 0)])),
        NON,
    ));
    v.push(("nested shim", Frame::new(cat(&[&eth(0, 0x88B5), &shim(0x88B5, 0, 0), &[0; 40]])), MAL));
    v
}
