//! `smartnic device list | status | configure | readout`: find a SmartNIC, show what its
//! registers say, set its per-switch half's mode and thresholds, and read its sketches out
//! into snapshot files.
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
use smartnic_contract::geometry::InsertMode;
use smartnic_contract::lut::Log2Params;
use smartnic_contract::per_switch::{InflateRule, DEFAULT_TABLE_THRESHOLD};
use smartnic_contract::regs::{epoch, stats};
use smartnic_contract::snapshot::source;
use smartnic_driver::access::RegisterAccess;
#[cfg(feature = "vfio")]
use smartnic_driver::backend::VfioBar;
use smartnic_driver::backend::{FileBar, SysfsBar};
use smartnic_driver::blocks::{DeviceMap, PerSwitchConfig};
use smartnic_driver::config::{read_per_switch_config, write_per_switch_config};
use smartnic_driver::discover;
use smartnic_driver::readout::{read_snapshot_to_file, ReadoutConfig, ReadoutPath, ReadoutStats, RecordsVia};
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
pub struct ConfigureArgs {
    /// The device: vfio:BDF (or a bare BDF), sysfs:BDF, file:PATH, or sim[:TRACE].
    #[arg(long, short)]
    pub device: String,
    /// The latency tower's insertion mode: cm or acu.
    #[arg(long, value_parser = parse_mode, value_name = "cm|acu", long_help = mode_help(),
          help = format!("The latency tower's insertion mode: cm or acu [reset: {}]", reset_mode()))]
    pub mode: Option<InsertMode>,
    /// Delta_l: a hop is inflated when its latency exceeds RATIO times its (flow, switch) average.
    #[arg(long, value_parser = super::sketch::parse_ratio, value_name = "RATIO", long_help = ratio_help(),
          help = format!("Delta_l: a hop is inflated when its latency exceeds RATIO times its (flow, \
                          switch) average [reset: {}]", sketchint_ratio()))]
    pub inflate_ratio: Option<u32>,
    /// Delta_h: a flow whose estimate is strictly above N packets enters the flow-key table.
    #[arg(long, value_name = "N", long_help = table_help(),
          help = format!("Delta_h: a flow whose estimate is strictly above N packets enters the \
                          flow-key table [reset: {DEFAULT_TABLE_THRESHOLD}]"))]
    pub table_threshold: Option<u32>,
}

/// The reset configuration's mode, as typed on the command line.
fn reset_mode() -> &'static str {
    PerSwitchConfig::nic_default().mode.name()
}

/// SketchINT's Delta_l as typed on the command line (the reset configuration's ratio,
/// [`PerSwitchConfig::nic_default`]).
fn sketchint_ratio() -> f64 {
    InflateRule::SKETCHINT_RATIO_X256 as f64 / 256.0
}

/// `--mode`'s long help (the reset value from the driver's reset configuration).
fn mode_help() -> String {
    format!(
        "The latency tower's insertion mode: cm (Count-Min: every array counts each hop, \
         SketchINT's FPGA) or acu (approximate conservative update: LightGuardian's running \
         minimum, one array after the other). cu (conservative update) needs every array's \
         read before any write, so the hardware does not implement it. Reset: {}.",
        reset_mode()
    )
}

/// `--inflate-ratio`'s long help (SketchINT's default from the contract).
fn ratio_help() -> String {
    format!(
        "Delta_l of SketchINT's inflated-latency rule: a hop whose latency exceeds RATIO times \
         the average of its (flow, switch) pair so far leaves an inflated-latency record. At \
         least 1, in steps of 1/256; the device holds log2(RATIO) with {} fraction bits \
         (INFLATE_THRESHOLD), since the NIC compares in the log domain. Reset: {} \
         (SketchINT's Delta_l).",
        Log2Params::DEFAULT.frac,
        sketchint_ratio()
    )
}

/// `--table-threshold`'s long help (the contract's default).
fn table_help() -> String {
    format!(
        "Delta_h: a packet whose flow's estimate is strictly above N packets offers the flow's \
         key and path to the flow-key table (SketchINT's tiny table of heavy flows, which the \
         per-switch heavy hitters and heavy changes read). Reset: {DEFAULT_TABLE_THRESHOLD} \
         (SketchINT's heavy-change threshold, the lower of its two, so one table serves both \
         tasks)."
    )
}

/// Parses `--mode`: the per-switch half implements CM and ACU; CU is refused with the reason.
fn parse_mode(s: &str) -> Result<InsertMode, String> {
    let name = s.trim().to_ascii_lowercase();
    match [InsertMode::Cm, InsertMode::Cu, InsertMode::Acu].into_iter().find(|m| m.name() == name) {
        Some(InsertMode::Cu) => Err("cu (conservative update) is not implemented by the per-switch \
             half's hardware (it needs every array's read before any write); use cm or acu"
            .into()),
        Some(mode) => Ok(mode),
        None => Err(format!("`{s}` is not an insertion mode of the per-switch half: cm or acu")),
    }
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
    /// Read the windows by registers even when the device can stream them (by default a
    /// bitstream with the readout-stream block and a device with a card-to-host channel,
    /// such as the simulated NIC, sends its idle bank as one stream).
    #[arg(long, conflicts_with = "stream")]
    pub registers: bool,
    /// Insist on the readout stream: fail, saying why, when the device cannot stream.
    #[arg(long)]
    pub stream: bool,
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
/// BAR 0 with the board's DMA channels (XDMA's registers on its own BAR, host buffers
/// mapped through the IOMMU), so a readout streams; without them (a bitstream without the
/// engine or the stream block) a warning, and readouts read registers.
#[cfg(feature = "vfio")]
fn open_vfio(spec: &str, bdf: &str) -> anyhow::Result<Box<dyn RegisterAccess>> {
    let mut bar = VfioBar::open(&discover::normalize_bdf(bdf)?).with_context(|| format!("device {spec}"))?;
    match vfio_channels(&mut bar) {
        Ok(dma) => Ok(Box::new(smartnic_driver::dma::WithDma { bar, dma })),
        Err(e) => {
            eprintln!("warning: device {spec}: no DMA channels ({e:#}); readouts read registers");
            Ok(Box::new(bar))
        }
    }
}

/// The DMA engine of a VFIO device: its register BAR and IOMMU-mapped buffers.
#[cfg(feature = "vfio")]
fn vfio_channels(
    bar: &mut VfioBar,
) -> anyhow::Result<smartnic_driver::dma::XdmaC2h<VfioBar, smartnic_driver::dma::VfioDma>> {
    let regs = bar.sibling(smartnic_driver::contract::xdma::DMA_BAR).context("the DMA engine's BAR")?;
    let mem = bar.dma_memory().context("DMA memory")?;
    Ok(smartnic_driver::dma::open_channels(bar, regs, mem)?)
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
    /// The per-switch half's configuration; null when the bitstream has no such half.
    per_switch: Option<PerSwitchView>,
    blocks: String,
}

/// The per-switch half's configuration as `status` and `configure` print it.
#[derive(Debug, Serialize)]
struct PerSwitchView {
    mode: &'static str,
    /// INFLATE_THRESHOLD as the device holds it.
    inflate_threshold: u32,
    /// The Delta_l that register stands for: [`ratio_of_threshold`].
    inflate_ratio: f64,
    table_threshold: u32,
}

impl From<&PerSwitchConfig> for PerSwitchView {
    fn from(c: &PerSwitchConfig) -> Self {
        PerSwitchView {
            mode: c.mode.name(),
            inflate_threshold: c.inflate_threshold,
            inflate_ratio: ratio_of_threshold(c.inflate_threshold),
            table_threshold: c.table_threshold,
        }
    }
}

/// The Delta_l an INFLATE_THRESHOLD stands for: the register is `log2(Delta_l)` with the
/// default log2 unit's fraction bits (`InflateRule::from_ratio_x256`), so the ratio is
/// `2^(threshold / 2^frac)`. The LUT log2 cuts its input's mantissa to `q` bits and rounds
/// its output, so a ratio that was set comes back up to 0.1 % below the 1/256 step it was
/// rounded to, or a hair (half a unit of the last fraction bit) above; powers of two exactly.
/// It is the ratio the NIC's check really applies.
fn ratio_of_threshold(threshold: u32) -> f64 {
    (threshold as f64 / (1u64 << Log2Params::DEFAULT.frac) as f64).exp2()
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
        per_switch: map.per_switch.as_ref().map(|p| PerSwitchView::from(&p.config)),
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
    if let Some(p) = &st.per_switch {
        println!(
            "per-switch mode {}, inflate ratio {:.3} (INFLATE_THRESHOLD {:#x}), table threshold {}",
            p.mode, p.inflate_ratio, p.inflate_threshold, p.table_threshold
        );
    }
    print!("{}", st.blocks);
    Ok(())
}

/// What `configure` prints: the configuration the device holds after any write, and the
/// registers this run wrote (empty when it only read).
#[derive(Debug, Serialize)]
struct ConfigureReport {
    #[serde(flatten)]
    config: PerSwitchView,
    written: Vec<&'static str>,
}

impl ConfigureArgs {
    /// `now` with the settings given on the command line, and the registers they change
    /// (named as the contract's register map names them).
    fn apply(&self, now: PerSwitchConfig) -> (PerSwitchConfig, Vec<&'static str>) {
        let (mut cfg, mut written) = (now, Vec::new());
        if let Some(mode) = self.mode {
            cfg.mode = mode;
            written.push("MODE");
        }
        if let Some(ratio_x256) = self.inflate_ratio {
            cfg = PerSwitchConfig::from_ratio_x256(cfg.mode, ratio_x256, cfg.table_threshold);
            written.push("INFLATE_THRESHOLD");
        }
        if let Some(n) = self.table_threshold {
            cfg.table_threshold = n;
            written.push("TABLE_THRESHOLD");
        }
        (cfg, written)
    }
}

/// `device configure`: reads the per-switch half's configuration, writes the settings given
/// (the others kept as read), and prints what the device holds after reading it back.
pub fn configure(args: &ConfigureArgs, json: bool) -> anyhow::Result<()> {
    let mut dev = open(&args.device)?;
    let at = || format!("device {}", args.device);
    let map = DeviceMap::discover(&mut dev).with_context(at)?;
    let now = read_per_switch_config(&mut dev, &map).with_context(at)?;
    let (wanted, written) = args.apply(now);
    let held = if written.is_empty() {
        now
    } else {
        write_per_switch_config(&mut dev, &map, &wanted)
            .with_context(|| format!("device {}: the configuration was not applied", args.device))?
    };
    let report = ConfigureReport { config: PerSwitchView::from(&held), written };
    if json {
        return super::print_json(&report);
    }
    print_configuration(&args.device, &report);
    Ok(())
}

/// The text form of `configure`'s report.
fn print_configuration(device: &str, r: &ConfigureReport) {
    let c = &r.config;
    if r.written.is_empty() {
        println!("{device}: per-switch half");
    } else {
        println!("{device}: wrote {}; the device holds", r.written.join(", "));
    }
    println!("mode             {}", c.mode);
    println!(
        "inflate ratio    {:.3}  (Delta_l; INFLATE_THRESHOLD {:#x} = log2 of the ratio, {} fraction bits)",
        c.inflate_ratio,
        c.inflate_threshold,
        Log2Params::DEFAULT.frac
    );
    println!(
        "table threshold  {}  (Delta_h; flows above {} packets enter the key table)",
        c.table_threshold, c.table_threshold
    );
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
    /// "stream" or "registers": how the windows came.
    via: &'static str,
    /// With the stream: its 64-bit words, and the engine's clocks and stall clocks.
    stream_words: Option<u64>,
    stream_clocks: Option<u32>,
    stream_stalls: Option<u32>,
    /// "ring" or "registers": how the records came (absent without the per-switch half).
    records_via: Option<&'static str>,
    /// 32-bit words popped over the BAR (0 from the ring).
    record_pops: u64,
    /// 64-bit words taken from the record ring (0 by registers).
    ring_words: u64,
    /// RECORD_DROPPED after the readout: records the NIC dropped since reset.
    records_dropped: Option<u32>,
    /// HOPS_REFUSED after the readout: packets whose INT hops the NIC refused since reset.
    hops_refused: Option<u32>,
}

pub fn readout(args: &ReadoutArgs, json: bool) -> anyhow::Result<()> {
    let mut dev = open(&args.device)?;
    let map = DeviceMap::discover(&mut dev).with_context(|| format!("device {}", args.device))?;
    let cfg = if args.device.starts_with("sim") {
        super::sim::sim_readout_config()
    } else {
        ReadoutConfig { source: source::HARDWARE, ..ReadoutConfig::default() }
    };
    let path = match (args.registers, args.stream) {
        (true, _) => ReadoutPath::Registers,
        (_, true) => ReadoutPath::Stream,
        _ => ReadoutPath::Auto,
    };
    let cfg = ReadoutConfig { path, ..cfg };
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
        via: if st.stream.is_some() { "stream" } else { "registers" },
        stream_words: st.stream.map(|s| s.words),
        stream_clocks: st.stream.map(|s| s.clocks),
        stream_stalls: st.stream.map(|s| s.stalls),
        records_via: st.records_via.map(|v| v.name()),
        record_pops: st.record_words,
        ring_words: st.ring_words,
        records_dropped: st.records_dropped,
        hops_refused: st.hops_refused,
    }
}

fn show(r: &ReadoutReport, json: bool) -> anyhow::Result<()> {
    if json {
        return super::print_json(r);
    }
    let how = match (r.stream_words, r.stream_clocks) {
        (Some(w), Some(c)) => format!("by stream ({w} words, {c} engine clocks), "),
        _ => "by registers, ".to_string(),
    };
    println!(
        "epoch {} ({} packets) -> {}: {how}{} reads, {} writes, {} bytes in {:.1} ms (~{:.0} ms of MMIO at 1 us per read){}",
        r.epoch,
        r.packets,
        r.path,
        r.reads,
        r.writes,
        r.bytes_read,
        r.elapsed_ms,
        r.mmio_ms_at_1us_per_read,
        records_text(r)
    );
    Ok(())
}

/// "; records by ring (N ring words), D dropped by the NIC since reset", or by registers
/// (N pops); empty without the per-switch half.
fn records_text(r: &ReadoutReport) -> String {
    let how = match r.records_via {
        Some(via) if via == RecordsVia::Ring.name() => format!("by {via} ({} ring words)", r.ring_words),
        Some(via) => format!("by {via} ({} pops)", r.record_pops),
        None => return String::new(),
    };
    let dropped =
        r.records_dropped.map_or(String::new(), |d| format!(", {d} dropped by the NIC since reset"));
    let refused = match r.hops_refused {
        Some(n) if n > 0 => format!("; {n} packets' hops refused by the NIC since reset"),
        _ => String::new(),
    };
    format!("; records {how}{dropped}{refused}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use smartnic_contract::geometry::{SuMaxGeometry, TowerGeometry};
    use smartnic_contract::key::FlowKey;
    use smartnic_contract::per_switch::{KeyTableGeometry, LatencyTowerGeometry, PerSwitchGeometry};
    use smartnic_contract::regs::layout::FirmwareInfo;
    use smartnic_contract::wire::record::{InflatedRecord, Record};
    use smartnic_driver::emulated::EmulatedNic;
    use smartnic_driver::readout::read_snapshot;

    /// The report of one readout of a small per-switch device holding two records.
    fn report(ring: bool) -> ReadoutReport {
        let p = PerSwitchGeometry {
            latency: LatencyTowerGeometry::from_cells(&[(8, 16, 4)], 0),
            table: KeyTableGeometry::with_capacity(2),
        };
        let (t, s) = (TowerGeometry::from_widths_depths(&[(8, 8)]), SuMaxGeometry::with_depth(1, 2));
        let mut nic = EmulatedNic::with_per_switch(FirmwareInfo::default(), &t, &s, &p);
        if ring {
            nic.enable_ring();
        }
        for i in 0..2u8 {
            let flow = FlowKey::from_v4([10, 0, 0, i], [10, 0, 0, 9], 1, 2, 6);
            nic.push_record(&Record::Inflated(InflatedRecord {
                epoch: 0,
                flow,
                switch_id: 3,
                latency_ns: 9,
            }));
        }
        let map = DeviceMap::discover(&mut nic).unwrap();
        let (snap, st) = read_snapshot(&mut nic, &map, &ReadoutConfig::default()).unwrap();
        readout_report(Path::new("e.snap"), &snap, &st)
    }

    /// `device readout` says how the records came, in its line and in --json.
    #[test]
    fn the_readout_report_says_how_the_records_came() {
        let r = report(true);
        assert_eq!(records_text(&r), "; records by ring (8 ring words), 0 dropped by the NIC since reset");
        let j = serde_json::to_value(&r).unwrap();
        assert_eq!(
            (j["records_via"].as_str(), j["ring_words"].as_u64(), j["record_pops"].as_u64()),
            (Some("ring"), Some(8), Some(0))
        );
        let r = report(false);
        assert_eq!(records_text(&r), "; records by registers (14 pops), 0 dropped by the NIC since reset");
        let j = serde_json::to_value(&r).unwrap();
        assert_eq!(
            (j["records_via"].as_str(), j["ring_words"].as_u64(), j["record_pops"].as_u64()),
            (Some("registers"), Some(0), Some(14))
        );
        assert_eq!(j["records_dropped"].as_u64(), Some(0));
        assert_eq!(j["hops_refused"].as_u64(), Some(0));
    }
}
