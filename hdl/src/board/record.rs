//! The port record: what crosses from a port's MAC clock into the core clock for one frame,
//! packed into one [`RECORD_BITS`]-bit word (the width of the crossing FIFO's RAM).
//!
//! The layout is defined here once; [`PortFront`](super::port_front::PortFront) packs with
//! these offsets and [`BoardFront`](super::front::BoardFront) unpacks with them. Fields, low
//! bits first:
//!
//! | field | offset | width | meaning |
//! |---|---|---|---|
//! | hop records | [`HOPS_AT`] | 768 | the frame's 16 INT hops from [`HopCapture`](crate::per_switch::hop_capture::HopCapture), hop `j` in bits `48j + 47 : 48j`: switch ID, latency 31:16, latency 15:0 from the low end (bits past the hop count are stale) |
//! | hop count | [`NHOPS_AT`] | 5 | the parser's `d_hops` |
//! | shim code | [`SC_AT`] | 2 | the parser's `d_sc` |
//! | class | [`CLASS_AT`] | 2 | the parser's `d_class` |
//! | length | [`LEN_AT`] | 32 | the parser's `d_len` |
//! | delay | [`DELAY_AT`] | 64 | the parser's `d_delay` |
//! | timestamp | [`TS_AT`] | 64 | the parser's `d_ts` (the port's `now` at the frame's first beat) |
//! | flow key | [`KEY_AT`] | 104 | the parser's `d_key` |
use crate::hash::KEY_BITS;
use crate::per_switch::hop_capture::REC_BITS as HOP_BITS;
use smartnic_contract::frame;

/// Width of the hop records.
pub const HOPS_BITS: usize = HOP_BITS;
/// Width of the hop count.
pub const NHOPS_BITS: usize = 5;
/// Width of the shim code.
pub const SC_BITS: usize = 2;
/// Width of the class.
pub const CLASS_BITS: usize = 2;
/// Width of the frame length.
pub const LEN_BITS: usize = frame::LEN_BITS;
/// Width of the INT delay sum and of the timestamp.
pub const TIME_BITS: usize = 64;

pub const HOPS_AT: usize = 0;
pub const NHOPS_AT: usize = HOPS_AT + HOPS_BITS;
pub const SC_AT: usize = NHOPS_AT + NHOPS_BITS;
pub const CLASS_AT: usize = SC_AT + SC_BITS;
pub const LEN_AT: usize = CLASS_AT + CLASS_BITS;
pub const DELAY_AT: usize = LEN_AT + LEN_BITS;
pub const TS_AT: usize = DELAY_AT + TIME_BITS;
pub const KEY_AT: usize = TS_AT + TIME_BITS;
/// Width of a packed record.
pub const RECORD_BITS: usize = KEY_AT + KEY_BITS;
/// Width of the offset constants that place and pick the fields.
pub const AT_BITS: usize = 11;

const _: () = assert!(RECORD_BITS == 1041 && RECORD_BITS < 1 << AT_BITS);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_tile_the_record() {
        let fields = [
            (HOPS_AT, HOPS_BITS),
            (NHOPS_AT, NHOPS_BITS),
            (SC_AT, SC_BITS),
            (CLASS_AT, CLASS_BITS),
            (LEN_AT, LEN_BITS),
            (DELAY_AT, TIME_BITS),
            (TS_AT, TIME_BITS),
            (KEY_AT, KEY_BITS),
        ];
        let mut next = 0;
        for (at, w) in fields {
            assert_eq!(at, next);
            next += w;
        }
        assert_eq!(next, RECORD_BITS);
    }
}
