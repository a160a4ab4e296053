//! `smartnic-sim`: the simulated NIC as a service. It runs the Verilator model of the
//! generated core (`SimNic`) and serves its AXI4-Lite register port on stdin/stdout with the
//! driver's stream protocol (`smartnic_driver::service`), so `smartnic sim` and
//! `--device sim` read it out through exactly the driver code a board uses.
//!
//! The NIC's card-to-host channels are offered too: the readout stream's host buffer and the
//! record ring, so readouts come by stream and take the records from the ring.
//!
//! Every frame of the trace goes into the NIC, as a MAC would deliver it
//! (`simnic::to_ethernet`: raw-IP captures get an Ethernet header; empty records go in as
//! malformed frames).
//!
//! Service commands, besides register access:
//! - `packets`: IP packets in the loaded trace (as the software parser counts them);
//! - `replay N`: drive frames into the AXI-Stream port, back to back, until N more IP
//!   packets went in (non-IP and malformed frames in between go in too); once no IP packet
//!   is left in the trace, every remaining frame goes in as well (they belong to the last
//!   epoch). Then let the pipeline drain; answers `frames ip` sent so far.
//!
//! Usage: `smartnic-sim [--trace FILE.pcap]` (normally started by `smartnic`).

use smartnic_driver::access::{AccessError, C2hChannel, RecordRing, RegisterAccess};
use smartnic_driver::service::{serve_with, Served};
use smartnic_sim_tb::simnic::{read_trace, NicFrame, SimFrame, SimNic};

struct Service {
    nic: SimNic,
    frames: Vec<NicFrame>,
    /// Index after the trace's last IP frame (0 without IP frames).
    ip_end: usize,
    next: usize,
    sent_ip: u64,
}

impl Service {
    fn new(nic: SimNic, frames: Vec<NicFrame>) -> Self {
        let ip_end = frames.iter().rposition(|f| f.ip).map_or(0, |i| i + 1);
        Service { nic, frames, ip_end, next: 0, sent_ip: 0 }
    }

    /// Drives frames until `n` more IP packets went in, and past the last IP packet to the
    /// end of the trace; answers `frames ip` sent so far.
    fn replay(&mut self, n: u64) -> String {
        let mut ip = 0;
        let mut batch = Vec::new();
        while self.next < self.frames.len() && (ip < n || self.next >= self.ip_end) {
            let f = &self.frames[self.next];
            batch.push(SimFrame::new(f.ts_ns, f.data.clone()));
            ip += f.ip as u64;
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
    /// The simulated NIC's host buffer: readouts come by stream.
    fn c2h(&mut self) -> Option<&mut dyn C2hChannel> {
        self.nic.c2h()
    }
    /// The simulated NIC's record ring: readouts take the records from it.
    fn ring(&mut self) -> Option<&mut dyn RecordRing> {
        self.nic.ring()
    }
}

impl Served for Service {
    fn command(&mut self, line: &str) -> Result<String, String> {
        let parts: Vec<&str> = line.split_whitespace().collect();
        match parts.as_slice() {
            ["packets"] => Ok(self.frames.iter().filter(|f| f.ip).count().to_string()),
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
    let trace = match args.as_slice() {
        [] => None,
        [flag, path] if flag == "--trace" => Some(std::path::PathBuf::from(path)),
        _ => return Err("usage: smartnic-sim [--trace FILE.pcap]".into()),
    };
    // Reading the trace and building the Verilator model may take minutes: the service
    // sends keepalives meanwhile (`serve_with`), so the client's deadline only catches a
    // stall.
    let start = || -> Result<Service, String> {
        let frames = match &trace {
            Some(p) => read_trace(p)?,
            None => Vec::new(),
        };
        let mut nic = SimNic::new()?;
        nic.record_sketched(false);
        Ok(Service::new(nic, frames))
    };
    serve_with(start, std::io::stdin().lock(), std::io::stdout()).map_err(|e| e.to_string())
}
