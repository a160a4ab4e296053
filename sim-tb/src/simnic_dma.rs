//! The simulated NIC read out by DMA: its card-to-host channels end in the board's DMA
//! engine (the behavioural XDMA model, [`crate::xdma`]) and the driver's own `XdmaC2h`
//! programs that engine through its registers, exactly as on the board. The NIC is shared
//! ([`SharedNic`]) between the two register spaces the driver sees: the core's BAR
//! ([`NicBar`]) and the engine's ([`NicDmaBar`], whose every access lasts
//! [`DMA_ACCESS_CLOCKS`] core clocks, the NIC running meanwhile). [`EngineBar`] is that
//! engine BAR for any simulated device with the model attached ([`DmaHost`]): the board
//! benches use it too.
//!
//! ```no_run
//! use smartnic_driver::blocks::DeviceMap;
//! use smartnic_driver::readout::{read_snapshot, ReadoutConfig};
//! use smartnic_sim_tb::simnic::SimNic;
//! use smartnic_sim_tb::simnic_dma::dma_nic;
//! let (nic, mut dev) = dma_nic(SimNic::new().unwrap()).unwrap();
//! let map = DeviceMap::discover(&mut dev).unwrap();
//! let (snap, stats) = read_snapshot(&mut dev, &map, &ReadoutConfig::default()).unwrap();
//! ```
use crate::simnic::SimNic;
use smartnic_driver::access::{AccessError, RegisterAccess};
use smartnic_driver::dma::{open_channels, HeapDma, WithDma, XdmaC2h};
use std::cell::RefCell;
use std::rc::Rc;

/// The simulated NIC, shared by the core's BAR and the DMA engine's registers.
pub type SharedNic = Rc<RefCell<SimNic>>;

/// Core clocks one access to the engine's registers lasts (a PCIe round trip is far longer;
/// the figure only paces the simulation while the driver polls).
pub const DMA_ACCESS_CLOCKS: u64 = 8;

/// The core's BAR of a [`SharedNic`].
pub struct NicBar(pub SharedNic);

impl RegisterAccess for NicBar {
    fn bar_size(&self) -> u64 {
        self.0.borrow().bar_size()
    }
    fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
        self.0.borrow_mut().read32(offset)
    }
    fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
        self.0.borrow_mut().write32(offset, value)
    }
}

/// A simulated device whose card-to-host channels end in the XDMA model.
pub trait DmaHost {
    /// Runs the device's core clock for `clocks` clocks.
    fn run_core(&mut self, clocks: u64);
    /// The model's registers.
    fn engine(&mut self) -> &mut dyn RegisterAccess;
}

impl DmaHost for SimNic {
    fn run_core(&mut self, clocks: u64) {
        self.run(clocks);
    }
    fn engine(&mut self) -> &mut dyn RegisterAccess {
        self.xdma().expect("the NIC has its DMA engine attached")
    }
}

/// The DMA engine's registers of a shared device: every access lasts [`DMA_ACCESS_CLOCKS`]
/// core clocks, the device running meanwhile.
pub struct EngineBar<H: DmaHost>(pub Rc<RefCell<H>>);

impl<H: DmaHost> EngineBar<H> {
    fn access<T>(&mut self, f: impl FnOnce(&mut dyn RegisterAccess) -> T) -> T {
        let mut h = self.0.borrow_mut();
        h.run_core(DMA_ACCESS_CLOCKS);
        f(h.engine())
    }
}

impl<H: DmaHost> RegisterAccess for EngineBar<H> {
    fn bar_size(&self) -> u64 {
        smartnic_driver::contract::xdma::REG_SPACE
    }
    fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
        self.access(|e| e.read32(offset))
    }
    fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
        self.access(|e| e.write32(offset, value))
    }
}

/// The DMA engine's registers of a [`SharedNic`] (see the module docs).
pub type NicDmaBar = EngineBar<SimNic>;

/// The driver's view of a NIC read out by DMA: the core's BAR with the engine's channels.
pub type DmaNic = WithDma<NicBar, XdmaC2h<NicDmaBar, HeapDma>>;

/// Attaches the DMA engine to `nic` and opens its channels with the driver's `XdmaC2h`
/// (`dma::open_channels`, as the CLI does on a board); returns the shared
/// NIC (for the test's own use: frames, clocks) and the device the driver reads.
pub fn dma_nic(mut nic: SimNic) -> Result<(SharedNic, DmaNic), String> {
    let mem = HeapDma::new();
    nic.attach_xdma(mem.clone());
    let shared = Rc::new(RefCell::new(nic));
    let mut bar = NicBar(shared.clone());
    let dma = open_channels(&mut bar, EngineBar(shared.clone()), mem)
        .map_err(|e| format!("the simulated NIC: {e}"))?;
    Ok((shared, WithDma { bar, dma }))
}
