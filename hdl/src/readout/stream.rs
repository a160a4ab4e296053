//! `StreamEngine<NL>`: writes one epoch's idle bank as the contract's readout stream
//! (`contract::wire::readout`) to a 256-bit AXI-Stream master, reading every window at
//! once, one [`Lane`] per window, instead of one register read per counter over the BAR.
//!
//! On `start` it latches EPOCH, SEQUENCE, IDLE_PACKETS and TABLE_MISSES and starts every
//! lane. Each lane reads its window through its own read port (`rd`, `row`, `col` ->
//! `data`, a fixed latency per lane), packs it and cuts it into whole chunks of 16 beats
//! (`wire::readout::window_chunks`). The engine sends the header beat, then whole chunks,
//! taking the lanes in turn (a pointer that moves on after every chunk, and past a lane
//! with no whole chunk), and when every lane has finished, the last beat: the end word with
//! SEQUENCE as it is then and the trailer with the CRC-32C of every word before it, folded
//! a beat per clock from the contract's [`crc_columns_words`] (the end word by
//! [`crc_columns`]). `tlast` and a `tkeep` of 16 bytes mark that beat; every other beat is
//! whole.
//!
//! # Speed
//! A stream takes about as many clocks as its slowest lane has reads (the default geometry:
//! the 65,536 cells of the first Tower array, of the two larger latency arrays, and SuMax's
//! 8,192 buckets of 11 cells in lockstep), as long as the sink takes a beat a clock: all
//! lanes together make at most about 3.5 words a clock, and the port takes 4.
//!
//! # Flow control
//! A lane reads only while its FIFO has room for what its reads in flight can add, and the
//! engine sends a chunk only once it is whole in its lane's FIFO. The sink may hold `tready`
//! low for any time; nothing is lost, the lanes just wait.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | synchronous reset: stream abandoned, FIFOs emptied, STREAMS 0 (not the RAM) |
//! | `start` | in | 1 | start a stream (ignored while `busy`) |
//! | `epoch`, `seq_no`, `idle_packets`, `table_misses` | in | 32, 32, 64, 32 | EPOCH, SEQUENCE, IDLE_PACKETS, TABLE_MISSES: what the header carries (SEQUENCE again in the end word) |
//! | `go[i]`, `room[i]` | in, out | 1 each | lane `i` may read this clock; its FIFO has room (`go = room`, or the AND over a lockstep group) |
//! | `rd[i]`, `row[i]`, `col[i]`, `issued[i]` | out | 1, 20, 4, 1 | lane `i`'s read of cell `col` of row `row`; no read left |
//! | `data[i]` | in | 64 | its answer, the lane's latency after `rd` |
//! | `tdata`, `tkeep`, `tvalid`, `tlast`, `tready` | out, out, out, out, in | 256, 32, 1, 1, 1 | the stream |
//! | `busy` | out | 1 | from `start` until the last beat has been taken |
//! | `streams` | out | 32 | streams completed since reset |
//! | `last_words`, `last_clocks`, `last_stalls` | out | 32 each | of the last completed stream: 64-bit words, clocks from `start` to its end, clocks with a beat waiting and `tready` low |
use super::lane::{Lane, LaneRead, ROW_BITS};
use crate::arith::Widen;
use rust_hdl::prelude::*;
use smartnic_contract::snapshot::CHECKSUM;
use smartnic_contract::wire::readout::{
    crc_columns, crc_columns_words, WindowSpec, BEAT_WORDS, CHUNK_PAYLOAD, END_MARK, MAGIC, TRAILER_TAG,
    VERSION,
};

/// Most lanes (windows) an engine can have: the window count is an 8-bit field and `sel`
/// a 4-bit pointer.
pub const MAX_LANES: usize = 16;
/// Bits of a beat.
pub const BEAT_BITS: usize = 256;

const _: () = assert!(BEAT_WORDS as usize * 64 == BEAT_BITS);

/// Address bits of a lane's FIFO.
pub const FIFO_BITS: usize = 5;
/// Beats a lane's FIFO holds: two whole chunks.
pub const FIFO_DEPTH: usize = 1 << FIFO_BITS;
/// A lane reads while its FIFO holds at most this many beats: the rest takes what the
/// reads in flight (at most [`super::lane::MAX_LATENCY`] cells of at most 64 bits, with a
/// chunk word and fillers: 4 beats) and the beat being collected can add.
pub const ROOM: u64 = FIFO_DEPTH as u64 - 6;

const _: () = assert!(CHUNK_PAYLOAD == 63 && FIFO_DEPTH >= 2 * 16);

// States (`state`, compared with `s[n]`): 0 idle, 1 header beat, 2 pick a lane, 3 send its
// chunk, 4 fold the end word into the CRC, 6 the trailer, 5 the last beat.

/// The stream engine (see the module docs); `NL` = the number of windows (lanes).
#[derive(LogicBlock)]
pub struct StreamEngine<const NL: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub start: Signal<In, Bit>,
    pub epoch: Signal<In, Bits<32>>,
    pub seq_no: Signal<In, Bits<32>>,
    pub idle_packets: Signal<In, Bits<64>>,
    pub table_misses: Signal<In, Bits<32>>,
    pub go: [Signal<In, Bit>; NL],
    pub room: [Signal<Out, Bit>; NL],
    pub rd: [Signal<Out, Bit>; NL],
    pub row: [Signal<Out, Bits<ROW_BITS>>; NL],
    pub col: [Signal<Out, Bits<4>>; NL],
    pub issued: [Signal<Out, Bit>; NL],
    pub data: [Signal<In, Bits<64>>; NL],
    pub tdata: Signal<Out, Bits<256>>,
    pub tkeep: Signal<Out, Bits<32>>,
    pub tvalid: Signal<Out, Bit>,
    pub tlast: Signal<Out, Bit>,
    pub tready: Signal<In, Bit>,
    pub busy: Signal<Out, Bit>,
    pub streams: Signal<Out, Bits<32>>,
    pub last_words: Signal<Out, Bits<32>>,
    pub last_clocks: Signal<Out, Bits<32>>,
    pub last_stalls: Signal<Out, Bits<32>>,
    lanes: [Lane; NL],
    // Each lane's FIFO of beats (`read_data` is the head: the read port follows the head's
    // next address), and its whole chunks.
    fifo: [RAM<Bits<256>, FIFO_BITS>; NL],
    fifo_last: [RAM<Bit, FIFO_BITS>; NL],
    rp: [DFF<Bits<FIFO_BITS>>; NL],
    wp: [DFF<Bits<FIFO_BITS>>; NL],
    wl: [DFF<Bit>; NL],
    occ: [DFF<Bits<6>>; NL],
    chunks: [DFF<Bits<6>>; NL],
    readable: [Signal<Local, Bit>; NL],
    take: [Signal<Local, Bit>; NL],
    trailer: DFF<Bits<64>>,
    state: DFF<Bits<3>>,
    ptr: DFF<Bits<4>>,
    sel: DFF<Bits<4>>,
    h_beat: DFF<Bits<256>>,
    end_w: DFF<Bits<64>>,
    crc: DFF<Bits<32>>,
    crc_e: DFF<Bits<32>>,
    cw: DFF<Bits<256>>,
    cv: DFF<Bit>,
    words: DFF<Bits<32>>,
    clocks: DFF<Bits<32>>,
    stalls: DFF<Bits<32>>,
    streams_q: DFF<Bits<32>>,
    lw_q: DFF<Bits<32>>,
    lc_q: DFF<Bits<32>>,
    ls_q: DFF<Bits<32>>,
    taken: Signal<Local, Bit>,
    end_now: Signal<Local, Bits<64>>,
    all_done: Signal<Local, Bit>,
    cur_chunk: Signal<Local, Bit>,
    cur_head: Signal<Local, Bits<256>>,
    cur_last: Signal<Local, Bit>,
    cur_ready: Signal<Local, Bit>,
    w_epoch: Widen<64, 32>,
    w_seq: Widen<64, 32>,
    w_miss: Widen<64, 32>,
    h1: Widen<256, 64>,
    h2: Widen<256, 64>,
    h3: Widen<256, 64>,
    e0: Widen<256, 64>,
    e1: Widen<256, 64>,
    term: [Signal<Local, Bits<32>>; 288],
    chain: [Signal<Local, Bits<32>>; 288],
    e_term: [Signal<Local, Bits<32>>; 96],
    e_chain: [Signal<Local, Bits<32>>; 96],
    fin_term: [Signal<Local, Bits<64>>; 32],
    fin: [Signal<Local, Bits<64>>; 32],
    col_k: [Constant<Bits<32>>; 288],
    e_col: [Constant<Bits<32>>; 96],
    fin_col: [Constant<Bits<64>>; 32],
    fin_off: Constant<Bits<64>>,
    crc_init: Constant<Bits<32>>,
    k_num: [Constant<Bits<4>>; NL],
    k_last_lane: Constant<Bits<4>>,
    k_magic: Constant<Bits<256>>,
    k_w1: Constant<Bits<64>>,
    k_end: Constant<Bits<64>>,
    k_keep_all: Constant<Bits<32>>,
    k_keep_end: Constant<Bits<32>>,
    s: [Constant<Bits<3>>; 7],
    k_room: Constant<Bits<6>>,
    k_one5: Constant<Bits<FIFO_BITS>>,
    k_zero5: Constant<Bits<FIFO_BITS>>,
    k_one6: Constant<Bits<6>>,
    k_zero6: Constant<Bits<6>>,
    k_one4: Constant<Bits<4>>,
    k_zero4: Constant<Bits<4>>,
    k_zero64: Constant<Bits<64>>,
}

fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(v.to_bits())
}

impl<const NL: usize> StreamEngine<NL> {
    /// The engine for these windows (in `win_sel` order), each read as `reads` says;
    /// refuses what it cannot walk.
    pub fn new(specs: &[WindowSpec], reads: &[LaneRead]) -> Result<Self, String> {
        if specs.len() != NL || reads.len() != NL || NL == 0 || NL > MAX_LANES {
            return Err(format!(
                "{} windows and {} reads for {NL} lanes (1 to {MAX_LANES})",
                specs.len(),
                reads.len()
            ));
        }
        let mut lanes = Vec::with_capacity(NL);
        for (i, (spec, read)) in specs.iter().zip(reads).enumerate() {
            lanes.push(Lane::new(i, spec, read)?);
        }
        let lanes: [Lane; NL] = lanes.try_into().map_err(|_| "lane count".to_string())?;
        let (s4, d4) = crc_columns_words(BEAT_WORDS as usize);
        let (s1, d1) = crc_columns();
        let fin0 = CHECKSUM.finish(0);
        Ok(StreamEngine {
            clock: Default::default(),
            reset: Default::default(),
            start: Default::default(),
            epoch: Default::default(),
            seq_no: Default::default(),
            idle_packets: Default::default(),
            table_misses: Default::default(),
            go: std::array::from_fn(|_| Default::default()),
            room: std::array::from_fn(|_| Default::default()),
            rd: std::array::from_fn(|_| Default::default()),
            row: std::array::from_fn(|_| Default::default()),
            col: std::array::from_fn(|_| Default::default()),
            issued: std::array::from_fn(|_| Default::default()),
            data: std::array::from_fn(|_| Default::default()),
            tdata: Default::default(),
            tkeep: Default::default(),
            tvalid: Default::default(),
            tlast: Default::default(),
            tready: Default::default(),
            busy: Default::default(),
            streams: Default::default(),
            last_words: Default::default(),
            last_clocks: Default::default(),
            last_stalls: Default::default(),
            lanes,
            fifo: std::array::from_fn(|_| Default::default()),
            fifo_last: std::array::from_fn(|_| Default::default()),
            rp: std::array::from_fn(|_| Default::default()),
            wp: std::array::from_fn(|_| Default::default()),
            wl: std::array::from_fn(|_| Default::default()),
            occ: std::array::from_fn(|_| Default::default()),
            chunks: std::array::from_fn(|_| Default::default()),
            readable: std::array::from_fn(|_| Default::default()),
            take: std::array::from_fn(|_| Default::default()),
            trailer: Default::default(),
            state: Default::default(),
            ptr: Default::default(),
            sel: Default::default(),
            h_beat: Default::default(),
            end_w: Default::default(),
            crc: Default::default(),
            crc_e: Default::default(),
            cw: Default::default(),
            cv: Default::default(),
            words: Default::default(),
            clocks: Default::default(),
            stalls: Default::default(),
            streams_q: Default::default(),
            lw_q: Default::default(),
            lc_q: Default::default(),
            ls_q: Default::default(),
            taken: Default::default(),
            end_now: Default::default(),
            all_done: Default::default(),
            cur_chunk: Default::default(),
            cur_head: Default::default(),
            cur_last: Default::default(),
            cur_ready: Default::default(),
            w_epoch: Default::default(),
            w_seq: Default::default(),
            w_miss: Default::default(),
            h1: Default::default(),
            h2: Default::default(),
            h3: Default::default(),
            e0: Default::default(),
            e1: Default::default(),
            term: std::array::from_fn(|_| Default::default()),
            chain: std::array::from_fn(|_| Default::default()),
            e_term: std::array::from_fn(|_| Default::default()),
            e_chain: std::array::from_fn(|_| Default::default()),
            fin_term: Default::default(),
            fin: Default::default(),
            col_k: std::array::from_fn(|j| c((if j < 32 { s4[j] } else { d4[j - 32] }) as u64)),
            e_col: std::array::from_fn(|j| c((if j < 32 { s1[j] } else { d1[j - 32] }) as u64)),
            fin_col: std::array::from_fn(|j| c((CHECKSUM.finish(1 << j) ^ fin0) as u64)),
            fin_off: c((TRAILER_TAG as u64) << 32 | fin0 as u64),
            crc_init: c(CHECKSUM.init as u64),
            k_num: std::array::from_fn(|i| c(i as u64)),
            k_last_lane: c(NL as u64 - 1),
            k_magic: Constant::new(MAGIC.to_bits()),
            k_w1: c(VERSION as u64 | (NL as u64) << 16),
            k_end: c(END_MARK as u64),
            k_keep_all: c(u32::MAX as u64),
            k_keep_end: c(0xFFFF),
            s: std::array::from_fn(|i| c(i as u64)),
            k_room: c(ROOM),
            k_one5: c(1),
            k_zero5: c(0),
            k_one6: c(1),
            k_zero6: c(0),
            k_one4: c(1),
            k_zero4: c(0),
            k_zero64: c(0),
        })
    }
}

impl<const NL: usize> Logic for StreamEngine<NL> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, ptr, sel, h_beat, end_w, trailer, crc, crc_e, cw, cv, words, clocks, stalls,
            streams_q, lw_q, lc_q, ls_q
        );
        // Lanes: their read ports are the engine's; `start` starts them all.
        self.all_done.next = true;
        self.cur_chunk.next = false;
        self.cur_head.next = self.fifo[0].read_data.val();
        self.cur_last.next = self.fifo_last[0].read_data.val();
        self.cur_ready.next = false;
        for i in 0..NL {
            self.lanes[i].clock.next = self.clock.val();
            self.lanes[i].reset.next = self.reset.val();
            self.lanes[i].start.next = self.start.val() & (self.state.q.val() == self.s[0].val());
            self.lanes[i].go.next = self.go[i].val();
            self.room[i].next = self.occ[i].q.val() <= self.k_room.val();
            self.rd[i].next = self.lanes[i].rd.val();
            self.row[i].next = self.lanes[i].row.val();
            self.col[i].next = self.lanes[i].col.val();
            self.issued[i].next = self.lanes[i].issued.val();
            self.lanes[i].data.next = self.data[i].val();
            self.all_done.next =
                self.all_done.val() & self.lanes[i].done.val() & (self.occ[i].q.val() == self.k_zero6.val());
            // A word written in the clock before is not yet on the RAM's registered read
            // port, so it is not readable until then.
            self.readable[i].next = (self.occ[i].q.val() > self.k_one6.val())
                | ((self.occ[i].q.val() == self.k_one6.val()) & !self.wl[i].q.val());
            if self.ptr.q.val() == self.k_num[i].val() {
                self.cur_chunk.next = self.chunks[i].q.val() != self.k_zero6.val();
            }
            if self.sel.q.val() == self.k_num[i].val() {
                self.cur_head.next = self.fifo[i].read_data.val();
                self.cur_last.next = self.fifo_last[i].read_data.val();
                self.cur_ready.next = self.readable[i].val();
            }
        }
        // The beat on the port.
        self.tdata.next = self.h_beat.q.val();
        self.tkeep.next = self.k_keep_all.val();
        self.tvalid.next = false;
        self.tlast.next = false;
        if self.state.q.val() == self.s[1].val() {
            self.tvalid.next = true;
        } else if self.state.q.val() == self.s[3].val() {
            self.tdata.next = self.cur_head.val();
            self.tvalid.next = self.cur_ready.val();
        } else if self.state.q.val() == self.s[5].val() {
            self.tdata.next = self.e0.y.val() | (self.e1.y.val() << 64);
            self.tkeep.next = self.k_keep_end.val();
            self.tvalid.next = true;
            self.tlast.next = true;
        }
        self.e0.x.next = self.end_w.q.val();
        self.e1.x.next = self.trailer.q.val();
        self.taken.next = self.tvalid.val() & self.tready.val();
        for i in 0..NL {
            self.take[i].next = self.taken.val()
                & (self.state.q.val() == self.s[3].val())
                & (self.sel.q.val() == self.k_num[i].val());
            self.fifo[i].read_clock.next = self.clock.val();
            self.fifo[i].write_clock.next = self.clock.val();
            self.fifo_last[i].read_clock.next = self.clock.val();
            self.fifo_last[i].write_clock.next = self.clock.val();
            self.fifo[i].write_enable.next = self.lanes[i].push.val();
            self.fifo_last[i].write_enable.next = self.lanes[i].push.val();
            self.fifo[i].write_address.next = self.wp[i].q.val();
            self.fifo_last[i].write_address.next = self.wp[i].q.val();
            self.fifo[i].write_data.next = self.lanes[i].beat_out.val();
            self.fifo_last[i].write_data.next = self.lanes[i].push_last.val();
            self.rp[i].clock.next = self.clock.val();
            self.wp[i].clock.next = self.clock.val();
            self.wl[i].clock.next = self.clock.val();
            self.occ[i].clock.next = self.clock.val();
            self.chunks[i].clock.next = self.clock.val();
            self.rp[i].d.next = self.rp[i].q.val();
            self.wp[i].d.next = self.wp[i].q.val();
            self.occ[i].d.next = self.occ[i].q.val();
            self.chunks[i].d.next = self.chunks[i].q.val();
            if self.take[i].val() {
                self.fifo[i].read_address.next = self.rp[i].q.val() + self.k_one5.val();
                self.fifo_last[i].read_address.next = self.rp[i].q.val() + self.k_one5.val();
                self.rp[i].d.next = self.rp[i].q.val() + self.k_one5.val();
            } else {
                self.fifo[i].read_address.next = self.rp[i].q.val();
                self.fifo_last[i].read_address.next = self.rp[i].q.val();
            }
            if self.lanes[i].push.val() {
                self.wp[i].d.next = self.wp[i].q.val() + self.k_one5.val();
            }
            self.wl[i].d.next = self.lanes[i].push.val();
            if self.lanes[i].push.val() & !self.take[i].val() {
                self.occ[i].d.next = self.occ[i].q.val() + self.k_one6.val();
            }
            if !self.lanes[i].push.val() & self.take[i].val() {
                self.occ[i].d.next = self.occ[i].q.val() - self.k_one6.val();
            }
            if (self.lanes[i].push.val() & self.lanes[i].push_last.val())
                & !(self.take[i].val() & self.fifo_last[i].read_data.val())
            {
                self.chunks[i].d.next = self.chunks[i].q.val() + self.k_one6.val();
            }
            if !(self.lanes[i].push.val() & self.lanes[i].push_last.val())
                & (self.take[i].val() & self.fifo_last[i].read_data.val())
            {
                self.chunks[i].d.next = self.chunks[i].q.val() - self.k_one6.val();
            }
            if self.reset.val() {
                self.rp[i].d.next = self.k_zero5.val();
                self.wp[i].d.next = self.k_zero5.val();
                self.wl[i].d.next = false;
                self.occ[i].d.next = self.k_zero6.val();
                self.chunks[i].d.next = self.k_zero6.val();
            }
        }
        self.busy.next = self.state.q.val() != self.s[0].val();
        self.streams.next = self.streams_q.q.val();
        self.last_words.next = self.lw_q.q.val();
        self.last_clocks.next = self.lc_q.q.val();
        self.last_stalls.next = self.ls_q.q.val();
        self.w_epoch.x.next = self.epoch.val();
        self.w_seq.x.next = self.seq_no.val();
        self.w_miss.x.next = self.table_misses.val();
        self.h1.x.next = self.k_w1.val() | (self.w_epoch.y.val() << 32);
        self.h2.x.next = self.w_seq.y.val() | (self.w_miss.y.val() << 32);
        self.h3.x.next = self.idle_packets.val();
        self.end_now.next = self.k_end.val() | (self.w_seq.y.val() << 32);
        // CRC: fold the beat taken last clock (all but the last beat), a term per state and
        // data bit (see `crc_columns_words`); the end word by the one-word columns.
        for j in 0..32 {
            if self.crc.q.val().get_bit(j) {
                self.term[j].next = self.col_k[j].val();
                self.e_term[j].next = self.e_col[j].val();
            } else {
                self.term[j].next = 0.into();
                self.e_term[j].next = 0.into();
            }
            if self.crc_e.q.val().get_bit(j) {
                self.fin_term[j].next = self.fin_col[j].val();
            } else {
                self.fin_term[j].next = self.k_zero64.val();
            }
        }
        for j in 32..288 {
            if self.cw.q.val().get_bit(j - 32) {
                self.term[j].next = self.col_k[j].val();
            } else {
                self.term[j].next = 0.into();
            }
        }
        for j in 32..96 {
            if self.end_now.val().get_bit(j - 32) {
                self.e_term[j].next = self.e_col[j].val();
            } else {
                self.e_term[j].next = 0.into();
            }
        }
        self.chain[0].next = self.term[0].val();
        for j in 1..288 {
            self.chain[j].next = self.chain[j - 1].val() ^ self.term[j].val();
        }
        self.e_chain[0].next = self.e_term[0].val();
        for j in 1..96 {
            self.e_chain[j].next = self.e_chain[j - 1].val() ^ self.e_term[j].val();
        }
        self.fin[0].next = self.fin_off.val() ^ self.fin_term[0].val();
        for j in 1..32 {
            self.fin[j].next = self.fin[j - 1].val() ^ self.fin_term[j].val();
        }
        if self.cv.q.val() {
            for j in 287..288 {
                self.crc.d.next = self.chain[j].val();
            }
        }
        self.cv.d.next = self.taken.val() & (self.state.q.val() != self.s[5].val());
        self.cw.d.next = self.tdata.val();
        // The walk.
        if self.state.q.val() == self.s[0].val() {
            if self.start.val() {
                self.state.d.next = self.s[1].val();
                self.h_beat.d.next = self.k_magic.val()
                    | (self.h1.y.val() << 64)
                    | (self.h2.y.val() << 128)
                    | (self.h3.y.val() << 192);
                self.crc.d.next = self.crc_init.val();
                self.ptr.d.next = self.k_zero4.val();
                self.words.d.next = 0.into();
                self.clocks.d.next = 0.into();
                self.stalls.d.next = 0.into();
            }
        } else if self.state.q.val() == self.s[1].val() {
            if self.taken.val() {
                self.state.d.next = self.s[2].val();
            }
        } else if self.state.q.val() == self.s[2].val() {
            // The lane at the pointer sends its whole chunk, or the pointer moves on.
            if self.cur_chunk.val() {
                self.sel.d.next = self.ptr.q.val();
                self.state.d.next = self.s[3].val();
            } else if self.all_done.val() {
                self.state.d.next = self.s[4].val();
            }
            if self.ptr.q.val() == self.k_last_lane.val() {
                self.ptr.d.next = self.k_zero4.val();
            } else {
                self.ptr.d.next = self.ptr.q.val() + self.k_one4.val();
            }
        } else if self.state.q.val() == self.s[3].val() {
            if self.taken.val() & self.cur_last.val() {
                self.state.d.next = self.s[2].val();
            }
        } else if self.state.q.val() == self.s[4].val() {
            // The last chunk beat is folded one clock after it was taken; then the end word.
            if !self.cv.q.val() {
                self.end_w.d.next = self.end_now.val();
                for j in 95..96 {
                    self.crc_e.d.next = self.e_chain[j].val();
                }
                self.state.d.next = self.s[6].val();
            }
        } else if self.state.q.val() == self.s[6].val() {
            for j in 31..32 {
                self.trailer.d.next = self.fin[j].val();
            }
            self.state.d.next = self.s[5].val();
        } else if self.taken.val() {
            // The last beat has been taken.
            self.state.d.next = self.s[0].val();
            self.streams_q.d.next = self.streams_q.q.val() + 1;
            self.lw_q.d.next = self.words.q.val() + 2;
            self.lc_q.d.next = self.clocks.q.val() + 1;
            self.ls_q.d.next = self.stalls.q.val();
        }
        if self.state.q.val() != self.s[0].val() {
            self.clocks.d.next = self.clocks.q.val() + 1;
            if self.taken.val() {
                self.words.d.next = self.words.q.val() + 4;
            }
            if self.tvalid.val() & !self.tready.val() {
                self.stalls.d.next = self.stalls.q.val() + 1;
            }
        }
        if self.reset.val() {
            self.state.d.next = self.s[0].val();
            self.streams_q.d.next = 0.into();
            self.cv.d.next = false;
        }
    }
}
