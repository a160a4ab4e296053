//! `PerSwitchHalf`: the per-switch half of the NIC, its blocks composed at one hop a clock:
//! descriptors with their captured hop records -> [`HopSerializer`] -> latency units -> the
//! two-bank [`LatencyTowerNic`] -> [`InflateCheck`] on the pair's estimates before the hop ->
//! an inflated-latency record (`wire::record`) -> [`RecordFifo`]. Bit-exact with
//! `host::sketch::per_switch::PerSwitch` for the same frames (the key table joins it with
//! the core's flow tower estimate).
//!
//! The hop's payload (hop key, latency, epoch, units) waits beside the tower in a delay
//! line of the tower's latency, then beside the check in one of the check's; every stage
//! takes one hop a clock, so nothing queues after the serializer.
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock`, `reset` | in | 1 | synchronous reset of every valid pipeline, pointer and counter |
//! | `d_valid`, `d_ip`, `d_hops`, `d_key` | in | | the parser's descriptor |
//! | `d_rec` | in | 768 | its hop records, from a [`HopCapture`](super::hop_capture::HopCapture) |
//! | `d_bank`, `d_epoch` | in | 1, 32 | the epoch engine's active bank and epoch at the descriptor |
//! | `mode` | in | 1 | the latency tower's insertion mode (0 = CM, 1 = ACU) |
//! | `threshold` | in | 22 | `InflateRule::threshold` |
//! | `pop`, `head`, `head_valid`, `head_first`, `words`, `dropped` | | | the record stream ([`RecordFifo`]) |
//! | `rd_bank`, `rd_addr{i}`, `rd_count{i}`, `rd_sum{i}` | | | the latency tower's readout |
//! | `clr`, `clr_bank`, `clr_addr{i}` | in | | the latency tower's clear sweep |
//! | `path` | out | 256 | the descriptor's path in the descriptor's clock (the serializer's `x_path`, for the flow-key table) |
//! | `lost` | out | 32 | records the serializer refused since reset, saturating (never behind one port, by its bound) |
//! | `idle` | out | 1 | no hop anywhere in the half |
use super::hop_capture::REC_BITS as HOP_REC_BITS;
use super::hop_serializer::{HopSerializer, HOP_KEY_BITS, PATH_BITS};
use super::inflate::{self, InflateCheck, LOG_BITS};
use super::latency_tower::{self, LatencyTowerNic};
use super::record_fifo::{RecordFifo, REC_BITS};
use crate::arith::Widen;
use crate::hash::KEY_BITS;
use crate::nic::{LAT_A0, LAT_A1, LAT_A2};
use crate::parser::konst;
use crate::sketch::{BitSink, Sink};
use rust_hdl::prelude::*;
use smartnic_contract::per_switch::LatencyTowerGeometry;
use smartnic_contract::wire::record::{INFLATED_LEN, KIND_INFLATED, WORD};

/// Clocks from a hop's issue to the tower's `done` (the tower's `LATENCY - 1`).
const TOWER_WAIT: usize = latency_tower::LATENCY - 1;
/// Clocks from the tower's `done` to the check's verdict.
const CHECK_WAIT: usize = inflate::LATENCY;
// The literal taps of `update` (`#[hdl_gen]` reads indices from their text).
const _: () = assert!(TOWER_WAIT == 7 && CHECK_WAIT == 6);

/// The per-switch half (see the module docs).
#[derive(LogicBlock)]
#[allow(clippy::new_without_default)]
pub struct PerSwitchHalf {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub d_valid: Signal<In, Bit>,
    pub d_ip: Signal<In, Bit>,
    pub d_hops: Signal<In, Bits<5>>,
    pub d_rec: Signal<In, Bits<HOP_REC_BITS>>,
    pub d_key: Signal<In, Bits<KEY_BITS>>,
    pub d_bank: Signal<In, Bit>,
    pub d_epoch: Signal<In, Bits<32>>,
    pub mode: Signal<In, Bit>,
    pub threshold: Signal<In, Bits<LOG_BITS>>,
    pub pop: Signal<In, Bit>,
    pub head: Signal<Out, Bits<32>>,
    pub head_valid: Signal<Out, Bit>,
    pub head_first: Signal<Out, Bit>,
    pub words: Signal<Out, Bits<16>>,
    pub dropped: Signal<Out, Bits<32>>,
    pub rd_bank: Signal<In, Bit>,
    pub rd_addr0: Signal<In, Bits<LAT_A0>>,
    pub rd_count0: Signal<Out, Bits<8>>,
    pub rd_sum0: Signal<Out, Bits<24>>,
    pub rd_addr1: Signal<In, Bits<LAT_A1>>,
    pub rd_count1: Signal<Out, Bits<16>>,
    pub rd_sum1: Signal<Out, Bits<32>>,
    pub rd_addr2: Signal<In, Bits<LAT_A2>>,
    pub rd_count2: Signal<Out, Bits<32>>,
    pub rd_sum2: Signal<Out, Bits<32>>,
    pub clr: Signal<In, Bit>,
    pub clr_bank: Signal<In, Bit>,
    pub clr_addr0: Signal<In, Bits<LAT_A0>>,
    pub clr_addr1: Signal<In, Bits<LAT_A1>>,
    pub clr_addr2: Signal<In, Bits<LAT_A2>>,
    pub path: Signal<Out, Bits<PATH_BITS>>,
    pub lost: Signal<Out, Bits<32>>,
    pub idle: Signal<Out, Bit>,
    ser: HopSerializer,
    tower: LatencyTowerNic,
    check: InflateCheck,
    fifo: RecordFifo,
    // Units: `(latency + 2^(shift-1)) >> shift` at 33 bits.
    w_lat: Widen<33, 32>,
    units: Signal<Local, Bits<33>>,
    // Beside the tower: tap j = the hop issued j + 1 clocks ago.
    t_key: [DFF<Bits<HOP_KEY_BITS>>; TOWER_WAIT],
    t_lat: [DFF<Bits<32>>; TOWER_WAIT],
    t_epoch: [DFF<Bits<32>>; TOWER_WAIT],
    t_units: [DFF<Bits<32>>; TOWER_WAIT],
    // Beside the check.
    c_key: [DFF<Bits<HOP_KEY_BITS>>; CHECK_WAIT],
    c_lat: [DFF<Bits<32>>; CHECK_WAIT],
    c_epoch: [DFF<Bits<32>>; CHECK_WAIT],
    // The record's fields at their places (word 0 on top).
    r_head: Widen<REC_BITS, 16>,
    r_switch: Widen<REC_BITS, 16>,
    r_epoch: Widen<REC_BITS, 32>,
    r_lat: Widen<REC_BITS, 32>,
    r_flow: Widen<REC_BITS, KEY_BITS>,
    half: Constant<Bits<33>>,
    shift: Constant<Bits<6>>,
    kind_words: Constant<Bits<16>>,
    at_head: Constant<Bits<8>>,
    at_switch: Constant<Bits<8>>,
    at_epoch: Constant<Bits<8>>,
    at_lat: Constant<Bits<8>>,
    at_flow: Constant<Bits<8>>,
    /// Where the switch ID and the flow key sit in the hop key.
    sw_in_key: Constant<Bits<7>>,
    flow_in_key: Constant<Bits<7>>,
    /// A hop in the check: tap j = the tower's `done` j + 1 clocks ago.
    c_v: [DFF<Bit>; CHECK_WAIT],
    // Outputs of the parts this composition does not need (the hop's switch ID is in its
    // key; `in_ready` is constant 1; the units' 33rd bit is 0 for any 32-bit latency).
    sink_switch: Sink<16>,
    sink_last: BitSink,
    sink_ready: BitSink,
    sink_units: BitSink,
}

impl PerSwitchHalf {
    /// The half at the NIC's latency tower geometry.
    pub fn new() -> Result<Self, String> {
        let g = LatencyTowerGeometry::nic_default();
        let shift = g.latency_shift as u64;
        let rec_bits = 8 * INFLATED_LEN;
        Ok(PerSwitchHalf {
            clock: Default::default(),
            reset: Default::default(),
            d_valid: Default::default(),
            d_ip: Default::default(),
            d_hops: Default::default(),
            d_rec: Default::default(),
            d_key: Default::default(),
            d_bank: Default::default(),
            d_epoch: Default::default(),
            mode: Default::default(),
            threshold: Default::default(),
            pop: Default::default(),
            head: Default::default(),
            head_valid: Default::default(),
            head_first: Default::default(),
            words: Default::default(),
            dropped: Default::default(),
            rd_bank: Default::default(),
            rd_addr0: Default::default(),
            rd_count0: Default::default(),
            rd_sum0: Default::default(),
            rd_addr1: Default::default(),
            rd_count1: Default::default(),
            rd_sum1: Default::default(),
            rd_addr2: Default::default(),
            rd_count2: Default::default(),
            rd_sum2: Default::default(),
            clr: Default::default(),
            clr_bank: Default::default(),
            clr_addr0: Default::default(),
            clr_addr1: Default::default(),
            clr_addr2: Default::default(),
            path: Default::default(),
            lost: Default::default(),
            idle: Default::default(),
            ser: Default::default(),
            tower: LatencyTowerNic::new(&g)?,
            check: Default::default(),
            fifo: Default::default(),
            w_lat: Default::default(),
            units: Default::default(),
            t_key: std::array::from_fn(|_| Default::default()),
            t_lat: Default::default(),
            t_epoch: Default::default(),
            t_units: Default::default(),
            c_key: std::array::from_fn(|_| Default::default()),
            c_lat: Default::default(),
            c_epoch: Default::default(),
            r_head: Default::default(),
            r_switch: Default::default(),
            r_epoch: Default::default(),
            r_lat: Default::default(),
            r_flow: Default::default(),
            half: konst!((1u64 << shift) >> 1),
            shift: konst!(shift),
            kind_words: konst!((KIND_INFLATED as u64) << 8 | (INFLATED_LEN / WORD) as u64),
            at_head: konst!(rec_bits - 16),
            at_switch: konst!(rec_bits - 32),
            at_epoch: konst!(rec_bits - 64),
            at_lat: konst!(rec_bits - 96),
            at_flow: konst!(rec_bits - 96 - KEY_BITS),
            sw_in_key: konst!(KEY_BITS),
            flow_in_key: konst!(0),
            c_v: Default::default(),
            sink_switch: Default::default(),
            sink_last: Default::default(),
            sink_ready: Default::default(),
            sink_units: Default::default(),
        })
    }
}

impl Logic for PerSwitchHalf {
    #[hdl_gen]
    fn update(&mut self) {
        for j in 0..TOWER_WAIT {
            self.t_key[j].clock.next = self.clock.val();
            self.t_lat[j].clock.next = self.clock.val();
            self.t_epoch[j].clock.next = self.clock.val();
            self.t_units[j].clock.next = self.clock.val();
        }
        for j in 0..CHECK_WAIT {
            self.c_v[j].clock.next = self.clock.val();
            self.c_key[j].clock.next = self.clock.val();
            self.c_lat[j].clock.next = self.clock.val();
            self.c_epoch[j].clock.next = self.clock.val();
        }
        // ---- Serializer.
        self.ser.clock.next = self.clock.val();
        self.ser.reset.next = self.reset.val();
        self.ser.d_valid.next = self.d_valid.val();
        self.ser.d_ip.next = self.d_ip.val();
        self.ser.d_hops.next = self.d_hops.val();
        self.ser.d_rec.next = self.d_rec.val();
        self.ser.d_key.next = self.d_key.val();
        self.ser.d_bank.next = self.d_bank.val();
        self.ser.d_epoch.next = self.d_epoch.val();
        // ---- Units and the tower.
        self.w_lat.x.next = self.ser.h_latency.val();
        self.units.next = (self.w_lat.y.val() + self.half.val()) >> self.shift.val();
        self.tower.clock.next = self.clock.val();
        self.tower.reset.next = self.reset.val();
        self.tower.key.next = self.ser.h_key.val();
        self.tower.valid.next = self.ser.h_valid.val();
        self.tower.units.next = self.units.val().get_bits::<32>(0);
        self.tower.mode.next = self.mode.val();
        self.tower.bank.next = self.ser.h_bank.val();
        self.tower.rd_bank.next = self.rd_bank.val();
        self.tower.rd_addr0.next = self.rd_addr0.val();
        self.tower.rd_addr1.next = self.rd_addr1.val();
        self.tower.rd_addr2.next = self.rd_addr2.val();
        self.tower.clr.next = self.clr.val();
        self.tower.clr_bank.next = self.clr_bank.val();
        self.tower.clr_addr0.next = self.clr_addr0.val();
        self.tower.clr_addr1.next = self.clr_addr1.val();
        self.tower.clr_addr2.next = self.clr_addr2.val();
        self.rd_count0.next = self.tower.rd_count0.val();
        self.rd_sum0.next = self.tower.rd_sum0.val();
        self.rd_count1.next = self.tower.rd_count1.val();
        self.rd_sum1.next = self.tower.rd_sum1.val();
        self.rd_count2.next = self.tower.rd_count2.val();
        self.rd_sum2.next = self.tower.rd_sum2.val();
        self.t_key[0].d.next = self.ser.h_key.val();
        self.t_lat[0].d.next = self.ser.h_latency.val();
        self.t_epoch[0].d.next = self.ser.h_epoch.val();
        self.t_units[0].d.next = self.units.val().get_bits::<32>(0);
        for j in 1..TOWER_WAIT {
            self.t_key[j].d.next = self.t_key[j - 1].q.val();
            self.t_lat[j].d.next = self.t_lat[j - 1].q.val();
            self.t_epoch[j].d.next = self.t_epoch[j - 1].q.val();
            self.t_units[j].d.next = self.t_units[j - 1].q.val();
        }
        // ---- The check, on the tower's estimates before the hop.
        self.check.clock.next = self.clock.val();
        self.check.reset.next = self.reset.val();
        self.check.valid.next = self.tower.done.val();
        self.check.units.next = self.t_units[6].q.val();
        self.check.count_inf.next = self.tower.count_inf.val();
        self.check.count.next = self.tower.count.val();
        self.check.sum_inf.next = self.tower.sum_inf.val();
        self.check.sum.next = self.tower.sum.val();
        self.check.threshold.next = self.threshold.val();
        self.c_v[0].d.next = self.tower.done.val() & !self.reset.val();
        self.c_key[0].d.next = self.t_key[6].q.val();
        self.c_lat[0].d.next = self.t_lat[6].q.val();
        self.c_epoch[0].d.next = self.t_epoch[6].q.val();
        for j in 1..CHECK_WAIT {
            self.c_v[j].d.next = self.c_v[j - 1].q.val() & !self.reset.val();
            self.c_key[j].d.next = self.c_key[j - 1].q.val();
            self.c_lat[j].d.next = self.c_lat[j - 1].q.val();
            self.c_epoch[j].d.next = self.c_epoch[j - 1].q.val();
        }
        // ---- The record of an inflated hop, into the buffer.
        self.r_head.x.next = self.kind_words.val();
        self.r_switch.x.next = self.c_key[5].q.val().get_bits::<16>(self.sw_in_key.val().index());
        self.r_epoch.x.next = self.c_epoch[5].q.val();
        self.r_lat.x.next = self.c_lat[5].q.val();
        self.r_flow.x.next = self.c_key[5].q.val().get_bits::<KEY_BITS>(self.flow_in_key.val().index());
        self.fifo.clock.next = self.clock.val();
        self.fifo.reset.next = self.reset.val();
        self.fifo.in_valid.next = self.check.done.val() & self.check.hit.val();
        self.fifo.rec.next = (self.r_head.y.val() << self.at_head.val())
            | (self.r_switch.y.val() << self.at_switch.val())
            | (self.r_epoch.y.val() << self.at_epoch.val())
            | (self.r_lat.y.val() << self.at_lat.val())
            | (self.r_flow.y.val() << self.at_flow.val());
        self.fifo.pop.next = self.pop.val();
        self.head.next = self.fifo.head.val();
        self.head_valid.next = self.fifo.head_valid.val();
        self.head_first.next = self.fifo.head_first.val();
        self.words.next = self.fifo.words.val();
        self.dropped.next = self.fifo.dropped.val();
        self.lost.next = self.ser.lost.val();
        self.path.next = self.ser.x_path.val();
        self.sink_switch.x.next = self.ser.h_switch.val();
        self.sink_last.x.next = self.ser.h_last.val();
        self.sink_ready.x.next = self.tower.in_ready.val();
        self.sink_units.x.next = self.units.val().get_bit(32);
        self.idle.next = self.ser.idle.val()
            & self.tower.idle.val()
            & !(self.c_v[0].q.val()
                | self.c_v[1].q.val()
                | self.c_v[2].q.val()
                | self.c_v[3].q.val()
                | self.c_v[4].q.val()
                | self.c_v[5].q.val());
    }
}
