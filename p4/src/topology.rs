//! Topologies: hosts, switches, the links between their ports, and every address the
//! control plane hands out (host IPv4 and MAC addresses, switch IDs and MACs).
//!
//! A topology is data: the fat-tree and leaf-spine builders and the file reader all produce
//! the same [`Topology`], so routing, the generated entries, the twins and the network lab
//! never care where it came from. Ports are numbered from 0 per node, in the order links
//! were added; a switch's port `p` is bmv2 port `p`.
//!
//! Addressing: every switch with hosts attached (an edge or leaf switch) owns one /24,
//! `10.E.e.0/24` with `E.e` its index among such switches (high, low byte); its `h`-th host
//! is `10.E.e.(h + 2)` (the fat-tree paper's rule generalised). MACs are locally
//! administered: `02:00:00:00:` + switch ID for switches, `02:01:` + host index for hosts.

use serde::{Deserialize, Serialize};
use std::net::Ipv4Addr;

/// Index of a node in [`Topology::nodes`].
pub type NodeId = usize;

/// What a node is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum NodeKind {
    /// An end host: its NIC sees what arrives on its one port.
    Host { ip: Ipv4Addr, mac: [u8; 6] },
    /// A switch running the switch program; `id` goes into its INT hop records.
    Switch { id: u16, mac: [u8; 6] },
}

/// One end of a link: a node's port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct End {
    pub node: NodeId,
    pub port: u16,
}

/// A full-duplex link: both directions have the same rate and propagation delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    pub a: End,
    pub b: End,
    /// Line rate, bits per second.
    pub rate_bps: u64,
    /// Propagation delay, ns.
    pub delay_ns: u64,
}

/// A node, with its ports in order: `ports[p]` is the index of the link on port `p`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Node {
    pub name: String,
    pub kind: NodeKind,
    pub ports: Vec<usize>,
}

/// A network: nodes and links.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Topology {
    pub nodes: Vec<Node>,
    pub links: Vec<Link>,
}

/// Default link rate of the builders: 10 Gb/s (the VC709's SFP+ ports).
pub const DEFAULT_RATE_BPS: u64 = 10_000_000_000;
/// Default propagation delay of the builders: 1 us (a few hundred metres of fibre and the PHYs).
pub const DEFAULT_DELAY_NS: u64 = 1_000;

/// Why a topology is not usable.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TopologyError {
    #[error("fat-tree k must be even and between 2 and 64, got {0}")]
    FatTreeK(usize),
    #[error("leaf-spine needs at least one leaf, one spine and one host per leaf")]
    LeafSpineEmpty,
    #[error("node {0:?} is named twice")]
    DuplicateName(String),
    #[error("link {index}: unknown node {name:?}")]
    UnknownNode { index: usize, name: String },
    #[error("link {index}: a node cannot be linked to itself ({name:?})")]
    SelfLink { index: usize, name: String },
    #[error("host {0:?} must have exactly one link (to a switch)")]
    HostLinks(String),
    #[error("host {0:?} is linked to another host; hosts attach to switches")]
    HostToHost(String),
    #[error("link {index}: rate must be positive")]
    ZeroRate { index: usize },
    #[error("too many switches with hosts ({0}); the /24 plan has room for 65,536")]
    TooManyEdges(usize),
    #[error("too many hosts behind switch {0:?} (at most 253 per /24)")]
    TooManyHosts(String),
    #[error("too many switches ({0}); switch IDs are 16-bit")]
    TooManySwitches(usize),
    #[error("switch {from:?} cannot reach host {to:?}: the topology is not connected")]
    Disconnected { from: String, to: String },
}

impl Topology {
    /// Adds a node and returns its ID.
    fn add(&mut self, name: String, kind: NodeKind) -> NodeId {
        self.nodes.push(Node { name, kind, ports: Vec::new() });
        self.nodes.len() - 1
    }

    /// Adds a switch; its ID is its rank among switches (0, 1, ...).
    pub fn add_switch(&mut self, name: impl Into<String>) -> NodeId {
        let id = self.switches().count() as u16;
        self.add(name.into(), NodeKind::Switch { id, mac: switch_mac(id) })
    }

    /// Adds a host with a placeholder address; [`Topology::assign_addresses`] sets it.
    pub fn add_host(&mut self, name: impl Into<String>) -> NodeId {
        self.add(name.into(), NodeKind::Host { ip: Ipv4Addr::UNSPECIFIED, mac: [0; 6] })
    }

    /// Links two nodes on their next free ports.
    pub fn connect(&mut self, a: NodeId, b: NodeId, rate_bps: u64, delay_ns: u64) {
        let ends = [a, b].map(|n| End { node: n, port: self.nodes[n].ports.len() as u16 });
        self.links.push(Link { a: ends[0], b: ends[1], rate_bps, delay_ns });
        let l = self.links.len() - 1;
        self.nodes[a].ports.push(l);
        self.nodes[b].ports.push(l);
    }

    /// The node and port at the other end of `node`'s port `port`.
    pub fn peer(&self, node: NodeId, port: u16) -> End {
        let l = &self.links[self.nodes[node].ports[port as usize]];
        if l.a == (End { node, port }) {
            l.b
        } else {
            l.a
        }
    }

    /// The link on `node`'s port `port`.
    pub fn link(&self, node: NodeId, port: u16) -> &Link {
        &self.links[self.nodes[node].ports[port as usize]]
    }

    /// Switch node IDs in order.
    pub fn switches(&self) -> impl Iterator<Item = NodeId> + '_ {
        (0..self.nodes.len()).filter(|&n| matches!(self.nodes[n].kind, NodeKind::Switch { .. }))
    }

    /// Host node IDs in order.
    pub fn hosts(&self) -> impl Iterator<Item = NodeId> + '_ {
        (0..self.nodes.len()).filter(|&n| matches!(self.nodes[n].kind, NodeKind::Host { .. }))
    }

    /// The switch ID of a switch node.
    pub fn switch_id(&self, node: NodeId) -> Option<u16> {
        match self.nodes[node].kind {
            NodeKind::Switch { id, .. } => Some(id),
            NodeKind::Host { .. } => None,
        }
    }

    /// The IPv4 address of a host node.
    pub fn host_ip(&self, node: NodeId) -> Option<Ipv4Addr> {
        match self.nodes[node].kind {
            NodeKind::Host { ip, .. } => Some(ip),
            NodeKind::Switch { .. } => None,
        }
    }

    /// The MAC address of any node.
    pub fn mac(&self, node: NodeId) -> [u8; 6] {
        match self.nodes[node].kind {
            NodeKind::Host { mac, .. } | NodeKind::Switch { mac, .. } => mac,
        }
    }

    /// The node called `name`.
    pub fn by_name(&self, name: &str) -> Option<NodeId> {
        self.nodes.iter().position(|n| n.name == name)
    }

    /// The switch a host hangs off.
    pub fn edge_of(&self, host: NodeId) -> NodeId {
        self.peer(host, 0).node
    }

    /// Switches that have hosts attached, in node order (each owns one /24).
    pub fn edge_switches(&self) -> Vec<NodeId> {
        self.switches()
            .filter(|&s| (0..self.nodes[s].ports.len() as u16).any(|p| self.is_host(self.peer(s, p).node)))
            .collect()
    }

    pub fn is_host(&self, node: NodeId) -> bool {
        matches!(self.nodes[node].kind, NodeKind::Host { .. })
    }

    /// The /24 prefix owned by edge switch number `rank` (see the module docs).
    pub fn edge_prefix(rank: usize) -> Ipv4Addr {
        Ipv4Addr::new(10, (rank >> 8) as u8, rank as u8, 0)
    }

    /// Gives every host its address and MAC by the module's plan, after checking the shape.
    pub fn assign_addresses(&mut self) -> Result<(), TopologyError> {
        self.validate_shape()?;
        let edges = self.edge_switches();
        if edges.len() > 1 << 16 {
            return Err(TopologyError::TooManyEdges(edges.len()));
        }
        let mut host_index = 0u32;
        for (rank, &s) in edges.iter().enumerate() {
            let hosts: Vec<NodeId> = (0..self.nodes[s].ports.len() as u16)
                .map(|p| self.peer(s, p).node)
                .filter(|&n| self.is_host(n))
                .collect();
            if hosts.len() > 253 {
                return Err(TopologyError::TooManyHosts(self.nodes[s].name.clone()));
            }
            let base = Self::edge_prefix(rank).octets();
            for (h, n) in hosts.into_iter().enumerate() {
                let ip = Ipv4Addr::new(base[0], base[1], base[2], h as u8 + 2);
                let i = host_index.to_be_bytes();
                self.nodes[n].kind = NodeKind::Host { ip, mac: [0x02, 0x01, i[0], i[1], i[2], i[3]] };
                host_index += 1;
            }
        }
        Ok(())
    }

    /// Hosts have one link, to a switch; rates are positive; switch IDs fit 16 bits.
    fn validate_shape(&self) -> Result<(), TopologyError> {
        if self.switches().count() > 1 << 16 {
            return Err(TopologyError::TooManySwitches(self.switches().count()));
        }
        for (index, l) in self.links.iter().enumerate() {
            if l.rate_bps == 0 {
                return Err(TopologyError::ZeroRate { index });
            }
        }
        for h in self.hosts() {
            let name = self.nodes[h].name.clone();
            if self.nodes[h].ports.len() != 1 {
                return Err(TopologyError::HostLinks(name));
            }
            if self.is_host(self.peer(h, 0).node) {
                return Err(TopologyError::HostToHost(name));
            }
        }
        Ok(())
    }
}

/// The MAC of switch `id`.
pub fn switch_mac(id: u16) -> [u8; 6] {
    let b = id.to_be_bytes();
    [0x02, 0x00, 0x00, 0x00, b[0], b[1]]
}

/// A k-ary fat-tree (Al-Fares et al.): k pods of k/2 edge and k/2 aggregation switches,
/// (k/2)^2 core switches, k/2 hosts per edge switch; 5k^2/4 switches and k^3/4 hosts
/// (k = 4: 20 switches, 16 hosts). Inter-pod paths cross 5 switches.
pub fn fat_tree(k: usize, rate_bps: u64, delay_ns: u64) -> Result<Topology, TopologyError> {
    if k < 2 || !k.is_multiple_of(2) || k > 64 {
        return Err(TopologyError::FatTreeK(k));
    }
    let h = k / 2;
    let mut t = Topology::default();
    let core: Vec<NodeId> = (0..h * h).map(|c| t.add_switch(format!("core{c}"))).collect();
    for pod in 0..k {
        let aggs: Vec<NodeId> = (0..h).map(|a| t.add_switch(format!("agg{pod}_{a}"))).collect();
        let edges: Vec<NodeId> = (0..h).map(|e| t.add_switch(format!("edge{pod}_{e}"))).collect();
        for (a, &agg) in aggs.iter().enumerate() {
            for &e in &edges {
                t.connect(e, agg, rate_bps, delay_ns);
            }
            for c in 0..h {
                t.connect(agg, core[a * h + c], rate_bps, delay_ns);
            }
        }
        for (e, &edge) in edges.iter().enumerate() {
            for i in 0..h {
                let host = t.add_host(format!("h{pod}_{e}_{i}"));
                t.connect(host, edge, rate_bps, delay_ns);
            }
        }
    }
    t.assign_addresses()?;
    Ok(t)
}

/// A two-tier leaf-spine: every leaf linked to every spine, `hosts` hosts per leaf.
pub fn leaf_spine(
    leaves: usize,
    spines: usize,
    hosts: usize,
    rate_bps: u64,
    delay_ns: u64,
) -> Result<Topology, TopologyError> {
    if leaves == 0 || spines == 0 || hosts == 0 {
        return Err(TopologyError::LeafSpineEmpty);
    }
    let mut t = Topology::default();
    let spine: Vec<NodeId> = (0..spines).map(|s| t.add_switch(format!("spine{s}"))).collect();
    for l in 0..leaves {
        let leaf = t.add_switch(format!("leaf{l}"));
        for &s in &spine {
            t.connect(leaf, s, rate_bps, delay_ns);
        }
        for i in 0..hosts {
            let host = t.add_host(format!("h{l}_{i}"));
            t.connect(host, leaf, rate_bps, delay_ns);
        }
    }
    t.assign_addresses()?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fat_tree_4_has_the_papers_size() {
        let t = fat_tree(4, DEFAULT_RATE_BPS, DEFAULT_DELAY_NS).unwrap();
        assert_eq!(t.switches().count(), 20);
        assert_eq!(t.hosts().count(), 16);
        assert_eq!(t.links.len(), 16 + 16 + 16);
        // Every switch has k = 4 ports; every host one.
        assert!(t.switches().all(|s| t.nodes[s].ports.len() == 4));
        let h = t.by_name("h1_0_1").unwrap();
        assert_eq!(t.host_ip(h), Some(Ipv4Addr::new(10, 0, 2, 3)));
        assert_eq!(t.nodes[t.edge_of(h)].name, "edge1_0");
    }

    #[test]
    fn peers_are_symmetric() {
        let t = leaf_spine(3, 2, 2, DEFAULT_RATE_BPS, DEFAULT_DELAY_NS).unwrap();
        for n in 0..t.nodes.len() {
            for p in 0..t.nodes[n].ports.len() as u16 {
                let e = t.peer(n, p);
                assert_eq!(t.peer(e.node, e.port), End { node: n, port: p });
            }
        }
    }

    #[test]
    fn bad_shapes_are_named() {
        assert_eq!(fat_tree(3, 1, 1).unwrap_err(), TopologyError::FatTreeK(3));
        let mut t = Topology::default();
        let a = t.add_host("a");
        let b = t.add_host("b");
        t.connect(a, b, 1, 1);
        assert_eq!(t.assign_addresses().unwrap_err(), TopologyError::HostToHost("a".into()));
    }
}
