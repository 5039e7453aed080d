//! The last-value index: the newest row of every series of a table at one snapshot, so that
//! `varve latest`, `Lake::latest` and the SQL that asks for it read one small file instead of
//! every data file.
//!
//! # Format
//!
//! One Parquet file, `metadata/last-value-<uuid>.parquet` under the table, holding whole rows:
//! every column of the snapshot's schema, each with its Iceberg field id (`PARQUET:field_id`, as
//! data files have), so that any Parquet reader can read it and a column renamed later still
//! matches by id. One row per series (distinct value of the series key; NULL is a value), sorted
//! by series key; a table without a series key holds one row, its newest. The snapshot's summary
//! names it (`format::last_value_ref`: its absolute location and its size in bytes).
//! A table without a time column has no index. Plain Iceberg readers ignore both.
//!
//! # Kept exact at every commit
//!
//! Whoever builds a transaction says what it does to the rows ([`Change`]); the commit attempt
//! (`commit::snapshot::prepare`) then derives the new snapshot's index from its parent's:
//! - [`Change::Add`] (appends, `INSERT`, imports, a last-write-wins append's rewrites): the newest
//!   added row of each series merged into the parent's entries. An entry is replaced by a row at a
//!   later time or at the same time (a later write of the same key wins, as last-write-wins does);
//!   late rows older than the entry leave it as it is.
//! - [`Change::Same`] (compaction: the same rows in other files): the parent's index file is named
//!   again; nothing is written.
//! - [`Change::Remove`] (deletes, retention): when no removed file can hold an entry (its time
//!   bounds do not cover the entry's time), the parent's index is named again; otherwise the index
//!   is rebuilt from the live files.
//! - [`Change::Unknown`]: rebuilt from the live files.
//!
//! A rebuild reads every live data file (oldest sequence number first, so that of two rows of one
//! series at one time the later-written one wins, as above). When the parent snapshot has rows but
//! no index (a table written before the index existed, or by another engine), an append commits
//! without one, and the next maintenance commit (compaction, delete, retention) rebuilds it. A
//! parent index that cannot be read (gone, damaged) counts as none: it never stops commits.
//!
//! A rebuild happens at most once per transaction: in its first commit attempt. An attempt that
//! lost to another writer and would need a second full read commits without an index instead (so
//! that a delete on a busy table does not read the table once per attempt); readers then scan,
//! and the next maintenance commit rebuilds it.
//!
//! Rows older than the table's `varve.retention` stay in the index until retention drops their
//! files (and the index is rebuilt); readers filter them out, as they do for data files.
//!
//! # Series-constant columns
//!
//! With the rows, each index names the columns whose value is the same in every row of each
//! series (`IndexRef::series_constant`: a truck's fleet, driver or model), found without being
//! declared. A filter on those and the series key keeps or drops whole series, so the index
//! answers "the newest row of each truck of one fleet" alone (`query::rules::newest`). Kept exact, or
//! smaller, at every commit:
//! - the first append of a table starts from every column (but the time and the series key);
//! - an append drops each column that varies within a series among its rows ([`varying`] over
//!   each sorted run and over the runs' last rows, `commit::append`), or whose value in a series'
//!   added rows differs from the parent's entry for that series (the entry stands for all the
//!   series' rows, since the column is constant);
//! - compaction, deletes and retention keep the parent's set (removing rows cannot make a column
//!   vary), and a rebuild finds it again from every live row;
//! - an added column (NULL in the rows before it) is not in the set until a rebuild.
//!
//! Values compare by Arrow's `distinct` (NULL equals NULL; floats by total order, so `-0.0` and
//! `0.0` differ): equal values give every deterministic filter the same answer.
//!
//! # The older-rows bound
//!
//! Each index also names a time no row is later than unless it is its series' entry
//! (`IndexRef::older_bound`): the latest time of any row that lost to another row of its series
//! in a [`reduce`] (`reduce_with_bound`) or is not the last of its series in an append's sorted
//! run ([`older_in_sorted`]), and the parent's bound. Appends raise it; compaction, deletes and
//! retention keep it (it stays an upper bound); a rebuild computes it from every live row. When
//! the k newest entries are all later than it, they are the table's k newest rows.

use std::collections::{BTreeSet, HashMap};

use arrow::array::{
    new_null_array, Array, ArrayRef, AsArray, BooleanArray, RecordBatch, RecordBatchOptions, UInt32Array,
};
use arrow::compute::{lexsort_to_indices, SortColumn};
use arrow::datatypes::{DataType, Int64Type, SchemaRef};
use arrow::row::{RowConverter, SortField};
use bytes::Bytes;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::FileGroup;
use futures::StreamExt;
use iceberg::spec::{DataFile, PrimitiveLiteral, Snapshot};
use object_store::path::Path;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};

use crate::catalog::{self, LoadedTable, MetadataCache};
use crate::error::{Error, ErrorKind, Result};
use crate::format::field_ids::field_id;
use crate::format::properties::MaintenanceSettings;
use crate::format::TableContract;
use crate::storage::Storage;
use crate::write::merge_job::MergeJob;

pub(crate) use crate::format::last_value_ref::{decode, IndexRef};

/// Rows per batch read in a rebuild.
const REBUILD_BATCH_ROWS: usize = 8192;

/// What a change does to the table's rows, for the index (module docs).
#[derive(Debug, Clone, Default)]
pub(crate) enum Change {
    /// Not known: the index is rebuilt from the live files.
    #[default]
    Unknown,
    /// Rows were added (and rows of the same key replaced, for last-write-wins).
    Add {
        /// The newest added row of each series, in the schema the rows were written with (any
        /// order).
        newest: Option<RecordBatch>,
        /// The field ids of the columns that vary within a series among the added rows ([`varying`];
        /// module docs, "Series-constant columns").
        varying: BTreeSet<i32>,
        /// The latest time (µs) of an added row that is not the newest added row of its series
        /// (`i64::MIN` when none; module docs, "The older-rows bound").
        older: i64,
    },
    /// The same rows, rearranged (compaction).
    Same,
    /// Rows were removed; the added files hold only rows of the removed files.
    Remove,
}

/// The index of a snapshot being committed: which file it names, and the file to upload first
/// when it is new (deleted again if the attempt loses).
#[derive(Debug)]
pub(crate) struct NextIndex {
    pub(crate) index: IndexRef,
    pub(crate) upload: Option<(Path, Bytes)>,
}

/// What a commit attempt applies to the current snapshot: its [`Change`] and its data files.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Applied<'a> {
    pub(crate) change: &'a Change,
    pub(crate) added: &'a [DataFile],
    pub(crate) removed: &'a [DataFile],
}

/// The index of the snapshot that applies `applied` to the current snapshot of `latest`, under `schema` (the new snapshot's schema, Arrow with field
/// ids). `None` when the table has no time column, when an append's parent has rows but no
/// usable index, or when the index would need a rebuild and `may_rebuild` is false (module docs).
/// The new index's rows are kept in `cache`.
///
/// Errors: storage errors reading the parent's index or (in a rebuild) the live data files.
pub(crate) async fn next(
    storage: &Storage,
    cache: &MetadataCache,
    latest: &LoadedTable,
    applied: Applied<'_>,
    schema: &SchemaRef,
    may_rebuild: bool,
) -> Result<Option<NextIndex>> {
    let Applied { change, added, removed } = applied;
    let contract = latest.contract()?;
    let Some(time) = contract.time_column.clone() else {
        return Ok(None);
    };
    let md = &latest.metadata;
    let parent = md.current_snapshot();
    let parent_rows = parent.map(|p| total_records(p)).unwrap_or(0);
    // A parent index that cannot be used (gone, damaged, of a schema it cannot be aligned to) is
    // as good as none: it must never stop the table from taking commits. A storage error is
    // returned, as for any metadata read.
    let parent_index = match parent.and_then(|p| IndexRef::of(p)) {
        Some(ix) => match read(storage, cache, &ix).await.and_then(|rows| align_to(&rows, schema)) {
            Ok(rows) => Some((ix, rows)),
            Err(e) if e.kind() == ErrorKind::Storage => return Err(e),
            Err(e) => {
                tracing::warn!(table = %latest.ident, index = %ix.location, "the parent snapshot's last-value index cannot be used: {e}");
                None
            }
        },
        None => None,
    };
    let keep = |index: IndexRef| Ok(Some(NextIndex { index, upload: None }));
    // The new index's rows and series-constant columns, or `None` when they must be rebuilt from
    // the live files.
    let rows = match change {
        Change::Add {
            newest,
            varying: added_varying,
            older: added_older,
        } => {
            let (mut parts, mut constant, parent_older) = match parent_index {
                Some((ix, prev)) => (vec![prev], ix.series_constant.iter().copied().collect(), ix.older_bound),
                None if parent_rows == 0 => (vec![], constant_candidates(schema, &contract), Some(i64::MIN)),
                None => return Ok(None),
            };
            constant.retain(|id| !added_varying.contains(id));
            if let Some(rows) = newest {
                parts.push(align_to(rows, schema)?);
            }
            if parts.len() == 2 && !constant.is_empty() {
                // A series' added rows against its parent entry (which stands for all its rows).
                let both = arrow::compute::concat_batches(schema, &parts)?;
                let changed = varying(&both, &contract, &constant, false)?;
                constant.retain(|id| !changed.contains(id));
            }
            let (rows, lost) = reduce_with_bound(&parts, &contract)?;
            let rows = rows.unwrap_or_else(|| RecordBatch::new_empty(schema.clone()));
            Some((rows, constant, parent_older.map(|p| p.max(*added_older).max(lost))))
        }
        Change::Same => match parent_index {
            Some((ix, _)) => return keep(ix),
            None => None,
        },
        Change::Remove => match parent_index {
            Some((ix, prev)) if !holds_an_entry(&prev, removed, md.current_schema(), &time)? => return keep(ix),
            _ => None,
        },
        Change::Unknown => None,
    };
    let (rows, constant, older_bound) = match rows {
        Some(found) => found,
        None if may_rebuild => rebuild(storage, cache, latest, &contract, added, removed, schema).await?,
        None => {
            tracing::debug!(table = %latest.ident, "last-value index: no rebuild in a retried commit attempt; committing without one");
            return Ok(None);
        }
    };
    let bytes = encode(&rows)?;
    let path = latest
        .ident
        .metadata_dir()
        .join(format!("last-value-{}.parquet", uuid::Uuid::now_v7()));
    // Only columns of the new schema (a dropped column's id is gone). A NULL time is never an
    // entry, so a series' rows at NULL times escape both claims: a table that allows them makes
    // none (readers use neither then).
    let time_required = schema.field_with_name(&time).is_ok_and(|f| !f.is_nullable());
    let series_constant = match time_required {
        true => schema
            .fields()
            .iter()
            .filter_map(|f| field_id(f))
            .filter(|id| constant.contains(id))
            .collect(),
        false => vec![],
    };
    let older_bound = older_bound.filter(|_| time_required);
    let index = IndexRef {
        location: storage.location(&path),
        bytes: bytes.len() as u64,
        series_constant,
        older_bound,
    };
    cache.put_last_values(&index.location, rows);
    Ok(Some(NextIndex {
        index,
        upload: Some((path, bytes)),
    }))
}

/// The rows of the index `ix` (in the schema it was written with; align them with
/// [`align_to`]), from `cache` when read or written before.
///
/// Errors: [`ErrorKind::NotFound`] when the file is gone; [`ErrorKind::Corruption`] naming it when
/// it is not Parquet.
pub(crate) async fn read(storage: &Storage, cache: &MetadataCache, ix: &IndexRef) -> Result<RecordBatch> {
    if let Some(hit) = cache.last_values(&ix.location) {
        return Ok(hit);
    }
    let bytes = storage.get(&storage.path_of(&ix.location)?).await?;
    let rows = decode(&ix.location, bytes)?;
    cache.put_last_values(&ix.location, rows.clone());
    Ok(rows)
}

/// `batch` as `target`'s columns, matched by Iceberg field id (by name for a field without one):
/// a column `batch` lacks is NULL, a widened one (int to long, float to double) is cast (Iceberg
/// spec, "Column Projection").
///
/// Errors: a column whose type cannot be cast to the target's.
pub(crate) fn align_to(batch: &RecordBatch, target: &SchemaRef) -> Result<RecordBatch> {
    let source = batch.schema();
    if source.fields() == target.fields() {
        return Ok(batch.clone());
    }
    let by_id: HashMap<i32, usize> = source
        .fields()
        .iter()
        .enumerate()
        .filter_map(|(i, f)| field_id(f).map(|id| (id, i)))
        .collect();
    let columns = target
        .fields()
        .iter()
        .map(|f| {
            let found = match field_id(f) {
                Some(id) => by_id.get(&id).copied(),
                None => source.index_of(f.name()).ok(),
            };
            Ok(match found {
                Some(i) if batch.column(i).data_type() == f.data_type() => batch.column(i).clone(),
                Some(i) => arrow::compute::cast(batch.column(i), f.data_type())?,
                None => new_null_array(f.data_type(), batch.num_rows()),
            })
        })
        .collect::<Result<Vec<ArrayRef>>>()?;
    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    Ok(RecordBatch::try_new_with_options(target.clone(), columns, &options)?)
}

/// The newest row of each series among `batches` (one schema, holding the contract's time column
/// and series key), sorted by series key; `None` when they hold no row. Of two rows of one series
/// at one time, the one later in `batches` wins. Rows with a NULL time are not candidates.
///
/// Errors: the time or a series key column is missing.
pub(crate) fn reduce(batches: &[RecordBatch], contract: &TableContract) -> Result<Option<RecordBatch>> {
    Ok(reduce_with_bound(batches, contract)?.0)
}

/// [`reduce`], and the latest time (µs) of a row that lost to another row of its series
/// (`i64::MIN` when none did).
///
/// Errors: the time or a series key column is missing.
pub(crate) fn reduce_with_bound(
    batches: &[RecordBatch],
    contract: &TableContract,
) -> Result<(Option<RecordBatch>, i64)> {
    let batches: Vec<&RecordBatch> = batches.iter().filter(|b| b.num_rows() > 0).collect();
    let Some(first) = batches.first() else {
        return Ok((None, i64::MIN));
    };
    let schema = first.schema();
    let all = if batches.len() == 1 {
        (*first).clone()
    } else {
        arrow::compute::concat_batches(&schema, batches.iter().copied())?
    };
    let time = contract
        .time_column
        .as_deref()
        .ok_or_else(|| Error::internal("the last-value index needs a time column"))?;
    let times = arrow::compute::cast(all.column(schema.index_of(time)?), &DataType::Int64)?;
    let times = times.as_primitive::<Int64Type>();
    let keys = contract
        .series_key
        .iter()
        .map(|k| Ok(all.column(schema.index_of(k)?).clone()))
        .collect::<Result<Vec<ArrayRef>>>()?;
    let newer = |i: usize, best: usize| times.value(i) >= times.value(best);
    let mut picked: Vec<u32> = Vec::new();
    if keys.is_empty() {
        let mut best: Option<usize> = None;
        for i in 0..all.num_rows() {
            if times.is_valid(i) && best.is_none_or(|b| newer(i, b)) {
                best = Some(i);
            }
        }
        picked.extend(best.map(|b| b as u32));
    } else {
        let converter = RowConverter::new(keys.iter().map(|k| SortField::new(k.data_type().clone())).collect())?;
        let rows = converter.convert_columns(&keys)?;
        let mut best: HashMap<arrow::row::Row<'_>, usize> = HashMap::new();
        for i in 0..all.num_rows() {
            if times.is_null(i) {
                continue;
            }
            best.entry(rows.row(i))
                .and_modify(|b| {
                    if newer(i, *b) {
                        *b = i;
                    }
                })
                .or_insert(i);
        }
        let mut winners: Vec<usize> = best.into_values().collect();
        winners.sort_by(|a, b| rows.row(*a).cmp(&rows.row(*b)));
        picked.extend(winners.into_iter().map(|i| i as u32));
    }
    if picked.is_empty() {
        return Ok((None, i64::MIN));
    }
    // The rows not picked lost to their series' newest.
    let mut is_picked = vec![false; all.num_rows()];
    for &i in &picked {
        is_picked[i as usize] = true;
    }
    let lost = (0..all.num_rows())
        .filter(|&i| !is_picked[i] && times.is_valid(i))
        .map(|i| times.value(i))
        .max()
        .unwrap_or(i64::MIN);
    Ok((
        Some(arrow::compute::take_record_batch(&all, &UInt32Array::from(picked))?),
        lost,
    ))
}

/// The latest time (µs) of a row of `sorted` (sorted by series key, then time) that is not the
/// last of its series: the row before each series' last. `i64::MIN` when there is none. Without a
/// series key, the row before the last.
///
/// Errors: the time or a series key column is missing.
pub(crate) fn older_in_sorted(sorted: &RecordBatch, contract: &TableContract) -> Result<i64> {
    let Some(time) = contract.time_column.as_deref() else {
        return Ok(i64::MIN);
    };
    if sorted.num_rows() < 2 {
        return Ok(i64::MIN);
    }
    let schema = sorted.schema();
    let times = arrow::compute::cast(sorted.column(schema.index_of(time)?), &DataType::Int64)?;
    let times = times.as_primitive::<Int64Type>();
    let keys = contract
        .series_key
        .iter()
        .map(|k| Ok(sorted.column(schema.index_of(k)?).clone()))
        .collect::<Result<Vec<ArrayRef>>>()?;
    let ranges = match keys.is_empty() {
        true => std::iter::once(0..sorted.num_rows()).collect(),
        false => arrow::compute::partition(&keys)?.ranges(),
    };
    // A NULL time sorts first in its series: the rows before the last are all at most its time
    // (a table that allows NULL times never uses the bound).
    Ok(ranges
        .into_iter()
        .filter(|r| r.len() >= 2)
        .filter_map(|r| times.is_valid(r.end - 2).then(|| times.value(r.end - 2)))
        .max()
        .unwrap_or(i64::MIN))
}

/// The last row of each series in `sorted` (sorted by series key, then time): the candidates an
/// append passes to [`reduce`], found without hashing. The whole batch's newest row when the
/// contract has no series key.
///
/// Errors: the time or a series key column is missing.
pub(crate) fn last_of_each_series(sorted: &RecordBatch, contract: &TableContract) -> Result<Option<RecordBatch>> {
    if sorted.num_rows() == 0 || contract.series_key.is_empty() {
        return reduce(std::slice::from_ref(sorted), contract);
    }
    let schema = sorted.schema();
    let keys = contract
        .series_key
        .iter()
        .map(|k| Ok(sorted.column(schema.index_of(k)?).clone()))
        .collect::<Result<Vec<ArrayRef>>>()?;
    let ends: Vec<u32> = arrow::compute::partition(&keys)?
        .ranges()
        .into_iter()
        .map(|r| (r.end - 1) as u32)
        .collect();
    Ok(Some(arrow::compute::take_record_batch(
        sorted,
        &UInt32Array::from(ends),
    )?))
}

/// Whether a file of `removed` may hold an entry of `index`: its bounds on the time column cover
/// the entry's time (a file without bounds may hold anything).
fn holds_an_entry(
    index: &RecordBatch,
    removed: &[DataFile],
    schema: &iceberg::spec::Schema,
    time: &str,
) -> Result<bool> {
    if removed.is_empty() || index.num_rows() == 0 {
        return Ok(false);
    }
    let Some(time_id) = schema.field_by_name(time).map(|f| f.id) else {
        return Ok(true);
    };
    let Ok(column) = index.schema().index_of(time) else {
        return Ok(true);
    };
    let times = arrow::compute::cast(index.column(column), &DataType::Int64)?;
    let times = times.as_primitive::<Int64Type>();
    let bound = |m: &HashMap<i32, iceberg::spec::Datum>| match m.get(&time_id).map(|d| d.literal().clone()) {
        Some(PrimitiveLiteral::Long(v)) => Some(v),
        _ => None,
    };
    for f in removed {
        let (Some(lo), Some(hi)) = (bound(f.lower_bounds()), bound(f.upper_bounds())) else {
            return Ok(true);
        };
        if times.iter().flatten().any(|t| lo <= t && t <= hi) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The index of the live files of `latest` after removing `removed` and adding `added`, read in
/// full (oldest sequence number first; the added files last).
async fn rebuild(
    storage: &Storage,
    cache: &MetadataCache,
    latest: &LoadedTable,
    contract: &TableContract,
    added: &[DataFile],
    removed: &[DataFile],
    schema: &SchemaRef,
) -> Result<(RecordBatch, BTreeSet<i32>, Option<i64>)> {
    let md = &latest.metadata;
    let mut live = catalog::live_entries(storage, cache, md, md.current_snapshot_id()).await?;
    let gone: std::collections::HashSet<&str> = removed.iter().map(|f| f.file_path()).collect();
    live.retain(|e| !gone.contains(e.data_file.file_path()));
    live.sort_by_key(|e| e.sequence_number.unwrap_or(0));
    let files: Vec<&DataFile> = live.iter().map(|e| &e.data_file).chain(added.iter()).collect();
    let started = std::time::Instant::now();
    let mut acc: Option<RecordBatch> = None;
    let mut constant = constant_candidates(schema, contract);
    let mut older = i64::MIN;
    if !files.is_empty() {
        let settings = MaintenanceSettings::from_properties(md.properties())?;
        let job = MergeJob {
            storage,
            table_prefix: latest.ident.prefix(),
            schema: schema.clone(),
            contract,
            settings: &settings,
            partition: None,
        };
        let group = files
            .iter()
            .map(|f| {
                Ok(PartitionedFile::new(
                    storage.path_of(f.file_path())?.to_string(),
                    f.file_size_in_bytes(),
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        let plan = job.scan(vec![FileGroup::new(group)], None, REBUILD_BATCH_ROWS)?;
        let ctx = job.context()?;
        let mut stream = plan.execute(0, ctx.task_ctx())?;
        let mut pending: Vec<RecordBatch> = Vec::new();
        let mut pending_rows = 0usize;
        while let Some(batch) = stream.next().await {
            let batch = batch?;
            let changed = varying(&batch, contract, &constant, false)?;
            constant.retain(|id| !changed.contains(id));
            let (newest, lost) = reduce_with_bound(std::slice::from_ref(&batch), contract)?;
            older = older.max(lost);
            if let Some(newest) = newest {
                pending_rows += newest.num_rows();
                pending.push(newest);
            }
            // Fold the candidates into the running answer once they outgrow it.
            let held = acc.as_ref().map_or(0, |a| a.num_rows());
            if pending_rows > held.max(REBUILD_BATCH_ROWS) {
                let mut parts: Vec<RecordBatch> = acc.take().into_iter().collect();
                parts.append(&mut pending);
                acc = fold(&parts, contract, &mut constant, &mut older)?;
                pending_rows = 0;
            }
        }
        let mut parts: Vec<RecordBatch> = acc.take().into_iter().collect();
        parts.append(&mut pending);
        acc = fold(&parts, contract, &mut constant, &mut older)?;
    }
    tracing::debug!(
        table = %latest.ident,
        files = files.len(),
        series = acc.as_ref().map_or(0, |a| a.num_rows()),
        ms = started.elapsed().as_secs_f64() * 1e3,
        "last-value index rebuilt"
    );
    Ok((
        acc.unwrap_or_else(|| RecordBatch::new_empty(schema.clone())),
        constant,
        Some(older),
    ))
}

/// [`reduce`] of `parts` (each series' rows, one schema), after dropping from `constant` the
/// columns whose value differs between parts for a series (each part's row stands for its rows),
/// raising `older` to the latest time of a row that lost.
fn fold(
    parts: &[RecordBatch],
    contract: &TableContract,
    constant: &mut BTreeSet<i32>,
    older: &mut i64,
) -> Result<Option<RecordBatch>> {
    if parts.len() > 1 && !constant.is_empty() {
        let all = arrow::compute::concat_batches(&parts[0].schema(), parts)?;
        let changed = varying(&all, contract, constant, false)?;
        constant.retain(|id| !changed.contains(id));
    }
    let (rows, lost) = reduce_with_bound(parts, contract)?;
    *older = (*older).max(lost);
    Ok(rows)
}

/// The field ids a table's series-constant columns are looked for among: every top-level column
/// of `schema` with a field id but the time column and the series key (module docs).
pub(crate) fn constant_candidates(schema: &SchemaRef, contract: &TableContract) -> BTreeSet<i32> {
    schema
        .fields()
        .iter()
        .filter(|f| contract.time_column.as_deref() != Some(f.name().as_str()))
        .filter(|f| !contract.series_key.contains(f.name()))
        .filter_map(|f| field_id(f))
        .collect()
}

/// The field ids among `among` whose column holds two different values in the rows of one series
/// of `batch` (rows with equal series-key values; NULL equals NULL; all rows without a series
/// key). `sorted` says the rows are already sorted by series key, as an append's runs are;
/// otherwise they are sorted here. A column of a type `distinct` cannot compare (nested types)
/// always varies; one `batch` lacks never does.
///
/// Errors: a series key column is missing from `batch`.
pub(crate) fn varying(
    batch: &RecordBatch,
    contract: &TableContract,
    among: &BTreeSet<i32>,
    sorted: bool,
) -> Result<BTreeSet<i32>> {
    let n = batch.num_rows();
    let mut out = BTreeSet::new();
    if n < 2 || among.is_empty() {
        return Ok(out);
    }
    let schema = batch.schema();
    let keys = contract
        .series_key
        .iter()
        .map(|k| Ok(batch.column(schema.index_of(k)?).clone()))
        .collect::<Result<Vec<ArrayRef>>>()?;
    let order = match sorted || keys.is_empty() {
        true => None,
        false => {
            let columns: Vec<SortColumn> = keys
                .iter()
                .map(|k| SortColumn {
                    values: k.clone(),
                    options: None,
                })
                .collect();
            Some(lexsort_to_indices(&columns, None)?)
        }
    };
    let arrange = |a: &ArrayRef| -> Result<ArrayRef> {
        Ok(match &order {
            Some(o) => arrow::compute::take(a.as_ref(), o, None)?,
            None => a.clone(),
        })
    };
    // Whether row i + 1 belongs to row i's series.
    let mut same = BooleanArray::from(vec![true; n - 1]);
    for k in &keys {
        let k = arrange(k)?;
        let equal = arrow::compute::kernels::cmp::not_distinct(&k.slice(0, n - 1), &k.slice(1, n - 1))?;
        same = arrow::compute::and(&same, &equal)?;
    }
    for (i, f) in schema.fields().iter().enumerate() {
        let Some(id) = field_id(f).filter(|id| among.contains(id)) else {
            continue;
        };
        let column = arrange(batch.column(i))?;
        let differs = match arrow::compute::kernels::cmp::distinct(&column.slice(0, n - 1), &column.slice(1, n - 1)) {
            Ok(d) => arrow::compute::and(&d, &same)?.true_count() > 0,
            Err(_) => true,
        };
        if differs {
            out.insert(id);
        }
    }
    Ok(out)
}

/// The index rows as a Parquet file (zstd, page statistics).
fn encode(rows: &RecordBatch) -> Result<Bytes> {
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_statistics_enabled(EnabledStatistics::Page)
        .build();
    let mut out = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut out, rows.schema(), Some(props))?;
    writer.write(rows)?;
    writer.close()?;
    Ok(Bytes::from(out))
}

/// The table's row count after `snapshot` (its summary's `total-records`).
fn total_records(snapshot: &Snapshot) -> u64 {
    snapshot
        .summary()
        .additional_properties
        .get("total-records")
        .and_then(|v| v.parse().ok())
        .unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use arrow::array::{Int64Array, StringArray, TimestampMicrosecondArray};
    use arrow::datatypes::{Field, Schema, TimeUnit};

    fn batch(rows: &[(Option<&str>, i64, i64)]) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("s", DataType::Utf8, true),
            Field::new(
                "ts",
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                false,
            ),
            Field::new("v", DataType::Int64, true),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(StringArray::from(rows.iter().map(|r| r.0).collect::<Vec<_>>())),
                Arc::new(
                    TimestampMicrosecondArray::from(rows.iter().map(|r| r.1).collect::<Vec<_>>()).with_timezone("UTC"),
                ),
                Arc::new(Int64Array::from(rows.iter().map(|r| r.2).collect::<Vec<_>>())),
            ],
        )
        .unwrap()
    }

    fn triples(b: &RecordBatch) -> Vec<(Option<String>, i64, i64)> {
        let s = b.column(0).as_string::<i32>();
        let t = arrow::compute::cast(b.column(1), &DataType::Int64).unwrap();
        let t = t.as_primitive::<Int64Type>();
        let v = b.column(2).as_primitive::<Int64Type>();
        (0..b.num_rows())
            .map(|i| (s.is_valid(i).then(|| s.value(i).to_string()), t.value(i), v.value(i)))
            .collect()
    }

    #[test]
    fn newest_row_per_series_later_rows_win_ties() {
        let contract = TableContract::time_series("ts").with_series_key(["s"]);
        let a = batch(&[(Some("b"), 5, 1), (Some("a"), 3, 2), (None, 1, 3), (Some("a"), 9, 4)]);
        let b = batch(&[(Some("a"), 9, 5), (Some("b"), 4, 6), (None, 0, 7)]);
        let r = reduce(&[a, b], &contract).unwrap().unwrap();
        assert_eq!(
            triples(&r),
            vec![(None, 1, 3), (Some("a".into()), 9, 5), (Some("b".into()), 5, 1)]
        );
    }

    #[test]
    fn without_a_series_key_the_newest_row() {
        let contract = TableContract::time_series("ts");
        let a = batch(&[
            (Some("b"), 5, 1),
            (Some("a"), 7, 2),
            (Some("c"), 7, 3),
            (Some("d"), 2, 4),
        ]);
        let r = reduce(&[a], &contract).unwrap().unwrap();
        assert_eq!(triples(&r), vec![(Some("c".into()), 7, 3)]);
        assert!(reduce(&[], &contract).unwrap().is_none());
    }

    #[test]
    fn last_of_each_series_of_a_sorted_batch() {
        let contract = TableContract::time_series("ts").with_series_key(["s"]);
        let sorted = batch(&[(None, 1, 0), (Some("a"), 1, 1), (Some("a"), 4, 2), (Some("b"), 2, 3)]);
        let r = last_of_each_series(&sorted, &contract).unwrap().unwrap();
        assert_eq!(
            triples(&r),
            vec![(None, 1, 0), (Some("a".into()), 4, 2), (Some("b".into()), 2, 3)]
        );
    }
}
