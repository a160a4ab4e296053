//! The simulated NIC as a collector device: its clock runs only while the host drives it,
//! so a trace loaded into it (`--device sim:TRACE`) is replayed a slice per epoch, the
//! traffic a board receives on its own between readouts.

use super::device::Device;
use anyhow::Context;
use smartnic_driver::access::{AccessError, C2hChannel, RecordRing, RegisterAccess};
use smartnic_driver::service::StreamBar;

/// The simulated NIC replaying `per_epoch` IP packets of its trace before each readout,
/// until the trace is done (the last slice drives the frames after the last IP packet too).
pub struct SimTraffic {
    bar: StreamBar,
    per_epoch: u64,
    /// IP packets of the trace not replayed yet; `None` until the service was asked.
    left: Option<u64>,
}

impl SimTraffic {
    pub fn new(bar: StreamBar, per_epoch: u64) -> Self {
        SimTraffic { bar, per_epoch, left: None }
    }
}

impl Device for SimTraffic {
    fn before_readout(&mut self) -> anyhow::Result<()> {
        let left = match self.left {
            Some(n) => n,
            None => self.bar.command("packets")?.trim().parse().context("simulator `packets` answer")?,
        };
        if left == 0 && self.left.is_some() {
            return Ok(());
        }
        let n = left.min(self.per_epoch);
        self.bar.command(&format!("replay {n}")).context("replaying the trace's next packets")?;
        self.left = Some(left - n);
        Ok(())
    }
}

impl RegisterAccess for SimTraffic {
    fn bar_size(&self) -> u64 {
        self.bar.bar_size()
    }
    fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
        self.bar.read32(offset)
    }
    fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
        self.bar.write32(offset, value)
    }
    fn read_block(&mut self, offset: u32, out: &mut [u32]) -> Result<(), AccessError> {
        self.bar.read_block(offset, out)
    }
    fn c2h(&mut self) -> Option<&mut dyn C2hChannel> {
        self.bar.c2h()
    }
    fn ring(&mut self) -> Option<&mut dyn RecordRing> {
        self.bar.ring()
    }
}
