//! Small data files read from memory. A table written by micro-commits (a row or a few hundred per
//! append, from a Kafka topic or a sensor gateway) has, between compactions, a tail of small files:
//! inline maintenance merges them in tiers (`maintain::plan`), so a partition keeps a few tiers
//! of decreasing size. A query over such a table pays DataFusion's per-file work for each of them
//! (footer, statistics, bloom filters, page index, predicate setup: about a quarter of a
//! millisecond on this machine), which for a few hundred rows is most of what the file costs.
//!
//! Here a scan that reads more files than it has partitions (so that at least one partition opens
//! several) reads the files of at most [`MAX_ROWS`] rows and [`MAX_BYTES`] bytes among them from
//! their decoded rows, which the lake keeps (`catalog::cache`, bounded by the lake option
//! `cache-decoded-bytes`, least recently used out): the scan's filters are applied to those rows
//! at planning (exactly, so a filter that only prunes elsewhere is still correct here: every filter
//! a scan gets holds on every row the query needs), and what passes joins the Parquet scan of the
//! other files under a union. A file not yet held is read whole once (all its columns, through the
//! same Parquet reader and Iceberg field-id mapping as any scan, `format::field_ids`), in parallel
//! with the others.
//!
//! Data files are immutable (written once under fresh names; a delete or a compaction writes new
//! ones), so held rows never go stale; they are held in the table schema they were read in, and
//! read again when the table's schema has changed since.

use std::sync::Arc;

use arrow::array::{AsArray, RecordBatch};
use arrow::datatypes::SchemaRef;
use datafusion::catalog::Session;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::{
    FileGroup, FileScanConfigBuilder, ParquetFileReaderFactory, ParquetSource,
};
use datafusion::datasource::source::DataSourceExec;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::physical_plan::{ExecutionPlan, PhysicalExpr};

use crate::catalog::MetadataCache;

/// Most rows of a data file read from memory.
pub(crate) const MAX_ROWS: u64 = 16_384;
/// Most bytes (Parquet, as stored) of a data file read from memory.
pub(crate) const MAX_BYTES: u64 = 2 << 20;

/// The rows of one data file in a table's schema.
#[derive(Debug, Clone)]
pub(crate) struct DecodedFile {
    /// The table schema the rows were read in (every column nullable, as query scans see it).
    pub(crate) schema: SchemaRef,
    /// All of the file's rows, in the file's order.
    pub(crate) rows: RecordBatch,
}

/// Whether a data file of `rows` rows and `bytes` bytes is read from memory.
pub(crate) fn is_small(rows: u64, bytes: u64) -> bool {
    rows <= MAX_ROWS && bytes <= MAX_BYTES
}

/// The rows of `files` in `schema` that pass `predicate` (all of them without one), each file's
/// in one batch (files without a passing row left out). Rows come from `cache`, or are read with
/// `reader` from the store registered under `store_url` and kept there.
///
/// Errors: those of the Parquet scan that reads a file (not found, corruption, storage).
pub(crate) async fn rows_of(
    state: &dyn Session,
    cache: &MetadataCache,
    reader: Arc<dyn ParquetFileReaderFactory>,
    store_url: &ObjectStoreUrl,
    schema: &SchemaRef,
    files: &[PartitionedFile],
    predicate: Option<&Arc<dyn PhysicalExpr>>,
) -> datafusion::common::Result<Vec<RecordBatch>> {
    let read = files.iter().map(|file| {
        let reader = reader.clone();
        async move {
            let key = file.object_meta.location.to_string();
            if let Some(held) = cache.decoded(&key) {
                if held.schema == *schema {
                    return Ok(held.rows);
                }
            }
            let rows = read_whole(state, reader, store_url, schema, file).await?;
            cache.put_decoded(
                &key,
                DecodedFile {
                    schema: schema.clone(),
                    rows: rows.clone(),
                },
            );
            Ok::<_, datafusion::error::DataFusionError>(rows)
        }
    });
    let mut out = Vec::with_capacity(files.len());
    for rows in futures::future::try_join_all(read).await? {
        let rows = match predicate {
            Some(p) => {
                let keep = p.evaluate(&rows)?.into_array(rows.num_rows())?;
                arrow::compute::filter_record_batch(&rows, keep.as_boolean())?
            }
            None => rows,
        };
        if rows.num_rows() > 0 {
            out.push(rows);
        }
    }
    Ok(out)
}

/// `batches` dealt round-robin into at most `partitions` non-empty partitions (so that the
/// operators above work on them in parallel).
pub(crate) fn deal(batches: Vec<RecordBatch>, partitions: usize) -> Vec<Vec<RecordBatch>> {
    let mut out: Vec<Vec<RecordBatch>> = vec![Vec::new(); partitions.clamp(1, batches.len().max(1))];
    let n = out.len();
    for (i, b) in batches.into_iter().enumerate() {
        out[i % n].push(b);
    }
    out
}

/// Every row of `file` in `schema`, by a one-file Parquet scan with the field-id mapping. The
/// file is read whole whatever the scan that asked planned for it (an access plan that skips row
/// groups or pages, a byte range): the rows are kept for other queries.
async fn read_whole(
    state: &dyn Session,
    reader: Arc<dyn ParquetFileReaderFactory>,
    store_url: &ObjectStoreUrl,
    schema: &SchemaRef,
    file: &PartitionedFile,
) -> datafusion::common::Result<RecordBatch> {
    let file = PartitionedFile::new(file.object_meta.location.to_string(), file.object_meta.size);
    let source = ParquetSource::new(schema.clone()).with_parquet_file_reader_factory(reader);
    let config = FileScanConfigBuilder::new(store_url.clone(), Arc::new(source))
        .with_expr_adapter(Some(Arc::new(crate::format::field_ids::FieldIdAdapterFactory)))
        .with_file_groups(vec![FileGroup::new(vec![file])])
        .build();
    let scan: Arc<dyn ExecutionPlan> = DataSourceExec::from_data_source(config);
    let batches = datafusion::physical_plan::collect(scan, state.task_ctx()).await?;
    Ok(arrow::compute::concat_batches(schema, &batches)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_up_to_both_bounds_are_small() {
        assert!(is_small(300, 20_000));
        assert!(is_small(MAX_ROWS, MAX_BYTES));
        assert!(!is_small(MAX_ROWS + 1, 1000));
        assert!(!is_small(10, MAX_BYTES + 1));
    }

    #[test]
    fn batches_are_dealt_into_non_empty_partitions() {
        let schema = Arc::new(arrow::datatypes::Schema::new(vec![arrow::datatypes::Field::new(
            "x",
            arrow::datatypes::DataType::Int64,
            false,
        )]));
        let b = RecordBatch::try_new(schema, vec![Arc::new(arrow::array::Int64Array::from(vec![1]))]).unwrap();
        assert_eq!(deal(vec![b.clone()], 4).len(), 1);
        let parts = deal(vec![b.clone(), b.clone(), b.clone()], 2);
        assert_eq!(parts.iter().map(|p| p.len()).collect::<Vec<_>>(), vec![2, 1]);
        assert_eq!(deal(vec![], 2).len(), 1);
    }
}
