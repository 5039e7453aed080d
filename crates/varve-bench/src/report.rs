//! Results: one JSON object per line (`run`, `ingest`, `query` records) and a Markdown summary,
//! each saying which machine, commit, build and command produced it.

use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::ingest::IngestStats;
use crate::maintain_step::MaintainRecord;
use crate::probe::Probe;
use crate::store::{Latency, Requests};

/// Where and how a run happened.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunInfo {
    /// Start time, RFC 3339 UTC.
    pub started: String,
    /// The exact command line.
    pub command: String,
    /// Commit of the source tree at run time (`<sha>`, or `<sha>+dirty` with `dirty` listing the
    /// changed tracked files: the binary may have been built before or after those changes).
    pub commit: String,
    /// Tracked files changed since the commit, as `git status --porcelain` names them.
    #[serde(default)]
    pub dirty: Vec<String>,
    /// `release` or `debug`.
    pub build: String,
    /// CPU model.
    pub cpu: String,
    /// Logical cores available.
    pub cores: usize,
    /// Physical memory, bytes.
    pub memory_bytes: u64,
    /// Kernel release.
    pub os: String,
    /// Suite name.
    pub suite: String,
    /// Storage target: `local` or `s3`.
    pub target: String,
    /// The S3-compatible server of target `s3` (`moto`, `s3s-fs`); records before this field
    /// were all moto.
    #[serde(default)]
    pub s3_server: Option<String>,
    /// Injected latency.
    pub latency: Latency,
    /// Dataset directory name (its spec).
    pub dataset: String,
    /// Rows per table.
    pub dataset_rows: Vec<(String, u64)>,
    /// Warm runs per query.
    pub runs: u32,
    /// Rows per commit when loading.
    pub commit_rows: usize,
    /// DuckDB version of the reference.
    pub duckdb: String,
    /// The generated data's spec (scale, duration, seed, ...).
    pub spec: crate::gen::GenSpec,
    /// The queries run when not all of the suite's (empty: all).
    #[serde(default)]
    pub only: Vec<String>,
    /// Per-query timeout for Varve, ms.
    pub timeout_ms: u64,
    /// Varve's lake options given with `--lake-option`.
    #[serde(default)]
    pub lake_options: Vec<(String, String)>,
    /// Table properties given with `--table-property`.
    #[serde(default)]
    pub table_properties: Vec<(String, String)>,
    /// Passes over the queries (`--rounds`; best over all).
    #[serde(default = "one")]
    pub rounds: u32,
}

fn one() -> u32 {
    1
}

/// One query's record.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct QueryRecord {
    /// Query name.
    pub name: String,
    /// The SQL run by both engines.
    pub sql: String,
    /// Varve's timings and requests (`None` when it failed).
    pub varve: Option<Probe>,
    /// DuckDB's first run, ms.
    pub duckdb_first_ms: Option<f64>,
    /// DuckDB's best warm run, ms.
    pub duckdb_best_ms: Option<f64>,
    /// Varve best / DuckDB best (below 1: Varve is faster).
    pub ratio: Option<f64>,
    /// `match`, or what went wrong (a mismatch or an error).
    pub check: String,
    /// With `--maintain`: `before` or `after` the maintenance step; empty otherwise.
    #[serde(default)]
    pub phase: String,
}

impl QueryRecord {
    /// Whether the query ran on both engines and the answers matched.
    pub fn ok(&self) -> bool {
        self.check == "match"
    }
}

/// Runs git in the source tree this binary was built from.
fn git(args: &[&str]) -> Option<String> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim_end().to_string())
}

/// The commit of the source tree this binary was built in: its short sha (`+dirty` when tracked
/// files have changes) and the changed files.
pub fn commit() -> (String, Vec<String>) {
    let Some(sha) = git(&["rev-parse", "--short=12", "HEAD"]) else {
        return ("unknown".into(), vec![]);
    };
    let dirty: Vec<String> = git(&["status", "--porcelain", "--untracked-files=no"])
        .map(|s| s.lines().map(|l| l.get(3..).unwrap_or(l).to_string()).collect())
        .unwrap_or_default();
    if dirty.is_empty() {
        (sha, dirty)
    } else {
        (format!("{sha}+dirty"), dirty)
    }
}

/// (cpu model, cores, memory bytes, kernel release) of this machine.
pub fn machine() -> (String, usize, u64, String) {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let mem = crate::probe::proc_kib("/proc/meminfo", "MemTotal:").unwrap_or(0);
    let os = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| format!("Linux {}", s.trim()))
        .unwrap_or_else(|_| std::env::consts::OS.to_string());
    (cpu, cores, mem, os)
}

/// Geometric mean of positive values (0 when there are none).
pub fn geomean(v: impl IntoIterator<Item = f64>) -> f64 {
    let (mut sum, mut n) = (0.0, 0);
    for x in v.into_iter().filter(|x| *x > 0.0) {
        sum += x.ln();
        n += 1;
    }
    if n == 0 {
        0.0
    } else {
        (sum / n as f64).exp()
    }
}

/// Writes the JSON lines file.
///
/// Errors: I/O, naming the file.
pub fn write_jsonl(
    path: &Path,
    run: &RunInfo,
    ingest: &[IngestStats],
    maintenance: Option<&MaintainRecord>,
    queries: &[QueryRecord],
) -> Result<(), String> {
    /// One line: the record's fields and its `kind`.
    fn line(s: &mut String, kind: &str, record: &impl Serialize) {
        let mut v = serde_json::to_value(record).expect("serialisable");
        v.as_object_mut()
            .expect("a record is an object")
            .insert("kind".into(), serde_json::Value::String(kind.into()));
        s.push_str(&v.to_string());
        s.push('\n');
    }
    let mut s = String::new();
    line(&mut s, "run", run);
    for i in ingest {
        line(&mut s, "ingest", i);
    }
    if let Some(m) = maintenance {
        line(&mut s, "maintain", m);
    }
    for q in queries {
        line(&mut s, "query", q);
    }
    std::fs::write(path, s).map_err(|e| format!("{}: {e}", path.display()))
}

fn ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

pub(crate) fn mib(b: u64) -> String {
    format!("{:.1}", b as f64 / (1024.0 * 1024.0))
}

fn reads(r: &Requests) -> String {
    format!("{}/{}/{}/{}", r.get, r.ranged_get, r.head, r.list)
}

/// A query's reads with its dependent round trips.
fn query_reads(r: &Requests) -> String {
    format!("{} in {} RT", reads(r), r.round_trips)
}

/// Renders the Markdown summary.
pub fn markdown(
    run: &RunInfo,
    ingest: &[IngestStats],
    maintenance: Option<&MaintainRecord>,
    queries: &[QueryRecord],
) -> String {
    let mut s = String::new();
    let storage = match run.target.as_str() {
        "s3" => format!(
            "an S3 bucket on a local S3-compatible server ({})",
            run.s3_server.as_deref().unwrap_or("moto")
        ),
        _ => "local disk".to_string(),
    };
    let mut parts = vec![];
    if run.latency.delay_ms > 0.0 {
        parts.push(format!("{} ms per request", run.latency.delay_ms));
    }
    if let Some(b) = run.latency.bandwidth {
        parts.push(format!("{} MiB/s per response", mib(b)));
    }
    let latency = if parts.is_empty() {
        String::new()
    } else {
        format!(" with {}", parts.join(", "))
    };
    let _ = writeln!(s, "# {} suite on {}{}\n", run.suite, run.target, latency);
    let _ = writeln!(s, "- command: `{}`", run.command);
    let _ = writeln!(
        s,
        "- started: {}; commit {}; {} build",
        run.started, run.commit, run.build
    );
    let _ = writeln!(
        s,
        "- machine: {}, {} cores, {:.0} GiB memory, {}",
        run.cpu,
        run.cores,
        run.memory_bytes as f64 / (1u64 << 30) as f64,
        run.os
    );
    let rows: Vec<String> = run.dataset_rows.iter().map(|(t, n)| format!("{t} {n} rows")).collect();
    let _ = writeln!(s, "- data: `{}` ({})", run.dataset, rows.join(", "));
    let _ = writeln!(s, "- storage: {storage}{latency}");
    if !run.lake_options.is_empty() {
        let o: Vec<String> = run.lake_options.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = writeln!(s, "- lake options: {}", o.join(", "));
    }
    if !run.table_properties.is_empty() {
        let o: Vec<String> = run.table_properties.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = writeln!(s, "- table properties: {}", o.join(", "));
    }
    if !run.only.is_empty() {
        let _ = writeln!(s, "- queries: only {} (not the whole suite)", run.only.join(", "));
    }
    let _ = writeln!(
        s,
        "- each query: first run in a fresh process, then best of {} warm runs in it; the reference is DuckDB {} on \
         the generated Parquet files on local disk (as generated: not partitioned or sorted like the lake), first run \
         in a fresh connection, then best of {} warm; ratio = Varve best / DuckDB best (below 1: Varve faster); \
         every answer is checked against DuckDB's",
        run.runs, run.duckdb, run.runs
    );
    if run.rounds > 1 {
        let _ = writeln!(
            s,
            "- {} passes over the queries (each query on every lake in turn per pass, the lakes in reverse order every \
             other pass): best = the best of every pass, first = the first pass's first run",
            run.rounds
        );
    }
    let _ = writeln!(s, "\n## Ingest ({} rows per commit)\n", run.commit_rows);
    let _ = writeln!(
        s,
        "| table | rows | commits | rows/s | commit p50 ms | commit p99 ms | files | MiB | PUT | GET/ranged/HEAD/LIST | peak RSS MiB |"
    );
    let _ = writeln!(s, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for i in ingest {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.0} | {} | {} | {} | {} | {} | {} | {} |",
            i.table,
            i.rows,
            i.commits,
            i.rows_per_s,
            ms(i.commit_p50_ms),
            ms(i.commit_p99_ms),
            i.files,
            mib(i.bytes),
            i.requests.put,
            reads(&i.requests),
            mib(i.peak_rss_bytes)
        );
    }
    if let Some(m) = maintenance {
        let _ = writeln!(
            s,
            "\n## Maintenance (`Lake::maintain` on every table, in a fresh process)\n"
        );
        maintenance_table(&mut s, m);
    }
    let _ = writeln!(s, "\n## Queries\n");
    let _ = writeln!(
        s,
        "| query | rows | first ms | best ms | DuckDB first ms | DuckDB best ms | ratio | peak RSS MiB | requests first (GET/ranged/HEAD/LIST in dependent round trips) | requests warm | check |"
    );
    let _ = writeln!(s, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    for q in queries {
        let (rows, first, best, rss, rf, rw) = match &q.varve {
            Some(p) => (
                p.rows.to_string(),
                ms(p.first_ms),
                ms(p.best_ms),
                mib(p.peak_rss_bytes),
                query_reads(&p.requests_first),
                p.requests_warm.as_ref().map(query_reads).unwrap_or_default(),
            ),
            None => Default::default(),
        };
        let o = |v: Option<f64>| v.map(ms).unwrap_or_default();
        let _ = writeln!(
            s,
            "| {} | {rows} | {first} | {best} | {} | {} | {} | {rss} | {rf} | {rw} | {} |",
            if q.phase.is_empty() {
                q.name.clone()
            } else {
                format!("{} ({})", q.name, q.phase)
            },
            o(q.duckdb_first_ms),
            o(q.duckdb_best_ms),
            q.ratio.map(|r| format!("{r:.2}")).unwrap_or_default(),
            q.check.replace('|', "/")
        );
    }
    let mut phases: Vec<&str> = vec![];
    for q in queries {
        if !phases.contains(&q.phase.as_str()) {
            phases.push(q.phase.as_str());
        }
    }
    for phase in phases {
        let of_phase: Vec<&QueryRecord> = queries.iter().filter(|q| q.phase == phase).collect();
        let ok: Vec<&&QueryRecord> = of_phase.iter().filter(|q| q.ok()).collect();
        if ok.is_empty() {
            continue;
        }
        let label = if phase.is_empty() {
            String::new()
        } else {
            format!(", {phase}")
        };
        let g = |f: &dyn Fn(&QueryRecord) -> Option<f64>| geomean(ok.iter().filter_map(|q| f(q)));
        let _ = writeln!(
            s,
            "| **geomean** ({} matching{label}) | | {} | {} | {} | {} | {:.2} | | | | {}/{} match |",
            ok.len(),
            ms(g(&|q| q.varve.as_ref().map(|p| p.first_ms))),
            ms(g(&|q| q.varve.as_ref().map(|p| p.best_ms))),
            ms(g(&|q| q.duckdb_first_ms)),
            ms(g(&|q| q.duckdb_best_ms)),
            g(&|q| q.ratio),
            ok.len(),
            of_phase.len()
        );
    }
    phase_ratios(&mut s, queries);
    maintain_ratios(&mut s, queries, run.rounds);
    s
}

/// Varve's timings of query `name` in `phase`, when it ran and matched.
fn probe_of<'a>(queries: &'a [QueryRecord], phase: &str, name: &str) -> Option<&'a Probe> {
    queries
        .iter()
        .find(|q| q.phase == phase && q.name == name && q.ok())
        .and_then(|q| q.varve.as_ref())
}

/// Varve's best warm time of query `name` in `phase`, when it ran and matched.
fn best_ms(queries: &[QueryRecord], phase: &str, name: &str) -> Option<f64> {
    probe_of(queries, phase, name).map(|p| p.best_ms)
}

/// The best warm time of each pass (`--rounds`), ms: the warm runs are recorded pass after pass,
/// the same number in each. Empty when they cannot be split evenly.
pub fn pass_bests(warm_ms: &[f64], rounds: u32) -> Vec<f64> {
    let rounds = rounds.max(1) as usize;
    if warm_ms.is_empty() || !warm_ms.len().is_multiple_of(rounds) {
        return vec![];
    }
    warm_ms
        .chunks(warm_ms.len() / rounds)
        .map(|c| c.iter().copied().fold(f64::INFINITY, f64::min))
        .collect()
}

/// With `--maintain`: each query's best time after maintenance over its best before, and how many
/// are slower after. With several passes, also each pass's ratio (the two lakes run one after the
/// other within a pass, so a pass compares them under the same load): a query is *slower beyond
/// noise* only when it is slower in every pass.
fn maintain_ratios(s: &mut String, queries: &[QueryRecord], rounds: u32) {
    let probe = |phase: &str, name: &str| probe_of(queries, phase, name);
    let pairs: Vec<(&str, &Probe, &Probe)> = queries
        .iter()
        .filter(|q| q.phase == "before")
        .filter_map(|q| Some((q.name.as_str(), probe("before", &q.name)?, probe("after", &q.name)?)))
        .collect();
    if pairs.is_empty() {
        return;
    }
    let per_pass = rounds > 1;
    let _ = writeln!(s, "\n## After maintenance against before\n");
    let _ = writeln!(
        s,
        "Best warm time after over best before (above 1: slower after maintenance){}.\n",
        if per_pass {
            "; then the same ratio within each pass, where the two lakes ran one after the other (before first in \
             odd passes, after first in even ones)"
        } else {
            ""
        }
    );
    let pass_head = if per_pass {
        " each pass | slower in every pass |"
    } else {
        ""
    };
    let pass_rule = if per_pass { "---|---|" } else { "" };
    let _ = writeln!(
        s,
        "| query | before best ms | after best ms | after / before |{pass_head}"
    );
    let _ = writeln!(s, "|---|---:|---:|---:|{pass_rule}");
    let mut always_slower = 0;
    for (name, b, a) in &pairs {
        let mut row = format!(
            "| {name} | {} | {} | {:.3} |",
            ms(b.best_ms),
            ms(a.best_ms),
            a.best_ms / b.best_ms
        );
        if per_pass {
            let pb = pass_bests(&b.warm_ms, rounds);
            let pa = pass_bests(&a.warm_ms, rounds);
            let ratios: Vec<f64> = pa.iter().zip(&pb).map(|(a, b)| a / b).collect();
            let slower = !ratios.is_empty() && ratios.iter().all(|r| *r > 1.0);
            always_slower += slower as usize;
            let cells: Vec<String> = ratios.iter().map(|r| format!("{r:.3}")).collect();
            row.push_str(&format!(" {} | {} |", cells.join(" "), if slower { "yes" } else { "" }));
        }
        let _ = writeln!(s, "{row}");
    }
    let slower = pairs.iter().filter(|(_, b, a)| a.best_ms > b.best_ms).count();
    let g = geomean(pairs.iter().map(|(_, b, a)| a.best_ms / b.best_ms));
    let _ = write!(
        s,
        "| **geomean** | | | {g:.3} |{}\n\n{slower} of {} queries slower after maintenance by best time",
        if per_pass { " | |" } else { "" },
        pairs.len()
    );
    if per_pass {
        let _ = write!(s, "; {always_slower} slower in every one of the {rounds} passes");
    }
    let _ = writeln!(s, ".");
}

/// With a one-commit baseline: each query's best time in the loaded (and, with `--maintain`,
/// maintained) lake over its best time in the one-commit lake, and their geomean.
fn phase_ratios(s: &mut String, queries: &[QueryRecord]) {
    let best = |phase: &str, name: &str| best_ms(queries, phase, name);
    if !queries.iter().any(|q| q.phase == "one-commit") {
        return;
    }
    let phases: Vec<&str> = ["", "before", "after"]
        .into_iter()
        .filter(|p| queries.iter().any(|q| q.phase == *p))
        .collect();
    let _ = writeln!(s, "\n## Against the same data loaded in one commit\n");
    let _ = writeln!(
        s,
        "Best warm time over the one-commit table's best (below 1: faster than the one-commit table).\n"
    );
    let head: Vec<String> = phases
        .iter()
        .map(|p| {
            if p.is_empty() {
                "loaded".to_string()
            } else {
                format!("{p} / one commit")
            }
        })
        .collect();
    let _ = writeln!(s, "| query | one commit best ms | {} |", head.join(" | "));
    let _ = writeln!(s, "|---|---:|{}", "---:|".repeat(phases.len()));
    let mut ratios: Vec<Vec<f64>> = vec![vec![]; phases.len()];
    for q in queries.iter().filter(|q| q.phase == "one-commit") {
        let Some(base) = best("one-commit", &q.name) else {
            continue;
        };
        let cells: Vec<String> = phases
            .iter()
            .enumerate()
            .map(|(i, p)| match best(p, &q.name) {
                Some(b) if base > 0.0 => {
                    ratios[i].push(b / base);
                    format!("{:.2}", b / base)
                }
                _ => String::new(),
            })
            .collect();
        let _ = writeln!(s, "| {} | {} | {} |", q.name, ms(base), cells.join(" | "));
    }
    let g: Vec<String> = ratios
        .iter()
        .map(|r| match r.is_empty() {
            true => String::new(),
            false => format!("{:.2}", geomean(r.iter().copied())),
        })
        .collect();
    let _ = writeln!(s, "| **geomean** | | {} |", g.join(" | "));
}

/// The Markdown table of one maintenance step (`varve-bench run --maintain`, `varve-bench writes`).
pub fn maintenance_table(s: &mut String, m: &MaintainRecord) {
    let _ = writeln!(
        s,
        "| seconds | rows rewritten | rows/s | partitions compacted | files before | files after | MiB before | MiB after | peak RSS MiB | PUT | GET/ranged/HEAD/LIST |"
    );
    let _ = writeln!(s, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let _ = writeln!(
        s,
        "| {:.2} | {} | {:.0} | {} | {} | {} | {} | {} | {} | {} | {} |",
        m.seconds,
        m.rows_rewritten,
        m.rows_per_s,
        m.partitions_compacted,
        m.files_before,
        m.files_after,
        mib(m.bytes_before),
        mib(m.bytes_after),
        mib(m.peak_rss_bytes),
        m.requests.put,
        reads(&m.requests)
    );
    if !m.skipped.is_empty() {
        let _ = writeln!(s, "\nskipped: {}", m.skipped.join("; "));
    }
}

#[cfg(test)]
mod tests {
    use super::pass_bests;

    #[test]
    fn pass_bests_split_the_warm_runs_by_pass() {
        let warm = [3.0, 2.0, 5.0, 4.0, 1.5, 9.0];
        assert_eq!(pass_bests(&warm, 3), vec![2.0, 4.0, 1.5]);
        assert_eq!(pass_bests(&warm, 1), vec![1.5]);
        // Runs that do not split evenly (a pass failed) give no per-pass figures.
        assert!(pass_bests(&warm, 4).is_empty());
        assert!(pass_bests(&[], 2).is_empty());
    }
}
