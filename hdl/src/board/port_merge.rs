//! `PortMerge<W>`: four record streams (the heads of the ports' crossing FIFOs) into one, at
//! most one record a core clock, round-robin.
//!
//! Each clock the first port with a head after the last one served (rotating priority)
//! gets `take`, and its head is registered onto the output. A port is served again within
//! four clocks whenever it has a head, so no port starves; records of one port leave in
//! their FIFO's order, so nothing is reordered within a port, and nothing is dropped here
//! (the output has no backpressure: the sketches take a record every clock).
//!
//! Why one a clock is enough for packets: four 10G ports of minimum frames are 4 x 14.88
//! Mpps = 59.5M records/s, a quarter of the 250 MHz core clock; the records that cross are
//! IP frames only, at least 34 bytes (5 beats) even on a bus with no gaps, so four ports
//! bring at most 4 x 156.25 / 5 = 125M records/s.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | the core clock; reset clears the output valid, the priority and the counters |
//! | `in_valid$p`, `in_data$p` | in | 1, `W` | port `p`'s head |
//! | `take$p` | out | 1 | port `p`'s head leaves at this edge |
//! | `m_valid`, `m_port`, `m_data` | out | 1, 2, `W` | the merged record and its port, registered |
//! | `accepted$p` | out | 64 | records taken from port `p` since reset |
use crate::parser::konst;
use rust_hdl::prelude::*;

/// Ports merged.
pub const PORTS: usize = 4;

/// The merge (see the module docs).
#[derive(LogicBlock)]
pub struct PortMerge<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub in_valid: [Signal<In, Bit>; PORTS],
    pub in_data: [Signal<In, Bits<W>>; PORTS],
    pub take: [Signal<Out, Bit>; PORTS],
    pub m_valid: Signal<Out, Bit>,
    pub m_port: Signal<Out, Bits<2>>,
    pub m_data: Signal<Out, Bits<W>>,
    pub accepted: [Signal<Out, Bits<64>>; PORTS],
    /// The port served last: the next search starts after it.
    last: DFF<Bits<2>>,
    o_valid: DFF<Bit>,
    o_port: DFF<Bits<2>>,
    o_data: DFF<Bits<W>>,
    n_acc: [DFF<Bits<64>>; PORTS],
    any: Signal<Local, Bit>,
    sel: Signal<Local, Bits<2>>,
    grant: [Signal<Local, Bit>; PORTS],
    port_c: [Constant<Bits<2>>; PORTS],
    one64: Constant<Bits<64>>,
    zero64: Constant<Bits<64>>,
}

impl<const W: usize> Default for PortMerge<W> {
    fn default() -> Self {
        PortMerge {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_data: std::array::from_fn(|_| Default::default()),
            take: Default::default(),
            m_valid: Default::default(),
            m_port: Default::default(),
            m_data: Default::default(),
            accepted: Default::default(),
            last: Default::default(),
            o_valid: Default::default(),
            o_port: Default::default(),
            o_data: Default::default(),
            n_acc: Default::default(),
            any: Default::default(),
            sel: Default::default(),
            grant: Default::default(),
            port_c: std::array::from_fn(|p| konst!(p)),
            one64: konst!(1),
            zero64: konst!(0),
        }
    }
}

impl<const W: usize> Logic for PortMerge<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, last, o_valid, o_port, o_data);
        for p in 0..PORTS {
            self.n_acc[p].clock.next = self.clock.val();
            self.n_acc[p].d.next = self.n_acc[p].q.val();
        }
        // ---- Rotating priority: the first port with a head after `last`.
        self.any.next =
            self.in_valid[0].val() | self.in_valid[1].val() | self.in_valid[2].val() | self.in_valid[3].val();
        self.sel.next = self.last.q.val();
        for l in 0..PORTS {
            if self.last.q.val() == self.port_c[l].val() {
                if self.in_valid[(l + 1) % 4].val() {
                    self.sel.next = self.port_c[(l + 1) % 4].val();
                } else if self.in_valid[(l + 2) % 4].val() {
                    self.sel.next = self.port_c[(l + 2) % 4].val();
                } else if self.in_valid[(l + 3) % 4].val() {
                    self.sel.next = self.port_c[(l + 3) % 4].val();
                }
            }
        }
        for p in 0..PORTS {
            self.grant[p].next = self.any.val() & (self.sel.val() == self.port_c[p].val());
            self.take[p].next = self.grant[p].val();
            if self.grant[p].val() {
                self.n_acc[p].d.next = self.n_acc[p].q.val() + self.one64.val();
            }
        }
        // ---- The granted head, registered.
        self.o_valid.d.next = self.any.val() & !self.reset.val();
        self.o_port.d.next = self.sel.val();
        self.o_data.d.next = self.in_data[0].val();
        for p in 1..PORTS {
            if self.sel.val() == self.port_c[p].val() {
                self.o_data.d.next = self.in_data[p].val();
            }
        }
        if self.any.val() {
            self.last.d.next = self.sel.val();
        }
        if self.reset.val() {
            self.last.d.next = self.port_c[3].val();
            for p in 0..PORTS {
                self.n_acc[p].d.next = self.zero64.val();
            }
        }
        self.m_valid.next = self.o_valid.q.val();
        self.m_port.next = self.o_port.q.val();
        self.m_data.next = self.o_data.q.val();
        for p in 0..PORTS {
            self.accepted[p].next = self.n_acc[p].q.val();
        }
    }
}
