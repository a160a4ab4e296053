//! `smartnic device list | status | readout`: find a SmartNIC, show what its registers say, and
//! read its sketches out into snapshot files.
//!
//! A device is named by `--device SPEC`:
//! - `vfio:BDF` or a bare `BDF` such as `0000:03:00.0`: VFIO through `/dev/vfio` (the safe
//!   default: IOMMU-protected, no root-owned mmap);
//! - `sysfs:BDF`: `/sys/bus/pci/devices/BDF/resource0` mapped directly (root only);
//! - `file:PATH`: a BAR image in a regular file (tests, fault injection, offline analysis);
//! - `sim` or `sim:TRACE`: the simulated NIC (Verilator model of the core), optionally with
//!   a trace loaded into its packet source.

use super::size::parse_duration;
use anyhow::{bail, Context};
use clap::Args;
use serde::Serialize;
use smartnic_contract::regs::{epoch, stats};
use smartnic_contract::snapshot::source;
use smartnic_driver::access::RegisterAccess;
#[cfg(feature = "vfio")]
use smartnic_driver::backend::VfioBar;
use smartnic_driver::backend::{FileBar, SysfsBar};
use smartnic_driver::blocks::DeviceMap;
use smartnic_driver::discover;
use smartnic_driver::readout::{read_snapshot_to_file, ReadoutConfig, ReadoutStats};
use smartnic_driver::snapshot::Snapshot;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Time one non-posted PCIe read takes, for the readout cost estimate.
const READ_ROUND_TRIP: Duration = Duration::from_micros(1);

#[derive(Debug, Args)]
pub struct DevicesArgs {
    /// Root of the sysfs tree to search.
    #[arg(long, default_value = "/sys")]
    pub sysfs: PathBuf,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The device: vfio:BDF (or a bare BDF), sysfs:BDF, file:PATH, or sim[:TRACE].
    #[arg(long, short)]
    pub device: String,
}

#[derive(Debug, Args)]
pub struct ReadoutArgs {
    /// The device: vfio:BDF (or a bare BDF), sysfs:BDF, file:PATH, or sim[:TRACE].
    #[arg(long, short)]
    pub device: String,
    /// Snapshot file; with --every, a directory of epoch-NNNNNN.snap files.
    #[arg(long, short)]
    pub output: PathBuf,
    /// Swap and read out periodically (e.g. 5s, SketchINT's period); Ctrl-C stops.
    #[arg(long, value_parser = parse_duration)]
    pub every: Option<Duration>,
    /// With --every: stop after this many snapshots (0 = until interrupted).
    #[arg(long, default_value_t = 0)]
    pub count: u64,
}

/// Opens the device a `--device` spec names.
pub fn open(spec: &str) -> anyhow::Result<Box<dyn RegisterAccess>> {
    let (kind, rest) = spec
        .split_once(':')
        .filter(|(k, _)| ["vfio", "sysfs", "file", "sim"].contains(k))
        .unwrap_or(("vfio", spec));
    if spec == "sim" {
        return Ok(Box::new(super::sim::spawn_sim(None)?));
    }
    Ok(match kind {
        "sim" => Box::new(super::sim::spawn_sim(Some(Path::new(rest)))?),
        "file" => Box::new(FileBar::open(Path::new(rest)).with_context(|| format!("device {spec}"))?),
        "sysfs" => Box::new(
            SysfsBar::open(&discover::normalize_bdf(rest)?).with_context(|| format!("device {spec}"))?,
        ),
        _ => open_vfio(spec, rest)?,
    })
}

/// The VFIO back end, in builds that have it (cargo feature `vfio`, on by default).
#[cfg(feature = "vfio")]
fn open_vfio(spec: &str, bdf: &str) -> anyhow::Result<Box<dyn RegisterAccess>> {
    let bar = VfioBar::open(&discover::normalize_bdf(bdf)?).with_context(|| format!("device {spec}"))?;
    Ok(Box::new(bar))
}

/// Builds without VFIO say so, and what to use instead.
#[cfg(not(feature = "vfio"))]
fn open_vfio(spec: &str, _bdf: &str) -> anyhow::Result<Box<dyn RegisterAccess>> {
    anyhow::bail!(
        "device {spec}: this smartnic was built without the VFIO back end (cargo feature `vfio`); \
         use sysfs:BDF, or rebuild with default features"
    )
}

pub fn devices(args: &DevicesArgs, json: bool) -> anyhow::Result<()> {
    let found = discover::smartnics(&args.sysfs)?;
    if json {
        let rows: Vec<_> = found
            .iter()
            .map(|c| {
                serde_json::json!({
                    "bdf": c.bdf, "vendor": c.vendor, "device": c.device, "driver": c.driver,
                    "iommu_group": c.iommu_group, "bar0_size": c.bar0_size, "vfio_ready": c.vfio_ready(),
                })
            })
            .collect();
        return super::print_json(&rows);
    }
    if found.is_empty() {
        println!(
            "no SmartNIC found under {} (PCI {:04x}:{:04x})",
            args.sysfs.display(),
            smartnic_contract::regs::PCI_VENDOR_ID,
            smartnic_contract::regs::PCI_DEVICE_ID
        );
        println!("use --device file:PATH for a BAR image; `smartnic demo` runs without hardware");
    }
    for c in &found {
        let driver = c.driver.as_deref().unwrap_or("none");
        let group = c.iommu_group.map_or("none".into(), |g| g.to_string());
        println!("{}  driver {driver}  IOMMU group {group}", c.bdf);
        if !c.vfio_ready() {
            println!("  {}", c.next_steps().replace('\n', "\n  "));
        }
    }
    Ok(())
}

#[derive(Debug, Serialize)]
struct Status {
    firmware: String,
    epoch: u32,
    sequence: u32,
    active_packets: u64,
    idle_packets: u64,
    frames: Option<[u64; 5]>,
    blocks: String,
}

pub fn status(args: &StatusArgs, json: bool) -> anyhow::Result<()> {
    let mut dev = open(&args.device)?;
    let map = DeviceMap::discover(&mut dev).with_context(|| format!("device {}", args.device))?;
    let e = map.epoch;
    let counters = |dev: &mut Box<dyn RegisterAccess>, base: u32| -> anyhow::Result<[u64; 5]> {
        let mut out = [0u64; 5];
        for (o, off) in out.iter_mut().zip([
            stats::FRAMES,
            stats::SKETCHED,
            stats::BYTES,
            stats::NON_IP,
            stats::MALFORMED,
        ]) {
            *o = dev.read64(base + off)?;
        }
        Ok(out)
    };
    let st = Status {
        firmware: format!(
            "device {:#x} version {}.{} build {} git {:08x}",
            map.firmware.device,
            map.firmware.version >> 16,
            map.firmware.version & 0xFFFF,
            map.firmware.build_time,
            map.firmware.git_hash
        ),
        epoch: dev.read32(e + epoch::EPOCH)?,
        sequence: dev.read32(e + epoch::SEQUENCE)?,
        active_packets: dev.read64(e + epoch::ACTIVE_PACKETS)?,
        idle_packets: dev.read64(e + epoch::IDLE_PACKETS)?,
        frames: map.stats.map(|s| counters(&mut dev, s)).transpose()?,
        blocks: map.describe(),
    };
    if json {
        return super::print_json(&st);
    }
    println!("{}\nfirmware  {}", args.device, st.firmware);
    println!(
        "epoch     {} (sequence {}), {} packets active, {} in the idle bank",
        st.epoch, st.sequence, st.active_packets, st.idle_packets
    );
    if let Some([frames, sketched, bytes, non_ip, malformed]) = st.frames {
        println!(
            "frames    {frames} ({sketched} sketched, {non_ip} non-IP, {malformed} malformed), {bytes} bytes"
        );
    }
    print!("{}", st.blocks);
    Ok(())
}

#[derive(Debug, Serialize)]
struct ReadoutReport {
    path: String,
    epoch: u64,
    packets: u64,
    reads: u64,
    writes: u64,
    bytes_read: u64,
    retries: u32,
    elapsed_ms: f64,
    mmio_ms_at_1us_per_read: f64,
}

pub fn readout(args: &ReadoutArgs, json: bool) -> anyhow::Result<()> {
    let mut dev = open(&args.device)?;
    let map = DeviceMap::discover(&mut dev).with_context(|| format!("device {}", args.device))?;
    let cfg = if args.device.starts_with("sim") {
        super::sim::sim_readout_config()
    } else {
        ReadoutConfig { source: source::HARDWARE, ..ReadoutConfig::default() }
    };
    let Some(period) = args.every else {
        let r = read_one(&mut dev, &map, &cfg, &args.output)?;
        return show(&r, json);
    };
    if period.is_zero() {
        bail!("--every must be longer than zero");
    }
    std::fs::create_dir_all(&args.output)
        .with_context(|| format!("cannot create {}", args.output.display()))?;
    let mut n = 0u64;
    loop {
        let next = std::time::Instant::now() + period;
        std::thread::sleep(next.saturating_duration_since(std::time::Instant::now()));
        let f = crate::epoch_file::read_epoch_file(&mut dev, &map, &cfg, &args.output)?;
        show(&readout_report(&f.path, &f.snapshot, &f.stats), json)?;
        n += 1;
        if args.count != 0 && n >= args.count {
            return Ok(());
        }
    }
}

fn read_one(
    dev: &mut Box<dyn RegisterAccess>,
    map: &DeviceMap,
    cfg: &ReadoutConfig,
    path: &Path,
) -> anyhow::Result<ReadoutReport> {
    let (snap, st): (_, ReadoutStats) =
        read_snapshot_to_file(dev, map, cfg, path).context("readout failed; no snapshot was written")?;
    Ok(readout_report(path, &snap, &st))
}

/// What `readout` prints about one snapshot written to `path`.
fn readout_report(path: &Path, snap: &Snapshot, st: &ReadoutStats) -> ReadoutReport {
    ReadoutReport {
        path: path.display().to_string(),
        epoch: snap.epoch,
        packets: snap.packets,
        reads: st.reads,
        writes: st.writes,
        bytes_read: st.bytes_read,
        retries: st.retries,
        elapsed_ms: st.elapsed.as_secs_f64() * 1e3,
        mmio_ms_at_1us_per_read: st.mmio_time(READ_ROUND_TRIP).as_secs_f64() * 1e3,
    }
}

fn show(r: &ReadoutReport, json: bool) -> anyhow::Result<()> {
    if json {
        return super::print_json(r);
    }
    println!(
        "epoch {} ({} packets) -> {}: {} reads, {} writes, {} bytes in {:.1} ms (~{:.0} ms of MMIO at 1 us per read)",
        r.epoch, r.packets, r.path, r.reads, r.writes, r.bytes_read, r.elapsed_ms, r.mmio_ms_at_1us_per_read
    );
    Ok(())
}
