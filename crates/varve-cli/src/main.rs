//! `varve`: the command-line tool of the Varve time-series lakehouse.
//!
//! Each subcommand is a thin layer over [`varve::Lake`]: it parses options, calls the engine and
//! formats the answer. Errors print one line and exit with a code by kind (see `docs/cli.md`).

mod demo;
mod import;
mod ingest;
mod maintain;
mod output;
mod rollup;
mod serve;
mod shell;
mod table;
mod token;

use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use varve::{ErrorKind, Lake, Partitioning, TableContract};

/// jemalloc returns freed memory to the system; glibc malloc's per-thread arenas kept up to 1.7x
/// the heap resident in a compaction (bench/results/HISTORY.md, "Compaction memory, and a
/// footer cache").
#[cfg(all(feature = "jemalloc", not(target_env = "msvc")))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use crate::output::OutputFormat;

/// Varve: time series in your own storage as Iceberg tables, queried with SQL.
#[derive(Debug, Parser)]
#[command(name = "varve", version, about, long_about = None, after_help = "\
Examples:
  varve demo
  varve import stocks stocks.csv.gz --series-key Ticker
  varve sql \"SELECT Ticker, max(Close) FROM stocks GROUP BY Ticker\"
  varve --lake s3://bucket/lake ls

Diagnostics: RUST_LOG=varve=debug shows each commit attempt and the phases of every append on
stderr.")]
struct Cli {
    /// The lake: a directory, file:///path, s3://bucket/prefix or memory://. Default: $VARVE_LAKE,
    /// else ./varve-lake. Only import and create make a missing local lake directory.
    #[arg(long, global = true)]
    lake: Option<String>,
    /// A storage option as key=value (S3: endpoint, region, access_key_id, secret_access_key,
    /// allow_http; Varve: version-check-interval, cache=memory|disk|off, cache-memory-bytes,
    /// cache-dir, cache-disk-bytes, cache-block-bytes, cache-request-bytes, cache-coalesce-bytes,
    /// cache-decoded-bytes, filter-pushdown=auto|on|off, read-ahead-bytes; see
    /// docs/operations.md). Repeatable. AWS_*
    /// environment variables are read too.
    #[arg(long = "storage-option", short = 'o', global = true, value_name = "KEY=VALUE")]
    storage_options: Vec<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Load CSV, TSV (optionally gzip-compressed), Parquet or NDJSON files into a table.
    Import(Box<import::ImportArgs>),
    /// Run SQL statements and print their results; without a statement, an interactive shell.
    Sql(SqlArgs),
    /// Create an empty table from column definitions.
    Create(CreateArgs),
    /// List the tables of the lake.
    Ls {
        #[command(flatten)]
        out: OutputArgs,
    },
    /// Show a table's columns, contract and size: rows, files, bytes, snapshots, time range, series.
    Info {
        /// The table, as namespace.table or table.
        table: String,
        /// Print the size and shape as one JSON object (rows, live_files, delete_files, bytes,
        /// manifests, snapshots, partitions, min_time, max_time, series, properties); the same as
        /// --format json.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        out: OutputArgs,
    },
    /// Maintain tables: drop data past retention, merge small files, expire old snapshots, delete
    /// unreferenced files.
    Maintain(maintain::MaintainArgs),
    /// Change a table's columns (add, rename, drop, widen) or properties (varve.retention, ...).
    Alter(maintain::AlterArgs),
    /// Materialized rollups of a table (per group and time bucket), which answer coarser queries
    /// on it: create, drop, ls, refresh.
    Rollup(rollup::RollupArgs),
    /// Delete the rows matching a condition (--where), or every row (--all).
    Delete(maintain::DeleteArgs),
    /// Print the newest row of every series of a table.
    Latest {
        /// The table.
        table: String,
        #[command(flatten)]
        out: OutputArgs,
    },
    /// List a table's snapshots: id, time, operation, rows added, batch id, note.
    History {
        /// The table.
        table: String,
        #[command(flatten)]
        out: OutputArgs,
    },
    /// Delete a table and all its files.
    Drop {
        /// The table.
        table: String,
        /// Do not ask for confirmation (on a terminal `drop` asks first; off one it never asks).
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// Serve the lake: SQL over HTTP (JSON, CSV, NDJSON, Arrow IPC, Parquet) and the PostgreSQL
    /// wire protocol, writes (line protocol, CSV, NDJSON, Arrow, Parquet, COPY), with tokens and
    /// limits, until SIGINT or SIGTERM.
    Serve(serve::ServeArgs),
    /// Read Kafka topics into tables, exactly once, through a local write-ahead log: records
    /// are visible to queries about a second after they arrive (--commit-interval), bad ones go
    /// to the table `<table>__rejected`; runs until SIGINT or SIGTERM (docs/ingest.md).
    Ingest(ingest::IngestArgs),
    /// Manage the tokens of a token file (`serve --token-file`): add, ls, revoke.
    Token(token::TokenArgs),
    /// Create a lake in a fresh directory, import real data and run example queries. The lake
    /// goes to DIR/lake and the input files to DIR/input; --lake and -o do not apply.
    Demo {
        /// Directory for the demo (must not exist yet): the lake goes to DIR/lake, the input
        /// files to DIR/input. Default: a new directory under the system's temporary directory.
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Refused here: the demo makes its own lake (hidden; takes the place of the global one,
        /// so `varve demo --help` does not offer it).
        #[arg(long, hide = true)]
        lake: Option<String>,
        /// Refused here, as --lake (hidden).
        #[arg(long = "storage-option", short = 'o', hide = true, value_name = "KEY=VALUE")]
        storage_options: Vec<String>,
    },
}

/// How a command prints its result; the same options on sql, latest, info, history and ls.
#[derive(Debug, Args)]
struct OutputArgs {
    /// Output format: table (aligned), csv, json (an array of objects), ndjson or parquet (needs
    /// --output). Default: a table on a terminal and CSV otherwise for sql and latest; the
    /// command's own text for info, history and ls.
    #[arg(long, value_enum)]
    format: Option<OutputFormat>,
    /// Write the result to this file instead of standard output (a .parquet name picks parquet).
    #[arg(long, short = 'O', value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct SqlArgs {
    /// The statements, e.g. "SELECT * FROM trades LIMIT 10" (several separated by ;), or - to
    /// read them from standard input. Without one (and without --file), a terminal gets an
    /// interactive shell and a pipe is read as a script.
    query: Option<String>,
    /// Read the statements from this file (- for standard input).
    #[arg(long, short = 'f', value_name = "FILE", conflicts_with = "query")]
    file: Option<PathBuf>,
    #[command(flatten)]
    out: OutputArgs,
    /// Cancel the query after this many seconds.
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<f64>,
    /// Fail when the result has more rows than this.
    #[arg(long, value_name = "ROWS")]
    max_rows: Option<usize>,
    /// Bound the query's memory (bytes, or with a unit: 512MiB, 2GiB); sorts and aggregates spill
    /// to the temporary directory before the query fails.
    #[arg(long, value_name = "BYTES")]
    memory_limit: Option<String>,
}

/// Parses `1048576`, `512KiB`, `64MiB`, `2GiB` (also KB/MB/GB as powers of 1000, and K/M/G as 1024).
fn parse_bytes(s: &str) -> varve::Result<usize> {
    varve::parse_bytes(s).map(|n| n as usize)
}

#[derive(Debug, Args)]
struct CreateArgs {
    /// The table to create, as namespace.table or table.
    table: String,
    /// A column as name:type, types: bool, int32, int64, float32, float64, string, date,
    /// timestamp, timestamptz. Repeatable, in order.
    #[arg(long = "column", short = 'c', required = true, value_name = "NAME:TYPE")]
    columns: Vec<String>,
    /// The time column (makes a time-series table).
    #[arg(long)]
    time_column: Option<String>,
    /// Series key columns, comma-separated or repeated.
    #[arg(long, value_delimiter = ',')]
    series_key: Vec<String>,
    /// Partition granularity of the time column: hour, day, month or year.
    #[arg(long, default_value = "day")]
    partition: String,
    /// What an append does with a (series key, time) already stored: none (keep every row) or
    /// last-write-wins (the newest write replaces the stored row, as every Iceberg reader sees).
    #[arg(long, default_value = "none", value_name = "MODE")]
    dedup: String,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(varve::THREAD_STACK_BYTES)
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    // The command runs on a worker thread (with the large stack), not on the main thread.
    let result = rt
        .block_on(rt.spawn(run(cli)))
        .unwrap_or_else(|e| Err(varve::Error::internal(format!("the command failed unexpectedly: {e}"))));
    // A commit's last check of the version hint runs after it answers: let it finish.
    rt.block_on(varve::settle());
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of our output went away (`varve sql ... | head -1`): stop quietly.
        Err(e) if e.has_io_kind(std::io::ErrorKind::BrokenPipe) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(exit_code(e.kind()))
        }
    }
}

/// Exit codes by error kind: 2 bad input, 3 not found, 4 exists, 5 conflict, 6 storage, 1 other.
fn exit_code(kind: ErrorKind) -> u8 {
    match kind {
        ErrorKind::InvalidInput | ErrorKind::SchemaMismatch => 2,
        ErrorKind::NotFound => 3,
        ErrorKind::AlreadyExists => 4,
        ErrorKind::Conflict => 5,
        ErrorKind::Storage => 6,
        _ => 1,
    }
}

pub(crate) fn parse_storage_options(opts: &[String]) -> varve::Result<HashMap<String, String>> {
    opts.iter()
        .map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.to_string()))
                .ok_or_else(|| varve::Error::invalid(format!("storage option {kv:?}: expected KEY=VALUE")))
        })
        .collect()
}

async fn run(cli: Cli) -> varve::Result<()> {
    let mut options = parse_storage_options(&cli.storage_options)?;
    if let Command::Demo {
        dir,
        lake,
        storage_options,
    } = &cli.command
    {
        if cli.lake.is_some() || lake.is_some() || !cli.storage_options.is_empty() || !storage_options.is_empty() {
            return Err(varve::Error::invalid(
                "varve demo makes a fresh lake of its own; give --dir DIR instead of --lake or -o",
            ));
        }
        return demo::run(dir.clone()).await;
    }
    if let Command::Token(args) = cli.command {
        return token::run(args, cli.lake.is_some() || !cli.storage_options.is_empty());
    }
    // `varve serve --config FILE` may name the lake and its storage options.
    let serve_file = match &cli.command {
        Command::Serve(args) => match &args.config {
            Some(path) => serve::read_config(path)?,
            None => serve::ServeFile::default(),
        },
        _ => serve::ServeFile::default(),
    };
    let ingest_file = match &cli.command {
        Command::Ingest(args) => match &args.config {
            Some(path) => serve::read_config::<varve_ingest::config::IngestFile>(path)?,
            None => Default::default(),
        },
        _ => Default::default(),
    };
    for (k, v) in serve_file.storage.iter().chain(&ingest_file.storage) {
        options.entry(k.clone()).or_insert_with(|| v.clone());
    }
    let url = cli
        .lake
        .clone()
        .or_else(|| serve_file.lake.clone())
        .or_else(|| ingest_file.lake.clone())
        .unwrap_or_else(varve::default_lake_url);
    let writes = matches!(
        cli.command,
        Command::Import(_) | Command::Create(_) | Command::Ingest(_)
    );
    if !writes && !url.contains(':') && !std::path::Path::new(&url).is_dir() {
        return Err(varve::Error::not_found(format!(
            "no lake at {url}: a local lake is made by the first `varve import` or `varve create` (or give --lake)"
        )));
    }
    let lake = Lake::open(&url, &options)?;
    match cli.command {
        Command::Import(args) => import::run(&lake, *args).await,
        Command::Sql(args) => {
            let limits = varve::QueryOptions {
                timeout: match args.timeout {
                    Some(t) if t.is_finite() && t > 0.0 => Some(std::time::Duration::from_secs_f64(t)),
                    Some(t) => {
                        return Err(varve::Error::invalid(format!(
                            "--timeout {t}: must be more than 0 seconds"
                        )))
                    }
                    None => None,
                },
                max_rows: args.max_rows,
                memory_limit: args.memory_limit.as_deref().map(parse_bytes).transpose()?,
            };
            let mut shell = shell::Shell::new(&lake, lake.session(limits)?, args.out.format, args.out.output);
            match (args.query.as_deref(), args.file.as_deref()) {
                (Some("-"), _) => shell.run_file(std::path::Path::new("-")).await,
                (Some(q), _) => shell.run_script(q).await,
                (None, Some(f)) => shell.run_file(f).await,
                (None, None) if shell::stdin_is_terminal() => shell.interactive().await,
                (None, None) => shell.run_file(std::path::Path::new("-")).await,
            }
        }
        Command::Create(args) => create(&lake, args).await,
        Command::Ls { out } => {
            let tables = lake.tables().await?;
            if tables.is_empty() {
                eprintln!("no tables in {}", lake.url());
            }
            let names: Vec<String> = tables.iter().map(|t| t.to_string()).collect();
            if out.format.is_some() || out.output.is_some() {
                return output::write_result(&output::tables_result(&names)?, out.format, out.output.as_deref());
            }
            if names.is_empty() {
                return Ok(());
            }
            output::line(&names.join("\n"))
        }
        Command::Info { table, json, out } => {
            let format = if json { Some(OutputFormat::Json) } else { out.format };
            output::print_info(&lake, &table, format, out.output.as_deref()).await
        }
        Command::Maintain(args) => maintain::run(&lake, args).await,
        Command::Serve(args) => serve::run(lake, args, serve_file).await,
        Command::Ingest(args) => ingest::run(lake, args, ingest_file).await,
        Command::Token(args) => token::run(args, true),
        Command::Alter(args) => maintain::alter(&lake, args).await,
        Command::Rollup(args) => rollup::run(&lake, args).await,
        Command::Delete(args) => maintain::delete(&lake, args).await,
        Command::Latest { table, out } => {
            let r = lake.latest(&table).await?;
            output::write_result(&r, out.format, out.output.as_deref())
        }
        Command::History { table, out } => {
            output::print_history(&lake.history(&table).await?, out.format, out.output.as_deref())
        }
        Command::Drop { table, yes } => {
            let ident = varve::TableIdent::parse(&table)?;
            let info = lake.info(&table).await?;
            let what = format!(
                "{ident} ({} rows in {} data files, {})",
                info.rows,
                info.live_files,
                output::human_bytes(info.bytes)
            );
            if !yes && std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
                eprint!("drop table {what} and delete all its files and snapshots? [y/N] ");
                let mut answer = String::new();
                std::io::stdin()
                    .read_line(&mut answer)
                    .map_err(|e| varve::Error::invalid(format!("reading the answer: {e}")))?;
                if !matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes") {
                    eprintln!("not dropped");
                    return Ok(());
                }
            }
            lake.drop_table(&table).await?;
            output::line(&format!("dropped {what}"))
        }
        Command::Demo { .. } => unreachable!("handled above"),
    }
}

async fn create(lake: &Lake, args: CreateArgs) -> varve::Result<()> {
    use varve::arrow::datatypes::{Field, Schema};
    let mut fields = Vec::new();
    for c in &args.columns {
        let (name, ty) = c
            .rsplit_once(':')
            .ok_or_else(|| varve::Error::invalid(format!("column {c:?}: expected NAME:TYPE, e.g. price:float64")))?;
        let dt = varve::parse_type(ty).map_err(|e| varve::Error::invalid(format!("column {name}: {}", e.message())))?;
        fields.push(Field::new(name.trim(), dt, true));
    }
    let contract = match &args.time_column {
        Some(t) => TableContract::time_series(t.clone())
            .with_series_key(args.series_key.clone())
            .with_partitioning(args.partition.parse::<Partitioning>()?)
            .with_dedup(args.dedup.parse()?),
        None if args.dedup.parse::<varve::Dedup>()? != varve::Dedup::None => {
            return Err(varve::Error::invalid(
                "--dedup needs --time-column: rows are matched on series key and time",
            ))
        }
        None => TableContract::default(),
    };
    let d = lake.create_table(&args.table, &Schema::new(fields), &contract).await?;
    output::line(&format!("created {} at {}", d.ident, d.location))
}

/// Diagnostics on stderr, chosen by `RUST_LOG` (for example `RUST_LOG=varve=debug` shows each
/// commit attempt and the phases of every append); silent when it is unset.
fn init_logging() {
    if std::env::var_os("RUST_LOG").is_some() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .try_init();
    }
}
