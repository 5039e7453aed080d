//! What a merge of data files is (`MergeJob`: where merged files go and how they are cut, which
//! rows it keeps), what it wrote (`Merged`), and what the merge (`write::merge`) and its two
//! outputs (`write::output` row by row, `write::merge_columns` column by column) share: the
//! inputs' scans with their footers read once (`Footer`), the decoded input batches
//! (`InputBatch`), and where runs go (`RunSink`). The outputs import this file, never the merge.

use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use arrow::row::Rows;
use bytes::Bytes;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::ParquetFileReaderFactory;
use datafusion::datasource::physical_plan::{FileGroup, FileScanConfigBuilder, ParquetSource};
use datafusion::datasource::source::DataSourceExec;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::{SessionConfig, SessionContext};
use futures::future::BoxFuture;
use iceberg::spec::DataFile;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use parquet::arrow::arrow_reader::ArrowReaderOptions;
use parquet::arrow::async_reader::{AsyncFileReader, ParquetObjectReader};
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData};

use crate::error::{Error, Result};
use crate::format::properties::MaintenanceSettings;
use crate::format::TableContract;
use crate::storage::Storage;
use crate::write::keys::KeySet;

/// The URL under which compaction registers the lake's store in its DataFusion context.
pub(crate) const MERGE_STORE_URL: &str = "varve://maintain";
/// Rows per decoded batch: small enough that a few batches per input stay cheap with many inputs.
pub(crate) const MERGE_BATCH_ROWS: usize = 4096;
/// What merging one group of files wrote.
#[derive(Debug, Default)]
pub(crate) struct Merged {
    pub(crate) files: Vec<DataFile>,
    pub(crate) uploaded: Vec<Path>,
    pub(crate) rows: u64,
    pub(crate) bytes: u64,
    /// The footers (with page indexes) of `files`, with their paths and sizes, for the commit to
    /// keep (the head object carries the newest files' footers).
    pub(crate) footers: Vec<crate::write::WrittenFooter>,
}

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
    /// The path of a new data file of the job's partition (`write::encode::data_file_name`).
    pub(crate) fn new_data_file_path(&self) -> Path {
        let name = crate::write::encode::data_file_name(self.contract, self.partition);
        let mut path = self.table_prefix.clone();
        for part in name.split('/') {
            path = path.join(part);
        }
        path
    }

    /// The footers of `inputs` with their page indexes, read in parallel.
    ///
    /// Errors: a file that cannot be read or is not Parquet (named).
    pub(crate) async fn footers(&self, inputs: &[DataFile]) -> Result<Vec<Arc<ParquetMetaData>>> {
        futures::future::try_join_all(inputs.iter().map(|f| self.footer(f))).await
    }

    /// The footer of one data file with its page index (the offset index lets a reader of some
    /// rows fetch only their pages).
    ///
    /// Errors: the file cannot be read or is not Parquet (named).
    pub(crate) async fn footer(&self, file: &DataFile) -> Result<Arc<ParquetMetaData>> {
        let path = self.storage.path_of(file.file_path())?;
        let mut reader =
            ParquetObjectReader::new(self.storage.store.clone(), path).with_file_size(file.file_size_in_bytes());
        let options = ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Optional);
        reader
            .get_metadata(Some(&options))
            .await
            .map_err(|e| Error::from(e).context(format!("data file {}", file.file_path())))
    }

    /// A DataFusion context whose runtime reads the lake's store under [`MERGE_STORE_URL`].
    pub(crate) fn context(&self) -> Result<SessionContext> {
        let config = SessionConfig::new().with_batch_size(MERGE_BATCH_ROWS);
        let ctx = SessionContext::new_with_config(config);
        let url = url::Url::parse(MERGE_STORE_URL).map_err(|e| Error::internal(e.to_string()))?;
        ctx.runtime_env()
            .register_object_store(&url, self.storage.store.clone());
        Ok(ctx)
    }

    /// A Parquet scan of `groups` (one partition each) as the table's schema, projected to
    /// `projection` (column indices of the schema) when given, each partition read in order.
    pub(crate) fn scan(
        &self,
        groups: Vec<FileGroup>,
        projection: Option<Vec<usize>>,
        batch_rows: usize,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let source = ParquetSource::new(self.schema.clone())
            .with_parquet_file_reader_factory(Arc::new(FooterReaderFactory(self.storage.store.clone())));
        let scan = FileScanConfigBuilder::new(ObjectStoreUrl::parse(MERGE_STORE_URL)?, Arc::new(source))
            .with_expr_adapter(Some(Arc::new(crate::format::field_ids::FieldIdAdapterFactory)))
            .with_file_groups(groups)
            // Each partition must read its own input's chunks, in order: without this DataFusion
            // lets idle partitions take files queued for others (file stream work stealing).
            .with_preserve_order(true)
            .with_batch_size(Some(batch_rows))
            .with_projection_indices(projection)?;
        Ok(DataSourceExec::from_data_source(scan.build()))
    }
}

/// The Parquet metadata (with the page index) of a chunk's file, read once for all its chunks.
#[derive(Debug, Clone)]
pub(crate) struct Footer(pub(crate) Arc<ParquetMetaData>);

/// Opens the inputs' files for DataFusion's Parquet scan: a file planned with its footer read
/// ([`Footer`]) answers with it, so that the scan neither reads it again nor goes without the
/// offset index (DataFusion loads the page index only for a predicate); other files' readers read
/// their footer as usual.
#[derive(Debug)]
struct FooterReaderFactory(Arc<dyn ObjectStore>);

impl ParquetFileReaderFactory for FooterReaderFactory {
    fn create_reader(
        &self,
        _partition_index: usize,
        file: PartitionedFile,
        _metadata_size_hint: Option<usize>,
        _metrics: &ExecutionPlanMetricsSet,
    ) -> datafusion::error::Result<Box<dyn AsyncFileReader + Send>> {
        let path = file.object_meta.location.clone();
        let inner = ParquetObjectReader::new(self.0.clone(), path.clone()).with_file_size(file.object_meta.size);
        Ok(Box::new(FooterReader {
            inner,
            store: self.0.clone(),
            path,
            footer: file.extension::<Footer>().map(|f| f.0.clone()),
        }))
    }
}

struct FooterReader {
    inner: ParquetObjectReader,
    store: Arc<dyn ObjectStore>,
    path: Path,
    footer: Option<Arc<ParquetMetaData>>,
}

/// Page ranges of a chunk closer than this are fetched as one. (The store's own coalescing joins
/// ranges up to 1 MiB apart: the pages of the next column's chunk, and the rest of this column
/// between them, which a chunk of a large row group does not need and would hold in memory.)
const PAGE_COALESCE_BYTES: u64 = 64 * 1024;

impl AsyncFileReader for FooterReader {
    fn get_bytes(&mut self, range: std::ops::Range<u64>) -> BoxFuture<'_, parquet::errors::Result<Bytes>> {
        self.inner.get_bytes(range)
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<std::ops::Range<u64>>,
    ) -> BoxFuture<'_, parquet::errors::Result<Vec<Bytes>>> {
        let (store, path) = (self.store.clone(), self.path.clone());
        Box::pin(async move {
            let fetch = |r: std::ops::Range<u64>| {
                let (store, path) = (store.clone(), path.clone());
                async move { store.get_range(&path, r).await }
            };
            object_store::coalesce_ranges(&ranges, fetch, PAGE_COALESCE_BYTES)
                .await
                .map_err(|e| parquet::errors::ParquetError::External(Box::new(e)))
        })
    }

    fn get_metadata<'a>(
        &'a mut self,
        options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, parquet::errors::Result<Arc<ParquetMetaData>>> {
        match &self.footer {
            Some(f) => {
                let f = f.clone();
                Box::pin(async move { Ok(f) })
            }
            None => self.inner.get_metadata(options),
        }
    }
}

/// Where a merge's runs go: the row path's `write::output::Output` or the column path's
/// `write::merge_columns::ColumnOutput`.
pub(crate) trait RunSink {
    /// Takes rows `start..end` of `batch`, from input `input`, which follow every row taken before
    /// in sort order. `series` gives the sort keys of `batch` in row format and the bytes at the end
    /// of each that encode the time (the rest is the series key); `None` for a table without a
    /// series key.
    async fn run(
        &mut self,
        input: usize,
        batch: &InputBatch,
        series: Option<(&Rows, usize)>,
        start: usize,
        end: usize,
    ) -> Result<()>;
}

/// A decoded batch of one input with its keys in Arrow's row format.
pub(crate) struct InputBatch {
    /// The batch's rows, as the merge's (maybe projected) schema.
    pub(crate) rows: RecordBatch,
    /// (series key, time) of each row; `None` for a plain table (no sort order).
    pub(crate) sort: Option<Rows>,
    /// Arrow bytes per row (for the output's size estimate).
    pub(crate) row_bytes: usize,
    /// The input's row number of the batch's first row (among the rows kept: the file's row
    /// number when no filter applies).
    pub(crate) offset: u64,
}
