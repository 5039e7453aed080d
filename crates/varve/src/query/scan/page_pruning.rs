//! Pruning at planning, into each file's [`ParquetAccessPlan`]: row groups by their statistics
//! when the file's footer is cached ([`prune_row_groups`]), and pages by filters that only prune
//! ([`prune_pages`]): long `IN` lists of series keys, the user's or the series a filter on
//! series-constant columns keeps (`newest_scan::series_of_constant_filters`).
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
    PagePruningAccessPlanFilter, ParquetAccessPlan, ParquetFileMetrics, RowGroupAccess, RowGroupAccessPlanFilter,
};
use datafusion::execution::cache::cache_manager::FileMetadataCache;
use datafusion::logical_expr::Expr;
use datafusion::physical_expr::create_physical_expr;
use datafusion::physical_expr::execution_props::ExecutionProps;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_optimizer::pruning::PruningPredicate;
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

/// `files` with the row groups `filter` rules out by their statistics (min, max, null count)
/// left out of each file's [`ParquetAccessPlan`], for the files whose footer is in `footer` (the
/// lake's cache: nothing is read here); a file with no row group left is dropped.
///
/// The scan's opener prunes row groups the same way, but only once its reader exists: pruned
/// here, the scan units (`work_units`) are cut and weighted by the row groups read, and the
/// read-ahead (`read_ahead`) never fetches a row group the filter rules out. `filter` is on
/// `table` columns and every row the query keeps passes it. A file whose columns do not match the
/// table's (name, field id and type), or whose statistics the filter cannot be evaluated on, is
/// returned as it is. Never an error.
pub(crate) fn prune_row_groups<T>(
    files: Vec<(PartitionedFile, T)>,
    footer: &dyn Fn(&PartitionedFile) -> Option<Arc<ParquetMetaData>>,
    table: &SchemaRef,
    filter: &Expr,
) -> Vec<(PartitionedFile, T)> {
    files
        .into_iter()
        .filter_map(|(file, with)| {
            // A file of one row group passed the same test on its manifest bounds: the scan's
            // opener checks it again; nothing to cut here.
            let Some(meta) = footer(&file).filter(|m| m.num_row_groups() > 1) else {
                return Some((file, with));
            };
            let Some((file_schema, physical)) = on_file(&meta, table, filter) else {
                return Some((file, with));
            };
            let Ok(pruning) = PruningPredicate::try_new(physical, file_schema.clone()) else {
                return Some((file, with));
            };
            let start = match file.extensions.get_arc::<ParquetAccessPlan>() {
                Some(plan) if plan.len() == meta.num_row_groups() => plan.as_ref().clone(),
                Some(_) => return Some((file, with)),
                None => ParquetAccessPlan::new_all(meta.num_row_groups()),
            };
            let before = start.row_group_index_iter().count();
            let metrics = ExecutionPlanMetricsSet::new();
            let metrics = ParquetFileMetrics::new(0, file.object_meta.location.as_ref(), &metrics);
            let mut plan = RowGroupAccessPlanFilter::new(start);
            plan.prune_by_statistics(
                &file_schema,
                meta.file_metadata().schema_descr(),
                meta.row_groups(),
                &pruning,
                &metrics,
            );
            let plan = plan.build();
            match plan.row_group_index_iter().count() {
                0 => None,
                n if n == before => Some((file, with)),
                _ => Some((file.with_extension(plan), with)),
            }
        })
        .collect()
}

/// The file's Arrow schema and `expr` as a physical expression on it, `None` when a column `expr`
/// names is not the table's in the file (same name, field id and type) or `expr` cannot be
/// planned on it.
fn on_file(
    footer: &Arc<ParquetMetaData>,
    table: &SchemaRef,
    expr: &Expr,
) -> Option<(SchemaRef, Arc<dyn PhysicalExpr>)> {
    let arrow = ArrowReaderMetadata::try_new(footer.clone(), ArrowReaderOptions::new()).ok()?;
    let file_schema = arrow.schema().clone();
    for column in expr.column_refs() {
        let ours = table.field_with_name(&column.name).ok()?;
        let theirs = file_schema.field_with_name(&column.name).ok()?;
        if field_id(ours) != field_id(theirs) || ours.data_type() != theirs.data_type() {
            return None;
        }
    }
    let df_schema = DFSchema::try_from(file_schema.as_ref().clone()).ok()?;
    let physical = create_physical_expr(expr, &df_schema, &ExecutionProps::new()).ok()?;
    Some((file_schema, physical))
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
    let (file_schema, physical) = on_file(footer, table, prune)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int64Array, RecordBatch, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};
    use datafusion::prelude::{col, lit};
    use parquet::arrow::ArrowWriter;
    use parquet::file::metadata::ParquetMetaDataReader;
    use parquet::file::properties::WriterProperties;

    /// A file of three row groups, of hosts "a", "b" and "c", and its footer.
    fn file() -> (SchemaRef, PartitionedFile, Arc<ParquetMetaData>) {
        let schema = Arc::new(Schema::new(vec![
            Field::new("host", DataType::Utf8, false),
            Field::new("v", DataType::Int64, false),
        ]));
        let props = WriterProperties::builder().set_max_row_group_row_count(Some(4)).build();
        let mut out = Vec::new();
        let mut writer = ArrowWriter::try_new(&mut out, schema.clone(), Some(props)).unwrap();
        for host in ["a", "b", "c"] {
            let batch = RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(StringArray::from(vec![host; 4])),
                    Arc::new(Int64Array::from(vec![1, 2, 3, 4])),
                ],
            )
            .unwrap();
            writer.write(&batch).unwrap();
        }
        writer.close().unwrap();
        let footer = ParquetMetaDataReader::new()
            .parse_and_finish(&bytes::Bytes::from(out.clone()))
            .unwrap();
        (
            schema,
            PartitionedFile::new("f.parquet", out.len() as u64),
            Arc::new(footer),
        )
    }

    fn kept(out: &[(PartitionedFile, ())]) -> Option<Vec<usize>> {
        out[0]
            .0
            .extensions
            .get_arc::<ParquetAccessPlan>()
            .map(|p| p.row_group_indexes())
    }

    #[test]
    fn row_groups_the_statistics_rule_out_are_left_out_when_the_footer_is_known() {
        let (schema, f, footer) = file();
        assert_eq!(footer.num_row_groups(), 3);
        let known = |_: &PartitionedFile| Some(footer.clone());
        let out = prune_row_groups(vec![(f.clone(), ())], &known, &schema, &col("host").eq(lit("b")));
        assert_eq!(kept(&out), Some(vec![1]));
        // Nothing left: the file is dropped.
        let out = prune_row_groups(vec![(f.clone(), ())], &known, &schema, &col("host").eq(lit("z")));
        assert!(out.is_empty());
        // Nothing ruled out: no plan.
        let out = prune_row_groups(vec![(f.clone(), ())], &known, &schema, &col("v").gt(lit(0i64)));
        assert_eq!(kept(&out), None);
        // An earlier plan is kept and narrowed.
        let mut plan = ParquetAccessPlan::new_all(3);
        plan.skip(2);
        let planned = f.clone().with_extension(plan);
        let out = prune_row_groups(vec![(planned, ())], &known, &schema, &col("host").gt_eq(lit("b")));
        assert_eq!(kept(&out), Some(vec![1]));
        // Footer not cached, or the column is another type in the file: as it was.
        let out = prune_row_groups(vec![(f.clone(), ())], &|_| None, &schema, &col("host").eq(lit("b")));
        assert_eq!(kept(&out), None);
        let other = Arc::new(Schema::new(vec![
            Field::new("host", DataType::Int64, false),
            Field::new("v", DataType::Int64, false),
        ]));
        let out = prune_row_groups(vec![(f, ())], &known, &other, &col("host").eq(lit(1i64)));
        assert_eq!(kept(&out), None);
    }
}
