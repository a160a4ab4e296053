//! `BareRmw<W, A>` and `BareTower`: the timing reference for `scripts/bench-fmax`.
//!
//! One block RAM per array, read -> `+1` -> write, nothing else: the read address comes
//! from the input, the RAM output plus one is written back one clock later to the same
//! address, with no forwarding, no saturation and no mode. It gives *wrong* counts for a
//! counter hit twice within two clocks; it exists only to measure what an unprotected RMW
//! loop costs in the same memory configuration as [`super::tower::TowerPipeline`].
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock` | in | 1 | clock |
//! | `valid`, `addr` | in | 1, `A` | counter to increment |
//! | `rd_data` | out | `W` | the RAM output (keeps the memory observable) |
use super::cell_ram::CellRam;
use crate::nic::{TOWER_A0, TOWER_A1, TOWER_A2, TOWER_W0, TOWER_W1, TOWER_W2};
use rust_hdl::prelude::*;

/// One bare read-increment-write array.
#[derive(LogicBlock)]
pub struct BareRmw<const W: usize, const A: usize> {
    pub clock: Signal<In, Clock>,
    pub valid: Signal<In, Bit>,
    pub addr: Signal<In, Bits<A>>,
    pub rd_data: Signal<Out, Bits<W>>,
    ram: CellRam<W, A>,
    s1_valid: DFF<Bit>,
    s1_addr: DFF<Bits<A>>,
    one: Constant<Bits<W>>,
}

impl<const W: usize, const A: usize> BareRmw<W, A> {
    pub fn new() -> Self {
        BareRmw {
            clock: Default::default(),
            valid: Default::default(),
            addr: Default::default(),
            rd_data: Default::default(),
            ram: Default::default(),
            s1_valid: Default::default(),
            s1_addr: Default::default(),
            one: Constant::new(1u64.to_bits()),
        }
    }
}

impl<const W: usize, const A: usize> Default for BareRmw<W, A> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const W: usize, const A: usize> Logic for BareRmw<W, A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, s1_valid, s1_addr);
        self.ram.read_clock.next = self.clock.val();
        self.ram.write_clock.next = self.clock.val();
        self.ram.read_address.next = self.addr.val();
        self.s1_valid.d.next = self.valid.val();
        self.s1_addr.d.next = self.addr.val();
        self.ram.write_address.next = self.s1_addr.q.val();
        self.ram.write_data.next = self.ram.read_data.val() + self.one.val();
        self.ram.write_enable.next = self.s1_valid.q.val();
        self.rd_data.next = self.ram.read_data.val();
    }
}

/// Three bare arrays with the tower's widths and depths (addresses as inputs, no hashing).
#[derive(LogicBlock)]
pub struct BareTower<
    const W0: usize,
    const A0: usize,
    const W1: usize,
    const A1: usize,
    const W2: usize,
    const A2: usize,
> {
    pub clock: Signal<In, Clock>,
    pub valid: Signal<In, Bit>,
    pub addr0: Signal<In, Bits<A0>>,
    pub addr1: Signal<In, Bits<A1>>,
    pub addr2: Signal<In, Bits<A2>>,
    pub rd_data0: Signal<Out, Bits<W0>>,
    pub rd_data1: Signal<Out, Bits<W1>>,
    pub rd_data2: Signal<Out, Bits<W2>>,
    a0: BareRmw<W0, A0>,
    a1: BareRmw<W1, A1>,
    a2: BareRmw<W2, A2>,
}

impl<
        const W0: usize,
        const A0: usize,
        const W1: usize,
        const A1: usize,
        const W2: usize,
        const A2: usize,
    > BareTower<W0, A0, W1, A1, W2, A2>
{
    pub fn new() -> Self {
        BareTower {
            clock: Default::default(),
            valid: Default::default(),
            addr0: Default::default(),
            addr1: Default::default(),
            addr2: Default::default(),
            rd_data0: Default::default(),
            rd_data1: Default::default(),
            rd_data2: Default::default(),
            a0: BareRmw::new(),
            a1: BareRmw::new(),
            a2: BareRmw::new(),
        }
    }
}

impl<
        const W0: usize,
        const A0: usize,
        const W1: usize,
        const A1: usize,
        const W2: usize,
        const A2: usize,
    > Default for BareTower<W0, A0, W1, A1, W2, A2>
{
    fn default() -> Self {
        Self::new()
    }
}

impl<
        const W0: usize,
        const A0: usize,
        const W1: usize,
        const A1: usize,
        const W2: usize,
        const A2: usize,
    > Logic for BareTower<W0, A0, W1, A1, W2, A2>
{
    #[hdl_gen]
    fn update(&mut self) {
        self.a0.clock.next = self.clock.val();
        self.a0.valid.next = self.valid.val();
        self.a0.addr.next = self.addr0.val();
        self.rd_data0.next = self.a0.rd_data.val();
        self.a1.clock.next = self.clock.val();
        self.a1.valid.next = self.valid.val();
        self.a1.addr.next = self.addr1.val();
        self.rd_data1.next = self.a1.rd_data.val();
        self.a2.clock.next = self.clock.val();
        self.a2.valid.next = self.valid.val();
        self.a2.addr.next = self.addr2.val();
        self.rd_data2.next = self.a2.rd_data.val();
    }
}

/// The reference with the board's geometry, as the named constants of [`crate::nic`].
pub type BareFpga = BareTower<TOWER_W0, TOWER_A0, TOWER_W1, TOWER_A1, TOWER_W2, TOWER_A2>;
