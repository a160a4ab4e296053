//! `StreamEngine<IW>`: writes one epoch's idle bank as the contract's readout stream
//! (`contract::wire::readout`) to an AXI-Stream master, 64 bits a beat, instead of one
//! register read per counter over the BAR.
//!
//! On `start` it latches EPOCH, SEQUENCE, IDLE_PACKETS and TABLE_MISSES, writes the four
//! header words, then for each window in `win_sel` order a chunk word and the window's
//! words: it is a master on the register file's window interface (`req`, `sel`, `index`
//! -> `ack`, `data`, any fixed latency, one request per clock, answers in order), and packs
//! each answer at the window's counter width (the pattern of [`WindowSpec::widths`]) into
//! 64-bit words by the packing rule. After the last window: the end word with SEQUENCE as
//! it is then, and the trailer with the CRC-32C of every word before it, folded one word
//! per clock from the contract's [`crc_columns`]. `tlast` marks the trailer.
//!
//! # Flow control
//! Words wait in a [`FIFO_DEPTH`]-word FIFO in front of the AXI-Stream port. A window read
//! is issued only while the FIFO's words plus the reads in flight stay below
//! [`CREDIT`], so every answer has a place (each answer adds at most one word), and the
//! other states push only while the FIFO has room. The sink may hold `tready` low for any
//! time; nothing is lost, the engine just waits.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | synchronous reset: stream abandoned, FIFO emptied, STREAMS 0 (not the RAM) |
//! | `start` | in | 1 | start a stream (ignored while `busy`) |
//! | `epoch`, `seq_no`, `idle_packets`, `table_misses` | in | 32, 32, 64, 32 | EPOCH, SEQUENCE, IDLE_PACKETS, TABLE_MISSES: what the header carries (SEQUENCE again in the end word) |
//! | `req`, `sel`, `index` | out | 1, 4, `IW` | window read request |
//! | `ack`, `data` | in | 1, 32 | its answer |
//! | `tdata`, `tvalid`, `tlast`, `tready` | out, out, out, in | 64, 1, 1, 1 | the stream |
//! | `busy` | out | 1 | from `start` until the trailer has been taken |
//! | `streams` | out | 32 | streams completed since reset |
//! | `last_words`, `last_clocks`, `last_stalls` | out | 32 each | of the last completed stream: words, clocks from `start` to its end, clocks with a word waiting and `tready` low |
use crate::arith::Widen;
use crate::regs::SEL_BITS;
use rust_hdl::prelude::*;
use smartnic_contract::packing::mask;
use smartnic_contract::snapshot::CHECKSUM;
use smartnic_contract::wire::readout::{crc_columns, WindowSpec, END_MARK, MAGIC, TRAILER_TAG, VERSION};

/// Windows the engine can walk (`win_sel` has [`SEL_BITS`] bits).
pub const MAX_WINDOWS: usize = 1 << SEL_BITS;
/// Longest width pattern of a window (a table slot's 12 words).
pub const MAX_CELLS: usize = 12;
/// Address bits of the output FIFO.
pub const FIFO_BITS: usize = 5;
/// Words the output FIFO holds.
pub const FIFO_DEPTH: usize = 1 << FIFO_BITS;
/// Reads are issued while FIFO words + reads in flight stay below this.
pub const CREDIT: u64 = FIFO_DEPTH as u64 - 8;

// States (the value of `state`, compared with `s[n]`): 0 idle, 1 header, 2 chunk word,
// 3 window data, 4 flush the window's last word, 5 end word, 6 wait for the CRC, 7 trailer,
// 8 drain (the FIFO empties).

/// The stream engine (see the module docs); `IW` = the window index width.
#[derive(LogicBlock)]
pub struct StreamEngine<const IW: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub start: Signal<In, Bit>,
    pub epoch: Signal<In, Bits<32>>,
    pub seq_no: Signal<In, Bits<32>>,
    pub idle_packets: Signal<In, Bits<64>>,
    pub table_misses: Signal<In, Bits<32>>,
    pub req: Signal<Out, Bit>,
    pub sel: Signal<Out, Bits<SEL_BITS>>,
    pub index: Signal<Out, Bits<IW>>,
    pub ack: Signal<In, Bit>,
    pub data: Signal<In, Bits<32>>,
    pub tdata: Signal<Out, Bits<64>>,
    pub tvalid: Signal<Out, Bit>,
    pub tlast: Signal<Out, Bit>,
    pub tready: Signal<In, Bit>,
    pub busy: Signal<Out, Bit>,
    pub streams: Signal<Out, Bits<32>>,
    pub last_words: Signal<Out, Bits<32>>,
    pub last_clocks: Signal<Out, Bits<32>>,
    pub last_stalls: Signal<Out, Bits<32>>,
    state: DFF<Bits<4>>,
    hdr: DFF<Bits<2>>,
    h_w1: DFF<Bits<64>>,
    h_w2: DFF<Bits<64>>,
    h_w3: DFF<Bits<64>>,
    win: DFF<Bits<SEL_BITS>>,
    ridx: DFF<Bits<IW>>,
    rcnt: DFF<Bits<IW>>,
    inflight: DFF<Bits<6>>,
    cell_i: DFF<Bits<4>>,
    cur_n: DFF<Bits<IW>>,
    cur_len: DFF<Bits<4>>,
    cur_w: [DFF<Bits<7>>; MAX_CELLS],
    cur_m: [DFF<Bits<32>>; MAX_CELLS],
    acc: DFF<Bits<96>>,
    fill: DFF<Bits<7>>,
    occ: DFF<Bits<6>>,
    cw: DFF<Bits<64>>,
    cv: DFF<Bit>,
    crc: DFF<Bits<32>>,
    words: DFF<Bits<32>>,
    clocks: DFF<Bits<32>>,
    stalls: DFF<Bits<32>>,
    streams_q: DFF<Bits<32>>,
    lw_q: DFF<Bits<32>>,
    lc_q: DFF<Bits<32>>,
    ls_q: DFF<Bits<32>>,
    ram: RAM<Bits<64>, FIFO_BITS>,
    rp: DFF<Bits<FIFO_BITS>>,
    wp: DFF<Bits<FIFO_BITS>>,
    wl: DFF<Bit>,
    readable: Signal<Local, Bit>,
    push: Signal<Local, Bit>,
    push_data: Signal<Local, Bits<64>>,
    pop: Signal<Local, Bit>,
    w_cur: Signal<Local, Bits<7>>,
    m_cur: Signal<Local, Bits<32>>,
    wide_v: Widen<96, 32>,
    wide_fill: Widen<96, 7>,
    combined: Signal<Local, Bits<96>>,
    sum: Signal<Local, Bits<7>>,
    w_epoch: Widen<64, 32>,
    w_seq: Widen<64, 32>,
    w_miss: Widen<64, 32>,
    term: [Signal<Local, Bits<32>>; 96],
    chain: [Signal<Local, Bits<32>>; 96],
    fin_term: [Signal<Local, Bits<64>>; 32],
    fin: [Signal<Local, Bits<64>>; 32],
    col: [Constant<Bits<32>>; 96],
    fin_col: [Constant<Bits<64>>; 32],
    fin_off: Constant<Bits<64>>,
    crc_init: Constant<Bits<32>>,
    k_n: [Constant<Bits<IW>>; MAX_WINDOWS],
    k_len: [Constant<Bits<4>>; MAX_WINDOWS],
    k_chunk: [Constant<Bits<64>>; MAX_WINDOWS],
    k_num: [Constant<Bits<SEL_BITS>>; MAX_WINDOWS],
    k_w: [Constant<Bits<7>>; 192],
    k_m: [Constant<Bits<32>>; 192],
    k_last_win: Constant<Bits<SEL_BITS>>,
    k_magic: Constant<Bits<64>>,
    k_w1: Constant<Bits<64>>,
    k_end: Constant<Bits<64>>,
    k_credit: Constant<Bits<6>>,
    k_room: Constant<Bits<6>>,
    k_64: Constant<Bits<7>>,
    s: [Constant<Bits<4>>; MAX_CELLS],
    h: [Constant<Bits<2>>; 3],
    one5: Constant<Bits<FIFO_BITS>>,
    zero5: Constant<Bits<FIFO_BITS>>,
    one6: Constant<Bits<6>>,
    zero6: Constant<Bits<6>>,
    zero7: Constant<Bits<7>>,
    zero64: Constant<Bits<64>>,
    zero96: Constant<Bits<96>>,
    one_iw: Constant<Bits<IW>>,
    zero_iw: Constant<Bits<IW>>,
}

// `k_w`/`k_m` are indexed `i * 12 + k` in `update` (a literal: the index rule of hdl_gen).
const _: () = assert!(MAX_WINDOWS * MAX_CELLS == 192 && MAX_CELLS == 12);

fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(v.to_bits())
}

impl<const IW: usize> StreamEngine<IW> {
    /// The engine for these windows (in `win_sel` order); refuses what it cannot walk.
    pub fn new(specs: &[WindowSpec]) -> Result<Self, String> {
        if specs.is_empty() || specs.len() > MAX_WINDOWS {
            return Err(format!("{} windows; the engine walks 1 to {MAX_WINDOWS}", specs.len()));
        }
        for (i, s) in specs.iter().enumerate() {
            if s.widths.is_empty() || s.widths.len() > MAX_CELLS || s.words == 0 || s.words >= 1 << IW {
                return Err(format!(
                    "window {i}: {} words of a {}-width pattern do not fit IW = {IW}",
                    s.words,
                    s.widths.len()
                ));
            }
        }
        let spec = |i: usize| specs.get(i);
        let width =
            |k: usize| spec(k / MAX_CELLS).and_then(|s| s.widths.get(k % MAX_CELLS)).copied().unwrap_or(0);
        let (state_cols, data_cols) = crc_columns();
        let fin0 = CHECKSUM.finish(0);
        Ok(StreamEngine {
            clock: Default::default(),
            reset: Default::default(),
            start: Default::default(),
            epoch: Default::default(),
            seq_no: Default::default(),
            idle_packets: Default::default(),
            table_misses: Default::default(),
            req: Default::default(),
            sel: Default::default(),
            index: Default::default(),
            ack: Default::default(),
            data: Default::default(),
            tdata: Default::default(),
            tvalid: Default::default(),
            tlast: Default::default(),
            tready: Default::default(),
            busy: Default::default(),
            streams: Default::default(),
            last_words: Default::default(),
            last_clocks: Default::default(),
            last_stalls: Default::default(),
            state: Default::default(),
            hdr: Default::default(),
            h_w1: Default::default(),
            h_w2: Default::default(),
            h_w3: Default::default(),
            win: Default::default(),
            ridx: Default::default(),
            rcnt: Default::default(),
            inflight: Default::default(),
            cell_i: Default::default(),
            cur_n: Default::default(),
            cur_len: Default::default(),
            cur_w: Default::default(),
            cur_m: Default::default(),
            acc: Default::default(),
            fill: Default::default(),
            occ: Default::default(),
            cw: Default::default(),
            cv: Default::default(),
            crc: Default::default(),
            words: Default::default(),
            clocks: Default::default(),
            stalls: Default::default(),
            streams_q: Default::default(),
            lw_q: Default::default(),
            lc_q: Default::default(),
            ls_q: Default::default(),
            ram: Default::default(),
            rp: Default::default(),
            wp: Default::default(),
            wl: Default::default(),
            readable: Default::default(),
            push: Default::default(),
            push_data: Default::default(),
            pop: Default::default(),
            w_cur: Default::default(),
            m_cur: Default::default(),
            wide_v: Default::default(),
            wide_fill: Default::default(),
            combined: Default::default(),
            sum: Default::default(),
            w_epoch: Default::default(),
            w_seq: Default::default(),
            w_miss: Default::default(),
            term: std::array::from_fn(|_| Default::default()),
            chain: std::array::from_fn(|_| Default::default()),
            fin_term: Default::default(),
            fin: Default::default(),
            col: std::array::from_fn(|j| c((if j < 32 { state_cols[j] } else { data_cols[j - 32] }) as u64)),
            fin_col: std::array::from_fn(|j| c((CHECKSUM.finish(1 << j) ^ fin0) as u64)),
            fin_off: c((TRAILER_TAG as u64) << 32 | fin0 as u64),
            crc_init: c(CHECKSUM.init as u64),
            k_n: std::array::from_fn(|i| c(spec(i).map_or(0, |s| s.words))),
            k_len: std::array::from_fn(|i| c(spec(i).map_or(0, |s| s.widths.len() as u64))),
            k_chunk: std::array::from_fn(|i| {
                c(spec(i)
                    .map_or(0, |s| smartnic_contract::wire::readout::chunk_word(i, 0, s.payload_words())))
            }),
            k_num: std::array::from_fn(|i| c(i as u64)),
            k_w: std::array::from_fn(|k| c(width(k) as u64)),
            k_m: std::array::from_fn(|k| c(mask(width(k)))),
            k_last_win: c(specs.len() as u64 - 1),
            k_magic: c(MAGIC),
            k_w1: c(VERSION as u64 | (specs.len() as u64) << 16),
            k_end: c(END_MARK as u64),
            k_credit: c(CREDIT),
            k_room: c(FIFO_DEPTH as u64 - 2),
            k_64: c(64),
            s: std::array::from_fn(|i| c(i as u64)),
            h: std::array::from_fn(|i| c(i as u64)),
            one5: c(1),
            zero5: c(0),
            one6: c(1),
            zero6: c(0),
            zero7: c(0),
            zero64: c(0),
            zero96: c(0),
            one_iw: c(1),
            zero_iw: c(0),
        })
    }
}

impl<const IW: usize> Logic for StreamEngine<IW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, hdr, h_w1, h_w2, h_w3, win, ridx, rcnt, inflight, cell_i, cur_n, cur_len,
            acc, fill, occ, rp, wp, wl, cw, cv, crc, words, clocks, stalls, streams_q, lw_q, lc_q, ls_q
        );
        for k in 0..MAX_CELLS {
            self.cur_w[k].clock.next = self.clock.val();
            self.cur_m[k].clock.next = self.clock.val();
            self.cur_w[k].d.next = self.cur_w[k].q.val();
            self.cur_m[k].d.next = self.cur_m[k].q.val();
        }
        // Outputs.
        // FIFO: a word written in the clock before is not yet on the RAM's registered read
        // port (it returns the old word), so it is not counted as readable until then.
        self.readable.next =
            (self.occ.q.val() > self.one6.val()) | ((self.occ.q.val() == self.one6.val()) & !self.wl.q.val());
        self.tvalid.next = self.readable.val();
        self.tdata.next = self.ram.read_data.val();
        self.tlast.next = (self.state.q.val() == self.s[8].val()) & (self.occ.q.val() == self.one6.val());
        self.pop.next = self.readable.val() & self.tready.val();
        self.ram.read_clock.next = self.clock.val();
        self.ram.write_clock.next = self.clock.val();
        // The read port follows the head's next address, so `read_data` is the head word.
        if self.pop.val() {
            self.ram.read_address.next = self.rp.q.val() + self.one5.val();
            self.rp.d.next = self.rp.q.val() + self.one5.val();
        } else {
            self.ram.read_address.next = self.rp.q.val();
        }
        self.busy.next = self.state.q.val() != self.s[0].val();
        self.streams.next = self.streams_q.q.val();
        self.last_words.next = self.lw_q.q.val();
        self.last_clocks.next = self.lc_q.q.val();
        self.last_stalls.next = self.ls_q.q.val();
        self.sel.next = self.win.q.val();
        self.index.next = self.ridx.q.val();
        self.w_epoch.x.next = self.epoch.val();
        self.w_seq.x.next = self.seq_no.val();
        self.w_miss.x.next = self.table_misses.val();
        // The width and mask of the next answer.
        self.w_cur.next = self.cur_w[0].q.val();
        self.m_cur.next = self.cur_m[0].q.val();
        for k in 1..MAX_CELLS {
            if self.cell_i.q.val() == self.s[k].val() {
                self.w_cur.next = self.cur_w[k].q.val();
                self.m_cur.next = self.cur_m[k].q.val();
            }
        }
        // Packing: the answer above the bits already held.
        self.wide_v.x.next = self.data.val() & self.m_cur.val();
        self.wide_fill.x.next = self.fill.q.val();
        self.combined.next = self.acc.q.val() | (self.wide_v.y.val() << self.wide_fill.y.val());
        self.sum.next = self.fill.q.val() + self.w_cur.val();
        // CRC: fold the word pushed last clock (all but the trailer). Each state and data
        // bit selects its own column and the chains only XOR the terms: a chain of muxes
        // (`chain = bit ? chain ^ col : chain`) is the same logic, but Yosys then needs one
        // `opt` round over the whole design per link to see through it.
        for j in 0..32 {
            if self.crc.q.val().get_bit(j) {
                self.term[j].next = self.col[j].val();
                self.fin_term[j].next = self.fin_col[j].val();
            } else {
                self.term[j].next = 0.into();
                self.fin_term[j].next = self.zero64.val();
            }
        }
        for j in 32..96 {
            if self.cw.q.val().get_bit(j - 32) {
                self.term[j].next = self.col[j].val();
            } else {
                self.term[j].next = 0.into();
            }
        }
        self.chain[0].next = self.term[0].val();
        for j in 1..96 {
            self.chain[j].next = self.chain[j - 1].val() ^ self.term[j].val();
        }
        self.fin[0].next = self.fin_off.val() ^ self.fin_term[0].val();
        for j in 1..32 {
            self.fin[j].next = self.fin[j - 1].val() ^ self.fin_term[j].val();
        }
        if self.cv.q.val() {
            for j in 95..96 {
                self.crc.d.next = self.chain[j].val();
            }
        }
        // Defaults: nothing pushed, no request.
        self.push.next = false;
        self.push_data.next = self.acc.q.val().get_bits::<64>(0);
        self.req.next = false;
        // Reads in flight: +1 per request, -1 per answer (set below with the request).
        if self.ack.val() {
            self.inflight.d.next = self.inflight.q.val() - self.one6.val();
        }
        if self.state.q.val() == self.s[0].val() {
            if self.start.val() {
                self.state.d.next = self.s[1].val();
                self.hdr.d.next = self.h[0].val();
                self.h_w1.d.next = self.k_w1.val() | (self.w_epoch.y.val() << 32);
                self.h_w2.d.next = self.w_seq.y.val() | (self.w_miss.y.val() << 32);
                self.h_w3.d.next = self.idle_packets.val();
                self.win.d.next = self.k_num[0].val();
                self.crc.d.next = self.crc_init.val();
                self.words.d.next = 0.into();
                self.clocks.d.next = 0.into();
                self.stalls.d.next = 0.into();
            }
        } else if self.state.q.val() == self.s[1].val() {
            // Header: magic, version/windows/epoch, sequence/misses, idle packets.
            if self.occ.q.val() < self.k_room.val() {
                self.push.next = true;
                if self.hdr.q.val() == self.h[0].val() {
                    self.push_data.next = self.k_magic.val();
                } else if self.hdr.q.val() == self.h[1].val() {
                    self.push_data.next = self.h_w1.q.val();
                } else if self.hdr.q.val() == self.h[2].val() {
                    self.push_data.next = self.h_w2.q.val();
                } else {
                    self.push_data.next = self.h_w3.q.val();
                    self.state.d.next = self.s[2].val();
                }
                self.hdr.d.next = self.hdr.q.val() + self.h[1].val();
            }
        } else if self.state.q.val() == self.s[2].val() {
            // Chunk word; load the window's count and width pattern.
            if self.occ.q.val() < self.k_room.val() {
                self.push.next = true;
                for i in 0..MAX_WINDOWS {
                    if self.win.q.val() == self.k_num[i].val() {
                        self.push_data.next = self.k_chunk[i].val();
                        self.cur_n.d.next = self.k_n[i].val();
                        self.cur_len.d.next = self.k_len[i].val();
                        for k in 0..MAX_CELLS {
                            self.cur_w[k].d.next = self.k_w[i * 12 + k].val();
                            self.cur_m[k].d.next = self.k_m[i * 12 + k].val();
                        }
                    }
                }
                self.ridx.d.next = self.zero_iw.val();
                self.rcnt.d.next = self.zero_iw.val();
                self.cell_i.d.next = self.s[0].val();
                self.acc.d.next = self.zero96.val();
                self.fill.d.next = self.zero7.val();
                self.state.d.next = self.s[3].val();
            }
        } else if self.state.q.val() == self.s[3].val() {
            // Requests while credit lasts; answers packed as they come.
            if (self.ridx.q.val() != self.cur_n.q.val())
                & ((self.occ.q.val() + self.inflight.q.val()) < self.k_credit.val())
            {
                self.req.next = true;
                self.ridx.d.next = self.ridx.q.val() + self.one_iw.val();
                if !self.ack.val() {
                    self.inflight.d.next = self.inflight.q.val() + self.one6.val();
                } else {
                    self.inflight.d.next = self.inflight.q.val();
                }
            }
            if self.ack.val() {
                self.rcnt.d.next = self.rcnt.q.val() + self.one_iw.val();
                if self.cell_i.q.val() + self.s[1].val() == self.cur_len.q.val() {
                    self.cell_i.d.next = self.s[0].val();
                } else {
                    self.cell_i.d.next = self.cell_i.q.val() + self.s[1].val();
                }
                if self.sum.val() >= self.k_64.val() {
                    self.push.next = true;
                    self.push_data.next = self.combined.val().get_bits::<64>(0);
                    self.acc.d.next = self.combined.val() >> 64;
                    self.fill.d.next = self.sum.val() - self.k_64.val();
                } else {
                    self.acc.d.next = self.combined.val();
                    self.fill.d.next = self.sum.val();
                }
            } else if self.rcnt.q.val() == self.cur_n.q.val() {
                self.state.d.next = self.s[4].val();
            }
        } else if self.state.q.val() == self.s[4].val() {
            // The window's last, partial word; then the next window or the end word.
            if self.occ.q.val() < self.k_room.val() {
                self.push.next = self.fill.q.val() != self.zero7.val();
                self.push_data.next = self.acc.q.val().get_bits::<64>(0);
                self.win.d.next = self.win.q.val() + self.k_num[1].val();
                if self.win.q.val() == self.k_last_win.val() {
                    self.state.d.next = self.s[5].val();
                } else {
                    self.state.d.next = self.s[2].val();
                }
            }
        } else if self.state.q.val() == self.s[5].val() {
            if self.occ.q.val() < self.k_room.val() {
                self.push.next = true;
                self.push_data.next = self.k_end.val() | (self.w_seq.y.val() << 32);
                self.state.d.next = self.s[6].val();
            }
        } else if self.state.q.val() == self.s[6].val() {
            // The end word is folded into the CRC one clock after its push.
            if !self.cv.q.val() {
                self.state.d.next = self.s[7].val();
            }
        } else if self.state.q.val() == self.s[7].val() {
            if self.occ.q.val() < self.k_room.val() {
                self.push.next = true;
                for j in 31..32 {
                    self.push_data.next = self.fin[j].val();
                }
                self.state.d.next = self.s[8].val();
            }
        } else if self.occ.q.val() == self.zero6.val() {
            // DRAIN: the trailer has been taken.
            self.state.d.next = self.s[0].val();
            self.streams_q.d.next = self.streams_q.q.val() + 1;
            self.lw_q.d.next = self.words.q.val();
            self.lc_q.d.next = self.clocks.q.val();
            self.ls_q.d.next = self.stalls.q.val();
        }
        // The FIFO and its count; the CRC sees every push but the trailer's.
        self.ram.write_enable.next = self.push.val();
        self.ram.write_address.next = self.wp.q.val();
        self.ram.write_data.next = self.push_data.val();
        if self.push.val() {
            self.wp.d.next = self.wp.q.val() + self.one5.val();
        }
        self.wl.d.next = self.push.val();
        if self.push.val() & !self.pop.val() {
            self.occ.d.next = self.occ.q.val() + self.one6.val();
        }
        if !self.push.val() & self.pop.val() {
            self.occ.d.next = self.occ.q.val() - self.one6.val();
        }
        self.cv.d.next = self.push.val() & (self.state.q.val() != self.s[7].val());
        self.cw.d.next = self.push_data.val();
        if self.state.q.val() != self.s[0].val() {
            self.clocks.d.next = self.clocks.q.val() + 1;
            if self.pop.val() {
                self.words.d.next = self.words.q.val() + 1;
            }
            if self.readable.val() & !self.tready.val() {
                self.stalls.d.next = self.stalls.q.val() + 1;
            }
        }
        if self.reset.val() {
            self.state.d.next = self.s[0].val();
            self.occ.d.next = self.zero6.val();
            self.rp.d.next = self.zero5.val();
            self.wp.d.next = self.zero5.val();
            self.wl.d.next = false;
            self.inflight.d.next = self.zero6.val();
            self.streams_q.d.next = 0.into();
            self.cv.d.next = false;
        }
    }
}
