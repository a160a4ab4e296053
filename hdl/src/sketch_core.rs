//! `sketch_core`: the NIC's sketch half, one block behind any front: the two-bank
//! TowerSketch, the two-bank SuMax and the per-switch half (latency tower,
//! inflated-latency records, flow-key table) under one epoch engine, the AXI4-Lite register
//! file whose readout windows are answered by the idle banks, the readout stream and the
//! record ring. It takes one packet a clock from an [`Ingress`] stage: the core's one port
//! (`core_top::Core`: parser, hop capture, ingress), or the board's four ports merged.
//!
//! # Datapath
//!
//! ```text
//! Ingress (key, t, delay, hops, rec) --> EpochEngine --> active_bank, clr_*
//!                     |--> TowerPipeline (2 banks) <-> TowerWindow
//!                     |--> DelayBin (7) --> 7-deep key/t/bank line --> SuMax (2 banks)
//!                     |                        ^ swap/clear/acu, ro_* = window port
//!   frames, bytes, .. `-------------> RegisterFile <-------------'
//!                     |--> PerSwitchHalf (serializer -> latency tower -> check -> records)
//!                     |         | path, key, bank (7-deep line)
//!                     |         `-> KeyTable <- the flow tower's estimate at `done`
//! ```
//!
//! - **Ingress** ([`Ingress`]): a descriptor of class IP (1) is registered once (key, `t` =
//!   `d_ts >> time_shift` truncated to `TW` bits = `SuMax::time_of`, the INT delay saturated
//!   to 32 bits, the hop count) and enters the two-bank [`TowerPipeline`] the next clock; the
//!   one [`EpochEngine`] tags it with the active bank in that clock. The delay goes through
//!   [`DelayBin`] ([`SM_DELAY`] = 7 clocks); key, `t` and that bank wait in a delay line and
//!   enter the two-bank [`SuMaxPipeline`] with the bin. The engine's drain is
//!   [`CORE_DRAIN`], its clear sweep (2^AM clocks) drives every sketch's clear port, and the
//!   idle bank (`!active_bank`) is every sketch's read bank.
//! - **Per-switch half** ([`PerSwitchHalf`]): the packet's hop records (`i_rec`, captured in
//!   front) in the ingress clock, so it takes, for each packet, the bank and EPOCH the flow
//!   sketches take in the same clock: a swap never splits a packet's hops from its flow
//!   counters. Behind one port its hops land at most [`HALF_DRAIN`] = 25 clocks after
//!   ingress (the serializer's 17-clock bound plus the latency tower's 8), which is then the
//!   engine's drain ([`CORE_DRAIN`]); behind the board's merged ports a record may wait
//!   behind fifteen in the serializer's ring, and the drain is [`BOARD_DRAIN`] = 265.
//! - **Flow-key table** ([`KeyTable`]): each IP packet at the flow tower's `done`, with the
//!   tower's estimate after its insertion and its key, bank, hop count and path (the
//!   serializer's `x_path` in the ingress clock) from a 7-deep line beside the tower; last
//!   write [`TABLE_DRAIN`] = 13 clocks after ingress. Both banks cleared by the engine's
//!   sweep; TABLE_MISSES reads the idle bank's misses.
//! - **Statistics** (contract `regs::stats`): `frames`, `sketched`, `non_ip`, `malformed`,
//!   `bytes` are counted in front (by the parser) and only shown here.
//! - **Register file** ([`RegisterFile`], the contract `Layout` of the tower and SuMax
//!   geometries): CONTROL SWAP/CLEAR pulses -> the epoch engine, MODE -> the tower's `acu`,
//!   EPOCH/SEQUENCE/STATUS/IDLE_PACKETS/ACTIVE_PACKETS <- the engine. A read in window `s`
//!   is `ro_req` of the tower's readout window ([`TowerWindow`]) with `ro_array = s` for the
//!   tower arrays (`s < 3`, answer after [`tower_window::RO_LATENCY`] clocks); a SuMax window `s = 3 + i`
//!   reads word `k = bucket * cells + cell` of array `i`'s idle bank: [`CellIndex`] (divide
//!   by the constant `cells` = 11 by a reciprocal multiply, 3 clocks), the arrays' read port
//!   (3), the window's array registered (1): answer after [`SW_LATENCY`] = 7 clocks. A
//!   latency window `s = 6 + i` reads bucket `k >> 1` of array `i` (count for even `k`, sum
//!   for odd) from the idle bank: answer after [`LW_LATENCY`] = 3. A table window
//!   `s = 9 + w` reads word `k mod 12` of slot `k / 12` of way `w` ([`CellIndex`] by 12): answer
//!   after [`TW_LATENCY`] = 6. Every window takes a request a clock (the select and word bits
//!   a later stage needs travel beside the request). The per-switch block's MODE and
//!   thresholds drive the half and the table; RECORD_POP pops the record buffer.
//! - **Readout stream** ([`StreamEngine`]): a write of START to the stream block starts the
//!   engine, which reads the idle bank's RAMs itself until its stream has left on `c2h_*`:
//!   one lane per window ([`stream_reads`]), every lane a read a clock at its RAM's read
//!   latency (the Tower and latency arrays each on its own port, a latency bucket's count
//!   and sum in one read; SuMax's three arrays in lockstep on their shared address, a cell
//!   a read; the table's two ways one after the other on its one port), packed, in whole
//!   256-bit beats, with the header, SEQUENCE at both ends and a CRC
//!   (`contract::wire::readout`). A window read over the BAR meanwhile answers 0 at once.
//! - **Record ring** ([`RingWriter`]): with the stream block's RING_CONTROL ENABLE set, the
//!   record buffer's pops go to the ring writer, which sends each record on `ring_*` as soon
//!   as the buffer holds it; RECORD_POP then reads 0.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | synchronous reset: counters, epoch state, bus (not the RAMs) |
//! | `i_valid`, `i_key`, `i_t`, `i_delay`, `i_hops` | in | 1, 104, TW, 32, 5 | the ingress stage ([`Ingress`]'s outputs): an IP packet enters this clock |
//! | `i_rec` | in | 768 | its hop records in the same clock (`per_switch::hop_capture`'s `rec`) |
//! | `in_ready` | out | 1 | the sketches take a packet this clock (constant 1: their pipelines forward) |
//! | `frames`, `sketched`, `non_ip`, `malformed`, `bytes` | in | 64 each | the statistics registers' values |
//! | `bus$awaddr` ... `bus$rready` | | | AXI4-Lite slave: `regs::RegsNic`'s [`AxiLiteSlave`] bundle, linked through (22-bit address; signals in [`crate::regs::axil`]) |
//! | `mon_valid`, `mon_key`, `mon_epoch`, `mon_bank` | out | 1, 104, 32, 1 | monitor: a packet enters the sketch this clock, its key, the EPOCH and bank it is recorded in |
//! | `sketch_idle` | out | 1 | no packet in the sketch pipeline |
//! | `est_valid`, `est_inf`, `estimate` | out | 1, 1, 32 | the tower's per-packet estimate at its last write (`done`): `Tower::query` after the insert, CM or ACU (the table's input) |
//! | `sm_done`, `sm_size_inf`, `sm_size`, `sm_delay_inf`, `sm_delay` | out | 1, 1, 32, 1, 32 | SuMax's per-packet size and delay-cell estimates at its last write |
//! | `c2h_tdata`, `c2h_tkeep`, `c2h_tvalid`, `c2h_tlast`, `c2h_tready` | out, out, out, out, in | 256, 32, 1, 1, 1 | the readout stream ([`StreamEngine`]): one stream per START of the stream block, whole beats but the last (16 bytes: the end word and the trailer), `c2h_tlast` on it; the channel may hold `c2h_tready` low for any time |
//! | `ring_tdata`, `ring_tvalid`, `ring_tready` | out, out, in | 64, 1, 1 | the record ring ([`RingWriter`]): while RING_CONTROL's ENABLE is set, every record as the buffer has it (`contract::wire::record_ring`); the channel may hold `ring_tready` low, then the buffer fills and counts what it drops |
//! | `hop_lost` | out | 1 | the hop serializer refused a packet's hops since reset (never behind one port, by its bound; behind the board's ports only above one hop a clock) |
//!
//! Latency: both sketches' counters are final [`CORE_DRAIN`] clocks after ingress.
use crate::arith::delay_bin::{self, DelayBin};
use crate::arith::Widen;
use crate::nic::*;
use crate::parser::{konst, CLASS_IP};
use crate::per_switch::half::PerSwitchHalf;
use crate::per_switch::hop_capture::REC_BITS as HOP_REC_BITS;
use crate::per_switch::hop_serializer::{self, PATH_BITS};
use crate::per_switch::key_table::{self, KeyTable, HOPS_BITS};
use crate::per_switch::latency_tower;
use crate::readout::lane::{LaneRead, ROW_BITS};
use crate::readout::ring::RingWriter;
use crate::readout::stream::StreamEngine;
use crate::regs::{AxiLiteSlave, RegMap, RegisterFile, SEL_BITS};
use crate::sketch::cell_index::{CellIndex, CELL_INDEX_LATENCY};
use crate::sketch::epoch::EpochEngine;
use crate::sketch::sumax::{self, SuMaxPipeline};
use crate::sketch::tower::{self, TowerPipeline};
use crate::sketch::tower_window::{self, TowerWindow};
use crate::sketch::{BitSink, Sink, TWO_BANKS};
use rust_hdl::prelude::*;
use smartnic_contract::geometry::{SuMaxGeometry, TowerGeometry};
use smartnic_contract::per_switch::PerSwitchGeometry;
use smartnic_contract::wire::readout::{window_specs, WindowSpec};

/// The sketch half (see the module docs): the board's configuration, every width and
/// address size a named constant of [`crate::nic`] (`TOWER_*`, `SUMAX_*`, `REGS_*`) rather
/// than a const generic, so a new sketch adds its constants there, not positional generics
/// here. The sketches' own tests cover other geometries block by block.
#[derive(LogicBlock)]
pub struct SketchCore {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// The ingress stage ([`Ingress`]): an IP packet enters the sketches this clock.
    pub i_valid: Signal<In, Bit>,
    pub i_key: Signal<In, Bits<104>>,
    pub i_t: Signal<In, Bits<SUMAX_TW>>,
    pub i_delay: Signal<In, Bits<32>>,
    pub i_hops: Signal<In, Bits<5>>,
    /// The packet's hop records (a [`HopCapture`](crate::per_switch::hop_capture::HopCapture)'s `rec`).
    pub i_rec: Signal<In, Bits<HOP_REC_BITS>>,
    /// Both sketches take a packet this clock (always, by their pipelines' forwarding).
    pub in_ready: Signal<Out, Bit>,
    /// The statistics registers' values (contract `regs::stats`), counted in front.
    pub frames: Signal<In, Bits<64>>,
    pub sketched: Signal<In, Bits<64>>,
    pub non_ip: Signal<In, Bits<64>>,
    pub malformed: Signal<In, Bits<64>>,
    pub bytes: Signal<In, Bits<64>>,
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
    /// last (`c2h_tkeep`), `c2h_tlast` on it.
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
    engine: EpochEngine<TOWER_AM>,
    tower: TowerPipeline<TOWER_W0, TOWER_A0, TOWER_W1, TOWER_A1, TOWER_W2, TOWER_A2, TWO_BANKS>,
    window: TowerWindow<TOWER_W0, TOWER_A0, TOWER_W1, TOWER_A1, TOWER_W2, TOWER_A2, TOWER_AM>,
    sumax: SuMaxPipeline<SUMAX_SW, SUMAX_DW, SUMAX_DC, SUMAX_TW, SUMAX_A, TWO_BANKS>,
    dbin: DelayBin<32>,
    cidx: CellIndex<REGS_IW, SUMAX_A>,
    regs: RegisterFile<REGS_A, REGS_IW, REGS_NW>,
    // SuMax ingress delay line (the delay bin's latency): tap j = ingress j + 1 clocks ago
    sm_valid: [DFF<Bit>; SM_DELAY],
    sm_key: [DFF<Bits<104>>; SM_DELAY],
    sm_t: [DFF<Bits<SUMAX_TW>>; SM_DELAY],
    sm_bank: [DFF<Bit>; SM_DELAY],
    // SuMax window readout: request valid and window select, then the answer register
    sw_v: [DFF<Bit>; SW_LATENCY],
    sw_sel: [DFF<Bits<SEL_BITS>>; SW_LATENCY - 1],
    sw_q: DFF<Bits<32>>,
    tower_req: Signal<Local, Bit>,
    sink_clr: Sink<TOWER_AM>,
    // The sketches' packet counts: the engine counts packets per epoch instead.
    sink_packets: Sink<32>,
    sink_tower_packets: Sink<32>,
    // The per-switch half and the flow-key table.
    ps: PerSwitchHalf,
    key_table: KeyTable<TABLE_A>,
    // Beside the flow tower, for the table (tap j = ingress j + 1 clocks ago).
    kt_key: [DFF<Bits<104>>; KT_WAIT],
    kt_bank: [DFF<Bit>; KT_WAIT],
    kt_hops: [DFF<Bits<HOPS_BITS>>; KT_WAIT],
    kt_path: [DFF<Bits<PATH_BITS>>; KT_WAIT],
    // Latency windows: request line, answer.
    lw_v: [DFF<Bit>; LW_LATENCY],
    lw_q: DFF<Bits<32>>,
    w_c0: Widen<32, 8>,
    w_s0: Widen<32, 24>,
    w_c1: Widen<32, 16>,
    // Table windows: word k -> (slot, word), the way's read, answer.
    tidx: CellIndex<REGS_IW, TABLE_A>,
    tw_v: [DFF<Bit>; TW_LATENCY],
    tw_q: DFF<Bits<32>>,
    // The table's per-packet outcome (its own tests check it; the core counts misses) and
    // the word index's high bits (a slot has 12 words).
    sink_outcome: [BitSink; 6],
    sink_word_hi: Sink<4>,
    sm_req: Signal<Local, Bit>,
    lat_req: Signal<Local, Bit>,
    tbl_req: Signal<Local, Bit>,
    // The window interface's master: the register file (the stream engine reads the RAMs
    // itself, a lane per window, and window reads answer 0 while it runs).
    stream: StreamEngine<STREAM_LANES>,
    // The lanes' answers as 64-bit cells (a latency bucket: count, then sum above it).
    st_t0: Widen<64, TOWER_W0>,
    st_t1: Widen<64, TOWER_W1>,
    st_t2: Widen<64, TOWER_W2>,
    st_sm: [Widen<64, 32>; SUMAX_ARRAYS],
    st_c0: Widen<64, LAT_C0>,
    st_s0: Widen<64, LAT_S0>,
    st_c1: Widen<64, LAT_C1>,
    st_s1: Widen<64, LAT_S1>,
    st_c2: Widen<64, LAT_C2>,
    st_s2: Widen<64, LAT_S2>,
    st_kt: Widen<64, 32>,
    st_cell: Widen<8, 4>,
    // What the core does not need of the lanes' read ports: the lanes time their own
    // answers (`rd`), each RAM takes its address bits of `row`, and only the lockstep
    // groups' leaders drive `col` and `issued`.
    sink_rd: [BitSink; STREAM_LANES],
    sink_issued: [BitSink; STREAM_LANES],
    sink_row: [Sink<ROW_BITS>; STREAM_LANES],
    sink_col: [Sink<4>; STREAM_LANES],
    st_cw: [Constant<Bits<64>>; LAT_ARRAYS],
    ring: RingWriter,
    w_req: Signal<Local, Bit>,
    w_sel: Signal<Local, Bits<SEL_BITS>>,
    w_index: Signal<Local, Bits<REGS_IW>>,
    w_ack: Signal<Local, Bit>,
    w_data: Signal<Local, Bits<32>>,
    // Latency windows: the select and the count/sum bit of a request, to the answer's mux.
    lw_sel: [DFF<Bits<SEL_BITS>>; 2],
    lw_odd: [DFF<Bit>; 2],
    // Table windows: the way of a request, to the table's read (beside the slot index).
    tw_way: [DFF<Bit>; CELL_INDEX_LATENCY],
    lat_sel: [Constant<Bits<SEL_BITS>>; 3],
    tbl_sel: [Constant<Bits<SEL_BITS>>; 2],
    sels_end: Constant<Bits<SEL_BITS>>,
    tower_sels: Constant<Bits<SEL_BITS>>,
    sm_sel: [Constant<Bits<SEL_BITS>>; 3],
    ro_none: Constant<Bits<2>>,
    zero32: Constant<Bits<32>>,
}

/// Lanes of the readout stream: one per window (Tower arrays, SuMax arrays, latency
/// arrays, table ways).
pub const STREAM_LANES: usize = REGS_NW;
const _: () = assert!(TOWER_ARRAYS == 3 && SUMAX_ARRAYS == 3 && LAT_ARRAYS == 3 && TABLE_WAYS == 2);

/// How the stream's lanes read the windows of `specs` (in window order): Tower, SuMax and
/// table windows a counter word a read at the RAMs' read latencies, latency windows a
/// bucket (count and sum) a read.
pub fn stream_reads(specs: &[WindowSpec]) -> Vec<LaneRead> {
    specs
        .iter()
        .enumerate()
        .map(|(i, s)| match i {
            0..3 => LaneRead::per_word(s, tower::READ_LATENCY),
            3..6 => LaneRead::per_word(s, sumax::READ_LATENCY),
            6..9 => LaneRead::per_row(s, latency_tower::READ_LATENCY),
            _ => LaneRead::per_word(s, key_table::READ_LATENCY),
        })
        .collect()
}

/// Clocks from a packet's tower ingress to its SuMax `key` (the delay-bin unit's latency).
pub const SM_DELAY: usize = delay_bin::LATENCY;
/// The engine's swap drain: the later of the tower's and SuMax's last writes.
pub const CORE_DRAIN: usize =
    max(max(SM_DELAY + sumax::LATENCY, tower::LATENCY), max(HALF_DRAIN, TABLE_DRAIN));

const fn max(a: usize, b: usize) -> usize {
    if a > b {
        a
    } else {
        b
    }
}

// The literal taps of `update` (`#[hdl_gen]` reads indices from their text).
const _: () = assert!(KT_WAIT == 7 && SW_LATENCY == 7 && LW_LATENCY == 3 && TW_LATENCY == 6);
/// Clocks from a SuMax window request to its answer: (bucket, cell), the array read, the
/// array select register.
pub const SW_LATENCY: usize = CELL_INDEX_LATENCY + sumax::READ_LATENCY + 1;
/// Clocks from a latency window request to its answer: the arrays' read, the answer register.
pub const LW_LATENCY: usize = latency_tower::READ_LATENCY + 1;
/// Clocks from a table window request to its answer: (slot, word), the way's read, the
/// answer register.
pub const TW_LATENCY: usize = CELL_INDEX_LATENCY + key_table::READ_LATENCY + 1;
/// Clocks from a packet's ingress to the flow tower's `done`, where the table takes it.
pub const KT_WAIT: usize = tower::LATENCY - 1;
/// The per-switch half's last write after ingress, plus one: a hop leaves the serializer
/// at most `MAX_WAIT` clocks after its descriptor, then the latency tower's latency.
pub const HALF_DRAIN: usize = hop_serializer::MAX_WAIT + latency_tower::LATENCY;
/// The table's last write after ingress, plus one: it takes the packet at the flow
/// tower's `done`.
pub const TABLE_DRAIN: usize = KT_WAIT + key_table::LATENCY;
/// The engine's drain behind a front that may hand in a packet every clock with up to 16
/// hops each (the board's merged ports): the serializer's any-spacing bound
/// ([`hop_serializer::MAX_WAIT_ANY`]) then the latency tower's latency.
pub const BOARD_DRAIN: usize = max(CORE_DRAIN, hop_serializer::MAX_WAIT_ANY + latency_tower::LATENCY);

impl SketchCore {
    /// The sketch half for `tower` (checked against the generics by [`TowerPipeline::new`]) behind
    /// register map `map` (checked by [`RegisterFile::new`]; its tower geometry must be
    /// `tower`), whose epoch engine waits `drain` clocks after a swap for the packets
    /// already in (at least [`CORE_DRAIN`]; [`BOARD_DRAIN`] behind the board's ports).
    pub fn new(
        tower: &TowerGeometry,
        sumax: &SuMaxGeometry,
        map: &RegMap,
        drain: usize,
    ) -> Result<Self, String> {
        if drain < CORE_DRAIN {
            return Err(format!("a drain of {drain} clocks is shorter than the sketches' {CORE_DRAIN}"));
        }
        let t = TowerPipeline::new(tower)?;
        let window = TowerWindow::new()?;
        // Validates the geometry (the contract's rule that time cells fit the timestamp
        // included) and checks `TW` is its time width.
        let sm = SuMaxPipeline::new(sumax)?;
        let cells = 3 + SUMAX_DC as u32;
        if map.layout.sumax_windows.len() != sumax.hashes.len() {
            return Err(format!(
                "the map has {} SuMax windows, the SuMax {} arrays",
                map.layout.sumax_windows.len(),
                sumax.hashes.len()
            ));
        }
        let regs = RegisterFile::new(map)?;
        let ps_geometry = PerSwitchGeometry::nic_default();
        if map.layout.per_switch.as_ref() != Some(&ps_geometry) {
            return Err("the map's per-switch block is not the NIC's per-switch geometry".into());
        }
        let table = KeyTable::new(&ps_geometry.table)?;
        let specs = window_specs(tower, sumax, Some(&ps_geometry));
        let stream = StreamEngine::new(&specs, &stream_reads(&specs))?;
        if map.layout.tower_windows.len() != tower.arrays.len() {
            return Err(format!(
                "the map has {} tower windows, the tower {} arrays",
                map.layout.tower_windows.len(),
                tower.arrays.len()
            ));
        }
        Ok(SketchCore {
            clock: Default::default(),
            reset: Default::default(),
            i_valid: Default::default(),
            i_key: Default::default(),
            i_t: Default::default(),
            i_delay: Default::default(),
            i_hops: Default::default(),
            i_rec: Default::default(),
            in_ready: Default::default(),
            frames: Default::default(),
            sketched: Default::default(),
            non_ip: Default::default(),
            malformed: Default::default(),
            bytes: Default::default(),
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
            engine: EpochEngine::new(drain),
            tower: t,
            window,
            sumax: sm,
            dbin: DelayBin::new(&sumax.delay_bins, sumax.delay_cells),
            cidx: CellIndex::new(cells),
            regs,
            sm_valid: Default::default(),
            sm_key: Default::default(),
            sm_t: Default::default(),
            sm_bank: Default::default(),
            sw_v: Default::default(),
            sw_sel: Default::default(),
            sw_q: Default::default(),
            tower_req: Default::default(),
            sink_clr: Default::default(),
            sink_packets: Default::default(),
            sink_tower_packets: Default::default(),
            ps: PerSwitchHalf::new()?,
            key_table: table,
            kt_key: Default::default(),
            kt_bank: Default::default(),
            kt_hops: Default::default(),
            kt_path: std::array::from_fn(|_| Default::default()),
            lw_v: Default::default(),
            lw_q: Default::default(),
            w_c0: Default::default(),
            w_s0: Default::default(),
            w_c1: Default::default(),
            tidx: CellIndex::new(smartnic_contract::regs::per_switch::SLOT_WORDS),
            tw_v: Default::default(),
            tw_q: Default::default(),
            sink_outcome: Default::default(),
            sink_word_hi: Default::default(),
            sm_req: Default::default(),
            lat_req: Default::default(),
            tbl_req: Default::default(),
            stream,
            st_t0: Default::default(),
            st_t1: Default::default(),
            st_t2: Default::default(),
            st_sm: Default::default(),
            st_c0: Default::default(),
            st_s0: Default::default(),
            st_c1: Default::default(),
            st_s1: Default::default(),
            st_c2: Default::default(),
            st_s2: Default::default(),
            st_kt: Default::default(),
            st_cell: Default::default(),
            sink_rd: Default::default(),
            sink_issued: Default::default(),
            sink_row: Default::default(),
            sink_col: Default::default(),
            st_cw: [LAT_C0, LAT_C1, LAT_C2].map(|w| Constant::new((w as u64).to_bits())),
            ring: Default::default(),
            w_req: Default::default(),
            w_sel: Default::default(),
            w_index: Default::default(),
            w_ack: Default::default(),
            w_data: Default::default(),
            lw_sel: Default::default(),
            lw_odd: Default::default(),
            tw_way: Default::default(),
            lat_sel: std::array::from_fn(|i| {
                Constant::new(((TOWER_ARRAYS + SUMAX_ARRAYS + i) as u64).to_bits())
            }),
            tbl_sel: std::array::from_fn(|i| {
                Constant::new(((TOWER_ARRAYS + SUMAX_ARRAYS + LAT_ARRAYS + i) as u64).to_bits())
            }),
            sels_end: Constant::new((REGS_NW as u64).to_bits()),
            tower_sels: Constant::new((tower.arrays.len() as u64).to_bits()),
            sm_sel: std::array::from_fn(|i| Constant::new(((tower.arrays.len() + i) as u64).to_bits())),
            ro_none: Constant::new(3u64.to_bits()),
            zero32: Constant::new(0u64.to_bits()),
        })
    }
}

/// Clocks from a window request to its answer (the tower's readout latency).
pub const WINDOW_LATENCY: usize = tower_window::RO_LATENCY;

impl Logic for SketchCore {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, sw_q, lw_q, tw_q);
        self.in_ready.next = self.tower.in_ready.val() & self.sumax.in_ready.val();
        // Epoch engine: every sketch's bank and clear sweep; it sees each packet at ingress.
        self.engine.clock.next = self.clock.val();
        self.engine.reset.next = self.reset.val();
        self.engine.valid.next = self.i_valid.val();
        self.engine.swap.next = self.regs.swap.val();
        self.engine.clear.next = self.regs.clear.val();
        // Tower: packets in the active bank; readout window and clear on the idle bank.
        self.tower.clock.next = self.clock.val();
        self.tower.reset.next = self.reset.val();
        self.tower.key.next = self.i_key.val();
        self.tower.key_valid.next = self.i_valid.val();
        self.tower.acu.next = self.regs.acu.val();
        self.tower.bank.next = self.engine.active_bank.val();
        self.tower.rd_bank.next = !self.engine.active_bank.val();
        self.tower.clr.next = self.engine.clr.val();
        self.tower.clr_bank.next = self.engine.clr_bank.val();
        self.tower.clr_addr0.next = self.engine.clr_addr.val().get_bits::<TOWER_A0>(0);
        self.tower.clr_addr1.next = self.engine.clr_addr.val().get_bits::<TOWER_A1>(0);
        self.tower.clr_addr2.next = self.engine.clr_addr.val().get_bits::<TOWER_A2>(0);
        self.sink_tower_packets.x.next = self.tower.packets.val();
        self.window.clock.next = self.clock.val();
        self.window.reset.next = self.reset.val();
        // The window interface: the stream engine owns it while it runs (a register read of a
        // window then answers 0 at once); its START is a register write, which the register
        // file only takes with no window read pending, so no answer crosses owners.
        self.stream.clock.next = self.clock.val();
        self.stream.reset.next = self.reset.val();
        self.stream.start.next = self.regs.st_start.val();
        self.stream.epoch.next = self.engine.epoch.val();
        self.stream.seq_no.next = self.engine.sequence_no.val();
        self.stream.idle_packets.next = self.engine.idle_packets.val();
        self.stream.tready.next = self.c2h_tready.val();
        self.c2h_tdata.next = self.stream.tdata.val();
        self.c2h_tkeep.next = self.stream.tkeep.val();
        self.c2h_tvalid.next = self.stream.tvalid.val();
        self.c2h_tlast.next = self.stream.tlast.val();
        self.w_req.next = self.regs.win_req.val() & !self.stream.busy.val();
        self.w_sel.next = self.regs.win_sel.val();
        self.w_index.next = self.regs.win_index.val();
        // The lanes' read groups: SuMax's arrays share one address, the table's ways one
        // port (way 1 reads once way 0 has issued every read).
        for i in 0..3 {
            self.stream.go[i].next = self.stream.room[i].val();
            self.stream.go[i + 6].next = self.stream.room[i + 6].val();
            self.stream.go[i + 3].next =
                self.stream.room[3].val() & self.stream.room[4].val() & self.stream.room[5].val();
        }
        for i in 0..STREAM_LANES {
            self.sink_rd[i].x.next = self.stream.rd[i].val();
            self.sink_issued[i].x.next = self.stream.issued[i].val();
            self.sink_row[i].x.next = self.stream.row[i].val();
            self.sink_col[i].x.next = self.stream.col[i].val();
        }
        self.stream.go[9].next = self.stream.room[9].val();
        self.stream.go[10].next = self.stream.room[10].val() & self.stream.issued[9].val();
        self.st_t0.x.next = self.tower.rd_data0.val();
        self.st_t1.x.next = self.tower.rd_data1.val();
        self.st_t2.x.next = self.tower.rd_data2.val();
        self.stream.data[0].next = self.st_t0.y.val();
        self.stream.data[1].next = self.st_t1.y.val();
        self.stream.data[2].next = self.st_t2.y.val();
        self.st_sm[0].x.next = self.sumax.rd_data0.val();
        self.st_sm[1].x.next = self.sumax.rd_data1.val();
        self.st_sm[2].x.next = self.sumax.rd_data2.val();
        for i in 0..3 {
            self.stream.data[i + 3].next = self.st_sm[i].y.val();
        }
        self.st_c0.x.next = self.ps.rd_count0.val();
        self.st_s0.x.next = self.ps.rd_sum0.val();
        self.st_c1.x.next = self.ps.rd_count1.val();
        self.st_s1.x.next = self.ps.rd_sum1.val();
        self.st_c2.x.next = self.ps.rd_count2.val();
        self.st_s2.x.next = self.ps.rd_sum2.val();
        self.stream.data[6].next = self.st_c0.y.val() | (self.st_s0.y.val() << self.st_cw[0].val());
        self.stream.data[7].next = self.st_c1.y.val() | (self.st_s1.y.val() << self.st_cw[1].val());
        self.stream.data[8].next = self.st_c2.y.val() | (self.st_s2.y.val() << self.st_cw[2].val());
        self.st_kt.x.next = self.key_table.rd_data.val();
        self.stream.data[9].next = self.st_kt.y.val();
        self.stream.data[10].next = self.st_kt.y.val();
        self.tower_req.next = self.w_sel.val() < self.tower_sels.val();
        self.sm_req.next = !self.tower_req.val() & (self.w_sel.val() < self.lat_sel[0].val());
        self.lat_req.next =
            (self.w_sel.val() >= self.lat_sel[0].val()) & (self.w_sel.val() < self.tbl_sel[0].val());
        self.tbl_req.next =
            (self.w_sel.val() >= self.tbl_sel[0].val()) & (self.w_sel.val() < self.sels_end.val());
        self.window.ro_req.next = self.w_req.val() & self.tower_req.val();
        if self.w_sel.val() < self.tower_sels.val() {
            self.window.ro_array.next = self.w_sel.val().get_bits::<2>(0);
        } else {
            self.window.ro_array.next = self.ro_none.val();
        }
        self.window.ro_index.next = self.w_index.val().get_bits::<TOWER_AM>(0);
        if self.stream.busy.val() {
            self.tower.rd_addr0.next = self.stream.row[0].val().get_bits::<TOWER_A0>(0);
            self.tower.rd_addr1.next = self.stream.row[1].val().get_bits::<TOWER_A1>(0);
            self.tower.rd_addr2.next = self.stream.row[2].val().get_bits::<TOWER_A2>(0);
        } else {
            self.tower.rd_addr0.next = self.window.rd_addr0.val();
            self.tower.rd_addr1.next = self.window.rd_addr1.val();
            self.tower.rd_addr2.next = self.window.rd_addr2.val();
        }
        self.window.rd_data0.next = self.tower.rd_data0.val();
        self.window.rd_data1.next = self.tower.rd_data1.val();
        self.window.rd_data2.next = self.tower.rd_data2.val();
        // SuMax: the delay bin of the ingress packet; key, t and bank wait for it.
        self.dbin.clock.next = self.clock.val();
        self.dbin.reset.next = self.reset.val();
        self.dbin.delay.next = self.i_delay.val();
        self.dbin.delay_valid.next = self.i_valid.val();
        self.sm_valid[0].clock.next = self.clock.val();
        self.sm_key[0].clock.next = self.clock.val();
        self.sm_t[0].clock.next = self.clock.val();
        self.sm_bank[0].clock.next = self.clock.val();
        self.sm_valid[0].d.next = self.i_valid.val() & !self.reset.val();
        self.sm_key[0].d.next = self.i_key.val();
        self.sm_t[0].d.next = self.i_t.val();
        self.sm_bank[0].d.next = self.engine.active_bank.val();
        for j in 1..SM_DELAY {
            self.sm_valid[j].clock.next = self.clock.val();
            self.sm_key[j].clock.next = self.clock.val();
            self.sm_t[j].clock.next = self.clock.val();
            self.sm_bank[j].clock.next = self.clock.val();
            self.sm_valid[j].d.next = self.sm_valid[j - 1].q.val() & !self.reset.val();
            self.sm_key[j].d.next = self.sm_key[j - 1].q.val();
            self.sm_t[j].d.next = self.sm_t[j - 1].q.val();
            self.sm_bank[j].d.next = self.sm_bank[j - 1].q.val();
        }
        self.sumax.clock.next = self.clock.val();
        self.sumax.reset.next = self.reset.val();
        // rust-hdl workaround: `#[hdl_gen]` reads an array index from its text with only
        // loop variables known, so `sm_valid[SM_DELAY - 1]` panics at generation; this
        // one-pass loop makes the last tap's index a loop variable (hdl/README.md, quirks).
        for j in (SM_DELAY - 1)..SM_DELAY {
            self.sumax.key_valid.next = self.sm_valid[j].q.val();
            self.sumax.key.next = self.sm_key[j].q.val();
            self.sumax.t.next = self.sm_t[j].q.val();
            self.sumax.bank.next = self.sm_bank[j].q.val();
        }
        self.sumax.bin.next = self.dbin.bin.val();
        self.sumax.clr.next = self.engine.clr.val();
        self.sumax.clr_bank.next = self.engine.clr_bank.val();
        self.sumax.clr_addr.next = self.engine.clr_addr.val().get_bits::<SUMAX_A>(0);
        self.sink_clr.x.next = self.engine.clr_addr.val();
        self.sink_packets.x.next = self.sumax.packets.val();
        self.sumax.rd_bank.next = !self.engine.active_bank.val();
        // SuMax windows: word k -> (bucket, cell), read all arrays, pick the window's.
        self.cidx.clock.next = self.clock.val();
        self.cidx.k.next = self.w_index.val();
        self.st_cell.x.next = self.stream.col[3].val();
        if self.stream.busy.val() {
            self.sumax.rd_addr.next = self.stream.row[3].val().get_bits::<SUMAX_A>(0);
            self.sumax.rd_cell.next = self.st_cell.y.val();
        } else {
            self.sumax.rd_addr.next = self.cidx.bucket.val();
            self.sumax.rd_cell.next = self.cidx.cell_no.val();
        }
        self.sw_v[0].clock.next = self.clock.val();
        self.sw_v[0].d.next = self.w_req.val() & self.sm_req.val() & !self.reset.val();
        self.sw_sel[0].clock.next = self.clock.val();
        self.sw_sel[0].d.next = self.w_sel.val();
        for j in 1..SW_LATENCY {
            self.sw_v[j].clock.next = self.clock.val();
            self.sw_v[j].d.next = self.sw_v[j - 1].q.val() & !self.reset.val();
        }
        for j in 1..(SW_LATENCY - 1) {
            self.sw_sel[j].clock.next = self.clock.val();
            self.sw_sel[j].d.next = self.sw_sel[j - 1].q.val();
        }
        self.sw_q.d.next = self.zero32.val();
        // One-pass loop: the select's last tap, `sw_sel[SW_LATENCY - 2]`, as a loop variable
        // (the rust-hdl index rule above).
        for j in (SW_LATENCY - 2)..(SW_LATENCY - 1) {
            if self.sw_sel[j].q.val() == self.sm_sel[0].val() {
                self.sw_q.d.next = self.sumax.rd_data0.val();
            }
            if self.sw_sel[j].q.val() == self.sm_sel[1].val() {
                self.sw_q.d.next = self.sumax.rd_data1.val();
            }
            if self.sw_sel[j].q.val() == self.sm_sel[2].val() {
                self.sw_q.d.next = self.sumax.rd_data2.val();
            }
        }
        // Register file.
        self.regs.clock.next = self.clock.val();
        self.regs.reset.next = self.reset.val();
        AxiLiteSlave::<REGS_A>::link(&mut self.bus, &mut self.regs.bus);
        self.regs.frames.next = self.frames.val();
        self.regs.sketched.next = self.sketched.val();
        self.regs.bytes.next = self.bytes.val();
        self.regs.non_ip.next = self.non_ip.val();
        self.regs.malformed.next = self.malformed.val();
        self.regs.epoch_num.next = self.engine.epoch.val();
        self.regs.epoch_seq.next = self.engine.sequence_no.val();
        self.regs.swap_pending.next = self.engine.swap_pending.val();
        self.regs.clear_busy.next = self.engine.clear_busy.val();
        self.regs.idle_packets.next = self.engine.idle_packets.val();
        self.regs.active_packets.next = self.engine.active_packets.val();
        // Window answers: one read is pending at a time, so the one whose line ends acks.
        // `sw_v[6]`, `lw_v[2]`, `tw_v[5]`: the lines' last taps (asserted above).
        self.w_ack.next =
            self.window.ro_ack.val() | self.sw_v[6].q.val() | self.lw_v[2].q.val() | self.tw_v[5].q.val();
        if self.window.ro_ack.val() {
            self.w_data.next = self.window.ro_data.val();
        } else if self.lw_v[2].q.val() {
            self.w_data.next = self.lw_q.q.val();
        } else if self.tw_v[5].q.val() {
            self.w_data.next = self.tw_q.q.val();
        } else {
            self.w_data.next = self.sw_q.q.val();
        }
        if self.stream.busy.val() {
            self.regs.win_ack.next = self.regs.win_req.val();
            self.regs.win_data.next = self.zero32.val();
        } else {
            self.regs.win_ack.next = self.w_ack.val();
            self.regs.win_data.next = self.w_data.val();
        }
        self.regs.st_busy.next = self.stream.busy.val();
        self.regs.st_streams.next = self.stream.streams.val();
        self.regs.st_words.next = self.stream.last_words.val();
        self.regs.st_clocks.next = self.stream.last_clocks.val();
        self.regs.st_stalls.next = self.stream.last_stalls.val();
        // The per-switch block.
        if self.engine.active_bank.val() {
            self.regs.table_misses.next = self.key_table.misses0.val();
        } else {
            self.regs.table_misses.next = self.key_table.misses1.val();
        }
        self.stream.table_misses.next = self.regs.table_misses.val();
        self.regs.rec_words.next = self.ps.words.val();
        self.regs.rec_dropped.next = self.ps.dropped.val();
        self.regs.rec_head.next = self.ps.head.val();
        // The record ring owns the buffer's pops while it is enabled or on (RECORD_POP reads
        // 0): a register pop is decoded a clock before it pops, and ENABLE cannot change in
        // between (one bus transaction at a time), so the two never take the same word.
        self.regs.rec_head_valid.next =
            self.ps.head_valid.val() & !(self.ring.on.val() | self.regs.ring_enable.val());
        self.ring.clock.next = self.clock.val();
        self.ring.reset.next = self.reset.val();
        self.ring.enable.next = self.regs.ring_enable.val();
        self.ring.head.next = self.ps.head.val();
        self.ring.head_valid.next = self.ps.head_valid.val();
        self.ring.head_first.next = self.ps.head_first.val();
        self.ring.tready.next = self.ring_tready.val();
        self.ring_tdata.next = self.ring.tdata.val();
        self.ring_tvalid.next = self.ring.tvalid.val();
        self.regs.ring_words.next = self.ring.words.val();
        // ---- The per-switch half: the ingress packet's beats and descriptor, its bank and
        // epoch; readout and clear on the idle bank.
        self.ps.clock.next = self.clock.val();
        self.ps.reset.next = self.reset.val();
        self.ps.d_valid.next = self.i_valid.val();
        self.ps.d_ip.next = self.i_valid.val();
        self.ps.d_hops.next = self.i_hops.val();
        self.ps.d_rec.next = self.i_rec.val();
        self.ps.d_key.next = self.i_key.val();
        self.ps.d_bank.next = self.engine.active_bank.val();
        self.ps.d_epoch.next = self.engine.epoch.val();
        self.ps.mode.next = self.regs.ps_acu.val();
        self.ps.threshold.next = self.regs.inflate_threshold.val();
        if self.ring.on.val() {
            self.ps.pop.next = self.ring.pop.val();
        } else {
            self.ps.pop.next = self.regs.rec_pop.val();
        }
        self.ps.rd_bank.next = !self.engine.active_bank.val();
        if self.stream.busy.val() {
            self.ps.rd_addr0.next = self.stream.row[6].val().get_bits::<LAT_A0>(0);
            self.ps.rd_addr1.next = self.stream.row[7].val().get_bits::<LAT_A1>(0);
            self.ps.rd_addr2.next = self.stream.row[8].val().get_bits::<LAT_A2>(0);
        } else {
            self.ps.rd_addr0.next = self.w_index.val().get_bits::<LAT_A0>(1);
            self.ps.rd_addr1.next = self.w_index.val().get_bits::<LAT_A1>(1);
            self.ps.rd_addr2.next = self.w_index.val().get_bits::<LAT_A2>(1);
        }
        self.ps.clr.next = self.engine.clr.val();
        self.ps.clr_bank.next = self.engine.clr_bank.val();
        self.ps.clr_addr0.next = self.engine.clr_addr.val().get_bits::<LAT_A0>(0);
        self.ps.clr_addr1.next = self.engine.clr_addr.val().get_bits::<LAT_A1>(0);
        self.ps.clr_addr2.next = self.engine.clr_addr.val().get_bits::<LAT_A2>(0);
        // Latency windows: word 2b is bucket b's count, 2b + 1 its sum.
        self.lw_v[0].clock.next = self.clock.val();
        self.lw_v[0].d.next = self.w_req.val() & self.lat_req.val() & !self.reset.val();
        for j in 1..LW_LATENCY {
            self.lw_v[j].clock.next = self.clock.val();
            self.lw_v[j].d.next = self.lw_v[j - 1].q.val() & !self.reset.val();
        }
        self.w_c0.x.next = self.ps.rd_count0.val();
        self.w_s0.x.next = self.ps.rd_sum0.val();
        self.w_c1.x.next = self.ps.rd_count1.val();
        // The request's select and count/sum bit travel with it, so requests can follow
        // each other every clock.
        for j in 0..2 {
            self.lw_sel[j].clock.next = self.clock.val();
            self.lw_odd[j].clock.next = self.clock.val();
        }
        self.lw_sel[0].d.next = self.w_sel.val();
        self.lw_odd[0].d.next = self.w_index.val().get_bit(0);
        self.lw_sel[1].d.next = self.lw_sel[0].q.val();
        self.lw_odd[1].d.next = self.lw_odd[0].q.val();
        self.lw_q.d.next = self.zero32.val();
        if self.lw_odd[1].q.val() {
            if self.lw_sel[1].q.val() == self.lat_sel[0].val() {
                self.lw_q.d.next = self.w_s0.y.val();
            }
            if self.lw_sel[1].q.val() == self.lat_sel[1].val() {
                self.lw_q.d.next = self.ps.rd_sum1.val();
            }
            if self.lw_sel[1].q.val() == self.lat_sel[2].val() {
                self.lw_q.d.next = self.ps.rd_sum2.val();
            }
        } else {
            if self.lw_sel[1].q.val() == self.lat_sel[0].val() {
                self.lw_q.d.next = self.w_c0.y.val();
            }
            if self.lw_sel[1].q.val() == self.lat_sel[1].val() {
                self.lw_q.d.next = self.w_c1.y.val();
            }
            if self.lw_sel[1].q.val() == self.lat_sel[2].val() {
                self.lw_q.d.next = self.ps.rd_count2.val();
            }
        }
        // ---- The flow-key table: each packet at the flow tower's `done`, with its key,
        // bank, hop count and path from beside the tower.
        for j in 0..KT_WAIT {
            self.kt_key[j].clock.next = self.clock.val();
            self.kt_bank[j].clock.next = self.clock.val();
            self.kt_hops[j].clock.next = self.clock.val();
            self.kt_path[j].clock.next = self.clock.val();
        }
        self.kt_key[0].d.next = self.i_key.val();
        self.kt_bank[0].d.next = self.engine.active_bank.val();
        self.kt_hops[0].d.next = self.i_hops.val();
        self.kt_path[0].d.next = self.ps.path.val();
        for j in 1..KT_WAIT {
            self.kt_key[j].d.next = self.kt_key[j - 1].q.val();
            self.kt_bank[j].d.next = self.kt_bank[j - 1].q.val();
            self.kt_hops[j].d.next = self.kt_hops[j - 1].q.val();
            self.kt_path[j].d.next = self.kt_path[j - 1].q.val();
        }
        self.key_table.clock.next = self.clock.val();
        self.key_table.reset.next = self.reset.val();
        self.key_table.valid.next = self.tower.done.val();
        self.key_table.key.next = self.kt_key[6].q.val();
        self.key_table.bank.next = self.kt_bank[6].q.val();
        self.key_table.hops.next = self.kt_hops[6].q.val();
        self.key_table.path.next = self.kt_path[6].q.val();
        self.key_table.estimate.next = self.tower.estimate.val();
        self.key_table.est_inf.next = self.tower.estimate_inf.val();
        self.key_table.threshold.next = self.regs.table_threshold.val();
        self.key_table.clr.next = self.engine.clr.val();
        self.key_table.clr_bank.next = self.engine.clr_bank.val();
        self.key_table.clr_addr.next = self.engine.clr_addr.val().get_bits::<TABLE_A>(0);
        // Table windows: word k = 12 slot + word, of the way the window selects.
        self.tidx.clock.next = self.clock.val();
        self.tidx.k.next = self.w_index.val();
        self.key_table.rd_bank.next = !self.engine.active_bank.val();
        // The way travels beside the slot index (CellIndex's latency).
        for j in 0..CELL_INDEX_LATENCY {
            self.tw_way[j].clock.next = self.clock.val();
        }
        self.tw_way[0].d.next = self.w_sel.val() == self.tbl_sel[1].val();
        for j in 1..CELL_INDEX_LATENCY {
            self.tw_way[j].d.next = self.tw_way[j - 1].q.val();
        }
        for j in (CELL_INDEX_LATENCY - 1)..CELL_INDEX_LATENCY {
            self.key_table.rd_way.next = self.tw_way[j].q.val();
        }
        self.key_table.rd_addr.next = self.tidx.bucket.val();
        self.key_table.rd_word.next = self.tidx.cell_no.val().get_bits::<4>(0);
        if self.stream.busy.val() {
            self.key_table.rd_way.next = self.stream.issued[9].val();
            if self.stream.issued[9].val() {
                self.key_table.rd_addr.next = self.stream.row[10].val().get_bits::<TABLE_A>(0);
                self.key_table.rd_word.next = self.stream.col[10].val();
            } else {
                self.key_table.rd_addr.next = self.stream.row[9].val().get_bits::<TABLE_A>(0);
                self.key_table.rd_word.next = self.stream.col[9].val();
            }
        }
        self.tw_v[0].clock.next = self.clock.val();
        self.tw_v[0].d.next = self.w_req.val() & self.tbl_req.val() & !self.reset.val();
        for j in 1..TW_LATENCY {
            self.tw_v[j].clock.next = self.clock.val();
            self.tw_v[j].d.next = self.tw_v[j - 1].q.val() & !self.reset.val();
        }
        self.tw_q.d.next = self.key_table.rd_data.val();
        self.sink_word_hi.x.next = self.tidx.cell_no.val().get_bits::<4>(4);
        self.sink_outcome[0].x.next = self.key_table.done.val();
        self.sink_outcome[1].x.next = self.key_table.offered.val();
        self.sink_outcome[2].x.next = self.key_table.inserted.val();
        self.sink_outcome[3].x.next = self.key_table.way.val();
        self.sink_outcome[4].x.next = self.key_table.present.val();
        self.sink_outcome[5].x.next = self.key_table.full.val();
        // Monitors.
        self.mon_valid.next = self.i_valid.val();
        self.mon_key.next = self.i_key.val();
        self.mon_epoch.next = self.engine.epoch.val();
        self.mon_bank.next = self.engine.active_bank.val();
        // Every tap of the SuMax line written out (SM_DELAY = 7, asserted by the tests). rust-hdl
        // workaround: `#[hdl_gen]` cannot read `.next`, so an OR cannot accumulate in a loop
        // (that would take a chain of local signals).
        self.sketch_idle.next = self.tower.idle.val()
            & self.sumax.idle.val()
            & self.ps.idle.val()
            & self.key_table.idle.val()
            & !(self.dbin.valid.val()
                | self.sm_valid[0].q.val()
                | self.sm_valid[1].q.val()
                | self.sm_valid[2].q.val()
                | self.sm_valid[3].q.val()
                | self.sm_valid[4].q.val()
                | self.sm_valid[5].q.val()
                | self.sm_valid[6].q.val());
        self.est_valid.next = self.tower.done.val();
        self.est_inf.next = self.tower.estimate_inf.val();
        self.estimate.next = self.tower.estimate.val();
        self.sm_done.next = self.sumax.done.val();
        self.sm_size_inf.next = self.sumax.size_inf.val();
        self.sm_size.next = self.sumax.size.val();
        self.sm_delay_inf.next = self.sumax.delay_inf.val();
        self.sm_delay.next = self.sumax.delay.val();
        self.hop_lost.next = self.ps.lost.val() != self.zero32.val();
        self.regs.hops_refused.next = self.ps.lost.val();
    }
}

/// The ingress stage in front of [`SketchCore`]: a descriptor (the parser's `d_*`, in its
/// clock) registered once, IP packets only marked valid, `t` and the saturated delay made
/// here so every front hands the sketches the same values.
///
/// | port | dir | width | meaning |
/// |---|---|---|---|
/// | `d_valid`, `d_class`, `d_key`, `d_ts`, `d_delay`, `d_hops` | in | 1, 2, 104, 64, 64, 5 | a descriptor |
/// | `i_valid`, `i_key`, `i_t`, `i_delay`, `i_hops` | out | 1, 104, TW, 32, 5 | the next clock: an IP packet, its key, `d_ts >> time_shift` in `TW` bits, the delay saturated to 32 bits, the hop count |
#[derive(LogicBlock)]
pub struct Ingress {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub d_valid: Signal<In, Bit>,
    pub d_class: Signal<In, Bits<2>>,
    pub d_key: Signal<In, Bits<104>>,
    pub d_ts: Signal<In, Bits<64>>,
    pub d_delay: Signal<In, Bits<64>>,
    pub d_hops: Signal<In, Bits<5>>,
    pub i_valid: Signal<Out, Bit>,
    pub i_key: Signal<Out, Bits<104>>,
    pub i_t: Signal<Out, Bits<SUMAX_TW>>,
    pub i_delay: Signal<Out, Bits<32>>,
    pub i_hops: Signal<Out, Bits<5>>,
    valid: DFF<Bit>,
    key: DFF<Bits<104>>,
    t: DFF<Bits<SUMAX_TW>>,
    delay: DFF<Bits<32>>,
    hops: DFF<Bits<5>>,
    sink_ts: Sink<64>,
    class_ip: Constant<Bits<2>>,
    t_shift: Constant<Bits<6>>,
    zero32: Constant<Bits<32>>,
    ones32: Constant<Bits<32>>,
}

impl Ingress {
    /// The stage for `sumax`'s time shift.
    pub fn new(sumax: &SuMaxGeometry) -> Self {
        Ingress {
            clock: Default::default(),
            reset: Default::default(),
            d_valid: Default::default(),
            d_class: Default::default(),
            d_key: Default::default(),
            d_ts: Default::default(),
            d_delay: Default::default(),
            d_hops: Default::default(),
            i_valid: Default::default(),
            i_key: Default::default(),
            i_t: Default::default(),
            i_delay: Default::default(),
            i_hops: Default::default(),
            valid: Default::default(),
            key: Default::default(),
            t: Default::default(),
            delay: Default::default(),
            hops: Default::default(),
            sink_ts: Default::default(),
            class_ip: konst!(CLASS_IP),
            t_shift: Constant::new((sumax.time_shift as u64).to_bits()),
            zero32: Constant::new(0u64.to_bits()),
            ones32: Constant::new(0xffff_ffffu64.to_bits()),
        }
    }
}

impl Logic for Ingress {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, valid, key, t, delay, hops);
        self.sink_ts.x.next = self.d_ts.val();
        self.valid.d.next =
            self.d_valid.val() & (self.d_class.val() == self.class_ip.val()) & !self.reset.val();
        self.key.d.next = self.d_key.val();
        self.hops.d.next = self.d_hops.val();
        // SuMax inputs: the time cell value and the INT delay (saturated to 32 bits: every
        // delay >= 2^32 ns is in the last bin anyway).
        self.t.d.next = self.d_ts.val().get_bits::<SUMAX_TW>(self.t_shift.val().index());
        if self.d_delay.val().get_bits::<32>(32) == self.zero32.val() {
            self.delay.d.next = self.d_delay.val().get_bits::<32>(0);
        } else {
            self.delay.d.next = self.ones32.val();
        }
        self.i_valid.next = self.valid.q.val();
        self.i_key.next = self.key.q.val();
        self.i_t.next = self.t.q.val();
        self.i_delay.next = self.delay.q.val();
        self.i_hops.next = self.hops.q.val();
    }
}
