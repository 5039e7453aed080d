//! One query, timed in this process: the first run right after opening the lake (nothing cached:
//! the process is fresh), then warm runs. The runner starts a new process per query for this
//! (`varve-bench probe`), so every first run is a cold start of the engine, not of the OS page
//! cache.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use varve::Lake;

use crate::store::{instrument, Counters, Latency, Requests};

/// What one query did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Probe {
    /// First run, ms (includes loading the table's metadata).
    pub first_ms: f64,
    /// Best warm run, ms (`first_ms` when there were none).
    pub best_ms: f64,
    /// Every warm run, ms.
    pub warm_ms: Vec<f64>,
    /// Result rows.
    pub rows: u64,
    /// Storage requests of the first run.
    pub requests_first: Requests,
    /// Storage requests of the last warm run (`None` without warm runs).
    pub requests_warm: Option<Requests>,
    /// Peak resident memory of the process, bytes (`VmHWM`).
    pub peak_rss_bytes: u64,
}

/// A `Key:   <n> kB` value from a `/proc` file, in bytes.
pub(crate) fn proc_kib(file: &str, key: &str) -> Option<u64> {
    std::fs::read_to_string(file).ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .map(|kb| kb * 1024)
    })
}

/// The process's peak resident set size in bytes, from `/proc/self/status` (0 elsewhere).
pub fn peak_rss_bytes() -> u64 {
    proc_kib("/proc/self/status", "VmHWM:").unwrap_or(0)
}

/// Resets the peak resident set size (Linux: `clear_refs` 5), so a later [`peak_rss_bytes`]
/// measures from now.
pub fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Opens the lake and runs `sql` once plus `runs` warm times, each within `timeout`; writes the
/// last result to `out` as Parquet.
///
/// Errors: the engine's error for the query (as text: a timeout too), or the result cannot be
/// written.
pub async fn probe(
    url: &str,
    options: &HashMap<String, String>,
    latency: Latency,
    sql: &str,
    runs: u32,
    timeout: std::time::Duration,
    out: &Path,
) -> Result<Probe, String> {
    let limits = varve::QueryOptions {
        timeout: Some(timeout),
        ..Default::default()
    };
    let counters = Arc::new(Counters::default());
    let c = counters.clone();
    let lake =
        Lake::open_with_store_layer(url, options, move |s| instrument(s, latency, c)).map_err(|e| e.to_string())?;
    let before = counters.snapshot();
    let t = Instant::now();
    let mut result = lake.sql_with(sql, &limits).await.map_err(|e| e.to_string())?;
    let first_ms = t.elapsed().as_secs_f64() * 1000.0;
    let requests_first = counters.since(&before, t);
    let mut warm_ms = vec![];
    let mut requests_warm = None;
    for _ in 0..runs {
        let before = counters.snapshot();
        let t = Instant::now();
        result = lake.sql_with(sql, &limits).await.map_err(|e| e.to_string())?;
        warm_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        requests_warm = Some(counters.since(&before, t));
    }
    let peak_rss_bytes = peak_rss_bytes();
    let file = std::fs::File::create(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut w = parquet::arrow::ArrowWriter::try_new(file, result.schema.clone(), None).map_err(|e| e.to_string())?;
    for b in &result.batches {
        w.write(b).map_err(|e| e.to_string())?;
    }
    w.close().map_err(|e| e.to_string())?;
    Ok(Probe {
        first_ms,
        best_ms: warm_ms.iter().copied().reduce(f64::min).unwrap_or(first_ms),
        warm_ms,
        rows: result.num_rows() as u64,
        requests_first,
        requests_warm,
        peak_rss_bytes,
    })
}

/// Reads a result written by [`probe`] or by DuckDB: its schema (kept even when there are no
/// rows) and batches.
///
/// Errors: the file cannot be read as Parquet.
pub fn read_result(path: &Path) -> Result<(arrow::datatypes::SchemaRef, Vec<arrow::array::RecordBatch>), String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let builder = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let schema = builder.schema().clone();
    let reader = builder.build().map_err(|e| format!("{}: {e}", path.display()))?;
    let batches = reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((schema, batches))
}
