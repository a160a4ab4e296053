//! `DistRam<W, A>`: `2^A` words of `W` bits with a write port at the clock's edge and a
//! combinational read port: the shape Xilinx distributed (LUT) RAM has, which Yosys and
//! Vivado infer from it. The hop serializer keeps its ring of records in one, so the head
//! record is read in the clock it is issued (rust-hdl's `RAM` registers its read).
//!
//! # Ports
//!
//! | port | dir | width | meaning |
//! |---|---|---|---|
//! | `clock` | in | 1 | the write clock |
//! | `write_enable`, `write_address`, `write_data` | in | 1, `A`, `W` | a word written at the edge |
//! | `read_address` | in | `A` | the word read |
//! | `read_data` | out | `W` | that word, this clock (a word written at this edge shows from the next) |
use rust_hdl::prelude::*;
use std::collections::BTreeMap;

/// The RAM (see the module docs). Simulates like its Verilog.
#[derive(LogicBlock, Default)]
pub struct DistRam<const W: usize, const A: usize> {
    pub clock: Signal<In, Clock>,
    pub write_enable: Signal<In, Bit>,
    pub write_address: Signal<In, Bits<A>>,
    pub write_data: Signal<In, Bits<W>>,
    pub read_address: Signal<In, Bits<A>>,
    pub read_data: Signal<Out, Bits<W>>,
    _sim: BTreeMap<Bits<A>, Bits<W>>,
}

impl<const W: usize, const A: usize> Logic for DistRam<W, A> {
    fn update(&mut self) {
        if self.clock.pos_edge() && self.write_enable.val() {
            self._sim.insert(self.write_address.val(), self.write_data.val());
        }
        self.read_data.next = self._sim.get(&self.read_address.val()).copied().unwrap_or_default();
    }

    fn connect(&mut self) {
        self.read_data.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "reg [{hi}:0] mem [0:{top}];\n\
             always @(posedge clock) if (write_enable) mem[write_address] <= write_data;\n\
             always @(*) read_data = mem[read_address];\n",
            hi = W - 1,
            top = (1usize << A) - 1
        ))
    }
}
