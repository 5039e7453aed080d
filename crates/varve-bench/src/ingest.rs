//! Loading a generated dataset into a lake, timed: each table's Parquet files are read in order
//! and appended in commits of `commit_rows` rows (one snapshot each), the way a batch loader
//! or a stream with a commit interval writes.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use arrow::array::{RecordBatch, RecordBatchReader};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde::{Deserialize, Serialize};
use varve::{AppendOptions, Lake, Partitioning, TableContract};

use crate::gen::DatasetInfo;
use crate::store::{Counters, Requests};
use crate::suites::Suite;

/// What loading one table took.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct IngestStats {
    /// `namespace.table`.
    pub table: String,
    /// Rows appended.
    pub rows: u64,
    /// Commits (snapshots) made.
    pub commits: u64,
    /// Seconds spent in appends (reading the generated files is not counted).
    pub seconds: f64,
    /// Rows per second of append time.
    pub rows_per_s: f64,
    /// Median append latency (encode, upload, commit), ms.
    pub commit_p50_ms: f64,
    /// 99th percentile append latency, ms.
    pub commit_p99_ms: f64,
    /// Slowest append, ms.
    pub commit_max_ms: f64,
    /// Data files written.
    pub files: u64,
    /// Bytes of data files written.
    pub bytes: u64,
    /// Storage requests made while loading.
    pub requests: Requests,
    /// Peak resident memory of the loading process, bytes.
    pub peak_rss_bytes: u64,
}

/// The `p`-quantile (0..1) of `v` by nearest rank.
pub fn quantile(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let rank = ((p * s.len() as f64).ceil() as usize).clamp(1, s.len());
    s[rank - 1]
}

/// How a dataset is loaded by [`ingest`].
#[derive(Debug, Clone, Default)]
pub struct LoadSettings {
    /// Rows per commit.
    pub commit_rows: usize,
    /// Table properties set on each new table (for example `varve.auto-maintain=false`, so that
    /// only appends are timed).
    pub properties: HashMap<String, String>,
}

/// Loads every table of `info` (generated in `dir`) into `lake`, creating tables with the
/// suite's namespace, `ts` as time column, the dataset's series column as series key and day
/// partitions, with `load`'s properties, in commits of `load.commit_rows` rows.
///
/// Errors: a table exists already, a property is refused, a file cannot be read, or an append
/// fails (the engine's message).
pub async fn ingest(
    lake: &Lake,
    counters: &Arc<Counters>,
    suite: Suite,
    info: &DatasetInfo,
    dir: &Path,
    load: &LoadSettings,
    progress: &dyn Fn(&str, u64),
) -> Result<Vec<IngestStats>, String> {
    let (commit_rows, properties) = (load.commit_rows, &load.properties);
    let mut out = vec![];
    for table in suite.dataset().tables() {
        crate::probe::reset_peak_rss();
        let name = format!("{}.{table}", suite.namespace());
        let files = info.files(dir, table);
        let before = counters.snapshot();
        let mut stats = IngestStats {
            table: name.clone(),
            ..Default::default()
        };
        let mut latencies = vec![];
        let mut pending: Vec<RecordBatch> = vec![];
        let mut pending_rows = 0usize;
        let mut created = false;
        for path in &files {
            let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let reader = ParquetRecordBatchReaderBuilder::try_new(file)
                .and_then(|b| b.with_batch_size(65_536).build())
                .map_err(|e| format!("{}: {e}", path.display()))?;
            if !created {
                let contract = TableContract::time_series("ts")
                    .with_series_key([suite.dataset().series_column()])
                    .with_partitioning(Partitioning::Day);
                lake.create_table(&name, &reader.schema(), &contract)
                    .await
                    .map_err(|e| format!("create {name}: {e}"))?;
                if !properties.is_empty() {
                    lake.set_properties(&name, properties, &[])
                        .await
                        .map_err(|e| format!("set properties of {name}: {e}"))?;
                }
                created = true;
            }
            for batch in reader {
                let mut batch = batch.map_err(|e| format!("{}: {e}", path.display()))?;
                // Commits hold exactly `commit_rows` rows (the last one fewer).
                while pending_rows + batch.num_rows() >= commit_rows {
                    let take = commit_rows - pending_rows;
                    pending.push(batch.slice(0, take));
                    batch = batch.slice(take, batch.num_rows() - take);
                    commit(lake, &name, &mut pending, &mut stats, &mut latencies).await?;
                    pending_rows = 0;
                    progress(&name, stats.rows);
                }
                if batch.num_rows() > 0 {
                    pending_rows += batch.num_rows();
                    pending.push(batch);
                }
            }
        }
        if !pending.is_empty() {
            commit(lake, &name, &mut pending, &mut stats, &mut latencies).await?;
            progress(&name, stats.rows);
        }
        stats.rows_per_s = stats.rows as f64 / stats.seconds.max(1e-9);
        stats.commit_p50_ms = quantile(&latencies, 0.5);
        stats.commit_p99_ms = quantile(&latencies, 0.99);
        stats.commit_max_ms = latencies.iter().copied().fold(0.0, f64::max);
        stats.requests = counters.snapshot().since(&before);
        stats.peak_rss_bytes = crate::probe::peak_rss_bytes();
        out.push(stats);
    }
    Ok(out)
}

async fn commit(
    lake: &Lake,
    name: &str,
    pending: &mut Vec<RecordBatch>,
    stats: &mut IngestStats,
    latencies: &mut Vec<f64>,
) -> Result<(), String> {
    let batches = std::mem::take(pending);
    let t = Instant::now();
    let report = lake
        .append(name, batches, AppendOptions::default())
        .await
        .map_err(|e| format!("append to {name}: {e}"))?;
    let secs = t.elapsed().as_secs_f64();
    latencies.push(secs * 1000.0);
    stats.seconds += secs;
    stats.rows += report.rows;
    stats.commits += 1;
    stats.files += report.files;
    stats.bytes += report.bytes;
    Ok(())
}
