//! The lake's object store as the query engine reads it: every failure names its object.
//!
//! DataFusion's Parquet reader reports a store error without the file it was reading (a request
//! S3 refuses after its retries, "Requested range was invalid" for a file shorter than its
//! manifest says). This wrapper puts the object's path into every read error, as an
//! [`ObjectFailure`] source that `error` classifies by type: a read past the end of an object is
//! corruption (the data file is truncated); other failures keep the store's own kind. Writes,
//! lists and deletes pass through unchanged.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetRange, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore, ObjectStoreExt,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, Result,
};

use crate::error::ObjectFailure;

/// Wraps a store so that read errors name their object.
#[derive(Debug)]
pub(crate) struct NamingStore {
    inner: Arc<dyn ObjectStore>,
}

impl NamingStore {
    pub(crate) fn wrap(inner: Arc<dyn ObjectStore>) -> Arc<dyn ObjectStore> {
        Arc::new(NamingStore { inner })
    }

    /// `e` (from reading `path`, wanting bytes up to `end`) with the path, and whether the object
    /// is shorter than asked.
    async fn name(&self, path: &Path, end: Option<u64>, e: object_store::Error) -> object_store::Error {
        use object_store::Error as O;
        match e {
            // These carry the path already, and callers match on them.
            O::NotFound { .. } | O::AlreadyExists { .. } | O::Precondition { .. } | O::NotModified { .. } => e,
            e => {
                let mut truncated_at = None;
                if let Some(end) = end {
                    if let Ok(meta) = self.inner.head(path).await {
                        if meta.size < end {
                            truncated_at = Some(meta.size);
                        }
                    }
                }
                O::Generic {
                    store: "varve",
                    source: Box::new(ObjectFailure {
                        path: path.to_string(),
                        truncated_at,
                        source: e,
                    }),
                }
            }
        }
    }
}

impl fmt::Display for NamingStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.inner)
    }
}

fn range_end(r: &Option<GetRange>) -> Option<u64> {
    match r {
        Some(GetRange::Bounded(b)) => Some(b.end),
        Some(GetRange::Offset(o)) => Some(*o + 1),
        _ => None,
    }
}

#[async_trait]
impl ObjectStore for NamingStore {
    async fn put_opts(&self, location: &Path, payload: PutPayload, opts: PutOptions) -> Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(&self, location: &Path, opts: PutMultipartOptions) -> Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        let end = range_end(&options.range);
        match self.inner.get_opts(location, options).await {
            Ok(r) => Ok(r),
            Err(e) => Err(self.name(location, end, e).await),
        }
    }

    async fn get_ranges(&self, location: &Path, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        match self.inner.get_ranges(location, ranges).await {
            Ok(r) => Ok(r),
            Err(e) => {
                let end = ranges.iter().map(|r| r.end).max();
                Err(self.name(location, end, e).await)
            }
        }
    }

    fn delete_stream(&self, locations: BoxStream<'static, Result<Path>>) -> BoxStream<'static, Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    fn list_with_offset(&self, prefix: Option<&Path>, offset: &Path) -> BoxStream<'static, Result<ObjectMeta>> {
        self.inner.list_with_offset(prefix, offset)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}
