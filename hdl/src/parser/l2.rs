//! `L2`: Ethernet, up to two VLAN tags and the telemetry shim, decoded at fixed offsets.
//!
//! Every field of these headers lies in frame bytes [`L2_FIELDS`] (12..28: the EtherType,
//! two tags, the shim's kind, next EtherType and hop count at 14, 18 or 22), so in the first
//! four beats they are read from the parser's window aligned to the frame start, whatever
//! beat is on the bus: frame byte `a` sits at window byte `a + 8 (3 - t)`. The decoded
//! fields are valid in every beat up to 3 (or the last beat of a shorter frame); the parent
//! uses them while `early` is set. The shim fields [`hops::HopSum`](super::hops::HopSum)
//! needs are registered here, in the early beats, and hold for the rest of the frame.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock` | in | 1 | |
//! | `clr` | in | 1 | clear the registered shim fields (reset, or a frame's last beat) |
//! | `valid` | in | 1 | a beat is on the window |
//! | `early` | in | 1 | the beat is one of the first four: register the shim fields |
//! | `t` | in | 9 | beat index in the frame (its low bits: only `t mod 4` matters) |
//! | `win` | in | 448 | the parser's window (beats `t-3..t`, then zero padding) |
//! | `ip4`, `ip6` | out | 1 each | the payload after the tags and the shim is IPv4 / IPv6 |
//! | `bad` | out | 1 | malformed: a third tag, or a shim of another kind, with more than [`shim::MAX_HOPS`] hops or nesting a shim |
//! | `ip_at` | out | 16 | first byte after the tags and the shim: where the IP header starts |
//! | `shim`, `sc`, `hops` | out | 1, 2, 16 | registered: a shim is present, at `14 + 4 sc`, with `hops` hop records |
//! | `hop_start`, `hop_end` | out | 16, 16 | registered: the hop area `[s + 6, s + 6 + 6 hops)` |
use super::{frame_at_beat0, konst, BEAT_BYTES, WIN_BEATS};
use crate::arith::Widen;
use core::ops::Range;
use rust_hdl::prelude::*;
use smartnic_contract::frame::field::{ethernet, vlan};
use smartnic_contract::frame::{self, MAX_VLAN_TAGS};
use smartnic_contract::shim;

/// Frame bytes holding every L2 and shim field: from the Ethernet EtherType to the hop count
/// of a shim behind two tags.
pub const L2_FIELDS: Range<usize> =
    ethernet::ETHERTYPE.start..shim_at(MAX_VLAN_TAGS) + shim::field::HOP_COUNT.end;
/// Its bytes before the first tag's TCI: the EtherType and the kind of a shim with no tag.
const HEAD: Range<usize> = L2_FIELDS.start..ethernet::HEADER_LEN + 1;
/// Its bytes after the first tag's TCI (the TCI's second byte, the VLAN ID, is never read).
const TAIL: Range<usize> = ethernet::HEADER_LEN + vlan::TCI.end..L2_FIELDS.end;
/// Where the shim (or the payload) starts behind `tags` VLAN tags: 14, 18, 22.
pub const fn shim_at(tags: usize) -> usize {
    ethernet::HEADER_LEN + tags * vlan::TAG_LEN
}
/// Places with a tag count: no tag, one, two (a third is malformed).
const PLACES: usize = MAX_VLAN_TAGS + 1;

/// The bit offset in `fields` ([`HEAD`] above [`TAIL`]) of the frame bytes `r`.
const fn at(r: Range<usize>) -> u64 {
    if r.start >= TAIL.start {
        (8 * (TAIL.end - r.end)) as u64
    } else {
        assert!(r.end <= HEAD.end);
        (8 * (TAIL.end - TAIL.start + HEAD.end - r.end)) as u64
    }
}
/// `r` moved `by` bytes on.
const fn shift(r: Range<usize>, by: usize) -> Range<usize> {
    r.start + by..r.end + by
}
/// The EtherType read behind `tags` tags (the Ethernet one for 0).
const fn ethertype(tags: usize) -> Range<usize> {
    if tags == 0 {
        ethernet::ETHERTYPE
    } else {
        shift(vlan::ETHERTYPE, shim_at(tags - 1))
    }
}

// The `fields` wires are 24 + 96 bits; every field lies in the first four beats; a hop record
// is 6 bytes (the area end `s + 6 + 4n + 2n` relies on it).
const _: () = assert!(HEAD.end - HEAD.start == 3 && TAIL.end - TAIL.start == 12);
const _: () = assert!(L2_FIELDS.end <= BEAT_BYTES * WIN_BEATS);
const _: () = assert!(shim::field::HOP_LEN == 6);

/// L2 and shim decoder (see the module docs).
#[derive(LogicBlock)]
pub struct L2 {
    pub clock: Signal<In, Clock>,
    pub clr: Signal<In, Bit>,
    pub valid: Signal<In, Bit>,
    pub early: Signal<In, Bit>,
    pub t: Signal<In, Bits<9>>,
    pub win: Signal<In, Bits<448>>,
    pub ip4: Signal<Out, Bit>,
    pub ip6: Signal<Out, Bit>,
    pub bad: Signal<Out, Bit>,
    pub ip_at: Signal<Out, Bits<16>>,
    pub shim: Signal<Out, Bit>,
    pub sc: Signal<Out, Bits<2>>,
    pub hops: Signal<Out, Bits<16>>,
    pub hop_start: Signal<Out, Bits<16>>,
    pub hop_end: Signal<Out, Bits<16>>,
    r_shim: DFF<Bit>,
    r_sc: DFF<Bits<2>>,
    r_hops: DFF<Bits<16>>,
    r_start: DFF<Bits<16>>,
    r_end: DFF<Bits<16>>,
    // Wires.
    // The header's head and tail at the 120-bit width, OR-ed after a shift (`#[hdl_gen]` has
    // no concatenation). rust-hdl workaround: `bit_cast` widening renders as `x & M'hff..` (a
    // Verilator WIDTH warning); `Widen` is a leaf whose Verilog is `{zeros, x}`.
    w_head: Widen<120, 24>,
    w_tail: Widen<120, 96>,
    head_at: Signal<Local, Bits<9>>,
    tail_at: Signal<Local, Bits<9>>,
    fields: Signal<Local, Bits<120>>,
    et: [Signal<Local, Bits<16>>; PLACES],
    is_tag: [Signal<Local, Bit>; PLACES],
    more: Signal<Local, Bit>,
    l2et: Signal<Local, Bits<16>>,
    s: Signal<Local, Bits<16>>,
    nsc: Signal<Local, Bits<2>>,
    kind: Signal<Local, Bits<8>>,
    next: Signal<Local, Bits<16>>,
    n: Signal<Local, Bits<16>>,
    is_shim: Signal<Local, Bit>,
    payload_et: Signal<Local, Bits<16>>,
    // Constants.
    /// Offsets of [`HEAD`] and [`TAIL`] in the window at beat 0 (a beat moves them 64 bits up).
    head_at_beat0: Constant<Bits<9>>,
    tail_at_beat0: Constant<Bits<9>>,
    /// `t mod 4`: keeps the select in range in later beats, where it is not used.
    beat_in_window: Constant<Bits<9>>,
    et_at: [Constant<Bits<7>>; PLACES],
    kind_at: [Constant<Bits<7>>; PLACES],
    next_at: [Constant<Bits<7>>; PLACES],
    hops_at: [Constant<Bits<7>>; PLACES],
    place_s: [Constant<Bits<16>>; PLACES],
    place_sc: [Constant<Bits<2>>; PLACES],
    hop_records_at: Constant<Bits<16>>,
    max_hops: Constant<Bits<16>>,
    et_vlan: Constant<Bits<16>>,
    et_qinq: Constant<Bits<16>>,
    et_qinq_old: Constant<Bits<16>>,
    et_shim: Constant<Bits<16>>,
    et_ipv4: Constant<Bits<16>>,
    et_ipv6: Constant<Bits<16>>,
    kind_int: Constant<Bits<8>>,
    zero2: Constant<Bits<2>>,
    zero16: Constant<Bits<16>>,
}

impl Default for L2 {
    fn default() -> Self {
        L2 {
            clock: Default::default(),
            clr: Default::default(),
            valid: Default::default(),
            early: Default::default(),
            t: Default::default(),
            win: Default::default(),
            ip4: Default::default(),
            ip6: Default::default(),
            bad: Default::default(),
            ip_at: Default::default(),
            shim: Default::default(),
            sc: Default::default(),
            hops: Default::default(),
            hop_start: Default::default(),
            hop_end: Default::default(),
            r_shim: Default::default(),
            r_sc: Default::default(),
            r_hops: Default::default(),
            r_start: Default::default(),
            r_end: Default::default(),
            w_head: Default::default(),
            w_tail: Default::default(),
            head_at: Default::default(),
            tail_at: Default::default(),
            fields: Default::default(),
            et: Default::default(),
            is_tag: Default::default(),
            more: Default::default(),
            l2et: Default::default(),
            s: Default::default(),
            nsc: Default::default(),
            kind: Default::default(),
            next: Default::default(),
            n: Default::default(),
            is_shim: Default::default(),
            payload_et: Default::default(),
            head_at_beat0: konst!(frame_at_beat0(HEAD.end)),
            tail_at_beat0: konst!(frame_at_beat0(TAIL.end)),
            beat_in_window: konst!(WIN_BEATS - 1),
            et_at: std::array::from_fn(|k| konst!(at(ethertype(k)))),
            kind_at: std::array::from_fn(|k| {
                konst!(at(shift(shim::field::KIND..shim::field::KIND + 1, shim_at(k))))
            }),
            next_at: std::array::from_fn(|k| konst!(at(shift(shim::field::NEXT_TYPE, shim_at(k))))),
            hops_at: std::array::from_fn(|k| konst!(at(shift(shim::field::HOP_COUNT, shim_at(k))))),
            place_s: std::array::from_fn(|k| konst!(shim_at(k))),
            place_sc: std::array::from_fn(|k| konst!(k)),
            hop_records_at: konst!(shim::field::HOPS),
            max_hops: konst!(shim::MAX_HOPS),
            et_vlan: konst!(frame::ETHERTYPE_VLAN),
            et_qinq: konst!(frame::ETHERTYPE_QINQ),
            et_qinq_old: konst!(frame::ETHERTYPE_QINQ_OLD),
            et_shim: konst!(shim::ETHERTYPE_SHIM),
            et_ipv4: konst!(frame::ETHERTYPE_IPV4),
            et_ipv6: konst!(frame::ETHERTYPE_IPV6),
            kind_int: konst!(shim::KIND_INT_STACK),
            zero2: konst!(0),
            zero16: konst!(0),
        }
    }
}

impl Logic for L2 {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, r_shim, r_sc, r_hops, r_start, r_end);
        // Frame bytes 12..14 and 16..27 at window bits 64 (t mod 4) + their beat-0 offsets
        // (shift by 6: 64 bits a beat); `fields` holds them in order, without byte 15.
        self.head_at.next = ((self.t.val() & self.beat_in_window.val()) << 6) + self.head_at_beat0.val();
        self.tail_at.next = ((self.t.val() & self.beat_in_window.val()) << 6) + self.tail_at_beat0.val();
        self.w_head.x.next = self.win.val().get_bits::<24>(self.head_at.val().index());
        self.w_tail.x.next = self.win.val().get_bits::<96>(self.tail_at.val().index());
        self.fields.next = (self.w_head.y.val() << 96) | self.w_tail.y.val();
        for k in 0..PLACES {
            self.et[k].next = self.fields.val().get_bits::<16>(self.et_at[k].val().index());
            self.is_tag[k].next = (self.et[k].val() == self.et_vlan.val())
                | (self.et[k].val() == self.et_qinq.val())
                | (self.et[k].val() == self.et_qinq_old.val());
        }
        // Walk the tags: place k is taken while the EtherTypes before it were tags; `more`
        // left set means a tag behind the last place.
        self.more.next = true;
        self.l2et.next = self.zero16.val();
        self.s.next = self.zero16.val();
        self.nsc.next = self.zero2.val();
        self.kind.next = self.kind_int.val();
        self.next.next = self.zero16.val();
        self.n.next = self.zero16.val();
        for k in 0..PLACES {
            if self.more.val() {
                self.l2et.next = self.et[k].val();
                self.s.next = self.place_s[k].val();
                self.nsc.next = self.place_sc[k].val();
                self.kind.next = self.fields.val().get_bits::<8>(self.kind_at[k].val().index());
                self.next.next = self.fields.val().get_bits::<16>(self.next_at[k].val().index());
                self.n.next = self.fields.val().get_bits::<16>(self.hops_at[k].val().index());
                self.more.next = self.is_tag[k].val();
            }
        }
        self.is_shim.next = self.l2et.val() == self.et_shim.val();
        self.bad.next = self.more.val();
        self.ip_at.next = self.s.val();
        self.payload_et.next = self.l2et.val();
        if self.is_shim.val() {
            self.bad.next = self.more.val()
                | (self.kind.val() != self.kind_int.val())
                | (self.n.val() > self.max_hops.val())
                | (self.next.val() == self.et_shim.val());
            // s + 6 + 6 n (6 n = 4 n + 2 n).
            self.ip_at.next =
                self.s.val() + self.hop_records_at.val() + (self.n.val() << 2) + (self.n.val() << 1);
            self.payload_et.next = self.next.val();
        }
        self.ip4.next = self.payload_et.val() == self.et_ipv4.val();
        self.ip6.next = self.payload_et.val() == self.et_ipv6.val();

        // The shim fields of the frame, registered in its first beats.
        if self.valid.val() & self.early.val() {
            self.r_shim.d.next = self.is_shim.val();
            self.r_sc.d.next = self.nsc.val();
            self.r_hops.d.next = self.n.val();
            self.r_start.d.next = self.s.val() + self.hop_records_at.val();
            self.r_end.d.next = self.ip_at.val();
        }
        if self.clr.val() {
            self.r_shim.d.next = false;
            self.r_sc.d.next = self.zero2.val();
            self.r_hops.d.next = self.zero16.val();
            self.r_start.d.next = self.zero16.val();
            self.r_end.d.next = self.zero16.val();
        }
        self.shim.next = self.r_shim.q.val();
        self.sc.next = self.r_sc.q.val();
        self.hops.next = self.r_hops.q.val();
        self.hop_start.next = self.r_start.q.val();
        self.hop_end.next = self.r_end.q.val();
    }
}
