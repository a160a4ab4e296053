//! Topologies from one command-line word: `fat-tree:K`, `leaf-spine:LEAVES,SPINES,HOSTS`,
//! or the path of a topology file (text or JSON, [`smartnic_p4::topology_file`]).
//! The builders' links all get the given rate and delay; a file states its own.

use smartnic_p4::topology::{fat_tree, leaf_spine, Topology};
use smartnic_p4::topology_file;

/// The topology `spec` names.
pub fn parse(spec: &str, rate_bps: u64, delay_ns: u64) -> Result<Topology, String> {
    let num = |v: &str| v.trim().parse::<usize>().map_err(|_| format!("`{v}` in `{spec}` is not a count"));
    if let Some(k) = spec.strip_prefix("fat-tree:") {
        return fat_tree(num(k)?, rate_bps, delay_ns).map_err(|e| e.to_string());
    }
    if let Some(rest) = spec.strip_prefix("leaf-spine:") {
        let n: Vec<usize> = rest.split(',').map(num).collect::<Result<_, _>>()?;
        let [l, s, h] = n[..] else {
            return Err(format!("`{spec}`: expected leaf-spine:LEAVES,SPINES,HOSTS_PER_LEAF"));
        };
        return leaf_spine(l, s, h, rate_bps, delay_ns).map_err(|e| e.to_string());
    }
    let text = std::fs::read_to_string(spec).map_err(|e| {
        format!("`{spec}` is neither fat-tree:K nor leaf-spine:L,S,H, and reading it as a topology file failed: {e}")
    })?;
    topology_file::parse(&text).map_err(|e| format!("{spec}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_build_or_say_why_not() {
        assert_eq!(parse("fat-tree:4", 1, 1).unwrap().hosts().count(), 16);
        assert_eq!(parse("leaf-spine:3,2,4", 1, 1).unwrap().hosts().count(), 12);
        assert!(parse("fat-tree:3", 1, 1).unwrap_err().contains("even"));
        assert!(parse("leaf-spine:3,2", 1, 1).unwrap_err().contains("LEAVES,SPINES"));
        assert!(parse("/no/such/file", 1, 1).unwrap_err().contains("neither"));
    }
}
