//! `RecordFifo`: the NIC's record stream buffer (the contract's `wire::record`): whole
//! records in, one a clock, stored in block RAM; 32-bit words out, one per `pop`, in the
//! order the readout window returns them. A record that finds the buffer full is counted in
//! `dropped` and not stored (the datapath never waits on the host).
//!
//! Records are [`REC_WORDS`] = 7 words (28 bytes, the inflated-latency record; the stream's
//! later kinds of other lengths will get their own width or a length field here). `rec`
//! holds word 0 in its top 32 bits (bytes 0..3 of the record, byte 0 on top), as the window
//! returns them.
//!
//! # Read side
//! The RAM's read port is driven with the head record's address for the next clock, so the
//! head's words are on `head` from registers; a record written in the clock before is not
//! yet readable (the RAM returns old data on a read of the address being written), so
//! `head_valid` waits one clock for it.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | synchronous reset of the pointers and `dropped` (not the RAM) |
//! | `in_valid`, `rec` | in | 1, 224 | a record to store |
//! | `pop` | in | 1 | take the head word (ignored without `head_valid`) |
//! | `head`, `head_valid` | out | 32, 1 | the next word of the stream |
//! | `head_first` | out | 1 | the next word is a record's first (no record is half taken) |
//! | `words` | out | 16 | words stored and not yet taken |
//! | `dropped` | out | 32 | records refused because the buffer was full, since reset |
use crate::parser::konst;
use crate::sketch::cell_ram::CellRam;
use rust_hdl::prelude::*;
use smartnic_contract::wire::record::{INFLATED_LEN, WORD};

/// Words of a record.
pub const REC_WORDS: usize = INFLATED_LEN / WORD;
/// Bits of a record.
pub const REC_BITS: usize = REC_WORDS * 32;
/// Address bits: 512 records (7 RAMB18 in their 512 x 36 shape).
pub const ADDR: usize = 9;
/// Records the buffer holds.
pub const DEPTH: usize = 1 << ADDR;
const _: () = assert!(REC_WORDS == 7 && REC_BITS == 224);

/// The record buffer (see the module docs).
#[derive(LogicBlock)]
pub struct RecordFifo {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub in_valid: Signal<In, Bit>,
    pub rec: Signal<In, Bits<REC_BITS>>,
    pub pop: Signal<In, Bit>,
    pub head: Signal<Out, Bits<32>>,
    pub head_valid: Signal<Out, Bit>,
    pub head_first: Signal<Out, Bit>,
    pub words: Signal<Out, Bits<16>>,
    pub dropped: Signal<Out, Bits<32>>,
    ram: CellRam<REC_BITS, ADDR>,
    wp: DFF<Bits<ADDR>>,
    rp: DFF<Bits<ADDR>>,
    count: DFF<Bits<16>>,
    wi: DFF<Bits<3>>,
    /// The last clock's write (valid, address): its record is not readable yet.
    lw_valid: DFF<Bit>,
    lw_addr: DFF<Bits<ADDR>>,
    n_dropped: DFF<Bits<32>>,
    take: Signal<Local, Bit>,
    put: Signal<Local, Bit>,
    /// The head record's last word is taken this clock.
    next_rec: Signal<Local, Bit>,
    hv: Signal<Local, Bit>,
    depth_c: Constant<Bits<16>>,
    word_c: [Constant<Bits<3>>; REC_WORDS],
    word_at: [Constant<Bits<8>>; REC_WORDS],
    one3: Constant<Bits<3>>,
    zero3: Constant<Bits<3>>,
    one16: Constant<Bits<16>>,
    zero16: Constant<Bits<16>>,
    one_a: Constant<Bits<ADDR>>,
    zero_a: Constant<Bits<ADDR>>,
    three: Constant<Bits<16>>,
    one32: Constant<Bits<32>>,
    zero32: Constant<Bits<32>>,
    wi16: crate::arith::Widen<16, 3>,
}

impl Default for RecordFifo {
    fn default() -> Self {
        RecordFifo {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            rec: Default::default(),
            pop: Default::default(),
            head: Default::default(),
            head_valid: Default::default(),
            head_first: Default::default(),
            words: Default::default(),
            dropped: Default::default(),
            ram: Default::default(),
            wp: Default::default(),
            rp: Default::default(),
            count: Default::default(),
            wi: Default::default(),
            lw_valid: Default::default(),
            lw_addr: Default::default(),
            n_dropped: Default::default(),
            take: Default::default(),
            put: Default::default(),
            next_rec: Default::default(),
            hv: Default::default(),
            depth_c: konst!(DEPTH),
            word_c: std::array::from_fn(|i| konst!(i)),
            word_at: std::array::from_fn(|i| konst!(REC_BITS - 32 * (i + 1))),
            one3: konst!(1),
            zero3: konst!(0),
            one16: konst!(1),
            zero16: konst!(0),
            one_a: konst!(1),
            zero_a: konst!(0),
            three: konst!(3),
            one32: konst!(1),
            zero32: konst!(0),
            wi16: Default::default(),
        }
    }
}

impl Logic for RecordFifo {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, wp, rp, count, wi, lw_valid, lw_addr, n_dropped);
        self.ram.read_clock.next = self.clock.val();
        self.ram.write_clock.next = self.clock.val();
        // Head: readable once its record is stored and was not written in the last clock.
        self.hv.next = (self.count.q.val() != self.zero16.val())
            & !(self.lw_valid.q.val() & (self.lw_addr.q.val() == self.rp.q.val()));
        self.take.next = self.pop.val() & self.hv.val();
        self.next_rec.next = self.take.val() & (self.wi.q.val() == self.word_c[6].val());
        if self.take.val() {
            if self.next_rec.val() {
                self.wi.d.next = self.zero3.val();
                self.rp.d.next = self.rp.q.val() + self.one_a.val();
            } else {
                self.wi.d.next = self.wi.q.val() + self.one3.val();
            }
        }
        // The read port follows the head's next address, so `read_data` is the head record.
        if self.next_rec.val() {
            self.ram.read_address.next = self.rp.q.val() + self.one_a.val();
        } else {
            self.ram.read_address.next = self.rp.q.val();
        }
        // Write side: a record is stored when there is room, else counted.
        self.put.next = self.in_valid.val() & (self.count.q.val() != self.depth_c.val());
        self.ram.write_address.next = self.wp.q.val();
        self.ram.write_data.next = self.rec.val();
        self.ram.write_enable.next = self.put.val();
        if self.put.val() {
            self.wp.d.next = self.wp.q.val() + self.one_a.val();
        }
        if self.in_valid.val() & !self.put.val() {
            self.n_dropped.d.next = self.n_dropped.q.val() + self.one32.val();
        }
        if self.put.val() & !self.next_rec.val() {
            self.count.d.next = self.count.q.val() + self.one16.val();
        } else if !self.put.val() & self.next_rec.val() {
            self.count.d.next = self.count.q.val() - self.one16.val();
        }
        self.lw_valid.d.next = self.put.val();
        self.lw_addr.d.next = self.wp.q.val();
        if self.reset.val() {
            self.wp.d.next = self.zero_a.val();
            self.rp.d.next = self.zero_a.val();
            self.count.d.next = self.zero16.val();
            self.wi.d.next = self.zero3.val();
            self.lw_valid.d.next = false;
            self.n_dropped.d.next = self.zero32.val();
        }
        // Outputs.
        self.head.next = self.ram.read_data.val().get_bits::<32>(self.word_at[0].val().index());
        for i in 0..REC_WORDS {
            if self.wi.q.val() == self.word_c[i].val() {
                self.head.next = self.ram.read_data.val().get_bits::<32>(self.word_at[i].val().index());
            }
        }
        self.head_valid.next = self.hv.val();
        self.head_first.next = self.wi.q.val() == self.zero3.val();
        // words = 7 count - wi = (count << 3) - count - wi.
        self.wi16.x.next = self.wi.q.val();
        self.words.next = (self.count.q.val() << self.three.val()) - self.count.q.val() - self.wi16.y.val();
        self.dropped.next = self.n_dropped.q.val();
    }
}
