//! `axil`: the AXI4-Lite slave port (32-bit data, `A` address bits) as one rust-hdl
//! interface, declared once for every block that exposes the BAR.
//!
//! The register file owns the bus ([`crate::regs::RegisterFile`]); a block that contains it
//! (the core) declares the same bundle and passes it down with
//! `AxiLiteSlave::<A>::link(&mut self.bus, &mut self.regs.bus)`, so the seventeen signals
//! are named and wired in one place. rust-hdl names the Verilog ports of a bundle field
//! `bus` as `bus$awaddr`, `bus$awvalid`, ... ([`PORT_PREFIX`]); Verilator's C++ spells the
//! `$` as `__024`.
//!
//! | signal | dir | width | channel |
//! |---|---|---|---|
//! | `awaddr`, `awvalid`, `awready` | in, in, out | A, 1, 1 | write address |
//! | `wdata`, `wstrb`, `wvalid`, `wready` | in, in, in, out | 32, 4, 1, 1 | write data |
//! | `bresp`, `bvalid`, `bready` | out, out, in | 2, 1, 1 | write response |
//! | `araddr`, `arvalid`, `arready` | in, in, out | A, 1, 1 | read address |
//! | `rdata`, `rresp`, `rvalid`, `rready` | out, out, out, in | 32, 2, 1, 1 | read data |
use rust_hdl::prelude::*;

/// The Verilog name prefix of the bus signals of a block whose bundle field is `bus`
/// (what a simulator harness looks the ports up by).
pub const PORT_PREFIX: &str = "bus$";

/// The slave side of an AXI4-Lite bus (see the module docs). Directions are the slave's.
#[derive(LogicInterface, Clone, Debug, Default)]
pub struct AxiLiteSlave<const A: usize> {
    pub awaddr: Signal<In, Bits<A>>,
    pub awvalid: Signal<In, Bit>,
    pub awready: Signal<Out, Bit>,
    pub wdata: Signal<In, Bits<32>>,
    pub wstrb: Signal<In, Bits<4>>,
    pub wvalid: Signal<In, Bit>,
    pub wready: Signal<Out, Bit>,
    pub bresp: Signal<Out, Bits<2>>,
    pub bvalid: Signal<Out, Bit>,
    pub bready: Signal<In, Bit>,
    pub araddr: Signal<In, Bits<A>>,
    pub arvalid: Signal<In, Bit>,
    pub arready: Signal<Out, Bit>,
    pub rdata: Signal<Out, Bits<32>>,
    pub rresp: Signal<Out, Bits<2>>,
    pub rvalid: Signal<Out, Bit>,
    pub rready: Signal<In, Bit>,
}
