//! Merging data files of one partition into new ones: a streaming k-way merge into files sorted
//! by (series key, time), cut at the target size on series boundaries, optionally keeping only
//! some rows. Compaction merges many files; a delete's or a last-write-wins append's copy-on-write
//! rewrite passes one file with a [`Keep`] filter.
//!
//! The merge is DataFusion's `SortPreservingMergeExec` over one Parquet scan partition per input
//! file, each declared sorted by the table's sort order (which every Varve data file is: see
//! `write::encode`). Memory is about one row group per open input (the Parquet reader fetches a row
//! group's column chunks) plus one batch per input and the row group being written, never the
//! partition's size (inputs beyond 16 are merged in passes). Output row groups are encoded with
//! their columns in parallel (`write::parquet`) and streamed to the store with multipart uploads.
//!
//! Cutting rule: when the file being written reaches the target size, it is closed at the next
//! series boundary, so a series that fits in one file is never split over two files of the
//! partition (no reader has to merge files to answer a one-series query). Only a series larger than
//! the target may be split, and then not before the file reaches twice the target.

use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::compute::SortOptions;
use arrow::datatypes::SchemaRef;
use arrow::row::{OwnedRow, RowConverter, SortField};
use bytes::Bytes;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::{FileGroup, FileScanConfigBuilder, ParquetSource};
use datafusion::datasource::source::DataSourceExec;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::{LexOrdering, PhysicalExpr, PhysicalSortExpr};
use datafusion::physical_plan::filter::FilterExec;
use datafusion::physical_plan::sorts::sort_preserving_merge::SortPreservingMergeExec;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::{SessionConfig, SessionContext};
use futures::StreamExt;
use iceberg::spec::DataFile;
use object_store::path::Path;
use parquet::arrow::async_writer::{AsyncFileWriter, ParquetObjectWriter};

use crate::error::{Error, Result};
use crate::format::properties::MaintenanceSettings;
use crate::format::TableContract;
use crate::storage::Storage;
use crate::write::encode::{self, FileMetrics};
use crate::write::keys::KeySet;
use crate::write::parquet::ParquetWriter;

/// The URL under which compaction registers the lake's store in its DataFusion context.
const MERGE_STORE_URL: &str = "varve://maintain";
/// Rows per merged batch: small enough that one batch per input stays cheap with many inputs.
const MERGE_BATCH_ROWS: usize = 8192;

/// What merging one group of files wrote.
#[derive(Debug, Default)]
pub(crate) struct Merged {
    pub(crate) files: Vec<DataFile>,
    pub(crate) uploaded: Vec<Path>,
    pub(crate) rows: u64,
    pub(crate) bytes: u64,
}

/// Files merged in one pass. Each open input holds about one row group (a small file is one row
/// group), so a pass needs about this many row groups of memory; more inputs are merged in passes
/// through intermediate files.
const MAX_FAN_IN: usize = 16;

/// Where merged files go and how they are cut: the table, its contract, its current schema (the
/// inputs are read as this schema: columns a file lacks are nulls), the partition and the
/// table's file settings.
pub(crate) struct MergeJob<'a> {
    pub(crate) storage: &'a Storage,
    pub(crate) table_prefix: Path,
    pub(crate) schema: SchemaRef,
    pub(crate) contract: &'a TableContract,
    pub(crate) settings: &'a MaintenanceSettings,
    pub(crate) partition: Option<i32>,
}

/// Which rows a merge keeps.
#[derive(Clone)]
pub(crate) enum Keep {
    /// Rows for which the predicate is true (a delete's rewrite keeps `NOT (predicate)`).
    Matching(Arc<dyn PhysicalExpr>),
    /// Rows whose (series key, time) is not in the set (a last-write-wins append's rewrite of a
    /// file holding keys the append replaces).
    KeysNotIn(Arc<KeySet>),
}

impl MergeJob<'_> {
    /// Merges `inputs` (files of one partition, each sorted by the contract) into new files,
    /// keeping only the rows `keep` allows when given. More than [`MAX_FAN_IN`] inputs are merged
    /// in passes: groups of them into intermediate files (never committed, deleted at the end),
    /// then those. On error the files written so far are deleted.
    pub(crate) async fn merge(&self, inputs: &[DataFile], keep: Option<Keep>) -> Result<Merged> {
        if inputs.len() <= MAX_FAN_IN {
            return self.merge_pass(inputs, keep).await;
        }
        let mut intermediate = Merged::default();
        let mut result = Ok(());
        for chunk in inputs.chunks(MAX_FAN_IN) {
            match self.merge_pass(chunk, keep.clone()).await {
                Ok(m) => {
                    intermediate.files.extend(m.files);
                    intermediate.uploaded.extend(m.uploaded);
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        let out = match result {
            Ok(()) => Box::pin(self.merge(&intermediate.files, None)).await,
            Err(e) => Err(e),
        };
        self.storage.delete_quietly(&intermediate.uploaded).await;
        out
    }

    /// One merge pass over at most [`MAX_FAN_IN`] inputs.
    async fn merge_pass(&self, inputs: &[DataFile], keep: Option<Keep>) -> Result<Merged> {
        let mut out = Merged::default();
        match self.merge_into(inputs, keep, &mut out).await {
            Ok(()) => Ok(out),
            Err(e) => {
                self.storage.delete_quietly(&out.uploaded).await;
                Err(e)
            }
        }
    }

    async fn merge_into(&self, inputs: &[DataFile], keep: Option<Keep>, out: &mut Merged) -> Result<()> {
        let (storage, schema, contract) = (self.storage, &self.schema, self.contract);
        let config = SessionConfig::new().with_batch_size(MERGE_BATCH_ROWS);
        let ctx = SessionContext::new_with_config(config);
        let url = url::Url::parse(MERGE_STORE_URL).map_err(|e| Error::internal(e.to_string()))?;
        ctx.runtime_env().register_object_store(&url, storage.store.clone());

        let key_names: Vec<&str> = contract.series_key.iter().map(String::as_str).collect();
        let mut sort_exprs = Vec::new();
        for name in key_names.iter().copied().chain(contract.time_column.as_deref()) {
            let col = Column::new_with_schema(name, schema)?;
            sort_exprs.push(PhysicalSortExpr::new(Arc::new(col), SortOptions::default()));
        }
        let ordering = LexOrdering::new(sort_exprs);
        let groups = inputs
            .iter()
            .map(|f| {
                let path = storage.path_of(f.file_path())?;
                Ok(FileGroup::new(vec![PartitionedFile::new(
                    path.to_string(),
                    f.file_size_in_bytes(),
                )]))
            })
            .collect::<Result<Vec<_>>>()?;
        let source = ParquetSource::new(schema.clone());
        let mut scan = FileScanConfigBuilder::new(ObjectStoreUrl::parse(MERGE_STORE_URL)?, Arc::new(source))
            .with_expr_adapter(Some(Arc::new(crate::format::field_ids::FieldIdAdapterFactory)))
            .with_file_groups(groups)
            .with_batch_size(Some(MERGE_BATCH_ROWS));
        if let Some(o) = &ordering {
            scan = scan.with_output_ordering(vec![o.clone()]);
        }
        let mut exec: Arc<dyn ExecutionPlan> = DataSourceExec::from_data_source(scan.build());
        let mut keys_not_in = None;
        match keep {
            // A filter keeps each file's order and partitioning.
            Some(Keep::Matching(p)) => exec = Arc::new(FilterExec::try_new(p, exec)?),
            Some(Keep::KeysNotIn(set)) => keys_not_in = Some(set),
            None => {}
        }
        let mut streams = Vec::new();
        match ordering {
            Some(o) => {
                let merged = SortPreservingMergeExec::new(o, exec).with_fetch(None);
                streams.push(merged.execute(0, ctx.task_ctx())?);
            }
            // A plain table has no order: its files are concatenated.
            None => {
                for i in 0..inputs.len() {
                    streams.push(exec.execute(i, ctx.task_ctx())?);
                }
            }
        }

        let key_indices: Vec<usize> = key_names
            .iter()
            .map(|k| schema.index_of(k))
            .collect::<std::result::Result<_, _>>()?;
        let converter = RowConverter::new(
            key_indices
                .iter()
                .map(|i| SortField::new(schema.field(*i).data_type().clone()))
                .collect(),
        )?;
        let mut writer: Option<OutputFile> = None;
        let mut ratio = 1.0;
        let mut last_key: Option<OwnedRow> = None;
        let target = self.settings.target_file_size as usize;
        for mut stream in streams {
            while let Some(batch) = stream.next().await {
                let mut batch = batch?;
                if let Some(set) = &keys_not_in {
                    let stored = set.contains(&batch)?;
                    let kept = arrow::compute::not(&stored)?;
                    batch = arrow::compute::filter_record_batch(&batch, &kept)?;
                }
                if batch.num_rows() == 0 {
                    continue;
                }
                // Series boundaries in this batch: rows whose key differs from the row before.
                let keys = if key_indices.is_empty() {
                    None
                } else {
                    let cols: Vec<_> = key_indices.iter().map(|i| batch.column(*i).clone()).collect();
                    Some(converter.convert_columns(&cols)?)
                };
                let mut start = 0usize;
                while start < batch.num_rows() {
                    if writer.is_none() {
                        let f = OutputFile::open(self, ratio)?;
                        out.uploaded.push(f.path.clone());
                        writer = Some(f);
                    }
                    let size = writer.as_ref().map(|w| w.size()).unwrap_or(0);
                    let mut end = batch.num_rows();
                    if size >= target {
                        // Cut at the first series boundary at or after `start`, or anywhere past 2x.
                        let boundary = match &keys {
                            None => Some(start),
                            Some(rows) => (start..batch.num_rows()).find(|&i| {
                                let prev = if i == 0 {
                                    last_key.as_ref().map(|k| k.row())
                                } else {
                                    Some(rows.row(i - 1))
                                };
                                prev.is_none_or(|p| p != rows.row(i))
                            }),
                        };
                        let cut_at = match boundary {
                            Some(b) => Some(b),
                            None if size >= 2 * target => Some(start),
                            None => None,
                        };
                        if let Some(b) = cut_at {
                            if b == start {
                                if let Some(done) = writer.take() {
                                    ratio = done.close(contract, self.partition, out).await?;
                                }
                                continue;
                            }
                            end = b;
                        }
                    }
                    if let Some(w) = writer.as_mut() {
                        w.write(&batch.slice(start, end - start)).await?;
                    }
                    start = end;
                }
                if let Some(rows) = &keys {
                    last_key = Some(rows.row(batch.num_rows() - 1).owned());
                }
            }
        }
        if let Some(w) = writer.take() {
            w.close(contract, self.partition, out).await?;
        }
        Ok(())
    }
}

/// Rows of a row group are buffered as Arrow data until there are `varve.row-group-rows` of them
/// or they take this much memory, then encoded (columns in parallel) and streamed to the store.
const ROW_GROUP_MAX_BYTES: usize = 128 * 1024 * 1024;

/// One output file being written: the rows of the row group in progress are buffered, closed
/// row groups are encoded by [`ParquetWriter`] and uploaded as they close.
struct OutputFile {
    writer: ParquetWriter,
    sink: ParquetObjectWriter,
    pending: Vec<RecordBatch>,
    pending_rows: usize,
    /// Arrow bytes of `pending`.
    pending_bytes: usize,
    row_group_rows: usize,
    /// Encoded bytes per Arrow byte of the last row group (1 before any: an over-estimate, so a
    /// file is cut early rather than late).
    ratio: f64,
    metrics: FileMetrics,
    uploaded: u64,
    path: Path,
    location: String,
}

impl OutputFile {
    /// Opens a new data file of the job's partition; `ratio` carries the encoded-size estimate
    /// of the file before.
    fn open(job: &MergeJob<'_>, ratio: f64) -> Result<Self> {
        let (storage, schema, contract) = (job.storage, &job.schema, job.contract);
        let name = encode::data_file_name(contract, job.partition);
        let mut path = job.table_prefix.clone();
        for part in name.split('/') {
            path = path.join(part);
        }
        let row_group_rows = job.settings.row_group_rows.max(1);
        let props = encode::writer_properties(schema, contract, row_group_rows);
        Ok(OutputFile {
            writer: ParquetWriter::new(schema, props, job.settings.encode_threads)?,
            sink: ParquetObjectWriter::new(storage.store.clone(), path.clone()),
            pending: Vec::new(),
            pending_rows: 0,
            pending_bytes: 0,
            row_group_rows,
            ratio,
            metrics: FileMetrics::new(schema.clone()),
            uploaded: 0,
            location: storage.location(&path),
            path,
        })
    }

    /// Bytes encoded plus the estimated encoded size of the row group in progress.
    fn size(&self) -> usize {
        self.writer.bytes_written() + (self.pending_bytes as f64 * self.ratio) as usize
    }

    async fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.metrics.update(batch);
        let mut start = 0;
        while start < batch.num_rows() {
            let len = (self.row_group_rows - self.pending_rows).min(batch.num_rows() - start);
            let part = batch.slice(start, len);
            self.pending_bytes += part
                .columns()
                .iter()
                .map(|c| c.to_data().get_slice_memory_size().unwrap_or(0))
                .sum::<usize>();
            self.pending_rows += len;
            self.pending.push(part);
            start += len;
            if self.pending_rows >= self.row_group_rows || self.pending_bytes >= ROW_GROUP_MAX_BYTES {
                self.flush_row_group().await?;
            }
        }
        Ok(())
    }

    /// Encodes the buffered rows as a row group and uploads its bytes.
    async fn flush_row_group(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let before = self.writer.bytes_written();
        self.writer.write_row_group(&self.pending)?;
        if self.pending_bytes > 0 {
            self.ratio = (self.writer.bytes_written() - before) as f64 / self.pending_bytes as f64;
        }
        self.pending.clear();
        (self.pending_rows, self.pending_bytes) = (0, 0);
        let bytes = self.writer.take_bytes()?;
        self.upload(bytes).await
    }

    async fn upload(&mut self, bytes: Bytes) -> Result<()> {
        if !bytes.is_empty() {
            self.uploaded += bytes.len() as u64;
            self.sink.write(bytes).await?;
        }
        Ok(())
    }

    /// Finishes the file; returns the encoded-size estimate for the next one.
    async fn close(mut self, contract: &TableContract, partition: Option<i32>, out: &mut Merged) -> Result<f64> {
        self.flush_row_group().await?;
        let ratio = self.ratio;
        let (rest, meta) = self.writer.finish()?;
        self.uploaded += rest.len() as u64;
        self.sink.write(rest).await?;
        self.sink.complete().await?;
        let size = self.uploaded;
        let file = self.metrics.finish(&meta, contract, partition, &self.location, size)?;
        out.rows += file.record_count();
        out.bytes += size;
        out.files.push(file);
        Ok(ratio)
    }
}
