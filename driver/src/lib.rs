//! The SmartNIC driver: register access, discovery, readout and snapshot files.
//!
//! | module | what |
//! |---|---|
//! | [`access`] | the `RegisterAccess` trait every back end implements, `AccessError`, the `Counting` wrapper |
//! | [`backend`] | `FileBar`, `SysfsBar`, `VfioBar` and why opening one failed (`OpenError`) |
//! | [`dma`] | the card-to-host channels by DMA: `DmaMemory`, the XDMA engine driven by its registers (`XdmaC2h`) or through the xdma driver's devices (`XdmaCdev`) |
//! | [`discover`] | SmartNICs in sysfs: BDF, bound driver, IOMMU group, BAR 0 size, the steps to bind vfio-pci |
//! | [`blocks`] | the register-block chain walked and decoded: firmware ID, sketch geometries, the per-switch block, windows (`DeviceMap`) |
//! | [`config`] | the per-switch half's mode and thresholds, written and read back |
//! | [`readout`] | the readout protocol: swap, read the idle bank, check it, clear it, pack it into a `Snapshot` |
//! | [`emulated`] | `EmulatedNic`: a register-level test double of the BAR with fault hooks (not the simulated NIC) |
//! | [`service`] | register access over a byte stream: `serve` (device side) and `StreamBar` (client), how the CLI reaches `smartnic-sim` |
//! | [`snapshot`] | the snapshot file codec (layout in its module docs) |
//!
//! See `driver/README.md` for the back ends, binding a board to vfio-pci and the readout cost.
pub use smartnic_contract as contract;
pub mod access;
pub mod backend;
pub mod blocks;
pub mod config;
pub mod discover;
pub mod dma;
pub mod emulated;
pub mod readout;
pub mod service;
pub mod snapshot;
