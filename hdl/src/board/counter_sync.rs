//! `CounterSync`: a port's five 64-bit counters from one clock into another, together: the
//! other side sees a copy the source side took in one clock, never bits of two different
//! clocks, so counters taken together stay consistent with each other (a port's frames are
//! always its IP, non-IP and malformed frames added up).
//!
//! # How (a toggle handshake)
//! - **Source side** (`sclock`): when the acknowledge it sees (`ack`, through two flops)
//!   equals its request toggle, the destination has taken the last copy: it copies `src`
//!   into `hold` and flips `req`.
//! - **Destination side** (`dclock`): `req` arrives through two flops; when it differs from
//!   `ack`, `hold` has been still for at least two destination clocks, so it loads `hold`
//!   into `dst` and flips `ack`.
//! - `hold` changes only after the source has seen the flip of `ack`, that is after the
//!   destination's load: no bit of `hold` moves while the destination samples it.
//! - A round trip is two synchronizer stages each way plus a clock on each side, so `dst`
//!   is at most about 3 source + 3 destination clocks old; counters that stop moving reach
//!   `dst` whole within one more round trip.
//!
//! Both resets must be held together for at least two clocks of the slower side.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `sclock`, `sreset` | in | 1 | the counters' clock and its synchronous reset |
//! | `s_frames`, `s_ip`, `s_non_ip`, `s_malformed`, `s_bytes` | in | 64 each | the counters |
//! | `dclock`, `dreset` | in | 1 | the reader's clock and its synchronous reset (`dst` reads 0) |
//! | `frames`, `ip`, `non_ip`, `malformed`, `bytes` | out | 64 each | the latest whole copy |
//!
//! (Named ports, not an array: `#[hdl_gen]` cannot index an array port of a block that is
//! itself in an array, as the board's four are.)
use rust_hdl::prelude::*;

/// Counters crossed: frames, IP, non-IP, malformed, bytes.
pub const COUNTERS: usize = 5;

/// The crossing (see the module docs).
#[derive(LogicBlock)]
pub struct CounterSync {
    pub sclock: Signal<In, Clock>,
    pub sreset: Signal<In, Bit>,
    pub s_frames: Signal<In, Bits<64>>,
    pub s_ip: Signal<In, Bits<64>>,
    pub s_non_ip: Signal<In, Bits<64>>,
    pub s_malformed: Signal<In, Bits<64>>,
    pub s_bytes: Signal<In, Bits<64>>,
    pub dclock: Signal<In, Clock>,
    pub dreset: Signal<In, Bit>,
    pub frames: Signal<Out, Bits<64>>,
    pub ip: Signal<Out, Bits<64>>,
    pub non_ip: Signal<Out, Bits<64>>,
    pub malformed: Signal<Out, Bits<64>>,
    pub bytes: Signal<Out, Bits<64>>,
    // Source side.
    hold: [DFF<Bits<64>>; COUNTERS],
    req: DFF<Bit>,
    ack1: DFF<Bit>,
    ack2: DFF<Bit>,
    // Destination side.
    req1: DFF<Bit>,
    req2: DFF<Bit>,
    ack: DFF<Bit>,
    out: [DFF<Bits<64>>; COUNTERS],
    zero: Constant<Bits<64>>,
}

impl Default for CounterSync {
    fn default() -> Self {
        CounterSync {
            sclock: Default::default(),
            sreset: Default::default(),
            s_frames: Default::default(),
            s_ip: Default::default(),
            s_non_ip: Default::default(),
            s_malformed: Default::default(),
            s_bytes: Default::default(),
            dclock: Default::default(),
            dreset: Default::default(),
            frames: Default::default(),
            ip: Default::default(),
            non_ip: Default::default(),
            malformed: Default::default(),
            bytes: Default::default(),
            hold: std::array::from_fn(|_| Default::default()),
            req: Default::default(),
            ack1: Default::default(),
            ack2: Default::default(),
            req1: Default::default(),
            req2: Default::default(),
            ack: Default::default(),
            out: std::array::from_fn(|_| Default::default()),
            zero: Constant::new(0u64.to_bits()),
        }
    }
}

impl Logic for CounterSync {
    #[hdl_gen]
    fn update(&mut self) {
        for i in 0..COUNTERS {
            self.hold[i].clock.next = self.sclock.val();
            self.hold[i].d.next = self.hold[i].q.val();
            self.out[i].clock.next = self.dclock.val();
            self.out[i].d.next = self.out[i].q.val();
        }
        self.req.clock.next = self.sclock.val();
        self.ack1.clock.next = self.sclock.val();
        self.ack2.clock.next = self.sclock.val();
        self.req1.clock.next = self.dclock.val();
        self.req2.clock.next = self.dclock.val();
        self.ack.clock.next = self.dclock.val();
        // ---- Source side.
        self.ack1.d.next = self.ack.q.val();
        self.ack2.d.next = self.ack1.q.val();
        self.req.d.next = self.req.q.val();
        if self.ack2.q.val() == self.req.q.val() {
            self.hold[0].d.next = self.s_frames.val();
            self.hold[1].d.next = self.s_ip.val();
            self.hold[2].d.next = self.s_non_ip.val();
            self.hold[3].d.next = self.s_malformed.val();
            self.hold[4].d.next = self.s_bytes.val();
            self.req.d.next = !self.req.q.val();
        }
        if self.sreset.val() {
            self.req.d.next = false;
            self.ack1.d.next = false;
            self.ack2.d.next = false;
        }
        // ---- Destination side.
        self.req1.d.next = self.req.q.val();
        self.req2.d.next = self.req1.q.val();
        self.ack.d.next = self.ack.q.val();
        if self.req2.q.val() != self.ack.q.val() {
            for i in 0..COUNTERS {
                self.out[i].d.next = self.hold[i].q.val();
            }
            self.ack.d.next = !self.ack.q.val();
        }
        if self.dreset.val() {
            self.req1.d.next = false;
            self.req2.d.next = false;
            self.ack.d.next = false;
            for i in 0..COUNTERS {
                self.out[i].d.next = self.zero.val();
            }
        }
        self.frames.next = self.out[0].q.val();
        self.ip.next = self.out[1].q.val();
        self.non_ip.next = self.out[2].q.val();
        self.malformed.next = self.out[3].q.val();
        self.bytes.next = self.out[4].q.val();
    }
}
