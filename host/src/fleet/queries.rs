//! The named fleet queries: SQL files in `queries/`, compiled into the binary for
//! `smartnic fleet query --named` and read as files by `scripts/fleet-spark`, so both
//! engines run the very same text.
//!
//! They are written in the SQL both DataFusion and Spark speak: no engine-specific
//! functions (percentiles by nearest rank over `ROW_NUMBER`, not `approx_percentile_cont`
//! or `percentile_approx`, whose answers differ by engine), and a total `ORDER BY`, so two
//! engines give the same rows in the same order.

/// A named query: its name (the file's stem), first comment line, and SQL.
#[derive(Clone, Copy, Debug)]
pub struct Named {
    pub name: &'static str,
    pub sql: &'static str,
}

impl Named {
    /// The query's description: its leading comment lines, joined.
    pub fn about(&self) -> String {
        let lines: Vec<&str> = self.sql.lines().map_while(|l| l.strip_prefix("--")).map(str::trim).collect();
        lines.join(" ")
    }
}

/// Every named query, in the order `--list` shows them.
pub const NAMED: [Named; 4] = [
    Named { name: "flow_sizes", sql: include_str!("queries/flow_sizes.sql") },
    Named { name: "switch_latency", sql: include_str!("queries/switch_latency.sql") },
    Named { name: "switch_heavy_hitters", sql: include_str!("queries/switch_heavy_hitters.sql") },
    Named { name: "nic_health", sql: include_str!("queries/nic_health.sql") },
];

/// The named query `name`.
pub fn named(name: &str) -> Option<&'static Named> {
    NAMED.iter().find(|q| q.name == name)
}

/// Where the query files live in the source tree (for engines that read them as files).
pub const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/fleet/queries");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_query_file_is_named_and_described() {
        let files: Vec<String> = std::fs::read_dir(DIR)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "sql"))
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(files.len(), NAMED.len(), "a query file is missing from NAMED: {files:?}");
        for q in NAMED {
            assert!(files.iter().any(|f| f == q.name), "{} has no file", q.name);
            assert_eq!(std::fs::read_to_string(format!("{DIR}/{}.sql", q.name)).unwrap(), q.sql);
            assert!(!q.about().is_empty(), "{} has no description", q.name);
        }
    }
}
