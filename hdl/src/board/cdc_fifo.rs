//! `CdcFifo<W, N, P>`: a `2^N`-deep FIFO of `W`-bit words from one clock domain into
//! another, with Gray-coded pointers (`P = N + 1` bits: the extra bit tells full from empty).
//!
//! # Why not rust-hdl's `AsynchronousFIFO`
//! It crosses binary pointers through a request/acknowledge handshake (four synchronizer
//! stages per update, so the other side sees a pointer 6 to 8 clocks late), its state
//! machines are enums (which our Verilator lint and `#[hdl_gen]` rules avoid), it has no
//! reset, and its read address is a combinational function of `read` inside the same
//! `always` block as `empty` (a combinational loop to Verilator once a merge decides `read`
//! from `empty`). A Gray pointer changes one bit per step, so two flops are a safe crossing
//! and the other side sees each update two of its clocks later.
//!
//! # How
//! - **Write side** (`wclock`): `write` with room stores `wdata` at `wbin` in the RAM
//!   (rust-hdl's `RAM`: one write port on `wclock`, one registered read port on `rclock`;
//!   LUT RAM at 16 deep, block RAM when deep) and advances `wbin` and its Gray code `wgray`.
//!   The read pointer's Gray code arrives through two flops (`rq1`, `rq2`); the FIFO is
//!   full when `wgray` equals it with its top two bits inverted. A `write` while full is
//!   refused and counted in `overflow`; `max_fill` is the most words the write side has
//!   seen in the FIFO (its fill counts words the reader took until their pointer arrives).
//! - **Read side** (`rclock`): `wgray` arrives through `wq1`, `wq2`; `h_valid` = the
//!   pointers differ. The RAM is read at `rbin`, or at `rbin + 1` in a clock that takes the
//!   head, so `h_data` is always the head word (first-word fall-through). A word is visible
//!   two read clocks after the write clock that stored it, so its RAM write has happened.
//! - `h_valid` is written from registers alone, in its own statement: the merge decides
//!   `take` from it in the same clock, and Verilator can then split the two paths.
//!
//! Both resets must be held together for at least two clocks of the slower side (the
//! pointers restart at zero on both sides).
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `wclock`, `wreset` | in | 1 | write clock and its synchronous reset |
//! | `write`, `wdata` | in | 1, `W` | store a word (refused if full) |
//! | `overflow` | out | 32 | words refused since reset |
//! | `max_fill` | out | `P` | the write side's high-water mark, in words |
//! | `rclock`, `rreset` | in | 1 | read clock and its synchronous reset |
//! | `h_valid`, `h_data` | out | 1, `W` | the head word |
//! | `take` | in | 1 | the head leaves at this clock edge (ignored while `h_valid` is low) |
use crate::parser::konst;
use rust_hdl::prelude::*;

/// The crossing FIFO (see the module docs).
#[derive(LogicBlock)]
pub struct CdcFifo<const W: usize, const N: usize, const P: usize> {
    pub wclock: Signal<In, Clock>,
    pub wreset: Signal<In, Bit>,
    pub write: Signal<In, Bit>,
    pub wdata: Signal<In, Bits<W>>,
    pub overflow: Signal<Out, Bits<32>>,
    pub max_fill: Signal<Out, Bits<P>>,
    pub rclock: Signal<In, Clock>,
    pub rreset: Signal<In, Bit>,
    pub h_valid: Signal<Out, Bit>,
    pub h_data: Signal<Out, Bits<W>>,
    pub take: Signal<In, Bit>,
    ram: RAM<Bits<W>, N>,
    // Write side.
    wbin: DFF<Bits<P>>,
    wgray: DFF<Bits<P>>,
    rq1: DFF<Bits<P>>,
    rq2: DFF<Bits<P>>,
    n_over: DFF<Bits<32>>,
    hi: DFF<Bits<P>>,
    // Read side.
    rbin: DFF<Bits<P>>,
    rgray: DFF<Bits<P>>,
    wq1: DFF<Bits<P>>,
    wq2: DFF<Bits<P>>,
    // Wires.
    full: Signal<Local, Bit>,
    push: Signal<Local, Bit>,
    wnext: Signal<Local, Bits<P>>,
    /// Binary of the synchronised read pointer: `rq2 ^ rq2 >> 1 ^ ... ^ rq2 >> N`.
    racc: [Signal<Local, Bits<P>>; P],
    fill: Signal<Local, Bits<P>>,
    pop: Signal<Local, Bit>,
    rnext: Signal<Local, Bits<P>>,
    // Constants.
    /// Shift amounts 1..=N.
    sh: [Constant<Bits<P>>; N],
    top2: Constant<Bits<P>>,
    one: Constant<Bits<P>>,
    zero: Constant<Bits<P>>,
    one32: Constant<Bits<32>>,
    zero32: Constant<Bits<32>>,
}

impl<const W: usize, const N: usize, const P: usize> Default for CdcFifo<W, N, P> {
    fn default() -> Self {
        assert!(P == N + 1 && N >= 2, "CdcFifo<{W}, {N}, {P}>: P must be N + 1, N >= 2");
        CdcFifo {
            wclock: Default::default(),
            wreset: Default::default(),
            write: Default::default(),
            wdata: Default::default(),
            overflow: Default::default(),
            max_fill: Default::default(),
            rclock: Default::default(),
            rreset: Default::default(),
            h_valid: Default::default(),
            h_data: Default::default(),
            take: Default::default(),
            ram: Default::default(),
            wbin: Default::default(),
            wgray: Default::default(),
            rq1: Default::default(),
            rq2: Default::default(),
            n_over: Default::default(),
            hi: Default::default(),
            rbin: Default::default(),
            rgray: Default::default(),
            wq1: Default::default(),
            wq2: Default::default(),
            full: Default::default(),
            push: Default::default(),
            wnext: Default::default(),
            racc: std::array::from_fn(|_| Default::default()),
            fill: Default::default(),
            pop: Default::default(),
            rnext: Default::default(),
            sh: std::array::from_fn(|k| konst!(k + 1)),
            top2: konst!(3u64 << (N - 1)),
            one: konst!(1),
            zero: konst!(0),
            one32: konst!(1),
            zero32: konst!(0),
        }
    }
}

impl<const W: usize, const N: usize, const P: usize> Logic for CdcFifo<W, N, P> {
    #[hdl_gen]
    fn update(&mut self) {
        // ---- Clocks: the write side's flops on `wclock`, the read side's on `rclock`.
        self.wbin.clock.next = self.wclock.val();
        self.wgray.clock.next = self.wclock.val();
        self.rq1.clock.next = self.wclock.val();
        self.rq2.clock.next = self.wclock.val();
        self.n_over.clock.next = self.wclock.val();
        self.hi.clock.next = self.wclock.val();
        self.rbin.clock.next = self.rclock.val();
        self.rgray.clock.next = self.rclock.val();
        self.wq1.clock.next = self.rclock.val();
        self.wq2.clock.next = self.rclock.val();
        self.ram.write_clock.next = self.wclock.val();
        self.ram.read_clock.next = self.rclock.val();

        // ---- The head, from registers alone (see the module docs).
        self.h_valid.next = self.rgray.q.val() != self.wq2.q.val();
        self.h_data.next = self.ram.read_data.val();

        // ---- Write side.
        self.rq1.d.next = self.rgray.q.val();
        self.rq2.d.next = self.rq1.q.val();
        self.full.next = self.wgray.q.val() == (self.rq2.q.val() ^ self.top2.val());
        self.push.next = self.write.val() & !self.full.val();
        self.wnext.next = self.wbin.q.val() + self.one.val();
        self.wbin.d.next = self.wbin.q.val();
        self.wgray.d.next = self.wgray.q.val();
        if self.push.val() {
            self.wbin.d.next = self.wnext.val();
            self.wgray.d.next = self.wnext.val() ^ (self.wnext.val() >> self.sh[0].val());
        }
        self.ram.write_enable.next = self.push.val();
        self.ram.write_address.next = self.wbin.q.val().get_bits::<N>(0);
        self.ram.write_data.next = self.wdata.val();
        self.racc[0].next = self.rq2.q.val();
        for k in 1..P {
            self.racc[k].next = self.racc[k - 1].val() ^ (self.rq2.q.val() >> self.sh[k - 1].val());
        }
        for k in (P - 1)..P {
            self.fill.next = self.wbin.q.val() - self.racc[k].val();
        }
        self.hi.d.next = self.hi.q.val();
        if self.fill.val() > self.hi.q.val() {
            self.hi.d.next = self.fill.val();
        }
        self.n_over.d.next = self.n_over.q.val();
        if self.write.val() & self.full.val() {
            self.n_over.d.next = self.n_over.q.val() + self.one32.val();
        }
        if self.wreset.val() {
            self.wbin.d.next = self.zero.val();
            self.wgray.d.next = self.zero.val();
            self.rq1.d.next = self.zero.val();
            self.rq2.d.next = self.zero.val();
            self.hi.d.next = self.zero.val();
            self.n_over.d.next = self.zero32.val();
        }
        self.overflow.next = self.n_over.q.val();
        self.max_fill.next = self.hi.q.val();

        // ---- Read side.
        self.wq1.d.next = self.wgray.q.val();
        self.wq2.d.next = self.wq1.q.val();
        self.pop.next = self.take.val() & (self.rgray.q.val() != self.wq2.q.val());
        self.rnext.next = self.rbin.q.val() + self.one.val();
        self.rbin.d.next = self.rbin.q.val();
        self.rgray.d.next = self.rgray.q.val();
        self.ram.read_address.next = self.rbin.q.val().get_bits::<N>(0);
        if self.pop.val() {
            self.rbin.d.next = self.rnext.val();
            self.rgray.d.next = self.rnext.val() ^ (self.rnext.val() >> self.sh[0].val());
            self.ram.read_address.next = self.rnext.val().get_bits::<N>(0);
        }
        if self.rreset.val() {
            self.rbin.d.next = self.zero.val();
            self.rgray.d.next = self.zero.val();
            self.wq1.d.next = self.zero.val();
            self.wq2.d.next = self.zero.val();
        }
    }
}
