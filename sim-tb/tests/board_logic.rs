//! All of our logic on the VC709 (`hdl::board::logic`, block `board_logic`: the four ports'
//! NIC, the ports' ns time, the card-to-host upsizers to 256 bits, the reset synchronisers
//! and the LEDs) under Verilator, with the vendor IP's user sides played by the bench: the
//! four 10G MACs' receive streams at their shared clock (156.25 MHz) against XDMA's 250 MHz
//! `axi_aclk`; XDMA's AXI4-Lite master carrying the driver's register accesses; and XDMA's
//! card-to-host engine as the behavioural model (`smartnic_sim_tb::xdma`), which the
//! driver's own `XdmaC2h` programs through its registers and which takes both channels'
//! 256-bit beats (`tkeep` over the words a beat holds) into DMA memory.
//!
//! End to end, as on the board: minimum frames back to back on all four ports at once,
//! then INT stacks of 1 to 16 hops, each epoch read by `read_snapshot` by DMA (the readout
//! stream on channel 0, the inflated-latency records on channel 1, the ring) while the
//! ports keep sending, and the snapshot file given to `smartnic report`. Every snapshot
//! equals the software models fed the packets in the order they entered the sketches (the
//! test taps name each packet's port and the parsers' time comes from the `now` tap), the
//! statistics registers equal the frames sent, and the LEDs show link, block lock and the
//! epoch's parity.
//!
//! What lies between this block and the pins (the vendor IP as black boxes and the wires
//! to them) is structural Verilog checked by `hdl/tests/board_top.rs`: every black-box port
//! connected, lint and Yosys clean.
mod board_bench;
mod core_check;

use board_bench::{traffic, BusBench, Clock, Entered, Port, CORE_PS, DEEP_EPOCH, DEEP_GAP, MAC_PS};
use core_check::{check_snapshot, drained_records, Expect};
use smartnic::simulator::sim_readout_config;
use smartnic_contract::geometry::{InsertMode, TowerGeometry};
use smartnic_contract::regs::{stats, tower as tower_regs};
use smartnic_driver::access::{AccessError, RegisterAccess};
use smartnic_driver::blocks::{DeviceMap, PerSwitchConfig};
use smartnic_driver::config::write_per_switch_config;
use smartnic_driver::dma::{open_channels, HeapDma, WithDma};
use smartnic_driver::readout::{read_snapshot, start_ring, ReadoutConfig, ReadoutPath, RecordsVia};
use smartnic_hdl::board::logic::{nic_verilog, C2H};
use smartnic_hdl::board::port_merge::PORTS;
use smartnic_hdl::regs::RegMap;
use smartnic_sim_tb::simbar::{AxiLitePorts, Rng};
use smartnic_sim_tb::simnic_dma::{DmaHost, EngineBar};
use smartnic_sim_tb::xdma::{Timing, XdmaModel};
use smartnic_sim_tb::{Model, PortId};
use std::cell::RefCell;
use std::process::Command;
use std::rc::Rc;

struct Ports {
    mac_clock: PortId,
    core_clock: PortId,
    tdata: [PortId; PORTS],
    tkeep: [PortId; PORTS],
    tlast: [PortId; PORTS],
    tuser: [PortId; PORTS],
    tvalid: [PortId; PORTS],
    now: PortId,
    mon_valid: PortId,
    mon_key: PortId,
    mon_epoch: PortId,
    mon_port: PortId,
    c2h_tdata: [PortId; C2H],
    c2h_tkeep: [PortId; C2H],
    c2h_tlast: [PortId; C2H],
    c2h_tvalid: [PortId; C2H],
    c2h_tready: [PortId; C2H],
    led: [PortId; 8],
}

impl Ports {
    fn of(m: &Model) -> Self {
        fn each<const N: usize>(m: &Model, n: &str) -> [PortId; N] {
            std::array::from_fn(|p| m.port(&format!("{n}${p}")))
        }
        Ports {
            mac_clock: m.port("mac_clock"),
            core_clock: m.port("core_clock"),
            tdata: each(m, "rx_tdata"),
            tkeep: each(m, "rx_tkeep"),
            tlast: each(m, "rx_tlast"),
            tuser: each(m, "rx_tuser"),
            tvalid: each(m, "rx_tvalid"),
            now: m.port("now"),
            mon_valid: m.port("mon_valid"),
            mon_key: m.port("mon_key"),
            mon_epoch: m.port("mon_epoch"),
            mon_port: m.port("mon_port"),
            c2h_tdata: each(m, "c2h_tdata"),
            c2h_tkeep: each(m, "c2h_tkeep"),
            c2h_tlast: each(m, "c2h_tlast"),
            c2h_tvalid: each(m, "c2h_tvalid"),
            c2h_tready: each(m, "c2h_tready"),
            led: each(m, "led"),
        }
    }
}

/// The board's logic with its clocks, the ports' traffic, the DMA engine and what entered
/// the sketches.
struct Board {
    m: Model,
    p: Ports,
    axi: AxiLitePorts,
    /// The MACs' clock, then the core clock.
    clocks: [Clock; 2],
    ports: [Port; PORTS],
    core_cycles: u64,
    sent: Expect,
    entered: Entered,
    /// The MAC clock runs (it stops 512 core clocks after the last frame, so a readout does
    /// not pay for four idle ports' edges).
    macs: bool,
    last_beat: u64,
    xdma: XdmaModel<HeapDma>,
    /// 256-bit beats each channel took.
    beats: [u64; C2H],
}

impl Board {
    fn new(m: Model, mem: HeapDma, r: &mut Rng) -> Board {
        let p = Ports::of(&m);
        let axi = AxiLitePorts::of(&m, smartnic_hdl::regs::axil::PORT_PREFIX);
        let mut b = Board {
            m,
            p,
            axi,
            clocks: [Clock::new(MAC_PS, r.below(MAC_PS)), Clock::new(CORE_PS, r.below(CORE_PS))],
            ports: Default::default(),
            core_cycles: 0,
            sent: Expect::default(),
            entered: Entered::default(),
            macs: true,
            last_beat: 0,
            xdma: XdmaModel::new(mem, Timing { clocks_per_access: 0, ..Timing::default() }),
            beats: [0; C2H],
        };
        for q in [b.axi.awvalid, b.axi.wvalid, b.axi.bready, b.axi.arvalid, b.axi.rready] {
            b.m.set(q, 0);
        }
        for c in 0..PORTS {
            b.m.set(b.p.tvalid[c], 0);
            // Ports 0, 1 and 3 have block lock.
            b.m.set_by_name(&format!("block_lock${c}"), (c != 2) as u128);
        }
        for (name, v) in [("link_up", 1), ("scl_in", 1), ("sda_in", 1), ("cpu_reset", 0)] {
            b.m.set_by_name(name, v);
        }
        for i in 0..5 {
            b.m.set_by_name(&format!("btn${i}"), 0);
        }
        // XDMA's reset and the 10G subsystem's, held for 8 core clocks (more than two MAC
        // clocks): both of the NIC's sides reset together.
        b.m.set_by_name("core_aresetn", 0);
        b.m.set_by_name("mac_areset", 1);
        b.core_clocks(8);
        b.m.set_by_name("core_aresetn", 1);
        b.m.set_by_name("mac_areset", 0);
        b.core_clocks(8);
        b
    }

    /// Runs to the next clock edge: the MAC clock's falling edge drives the ports' next
    /// beats, the core clock's falling edge samples the taps and moves the DMA engine.
    fn edge(&mut self) {
        if self.macs && self.queued() == 0 && self.core_cycles > self.last_beat + 512 {
            self.macs = false;
        }
        let c = if self.macs && self.clocks[0].next_ps < self.clocks[1].next_ps { 0 } else { 1 };
        let ck = &mut self.clocks[c];
        ck.high = !ck.high;
        ck.next_ps += ck.half_ps;
        let high = ck.high;
        self.m.set(if c == 0 { self.p.mac_clock } else { self.p.core_clock }, high as u128);
        self.m.eval();
        if high {
            return;
        }
        if c == 0 {
            self.drive();
        } else {
            self.core_cycles += 1;
            self.sample();
        }
    }

    /// Starts the MAC clock again, at a random phase from now.
    fn start_macs(&mut self, r: &mut Rng) {
        if !self.macs {
            self.clocks[0].next_ps = self.clocks[1].next_ps + r.below(MAC_PS);
            self.macs = true;
            self.last_beat = self.core_cycles;
        }
    }

    /// The four ports' next beats; a frame's first beat takes the ports' time now, which
    /// the parser samples with it.
    fn drive(&mut self) {
        let now = self.m.get(self.p.now) as u64;
        for c in 0..PORTS {
            let (beat, done) = self.ports[c].beat(Some(now));
            let Some(beat) = beat else {
                self.m.set(self.p.tvalid[c], 0);
                continue;
            };
            self.m.set(self.p.tdata[c], beat.data as u128);
            self.m.set(self.p.tkeep[c], beat.keep as u128);
            self.m.set(self.p.tlast[c], beat.last as u128);
            self.m.set(self.p.tuser[c], beat.user as u128);
            self.m.set(self.p.tvalid[c], 1);
            self.last_beat = self.core_cycles;
            if let Some(f) = done {
                self.sent.add(&f);
            }
        }
    }

    /// The core clock's falling edge: a packet entering the sketches, and each channel's
    /// beat, taken if the engine is ready; then the engine's clock.
    fn sample(&mut self) {
        if self.m.get(self.p.mon_valid) == 1 {
            let key = self.m.get(self.p.mon_key);
            let (e, c) = (self.m.get(self.p.mon_epoch) as u32, self.m.get(self.p.mon_port) as usize);
            self.entered.enter(&mut self.ports, key, e, c);
        }
        for ch in 0..C2H {
            let ready = self.xdma.ready(ch);
            self.m.set(self.p.c2h_tready[ch], ready as u128);
        }
        self.m.eval();
        for ch in 0..C2H {
            if self.xdma.ready(ch) && self.m.get(self.p.c2h_tvalid[ch]) == 1 {
                self.take_beat(ch);
            }
        }
        self.xdma.step();
    }

    /// Channel `ch`'s beat: its words (as many as `tkeep` says, zeros past them) into the
    /// engine, `tlast` on the last.
    fn take_beat(&mut self, ch: usize) {
        let keep = self.m.get(self.p.c2h_tkeep[ch]) as u32;
        let n = (keep.count_ones() / 8) as usize;
        assert!(n >= 1 && keep as u64 == (1u64 << (8 * n)) - 1, "channel {ch}: tkeep {keep:#x}");
        let last = self.m.get(self.p.c2h_tlast[ch]) == 1;
        assert!(n == 4 || last, "channel {ch}: a beat of {n} words without tlast");
        let w = self.m.get_words(self.p.c2h_tdata[ch]).to_vec();
        for k in 0..4 {
            let word = w[2 * k] as u64 | (w[2 * k + 1] as u64) << 32;
            if k >= n {
                assert_eq!(word, 0, "channel {ch}: lane {k} past the beat's words");
                continue;
            }
            self.xdma.push(ch, word, last && k + 1 == n).expect("the engine took the beat");
        }
        self.beats[ch] += 1;
    }

    fn core_clocks(&mut self, n: u64) {
        let mut k = 0;
        while k < n {
            let before = self.core_cycles;
            self.edge();
            k += self.core_cycles - before;
        }
    }

    fn queued(&self) -> usize {
        self.ports.iter().map(Port::queued).sum()
    }

    fn led(&mut self, i: usize) -> bool {
        self.m.get(self.p.led[i]) == 1
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

type Shared = Rc<RefCell<Board>>;

/// BAR0: the register file, through XDMA's AXI4-Lite master.
struct Bar(Shared);

impl RegisterAccess for Bar {
    fn bar_size(&self) -> u64 {
        RegMap::nic_default().layout.bar_size as u64
    }

    fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
        board_bench::read32(&mut *self.0.borrow_mut(), offset)
    }

    fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
        board_bench::write32(&mut *self.0.borrow_mut(), offset, value)
    }
}

// The DMA engine's registers (XDMA's own BAR): `EngineBar`, each access lasting
// `DMA_ACCESS_CLOCKS` core clocks, the board running meanwhile.
impl DmaHost for Board {
    fn run_core(&mut self, clocks: u64) {
        self.core_clocks(clocks);
    }
    fn engine(&mut self) -> &mut dyn RegisterAccess {
        &mut self.xdma
    }
}

/// `smartnic`, built beside this test binary by the workspace's build.
fn smartnic() -> Command {
    let exe = std::env::current_exe().unwrap();
    let bin = exe.parent().and_then(|d| d.parent()).unwrap().join("smartnic");
    assert!(bin.exists(), "{} is not built: cargo build -p smartnic --bin smartnic", bin.display());
    Command::new(bin)
}

#[test]
fn four_ports_to_a_report_by_dma() {
    let v = nic_verilog().unwrap_or_else(|e| panic!("{e}"));
    let m = Model::of_verilog("board_logic", &v).unwrap_or_else(|e| panic!("{e}"));
    let mut r = Rng::new(0x5EED_B0A3);
    let mem = HeapDma::new();
    let shared: Shared = Rc::new(RefCell::new(Board::new(m, mem.clone(), &mut r)));
    let mut bar = Bar(shared.clone());
    let dev = DeviceMap::discover(&mut bar).unwrap();
    let geometry = TowerGeometry::sketchint_fpga();
    assert_eq!(dev.tower.as_ref().unwrap().geometry, geometry);
    let mode = InsertMode::Acu;
    bar.write32(dev.tower.as_ref().unwrap().base + tower_regs::MODE, mode as u32).unwrap();
    let ps = PerSwitchConfig { mode, table_threshold: 2, ..PerSwitchConfig::nic_default() };
    assert_eq!(write_per_switch_config(&mut bar, &dev, &ps).unwrap(), ps);
    let dev = DeviceMap::discover(&mut bar).unwrap();
    // The driver's DMA engine on XDMA's registers: channel 0 for the stream, channel 1 the
    // ring, counted from RING_WORDS now (as the CLI opens a board's).
    let dma = open_channels(&mut bar, EngineBar(shared.clone()), mem).unwrap_or_else(|e| panic!("{e}"));
    let mut nic = WithDma { bar, dma };
    assert!(start_ring(&mut nic, &dev).unwrap(), "the board has a record ring");
    let cfg = ReadoutConfig { path: ReadoutPath::Stream, ..sim_readout_config() };
    let tmp = tempfile::tempdir().unwrap();
    let (mut drained, mut model_records) = (Vec::new(), Vec::new());
    // Epoch 0: minimum frames back to back on all four ports, the swap while the last
    // SWAP_FRAMES of each are arriving; epoch 1: deep INT stacks in bursts, read quiet.
    const FRAMES: usize = 2_000;
    const SWAP_FRAMES: usize = 600;
    for e in 0..2u32 {
        {
            let mut b = shared.borrow_mut();
            for (c, port) in b.ports.iter_mut().enumerate() {
                port.frames.extend(traffic(c, if e == 0 { 0 } else { DEEP_EPOCH }, FRAMES));
                port.gap = if e == 0 { 0 } else { DEEP_GAP };
            }
            b.start_macs(&mut r);
            let until = if e == 0 { PORTS * SWAP_FRAMES } else { 0 };
            while b.queued() > until {
                b.core_clocks(64);
            }
            b.core_clocks(if e == 0 { 0 } else { 2_000 });
        }
        let (snap, st) = read_snapshot(&mut nic, &dev, &cfg).unwrap_or_else(|err| panic!("epoch {e}: {err}"));
        assert_eq!(snap.epoch, e as u64, "epochs are read in order");
        assert_eq!(st.records_via, Some(RecordsVia::Ring), "epoch {e}: the records came by the ring");
        assert_eq!(st.records_dropped, Some(0), "epoch {e}: no record dropped");
        assert_eq!(st.hops_refused, Some(0), "epoch {e}: no packet's hops refused (HOPS_REFUSED)");
        let b = shared.borrow();
        let pk = b.entered.epoch(e);
        assert!(pk.len() > PORTS * SWAP_FRAMES / 2, "epoch {e}: {} packets", pk.len());
        if e == 0 {
            assert!(!b.entered.epoch(1).is_empty(), "packets kept arriving after the swap");
        }
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
        let s = st.stream.expect("the windows came by stream");
        eprintln!(
            "epoch {e}: {} packets, {} counters equal, {} hops, {} table entries, {} inflated; \
             stream {} words in {} clocks ({} stalls), {} + {} beats of 256 bits so far",
            c.packets,
            c.compared,
            c.hops,
            c.table_entries,
            c.records.len(),
            s.words,
            s.clocks,
            s.stalls,
            b.beats[0],
            b.beats[1]
        );
        // The snapshot, as the CLI reads it.
        let file = tmp.path().join(format!("epoch{e}.snap"));
        snap.write_file(&file).unwrap();
        let out = smartnic().args(["report", "--json"]).arg(&file).output().unwrap();
        assert!(out.status.success(), "smartnic report: {}", String::from_utf8_lossy(&out.stderr));
        let rep: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(rep["epoch"], e, "{rep}");
        assert_eq!(rep["packets"], pk.len() as u64, "{rep}");
        assert!(rep["candidates"].as_u64().is_some_and(|n| n > 0), "the key table's flows: {rep}");
    }
    assert!(model_records.len() > 100, "{} records", model_records.len());
    assert_eq!(drained, model_records, "the inflated-latency records by the ring, in order");
    let mut b = shared.borrow_mut();
    b.start_macs(&mut r);
    b.core_clocks(200);
    assert_eq!(b.entered.total() as u64, b.sent.classes[1], "every IP frame sent is in one epoch");
    for c in 0..PORTS {
        assert!(b.ports[c].in_flight.is_empty(), "port {c}: every IP frame sent entered the sketches");
    }
    drop(b);
    let base = dev.stats.expect("a statistics block");
    let got = [stats::FRAMES, stats::SKETCHED, stats::BYTES, stats::NON_IP, stats::MALFORMED]
        .map(|off| nic.read64(base + off).unwrap());
    let mut b = shared.borrow_mut();
    assert_eq!(got, b.sent.counters(), "frames, sketched, bytes, non-IP, malformed");
    // LEDs: link up, block lock of ports 0, 1 and 3, nothing refused, epoch 2 active (even).
    let leds: Vec<bool> = (0..8).map(|i| b.led(i)).collect();
    assert_eq!(leds, [true, true, true, false, true, false, false, false], "LEDs 0..7");
    assert_eq!(b.xdma.faults(), 0, "no DMA write outside the host's buffers");
    eprintln!(
        "{} frames ({:?} IP per port), {} core clocks, {} records by the ring",
        got[0],
        b.entered.by_port,
        b.core_cycles,
        drained.len()
    );
}
