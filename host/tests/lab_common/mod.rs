//! Shared by the lab tests: a sink that keeps every delivered frame, small hand-made
//! networks and flows, and the INT stack of a received frame as the host's parser reads it.
#![allow(dead_code)]

use smartnic::contract::key::{FlowKey, PROTO_TCP};
use smartnic::contract::shim::Hop;
use smartnic::lab::workload::Flow;
use smartnic::lab::Sink;
use smartnic::trace::{parse_frame, FrameClass};
use smartnic_p4::topology::{NodeId, Topology};

/// pcap/pcapng link type of Ethernet.
pub const ETHERNET: u32 = 1;

/// One frame a host received.
pub struct Rx {
    pub host: NodeId,
    pub time_ns: u64,
    pub frame: Vec<u8>,
}

/// Keeps every delivered frame, complete (headers and zero payload).
#[derive(Default)]
pub struct Mem {
    pub rx: Vec<Rx>,
}

impl Sink for Mem {
    fn deliver(&mut self, host: NodeId, time_ns: u64, headers: &[u8], zeros: u32) -> std::io::Result<()> {
        let mut frame = headers.to_vec();
        frame.resize(headers.len() + zeros as usize, 0);
        self.rx.push(Rx { host, time_ns, frame });
        Ok(())
    }
}

/// The flow key and INT hops of a received frame, as the host's frame parser reads them.
pub fn key_and_hops(frame: &[u8]) -> (FlowKey, Vec<Hop>) {
    match parse_frame(ETHERNET, frame) {
        FrameClass::Ip { key, hops } => (key, hops),
        other => panic!("a received frame did not parse: {other:?}"),
    }
}

/// A TCP flow between two named hosts with the given ports.
pub fn flow(t: &Topology, src: &str, dst: &str, sport: u16, bytes: u64, start_ns: u64) -> Flow {
    let (s, d) = (t.by_name(src).unwrap(), t.by_name(dst).unwrap());
    let key = FlowKey::from_v4(
        t.host_ip(s).unwrap().octets(),
        t.host_ip(d).unwrap().octets(),
        sport,
        80,
        PROTO_TCP,
    );
    Flow::new(t, (s, d), key, bytes, start_ns, 1460, 1.0).unwrap()
}

/// One switch `s` with hosts `a`, `b`, `c`; every link 10 Gb/s, 1 us.
pub fn star() -> Topology {
    let mut t = Topology::default();
    let s = t.add_switch("s");
    for h in ["a", "b", "c"] {
        let n = t.add_host(h);
        t.connect(n, s, 10_000_000_000, 1_000);
    }
    t.assign_addresses().unwrap();
    t
}

/// The switch ID of the node called `name`.
pub fn sid(t: &Topology, name: &str) -> u16 {
    t.switch_id(t.by_name(name).unwrap()).unwrap()
}
