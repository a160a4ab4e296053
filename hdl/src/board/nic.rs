//! `BoardNic`: the VC709 NIC without its vendor IP: the four ports' front
//! ([`BoardFront`]: a parser and hop capture per port at its MAC clock, the crossing into the
//! core clock, the merge) in front of the same sketch half the one-port core has
//! ([`SketchCore`]), and the ports' counters crossed into the core clock for the statistics
//! registers. Everything the board top adds around it is vendor IP (the 10G MACs, XDMA) and
//! pins.
//!
//! # Datapath
//!
//! ```text
//! port p (MAC clock p) --> PortFront --> CdcFifo --\
//!                            |                     PortMerge (core clock, one record a clock)
//!                            |                        --> Ingress --> SketchCore (bus, c2h, ring)
//!                            |                        --> rec flop --^ (the hop records, beside)
//!                            `-> frames, ip, non-IP, malformed, bytes --> CounterSync --> sums --^
//! ```
//!
//! - **Packets**: the merge hands at most one IP record a core clock to the [`Ingress`]
//!   stage, so the flow sketches take every packet (four ports of minimum frames need a
//!   quarter of the 250 MHz core clock; `board::front`). The record's hop records wait one
//!   clock in a flop beside the ingress flop, so the sketch half gets them in the ingress
//!   clock, as the core's capture gives them.
//! - **Hops**: the per-switch half takes one hop a clock, and the four ports' records come
//!   in bursts (one from each port in consecutive clocks), so a packet's hop records wait in
//!   the serializer's ring of sixteen records. Under one hop a clock on average none is
//!   lost (the Verilator test: deep stacks on all four ports; with a ring of two, minimum
//!   frames of two hops already lose some). Four ports can bring more than one a clock
//!   (16-hop stacks in minimum frames on all four: 2.2 a core clock); then a packet that
//!   finds the ring full keeps its flow counts but its hops are refused whole and counted
//!   (`hop_lost`, LED 6). The epoch engine's drain is [`BOARD_DRAIN`], the ring's bound for
//!   a record a clock, so a swap never splits a packet's hops from its flow counters.
//! - **Statistics** (contract `regs::stats`): each port's five counters (frames, IP,
//!   non-IP, malformed, bytes) cross into the core clock together ([`CounterSync`]), and
//!   FRAMES, NON_IP, MALFORMED and BYTES are the four ports' sums, a clock later. SKETCHED is
//!   the merge's count, exactly the packets the sketches took. The sums lag the wire by a
//!   few clocks; with the ports quiet, SKETCHED + NON_IP + MALFORMED = FRAMES again.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `mac_clock$p`, `mac_reset$p` | in | 1 | port `p`'s MAC clock and its synchronous reset |
//! | `tdata$p`, `tkeep$p`, `tlast$p`, `tuser$p`, `tvalid$p`, `tready$p` | | | port `p`'s receive AXI-Stream (`tready` always 1) |
//! | `now$p` | in | 64 | port `p`'s time in ns, in its MAC clock |
//! | `overflow$p` | out | 32 | records port `p`'s crossing FIFO refused (never at line rate; MAC clock) |
//! | `core_clock`, `core_reset` | in | 1 | the core clock and its synchronous reset (held with the MAC resets) |
//! | `bus$...`, `c2h_*`, `ring_*` | | | the sketch half's register bus and card-to-host channels ([`SketchCore`]) |
//! | `mon_valid`, `mon_key`, `mon_epoch`, `mon_bank`, `mon_port` | out | 1, 104, 32, 1, 2 | a packet enters the sketches this clock (core clock), and the port it came in on |
//! | `sketch_idle`, `hop_lost` | out | 1 | nothing in the sketches; a packet's hops were refused since reset |
use super::counter_sync::CounterSync;
use super::front::BoardFront;
use super::port_merge::PORTS;
use super::record::HOPS_BITS;
use crate::nic::*;
use crate::parser::konst;
use crate::regs::{AxiLiteSlave, RegMap};
use crate::sketch::{BitSink, Sink};
use crate::sketch_core::{Ingress, SketchCore, BOARD_DRAIN};
use rust_hdl::prelude::*;
use smartnic_contract::geometry::{SuMaxGeometry, TowerGeometry};

/// Verilog of the board's NIC (block `board_nic`), built on a large stack.
pub fn nic_verilog() -> Result<String, String> {
    crate::core_top::big_stack(|| {
        let mut nic = Box::new(BoardNic::new(
            &TowerGeometry::sketchint_fpga(),
            &SuMaxGeometry::nic_default(),
            &RegMap::nic_default(),
        )?);
        crate::flow::to_verilog("board_nic", &mut *nic)
    })
}

/// The board's NIC (see the module docs).
#[derive(LogicBlock)]
pub struct BoardNic {
    pub mac_clock: [Signal<In, Clock>; PORTS],
    pub mac_reset: [Signal<In, Bit>; PORTS],
    pub tdata: [Signal<In, Bits<64>>; PORTS],
    pub tkeep: [Signal<In, Bits<8>>; PORTS],
    pub tlast: [Signal<In, Bit>; PORTS],
    pub tuser: [Signal<In, Bit>; PORTS],
    pub tvalid: [Signal<In, Bit>; PORTS],
    pub tready: [Signal<Out, Bit>; PORTS],
    pub now: [Signal<In, Bits<64>>; PORTS],
    pub overflow: [Signal<Out, Bits<32>>; PORTS],
    pub core_clock: Signal<In, Clock>,
    pub core_reset: Signal<In, Bit>,
    /// AXI4-Lite: the register file's bus, passed through.
    pub bus: AxiLiteSlave<REGS_A>,
    pub c2h_tdata: Signal<Out, Bits<256>>,
    pub c2h_tkeep: Signal<Out, Bits<32>>,
    pub c2h_tvalid: Signal<Out, Bit>,
    pub c2h_tlast: Signal<Out, Bit>,
    pub c2h_tready: Signal<In, Bit>,
    pub ring_tdata: Signal<Out, Bits<64>>,
    pub ring_tvalid: Signal<Out, Bit>,
    pub ring_tready: Signal<In, Bit>,
    pub mon_valid: Signal<Out, Bit>,
    pub mon_key: Signal<Out, Bits<104>>,
    pub mon_epoch: Signal<Out, Bits<32>>,
    pub mon_bank: Signal<Out, Bit>,
    pub mon_port: Signal<Out, Bits<2>>,
    pub sketch_idle: Signal<Out, Bit>,
    pub hop_lost: Signal<Out, Bit>,
    front: BoardFront,
    ingress: Ingress,
    rec: DFF<Bits<HOPS_BITS>>,
    port: DFF<Bits<2>>,
    sketch: SketchCore,
    sync: [CounterSync; PORTS],
    frames: DFF<Bits<64>>,
    non_ip: DFF<Bits<64>>,
    malformed: DFF<Bits<64>>,
    bytes: DFF<Bits<64>>,
    sketched: DFF<Bits<64>>,
    // The sketch half's outputs the board does not use (its tests read them on the core).
    sink_flags: [BitSink; 6],
    sink_len: Sink<32>,
    sink_est: [Sink<32>; 3],
    sink_ip: [Sink<64>; PORTS],
    sink_fill: [Sink<{ super::front::DEPTH_BITS + 1 }>; PORTS],
    sink_sc: Sink<2>,
    zero64: Constant<Bits<64>>,
}

impl BoardNic {
    /// The board's NIC for `tower` and `sumax` behind map `map` (checked by
    /// [`SketchCore::new`]), with the drain for merged ports.
    pub fn new(tower: &TowerGeometry, sumax: &SuMaxGeometry, map: &RegMap) -> Result<Self, String> {
        Ok(BoardNic {
            mac_clock: Default::default(),
            mac_reset: Default::default(),
            tdata: Default::default(),
            tkeep: Default::default(),
            tlast: Default::default(),
            tuser: Default::default(),
            tvalid: Default::default(),
            tready: Default::default(),
            now: Default::default(),
            overflow: Default::default(),
            core_clock: Default::default(),
            core_reset: Default::default(),
            bus: Default::default(),
            c2h_tdata: Default::default(),
            c2h_tkeep: Default::default(),
            c2h_tvalid: Default::default(),
            c2h_tlast: Default::default(),
            c2h_tready: Default::default(),
            ring_tdata: Default::default(),
            ring_tvalid: Default::default(),
            ring_tready: Default::default(),
            mon_valid: Default::default(),
            mon_key: Default::default(),
            mon_epoch: Default::default(),
            mon_bank: Default::default(),
            mon_port: Default::default(),
            sketch_idle: Default::default(),
            hop_lost: Default::default(),
            front: Default::default(),
            ingress: Ingress::new(sumax),
            rec: Default::default(),
            port: Default::default(),
            sketch: SketchCore::new(tower, sumax, map, BOARD_DRAIN)?,
            sync: std::array::from_fn(|_| Default::default()),
            frames: Default::default(),
            non_ip: Default::default(),
            malformed: Default::default(),
            bytes: Default::default(),
            sketched: Default::default(),
            sink_flags: Default::default(),
            sink_len: Default::default(),
            sink_est: Default::default(),
            sink_ip: Default::default(),
            sink_fill: Default::default(),
            sink_sc: Default::default(),
            zero64: konst!(0),
        })
    }
}

impl Logic for BoardNic {
    #[hdl_gen]
    fn update(&mut self) {
        // ---- The ports' front.
        for p in 0..PORTS {
            self.front.mac_clock[p].next = self.mac_clock[p].val();
            self.front.mac_reset[p].next = self.mac_reset[p].val();
            self.front.tdata[p].next = self.tdata[p].val();
            self.front.tkeep[p].next = self.tkeep[p].val();
            self.front.tlast[p].next = self.tlast[p].val();
            self.front.tuser[p].next = self.tuser[p].val();
            self.front.tvalid[p].next = self.tvalid[p].val();
            self.front.now[p].next = self.now[p].val();
            self.tready[p].next = self.front.tready[p].val();
            self.overflow[p].next = self.front.overflow[p].val();
            self.sink_fill[p].x.next = self.front.max_fill[p].val();
        }
        self.front.core_clock.next = self.core_clock.val();
        self.front.core_reset.next = self.core_reset.val();
        self.sink_len.x.next = self.front.m_len.val();
        self.sink_sc.x.next = self.front.m_sc.val();

        // ---- Ingress: the merged record (IP only), and its hops beside it.
        self.ingress.clock.next = self.core_clock.val();
        self.ingress.reset.next = self.core_reset.val();
        self.ingress.d_valid.next = self.front.m_valid.val();
        self.ingress.d_class.next = self.front.m_class.val();
        self.ingress.d_key.next = self.front.m_key.val();
        self.ingress.d_ts.next = self.front.m_ts.val();
        self.ingress.d_delay.next = self.front.m_delay.val();
        self.ingress.d_hops.next = self.front.m_hops.val();
        self.rec.clock.next = self.core_clock.val();
        self.rec.d.next = self.front.m_rec.val();
        self.port.clock.next = self.core_clock.val();
        self.port.d.next = self.front.m_port.val();

        // ---- The ports' counters into the core clock, and their sums.
        for p in 0..PORTS {
            self.sync[p].sclock.next = self.mac_clock[p].val();
            self.sync[p].sreset.next = self.mac_reset[p].val();
            self.sync[p].dclock.next = self.core_clock.val();
            self.sync[p].dreset.next = self.core_reset.val();
            self.sync[p].s_frames.next = self.front.frames[p].val();
            self.sync[p].s_ip.next = self.front.ip_packets[p].val();
            self.sync[p].s_non_ip.next = self.front.non_ip[p].val();
            self.sync[p].s_malformed.next = self.front.malformed[p].val();
            self.sync[p].s_bytes.next = self.front.bytes[p].val();
            self.sink_ip[p].x.next = self.sync[p].ip.val();
        }
        self.frames.clock.next = self.core_clock.val();
        self.non_ip.clock.next = self.core_clock.val();
        self.malformed.clock.next = self.core_clock.val();
        self.bytes.clock.next = self.core_clock.val();
        self.sketched.clock.next = self.core_clock.val();
        self.frames.d.next = self.sync[0].frames.val()
            + self.sync[1].frames.val()
            + self.sync[2].frames.val()
            + self.sync[3].frames.val();
        self.non_ip.d.next = self.sync[0].non_ip.val()
            + self.sync[1].non_ip.val()
            + self.sync[2].non_ip.val()
            + self.sync[3].non_ip.val();
        self.malformed.d.next = self.sync[0].malformed.val()
            + self.sync[1].malformed.val()
            + self.sync[2].malformed.val()
            + self.sync[3].malformed.val();
        self.bytes.d.next = self.sync[0].bytes.val()
            + self.sync[1].bytes.val()
            + self.sync[2].bytes.val()
            + self.sync[3].bytes.val();
        self.sketched.d.next = self.front.accepted[0].val()
            + self.front.accepted[1].val()
            + self.front.accepted[2].val()
            + self.front.accepted[3].val();
        if self.core_reset.val() {
            self.frames.d.next = self.zero64.val();
            self.non_ip.d.next = self.zero64.val();
            self.malformed.d.next = self.zero64.val();
            self.bytes.d.next = self.zero64.val();
            self.sketched.d.next = self.zero64.val();
        }

        // ---- The sketch half.
        self.sketch.clock.next = self.core_clock.val();
        self.sketch.reset.next = self.core_reset.val();
        self.sketch.i_valid.next = self.ingress.i_valid.val();
        self.sketch.i_key.next = self.ingress.i_key.val();
        self.sketch.i_t.next = self.ingress.i_t.val();
        self.sketch.i_delay.next = self.ingress.i_delay.val();
        self.sketch.i_hops.next = self.ingress.i_hops.val();
        self.sketch.i_rec.next = self.rec.q.val();
        self.sketch.frames.next = self.frames.q.val();
        self.sketch.sketched.next = self.sketched.q.val();
        self.sketch.non_ip.next = self.non_ip.q.val();
        self.sketch.malformed.next = self.malformed.q.val();
        self.sketch.bytes.next = self.bytes.q.val();
        AxiLiteSlave::<REGS_A>::link(&mut self.bus, &mut self.sketch.bus);
        self.sketch.c2h_tready.next = self.c2h_tready.val();
        self.sketch.ring_tready.next = self.ring_tready.val();
        self.c2h_tdata.next = self.sketch.c2h_tdata.val();
        self.c2h_tkeep.next = self.sketch.c2h_tkeep.val();
        self.c2h_tvalid.next = self.sketch.c2h_tvalid.val();
        self.c2h_tlast.next = self.sketch.c2h_tlast.val();
        self.ring_tdata.next = self.sketch.ring_tdata.val();
        self.ring_tvalid.next = self.sketch.ring_tvalid.val();
        self.mon_valid.next = self.sketch.mon_valid.val();
        self.mon_key.next = self.sketch.mon_key.val();
        self.mon_epoch.next = self.sketch.mon_epoch.val();
        self.mon_bank.next = self.sketch.mon_bank.val();
        self.mon_port.next = self.port.q.val();
        self.sketch_idle.next = self.sketch.sketch_idle.val();
        self.hop_lost.next = self.sketch.hop_lost.val();
        self.sink_flags[0].x.next = self.sketch.est_valid.val();
        self.sink_flags[1].x.next = self.sketch.est_inf.val();
        self.sink_flags[2].x.next = self.sketch.sm_done.val();
        self.sink_flags[3].x.next = self.sketch.sm_size_inf.val();
        self.sink_flags[4].x.next = self.sketch.sm_delay_inf.val();
        // The sketches take a record every clock (their pipelines forward).
        self.sink_flags[5].x.next = self.sketch.in_ready.val();
        self.sink_est[0].x.next = self.sketch.estimate.val();
        self.sink_est[1].x.next = self.sketch.sm_size.val();
        self.sink_est[2].x.next = self.sketch.sm_delay.val();
    }
}
