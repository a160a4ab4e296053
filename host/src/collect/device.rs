//! One device's epochs: open it (again, after it went away), swap and read it out through
//! the driver's readout ([`read_snapshot`], as `smartnic device readout` does), and read its
//! frame counters; every outcome, a failure included, is an [`Outcome`] for the sinks.
//!
//! A failed open or readout drops the device: the next epoch opens it anew and discovers
//! its register map again, since a card that went away comes back from reset (epoch 0, its
//! map possibly from another bitstream), and a simulator that died is a new process.

use smartnic_contract::regs::stats;
use smartnic_driver::access::{AccessError, RegisterAccess};
use smartnic_driver::blocks::DeviceMap;
use smartnic_driver::readout::{read_snapshot, ReadoutConfig, ReadoutError, ReadoutStats};
use smartnic_driver::snapshot::Snapshot;
use std::time::{Duration, Instant};

/// A device as the collector reads it: its registers, and what happens before each readout.
pub trait Device: RegisterAccess {
    /// Runs before each readout: nothing for a board (traffic arrives on its own); the
    /// simulated NIC replays its trace's next slice ([`super::sim::SimTraffic`]).
    fn before_readout(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
}

impl Device for Box<dyn RegisterAccess> {}

/// A device opened for the collector, with the readout settings it needs.
pub struct Opened {
    pub dev: Box<dyn Device>,
    pub readout: ReadoutConfig,
}

/// Opens a device by its `--device` spec (the CLI's opener; tests give their own).
pub type Opener = dyn Fn(&str) -> anyhow::Result<Opened> + Send + Sync;

/// Why an epoch produced no snapshot; the `reason` label of
/// `smartnic_readout_failures_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The device could not be opened or its register map discovered.
    Open,
    /// A register read all ones where it cannot: the device went away mid-readout.
    Gone,
    /// Any other readout error (timeout, torn snapshot, broken window).
    Readout,
}

impl Failure {
    pub fn name(self) -> &'static str {
        match self {
            Failure::Open => "open",
            Failure::Gone => "gone",
            Failure::Readout => "readout",
        }
    }
}

/// The NIC's frame counters since reset (its statistics block).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Frames {
    pub frames: u64,
    pub sketched: u64,
    pub bytes: u64,
    pub non_ip: u64,
    pub malformed: u64,
}

/// What one epoch of one device gave.
#[derive(Debug)]
pub struct Outcome {
    /// The snapshot, when the readout succeeded.
    pub snapshot: Option<Snapshot>,
    pub stats: Option<ReadoutStats>,
    /// Why there is no snapshot, and the error's text.
    pub failure: Option<(Failure, String)>,
    /// Frame counters read after the readout (none without a statistics block).
    pub frames: Option<Frames>,
    /// How long the open (when one was needed) and the readout took.
    pub elapsed: Duration,
}

impl Outcome {
    /// The device answered this epoch.
    pub fn up(&self) -> bool {
        self.failure.is_none()
    }
}

/// One device's state between epochs.
pub struct DeviceLoop {
    spec: String,
    open: Option<(Opened, DeviceMap)>,
}

impl DeviceLoop {
    pub fn new(spec: &str) -> Self {
        DeviceLoop { spec: spec.to_owned(), open: None }
    }

    pub fn spec(&self) -> &str {
        &self.spec
    }

    /// One epoch: opens the device if needed, swaps banks and reads the idle one out.
    pub fn epoch(&mut self, opener: &Opener) -> Outcome {
        let start = Instant::now();
        let fail = |f: Failure, e: String| Outcome {
            snapshot: None,
            stats: None,
            failure: Some((f, e)),
            frames: None,
            elapsed: start.elapsed(),
        };
        if self.open.is_none() {
            match self.connect(opener) {
                Ok(o) => self.open = Some(o),
                Err(e) => return fail(Failure::Open, format!("{e:#}")),
            }
        }
        let (opened, map) = self.open.as_mut().expect("opened above");
        if let Err(e) = opened.dev.before_readout() {
            self.open = None;
            return fail(Failure::Readout, format!("{e:#}"));
        }
        match read_snapshot(&mut *opened.dev, map, &opened.readout) {
            Ok((snap, st)) => {
                let frames = read_frames(&mut *opened.dev, map);
                if frames.is_err() {
                    // The snapshot is whole; the device is opened anew next epoch.
                    self.open = None;
                }
                Outcome {
                    snapshot: Some(snap),
                    stats: Some(st),
                    failure: None,
                    frames: frames.ok().flatten(),
                    elapsed: start.elapsed(),
                }
            }
            Err(e) => {
                self.open = None;
                let kind = if is_gone(&e) { Failure::Gone } else { Failure::Readout };
                fail(kind, format!("readout failed, no snapshot: {e}"))
            }
        }
    }

    fn connect(&self, opener: &Opener) -> anyhow::Result<(Opened, DeviceMap)> {
        let mut o = opener(&self.spec)?;
        let map =
            DeviceMap::discover(&mut *o.dev).map_err(|e| anyhow::anyhow!("device {}: {e}", self.spec))?;
        Ok((o, map))
    }
}

/// A readout that failed because the device reads all ones.
fn is_gone(e: &ReadoutError) -> bool {
    matches!(e, ReadoutError::Access(AccessError::DeviceGone { .. }))
}

/// The statistics block's counters (none when the bitstream has no such block).
fn read_frames(dev: &mut dyn Device, map: &DeviceMap) -> Result<Option<Frames>, AccessError> {
    let Some(base) = map.stats else { return Ok(None) };
    Ok(Some(Frames {
        frames: dev.read64(base + stats::FRAMES)?,
        sketched: dev.read64(base + stats::SKETCHED)?,
        bytes: dev.read64(base + stats::BYTES)?,
        non_ip: dev.read64(base + stats::NON_IP)?,
        malformed: dev.read64(base + stats::MALFORMED)?,
    }))
}
