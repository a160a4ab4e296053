//! `nic`: the board's configuration as named constants, one per const generic of the board's
//! blocks ([`crate::core_top::CoreNic`], [`crate::sketch::sumax::SuMaxBankedNic`], ...).
//!
//! Stable Rust cannot group const generics into one type parameter, so a block generic over
//! a sketch takes each width and address size on its own, and an alias such as `TowerFpga`
//! would otherwise be a row of bare numbers; the core (`CoreNic`) takes no generics and uses
//! these constants directly. Here each number has a name, and each name is
//! either derived from others (`TOWER_AM`, `REGS_IW`, `REGS_NW`) or checked by the tests
//! below against the contract's geometries (`TowerGeometry::sketchint_fpga`,
//! `SuMaxGeometry::nic_default`) and the register map (`RegMap::nic_default`): changing
//! the board's geometry means changing these constants, and a test names any that disagree.
//! The blocks' `new` functions check the same again at run time.

/// TowerSketch array 0 (`TowerGeometry::sketchint_fpga`): counter bits.
pub const TOWER_W0: usize = 8;
/// TowerSketch array 0: address bits (2^16 counters).
pub const TOWER_A0: usize = 16;
/// TowerSketch array 1: counter bits.
pub const TOWER_W1: usize = 16;
/// TowerSketch array 1: address bits (2^15 counters).
pub const TOWER_A1: usize = 15;
/// TowerSketch array 2: counter bits.
pub const TOWER_W2: usize = 32;
/// TowerSketch array 2: address bits (2^14 counters).
pub const TOWER_A2: usize = 14;
/// Number of TowerSketch arrays (one readout window each).
pub const TOWER_ARRAYS: usize = 3;
/// The widest tower address: the clear sweep's counter and the readout index.
pub const TOWER_AM: usize = max(max(TOWER_A0, TOWER_A1), TOWER_A2);

/// SuMax (`SuMaxGeometry::nic_default`): flow-size cell bits.
pub const SUMAX_SW: usize = 32;
/// SuMax: delay cell bits.
pub const SUMAX_DW: usize = 16;
/// SuMax: delay cells per bucket.
pub const SUMAX_DC: usize = 8;
/// SuMax: time cell bits (max inter-arrival, last arrival).
pub const SUMAX_TW: usize = 32;
/// SuMax: bucket address bits (2^13 buckets per array).
pub const SUMAX_A: usize = 13;
/// Number of SuMax arrays (one readout window each): the pipeline's.
pub const SUMAX_ARRAYS: usize = crate::sketch::sumax::ARRAYS;

/// Latency tower arrays of the per-switch half (`LatencyTowerGeometry::nic_default`).
pub const LAT_ARRAYS: usize = crate::per_switch::latency_tower::ARRAYS;
/// Latency tower array 0: count cell bits.
pub const LAT_C0: usize = 8;
/// Latency tower array 0: sum cell bits.
pub const LAT_S0: usize = 24;
/// Latency tower array 0: address bits (2^16 buckets).
pub const LAT_A0: usize = 16;
/// Latency tower array 1: count cell bits.
pub const LAT_C1: usize = 16;
/// Latency tower array 1: sum cell bits.
pub const LAT_S1: usize = 32;
/// Latency tower array 1: address bits (2^16 buckets).
pub const LAT_A1: usize = 16;
/// Latency tower array 2: count cell bits.
pub const LAT_C2: usize = 32;
/// Latency tower array 2: sum cell bits.
pub const LAT_S2: usize = 32;
/// Latency tower array 2: address bits (2^15 buckets).
pub const LAT_A2: usize = 15;
/// The deepest latency array's address bits: its window has two words per bucket.
pub const LAT_AM: usize = max(max(LAT_A0, LAT_A1), LAT_A2);
/// Ways of the flow-key table.
pub const TABLE_WAYS: usize = crate::per_switch::key_table::WAYS;
/// Flow-key table: slot address bits per way (`KeyTableGeometry::nic_default`: 512 slots).
pub const TABLE_A: usize = 9;

/// Register file (`RegMap::nic_default`): AXI4-Lite address bits (the BAR is `2^REGS_A` bytes).
pub const REGS_A: usize = 22;
/// Register file: word-index bits (32-bit words: the byte address without its low 2 bits).
pub const REGS_IW: usize = REGS_A - 2;
/// Register file: readout windows, the tower's arrays, SuMax's, the latency tower's, the
/// table's ways.
pub const REGS_NW: usize = TOWER_ARRAYS + SUMAX_ARRAYS + LAT_ARRAYS + TABLE_WAYS;

// The core's wiring rules between these constants, checked when the crate compiles: the
// engine's clear sweep (`TOWER_AM` bits) also clears SuMax's buckets, and a window index
// reaches every tower counter.
const _: () = assert!(SUMAX_A <= TOWER_AM, "SuMax address bits exceed the clear sweep's (TOWER_AM)");
const _: () = assert!(REGS_IW >= TOWER_AM, "window index bits (REGS_IW) are fewer than TOWER_AM");
const _: () = assert!(LAT_AM <= TOWER_AM, "latency tower address bits exceed the clear sweep's (TOWER_AM)");
const _: () =
    assert!(REGS_IW > LAT_AM, "window index bits (REGS_IW) cannot reach a latency bucket's sum word");

/// `max` usable in a constant.
const fn max(a: usize, b: usize) -> usize {
    if a > b {
        a
    } else {
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::regs::{RegMap, RegisterFile, RegsNic};
    use crate::sketch::bare::{BareFpga, BareTower};
    use crate::sketch::sumax::{SuMaxBankedNic, SuMaxNic, SuMaxPipeline};
    use crate::sketch::tower::{TowerFpga, TowerPipeline};
    use crate::sketch::tower_banked::{TowerBanked, TowerBankedFpga};
    use crate::sketch::{ONE_BANK, TWO_BANKS};
    use smartnic_contract::geometry::{SuMaxGeometry, TowerGeometry};

    #[test]
    fn tower_constants_are_the_contracts_geometry() {
        let g = TowerGeometry::sketchint_fpga();
        let got: Vec<(usize, u64)> = g.arrays.iter().map(|a| (a.width as usize, a.depth as u64)).collect();
        let want = [(TOWER_W0, TOWER_A0), (TOWER_W1, TOWER_A1), (TOWER_W2, TOWER_A2)];
        let want: Vec<(usize, u64)> = want.iter().map(|&(w, a)| (w, 1u64 << a)).collect();
        assert_eq!(got, want, "(width, depth) of each tower array");
        assert_eq!(TOWER_ARRAYS, g.arrays.len());
        let widest = g.arrays.iter().map(|a| a.depth.trailing_zeros() as usize).max();
        assert_eq!(Some(TOWER_AM), widest);
    }

    #[test]
    fn sumax_constants_are_the_contracts_geometry() {
        let g = SuMaxGeometry::nic_default();
        let got = (g.size_width, g.delay_width, g.delay_cells, g.time_width, g.depth as u64);
        let want = (SUMAX_SW, SUMAX_DW, SUMAX_DC, SUMAX_TW, 1u64 << SUMAX_A);
        assert_eq!(
            (got.0 as usize, got.1 as usize, got.2 as usize, got.3 as usize, got.4),
            want,
            "(size width, delay width, delay cells, time width, depth)"
        );
        assert_eq!(SUMAX_ARRAYS, g.hashes.len());
    }

    #[test]
    fn per_switch_constants_are_the_contracts_geometry() {
        let p = smartnic_contract::per_switch::PerSwitchGeometry::nic_default();
        let got: Vec<(usize, usize, u64)> = p
            .latency
            .arrays
            .iter()
            .map(|a| (a.count_width as usize, a.sum_width as usize, a.depth as u64))
            .collect();
        let want = [(LAT_C0, LAT_S0, LAT_A0), (LAT_C1, LAT_S1, LAT_A1), (LAT_C2, LAT_S2, LAT_A2)];
        let want: Vec<_> = want.iter().map(|&(c, s, a)| (c, s, 1u64 << a)).collect();
        assert_eq!(got, want, "(count width, sum width, depth) of each latency array");
        assert_eq!(p.table.depth as u64, 1u64 << TABLE_A, "table slots per way");
        assert_eq!((p.table.ways.len(), p.latency.arrays.len()), (TABLE_WAYS, LAT_ARRAYS));
    }

    #[test]
    fn register_constants_are_the_default_map() {
        let m = RegMap::nic_default();
        assert_eq!(REGS_A, m.addr_bits(), "address bits");
        assert_eq!(REGS_NW, m.windows.len(), "readout windows");
        assert_eq!(
            (m.layout.tower_windows.len(), m.layout.sumax_windows.len()),
            (TOWER_ARRAYS, SUMAX_ARRAYS)
        );
        assert!(RegisterFile::<REGS_A, REGS_IW, REGS_NW>::new(&m).is_ok());
    }

    /// The board aliases written with numbers elsewhere are these constants: each line
    /// compiles only while the two types are the same.
    #[test]
    fn the_board_aliases_are_these_constants() {
        fn same<T>(x: Option<T>) -> Option<T> {
            x
        }
        let _: Option<RegisterFile<REGS_A, REGS_IW, REGS_NW>> = same::<RegsNic>(None);
        let _: Option<SuMaxPipeline<SUMAX_SW, SUMAX_DW, SUMAX_DC, SUMAX_TW, SUMAX_A, ONE_BANK>> =
            same::<SuMaxNic>(None);
        let _: Option<SuMaxPipeline<SUMAX_SW, SUMAX_DW, SUMAX_DC, SUMAX_TW, SUMAX_A, TWO_BANKS>> =
            same::<SuMaxBankedNic>(None);
        let _: Option<TowerPipeline<TOWER_W0, TOWER_A0, TOWER_W1, TOWER_A1, TOWER_W2, TOWER_A2, ONE_BANK>> =
            same::<TowerFpga>(None);
        let _: Option<TowerBanked<TOWER_W0, TOWER_A0, TOWER_W1, TOWER_A1, TOWER_W2, TOWER_A2, TOWER_AM>> =
            same::<TowerBankedFpga>(None);
        let _: Option<
            crate::per_switch::latency_tower::LatencyTowerPipeline<
                LAT_C0,
                LAT_S0,
                LAT_A0,
                LAT_C1,
                LAT_S1,
                LAT_A1,
                LAT_C2,
                LAT_S2,
                LAT_A2,
                TWO_BANKS,
            >,
        > = same::<crate::per_switch::latency_tower::LatencyTowerNic>(None);
        let _: Option<crate::per_switch::key_table::KeyTable<TABLE_A>> =
            same::<crate::per_switch::key_table::KeyTableNic>(None);
        let _: Option<BareTower<TOWER_W0, TOWER_A0, TOWER_W1, TOWER_A1, TOWER_W2, TOWER_A2>> =
            same::<BareFpga>(None);
    }
}
