//! Write-path benchmarks (`varve-bench writes`), each side by side in one run on IoT readings:
//!
//! - **encoding**: the readings loaded in appends of `--append-rows` (72,000) twice, into a table
//!   whose columns are encoded on one thread (`varve.encode-threads=1`) and into one that uses every
//!   core (the default), inline maintenance off in both so that only encoding differs;
//! - **micro-commits**: `--micro-commits` (1,000) appends of `--micro-rows` (300) rows with inline
//!   maintenance on (the default), each append's latency recorded, then five queries against the
//!   same rows loaded in one commit (20 warm runs each, the two tables' runs alternating; answers
//!   compared);
//! - **compaction**: copies of the readings (truck names suffixed per copy) appended into one day
//!   partition until it holds `--compact-bytes` (1 GiB) in appends of 500,000 rows, then
//!   `Lake::maintain` in a fresh process (`maintain-probe`): seconds, rows/s and peak memory.
//!
//! Results go to `<results-dir>/<time>-writes-<dataset>.{jsonl,md}`.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use arrow::array::{AsArray, RecordBatch, StringArray};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde::Serialize;
use varve::{AppendOptions, Lake, Partitioning, TableContract};

use crate::compare::{compare, Rows};
use crate::gen::GenSpec;
use crate::maintain_step::MaintainRecord;
use crate::report::{self, geomean};

/// One experiment of `varve-bench writes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
pub enum Experiment {
    /// Appends with columns encoded on one thread vs on every core.
    Encoding,
    /// Many small appends with inline maintenance: latency curve and queries afterwards.
    MicroCommits,
    /// Compaction of a partition of `--compact-bytes`: time, rows/s, peak memory.
    Compaction,
}

/// Everything `varve-bench writes` needs.
#[derive(Debug, Clone)]
pub struct WritesOptions {
    /// The IoT dataset whose readings are written.
    pub spec: GenSpec,
    /// Where datasets and the run's lakes live.
    pub data_dir: PathBuf,
    /// Where results go.
    pub results_dir: PathBuf,
    /// The experiments to run (all when empty).
    pub only: Vec<Experiment>,
    /// Rows per append of the encoding experiment.
    pub append_rows: usize,
    /// Appends of the micro-commit experiment.
    pub micro_commits: usize,
    /// Rows per append of the micro-commit experiment.
    pub micro_rows: usize,
    /// Bytes of data files in the partition that the compaction experiment compacts.
    pub compact_bytes: u64,
    /// Whether the compaction experiment keeps its lake, and a copy of it before maintenance
    /// (`<lake>.before`).
    pub keep_compaction_lake: bool,
    /// Whether the micro-commit experiment keeps its lake (tables `w.micro` and `w.one`).
    pub keep_micro_lake: bool,
    /// The command line, recorded with the results.
    pub command: String,
}

/// The encoding experiment's result.
#[derive(Debug, Clone, Serialize)]
pub struct EncodingRecord {
    /// Rows loaded into each table.
    pub rows: u64,
    /// Rows per append.
    pub append_rows: usize,
    /// Columns of the readings.
    pub columns: usize,
    /// Seconds of appends with one encoder thread.
    pub serial_seconds: f64,
    /// Rows per second with one encoder thread.
    pub serial_rows_per_s: f64,
    /// Seconds of appends with one encoder thread per core.
    pub parallel_seconds: f64,
    /// Rows per second with one encoder thread per core.
    pub parallel_rows_per_s: f64,
    /// `parallel_rows_per_s / serial_rows_per_s`.
    pub speedup: f64,
    /// Cores of the machine (encoder threads of the parallel table).
    pub cores: usize,
}

/// One query of the micro-commit experiment.
#[derive(Debug, Clone, Serialize)]
pub struct MicroQuery {
    /// Short name.
    pub name: String,
    /// The SQL, with `{t}` for the table.
    pub sql: String,
    /// Best warm ms on the micro-committed table.
    pub micro_best_ms: f64,
    /// Best warm ms on the one-commit table.
    pub one_commit_best_ms: f64,
    /// Median warm ms on the micro-committed table.
    pub micro_median_ms: f64,
    /// Median warm ms on the one-commit table.
    pub one_commit_median_ms: f64,
    /// `micro_best_ms / one_commit_best_ms`.
    pub ratio: f64,
    /// `micro_median_ms / one_commit_median_ms`.
    pub median_ratio: f64,
    /// `match`, or what differs between the two answers.
    pub check: String,
}

/// The micro-commit experiment's result.
#[derive(Debug, Clone, Serialize)]
pub struct MicroRecord {
    /// Appends made.
    pub commits: usize,
    /// Rows per append.
    pub rows_per_commit: usize,
    /// Median append latency (encode, upload, commit, inline maintenance) of each block of 100
    /// appends, ms.
    pub block_p50_ms: Vec<f64>,
    /// Slowest append of each block of 100, ms.
    pub block_max_ms: Vec<f64>,
    /// Median of the last 100 over the median of the first 100.
    pub flat_ratio: f64,
    /// Partitions compacted inline over all appends.
    pub inline_compactions: u64,
    /// Live data files after the last append.
    pub files_after: u64,
    /// The queries, against the same rows in one commit.
    pub queries: Vec<MicroQuery>,
    /// Geomean of the query ratios.
    pub geomean_ratio: f64,
    /// Geomean of the queries' median ratios.
    pub geomean_median_ratio: f64,
}

/// The compaction experiment's result.
#[derive(Debug, Clone, Serialize)]
pub struct CompactionRecord {
    /// Rows in the partition.
    pub rows: u64,
    /// Appends that wrote it (one data file each).
    pub appends: u64,
    /// What `maintain` did, measured in its own process.
    pub maintain: MaintainRecord,
}

/// Everything a run measured.
#[derive(Debug, Clone, Serialize)]
pub struct WritesResult {
    /// The command line.
    pub command: String,
    /// Start time, RFC 3339.
    pub started: String,
    /// Commit of the build and uncommitted changes.
    pub commit: String,
    /// `release` or `debug`.
    pub build: String,
    /// Machine: CPU, cores, memory bytes, OS.
    pub machine: (String, usize, u64, String),
    /// The dataset's directory name.
    pub dataset: String,
    /// The encoding experiment, when run.
    pub encoding: Option<EncodingRecord>,
    /// The micro-commit experiment, when run.
    pub micro_commits: Option<MicroRecord>,
    /// The compaction experiment, when run.
    pub compaction: Option<CompactionRecord>,
}

/// Runs the experiments and writes the results; returns the Markdown file.
///
/// Errors: the dataset is not IoT, generation, a lake operation or the maintain process fails.
pub fn run(opts: &WritesOptions) -> Result<PathBuf, String> {
    if opts.spec.dataset != crate::gen::Dataset::Iot {
        return Err("varve-bench writes uses the IoT readings (dataset iot)".into());
    }
    let want = |e: Experiment| opts.only.is_empty() || opts.only.contains(&e);
    std::fs::create_dir_all(&opts.results_dir).map_err(|e| format!("{}: {e}", opts.results_dir.display()))?;
    let (dir, info) = crate::run::ensure_dataset(&opts.spec, &opts.data_dir)?;
    let started = chrono::Utc::now();
    eprintln!("reading the readings into memory");
    let readings = read_all(&info.files(&dir, "readings"))?;
    let rows: usize = readings.iter().map(|b| b.num_rows()).sum();
    eprintln!("{rows} readings");
    let rt = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;

    let encoding = match want(Experiment::Encoding) {
        true => Some(rt.block_on(encoding(opts, &readings))?),
        false => None,
    };
    let micro = match want(Experiment::MicroCommits) {
        true => Some(rt.block_on(micro_commits(opts, &readings))?),
        false => None,
    };
    let compaction = match want(Experiment::Compaction) {
        true => Some(compaction(opts, &rt, &readings)?),
        false => None,
    };
    let (commit, dirty) = report::commit();
    let result = WritesResult {
        command: opts.command.clone(),
        started: started.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        commit: if dirty.is_empty() {
            commit
        } else {
            format!("{commit} (uncommitted changes: {})", dirty.join(", "))
        },
        build: if cfg!(debug_assertions) { "debug" } else { "release" }.into(),
        machine: report::machine(),
        dataset: opts.spec.dir_name(),
        encoding,
        micro_commits: micro,
        compaction,
    };
    let stem = format!("{}-writes-{}", started.format("%Y%m%dT%H%M%SZ"), opts.spec.dir_name());
    let jsonl = opts.results_dir.join(format!("{stem}.jsonl"));
    let line = serde_json::to_string(&result).map_err(|e| e.to_string())?;
    std::fs::write(&jsonl, line + "\n").map_err(|e| format!("{}: {e}", jsonl.display()))?;
    let md = opts.results_dir.join(format!("{stem}.md"));
    std::fs::write(&md, markdown(&result)).map_err(|e| format!("{}: {e}", md.display()))?;
    Ok(md)
}

fn read_all(files: &[PathBuf]) -> Result<Vec<RecordBatch>, String> {
    let mut out = vec![];
    for path in files {
        let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let reader = ParquetRecordBatchReaderBuilder::try_new(file)
            .and_then(|b| b.with_batch_size(65_536).build())
            .map_err(|e| format!("{}: {e}", path.display()))?;
        for b in reader {
            out.push(b.map_err(|e| format!("{}: {e}", path.display()))?);
        }
    }
    Ok(out)
}

/// Cuts `batches` into appends of exactly `n` rows (the last one fewer), as zero-copy slices.
fn appends_of(batches: &[RecordBatch], n: usize) -> Vec<Vec<RecordBatch>> {
    let mut out = vec![];
    let mut cur: Vec<RecordBatch> = vec![];
    let mut cur_rows = 0;
    for b in batches {
        let mut b = b.clone();
        while cur_rows + b.num_rows() >= n {
            let take = n - cur_rows;
            cur.push(b.slice(0, take));
            b = b.slice(take, b.num_rows() - take);
            out.push(std::mem::take(&mut cur));
            cur_rows = 0;
        }
        if b.num_rows() > 0 {
            cur_rows += b.num_rows();
            cur.push(b);
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn lake_dir(opts: &WritesOptions, what: &str) -> Result<tempfile::TempDir, String> {
    std::fs::create_dir_all(&opts.data_dir).map_err(|e| format!("{}: {e}", opts.data_dir.display()))?;
    tempfile::Builder::new()
        .prefix(&format!("lake-writes-{what}-"))
        .tempdir_in(&opts.data_dir)
        .map_err(|e| format!("{}: {e}", opts.data_dir.display()))
}

async fn create(lake: &Lake, name: &str, batches: &[RecordBatch], props: &[(&str, &str)]) -> Result<(), String> {
    let contract = TableContract::time_series("ts")
        .with_series_key(["name"])
        .with_partitioning(Partitioning::Day);
    lake.create_table(name, &batches[0].schema(), &contract)
        .await
        .map_err(|e| format!("create {name}: {e}"))?;
    let set: HashMap<String, String> = props.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    lake.set_properties(name, &set, &[])
        .await
        .map_err(|e| format!("set properties of {name}: {e}"))
}

/// Appends each of `appends` to `name`; returns each append's seconds and the reports'
/// inline compactions.
async fn load(lake: &Lake, name: &str, appends: &[Vec<RecordBatch>]) -> Result<(Vec<f64>, u64), String> {
    let mut secs = Vec::with_capacity(appends.len());
    let mut compactions = 0;
    for a in appends {
        let t = Instant::now();
        let r = lake
            .append(name, a.clone(), AppendOptions::default())
            .await
            .map_err(|e| format!("append to {name}: {e}"))?;
        secs.push(t.elapsed().as_secs_f64());
        if let Some(m) = &r.maintenance {
            if let Some(e) = &m.error {
                return Err(format!("inline maintenance of {name}: {e}"));
            }
            compactions += m.partitions_compacted;
        }
    }
    Ok((secs, compactions))
}

async fn encoding(opts: &WritesOptions, readings: &[RecordBatch]) -> Result<EncodingRecord, String> {
    let home = lake_dir(opts, "encoding")?;
    let lake = Lake::open(&home.path().display().to_string(), &HashMap::new()).map_err(|e| e.to_string())?;
    let appends = appends_of(readings, opts.append_rows);
    let rows: usize = readings.iter().map(|b| b.num_rows()).sum();
    create(
        &lake,
        "w.serial",
        readings,
        &[("varve.encode-threads", "1"), ("varve.auto-maintain", "false")],
    )
    .await?;
    create(&lake, "w.parallel", readings, &[("varve.auto-maintain", "false")]).await?;
    eprintln!(
        "encoding: {} appends of {} rows, one encoder thread",
        appends.len(),
        opts.append_rows
    );
    let (serial, _) = load(&lake, "w.serial", &appends).await?;
    eprintln!("encoding: the same, one encoder thread per core");
    let (parallel, _) = load(&lake, "w.parallel", &appends).await?;
    let (s, p) = (serial.iter().sum::<f64>(), parallel.iter().sum::<f64>());
    let r = EncodingRecord {
        rows: rows as u64,
        append_rows: opts.append_rows,
        columns: readings[0].num_columns(),
        serial_seconds: s,
        serial_rows_per_s: rows as f64 / s,
        parallel_seconds: p,
        parallel_rows_per_s: rows as f64 / p,
        speedup: s / p,
        cores: varve_cores(),
    };
    eprintln!(
        "encoding: {:.0} rows/s serial, {:.0} rows/s parallel ({:.2}x)",
        r.serial_rows_per_s, r.parallel_rows_per_s, r.speedup
    );
    Ok(r)
}

fn varve_cores() -> usize {
    std::thread::available_parallelism().map(|p| p.get()).unwrap_or(1)
}

fn median(v: &[f64]) -> f64 {
    crate::ingest::quantile(v, 0.5)
}

async fn micro_commits(opts: &WritesOptions, readings: &[RecordBatch]) -> Result<MicroRecord, String> {
    let home = lake_dir(opts, "micro")?;
    let lake = Lake::open(&home.path().display().to_string(), &HashMap::new()).map_err(|e| e.to_string())?;
    let mut appends = appends_of(readings, opts.micro_rows);
    appends.truncate(opts.micro_commits);
    let all: Vec<RecordBatch> = appends.iter().flatten().cloned().collect();
    create(&lake, "w.micro", &all, &[]).await?;
    create(&lake, "w.one", &all, &[]).await?;
    eprintln!("micro-commits: {} appends of {} rows", appends.len(), opts.micro_rows);
    let (secs, compactions) = load(&lake, "w.micro", &appends).await?;
    load(&lake, "w.one", std::slice::from_ref(&all)).await?;
    let ms: Vec<f64> = secs.iter().map(|s| s * 1000.0).collect();
    let blocks: Vec<&[f64]> = ms.chunks(100).collect();
    let block_p50_ms: Vec<f64> = blocks.iter().map(|b| median(b)).collect();
    let block_max_ms: Vec<f64> = blocks.iter().map(|b| b.iter().copied().fold(0.0, f64::max)).collect();
    let flat_ratio = match (block_p50_ms.first(), block_p50_ms.last()) {
        (Some(f), Some(l)) if *f > 0.0 => l / f,
        _ => 0.0,
    };
    let files_after = lake.info("w.micro").await.map_err(|e| e.to_string())?.live_files;

    // Queries over the same rows: a truck and a 10-minute window from the data.
    let first = &all[0];
    let truck = first
        .column_by_name("name")
        .map(|c| c.as_string::<i32>().value(0).to_string());
    let truck = truck.unwrap_or_default();
    let ts = first
        .column_by_name("ts")
        .and_then(|c| {
            c.as_primitive_opt::<arrow::datatypes::TimestampMicrosecondType>()
                .map(|a| a.value(0))
        })
        .unwrap_or(0);
    let from = chrono::DateTime::from_timestamp_micros(ts + 600_000_000).unwrap_or_default();
    let to = chrono::DateTime::from_timestamp_micros(ts + 1_200_000_000).unwrap_or_default();
    let iso = |d: chrono::DateTime<chrono::Utc>| d.format("%Y-%m-%dT%H:%M:%SZ").to_string();
    let queries: Vec<(&str, String, bool)> = vec![
        ("count", "SELECT count(*) AS n, sum(velocity) AS v FROM {t}".into(), false),
        (
            "avg-per-truck",
            "SELECT name, avg(fuel_consumption) AS f FROM {t} GROUP BY name".into(),
            false,
        ),
        (
            "last-time-per-truck",
            "SELECT name, max(ts) AS newest FROM {t} GROUP BY name".into(),
            false,
        ),
        (
            "one-truck-newest-10",
            format!("SELECT ts, velocity FROM {{t}} WHERE name = '{truck}' ORDER BY ts DESC LIMIT 10"),
            true,
        ),
        (
            "ten-minutes",
            format!(
                "SELECT count(*) AS n, max(velocity) AS v FROM {{t}} WHERE ts >= TIMESTAMP '{}' AND ts < TIMESTAMP '{}'",
                iso(from),
                iso(to)
            ),
            false,
        ),
    ];
    let mut out = vec![];
    for (name, sql, ordered) in queries {
        let (micro, one) = (sql.replace("{t}", "w.micro"), sql.replace("{t}", "w.one"));
        let (a, b) = (answer(&lake, &micro).await?, answer(&lake, &one).await?);
        // Warm runs of the two tables alternate, so that a slower spell of the machine falls on
        // both alike.
        let (mut micro_ms, mut one_ms) = (vec![], vec![]);
        for _ in 0..MICRO_QUERY_RUNS {
            micro_ms.push(timed(&lake, &micro).await?);
            one_ms.push(timed(&lake, &one).await?);
        }
        let best = |v: &[f64]| v.iter().copied().fold(f64::MAX, f64::min);
        let (micro_best, one_best) = (best(&micro_ms), best(&one_ms));
        let (micro_median, one_median) = (median(&micro_ms), median(&one_ms));
        let check = match compare(&a, &b, ordered) {
            None => "match".to_string(),
            Some(d) => format!("mismatch: {d}"),
        };
        out.push(MicroQuery {
            name: name.into(),
            sql,
            micro_best_ms: micro_best,
            one_commit_best_ms: one_best,
            micro_median_ms: micro_median,
            one_commit_median_ms: one_median,
            ratio: micro_best / one_best.max(1e-9),
            median_ratio: micro_median / one_median.max(1e-9),
            check,
        });
    }
    let r = MicroRecord {
        commits: appends.len(),
        rows_per_commit: opts.micro_rows,
        flat_ratio,
        block_p50_ms,
        block_max_ms,
        inline_compactions: compactions,
        files_after,
        geomean_ratio: geomean(out.iter().map(|q| q.ratio)),
        geomean_median_ratio: geomean(out.iter().map(|q| q.median_ratio)),
        queries: out,
    };
    if opts.keep_micro_lake {
        eprintln!("micro-commits: the lake is kept at {}", home.path().display());
        let _ = home.keep();
    }
    eprintln!(
        "micro-commits: p50 per 100 {:?} ms, last/first {:.2}, queries {:.2}x of one commit",
        r.block_p50_ms
            .iter()
            .map(|v| (v * 10.0).round() / 10.0)
            .collect::<Vec<_>>(),
        r.flat_ratio,
        r.geomean_ratio
    );
    Ok(r)
}

/// Warm runs of each micro-commit query on each table.
const MICRO_QUERY_RUNS: usize = 20;

/// The answer of `sql` (its first run).
async fn answer(lake: &Lake, sql: &str) -> Result<Rows, String> {
    let first = lake.sql(sql).await.map_err(|e| format!("{sql}: {e}"))?;
    Rows::from_batches(&first.schema, &first.batches)
}

/// The ms of one run of `sql`.
async fn timed(lake: &Lake, sql: &str) -> Result<f64, String> {
    let t = Instant::now();
    lake.sql(sql).await.map_err(|e| format!("{sql}: {e}"))?;
    Ok(t.elapsed().as_secs_f64() * 1000.0)
}

/// `batch` with `-c<copy>` appended to every truck name.
fn renamed(batch: &RecordBatch, copy: usize) -> Result<RecordBatch, String> {
    let i = batch.schema().index_of("name").map_err(|e| e.to_string())?;
    let names = batch.column(i).as_string::<i32>();
    let renamed: StringArray = names.iter().map(|n| n.map(|n| format!("{n}-c{copy}"))).collect();
    let mut cols = batch.columns().to_vec();
    cols[i] = Arc::new(renamed);
    RecordBatch::try_new(batch.schema(), cols).map_err(|e| e.to_string())
}

fn compaction(
    opts: &WritesOptions,
    rt: &tokio::runtime::Runtime,
    readings: &[RecordBatch],
) -> Result<CompactionRecord, String> {
    let home = lake_dir(opts, "compaction")?;
    let url = home.path().display().to_string();
    let lake = Lake::open(&url, &HashMap::new()).map_err(|e| e.to_string())?;
    rt.block_on(create(
        &lake,
        "w.compact",
        readings,
        &[("varve.auto-maintain", "false")],
    ))?;
    let appends = appends_of(readings, 500_000);
    let (mut bytes, mut rows, mut n, mut copy) = (0u64, 0u64, 0u64, 0usize);
    eprintln!(
        "compaction: loading copies of the readings until the partition holds {} MiB",
        opts.compact_bytes >> 20
    );
    'load: loop {
        for a in &appends {
            let a: Vec<RecordBatch> = match copy {
                0 => a.clone(),
                c => a.iter().map(|b| renamed(b, c)).collect::<Result<_, _>>()?,
            };
            let r = rt
                .block_on(lake.append("w.compact", a, AppendOptions::default()))
                .map_err(|e| format!("append: {e}"))?;
            bytes += r.bytes;
            rows += r.rows;
            n += 1;
            if bytes >= opts.compact_bytes {
                break 'load;
            }
        }
        copy += 1;
    }
    drop(lake);
    eprintln!(
        "compaction: {rows} rows in {n} files, {} MiB; maintaining in a fresh process",
        bytes >> 20
    );
    if opts.keep_compaction_lake {
        let before = format!("{url}.before");
        let copied = std::process::Command::new("cp")
            .args(["-a", &url, &before])
            .status()
            .map_err(|e| format!("cp -a {url} {before}: {e}"))?;
        if !copied.success() {
            return Err(format!("cp -a {url} {before}: {copied}"));
        }
        eprintln!("compaction: the lake is kept at {url}, as loaded at {before}");
    }
    let m = crate::maintain_step::in_fresh_process(&url, &HashMap::new(), crate::store::Latency::default())?;
    eprintln!(
        "compaction: {:.2} s, {:.0} rows/s, files {} -> {}, peak RSS {:.0} MiB",
        m.seconds,
        m.rows_per_s,
        m.files_before,
        m.files_after,
        m.peak_rss_bytes as f64 / 1048576.0
    );
    if opts.keep_compaction_lake {
        let _ = home.keep();
    }
    Ok(CompactionRecord {
        rows,
        appends: n,
        maintain: m,
    })
}

/// The Markdown summary of a run.
pub fn markdown(r: &WritesResult) -> String {
    let mut s = String::new();
    let (cpu, cores, mem, os) = &r.machine;
    let _ = writeln!(s, "# Write path: encoding, micro-commits, compaction\n");
    let _ = writeln!(s, "- command: `{}`", r.command);
    let _ = writeln!(s, "- started: {}; commit {}; {} build", r.started, r.commit, r.build);
    let _ = writeln!(
        s,
        "- machine: {cpu}, {cores} cores, {:.0} GiB memory, {os}",
        *mem as f64 / (1u64 << 30) as f64
    );
    let _ = writeln!(s, "- data: IoT readings of `{}`, local disk", r.dataset);
    if let Some(e) = &r.encoding {
        let _ = writeln!(s, "\n## Appends: columns encoded on one thread vs one per core\n");
        let _ = writeln!(
            s,
            "{} rows of {} columns in appends of {} rows, inline maintenance off, the same batches for both tables.\n",
            e.rows, e.columns, e.append_rows
        );
        let _ = writeln!(s, "| encoder threads | seconds | rows/s |\n|---|---:|---:|");
        let _ = writeln!(s, "| 1 | {:.2} | {:.0} |", e.serial_seconds, e.serial_rows_per_s);
        let _ = writeln!(
            s,
            "| {} (one per core) | {:.2} | {:.0} |",
            e.cores, e.parallel_seconds, e.parallel_rows_per_s
        );
        let _ = writeln!(s, "\nspeedup: **{:.2}x**", e.speedup);
    }
    if let Some(m) = &r.micro_commits {
        let _ = writeln!(
            s,
            "\n## Micro-commits: {} appends of {} rows, inline maintenance on\n",
            m.commits, m.rows_per_commit
        );
        let _ = writeln!(s, "| appends | p50 ms | max ms |\n|---|---:|---:|");
        for (i, (p, x)) in m.block_p50_ms.iter().zip(&m.block_max_ms).enumerate() {
            let _ = writeln!(s, "| {}-{} | {:.1} | {:.1} |", i * 100 + 1, (i + 1) * 100, p, x);
        }
        let _ = writeln!(
            s,
            "\nlast 100 / first 100 (p50): **{:.2}**; {} inline compactions; {} live files after the last append.\n",
            m.flat_ratio, m.inline_compactions, m.files_after
        );
        let _ = writeln!(
            s,
            "Queries afterwards against the same rows loaded in one commit: {MICRO_QUERY_RUNS} warm runs \
             of each, the two tables' runs alternating; ratio = best / best:\n"
        );
        let _ = writeln!(
            s,
            "| query | micro-committed best ms | one commit best ms | ratio | micro-committed median ms | one commit median ms | median ratio | check |\n|---|---:|---:|---:|---:|---:|---:|---|"
        );
        for q in &m.queries {
            let _ = writeln!(
                s,
                "| {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {} |",
                q.name,
                q.micro_best_ms,
                q.one_commit_best_ms,
                q.ratio,
                q.micro_median_ms,
                q.one_commit_median_ms,
                q.median_ratio,
                q.check
            );
        }
        let _ = writeln!(
            s,
            "| **geomean** | | | {:.2} | | | {:.2} | |",
            m.geomean_ratio, m.geomean_median_ratio
        );
    }
    if let Some(c) = &r.compaction {
        let _ = writeln!(
            s,
            "\n## Compaction of one day partition (`maintain` in a fresh process)\n"
        );
        let _ = writeln!(s, "{} rows in {} files of its appends.\n", c.rows, c.appends);
        report::maintenance_table(&mut s, &c.maintain);
    }
    s
}
