//! The table provider: a snapshot of a Varve table as a DataFusion table.
//!
//! Planning reads the snapshot's manifests (cached; they are immutable), prunes data files with
//! DataFusion's [`PruningPredicate`] over the manifests' column bounds (the time column's bounds
//! stand for the partition), and hands the surviving files to DataFusion's Parquet scan with the
//! same predicate, which prunes row groups and pages by their statistics and page index.

use std::sync::{Arc, Mutex};

use arrow::datatypes::{DataType, SchemaRef};
use async_trait::async_trait;
use datafusion::catalog::Session;
use datafusion::common::stats::Precision;
use datafusion::common::{Column, DFSchema, ScalarValue, Statistics};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::{FileGroup, FileScanConfigBuilder, ParquetSource};
use datafusion::datasource::source::DataSourceExec;
use datafusion::datasource::{TableProvider, TableType};
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_optimizer::pruning::PruningPredicate;
use datafusion::physical_plan::empty::EmptyExec;
use datafusion::physical_plan::filter::FilterExec;
use datafusion::physical_plan::union::UnionExec;
use datafusion::physical_plan::ExecutionPlan;

use crate::catalog::{self as lake_catalog, LoadedTable, MetadataCache};
use crate::error::Error;
use crate::format::schema;
use crate::format::stats::FileStats;
use crate::index::last_value::IndexRef;
use crate::maintain::delete::{self, DeletePredicate};
use crate::query::footers::CachedFooters;
use crate::storage::Storage;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::{PartitionStream, StreamingTableExec};

/// The URL under which the lake's object store is registered in a session.
pub(crate) const STORE_URL: &str = "varve://lake";

/// The error of a write to `"<table>@last-values"`.
const READ_ONLY_INDEX: &str =
    "the last-value index of a table (<table>@last-values) is read-only; write to the table itself";

/// What one scan read: shown by `EXPLAIN`.
#[derive(Debug, Clone)]
pub(crate) struct ScanNote {
    pub(crate) table: String,
    pub(crate) snapshot_id: Option<i64>,
    pub(crate) files_total: usize,
    pub(crate) files_read: usize,
    /// Of the files read, the small ones read from their decoded rows (`query::small_files`).
    pub(crate) files_decoded: usize,
    /// The scan read the snapshot's last-value index instead of its data files.
    pub(crate) last_values: bool,
    /// Under a top-k by time, the scan read only the series the last-value index named (k).
    pub(crate) newest_k: Option<usize>,
    /// Under a top-k by time, the k rows came from the last-value index (`newest_k` is k).
    pub(crate) newest_k_from_index: bool,
    /// A filter on series-constant columns selected this many series, by the last-value index
    /// (`query::newest_scan::series_of_constant_filters`).
    pub(crate) constant_series: Option<usize>,
    /// Under a newest row per series with filters: the series answered from the index.
    pub(crate) index_series: Option<usize>,
    /// Under `GROUP BY time_bucket(...) ORDER BY ... DESC LIMIT k`: the scan kept the rows of the
    /// newest k buckets' time range only (`query::newest_buckets`).
    pub(crate) newest_buckets: Option<usize>,
}

/// Shared by the providers of one session.
#[derive(Debug, Clone)]
pub(crate) struct QueryEnv {
    pub(crate) storage: Storage,
    pub(crate) cache: Arc<MetadataCache>,
    pub(crate) scans: Arc<Mutex<Vec<ScanNote>>>,
    pub(crate) deletes: Arc<Mutex<Vec<crate::maintain::delete::DeleteReport>>>,
    /// The statement sorts and keeps the first rows (`references::has_top_k`): with
    /// `filter-pushdown=auto`, scans on S3 apply filters row by row for it.
    pub(crate) top_k: bool,
}

/// A table at one snapshot.
#[derive(Debug, Clone)]
pub(crate) struct VarveTable {
    pub(crate) env: QueryEnv,
    pub(crate) table: LoadedTable,
    pub(crate) snapshot_id: Option<i64>,
    /// True when reading the current snapshot (inserts are allowed).
    pub(crate) is_current: bool,
    pub(crate) schema: SchemaRef,
    /// Read the snapshot's last-value index (the newest row of each series) instead of its data
    /// files.
    pub(crate) last_values: Option<IndexRef>,
    /// Read only the data files whose sequence number is above this one (the rows added after a
    /// snapshot, for a rollup's watermark).
    pub(crate) min_sequence: Option<i64>,
    /// The scan feeds `ORDER BY <time> DESC ... LIMIT k` (`query::newest`): it prunes by the bound
    /// the last-value index gives (`query::newest_scan::top_k_bound`).
    pub(crate) newest_k: Option<crate::query::newest::NewestK>,
    /// The scan feeds the newest row of each series among the rows its filters keep
    /// (`query::newest`): it reads those series' rows from the index where it can
    /// (`query::newest_scan::split_by_index`).
    pub(crate) newest_filtered: bool,
    /// The scan feeds the newest k time buckets of an aggregate (`query::newest_buckets`): it
    /// keeps the rows of their time range only.
    pub(crate) newest_buckets: Option<crate::query::newest_buckets::NewestBuckets>,
}

impl VarveTable {
    pub(crate) fn new(
        env: QueryEnv,
        table: LoadedTable,
        snapshot_id: Option<i64>,
        is_current: bool,
    ) -> crate::Result<Self> {
        let md = &table.metadata;
        let iceberg_schema = match snapshot_id
            .and_then(|id| md.snapshot_by_id(id))
            .and_then(|s| s.schema_id())
        {
            Some(sid) if !is_current => md
                .schema_by_id(sid)
                .cloned()
                .unwrap_or_else(|| md.current_schema().clone()),
            _ => md.current_schema().clone(),
        };
        // Every column is nullable to SQL, so that a null time in an INSERT reaches the append's
        // check (which names the column and row) instead of DataFusion's generic nullability error.
        let stored = schema::to_arrow(&iceberg_schema)?;
        let fields: Vec<arrow::datatypes::Field> = stored
            .fields()
            .iter()
            .map(|f| f.as_ref().clone().with_nullable(true))
            .collect();
        let schema = Arc::new(arrow::datatypes::Schema::new(fields));
        Ok(VarveTable {
            env,
            table,
            snapshot_id,
            is_current,
            schema,
            last_values: None,
            min_sequence: None,
            newest_k: None,
            newest_filtered: false,
            newest_buckets: None,
        })
    }

    /// The same snapshot's newest row of each series, from its last-value index.
    ///
    /// Errors: [`crate::ErrorKind::NotFound`] when the snapshot has no index (written before the
    /// index existed, or with rows but no index to build on; module docs of `index::last_value`).
    pub(crate) fn newest_rows(mut self) -> crate::Result<Self> {
        let snapshot = self.snapshot_id.and_then(|id| self.table.metadata.snapshot_by_id(id));
        match snapshot {
            Some(s) => match IndexRef::of(s) {
                Some(ix) => self.last_values = Some(ix),
                None => {
                    return Err(Error::not_found(format!(
                        "table {} has no last-value index at snapshot {}",
                        self.table.ident,
                        s.snapshot_id()
                    )))
                }
            },
            // No snapshot: no rows, and so no file to read.
            None => self.last_values = None,
        }
        Ok(self)
    }
}

impl VarveTable {
    /// `time >= now - retention` for a table with `varve.retention`.
    fn retention_filter(&self) -> datafusion::common::Result<Option<Expr>> {
        let props = self.table.metadata.properties();
        let settings = crate::format::properties::MaintenanceSettings::from_properties(props)?;
        let contract = self.table.contract()?;
        let (Some(retention), Some(time)) = (settings.retention, contract.time_column) else {
            return Ok(None);
        };
        let cutoff = crate::maintain::retention_cutoff_us(retention);
        let tz = match self.schema.field_with_name(&time)?.data_type() {
            DataType::Timestamp(_, tz) => tz.clone(),
            _ => return Ok(None),
        };
        Ok(Some(datafusion::prelude::col(Column::new_unqualified(time)).gt_eq(
            datafusion::prelude::lit(ScalarValue::TimestampMicrosecond(Some(cutoff), tz)),
        )))
    }
}

impl VarveTable {
    /// The plan that reads the snapshot's data files (or its index, for [`VarveTable::last_values`]),
    /// pruned by `filters`. With `split` (from [`VarveTable::scan_split`]: the other series' key
    /// filter, and how many series the index answered) the key filter prunes too (the caller
    /// applies it exactly) and EXPLAIN notes the count.
    async fn scan_files(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
        split: Option<(Expr, usize)>,
    ) -> datafusion::common::Result<Arc<dyn ExecutionPlan>> {
        // Footers come from the lake's cache (`catalog::cache`) when a query read them before.
        let store_url = ObjectStoreUrl::parse(STORE_URL)?;
        let footers_store = state.runtime_env().object_store(&store_url)?;
        let footers_cache = state.runtime_env().cache_manager.get_file_metadata_cache();
        let read_ahead = self.env.storage.options.read_ahead_bytes(self.env.storage.kind);
        let footers = Arc::new(CachedFooters::new(
            footers_store.clone(),
            footers_cache.clone(),
            read_ahead,
        ));
        // Bloom filters are read as the session says (`SET
        // datafusion.execution.parquet.bloom_filter_on_read`, on by default).
        let mut source = ParquetSource::new(self.schema.clone())
            .with_enable_page_index(true)
            .with_bloom_filter_on_read(state.config_options().execution.parquet.bloom_filter_on_read)
            .with_parquet_file_reader_factory(footers.clone());
        // Late materialization: the scan applies filters row by row as it decodes (the columns a
        // filter reads first, the rest only for rows that pass), and takes the running threshold
        // of a top-k above it (DataFusion's dynamic filter), which rules out files by their
        // bounds (`LakeOptions::filter_pushdown` says when).
        let storage = &self.env.storage;
        let pushdown = storage.options.filter_pushdown(storage.kind, self.env.top_k);
        if pushdown {
            source = source.with_pushdown_filters(true);
        }
        // (Pushed filters would leave fewer than k buckets: the newest-buckets bound needs none.)
        let none_pushed = filters.is_empty();
        let mut filters = filters.to_vec();
        // Rows older than the table's retention are never seen, even before maintenance drops
        // their files: the bound prunes files and is applied row by row in the scan.
        let retention = self.retention_filter()?;
        if let Some(bound) = &retention {
            filters.push(bound.clone());
            source = source.with_pushdown_filters(true);
        }
        // The snapshot's live data files (none read for an index scan).
        let live: Option<Vec<iceberg::spec::DataFile>> = match &self.last_values {
            Some(_) => None,
            None => Some(
                lake_catalog::live_entries(
                    &self.env.storage,
                    &self.env.cache,
                    &self.table.metadata,
                    self.snapshot_id,
                )
                .await?
                .into_iter()
                .filter(|e| match self.min_sequence {
                    Some(min) => e.sequence_number().is_none_or(|s| s > min),
                    None => true,
                })
                .map(|e| e.data_file)
                .collect(),
            ),
        };
        // Under the newest k time buckets: only their time range.
        let mut newest_buckets = None;
        if let (Some(marked), Some(files), true) = (&self.newest_buckets, &live, none_pushed) {
            let bound = crate::query::newest_buckets::bound(self, state, marked, files, retention.as_ref())?;
            if let Some(bound) = bound {
                filters.push(bound);
                newest_buckets = Some(marked.k);
            }
        }
        // Under a top-k by time: only the rows that can be among its k (the sort above picks them),
        // or the k rows themselves when the index holds them.
        let mut newest_k = None;
        let top = crate::query::newest_scan::top_k_bound(self, state, &filters).await?;
        if let Some(rows) = top.rows {
            if let Ok(mut notes) = self.env.scans.lock() {
                notes.push(ScanNote {
                    table: self.table.ident.to_string(),
                    snapshot_id: self.snapshot_id,
                    files_total: live.as_ref().map_or(0, |l| l.len()),
                    files_read: 0,
                    files_decoded: 0,
                    last_values: false,
                    newest_k: self.newest_k.as_ref().map(|n| n.k),
                    newest_k_from_index: true,
                    constant_series: None,
                    index_series: None,
                    newest_buckets: None,
                });
            }
            return datafusion::datasource::memory::MemorySourceConfig::try_new_exec(
                &[vec![rows]],
                self.schema.clone(),
                projection.cloned(),
            )
            .map(|e| e as Arc<dyn ExecutionPlan>);
        }
        if !top.bound.is_empty() {
            filters.extend(top.bound);
            newest_k = self.newest_k.as_ref().map(|n| n.k);
        }
        // Under a newest row per series with filters: only the series the index did not answer.
        let mut index_series = None;
        if let Some((others, answered)) = split {
            filters.push(others);
            index_series = Some(answered);
        }
        // Filters applied row by row in the scan (else the scan's predicate only prunes).
        let row_filtering = pushdown || retention.is_some();
        // Lists that only prune (files, then pages at planning: `query::page_pruning`).
        let mut prune_only: Vec<Expr> = Vec::new();
        // A filter on series-constant columns (a fleet) names its series through the index: a
        // list that only prunes, since the filter itself is applied.
        let mut constant_series = None;
        if let Some((series, n)) = crate::query::newest_scan::series_of_constant_filters(self, state, &filters).await? {
            match row_filtering {
                true => prune_only.push(in_list_pruning(std::slice::from_ref(&series)).pop().unwrap_or(series)),
                false => filters.push(series),
            }
            constant_series = Some(n);
        }
        // Pruning by long `IN` lists too, which DataFusion's pruning leaves out, as equalities.
        // Applied row by row, the equalities would be evaluated on every row: then they only prune.
        let long_lists = in_list_pruning(&filters);
        match row_filtering {
            true => prune_only.extend(long_lists),
            false => filters.extend(long_lists),
        }
        // Float columns that may hold NaN in a scanned file: a filter that NaN satisfies never
        // prunes by their Parquet statistics, which leave NaN out (`query::nan_guard`).
        let nan = match &live {
            Some(files) => crate::query::nan_guard::nan_columns(&self.schema, files),
            // A last-value index file counts no NaN: any float column may hold one.
            None => crate::query::nan_guard::nan_columns(&self.schema, &[]),
        };
        let prunes_safely = |f: &Expr| crate::query::nan_guard::prunes_safely(f, &nan);
        if !nan.is_empty() && (self.env.top_k || filters.iter().chain(&prune_only).any(|f| !prunes_safely(f))) {
            // DataFusion prunes row groups, pages and bloom filters by the whole predicate (and a
            // top-k's dynamic filter): off for this scan; the pruning at planning below keeps the
            // filters that prune safely.
            let mut options = source.table_parquet_options().clone();
            options.global.pruning = false;
            options.global.enable_page_index = false;
            options.global.bloom_filter_on_read = false;
            source = source.with_table_parquet_options(options);
        }
        let prune_only: Vec<Expr> = prune_only
            .into_iter()
            .flat_map(datafusion::logical_expr::utils::split_conjunction_owned)
            .filter(|f| prunes_safely(f))
            .collect();
        // Every filter, for pruning row groups by statistics at planning.
        let row_group_pruning = conjunction(
            filters
                .iter()
                .cloned()
                .flat_map(datafusion::logical_expr::utils::split_conjunction_owned)
                .filter(|f| prunes_safely(f))
                .chain(prune_only.iter().cloned()),
        );
        let file_pruning = match prune_only.is_empty() {
            false => row_group_pruning.clone(),
            true => None,
        };
        // With filters applied row by row, rows come in the files' order without the series key
        // columns the filters hold to one value (`output_ordering::after_equalities`).
        let exact_filters = match row_filtering {
            true => filters.clone(),
            false => vec![],
        };
        let df_schema = DFSchema::try_from(self.schema.as_ref().clone())?;
        // The scan applies filters row by row in this order (`filter_order`).
        let time_column = self.table.contract()?.time_column;
        filters.sort_by_key(|f| filter_order(f, &self.schema, time_column.as_deref()));
        let predicate = match conjunction(filters) {
            Some(predicate) => {
                let physical = state.create_physical_expr(predicate, &df_schema)?;
                source = source.with_predicate(physical.clone());
                Some(physical)
            }
            None => None,
        };
        // Footers the lake's cache holds (read before, or carried by the head): nothing is read.
        let footer = |f: &PartitionedFile| {
            crate::catalog::footer_in(footers_cache.as_ref(), &f.object_meta.location, f.object_meta.size)
        };
        // Each file to read, with its rows.
        let mut kept: Vec<(PartitionedFile, u64)> = Vec::new();
        // The order the files' rows are in (`query::output_ordering`).
        let mut ordering = None;
        let files_total;
        match &self.last_values {
            Some(ix) => {
                // The snapshot's last-value index stands for its data files: one small file.
                files_total = 1;
                let path = self.env.storage.path_of(&ix.location)?;
                kept.push((PartitionedFile::new(path.to_string(), ix.bytes), 0));
            }
            None => {
                let files = live.unwrap_or_default();
                files_total = files.len();
                let mut keep = vec![true; files.len()];
                let stats = FileStats {
                    files: &files,
                    schema: &self.schema,
                };
                let file_pruning = match file_pruning {
                    Some(expr) => Some(state.create_physical_expr(expr, &df_schema)?),
                    None => predicate.clone(),
                };
                if let Some(physical) = &file_pruning {
                    if let Ok(pruning) = PruningPredicate::try_new(physical.clone(), self.schema.clone()) {
                        keep = pruning.prune(&stats)?;
                    }
                }
                let read = files.iter().zip(&keep).filter(|(_, k)| **k).map(|(f, _)| f);
                ordering = crate::query::output_ordering::of_files(&self.table.metadata, read, &self.schema);
                for (i, f) in files.iter().enumerate().filter(|(i, _)| keep[*i]) {
                    let path = self.env.storage.path_of(f.file_path())?;
                    self.env.storage.know_size(&path, f.file_size_in_bytes());
                    let file = PartitionedFile::new(path.to_string(), f.file_size_in_bytes())
                        .with_statistics(Arc::new(stats.file_statistics(i)));
                    kept.push((file, f.record_count()));
                }
                if let Some(prune) = conjunction(prune_only) {
                    kept = crate::query::page_pruning::prune_pages(
                        footers_store.clone(),
                        footers_cache.clone(),
                        kept,
                        &self.schema,
                        &prune,
                    )
                    .await;
                }
                if let Some(filter) = &row_group_pruning {
                    kept = crate::query::page_pruning::prune_row_groups(kept, &footer, &self.schema, filter);
                }
            }
        }
        // Small files from their decoded rows, when a partition would open several files
        // (`query::small_files`).
        let partitions = state.config().target_partitions().max(1);
        let mut decoded: Vec<arrow::array::RecordBatch> = Vec::new();
        let mut files_decoded = 0;
        let budget = self.env.storage.options.decoded_bytes();
        if self.last_values.is_none() && budget > 0 && limit.is_none() && kept.len() > partitions {
            let (small, rest) = crate::query::small_files::pick(kept, budget);
            kept = rest;
            files_decoded = small.len();
            decoded = crate::query::small_files::rows_of(
                state,
                &self.env.cache,
                footers.clone(),
                &store_url,
                &self.schema,
                &small,
                predicate.as_ref(),
            )
            .await?;
        }
        if let Ok(mut notes) = self.env.scans.lock() {
            notes.push(ScanNote {
                table: self.table.ident.to_string(),
                snapshot_id: self.snapshot_id,
                files_total,
                files_read: kept.len() + files_decoded,
                files_decoded,
                last_values: self.last_values.is_some(),
                newest_k,
                newest_k_from_index: false,
                constant_series,
                index_series,
                newest_buckets,
            });
        }
        // (Small files none of whose rows pass the filters add nothing.)
        let decoded = match decoded.is_empty() {
            true => None,
            false => Some(datafusion::datasource::memory::MemorySourceConfig::try_new_exec(
                &crate::query::small_files::deal(decoded, partitions, state.config().batch_size()),
                self.schema.clone(),
                projection.cloned(),
            )? as Arc<dyn ExecutionPlan>),
        };
        if kept.is_empty() {
            if let Some(decoded) = decoded {
                return Ok(decoded);
            }
            // No file to read (an empty table, or every file pruned): an empty plan with one
            // partition, which every operator above accepts (a scan of zero files has none, and
            // sorts and per-series aggregates refused it).
            let projected = match projection {
                Some(p) => Arc::new(self.schema.project(p)?),
                None => self.schema.clone(),
            };
            return Ok(Arc::new(EmptyExec::new(projected)));
        }
        // The scan's statistics: its rows (exact: a delete rewrites files, Varve writes no delete
        // files) and each column's bounds and null count over the files read, inexact so that
        // DataFusion plans with them (join sides, selectivity) but answers no aggregate from them
        // (`FileStats::file_statistics`).
        let mut statistics = Statistics::new_unknown(&self.schema);
        if self.last_values.is_none() {
            let files: Vec<&Statistics> = kept.iter().filter_map(|(f, _)| f.statistics.as_deref()).collect();
            if files.len() == kept.len() {
                if let Ok(merged) = Statistics::try_merge_iter(files, &self.schema) {
                    statistics.column_statistics = merged.to_inexact().column_statistics;
                }
            }
            statistics.num_rows = Precision::Exact(kept.iter().map(|(_, n)| *n as usize).sum());
        }
        // Large files in ranges that idle partitions take over (not under a limit, which reads
        // few rows, nor where the statement keeps files whole: see `context::Planner`).
        let files = kept.into_iter().map(|(f, _)| f).collect::<Vec<_>>();
        let units = if limit.is_none() && state.config_options().optimizer.repartition_file_scans {
            let object_store = matches!(self.env.storage.kind, crate::StorageKind::S3);
            crate::query::work_units::split(files, partitions, &footer, object_store)
        } else {
            files.into_iter().map(crate::query::work_units::Unit::whole).collect()
        };
        let groups_n = partitions.min(units.len().max(1));
        let shared_queue = state.config_options().execution.enable_file_stream_work_stealing;
        let groups: Vec<FileGroup> = crate::query::work_units::groups(units, groups_n, shared_queue)
            .into_iter()
            .filter(|g| !g.is_empty())
            .map(FileGroup::new)
            .collect();
        // Declared only where each partition reads one unit: an ordering costs the scan its work
        // stealing (`query::output_ordering`).
        let orderings = match ordering {
            Some(o) if groups.iter().all(|g| g.len() <= 1) => {
                crate::query::output_ordering::after_equalities(o, &exact_filters)
                    .into_iter()
                    .collect()
            }
            _ => vec![],
        };
        let config = FileScanConfigBuilder::new(store_url, Arc::new(source))
            .with_expr_adapter(Some(Arc::new(crate::format::field_ids::FieldIdAdapterFactory)))
            .with_file_groups(groups)
            .with_output_ordering(orderings)
            .with_projection_indices(projection.cloned())?
            .with_limit(limit)
            .with_statistics(statistics)
            .build();
        let files: Arc<dyn ExecutionPlan> = DataSourceExec::from_data_source(config);
        match decoded {
            Some(decoded) => UnionExec::try_new(vec![decoded, files]),
            None => Ok(files),
        }
    }

    /// The scan of a [`VarveTable::newest_filtered`] table: the index rows `split` keeps, and the
    /// data files' rows of every other series (filtered exactly by their key).
    async fn scan_split(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        split: crate::query::newest_scan::Split,
    ) -> datafusion::common::Result<Arc<dyn ExecutionPlan>> {
        let answered = split.from_index.num_rows();
        let files = self
            .scan_files(state, projection, filters, None, Some((split.others.clone(), answered)))
            .await?;
        let projected = match projection {
            Some(p) => Arc::new(self.schema.project(p)?),
            None => self.schema.clone(),
        };
        let df_schema = DFSchema::try_from(projected.as_ref().clone())?;
        let others = state.create_physical_expr(split.others, &df_schema)?;
        let others: Arc<dyn ExecutionPlan> = Arc::new(FilterExec::try_new(others, files)?);
        let from_index = datafusion::datasource::memory::MemorySourceConfig::try_new_exec(
            &[vec![split.from_index]],
            self.schema.clone(),
            projection.cloned(),
        )?;
        UnionExec::try_new(vec![from_index, others])
    }
}

#[async_trait]
impl TableProvider for VarveTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> datafusion::common::Result<Vec<TableProviderFilterPushDown>> {
        Ok(vec![TableProviderFilterPushDown::Inexact; filters.len()])
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> datafusion::common::Result<Arc<dyn ExecutionPlan>> {
        if self.newest_filtered {
            let mut all = filters.to_vec();
            all.extend(self.retention_filter()?);
            if let Some(split) = crate::query::newest_scan::split_by_index(self, state, &all).await? {
                return self.scan_split(state, projection, filters, split).await;
            }
        }
        self.scan_files(state, projection, filters, limit, None).await
    }

    /// `DELETE FROM t [WHERE ...]`: runs `maintain::delete` when executed; answers one row with
    /// the number of rows deleted (`count`, UInt64), as DataFusion's DML plans do.
    async fn delete_from(
        &self,
        state: &dyn Session,
        filters: Vec<Expr>,
    ) -> datafusion::common::Result<Arc<dyn ExecutionPlan>> {
        if self.last_values.is_some() {
            return Err(Error::invalid(READ_ONLY_INDEX).into());
        }
        if !self.is_current {
            return Err(Error::invalid("cannot delete from a past snapshot of a table").into());
        }
        if let Some(e) =
            crate::format::properties::refuse_rollup_writes(&self.table.ident, self.table.metadata.properties())
        {
            return Err(e.into());
        }
        let mut exprs: Vec<Expr> = Vec::new();
        for f in filters {
            let f = datafusion::logical_expr::expr_rewriter::unnormalize_col(f);
            if !exprs.contains(&f) {
                exprs.push(f);
            }
        }
        let pred = match conjunction(exprs) {
            None => None,
            Some(predicate) => {
                let df_schema = DFSchema::try_from(self.schema.as_ref().clone())?;
                let columns = predicate.column_refs().iter().map(|c| c.name.clone()).collect();
                Some(DeletePredicate {
                    predicate: state.create_physical_expr(predicate.clone(), &df_schema)?,
                    keep: state.create_physical_expr(predicate.is_not_true(), &df_schema)?,
                    columns,
                })
            }
        };
        let schema = Arc::new(arrow::datatypes::Schema::new(vec![arrow::datatypes::Field::new(
            "count",
            DataType::UInt64,
            false,
        )]));
        let stream = DeleteStream {
            env: self.env.clone(),
            ident: self.table.ident.clone(),
            pred,
            schema: schema.clone(),
        };
        Ok(Arc::new(StreamingTableExec::try_new(
            schema,
            vec![Arc::new(stream)],
            None,
            vec![],
            false,
            None,
        )?))
    }

    async fn insert_into(
        &self,
        _state: &dyn Session,
        input: Arc<dyn ExecutionPlan>,
        insert_op: InsertOp,
    ) -> datafusion::common::Result<Arc<dyn ExecutionPlan>> {
        if self.last_values.is_some() {
            return Err(Error::invalid(READ_ONLY_INDEX).into());
        }
        if !self.is_current {
            return Err(Error::invalid("cannot insert into a past snapshot of a table").into());
        }
        if let Some(e) =
            crate::format::properties::refuse_rollup_writes(&self.table.ident, self.table.metadata.properties())
        {
            return Err(e.into());
        }
        if insert_op != InsertOp::Append {
            return Err(Error::invalid(format!(
                "{insert_op} is not supported; Varve tables take INSERT INTO (appends)"
            ))
            .into());
        }
        crate::query::sink::insert_plan(self.env.clone(), self.table.ident.clone(), self.schema.clone(), input)
    }
}

/// Runs a delete when its plan is executed.
#[derive(Debug)]
struct DeleteStream {
    env: QueryEnv,
    ident: crate::catalog::TableIdent,
    pred: Option<DeletePredicate>,
    schema: SchemaRef,
}

impl PartitionStream for DeleteStream {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(
        &self,
        _ctx: Arc<datafusion::execution::TaskContext>,
    ) -> datafusion::execution::SendableRecordBatchStream {
        let env = self.env.clone();
        let ident = self.ident.clone();
        let pred = self.pred.clone();
        let schema = self.schema.clone();
        let run = async move {
            let r = delete::delete(&env.storage, &env.cache, &ident, pred.as_ref(), "delete").await?;
            let batch = arrow::array::RecordBatch::try_new(
                schema,
                vec![Arc::new(arrow::array::UInt64Array::from(vec![r.rows_deleted]))],
            )?;
            if let Ok(mut d) = env.deletes.lock() {
                d.push(r);
            }
            Ok::<_, datafusion::error::DataFusionError>(batch)
        };
        Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            futures::stream::once(run),
        ))
    }
}

/// DataFusion's pruning gives up on `IN` lists of more than 20 values (a file, row group or page
/// is then always read). A list is the same as an OR of equalities, which pruning does use:
/// for each top-level `col IN (literals)` of more than 20 and at most [`MAX_PRUNING_IN_LIST`]
/// values, this returns that OR (as a balanced tree, so that no evaluation recurses deeply), to be
/// added to the predicates that prune: files always, row groups and pages when filters are not
/// applied row by row in the scan (there the OR would cost a comparison per value and row). Rows
/// are unchanged: the OR holds exactly where the list does.
fn in_list_pruning(filters: &[Expr]) -> Vec<Expr> {
    use datafusion::logical_expr::expr::InList;
    filters
        .iter()
        .filter_map(|f| match f {
            Expr::InList(InList {
                expr,
                list,
                negated: false,
            }) if list.len() > 20
                && list.len() <= MAX_PRUNING_IN_LIST
                && list.iter().all(|v| matches!(v, Expr::Literal(..))) =>
            {
                let mut terms: Vec<Expr> = list.iter().map(|v| expr.as_ref().clone().eq(v.clone())).collect();
                while terms.len() > 1 {
                    let mut next = Vec::with_capacity(terms.len().div_ceil(2));
                    let mut it = terms.into_iter();
                    while let Some(a) = it.next() {
                        next.push(match it.next() {
                            Some(b) => a.or(b),
                            None => a,
                        });
                    }
                    terms = next;
                }
                terms.pop()
            }
            _ => None,
        })
        .collect()
}

/// Where a filter goes in the order a scan applies filters row by row (DataFusion evaluates each
/// on the rows the ones before it kept, decoding the columns it reads for them): filters on the
/// time column alone first (a time range keeps few rows of a time-series table, and an integer is
/// cheap to decode), then filters on fixed-width columns, then the rest (strings, decoded value by
/// value). DataFusion's own order (`reorder_filters`) puts the column of fewest compressed bytes
/// first, which in a compacted table is a string column of long runs (a fleet): every row of
/// every page read was then decoded as a string to be compared.
fn filter_order(filter: &Expr, schema: &SchemaRef, time_column: Option<&str>) -> u8 {
    let columns = filter.column_refs();
    if time_column.is_some_and(|t| columns.iter().all(|c| c.name == t)) {
        return 0;
    }
    let fixed_width = columns.iter().all(|c| {
        schema
            .field_with_name(&c.name)
            .is_ok_and(|f| f.data_type().is_primitive() || matches!(f.data_type(), DataType::Boolean))
    });
    match fixed_width {
        true => 1,
        false => 2,
    }
}

/// Longest `IN` list turned into equalities for pruning ([`in_list_pruning`]): each value costs
/// a comparison per file, row group and page, and more values rarely prune anything more.
const MAX_PRUNING_IN_LIST: usize = 1000;
