//! The Parquet reader of query scans: footers (with page indexes) come from the lake's footer
//! cache (`catalog::cache`) when a query read them before, else from the store, and go into it.
//!
//! DataFusion's `CachedParquetFileReaderFactory` does the same, but turns every error of the
//! footer read into text; here the error keeps its source, so that a missing data file stays
//! "not found", a truncated one "corruption" and a store failure "storage" (`crate::error`).
//! On object storage each reader also reads ahead (`query::scan::read_ahead`).

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::parquet::metadata::DFParquetMetadata;
use datafusion::datasource::physical_plan::parquet::CachedParquetFileReaderFactory;
use datafusion::datasource::physical_plan::ParquetFileReaderFactory;
use datafusion::execution::cache::cache_manager::FileMetadataCache;
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder, MetricCategory, MetricType};
use futures::future::BoxFuture;
use futures::FutureExt;
use object_store::{ObjectMeta, ObjectStore};
use parquet::arrow::arrow_reader::ArrowReaderOptions;
use parquet::arrow::async_reader::AsyncFileReader;
use parquet::errors::ParquetError;
use parquet::file::metadata::ParquetMetaData;

use crate::query::scan::read_ahead::{ReadAhead, ReadAheads};

/// Opens the data files of a scan with footers from `cache`.
#[derive(Debug)]
pub(crate) struct CachedFooters {
    store: Arc<dyn ObjectStore>,
    cache: Arc<dyn FileMetadataCache>,
    read_ahead: Option<ReadAheads>,
}

impl CachedFooters {
    /// Readers of files in `store`, their footers kept in `cache`, each fetching up to
    /// `read_ahead_bytes` of the row groups after the one it reads (`query::scan::read_ahead`; 0: none).
    pub(crate) fn new(store: Arc<dyn ObjectStore>, cache: Arc<dyn FileMetadataCache>, read_ahead_bytes: u64) -> Self {
        let read_ahead = (read_ahead_bytes > 0).then(|| ReadAheads::new(store.clone(), read_ahead_bytes));
        CachedFooters {
            store,
            cache,
            read_ahead,
        }
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
        let read_ahead = self.read_ahead.as_ref().map(|ahead| {
            // Counted as DataFusion's reader counts what it reads (`ParquetFileMetrics`).
            let scanned = MetricBuilder::new(metrics)
                .with_new_label("filename", file.object_meta.location.to_string())
                .with_type(MetricType::Summary)
                .with_category(MetricCategory::Bytes)
                .counter("bytes_scanned", partition_index);
            ahead.reader(&file, scanned)
        });
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
            read_ahead,
        }))
    }
}

struct CachedFooterReader {
    bytes: Box<dyn AsyncFileReader + Send>,
    store: Arc<dyn ObjectStore>,
    cache: Arc<dyn FileMetadataCache>,
    meta: ObjectMeta,
    metadata_size_hint: Option<usize>,
    read_ahead: Option<ReadAhead>,
}

impl AsyncFileReader for CachedFooterReader {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, parquet::errors::Result<Bytes>> {
        if let Some(ahead) = self
            .read_ahead
            .as_mut()
            .and_then(|r| r.read(std::slice::from_ref(&range)))
        {
            return async move { Ok(ahead.await?.remove(0)) }.boxed();
        }
        self.bytes.get_bytes(range)
    }

    fn get_byte_ranges(&mut self, ranges: Vec<Range<u64>>) -> BoxFuture<'_, parquet::errors::Result<Vec<Bytes>>> {
        if let Some(ahead) = self.read_ahead.as_mut().and_then(|r| r.read(&ranges)) {
            return ahead;
        }
        self.bytes.get_byte_ranges(ranges)
    }

    fn get_metadata<'a>(
        &'a mut self,
        options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, parquet::errors::Result<Arc<ParquetMetaData>>> {
        async move {
            let metadata = DFParquetMetadata::new(self.store.as_ref(), &self.meta)
                .with_file_metadata_cache(Some(self.cache.clone()))
                .with_metadata_size_hint(self.metadata_size_hint)
                .with_page_index_policy(options.map(|o| o.column_index_policy()))
                .fetch_metadata()
                .await
                .map_err(|e| ParquetError::External(Box::new(e)))?;
            if let Some(r) = self.read_ahead.as_mut() {
                r.set_metadata(metadata.clone());
            }
            Ok(metadata)
        }
        .boxed()
    }
}
