//! Small data files read from memory. A table written by micro-commits (a row or a few hundred per
//! append, from a Kafka topic or a sensor gateway) has, between compactions, a tail of small files:
//! inline maintenance merges them in tiers (`maintain::plan`), so a partition keeps a few tiers
//! of decreasing size. A query over such a table pays DataFusion's per-file work for each of them
//! (footer, statistics, bloom filters, page index, predicate setup: about a quarter of a
//! millisecond on this machine), which for a few hundred rows is most of what the file costs.
//!
//! Here a scan that reads more files than it has partitions (so that at least one partition opens
//! several), and is not a plain `LIMIT` (which reads a few rows of one file), reads the files of at
//! most [`MAX_ROWS`] rows and [`MAX_BYTES`] bytes among them from their decoded rows, which the
//! lake keeps (`catalog::cache`, bounded by the lake option `cache-decoded-bytes`; moka's TinyLFU
//! decides what stays), up to a quarter of that bound per scan ([`pick`]). The scan's filters are
//! applied to those rows at planning (exactly, so a filter that only prunes elsewhere is still
//! correct here: every filter a scan gets holds on every row the query needs), and what passes
//! joins the Parquet scan of the other files under a union. A file whose rows are not held is read
//! whole (all its columns, through the same Parquet reader and Iceberg field-id mapping as any
//! scan, `format::field_ids`), a few at a time; planning, and so a plain `EXPLAIN`, reads them.
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

use crate::catalog::{DecodedFile, MetadataCache};

/// Most rows of a data file read from memory.
pub(crate) const MAX_ROWS: u64 = 16_384;
/// Most bytes (Parquet, as stored) of a data file read from memory.
pub(crate) const MAX_BYTES: u64 = 2 << 20;

/// Whether a data file of `rows` rows and `bytes` bytes is read from memory.
fn is_small(rows: u64, bytes: u64) -> bool {
    rows <= MAX_ROWS && bytes <= MAX_BYTES
}

/// Files read at once when their rows are not held.
const READ_AT_ONCE: usize = 8;

/// Of `files` (each with its row count, in the scan's order), those read from decoded rows: the
/// small ones, while their bytes as stored add up to at most a quarter of `budget` (the bytes of
/// decoded rows the lake keeps; Arrow's rows take a few times the bytes of compressed Parquet), so
/// that a scan's small files fit in the cache together and a long tail of them does not decode
/// more than it holds. Returns (small, rest), each in the order given.
pub(crate) fn pick(
    files: Vec<(PartitionedFile, u64)>,
    budget: u64,
) -> (Vec<PartitionedFile>, Vec<(PartitionedFile, u64)>) {
    let mut room = budget / 4;
    let mut small = Vec::new();
    let mut rest = Vec::new();
    for (file, rows) in files {
        let bytes = file.object_meta.size;
        if is_small(rows, bytes) && bytes <= room {
            room -= bytes;
            small.push(file);
        } else {
            rest.push((file, rows));
        }
    }
    (small, rest)
}

/// The rows of `files` in `schema` that pass `predicate` (all of them without one), each file's
/// in one batch (files without a passing row left out). Rows come from `cache`, or are read with
/// `reader` from the store registered under `store_url` (up to [`READ_AT_ONCE`] files at a time)
/// and kept there. The conjuncts of `predicate` are applied one after the other, each to the rows
/// the ones before it kept (as a scan that applies filters row by row does), so that a filter is
/// never evaluated on a row an earlier one ruled out.
///
/// Errors: those of the Parquet scan that reads a file (not found, corruption, storage), and of
/// evaluating the predicate.
pub(crate) async fn rows_of(
    state: &dyn Session,
    cache: &MetadataCache,
    reader: Arc<dyn ParquetFileReaderFactory>,
    store_url: &ObjectStoreUrl,
    schema: &SchemaRef,
    files: &[PartitionedFile],
    predicate: Option<&Arc<dyn PhysicalExpr>>,
) -> datafusion::common::Result<Vec<RecordBatch>> {
    use futures::{StreamExt, TryStreamExt};
    let filters: Vec<&Arc<dyn PhysicalExpr>> = predicate
        .map(datafusion::physical_expr::split_conjunction)
        .unwrap_or_default();
    type Read<'a> = futures::future::BoxFuture<'a, datafusion::common::Result<RecordBatch>>;
    let mut read: Vec<Read<'_>> = Vec::with_capacity(files.len());
    for file in files {
        let reader = reader.clone();
        let filters = &filters;
        read.push(Box::pin(async move {
            let key = file.object_meta.location.to_string();
            let held = cache
                .decoded(&key)
                .filter(|h| h.schema == *schema && h.bytes == file.object_meta.size);
            let mut rows = match held {
                Some(held) => held.rows,
                None => {
                    let rows = read_whole(state, reader, store_url, schema, file).await?;
                    cache.put_decoded(
                        &key,
                        DecodedFile {
                            schema: schema.clone(),
                            bytes: file.object_meta.size,
                            rows: rows.clone(),
                        },
                    );
                    rows
                }
            };
            for f in filters.iter() {
                if rows.num_rows() == 0 {
                    break;
                }
                let keep = f.evaluate(&rows)?.into_array(rows.num_rows())?;
                rows = arrow::compute::filter_record_batch(&rows, keep.as_boolean())?;
            }
            Ok::<_, datafusion::error::DataFusionError>(rows)
        }));
    }
    let all: Vec<RecordBatch> = futures::stream::iter(read).buffered(READ_AT_ONCE).try_collect().await?;
    Ok(all.into_iter().filter(|b| b.num_rows() > 0).collect())
}

/// `batches` dealt round-robin into at most `partitions` non-empty partitions (so that the
/// operators above work on them in parallel), or into one when they hold at most `batch_rows`
/// rows together (the rows of one batch: a second partition would cost more than its work;
/// `query::rules::chain` reads one partition beside a scan read by one).
pub(crate) fn deal(batches: Vec<RecordBatch>, partitions: usize, batch_rows: usize) -> Vec<Vec<RecordBatch>> {
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    let partitions = match rows <= batch_rows {
        true => 1,
        false => partitions,
    };
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
    fn small_files_are_picked_within_a_quarter_of_the_budget() {
        let file = |name: &str, bytes: u64| PartitionedFile::new(name, bytes);
        let files = vec![
            (file("a", 100), 300u64),
            (file("b", 100), MAX_ROWS + 1),
            (file("c", 150), 300),
            (file("d", 100), 300),
            (file("e", 50), 300),
        ];
        let (small, rest) = pick(files, 1_000);
        let names = |v: Vec<String>| v.join(",");
        let small: Vec<String> = small.iter().map(|f| f.object_meta.location.to_string()).collect();
        let rest: Vec<String> = rest.iter().map(|(f, _)| f.object_meta.location.to_string()).collect();
        // 250 bytes of room: a and c fill it; b is not small; d and e no longer fit.
        assert_eq!(names(small), "a,c");
        assert_eq!(names(rest), "b,d,e");
    }

    #[test]
    fn batches_are_dealt_into_non_empty_partitions() {
        let schema = Arc::new(arrow::datatypes::Schema::new(vec![arrow::datatypes::Field::new(
            "x",
            arrow::datatypes::DataType::Int64,
            false,
        )]));
        let b = RecordBatch::try_new(schema, vec![Arc::new(arrow::array::Int64Array::from(vec![1]))]).unwrap();
        assert_eq!(deal(vec![b.clone()], 4, 0).len(), 1);
        let parts = deal(vec![b.clone(), b.clone(), b.clone()], 2, 2);
        assert_eq!(parts.iter().map(|p| p.len()).collect::<Vec<_>>(), vec![2, 1]);
        // Rows of one batch together: one partition.
        assert_eq!(deal(vec![b.clone(), b.clone(), b.clone()], 2, 3).len(), 1);
        assert_eq!(deal(vec![], 2, 0).len(), 1);
    }
}
