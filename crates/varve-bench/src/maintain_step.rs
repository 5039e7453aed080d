//! The `--maintain` step of `varve-bench run`: `Lake::maintain` over every table of the loaded
//! lake (retention, compaction, expiry and orphan cleanup at their defaults), run by the hidden
//! `maintain-probe` command in a fresh process so that its peak memory is its own. The suite's
//! queries run before and after it, side by side in one run.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use varve::{Lake, MaintainOptions};

use crate::store::{instrument, Counters, Latency, Requests};

/// What the maintenance step did, over all tables.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct MaintainRecord {
    /// Wall-clock seconds for every table.
    pub seconds: f64,
    /// Rows read and written again by compaction.
    pub rows_rewritten: u64,
    /// `rows_rewritten` per second of the step.
    pub rows_per_s: f64,
    /// Partitions compacted.
    pub partitions_compacted: u64,
    /// Live data files before and after.
    pub files_before: u64,
    /// Live data files after.
    pub files_after: u64,
    /// Live data bytes before.
    pub bytes_before: u64,
    /// Live data bytes after.
    pub bytes_after: u64,
    /// Peak resident memory of the maintaining process, bytes (`VmHWM`).
    pub peak_rss_bytes: u64,
    /// Storage requests made.
    pub requests: Requests,
    /// Conflicts or other reasons a part was skipped (none in a quiet benchmark).
    pub skipped: Vec<String>,
}

/// Maintains every table of the lake at `url`.
///
/// Errors: opening the lake or a maintenance failure, as text.
pub async fn maintain_all(
    url: &str,
    options: &HashMap<String, String>,
    latency: Latency,
) -> Result<MaintainRecord, String> {
    let counters = Arc::new(Counters::default());
    let c = counters.clone();
    let lake =
        Lake::open_with_store_layer(url, options, move |s| instrument(s, latency, c)).map_err(|e| e.to_string())?;
    crate::probe::reset_peak_rss();
    let before = counters.snapshot();
    let t = Instant::now();
    let mut r = MaintainRecord::default();
    for table in lake.tables().await.map_err(|e| e.to_string())? {
        let m = lake
            .maintain(&table.to_string(), &MaintainOptions::default())
            .await
            .map_err(|e| format!("maintain {table}: {e}"))?;
        r.rows_rewritten += m.rows_rewritten;
        r.partitions_compacted += m.partitions_compacted;
        r.files_before += m.files_before;
        r.files_after += m.files_after;
        r.bytes_before += m.bytes_before;
        r.bytes_after += m.bytes_after;
        r.skipped.extend(m.skipped);
    }
    r.seconds = t.elapsed().as_secs_f64();
    r.rows_per_s = r.rows_rewritten as f64 / r.seconds.max(1e-9);
    r.requests = counters.snapshot().since(&before);
    r.peak_rss_bytes = crate::probe::peak_rss_bytes();
    Ok(r)
}

/// Runs `maintain-probe` (this binary's hidden command) on the lake at `url` in a fresh process,
/// so that its peak memory is its own, and reads its record.
///
/// Errors: the process cannot start, fails (its stderr), or prints no record.
pub fn in_fresh_process(
    url: &str,
    options: &HashMap<String, String>,
    latency: Latency,
) -> Result<MaintainRecord, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut cmd = std::process::Command::new(exe);
    cmd.args(["maintain-probe", "--lake", url])
        .args(["--delay-ms", &latency.delay_ms.to_string()]);
    if let Some(bw) = latency.bandwidth {
        cmd.args(["--bandwidth", &bw.to_string()]);
    }
    for (k, v) in options {
        cmd.args(["-o", &format!("{k}={v}")]);
    }
    let out = cmd.output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!("maintain: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())
}
