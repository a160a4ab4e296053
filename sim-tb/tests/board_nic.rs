//! The board's NIC (`hdl::board::nic`: four ports' fronts, crossing, merge, the sketch half)
//! under Verilator, end to end through the driver: frames on four ports, each at its own
//! MAC clock (156.25 MHz +- 3 %, random phases) against a 250 MHz core clock, minimum
//! frames back to back on all four at once (the adversarial trace: packets of one flow 1 to
//! 16 apart, INT stacks of up to the 2 hops a minimum frame holds, plus ARP frames and MAC
//! errors) and, in one epoch, generated traffic of INT stacks of 1 to 16 hops back to back
//! on all four (bursts of deep stacks the serializer's ring must hold: no hop may be
//! refused), snapshots taken by the driver's own `read_snapshot` over the AXI4-Lite bus and
//! the readout stream while the ports keep sending. Every snapshot's tower, SuMax, latency
//! tower and key table equal the software models fed the packets in the order the merge
//! gave them (the monitor names each packet's port, and each port's packets must come in
//! the order sent), and the statistics registers equal the four ports' frames added up.
mod board_bench;
mod core_check;

use board_bench::{
    hung, traffic, BusBench, Clock, Entered, Port, CORE_PS, DEEP_EPOCH, DEEP_GAP, MAC_PS, MAX_WAIT,
};
use core_check::{check_snapshot, drained_records, Expect};
use smartnic::simulator::sim_readout_config;
use smartnic_contract::geometry::{InsertMode, TowerGeometry};
use smartnic_contract::regs::{stats, tower as tower_regs};
use smartnic_driver::access::{AccessError, C2hChannel, RecordRing, RegisterAccess};
use smartnic_driver::blocks::{DeviceMap, PerSwitchConfig};
use smartnic_driver::config::write_per_switch_config;
use smartnic_driver::readout::{read_snapshot, start_ring, ReadoutConfig, ReadoutPath, RecordsVia};
use smartnic_hdl::board::nic::nic_verilog;
use smartnic_hdl::board::port_merge::PORTS;
use smartnic_hdl::regs::RegMap;
use smartnic_sim_tb::simbar::{AxiLitePorts, Rng};
use smartnic_sim_tb::simnic::beat_words;
use smartnic_sim_tb::{Model, PortId};
use std::collections::VecDeque;
use std::time::Duration;

struct Ports {
    mac_clock: [PortId; PORTS],
    tdata: [PortId; PORTS],
    tkeep: [PortId; PORTS],
    tlast: [PortId; PORTS],
    tuser: [PortId; PORTS],
    tvalid: [PortId; PORTS],
    now: [PortId; PORTS],
    overflow: [PortId; PORTS],
    core_clock: PortId,
    mon_valid: PortId,
    mon_key: PortId,
    mon_epoch: PortId,
    mon_port: PortId,
    c2h_tdata: PortId,
    c2h_tkeep: PortId,
    c2h_tvalid: PortId,
    c2h_tlast: PortId,
    c2h_tready: PortId,
    ring_tdata: PortId,
    ring_tvalid: PortId,
    hop_lost: PortId,
}

impl Ports {
    fn of(m: &Model) -> Self {
        let each = |n: &str| std::array::from_fn(|p| m.port(&format!("{n}${p}")));
        Ports {
            mac_clock: each("mac_clock"),
            tdata: each("tdata"),
            tkeep: each("tkeep"),
            tlast: each("tlast"),
            tuser: each("tuser"),
            tvalid: each("tvalid"),
            now: each("now"),
            overflow: each("overflow"),
            core_clock: m.port("core_clock"),
            mon_valid: m.port("mon_valid"),
            mon_key: m.port("mon_key"),
            mon_epoch: m.port("mon_epoch"),
            mon_port: m.port("mon_port"),
            c2h_tdata: m.port("c2h_tdata"),
            c2h_tkeep: m.port("c2h_tkeep"),
            c2h_tvalid: m.port("c2h_tvalid"),
            c2h_tlast: m.port("c2h_tlast"),
            c2h_tready: m.port("c2h_tready"),
            ring_tdata: m.port("ring_tdata"),
            ring_tvalid: m.port("ring_tvalid"),
            hop_lost: m.port("hop_lost"),
        }
    }
}

/// The board's NIC with its clocks, its four ports' traffic and what it sketched.
struct Board {
    m: Model,
    p: Ports,
    axi: AxiLitePorts,
    clocks: Vec<Clock>,
    ports: [Port; PORTS],
    core_cycles: u64,
    /// Every frame sent (for the statistics), and the sketched ones in merge order.
    sent: Expect,
    entered: Entered,
    /// The card-to-host stream: a host buffer posted, the words arrived, the trailer seen.
    armed: bool,
    c2h: Vec<u64>,
    trailer: bool,
    /// The MAC clocks run (they stop, as a quiet MAC's may, 512 core clocks after the last
    /// frame, so a readout of 0.7M clocks does not pay for four idle ports' edges).
    macs: bool,
    last_beat: u64,
    /// The record ring: words arrived and not yet taken, and words taken (the device's
    /// numbering). Its channel always takes a word.
    ring: VecDeque<u64>,
    ring_taken: u32,
}

impl Board {
    fn new(m: Model, r: &mut Rng) -> Board {
        let p = Ports::of(&m);
        let axi = AxiLitePorts::of(&m, smartnic_hdl::regs::axil::PORT_PREFIX);
        let clocks = (0..=PORTS)
            .map(|c| {
                let t = if c < PORTS { MAC_PS * (970 + r.below(61)) / 1000 } else { CORE_PS };
                Clock::new(t, r.below(t))
            })
            .collect();
        let mut b = Board {
            m,
            p,
            axi,
            clocks,
            ports: Default::default(),
            core_cycles: 0,
            sent: Expect::default(),
            entered: Entered::default(),
            armed: false,
            c2h: Vec::new(),
            trailer: false,
            macs: true,
            last_beat: 0,
            ring: VecDeque::new(),
            ring_taken: 0,
        };
        for q in [b.axi.awvalid, b.axi.wvalid, b.axi.bready, b.axi.arvalid, b.axi.rready, b.p.c2h_tready] {
            b.m.set(q, 0);
        }
        b.m.set_by_name("ring_tready", 1);
        for c in 0..PORTS {
            b.m.set(b.p.tvalid[c], 0);
        }
        b.reset();
        b
    }

    /// Holds every reset for 8 core clocks (more than two of the slowest clock).
    fn reset(&mut self) {
        for c in 0..PORTS {
            self.m.set_by_name(&format!("mac_reset${c}"), 1);
        }
        self.m.set_by_name("core_reset", 1);
        self.core_clocks(8);
        for c in 0..PORTS {
            self.m.set_by_name(&format!("mac_reset${c}"), 0);
        }
        self.m.set_by_name("core_reset", 0);
    }

    /// Runs to the next clock edge: a MAC clock's falling edge drives its port's next beat,
    /// the core clock's falling edge samples the monitor and the stream. Returns whether
    /// it was the core clock's falling edge.
    fn edge(&mut self) -> bool {
        if self.macs && self.queued() == 0 && self.core_cycles > self.last_beat + 512 {
            self.macs = false;
        }
        let first = if self.macs { 0 } else { PORTS };
        let c = (first..self.clocks.len()).min_by_key(|&c| self.clocks[c].next_ps).unwrap();
        let ck = &mut self.clocks[c];
        ck.high = !ck.high;
        ck.next_ps += ck.half_ps;
        let high = ck.high;
        let port = if c < PORTS { self.p.mac_clock[c] } else { self.p.core_clock };
        self.m.set(port, high as u128);
        self.m.eval();
        if high {
            return false;
        }
        if c < PORTS {
            self.drive(c);
            false
        } else {
            self.core_cycles += 1;
            self.sample();
            true
        }
    }

    /// Starts the MAC clocks again (each at a random phase from now).
    fn start_macs(&mut self, r: &mut Rng) {
        if !self.macs {
            let now = self.clocks[PORTS].next_ps;
            for c in 0..PORTS {
                self.clocks[c].next_ps = now + r.below(2 * self.clocks[c].half_ps);
            }
            self.macs = true;
            self.last_beat = self.core_cycles;
        }
    }

    /// Runs `n` core clocks.
    fn core_clocks(&mut self, n: u64) {
        let mut k = 0;
        while k < n {
            k += self.edge() as u64;
        }
    }

    /// Port `c`'s next beat, back to back.
    fn drive(&mut self, c: usize) {
        let (beat, done) = self.ports[c].beat(None);
        let Some(beat) = beat else {
            self.m.set(self.p.tvalid[c], 0);
            return;
        };
        self.m.set(self.p.tdata[c], beat.data as u128);
        self.m.set(self.p.tkeep[c], beat.keep as u128);
        self.m.set(self.p.tlast[c], beat.last as u128);
        self.m.set(self.p.tuser[c], beat.user as u128);
        self.m.set(self.p.tvalid[c], 1);
        self.m.set(self.p.now[c], beat.ts_ns as u128);
        self.last_beat = self.core_cycles;
        if let Some(f) = done {
            self.sent.add(&f);
        }
    }

    /// The core clock's falling edge: a packet entering the sketches (it must be its port's
    /// next IP frame), and a stream word taken.
    fn sample(&mut self) {
        if self.m.get(self.p.mon_valid) == 1 {
            let (key, e, c) = (
                self.m.get(self.p.mon_key),
                self.m.get(self.p.mon_epoch) as u32,
                self.m.get(self.p.mon_port) as usize,
            );
            self.entered.enter(&mut self.ports, key, e, c);
        }
        if self.m.get(self.p.ring_tvalid) == 1 {
            self.ring.push_back(self.m.get(self.p.ring_tdata) as u64);
        }
        let ready = self.armed && !self.trailer;
        self.m.set(self.p.c2h_tready, ready as u128);
        self.m.eval();
        if ready && self.m.get(self.p.c2h_tvalid) == 1 {
            let keep = self.m.get(self.p.c2h_tkeep) as u32;
            let words = beat_words(keep, self.m.get_words(self.p.c2h_tdata));
            self.c2h.extend(words);
            self.trailer = self.m.get(self.p.c2h_tlast) == 1;
        }
    }

    fn queued(&self) -> usize {
        self.ports.iter().map(Port::queued).sum()
    }
}

impl BusBench for Board {
    fn model(&mut self) -> &mut Model {
        &mut self.m
    }

    fn axi(&self) -> AxiLitePorts {
        self.axi
    }

    fn core_clocks(&mut self, n: u64) {
        Board::core_clocks(self, n)
    }
}

impl RegisterAccess for Board {
    fn bar_size(&self) -> u64 {
        RegMap::nic_default().layout.bar_size as u64
    }

    fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
        board_bench::read32(self, offset)
    }

    fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
        board_bench::write32(self, offset, value)
    }

    fn c2h(&mut self) -> Option<&mut dyn C2hChannel> {
        Some(self)
    }

    fn ring(&mut self) -> Option<&mut dyn RecordRing> {
        Some(self)
    }
}

impl RecordRing for Board {
    fn taken(&self) -> u32 {
        self.ring_taken
    }

    fn take(&mut self, words: u32, _: Duration) -> Result<Vec<u64>, AccessError> {
        let mut n = 0;
        while self.ring.len() < words as usize {
            self.core_clocks(1);
            n += 1;
            if n > MAX_WAIT {
                return Err(hung("the record ring"));
            }
        }
        self.ring_taken = self.ring_taken.wrapping_add(words);
        Ok(self.ring.drain(..words as usize).collect())
    }
}

impl C2hChannel for Board {
    fn arm(&mut self, words: usize) -> Result<(), AccessError> {
        self.c2h = Vec::with_capacity(words);
        (self.armed, self.trailer) = (true, false);
        Ok(())
    }

    /// Runs the clocks (the ports keep sending) until the stream's trailer has arrived,
    /// then a few more: a board's completion comes well after the last word leaves.
    fn wait(&mut self, _: Duration) -> Result<Vec<u64>, AccessError> {
        let mut n = 0;
        while !self.trailer {
            self.core_clocks(1);
            n += 1;
            if n > MAX_WAIT {
                return Err(hung("the readout stream"));
            }
        }
        self.core_clocks(32);
        self.armed = false;
        Ok(std::mem::take(&mut self.c2h))
    }
}

#[test]
fn four_ports_to_snapshots_through_the_driver() {
    let v = nic_verilog().unwrap_or_else(|e| panic!("{e}"));
    let m = Model::of_verilog("board_nic", &v).unwrap_or_else(|e| panic!("{e}"));
    let mut r = Rng::new(0x5EED_B0A2);
    let mut b = Board::new(m, &mut r);
    let dev = DeviceMap::discover(&mut b).unwrap();
    let geometry = TowerGeometry::sketchint_fpga();
    assert_eq!(dev.tower.as_ref().unwrap().geometry, geometry);
    let cfg = ReadoutConfig { path: ReadoutPath::Stream, ..sim_readout_config() };
    // The tower and the per-switch half in ACU.
    let mode = InsertMode::Acu;
    b.write32(dev.tower.as_ref().unwrap().base + tower_regs::MODE, mode as u32).unwrap();
    // A low table threshold: the flow-key table fills and counts misses.
    let ps = PerSwitchConfig { mode, table_threshold: 2, ..PerSwitchConfig::nic_default() };
    assert_eq!(write_per_switch_config(&mut b, &dev, &ps).unwrap(), ps);
    let dev = DeviceMap::discover(&mut b).unwrap();
    // The inflated-latency records leave on the ring as they are made.
    assert!(start_ring(&mut b, &dev).unwrap(), "the board has a record ring");
    let (mut drained, mut model_records) = (Vec::new(), Vec::new());
    // Each epoch: EPOCH_FRAMES frames a port back to back, then the readout, which swaps
    // while the last SWAP_FRAMES of each port are still arriving (so packets land on both
    // sides of the swap); the last epoch is read with the ports quiet.
    const EPOCH_FRAMES: usize = 4_000;
    const SWAP_FRAMES: usize = 1_500;
    const EPOCHS: usize = 3;
    for e in 0..=EPOCHS {
        if e < EPOCHS {
            for (c, port) in b.ports.iter_mut().enumerate() {
                port.frames.extend(traffic(c, e, EPOCH_FRAMES));
                // Deep stacks: 8.5 hops a packet on average, the four ports' hops under
                // the one a core clock the latency tower takes, arriving in bursts.
                port.gap = if e == DEEP_EPOCH { DEEP_GAP } else { 0 };
            }
            b.start_macs(&mut r);
            while b.queued() > PORTS * SWAP_FRAMES {
                b.core_clocks(64);
            }
        } else {
            b.core_clocks(2_000);
        }
        let busy = b.macs;
        let (snap, st) = read_snapshot(&mut b, &dev, &cfg).unwrap_or_else(|err| panic!("epoch {e}: {err}"));
        assert_eq!(snap.epoch as usize, e, "epochs are read in order");
        let pk = b.entered.epoch(e as u32);
        assert!(pk.len() > PORTS * SWAP_FRAMES / 2, "epoch {e}: {} packets", pk.len());
        if busy {
            let next = b.entered.epoch(e as u32 + 1).len();
            assert!(next > 0, "epoch {e}: packets kept arriving after the swap");
        }
        assert_eq!(st.records_via, Some(RecordsVia::Ring), "epoch {e}: the records came by the ring");
        assert_eq!(st.records_dropped, Some(0), "epoch {e}: no record dropped");
        assert_eq!(st.hops_refused, Some(0), "epoch {e}: no packet's hops refused (HOPS_REFUSED)");
        drained.extend(drained_records(&snap));
        let c = check_snapshot(
            &snap,
            pk,
            &b.entered.order,
            &b.entered.merged,
            mode,
            &geometry,
            ps.table_threshold,
        );
        model_records.extend(c.records.iter().copied());
        eprintln!(
            "epoch {e}: {} packets, {} counters equal, {} hops, {} buckets, {} table entries, \
             {} inflated; stream {:?}",
            c.packets,
            c.compared,
            c.hops,
            c.buckets,
            c.table_entries,
            c.records.len(),
            st.stream
        );
    }
    // The ports' counters reach the core clock only while the MAC clocks run.
    b.start_macs(&mut r);
    b.core_clocks(200);
    let sketched = b.entered.total();
    assert_eq!(sketched as u64, b.sent.classes[1], "every IP frame sent is in one epoch");
    assert_eq!(b.m.get(b.p.hop_lost), 0, "no packet's hops were refused");
    // Every inflated-latency record, in order: the NIC's by the ring, the model's.
    assert!(model_records.len() > 1_000, "{} records", model_records.len());
    assert_eq!(drained.len(), model_records.len(), "records");
    if let Some(i) = (0..drained.len()).find(|&i| drained[i] != model_records[i]) {
        panic!("record {i}: NIC {:?}, model {:?}", drained[i], model_records[i]);
    }
    for c in 0..PORTS {
        assert_eq!(b.m.get(b.p.overflow[c]), 0, "port {c}'s crossing FIFO never refused a record");
        assert!(b.ports[c].in_flight.is_empty(), "port {c}: every IP frame sent entered the sketches");
    }
    let base = dev.stats.expect("a statistics block");
    let got = [stats::FRAMES, stats::SKETCHED, stats::BYTES, stats::NON_IP, stats::MALFORMED]
        .map(|off| b.read64(base + off).unwrap());
    assert_eq!(got, b.sent.counters(), "frames, sketched, bytes, non-IP, malformed");
    assert!(got[3] > 0 && got[4] > 0, "ARP frames and MAC errors were sent");
    eprintln!(
        "{} frames ({:?} IP per port), {} core clocks, stats {got:?}, {} inflated records by the ring",
        got[0],
        b.entered.by_port,
        b.core_cycles,
        drained.len()
    );
}
