//! `regs`: the register file behind the PCIe BAR, an AXI4-Lite slave generated from the
//! contract's register map.
//!
//! Everything address-shaped comes from [`RegMap`] (= `contract::regs::Layout` of the
//! geometries): the constant words of `Layout::constant_registers` (block headers, firmware
//! ID, geometry and CRC descriptors, window offsets) are a read-only lookup table (an
//! asynchronous `ROM` case statement, LUTs), the live registers are compared against
//! constants computed in [`RegisterFile::new`], and the readout windows are `(base, end)`
//! word-address pairs. Nothing in `update` is a typed-in offset.
//!
//! | module | what |
//! |---|---|
//! | [`axil`] | the AXI4-Lite slave port as one rust-hdl interface bundle, shared with the core |
//! | [`map`] | the contract's register layout as the file's address decode ([`RegMap`]) |
//!
//! # Bus (AXI4-Lite slave, 32-bit data, `A` address bits)
//!
//! - One transaction at a time. In the idle state `arready` is 1 (reads win); `awready` and
//!   `wready` rise together, combinationally, when `awvalid` and `wvalid` are both high and
//!   no read is offered (the slave waits for both, which AXI allows). Valid outputs
//!   (`rvalid`, `bvalid`) and `rdata` come from flops and never depend on ready inputs.
//! - Responses are always OKAY (`bresp` = `rresp` = 0).
//! - The two low address bits are ignored (registers are 32-bit words).
//! - Writes take effect on the AW/W handshake clock if `wstrb[0]` is set (all writable bits
//!   are in byte 0), then `bvalid` rises on the next clock. Writes to read-only or unmapped
//!   addresses are ignored (OKAY). MODE accepts 0 (CM) and 2 (ACU); other values are
//!   ignored, so MODE always reads a valid mode.
//! - Reads: the address is registered on the AR handshake, decoded on the next clock and
//!   `rvalid` rises one clock later (register reads take 2 clocks from AR to R). Unmapped
//!   addresses (including CONTROL, which is write-only, and block-slot padding) read 0.
//! - Window reads: an address inside readout window `s` at word `k` raises `win_req` for
//!   exactly one clock with `win_sel = s`, `win_index = k` (held until the next window
//!   read); the R channel answers with `win_data` on the first clock `win_ack` is high
//!   (from the clock `win_req` is high onwards, any latency). `win_ack` outside a pending
//!   window read is ignored.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | clock; synchronous reset: bus idle, MODE = CM, no pulse |
//! | `bus` | | | the AXI4-Lite slave, one [`AxiLiteSlave`] bundle: Verilog ports `bus$awaddr` ... `bus$rready` (table in [`axil`]); responses OKAY |
//! | `frames`, `sketched`, `bytes`, `non_ip`, `malformed` | in | 64 each | statistics counters (lo word at the contract offset, hi word +4) |
//! | `epoch_num`, `epoch_seq` | in | 32, 32 | EPOCH, SEQUENCE |
//! | `swap_pending`, `clear_busy` | in | 1, 1 | STATUS bits 0 and 1 (other bits read 0) |
//! | `idle_packets`, `active_packets` | in | 64, 64 | IDLE_PACKETS, ACTIVE_PACKETS |
//! | `swap`, `clear` | out | 1, 1 | one-clock pulses from a CONTROL write with bit 0 / bit 1 set |
//! | `acu` | out | 1 | tower MODE: 0 = CM (MODE reads 0), 1 = ACU (MODE reads 2) |
//! | `win_req` | out | 1 | one-clock window read request |
//! | `win_sel`, `win_index` | out | 4, IW | window (tower arrays `0..d`, then SuMax arrays) and word index |
//! | `win_ack`, `win_data` | in | 1, 32 | window read answer |
//! | `ps_acu`, `inflate_threshold`, `table_threshold` | out | 1, 22, 32 | the per-switch block's MODE (reset CM) and thresholds (reset: the contract's defaults, Delta_l = 5 and `DEFAULT_TABLE_THRESHOLD`) |
//! | `table_misses`, `rec_words`, `rec_dropped`, `hops_refused` | in | 32, 16, 32, 32 | TABLE_MISSES, RECORD_WORDS, RECORD_DROPPED, HOPS_REFUSED |
//! | `st_start` | out | 1 | one-clock pulse from a write of the stream block's CONTROL with bit 0 (START) set |
//! | `st_busy`, `st_streams`, `st_words`, `st_clocks`, `st_stalls` | in | 1, 32, 32, 32, 32 | the stream block's STATUS (BUSY = bit 0), STREAMS, LAST_WORDS, LAST_CLOCKS, LAST_STALLS |
//! | `ring_enable`, `ring_words` | out, in | 1, 32 | the stream block's RING_CONTROL (ENABLE, read/write, reset 0) and RING_WORDS |
//! | `rec_head`, `rec_head_valid`, `rec_pop` | in, in, out | 32, 1, 1 | RECORD_POP: a read returns `rec_head` (0 without `rec_head_valid`) and pulses `rec_pop` for one clock after the clock it is decoded in (only with `rec_head_valid`, so the head moves before any later read) |
//!
//! The threshold registers take the whole 32-bit word when `wstrb[0]` is set (the driver
//! writes whole words); INFLATE_THRESHOLD keeps its low 22 bits.
//!
//! Generics: `A` address bits (the BAR is `2^A` bytes: 22 for the default 4 MiB map),
//! `IW = A - 2` word-index bits, `NW` readout windows (11 by default); [`RegisterFile::new`]
//! checks them against the map. [`RegsNic`] is the board's configuration.
pub mod axil;
pub mod map;

pub use axil::AxiLiteSlave;

pub use map::{default_firmware, Live, RegMap, CTRL_WORD_BITS, SEL_BITS, STAT_PORTS};

use crate::arith::Widen;
use crate::nic::{REGS_A, REGS_IW, REGS_NW};
use crate::sketch::Sink;
use rust_hdl::prelude::*;
use std::collections::BTreeMap;

/// Clocks from the AR handshake to `rvalid` for a register (not window) read.
pub const READ_LATENCY: usize = 2;
/// Bits of INFLATE_THRESHOLD (the contract's).
pub const INFLATE_BITS: usize = smartnic_contract::regs::per_switch::THRESHOLD_BITS as usize;

/// The per-switch thresholds at reset: SketchINT's Delta_l = 5 as the log-domain threshold,
/// and the contract's table threshold.
pub fn reset_thresholds() -> (u32, u32) {
    use smartnic_contract::lut::{log2_table, Log2Params};
    use smartnic_contract::per_switch::{InflateRule, DEFAULT_TABLE_THRESHOLD};
    let p = Log2Params::DEFAULT;
    let rule = InflateRule::from_ratio_x256(&log2_table(p), p, InflateRule::SKETCHINT_RATIO_X256);
    (rule.threshold, DEFAULT_TABLE_THRESHOLD)
}

/// The register file (see the module docs).
#[derive(LogicBlock)]
pub struct RegisterFile<const A: usize, const IW: usize, const NW: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// The BAR's bus (Verilog ports `bus$awaddr`, ...).
    pub bus: AxiLiteSlave<A>,
    pub frames: Signal<In, Bits<64>>,
    pub sketched: Signal<In, Bits<64>>,
    pub bytes: Signal<In, Bits<64>>,
    pub non_ip: Signal<In, Bits<64>>,
    pub malformed: Signal<In, Bits<64>>,
    pub epoch_num: Signal<In, Bits<32>>,
    pub epoch_seq: Signal<In, Bits<32>>,
    pub swap_pending: Signal<In, Bit>,
    pub clear_busy: Signal<In, Bit>,
    pub idle_packets: Signal<In, Bits<64>>,
    pub active_packets: Signal<In, Bits<64>>,
    pub swap: Signal<Out, Bit>,
    pub clear: Signal<Out, Bit>,
    pub acu: Signal<Out, Bit>,
    pub win_req: Signal<Out, Bit>,
    pub win_sel: Signal<Out, Bits<SEL_BITS>>,
    pub win_index: Signal<Out, Bits<IW>>,
    pub win_ack: Signal<In, Bit>,
    pub win_data: Signal<In, Bits<32>>,
    pub ps_acu: Signal<Out, Bit>,
    pub inflate_threshold: Signal<Out, Bits<INFLATE_BITS>>,
    pub table_threshold: Signal<Out, Bits<32>>,
    pub table_misses: Signal<In, Bits<32>>,
    pub rec_words: Signal<In, Bits<16>>,
    pub rec_dropped: Signal<In, Bits<32>>,
    pub hops_refused: Signal<In, Bits<32>>,
    pub rec_head: Signal<In, Bits<32>>,
    pub rec_head_valid: Signal<In, Bit>,
    pub rec_pop: Signal<Out, Bit>,
    pub st_start: Signal<Out, Bit>,
    pub st_busy: Signal<In, Bit>,
    pub st_streams: Signal<In, Bits<32>>,
    pub st_words: Signal<In, Bits<32>>,
    pub st_clocks: Signal<In, Bits<32>>,
    pub st_stalls: Signal<In, Bits<32>>,
    pub ring_enable: Signal<Out, Bit>,
    pub ring_words: Signal<In, Bits<32>>,
    // bus state: idle = none of these set
    s_dec: DFF<Bit>,
    s_wait: DFF<Bit>,
    s_rv: DFF<Bit>,
    s_bv: DFF<Bit>,
    addr: DFF<Bits<IW>>,
    data: DFF<Bits<32>>,
    req: DFF<Bit>,
    sel: DFF<Bits<SEL_BITS>>,
    index: DFF<Bits<IW>>,
    swap_q: DFF<Bit>,
    clear_q: DFF<Bit>,
    acu_q: DFF<Bit>,
    ps_acu_q: DFF<Bit>,
    infl_q: DFF<Bits<INFLATE_BITS>>,
    tthr_q: DFF<Bits<32>>,
    pop_q: DFF<Bit>,
    st_start_q: DFF<Bit>,
    ring_q: DFF<Bit>,
    rom: ROM<Bits<32>, CTRL_WORD_BITS>,
    idle: Signal<Local, Bit>,
    wr_go: Signal<Local, Bit>,
    wr_word: Signal<Local, Bits<IW>>,
    live: Signal<Local, Bits<32>>,
    hit: Signal<Local, Bit>,
    hit_sel: Signal<Local, Bits<SEL_BITS>>,
    hit_index: Signal<Local, Bits<IW>>,
    sink_aw: Sink<2>,
    sink_ar: Sink<2>,
    sink_strb: Sink<3>,
    // window bounds (word addresses, end exclusive) and numbers
    w_base: [Constant<Bits<IW>>; NW],
    w_end: [Constant<Bits<IW>>; NW],
    w_num: [Constant<Bits<SEL_BITS>>; NW],
    // live register word addresses
    k_stat_lo: [Constant<Bits<IW>>; 5],
    k_stat_hi: [Constant<Bits<IW>>; 5],
    k_status: Constant<Bits<IW>>,
    k_epoch: Constant<Bits<IW>>,
    k_seq: Constant<Bits<IW>>,
    k_idle_lo: Constant<Bits<IW>>,
    k_idle_hi: Constant<Bits<IW>>,
    k_active_lo: Constant<Bits<IW>>,
    k_active_hi: Constant<Bits<IW>>,
    k_mode: Constant<Bits<IW>>,
    k_ps_mode: Constant<Bits<IW>>,
    k_infl: Constant<Bits<IW>>,
    k_tthr: Constant<Bits<IW>>,
    k_misses: Constant<Bits<IW>>,
    k_rwords: Constant<Bits<IW>>,
    k_rdropped: Constant<Bits<IW>>,
    k_refused: Constant<Bits<IW>>,
    k_pop: Constant<Bits<IW>>,
    k_st_control: Constant<Bits<IW>>,
    k_st_status: Constant<Bits<IW>>,
    k_st_count: Constant<Bits<IW>>,
    k_st_words: Constant<Bits<IW>>,
    k_st_clocks: Constant<Bits<IW>>,
    k_st_stalls: Constant<Bits<IW>>,
    k_ring_control: Constant<Bits<IW>>,
    k_ring_words: Constant<Bits<IW>>,
    infl_reset: Constant<Bits<INFLATE_BITS>>,
    tthr_reset: Constant<Bits<32>>,
    w_words: Widen<32, 16>,
    w_infl: Widen<32, INFLATE_BITS>,
    k_control: Constant<Bits<IW>>,
    k_ctrl_words: Constant<Bits<IW>>,
    v0: Constant<Bits<32>>,
    v1: Constant<Bits<32>>,
    v2: Constant<Bits<32>>,
    v3: Constant<Bits<32>>,
    okay: Constant<Bits<2>>,
}

/// The board's register file: the default map (4 MiB BAR, 11 windows), as the named
/// constants of [`crate::nic`].
pub type RegsNic = RegisterFile<REGS_A, REGS_IW, REGS_NW>;

fn word<const IW: usize>(byte_offset: u32) -> Constant<Bits<IW>> {
    Constant::new(((byte_offset / 4) as u64).to_bits())
}

impl<const A: usize, const IW: usize, const NW: usize> RegisterFile<A, IW, NW> {
    /// The register file of `map`; the generics must match it (`2^A` = BAR size,
    /// `IW = A - 2`, `NW` = number of windows).
    pub fn new(map: &RegMap) -> Result<Self, String> {
        if map.addr_bits() != A || IW + 2 != A {
            return Err(format!(
                "the map needs a {}-bit address (BAR {:#x}), the block has A = {A}, IW = {IW}",
                map.addr_bits(),
                map.layout.bar_size
            ));
        }
        if map.windows.len() != NW {
            return Err(format!("the map has {} windows, the block NW = {NW}", map.windows.len()));
        }
        let rom: BTreeMap<Bits<CTRL_WORD_BITS>, Bits<32>> = map
            .constants
            .iter()
            .map(|&(off, v)| (((off / 4) as u64).to_bits(), (v as u64).to_bits()))
            .collect();
        let live = |what: Live| -> Constant<Bits<IW>> {
            word(map.live.iter().find(|l| l.1 == what).expect("every live register is mapped").0)
        };
        Ok(RegisterFile {
            clock: Default::default(),
            reset: Default::default(),
            bus: Default::default(),
            frames: Default::default(),
            sketched: Default::default(),
            bytes: Default::default(),
            non_ip: Default::default(),
            malformed: Default::default(),
            epoch_num: Default::default(),
            epoch_seq: Default::default(),
            swap_pending: Default::default(),
            clear_busy: Default::default(),
            idle_packets: Default::default(),
            active_packets: Default::default(),
            swap: Default::default(),
            clear: Default::default(),
            acu: Default::default(),
            win_req: Default::default(),
            win_sel: Default::default(),
            win_index: Default::default(),
            win_ack: Default::default(),
            win_data: Default::default(),
            ps_acu: Default::default(),
            inflate_threshold: Default::default(),
            table_threshold: Default::default(),
            table_misses: Default::default(),
            rec_words: Default::default(),
            rec_dropped: Default::default(),
            hops_refused: Default::default(),
            rec_head: Default::default(),
            rec_head_valid: Default::default(),
            rec_pop: Default::default(),
            st_start: Default::default(),
            st_busy: Default::default(),
            st_streams: Default::default(),
            st_words: Default::default(),
            st_clocks: Default::default(),
            st_stalls: Default::default(),
            ring_enable: Default::default(),
            ring_words: Default::default(),
            s_dec: Default::default(),
            s_wait: Default::default(),
            s_rv: Default::default(),
            s_bv: Default::default(),
            addr: Default::default(),
            data: Default::default(),
            req: Default::default(),
            sel: Default::default(),
            index: Default::default(),
            swap_q: Default::default(),
            clear_q: Default::default(),
            acu_q: Default::default(),
            ps_acu_q: Default::default(),
            infl_q: Default::default(),
            tthr_q: Default::default(),
            pop_q: Default::default(),
            st_start_q: Default::default(),
            ring_q: Default::default(),
            rom: ROM::new(rom),
            idle: Default::default(),
            wr_go: Default::default(),
            wr_word: Default::default(),
            live: Default::default(),
            hit: Default::default(),
            hit_sel: Default::default(),
            hit_index: Default::default(),
            sink_aw: Default::default(),
            sink_ar: Default::default(),
            sink_strb: Default::default(),
            w_base: std::array::from_fn(|i| word(map.windows[i].base)),
            w_end: std::array::from_fn(|i| word(map.windows[i].base + map.windows[i].size)),
            w_num: std::array::from_fn(|i| Constant::new((i as u64).to_bits())),
            k_stat_lo: std::array::from_fn(|n| live(Live::Stat { n, hi: false })),
            k_stat_hi: std::array::from_fn(|n| live(Live::Stat { n, hi: true })),
            k_status: live(Live::Status),
            k_epoch: live(Live::Epoch),
            k_seq: live(Live::Sequence),
            k_idle_lo: live(Live::IdlePackets { hi: false }),
            k_idle_hi: live(Live::IdlePackets { hi: true }),
            k_active_lo: live(Live::ActivePackets { hi: false }),
            k_active_hi: live(Live::ActivePackets { hi: true }),
            k_mode: word(map.mode),
            k_ps_mode: live(Live::PsMode),
            k_infl: live(Live::InflateThreshold),
            k_tthr: live(Live::TableThreshold),
            k_misses: live(Live::TableMisses),
            k_rwords: live(Live::RecordWords),
            k_rdropped: live(Live::RecordDropped),
            k_refused: live(Live::HopsRefused),
            k_pop: live(Live::RecordPop),
            k_st_control: word(map.stream_control),
            k_st_status: live(Live::StreamStatus),
            k_st_count: live(Live::StreamCount),
            k_st_words: live(Live::StreamWords),
            k_st_clocks: live(Live::StreamClocks),
            k_st_stalls: live(Live::StreamStalls),
            k_ring_control: live(Live::RingControl),
            k_ring_words: live(Live::RingWords),
            infl_reset: Constant::new((reset_thresholds().0 as u64).to_bits()),
            tthr_reset: Constant::new((reset_thresholds().1 as u64).to_bits()),
            w_words: Default::default(),
            w_infl: Default::default(),
            k_control: word(map.control),
            k_ctrl_words: Constant::new((1u64 << CTRL_WORD_BITS).to_bits()),
            v0: Constant::new(0u64.to_bits()),
            v1: Constant::new(1u64.to_bits()),
            v2: Constant::new(2u64.to_bits()),
            v3: Constant::new(3u64.to_bits()),
            okay: Constant::new(0u64.to_bits()),
        })
    }
}

impl<const A: usize, const IW: usize, const NW: usize> Logic for RegisterFile<A, IW, NW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, s_dec, s_wait, s_rv, s_bv, addr, data, req, sel, index, swap_q, clear_q, acu_q,
            ps_acu_q, infl_q, tthr_q, pop_q, st_start_q, ring_q
        );
        self.sink_aw.x.next = self.bus.awaddr.val().get_bits::<2>(0);
        self.sink_ar.x.next = self.bus.araddr.val().get_bits::<2>(0);
        self.sink_strb.x.next = self.bus.wstrb.val().get_bits::<3>(1);
        // Handshakes: reads first, a write when both AW and W are offered.
        self.idle.next = !(self.s_dec.q.val() | self.s_wait.q.val() | self.s_rv.q.val() | self.s_bv.q.val());
        self.bus.arready.next = self.idle.val();
        self.wr_go.next =
            self.idle.val() & !self.bus.arvalid.val() & self.bus.awvalid.val() & self.bus.wvalid.val();
        self.bus.awready.next = self.wr_go.val();
        self.bus.wready.next = self.wr_go.val();
        self.wr_word.next = self.bus.awaddr.val().get_bits::<IW>(2);
        self.bus.bresp.next = self.okay.val();
        self.bus.rresp.next = self.okay.val();
        self.bus.bvalid.next = self.s_bv.q.val();
        self.bus.rvalid.next = self.s_rv.q.val();
        self.bus.rdata.next = self.data.q.val();
        self.swap.next = self.swap_q.q.val();
        self.clear.next = self.clear_q.q.val();
        self.acu.next = self.acu_q.q.val();
        self.ps_acu.next = self.ps_acu_q.q.val();
        self.inflate_threshold.next = self.infl_q.q.val();
        self.table_threshold.next = self.tthr_q.q.val();
        self.rec_pop.next = self.pop_q.q.val();
        self.st_start.next = self.st_start_q.q.val();
        self.ring_enable.next = self.ring_q.q.val();
        self.w_words.x.next = self.rec_words.val();
        self.w_infl.x.next = self.infl_q.q.val();
        self.win_req.next = self.req.q.val();
        self.win_sel.next = self.sel.q.val();
        self.win_index.next = self.index.q.val();
        // Constant words: the contract's table, control area only.
        self.rom.address.next = self.addr.q.val().get_bits::<CTRL_WORD_BITS>(0);
        // Live registers (else the table, 0 outside the control area).
        if self.addr.q.val() == self.k_stat_lo[0].val() {
            self.live.next = self.frames.val().get_bits::<32>(0);
        } else if self.addr.q.val() == self.k_stat_hi[0].val() {
            self.live.next = self.frames.val().get_bits::<32>(32);
        } else if self.addr.q.val() == self.k_stat_lo[1].val() {
            self.live.next = self.sketched.val().get_bits::<32>(0);
        } else if self.addr.q.val() == self.k_stat_hi[1].val() {
            self.live.next = self.sketched.val().get_bits::<32>(32);
        } else if self.addr.q.val() == self.k_stat_lo[2].val() {
            self.live.next = self.bytes.val().get_bits::<32>(0);
        } else if self.addr.q.val() == self.k_stat_hi[2].val() {
            self.live.next = self.bytes.val().get_bits::<32>(32);
        } else if self.addr.q.val() == self.k_stat_lo[3].val() {
            self.live.next = self.non_ip.val().get_bits::<32>(0);
        } else if self.addr.q.val() == self.k_stat_hi[3].val() {
            self.live.next = self.non_ip.val().get_bits::<32>(32);
        } else if self.addr.q.val() == self.k_stat_lo[4].val() {
            self.live.next = self.malformed.val().get_bits::<32>(0);
        } else if self.addr.q.val() == self.k_stat_hi[4].val() {
            self.live.next = self.malformed.val().get_bits::<32>(32);
        } else if self.addr.q.val() == self.k_status.val() {
            if self.swap_pending.val() & self.clear_busy.val() {
                self.live.next = self.v3.val();
            } else if self.clear_busy.val() {
                self.live.next = self.v2.val();
            } else if self.swap_pending.val() {
                self.live.next = self.v1.val();
            } else {
                self.live.next = self.v0.val();
            }
        } else if self.addr.q.val() == self.k_epoch.val() {
            self.live.next = self.epoch_num.val();
        } else if self.addr.q.val() == self.k_seq.val() {
            self.live.next = self.epoch_seq.val();
        } else if self.addr.q.val() == self.k_idle_lo.val() {
            self.live.next = self.idle_packets.val().get_bits::<32>(0);
        } else if self.addr.q.val() == self.k_idle_hi.val() {
            self.live.next = self.idle_packets.val().get_bits::<32>(32);
        } else if self.addr.q.val() == self.k_active_lo.val() {
            self.live.next = self.active_packets.val().get_bits::<32>(0);
        } else if self.addr.q.val() == self.k_active_hi.val() {
            self.live.next = self.active_packets.val().get_bits::<32>(32);
        } else if self.addr.q.val() == self.k_mode.val() {
            if self.acu_q.q.val() {
                self.live.next = self.v2.val();
            } else {
                self.live.next = self.v0.val();
            }
        } else if self.addr.q.val() == self.k_ps_mode.val() {
            if self.ps_acu_q.q.val() {
                self.live.next = self.v2.val();
            } else {
                self.live.next = self.v0.val();
            }
        } else if self.addr.q.val() == self.k_infl.val() {
            self.live.next = self.w_infl.y.val();
        } else if self.addr.q.val() == self.k_tthr.val() {
            self.live.next = self.tthr_q.q.val();
        } else if self.addr.q.val() == self.k_misses.val() {
            self.live.next = self.table_misses.val();
        } else if self.addr.q.val() == self.k_rwords.val() {
            self.live.next = self.w_words.y.val();
        } else if self.addr.q.val() == self.k_rdropped.val() {
            self.live.next = self.rec_dropped.val();
        } else if self.addr.q.val() == self.k_refused.val() {
            self.live.next = self.hops_refused.val();
        } else if self.addr.q.val() == self.k_pop.val() {
            if self.rec_head_valid.val() {
                self.live.next = self.rec_head.val();
            } else {
                self.live.next = self.v0.val();
            }
        } else if self.addr.q.val() == self.k_st_status.val() {
            if self.st_busy.val() {
                self.live.next = self.v1.val();
            } else {
                self.live.next = self.v0.val();
            }
        } else if self.addr.q.val() == self.k_st_count.val() {
            self.live.next = self.st_streams.val();
        } else if self.addr.q.val() == self.k_st_words.val() {
            self.live.next = self.st_words.val();
        } else if self.addr.q.val() == self.k_st_clocks.val() {
            self.live.next = self.st_clocks.val();
        } else if self.addr.q.val() == self.k_st_stalls.val() {
            self.live.next = self.st_stalls.val();
        } else if self.addr.q.val() == self.k_ring_control.val() {
            if self.ring_q.q.val() {
                self.live.next = self.v1.val();
            } else {
                self.live.next = self.v0.val();
            }
        } else if self.addr.q.val() == self.k_ring_words.val() {
            self.live.next = self.ring_words.val();
        } else if self.addr.q.val() < self.k_ctrl_words.val() {
            self.live.next = self.rom.data.val();
        } else {
            self.live.next = self.v0.val();
        }
        // Readout windows.
        self.hit.next = false;
        self.hit_sel.next = self.sel.q.val();
        self.hit_index.next = self.index.q.val();
        for i in 0..NW {
            if (self.addr.q.val() >= self.w_base[i].val()) & (self.addr.q.val() < self.w_end[i].val()) {
                self.hit.next = true;
                self.hit_sel.next = self.w_num[i].val();
                self.hit_index.next = self.addr.q.val() - self.w_base[i].val();
            }
        }
        // Pulses last one clock.
        self.swap_q.d.next = false;
        self.clear_q.d.next = false;
        self.req.d.next = false;
        self.pop_q.d.next = false;
        self.st_start_q.d.next = false;
        if self.idle.val() {
            if self.bus.arvalid.val() {
                self.addr.d.next = self.bus.araddr.val().get_bits::<IW>(2);
                self.s_dec.d.next = true;
            } else if self.wr_go.val() {
                self.s_bv.d.next = true;
                if self.bus.wstrb.val().get_bit(0) {
                    if self.wr_word.val() == self.k_control.val() {
                        self.swap_q.d.next = self.bus.wdata.val().get_bit(0);
                        self.clear_q.d.next = self.bus.wdata.val().get_bit(1);
                    }
                    if self.wr_word.val() == self.k_st_control.val() {
                        self.st_start_q.d.next = self.bus.wdata.val().get_bit(0);
                    }
                    if self.wr_word.val() == self.k_mode.val() {
                        if self.bus.wdata.val() == self.v0.val() {
                            self.acu_q.d.next = false;
                        }
                        if self.bus.wdata.val() == self.v2.val() {
                            self.acu_q.d.next = true;
                        }
                    }
                    if self.wr_word.val() == self.k_ps_mode.val() {
                        if self.bus.wdata.val() == self.v0.val() {
                            self.ps_acu_q.d.next = false;
                        }
                        if self.bus.wdata.val() == self.v2.val() {
                            self.ps_acu_q.d.next = true;
                        }
                    }
                    if self.wr_word.val() == self.k_infl.val() {
                        self.infl_q.d.next = self.bus.wdata.val().get_bits::<INFLATE_BITS>(0);
                    }
                    if self.wr_word.val() == self.k_tthr.val() {
                        self.tthr_q.d.next = self.bus.wdata.val();
                    }
                    if self.wr_word.val() == self.k_ring_control.val() {
                        self.ring_q.d.next = self.bus.wdata.val().get_bit(0);
                    }
                }
            }
        }
        if self.s_dec.q.val() {
            self.s_dec.d.next = false;
            if self.hit.val() {
                self.req.d.next = true;
                self.sel.d.next = self.hit_sel.val();
                self.index.d.next = self.hit_index.val();
                self.s_wait.d.next = true;
            } else {
                self.data.d.next = self.live.val();
                self.s_rv.d.next = true;
                self.pop_q.d.next = (self.addr.q.val() == self.k_pop.val()) & self.rec_head_valid.val();
            }
        }
        if self.s_wait.q.val() & self.win_ack.val() {
            self.data.d.next = self.win_data.val();
            self.s_wait.d.next = false;
            self.s_rv.d.next = true;
        }
        if self.s_rv.q.val() & self.bus.rready.val() {
            self.s_rv.d.next = false;
        }
        if self.s_bv.q.val() & self.bus.bready.val() {
            self.s_bv.d.next = false;
        }
        if self.reset.val() {
            self.s_dec.d.next = false;
            self.s_wait.d.next = false;
            self.s_rv.d.next = false;
            self.s_bv.d.next = false;
            self.swap_q.d.next = false;
            self.clear_q.d.next = false;
            self.acu_q.d.next = false;
            self.req.d.next = false;
            self.ps_acu_q.d.next = false;
            self.infl_q.d.next = self.infl_reset.val();
            self.tthr_q.d.next = self.tthr_reset.val();
            self.pop_q.d.next = false;
            self.ring_q.d.next = false;
        }
    }
}

/// The board's register file as Verilog (`nic_regs`).
pub fn nic_verilog() -> Result<String, String> {
    crate::flow::to_verilog("regs", &mut RegsNic::new(&RegMap::nic_default())?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generics_are_checked_against_the_map() {
        let m = RegMap::nic_default();
        assert!(RegsNic::new(&m).is_ok());
        assert!(RegisterFile::<21, 19, 11>::new(&m).err().unwrap().contains("22-bit"));
        assert!(RegisterFile::<22, 20, 6>::new(&m).err().unwrap().contains("11 windows"));
    }

    #[test]
    fn verilog_has_the_constant_table_and_no_hand_typed_offsets() {
        let v = nic_verilog().unwrap();
        assert!(v.contains("module nic_regs"));
        // the firmware-ID type word is in the case table of word 0
        assert!(v.to_lowercase().contains("534e0001"), "firmware type constant missing");
    }
}
