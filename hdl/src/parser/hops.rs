//! `HopSum`: the in-network delay of a frame, summed byte by byte as the INT stack flows by.
//!
//! The shim sits at `s` in {14, 18, 22} (0, 1 or 2 VLAN tags); its hop records fill
//! `[s + 6, s + 6 + 6n)`, each `switch u16 | latency u32` big-endian. Instead of extracting
//! 16 words, every beat adds its latency bytes at their weights: a byte at offset `o` of the
//! hop area has position `pos = (o - s - 6) mod 6`; positions 2..5 are latency bytes of
//! weight `256^(5 - pos)`. Because `s` and 8 are even, the position of a beat's first byte
//! is `phi = (2t - s) mod 6`, always 0, 2 or 4, so a beat (8 consecutive positions) holds at
//! most two pieces of latency words and its contribution is `w1 + w2` with
//!
//! | phi | w1 (beat bytes) | w2 (beat bytes) |
//! |---|---|---|
//! | 0 | 2..5 | - |
//! | 2 | 0..3 | 6, 7 as the top half |
//! | 4 | 0, 1 as the low half | 4..7 |
//!
//! after masking the bytes outside the hop area. `phi / 2 = (t - s / 2) mod 3` comes from a
//! beat-index-mod-3 counter. The sum of 16 32-bit latencies needs 36 bits; the port is 64.
//!
//! Timing: the shim's position and hop count are known (registered) only from beat 4 on, so
//! beats 0..3 are not accumulated as they pass; in beat 4 the latency bytes below byte 32
//! (hop 0 and 1 for `s = 14`, hop 0 for `s = 18`, the first half of hop 0's latency for
//! `s = 22`) are added from the window (`early`). No path from the L2 decoding reaches the
//! accumulator. Frames shorter than 5 beats cannot hold an IP packet behind a hop.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock` | in | 1 | |
//! | `reset` | in | 1 | synchronous: clear the sum and the phase counter |
//! | `first` | in | 1 | this beat is a frame's first: the sum restarts from it |
//! | `valid` | in | 1 | a beat is on `bus` |
//! | `bus` | in | 64 | the beat, byte-reversed (first byte in bits 63:56) |
//! | `t` | in | 16 | beat index in the frame (beat `t` holds bytes `8t..8t+7`) |
//! | `shim`, `sc`, `n` | in | 1, 2, 16 | registered: shim present, `s = 14 + 4 sc`, hop count (`<= 16` when valid), final from beat 4 on |
//! | `rs`, `re` | in | 16, 16 | registered: the hop area `[s + 6, s + 6 + 6n)` |
//! | `early` | in | 80 | frame bytes 22..31 (from the window in beat 4) |
//! | `sum` | out | 64 | the sum over the frame's beats up to the previous valid beat, from registers |
//!
//! Two stages: a beat's contribution is registered (`part`), then added to `acc` in the
//! next clock (restarting when the registered beat was a frame's first). `sum = acc + part`
//! comes from registers only, so a parent reading it in the same `always` block that drives
//! the inputs sees no combinational loop (Verilator UNOPTFLAT): in the clock after a frame's
//! last beat it is the frame's total, whatever beat is on the bus then.
use crate::arith::Widen;
use rust_hdl::prelude::*;

/// Hop-latency accumulator (see the module docs).
#[derive(LogicBlock)]
pub struct HopSum {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub first: Signal<In, Bit>,
    pub valid: Signal<In, Bit>,
    pub bus: Signal<In, Bits<64>>,
    pub t: Signal<In, Bits<16>>,
    pub shim: Signal<In, Bit>,
    pub sc: Signal<In, Bits<2>>,
    pub n: Signal<In, Bits<16>>,
    pub early: Signal<In, Bits<80>>,
    pub rs: Signal<In, Bits<16>>,
    pub re: Signal<In, Bits<16>>,
    pub sum: Signal<Out, Bits<64>>,
    acc: DFF<Bits<64>>,
    part: DFF<Bits<64>>,
    part_first: DFF<Bit>,
    tm3: DFF<Bits<2>>,
    // The 32-bit hop delays as 64-bit addends. rust-hdl workaround: `bit_cast` widening
    // renders as `x & M'hff..` (a Verilator WIDTH warning); `Widen` is a leaf whose Verilog is
    // `{zeros, x}`.
    wa: Widen<64, 32>,
    wb: Widen<64, 32>,
    wc: Widen<64, 32>,
    late: Signal<Local, Bit>,
    ex: Signal<Local, Bits<64>>,
    t3: Constant<Bits<16>>,
    t4: Constant<Bits<16>>,
    n1: Constant<Bits<16>>,
    n2: Constant<Bits<16>>,
    m16: Constant<Bits<64>>,
    ob: Signal<Local, Bits<16>>,
    inb: [Signal<Local, Bit>; 8],
    mask: [Signal<Local, Bits<64>>; 9],
    m: Signal<Local, Bits<64>>,
    ph: Signal<Local, Bits<2>>,
    m3: Signal<Local, Bits<2>>,
    base: Signal<Local, Bits<64>>,
    w1: Signal<Local, Bits<64>>,
    w2: Signal<Local, Bits<64>>,
    jc: [Constant<Bits<16>>; 8],
    bm: [Constant<Bits<64>>; 8],
    k0: Constant<Bits<2>>,
    k1: Constant<Bits<2>>,
    k2: Constant<Bits<2>>,
    lo32: Constant<Bits<64>>,
    hi16of32: Constant<Bits<64>>,
    zero64: Constant<Bits<64>>,
}

impl Default for HopSum {
    fn default() -> Self {
        HopSum {
            clock: Default::default(),
            reset: Default::default(),
            first: Default::default(),
            valid: Default::default(),
            bus: Default::default(),
            t: Default::default(),
            shim: Default::default(),
            sc: Default::default(),
            n: Default::default(),
            early: Default::default(),
            rs: Default::default(),
            re: Default::default(),
            sum: Default::default(),
            acc: Default::default(),
            part: Default::default(),
            part_first: Default::default(),
            tm3: Default::default(),
            wa: Default::default(),
            wb: Default::default(),
            wc: Default::default(),
            late: Default::default(),
            ex: Default::default(),
            t3: Constant::new(3u64.to_bits()),
            t4: Constant::new(4u64.to_bits()),
            n1: Constant::new(1u64.to_bits()),
            n2: Constant::new(2u64.to_bits()),
            m16: Constant::new(0xFFFFu64.to_bits()),
            ob: Default::default(),
            inb: Default::default(),
            mask: Default::default(),
            m: Default::default(),
            ph: Default::default(),
            m3: Default::default(),
            base: Default::default(),
            w1: Default::default(),
            w2: Default::default(),
            jc: std::array::from_fn(|j| Constant::new((j as u64).to_bits())),
            bm: std::array::from_fn(|j| Constant::new((0xFFu64 << (56 - 8 * j)).to_bits())),
            k0: Constant::new(0u64.to_bits()),
            k1: Constant::new(1u64.to_bits()),
            k2: Constant::new(2u64.to_bits()),
            lo32: Constant::new(0xFFFF_FFFFu64.to_bits()),
            hi16of32: Constant::new(0xFFFF_0000u64.to_bits()),
            zero64: Constant::new(0u64.to_bits()),
        }
    }
}

impl Logic for HopSum {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, acc, part, part_first, tm3);
        self.ob.next = self.t.val() << 3;
        self.late.next = self.t.val() > self.t3.val();
        // Beat 4: the latency bytes below byte 32, from the window.
        self.wa.x.next = self.early.val().get_bits::<32>(48); // bytes 22..25
        self.wb.x.next = self.early.val().get_bits::<32>(16); // bytes 26..29
        self.wc.x.next = self.early.val().get_bits::<32>(0); // bytes 28..31
        self.ex.next = self.zero64.val();
        if self.shim.val() & (self.t.val() == self.t4.val()) & (self.n.val() >= self.n1.val()) {
            if self.sc.val() == self.k0.val() {
                if self.n.val() >= self.n2.val() {
                    self.ex.next = self.wa.y.val() + self.wc.y.val();
                } else {
                    self.ex.next = self.wa.y.val();
                }
            } else if self.sc.val() == self.k1.val() {
                self.ex.next = self.wb.y.val();
            } else {
                self.ex.next = (self.wc.y.val() & self.m16.val()) << 16;
            }
        }
        self.mask[0].next = self.zero64.val();
        for j in 0..8 {
            self.inb[j].next = self.shim.val()
                & self.late.val()
                & ((self.ob.val() + self.jc[j].val()) >= self.rs.val())
                & ((self.ob.val() + self.jc[j].val()) < self.re.val());
            if self.inb[j].val() {
                self.mask[j + 1].next = self.mask[j].val() | self.bm[j].val();
            } else {
                self.mask[j + 1].next = self.mask[j].val();
            }
        }
        self.m.next = self.bus.val() & self.mask[8].val();
        if self.first.val() {
            self.m3.next = self.k0.val();
        } else {
            self.m3.next = self.tm3.q.val();
        }
        // Stage 2: acc += the previous beat's contribution (restarting at a first beat).
        if self.part_first.q.val() {
            self.base.next = self.zero64.val();
        } else {
            self.base.next = self.acc.q.val();
        }
        self.acc.d.next = self.base.val() + self.part.q.val();
        // phi / 2 = (t - s/2) mod 3; s/2 mod 3 is 1, 0, 2 for s = 14, 18, 22.
        if self.sc.val() == self.k0.val() {
            if self.m3.val() == self.k0.val() {
                self.ph.next = self.k2.val();
            } else if self.m3.val() == self.k1.val() {
                self.ph.next = self.k0.val();
            } else {
                self.ph.next = self.k1.val();
            }
        } else if self.sc.val() == self.k1.val() {
            self.ph.next = self.m3.val();
        } else if self.m3.val() == self.k0.val() {
            self.ph.next = self.k1.val();
        } else if self.m3.val() == self.k1.val() {
            self.ph.next = self.k2.val();
        } else {
            self.ph.next = self.k0.val();
        }
        if self.ph.val() == self.k0.val() {
            self.w1.next = (self.m.val() >> 16) & self.lo32.val();
            self.w2.next = self.zero64.val();
        } else if self.ph.val() == self.k1.val() {
            self.w1.next = self.m.val() >> 32;
            self.w2.next = (self.m.val() << 16) & self.hi16of32.val();
        } else {
            self.w1.next = self.m.val() >> 48;
            self.w2.next = self.m.val() & self.lo32.val();
        }
        // Stage 1: this beat's contribution (0 on idle cycles).
        self.part_first.d.next = self.first.val() & self.valid.val();
        self.part.d.next = self.zero64.val();
        self.sum.next = self.base.val() + self.part.q.val();
        if self.valid.val() {
            self.part.d.next = self.w1.val() + self.w2.val() + self.ex.val();
            if self.m3.val() == self.k2.val() {
                self.tm3.d.next = self.k0.val();
            } else {
                self.tm3.d.next = self.m3.val() + self.k1.val();
            }
        }
        if self.reset.val() {
            self.acc.d.next = self.zero64.val();
            self.part.d.next = self.zero64.val();
            self.part_first.d.next = false;
            self.tm3.d.next = self.k0.val();
        }
    }
}
