//! Faults: what goes wrong in the network, when, and where, written as one short string
//! each so a command line can schedule several.
//!
//! ```text
//! KIND:WHERE[:ARG...]@START[-END]
//! blackhole:SWITCH:PREFIX@T        ACL drop of everything to PREFIX (10.0.3.0/24)
//! blackhole:SWITCH:FLOW@T          ACL drop of one flow (10.0.0.2:1234>10.0.3.2:80/6)
//! loop:SWITCH:NEIGHBOUR:PREFIX@T   both route PREFIX to each other until the TTL runs out
//! path:SWITCH:NEIGHBOUR:PREFIX@T   SWITCH routes PREFIX via NEIGHBOUR only
//! drop:NODE>PEER:P@T               NODE's port towards PEER loses each packet with probability P
//! jitter:NODE>PEER:DIST@T          that port stalls before each transmission by a DIST sample
//! ```
//! A loop or path change installs PREFIX as its own route entry when the switch has no
//! entry of exactly that prefix; a longer prefix there still wins, so name an installed one
//! (`smartnic lab entries --switch SWITCH` lists them).
//! Drop and jitter apply to the packets that join the port's queue while the fault is on.
//! Times take `ns`, `us` or `ms` (`@2ms`, `@500us-1500us`); without `-END` a fault lasts to
//! the end of the run. DIST is `const:NS`, `uniform:MIN_NS:MAX_NS` or `exp:MEAN_NS`.
//!
//! Why faults change tables: a blackhole, a loop or a path change is what a bad control
//! plane does, so the lab installs it the way a control plane would (an ACL entry, a route
//! whose next hop changed) and the twins forward by the changed tables; nothing in the
//! datapath knows about faults. Drops and jitter belong to the link and port model.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use smartnic_contract::key::FlowKey;
use smartnic_p4::tables::{AclRule, NextHop, Route, SwitchTables};
use smartnic_p4::topology::{NodeId, Topology};
use smartnic_p4::topology_file::parse_delay;
use std::net::Ipv4Addr;
use std::str::FromStr;

/// What a blackhole drops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Victim {
    Prefix(Ipv4Addr, u8),
    Flow(FlowKey),
}

/// An extra stall before a transmission starts, ns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Jitter {
    Const(u64),
    Uniform(u64, u64),
    Exp(f64),
}

impl Jitter {
    pub fn sample(&self, rng: &mut ChaCha8Rng) -> u64 {
        match *self {
            Jitter::Const(ns) => ns,
            Jitter::Uniform(lo, hi) => rng.gen_range(lo..=hi),
            Jitter::Exp(mean) => (-mean * (1.0 - rng.gen::<f64>()).ln()).round() as u64,
        }
    }
}

impl FromStr for Jitter {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let parts: Vec<&str> = s.split(':').collect();
        let ns = |v: &str| v.parse::<u64>().map_err(|_| format!("`{v}` is not a number of ns"));
        match parts.as_slice() {
            ["const", n] => Ok(Jitter::Const(ns(n)?)),
            ["uniform", a, b] if ns(a)? <= ns(b)? => Ok(Jitter::Uniform(ns(a)?, ns(b)?)),
            ["exp", m] => Ok(Jitter::Exp(ns(m)? as f64)),
            _ => Err(format!(
                "jitter `{s}`: expected const:NS, uniform:MIN_NS:MAX_NS (MIN <= MAX) or exp:MEAN_NS"
            )),
        }
    }
}

/// A fault's kind and place, by node names (resolved against a topology by [`Fault::resolve`]).
#[derive(Clone, Debug, PartialEq)]
pub enum FaultKind {
    Blackhole { switch: String, victim: Victim },
    Loop { switch: String, neighbour: String, prefix: (Ipv4Addr, u8) },
    Path { switch: String, via: String, prefix: (Ipv4Addr, u8) },
    Drop { from: String, to: String, p: f64 },
    Jitter { from: String, to: String, dist: Jitter },
}

/// One scheduled fault.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    pub kind: FaultKind,
    pub start_ns: u64,
    /// `None`: to the end of the run.
    pub end_ns: Option<u64>,
    /// The text it was written as.
    pub spec: String,
}

/// A fault as the truth file records it.
#[derive(Clone, Debug, Serialize)]
pub struct FaultRecord {
    pub spec: String,
    pub kind: &'static str,
    pub start_ns: u64,
    pub end_ns: Option<u64>,
}

impl Fault {
    pub fn record(&self) -> FaultRecord {
        let kind = match self.kind {
            FaultKind::Blackhole { .. } => "blackhole",
            FaultKind::Loop { .. } => "loop",
            FaultKind::Path { .. } => "path",
            FaultKind::Drop { .. } => "drop",
            FaultKind::Jitter { .. } => "jitter",
        };
        FaultRecord { spec: self.spec.clone(), kind, start_ns: self.start_ns, end_ns: self.end_ns }
    }
}

impl FromStr for Fault {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let fail = |what: String| format!("fault `{s}`: {what}");
        let (body, when) = s.rsplit_once('@').ok_or_else(|| fail("needs @START (e.g. @2ms)".into()))?;
        let (start_ns, end_ns) = parse_window(when).map_err(fail)?;
        let (kind, rest) = body.split_once(':').ok_or_else(|| fail("expected KIND:WHERE...".into()))?;
        let kind = parse_kind(kind, rest).map_err(fail)?;
        Ok(Fault { kind, start_ns, end_ns, spec: s.to_string() })
    }
}

/// `START` or `START-END`.
fn parse_window(when: &str) -> Result<(u64, Option<u64>), String> {
    let time = |v: &str| parse_delay(v).map_err(|e| format!("time {e}"));
    match when.split_once('-') {
        None => Ok((time(when)?, None)),
        Some((a, b)) => {
            let (a, b) = (time(a)?, time(b)?);
            if b <= a {
                return Err(format!("ends at {b} ns, not after its start at {a} ns"));
            }
            Ok((a, Some(b)))
        }
    }
}

fn parse_kind(kind: &str, rest: &str) -> Result<FaultKind, String> {
    let args: Vec<&str> = rest.splitn(3, ':').collect();
    match (kind, args.as_slice()) {
        ("blackhole", [sw, victim @ ..]) if !victim.is_empty() => {
            let v = victim.join(":");
            Ok(FaultKind::Blackhole { switch: sw.to_string(), victim: parse_victim(&v)? })
        }
        ("loop", [sw, nb, prefix]) => Ok(FaultKind::Loop {
            switch: sw.to_string(),
            neighbour: nb.to_string(),
            prefix: parse_prefix(prefix)?,
        }),
        ("path", [sw, via, prefix]) => Ok(FaultKind::Path {
            switch: sw.to_string(),
            via: via.to_string(),
            prefix: parse_prefix(prefix)?,
        }),
        ("drop", [port, p]) => {
            let (from, to) = parse_port(port)?;
            let p: f64 = p.parse().map_err(|_| format!("drop probability `{p}` is not a number"))?;
            if !(0.0..=1.0).contains(&p) {
                return Err(format!("drop probability {p} must be in [0, 1]"));
            }
            Ok(FaultKind::Drop { from, to, p })
        }
        ("jitter", [port, dist @ ..]) if !dist.is_empty() => {
            let (from, to) = parse_port(port)?;
            Ok(FaultKind::Jitter { from, to, dist: dist.join(":").parse()? })
        }
        ("blackhole" | "loop" | "path" | "drop" | "jitter", _) => Err(format!(
            "wrong arguments for {kind}; expected {}",
            match kind {
                "blackhole" => "blackhole:SWITCH:PREFIX|FLOW@T",
                "loop" => "loop:SWITCH:NEIGHBOUR:PREFIX@T",
                "path" => "path:SWITCH:NEIGHBOUR:PREFIX@T",
                "drop" => "drop:NODE>PEER:P@T",
                _ => "jitter:NODE>PEER:DIST@T",
            }
        )),
        _ => Err(format!("unknown kind `{kind}` (blackhole, loop, path, drop, jitter)")),
    }
}

/// `A.B.C.D/LEN`.
pub fn parse_prefix(s: &str) -> Result<(Ipv4Addr, u8), String> {
    let bad = || format!("`{s}` is not a prefix (e.g. 10.0.3.0/24)");
    let (a, l) = s.split_once('/').ok_or_else(bad)?;
    let addr: Ipv4Addr = a.parse().map_err(|_| bad())?;
    let len: u8 = l.parse().ok().filter(|&l| l <= 32).ok_or_else(bad)?;
    let mask = smartnic_p4::tables::prefix_mask(len);
    Ok((Ipv4Addr::from(u32::from(addr) & mask), len))
}

/// A prefix, or a flow key as the tools print it.
fn parse_victim(s: &str) -> Result<Victim, String> {
    if s.contains('>') {
        return FlowKey::parse(s)
            .map(Victim::Flow)
            .ok_or_else(|| format!("`{s}` is not a flow key (e.g. 10.0.0.2:1234>10.0.3.2:80/6)"));
    }
    parse_prefix(s).map(|(a, l)| Victim::Prefix(a, l))
}

/// `NODE>PEER`.
fn parse_port(s: &str) -> Result<(String, String), String> {
    s.split_once('>')
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .ok_or_else(|| format!("`{s}` is not a port; write NODE>PEER (NODE's port towards PEER)"))
}

/// A fault placed in a topology: node IDs and ports instead of names.
#[derive(Clone, Debug, PartialEq)]
pub enum Placed {
    /// Changes the tables of these switches.
    Tables(Vec<NodeId>),
    /// Changes node's egress port `port`.
    Port { node: NodeId, port: u16 },
}

impl Fault {
    /// Checks the names against `t` and says what the fault touches.
    pub fn resolve(&self, t: &Topology) -> Result<Placed, String> {
        let fail = |what: String| format!("fault `{}`: {what}", self.spec);
        let switch = |n: &str| switch_named(t, n).map_err(fail);
        let port = |a: &str, b: &str| port_towards(t, a, b).map_err(fail);
        match &self.kind {
            FaultKind::Blackhole { switch: s, .. } => Ok(Placed::Tables(vec![switch(s)?])),
            FaultKind::Loop { switch: s, neighbour: n, .. } => {
                let (a, b) = (switch(s)?, switch(n)?);
                port(s, n)?;
                Ok(Placed::Tables(vec![a, b]))
            }
            FaultKind::Path { switch: s, via, .. } => {
                port(s, via)?;
                Ok(Placed::Tables(vec![switch(s)?]))
            }
            FaultKind::Drop { from, to, .. } | FaultKind::Jitter { from, to, .. } => {
                let (node, port) = port(from, to)?;
                Ok(Placed::Port { node, port })
            }
        }
    }

    /// Installs the fault on switch `s`'s tables (`s` is one that [`Fault::resolve`] named).
    pub fn apply(&self, t: &Topology, s: NodeId, tables: &mut SwitchTables) {
        let name = &t.nodes[s].name;
        match &self.kind {
            FaultKind::Blackhole { victim, .. } => tables.acl.push(match *victim {
                Victim::Prefix(a, l) => AclRule::prefix(a, l),
                Victim::Flow(k) => AclRule::flow(k),
            }),
            FaultKind::Loop { switch, neighbour, prefix } => {
                let other = if name == switch { neighbour } else { switch };
                route_via(t, s, other, *prefix, tables);
            }
            FaultKind::Path { via, prefix, .. } => route_via(t, s, via, *prefix, tables),
            FaultKind::Drop { .. } | FaultKind::Jitter { .. } => {}
        }
    }
}

/// Points `prefix` at `s` to the single next hop `via` (a new one-member ECMP group), as a
/// changed entry if the prefix is installed, else as a new entry (a longer prefix still wins).
fn route_via(t: &Topology, s: NodeId, via: &str, prefix: (Ipv4Addr, u8), tables: &mut SwitchTables) {
    let (_, port) = port_towards(t, &t.nodes[s].name, via).expect("checked by resolve");
    let peer = t.peer(s, port).node;
    tables.nexthops.push(NextHop { port, dmac: t.mac(peer) });
    let base = (tables.nexthops.len() - 1) as u16;
    match tables.route_mut(prefix.0, prefix.1) {
        Some(r) => (r.base, r.count) = (base, 1),
        None => {
            let reverse = tables.routes.first().is_some_and(|r| r.reverse);
            tables.routes.push(Route { prefix: prefix.0, len: prefix.1, base, count: 1, reverse })
        }
    }
}

fn switch_named(t: &Topology, name: &str) -> Result<NodeId, String> {
    match t.by_name(name) {
        Some(n) if !t.is_host(n) => Ok(n),
        Some(_) => Err(format!("`{name}` is a host, not a switch")),
        None => Err(format!("no node called `{name}` (see smartnic lab topo)")),
    }
}

/// The port of node `a` whose link goes to node `b`.
pub fn port_towards(t: &Topology, a: &str, b: &str) -> Result<(NodeId, u16), String> {
    let na = t.by_name(a).ok_or_else(|| format!("no node called `{a}` (see smartnic lab topo)"))?;
    let nb = t.by_name(b).ok_or_else(|| format!("no node called `{b}` (see smartnic lab topo)"))?;
    (0..t.nodes[na].ports.len() as u16)
        .find(|&p| t.peer(na, p).node == nb)
        .map(|p| (na, p))
        .ok_or_else(|| format!("`{a}` and `{b}` are not linked"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_syntax_round_trips_into_kinds() {
        let f: Fault = "blackhole:edge1_0:10.0.3.7/24@2ms".parse().unwrap();
        assert_eq!(
            f.kind,
            FaultKind::Blackhole {
                switch: "edge1_0".into(),
                victim: Victim::Prefix(Ipv4Addr::new(10, 0, 3, 0), 24)
            }
        );
        assert_eq!((f.start_ns, f.end_ns), (2_000_000, None));
        let f: Fault = "blackhole:e:10.0.0.2:5>10.0.3.2:80/6@1us-2us".parse().unwrap();
        assert!(matches!(f.kind, FaultKind::Blackhole { victim: Victim::Flow(_), .. }));
        assert_eq!((f.start_ns, f.end_ns), (1_000, Some(2_000)));
        let f: Fault = "jitter:a>b:uniform:10:20@0ns".parse().unwrap();
        assert_eq!(
            f.kind,
            FaultKind::Jitter { from: "a".into(), to: "b".into(), dist: Jitter::Uniform(10, 20) }
        );
        assert!(matches!("loop:a:b:10.0.0.0/8@1ms".parse::<Fault>().unwrap().kind, FaultKind::Loop { .. }));
    }

    #[test]
    fn bad_faults_name_the_fault() {
        for (s, word) in [
            ("blackhole:e:10.0.3.0/24", "@START"),
            ("drop:a>b:1.5@1ms", "probability"),
            ("drop:ab:0.5@1ms", "NODE>PEER"),
            ("flood:a@1ms", "unknown kind"),
            ("loop:a:b@1ms", "loop:SWITCH:NEIGHBOUR:PREFIX"),
            ("path:a:b:10.0.0.0/40@1ms", "not a prefix"),
            ("drop:a>b:0.1@2ms-1ms", "not after"),
            ("jitter:a>b:uniform:5:1@1ms", "MIN <= MAX"),
        ] {
            let e = s.parse::<Fault>().unwrap_err();
            assert!(e.contains(word) && e.contains(s), "{s}: {e}");
        }
    }
}
