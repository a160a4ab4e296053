//! Verilator tests of the `regs` block (the AXI4-Lite register file generated from the
//! contract's `Layout`), driven by `SimBar`'s AXI master.
use smartnic_contract::regs::layout::WINDOWS_BASE;
use smartnic_contract::regs::{epoch, header};
use smartnic_driver::access::RegisterAccess;
use smartnic_hdl::regs::{reset_thresholds, Live, RegMap, INFLATE_BITS};
use smartnic_sim_tb::simbar::{LiveInputs, RegsFabric, Rng, SimBar, Stalls};

/// The word a test puts in window `sel` at `index`.
fn word(sel: usize, index: u32) -> u32 {
    let mut r = Rng::new((sel as u64) << 32 | index as u64);
    r.next_u64() as u32
}

fn bar() -> SimBar<RegsFabric> {
    SimBar::regs_default(|m| RegsFabric::new(m, word)).unwrap_or_else(|e| panic!("{e}"))
}

/// The read/write registers as the test wrote them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Written {
    acu: bool,
    ps_acu: bool,
    inflate: u32,
    table: u32,
    ring: bool,
}

impl Written {
    /// After reset: CM, the contract's default thresholds.
    fn reset() -> Self {
        let (inflate, table) = reset_thresholds();
        Written { acu: false, ps_acu: false, inflate, table, ring: false }
    }

    /// A whole-word write of `v` at `off` (byte 0 strobed).
    fn write(&mut self, map: &RegMap, off: u32, v: u32) {
        match map.live_at(off) {
            Some(Live::Mode) if v == 0 || v == 2 => self.acu = v == 2,
            Some(Live::PsMode) if v == 0 || v == 2 => self.ps_acu = v == 2,
            Some(Live::InflateThreshold) => self.inflate = v & ((1 << INFLATE_BITS) - 1),
            Some(Live::TableThreshold) => self.table = v,
            Some(Live::RingControl) => self.ring = v & 1 == 1,
            _ => {}
        }
    }
}

/// What a read of `off` must return (`head`: the record stream's head word, if any).
fn expected(map: &RegMap, live: &LiveInputs, w: &Written, head: Option<u32>, off: u32) -> u32 {
    if let Some(v) = map.constant(off) {
        return v;
    }
    if let Some((sel, index)) = map.window_of(off) {
        return word(sel, index);
    }
    let half = |v: u64, hi: bool| if hi { (v >> 32) as u32 } else { v as u32 };
    match map.live_at(off) {
        Some(Live::Stat { n, hi }) => half(live.stats[n], hi),
        Some(Live::Status) => live.swap_pending as u32 | (live.clear_busy as u32) << 1,
        Some(Live::Epoch) => live.epoch,
        Some(Live::Sequence) => live.sequence,
        Some(Live::IdlePackets { hi }) => half(live.idle_packets, hi),
        Some(Live::ActivePackets { hi }) => half(live.active_packets, hi),
        Some(Live::Mode) => 2 * w.acu as u32,
        Some(Live::PsMode) => 2 * w.ps_acu as u32,
        Some(Live::InflateThreshold) => w.inflate,
        Some(Live::TableThreshold) => w.table,
        Some(Live::TableMisses) => live.table_misses,
        Some(Live::RecordWords) => live.rec_words as u32,
        Some(Live::RecordDropped) => live.rec_dropped,
        Some(Live::HopsRefused) => live.hops_refused,
        Some(Live::RecordPop) => head.unwrap_or(0),
        Some(Live::StreamStatus) => live.stream[0] & 1,
        Some(Live::StreamCount) => live.stream[1],
        Some(Live::StreamWords) => live.stream[2],
        Some(Live::StreamClocks) => live.stream[3],
        Some(Live::StreamStalls) => live.stream[4],
        Some(Live::RingControl) => w.ring as u32,
        Some(Live::RingWords) => live.ring_words,
        None => 0,
    }
}

fn random_live(r: &mut Rng) -> LiveInputs {
    LiveInputs {
        stats: std::array::from_fn(|_| r.next_u64()),
        epoch: r.next_u64() as u32,
        sequence: r.next_u64() as u32,
        swap_pending: r.chance(50),
        clear_busy: r.chance(50),
        idle_packets: r.next_u64(),
        active_packets: r.next_u64(),
        table_misses: r.next_u64() as u32,
        rec_words: r.next_u64() as u16,
        rec_dropped: r.next_u64() as u32,
        hops_refused: r.next_u64() as u32,
        stream: [
            r.chance(50) as u32,
            r.next_u64() as u32,
            r.next_u64() as u32,
            r.next_u64() as u32,
            r.next_u64() as u32,
        ],
        ring_words: r.next_u64() as u32,
    }
}

/// Every word of the control area: the contract's constants exactly, the live registers,
/// and 0 everywhere else (CONTROL, padding); no window request from any of them.
#[test]
fn control_area_is_the_contract_map() {
    let map = RegMap::nic_default();
    let mut b = bar();
    let mut r = Rng::new(7);
    b.fabric.live = random_live(&mut r);
    let live = b.fabric.live;
    let mut constants = 0;
    for off in (0..WINDOWS_BASE).step_by(4) {
        let v = b.read32(off).unwrap();
        assert_eq!(v, expected(&map, &live, &Written::reset(), None, off), "offset {off:#x}");
        constants += map.constant(off).is_some() as usize;
    }
    assert_eq!(constants, map.constants.len(), "every constant lies in the control area");
    assert!(map.constants.len() > 60);
    assert_eq!(b.read32(map.control).unwrap(), 0, "CONTROL is write-only");
    assert!(b.fabric.windows.requests.is_empty());
    // The two low address bits are ignored.
    assert_eq!(b.axi_read(header::TYPE + 2).unwrap(), (map.constant(0).unwrap(), 0));
    // Past the last window: unmapped, 0, no request.
    let last = map.windows.last().unwrap();
    for off in [last.base + last.size, map.layout.bar_size - 4] {
        assert_eq!(b.read32(off).unwrap(), 0, "offset {off:#x}");
    }
    assert!(b.fabric.windows.requests.is_empty());
    // Register reads take AR + 2 clocks + R.
    assert!(b.stats.max_clocks <= 4, "{:?}", b.stats);
}

#[test]
fn live_registers_follow_the_ports() {
    let map = RegMap::nic_default();
    let mut b = bar();
    let mut r = Rng::new(11);
    for round in 0..20 {
        b.fabric.live = random_live(&mut r);
        if round < 4 {
            b.fabric.live.swap_pending = round & 1 != 0;
            b.fabric.live.clear_busy = round & 2 != 0;
        }
        let live = b.fabric.live;
        for &(off, what) in &map.live {
            assert_eq!(
                b.read32(off).unwrap(),
                expected(&map, &live, &Written::reset(), None, off),
                "{what:?} at {off:#x}"
            );
        }
        let st = b.read32(
            map.layout.block(smartnic_contract::regs::block_type::EPOCH).unwrap().base + epoch::STATUS,
        );
        assert_eq!(st.unwrap() & !3, 0, "STATUS reserved bits read 0");
        // 64-bit counters through the driver's hi/lo/hi read.
        let sb = map.live.iter().find(|l| l.1 == Live::Stat { n: 2, hi: false }).unwrap().0;
        assert_eq!(b.read64(sb).unwrap(), live.stats[2]);
    }
}

/// CONTROL writes pulse `swap`/`clear` for exactly one clock each; MODE holds 0 or 2 and
/// drives `acu`; writes to constants, unmapped words or without byte 0 are ignored.
#[test]
fn control_pulses_once_and_mode_is_held() {
    let map = RegMap::nic_default();
    let mut b = bar();
    let writes: [(u32, u8, usize, usize); 7] = [
        (1, 0xF, 1, 0),
        (2, 0xF, 0, 1),
        (3, 0xF, 1, 1),
        (0, 0xF, 0, 0),
        (4, 0xF, 0, 0),
        (3, 0xE, 0, 0),
        (3, 0x1, 1, 1),
    ];
    for (v, strb, s, c) in writes {
        let (s0, c0) = (b.fabric.swaps.len(), b.fabric.clears.len());
        assert_eq!(b.axi_write(map.control, v, strb).unwrap(), 0);
        b.idle(5);
        assert_eq!(
            (b.fabric.swaps.len() - s0, b.fabric.clears.len() - c0),
            (s, c),
            "CONTROL <- {v:#x} strb {strb:#x}"
        );
    }
    // A pulse is one clock: no two recorded cycles are adjacent.
    assert!(b.fabric.swaps.windows(2).all(|w| w[1] > w[0] + 1));
    // The stream block's CONTROL: bit 0 starts (one pulse), nothing else does; it reads 0.
    assert!(b.fabric.starts.is_empty(), "no start from the epoch CONTROL");
    for (v, strb, n) in [(1, 0xF, 1), (2, 0xF, 0), (0xFFFF_FFFE, 0xF, 0), (1, 0xE, 0), (3, 0x1, 1)] {
        let n0 = b.fabric.starts.len();
        b.axi_write(map.stream_control, v, strb).unwrap();
        b.idle(5);
        assert_eq!(b.fabric.starts.len() - n0, n, "stream CONTROL <- {v:#x} strb {strb:#x}");
    }
    assert_eq!(b.read32(map.stream_control).unwrap(), 0, "stream CONTROL is write-only");
    assert_eq!((b.fabric.swaps.len(), b.fabric.clears.len()), (3, 3), "stream CONTROL is not epoch CONTROL");
    assert_eq!(b.read32(map.mode).unwrap(), 0);
    for (v, strb, want) in
        [(2, 0xF, 2), (1, 0xF, 2), (0, 0xE, 2), (0, 0xF, 0), (3, 0xF, 0), (2, 0x1, 2), (0xFF, 0xF, 2)]
    {
        b.axi_write(map.mode, v, strb).unwrap();
        b.idle(1);
        assert_eq!(b.read32(map.mode).unwrap(), want, "MODE <- {v} strb {strb:#x}");
        assert_eq!(b.fabric.acu, want == 2);
    }
    // Read-only and unmapped words ignore writes.
    for &(off, v) in map.constants.iter().step_by(7) {
        b.write32(off, !v).unwrap();
        assert_eq!(b.read32(off).unwrap(), v, "constant {off:#x}");
    }
    b.write32(map.layout.bar_size - 4, 1).unwrap();
    b.write32(map.windows[0].base, 1).unwrap();
    assert!(b.fabric.windows.requests.is_empty(), "a window write is no read");
    let swaps = b.fabric.swaps.len();
    b.idle(3);
    assert_eq!(b.fabric.swaps.len(), swaps);
}

/// The per-switch block: MODE holds 0 or 2, the thresholds take whole words (the inflate
/// threshold its 22 bits) and drive their ports from reset values; RECORD_POP returns the
/// stream's words in order, each exactly once, and 0 on an empty stream without a pop.
#[test]
fn per_switch_registers_hold_and_the_record_stream_pops_once_per_read() {
    let map = RegMap::nic_default();
    let mut b = bar();
    b.idle(2);
    let reset = Written::reset();
    assert_eq!(b.fabric.ps, (false, reset.inflate, reset.table), "reset values on the ports");
    assert!(reset.inflate > 0 && reset.table == 750);
    let mut w = reset;
    for (l, v) in [
        (Live::PsMode, 2),
        (Live::PsMode, 1),
        (Live::InflateThreshold, 0xFFFF_FFFF),
        (Live::TableThreshold, 0x8000_0001),
        (Live::InflateThreshold, 1234),
    ] {
        let off = map.live_offset(l).unwrap();
        b.write32(off, v).unwrap();
        w.write(&map, off, v);
        b.idle(1);
        assert_eq!(b.read32(off).unwrap(), expected(&map, &b.fabric.live, &w, None, off), "{l:?} <- {v:#x}");
        assert_eq!(b.fabric.ps, (w.ps_acu, w.inflate, w.table), "{l:?} <- {v:#x}");
    }
    assert_eq!(w.inflate, 1234);
    // Without byte 0 a write is ignored.
    let t = map.live_offset(Live::TableThreshold).unwrap();
    b.axi_write(t, 5, 0xE).unwrap();
    assert_eq!(b.read32(t).unwrap(), 0x8000_0001);
    let pop = map.live_offset(Live::RecordPop).unwrap();
    assert_eq!(b.read32(pop).unwrap(), 0, "an empty stream reads 0");
    let words: Vec<u32> = (0..50u32).map(|i| i.wrapping_mul(0x9E37_79B9) | 1).collect();
    b.fabric.stream.extend(&words);
    let mut got = Vec::new();
    for i in 0..60 {
        got.push(b.read32(pop).unwrap());
        // Other reads in between take nothing.
        if i % 7 == 0 {
            b.read32(map.live_offset(Live::RecordWords).unwrap()).unwrap();
        }
    }
    assert_eq!(got[..50], words[..]);
    assert!(got[50..].iter().all(|&v| v == 0));
    assert_eq!(b.fabric.popped, words);
}

/// Window reads ask for (sel, index) and return the answer whatever its latency.
#[test]
fn window_reads_ask_for_the_right_word() {
    let map = RegMap::nic_default();
    let mut b = bar();
    b.fabric.windows.max = 20;
    let mut r = Rng::new(3);
    let mut n = 0;
    for (sel, w) in map.windows.iter().enumerate() {
        let words = w.size / 4;
        let mut idx: Vec<u32> = vec![0, 1, words - 1];
        idx.extend((0..300).map(|_| r.below(words as u64) as u32));
        for i in idx {
            let v = b.read32(w.base + 4 * i).unwrap();
            assert_eq!(v, word(sel, i), "window {sel} word {i}");
            let &(_, s, k) = b.fabric.windows.requests.last().unwrap();
            assert_eq!((s, k), (sel, i));
            n += 1;
        }
    }
    assert_eq!(b.fabric.windows.requests.len(), n, "one request per window read");
    assert_eq!(b.fabric.windows.overlapping, 0);
    // win_req is a one-clock pulse: requests are never on adjacent clocks of one read.
    assert!(b.fabric.windows.requests.windows(2).all(|p| p[1].0 > p[0].0 + 1));
    assert!(b.stats.max_clocks >= 20 && b.stats.max_clocks <= 26, "{:?}", b.stats);
}

/// Back-to-back random transactions with random master stalls (valid delays, ready
/// drops) and random window latencies: every answer right, every pulse counted, no hang.
#[test]
fn random_traffic_with_stalls_never_hangs() {
    let map = RegMap::nic_default();
    let mut b = bar();
    b.stalls = Some(Stalls { rng: Rng::new(99), pct: 40 });
    b.max_wait = 200;
    let mut r = Rng::new(5);
    let (mut w, mut swaps, mut clears, mut reads) = (Written::reset(), 0, 0, 0u64);
    let writable: Vec<u32> = [Live::PsMode, Live::InflateThreshold, Live::TableThreshold, Live::RingControl]
        .into_iter()
        .map(|l| map.live_offset(l).unwrap())
        .collect();
    let mut pushed = Vec::new();
    for t in 0..20_000 {
        if t % 500 == 0 {
            b.fabric.live = random_live(&mut r);
        }
        let live = b.fabric.live;
        match r.below(10) {
            0 => {
                let v = r.below(4) as u32;
                b.write32(map.control, v).unwrap();
                swaps += (v & 1) as usize;
                clears += (v >> 1) as usize;
            }
            1 if r.chance(50) => {
                let v = [0, 1, 2, 3][r.below(4) as usize];
                b.write32(map.mode, v).unwrap();
                w.write(&map, map.mode, v);
            }
            1 => {
                let (off, v) = (
                    writable[r.below(writable.len() as u64) as usize],
                    [0, 2, 1, r.next_u64() as u32][r.below(4) as usize],
                );
                b.write32(off, v).unwrap();
                w.write(&map, off, v);
                for _ in 0..r.below(3) {
                    let word = r.next_u64() as u32;
                    b.fabric.stream.push_back(word);
                    pushed.push(word);
                }
            }
            2 | 3 => {
                let win = map.windows[r.below(map.windows.len() as u64) as usize];
                let off = win.base + 4 * r.below(win.size as u64 / 4) as u32;
                let want = expected(&map, &live, &w, b.fabric.stream.front().copied(), off);
                assert_eq!(b.read32(off).unwrap(), want, "t {t} window {off:#x}");
                reads += 1;
            }
            4 => {
                let off = 4 * r.below(map.layout.bar_size as u64 / 4) as u32;
                let want = expected(&map, &live, &w, b.fabric.stream.front().copied(), off);
                assert_eq!(b.read32(off).unwrap(), want, "t {t} offset {off:#x}");
                reads += 1;
            }
            _ => {
                let off = if r.chance(50) {
                    map.constants[r.below(map.constants.len() as u64) as usize].0
                } else {
                    map.live[r.below(map.live.len() as u64) as usize].0
                };
                let want = expected(&map, &live, &w, b.fabric.stream.front().copied(), off);
                assert_eq!(b.read32(off).unwrap(), want, "t {t} offset {off:#x}");
                reads += 1;
            }
        }
    }
    b.idle(2);
    assert_eq!((b.fabric.swaps.len(), b.fabric.clears.len()), (swaps, clears));
    assert_eq!(b.stats.reads, reads);
    assert_eq!(b.fabric.windows.overlapping, 0);
    // Every RECORD_POP read of a word took it, in order, and nothing else did.
    assert_eq!(b.fabric.popped[..], pushed[..b.fabric.popped.len()]);
    assert!(!b.fabric.popped.is_empty());
    // RING_CONTROL's ENABLE is the `ring_enable` port.
    let ring = b.fabric.ports.ring_enable;
    assert_eq!(b.model().get(ring) == 1, w.ring, "ring_enable follows RING_CONTROL");
    let clocks = b.model().cycles();
    eprintln!("{:?}, {clocks} clocks", b.stats);
}

/// A slave that never answers a window read is reported, not waited for forever.
#[test]
fn an_unanswered_window_read_times_out() {
    let map = RegMap::nic_default();
    let mut b = bar();
    b.fabric.windows.min = 1_000_000;
    b.fabric.windows.max = 1_000_000;
    b.max_wait = 100;
    let e = b.read32(map.windows[1].base).unwrap_err();
    assert!(e.to_string().contains("no RVALID"), "{e}");
}
