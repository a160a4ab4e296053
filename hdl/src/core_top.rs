//! `core`: the NIC core top, one Verilog module: the 10G MAC's AXI-Stream in, the packet
//! parser, the two-bank TowerSketch with the epoch engine, the statistics counters and the
//! AXI4-Lite register file whose readout windows are answered by the idle bank.
//!
//! # Datapath
//!
//! ```text
//! AXI-Stream -> Parser -> descriptor --(IP only)--> ingress flop --> TowerBanked (bank tagged at ingress)
//!   now ----/      |                                                    |  ^ swap/clear/acu (MODE)
//!                  +-> frames / ip_packets / non_ip / malformed, bytes  |  | ro_* = window port
//!                                 `-------------> RegisterFile <-------'--'
//! ```
//!
//! - **Parser** ([`crate::parser::Parser`]): one descriptor per frame, `tready` constant 1
//!   (the core never back-pressures the MAC). `now` is sampled at each frame's first beat.
//! - **Sketch ingress**: a descriptor of class IP (1) is registered once (key) and enters
//!   [`TowerBanked`] the next clock; the epoch engine inside tags it with the active bank in
//!   that clock. Non-IP and malformed frames are only counted.
//! - **Statistics** (contract `regs::stats`): `frames`, `sketched` (= the parser's IP
//!   count: exactly the packets that enter the sketch), `non_ip`, `malformed` from the
//!   parser, so `sketched + non_ip + malformed = frames` on every clock; `bytes` = the sum of
//!   every frame's wire length (`d_len`: the bytes the MAC delivered, all classes), updated
//!   in the same clock as `frames`.
//! - **Register file** ([`RegisterFile`], the contract `Layout` of the tower and SuMax
//!   geometries): CONTROL SWAP/CLEAR pulses -> the epoch engine, MODE -> the tower's `acu`,
//!   EPOCH/SEQUENCE/STATUS/IDLE_PACKETS/ACTIVE_PACKETS <- the engine. A read in window `s`
//!   is `ro_req` of the tower's readout port with `ro_array = s` for the tower arrays
//!   (`s < 3`); SuMax windows (`s >= 3`) go to `ro_array = 3`, which reads 0 (the SuMax
//!   pipeline is not in this core yet), so every window read is answered after
//!   [`tower_banked::RO_LATENCY`] clocks.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | synchronous reset: parser, counters, epoch state, bus (not the RAMs) |
//! | `tdata`, `tkeep`, `tlast`, `tuser`, `tvalid` | in | 64, 8, 1, 1, 1 | AXI-Stream from the MAC (`tdata[7:0]` first on the wire) |
//! | `tready` | out | 1 | constant 1 |
//! | `now` | in | 64 | free-running ns timestamp (sampled at a frame's first beat) |
//! | `awaddr` ... `rready` | | | AXI4-Lite slave, `regs::RegsNic`'s bus (21-bit address) |
//! | `mon_valid`, `mon_key`, `mon_epoch`, `mon_bank` | out | 1, 104, 32, 1 | monitor: a packet enters the sketch this clock, its key, the EPOCH and bank it is recorded in |
//! | `sketch_idle` | out | 1 | no packet in the sketch pipeline |
//! | `est_valid`, `est_inf`, `estimate` | out | 1, 1, 32 | the tower's per-packet running-minimum estimate at its last write (`done`) |
//!
//! Latency: last beat of a frame -> descriptor (parser) -> +1 ingress flop -> sketch; the
//! sketch's counters are final [`tower_banked::DRAIN`] clocks after ingress.
use crate::arith::Widen;
use crate::parser::Parser;
use crate::regs::{RegMap, RegisterFile, SEL_BITS};
use crate::sketch::tower_banked::{self, TowerBanked};
use crate::sketch::Sink;
use rust_hdl::prelude::*;
use smartnic_contract::geometry::TowerGeometry;

/// The core (see the module docs). Generics: the tower's (`W0, A0, W1, A1, W2, A2, AM` as
/// [`TowerBanked`]) and the register file's (`A, IW, NW` as [`RegisterFile`]).
#[derive(LogicBlock)]
pub struct Core<
    const W0: usize,
    const A0: usize,
    const W1: usize,
    const A1: usize,
    const W2: usize,
    const A2: usize,
    const AM: usize,
    const A: usize,
    const IW: usize,
    const NW: usize,
> {
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
    // AXI4-Lite
    pub awaddr: Signal<In, Bits<A>>,
    pub awvalid: Signal<In, Bit>,
    pub awready: Signal<Out, Bit>,
    pub wdata: Signal<In, Bits<32>>,
    pub wstrb: Signal<In, Bits<4>>,
    pub wvalid: Signal<In, Bit>,
    pub wready: Signal<Out, Bit>,
    pub bresp: Signal<Out, Bits<2>>,
    pub bvalid: Signal<Out, Bit>,
    pub bready: Signal<In, Bit>,
    pub araddr: Signal<In, Bits<A>>,
    pub arvalid: Signal<In, Bit>,
    pub arready: Signal<Out, Bit>,
    pub rdata: Signal<Out, Bits<32>>,
    pub rresp: Signal<Out, Bits<2>>,
    pub rvalid: Signal<Out, Bit>,
    pub rready: Signal<In, Bit>,
    // monitors
    pub mon_valid: Signal<Out, Bit>,
    pub mon_key: Signal<Out, Bits<104>>,
    pub mon_epoch: Signal<Out, Bits<32>>,
    pub mon_bank: Signal<Out, Bit>,
    pub sketch_idle: Signal<Out, Bit>,
    pub est_valid: Signal<Out, Bit>,
    pub est_inf: Signal<Out, Bit>,
    pub estimate: Signal<Out, Bits<32>>,
    parser: Parser,
    tower: TowerBanked<W0, A0, W1, A1, W2, A2, AM>,
    regs: RegisterFile<A, IW, NW>,
    ing_valid: DFF<Bit>,
    ing_key: DFF<Bits<104>>,
    bytes: DFF<Bits<64>>,
    len64: Widen<64, 16>,
    sink_ts: Sink<64>,
    sink_delay: Sink<64>,
    sink_index: Sink<IW>,
    class_ip: Constant<Bits<2>>,
    tower_sels: Constant<Bits<SEL_BITS>>,
    ro_none: Constant<Bits<2>>,
    zero64: Constant<Bits<64>>,
}

/// The board's core: SketchINT's FPGA tower (two banks), the default register map.
pub type CoreNic = Core<8, 16, 16, 15, 32, 14, 16, 21, 19, 6>;

impl<
        const W0: usize,
        const A0: usize,
        const W1: usize,
        const A1: usize,
        const W2: usize,
        const A2: usize,
        const AM: usize,
        const A: usize,
        const IW: usize,
        const NW: usize,
    > Core<W0, A0, W1, A1, W2, A2, AM, A, IW, NW>
{
    /// The core for `tower` (checked against the generics by [`TowerBanked::new`]) behind
    /// register map `map` (checked by [`RegisterFile::new`]; its tower geometry must be
    /// `tower`).
    pub fn new(tower: &TowerGeometry, map: &RegMap) -> Result<Self, String> {
        let t = TowerBanked::new(tower)?;
        let regs = RegisterFile::new(map)?;
        if map.layout.tower_windows.len() != tower.arrays.len() {
            return Err(format!(
                "the map has {} tower windows, the tower {} arrays",
                map.layout.tower_windows.len(),
                tower.arrays.len()
            ));
        }
        if IW < AM {
            return Err(format!("window index bits IW = {IW} < tower address bits AM = {AM}"));
        }
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
            awaddr: Default::default(),
            awvalid: Default::default(),
            awready: Default::default(),
            wdata: Default::default(),
            wstrb: Default::default(),
            wvalid: Default::default(),
            wready: Default::default(),
            bresp: Default::default(),
            bvalid: Default::default(),
            bready: Default::default(),
            araddr: Default::default(),
            arvalid: Default::default(),
            arready: Default::default(),
            rdata: Default::default(),
            rresp: Default::default(),
            rvalid: Default::default(),
            rready: Default::default(),
            mon_valid: Default::default(),
            mon_key: Default::default(),
            mon_epoch: Default::default(),
            mon_bank: Default::default(),
            sketch_idle: Default::default(),
            est_valid: Default::default(),
            est_inf: Default::default(),
            estimate: Default::default(),
            parser: Parser::new(),
            tower: t,
            regs,
            ing_valid: Default::default(),
            ing_key: Default::default(),
            bytes: Default::default(),
            len64: Default::default(),
            sink_ts: Default::default(),
            sink_delay: Default::default(),
            sink_index: Default::default(),
            class_ip: Constant::new(1u64.to_bits()),
            tower_sels: Constant::new((tower.arrays.len() as u64).to_bits()),
            ro_none: Constant::new(3u64.to_bits()),
            zero64: Constant::new(0u64.to_bits()),
        })
    }
}

impl CoreNic {
    /// The board's configuration.
    pub fn nic() -> Result<Self, String> {
        Self::new(&TowerGeometry::sketchint_fpga(), &RegMap::nic_default())
    }
}

/// Verilog of the board's core (block `core`).
pub fn nic_verilog() -> Result<String, String> {
    crate::flow::to_verilog("core", &mut CoreNic::nic()?)
}

/// Clocks from a window request to its answer (the tower's readout latency).
pub const WINDOW_LATENCY: usize = tower_banked::RO_LATENCY;

impl<
        const W0: usize,
        const A0: usize,
        const W1: usize,
        const A1: usize,
        const W2: usize,
        const A2: usize,
        const AM: usize,
        const A: usize,
        const IW: usize,
        const NW: usize,
    > Logic for Core<W0, A0, W1, A1, W2, A2, AM, A, IW, NW>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, ing_valid, ing_key, bytes);
        // Parser.
        self.parser.clock.next = self.clock.val();
        self.parser.reset.next = self.reset.val();
        self.parser.tdata.next = self.tdata.val();
        self.parser.tkeep.next = self.tkeep.val();
        self.parser.tlast.next = self.tlast.val();
        self.parser.tuser.next = self.tuser.val();
        self.parser.tvalid.next = self.tvalid.val();
        self.parser.now.next = self.now.val();
        self.tready.next = self.parser.tready.val() & self.tower.in_ready.val();
        self.sink_ts.x.next = self.parser.d_ts.val();
        self.sink_delay.x.next = self.parser.d_delay.val();
        // Sketch ingress: IP descriptors only.
        self.ing_valid.d.next = self.parser.d_valid.val()
            & (self.parser.d_class.val() == self.class_ip.val())
            & !self.reset.val();
        self.ing_key.d.next = self.parser.d_key.val();
        // Bytes of every frame, in the clock the parser's frame counters move.
        self.len64.x.next = self.parser.d_len.val();
        if self.reset.val() {
            self.bytes.d.next = self.zero64.val();
        } else if self.parser.d_valid.val() {
            self.bytes.d.next = self.bytes.q.val() + self.len64.y.val();
        } else {
            self.bytes.d.next = self.bytes.q.val();
        }
        // Tower with the epoch engine.
        self.tower.clock.next = self.clock.val();
        self.tower.reset.next = self.reset.val();
        self.tower.key.next = self.ing_key.q.val();
        self.tower.key_valid.next = self.ing_valid.q.val();
        self.tower.acu.next = self.regs.acu.val();
        self.tower.swap.next = self.regs.swap.val();
        self.tower.clear.next = self.regs.clear.val();
        self.tower.ro_req.next = self.regs.win_req.val();
        if self.regs.win_sel.val() < self.tower_sels.val() {
            self.tower.ro_array.next = self.regs.win_sel.val().get_bits::<2>(0);
        } else {
            self.tower.ro_array.next = self.ro_none.val();
        }
        self.tower.ro_index.next = self.regs.win_index.val().get_bits::<AM>(0);
        self.sink_index.x.next = self.regs.win_index.val();
        // Register file.
        self.regs.clock.next = self.clock.val();
        self.regs.reset.next = self.reset.val();
        self.regs.awaddr.next = self.awaddr.val();
        self.regs.awvalid.next = self.awvalid.val();
        self.awready.next = self.regs.awready.val();
        self.regs.wdata.next = self.wdata.val();
        self.regs.wstrb.next = self.wstrb.val();
        self.regs.wvalid.next = self.wvalid.val();
        self.wready.next = self.regs.wready.val();
        self.bresp.next = self.regs.bresp.val();
        self.bvalid.next = self.regs.bvalid.val();
        self.regs.bready.next = self.bready.val();
        self.regs.araddr.next = self.araddr.val();
        self.regs.arvalid.next = self.arvalid.val();
        self.arready.next = self.regs.arready.val();
        self.rdata.next = self.regs.rdata.val();
        self.rresp.next = self.regs.rresp.val();
        self.rvalid.next = self.regs.rvalid.val();
        self.regs.rready.next = self.rready.val();
        self.regs.frames.next = self.parser.frames.val();
        self.regs.sketched.next = self.parser.ip_packets.val();
        self.regs.bytes.next = self.bytes.q.val();
        self.regs.non_ip.next = self.parser.non_ip.val();
        self.regs.malformed.next = self.parser.malformed.val();
        self.regs.epoch_num.next = self.tower.epoch.val();
        self.regs.epoch_seq.next = self.tower.sequence_no.val();
        self.regs.swap_pending.next = self.tower.swap_pending.val();
        self.regs.clear_busy.next = self.tower.clear_busy.val();
        self.regs.idle_packets.next = self.tower.idle_packets.val();
        self.regs.active_packets.next = self.tower.active_packets.val();
        self.regs.win_ack.next = self.tower.ro_ack.val();
        self.regs.win_data.next = self.tower.ro_data.val();
        // Monitors.
        self.mon_valid.next = self.ing_valid.q.val();
        self.mon_key.next = self.ing_key.q.val();
        self.mon_epoch.next = self.tower.epoch.val();
        self.mon_bank.next = self.tower.active_bank.val();
        self.sketch_idle.next = self.tower.idle.val();
        self.est_valid.next = self.tower.done.val();
        self.est_inf.next = self.tower.estimate_inf.val();
        self.estimate.next = self.tower.estimate.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_board_core_builds_and_checks_its_generics() {
        assert!(CoreNic::nic().is_ok());
        let small = TowerGeometry::from_widths_depths(&[(8, 1 << 6), (16, 1 << 5), (32, 1 << 4)]);
        let e = CoreNic::new(&small, &RegMap::nic_default()).err().unwrap();
        assert!(!e.is_empty());
        assert_eq!(WINDOW_LATENCY, 3);
    }
}
