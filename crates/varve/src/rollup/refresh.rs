//! Refreshing a rollup: from its watermark (the source snapshot its rows cover) to the source's
//! current snapshot, in one commit of the rollup table.
//!
//! 1. The source snapshots after the watermark are walked back from the current one. Each one
//!    that changes rows (anything but a compaction, Iceberg operation `replace`, or a retention
//!    drop, whose old rows the rollup keeps) adds and removes data files; their time bounds (the
//!    manifests' column bounds) say which times changed. When the walk cannot reach the
//!    watermark (expired snapshots), or a file has no bounds, every bucket is recomputed.
//! 2. The changed times, widened to whole buckets, are the ranges to recompute: their rows are
//!    computed again from the source at the current snapshot ([`RollupDef::state_sql`]); that
//!    query is routed as any other (`route`), so a finer rollup of the same table that is up to
//!    date (or behind by appends only) computes a coarser one when it keeps the states needed.
//! 3. The rollup's data files whose bucket bounds meet those ranges are rewritten: the rows
//!    outside the ranges are kept, those inside replaced by the recomputed ones; the new
//!    watermark is set in the same commit (an Iceberg `overwrite`). A refresh that stops before
//!    the commit changes nothing; one that loses against another refresh fails with a conflict
//!    and the next one starts from the winner's watermark.

use std::collections::HashSet;
use std::time::Instant;

use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::logical_expr::Expr;
use datafusion::scalar::ScalarValue;
use futures::StreamExt;
use iceberg::spec::{DataFile, Operation, PrimitiveLiteral};

use crate::catalog::{self, LoadedTable, MetadataCache, TableIdent};
use crate::commit::append::Appender;
use crate::commit::AppendOptions;
use crate::error::{Error, Result};
use crate::format::properties::{PROP_ROLLUP_WATERMARK, PROP_ROLLUP_WATERMARK_SEQUENCE};
use crate::query::functions::time_bucket::{bucketer_of, Bucketer};
use crate::query::session::Session;
use crate::rollup::definition::{quote, RollupDef};
use crate::storage::Storage;

/// What a refresh did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct RefreshReport {
    /// The rollup, `namespace.name`.
    pub rollup: String,
    /// Its source table.
    pub source: String,
    /// The rollup was up to date: nothing was done.
    pub up_to_date: bool,
    /// Every bucket was recomputed (first refresh, or changes that could not be traced).
    pub full: bool,
    /// Time ranges recomputed, `[start, end)` in µs since the epoch.
    pub ranges: Vec<(i64, i64)>,
    /// Rollup rows written (recomputed and kept).
    pub rows_written: u64,
    /// Rollup data files replaced.
    pub files_replaced: u64,
    /// The new watermark (the source snapshot covered).
    pub watermark: Option<i64>,
    /// How the recomputed rows were read when a finer rollup of the same table answered
    /// (`EXPLAIN`'s note); empty when they came from the table.
    pub computed_from: Vec<String>,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// The compaction of the rollup's partitions after the refresh, when its writes left more
    /// small files than `varve.compact-min-files` (as after an append). A failure is reported
    /// here and never undoes the refresh.
    pub maintenance: Option<crate::commit::InlineMaintenance>,
}

impl RefreshReport {
    /// One line for a person.
    pub fn summary(&self) -> String {
        if self.up_to_date {
            return format!(
                "rollup {} is up to date (snapshot {} of {})",
                self.rollup,
                self.watermark.map(|w| w.to_string()).unwrap_or_else(|| "none".into()),
                self.source
            );
        }
        let what = match (self.full, self.ranges.len()) {
            (true, _) => "every bucket".to_string(),
            (false, 0) => "no bucket (no rows changed)".to_string(),
            (false, n) => format!("{n} time range(s)"),
        };
        let compacted = match &self.maintenance {
            Some(m) if m.error.is_some() => format!(" (its compaction failed: {})", m.error.as_deref().unwrap_or("")),
            Some(m) if m.partitions_compacted > 0 => {
                format!(
                    " (then compacted {} partition(s) into {} file(s))",
                    m.partitions_compacted, m.files_written
                )
            }
            _ => String::new(),
        };
        format!(
            "refreshed rollup {} to snapshot {} of {}: recomputed {what}, wrote {} rows, replaced {} files in {:.3} s{compacted}",
            self.rollup,
            self.watermark.map(|w| w.to_string()).unwrap_or_else(|| "none".into()),
            self.source,
            self.rows_written,
            self.files_replaced,
            self.seconds
        )
    }
}

/// An SQL reference to `table`, at snapshot `at` when given (time travel).
pub(crate) fn table_at(table: &TableIdent, at: Option<i64>) -> String {
    match at {
        Some(id) => format!(
            "{}.{}",
            quote(&table.namespace),
            quote(&format!("{}@v={id}", table.name))
        ),
        None => format!("{}.{}", quote(&table.namespace), quote(&table.name)),
    }
}

/// A constant expression's value (a literal, or a cast of one), if it is one.
pub(crate) fn constant(e: &Expr) -> Option<ScalarValue> {
    match e {
        Expr::Literal(v, _) => Some(v.clone()),
        Expr::Cast(c) => constant(&c.expr)?.cast_to(c.field.data_type()).ok(),
        Expr::TryCast(c) => constant(&c.expr)?.cast_to(c.field.data_type()).ok(),
        Expr::Alias(a) => constant(&a.expr),
        // `to_timestamp_micros(<integer>)`: how Varve's own SQL writes an exact time.
        Expr::ScalarFunction(f) if f.func.name() == "to_timestamp_micros" && f.args.len() == 1 => {
            match constant(&f.args[0])?.cast_to(&arrow::datatypes::DataType::Int64).ok()? {
                ScalarValue::Int64(Some(us)) => Some(ScalarValue::TimestampMicrosecond(Some(us), None)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The bucketer of a `time_bucket` call whose arguments other than the time are constants.
pub(crate) fn bucketer_of_call(args: &[Expr]) -> Option<Bucketer> {
    let mut values = Vec::with_capacity(args.len());
    for (i, a) in args.iter().enumerate() {
        values.push(match i {
            1 => ScalarValue::TimestampMicrosecond(None, None),
            _ => constant(a)?,
        });
    }
    bucketer_of(&values).ok().flatten()
}

/// The bucketer of a rollup's `time_bucket`.
///
/// Errors: [`crate::ErrorKind::InvalidInput`] when its arguments do not make one (a NULL width).
pub(crate) async fn bucketer(session: &Session, def: &RollupDef) -> Result<Bucketer> {
    let sql = format!(
        "SELECT {} FROM {}",
        def.bucket_sql(&quote(&def.time)),
        table_at(&def.source, None)
    );
    let plan = session.internal_plan(&sql).await?;
    let mut found = None;
    plan.apply(|p| {
        for e in p.expressions() {
            e.apply(|x| {
                if let Expr::ScalarFunction(f) = x {
                    if f.func.name() == "time_bucket" {
                        found = bucketer_of_call(&f.args);
                        return Ok(TreeNodeRecursion::Stop);
                    }
                }
                Ok(TreeNodeRecursion::Continue)
            })?;
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    found.ok_or_else(|| {
        Error::invalid(format!(
            "rollup {}: {} does not give a bucket width (a NULL or non-constant argument)",
            def.rollup,
            def.bucket_sql(&def.time)
        ))
    })
}

/// The time bounds (µs) of a data file's column `field_id`.
fn bounds(f: &DataFile, field_id: i32) -> Option<(i64, i64)> {
    let lo = match f.lower_bounds().get(&field_id)?.literal() {
        PrimitiveLiteral::Long(v) => *v,
        _ => return None,
    };
    let hi = match f.upper_bounds().get(&field_id)?.literal() {
        PrimitiveLiteral::Long(v) => *v,
        _ => return None,
    };
    Some((lo, hi))
}

/// Merges `[start, end)` ranges that overlap or touch; sorted.
pub(crate) fn merge_ranges(mut ranges: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    ranges.sort();
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(ranges.len());
    for (a, b) in ranges {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// The times (µs, inclusive bounds) the source's changes after snapshot `watermark` touched, or
/// `None` when they cannot be traced (module docs, step 1).
async fn touched_times(
    storage: &Storage,
    cache: &MetadataCache,
    source: &LoadedTable,
    watermark: i64,
    time: &str,
) -> Result<Option<Vec<(i64, i64)>>> {
    let md = &source.metadata;
    let Some(time_id) = md.current_schema().field_by_name(time).map(|f| f.id) else {
        return Ok(None);
    };
    if md.snapshot_by_id(watermark).is_none() {
        return Ok(None);
    }
    let mut chain = Vec::new();
    let mut at = md.current_snapshot();
    loop {
        match at {
            None => return Ok(None),
            Some(s) if s.snapshot_id() == watermark => break,
            Some(s) => {
                chain.push(s.clone());
                at = s.parent_snapshot_id().and_then(|p| md.snapshot_by_id(p));
            }
        }
    }
    let mut times = Vec::new();
    for s in chain {
        if s.summary().operation == Operation::Replace {
            continue;
        }
        let Some(parent) = s.parent_snapshot_id() else {
            return Ok(None);
        };
        let before = catalog::data_files(storage, cache, md, Some(parent)).await?;
        let after = catalog::data_files(storage, cache, md, Some(s.snapshot_id())).await?;
        let names = |fs: &[DataFile]| -> HashSet<String> { fs.iter().map(|f| f.file_path().to_string()).collect() };
        let (was, is) = (names(&before), names(&after));
        let changed = before
            .iter()
            .filter(|f| !is.contains(f.file_path()))
            .chain(after.iter().filter(|f| !was.contains(f.file_path())));
        for f in changed {
            match bounds(f, time_id) {
                Some(b) => times.push(b),
                None => return Ok(None),
            }
        }
    }
    Ok(Some(times))
}

/// `[start, end)` µs ranges of whole buckets covering the inclusive time `spans`.
fn bucket_ranges(b: &Bucketer, spans: &[(i64, i64)]) -> Result<Vec<(i64, i64)>> {
    let out_of_range = || Error::invalid("a changed time is outside the range of the rollup's buckets");
    let mut ranges = Vec::with_capacity(spans.len());
    for (lo, hi) in spans {
        let start = b.bucket(*lo as i128 * 1000).ok_or_else(out_of_range)?;
        let last = b.bucket(*hi as i128 * 1000).ok_or_else(out_of_range)?;
        let end = b.next(last).ok_or_else(out_of_range)?;
        ranges.push((start.div_euclid(1000) as i64, end.div_euclid(1000) as i64));
    }
    Ok(merge_ranges(ranges))
}

/// SQL: `column` in any of `ranges` (µs).
fn in_ranges(column: &str, ranges: &[(i64, i64)]) -> String {
    if ranges.is_empty() {
        return "false".to_string();
    }
    let c = quote(column);
    let terms: Vec<String> = ranges
        .iter()
        .map(|(a, b)| format!("({c} >= to_timestamp_micros({a}) AND {c} < to_timestamp_micros({b}))"))
        .collect();
    format!("({})", terms.join(" OR "))
}

/// Refreshes a rollup (module docs).
///
/// Errors: [`crate::ErrorKind::NotFound`] for a missing rollup or source;
/// [`crate::ErrorKind::InvalidInput`] for a table that is not a rollup;
/// [`crate::ErrorKind::Conflict`] when another refresh or a compaction of the rollup won; query
/// and storage errors. The rollup is unchanged on any error.
pub(crate) async fn refresh(session: &Session, rollup: &TableIdent) -> Result<RefreshReport> {
    let started = Instant::now();
    let (storage, cache) = (session.storage(), session.cache());
    let (table, def) = super::load_def(session, rollup).await?;
    let source = catalog::load(storage, cache, &def.source).await?;
    let mut report = RefreshReport {
        rollup: rollup.to_string(),
        source: def.source.to_string(),
        ..Default::default()
    };
    let props = table.metadata.properties();
    let watermark = props.get(PROP_ROLLUP_WATERMARK).and_then(|v| v.parse::<i64>().ok());
    let Some(current) = source.metadata.current_snapshot() else {
        // No rows in the source yet.
        report.up_to_date = true;
        report.seconds = started.elapsed().as_secs_f64();
        return Ok(report);
    };
    let current_id = current.snapshot_id();
    report.watermark = Some(current_id);
    if watermark == Some(current_id) {
        report.up_to_date = true;
        report.seconds = started.elapsed().as_secs_f64();
        return Ok(report);
    }
    let b = bucketer(session, &def).await?;
    let touched = match watermark {
        Some(w) => touched_times(storage, cache, &source, w, &def.time).await?,
        None => None,
    };
    // `None`: every bucket.
    let ranges = match touched {
        Some(spans) => Some(bucket_ranges(&b, &spans)?),
        None => None,
    };
    report.full = ranges.is_none();
    report.ranges = ranges.clone().unwrap_or_default();

    // The rollup's files to rewrite, and the window of buckets they hold (`None`: all of them).
    let rollup_snapshot = table.metadata.current_snapshot_id();
    let live = catalog::data_files(storage, cache, &table.metadata, rollup_snapshot).await?;
    let bucket_id = table
        .metadata
        .current_schema()
        .field_by_name(&def.bucket)
        .map(|f| f.id)
        .ok_or_else(|| Error::corrupt(format!("rollup {rollup} has no column {}", def.bucket)))?;
    let (removed, window): (Vec<DataFile>, Option<Vec<(i64, i64)>>) = match &ranges {
        None => (live.clone(), None),
        // A file without bucket bounds could hold any bucket: every file is rewritten.
        Some(_) if live.iter().any(|f| bounds(f, bucket_id).is_none()) => (live.clone(), None),
        Some(r) => {
            let mut window = r.clone();
            loop {
                let meets = |f: &DataFile| {
                    let (lo, hi) = bounds(f, bucket_id).unwrap_or((i64::MIN, i64::MAX));
                    window.iter().any(|(a, b)| lo < *b && hi >= *a)
                };
                let chosen: Vec<&DataFile> = live.iter().filter(|f| meets(f)).collect();
                let mut wider = window.clone();
                wider.extend(
                    chosen
                        .iter()
                        .filter_map(|f| bounds(f, bucket_id))
                        .map(|(lo, hi)| (lo, hi.saturating_add(1))),
                );
                let wider = merge_ranges(wider);
                if wider == window {
                    break (chosen.into_iter().cloned().collect(), Some(window));
                }
                window = wider;
            }
        }
    };
    report.files_replaced = removed.len() as u64;

    let mut appender = Appender::new(
        storage.clone(),
        session.cache().clone(),
        table.clone(),
        AppendOptions {
            note: Some(format!("rollup refresh to snapshot {current_id} of {}", def.source)),
            ..Default::default()
        },
    )?;
    // Compaction after the commit, as after an append: a refresh writes many small sorted runs.
    let target = appender.target();
    let mut set = std::collections::HashMap::new();
    set.insert(PROP_ROLLUP_WATERMARK.to_string(), current_id.to_string());
    set.insert(
        PROP_ROLLUP_WATERMARK_SEQUENCE.to_string(),
        current.sequence_number().to_string(),
    );
    appender.replacing(removed, set);
    let mut queries = Vec::new();
    // Rows kept: those of the rewritten files outside the recomputed ranges.
    if let (Some(r), Some(id)) = (&ranges, rollup_snapshot) {
        let keep = match &window {
            Some(w) => format!("{} AND NOT {}", in_ranges(&def.bucket, w), in_ranges(&def.bucket, r)),
            None => format!("NOT {}", in_ranges(&def.bucket, r)),
        };
        if window.as_ref().is_none_or(|w| !w.is_empty()) {
            queries.push(format!("SELECT * FROM {} WHERE {keep}", table_at(rollup, Some(id))));
        }
    }
    // Rows recomputed.
    match &ranges {
        None => queries.push(def.state_sql(&table_at(&def.source, Some(current_id)), None)),
        Some(r) if !r.is_empty() => {
            queries.push(def.state_sql(&table_at(&def.source, Some(current_id)), Some(&in_ranges(&def.time, r))))
        }
        Some(_) => {}
    }
    let pushed = async {
        for q in &queries {
            let (mut stream, routes) = session.internal_stream_routed(q).await?;
            report
                .computed_from
                .extend(routes.into_iter().filter(|r| r.contains("was answered from rollup")));
            while let Some(batch) = stream.next().await {
                let batch = batch?;
                report.rows_written += batch.num_rows() as u64;
                appender.push(batch).await?;
            }
        }
        Ok::<_, Error>(())
    }
    .await;
    if let Err(e) = pushed {
        appender.abort().await;
        return Err(e);
    }
    let committed = appender.commit().await?;
    report.maintenance = Box::pin(crate::maintain::maintain_after(target, committed))
        .await
        .maintenance;
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// Refreshes every rollup `source` lists; a rollup that fails is reported, not fatal.
/// A rollup the source lists that no longer exists (its table was dropped) is taken off the list.
pub(crate) async fn refresh_all(session: &Session, source: &LoadedTable) -> Vec<(TableIdent, Result<RefreshReport>)> {
    let mut out = Vec::new();
    for r in super::listed(source.metadata.properties()) {
        match refresh(session, &r).await {
            Err(e)
                if e.kind() == crate::ErrorKind::NotFound
                    && !catalog::current_version(session.storage(), &r)
                        .await
                        .is_ok_and(|v| v.is_some()) =>
            {
                let gone = r.clone();
                let unlisted = super::set_listed(session.storage(), session.cache(), &source.ident, |l| {
                    l.retain(|t| *t != gone)
                })
                .await;
                if let Err(e) = unlisted {
                    out.push((r, Err(e)));
                }
            }
            result => out.push((r, result)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::merge_ranges;

    #[test]
    fn ranges_merge_when_they_meet() {
        assert_eq!(merge_ranges(vec![(5, 7), (0, 2), (2, 3), (6, 9)]), vec![(0, 3), (5, 9)]);
        assert_eq!(merge_ranges(vec![]), vec![]);
    }
}
