//! What the board testbenches (`board_nic`: the four ports' NIC at independent MAC clocks;
//! `board_logic`: all of our board logic at the MACs' shared clock) have in common: clocks
//! as edges in picoseconds, one port's traffic beat by beat, the order in which packets
//! entered the sketches (checked against each port's order), an AXI4-Lite master on a model
//! whose core clock runs among other clocks, and each epoch's traffic.
#![allow(dead_code)] // each testbench uses its part

use super::core_check::{generated_trace, packet_of, Expect};
use smartnic_driver::access::AccessError;
use smartnic_hdl::board::port_merge::PORTS;
use smartnic_hdl::hash::key_to_u128;
use smartnic_sim_tb::frames::Adversarial;
use smartnic_sim_tb::simbar::AxiLitePorts;
use smartnic_sim_tb::simnic::SimFrame;
use smartnic_sim_tb::{Model, PortId};
use std::collections::{BTreeMap, VecDeque};

/// The core clock's period (250 MHz) and the MAC clocks' nominal one (156.25 MHz), in ps.
pub const CORE_PS: u64 = 4_000;
pub const MAC_PS: u64 = 6_400;
/// Core clocks a register access or a stream may take before the bench calls it hung.
pub const MAX_WAIT: u64 = 4_000_000;

/// A clock as its edges: half a period, the time of its next edge, its level.
pub struct Clock {
    pub half_ps: u64,
    pub next_ps: u64,
    pub high: bool,
}

impl Clock {
    pub fn new(period_ps: u64, phase_ps: u64) -> Self {
        Clock { half_ps: period_ps / 2, next_ps: phase_ps, high: false }
    }
}

/// One beat of a MAC's receive stream.
pub struct Beat {
    pub data: u64,
    pub keep: u8,
    pub last: bool,
    pub user: bool,
    /// The frame's time (its `ts_ns`).
    pub ts_ns: u64,
}

/// One port's traffic: frames to send, the one being sent (and its next beat), and the IP
/// frames sent but not yet seen entering the sketches.
#[derive(Default)]
pub struct Port {
    pub frames: VecDeque<SimFrame>,
    pub cur: Option<(SimFrame, usize)>,
    pub in_flight: VecDeque<SimFrame>,
    /// Idle beats after each frame (0: back to back), and those still owed.
    pub gap: usize,
    pub idle: usize,
}

impl Port {
    /// The port's next beat (`None`: idle) and, on a frame's last beat, the frame (an IP
    /// frame also waits in `in_flight` until it enters the sketches). `stamp`: the port's
    /// time now, which becomes a frame's `ts_ns` at its first beat (as the parser samples
    /// it); `None` keeps the frame's own.
    pub fn beat(&mut self, stamp: Option<u64>) -> (Option<Beat>, Option<SimFrame>) {
        if self.idle > 0 {
            self.idle -= 1;
            return (None, None);
        }
        if self.cur.is_none() {
            self.cur = self.frames.pop_front().map(|mut f| {
                if let Some(t) = stamp {
                    f.ts_ns = t;
                }
                (f, 0)
            });
        }
        let Some((f, i)) = &mut self.cur else { return (None, None) };
        let chunk = &f.data[8 * *i..f.data.len().min(8 * *i + 8)];
        let last = 8 * *i + 8 >= f.data.len();
        let mut w = [0u8; 8];
        w[..chunk.len()].copy_from_slice(chunk);
        let beat = Beat {
            data: u64::from_le_bytes(w),
            keep: ((1u16 << chunk.len()) - 1) as u8,
            last,
            user: last && f.tuser,
            ts_ns: f.ts_ns,
        };
        *i += 1;
        if !last {
            return (Some(beat), None);
        }
        self.idle = self.gap;
        let (f, _) = self.cur.take().unwrap();
        if packet_of(&f).is_ok() {
            self.in_flight.push_back(f.clone());
        }
        (Some(beat), Some(f))
    }

    /// Frames not yet sent (the one being sent included).
    pub fn queued(&self) -> usize {
        self.frames.len() + self.cur.is_some() as usize
    }
}

/// The packets that entered the sketches: in merge order, by epoch and by port.
#[derive(Default)]
pub struct Entered {
    pub merged: Expect,
    pub order: Vec<u128>,
    pub by_epoch: BTreeMap<u32, Vec<usize>>,
    pub by_port: [u64; PORTS],
}

impl Entered {
    /// A packet of `key` entered the sketches in `epoch` from port `c`: it must be that
    /// port's next IP frame.
    pub fn enter(&mut self, ports: &mut [Port; PORTS], key: u128, epoch: u32, c: usize) {
        let f = ports[c]
            .in_flight
            .pop_front()
            .unwrap_or_else(|| panic!("port {c}: a packet entered the sketches that the port has not sent"));
        let want = key_to_u128(packet_of(&f).unwrap().key.as_bytes());
        assert_eq!(key, want, "port {c}: packet {} out of order", self.by_port[c]);
        self.by_port[c] += 1;
        self.merged.add(&f);
        self.by_epoch.entry(epoch).or_default().push(self.order.len());
        self.order.push(key);
    }

    /// The merge-order indices of epoch `e`'s packets.
    pub fn epoch(&self, e: u32) -> &[usize] {
        self.by_epoch.get(&e).map_or(&[][..], Vec::as_slice)
    }

    pub fn total(&self) -> usize {
        self.by_epoch.values().map(Vec::len).sum()
    }
}

/// A model with an AXI4-Lite slave in its core clock, among other clocks.
pub trait BusBench {
    fn model(&mut self) -> &mut Model;
    fn axi(&self) -> AxiLitePorts;
    /// Runs `n` core clocks (the other clocks run meanwhile).
    fn core_clocks(&mut self, n: u64);
}

pub fn hung(what: &str) -> AccessError {
    AccessError::Io {
        what: what.to_string(),
        source: std::io::Error::new(std::io::ErrorKind::TimedOut, "the board's bus did not answer"),
    }
}

/// One AXI4-Lite handshake: raises `valid` (after setting the channel's inputs) and runs
/// core clocks until `ready` is seen before an edge.
fn handshake(b: &mut impl BusBench, valid: PortId, ready: PortId, what: &str) -> Result<(), AccessError> {
    b.model().set(valid, 1);
    for _ in 0..MAX_WAIT {
        b.model().eval();
        let r = b.model().get(ready) == 1;
        b.core_clocks(1);
        if r {
            b.model().set(valid, 0);
            return Ok(());
        }
    }
    Err(hung(what))
}

/// Waits (in core clocks) for `valid` with `ready` high, returning `data` of that clock.
fn response(
    b: &mut impl BusBench,
    valid: PortId,
    ready: PortId,
    data: Option<PortId>,
    what: &str,
) -> Result<u32, AccessError> {
    b.model().set(ready, 1);
    for _ in 0..MAX_WAIT {
        b.model().eval();
        let v = b.model().get(valid) == 1;
        let d = data.map_or(0, |d| b.model().get(d) as u32);
        b.core_clocks(1);
        if v {
            b.model().set(ready, 0);
            return Ok(d);
        }
    }
    Err(hung(what))
}

/// A register read over the bus.
pub fn read32(b: &mut impl BusBench, offset: u32) -> Result<u32, AccessError> {
    let a = b.axi();
    b.model().set(a.araddr, offset as u128);
    handshake(b, a.arvalid, a.arready, "AR")?;
    response(b, a.rvalid, a.rready, Some(a.rdata), "R")
}

/// A register write over the bus: AW and W together, each held until its own handshake.
pub fn write32(b: &mut impl BusBench, offset: u32, value: u32) -> Result<(), AccessError> {
    let a = b.axi();
    let m = b.model();
    m.set(a.awaddr, offset as u128);
    m.set(a.wdata, value as u128);
    m.set(a.wstrb, 0xF);
    m.set(a.awvalid, 1);
    m.set(a.wvalid, 1);
    let (mut aw, mut w) = (false, false);
    for _ in 0..MAX_WAIT {
        b.model().eval();
        let (aw_hs, w_hs) = (!aw && b.model().get(a.awready) == 1, !w && b.model().get(a.wready) == 1);
        b.core_clocks(1);
        aw |= aw_hs;
        w |= w_hs;
        b.model().set(a.awvalid, !aw as u128);
        b.model().set(a.wvalid, !w as u128);
        if aw && w {
            break;
        }
    }
    if !(aw && w) {
        return Err(hung("AW/W"));
    }
    response(b, a.bvalid, a.bready, None, "B").map(|_| ())
}

/// The epoch of deep INT stacks, and the idle beats after each of its frames.
pub const DEEP_EPOCH: usize = 2;
pub const DEEP_GAP: usize = 24;

/// Port `c`'s traffic in epoch `e`: in epoch [`DEEP_EPOCH`] a generated trace of its own
/// seed (INT stacks of 1 to 16 hops, IPv6, VLAN tags, ARP frames), so the four ports' deep
/// stacks arrive in bursts the serializer's ring must hold; else the adversarial trace of
/// its own seed (its own flows), every 37th frame an ARP frame and every 53rd one with a
/// MAC error.
pub fn traffic(c: usize, e: usize, frames: usize) -> VecDeque<SimFrame> {
    if e == DEEP_EPOCH {
        return generated_trace(0xDEE9 + c as u64, frames as u64).into_iter().take(frames).collect();
    }
    let mut src = Adversarial::new(0xB0A2D + (e * PORTS + c) as u64, 8);
    (0..frames)
        .map(|n| {
            let mut f = src.next().unwrap();
            if n % 37 == 36 {
                f.data[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
            } else if n % 53 == 52 {
                f.tuser = true;
            }
            f
        })
        .collect()
}
