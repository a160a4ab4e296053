//! The IPFIX sink: every epoch's snapshot exported to an IPFIX collector over UDP
//! ([`crate::export::ipfix`], RFC 7011), one observation domain per device.
//!
//! The exporter's sequence numbers run on across epochs, so the collector counts any lost
//! records; an epoch without a snapshot (the device was gone) sends nothing.

use super::{EpochReport, Sink};
use crate::export::ipfix::{ExportOptions, IpfixExporter};
use std::net::SocketAddr;

/// Exports each epoch's snapshot as IPFIX flow and hop records.
pub struct IpfixSink(IpfixExporter);

impl IpfixSink {
    /// An exporter to `collector` for the device with observation domain `domain`.
    pub fn new(collector: SocketAddr, domain: u32, mtu: usize) -> anyhow::Result<Self> {
        Ok(IpfixSink(IpfixExporter::new(collector, domain, ExportOptions { mtu })?))
    }
}

impl Sink for IpfixSink {
    fn name(&self) -> &'static str {
        "ipfix"
    }

    fn publish(&mut self, report: &EpochReport) -> anyhow::Result<()> {
        if let Some(snap) = &report.outcome.snapshot {
            self.0.export_epoch(snap)?;
        }
        Ok(())
    }
}
