//! The switch side: the P4 programs' Rust twins, the topologies they run in, the routes and
//! the control-plane entries generated for them. The `.p4` sources are in `p4/programs/`
//! and `p4/include/` (see `p4/README.md`).
//!
//! | module | what |
//! |---|---|
//! | [`topology`] | hosts, switches, links and their addresses; fat-tree and leaf-spine builders |
//! | [`topology_file`] | topologies from a small text or JSON file |
//! | [`routes`] | shortest-path routes with ECMP groups, computed into each switch's tables |
//! | [`tables`] | one switch's tables as data, as `simple_switch_CLI` commands and as runtime JSON |
//! | [`twin`] | the executable twins of the P4 programs |
//! | [`p4gen`] | the generated P4 include of contract constants |

pub mod p4gen;
pub mod routes;
pub mod tables;
pub mod topology;
pub mod topology_file;
pub mod twin;
