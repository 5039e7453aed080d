//! The Parquet reader of query scans: footers (with page indexes) come from the lake's footer
//! cache (`catalog::cache`) when a query read them before, else from the store, and go into it.
//!
//! DataFusion's `CachedParquetFileReaderFactory` does the same, but turns every error of the
//! footer read into text; here the error keeps its source, so that a missing data file stays
//! "not found", a truncated one "corruption" and a store failure "storage" (`crate::error`).

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::parquet::metadata::DFParquetMetadata;
use datafusion::datasource::physical_plan::parquet::CachedParquetFileReaderFactory;
use datafusion::datasource::physical_plan::ParquetFileReaderFactory;
use datafusion::execution::cache::cache_manager::FileMetadataCache;
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use futures::future::BoxFuture;
use futures::FutureExt;
use object_store::{ObjectMeta, ObjectStore};
use parquet::arrow::arrow_reader::ArrowReaderOptions;
use parquet::arrow::async_reader::AsyncFileReader;
use parquet::errors::ParquetError;
use parquet::file::metadata::ParquetMetaData;

/// Opens the data files of a scan with footers from `cache`.
#[derive(Debug)]
pub(crate) struct CachedFooters {
    store: Arc<dyn ObjectStore>,
    cache: Arc<dyn FileMetadataCache>,
}

impl CachedFooters {
    /// Readers of files in `store`, their footers kept in `cache`.
    pub(crate) fn new(store: Arc<dyn ObjectStore>, cache: Arc<dyn FileMetadataCache>) -> Self {
        CachedFooters { store, cache }
    }
}

impl ParquetFileReaderFactory for CachedFooters {
    fn create_reader(
        &self,
        partition_index: usize,
        file: PartitionedFile,
        metadata_size_hint: Option<usize>,
        metrics: &ExecutionPlanMetricsSet,
    ) -> datafusion::error::Result<Box<dyn AsyncFileReader + Send>> {
        let meta = file.object_meta.clone();
        // Byte ranges through DataFusion's reader, which counts them in the scan's metrics.
        let bytes = CachedParquetFileReaderFactory::new(self.store.clone(), self.cache.clone()).create_reader(
            partition_index,
            file,
            metadata_size_hint,
            metrics,
        )?;
        Ok(Box::new(CachedFooterReader {
            bytes,
            store: self.store.clone(),
            cache: self.cache.clone(),
            meta,
            metadata_size_hint,
        }))
    }
}

struct CachedFooterReader {
    bytes: Box<dyn AsyncFileReader + Send>,
    store: Arc<dyn ObjectStore>,
    cache: Arc<dyn FileMetadataCache>,
    meta: ObjectMeta,
    metadata_size_hint: Option<usize>,
}

impl AsyncFileReader for CachedFooterReader {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, parquet::errors::Result<Bytes>> {
        self.bytes.get_bytes(range)
    }

    fn get_byte_ranges(&mut self, ranges: Vec<Range<u64>>) -> BoxFuture<'_, parquet::errors::Result<Vec<Bytes>>> {
        self.bytes.get_byte_ranges(ranges)
    }

    fn get_metadata<'a>(
        &'a mut self,
        options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, parquet::errors::Result<Arc<ParquetMetaData>>> {
        async move {
            DFParquetMetadata::new(self.store.as_ref(), &self.meta)
                .with_file_metadata_cache(Some(self.cache.clone()))
                .with_metadata_size_hint(self.metadata_size_hint)
                .with_page_index_policy(options.map(|o| o.column_index_policy()))
                .fetch_metadata()
                .await
                .map_err(|e| ParquetError::External(Box::new(e)))
        }
        .boxed()
    }
}
