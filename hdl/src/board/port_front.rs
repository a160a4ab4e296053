//! `PortFront`: one SFP+ port's parsing, at its MAC clock. The port's [`Parser`] and a
//! [`HopCapture`] side by side on the same beats give one record per frame, in the
//! descriptor's clock: the descriptor plus the frame's 16 hop records, packed as
//! [`super::record`] lays them out.
//!
//! # Why a parser per port
//! One shared parser behind an arbiter cannot take four ports: four 10G ports of minimum
//! frames are 4 x 14.88 Mpps of 8-beat frames = 476M beats/s, more than one 64-bit beat a
//! clock even at the 250 MHz core clock (and the parser decides a frame only from its beats
//! in order, so it cannot interleave ports). So each port has its own parser at its MAC
//! clock (156.25 MHz, 64-bit AXI-Stream, `tdata[7:0]` first on the wire: exactly the
//! parser's input), and only one record per frame crosses into the core clock.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | the port's MAC clock and its synchronous reset |
//! | `tdata`, `tkeep`, `tlast`, `tuser`, `tvalid` | in | 64, 8, 1, 1, 1 | the MAC's receive AXI-Stream |
//! | `tready` | out | 1 | always 1 (the parser never stalls) |
//! | `now` | in | 64 | the port's time in ns, in its MAC clock (the parser's `now`) |
//! | `r_valid` | out | 1 | a record this clock: one per frame, [`crate::parser::LATENCY`] clocks after its last beat |
//! | `r_data` | out | [`RECORD_BITS`] | the record |
//! | `frames`, `ip_packets`, `non_ip`, `malformed` | out | 64 each | the parser's counters: frames and each class |
//! | `bytes` | out | 64 | the frames' lengths added up (`d_len`, every class), moving with `frames` |
use super::record::*;
use crate::arith::Widen;
use crate::hash::KEY_BITS;
use crate::parser::{konst, Parser};
use crate::per_switch::hop_capture::{HopCapture, REC_BITS};
use rust_hdl::prelude::*;

/// The port front (see the module docs).
#[derive(LogicBlock)]
pub struct PortFront {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub tdata: Signal<In, Bits<64>>,
    pub tkeep: Signal<In, Bits<8>>,
    pub tlast: Signal<In, Bit>,
    pub tuser: Signal<In, Bit>,
    pub tvalid: Signal<In, Bit>,
    pub tready: Signal<Out, Bit>,
    pub now: Signal<In, Bits<64>>,
    pub r_valid: Signal<Out, Bit>,
    pub r_data: Signal<Out, Bits<RECORD_BITS>>,
    pub frames: Signal<Out, Bits<64>>,
    pub ip_packets: Signal<Out, Bits<64>>,
    pub non_ip: Signal<Out, Bits<64>>,
    pub malformed: Signal<Out, Bits<64>>,
    pub bytes: Signal<Out, Bits<64>>,
    parser: Parser,
    n_bytes: DFF<Bits<64>>,
    len64: Widen<64, LEN_BITS>,
    zero64: Constant<Bits<64>>,
    cap: HopCapture,
    // The fields at the record's width (`#[hdl_gen]` has no concatenation); the capture's
    // hops already have the record's layout (hop `j` at bit 48 j).
    w_rec: Widen<RECORD_BITS, HOPS_BITS>,
    w_nhops: Widen<RECORD_BITS, NHOPS_BITS>,
    w_sc: Widen<RECORD_BITS, SC_BITS>,
    w_class: Widen<RECORD_BITS, CLASS_BITS>,
    w_len: Widen<RECORD_BITS, LEN_BITS>,
    w_delay: Widen<RECORD_BITS, TIME_BITS>,
    w_ts: Widen<RECORD_BITS, TIME_BITS>,
    w_key: Widen<RECORD_BITS, KEY_BITS>,
    at_nhops: Constant<Bits<AT_BITS>>,
    at_sc: Constant<Bits<AT_BITS>>,
    at_class: Constant<Bits<AT_BITS>>,
    at_len: Constant<Bits<AT_BITS>>,
    at_delay: Constant<Bits<AT_BITS>>,
    at_ts: Constant<Bits<AT_BITS>>,
    at_key: Constant<Bits<AT_BITS>>,
}

impl Default for PortFront {
    fn default() -> Self {
        const _: () = assert!(HOPS_BITS == REC_BITS && HOPS_AT == 0);
        PortFront {
            clock: Default::default(),
            reset: Default::default(),
            tdata: Default::default(),
            tkeep: Default::default(),
            tlast: Default::default(),
            tuser: Default::default(),
            tvalid: Default::default(),
            tready: Default::default(),
            now: Default::default(),
            r_valid: Default::default(),
            r_data: Default::default(),
            frames: Default::default(),
            ip_packets: Default::default(),
            non_ip: Default::default(),
            malformed: Default::default(),
            bytes: Default::default(),
            parser: Parser::new(),
            n_bytes: Default::default(),
            len64: Default::default(),
            zero64: konst!(0),
            cap: Default::default(),
            w_rec: Default::default(),
            w_nhops: Default::default(),
            w_sc: Default::default(),
            w_class: Default::default(),
            w_len: Default::default(),
            w_delay: Default::default(),
            w_ts: Default::default(),
            w_key: Default::default(),
            at_nhops: konst!(NHOPS_AT),
            at_sc: konst!(SC_AT),
            at_class: konst!(CLASS_AT),
            at_len: konst!(LEN_AT),
            at_delay: konst!(DELAY_AT),
            at_ts: konst!(TS_AT),
            at_key: konst!(KEY_AT),
        }
    }
}

impl Logic for PortFront {
    #[hdl_gen]
    fn update(&mut self) {
        // ---- The parser and the hop capture see the same beats.
        self.parser.clock.next = self.clock.val();
        self.parser.reset.next = self.reset.val();
        self.parser.tdata.next = self.tdata.val();
        self.parser.tkeep.next = self.tkeep.val();
        self.parser.tlast.next = self.tlast.val();
        self.parser.tuser.next = self.tuser.val();
        self.parser.tvalid.next = self.tvalid.val();
        self.parser.now.next = self.now.val();
        self.tready.next = self.parser.tready.val();
        self.cap.clock.next = self.clock.val();
        self.cap.reset.next = self.reset.val();
        self.cap.tdata.next = self.tdata.val();
        self.cap.tvalid.next = self.tvalid.val();
        self.cap.tlast.next = self.tlast.val();
        self.cap.d_valid.next = self.parser.d_valid.val();
        self.cap.d_sc.next = self.parser.d_sc.val();

        // ---- The record, packed in the descriptor's clock.
        self.w_rec.x.next = self.cap.rec.val();
        self.w_nhops.x.next = self.parser.d_hops.val();
        self.w_sc.x.next = self.parser.d_sc.val();
        self.w_class.x.next = self.parser.d_class.val();
        self.w_len.x.next = self.parser.d_len.val();
        self.w_delay.x.next = self.parser.d_delay.val();
        self.w_ts.x.next = self.parser.d_ts.val();
        self.w_key.x.next = self.parser.d_key.val();
        self.r_data.next = self.w_rec.y.val()
            | (self.w_nhops.y.val() << self.at_nhops.val())
            | (self.w_sc.y.val() << self.at_sc.val())
            | (self.w_class.y.val() << self.at_class.val())
            | (self.w_len.y.val() << self.at_len.val())
            | (self.w_delay.y.val() << self.at_delay.val())
            | (self.w_ts.y.val() << self.at_ts.val())
            | (self.w_key.y.val() << self.at_key.val());
        self.r_valid.next = self.parser.d_valid.val();

        // ---- Counters.
        self.frames.next = self.parser.frames.val();
        self.ip_packets.next = self.parser.ip_packets.val();
        self.non_ip.next = self.parser.non_ip.val();
        self.malformed.next = self.parser.malformed.val();
        self.n_bytes.clock.next = self.clock.val();
        self.len64.x.next = self.parser.d_len.val();
        if self.reset.val() {
            self.n_bytes.d.next = self.zero64.val();
        } else if self.parser.d_valid.val() {
            self.n_bytes.d.next = self.n_bytes.q.val() + self.len64.y.val();
        } else {
            self.n_bytes.d.next = self.n_bytes.q.val();
        }
        self.bytes.next = self.n_bytes.q.val();
    }
}
