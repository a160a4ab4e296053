//! The control plane of `sketchint_int.p4` as data: what one switch's tables hold, and the
//! two forms it is installed in, `simple_switch_CLI` commands and P4Runtime-style JSON (the
//! `table_entries` shape of the p4lang tutorials' runtime files).
//!
//! The twin reads a [`SwitchTables`] directly; bmv2 gets the same entries through
//! [`SwitchTables::cli_commands`]. Table and action names are the P4 program's, fully
//! qualified as bmv2 reports them; `tests/p4_names.rs` checks every one against the `.p4`
//! sources.

use serde_json::{json, Value};
use smartnic_contract::key::FlowKey;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

/// Fully qualified names of the program's tables and actions.
pub mod names {
    pub const SWITCH_CONFIG: &str = "SwitchIngress.switch_config";
    pub const SET_SWITCH: &str = "SwitchIngress.set_switch";
    pub const ACL: &str = "SwitchIngress.fwd.acl";
    pub const ACL_DROP: &str = "SwitchIngress.fwd.acl_drop";
    pub const IPV4_LPM: &str = "SwitchIngress.fwd.ipv4_lpm";
    pub const ECMP_GROUP: &str = "SwitchIngress.fwd.ecmp_group";
    pub const ECMP_GROUP_REV: &str = "SwitchIngress.fwd.ecmp_group_rev";
    pub const ECMP_NHOP: &str = "SwitchIngress.fwd.ecmp_nhop";
    pub const SET_NHOP: &str = "SwitchIngress.fwd.set_nhop";
    /// Every name above: each must appear in the P4 sources.
    pub const ALL: [&str; 9] =
        [SWITCH_CONFIG, SET_SWITCH, ACL, ACL_DROP, IPV4_LPM, ECMP_GROUP, ECMP_GROUP_REV, ECMP_NHOP, SET_NHOP];
}

/// One next hop of an ECMP group: the egress port and the neighbour's MAC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NextHop {
    pub port: u16,
    pub dmac: [u8; 6],
}

/// An LPM route: packets to `prefix/len` take next hop `base + crc % count` of `ecmp_nhop`,
/// the CRC over the flow key or, with `reverse`, the reversed key
/// ([`smartnic_contract::hash::ecmp_input`]; action `ecmp_group_rev`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    pub prefix: Ipv4Addr,
    pub len: u8,
    pub base: u16,
    pub count: u16,
    pub reverse: bool,
}

impl Route {
    /// The action that installs it.
    pub fn action(&self) -> &'static str {
        if self.reverse {
            names::ECMP_GROUP_REV
        } else {
            names::ECMP_GROUP
        }
    }
}

impl Route {
    /// Whether `dst` falls in the route's prefix.
    pub fn covers(&self, dst: Ipv4Addr) -> bool {
        let mask = prefix_mask(self.len);
        u32::from(dst) & mask == u32::from(self.prefix) & mask
    }
}

/// The netmask of a prefix length.
pub fn prefix_mask(len: u8) -> u32 {
    if len == 0 {
        0
    } else {
        u32::MAX << (32 - len.min(32))
    }
}

/// A ternary ACL entry (every one drops): each field matches when `value & mask` equals the
/// packet's field `& mask`. A blackhole of a prefix masks only the destination; of a flow,
/// every field of the 5-tuple.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AclRule {
    pub key: FlowKey,
    pub mask: FlowKey,
}

impl AclRule {
    /// Drops everything sent to `prefix/len`.
    pub fn prefix(prefix: Ipv4Addr, len: u8) -> Self {
        let mut mask = [0u8; 13];
        mask[4..8].copy_from_slice(&prefix_mask(len).to_be_bytes());
        let mut key = [0u8; 13];
        key[4..8].copy_from_slice(&(u32::from(prefix) & prefix_mask(len)).to_be_bytes());
        AclRule { key: FlowKey(key), mask: FlowKey(mask) }
    }

    /// Drops one flow (its exact 5-tuple).
    pub fn flow(key: FlowKey) -> Self {
        AclRule { key, mask: FlowKey([0xFF; 13]) }
    }

    pub fn matches(&self, key: &FlowKey) -> bool {
        (0..13).all(|i| key.0[i] & self.mask.0[i] == self.key.0[i] & self.mask.0[i])
    }
}

/// Everything the control plane installs on one switch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchTables {
    /// Written into this switch's INT hop records.
    pub switch_id: u16,
    /// Source MAC of every frame this switch sends.
    pub mac: [u8; 6],
    /// `ipv4_lpm`, in installation order (bmv2 entry handle = index).
    pub routes: Vec<Route>,
    /// `ecmp_nhop`: entry `i` is selected by index `i`.
    pub nexthops: Vec<NextHop>,
    /// `acl`, in installation order.
    pub acl: Vec<AclRule>,
}

impl SwitchTables {
    pub fn new(switch_id: u16, mac: [u8; 6]) -> Self {
        SwitchTables { switch_id, mac, routes: Vec::new(), nexthops: Vec::new(), acl: Vec::new() }
    }

    /// The `(base, count)` of an ECMP group, adding its next hops once per distinct group.
    pub fn group(
        &mut self,
        groups: &mut BTreeMap<Vec<NextHop>, (u16, u16)>,
        hops: Vec<NextHop>,
    ) -> (u16, u16) {
        let next = self.nexthops.len() as u16;
        *groups.entry(hops.clone()).or_insert_with(|| {
            self.nexthops.extend(&hops);
            (next, hops.len() as u16)
        })
    }

    /// The longest-prefix route for `dst` (on equal lengths the first installed).
    pub fn lookup(&self, dst: Ipv4Addr) -> Option<&Route> {
        let mut best: Option<&Route> = None;
        for r in self.routes.iter().filter(|r| r.covers(dst)) {
            if best.is_none_or(|b| r.len > b.len) {
                best = Some(r);
            }
        }
        best
    }

    /// The route entry for exactly `prefix/len`, to change it (a fault or a path change).
    pub fn route_mut(&mut self, prefix: Ipv4Addr, len: u8) -> Option<&mut Route> {
        self.routes.iter_mut().find(|r| r.len == len && r.prefix == prefix)
    }

    /// The `simple_switch_CLI` commands that install these tables on a fresh switch.
    pub fn cli_commands(&self) -> Vec<String> {
        let mut out = vec![format!(
            "table_set_default {} {} {} {}",
            names::SWITCH_CONFIG,
            names::SET_SWITCH,
            self.switch_id,
            mac_str(&self.mac)
        )];
        for (i, h) in self.nexthops.iter().enumerate() {
            out.push(format!(
                "table_add {} {} {i} => {} {}",
                names::ECMP_NHOP,
                names::SET_NHOP,
                h.port,
                mac_str(&h.dmac)
            ));
        }
        for r in &self.routes {
            out.push(route_command(r));
        }
        for a in &self.acl {
            out.push(acl_command(a));
        }
        out
    }

    /// The same entries as P4Runtime-style JSON (`table_entries` with `match`,
    /// `action_name`, `action_params`; ternary entries with a priority).
    pub fn runtime_json(&self) -> Value {
        let mut entries = vec![json!({
            "table": names::SWITCH_CONFIG, "default_action": true, "action_name": names::SET_SWITCH,
            "action_params": {"switch_id": self.switch_id, "mac": mac_str(&self.mac)},
        })];
        entries.extend(self.nexthops.iter().enumerate().map(|(i, h)| {
            json!({"table": names::ECMP_NHOP, "match": {"meta.ecmp_select": i},
                   "action_name": names::SET_NHOP, "action_params": {"port": h.port, "dmac": mac_str(&h.dmac)}})
        }));
        entries.extend(self.routes.iter().map(|r| {
            json!({"table": names::IPV4_LPM, "match": {"hdr.ipv4.dst_addr": [r.prefix.to_string(), r.len]},
                   "action_name": r.action(), "action_params": {"base": r.base, "count": r.count}})
        }));
        entries.extend(self.acl.iter().map(|a| {
            let m: serde_json::Map<String, Value> =
                ACL_FIELDS.iter().map(|(name, range)| (name.to_string(), json!([hex(&a.key.0[range.clone()]), hex(&a.mask.0[range.clone()])]))).collect();
            json!({"table": names::ACL, "match": m, "priority": 1, "action_name": names::ACL_DROP, "action_params": {}})
        }));
        json!({"target": "bmv2", "switch_id": self.switch_id, "table_entries": entries})
    }
}

/// The ACL's match fields in key order, with their bytes in the flow key.
const ACL_FIELDS: [(&str, core::ops::Range<usize>); 5] = [
    ("hdr.ipv4.src_addr", smartnic_contract::key::field::SRC_IP),
    ("hdr.ipv4.dst_addr", smartnic_contract::key::field::DST_IP),
    ("meta.l4_src_port", smartnic_contract::key::field::SRC_PORT),
    ("meta.l4_dst_port", smartnic_contract::key::field::DST_PORT),
    ("hdr.ipv4.protocol", smartnic_contract::key::field::PROTO..smartnic_contract::key::field::PROTO + 1),
];

/// `table_add` of one route.
pub fn route_command(r: &Route) -> String {
    format!("table_add {} {} {}/{} => {} {}", names::IPV4_LPM, r.action(), r.prefix, r.len, r.base, r.count)
}

/// `table_add` of one ACL rule (ternary: `value&&&mask` per field, then the priority).
pub fn acl_command(a: &AclRule) -> String {
    let fields: Vec<String> = ACL_FIELDS
        .iter()
        .map(|(_, r)| format!("{}&&&{}", hex(&a.key.0[r.clone()]), hex(&a.mask.0[r.clone()])))
        .collect();
    format!("table_add {} {} {} => 1", names::ACL, names::ACL_DROP, fields.join(" "))
}

fn hex(bytes: &[u8]) -> String {
    let mut s = String::from("0x");
    for b in bytes {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// `aa:bb:cc:dd:ee:ff`.
pub fn mac_str(mac: &[u8; 6]) -> String {
    mac.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> SwitchTables {
        let mut t = SwitchTables::new(7, [2, 0, 0, 0, 0, 7]);
        let mut g = BTreeMap::new();
        let (base, count) = t.group(
            &mut g,
            vec![
                NextHop { port: 2, dmac: [2, 0, 0, 0, 0, 1] },
                NextHop { port: 3, dmac: [2, 0, 0, 0, 0, 2] },
            ],
        );
        t.routes.push(Route { prefix: Ipv4Addr::new(10, 0, 1, 0), len: 24, base, count, reverse: false });
        let again = t.group(
            &mut g,
            vec![
                NextHop { port: 2, dmac: [2, 0, 0, 0, 0, 1] },
                NextHop { port: 3, dmac: [2, 0, 0, 0, 0, 2] },
            ],
        );
        assert_eq!(again, (base, count), "one group is installed once");
        t.acl.push(AclRule::prefix(Ipv4Addr::new(10, 0, 2, 0), 24));
        t
    }

    #[test]
    fn cli_commands_are_exact() {
        let cmds = sample().cli_commands();
        assert_eq!(
            cmds,
            [
                "table_set_default SwitchIngress.switch_config SwitchIngress.set_switch 7 02:00:00:00:00:07",
                "table_add SwitchIngress.fwd.ecmp_nhop SwitchIngress.fwd.set_nhop 0 => 2 02:00:00:00:00:01",
                "table_add SwitchIngress.fwd.ecmp_nhop SwitchIngress.fwd.set_nhop 1 => 3 02:00:00:00:00:02",
                "table_add SwitchIngress.fwd.ipv4_lpm SwitchIngress.fwd.ecmp_group 10.0.1.0/24 => 0 2",
                "table_add SwitchIngress.fwd.acl SwitchIngress.fwd.acl_drop 0x00000000&&&0x00000000 0x0a000200&&&0xffffff00 \
                 0x0000&&&0x0000 0x0000&&&0x0000 0x00&&&0x00 => 1",
            ]
        );
    }

    #[test]
    fn a_reversed_route_installs_the_reversed_action() {
        let r = Route { prefix: Ipv4Addr::new(10, 0, 3, 0), len: 24, base: 4, count: 2, reverse: true };
        assert_eq!(
            route_command(&r),
            "table_add SwitchIngress.fwd.ipv4_lpm SwitchIngress.fwd.ecmp_group_rev 10.0.3.0/24 => 4 2"
        );
        assert!(names::ALL.contains(&names::ECMP_GROUP_REV));
    }

    #[test]
    fn lookup_takes_the_longest_prefix() {
        let mut t = sample();
        t.routes.push(Route {
            prefix: Ipv4Addr::new(10, 0, 1, 5),
            len: 32,
            base: 1,
            count: 1,
            reverse: true,
        });
        assert_eq!(t.lookup(Ipv4Addr::new(10, 0, 1, 5)).unwrap().len, 32);
        assert_eq!(t.lookup(Ipv4Addr::new(10, 0, 1, 6)).unwrap().len, 24);
        assert!(t.lookup(Ipv4Addr::new(10, 0, 9, 6)).is_none());
    }

    #[test]
    fn acl_rules_match_by_mask() {
        let k = FlowKey::from_v4([10, 0, 0, 2], [10, 0, 2, 9], 1, 2, 6);
        assert!(AclRule::prefix(Ipv4Addr::new(10, 0, 2, 0), 24).matches(&k));
        assert!(!AclRule::prefix(Ipv4Addr::new(10, 0, 3, 0), 24).matches(&k));
        assert!(AclRule::flow(k).matches(&k));
        let other = FlowKey::from_v4([10, 0, 0, 2], [10, 0, 2, 9], 1, 3, 6);
        assert!(!AclRule::flow(k).matches(&other));
    }

    #[test]
    fn runtime_json_has_every_entry() {
        let j = sample().runtime_json();
        let entries = j["table_entries"].as_array().unwrap();
        assert_eq!(entries.len(), 1 + 2 + 1 + 1);
        assert_eq!(entries[3]["match"]["hdr.ipv4.dst_addr"], json!(["10.0.1.0", 24]));
        assert_eq!(entries[4]["match"]["hdr.ipv4.dst_addr"], json!(["0x0a000200", "0xffffff00"]));
    }
}
