//! Maintenance: keeps a table as fast on day 30 as on day 1 and its storage close to the live data.
//!
//! One run ([`maintain`]) does, in order, each part unless its option turns it off:
//! 1. **retention**: the rows older than now minus `varve.retention` leave the snapshot (a
//!    `delete` snapshot: files wholly older are dropped, files that straddle the cutoff are
//!    rewritten once a tenth of their rows is past it), so that every engine reads what Varve
//!    answers; Varve's queries hide such rows before this runs;
//! 2. **compaction**: merges the files chosen by [`plan`] partition by partition (`write::merge`), each
//!    partition committed as its own `replace` snapshot;
//! 3. **expiry**: removes snapshots older than `varve.snapshot-retention` (keeping the newest
//!    `varve.min-snapshots`) and deletes the files only they referenced (`expire`);
//! 4. **orphan cleanup**: deletes files under the table that nothing references, once older than
//!    the safety window (`expire`).
//!
//! Deletes (`delete`) rewrite or drop the files a predicate touches, in one `delete` snapshot.
//!
//! Every change commits through `commit` with the same optimistic protocol as appends: an append
//! racing a compaction is rebased (never lost or duplicated), and a compaction whose inputs another
//! commit removed gives up for that partition instead of bringing rows back. A run killed at any
//! point leaves the table at its last committed snapshot; what it had uploaded is an orphan for a
//! later run to delete.

pub(crate) mod delete;
mod expire;
mod plan;

use std::sync::Arc;
use std::time::{Duration, Instant};

use iceberg::spec::{DataFile, Operation, PrimitiveLiteral};

use crate::catalog::{self, LoadedTable, MetadataCache, TableIdent};
use crate::commit::AppendReport;
use crate::commit::{self, Outcome, Transaction};
use crate::error::{ErrorKind, Result};
use crate::format::properties::MaintenanceSettings;
use crate::format::schema;
use crate::storage::Storage;
use crate::write::merge_job::MergeJob;

/// Default age below which orphan cleanup leaves a file alone: longer than any commit takes, so the
/// files of a commit in flight are never removed.
pub const DEFAULT_ORPHAN_AGE: Duration = Duration::from_secs(3600);

/// A progress callback: called with what is being done and how far it got.
pub type ProgressFn = Arc<dyn Fn(&MaintainProgress) + Send + Sync>;

/// Progress of a maintenance run, for a progress bar.
#[derive(Debug, Clone)]
pub struct MaintainProgress {
    /// The table.
    pub table: String,
    /// The part running: `retention`, `compaction`, `rollups`, `expiry` or `orphans`.
    pub step: &'static str,
    /// Work done in this step (bytes of input for compaction, else items).
    pub done: u64,
    /// Work of this step in all.
    pub total: u64,
}

/// What a maintenance run does.
#[derive(Clone)]
pub struct MaintainOptions {
    /// Merge small files (default on).
    pub compact: bool,
    /// Drop files older than the table's `varve.retention` (default on).
    pub retention: bool,
    /// Expire old snapshots and delete the files only they referenced (default on).
    pub expire: bool,
    /// Delete unreferenced files older than `orphan_age` (default on).
    pub orphans: bool,
    /// Let retention remove every row of the table (default off: a table whose every row is past
    /// its retention keeps them, and the report's `skipped` says so).
    pub drop_all_rows: bool,
    /// Refresh the table's rollups, after compaction and before expiry (default on).
    pub rollups: bool,
    /// Plan only: report what would be done and change nothing.
    pub dry_run: bool,
    /// Orphan cleanup's safety window (default [`DEFAULT_ORPHAN_AGE`]).
    pub orphan_age: Duration,
    /// Overrides the table's `varve.snapshot-retention` for this run.
    pub snapshot_retention: Option<Duration>,
    /// Called as work proceeds.
    pub progress: Option<ProgressFn>,
}

impl Default for MaintainOptions {
    fn default() -> Self {
        MaintainOptions {
            compact: true,
            retention: true,
            expire: true,
            orphans: true,
            drop_all_rows: false,
            rollups: true,
            dry_run: false,
            orphan_age: DEFAULT_ORPHAN_AGE,
            snapshot_retention: None,
            progress: None,
        }
    }
}

impl std::fmt::Debug for MaintainOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MaintainOptions")
            .field("compact", &self.compact)
            .field("retention", &self.retention)
            .field("expire", &self.expire)
            .field("orphans", &self.orphans)
            .field("drop_all_rows", &self.drop_all_rows)
            .field("rollups", &self.rollups)
            .field("dry_run", &self.dry_run)
            .field("orphan_age", &self.orphan_age)
            .field("snapshot_retention", &self.snapshot_retention)
            .finish_non_exhaustive()
    }
}

/// What a maintenance run did (or, with `dry_run`, would do).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct MaintainReport {
    /// The table, `namespace.table`.
    pub table: String,
    /// Whether this was a dry run (nothing changed).
    pub dry_run: bool,
    /// Live data files before the run.
    pub files_before: u64,
    /// Live data files after the run.
    pub files_after: u64,
    /// Bytes of live data files before the run.
    pub bytes_before: u64,
    /// Bytes of live data files after the run.
    pub bytes_after: u64,
    /// Partitions compacted.
    pub partitions_compacted: u64,
    /// Rows read and rewritten by compaction.
    pub rows_rewritten: u64,
    /// Data files written by compaction.
    pub files_written: u64,
    /// Data files dropped by retention.
    pub files_dropped: u64,
    /// Rows in the files dropped by retention.
    pub rows_dropped: u64,
    /// Snapshots expired.
    pub snapshots_expired: u64,
    /// Objects deleted (files of expired snapshots and orphans).
    pub objects_deleted: u64,
    /// Bytes of the objects deleted.
    pub bytes_deleted: u64,
    /// Rollups refreshed.
    pub rollups_refreshed: u64,
    /// What was done or planned, one line each.
    pub actions: Vec<String>,
    /// Parts that gave up (a conflict with another writer), one line each; the next run retries.
    pub skipped: Vec<String>,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// Runs maintenance on one table (module docs).
///
/// Errors: [`ErrorKind::NotFound`]; [`ErrorKind::InvalidInput`] for a bad maintenance property;
/// storage and corruption errors. A conflict with another writer is not an error: the part is
/// reported in [`MaintainReport::skipped`].
pub(crate) async fn maintain(
    storage: &Storage,
    cache: &MetadataCache,
    ident: &TableIdent,
    opts: &MaintainOptions,
) -> Result<MaintainReport> {
    let started = Instant::now();
    let mut t = catalog::load(storage, cache, ident).await?;
    let settings = MaintenanceSettings::from_properties(t.metadata.properties())?;
    let before = live(storage, cache, &t).await?;
    let mut r = MaintainReport {
        table: ident.to_string(),
        dry_run: opts.dry_run,
        files_before: before.len() as u64,
        bytes_before: before.iter().map(|f| f.file_size_in_bytes()).sum(),
        ..Default::default()
    };
    let progress = |step: &'static str, done: u64, total: u64| {
        if let Some(p) = &opts.progress {
            p(&MaintainProgress {
                table: ident.to_string(),
                step,
                done,
                total,
            });
        }
    };

    if opts.retention {
        if let Some(retention) = settings.retention {
            retain(storage, cache, &mut t, retention, opts, &mut r).await?;
            progress("retention", 1, 1);
        }
    }
    if opts.compact {
        let files = live(storage, cache, &t).await?;
        let groups = plan::plan(&files, settings.target_file_size, 2);
        compact_groups(storage, cache, &mut t, &settings, groups, opts, &mut r).await?;
    }
    if opts.expire {
        let retention = opts.snapshot_retention.unwrap_or(settings.snapshot_retention);
        let now = chrono::Utc::now().timestamp_millis();
        let ids = expire::to_expire(&t, now, retention, settings.min_snapshots, settings.max_snapshots);
        if !ids.is_empty() {
            r.actions.push(format!("expire {} snapshots", ids.len()));
            if !opts.dry_run {
                expire_snapshots(storage, cache, &mut t, ids, &mut r).await?;
            } else {
                r.snapshots_expired = ids.len() as u64;
            }
        }
        progress("expiry", 1, 1);
    }
    if opts.orphans {
        let orphans = expire::find_orphans(storage, cache, &t.ident, opts.orphan_age, !opts.dry_run).await?;
        if !orphans.is_empty() {
            r.actions.push(format!("delete {} unreferenced files", orphans.len()));
            if !opts.dry_run {
                let (n, bytes) = expire::delete_orphans(storage, &orphans).await;
                r.objects_deleted += n;
                r.bytes_deleted += bytes;
            }
        }
        progress("orphans", 1, 1);
    }
    let after = live(storage, cache, &t).await?;
    r.files_after = after.len() as u64;
    r.bytes_after = after.iter().map(|f| f.file_size_in_bytes()).sum();
    r.seconds = started.elapsed().as_secs_f64();
    Ok(r)
}

/// Runs inline maintenance after a committed append (when wanted) and records it in the report.
pub(crate) async fn maintain_after(
    (storage, cache, ident, wanted): (Storage, Arc<MetadataCache>, TableIdent, bool),
    mut report: AppendReport,
) -> AppendReport {
    if wanted && report.snapshot_id.is_some() {
        report.maintenance = after_append(&storage, &cache, &ident, report.version, &report.partitions).await;
    }
    report
}

/// What inline compaction after an append did.
async fn after_append(
    storage: &Storage,
    cache: &MetadataCache,
    ident: &TableIdent,
    committed: Option<u64>,
    added_partitions: &[Option<i32>],
) -> Option<crate::commit::InlineMaintenance> {
    let started = Instant::now();
    let run = async {
        // Planned on the version the append committed (its metadata is cached: no request); a
        // compaction's commit rebases onto whatever is newest then, as every commit does.
        let mut t = match committed {
            Some(v) => catalog::load_version(storage, cache, ident, v).await?,
            None => catalog::load(storage, cache, ident).await?,
        };
        let settings = MaintenanceSettings::from_properties(t.metadata.properties())?;
        if !settings.auto_maintain {
            return Ok(None);
        }
        let files = live(storage, cache, &t).await?;
        let groups = plan::plan_inline(
            &files,
            added_partitions,
            settings.target_file_size,
            settings.compact_min_files,
        );
        if groups.is_empty() {
            return Ok(None);
        }
        let mut r = MaintainReport::default();
        compact_groups(
            storage,
            cache,
            &mut t,
            &settings,
            groups,
            &MaintainOptions::default(),
            &mut r,
        )
        .await?;
        Ok::<_, crate::Error>(Some(r))
    };
    match run.await {
        Ok(None) => None,
        Ok(Some(r)) => Some(crate::commit::InlineMaintenance {
            partitions_compacted: r.partitions_compacted,
            rows_rewritten: r.rows_rewritten,
            files_written: r.files_written,
            seconds: started.elapsed().as_secs_f64(),
            error: r.skipped.first().cloned(),
        }),
        Err(e) => Some(crate::commit::InlineMaintenance {
            seconds: started.elapsed().as_secs_f64(),
            error: Some(e.to_string()),
            ..Default::default()
        }),
    }
}

async fn live(storage: &Storage, cache: &MetadataCache, t: &LoadedTable) -> Result<Vec<DataFile>> {
    catalog::data_files(storage, cache, &t.metadata, t.metadata.current_snapshot_id()).await
}

/// Commits `txn`; a conflict is recorded as skipped (`Ok(false)`), other errors returned.
async fn commit_or_skip(
    storage: &Storage,
    cache: &MetadataCache,
    t: &mut LoadedTable,
    txn: Transaction,
    what: &str,
    r: &mut MaintainReport,
) -> Result<bool> {
    match commit::commit(storage, cache, t.clone(), txn).await {
        Ok(Outcome::Committed { .. }) | Ok(Outcome::Duplicate { .. }) => {
            *t = catalog::load(storage, cache, &t.ident).await?;
            Ok(true)
        }
        Err(e) if e.kind() == ErrorKind::Conflict => {
            r.skipped.push(format!("{what}: {}", e.message()));
            *t = catalog::load(storage, cache, &t.ident).await?;
            Ok(false)
        }
        Err(e) => Err(e),
    }
}

/// Retention: the rows older than now minus `retention` leave the table's snapshot, so that
/// every engine reads what Varve answers. Files wholly older are dropped without being read;
/// files that straddle the cutoff (a partition coarser than the retention) are rewritten without
/// the old rows ([`delete`], one `delete` snapshot noted `retention`).
async fn retain(
    storage: &Storage,
    cache: &MetadataCache,
    t: &mut LoadedTable,
    retention: Duration,
    opts: &MaintainOptions,
    r: &mut MaintainReport,
) -> Result<()> {
    let dry_run = opts.dry_run;
    let contract = t.contract()?;
    let Some(time) = contract.time_column.clone() else {
        return Ok(());
    };
    let Some(time_id) = t.metadata.current_schema().field_by_name(&time).map(|f| f.id) else {
        return Ok(());
    };
    let cutoff = retention_cutoff_us(retention);
    let bound = |f: &DataFile, lower: bool| {
        let b = match lower {
            true => f.lower_bounds().get(&time_id),
            false => f.upper_bounds().get(&time_id),
        };
        match b.map(|d| d.literal()) {
            Some(PrimitiveLiteral::Long(v)) => Some(*v),
            _ => None,
        }
    };
    let files = live(storage, cache, t).await?;
    let whole: Vec<&DataFile> = files
        .iter()
        .filter(|f| bound(f, false).is_some_and(|u| u < cutoff))
        .collect();
    // Files with rows on both sides of the cutoff are rewritten once their rows past it are
    // about [`REWRITE_SHARE`] of them (by the time bounds, taking rows as spread evenly): the
    // cutoff moves on every run, and rewriting at each would rewrite the same file again and
    // again; until then queries hide those rows and `info` counts them.
    let straddling = files
        .iter()
        .filter(|f| match (bound(f, true), bound(f, false)) {
            (Some(l), Some(u)) if l < cutoff && u >= cutoff => {
                (cutoff - l) as f64 >= REWRITE_SHARE * (u - l).max(1) as f64
            }
            _ => false,
        })
        .count();
    if whole.is_empty() && straddling == 0 {
        return Ok(());
    }
    let whole_rows: u64 = whole.iter().map(|f| f.record_count()).sum();
    let when = chrono::DateTime::from_timestamp_micros(cutoff)
        .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default();
    if whole.len() == files.len() && !opts.drop_all_rows {
        r.skipped.push(format!(
            "retention: every row of the table ({whole_rows} rows in {} files) is older than {when}; \
             run again with --yes (Python: drop_all_rows=True) to remove them all, or raise varve.retention",
            whole.len()
        ));
        return Ok(());
    }
    if dry_run {
        r.actions.push(format!(
            "retention: drop {} files ({whole_rows} rows) older than {when}, rewrite {straddling} files holding rows on both sides of it (rows dropped from them not counted)",
            whole.len()
        ));
        r.files_dropped += whole.len() as u64;
        r.rows_dropped += whole_rows;
        return Ok(());
    }
    if straddling == 0 {
        // Whole files only: dropped from the metadata, nothing read.
        let rows = whole_rows;
        let n = whole.len() as u64;
        let action = format!("retention: drop {n} files ({rows} rows) older than {when}");
        let mut txn = Transaction::new(Operation::Delete);
        txn.removed = whole.into_iter().cloned().collect();
        txn.last_value = crate::index::last_value::Change::Remove;
        txn.note = Some(action.clone());
        r.actions.push(action);
        if commit_or_skip(storage, cache, t, txn, "retention", r).await? {
            r.files_dropped += n;
            r.rows_dropped += rows;
        }
        return Ok(());
    }
    let pred = retention_predicate(t, &time, cutoff)?;
    match delete::delete(storage, cache, &t.ident, Some(&pred), "retention").await {
        Ok(d) => {
            r.actions.push(format!(
                "retention: {} rows older than {when} left the table ({} files removed, {} written)",
                d.rows_deleted, d.files_removed, d.files_written
            ));
            r.files_dropped += d.files_removed;
            r.rows_dropped += d.rows_deleted;
        }
        Err(e) if e.kind() == ErrorKind::Conflict => r.skipped.push(format!("retention: {}", e.message())),
        Err(e) => return Err(e),
    }
    *t = catalog::load(storage, cache, &t.ident).await?;
    Ok(())
}

/// The rows of `t` older than `cutoff` (µs since the epoch) on its time column `time`, as a
/// delete's predicate; the rows it keeps are the others (a NULL time is kept, as by a delete).
///
/// Errors: [`ErrorKind::Internal`] when the expressions cannot be built for the table's schema.
fn retention_predicate(t: &LoadedTable, time: &str, cutoff: i64) -> Result<delete::DeletePredicate> {
    use datafusion::logical_expr::lit;
    let arrow_schema = schema::to_arrow(t.metadata.current_schema())?;
    let tz = match arrow_schema.field_with_name(time).map(|f| f.data_type().clone()) {
        Ok(arrow::datatypes::DataType::Timestamp(_, tz)) => tz,
        _ => {
            return Err(crate::error::Error::internal(format!(
                "time column {time} is not a timestamp"
            )))
        }
    };
    let df_schema = datafusion::common::DFSchema::try_from(arrow_schema.as_ref().clone())?;
    let column = datafusion::logical_expr::Expr::Column(datafusion::common::Column::new_unqualified(time));
    let older = column.lt(lit(datafusion::common::ScalarValue::TimestampMicrosecond(
        Some(cutoff),
        tz,
    )));
    let props = datafusion::execution::context::ExecutionProps::new();
    let physical = |e| datafusion::physical_expr::create_physical_expr(&e, &df_schema, &props);
    Ok(delete::DeletePredicate {
        predicate: physical(older.clone())?,
        keep: physical(older.is_not_true())?,
        columns: vec![time.to_string()],
    })
}

/// The share of a file's rows (estimated from its time bounds) past the retention at which
/// maintenance rewrites the file without them.
const REWRITE_SHARE: f64 = 0.1;

/// The oldest time (µs since the epoch) a table with `retention` keeps.
pub(crate) fn retention_cutoff_us(retention: Duration) -> i64 {
    chrono::Utc::now().timestamp_micros() - retention.as_micros().min(i64::MAX as u128) as i64
}

async fn compact_groups(
    storage: &Storage,
    cache: &MetadataCache,
    t: &mut LoadedTable,
    settings: &MaintenanceSettings,
    groups: Vec<plan::MergeGroup>,
    opts: &MaintainOptions,
    r: &mut MaintainReport,
) -> Result<()> {
    let contract = t.contract()?;
    let total: u64 = groups.iter().map(|g| g.bytes()).sum();
    let mut done = 0u64;
    for g in groups {
        let label = match (g.partition, &contract.time_column) {
            (Some(p), Some(_)) => contract.partitioning.label(p),
            _ => "(unpartitioned)".to_string(),
        };
        let action = format!(
            "compact partition {label}: {} files, {} rows, {} bytes",
            g.files.len(),
            g.rows(),
            g.bytes()
        );
        r.actions.push(action.clone());
        if opts.dry_run {
            r.partitions_compacted += 1;
            r.rows_rewritten += g.rows();
            continue;
        }
        let arrow_schema = schema::to_arrow(t.metadata.current_schema())?;
        let job = MergeJob {
            storage,
            table_prefix: t.ident.prefix(),
            schema: arrow_schema,
            contract: &contract,
            settings,
            partition: g.partition,
        };
        let merged = job.merge(&g.files, None).await?;
        let (rows, written) = (merged.rows, merged.files.len() as u64);
        if rows != g.rows() {
            storage.delete_quietly(&merged.uploaded).await;
            return Err(crate::Error::internal(format!(
                "compaction of partition {label} read {rows} rows of {}; nothing was committed",
                g.rows()
            )));
        }
        let mut txn = Transaction::new(Operation::Replace);
        txn.last_value = crate::index::last_value::Change::Same;
        txn.written_schema = Some(t.metadata.current_schema().as_ref().clone());
        txn.removed = g.files.clone();
        txn.added = merged.files;
        txn.uploaded = merged.uploaded;
        txn.footers = merged.footers;
        txn.note = Some(format!(
            "compaction: {} files into {written} in partition {label}",
            g.files.len()
        ));
        if commit_or_skip(storage, cache, t, txn, &format!("compaction of {label}"), r).await? {
            r.partitions_compacted += 1;
            r.rows_rewritten += rows;
            r.files_written += written;
        }
        done += g.bytes();
        if let Some(p) = &opts.progress {
            p(&MaintainProgress {
                table: t.ident.to_string(),
                step: "compaction",
                done,
                total,
            });
        }
    }
    Ok(())
}

async fn expire_snapshots(
    storage: &Storage,
    cache: &MetadataCache,
    t: &mut LoadedTable,
    ids: Vec<i64>,
    r: &mut MaintainReport,
) -> Result<()> {
    let old = t.metadata.clone();
    let mut txn = Transaction::new(Operation::Delete);
    txn.expire_snapshots = ids.clone();
    if !commit_or_skip(storage, cache, t, txn, "expiry", r).await? {
        return Ok(());
    }
    r.snapshots_expired += ids.len() as u64;
    let kept: Vec<i64> = t.metadata.snapshots().map(|s| s.snapshot_id()).collect();
    let gone = expire::reachable(storage, cache, &old, &ids).await?;
    let keep = expire::reachable(storage, cache, &t.metadata, &kept).await?;
    let delete: Vec<String> = gone.difference(&keep).cloned().collect();
    let (n, bytes) = expire::delete_locations(storage, &delete).await;
    r.objects_deleted += n;
    r.bytes_deleted += bytes;
    Ok(())
}
