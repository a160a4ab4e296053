//! `smartnic fleet query|synth`: network-wide SQL over many NICs' Parquet epochs
//! ([`crate::fleet`]; the engine is the `smartnic-fleet` binary, [`ENGINE`]), and a
//! synthetic fleet to measure it on.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::{Args, Subcommand};

use crate::companion::Companion;
use crate::fleet::queries::{named, NAMED};
use crate::fleet::synth::{write_fleet, SynthConfig};

#[derive(Debug, Subcommand)]
pub enum FleetCmd {
    /// Run SQL over the fleet's tables (flows, hops, health) with DataFusion embedded.
    ///
    /// DIR is what `smartnic collect --parquet DIR` or `smartnic snapshot export --parquet
    /// DIR` writes: DIR/<table>/<device>/<file>.parquet. Give SQL, or --named with one of
    /// the built-in queries (--list shows them); the same query files run on Spark with
    /// scripts/fleet-spark. The engine is the smartnic-fleet binary beside smartnic (`cargo
    /// build --release -p smartnic-fleet`); SMARTNIC_FLEET=PATH names another.
    Query(QueryArgs),
    /// Write a synthetic fleet (N NICs x E epochs of Zipf flows on a leaf-spine fabric) in
    /// the export's tables, to measure queries at scale.
    Synth(SynthArgs),
}

#[derive(Debug, Args)]
pub struct QueryArgs {
    /// The SQL statement (tables: flows, hops, health).
    #[arg(value_name = "SQL", required_unless_present_any = ["named", "list"], conflicts_with = "named")]
    pub sql: Option<String>,
    /// The fleet's Parquet directory.
    #[arg(long, value_name = "DIR", required_unless_present = "list")]
    pub dir: Option<PathBuf>,
    /// Run a built-in query by name instead of SQL.
    #[arg(long, value_name = "NAME")]
    pub named: Option<String>,
    /// List the built-in queries and exit.
    #[arg(long)]
    pub list: bool,
    /// Print the rows as CSV (with a header line) instead of a table.
    #[arg(long, conflicts_with = "list")]
    pub csv: bool,
    /// The most memory the engine may hold for the query's operators (e.g. 8GB, 16GiB:
    /// KB, MB, GB, TB count in 10^3, KiB, MiB, GiB, TiB in 2^10, as for sketch memories).
    /// Sorts and aggregations spill to the temporary directory beyond it; a query that still
    /// needs more fails saying so, instead of the machine killing the engine. Default: half
    /// of this machine's memory.
    #[arg(long, value_name = "SIZE", value_parser = super::size::parse_large_bytes)]
    pub memory_limit: Option<u64>,
}

#[derive(Debug, Args)]
pub struct SynthArgs {
    /// Where to write (created if missing; files are added beside what is there).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// NICs (one per host).
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub nics: usize,
    /// Epochs per NIC.
    #[arg(long, default_value_t = 12, value_name = "E")]
    pub epochs: u64,
    /// Flows each NIC reports per epoch.
    #[arg(long, default_value_t = 200, value_name = "F")]
    pub flows: usize,
    /// Leaf switches of the fabric.
    #[arg(long, default_value_t = 16)]
    pub leaves: u16,
    /// Spine switches of the fabric.
    #[arg(long, default_value_t = 8)]
    pub spines: u16,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

pub fn run(cmd: &FleetCmd, json: bool) -> anyhow::Result<()> {
    match cmd {
        FleetCmd::Query(a) => query(a, json),
        FleetCmd::Synth(a) => synth(a, json),
    }
}

/// The fleet's SQL engine, which `fleet query` runs with the same arguments.
pub const ENGINE: Companion = Companion {
    what: "the fleet's SQL engine",
    binary: "smartnic-fleet",
    env: "SMARTNIC_FLEET",
    build: "cargo build --release -p smartnic-fleet",
};

/// `fleet query`: `--list` here; a query by the engine binary, which replaces this process
/// (its output, errors and exit status are the command's).
fn query(a: &QueryArgs, json: bool) -> anyhow::Result<()> {
    if a.list {
        return list(json);
    }
    // An unknown --named query is the user's error, said without needing the engine.
    sql_of(a)?;
    let engine = ENGINE.path()?;
    let e = std::process::Command::new(&engine).args(a.to_args(json)).exec();
    Err(e).with_context(|| format!("running {}", engine.display()))
}

/// The SQL a query runs: its own, or the named query's.
pub fn sql_of(a: &QueryArgs) -> anyhow::Result<String> {
    match (&a.sql, &a.named) {
        (Some(sql), _) => Ok(sql.clone()),
        (None, Some(n)) => match named(n) {
            Some(q) => Ok(q.sql.to_string()),
            None => bail!("no built-in query {n:?}; `smartnic fleet query --list` shows them"),
        },
        (None, None) => bail!("give SQL or --named NAME"),
    }
}

impl QueryArgs {
    /// The command line that parses back to these arguments (and `--json`), SQL last after
    /// `--` so a statement that starts with `-` stays one.
    pub fn to_args(&self, json: bool) -> Vec<OsString> {
        let mut v: Vec<OsString> = Vec::new();
        if json {
            v.push("--json".into());
        }
        if let Some(d) = &self.dir {
            v.extend(["--dir".into(), d.clone().into_os_string()]);
        }
        if let Some(n) = &self.named {
            v.extend(["--named".into(), n.into()]);
        }
        if self.list {
            v.push("--list".into());
        }
        if self.csv {
            v.push("--csv".into());
        }
        if let Some(m) = self.memory_limit {
            v.extend(["--memory-limit".into(), m.to_string().into()]);
        }
        if let Some(sql) = &self.sql {
            v.extend(["--".into(), sql.into()]);
        }
        v
    }
}

/// `fleet query --list`: the named queries and what each answers.
pub fn list(json: bool) -> anyhow::Result<()> {
    if json {
        let v: Vec<_> = NAMED
            .iter()
            .map(|q| serde_json::json!({"name": q.name, "about": q.about(), "sql": q.sql}))
            .collect();
        return super::print_json(&v);
    }
    for q in NAMED {
        println!("{:<22} {}", q.name, q.about());
    }
    Ok(())
}

fn synth(a: &SynthArgs, json: bool) -> anyhow::Result<()> {
    if a.nics < 2 || a.epochs == 0 || a.flows == 0 || a.leaves == 0 || a.spines == 0 {
        bail!("--nics must be at least 2, and --epochs, --flows, --leaves, --spines at least 1");
    }
    let cfg = SynthConfig {
        nics: a.nics,
        epochs: a.epochs,
        flows: a.flows,
        leaves: a.leaves,
        spines: a.spines,
        seed: a.seed,
    };
    let bar = super::progress::bar(Some(a.nics as u64), "NICs");
    let start = Instant::now();
    let stats = write_fleet(&a.dir, &cfg, |n| bar.set_position(n as u64))
        .with_context(|| format!("writing the fleet under {}", a.dir.display()))?;
    bar.finish_and_clear();
    if json {
        return super::print_json(&stats);
    }
    println!(
        "{}: {} NICs x {} epochs: {} flow rows, {} hop rows, {} health rows in {} files ({:.1} s)",
        a.dir.display(),
        a.nics,
        a.epochs,
        stats.flow_rows,
        stats.hop_rows,
        stats.health_rows,
        stats.files,
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// What the engine binary parses: `--json` and the query's arguments.
    #[derive(Debug, Parser)]
    struct Engine {
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        query: QueryArgs,
    }

    #[test]
    fn the_engine_parses_back_the_query_it_is_given() {
        for line in [
            vec!["q", "--dir", "d", "SELECT 1"],
            vec!["q", "--dir", "d", "--named", "flow_sizes", "--csv"],
            vec!["q", "--dir", "d", "--memory-limit", "3GiB", "SELECT 1"],
            vec!["q", "--dir", "d", "--", "-- a comment first\nSELECT 1"],
            vec!["q", "--list"],
        ] {
            for json in [false, true] {
                let a = Engine::try_parse_from(&line).unwrap().query;
                let mut again = vec![OsString::from("q")];
                again.extend(a.to_args(json));
                let b = Engine::try_parse_from(&again).unwrap();
                assert_eq!(format!("{:?}", b.query), format!("{a:?}"), "{line:?}");
                assert_eq!(b.json, json);
            }
        }
    }
}
