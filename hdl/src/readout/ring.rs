//! `RingWriter`: the record stream on its own card-to-host channel (the record ring,
//! contract `wire::record_ring`). While enabled it pops the record buffer one 32-bit word a
//! clock and sends 64-bit words as soon as they are whole: two stream words, or a record's
//! last word and the [`PAD`] word when the record has an odd number of words. So a record
//! leaves the NIC the moment the buffer has it and never shares a word with the next one.
//!
//! # Enable
//! `enable` (the stream block's RING_CONTROL) is taken between records only (`on`): when
//! the ring has no record half sent and the buffer none half popped (`head_first`), so the
//! register path (RECORD_POP) and the ring never split a record between them. While `on`,
//! the core gives the buffer's pops to the ring and RECORD_POP reads 0.
//!
//! # Rate
//! One stream word a clock: the 7-word inflated-latency record in 7 clocks (4 channel
//! words). The buffer absorbs bursts; a record that finds it full is counted as dropped,
//! never waited for (the datapath never stalls).
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | synchronous reset (the ring off, nothing held, `words` 0) |
//! | `enable` | in | 1 | RING_CONTROL's ENABLE |
//! | `head`, `head_valid`, `pop` | in, in, out | 32, 1, 1 | the record buffer's head word, and its pop (a word is taken when both `pop` and `head_valid` are high) |
//! | `head_first` | in | 1 | the buffer's head word starts a record (none is half popped) |
//! | `tdata`, `tvalid`, `tready` | out, out, in | 64, 1, 1 | AXI-Stream master: the ring words (high half first in the stream) |
//! | `on` | out | 1 | the ring owns the buffer's pops |
//! | `words` | out | 32 | words the channel accepted since reset (RING_WORDS, wrapping) |
use crate::arith::Widen;
use crate::parser::konst;
use rust_hdl::prelude::*;
use smartnic_contract::wire::record::field;
use smartnic_contract::wire::record_ring::PAD;

/// Bit of a stream word where its record header's `words` field starts (byte
/// [`field::WORDS`] of the big-endian word).
const WORDS_AT: usize = 8 * (3 - field::WORDS);
const _: () = assert!(WORDS_AT == 16);

/// The ring writer (see the module docs).
#[derive(LogicBlock)]
pub struct RingWriter {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub enable: Signal<In, Bit>,
    pub head: Signal<In, Bits<32>>,
    pub head_valid: Signal<In, Bit>,
    pub head_first: Signal<In, Bit>,
    pub pop: Signal<Out, Bit>,
    pub tdata: Signal<Out, Bits<64>>,
    pub tvalid: Signal<Out, Bit>,
    pub tready: Signal<In, Bit>,
    pub on: Signal<Out, Bit>,
    pub words: Signal<Out, Bits<32>>,
    on_q: DFF<Bit>,
    /// Words of the current record still to pop (0 between records).
    left: DFF<Bits<8>>,
    /// The first half of the next channel word.
    half: DFF<Bits<32>>,
    has_half: DFF<Bit>,
    out: DFF<Bits<64>>,
    out_valid: DFF<Bit>,
    n_words: DFF<Bits<32>>,
    free: Signal<Local, Bit>,
    want: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
    header: Signal<Local, Bit>,
    last: Signal<Local, Bit>,
    emit: Signal<Local, Bit>,
    rec_words: Signal<Local, Bits<8>>,
    w_hi: Widen<64, 32>,
    w_lo: Widen<64, 32>,
    pad: Constant<Bits<32>>,
    words_at: Constant<Bits<5>>,
    at32: Constant<Bits<64>>,
    zero8: Constant<Bits<8>>,
    one8: Constant<Bits<8>>,
    zero32: Constant<Bits<32>>,
    one32: Constant<Bits<32>>,
}

impl Default for RingWriter {
    fn default() -> Self {
        RingWriter {
            clock: Default::default(),
            reset: Default::default(),
            enable: Default::default(),
            head: Default::default(),
            head_valid: Default::default(),
            head_first: Default::default(),
            pop: Default::default(),
            tdata: Default::default(),
            tvalid: Default::default(),
            tready: Default::default(),
            on: Default::default(),
            words: Default::default(),
            on_q: Default::default(),
            left: Default::default(),
            half: Default::default(),
            has_half: Default::default(),
            out: Default::default(),
            out_valid: Default::default(),
            n_words: Default::default(),
            free: Default::default(),
            want: Default::default(),
            take: Default::default(),
            header: Default::default(),
            last: Default::default(),
            emit: Default::default(),
            rec_words: Default::default(),
            w_hi: Default::default(),
            w_lo: Default::default(),
            pad: konst!(PAD),
            words_at: konst!(WORDS_AT),
            at32: konst!(32),
            zero8: konst!(0),
            one8: konst!(1),
            zero32: konst!(0),
            one32: konst!(1),
        }
    }
}

impl Logic for RingWriter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, on_q, left, half, has_half, out, out_valid, n_words);
        // Between records the enable is taken, and no header is popped while it goes low.
        self.header.next = self.left.q.val() == self.zero8.val();
        if self.header.val() & self.head_first.val() {
            self.on_q.d.next = self.enable.val();
        }
        // `pop` asks for the head word; the buffer gives it only with `head_valid`. `pop`
        // depends on no output of the buffer (whose pops it drives), so the two blocks form
        // no combinational loop; while `on`, the ring is the buffer's only reader, so a
        // record starts wherever `left` says.
        self.free.next = !self.out_valid.q.val() | self.tready.val();
        self.want.next = self.on_q.q.val() & self.free.val() & !(self.header.val() & !self.enable.val());
        // Written again from registers and ports only: Verilator splits this statement from
        // the ones that read `head_valid` only if it shares no local with them.
        self.pop.next = self.on_q.q.val()
            & (!self.out_valid.q.val() | self.tready.val())
            & !((self.left.q.val() == self.zero8.val()) & !self.enable.val());
        self.take.next = self.want.val() & self.head_valid.val();
        self.rec_words.next = self.head.val().get_bits::<8>(self.words_at.val().index());
        if self.header.val() {
            self.last.next = self.rec_words.val() <= self.one8.val();
        } else {
            self.last.next = self.left.q.val() == self.one8.val();
        }
        if self.take.val() {
            if self.last.val() {
                self.left.d.next = self.zero8.val();
            } else if self.header.val() {
                self.left.d.next = self.rec_words.val() - self.one8.val();
            } else {
                self.left.d.next = self.left.q.val() - self.one8.val();
            }
        }
        // A channel word: the held half and this word, or a record's last word and the pad.
        if self.has_half.q.val() {
            self.w_hi.x.next = self.half.q.val();
            self.w_lo.x.next = self.head.val();
        } else {
            self.w_hi.x.next = self.head.val();
            self.w_lo.x.next = self.pad.val();
        }
        self.emit.next = self.take.val() & (self.has_half.q.val() | self.last.val());
        if self.take.val() & !self.emit.val() {
            self.half.d.next = self.head.val();
            self.has_half.d.next = true;
        }
        if self.emit.val() {
            self.out.d.next = (self.w_hi.y.val() << self.at32.val()) | self.w_lo.y.val();
            self.has_half.d.next = false;
        }
        self.out_valid.d.next = self.emit.val() | (self.out_valid.q.val() & !self.tready.val());
        if self.out_valid.q.val() & self.tready.val() {
            self.n_words.d.next = self.n_words.q.val() + self.one32.val();
        }
        if self.reset.val() {
            self.on_q.d.next = false;
            self.left.d.next = self.zero8.val();
            self.has_half.d.next = false;
            self.out_valid.d.next = false;
            self.n_words.d.next = self.zero32.val();
        }
        self.tdata.next = self.out.q.val();
        self.tvalid.next = self.out_valid.q.val();
        self.on.next = self.on_q.q.val();
        self.words.next = self.n_words.q.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_writer_generates_verilog() {
        let v = crate::flow::to_verilog("ring", &mut RingWriter::default()).unwrap();
        assert!(v.contains("module") && v.contains("tdata"));
    }
}
