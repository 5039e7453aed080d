//! `varve-bench`: generate TSBS-style datasets, run a benchmark suite against a lake, and check
//! every answer against DuckDB. See `docs/performance.md`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use varve_bench::gen::{self, Dataset, FileFormat, GenSpec};
use varve_bench::run::{self, RunOptions, Target};
use varve_bench::store::Latency;
use varve_bench::suites::Suite;

/// jemalloc returns freed memory to the system; glibc malloc's per-thread arenas kept up to 1.7x
/// the heap resident in a compaction (bench/results/HISTORY.md, "Compaction memory, and a
/// footer cache").
#[cfg(all(feature = "jemalloc", not(target_env = "msvc")))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[derive(Parser)]
#[command(
    name = "varve-bench",
    version,
    about = "Varve's benchmark suite: TSBS IoT and DevOps workloads and a trades tape, generated at any scale, \
             loaded into a lake, queried, timed, and checked against DuckDB on the same Parquet files",
    after_help = "Examples:\n  \
      varve-bench run iot --scale 10 --duration 2h       # a quick run, local lake\n  \
      varve-bench run devops --target s3 --delay 20ms    # 100 hosts x 24 h, S3, 20 ms/request\n  \
      varve-bench gen iot --out-of-order 0.1 --missing 0.01\n  \
      varve-bench queries iot --scale 10                 # the SQL a run asks\n  \
      varve-bench writes                                 # encoding, micro-commits, compaction\n\n\
      Results go to bench/results/, data to bench/data/ (relative to the working directory)."
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Generate a dataset (deterministic for a seed) into files.
    Gen {
        /// iot (trucks: readings, diagnostics), devops (hosts: cpu) or trades.
        dataset: Dataset,
        #[command(flatten)]
        data: DataArgs,
        /// Output format.
        #[arg(long, value_enum, default_value = "parquet")]
        format: FileFormat,
        /// Directory to write into (default: <data-dir>/<a name that identifies the data>).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Run a suite: generate or reuse the data, load it, run every query on Varve and DuckDB,
    /// check the answers agree, and write results to bench/results/.
    Run {
        /// iot, devops or basic (over trades).
        suite: Suite,
        #[command(flatten)]
        data: DataArgs,
        /// Where the lake lives: local disk, or a bucket on a local S3-compatible server
        /// (--s3-server).
        #[arg(long, value_enum, default_value = "local")]
        target: Target,
        /// The S3-compatible server of --target s3: moto (what the tests use; it serves one
        /// request at a time) or s3s-fs (serves requests in parallel, each slower than moto's
        /// here; install it with scripts/setup-s3s-fs).
        #[arg(long, default_value = "moto", value_parser = varve_testkit::S3Kind::from_name)]
        s3_server: varve_testkit::S3Kind,
        /// Delay added to every storage request, e.g. 20ms (with --target s3: a remote object store).
        #[arg(long, value_parser = humantime::parse_duration)]
        delay: Option<std::time::Duration>,
        /// Bandwidth cap per response, e.g. 50MiB (bytes per second).
        #[arg(long, value_parser = parse_bytes)]
        bandwidth: Option<u64>,
        /// Warm runs per query after the first run (at least 1; best = the fastest).
        #[arg(long, default_value_t = 5)]
        runs: u32,
        /// Rows per commit when loading.
        #[arg(long, default_value_t = 100_000)]
        commit_rows: usize,
        /// Passes over the queries (each query on every lake in turn, in each pass, the lakes in
        /// reverse order every other pass); a query's best is its best over all passes, so that
        /// side-by-side phases see the same host.
        #[arg(long, default_value_t = 1)]
        rounds: u32,
        /// Cancel a Varve query (recorded as failed) after this long.
        #[arg(long, default_value = "10m", value_parser = humantime::parse_duration)]
        timeout: std::time::Duration,
        /// Run only this query (repeat for more).
        #[arg(long = "query", value_name = "NAME")]
        only: Vec<String>,
        /// Where results go.
        #[arg(long, default_value = "bench/results")]
        results_dir: PathBuf,
        /// Keep the local lake after the run, and with --maintain or --one-commit-baseline the
        /// second lakes too (their paths are printed; --target local only).
        #[arg(long)]
        keep_lake: bool,
        /// Load the data twice by the same commits, maintain every table of one lake (compaction,
        /// expiry, orphan cleanup; timed, with its peak memory, in a fresh process), then run each
        /// query on the unmaintained copy (phase `before`) and on the maintained lake (`after`)
        /// one after the other: results show each query before and after, side by side.
        #[arg(long)]
        maintain: bool,
        /// Also load the same data into a second lake in one commit per table and run the
        /// queries on it (phase `one-commit`): the report then compares each query's best time
        /// with the one-commit table's.
        #[arg(long)]
        one_commit_baseline: bool,
        /// A lake option for Varve's queries, KEY=VALUE (repeat for more), e.g. cache=off,
        /// version-check-interval=0s, filter-pushdown=on: the storage options of `varve -o`.
        #[arg(long = "lake-option", value_name = "KEY=VALUE", value_parser = parse_kv)]
        lake_options: Vec<(String, String)>,
        /// A table property set on every table the run creates, KEY=VALUE (repeat for more), e.g.
        /// varve.auto-maintain=false to time appends without inline maintenance.
        #[arg(long = "table-property", value_name = "KEY=VALUE", value_parser = parse_kv)]
        table_properties: Vec<(String, String)>,
    },
    /// Write-path benchmarks on IoT readings, each side by side in one run: appends with columns
    /// encoded on one thread vs one per core, 1,000 micro-commits with inline maintenance (latency
    /// curve, then queries against a one-commit table), and compaction of a 1 GiB partition
    /// (seconds, rows/s, peak memory in a fresh process).
    Writes {
        #[command(flatten)]
        data: DataArgs,
        /// Run only this experiment (repeat for more; default all).
        #[arg(long = "only", value_enum, value_name = "EXPERIMENT")]
        only: Vec<varve_bench::writes::Experiment>,
        /// Rows per append of the encoding experiment.
        #[arg(long, default_value_t = 72_000)]
        append_rows: usize,
        /// Appends of the micro-commit experiment.
        #[arg(long, default_value_t = 1_000)]
        micro_commits: usize,
        /// Rows per append of the micro-commit experiment.
        #[arg(long, default_value_t = 300)]
        micro_rows: usize,
        /// Data bytes in the partition the compaction experiment compacts, e.g. 1GiB.
        #[arg(long, default_value = "1GiB", value_parser = parse_bytes)]
        compact_bytes: u64,
        /// Keep the compaction experiment's lake (maintained) and a copy of it as loaded, before
        /// maintenance (`<lake>.before`), for repeated `maintain-probe` runs. The lake's metadata
        /// holds absolute paths: copy `<lake>.before` back to `<lake>` to probe it again.
        #[arg(long)]
        keep_compaction_lake: bool,
        /// Keep the micro-commit experiment's lake (tables `w.micro` and `w.one`) and print its
        /// path, for repeated `probe` runs.
        #[arg(long)]
        keep_micro_lake: bool,
        /// Where results go.
        #[arg(long, default_value = "bench/results")]
        results_dir: PathBuf,
    },
    /// Print a suite's queries with their parameters filled in.
    Queries {
        /// iot, devops or basic.
        suite: Suite,
        #[command(flatten)]
        data: DataArgs,
    },
    /// Run one query in this process (used by `run` for each first run in a fresh process).
    #[command(hide = true)]
    Probe {
        #[arg(long)]
        lake: String,
        #[arg(short = 'o', value_parser = parse_kv)]
        options: Vec<(String, String)>,
        #[arg(long)]
        sql: String,
        #[arg(long, default_value_t = 5)]
        runs: u32,
        #[arg(long)]
        out: PathBuf,
        #[arg(long, default_value_t = 0.0)]
        delay_ms: f64,
        #[arg(long)]
        bandwidth: Option<u64>,
        #[arg(long, default_value = "10m", value_parser = humantime::parse_duration)]
        timeout: std::time::Duration,
    },
    /// Maintain every table of a lake in this process (used by `run --maintain`); prints JSON.
    #[command(hide = true)]
    MaintainProbe {
        #[arg(long)]
        lake: String,
        #[arg(short = 'o', value_parser = parse_kv)]
        options: Vec<(String, String)>,
        #[arg(long, default_value_t = 0.0)]
        delay_ms: f64,
        #[arg(long)]
        bandwidth: Option<u64>,
    },
}

#[derive(Args, Clone)]
struct DataArgs {
    /// Trucks (iot), hosts (devops) or symbols (trades). Default: 1000, 100, 100.
    #[arg(long)]
    scale: Option<u32>,
    /// Length of the generated period, e.g. 24h, 90m.
    #[arg(long, default_value = "24h", value_parser = humantime::parse_duration)]
    duration: std::time::Duration,
    /// First timestamp: RFC 3339 (2026-01-01T00:00:00Z) or a date (2026-01-01, midnight UTC).
    #[arg(long, default_value = "2026-01-01T00:00:00Z", value_parser = parse_start)]
    start: chrono::DateTime<chrono::Utc>,
    /// Seed of every random choice (data and query parameters).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// iot: share of entries delivered late, after newer ones (0..1).
    #[arg(long, default_value_t = 0.0)]
    out_of_order: f64,
    /// iot: how late a late entry can be.
    #[arg(long, default_value = "5m", value_parser = humantime::parse_duration)]
    max_lateness: std::time::Duration,
    /// iot: share of entries never delivered (0..1).
    #[arg(long, default_value_t = 0.0)]
    missing: f64,
    /// trades: mean trades per second per symbol.
    #[arg(long, default_value_t = 1.0)]
    rate: f64,
    /// Rows per generated file.
    #[arg(long, default_value_t = 1_000_000)]
    file_rows: usize,
    /// Where datasets are kept (and reused) and where local lakes live during a run.
    #[arg(long, default_value = "bench/data")]
    data_dir: PathBuf,
}

impl DataArgs {
    fn spec(&self, dataset: Dataset, format: FileFormat) -> Result<GenSpec, String> {
        let spec = GenSpec {
            dataset,
            scale: self.scale.unwrap_or(match dataset {
                Dataset::Iot => 1000,
                Dataset::Devops | Dataset::Trades => 100,
            }),
            start_us: self.start.timestamp_micros(),
            duration_us: self.duration.as_micros() as i64,
            seed: self.seed,
            format,
            out_of_order: self.out_of_order,
            missing: self.missing,
            max_lateness_us: self.max_lateness.as_micros() as i64,
            rate: self.rate,
            file_rows: self.file_rows,
        };
        spec.validate()?;
        Ok(spec)
    }
}

fn parse_start(s: &str) -> Result<chrono::DateTime<chrono::Utc>, String> {
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(s) {
        return Ok(t.with_timezone(&chrono::Utc));
    }
    chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .map(|d| d.and_hms_opt(0, 0, 0).expect("midnight").and_utc())
        .map_err(|_| format!("{s:?} is neither an RFC 3339 time (2026-01-01T00:00:00Z) nor a date (2026-01-01)"))
}

fn parse_kv(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .ok_or_else(|| format!("expected KEY=VALUE, got {s:?}"))
}

/// `50MiB`, `10MB`, `1048576` (bytes; a trailing `/s` is allowed).
fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim().trim_end_matches("/s");
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().map_err(|_| format!("{s:?} is not a size like 50MiB"))?;
    let mult = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "kb" => 1e3,
        "kib" => 1024.0,
        "mb" => 1e6,
        "mib" => 1024.0 * 1024.0,
        "gb" => 1e9,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        u => {
            return Err(format!(
                "unknown unit {u:?} in {s:?} (use B, KB, KiB, MB, MiB, GB, GiB)"
            ))
        }
    };
    let v = (n * mult) as u64;
    if v == 0 {
        return Err("the bandwidth must be at least 1 byte/s".into());
    }
    Ok(v)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging();
    match real_main(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn real_main(cli: Cli) -> Result<ExitCode, String> {
    match cli.command {
        Cmd::Gen {
            dataset,
            data,
            format,
            out,
        } => {
            let spec = data.spec(dataset, format)?;
            let dir = out.unwrap_or_else(|| data.data_dir.join(spec.dir_name()));
            if gen::DatasetInfo::read(&dir).is_some() {
                return Err(format!("{} holds a dataset already (delete it first)", dir.display()));
            }
            let t = std::time::Instant::now();
            let bar = indicatif::ProgressBar::new(1000);
            let info = gen::generate(&spec, &dir, &|f| bar.set_position((f * 1000.0) as u64))?;
            bar.finish_and_clear();
            for t in &info.tables {
                println!(
                    "{}: {} rows in {} files, {:.1} MiB",
                    t.name,
                    t.rows,
                    t.files.len(),
                    t.bytes as f64 / 1048576.0
                );
            }
            let shown = std::fs::canonicalize(&dir).unwrap_or(dir);
            println!("wrote {} in {:.1} s", shown.display(), t.elapsed().as_secs_f64());
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Queries { suite, data } => {
            let spec = data.spec(suite.dataset(), FileFormat::Parquet)?;
            for q in suite.queries(&spec) {
                println!("-- {}: {}\n{};\n", q.name, q.description, q.sql);
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Run {
            suite,
            data,
            target,
            s3_server,
            delay,
            bandwidth,
            runs,
            commit_rows,
            rounds,
            timeout,
            only,
            results_dir,
            keep_lake,
            maintain,
            one_commit_baseline,
            lake_options,
            table_properties,
        } => {
            if commit_rows == 0 {
                return Err("--commit-rows must be at least 1".into());
            }
            let spec = data.spec(suite.dataset(), FileFormat::Parquet)?;
            let opts = RunOptions {
                suite,
                spec,
                data_dir: data.data_dir.clone(),
                target,
                s3_server,
                latency: Latency {
                    delay_ms: delay.map(|d| d.as_secs_f64() * 1000.0).unwrap_or(0.0),
                    bandwidth,
                },
                timeout,
                runs,
                commit_rows,
                rounds,
                only,
                results_dir,
                keep_lake,
                maintain,
                one_commit_baseline,
                lake_options,
                table_properties,
                command: std::env::args().collect::<Vec<_>>().join(" "),
            };
            let outcome = run::run(&opts)?;
            println!("{}", std::fs::read_to_string(&outcome.markdown).unwrap_or_default());
            eprintln!(
                "results: {} and {}",
                outcome.jsonl.display(),
                outcome.markdown.display()
            );
            if outcome.failures.is_empty() {
                Ok(ExitCode::SUCCESS)
            } else {
                for f in &outcome.failures {
                    eprintln!("FAILED {f}");
                }
                eprintln!(
                    "{} of the queries failed or disagreed with DuckDB",
                    outcome.failures.len()
                );
                Ok(ExitCode::from(1))
            }
        }
        Cmd::Writes {
            data,
            only,
            append_rows,
            micro_commits,
            micro_rows,
            compact_bytes,
            keep_compaction_lake,
            keep_micro_lake,
            results_dir,
        } => {
            if append_rows == 0 || micro_rows == 0 {
                return Err("--append-rows and --micro-rows must be at least 1".into());
            }
            let opts = varve_bench::writes::WritesOptions {
                spec: data.spec(Dataset::Iot, FileFormat::Parquet)?,
                data_dir: data.data_dir.clone(),
                results_dir,
                only,
                append_rows,
                micro_commits,
                micro_rows,
                compact_bytes,
                keep_compaction_lake,
                keep_micro_lake,
                command: std::env::args().collect::<Vec<_>>().join(" "),
            };
            let md = varve_bench::writes::run(&opts)?;
            println!("{}", std::fs::read_to_string(&md).unwrap_or_default());
            eprintln!("results: {}", md.display());
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Probe {
            lake,
            options,
            sql,
            runs,
            out,
            delay_ms,
            bandwidth,
            timeout,
        } => {
            let options: HashMap<String, String> = options.into_iter().collect();
            let rt = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
            let latency = Latency { delay_ms, bandwidth };
            let p = rt.block_on(varve_bench::probe::probe(
                &lake, &options, latency, &sql, runs, timeout, &out,
            ))?;
            println!("{}", serde_json::to_string(&p).map_err(|e| e.to_string())?);
            Ok(ExitCode::SUCCESS)
        }
        Cmd::MaintainProbe {
            lake,
            options,
            delay_ms,
            bandwidth,
        } => {
            let options: HashMap<String, String> = options.into_iter().collect();
            let rt = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
            let latency = Latency { delay_ms, bandwidth };
            let r = rt.block_on(varve_bench::maintain_step::maintain_all(&lake, &options, latency))?;
            println!("{}", serde_json::to_string(&r).map_err(|e| e.to_string())?);
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Diagnostics on stderr, chosen by `RUST_LOG` (for example `RUST_LOG=varve=debug` shows each
/// commit attempt and the phases of every append); silent when it is unset.
fn init_logging() {
    if std::env::var_os("RUST_LOG").is_some() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .try_init();
    }
}
