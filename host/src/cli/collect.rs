//! `smartnic collect`: the collector daemon ([`crate::collect`]): every period, swap and
//! read out each `--device`, keep the `--keep` newest snapshots of each under `--dir`, and
//! serve the Prometheus / OpenMetrics metrics at `http://LISTEN/metrics` until SIGTERM or
//! SIGINT; with `--ipfix` and `--parquet`, export every epoch as well.

use super::size::parse_duration;
use crate::collect::device::Opened;
use crate::collect::sim::SimTraffic;
use crate::collect::{http::Endpoint, metrics::Metrics, Config, Services};
use anyhow::Context;
use clap::Args;
use smartnic_contract::snapshot::source;
use smartnic_driver::readout::ReadoutConfig;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct CollectArgs {
    /// A device to read out: vfio:BDF (or a bare BDF), sysfs:BDF, file:PATH or sim[:TRACE];
    /// repeat for several (each has its own thread and directory).
    #[arg(long, short, required = true)]
    pub device: Vec<String>,
    /// The epoch period: swap and read out this often (e.g. 5s, SketchINT's period).
    #[arg(long, value_parser = parse_duration, default_value = "5s")]
    pub every: Duration,
    /// Snapshots go to DIR/<device>/ (the spec with `:` and `/` as `_`).
    #[arg(long)]
    pub dir: PathBuf,
    /// Snapshots kept per device (the oldest beyond this are removed).
    #[arg(long, default_value_t = 12)]
    pub keep: usize,
    /// Address of the /metrics endpoint (port 0: any free port, printed at start).
    #[arg(long, default_value = "127.0.0.1:9464")]
    pub listen: SocketAddr,
    /// Flows published per epoch and device (the key table's largest, `smartnic_flow_packets`).
    #[arg(long, default_value_t = 10)]
    pub top_k: usize,
    /// Per-flow series per device at most (flows, then two per switch); the rest is counted
    /// in `smartnic_flow_series_dropped`.
    #[arg(long, default_value_t = 100)]
    pub max_series: usize,
    /// With --device sim:TRACE: IP packets of the trace the simulated NIC receives each epoch
    /// (its clock runs only when driven), until the trace is done.
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    pub sim_packets: u64,
    /// Also export every epoch as IPFIX (RFC 7011) over UDP to this collector, e.g.
    /// 127.0.0.1:4739; each device is its own observation domain (1, 2, ... in --device order).
    #[arg(long, value_name = "HOST:PORT")]
    pub ipfix: Option<SocketAddr>,
    /// Largest IPFIX message (UDP payload) in bytes.
    #[arg(long, default_value_t = crate::export::ipfix::DEFAULT_MTU, value_name = "BYTES")]
    pub ipfix_mtu: usize,
    /// Also write every epoch as Parquet tables (flows, hops, health) under this directory,
    /// for `smartnic fleet query` and Spark; a failed readout still writes its health row.
    #[arg(long, value_name = "DIR")]
    pub parquet: Option<PathBuf>,
}

/// Opens a device as `smartnic device` does; `sim:TRACE` replays `sim_packets` IP packets of
/// its trace each epoch, with the simulator's longer readout timeouts.
fn open(spec: &str, sim_packets: u64) -> anyhow::Result<Opened> {
    if let Some(trace) = spec.strip_prefix("sim:") {
        let bar = crate::simulator::spawn_sim(Some(Path::new(trace)))?;
        let dev = Box::new(SimTraffic::new(bar, sim_packets));
        return Ok(Opened { dev, readout: crate::simulator::sim_readout_config() });
    }
    let readout = if spec == "sim" {
        crate::simulator::sim_readout_config()
    } else {
        ReadoutConfig { source: source::HARDWARE, ..ReadoutConfig::default() }
    };
    Ok(Opened { dev: Box::new(super::device::open(spec)?), readout })
}

/// Registers SIGTERM and SIGINT: the first sets the stop flag, a second SIGINT exits at once.
fn stop_on_signals() -> anyhow::Result<Arc<AtomicBool>> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let stop = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register_conditional_shutdown(SIGINT, 130, stop.clone())
        .context("cannot handle SIGINT")?;
    for sig in [SIGTERM, SIGINT] {
        signal_hook::flag::register(sig, stop.clone()).context("cannot handle SIGTERM/SIGINT")?;
    }
    Ok(stop)
}

pub fn run(args: &CollectArgs, json: bool) -> anyhow::Result<()> {
    let cfg = Config {
        devices: args.device.clone(),
        every: args.every,
        dir: args.dir.clone(),
        keep: args.keep,
        top_k: args.top_k,
        max_series: args.max_series,
        json,
        ipfix: args.ipfix,
        ipfix_mtu: args.ipfix_mtu,
        parquet: args.parquet.clone(),
    };
    anyhow::ensure!(args.sim_packets > 0, "--sim-packets must be at least 1");
    crate::collect::prepare(&cfg)?;
    let stop = stop_on_signals()?;
    let metrics = Arc::new(Metrics::new());
    let endpoint = Endpoint::start(args.listen, metrics.clone())?;
    let at = format!("http://{}/metrics", endpoint.addr);
    if json {
        println!("{}", serde_json::json!({"event": "listening", "metrics": at, "dir": cfg.dir}));
    } else {
        eprintln!("collect: metrics at {at}; snapshots under {}", cfg.dir.display());
    }
    let sim_packets = args.sim_packets;
    let services = Services {
        opener: Arc::new(move |spec: &str| open(spec, sim_packets)),
        metrics,
        stop,
        log: Arc::new(move |line: &str| if json { println!("{line}") } else { eprintln!("{line}") }),
    };
    let done = crate::collect::run(&cfg, &services);
    endpoint.stop();
    done.map(|_| ())
}
