//! `BoardLogic`: everything of ours on the VC709 (block `board_logic`), between the vendor
//! IP the board top instantiates ([`super::top`]): the NIC ([`BoardNic`]) on the four 10G
//! MACs' receive streams and XDMA's AXI4-Lite master, its two card-to-host streams at
//! XDMA's 256 bits (the readout stream is written 256 bits wide; the record ring is
//! widened by [`AxisUpsize`]), the ports' shared time ([`NsClock`]), the Si5324
//! bring-up ([`Si5324Init`]) and the resets, LEDs and buttons.
//!
//! # Clocks and resets
//! - **Core clock**: XDMA's `axi_aclk` (250 MHz at Gen3 x8, 256 bits): the register bus and
//!   both card-to-host channels are in it, so nothing crosses between the NIC and XDMA.
//! - **MAC clock**: the 10G subsystem's `coreclk_out` (156.25 MHz), shared by the four
//!   ports' receive streams; the NIC crosses from it into the core clock.
//! - **System clock**: the board's 200 MHz oscillator, for the Si5324 bring-up, which must
//!   run before the SFP+ transceivers (and so the MAC clock) can lock.
//! - **Resets**: the CPU_RESET button, XDMA's `axi_aresetn` and the 10G subsystem's datapath
//!   reset, any of them, reset the NIC on both of its sides (each side through two flops of
//!   its own clock, so the two are held together, as the crossing FIFOs need). The Si5324
//!   bring-up is reset by the button alone: it must not wait for PCIe.
//!
//! # LEDs and buttons
//!
//! | LED | on while |
//! |---|---|
//! | 0 | the PCIe link is up |
//! | 1..4 | SFP+ port 0..3's 10GBASE-R block lock |
//! | 5 | the Si5324 is programmed |
//! | 6 | the Si5324 bring-up failed (a NACK or a stuck bus), or a packet's hops were refused |
//! | 7 | the active epoch is odd (it blinks with every swap) |
//!
//! The centre button (`btn$4`) lights every LED (a lamp test); the other four are not used.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `sys_clock`, `cpu_reset` | in | 1 | the 200 MHz system clock, the CPU_RESET button (active high) |
//! | `mac_clock`, `mac_areset` | in | 1 | the MACs' clock, the 10G subsystem's datapath reset |
//! | `rx_tdata$p`, `rx_tkeep$p`, `rx_tlast$p`, `rx_tuser$p`, `rx_tvalid$p` | in | 64, 8, 1, 1, 1 | port `p`'s receive stream (no `tready`: a MAC cannot be held) |
//! | `block_lock$p` | in | 1 | port `p`'s PCS block lock |
//! | `core_clock`, `core_aresetn`, `link_up` | in | 1 | XDMA's `axi_aclk`, `axi_aresetn`, `user_lnk_up` |
//! | `bus$...` | | | the register file's AXI4-Lite slave (22-bit address) |
//! | `c2h$c_tdata`, `c2h$c_tkeep`, `c2h$c_tlast`, `c2h$c_tvalid`, `c2h$c_tready` | | 256, 32, 1, 1, 1 | card-to-host channel `c` (0: the readout stream, 1: the record ring) |
//! | `scl_low`, `sda_low`, `scl_in`, `sda_in`, `i2c_rst_n` | | 1 | the I2C bus (open drain) and the mux's and Si5324's reset |
//! | `eth_reset` | out | 1 | the 10G subsystem's reset: held until the Si5324 is programmed (its reference clock is not 156.25 MHz before) |
//! | `btn$i`, `led$i` | in, out | 1 | the five buttons, the eight LEDs |
//! | `mon_valid`, `mon_key`, `mon_epoch`, `mon_port` | out | 1, 104, 32, 2 | test taps (core clock): a packet entering the sketches, its key, epoch and port; unconnected in the board top |
//! | `now` | out | 64 | test tap (MAC clock): the ports' time in ns, which each parser samples with a frame's first beat; unconnected in the board top |
use super::axis_upsize::AxisUpsize;
use super::nic::BoardNic;
use super::ns_clock::NsClock;
use super::port_merge::PORTS;
use super::si5324_init::{self, Si5324Init};
use crate::nic::REGS_A;
use crate::regs::{AxiLiteSlave, RegMap};
use crate::sketch::{BitSink, Sink};
use rust_hdl::prelude::*;
use smartnic_contract::geometry::{SuMaxGeometry, TowerGeometry};
use smartnic_contract::wire::record::{INFLATED_LEN, WORD};

/// Card-to-host channels: the readout stream and the record ring.
pub const C2H: usize = 2;

// The record ring has no `tlast`, so its upsizer sends a beat only when four ring words are
// in. Every record the NIC makes today is an inflated-latency record: 7 stream words, with
// its padding word 4 ring words, exactly one 256-bit beat; so no record ever waits in the
// upsizer for the next one, and RING_WORDS never counts a word the host cannot have yet. A
// record kind of another length must first make the ring writer pad to a beat.
const _: () = assert!(INFLATED_LEN.div_ceil(WORD).div_ceil(2) * 64 == 256);

/// Verilog of the board's logic (block `board_logic`), built on a large stack.
pub fn nic_verilog() -> Result<String, String> {
    crate::core_top::big_stack(|| {
        let mut b = Box::new(BoardLogic::new()?);
        crate::flow::to_verilog("board_logic", &mut *b)
    })
}

/// A reset into `clock`'s domain: high while `arst` is, released two clocks after it.
#[derive(LogicBlock, Default)]
pub struct ResetSync {
    pub clock: Signal<In, Clock>,
    pub arst: Signal<In, Bit>,
    pub reset: Signal<Out, Bit>,
    r1: DFF<Bit>,
    r2: DFF<Bit>,
}

impl Logic for ResetSync {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, r1, r2);
        self.r1.d.next = self.arst.val();
        self.r2.d.next = self.r1.q.val();
        self.reset.next = self.r2.q.val() | self.r1.q.val();
    }
}

/// The board's logic (see the module docs).
#[derive(LogicBlock)]
pub struct BoardLogic {
    pub sys_clock: Signal<In, Clock>,
    pub cpu_reset: Signal<In, Bit>,
    pub mac_clock: Signal<In, Clock>,
    pub mac_areset: Signal<In, Bit>,
    pub rx_tdata: [Signal<In, Bits<64>>; PORTS],
    pub rx_tkeep: [Signal<In, Bits<8>>; PORTS],
    pub rx_tlast: [Signal<In, Bit>; PORTS],
    pub rx_tuser: [Signal<In, Bit>; PORTS],
    pub rx_tvalid: [Signal<In, Bit>; PORTS],
    pub block_lock: [Signal<In, Bit>; PORTS],
    pub core_clock: Signal<In, Clock>,
    pub core_aresetn: Signal<In, Bit>,
    pub link_up: Signal<In, Bit>,
    /// AXI4-Lite: the register file's bus.
    pub bus: AxiLiteSlave<REGS_A>,
    pub c2h_tdata: [Signal<Out, Bits<256>>; C2H],
    pub c2h_tkeep: [Signal<Out, Bits<32>>; C2H],
    pub c2h_tlast: [Signal<Out, Bit>; C2H],
    pub c2h_tvalid: [Signal<Out, Bit>; C2H],
    pub c2h_tready: [Signal<In, Bit>; C2H],
    pub scl_low: Signal<Out, Bit>,
    pub sda_low: Signal<Out, Bit>,
    pub scl_in: Signal<In, Bit>,
    pub sda_in: Signal<In, Bit>,
    pub i2c_rst_n: Signal<Out, Bit>,
    pub eth_reset: Signal<Out, Bit>,
    pub btn: [Signal<In, Bit>; 5],
    pub led: [Signal<Out, Bit>; 8],
    pub mon_valid: Signal<Out, Bit>,
    pub mon_key: Signal<Out, Bits<104>>,
    pub mon_epoch: Signal<Out, Bits<32>>,
    pub mon_port: Signal<Out, Bits<2>>,
    pub now: Signal<Out, Bits<64>>,
    nic: BoardNic,
    ns: NsClock,
    up: AxisUpsize,
    si: Si5324Init,
    mac_rs: ResetSync,
    core_rs: ResetSync,
    sys_rs: ResetSync,
    any_reset: Signal<Local, Bit>,
    lamp: Signal<Local, Bit>,
    sink_btn: [BitSink; 4],
    sink_step: Sink<{ si5324_init::STEP_BITS }>,
    sink_mon: [BitSink; 4],
    sink_flags: [BitSink; 2],
    sink_over: [Sink<32>; PORTS],
}

impl BoardLogic {
    /// The board's logic: the NIC in its default geometry and register map, the Si5324
    /// bring-up on the 200 MHz clock.
    pub fn new() -> Result<Self, String> {
        Ok(BoardLogic {
            sys_clock: Default::default(),
            cpu_reset: Default::default(),
            mac_clock: Default::default(),
            mac_areset: Default::default(),
            rx_tdata: Default::default(),
            rx_tkeep: Default::default(),
            rx_tlast: Default::default(),
            rx_tuser: Default::default(),
            rx_tvalid: Default::default(),
            block_lock: Default::default(),
            core_clock: Default::default(),
            core_aresetn: Default::default(),
            link_up: Default::default(),
            bus: Default::default(),
            c2h_tdata: Default::default(),
            c2h_tkeep: Default::default(),
            c2h_tlast: Default::default(),
            c2h_tvalid: Default::default(),
            c2h_tready: Default::default(),
            scl_low: Default::default(),
            sda_low: Default::default(),
            scl_in: Default::default(),
            sda_in: Default::default(),
            i2c_rst_n: Default::default(),
            eth_reset: Default::default(),
            btn: Default::default(),
            led: Default::default(),
            mon_valid: Default::default(),
            mon_key: Default::default(),
            mon_epoch: Default::default(),
            mon_port: Default::default(),
            now: Default::default(),
            nic: BoardNic::new(
                &TowerGeometry::sketchint_fpga(),
                &SuMaxGeometry::nic_default(),
                &RegMap::nic_default(),
            )?,
            ns: Default::default(),
            up: Default::default(),
            si: si5324_init::vc709(),
            mac_rs: Default::default(),
            core_rs: Default::default(),
            sys_rs: Default::default(),
            any_reset: Default::default(),
            lamp: Default::default(),
            sink_btn: Default::default(),
            sink_step: Default::default(),
            sink_mon: Default::default(),
            sink_flags: Default::default(),
            sink_over: Default::default(),
        })
    }
}

impl Logic for BoardLogic {
    #[hdl_gen]
    fn update(&mut self) {
        // ---- Resets: any source resets both of the NIC's sides; the button the bring-up.
        self.any_reset.next = self.cpu_reset.val() | !self.core_aresetn.val() | self.mac_areset.val();
        self.mac_rs.clock.next = self.mac_clock.val();
        self.mac_rs.arst.next = self.any_reset.val();
        self.core_rs.clock.next = self.core_clock.val();
        self.core_rs.arst.next = self.any_reset.val();
        self.sys_rs.clock.next = self.sys_clock.val();
        self.sys_rs.arst.next = self.cpu_reset.val();

        // ---- The ports' time and the NIC.
        self.ns.clock.next = self.mac_clock.val();
        self.ns.reset.next = self.mac_rs.reset.val();
        for p in 0..PORTS {
            self.nic.mac_clock[p].next = self.mac_clock.val();
            self.nic.mac_reset[p].next = self.mac_rs.reset.val();
            self.nic.tdata[p].next = self.rx_tdata[p].val();
            self.nic.tkeep[p].next = self.rx_tkeep[p].val();
            self.nic.tlast[p].next = self.rx_tlast[p].val();
            self.nic.tuser[p].next = self.rx_tuser[p].val();
            self.nic.tvalid[p].next = self.rx_tvalid[p].val();
            self.nic.now[p].next = self.ns.now.val();
            self.sink_over[p].x.next = self.nic.overflow[p].val();
            self.sink_mon[p].x.next = self.nic.tready[p].val();
        }
        self.nic.core_clock.next = self.core_clock.val();
        self.nic.core_reset.next = self.core_rs.reset.val();
        AxiLiteSlave::<REGS_A>::link(&mut self.bus, &mut self.nic.bus);

        // ---- The card-to-host channels at 256 bits: the stream (already 256 bits), then
        // the ring (64 bits, upsized; no tlast).
        self.c2h_tdata[0].next = self.nic.c2h_tdata.val();
        self.c2h_tkeep[0].next = self.nic.c2h_tkeep.val();
        self.c2h_tlast[0].next = self.nic.c2h_tlast.val();
        self.c2h_tvalid[0].next = self.nic.c2h_tvalid.val();
        self.nic.c2h_tready.next = self.c2h_tready[0].val();
        self.up.clock.next = self.core_clock.val();
        self.up.reset.next = self.core_rs.reset.val();
        self.up.m_tready.next = self.c2h_tready[1].val();
        self.c2h_tdata[1].next = self.up.m_tdata.val();
        self.c2h_tkeep[1].next = self.up.m_tkeep.val();
        self.c2h_tlast[1].next = self.up.m_tlast.val();
        self.c2h_tvalid[1].next = self.up.m_tvalid.val();
        self.up.s_tdata.next = self.nic.ring_tdata.val();
        self.up.s_tvalid.next = self.nic.ring_tvalid.val();
        self.up.s_tlast.next = false;
        self.nic.ring_tready.next = self.up.s_tready.val();

        // ---- The Si5324 bring-up on the system clock.
        self.si.clock.next = self.sys_clock.val();
        self.si.reset.next = self.sys_rs.reset.val();
        self.si.scl_in.next = self.scl_in.val();
        self.si.sda_in.next = self.sda_in.val();
        self.scl_low.next = self.si.scl_low.val();
        self.sda_low.next = self.si.sda_low.val();
        self.i2c_rst_n.next = self.si.rst_n.val();
        self.sink_step.x.next = self.si.step.val();
        self.eth_reset.next = self.sys_rs.reset.val() | !self.si.done.val();

        // ---- LEDs (the module docs' table); the centre button lights them all.
        self.lamp.next = self.btn[4].val();
        for i in 0..4 {
            self.sink_btn[i].x.next = self.btn[i].val();
        }
        self.led[0].next = self.link_up.val() | self.lamp.val();
        for p in 0..PORTS {
            self.led[p + 1].next = self.block_lock[p].val() | self.lamp.val();
        }
        self.led[5].next = self.si.done.val() | self.lamp.val();
        self.led[6].next = self.si.error.val() | self.nic.hop_lost.val() | self.lamp.val();
        self.led[7].next = self.nic.mon_epoch.val().get_bit(0) | self.lamp.val();
        // ---- Test taps (unconnected on the board).
        self.mon_valid.next = self.nic.mon_valid.val();
        self.mon_key.next = self.nic.mon_key.val();
        self.mon_epoch.next = self.nic.mon_epoch.val();
        self.mon_port.next = self.nic.mon_port.val();
        self.now.next = self.ns.now.val();
        self.sink_flags[0].x.next = self.nic.mon_bank.val();
        self.sink_flags[1].x.next = self.nic.sketch_idle.val();
    }
}
