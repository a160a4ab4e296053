//! What a run leaves on disk, for the NIC and for `scripts/p4-check`:
//!
//! ```text
//! DIR/hosts/<host>.pcapng          what the host's NIC received (ns timestamps, full frames,
//!                                  the INT shim as the last switch left it)
//! DIR/truth.json                   the ground truth ([`super::truth::Truth`])
//! DIR/switches/<sw>.in.pcapng      --switch-log: every frame the switch's ingress took
//!                                  (interface = ingress port)
//! DIR/switches/<sw>.out.pcapng     the twin's output for each forwarded one, same order
//!                                  (interface = egress port)
//! DIR/switches/<sw>.entries.txt    the switch's simple_switch_CLI commands
//! DIR/switches/<sw>.json           the same entries as runtime JSON
//! ```
//! The switch logs pair each output with its input, so a replay compares them in order:
//! an input appears when its switch dropped it at ingress (no output) or started sending
//! it. A frame lost to a full queue is in neither file (the twin forwarded it; the lab's
//! queue, which bmv2 does not model, dropped it). Both carry the payload as zeros, so every
//! frame is complete. Switch logs show the entries the run started with; a fault that
//! changes tables mid-run makes later outputs differ from a replay on those entries.

use super::engine::{Sink, SwitchIo};
use super::truth::Truth;
use crate::trace::pcapng::PcapNgWriter;
use nom::number::Endianness;
use smartnic_p4::tables::SwitchTables;
use smartnic_p4::topology::{NodeId, Topology};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// pcapng link type of Ethernet.
const LINKTYPE_ETHERNET: u16 = 1;
/// `if_tsresol` of nanoseconds (10^-9).
const TSRESOL_NS: u8 = 9;

type Writer = PcapNgWriter<BufWriter<File>>;

/// A pcapng file with `interfaces` Ethernet interfaces, ns timestamps.
fn create(path: &Path, interfaces: usize) -> io::Result<Writer> {
    let file =
        File::create(path).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    let mut w = PcapNgWriter::new(BufWriter::new(file), Endianness::Little)?;
    for _ in 0..interfaces.max(1) {
        w.add_interface(LINKTYPE_ETHERNET, 0, Some(TSRESOL_NS))?;
    }
    Ok(w)
}

/// Writes the captures of a run under a directory.
pub struct DirSink {
    hosts: Vec<Option<Writer>>,
    switch_in: Vec<Option<Writer>>,
    switch_out: Vec<Option<Writer>>,
    scratch: Vec<u8>,
    /// Frames per host, for the summary.
    pub delivered: Vec<u64>,
}

impl DirSink {
    /// Creates `dir/hosts/` (and `dir/switches/` with `switch_log`) and every host's file.
    pub fn create(dir: &Path, t: &Topology, switch_log: bool) -> io::Result<Self> {
        let hosts_dir = dir.join("hosts");
        std::fs::create_dir_all(&hosts_dir)?;
        let mut hosts: Vec<Option<Writer>> = (0..t.nodes.len()).map(|_| None).collect();
        for h in t.hosts() {
            hosts[h] = Some(create(&hosts_dir.join(format!("{}.pcapng", t.nodes[h].name)), 1)?);
        }
        let mut switch_in: Vec<Option<Writer>> = (0..t.nodes.len()).map(|_| None).collect();
        let mut switch_out: Vec<Option<Writer>> = (0..t.nodes.len()).map(|_| None).collect();
        if switch_log {
            let sw_dir = dir.join("switches");
            std::fs::create_dir_all(&sw_dir)?;
            for s in t.switches() {
                let (name, n) = (&t.nodes[s].name, t.nodes[s].ports.len());
                switch_in[s] = Some(create(&sw_dir.join(format!("{name}.in.pcapng")), n)?);
                switch_out[s] = Some(create(&sw_dir.join(format!("{name}.out.pcapng")), n)?);
            }
        }
        Ok(DirSink { hosts, switch_in, switch_out, scratch: Vec::new(), delivered: vec![0; t.nodes.len()] })
    }

    /// Flushes every file.
    pub fn finish(self) -> io::Result<()> {
        for w in self.hosts.into_iter().chain(self.switch_in).chain(self.switch_out).flatten() {
            w.into_inner()?.flush()?;
        }
        Ok(())
    }
}

/// `headers` then `zeros` zero bytes, in `scratch`.
fn full_frame<'a>(scratch: &'a mut Vec<u8>, headers: &[u8], zeros: u32) -> &'a [u8] {
    scratch.clear();
    scratch.extend_from_slice(headers);
    scratch.resize(headers.len() + zeros as usize, 0);
    scratch
}

fn write(w: &mut Writer, iface: u16, ts: u64, frame: &[u8]) -> io::Result<()> {
    w.write_epb(iface as u32, ts, frame.len() as u32, frame)
}

impl Sink for DirSink {
    fn deliver(&mut self, host: NodeId, time_ns: u64, headers: &[u8], zeros: u32) -> io::Result<()> {
        self.delivered[host] += 1;
        let frame = full_frame(&mut self.scratch, headers, zeros);
        write(self.hosts[host].as_mut().expect("a host"), 0, time_ns, frame)
    }

    fn wants_switch_log(&self) -> bool {
        self.switch_in.iter().any(Option::is_some)
    }

    fn switch_io(&mut self, switch: NodeId, io: SwitchIo<'_>) -> io::Result<()> {
        let frame = full_frame(&mut self.scratch, io.input, io.zeros);
        write(self.switch_in[switch].as_mut().expect("a switch"), io.in_port, io.in_ns, frame)?;
        if let Some((ts, port, out)) = io.output {
            let frame = full_frame(&mut self.scratch, out, io.zeros);
            write(self.switch_out[switch].as_mut().expect("a switch"), port, ts, frame)?;
        }
        Ok(())
    }
}

/// Writes `DIR/switches/<sw>.entries.txt` and `<sw>.json` for every switch.
pub fn write_entries(dir: &Path, t: &Topology, tables: &[SwitchTables]) -> io::Result<()> {
    let sw_dir = dir.join("switches");
    std::fs::create_dir_all(&sw_dir)?;
    for (s, tab) in t.switches().zip(tables) {
        let name = &t.nodes[s].name;
        std::fs::write(sw_dir.join(format!("{name}.entries.txt")), tab.cli_commands().join("\n") + "\n")?;
        let json = serde_json::to_string_pretty(&tab.runtime_json()).map_err(io::Error::other)?;
        std::fs::write(sw_dir.join(format!("{name}.json")), json + "\n")?;
    }
    Ok(())
}

/// Writes `DIR/truth.json`; returns its path.
pub fn write_truth(dir: &Path, truth: &Truth) -> io::Result<PathBuf> {
    let path = dir.join("truth.json");
    let file = BufWriter::new(File::create(&path)?);
    serde_json::to_writer(file, truth).map_err(io::Error::other)?;
    Ok(path)
}
