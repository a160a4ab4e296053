//! The Si5324 bring-up (`hdl::board::si5324_init`) under Verilator on a modelled I2C bus:
//! a PCA9548 mux at 0x74 and, behind its channel 7, a Si5324 at 0x68 whose registers the
//! test keeps. The open-drain lines are the AND of what the block and the targets release.
//! Checked: the reset is held and the bus stays idle until the settle time; every
//! transaction is a clean start .. stop with the mux write first, then the contract's
//! `si5324::INIT` register writes in order, each acknowledged; the Si5324's registers end
//! equal to the sequence; `done` rises with the bus released. A NACK at any byte stops the
//! walk with a stop, `error` and `step` at the failing entry; a bus held low is an error
//! before the first start.
use smartnic_contract::board::si5324;
use smartnic_hdl::board::si5324_init::{program, Op, Si5324Init};
use smartnic_hdl::flow;
use smartnic_sim_tb::Model;

const DIVIDER: u32 = 3;
const HOLD: u32 = 40;
const SETTLE: u32 = 60;

/// The targets on the bus (see the module docs).
#[derive(Default)]
struct Bus {
    scl: bool,
    sda: bool,
    /// The target pulls SDA low (its ACK).
    pull: bool,
    in_tx: bool,
    bits: u32,
    byte: u8,
    acking: bool,
    /// The current transaction: address byte, then data bytes.
    tx: Vec<u8>,
    done: Vec<Vec<u8>>,
    /// Bytes seen so far on the bus (for `nack_at`).
    seen: usize,
    nack_at: Option<usize>,
    mux: u8,
    regs: Vec<Option<u8>>,
    /// SDA held low by a broken device.
    stuck: bool,
}

impl Bus {
    /// Whether the addressed target takes byte `b` of the current transaction.
    fn accepts(&self) -> bool {
        if self.nack_at == Some(self.seen) {
            return false;
        }
        let addr = self.tx[0];
        let open = self.mux & si5324::mux_select() != 0;
        addr & 1 == 0 && (addr >> 1 == si5324::MUX_ADDR || (addr >> 1 == si5324::ADDR && open))
    }

    /// A byte acknowledged: the targets act on it.
    fn take(&mut self) {
        let (addr, n) = (self.tx[0] >> 1, self.tx.len());
        if addr == si5324::MUX_ADDR && n == 2 {
            self.mux = self.tx[1];
        }
        if addr == si5324::ADDR && n >= 3 {
            let reg = self.tx[1] as usize + (n - 3);
            self.regs.resize(self.regs.len().max(reg + 1), None);
            self.regs[reg] = Some(self.tx[n - 1]);
        }
    }

    /// One clock: the block's drives in, the lines out (`(sda, scl)` as the pads see them).
    fn clock(&mut self, sda_low: bool, scl_low: bool) -> (bool, bool) {
        let scl = !scl_low;
        let sda = !(sda_low || self.pull || self.stuck);
        if scl && self.scl && self.sda && !sda {
            assert!(!self.in_tx || self.bits == 0, "a start inside a byte");
            self.in_tx = true;
            (self.bits, self.tx) = (0, Vec::new());
        } else if scl && self.scl && !self.sda && sda && self.in_tx {
            // The stop's own SCL rise was clocked in as a first bit: at most that one.
            assert!(
                self.bits <= 1 && !self.acking,
                "a stop inside a byte ({} bits of {:x?})",
                self.bits,
                self.tx
            );
            self.in_tx = false;
            self.done.push(std::mem::take(&mut self.tx));
        } else if scl && !self.scl && self.in_tx && self.bits < 8 {
            self.byte = self.byte << 1 | sda as u8;
            self.bits += 1;
        } else if !scl && self.scl && self.in_tx {
            if self.bits == 8 && !self.acking {
                self.tx.push(self.byte);
                self.pull = self.accepts();
                if self.pull {
                    self.take();
                }
                self.seen += 1;
                self.acking = true;
            } else if self.acking {
                (self.pull, self.acking, self.bits) = (false, false, 0);
            }
        }
        (self.scl, self.sda) = (scl, sda);
        (!(sda_low || self.pull || self.stuck), scl)
    }
}

struct Run {
    m: Model,
    bus: Bus,
    clocks: u64,
    /// Clock of the first start, and of the last `rst_n` low.
    first_start: Option<u64>,
    last_reset: u64,
}

impl Run {
    fn new(bus: Bus) -> Self {
        let v = flow::to_verilog("si5324_init", &mut Si5324Init::new(DIVIDER, HOLD, SETTLE)).unwrap();
        let mut m = Model::of_verilog("si5324_init", &v).unwrap_or_else(|e| panic!("{e}"));
        m.set_by_name("sda_in", 1);
        m.set_by_name("scl_in", 1);
        m.set_by_name("reset", 1);
        m.tick();
        m.set_by_name("reset", 0);
        Run { m, bus, clocks: 0, first_start: None, last_reset: 0 }
    }

    /// Runs until `done` or `error`, at most `max` clocks.
    fn run(&mut self, max: u64) {
        while self.clocks < max {
            let (sda_low, scl_low) = (self.m.get_by_name("sda_low") == 1, self.m.get_by_name("scl_low") == 1);
            if self.m.get_by_name("rst_n") == 0 {
                self.last_reset = self.clocks;
            }
            let (sda, scl) = self.bus.clock(sda_low, scl_low);
            if self.bus.in_tx && self.first_start.is_none() {
                self.first_start = Some(self.clocks);
            }
            self.m.set_by_name("sda_in", sda as u128);
            self.m.set_by_name("scl_in", scl as u128);
            self.m.tick();
            self.clocks += 1;
            if self.m.get_by_name("done") == 1 || self.m.get_by_name("error") == 1 {
                return;
            }
        }
        panic!("neither done nor error after {max} clocks");
    }
}

/// The transactions the contract's sequence makes.
fn expected() -> Vec<Vec<u8>> {
    let mut t = vec![vec![si5324::MUX_ADDR << 1, si5324::mux_select()]];
    t.extend(si5324::INIT.iter().map(|&(reg, value, _)| vec![si5324::ADDR << 1, reg, value]));
    t
}

#[test]
fn the_sequence_reaches_the_si5324_through_the_mux() {
    let mut r = Run::new(Bus::default());
    r.run(200_000);
    assert_eq!(r.m.get_by_name("done"), 1, "done");
    assert_eq!(r.m.get_by_name("error"), 0);
    assert_eq!(r.bus.done, expected(), "every transaction, in order");
    assert_eq!(r.bus.mux, si5324::mux_select());
    for &(reg, value, why) in si5324::INIT {
        assert_eq!(r.bus.regs.get(reg as usize).copied().flatten(), Some(value), "register {reg} ({why})");
    }
    assert_eq!(r.bus.regs.iter().flatten().count(), si5324::INIT.len(), "no other register written");
    assert!(r.last_reset + 1 >= HOLD as u64, "reset held {} clocks", r.last_reset + 1);
    let start = r.first_start.unwrap();
    assert!(start > (HOLD + SETTLE) as u64, "first start at clock {start}");
    assert!(!r.bus.in_tx && r.bus.scl && r.bus.sda, "the bus is released and idle");
    assert_eq!(r.m.get_by_name("step") as usize, program().len() - 1, "step at the end of the program");
    eprintln!("{} transactions in {} clocks", r.bus.done.len(), r.clocks);
}

#[test]
fn a_nack_anywhere_stops_the_walk_at_its_entry() {
    // The failing program entry of every byte of the sequence, in bus order.
    let prog = program();
    let byte_entries: Vec<usize> =
        (0..prog.len()).filter(|&i| matches!(prog[i], Op::Begin(_) | Op::Write(_))).collect();
    for &k in &[0, 1, 2, 5, 17, byte_entries.len() - 1] {
        let mut r = Run::new(Bus { nack_at: Some(k), ..Default::default() });
        r.run(200_000);
        assert_eq!((r.m.get_by_name("error"), r.m.get_by_name("done")), (1, 0), "NACK at byte {k}");
        assert_eq!(r.m.get_by_name("step") as usize, byte_entries[k], "step names the failing entry");
        assert!(!r.bus.in_tx && r.bus.sda && r.bus.scl, "NACK at byte {k}: stopped, bus released");
        assert_eq!(r.bus.seen, k + 1, "nothing sent after the NACK");
    }
}

#[test]
fn a_bus_held_low_is_an_error_before_any_start() {
    let mut r = Run::new(Bus { stuck: true, ..Default::default() });
    r.run(200_000);
    assert_eq!(r.m.get_by_name("error"), 1);
    assert_eq!(r.m.get_by_name("step"), 0);
    assert!(r.bus.done.is_empty() && r.bus.seen == 0);
}
