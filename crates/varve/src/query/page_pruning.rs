//! Pruning by filters that only prune: long `IN` lists of series keys, the user's or the series a
//! filter on series-constant columns keeps (`newest_scan::series_of_constant_filters`).
//!
//! DataFusion's Parquet scan prunes row groups and pages by an `IN` list of at most 20 values,
//! and a scan that applies filters row by row (`filter-pushdown`) evaluates every filter it was
//! given on every row it decodes: a list of 200 trucks would be looked up for each of a day's
//! rows, and the key column decoded in full for it. Here such a list is turned into OR-ed
//! equalities evaluated once per page against each file's page index (Parquet spec, "Page
//! Index"), at planning, and the pages it rules out are left out of the file's
//! [`ParquetAccessPlan`], which the scan starts from. The list is never applied to rows: the
//! filters it stands for are.

use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use datafusion::common::DFSchema;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::parquet::metadata::DFParquetMetadata;
use datafusion::datasource::physical_plan::parquet::{
    PagePruningAccessPlanFilter, ParquetAccessPlan, ParquetFileMetrics, RowGroupAccess,
};
use datafusion::execution::cache::cache_manager::FileMetadataCache;
use datafusion::logical_expr::Expr;
use datafusion::physical_expr::create_physical_expr;
use datafusion::physical_expr::execution_props::ExecutionProps;
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use futures::StreamExt;
use object_store::ObjectStore;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData};

use crate::format::field_ids::field_id;

/// Footers read at once while planning.
const CONCURRENT_FOOTERS: usize = 8;

/// `files` (each with a value of the caller's) with the pages `prune` rules out left out: each
/// file whose page index rules out some pages gets a [`ParquetAccessPlan`] (rows of skipped pages deselected, row groups with no page
/// left skipped); a file with nothing left is dropped. `prune` is a filter on `table` columns
/// (one column per conjunct, as [`PagePruningAccessPlanFilter`] needs) that every row the query
/// keeps passes. Footers come from `cache` (the scan reads them there next) or the store, with
/// their page indexes.
///
/// Never an error: a file whose footer cannot be read here, or whose columns do not match the
/// table's by name, field id and type (written before a schema change), is returned as it is, and
/// the scan reports what is wrong with it.
pub(crate) async fn prune_pages<T>(
    store: Arc<dyn ObjectStore>,
    cache: Arc<dyn FileMetadataCache>,
    files: Vec<(PartitionedFile, T)>,
    table: &SchemaRef,
    prune: &Expr,
) -> Vec<(PartitionedFile, T)> {
    let planned: Vec<Option<(PartitionedFile, T)>> = futures::stream::iter(files)
        .map(|(file, with)| {
            let (store, cache) = (store.clone(), cache.clone());
            async move {
                let footer = DFParquetMetadata::new(store.as_ref(), &file.object_meta)
                    .with_file_metadata_cache(Some(cache))
                    .with_page_index_policy(Some(PageIndexPolicy::Optional))
                    .fetch_metadata()
                    .await;
                match footer {
                    Ok(footer) => match plan(&footer, &file, table, prune) {
                        Some(plan) if plan.row_group_index_iter().next().is_none() => None,
                        Some(plan) => Some((file.with_extension(plan), with)),
                        None => Some((file, with)),
                    },
                    Err(_) => Some((file, with)),
                }
            }
        })
        .buffered(CONCURRENT_FOOTERS)
        .collect()
        .await;
    planned.into_iter().flatten().collect()
}

/// The access plan of one file, `None` when `prune` cannot be evaluated on its page index or
/// rules out nothing.
fn plan(
    footer: &Arc<ParquetMetaData>,
    file: &PartitionedFile,
    table: &SchemaRef,
    prune: &Expr,
) -> Option<ParquetAccessPlan> {
    footer.column_index()?;
    let arrow = ArrowReaderMetadata::try_new(footer.clone(), ArrowReaderOptions::new()).ok()?;
    let file_schema = arrow.schema().clone();
    // Every column `prune` names must be the table's: same name, field id and type.
    for column in prune.column_refs() {
        let ours = table.field_with_name(&column.name).ok()?;
        let theirs = file_schema.field_with_name(&column.name).ok()?;
        if field_id(ours) != field_id(theirs) || ours.data_type() != theirs.data_type() {
            return None;
        }
    }
    let df_schema = DFSchema::try_from(file_schema.as_ref().clone()).ok()?;
    let physical = create_physical_expr(prune, &df_schema, &ExecutionProps::new()).ok()?;
    let metrics = ExecutionPlanMetricsSet::new();
    let metrics = ParquetFileMetrics::new(0, file.object_meta.location.as_ref(), &metrics);
    let mut plan = PagePruningAccessPlanFilter::new(&physical, file_schema.clone()).prune_plan_with_page_index(
        ParquetAccessPlan::new_all(footer.num_row_groups()),
        &file_schema,
        footer.file_metadata().schema_descr(),
        footer,
        &metrics,
    );
    let mut pruned = false;
    for (i, access) in plan.inner().to_vec().into_iter().enumerate() {
        if let RowGroupAccess::Selection(selection) = access {
            pruned = true;
            if !selection.selects_any() {
                plan.skip(i);
            }
        }
    }
    pruned.then_some(plan)
}
