//! `BoardFront`: the VC709's four SFP+ ports into the core clock. Per port a
//! [`PortFront`] (parser + hop capture at the port's MAC clock) writes its IP records into a
//! [`CdcFifo`]; a [`PortMerge`] in the core clock takes the four FIFOs' heads round-robin,
//! at most one record a clock. [`super::nic::BoardNic`] puts the sketch half behind it.
//!
//! # Clocks and rates
//! - MAC clocks: 156.25 MHz each (the 10G MACs' 64-bit AXI-Stream), unrelated to each other.
//! - Core clock: 250 MHz (XDMA's AXI clock at Gen3 x8, 256 bits: no crossing between the
//!   core and XDMA).
//! - Only IP records cross: non-IP and malformed frames only need the port's counters,
//!   which stay in the MAC clock. So a port writes at most one record per 5 MAC clocks
//!   (an IP frame is at least 14 + 20 bytes = 5 beats), whatever the traffic, including
//!   runts back to back.
//! - Packets: four ports bring at most 4 x 156.25 / 5 = 125M records/s (59.5M/s at 10G line
//!   rate of minimum frames), half the core clock's 250M.
//! - Hops: a 16-hop stack in its minimum frame (144 bytes) is 18 beats, so four ports can
//!   carry 4 x 16 / 18 x 156.25M = 555M hops/s, 2.2 a core clock, against one hop insertion a
//!   clock in the per-switch half. That is measured by the Verilator test, not solved here.
//!
//! # Why the FIFOs never overflow at line rate ([`DEPTH`] = 16)
//! A record holds its write-side slot from its write until the write side sees the read
//! pointer that passed it: at most two core clocks until the reader sees it (`wq1`, `wq2`),
//! three more while the merge serves the other ports (it serves a port with a head within
//! four clocks), the clock that takes it, then at most two MAC clocks for the read pointer
//! to come back (`rq1`, `rq2`): 6 core + 2 MAC clocks, 37 ns at 250 / 156.25 MHz, 6 MAC
//! clocks, in which a port writes at most two records (one per 5 MAC clocks). The merge
//! never falls behind: a port brings a record at most every 5 MAC clocks (8 core clocks)
//! and is served within 4. With a core clock as slow as the MAC clock the slot time is 8
//! MAC clocks: still two records. Sixteen slots cost the same LUT RAM as four (RAM32M are
//! 32 deep), so the margin is free; the Verilator test measures the high-water mark.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `mac_clock$p`, `mac_reset$p` | in | 1 | port `p`'s MAC clock and its synchronous reset |
//! | `tdata$p`, `tkeep$p`, `tlast$p`, `tuser$p`, `tvalid$p` | in | 64, 8, 1, 1, 1 | port `p`'s receive AXI-Stream |
//! | `tready$p` | out | 1 | always 1 |
//! | `now$p` | in | 64 | port `p`'s time in ns, in its MAC clock |
//! | `frames$p`, `ip_packets$p`, `non_ip$p`, `malformed$p`, `bytes$p` | out | 64 | port `p`'s parser counters and frame bytes (MAC clock) |
//! | `overflow$p`, `max_fill$p` | out | 32, 5 | port `p`'s FIFO: records refused, high-water mark (MAC clock) |
//! | `core_clock`, `core_reset` | in | 1 | the core clock and its synchronous reset (held with the MAC resets) |
//! | `m_valid`, `m_port` | out | 1, 2 | a merged record this clock, and its port |
//! | `m_class`, `m_key`, `m_len`, `m_ts`, `m_delay`, `m_hops`, `m_sc` | out | 2, 104, 32, 64, 64, 5, 2 | its descriptor (the parser's `d_*`) |
//! | `m_rec` | out | 768 | its 16 hop records (`per_switch::hop_capture`'s `rec`) |
//! | `accepted$p` | out | 64 | records merged from port `p` (core clock) |
use super::cdc_fifo::CdcFifo;
use super::port_front::PortFront;
use super::port_merge::{PortMerge, PORTS};
use super::record::*;
use crate::hash::KEY_BITS;
use crate::parser::{konst, CLASS_IP};
use rust_hdl::prelude::*;

/// Address bits of each port's FIFO.
pub const DEPTH_BITS: usize = 4;
/// Records each port's FIFO holds.
pub const DEPTH: usize = 1 << DEPTH_BITS;
/// The most records a port's FIFO holds at line rate, by the bound in the module docs (the
/// Verilator test checks its high-water marks against it).
pub const MAX_FILL: usize = 2;
/// The records' FIFO: [`DEPTH`] records of [`RECORD_BITS`].
pub type RecordFifo = CdcFifo<RECORD_BITS, DEPTH_BITS, { DEPTH_BITS + 1 }>;

/// Verilog of the four ports' front (block `board_front`), built on a large stack (the
/// struct with four parsers is more than a test thread's 2 MB stack).
pub fn nic_verilog() -> Result<String, String> {
    crate::core_top::big_stack(|| crate::flow::to_verilog("board_front", &mut *Box::<BoardFront>::default()))
}

/// The four ports' front (see the module docs).
#[derive(LogicBlock)]
pub struct BoardFront {
    pub mac_clock: [Signal<In, Clock>; PORTS],
    pub mac_reset: [Signal<In, Bit>; PORTS],
    pub tdata: [Signal<In, Bits<64>>; PORTS],
    pub tkeep: [Signal<In, Bits<8>>; PORTS],
    pub tlast: [Signal<In, Bit>; PORTS],
    pub tuser: [Signal<In, Bit>; PORTS],
    pub tvalid: [Signal<In, Bit>; PORTS],
    pub tready: [Signal<Out, Bit>; PORTS],
    pub now: [Signal<In, Bits<64>>; PORTS],
    pub frames: [Signal<Out, Bits<64>>; PORTS],
    pub ip_packets: [Signal<Out, Bits<64>>; PORTS],
    pub non_ip: [Signal<Out, Bits<64>>; PORTS],
    pub malformed: [Signal<Out, Bits<64>>; PORTS],
    pub bytes: [Signal<Out, Bits<64>>; PORTS],
    pub overflow: [Signal<Out, Bits<32>>; PORTS],
    pub max_fill: [Signal<Out, Bits<{ DEPTH_BITS + 1 }>>; PORTS],
    pub core_clock: Signal<In, Clock>,
    pub core_reset: Signal<In, Bit>,
    pub m_valid: Signal<Out, Bit>,
    pub m_port: Signal<Out, Bits<2>>,
    pub m_class: Signal<Out, Bits<CLASS_BITS>>,
    pub m_key: Signal<Out, Bits<KEY_BITS>>,
    pub m_len: Signal<Out, Bits<LEN_BITS>>,
    pub m_ts: Signal<Out, Bits<TIME_BITS>>,
    pub m_delay: Signal<Out, Bits<TIME_BITS>>,
    pub m_hops: Signal<Out, Bits<NHOPS_BITS>>,
    pub m_sc: Signal<Out, Bits<SC_BITS>>,
    pub m_rec: Signal<Out, Bits<HOPS_BITS>>,
    pub accepted: [Signal<Out, Bits<64>>; PORTS],
    front: [PortFront; PORTS],
    fifo: [RecordFifo; PORTS],
    merge: PortMerge<RECORD_BITS>,
    at_nhops: Constant<Bits<AT_BITS>>,
    at_sc: Constant<Bits<AT_BITS>>,
    at_class: Constant<Bits<AT_BITS>>,
    at_len: Constant<Bits<AT_BITS>>,
    at_delay: Constant<Bits<AT_BITS>>,
    at_ts: Constant<Bits<AT_BITS>>,
    at_key: Constant<Bits<AT_BITS>>,
    class_ip: Constant<Bits<CLASS_BITS>>,
}

impl Default for BoardFront {
    fn default() -> Self {
        BoardFront {
            mac_clock: Default::default(),
            mac_reset: Default::default(),
            tdata: Default::default(),
            tkeep: Default::default(),
            tlast: Default::default(),
            tuser: Default::default(),
            tvalid: Default::default(),
            tready: Default::default(),
            now: Default::default(),
            frames: Default::default(),
            ip_packets: Default::default(),
            non_ip: Default::default(),
            malformed: Default::default(),
            bytes: Default::default(),
            overflow: Default::default(),
            max_fill: Default::default(),
            core_clock: Default::default(),
            core_reset: Default::default(),
            m_valid: Default::default(),
            m_port: Default::default(),
            m_class: Default::default(),
            m_key: Default::default(),
            m_len: Default::default(),
            m_ts: Default::default(),
            m_delay: Default::default(),
            m_hops: Default::default(),
            m_sc: Default::default(),
            m_rec: Default::default(),
            accepted: Default::default(),
            front: std::array::from_fn(|_| Default::default()),
            fifo: std::array::from_fn(|_| Default::default()),
            merge: Default::default(),
            at_nhops: konst!(NHOPS_AT),
            at_sc: konst!(SC_AT),
            at_class: konst!(CLASS_AT),
            at_len: konst!(LEN_AT),
            at_delay: konst!(DELAY_AT),
            at_ts: konst!(TS_AT),
            at_key: konst!(KEY_AT),
            class_ip: konst!(CLASS_IP),
        }
    }
}

impl Logic for BoardFront {
    #[hdl_gen]
    fn update(&mut self) {
        for p in 0..PORTS {
            // ---- Port p at its MAC clock: parser + hop capture -> the FIFO's write side.
            self.front[p].clock.next = self.mac_clock[p].val();
            self.front[p].reset.next = self.mac_reset[p].val();
            self.front[p].tdata.next = self.tdata[p].val();
            self.front[p].tkeep.next = self.tkeep[p].val();
            self.front[p].tlast.next = self.tlast[p].val();
            self.front[p].tuser.next = self.tuser[p].val();
            self.front[p].tvalid.next = self.tvalid[p].val();
            self.front[p].now.next = self.now[p].val();
            self.tready[p].next = self.front[p].tready.val();
            self.frames[p].next = self.front[p].frames.val();
            self.ip_packets[p].next = self.front[p].ip_packets.val();
            self.non_ip[p].next = self.front[p].non_ip.val();
            self.malformed[p].next = self.front[p].malformed.val();
            self.bytes[p].next = self.front[p].bytes.val();
            self.fifo[p].wclock.next = self.mac_clock[p].val();
            self.fifo[p].wreset.next = self.mac_reset[p].val();
            self.fifo[p].write.next = self.front[p].r_valid.val()
                & (self.front[p].r_data.val().get_bits::<CLASS_BITS>(self.at_class.val().index())
                    == self.class_ip.val());
            self.fifo[p].wdata.next = self.front[p].r_data.val();
            self.overflow[p].next = self.fifo[p].overflow.val();
            self.max_fill[p].next = self.fifo[p].max_fill.val();
            // ---- The FIFO's read side at the core clock, into the merge.
            self.fifo[p].rclock.next = self.core_clock.val();
            self.fifo[p].rreset.next = self.core_reset.val();
            self.merge.in_valid[p].next = self.fifo[p].h_valid.val();
            self.merge.in_data[p].next = self.fifo[p].h_data.val();
            self.fifo[p].take.next = self.merge.take[p].val();
            self.accepted[p].next = self.merge.accepted[p].val();
        }
        self.merge.clock.next = self.core_clock.val();
        self.merge.reset.next = self.core_reset.val();

        // ---- The merged record, unpacked.
        self.m_valid.next = self.merge.m_valid.val();
        self.m_port.next = self.merge.m_port.val();
        self.m_rec.next = self.merge.m_data.val().get_bits::<HOPS_BITS>(0);
        self.m_hops.next = self.merge.m_data.val().get_bits::<NHOPS_BITS>(self.at_nhops.val().index());
        self.m_sc.next = self.merge.m_data.val().get_bits::<SC_BITS>(self.at_sc.val().index());
        self.m_class.next = self.merge.m_data.val().get_bits::<CLASS_BITS>(self.at_class.val().index());
        self.m_len.next = self.merge.m_data.val().get_bits::<LEN_BITS>(self.at_len.val().index());
        self.m_delay.next = self.merge.m_data.val().get_bits::<TIME_BITS>(self.at_delay.val().index());
        self.m_ts.next = self.merge.m_data.val().get_bits::<TIME_BITS>(self.at_ts.val().index());
        self.m_key.next = self.merge.m_data.val().get_bits::<KEY_BITS>(self.at_key.val().index());
    }
}
