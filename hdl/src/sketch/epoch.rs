//! `EpochEngine<CA>`: the epoch state of the two-bank sketches (contract
//! `smartnic_contract::regs::epoch`): which bank packets are tagged with at ingress, the
//! swap with its drain, the clear sweep of the idle bank, EPOCH, SEQUENCE and the per-epoch
//! packet counters.
//!
//! # Semantics
//!
//! - **Active bank** = `epoch & 1`. A packet whose `valid` is high in cycle `c` belongs to
//!   `active_bank` as seen in cycle `c` (the sketch tags it with that bit, which travels
//!   with the packet) and is counted in `active_packets` at once (counted at ingress, so the
//!   counts of a finished epoch are final the moment it ends).
//! - **Swap** (`swap` pulse in cycle `s`, nothing pending): from cycle `s + 1` the other bank
//!   is active, `epoch` is one higher, `idle_packets` = the finished epoch's count
//!   (including a packet in cycle `s`) and `active_packets` restarts at 0. The packets of
//!   the old epoch still in the pipeline land in the (now idle) old bank: the sketch
//!   pipelines have a fixed latency, so a counter of `drain` clocks (= the pipeline's
//!   [`super::tower::LATENCY`]: the last old packet, in cycle `s`, writes its last counter
//!   in cycle `s + drain - 1`) covers them. `swap_pending` is high from cycle `s + 1` to
//!   `s + drain` and `sequence_no` increments when the drain completes (visible from
//!   `s + drain + 1`, the first clock the idle bank is complete and readable).
//! - **Clear** (`clear` pulse, nothing pending): a sweep writes zero to address `a` of the
//!   idle bank of every array in cycle `start + a` for `a = 0 .. 2^CA - 1` (`CA` = the
//!   widest array's address; a shallower array takes the low bits of `clr_addr` and is
//!   simply zeroed several times). `clear_busy` is high from the clock after the pulse
//!   until the last zero is in the RAM; at the end `sequence_no` increments and
//!   `idle_packets` becomes 0 (the idle bank holds no packets any more).
//! - **Overlaps** (the driver never causes them, but the hardware stays consistent): a
//!   swap pulse while `swap_pending` and a clear pulse while `clear_busy` are ignored; a
//!   clear requested during a drain waits for the drain (it then clears the bank just
//!   drained) and a swap requested during a clear waits for the clear to finish (so no
//!   packet ever enters a bank being cleared), with `swap_pending` / `clear_busy` high
//!   while waiting. Both pulses in the same cycle: the clear runs first (of the bank that
//!   was idle), then the swap. So `swap_pending` low means every packet of the idle bank's
//!   epoch has landed, and `clear_busy` low means no sweep is writing.
//! - `reset` (synchronous): epoch 0, bank 0, sequence_no 0, counters 0, nothing pending (the
//!   RAMs keep their contents: clear both banks after a reset if it matters).
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | |
//! | `valid` | in | 1 | a packet enters the sketches this clock |
//! | `swap`, `clear` | in | 1 | one-clock pulses from the CONTROL register (SWAP, CLEAR bits) |
//! | `active_bank` | out | 1 | bank of a packet entering this clock (= `epoch & 1`) |
//! | `swap_pending`, `clear_busy` | out | 1 | STATUS bits 0 and 1 |
//! | `epoch`, `sequence_no` | out | 32 | EPOCH, SEQUENCE (wrapping; `sequence` is a SystemVerilog keyword) |
//! | `active_packets`, `idle_packets` | out | 64 | ACTIVE_PACKETS, IDLE_PACKETS |
//! | `clr`, `clr_bank`, `clr_addr` | out | 1, 1, `CA` | the clear sweep's write this clock (to every array's `clr` port) |
//!
//! All outputs are register outputs.
use rust_hdl::prelude::*;

/// The epoch engine (see the module docs). `CA`: address bits of the widest array.
#[derive(LogicBlock)]
pub struct EpochEngine<const CA: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub valid: Signal<In, Bit>,
    pub swap: Signal<In, Bit>,
    pub clear: Signal<In, Bit>,
    pub active_bank: Signal<Out, Bit>,
    pub swap_pending: Signal<Out, Bit>,
    pub clear_busy: Signal<Out, Bit>,
    pub epoch: Signal<Out, Bits<32>>,
    pub sequence_no: Signal<Out, Bits<32>>,
    pub active_packets: Signal<Out, Bits<64>>,
    pub idle_packets: Signal<Out, Bits<64>>,
    pub clr: Signal<Out, Bit>,
    pub clr_bank: Signal<Out, Bit>,
    pub clr_addr: Signal<Out, Bits<CA>>,
    bank: DFF<Bit>,
    ep: DFF<Bits<32>>,
    seq: DFF<Bits<32>>,
    act: DFF<Bits<64>>,
    idle: DFF<Bits<64>>,
    swap_req: DFF<Bit>,
    clear_req: DFF<Bit>,
    drain: DFF<Bits<DRAIN_BITS>>,
    clearing: DFF<Bit>,
    caddr: DFF<Bits<CA>>,
    draining: Signal<Local, Bit>,
    want_swap: Signal<Local, Bit>,
    want_clear: Signal<Local, Bit>,
    start_clear: Signal<Local, Bit>,
    flip: Signal<Local, Bit>,
    inc: Signal<Local, Bits<64>>,
    drain_len: Constant<Bits<DRAIN_BITS>>,
    drain_one: Constant<Bits<DRAIN_BITS>>,
    zero_drain: Constant<Bits<DRAIN_BITS>>,
    last: Constant<Bits<CA>>,
    one_ca: Constant<Bits<CA>>,
    one32: Constant<Bits<32>>,
    one64: Constant<Bits<64>>,
    zero64: Constant<Bits<64>>,
    zero32: Constant<Bits<32>>,
    zero_ca: Constant<Bits<CA>>,
}

/// Width of the drain counter.
pub const DRAIN_BITS: usize = 10;
/// The longest drain the counter holds.
pub const MAX_DRAIN: usize = (1 << DRAIN_BITS) - 1;

impl<const CA: usize> EpochEngine<CA> {
    /// `drain`: clocks from a packet's ingress cycle to its last write, inclusive (the
    /// sketches' latency), 1..=[`MAX_DRAIN`].
    pub fn new(drain: usize) -> Self {
        assert!((1..=MAX_DRAIN).contains(&drain), "drain {drain} must be 1..={MAX_DRAIN}");
        assert!((1..=24).contains(&CA), "clear address width CA={CA} must be 1..=24");
        EpochEngine {
            clock: Default::default(),
            reset: Default::default(),
            valid: Default::default(),
            swap: Default::default(),
            clear: Default::default(),
            active_bank: Default::default(),
            swap_pending: Default::default(),
            clear_busy: Default::default(),
            epoch: Default::default(),
            sequence_no: Default::default(),
            active_packets: Default::default(),
            idle_packets: Default::default(),
            clr: Default::default(),
            clr_bank: Default::default(),
            clr_addr: Default::default(),
            bank: Default::default(),
            ep: Default::default(),
            seq: Default::default(),
            act: Default::default(),
            idle: Default::default(),
            swap_req: Default::default(),
            clear_req: Default::default(),
            drain: Default::default(),
            clearing: Default::default(),
            caddr: Default::default(),
            draining: Default::default(),
            want_swap: Default::default(),
            want_clear: Default::default(),
            start_clear: Default::default(),
            flip: Default::default(),
            inc: Default::default(),
            drain_len: Constant::new((drain as u64).to_bits()),
            drain_one: Constant::new(1u64.to_bits()),
            zero_drain: Constant::new(0u64.to_bits()),
            last: Constant::new(((1u64 << CA) - 1).to_bits()),
            one_ca: Constant::new(1u64.to_bits()),
            one32: Constant::new(1u64.to_bits()),
            one64: Constant::new(1u64.to_bits()),
            zero64: Constant::new(0u64.to_bits()),
            zero32: Constant::new(0u64.to_bits()),
            zero_ca: Constant::new(0u64.to_bits()),
        }
    }
}

impl<const CA: usize> Logic for EpochEngine<CA> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, bank, ep, seq, act, idle, swap_req, clear_req, drain, clearing, caddr);
        self.draining.next = self.drain.q.val() != self.zero_drain.val();
        // Requests: a pulse is taken unless the same operation is already pending.
        self.want_swap.next = self.swap_req.q.val() | (self.swap.val() & !self.draining.val());
        self.want_clear.next = self.clear_req.q.val() | (self.clear.val() & !self.clearing.q.val());
        self.start_clear.next = self.want_clear.val() & !self.draining.val() & !self.clearing.q.val();
        self.flip.next =
            self.want_swap.val() & !self.draining.val() & !self.clearing.q.val() & !self.start_clear.val();
        self.swap_req.d.next = self.want_swap.val() & !self.flip.val();
        self.clear_req.d.next = self.want_clear.val() & !self.start_clear.val();
        // Packet counters (the packet of this clock belongs to the bank active now).
        if self.valid.val() {
            self.inc.next = self.one64.val();
        } else {
            self.inc.next = self.zero64.val();
        }
        if self.flip.val() {
            self.bank.d.next = !self.bank.q.val();
            self.ep.d.next = self.ep.q.val() + self.one32.val();
            self.drain.d.next = self.drain_len.val();
            self.idle.d.next = self.act.q.val() + self.inc.val();
            self.act.d.next = self.zero64.val();
        } else {
            self.act.d.next = self.act.q.val() + self.inc.val();
            if self.draining.val() {
                self.drain.d.next = self.drain.q.val() - self.drain_one.val();
            }
        }
        // The drain's last clock completes the swap.
        if self.drain.q.val() == self.drain_one.val() {
            self.seq.d.next = self.seq.q.val() + self.one32.val();
        }
        // The clear sweep.
        if self.start_clear.val() {
            self.clearing.d.next = true;
            self.caddr.d.next = self.zero_ca.val();
        }
        if self.clearing.q.val() {
            self.caddr.d.next = self.caddr.q.val() + self.one_ca.val();
            if self.caddr.q.val() == self.last.val() {
                self.clearing.d.next = false;
                self.seq.d.next = self.seq.q.val() + self.one32.val();
                self.idle.d.next = self.zero64.val();
            }
        }
        if self.reset.val() {
            self.bank.d.next = false;
            self.ep.d.next = self.zero32.val();
            self.seq.d.next = self.zero32.val();
            self.act.d.next = self.zero64.val();
            self.idle.d.next = self.zero64.val();
            self.swap_req.d.next = false;
            self.clear_req.d.next = false;
            self.drain.d.next = self.zero_drain.val();
            self.clearing.d.next = false;
            self.caddr.d.next = self.zero_ca.val();
        }
        self.active_bank.next = self.bank.q.val();
        self.swap_pending.next = self.swap_req.q.val() | self.draining.val();
        self.clear_busy.next = self.clear_req.q.val() | self.clearing.q.val();
        self.epoch.next = self.ep.q.val();
        self.sequence_no.next = self.seq.q.val();
        self.active_packets.next = self.act.q.val();
        self.idle_packets.next = self.idle.q.val();
        self.clr.next = self.clearing.q.val();
        self.clr_bank.next = !self.bank.q.val();
        self.clr_addr.next = self.caddr.q.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_checks_and_connects() {
        let mut e = EpochEngine::<4>::new(8);
        e.connect_all();
        assert!(check_all(&e).is_ok());
    }
}
