//! The SQL engine of `smartnic fleet query`: network-wide SQL over many NICs' Parquet
//! epochs (`smartnic::export::parquet`'s layout) with Apache DataFusion embedded, so one host
//! needs nothing else; the same directory and the same queries run on Apache Spark
//! (`scripts/fleet-spark`) when a fleet outgrows one machine.
//!
//! The engine is its own crate and binary (`smartnic-fleet`), which `smartnic fleet query`
//! runs: DataFusion and its columnar stack are about 45 crates, and the NIC's CLI, the demo
//! and every test that links the `smartnic` library would otherwise build and link them.
//!
//! - [`Fleet`]: the directory's three tables registered with a DataFusion session, each
//!   with the exporter's own schema (never inferred from whatever file comes first, so a
//!   missing table is an empty one and a foreign file is an error).
//! - [`run`]: one `fleet query` (SQL or a named query of `smartnic::fleet::queries`), its
//!   rows printed as a table, CSV or JSON.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use datafusion::datasource::MemTable;
use datafusion::error::DataFusionError;
use datafusion::execution::memory_pool::{FairSpillPool, TrackConsumersPool};
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};
use serde::Serialize;
use std::time::Instant;

use smartnic::cli::fleet::{list, sql_of, QueryArgs};
use smartnic::cli::print_json;
use smartnic::export::parquet::{schema_of, TABLES};

/// A fleet's Parquet directory, opened for queries.
pub struct Fleet {
    dir: PathBuf,
    ctx: SessionContext,
    runtime: tokio::runtime::Runtime,
    /// Tables with no directory yet (registered empty).
    pub empty: Vec<&'static str>,
    /// The memory the query's operators may hold, bytes.
    pub memory_limit: u64,
}

/// Half of this machine's memory (`MemTotal`), the engine's default limit: a fleet query
/// beside a collector must not take the host down with it.
pub fn default_memory_limit() -> anyhow::Result<u64> {
    let info = std::fs::read_to_string("/proc/meminfo")
        .context("reading /proc/meminfo for the default --memory-limit")?;
    let kib: u64 = info
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .context("no MemTotal in /proc/meminfo; give --memory-limit")?;
    Ok(kib * 1024 / 2)
}

impl Fleet {
    /// Registers `dir`'s tables. A table whose directory does not exist is empty; `dir`
    /// itself must exist. The query's operators may hold `memory_limit` bytes: sorts and
    /// aggregations spill beyond it (a fair share each), and an operator that cannot spill
    /// fails the query with [`Fleet::query`]'s "memory limit" error.
    pub fn open(dir: &Path, memory_limit: u64) -> anyhow::Result<Self> {
        anyhow::ensure!(
            dir.is_dir(),
            "{}: no such directory (give the directory `smartnic collect --parquet` or `snapshot export --parquet` writes)",
            dir.display()
        );
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .context("starting the query runtime")?;
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut config = SessionConfig::new().with_target_partitions(threads);
        // Each device's files sit in its own subdirectory of the table's (not Hive
        // partitions: the rows carry their device), so the listing must descend into them.
        config.options_mut().execution.listing_table_ignore_subdirectory = false;
        let pool = FairSpillPool::new(usize::try_from(memory_limit).unwrap_or(usize::MAX));
        // The error then names the operators that held the most.
        let top = std::num::NonZeroUsize::new(3).expect("3 is not zero");
        let env = RuntimeEnvBuilder::new()
            .with_memory_pool(Arc::new(TrackConsumersPool::new(pool, top)))
            .build_arc()?;
        let ctx = SessionContext::new_with_config_rt(config, env);
        let mut fleet = Fleet { dir: dir.to_path_buf(), ctx, runtime, empty: Vec::new(), memory_limit };
        for table in TABLES {
            fleet.register(table)?;
        }
        Ok(fleet)
    }

    fn register(&mut self, table: &'static str) -> anyhow::Result<()> {
        let schema: SchemaRef = schema_of(table).expect("every table has a schema");
        let path = self.dir.join(table);
        if !path.is_dir() {
            self.empty.push(table);
            let mem = MemTable::try_new(schema, vec![vec![]])?;
            self.ctx.register_table(table, Arc::new(mem))?;
            return Ok(());
        }
        // A trailing separator makes the URL a directory (listed recursively).
        let url = format!("{}/", path.canonicalize()?.display());
        let opts = ParquetReadOptions::default().schema(&schema);
        self.runtime
            .block_on(self.ctx.register_parquet(table, &url, opts))
            .with_context(|| format!("registering table {table} at {url}"))
    }

    /// Runs one SQL statement and returns its rows.
    pub fn query(&self, sql: &str) -> anyhow::Result<Vec<RecordBatch>> {
        self.runtime
            .block_on(async {
                let df = self.ctx.sql(sql).await?;
                df.collect().await
            })
            .map_err(|e| match e.find_root() {
                DataFusionError::ResourcesExhausted(why) => anyhow::anyhow!(
                    "the query needs more than its memory limit of {:.1} MiB even after spilling \
                     (raise --memory-limit, or narrow the query): {why}",
                    self.memory_limit as f64 / f64::from(1 << 20)
                ),
                _ => anyhow::anyhow!("{e}"),
            })
    }
}

/// Rows as JSON objects, every column present (NULL as `null`), in the batches' order.
pub fn to_json_rows(batches: &[RecordBatch]) -> anyhow::Result<Vec<serde_json::Value>> {
    let mut buf = Vec::new();
    {
        let mut w = arrow::json::WriterBuilder::new()
            .with_explicit_nulls(true)
            .build::<_, arrow::json::writer::JsonArray>(&mut buf);
        for b in batches {
            w.write(b)?;
        }
        w.finish()?;
    }
    if buf.is_empty() {
        return Ok(Vec::new());
    }
    Ok(serde_json::from_slice(&buf)?)
}

/// Rows as CSV with a header line.
pub fn to_csv(batches: &[RecordBatch]) -> anyhow::Result<String> {
    let mut buf = Vec::new();
    {
        let mut w = arrow::csv::WriterBuilder::new().with_header(true).build(&mut buf);
        for b in batches {
            w.write(b)?;
        }
    }
    Ok(String::from_utf8(buf)?)
}

/// Rows as an aligned text table.
pub fn to_table(batches: &[RecordBatch]) -> anyhow::Result<String> {
    Ok(arrow::util::pretty::pretty_format_batches(batches)?.to_string())
}

#[derive(Serialize)]
struct QueryOut {
    rows: Vec<serde_json::Value>,
    seconds: f64,
}

/// Runs one `fleet query` and prints its rows (`--json`: `{rows, seconds}`).
pub fn run(a: &QueryArgs, json: bool) -> anyhow::Result<()> {
    if a.list {
        return list(json);
    }
    let sql = sql_of(a)?;
    let dir = a.dir.as_ref().context("give --dir DIR")?;
    let memory_limit = match a.memory_limit {
        Some(m) => m,
        None => default_memory_limit()?,
    };
    let fleet = Fleet::open(dir, memory_limit)?;
    for t in &fleet.empty {
        eprintln!("note: {} has no {t} table yet (queried as empty)", dir.display());
    }
    let start = Instant::now();
    let batches = fleet.query(&sql).context("the query failed")?;
    let seconds = start.elapsed().as_secs_f64();
    if json {
        return print_json(&QueryOut { rows: to_json_rows(&batches)?, seconds });
    }
    if a.csv {
        print!("{}", to_csv(&batches)?);
    } else {
        println!("{}", to_table(&batches)?);
    }
    eprintln!("{} rows in {seconds:.3} s", batches.iter().map(|b| b.num_rows()).sum::<usize>());
    Ok(())
}
