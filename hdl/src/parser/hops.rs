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
//! | `shim`, `sc`, `n` | in | 1, 2, 16 | shim present, `s = 14 + 4 sc`, hop count (`<= 16` when valid) |
//! | `sum` | out | 64 | register: the sum over the frame's beats up to the previous valid beat; after
//! | | | | a frame's last beat it holds the frame's total until the next frame's first beat |
//!
//! `sum` is a register so that a parent reading it in the same `always` block that drives
//! the inputs sees no combinational loop (Verilator UNOPTFLAT).
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
    pub sum: Signal<Out, Bits<64>>,
    acc: DFF<Bits<64>>,
    tm3: DFF<Bits<2>>,
    rs: Signal<Local, Bits<16>>,
    re: Signal<Local, Bits<16>>,
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
    rs0: Constant<Bits<16>>,
    rs1: Constant<Bits<16>>,
    rs2: Constant<Bits<16>>,
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
            sum: Default::default(),
            acc: Default::default(),
            tm3: Default::default(),
            rs: Default::default(),
            re: Default::default(),
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
            rs0: Constant::new(20u64.to_bits()),
            rs1: Constant::new(24u64.to_bits()),
            rs2: Constant::new(28u64.to_bits()),
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
        dff_setup!(self, clock, acc, tm3);
        // Hop area [rs, re) of the frame.
        if self.sc.val() == self.k0.val() {
            self.rs.next = self.rs0.val();
        } else if self.sc.val() == self.k1.val() {
            self.rs.next = self.rs1.val();
        } else {
            self.rs.next = self.rs2.val();
        }
        self.re.next = self.rs.val() + (self.n.val() << 2) + (self.n.val() << 1);
        self.ob.next = self.t.val() << 3;
        self.mask[0].next = self.zero64.val();
        for j in 0..8 {
            self.inb[j].next = self.shim.val()
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
            self.base.next = self.zero64.val();
        } else {
            self.m3.next = self.tm3.q.val();
            self.base.next = self.acc.q.val();
        }
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
        self.sum.next = self.acc.q.val();
        if self.valid.val() {
            self.acc.d.next = self.base.val() + self.w1.val() + self.w2.val();
            if self.m3.val() == self.k2.val() {
                self.tm3.d.next = self.k0.val();
            } else {
                self.tm3.d.next = self.m3.val() + self.k1.val();
            }
        }
        if self.reset.val() {
            self.acc.d.next = self.zero64.val();
            self.tm3.d.next = self.k0.val();
        }
    }
}
