//! Table-holding units: each builds its contract table once and evaluates the contract's
//! integer function with it.

use std::sync::OnceLock;

use smartnic_contract::lut::{self, ArithParams, DirectParams, Exp2Io, Exp2Params, Log2Params, LutError};

/// Fixed-point log2: leading-one detector + `2^q`-entry mantissa table
/// ([`lut::log2_fx`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Log2Unit {
    params: Log2Params,
    table: Vec<u32>,
}

impl Log2Unit {
    pub fn new(params: Log2Params) -> Result<Self, LutError> {
        params.validate()?;
        Ok(Log2Unit { params, table: lut::log2_table(params) })
    }
    /// `log2(x)` with `frac` fraction bits; `None` for `x = 0`.
    #[inline]
    pub fn log2(&self, x: u64) -> Option<u32> {
        lut::log2_fx(&self.table, self.params, x)
    }
    pub fn params(&self) -> Log2Params {
        self.params
    }
    pub fn table(&self) -> &[u32] {
        &self.table
    }
}

impl Default for Log2Unit {
    fn default() -> Self {
        Self::new(Log2Params::DEFAULT).expect("default log2 parameters are valid")
    }
}

/// Fixed-point exp2: `2^q`-entry table + shifter ([`lut::exp2_fx`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exp2Unit {
    params: Exp2Params,
    table: Vec<u32>,
}

impl Exp2Unit {
    pub fn new(params: Exp2Params) -> Result<Self, LutError> {
        params.validate()?;
        Ok(Exp2Unit { params, table: lut::exp2_table(params) })
    }
    /// `2^y` for a signed `y` with `io.in_frac` fraction bits, with `io.out_frac` fraction
    /// bits, saturating at `2^io.out_width - 1`.
    #[inline]
    pub fn exp2(&self, y: i64, io: Exp2Io) -> u64 {
        lut::exp2_fx(&self.table, self.params, y, io)
    }
    pub fn params(&self) -> Exp2Params {
        self.params
    }
    pub fn table(&self) -> &[u32] {
        &self.table
    }
}

impl Default for Exp2Unit {
    fn default() -> Self {
        Self::new(Exp2Params::DEFAULT).expect("default exp2 parameters are valid")
    }
}

/// The direct product and quotient tables ([`lut::mul_direct`], [`lut::div_direct`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirectUnit {
    params: DirectParams,
    mul: Vec<u32>,
    div: Vec<u32>,
}

impl DirectUnit {
    pub fn new(params: DirectParams) -> Result<Self, LutError> {
        params.validate()?;
        Ok(DirectUnit { params, mul: lut::mul_direct_table(params), div: lut::div_direct_table(params) })
    }
    #[inline]
    pub fn mul_direct(&self, x: u64, y: u64) -> u64 {
        lut::mul_direct(&self.mul, self.params, x, y)
    }
    #[inline]
    pub fn div_direct(&self, x: u64, y: u64, out_frac: u8) -> Option<u64> {
        lut::div_direct(&self.div, self.params, x, y, out_frac)
    }
    pub fn params(&self) -> DirectParams {
        self.params
    }
    pub fn mul_table(&self) -> &[u32] {
        &self.mul
    }
    pub fn div_table(&self) -> &[u32] {
        &self.div
    }
}

/// The whole arithmetic unit: log2, exp2, and both multiply/divide variants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arith {
    pub log2: Log2Unit,
    pub exp2: Exp2Unit,
    pub direct: DirectUnit,
}

impl Arith {
    pub fn new(p: ArithParams) -> Result<Self, LutError> {
        Ok(Arith {
            log2: Log2Unit::new(p.log2)?,
            exp2: Exp2Unit::new(p.exp2)?,
            direct: DirectUnit::new(p.direct)?,
        })
    }
    pub fn params(&self) -> ArithParams {
        ArithParams { log2: self.log2.params(), exp2: self.exp2.params(), direct: self.direct.params() }
    }
    #[inline]
    pub fn log2(&self, x: u64) -> Option<u32> {
        self.log2.log2(x)
    }
    #[inline]
    pub fn exp2(&self, y: i64, io: Exp2Io) -> u64 {
        self.exp2.exp2(y, io)
    }
    /// `x * y` through log-add-exp ([`lut::mul_log`]); error bound: [`crate::arith::bounds::mul`].
    #[inline]
    pub fn mul(&self, x: u64, y: u64) -> u64 {
        lut::mul_log(&self.log2.table, self.log2.params, &self.exp2.table, self.exp2.params, x, y)
    }
    /// `x / y` with `out_frac` fraction bits through log-add-exp ([`lut::div_log`]); `None`
    /// for `y = 0`. Error bound: [`crate::arith::bounds::div`].
    #[inline]
    pub fn div(&self, x: u64, y: u64, out_frac: u8) -> Option<u64> {
        lut::div_log(&self.log2.table, self.log2.params, &self.exp2.table, self.exp2.params, x, y, out_frac)
    }
    /// `x * y` through the direct product table; bound: [`crate::arith::bounds::mul_direct`].
    #[inline]
    pub fn mul_direct(&self, x: u64, y: u64) -> u64 {
        self.direct.mul_direct(x, y)
    }
    /// `x / y` through the direct quotient table; bound: [`crate::arith::bounds::div_direct`].
    #[inline]
    pub fn div_direct(&self, x: u64, y: u64, out_frac: u8) -> Option<u64> {
        self.direct.div_direct(x, y, out_frac)
    }
}

impl Default for Arith {
    fn default() -> Self {
        Self::new(ArithParams::DEFAULT).expect("default arithmetic parameters are valid")
    }
}

/// A shared unit with the default parameters, built on first use.
pub fn default_arith() -> &'static Arith {
    static ARITH: OnceLock<Arith> = OnceLock::new();
    ARITH.get_or_init(Arith::default)
}

#[cfg(test)]
mod tests {
    use super::*;

    const IO: Exp2Io = Exp2Io { in_frac: 16, out_frac: 0, out_width: 64 };

    #[test]
    fn log2_exact_points() {
        let a = default_arith();
        assert_eq!(a.log2(0), None);
        assert_eq!(a.log2(1), Some(0));
        for k in 0..64u32 {
            assert_eq!(a.log2(1 << k), Some(k << 16));
        }
        // log2(10) = 3.321928: l = 3, mantissa 0b0100000000 = 256, LOG2[256] = log2(1.25).
        assert_eq!(a.log2(10), Some((3 << 16) + 21098));
    }

    #[test]
    fn exp2_exact_points() {
        let a = default_arith();
        for k in 0..64i64 {
            assert_eq!(a.exp2(k << 16, IO), 1 << k);
        }
        assert_eq!(a.exp2(-(3 << 16), Exp2Io { out_frac: 3, ..IO }), 1);
        assert_eq!(a.exp2(64 << 16, IO), u64::MAX);
    }

    #[test]
    fn mul_div_exact_on_powers_of_two() {
        let a = default_arith();
        for i in 0..32 {
            for j in 0..32 {
                assert_eq!(a.mul(1 << i, 1 << j), 1 << (i + j));
                assert_eq!(a.div(1 << i, 1 << j, 32), Some(1u64 << (32 + i - j)));
                assert_eq!(a.mul_direct(1 << i, 1 << j), 1 << (i + j));
            }
        }
        assert_eq!(a.mul(0, 7), 0);
        assert_eq!(a.div(7, 0, 0), None);
        assert_eq!(a.div_direct(0, 7, 0), Some(0));
    }

    #[test]
    fn invalid_params_are_errors() {
        assert!(Log2Unit::new(Log2Params { q: 17, frac: 20 }).is_err());
        assert!(Exp2Unit::new(Exp2Params { q: 8, frac: 4 }).is_err());
        assert!(DirectUnit::new(DirectParams { q: 7, frac: 16 }).is_err());
    }
}
