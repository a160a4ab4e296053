//! Shortest-path routes with ECMP, computed from a topology into the tables the switch
//! program reads: one LPM route per destination prefix, pointing at a group of equal-cost
//! next hops.
//!
//! An edge switch routes each attached host by a /32 to its port; every switch routes each
//! edge /24 it does not own to all neighbours one switch-hop closer to that edge (breadth-
//! first search on the switch graph). Hosts never forward, so paths never cross a host.

use crate::tables::{NextHop, Route, SwitchTables};
use crate::topology::{NodeId, Topology, TopologyError};
use std::collections::{BTreeMap, VecDeque};

/// The tables of every switch, in the order of [`Topology::switches`].
pub fn compute(t: &Topology) -> Result<Vec<SwitchTables>, TopologyError> {
    let edges = t.edge_switches();
    let dists: Vec<Vec<Option<u32>>> = edges.iter().map(|&e| switch_distances(t, e)).collect();
    t.switches().map(|s| switch_tables(t, s, &edges, &dists)).collect()
}

/// Switch-hop distance from every node to `to` over switches only (`None`: unreachable).
fn switch_distances(t: &Topology, to: NodeId) -> Vec<Option<u32>> {
    let mut dist = vec![None; t.nodes.len()];
    dist[to] = Some(0);
    let mut queue = VecDeque::from([to]);
    while let Some(n) = queue.pop_front() {
        for p in 0..t.nodes[n].ports.len() as u16 {
            let m = t.peer(n, p).node;
            if !t.is_host(m) && dist[m].is_none() {
                dist[m] = Some(dist[n].unwrap() + 1);
                queue.push_back(m);
            }
        }
    }
    dist
}

/// One switch's routes: host /32s on its own ports, then one /24 per other edge switch.
fn switch_tables(
    t: &Topology,
    s: NodeId,
    edges: &[NodeId],
    dists: &[Vec<Option<u32>>],
) -> Result<SwitchTables, TopologyError> {
    let mut tables = SwitchTables::new(t.switch_id(s).expect("a switch"), t.mac(s));
    // Odd tiers (one switch-hop from the nearest edge switch, three, ...) hash the reversed
    // key, so consecutive choices on a path are independent (see `hash::ecmp_input`).
    let tier = dists.iter().filter_map(|d| d[s]).min().unwrap_or(0);
    let reverse = tier % 2 == 1;
    let mut groups: BTreeMap<Vec<NextHop>, (u16, u16)> = BTreeMap::new();
    for p in 0..t.nodes[s].ports.len() as u16 {
        let peer = t.peer(s, p).node;
        if let Some(ip) = t.host_ip(peer) {
            let hop = NextHop { port: p, dmac: t.mac(peer) };
            let (base, count) = tables.group(&mut groups, vec![hop]);
            tables.routes.push(Route { prefix: ip, len: 32, base, count, reverse });
        }
    }
    for (rank, (&e, dist)) in edges.iter().zip(dists).enumerate() {
        if e == s {
            continue;
        }
        let Some(d) = dist[s] else {
            let host = t.hosts().find(|&h| t.edge_of(h) == e).expect("an edge switch has a host");
            return Err(TopologyError::Disconnected {
                from: t.nodes[s].name.clone(),
                to: t.nodes[host].name.clone(),
            });
        };
        let hops: Vec<NextHop> = (0..t.nodes[s].ports.len() as u16)
            .filter(|&p| dist[t.peer(s, p).node] == Some(d - 1) && !t.is_host(t.peer(s, p).node))
            .map(|p| NextHop { port: p, dmac: t.mac(t.peer(s, p).node) })
            .collect();
        let (base, count) = tables.group(&mut groups, hops);
        tables.routes.push(Route { prefix: Topology::edge_prefix(rank), len: 24, base, count, reverse });
    }
    Ok(tables)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{fat_tree, DEFAULT_DELAY_NS, DEFAULT_RATE_BPS};

    #[test]
    fn fat_tree_routes_spread_over_every_uplink() {
        let t = fat_tree(4, DEFAULT_RATE_BPS, DEFAULT_DELAY_NS).unwrap();
        let all = compute(&t).unwrap();
        let edge = t.by_name("edge0_0").unwrap();
        let tables = &all[t.switches().position(|s| s == edge).unwrap()];
        // 2 hosts by /32, 7 other edge /24s.
        assert_eq!(tables.routes.iter().filter(|r| r.len == 32).count(), 2);
        assert_eq!(tables.routes.iter().filter(|r| r.len == 24).count(), 7);
        // Every remote /24 goes to both aggregation switches (one shared group).
        for r in tables.routes.iter().filter(|r| r.len == 24) {
            assert_eq!(r.count, 2);
        }
        let core = t.by_name("core0").unwrap();
        let ct = &all[t.switches().position(|s| s == core).unwrap()];
        assert_eq!(ct.routes.len(), 8);
        assert!(ct.routes.iter().all(|r| r.count == 1));
    }

    /// Flows from one edge switch spread over every core switch: the edge and aggregation
    /// tiers hash different key bits (without that, half the cores carry nothing).
    #[test]
    fn fat_tree_ecmp_uses_every_core() {
        use crate::twin::sketchint_int::ecmp_hash_of;
        use smartnic_contract::hash::ecmp_member;
        use smartnic_contract::FlowKey;
        let t = fat_tree(4, DEFAULT_RATE_BPS, DEFAULT_DELAY_NS).unwrap();
        let all = compute(&t).unwrap();
        let tables = |name: &str| &all[t.switches().position(|s| s == t.by_name(name).unwrap()).unwrap()];
        let mut cores = std::collections::BTreeMap::new();
        for i in 0..4000u32 {
            let key = FlowKey::from_v4([10, 0, 0, 2], [10, 0, 6, 2], (i * 7919) as u16, 80, 6);
            let pick = |sw: &str| {
                let tb = tables(sw);
                let r = tb.lookup(std::net::Ipv4Addr::new(10, 0, 6, 2)).unwrap();
                let hop =
                    tb.nexthops[(r.base + ecmp_member(ecmp_hash_of(&key, r.reverse), r.count)) as usize];
                t.peer(t.by_name(sw).unwrap(), hop.port).node
            };
            let agg = pick("edge0_0");
            let core = pick(&t.nodes[agg].name.clone());
            *cores.entry(t.nodes[core].name.clone()).or_insert(0u32) += 1;
        }
        assert_eq!(cores.len(), 4, "{cores:?}");
        assert!(cores.values().all(|&n| (800..1200).contains(&n)), "{cores:?}");
    }

    #[test]
    fn disconnected_topology_is_an_error() {
        let mut t = Topology::default();
        let (s0, s1) = (t.add_switch("s0"), t.add_switch("s1"));
        let (a, b) = (t.add_host("a"), t.add_host("b"));
        t.connect(a, s0, 1, 1);
        t.connect(b, s1, 1, 1);
        t.assign_addresses().unwrap();
        let e = compute(&t).unwrap_err();
        assert_eq!(e, TopologyError::Disconnected { from: "s0".into(), to: "b".into() });
    }
}
