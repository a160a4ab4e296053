//! Pipelined LUT arithmetic (DESIGN.md section 4 "Arithmetic"), bit-exact with
//! `smartnic_contract::lut`.
//!
//! Every block accepts one operation per clock, has a fixed latency (`LATENCY` in its
//! module) and carries a `valid` bit alongside the data; a synchronous active-high `reset`
//! clears the valid pipeline. ROM contents come from the contract's table generators
//! (`log2_table`, `exp2_table`, `mul_direct_table`, `div_direct_table`) in each constructor,
//! never from literals. ROMs are rust-hdl [`SyncROM`]s (registered read): a 2^10-entry table
//! of <= 18-bit words maps to one RAMB18E1.
//!
//! | module | block | latency |
//! |---|---|---|
//! | [`normalize`] | leading-one normaliser (shared stage of log2 and the direct tables) | 3 |
//! | [`scale`] | `T * 2^sh` rounded half up, saturating (output stage of exp2 and the direct tables) | 2 |
//! | [`log2`] | `log2_fx` | 4 |
//! | [`exp2`] | `exp2_fx` | 4 |
//! | [`mul`] | `mul_log` (log-add-exp) | 9 |
//! | [`div`] | `div_log` (log-add-exp) | 9 |
//! | [`mul_direct`] | `mul_direct` (direct product table) | 6 |
//! | [`div_direct`] | `div_direct` (direct quotient table) | 6 |
//! | [`encoder`] | `encode_fx` (half-up and LFSR-randomized rounding) | 8 |
//! | [`decoder`] | `decode_fx` (`exp2(alpha * C_fx)`) | 6 |
//! | [`delay_bin`] | SuMax `delay_bin` (log-spaced delay bins) | 7 |
//! | [`constmul`] | `a * K` for a constant `K` (shift-and-add tree, shared by encoder and delay bins) | 2 |
use rust_hdl::prelude::*;

pub mod constmul;
pub mod decoder;
pub mod delay_bin;
pub mod div;
pub mod div_direct;
pub mod encoder;
pub mod exp2;
pub mod log2;
pub mod mul;
pub mod mul_direct;
pub mod normalize;
pub mod scale;

/// Zero extension of an `N`-bit value to `M >= N` bits as `{zeros, x}`.
///
/// rust-hdl's `bit_cast` renders a widening as `x & M'hff..`, which Verilator `-Wall`
/// reports as a WIDTH mismatch; this leaf block (custom Verilog, one `always @(*)`) is the
/// lint-clean spelling. Narrowing needs no block: `get_bits::<M>(0)` is a slice.
#[derive(LogicBlock, Default)]
pub struct Widen<const M: usize, const N: usize> {
    pub x: Signal<In, Bits<N>>,
    pub y: Signal<Out, Bits<M>>,
}

impl<const M: usize, const N: usize> Logic for Widen<M, N> {
    fn update(&mut self) {
        assert!(M >= N, "Widen<{M}, {N}> narrows");
        self.y.next = bit_cast::<M, N>(self.x.val());
    }
    fn connect(&mut self) {
        self.y.connect();
    }
    fn hdl(&self) -> Verilog {
        if M == N {
            Verilog::Custom("always @(*) y = x;".into())
        } else {
            Verilog::Custom(format!("always @(*) y = {{{{{}{{1'b0}}}}, x}};", M - N))
        }
    }
}

/// A [`SyncROM`] with `2^A` words of `D` bits holding `table` (which must have exactly
/// `2^A` entries, each below `2^D`).
pub fn rom<const D: usize, const A: usize>(table: &[u32], what: &str) -> SyncROM<Bits<D>, A> {
    assert_eq!(table.len(), 1 << A, "{what}: {} entries for a {A}-bit address", table.len());
    assert!(D >= 32 || table.iter().all(|&w| (w as u64) < 1u64 << D), "{what}: a word does not fit {D} bits");
    SyncROM::new(
        table
            .iter()
            .enumerate()
            .map(|(i, &w)| ((i as u64).to_bits::<A>(), (w as u64).to_bits::<D>()))
            .collect(),
    )
}
