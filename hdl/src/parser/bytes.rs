//! `ByteRev`: the byte reversal of the 64-bit AXI-Stream beat (pure wiring).
//!
//! AXI-Stream puts the first byte on the wire in `tdata[7:0]`; network fields are
//! big-endian. Reversing the beat once (`y[63:56] = x[7:0]`, ..., `y[7:0] = x[63:56]`)
//! makes the first byte the most significant one, so every multi-byte header field is a
//! plain slice of the parser's window. rust-hdl has no concatenation in `update`, so this
//! leaf carries custom Verilog (one `always @(*)`), like `arith::Widen`.
use rust_hdl::prelude::*;

/// Byte reversal of a 64-bit word.
#[derive(LogicBlock, Default)]
pub struct ByteRev {
    pub x: Signal<In, Bits<64>>,
    pub y: Signal<Out, Bits<64>>,
}

/// The same reversal in Rust (the leaf's `update` and the tests).
pub fn byte_rev(x: u64) -> u64 {
    x.swap_bytes()
}

impl Logic for ByteRev {
    fn update(&mut self) {
        self.y.next = byte_rev(self.x.val().to_u64()).to_bits();
    }
    fn connect(&mut self) {
        self.y.connect();
    }
    fn hdl(&self) -> Verilog {
        let parts: Vec<String> = (0..8).map(|j| format!("x[{}:{}]", 8 * j + 7, 8 * j)).collect();
        Verilog::Custom(format!("always @(*) y = {{{}}};", parts.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reversal_puts_the_first_wire_byte_on_top() {
        // tdata[7:0] = first byte 0x11.
        assert_eq!(byte_rev(0x8877_6655_4433_2211), 0x1122_3344_5566_7788);
        let v = ByteRev::default().hdl();
        match v {
            Verilog::Custom(s) => assert!(s.starts_with("always @(*) y = {x[7:0], x[15:8]"), "{s}"),
            _ => panic!("custom Verilog expected"),
        }
    }
}
