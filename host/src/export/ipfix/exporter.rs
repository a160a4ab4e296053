//! The exporting process: one UDP socket, one observation domain, its sequence number
//! carried from epoch to epoch.

use std::net::{SocketAddr, UdpSocket};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;
use smartnic_contract::FlowKey;
use smartnic_driver::snapshot::Snapshot;

use super::message::{min_mtu, Encoder, DEFAULT_MTU};
use super::record::Record;
use super::snapshot::EpochRecords;
use crate::sketch::snapshot::SectionError;

/// How the exporter sends.
#[derive(Clone, Debug)]
pub struct ExportOptions {
    /// Largest IPFIX message (UDP payload) in bytes.
    pub mtu: usize,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions { mtu: DEFAULT_MTU }
    }
}

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("an MTU of {mtu} bytes cannot be used: an IPFIX message must hold one record with its template ({min} bytes) and at most 65535 bytes")]
    Mtu { mtu: usize, min: usize },
    #[error("cannot open a UDP socket toward {collector}: {source}")]
    Socket { collector: SocketAddr, source: std::io::Error },
    #[error("sending message {message} of the epoch to {collector}: {source} (records before it were sent; the collector sees the rest as lost)")]
    Send { collector: SocketAddr, message: usize, source: std::io::Error },
    #[error("the snapshot cannot be read for export: {0}")]
    Snapshot(#[from] SectionError),
}

/// What one export sent.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ExportStats {
    pub epoch: u64,
    pub messages: usize,
    pub flow_records: usize,
    pub hop_records: usize,
    /// Bytes of the IPFIX messages (UDP payloads).
    pub bytes: usize,
    /// Sequence number of the first message (data records sent before this export).
    pub first_sequence: u32,
    /// Sequence number the next message will carry.
    pub next_sequence: u32,
    /// What the snapshot could not answer.
    pub notes: Vec<String>,
}

/// Exports epochs to one collector as one observation domain.
#[derive(Debug)]
pub struct IpfixExporter {
    socket: UdpSocket,
    collector: SocketAddr,
    encoder: Encoder,
}

impl IpfixExporter {
    /// An exporter toward `collector` for observation domain `domain`.
    pub fn new(collector: SocketAddr, domain: u32, options: ExportOptions) -> Result<Self, ExportError> {
        let encoder =
            Encoder::new(domain, options.mtu).ok_or(ExportError::Mtu { mtu: options.mtu, min: min_mtu() })?;
        let local: SocketAddr =
            if collector.is_ipv4() { ([0, 0, 0, 0], 0).into() } else { ([0u16; 8], 0).into() };
        let socket = UdpSocket::bind(local).map_err(|source| ExportError::Socket { collector, source })?;
        Ok(IpfixExporter { socket, collector, encoder })
    }

    /// Sends the records `snap` answers (the key table's flows; see
    /// [`EpochRecords::from_snapshot`]).
    pub fn export_epoch(&mut self, snap: &Snapshot) -> Result<ExportStats, ExportError> {
        self.export_snapshot(snap, None)
    }

    /// Sends the records `snap` answers for `candidates` (or the key table's flows).
    pub fn export_snapshot(
        &mut self,
        snap: &Snapshot,
        candidates: Option<&[FlowKey]>,
    ) -> Result<ExportStats, ExportError> {
        let epoch = EpochRecords::from_snapshot(snap, candidates)?;
        self.export_records(&epoch)
    }

    /// Sends an epoch's records, stamped with the current time.
    pub fn export_records(&mut self, epoch: &EpochRecords) -> Result<ExportStats, ExportError> {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let first_sequence = self.encoder.sequence();
        let messages = self.encoder.encode(&epoch.records, now as u32);
        for (i, m) in messages.iter().enumerate() {
            self.socket.send_to(&m.bytes, self.collector).map_err(|source| ExportError::Send {
                collector: self.collector,
                message: i,
                source,
            })?;
        }
        let hops = epoch.records.iter().filter(|r| matches!(r, Record::Hop { .. })).count();
        Ok(ExportStats {
            epoch: epoch.epoch,
            messages: messages.len(),
            flow_records: epoch.records.len() - hops,
            hop_records: hops,
            bytes: messages.iter().map(|m| m.bytes.len()).sum(),
            first_sequence,
            next_sequence: self.encoder.sequence(),
            notes: epoch.notes.clone(),
        })
    }

    /// The collector this exporter sends to.
    pub fn collector(&self) -> SocketAddr {
        self.collector
    }
}
