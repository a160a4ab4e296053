//! `core`: the NIC core top, one Verilog module for one 10G port: the MAC's AXI-Stream in,
//! the packet parser and the hop capture in front, and behind them the sketch half
//! ([`SketchCore`]: the two-bank TowerSketch, the two-bank SuMax and the per-switch half
//! under one epoch engine, the register file and the card-to-host engines). The board's
//! four ports put their own fronts before the same [`SketchCore`] (`board::nic`).
//!
//! # Datapath
//!
//! ```text
//! AXI-Stream -> Parser -> descriptor --> Ingress (IP only, one flop) --> SketchCore
//!   now ----/      |                                                      ^ i_rec
//!   beats ---(+1 flop)--> HopCapture <-(+1 flop)- descriptor, shim code --'
//!                  `-> frames / ip_packets / non_ip / malformed, bytes --> SketchCore's statistics
//! ```
//!
//! - **Parser** ([`crate::parser::Parser`]): one descriptor per frame, `tready` constant 1
//!   (the core never back-pressures the MAC). `now` is sampled at each frame's first beat.
//! - **Ingress** ([`Ingress`]): an IP descriptor registered once; the sketches take it the
//!   next clock.
//! - **Hop capture** ([`HopCapture`]): the beats and every descriptor one clock late (the
//!   `bt_*`/`ing_*` flops), so the frame's hop records come out in the ingress clock,
//!   beside the packet they belong to.
//! - **Statistics** (contract `regs::stats`): `frames`, `sketched` (= the parser's IP
//!   count: exactly the packets that enter the sketch), `non_ip`, `malformed` from the
//!   parser, so `sketched + non_ip + malformed = frames` on every clock; `bytes` = the sum of
//!   every frame's wire length (`d_len`: the bytes the MAC delivered, all classes), updated
//!   in the same clock as `frames`.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | synchronous reset: parser, counters, epoch state, bus (not the RAMs) |
//! | `tdata`, `tkeep`, `tlast`, `tuser`, `tvalid` | in | 64, 8, 1, 1, 1 | AXI-Stream from the MAC (`tdata[7:0]` first on the wire) |
//! | `tready` | out | 1 | constant 1 |
//! | `now` | in | 64 | free-running ns timestamp (sampled at a frame's first beat) |
//! | the rest | | | [`SketchCore`]'s bus, monitors and card-to-host ports, linked through |
//!
//! Latency: last beat of a frame -> descriptor (parser) -> +1 ingress flop -> tower; both
//! sketches' counters are final [`CORE_DRAIN`] clocks after the tower ingress.
use crate::arith::Widen;
use crate::nic::*;
use crate::parser::Parser;
use crate::per_switch::hop_capture::HopCapture;
use crate::regs::{AxiLiteSlave, RegMap};
pub use crate::sketch_core::{
    Ingress, SketchCore, CORE_DRAIN, HALF_DRAIN, SM_DELAY, SW_LATENCY, TABLE_DRAIN, WINDOW_LATENCY,
};
use rust_hdl::prelude::*;
use smartnic_contract::frame;
use smartnic_contract::geometry::{SuMaxGeometry, TowerGeometry};

/// The core (see the module docs).
#[derive(LogicBlock)]
pub struct Core {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // AXI-Stream
    pub tdata: Signal<In, Bits<64>>,
    pub tkeep: Signal<In, Bits<8>>,
    pub tlast: Signal<In, Bit>,
    pub tuser: Signal<In, Bit>,
    pub tvalid: Signal<In, Bit>,
    pub tready: Signal<Out, Bit>,
    pub now: Signal<In, Bits<64>>,
    /// AXI4-Lite: the register file's bus, passed through (Verilog ports `bus$awaddr`, ...).
    pub bus: AxiLiteSlave<REGS_A>,
    // monitors
    pub mon_valid: Signal<Out, Bit>,
    pub mon_key: Signal<Out, Bits<104>>,
    pub mon_epoch: Signal<Out, Bits<32>>,
    pub mon_bank: Signal<Out, Bit>,
    pub sketch_idle: Signal<Out, Bit>,
    pub est_valid: Signal<Out, Bit>,
    pub est_inf: Signal<Out, Bit>,
    pub estimate: Signal<Out, Bits<32>>,
    pub sm_done: Signal<Out, Bit>,
    pub sm_size_inf: Signal<Out, Bit>,
    pub sm_size: Signal<Out, Bits<32>>,
    pub sm_delay_inf: Signal<Out, Bit>,
    pub sm_delay: Signal<Out, Bits<32>>,
    pub hop_lost: Signal<Out, Bit>,
    /// The readout stream (card-to-host): AXI-Stream master, 256-bit, whole beats but the
    /// last (`c2h_tkeep`), `c2h_tlast` on it (the stream's trailer).
    pub c2h_tdata: Signal<Out, Bits<256>>,
    pub c2h_tkeep: Signal<Out, Bits<32>>,
    pub c2h_tvalid: Signal<Out, Bit>,
    pub c2h_tlast: Signal<Out, Bit>,
    pub c2h_tready: Signal<In, Bit>,
    /// The record ring (card-to-host channel 1): AXI-Stream master, 64-bit, no `tlast`
    /// (the ring is one endless stream of whole records).
    pub ring_tdata: Signal<Out, Bits<64>>,
    pub ring_tvalid: Signal<Out, Bit>,
    pub ring_tready: Signal<In, Bit>,
    parser: Parser,
    ingress: Ingress,
    cap: HopCapture,
    sketch: SketchCore,
    // The beats and the descriptor one clock late, so the capture hands out each frame's
    // hop records in its ingress clock.
    bt_data: DFF<Bits<64>>,
    bt_valid: DFF<Bit>,
    bt_last: DFF<Bit>,
    ing_desc: DFF<Bit>,
    ing_sc: DFF<Bits<2>>,
    bytes: DFF<Bits<64>>,
    // rust-hdl workaround: `bit_cast` widening renders as `x & M'hff..` (a Verilator WIDTH
    // warning); `Widen` is a leaf whose Verilog is `{zeros, x}`.
    len64: Widen<64, { frame::LEN_BITS }>,
    zero64: Constant<Bits<64>>,
}

/// The board's core: SketchINT's FPGA tower (two banks), the NIC SuMax (two banks), the
/// default register map (the name the simulator and tests use).
pub type CoreNic = Core;

impl Core {
    /// The core for `tower` and `sumax` behind register map `map` (checked by
    /// [`SketchCore::new`]).
    pub fn new(tower: &TowerGeometry, sumax: &SuMaxGeometry, map: &RegMap) -> Result<Self, String> {
        Ok(Core {
            clock: Default::default(),
            reset: Default::default(),
            tdata: Default::default(),
            tkeep: Default::default(),
            tlast: Default::default(),
            tuser: Default::default(),
            tvalid: Default::default(),
            tready: Default::default(),
            now: Default::default(),
            bus: Default::default(),
            mon_valid: Default::default(),
            mon_key: Default::default(),
            mon_epoch: Default::default(),
            mon_bank: Default::default(),
            sketch_idle: Default::default(),
            est_valid: Default::default(),
            est_inf: Default::default(),
            estimate: Default::default(),
            sm_done: Default::default(),
            sm_size_inf: Default::default(),
            sm_size: Default::default(),
            sm_delay_inf: Default::default(),
            sm_delay: Default::default(),
            hop_lost: Default::default(),
            c2h_tdata: Default::default(),
            c2h_tkeep: Default::default(),
            c2h_tvalid: Default::default(),
            c2h_tlast: Default::default(),
            c2h_tready: Default::default(),
            ring_tdata: Default::default(),
            ring_tvalid: Default::default(),
            ring_tready: Default::default(),
            parser: Parser::new(),
            ingress: Ingress::new(sumax),
            cap: Default::default(),
            sketch: SketchCore::new(tower, sumax, map, CORE_DRAIN)?,
            bt_data: Default::default(),
            bt_valid: Default::default(),
            bt_last: Default::default(),
            ing_desc: Default::default(),
            ing_sc: Default::default(),
            bytes: Default::default(),
            len64: Default::default(),
            zero64: Constant::new(0u64.to_bits()),
        })
    }
}

impl CoreNic {
    /// The board's configuration.
    pub fn nic() -> Result<Self, String> {
        Self::new(&TowerGeometry::sketchint_fpga(), &SuMaxGeometry::nic_default(), &RegMap::nic_default())
    }
}

impl CoreNic {
    /// [`CoreNic::nic`] on the heap, built on a thread with a large stack (the struct is
    /// about 0.5 MB and `new` moves it a few times: more than a test thread's 2 MB stack).
    pub fn nic_boxed() -> Result<Box<Self>, String> {
        big_stack(|| Self::nic().map(Box::new))
    }
}

/// Runs `f` on a thread with a 256 MB stack.
pub fn big_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("the big-stack thread panicked")
}

/// Verilog of the board's core (block `core`).
pub fn nic_verilog() -> Result<String, String> {
    big_stack(|| crate::flow::to_verilog("core", &mut *CoreNic::nic_boxed()?))
}

impl Logic for Core {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, bytes, bt_data, bt_valid, bt_last, ing_desc, ing_sc);
        // Parser.
        self.parser.clock.next = self.clock.val();
        self.parser.reset.next = self.reset.val();
        self.parser.tdata.next = self.tdata.val();
        self.parser.tkeep.next = self.tkeep.val();
        self.parser.tlast.next = self.tlast.val();
        self.parser.tuser.next = self.tuser.val();
        self.parser.tvalid.next = self.tvalid.val();
        self.parser.now.next = self.now.val();
        self.tready.next = self.parser.tready.val() & self.sketch.in_ready.val();
        // Ingress: IP descriptors, registered once.
        self.ingress.clock.next = self.clock.val();
        self.ingress.reset.next = self.reset.val();
        self.ingress.d_valid.next = self.parser.d_valid.val();
        self.ingress.d_class.next = self.parser.d_class.val();
        self.ingress.d_key.next = self.parser.d_key.val();
        self.ingress.d_ts.next = self.parser.d_ts.val();
        self.ingress.d_delay.next = self.parser.d_delay.val();
        self.ingress.d_hops.next = self.parser.d_hops.val();
        // The capture's inputs one clock late: beats, every descriptor and its shim.
        self.bt_data.d.next = self.tdata.val();
        self.bt_valid.d.next = self.tvalid.val() & !self.reset.val();
        self.bt_last.d.next = self.tlast.val();
        self.ing_desc.d.next = self.parser.d_valid.val() & !self.reset.val();
        self.ing_sc.d.next = self.parser.d_sc.val();
        self.cap.clock.next = self.clock.val();
        self.cap.reset.next = self.reset.val();
        self.cap.tdata.next = self.bt_data.q.val();
        self.cap.tvalid.next = self.bt_valid.q.val();
        self.cap.tlast.next = self.bt_last.q.val();
        self.cap.d_valid.next = self.ing_desc.q.val();
        self.cap.d_sc.next = self.ing_sc.q.val();
        // Bytes of every frame, in the clock the parser's frame counters move.
        self.len64.x.next = self.parser.d_len.val();
        if self.reset.val() {
            self.bytes.d.next = self.zero64.val();
        } else if self.parser.d_valid.val() {
            self.bytes.d.next = self.bytes.q.val() + self.len64.y.val();
        } else {
            self.bytes.d.next = self.bytes.q.val();
        }
        // The sketch half.
        self.sketch.clock.next = self.clock.val();
        self.sketch.reset.next = self.reset.val();
        self.sketch.i_valid.next = self.ingress.i_valid.val();
        self.sketch.i_key.next = self.ingress.i_key.val();
        self.sketch.i_t.next = self.ingress.i_t.val();
        self.sketch.i_delay.next = self.ingress.i_delay.val();
        self.sketch.i_hops.next = self.ingress.i_hops.val();
        self.sketch.i_rec.next = self.cap.rec.val();
        self.sketch.frames.next = self.parser.frames.val();
        self.sketch.sketched.next = self.parser.ip_packets.val();
        self.sketch.non_ip.next = self.parser.non_ip.val();
        self.sketch.malformed.next = self.parser.malformed.val();
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
        // Monitors.
        self.mon_valid.next = self.sketch.mon_valid.val();
        self.mon_key.next = self.sketch.mon_key.val();
        self.mon_epoch.next = self.sketch.mon_epoch.val();
        self.mon_bank.next = self.sketch.mon_bank.val();
        self.sketch_idle.next = self.sketch.sketch_idle.val();
        self.est_valid.next = self.sketch.est_valid.val();
        self.est_inf.next = self.sketch.est_inf.val();
        self.estimate.next = self.sketch.estimate.val();
        self.sm_done.next = self.sketch.sm_done.val();
        self.sm_size_inf.next = self.sketch.sm_size_inf.val();
        self.sm_size.next = self.sketch.sm_size.val();
        self.sm_delay_inf.next = self.sketch.sm_delay_inf.val();
        self.sm_delay.next = self.sketch.sm_delay.val();
        self.hop_lost.next = self.sketch.hop_lost.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_board_core_builds_and_checks_its_generics() {
        big_stack(the_board_core_builds_and_checks_its_generics_inner);
    }

    fn the_board_core_builds_and_checks_its_generics_inner() {
        assert!(CoreNic::nic().is_ok());
        let small = TowerGeometry::from_widths_depths(&[(8, 1 << 6), (16, 1 << 5), (32, 1 << 4)]);
        let e = CoreNic::new(&small, &SuMaxGeometry::nic_default(), &RegMap::nic_default()).err().unwrap();
        // The tower's first array is 2^6 x 8 bits where the core's generics say 2^16 x 8.
        assert!(e.contains("array 0") && e.contains("64 x 8-bit") && e.contains("2^16 x 8-bit"), "{e}");
        let e = CoreNic::new(
            &TowerGeometry::sketchint_fpga(),
            &SuMaxGeometry::with_depth(3, 1 << 12),
            &RegMap::nic_default(),
        )
        .err()
        .unwrap();
        // SuMax arrays of 2^12 buckets where the core's generics say 2^13.
        assert!(e.contains("depth") && e.contains("4096") && e.contains("8192"), "{e}");
        assert_eq!((WINDOW_LATENCY, SW_LATENCY, SM_DELAY), (3, 7, 7));
        // The drain is the per-switch half's: a hop issued 17 clocks after its packet's
        // ingress, then the latency tower's 8.
        assert_eq!((HALF_DRAIN, TABLE_DRAIN, CORE_DRAIN), (25, 13, 25));
        // Behind the board's merged ports a record may wait behind fifteen in the ring:
        // 1 + 16 x 16 + 8.
        assert_eq!(crate::sketch_core::BOARD_DRAIN, 265);
    }
}
