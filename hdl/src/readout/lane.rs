//! `Lane`: one window of the readout stream, read at one cell a clock from its own read
//! port and cut into whole chunks of 256-bit beats, which the stream engine
//! ([`super::stream::StreamEngine`]) keeps in the lane's FIFO until it sends them.
//!
//! Every window of the NIC sits in its own RAM (or, for SuMax's arrays and the table's
//! ways, behind a read port shared in lockstep), so the engine gives each window a lane and
//! runs them all at once: the stream is as long as the slowest window's reads, not their
//! sum.
//!
//! ```text
//! reader (row, col) --rd--> the window's RAM --data, LATENCY clocks later--> packer
//!   --64-bit payload words--> collector (chunk words, fillers, 4 words a beat) --> push
//! ```
//!
//! - **Reader**: on `start`, `rows * cols` reads, `(row, col)` in order, one a clock while
//!   `go` (the engine's `room`, or the AND of a lockstep group's); the answer is on `data`
//!   [`LaneRead::latency`] clocks after its `rd`.
//! - **Packer**: each answer masked to its cell width (the read pattern, `col` order) and
//!   packed above the bits already held (the packing rule, `contract::packing`); a full
//!   64-bit word leaves, and after the last cell the partial rest.
//! - **Collector**: the window's payload words into chunks of `CHUNK_PAYLOAD` words behind
//!   a chunk word, then empty chunks to the beat's end (`wire::readout::window_chunks`), four
//!   words a beat; the beat that ends a chunk is marked.
//! - **FIFO** (in the engine, beside its output mux): [`super::stream::FIFO_DEPTH`] beats;
//!   the engine's `room` while it holds at most [`super::stream::ROOM`], which leaves space
//!   for every read in flight.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | synchronous reset: reads stop, answers in flight dropped |
//! | `start` | in | 1 | walk the window from its first cell |
//! | `go` | in | 1 | a read may be issued this clock (the FIFO has room) |
//! | `rd`, `row`, `col` | out | 1, [`ROW_BITS`], 4 | a read of cell `col` of row `row` |
//! | `issued` | out | 1 | no read left to issue |
//! | `data` | in | 64 | the answer, [`LaneRead::latency`] clocks after `rd` |
//! | `push`, `beat_out`, `push_last` | out | 1, 256, 1 | a beat for the FIFO (word 0 in bits 0..64), whether it ends a chunk |
//! | `done` | out | 1 | every beat of the window has been pushed |
use crate::arith::Widen;
use rust_hdl::prelude::*;
use smartnic_contract::wire::readout::{chunk_word, WindowSpec, CHUNK_PAYLOAD};

/// Row counter bits (a window's rows: up to 2^20).
pub const ROW_BITS: usize = 20;
/// Most cells of a row (a table slot's 12 words).
pub const MAX_COLS: usize = 12;
/// Longest read latency a lane waits for.
pub const MAX_LATENCY: usize = 8;
/// How a lane reads its window: `rows` rows of `widths.len()` cells, cell `c` of
/// `widths[c]` bits (at most 64), answered `latency` clocks after the read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaneRead {
    pub rows: u64,
    pub widths: Vec<u8>,
    pub latency: usize,
}

impl LaneRead {
    /// One read per counter word of the window, in the window's width pattern.
    pub fn per_word(spec: &WindowSpec, latency: usize) -> Self {
        LaneRead { rows: spec.words / spec.widths.len() as u64, widths: spec.widths.clone(), latency }
    }

    /// One read per row of the window's pattern, the row's words as one cell (a latency
    /// bucket's count and sum, read together).
    pub fn per_row(spec: &WindowSpec, latency: usize) -> Self {
        let bits = spec.widths.iter().map(|&w| w as u32).sum::<u32>();
        LaneRead { rows: spec.words / spec.widths.len() as u64, widths: vec![bits as u8], latency }
    }

    /// Packed bits of every cell, which must be the window's.
    fn bits(&self) -> u64 {
        self.rows * self.widths.iter().map(|&w| w as u64).sum::<u64>()
    }
}

/// A lane (see the module docs).
#[derive(LogicBlock)]
pub struct Lane {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub start: Signal<In, Bit>,
    pub go: Signal<In, Bit>,
    pub rd: Signal<Out, Bit>,
    pub row: Signal<Out, Bits<ROW_BITS>>,
    pub col: Signal<Out, Bits<4>>,
    pub issued: Signal<Out, Bit>,
    pub data: Signal<In, Bits<64>>,
    pub push: Signal<Out, Bit>,
    pub beat_out: Signal<Out, Bits<256>>,
    pub push_last: Signal<Out, Bit>,
    pub done: Signal<Out, Bit>,
    // Reader.
    active: DFF<Bit>,
    row_q: DFF<Bits<ROW_BITS>>,
    col_q: DFF<Bits<4>>,
    vline: DFF<Bits<MAX_LATENCY>>,
    ack: Signal<Local, Bit>,
    // Packer.
    pi: DFF<Bits<4>>,
    got: DFF<Bits<24>>,
    tail: DFF<Bit>,
    acc: DFF<Bits<128>>,
    fill: DFF<Bits<7>>,
    pw: DFF<Bits<64>>,
    pw_v: DFF<Bit>,
    w_cur: Signal<Local, Bits<7>>,
    m_cur: Signal<Local, Bits<64>>,
    wide_v: Widen<128, 64>,
    wide_fill: Widen<128, 7>,
    combined: Signal<Local, Bits<128>>,
    sum: Signal<Local, Bits<7>>,
    // Collector.
    pos: DFF<Bits<6>>,
    o: DFF<Bits<24>>,
    done_q: DFF<Bit>,
    beat: [DFF<Bits<64>>; 4],
    nb: [Signal<Local, Bits<64>>; 4],
    slot: Signal<Local, Bits<2>>,
    at_start: Signal<Local, Bit>,
    end_win: Signal<Local, Bit>,
    remaining: Signal<Local, Bits<24>>,
    n_chunk: Signal<Local, Bits<24>>,
    w_o: Widen<64, 24>,
    w_n: Widen<64, 24>,
    cword: Signal<Local, Bits<64>>,
    wb: [Widen<256, 64>; 4],
    // Constants.
    k_rows_1: Constant<Bits<ROW_BITS>>,
    k_cols_1: Constant<Bits<4>>,
    k_cells: Constant<Bits<24>>,
    k_p: Constant<Bits<24>>,
    k_lat: Constant<Bits<4>>,
    k_w: [Constant<Bits<7>>; MAX_COLS],
    k_m: [Constant<Bits<64>>; MAX_COLS],
    k_win: Constant<Bits<64>>,
    k_pad: Constant<Bits<64>>,
    k_full: Constant<Bits<24>>,
    k_64: Constant<Bits<7>>,
    k_slot: [Constant<Bits<2>>; 4],
    k_col: [Constant<Bits<4>>; MAX_COLS],
    k_lat_n: [Constant<Bits<4>>; MAX_LATENCY],
    k_q_last: Constant<Bits<6>>,
    k_q2: Constant<Bits<6>>,
    k_one_l: Constant<Bits<MAX_LATENCY>>,
    z4: Constant<Bits<4>>,
    z6: Constant<Bits<6>>,
    z7: Constant<Bits<7>>,
    z8: Constant<Bits<8>>,
    z20: Constant<Bits<20>>,
    z24: Constant<Bits<24>>,
    z128: Constant<Bits<128>>,
    o4: Constant<Bits<4>>,
    o20: Constant<Bits<20>>,
    o24: Constant<Bits<24>>,
    o6: Constant<Bits<6>>,
}

fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(v.to_bits())
}

fn mask64(w: u8) -> u64 {
    if w >= 64 {
        u64::MAX
    } else {
        (1u64 << w) - 1
    }
}

impl Lane {
    /// The lane of window number `win` (`spec`), read as `read` says.
    pub fn new(win: usize, spec: &WindowSpec, read: &LaneRead) -> Result<Self, String> {
        let cols = read.widths.len();
        let p = spec.payload_words();
        let bad = |why: &str| Err(format!("window {win}: {why}"));
        if cols == 0 || cols > MAX_COLS || read.widths.iter().any(|&w| w == 0 || w > 64) {
            return bad("a read pattern of 1 to 12 cells of 1 to 64 bits");
        }
        if read.rows == 0 || read.rows > 1 << ROW_BITS || read.rows * cols as u64 >= 1 << 24 {
            return bad("too many rows for the lane's counters");
        }
        if read.bits() != spec.bits() {
            return bad("the reads do not pack to the window's bits");
        }
        if read.latency == 0 || read.latency > MAX_LATENCY {
            return bad("a read latency of 1 to 8 clocks");
        }
        Ok(Lane {
            clock: Default::default(),
            reset: Default::default(),
            start: Default::default(),
            go: Default::default(),
            rd: Default::default(),
            row: Default::default(),
            col: Default::default(),
            issued: Default::default(),
            data: Default::default(),
            active: Default::default(),
            row_q: Default::default(),
            col_q: Default::default(),
            vline: Default::default(),
            ack: Default::default(),
            pi: Default::default(),
            got: Default::default(),
            tail: Default::default(),
            acc: Default::default(),
            fill: Default::default(),
            pw: Default::default(),
            pw_v: Default::default(),
            w_cur: Default::default(),
            m_cur: Default::default(),
            wide_v: Default::default(),
            wide_fill: Default::default(),
            combined: Default::default(),
            sum: Default::default(),
            pos: Default::default(),
            o: Default::default(),
            done_q: Default::default(),
            push: Default::default(),
            beat_out: Default::default(),
            push_last: Default::default(),
            done: Default::default(),
            beat: Default::default(),
            nb: Default::default(),
            slot: Default::default(),
            at_start: Default::default(),
            end_win: Default::default(),
            remaining: Default::default(),
            n_chunk: Default::default(),
            w_o: Default::default(),
            w_n: Default::default(),
            cword: Default::default(),
            wb: Default::default(),
            k_rows_1: c(read.rows - 1),
            k_cols_1: c(cols as u64 - 1),
            k_cells: c(read.rows * cols as u64),
            k_p: c(p),
            k_lat: c(read.latency as u64 - 1),
            k_w: std::array::from_fn(|k| c(read.widths.get(k).copied().unwrap_or(0) as u64)),
            k_m: std::array::from_fn(|k| c(mask64(read.widths.get(k).copied().unwrap_or(0)))),
            k_win: c(chunk_word(win, 0, 0)),
            k_pad: c(chunk_word(win, p, 0)),
            k_full: c(CHUNK_PAYLOAD),
            k_64: c(64),
            k_slot: std::array::from_fn(|k| c(k as u64)),
            k_col: std::array::from_fn(|k| c(k as u64)),
            k_lat_n: std::array::from_fn(|k| c(k as u64)),
            k_q_last: c(CHUNK_PAYLOAD),
            k_q2: c(2),
            k_one_l: c(1),
            z4: c(0),
            z6: c(0),
            z7: c(0),
            z8: c(0),
            z20: c(0),
            z24: c(0),
            z128: c(0),
            o4: c(1),
            o20: c(1),
            o24: c(1),
            o6: c(1),
        })
    }
}

impl Logic for Lane {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, active, row_q, col_q, vline, pi, got, tail, acc, fill, pw, pw_v, pos, o, done_q
        );
        for k in 0..4 {
            self.beat[k].clock.next = self.clock.val();
            self.beat[k].d.next = self.beat[k].q.val();
        }
        // ---- Reader: one read a clock while `go`; the answer `LATENCY` clocks later.
        self.rd.next = self.active.q.val() & self.go.val();
        self.row.next = self.row_q.q.val();
        self.col.next = self.col_q.q.val();
        self.issued.next = !self.active.q.val();
        if self.rd.val() {
            if self.col_q.q.val() == self.k_cols_1.val() {
                self.col_q.d.next = self.z4.val();
                self.row_q.d.next = self.row_q.q.val() + self.o20.val();
                if self.row_q.q.val() == self.k_rows_1.val() {
                    self.active.d.next = false;
                }
            } else {
                self.col_q.d.next = self.col_q.q.val() + self.o4.val();
            }
        }
        if self.rd.val() {
            self.vline.d.next = (self.vline.q.val() << 1) | self.k_one_l.val();
        } else {
            self.vline.d.next = self.vline.q.val() << 1;
        }
        self.ack.next = false;
        for j in 0..MAX_LATENCY {
            if self.k_lat.val() == self.k_lat_n[j].val() {
                self.ack.next = self.vline.q.val().get_bit(j);
            }
        }
        // ---- Packer: the answer above the bits held; a full word leaves.
        self.w_cur.next = self.k_w[0].val();
        self.m_cur.next = self.k_m[0].val();
        for k in 1..MAX_COLS {
            if self.pi.q.val() == self.k_col[k].val() {
                self.w_cur.next = self.k_w[k].val();
                self.m_cur.next = self.k_m[k].val();
            }
        }
        self.wide_v.x.next = self.data.val() & self.m_cur.val();
        self.wide_fill.x.next = self.fill.q.val();
        self.combined.next = self.acc.q.val() | (self.wide_v.y.val() << self.wide_fill.y.val());
        self.sum.next = self.fill.q.val() + self.w_cur.val();
        self.pw_v.d.next = false;
        self.tail.d.next = false;
        if self.ack.val() {
            self.got.d.next = self.got.q.val() + self.o24.val();
            self.tail.d.next = self.got.q.val() + self.o24.val() == self.k_cells.val();
            if self.pi.q.val() == self.k_cols_1.val() {
                self.pi.d.next = self.k_col[0].val();
            } else {
                self.pi.d.next = self.pi.q.val() + self.o4.val();
            }
            if self.sum.val() >= self.k_64.val() {
                self.pw_v.d.next = true;
                self.pw.d.next = self.combined.val().get_bits::<64>(0);
                self.acc.d.next = self.combined.val() >> 64;
                self.fill.d.next = self.sum.val() - self.k_64.val();
            } else {
                self.acc.d.next = self.combined.val();
                self.fill.d.next = self.sum.val();
            }
        }
        if self.tail.q.val() & (self.fill.q.val() != self.z7.val()) {
            // The window's last, partial word.
            self.pw_v.d.next = true;
            self.pw.d.next = self.acc.q.val().get_bits::<64>(0);
            self.fill.d.next = self.z7.val();
        }
        // ---- Collector: chunk word, payload words, fillers; four words a beat.
        self.at_start.next = self.pos.q.val() == self.z6.val();
        if self.at_start.val() {
            self.slot.next = self.k_slot[1].val();
        } else {
            self.slot.next = self.pos.q.val().get_bits::<2>(0);
        }
        self.remaining.next = self.k_p.val() - self.o.q.val();
        if self.remaining.val() >= self.k_full.val() {
            self.n_chunk.next = self.k_full.val();
        } else {
            self.n_chunk.next = self.remaining.val();
        }
        self.w_o.x.next = self.o.q.val();
        self.w_n.x.next = self.n_chunk.val();
        self.cword.next = self.k_win.val() | (self.w_o.y.val() << 16) | (self.w_n.y.val() << 40);
        self.end_win.next = self.o.q.val() + self.o24.val() == self.k_p.val();
        // Slot 0 holds a payload word only inside a chunk (a chunk starts on a beat).
        if self.at_start.val() {
            self.nb[0].next = self.cword.val();
        } else if self.slot.val() == self.k_slot[0].val() {
            self.nb[0].next = self.pw.q.val();
        } else {
            self.nb[0].next = self.beat[0].q.val();
        }
        for k in 1..4 {
            self.nb[k].next = self.beat[k].q.val();
            if self.slot.val() == self.k_slot[k].val() {
                self.nb[k].next = self.pw.q.val();
            }
            if self.end_win.val() & (self.slot.val() < self.k_slot[k].val()) {
                self.nb[k].next = self.k_pad.val();
            }
        }
        self.push.next = false;
        self.push_last.next = self.end_win.val() | (self.pos.q.val() == self.k_q_last.val());
        if self.pw_v.q.val() {
            for k in 0..4 {
                self.beat[k].d.next = self.nb[k].val();
            }
            self.o.d.next = self.o.q.val() + self.o24.val();
            self.push.next = self.end_win.val() | (self.slot.val() == self.k_slot[3].val());
            if self.at_start.val() {
                self.pos.d.next = self.k_q2.val();
            } else if self.pos.q.val() == self.k_q_last.val() {
                self.pos.d.next = self.z6.val();
            } else {
                self.pos.d.next = self.pos.q.val() + self.o6.val();
            }
            if self.end_win.val() {
                self.pos.d.next = self.z6.val();
                self.done_q.d.next = true;
            }
        }
        for k in 0..4 {
            self.wb[k].x.next = self.nb[k].val();
        }
        self.beat_out.next = self.wb[0].y.val()
            | (self.wb[1].y.val() << 64)
            | (self.wb[2].y.val() << 128)
            | (self.wb[3].y.val() << 192);
        self.done.next = self.done_q.q.val();
        // ---- Start and reset.
        if self.start.val() {
            self.active.d.next = true;
            self.row_q.d.next = self.z20.val();
            self.col_q.d.next = self.z4.val();
            self.pi.d.next = self.k_col[0].val();
            self.got.d.next = self.z24.val();
            self.acc.d.next = self.z128.val();
            self.fill.d.next = self.z7.val();
            self.pos.d.next = self.z6.val();
            self.o.d.next = self.z24.val();
            self.done_q.d.next = false;
        }
        if self.reset.val() {
            self.active.d.next = false;
            self.vline.d.next = self.z8.val();
            self.pw_v.d.next = false;
            self.tail.d.next = false;
            self.done_q.d.next = false;
        }
    }
}
