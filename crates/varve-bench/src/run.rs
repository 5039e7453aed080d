//! The runner: one suite end to end. Generate (or reuse) the dataset, load it into a fresh lake
//! on the chosen storage, run each query in a fresh process (first run, then warm runs) and in
//! DuckDB on the same Parquet files, check the answers agree, and write the results.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use indicatif::{ProgressBar, ProgressStyle};
use varve::Lake;

use crate::compare::Rows;
use crate::gen::{self, DatasetInfo, GenSpec};
use crate::probe::{read_result, Probe};
use crate::reference::{self, DuckDb};
use crate::report::{self, QueryRecord, RunInfo};
use crate::store::{instrument, Counters, Latency};
use crate::suites::Suite;

/// Where the lake of a run lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Target {
    /// A new directory under the data directory.
    Local,
    /// A bucket on a local S3-compatible server (moto or s3s-fs), started for the run.
    S3,
}

impl Target {
    fn name(self) -> &'static str {
        match self {
            Target::Local => "local",
            Target::S3 => "s3",
        }
    }
}

/// Everything a run needs.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The suite.
    pub suite: Suite,
    /// The data to generate or reuse.
    pub spec: GenSpec,
    /// Where datasets (and local lakes, while a run lasts) are kept.
    pub data_dir: PathBuf,
    /// Storage target.
    pub target: Target,
    /// The S3-compatible server of [`Target::S3`].
    pub s3_server: varve_testkit::S3Kind,
    /// Injected latency per storage request.
    pub latency: Latency,
    /// Longest a query may run in Varve before it is cancelled and recorded as failed.
    pub timeout: std::time::Duration,
    /// Warm runs per query.
    pub runs: u32,
    /// Rows per commit when loading.
    pub commit_rows: usize,
    /// Only these queries (all when empty).
    pub only: Vec<String>,
    /// Where results go.
    pub results_dir: PathBuf,
    /// Keep the local lakes after the run (the second lakes too).
    pub keep_lake: bool,
    /// Maintain the tables after loading, and run the queries on an unmaintained copy loaded by
    /// the same commits (phase `before`) and on the maintained lake (`after`), side by side.
    pub maintain: bool,
    /// Also load the data in one commit per table into a second lake and run the queries there
    /// (phase `one-commit`).
    pub one_commit_baseline: bool,
    /// Varve's own lake options (`cache=off`, ...), given to every lake handle of the run.
    pub lake_options: Vec<(String, String)>,
    /// How many times the whole query pass is made (each query on every lake in turn each time);
    /// a query's best time is its best over every pass, its first time that of the first pass.
    pub rounds: u32,
    /// Table properties set on every table the run creates (`varve.auto-maintain=false`, ...).
    pub table_properties: Vec<(String, String)>,
    /// The command line, recorded with the results.
    pub command: String,
}

/// What a run produced.
#[derive(Debug)]
pub struct RunOutcome {
    /// The JSON lines file.
    pub jsonl: PathBuf,
    /// The Markdown summary.
    pub markdown: PathBuf,
    /// Queries whose answers did not match DuckDB's or that failed.
    pub failures: Vec<String>,
}

fn bar(len: u64, what: &str) -> ProgressBar {
    let b = ProgressBar::new(len);
    b.set_style(
        ProgressStyle::with_template("{msg:24} [{bar:30}] {percent:>3}% {elapsed_precise}")
            .expect("template")
            .progress_chars("=> "),
    );
    b.set_message(what.to_string());
    b
}

/// Returns the dataset for `spec` under `data_dir`, generating it when it is not there.
///
/// Errors: generation fails (I/O, an invalid spec).
pub fn ensure_dataset(spec: &GenSpec, data_dir: &Path) -> Result<(PathBuf, DatasetInfo), String> {
    let dir = data_dir.join(spec.dir_name());
    if let Some(info) = DatasetInfo::read(&dir) {
        if info.spec == *spec {
            eprintln!("data: reusing {}", dir.display());
            return Ok((dir, info));
        }
    }
    eprintln!("data: generating {}", dir.display());
    let b = bar(1000, &format!("generate {}", spec.dataset.name()));
    let info = gen::generate(spec, &dir, &|f| b.set_position((f * 1000.0) as u64))?;
    b.finish_and_clear();
    Ok((dir, info))
}

fn s3_server_available(kind: varve_testkit::S3Kind) -> Result<(), String> {
    kind.installed()
        .map(|_| ())
        .map_err(|e| format!("--target s3 runs a local S3-compatible server ({}): {e}", kind.name()))
}

/// Compares Varve's result (`ours`) with DuckDB's (`theirs`), both Parquet files, as
/// [`crate::compare::compare`] does: `match`, or `mismatch: <what differs first> (Varve vs
/// DuckDB)`, or `compare error: ...`.
pub fn check(ours: &Path, theirs: &Path, ordered: bool) -> String {
    let read = |p: &Path| read_result(p).and_then(|(schema, b)| Rows::from_batches(&schema, &b));
    match (read(ours), read(theirs)) {
        (Ok(a), Ok(d)) => match crate::compare::compare(&a, &d, ordered) {
            None => "match".to_string(),
            Some(diff) => format!("mismatch: {diff} (Varve vs DuckDB)"),
        },
        (Err(e), _) | (_, Err(e)) => format!("compare error: {e}"),
    }
}

/// A lake for the run, and what keeps it alive.
enum LakeHome {
    Local(Option<tempfile::TempDir>, PathBuf),
    /// The server, stopped when this is dropped.
    S3 {
        _server: varve_testkit::S3Server,
    },
}

/// Runs one suite.
///
/// Errors: setup failures (data, storage, DuckDB) stop the run; a query that fails or disagrees
/// with DuckDB is recorded and listed in [`RunOutcome::failures`].
pub fn run(opts: &RunOptions) -> Result<RunOutcome, String> {
    if opts.runs == 0 {
        return Err("--runs must be at least 1 (best is the fastest warm run)".into());
    }
    if opts.rounds == 0 {
        return Err("--rounds must be at least 1 (passes over the queries)".into());
    }
    if opts.keep_lake && opts.target != Target::Local {
        return Err("--keep-lake applies to --target local (the S3 server keeps its bucket in memory)".into());
    }
    let python = reference::python()?;
    reference::check_python(&python)?;
    if opts.target == Target::S3 {
        s3_server_available(opts.s3_server)?;
    }
    let mut queries = opts.suite.queries(&opts.spec);
    if !opts.only.is_empty() {
        for q in &opts.only {
            if !queries.iter().any(|x| &x.name == q) {
                let names: Vec<&str> = queries.iter().map(|x| x.name.as_str()).collect();
                return Err(format!(
                    "no query {q:?} in the {} suite (it has {})",
                    opts.suite.name(),
                    names.join(", ")
                ));
            }
        }
        queries.retain(|q| opts.only.contains(&q.name));
    }
    std::fs::create_dir_all(&opts.data_dir).map_err(|e| format!("{}: {e}", opts.data_dir.display()))?;
    std::fs::create_dir_all(&opts.results_dir).map_err(|e| format!("{}: {e}", opts.results_dir.display()))?;
    for q in queries.iter().filter(|q| q.description.contains("window cut")) {
        eprintln!("note: {}: {}", q.name, q.description);
    }
    let (data, info) = ensure_dataset(&opts.spec, &opts.data_dir)?;
    let started = chrono::Utc::now();

    let (home, url, options) = lake_home(opts)?;
    eprintln!("lake: {url}");
    let rt = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let counters = Arc::new(Counters::default());
    let mut ingest = load(
        &rt,
        opts,
        &url,
        &options,
        &counters,
        &info,
        &data,
        opts.commit_rows,
        "load",
    )?;
    // Second lakes, in directories of their own or under prefixes of the bucket: the same data in
    // one commit per table (the baseline), and with --maintain the same commits again, left
    // unmaintained (the "before" side, queried side by side with the maintained lake).
    let second_lake = |wanted: bool, name: &str| -> Result<(Option<tempfile::TempDir>, String), String> {
        let dir = match (wanted, opts.target) {
            (true, Target::Local) => Some(
                tempfile::Builder::new()
                    .prefix(&format!("lake-{name}-"))
                    .tempdir_in(&opts.data_dir)
                    .map_err(|e| format!("{}: {e}", opts.data_dir.display()))?,
            ),
            _ => None,
        };
        let url = match &dir {
            Some(d) => d.path().display().to_string(),
            None => format!("s3://bench/lake-{name}"),
        };
        // --keep-lake keeps these too (their paths are printed with the lake's).
        match dir {
            Some(d) if opts.keep_lake => {
                let path = d.keep();
                eprintln!("keeping the {name} lake at {}", path.display());
                Ok((None, url))
            }
            dir => Ok((dir, url)),
        }
    };
    // Loads a second lake in commits of `commit_rows`, its tables labelled `(what)`.
    let mut load_second = |url: &str, commit_rows: usize, what: &str| -> Result<(), String> {
        let counters = Arc::new(Counters::default());
        let label = format!("load ({what})");
        let mut loaded = load(&rt, opts, url, &options, &counters, &info, &data, commit_rows, &label)?;
        for i in &mut loaded {
            i.table.push_str(&format!(" ({what})"));
        }
        ingest.extend(loaded);
        Ok(())
    };
    let (_baseline_dir, baseline_url) = second_lake(opts.one_commit_baseline, "one-commit")?;
    if opts.one_commit_baseline {
        load_second(&baseline_url, usize::MAX, "one commit")?;
    }
    let (_before_dir, before_url) = second_lake(opts.maintain, "unmaintained")?;
    if opts.maintain {
        load_second(&before_url, opts.commit_rows, "unmaintained copy")?;
    }

    let work = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut duck = DuckDb::start(&python, &data, opts.suite.namespace(), work.path())?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    // Each query runs on every lake in turn before the next query, so that the host's drift
    // over the run (a third between hours here) does not fall between the phases compared.
    let run_queries = |lakes: &[(&str, &str)], duck: &mut DuckDb| -> Vec<QueryRecord> {
        let mut records = vec![];
        for (q, &(url, phase)) in queries.iter().flat_map(|q| lakes.iter().map(move |l| (q, l))) {
            let ours = work.path().join(format!("{}{phase}.varve.parquet", q.name));
            let theirs = work.path().join(format!("{}{phase}.duckdb.parquet", q.name));
            let mut cmd = Command::new(&exe);
            cmd.args([
                "probe",
                "--lake",
                url,
                "--runs",
                &opts.runs.to_string(),
                "--sql",
                &q.sql,
            ])
            .arg("--out")
            .arg(&ours)
            .args(["--delay-ms", &opts.latency.delay_ms.to_string()])
            .args(["--timeout", &format!("{}ms", opts.timeout.as_millis())]);
            if let Some(bw) = opts.latency.bandwidth {
                cmd.args(["--bandwidth", &bw.to_string()]);
            }
            for (k, v) in &options {
                cmd.args(["-o", &format!("{k}={v}")]);
            }
            let varve: Result<Probe, String> = match cmd.output() {
                Ok(out) if out.status.success() => serde_json::from_slice(&out.stdout).map_err(|e| e.to_string()),
                Ok(out) => Err(String::from_utf8_lossy(&out.stderr).trim().to_string()),
                Err(e) => Err(e.to_string()),
            };
            let duck_answer = duck.run(&q.sql, opts.runs, &theirs);
            let check = match (&varve, &duck_answer) {
                (Err(e), _) => format!("varve error: {e}"),
                (_, Err(e)) => format!("duckdb error: {e}"),
                (Ok(_), Ok(_)) => check(&ours, &theirs, q.ordered),
            };
            let (df, db) = match &duck_answer {
                Ok(a) => (Some(a.first_ms), Some(a.best_ms)),
                Err(_) => (None, None),
            };
            let varve = varve.ok();
            let ratio = match (&varve, db) {
                (Some(p), Some(d)) if d > 0.0 => Some(p.best_ms / d),
                _ => None,
            };
            let rec = QueryRecord {
                name: q.name.clone(),
                sql: q.sql.clone(),
                varve,
                duckdb_first_ms: df,
                duckdb_best_ms: db,
                ratio,
                check,
                phase: phase.trim_start_matches('-').to_string(),
            };
            match &rec.varve {
                Some(p) => eprintln!(
                    "{:36} {:>8} rows  first {:>9.2} ms  best {:>9.2} ms  duckdb {:>9.2} ms  {}",
                    format!("{}{}", rec.name, phase),
                    p.rows,
                    p.first_ms,
                    p.best_ms,
                    rec.duckdb_best_ms.unwrap_or(f64::NAN),
                    rec.check
                ),
                None => eprintln!("{:36} {}", format!("{}{}", rec.name, phase), rec.check),
            }
            records.push(rec);
        }
        records
    };
    let mut maintenance = None;
    if opts.maintain {
        // The unmaintained copy was loaded by the same commits; only this lake is maintained.
        let m = crate::maintain_step::in_fresh_process(&url, &options, opts.latency)?;
        eprintln!(
            "maintain: {:.2} s, {} rows rewritten ({:.0} rows/s), files {} -> {}, peak RSS {:.0} MiB",
            m.seconds,
            m.rows_rewritten,
            m.rows_per_s,
            m.files_before,
            m.files_after,
            m.peak_rss_bytes as f64 / (1024.0 * 1024.0)
        );
        maintenance = Some(m);
    }
    let mut lakes: Vec<(&str, &str)> = match opts.maintain {
        true => vec![(&before_url, "-before"), (&url, "-after")],
        false => vec![(&url, "")],
    };
    if opts.one_commit_baseline {
        lakes.push((&baseline_url, "-one-commit"));
    }
    let mut records = run_queries(&lakes, &mut duck);
    for round in 2..=opts.rounds {
        eprintln!("queries: pass {round} of {}", opts.rounds);
        // Every other pass runs the lakes in the reverse order, so that no lake always runs
        // second (a probe right after another ran a few per cent slower or faster here).
        let mut order = lakes.clone();
        if round % 2 == 0 {
            order.reverse();
        }
        let again = run_queries(&order, &mut duck);
        merge_best(&mut records, again);
    }

    let (cpu, cores, memory_bytes, os) = report::machine();
    let (commit, dirty) = report::commit();
    let info_rec = RunInfo {
        started: started.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        command: opts.command.clone(),
        commit,
        dirty,
        build: if cfg!(debug_assertions) { "debug" } else { "release" }.into(),
        cpu,
        cores,
        memory_bytes,
        os,
        suite: opts.suite.name().into(),
        target: opts.target.name().into(),
        s3_server: (opts.target == Target::S3).then(|| opts.s3_server.name().to_string()),
        latency: opts.latency,
        dataset: opts.spec.dir_name(),
        dataset_rows: info.tables.iter().map(|t| (t.name.clone(), t.rows)).collect(),
        runs: opts.runs,
        commit_rows: opts.commit_rows,
        spec: opts.spec.clone(),
        only: opts.only.clone(),
        timeout_ms: opts.timeout.as_millis() as u64,
        duckdb: duck.version.clone(),
        lake_options: opts.lake_options.clone(),
        table_properties: opts.table_properties.clone(),
        rounds: opts.rounds,
    };
    let mut stem = format!(
        "{}-{}-{}",
        started.format("%Y%m%dT%H%M%SZ"),
        opts.suite.name(),
        opts.target.name()
    );
    if opts.target == Target::S3 && opts.s3_server != varve_testkit::S3Kind::Moto {
        stem.push_str(&format!("-{}", opts.s3_server.name()));
    }
    if opts.latency.delay_ms > 0.0 {
        stem.push_str(&format!("-{}ms", opts.latency.delay_ms));
    }
    if let Some(bw) = opts.latency.bandwidth {
        stem.push_str(&format!("-bw{bw}"));
    }
    if !opts.only.is_empty() {
        stem.push_str("-partial");
    }
    if opts.maintain {
        stem.push_str("-maintain");
    }
    if opts.one_commit_baseline {
        stem.push_str("-vs-one-commit");
    }
    for (k, v) in opts.lake_options.iter().chain(&opts.table_properties) {
        let clean: String = format!("{k}-{v}")
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' })
            .collect();
        stem.push_str(&format!("-{clean}"));
    }
    stem.push_str(&format!("-{}", opts.spec.dir_name()));
    let jsonl = opts.results_dir.join(format!("{stem}.jsonl"));
    let markdown = opts.results_dir.join(format!("{stem}.md"));
    report::write_jsonl(&jsonl, &info_rec, &ingest, maintenance.as_ref(), &records)?;
    let md = report::markdown(&info_rec, &ingest, maintenance.as_ref(), &records);
    std::fs::write(&markdown, &md).map_err(|e| format!("{}: {e}", markdown.display()))?;
    if let LakeHome::Local(None, path) = &home {
        eprintln!("lake kept at {}", path.display());
    }
    drop(home);
    Ok(RunOutcome {
        jsonl,
        markdown,
        failures: records
            .iter()
            .filter(|r| !r.ok())
            .map(|r| format!("{}: {}", r.name, r.check))
            .collect(),
    })
}

/// Keeps in `records` each query's best times over `again` (a later pass of the same queries):
/// Varve's and DuckDB's best, their warm runs, and the ratio of the two bests. A query that failed
/// or disagreed in any pass stays recorded as such.
fn merge_best(records: &mut [QueryRecord], again: Vec<QueryRecord>) {
    for b in again {
        let Some(a) = records.iter_mut().find(|a| a.name == b.name && a.phase == b.phase) else {
            continue;
        };
        if !b.ok() {
            a.check = b.check;
            continue;
        }
        if let (Some(pa), Some(pb)) = (a.varve.as_mut(), b.varve.as_ref()) {
            pa.best_ms = pa.best_ms.min(pb.best_ms);
            pa.warm_ms.extend(&pb.warm_ms);
        }
        a.duckdb_best_ms = match (a.duckdb_best_ms, b.duckdb_best_ms) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        a.ratio = match (&a.varve, a.duckdb_best_ms) {
            (Some(p), Some(d)) if d > 0.0 => Some(p.best_ms / d),
            _ => None,
        };
    }
}

/// A fresh lake for the run: a directory under the data directory, or a bucket on a local S3
/// server started for the run.
fn lake_home(opts: &RunOptions) -> Result<(LakeHome, String, HashMap<String, String>), String> {
    let (home, url, mut options) = lake_store(opts)?;
    options.extend(opts.lake_options.iter().cloned());
    Ok((home, url, options))
}

/// The lake's location and the store's own options.
fn lake_store(opts: &RunOptions) -> Result<(LakeHome, String, HashMap<String, String>), String> {
    Ok(match opts.target {
        Target::Local => {
            let d = tempfile::Builder::new()
                .prefix("lake-")
                .tempdir_in(&opts.data_dir)
                .map_err(|e| format!("{}: {e}", opts.data_dir.display()))?;
            let path = d.path().to_path_buf();
            let keep = if opts.keep_lake {
                let _ = d.keep();
                None
            } else {
                Some(d)
            };
            (
                LakeHome::Local(keep, path.clone()),
                path.display().to_string(),
                HashMap::new(),
            )
        }
        Target::S3 => {
            let server = varve_testkit::S3Server::start_kind(opts.s3_server);
            server.create_bucket("bench");
            let options = server.options();
            (LakeHome::S3 { _server: server }, "s3://bench/lake".to_string(), options)
        }
    })
}

/// Loads the dataset into the lake at `url` in commits of `commit_rows`, with a progress bar.
#[allow(clippy::too_many_arguments)]
fn load(
    rt: &tokio::runtime::Runtime,
    opts: &RunOptions,
    url: &str,
    options: &HashMap<String, String>,
    counters: &Arc<Counters>,
    info: &DatasetInfo,
    data: &Path,
    commit_rows: usize,
    what: &str,
) -> Result<Vec<crate::ingest::IngestStats>, String> {
    let c = counters.clone();
    let latency = opts.latency;
    let lake =
        Lake::open_with_store_layer(url, options, move |s| instrument(s, latency, c)).map_err(|e| e.to_string())?;
    let b = bar(info.rows(), what);
    let done = std::sync::Mutex::new(HashMap::<String, u64>::new());
    let ingest = rt.block_on(crate::ingest::ingest(
        &lake,
        counters,
        opts.suite,
        info,
        data,
        &crate::ingest::LoadSettings {
            commit_rows,
            properties: opts.table_properties.iter().cloned().collect(),
        },
        &|table, rows| {
            let mut d = done.lock().expect("lock");
            d.insert(table.to_string(), rows);
            b.set_position(d.values().sum());
        },
    ))?;
    b.finish_and_clear();
    for i in &ingest {
        eprintln!(
            "{what} {}: {} rows in {} commits, {:.0} rows/s, commit p50 {:.0} ms p99 {:.0} ms, {} files",
            i.table, i.rows, i.commits, i.rows_per_s, i.commit_p50_ms, i.commit_p99_ms, i.files
        );
    }
    Ok(ingest)
}
