//! Deletes: the rows a predicate matches leave the table in one `delete` snapshot that every
//! Iceberg reader sees as it is (copy-on-write, Iceberg spec "Snapshots": operation `delete`).
//!
//! Files are chosen by their column bounds first (DataFusion's `PruningPredicate` over the
//! manifests' bounds, as scans do): a file that cannot hold a matching row is untouched; a file
//! whose every row matches (no row can be kept by the bounds, and the predicate's columns hold no
//! NULLs there) is dropped from the metadata without being read; any other file that may match
//! is rewritten without the matching rows, merged with the other such files of its partition
//! (so a delete also compacts what it touches). A row whose predicate is NULL is kept, as in SQL.
//!
//! A delete reads the snapshot current when it starts; a commit that removed one of its files
//! meanwhile (a compaction, another delete) makes it start again on the newer snapshot, so deleted
//! rows never come back and rows it did not read are never lost.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_optimizer::pruning::PruningPredicate;
use iceberg::spec::{DataFile, Operation};

use crate::catalog::{self, MetadataCache, TableIdent};
use crate::commit::{self, Outcome, Transaction};
use crate::error::{Error, ErrorKind, Result};
use crate::format::manifest::partition_of;
use crate::format::properties::MaintenanceSettings;
use crate::format::schema;
use crate::format::stats::FileStats;
use crate::storage::Storage;
use crate::write::merge_job::{Keep, MergeJob};

/// How many times a delete starts again after losing against a commit that removed its files.
const MAX_RESTARTS: usize = 5;

/// What to delete, as physical expressions over the table's columns (in the order of its current
/// schema).
#[derive(Debug, Clone)]
pub(crate) struct DeletePredicate {
    /// True for the rows to delete.
    pub(crate) predicate: Arc<dyn PhysicalExpr>,
    /// True for the rows to keep: `predicate IS NOT TRUE`.
    pub(crate) keep: Arc<dyn PhysicalExpr>,
    /// The columns the predicate reads.
    pub(crate) columns: Vec<String>,
}

/// What a delete did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct DeleteReport {
    /// The table, `namespace.table`.
    pub table: String,
    /// Rows deleted.
    pub rows_deleted: u64,
    /// Data files removed from the table (dropped whole or rewritten).
    pub files_removed: u64,
    /// Data files written (the kept rows of rewritten files).
    pub files_written: u64,
    /// The new snapshot, `None` when no row matched.
    pub snapshot_id: Option<i64>,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// Deletes the rows `pred` matches (every row when `None`); `what` names the change in the
/// snapshot's note (`delete`, `retention`).
///
/// Errors: [`ErrorKind::Conflict`] when other commits removed its files [`MAX_RESTARTS`] times;
/// storage and corruption errors. On error nothing is committed.
pub(crate) async fn delete(
    storage: &Storage,
    cache: &MetadataCache,
    ident: &TableIdent,
    pred: Option<&DeletePredicate>,
    what: &str,
) -> Result<DeleteReport> {
    let started = Instant::now();
    let mut last = None;
    for _ in 0..MAX_RESTARTS {
        match attempt(storage, cache, ident, pred, what).await {
            Ok(mut r) => {
                r.seconds = started.elapsed().as_secs_f64();
                return Ok(r);
            }
            Err(e) if e.kind() == ErrorKind::Conflict => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| Error::new(ErrorKind::Conflict, format!("table {ident}: delete gave up"))))
}

async fn attempt(
    storage: &Storage,
    cache: &MetadataCache,
    ident: &TableIdent,
    pred: Option<&DeletePredicate>,
    what: &str,
) -> Result<DeleteReport> {
    let t = catalog::load(storage, cache, ident).await?;
    let contract = t.contract()?;
    let settings = MaintenanceSettings::from_properties(t.metadata.properties())?;
    let arrow_schema = schema::to_arrow(t.metadata.current_schema())?;
    let files = catalog::data_files(storage, cache, &t.metadata, t.metadata.current_snapshot_id()).await?;
    let mut report = DeleteReport {
        table: ident.to_string(),
        ..Default::default()
    };
    let mut whole: Vec<DataFile> = Vec::new();
    let mut partial: BTreeMap<Option<i32>, Vec<DataFile>> = BTreeMap::new();
    match pred {
        None => whole = files,
        Some(p) => {
            // Bounds are compared against nullable fields, as a scan's predicate sees them.
            let stats_schema = Arc::new(arrow::datatypes::Schema::new(
                arrow_schema
                    .fields()
                    .iter()
                    .map(|f| f.as_ref().clone().with_nullable(true))
                    .collect::<Vec<_>>(),
            ));
            let stats = FileStats {
                files: &files,
                schema: &stats_schema,
            };
            let may_match = match PruningPredicate::try_new(p.predicate.clone(), stats_schema.clone()) {
                Ok(pp) => pp.prune(&stats)?,
                Err(_) => vec![true; files.len()],
            };
            let not = Arc::new(datafusion::physical_expr::expressions::NotExpr::new(
                p.predicate.clone(),
            ));
            let may_keep = match PruningPredicate::try_new(not, stats_schema.clone()) {
                Ok(pp) => pp.prune(&stats)?,
                Err(_) => vec![true; files.len()],
            };
            let ids: Vec<i32> = p
                .columns
                .iter()
                .filter_map(|c| t.metadata.current_schema().field_by_name(c).map(|f| f.id))
                .collect();
            for (i, f) in files.into_iter().enumerate() {
                if !may_match[i] {
                    continue;
                }
                let no_nulls = ids.iter().all(|id| f.null_value_counts().get(id) == Some(&0));
                if !may_keep[i] && no_nulls {
                    whole.push(f);
                } else {
                    partial.entry(partition_of(&f)).or_default().push(f);
                }
            }
        }
    }
    let mut txn = Transaction::new(Operation::Delete);
    txn.last_value = crate::index::last_value::Change::Remove;
    txn.written_schema = Some(t.metadata.current_schema().as_ref().clone());
    report.rows_deleted = whole.iter().map(|f| f.record_count()).sum();
    txn.removed.extend(whole);
    let keep = pred.map(|p| p.keep.clone());
    for (partition, inputs) in partial {
        let rows_in: u64 = inputs.iter().map(|f| f.record_count()).sum();
        let job = MergeJob {
            storage,
            table_prefix: t.ident.prefix(),
            schema: arrow_schema.clone(),
            contract: &contract,
            settings: &settings,
            partition,
        };
        let merged = job.merge(&inputs, keep.clone().map(Keep::Matching)).await;
        let merged = match merged {
            Ok(m) => m,
            Err(e) => {
                storage.delete_quietly(&txn.uploaded).await;
                return Err(e);
            }
        };
        if merged.rows == rows_in {
            // Nothing matched in these files: leave them as they are.
            storage.delete_quietly(&merged.uploaded).await;
            continue;
        }
        txn.uploaded.extend(merged.uploaded);
        txn.footers.extend(merged.footers);
        report.rows_deleted += rows_in - merged.rows;
        txn.removed.extend(inputs);
        txn.added.extend(merged.files);
    }
    if txn.removed.is_empty() {
        storage.delete_quietly(&txn.uploaded).await;
        return Ok(report);
    }
    report.files_removed = txn.removed.len() as u64;
    report.files_written = txn.added.len() as u64;
    txn.note = Some(format!(
        "{what}: {} rows, {} files removed, {} written",
        report.rows_deleted, report.files_removed, report.files_written
    ));
    match commit::commit(storage, cache, t, txn).await? {
        Outcome::Committed { snapshot_id, .. } => report.snapshot_id = snapshot_id,
        Outcome::Duplicate { .. } => return Err(Error::internal("a delete has no batch id")),
    }
    Ok(report)
}
