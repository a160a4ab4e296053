//! `Si5324Init`: brings up the VC709's SFP+ reference clock. After reset it holds the I2C
//! mux and the Si5324 in reset (`rst_n` low) for `hold` clocks, waits `settle` clocks, then
//! walks the contract's start-up sequence ([`smartnic_contract::board::si5324`]) as an I2C
//! master: the mux write that opens the Si5324's channel, then every register write of
//! `si5324::INIT` as one transaction (start, address, register, value, stop). `done` rises
//! after the last stop; a NACK, or a bus held low at a start, ends the walk (with a stop
//! after a NACK), raises `error` and keeps `step` at the failing entry, so the board's LEDs
//! can say where it stopped.
//!
//! The sequence is a ROM built from the contract ([`program`]): one entry per bus step, so
//! the block has no copy of an address or a register value.
//!
//! # The bus
//! Write-only, one master, 7-bit addresses. Each bit is four quarters of `divider` clocks:
//! SDA set while SCL is low, SCL released, SDA sampled (the ACK bit), SCL pulled low. A
//! target that holds SCL low (clock stretching) is waited for. rust-hdl's I2C widgets were
//! not used: their Verilog does not pass our `verilator -Wall` lint (width mismatches, and
//! a controller/driver handshake that is a combinational loop to Verilator).
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | synchronous reset restarts the whole bring-up |
//! | `sda_low`, `scl_low` | out | 1, 1 | pull SDA / SCL low (open drain: the pad drives 0 or floats) |
//! | `sda_in`, `scl_in` | in | 1, 1 | the lines as the pads see them |
//! | `rst_n` | out | 1 | the mux's and the Si5324's reset, active low |
//! | `done`, `error` | out | 1, 1 | the sequence was written / stopped on a NACK or a lost bus |
//! | `step` | out | 7 | the ROM entry being run (the failing one after an error) |
use crate::parser::konst;
use rust_hdl::prelude::*;
use smartnic_contract::board::si5324;
use std::collections::BTreeMap;

/// One controller command of the bring-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Start (or restart) and send the 7-bit address with the write bit.
    Begin(u8),
    /// Send one byte.
    Write(u8),
    /// Stop.
    End,
    /// The sequence is over.
    Done,
}

impl Op {
    /// The ROM word: the op in bits 9:8, its byte in bits 7:0.
    fn word(self) -> u64 {
        match self {
            Op::Begin(a) => a as u64,
            Op::Write(b) => 1 << 8 | b as u64,
            Op::End => 2 << 8,
            Op::Done => 3 << 8,
        }
    }
}

/// The bring-up as controller commands: the mux write, then each `si5324::INIT` write.
pub fn program() -> Vec<Op> {
    let mut p = vec![Op::Begin(si5324::MUX_ADDR), Op::Write(si5324::mux_select()), Op::End];
    for &(reg, value, _) in si5324::INIT {
        p.extend([Op::Begin(si5324::ADDR), Op::Write(reg), Op::Write(value), Op::End]);
    }
    p.push(Op::Done);
    p
}

/// The board's configuration: on the 200 MHz system clock, I2C at `si5324::I2C_HZ`, the
/// contract's reset and settle times.
pub fn vc709() -> Si5324Init {
    let hz = 1_000_000_000_000 / smartnic_contract::board::SYS_CLK_PS as u64;
    let us = |t: u64| (t * hz / 1_000_000) as u32;
    Si5324Init::new((hz / (4 * si5324::I2C_HZ)) as u32, us(si5324::RESET_HOLD_US), us(si5324::SETTLE_US))
}

/// Address bits of the sequence ROM.
pub const STEP_BITS: usize = 7;
const _: () = assert!(3 + 4 * si5324::INIT.len() < 1 << STEP_BITS);

/// The bring-up block (see the module docs).
#[derive(LogicBlock)]
pub struct Si5324Init {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub sda_low: Signal<Out, Bit>,
    pub scl_low: Signal<Out, Bit>,
    pub sda_in: Signal<In, Bit>,
    pub scl_in: Signal<In, Bit>,
    pub rst_n: Signal<Out, Bit>,
    pub done: Signal<Out, Bit>,
    pub error: Signal<Out, Bit>,
    pub step: Signal<Out, Bits<STEP_BITS>>,
    rom: ROM<Bits<10>, STEP_BITS>,
    state: DFF<Bits<3>>,
    idx: DFF<Bits<STEP_BITS>>,
    count: DFF<Bits<32>>,
    div: DFF<Bits<16>>,
    quarter: DFF<Bits<2>>,
    bitn: DFF<Bits<4>>,
    shift: DFF<Bits<8>>,
    sda_q: DFF<Bit>,
    scl_q: DFF<Bit>,
    /// The last byte was not acknowledged: stop, then report.
    nack: DFF<Bit>,
    tick: Signal<Local, Bit>,
    op: Signal<Local, Bits<2>>,
    hold: Constant<Bits<32>>,
    settle: Constant<Bits<32>>,
    divider: Constant<Bits<16>>,
    one: Constant<Bits<32>>,
    zero: Constant<Bits<32>>,
    one16: Constant<Bits<16>>,
    zero16: Constant<Bits<16>>,
    one_step: Constant<Bits<STEP_BITS>>,
    zero_step: Constant<Bits<STEP_BITS>>,
    q: [Constant<Bits<2>>; 4],
    one4: Constant<Bits<4>>,
    zero4: Constant<Bits<4>>,
    ack_bit: Constant<Bits<4>>,
    op_begin: Constant<Bits<2>>,
    op_write: Constant<Bits<2>>,
    op_end: Constant<Bits<2>>,
    st_hold: Constant<Bits<3>>,
    st_settle: Constant<Bits<3>>,
    st_fetch: Constant<Bits<3>>,
    st_start: Constant<Bits<3>>,
    st_bits: Constant<Bits<3>>,
    st_stop: Constant<Bits<3>>,
    st_error: Constant<Bits<3>>,
    st_done: Constant<Bits<3>>,
}

impl Si5324Init {
    /// The block with `divider` clocks per quarter bit of the bus, `hold` clocks of reset
    /// and `settle` clocks before the first transaction.
    pub fn new(divider: u32, hold: u32, settle: u32) -> Self {
        assert!((1..1 << 16).contains(&divider), "divider {divider} must be 1..65535");
        let rom: BTreeMap<Bits<STEP_BITS>, Bits<10>> =
            program().iter().enumerate().map(|(i, op)| ((i as u64).to_bits(), op.word().to_bits())).collect();
        Si5324Init {
            clock: Default::default(),
            reset: Default::default(),
            sda_low: Default::default(),
            scl_low: Default::default(),
            sda_in: Default::default(),
            scl_in: Default::default(),
            rst_n: Default::default(),
            done: Default::default(),
            error: Default::default(),
            step: Default::default(),
            rom: ROM::new(rom),
            state: Default::default(),
            idx: Default::default(),
            count: Default::default(),
            div: Default::default(),
            quarter: Default::default(),
            bitn: Default::default(),
            shift: Default::default(),
            sda_q: Default::default(),
            scl_q: Default::default(),
            nack: Default::default(),
            tick: Default::default(),
            op: Default::default(),
            hold: konst!(hold),
            settle: konst!(settle),
            divider: konst!(divider - 1),
            one: konst!(1),
            zero: konst!(0),
            one16: konst!(1),
            zero16: konst!(0),
            one_step: konst!(1),
            zero_step: konst!(0),
            q: std::array::from_fn(|i| konst!(i)),
            one4: konst!(1),
            zero4: konst!(0),
            ack_bit: konst!(8),
            op_begin: konst!(0),
            op_write: konst!(1),
            op_end: konst!(2),
            st_hold: konst!(0),
            st_settle: konst!(1),
            st_fetch: konst!(2),
            st_start: konst!(3),
            st_bits: konst!(4),
            st_stop: konst!(5),
            st_error: konst!(6),
            st_done: konst!(7),
        }
    }
}

impl Logic for Si5324Init {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, state, idx, count, div, quarter, bitn, shift, sda_q, scl_q, nack);
        self.rom.address.next = self.idx.q.val();
        self.op.next = self.rom.data.val().get_bits::<2>(8);
        self.sda_low.next = self.sda_q.q.val();
        self.scl_low.next = self.scl_q.q.val();
        self.rst_n.next = self.state.q.val() != self.st_hold.val();
        self.done.next = self.state.q.val() == self.st_done.val();
        self.error.next = self.state.q.val() == self.st_error.val();
        self.step.next = self.idx.q.val();
        // A quarter bit every `divider` clocks while a bus step runs.
        self.tick.next = self.div.q.val() == self.divider.val();
        if self.tick.val() {
            self.div.d.next = self.zero16.val();
            self.quarter.d.next = self.quarter.q.val() + self.q[1].val();
        } else {
            self.div.d.next = self.div.q.val() + self.one16.val();
        }
        if self.state.q.val() == self.st_hold.val() {
            self.count.d.next = self.count.q.val() + self.one.val();
            if self.count.q.val() == self.hold.val() {
                self.count.d.next = self.zero.val();
                self.state.d.next = self.st_settle.val();
            }
        } else if self.state.q.val() == self.st_settle.val() {
            self.count.d.next = self.count.q.val() + self.one.val();
            if self.count.q.val() == self.settle.val() {
                self.state.d.next = self.st_fetch.val();
            }
        } else if self.state.q.val() == self.st_fetch.val() {
            // Every bus step starts on a fresh quarter 0.
            self.div.d.next = self.zero16.val();
            self.quarter.d.next = self.q[0].val();
            self.bitn.d.next = self.zero4.val();
            if self.op.val() == self.op_begin.val() {
                self.shift.d.next = self.rom.data.val().get_bits::<8>(0) << self.one4.val();
                self.state.d.next = self.st_start.val();
            } else if self.op.val() == self.op_write.val() {
                self.shift.d.next = self.rom.data.val().get_bits::<8>(0);
                self.state.d.next = self.st_bits.val();
            } else if self.op.val() == self.op_end.val() {
                self.state.d.next = self.st_stop.val();
            } else {
                self.state.d.next = self.st_done.val();
            }
        } else if self.state.q.val() == self.st_start.val() {
            // Both lines high (idle), SDA falls while SCL is high, then SCL falls.
            if self.tick.val() {
                if (self.quarter.q.val() == self.q[0].val()) & (!self.sda_in.val() | !self.scl_in.val()) {
                    self.state.d.next = self.st_error.val();
                }
                if self.quarter.q.val() == self.q[1].val() {
                    self.sda_q.d.next = true;
                }
                if self.quarter.q.val() == self.q[2].val() {
                    self.scl_q.d.next = true;
                }
                if self.quarter.q.val() == self.q[3].val() {
                    self.state.d.next = self.st_bits.val();
                }
            }
        } else if self.state.q.val() == self.st_bits.val() {
            if self.tick.val() {
                if self.quarter.q.val() == self.q[0].val() {
                    // SCL is low: put the bit on SDA (released for the ACK bit).
                    if self.bitn.q.val() == self.ack_bit.val() {
                        self.sda_q.d.next = false;
                    } else {
                        self.sda_q.d.next = !self.shift.q.val().get_bit(7);
                        self.shift.d.next = self.shift.q.val() << self.one4.val();
                    }
                }
                if self.quarter.q.val() == self.q[1].val() {
                    self.scl_q.d.next = false;
                }
                if self.quarter.q.val() == self.q[2].val() {
                    if !self.scl_in.val() {
                        // Clock stretching: stay in this quarter until SCL is high.
                        self.quarter.d.next = self.q[2].val();
                    } else if self.bitn.q.val() == self.ack_bit.val() {
                        self.nack.d.next = self.sda_in.val();
                    }
                }
                if self.quarter.q.val() == self.q[3].val() {
                    self.scl_q.d.next = true;
                    self.bitn.d.next = self.bitn.q.val() + self.one4.val();
                    if self.bitn.q.val() == self.ack_bit.val() {
                        if self.nack.q.val() {
                            self.state.d.next = self.st_stop.val();
                        } else {
                            self.idx.d.next = self.idx.q.val() + self.one_step.val();
                            self.state.d.next = self.st_fetch.val();
                        }
                    }
                }
            }
        } else if self.state.q.val() == self.st_stop.val() {
            // SDA low while SCL is low, SCL rises, then SDA rises while SCL is high.
            if self.tick.val() {
                if self.quarter.q.val() == self.q[0].val() {
                    self.sda_q.d.next = true;
                }
                if self.quarter.q.val() == self.q[1].val() {
                    self.scl_q.d.next = false;
                }
                if self.quarter.q.val() == self.q[2].val() {
                    self.sda_q.d.next = false;
                }
                if self.quarter.q.val() == self.q[3].val() {
                    if self.nack.q.val() {
                        self.state.d.next = self.st_error.val();
                    } else {
                        self.idx.d.next = self.idx.q.val() + self.one_step.val();
                        self.state.d.next = self.st_fetch.val();
                    }
                }
            }
        }
        if self.reset.val() {
            self.state.d.next = self.st_hold.val();
            self.idx.d.next = self.zero_step.val();
            self.count.d.next = self.zero.val();
            self.div.d.next = self.zero16.val();
            self.quarter.d.next = self.q[0].val();
            self.sda_q.d.next = false;
            self.scl_q.d.next = false;
            self.nack.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_is_the_contract_sequence() {
        let p = program();
        assert_eq!(p.len(), 3 + 4 * si5324::INIT.len() + 1);
        assert_eq!(p[..3], [Op::Begin(0x74), Op::Write(0x80), Op::End]);
        assert_eq!(p[3..7], [Op::Begin(0x68), Op::Write(0), Op::Write(0x54), Op::End]);
        assert_eq!(*p.last().unwrap(), Op::Done);
    }
}
