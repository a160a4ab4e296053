//! Bit-exact software models of the NIC's lookup-table arithmetic (PINT section 4.3 and
//! Appendix C): fixed-point log2 and exp2, multiply and divide through log-add-exp and
//! through direct tables, the multiplicative encoder with deterministic or randomized
//! rounding, and SuMax's log-spaced delay bins.
//!
//! The integer definitions live once, in [`smartnic_contract::lut`]; the types here build
//! the tables once and call those functions, so the model, the hardware generator and the
//! checked-in vectors (`hdl/contract/vectors/lut.txt`) cannot drift apart.
//! [`bounds`] states the error bound of every function (derived in its doc comments and
//! checked by property tests), [`measure`] measures the actual errors against `f64`.
//!
//! | type | functions |
//! |---|---|
//! | [`Log2Unit`] | `log2(x) -> Option<u32>` |
//! | [`Exp2Unit`] | `exp2(y, io) -> u64` |
//! | [`Arith`] | all of the above plus `mul`, `div`, `mul_direct`, `div_direct` |
//! | [`Encoder`] | `encode`, `encode_randomized` (own LFSR), `decode` |
//! | [`DelayBins`] | `bin(delay_ns) -> u8`, SuMax's per-packet delay bin |

pub mod bounds;
mod delay;
mod encoder;
pub mod measure;
mod units;

pub use delay::{delay_bin, DelayBins};
pub use encoder::Encoder;
pub use smartnic_contract::lut::{
    ArithParams, DirectParams, EncoderParams, Exp2Io, Exp2Params, Log2Params, LutError, Rounding,
};
pub use units::{default_arith, Arith, DirectUnit, Exp2Unit, Log2Unit};
