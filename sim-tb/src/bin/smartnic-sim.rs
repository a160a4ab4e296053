//! `smartnic-sim`: the simulated NIC as a service. It runs the Verilator model of the
//! generated core (`SimNic`) and serves its AXI4-Lite register port on stdin/stdout with the
//! driver's stream protocol (`smartnic_driver::service`), so `smartnic sim` and
//! `--device sim` read it out through exactly the driver code a board uses.
//!
//! Service commands, besides register access:
//! - `packets`: IP packets in the loaded trace;
//! - `replay N`: drive frames into the AXI-Stream port, back to back, until N more IP
//!   packets went in (non-IP and malformed frames in between go in too), then let the
//!   pipeline drain; answers `frames ip` sent so far.
//!
//! Usage: `smartnic-sim [--trace FILE.pcap]` (normally started by `smartnic`).

use smartnic::trace::frame::{parse_frame, FrameClass};
use smartnic_driver::access::{AccessError, RegisterAccess};
use smartnic_driver::service::{serve, Served};
use smartnic_sim_tb::simnic::{read_capture, SimFrame, SimNic};

/// pcap link type of Ethernet frames.
const LINKTYPE_ETHERNET: u32 = 1;

struct Service {
    nic: SimNic,
    frames: Vec<(u64, Vec<u8>)>,
    /// Whether each frame is an IP packet (what the sketches count).
    is_ip: Vec<bool>,
    next: usize,
    sent_ip: u64,
}

impl Service {
    fn replay(&mut self, n: u64) -> String {
        let mut ip = 0;
        let mut batch = Vec::new();
        while ip < n && self.next < self.frames.len() {
            let (ts, data) = &self.frames[self.next];
            batch.push(SimFrame::new(*ts, data.clone()));
            ip += self.is_ip[self.next] as u64;
            self.next += 1;
        }
        self.nic.queue(batch);
        self.nic.drain();
        self.sent_ip += ip;
        format!("{} {}", self.next, self.sent_ip)
    }
}

impl RegisterAccess for Service {
    fn bar_size(&self) -> u64 {
        self.nic.bar_size()
    }
    fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
        self.nic.read32(offset)
    }
    fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
        self.nic.write32(offset, value)
    }
    fn read_block(&mut self, offset: u32, out: &mut [u32]) -> Result<(), AccessError> {
        self.nic.read_block(offset, out)
    }
}

impl Served for Service {
    fn command(&mut self, line: &str) -> Result<String, String> {
        let parts: Vec<&str> = line.split_whitespace().collect();
        match parts.as_slice() {
            ["packets"] => Ok(self.is_ip.iter().filter(|&&ip| ip).count().to_string()),
            ["replay", n] => {
                let n: u64 = n.parse().map_err(|_| format!("`{n}` is not a packet count"))?;
                Ok(self.replay(n))
            }
            _ => Err(format!("unknown command `{line}` (known: packets, replay N)")),
        }
    }
}

fn main() {
    if let Err(e) = run() {
        eprintln!("smartnic-sim: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let frames = match args.as_slice() {
        [] => Vec::new(),
        [flag, path] if flag == "--trace" => read_capture(std::path::Path::new(path))?,
        _ => return Err("usage: smartnic-sim [--trace FILE.pcap]".into()),
    };
    let is_ip = frames
        .iter()
        .map(|(_, d)| matches!(parse_frame(LINKTYPE_ETHERNET, d), FrameClass::Ip { .. }))
        .collect();
    let mut nic = SimNic::new()?;
    nic.record_sketched(false);
    let mut svc = Service { nic, frames, is_ip, next: 0, sent_ip: 0 };
    serve(&mut svc, std::io::stdin().lock(), std::io::stdout()).map_err(|e| format!("service connection: {e}"))
}
