//! Scan planning: how one scan of a Varve table ([`VarveTable`]) becomes DataFusion's plan, in
//! named steps that each own one decision:
//!
//! 1. the reader ([`Scan::new`]): the Parquet source over the lake's footer cache, filters applied
//!    row by row or only pruning, and the table's retention bound;
//! 2. the snapshot's live data files ([`live_files`]);
//! 3. bounds the optimizer rules asked for ([`Scan::bound`]): the newest time buckets, a top-k's
//!    bound from the last-value index (or its k rows themselves), the series an index split left;
//! 4. lists that only prune ([`Scan::prune_lists`]): the series of a filter on series-constant
//!    columns, long `IN` lists;
//! 5. the NaN guard ([`Scan::guard_nan`], `nan_guard`): no pruning by statistics that cannot speak
//!    for NaN;
//! 6. file pruning ([`Scan::prune_files`]) by the manifests' column bounds, then page and row-group
//!    pruning (`page_pruning`) by the footers;
//! 7. small files from their decoded rows (`small_files`);
//! 8. work units (`work_units`), the files' order (`output_ordering`) and the scan's statistics.
//!
//! Every scan reports what it read as a [`ScanNote`], which `EXPLAIN` shows.

pub(crate) mod footers;
pub(crate) mod nan_guard;
pub(crate) mod newest_scan;
pub(crate) mod output_ordering;
pub(crate) mod page_pruning;
pub(crate) mod provider;
pub(crate) mod read_ahead;
pub(crate) mod small_files;
pub(crate) mod store;
pub(crate) mod table;
pub(crate) mod work_units;

use std::collections::HashSet;
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::{DataType, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::stats::Precision;
use datafusion::common::{DFSchema, Statistics};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::memory::MemorySourceConfig;
use datafusion::datasource::physical_plan::{FileGroup, FileScanConfigBuilder, ParquetSource};
use datafusion::datasource::source::DataSourceExec;
use datafusion::execution::cache::cache_manager::FileMetadataCache;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::logical_expr::utils::{conjunction, split_conjunction_owned};
use datafusion::logical_expr::Expr;
use datafusion::physical_expr::{LexOrdering, PhysicalExpr};
use datafusion::physical_optimizer::pruning::PruningPredicate;
use datafusion::physical_plan::empty::EmptyExec;
use datafusion::physical_plan::union::UnionExec;
use datafusion::physical_plan::ExecutionPlan;
use iceberg::spec::DataFile;
use object_store::ObjectStore;
use parquet::file::metadata::ParquetMetaData;

use crate::catalog as lake_catalog;
use crate::format::stats::FileStats;
use crate::query::rules::newest_buckets;
use crate::query::scan::footers::CachedFooters;
use crate::query::scan::table::{ScanNote, VarveTable, STORE_URL};

type Result<T> = datafusion::common::Result<T>;

/// One scan as it is planned: the reader, the filters and what the steps decided so far.
struct Scan<'a> {
    table: &'a VarveTable,
    state: &'a dyn Session,
    store_url: ObjectStoreUrl,
    footers_store: Arc<dyn ObjectStore>,
    footers_cache: Arc<dyn FileMetadataCache>,
    footers: Arc<CachedFooters>,
    source: ParquetSource,
    /// The scan applies its filters row by row as it decodes (late materialization).
    pushdown: bool,
    /// The filters the scan was given (pushed down by DataFusion), then the bounds the steps add.
    filters: Vec<Expr>,
    /// No filter was pushed down to the scan.
    none_pushed: bool,
    /// `time >= now - retention`, for a table with a retention.
    retention: Option<Expr>,
    /// Lists that only prune (files, then pages): never applied row by row.
    prune_only: Vec<Expr>,
    /// What the scan reports (files counted at the end).
    note: ScanNote,
    /// The table's schema as DataFusion plans expressions over it.
    df_schema: DFSchema,
}

/// The step that finds a top-k's rows in the last-value index ends the scan with them.
enum Bound {
    /// The scan goes on, with the bounds added to its filters.
    Continue,
    /// The index held the k rows: the plan that returns them.
    Rows(RecordBatch),
}

impl VarveTable {
    /// The plan that reads the snapshot's data files (or its index, for
    /// [`VarveTable::last_values`]), pruned by `filters`, in the steps of the module docs. With
    /// `split` (from the provider's `scan_split`: the other series' key filter, and how many
    /// series the index answered) the key filter prunes too (the caller applies it exactly) and
    /// EXPLAIN notes the count.
    pub(crate) async fn scan_files(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
        split: Option<(Expr, usize)>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let mut scan = Scan::new(self, state, filters)?;
        let live = live_files(self).await?;
        if let Bound::Rows(rows) = scan.bound(live.as_deref(), split).await? {
            scan.note.files_total = live.as_ref().map_or(0, |l| l.len());
            scan.report();
            return MemorySourceConfig::try_new_exec(&[vec![rows]], self.schema.clone(), projection.cloned())
                .map(|e| e as Arc<dyn ExecutionPlan>);
        }
        scan.prune_lists().await?;
        let nan_safe = scan.guard_nan(live.as_deref());
        let pruning = scan.pruning_filters(&nan_safe);
        let exact_filters = match scan.row_filtering() {
            true => scan.filters.clone(),
            false => vec![],
        };
        let predicate = scan.predicate()?;
        let (mut kept, ordering) = scan.prune_files(live, &pruning, predicate.as_ref()).await?;
        let decoded = scan
            .small_files(&mut kept, limit, predicate.as_ref(), projection)
            .await?;
        scan.note.files_read = kept.len() + scan.note.files_decoded;
        scan.report();
        if kept.is_empty() {
            return match decoded {
                Some(decoded) => Ok(decoded),
                // No file to read (an empty table, or every file pruned): an empty plan with one
                // partition, which every operator above accepts (a scan of zero files has none,
                // and sorts and per-series aggregates refused it).
                None => {
                    let projected = match projection {
                        Some(p) => Arc::new(self.schema.project(p)?),
                        None => self.schema.clone(),
                    };
                    Ok(Arc::new(EmptyExec::new(projected)))
                }
            };
        }
        let statistics = scan.statistics(&kept);
        let (groups, orderings) = scan.file_groups(kept, limit, ordering, &exact_filters);
        let Scan { store_url, source, .. } = scan;
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
}

/// The snapshot's live data files, above the table's minimum sequence number when it reads only
/// the rows added since one; `None` for a scan of the last-value index, which reads none.
///
/// Errors: reading the manifests.
async fn live_files(table: &VarveTable) -> Result<Option<Vec<DataFile>>> {
    if table.last_values.is_some() {
        return Ok(None);
    }
    let entries = lake_catalog::live_entries(
        &table.env.storage,
        &table.env.cache,
        &table.table.metadata,
        table.snapshot_id,
    )
    .await?;
    Ok(Some(
        entries
            .into_iter()
            .filter(|e| match table.min_sequence {
                Some(min) => e.sequence_number().is_none_or(|s| s > min),
                None => true,
            })
            .map(|e| e.data_file)
            .collect(),
    ))
}

impl<'a> Scan<'a> {
    /// Step 1: the reader and the filters as given, plus the table's retention bound.
    fn new(table: &'a VarveTable, state: &'a dyn Session, filters: &[Expr]) -> Result<Scan<'a>> {
        // (Pushed filters would leave fewer than k buckets: the newest-buckets bound needs none.)
        let none_pushed = filters.is_empty();
        // Footers come from the lake's cache (`catalog::cache`) when a query read them before.
        let store_url = ObjectStoreUrl::parse(STORE_URL)?;
        let footers_store = state.runtime_env().object_store(&store_url)?;
        let footers_cache = state.runtime_env().cache_manager.get_file_metadata_cache();
        let storage = &table.env.storage;
        let read_ahead = storage.options.read_ahead_bytes(storage.kind);
        let footers = Arc::new(CachedFooters::new(
            footers_store.clone(),
            footers_cache.clone(),
            read_ahead,
        ));
        // Bloom filters are read as the session says (`SET
        // datafusion.execution.parquet.bloom_filter_on_read`, on by default).
        let mut source = ParquetSource::new(table.schema.clone())
            .with_enable_page_index(true)
            .with_bloom_filter_on_read(state.config_options().execution.parquet.bloom_filter_on_read)
            .with_parquet_file_reader_factory(footers.clone());
        // Late materialization: the scan applies filters row by row as it decodes (the columns a
        // filter reads first, the rest only for rows that pass), and takes the running threshold
        // of a top-k above it (DataFusion's dynamic filter), which rules out files by their
        // bounds (`LakeOptions::filter_pushdown` says when).
        let pushdown = storage.options.filter_pushdown(storage.kind, table.env.top_k);
        if pushdown {
            source = source.with_pushdown_filters(true);
        }
        let mut filters = filters.to_vec();
        // Rows older than the table's retention are never seen, even before maintenance drops
        // their files: the bound prunes files and is applied row by row in the scan.
        let retention = table.retention_filter()?;
        if let Some(bound) = &retention {
            filters.push(bound.clone());
            source = source.with_pushdown_filters(true);
        }
        Ok(Scan {
            table,
            state,
            store_url,
            footers_store,
            footers_cache,
            footers,
            source,
            pushdown,
            none_pushed,
            filters,
            retention,
            prune_only: Vec::new(),
            df_schema: DFSchema::try_from(table.schema.as_ref().clone())?,
            note: ScanNote {
                table: table.table.ident.to_string(),
                snapshot_id: table.snapshot_id,
                files_total: 0,
                files_read: 0,
                files_decoded: 0,
                last_values: table.last_values.is_some(),
                newest_k: None,
                newest_k_from_index: false,
                constant_series: None,
                index_series: None,
                newest_buckets: None,
            },
        })
    }

    /// Whether the scan applies its filters row by row (else its predicate only prunes).
    fn row_filtering(&self) -> bool {
        self.pushdown || self.retention.is_some()
    }

    /// Step 3: the bounds the optimizer rules marked the table for. Under the newest k time
    /// buckets, only their time range (`newest_buckets`); under a top-k by time, only the rows
    /// that can be among its k (the sort above picks them), or the k rows themselves when the
    /// index holds them (`newest_scan::top_k_bound`); under a newest row per series with
    /// filters, only the series the index did not answer (`split`).
    async fn bound(&mut self, live: Option<&[DataFile]>, split: Option<(Expr, usize)>) -> Result<Bound> {
        let table = self.table;
        if let (Some(marked), Some(files), true) = (&table.newest_buckets, live, self.none_pushed) {
            let bound = newest_buckets::bound(table, self.state, marked, files, self.retention.as_ref())?;
            if let Some(bound) = bound {
                self.filters.push(bound);
                self.note.newest_buckets = Some(marked.k);
            }
        }
        let top = newest_scan::top_k_bound(table, self.state, &self.filters).await?;
        if let Some(rows) = top.rows {
            self.note = ScanNote {
                files_read: 0,
                files_decoded: 0,
                last_values: false,
                newest_k: table.newest_k.as_ref().map(|n| n.k),
                newest_k_from_index: true,
                constant_series: None,
                index_series: None,
                newest_buckets: None,
                ..self.note.clone()
            };
            return Ok(Bound::Rows(rows));
        }
        if !top.bound.is_empty() {
            self.filters.extend(top.bound);
            self.note.newest_k = table.newest_k.as_ref().map(|n| n.k);
        }
        if let Some((others, answered)) = split {
            self.filters.push(others);
            self.note.index_series = Some(answered);
        }
        Ok(Bound::Continue)
    }

    /// Step 4: a filter on series-constant columns (a fleet) names its series through the index,
    /// as a list that only prunes, since the filter itself is applied; long `IN` lists, which
    /// DataFusion's pruning leaves out, prune as equalities. Applied row by row, these lists would
    /// be evaluated on every row: then they only prune.
    async fn prune_lists(&mut self) -> Result<()> {
        let row_filtering = self.row_filtering();
        if let Some((series, n)) =
            newest_scan::series_of_constant_filters(self.table, self.state, &self.filters).await?
        {
            match row_filtering {
                true => self
                    .prune_only
                    .push(in_list_pruning(std::slice::from_ref(&series)).pop().unwrap_or(series)),
                false => self.filters.push(series),
            }
            self.note.constant_series = Some(n);
        }
        let long_lists = in_list_pruning(&self.filters);
        match row_filtering {
            true => self.prune_only.extend(long_lists),
            false => self.filters.extend(long_lists),
        }
        Ok(())
    }

    /// Step 5: float columns that may hold NaN in a scanned file (a last-value index file counts
    /// none, so any of its float columns may). A filter that NaN satisfies never prunes by their
    /// Parquet statistics, which leave NaN out (`nan_guard`): when one would, DataFusion's own
    /// pruning of row groups, pages and bloom filters by the whole predicate (and a top-k's
    /// dynamic filter) is turned off for this scan, and the pruning at planning keeps the filters
    /// that prune safely. Returns those columns.
    fn guard_nan(&mut self, live: Option<&[DataFile]>) -> HashSet<String> {
        let nan = nan_guard::nan_columns(&self.table.schema, live.unwrap_or(&[]));
        let unsafe_filter = self
            .filters
            .iter()
            .chain(&self.prune_only)
            .any(|f| !nan_guard::prunes_safely(f, &nan));
        if !nan.is_empty() && (self.table.env.top_k || unsafe_filter) {
            let mut options = self.source.table_parquet_options().clone();
            options.global.pruning = false;
            options.global.enable_page_index = false;
            options.global.bloom_filter_on_read = false;
            self.source = self.source.clone().with_table_parquet_options(options);
        }
        let prune_only = std::mem::take(&mut self.prune_only);
        self.prune_only = prune_only
            .into_iter()
            .flat_map(split_conjunction_owned)
            .filter(|f| nan_guard::prunes_safely(f, &nan))
            .collect();
        nan
    }

    /// The filters that prune at planning, given the NaN guard's columns: every filter that
    /// prunes safely plus the lists that only prune (for row groups), and for files the same when
    /// there are such lists (else the scan's own predicate prunes files).
    fn pruning_filters(&self, nan: &HashSet<String>) -> Pruning {
        let row_groups = conjunction(
            self.filters
                .iter()
                .cloned()
                .flat_map(split_conjunction_owned)
                .filter(|f| nan_guard::prunes_safely(f, nan))
                .chain(self.prune_only.iter().cloned()),
        );
        let files = match self.prune_only.is_empty() {
            false => row_groups.clone(),
            true => None,
        };
        Pruning {
            files,
            row_groups,
            pages: conjunction(self.prune_only.iter().cloned()),
        }
    }

    /// The scan's predicate, its filters in the order the scan applies them row by row
    /// (`filter_order`), set on the Parquet source.
    fn predicate(&mut self) -> Result<Option<Arc<dyn PhysicalExpr>>> {
        let time_column = self.table.table.contract()?.time_column;
        let mut filters = self.filters.clone();
        filters.sort_by_key(|f| filter_order(f, &self.table.schema, time_column.as_deref()));
        Ok(match conjunction(filters) {
            Some(predicate) => {
                let physical = self.state.create_physical_expr(predicate, &self.df_schema)?;
                self.source = self.source.clone().with_predicate(physical.clone());
                Some(physical)
            }
            None => None,
        })
    }

    /// A footer the lake's cache holds (read before, or carried by the head): nothing is read.
    fn footer(&self, f: &PartitionedFile) -> Option<Arc<ParquetMetaData>> {
        crate::catalog::footer_in(self.footers_cache.as_ref(), &f.object_meta.location, f.object_meta.size)
    }

    /// Step 6: each file to read with its rows, and the order their rows are in
    /// (`output_ordering`). The snapshot's last-value index stands for its data files (one small
    /// file); data files are pruned by the manifests' column bounds, then by their pages and row
    /// groups.
    async fn prune_files(
        &mut self,
        live: Option<Vec<DataFile>>,
        pruning: &Pruning,
        predicate: Option<&Arc<dyn PhysicalExpr>>,
    ) -> Result<(Vec<(PartitionedFile, u64)>, Option<LexOrdering>)> {
        let table = self.table;
        let storage = &table.env.storage;
        if let Some(ix) = &table.last_values {
            self.note.files_total = 1;
            let path = storage.path_of(&ix.location)?;
            return Ok((vec![(PartitionedFile::new(path.to_string(), ix.bytes), 0)], None));
        }
        let files = live.unwrap_or_default();
        self.note.files_total = files.len();
        let mut keep = vec![true; files.len()];
        let stats = FileStats {
            files: &files,
            schema: &table.schema,
        };
        let file_pruning = match &pruning.files {
            Some(expr) => Some(self.state.create_physical_expr(expr.clone(), &self.df_schema)?),
            None => predicate.cloned(),
        };
        if let Some(physical) = &file_pruning {
            if let Ok(pruning) = PruningPredicate::try_new(physical.clone(), table.schema.clone()) {
                keep = pruning.prune(&stats)?;
            }
        }
        let read = files.iter().zip(&keep).filter(|(_, k)| **k).map(|(f, _)| f);
        let ordering = output_ordering::of_files(&table.table.metadata, read, &table.schema);
        let mut kept = Vec::new();
        for (i, f) in files.iter().enumerate().filter(|(i, _)| keep[*i]) {
            let path = storage.path_of(f.file_path())?;
            storage.know_size(&path, f.file_size_in_bytes());
            let file = PartitionedFile::new(path.to_string(), f.file_size_in_bytes())
                .with_statistics(Arc::new(stats.file_statistics(i)));
            kept.push((file, f.record_count()));
        }
        if let Some(prune) = &pruning.pages {
            kept = page_pruning::prune_pages(
                self.footers_store.clone(),
                self.footers_cache.clone(),
                kept,
                &table.schema,
                prune,
            )
            .await;
        }
        if let Some(filter) = &pruning.row_groups {
            kept = page_pruning::prune_row_groups(kept, &|f| self.footer(f), &table.schema, filter);
        }
        Ok((kept, ordering))
    }

    /// Step 7: small files read from their decoded rows when a partition would open several files
    /// (`small_files`), taken out of `kept`: the plan over their rows, `None` when none are
    /// (or none of their rows pass the filters).
    async fn small_files(
        &mut self,
        kept: &mut Vec<(PartitionedFile, u64)>,
        limit: Option<usize>,
        predicate: Option<&Arc<dyn PhysicalExpr>>,
        projection: Option<&Vec<usize>>,
    ) -> Result<Option<Arc<dyn ExecutionPlan>>> {
        let table = self.table;
        let partitions = self.state.config().target_partitions().max(1);
        let budget = table.env.storage.options.decoded_bytes();
        if table.last_values.is_some() || budget == 0 || limit.is_some() || kept.len() <= partitions {
            return Ok(None);
        }
        let (small, rest) = small_files::pick(std::mem::take(kept), budget);
        *kept = rest;
        self.note.files_decoded = small.len();
        let decoded = small_files::rows_of(
            self.state,
            &table.env.cache,
            self.footers.clone(),
            &self.store_url,
            &table.schema,
            &small,
            predicate,
        )
        .await?;
        if decoded.is_empty() {
            return Ok(None);
        }
        let batch_rows = self.state.config().batch_size();
        Ok(Some(MemorySourceConfig::try_new_exec(
            &small_files::deal(decoded, partitions, batch_rows),
            table.schema.clone(),
            projection.cloned(),
        )? as Arc<dyn ExecutionPlan>))
    }

    /// Adds the scan's note to the statement's (`EXPLAIN` shows them).
    fn report(&self) {
        if let Ok(mut notes) = self.table.env.scans.lock() {
            notes.push(self.note.clone());
        }
    }

    /// Step 8a: the scan's statistics: its rows (exact: a delete rewrites files, Varve writes no
    /// delete files) and each column's bounds and null count over the files read, inexact so that
    /// DataFusion plans with them (join sides, selectivity) but answers no aggregate from them
    /// (`FileStats::file_statistics`).
    fn statistics(&self, kept: &[(PartitionedFile, u64)]) -> Statistics {
        let schema = &self.table.schema;
        let mut statistics = Statistics::new_unknown(schema);
        if self.table.last_values.is_none() {
            let files: Vec<&Statistics> = kept.iter().filter_map(|(f, _)| f.statistics.as_deref()).collect();
            if files.len() == kept.len() {
                if let Ok(merged) = Statistics::try_merge_iter(files, schema) {
                    statistics.column_statistics = merged.to_inexact().column_statistics;
                }
            }
            statistics.num_rows = Precision::Exact(kept.iter().map(|(_, n)| *n as usize).sum());
        }
        statistics
    }

    /// Step 8b: the scan's file groups, one per partition, and the order it declares. Large files
    /// are cut into ranges that idle partitions take over (`work_units`; not under a limit, which
    /// reads few rows, nor where the statement keeps files whole: see `context::Planner`). The
    /// order is declared only where each partition reads one unit (an ordering costs the scan its
    /// work stealing), without the series key columns that filters applied row by row hold to one
    /// value (`output_ordering::after_equalities`).
    fn file_groups(
        &self,
        kept: Vec<(PartitionedFile, u64)>,
        limit: Option<usize>,
        ordering: Option<LexOrdering>,
        exact_filters: &[Expr],
    ) -> (Vec<FileGroup>, Vec<LexOrdering>) {
        let state = self.state;
        let partitions = state.config().target_partitions().max(1);
        let files = kept.into_iter().map(|(f, _)| f).collect::<Vec<_>>();
        let units = if limit.is_none() && state.config_options().optimizer.repartition_file_scans {
            let object_store = matches!(self.table.env.storage.kind, crate::StorageKind::S3);
            work_units::split(files, partitions, &|f| self.footer(f), object_store)
        } else {
            files.into_iter().map(work_units::Unit::whole).collect()
        };
        let groups_n = partitions.min(units.len().max(1));
        let shared_queue = state.config_options().execution.enable_file_stream_work_stealing;
        let groups: Vec<FileGroup> = work_units::groups(units, groups_n, shared_queue)
            .into_iter()
            .filter(|g| !g.is_empty())
            .map(FileGroup::new)
            .collect();
        let orderings = match ordering {
            Some(o) if groups.iter().all(|g| g.len() <= 1) => output_ordering::after_equalities(o, exact_filters)
                .into_iter()
                .collect(),
            _ => vec![],
        };
        (groups, orderings)
    }
}

/// The filters that prune at planning ([`Scan::pruning_filters`]).
struct Pruning {
    /// Prunes data files by the manifests' bounds; `None`: the scan's predicate does.
    files: Option<Expr>,
    /// Prunes row groups by their statistics.
    row_groups: Option<Expr>,
    /// Prunes pages by the page index: the lists that only prune.
    pages: Option<Expr>,
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
