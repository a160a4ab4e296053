//! `CellRam<W, A>`: the block RAM behind every sketch cell (Tower counters, SuMax size,
//! delay and time cells): `2^A` words of `W` bits, one read port and one write port, the
//! read registered (rust-hdl's `RAM`, port for port), stored so that Xilinx block RAM
//! parity bits hold cell bits.
//!
//! # Why two memories
//!
//! A 7-series RAMB36 holds 32 Kbit of data plus 4 Kbit of parity bits, and the parity bits
//! are only reachable in the 9-, 18-, 36- and 72-bit configurations. Counters of 8, 16 or
//! 32 bits never fill those widths, so a plain `W`-bit memory maps to the data bits alone:
//! 3 x 512 Kbit of TowerSketch counters take 48 RAMB36. Cut off the top `9 * (W / 9)` bits
//! as a memory of their own and that slice maps to 4K x 9 blocks with every bit used, while
//! the remaining `W mod 9` bits map to the plain 1-, 2- and 4-bit configurations:
//!
//! | array | one memory | two memories |
//! |---|---|---|
//! | 2^16 x 8 | 16 RAMB36 | (no 9-bit slice: unchanged) |
//! | 2^15 x 16 | 16 RAMB36 | 32K x 9 + 32K x 7: 8 + 7 = 15 RAMB36 |
//! | 2^14 x 32 | 16 RAMB36 | 16K x 27 + 16K x 5: 12 RAMB36 + 5 RAMB18 = 14.5 |
//!
//! (Yosys `synth_xilinx -family xc7`; `hdl/tests/tower_synth.rs` holds the tower to 45.5.)
//! The price is a few tens of LUTs per array: the 4K-deep blocks of the 9-bit slices need
//! a wider output multiplexer than the 16K x 2 or 32K x 1 blocks, which cascade in pairs.
//! Both memories share the addresses and the write enable, so the pair behaves exactly as
//! one `W`-bit RAM. The split is made only where it needs fewer blocks ([`ramb36_halves`]):
//! below 2^12 words a 9-bit slice cannot fill a 4K x 9 block (test geometries), and at
//! SuMax's 2^13 words a 16-bit delay lane takes 4 RAMB36 either way, so those stay whole.
use rust_hdl::prelude::*;
use std::collections::BTreeMap;

/// Fewest words (as an address width) at which the parity slice can pay: one 4K x 9 block.
pub const SPLIT_MIN_ADDR_BITS: usize = 12;

/// Width of the slice stored with the parity bits: the largest multiple of 9 in `w`, when
/// `2^a` words fill whole 4K x 9 blocks and the split needs fewer blocks than one memory
/// ([`ramb36_halves`]); else 0 (one memory).
pub const fn parity_slice_bits(w: usize, a: usize) -> usize {
    let p = 9 * (w / 9);
    if a >= SPLIT_MIN_ADDR_BITS && p > 0 && ramb36_halves(w, a, p) < ramb36_halves(w, a, 0) {
        p
    } else {
        0
    }
}

/// Block RAM of a `w`-bit, `2^a`-word memory whose top `p` bits (a multiple of 9, `a >= 12`)
/// are their own memory, in RAMB18 units: the parity slice fills 4K x 9 blocks (two RAMB18
/// units each), the plain bits take 16 Kbit per RAMB18 (the 1-, 2- and 4-bit widths). The
/// same arithmetic Yosys' mapper arrives at for these shapes (`hdl/tests/tower_synth.rs`).
pub const fn ramb36_halves(w: usize, a: usize, p: usize) -> usize {
    let words = 1usize << a;
    let slice = 2 * (p / 9) * (words / 4096);
    let plain_bits = (w - p) * words;
    slice + plain_bits.div_ceil(16384)
}

/// One cell RAM (see the module docs). Simulates like rust-hdl's `RAM`.
#[derive(LogicBlock, Default)]
pub struct CellRam<const W: usize, const A: usize> {
    pub read_address: Signal<In, Bits<A>>,
    pub read_clock: Signal<In, Clock>,
    pub read_data: Signal<Out, Bits<W>>,
    pub write_address: Signal<In, Bits<A>>,
    pub write_clock: Signal<In, Clock>,
    pub write_data: Signal<In, Bits<W>>,
    pub write_enable: Signal<In, Bit>,
    _sim: BTreeMap<Bits<A>, Bits<W>>,
}

impl<const W: usize, const A: usize> Logic for CellRam<W, A> {
    fn update(&mut self) {
        if self.read_clock.pos_edge() {
            let q = self._sim.get(&self.read_address.val()).copied();
            self.read_data.next = q.unwrap_or_default();
        }
        if self.write_clock.pos_edge() && self.write_enable.val() {
            self._sim.insert(self.write_address.val(), self.write_data.val());
        }
    }

    fn connect(&mut self) {
        self.read_data.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(verilog_body(W, A))
    }
}

/// The Verilog of a `w`-bit, `2^a`-word cell RAM: one memory, or the parity slice
/// (`mem_p`, the top bits) beside the rest (`mem_d`).
fn verilog_body(w: usize, a: usize) -> String {
    let top = (1usize << a) - 1;
    let p = parity_slice_bits(w, a);
    if p == 0 || p == w {
        return format!(
            "reg [{hi}:0] mem [0:{top}];\n\
             always @(posedge read_clock) read_data <= mem[read_address];\n\
             always @(posedge write_clock) if (write_enable) mem[write_address] <= write_data;\n",
            hi = w - 1
        );
    }
    let d = w - p;
    format!(
        "// {p} bits in 4K x 9 blocks (parity bits used), {d} bits in the plain widths.\n\
         reg [{ph}:0] mem_p [0:{top}];\n\
         reg [{dh}:0] mem_d [0:{top}];\n\
         always @(posedge read_clock) read_data <= {{mem_p[read_address], mem_d[read_address]}};\n\
         always @(posedge write_clock) if (write_enable) begin\n\
         \x20  mem_p[write_address] <= write_data[{wh}:{d}];\n\
         \x20  mem_d[write_address] <= write_data[{dh}:0];\n\
         end\n",
        ph = p - 1,
        dh = d - 1,
        wh = w - 1,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parity_slice_is_the_largest_multiple_of_nine_for_deep_memories() {
        assert_eq!(parity_slice_bits(8, 16), 0);
        assert_eq!(parity_slice_bits(16, 15), 9);
        assert_eq!(parity_slice_bits(32, 14), 27);
        assert_eq!(parity_slice_bits(32, 11), 0);
        assert_eq!(parity_slice_bits(18, 12), 18);
        // SuMax's 8K-deep lanes: 32-bit saves half a block, 16-bit nothing (4 either way).
        assert_eq!(parity_slice_bits(32, 13), 27);
        assert_eq!(parity_slice_bits(16, 13), 0);
    }

    /// The block counts in the module docs, in RAMB18 units.
    #[test]
    fn block_counts_of_the_tower_arrays() {
        assert_eq!(ramb36_halves(8, 16, 0), 32);
        assert_eq!((ramb36_halves(16, 15, 0), ramb36_halves(16, 15, 9)), (32, 30));
        assert_eq!((ramb36_halves(32, 14, 0), ramb36_halves(32, 14, 27)), (32, 29));
    }

    #[test]
    fn split_memory_writes_and_reads_both_slices() {
        let v = verilog_body(32, 14);
        assert!(v.contains("reg [26:0] mem_p [0:16383];"), "{v}");
        assert!(v.contains("reg [4:0] mem_d [0:16383];"), "{v}");
        assert!(v.contains("mem_p[write_address] <= write_data[31:5];"), "{v}");
        assert!(v.contains("mem_d[write_address] <= write_data[4:0];"), "{v}");
        assert!(v.contains("{mem_p[read_address], mem_d[read_address]}"), "{v}");
    }

    #[test]
    fn shallow_or_narrow_memories_stay_whole() {
        for (w, a) in [(8, 16), (32, 10), (16, 13)] {
            let v = verilog_body(w, a);
            assert!(!v.contains("mem_p"), "{w} x 2^{a}: {v}");
        }
    }
}
