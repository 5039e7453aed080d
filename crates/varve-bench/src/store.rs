//! The instrumented object store: counts storage requests by kind and bytes moved, and can stand
//! in for a remote object store by adding a delay to every request and capping each response's
//! bandwidth.
//!
//! Kinds: GET (a whole object), ranged GET (a byte range), HEAD, PUT (a put, the start, each part
//! and the completion of a multipart upload), LIST (a listing call: S3 pages every 1,000 keys, so
//! a listing of more keys is more requests there), DELETE (per object, including an aborted
//! multipart upload; S3 batches up to 1,000), COPY, RENAME.
//!
//! The latency is applied here rather than with object_store's `ThrottledStore`, whose per-byte
//! wait is whole nanoseconds per byte (a 1 GiB/s cap rounds to none) slept per stream chunk at
//! the timer's millisecond resolution, and which cannot wrap local files.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures::stream::BoxStream;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use varve::object_store::path::Path;
use varve::object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore, PutMultipartOptions,
    PutOptions, PutPayload, PutResult, RenameOptions, Result, UploadPart,
};

/// Request counts and bytes, as plain numbers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Requests {
    /// Whole-object GETs.
    pub get: u64,
    /// Ranged GETs.
    pub ranged_get: u64,
    /// HEADs.
    pub head: u64,
    /// PUTs (multipart parts and completions count one each).
    pub put: u64,
    /// LIST calls.
    pub list: u64,
    /// Objects deleted.
    pub delete: u64,
    /// Copies.
    pub copy: u64,
    /// Renames.
    pub rename: u64,
    /// Bytes returned by GETs.
    pub bytes_read: u64,
    /// Bytes sent by PUTs.
    pub bytes_written: u64,
}

impl Requests {
    /// All requests.
    pub fn total(&self) -> u64 {
        self.get + self.ranged_get + self.head + self.put + self.list + self.delete + self.copy + self.rename
    }

    /// Counts since `earlier`.
    pub fn since(&self, earlier: &Requests) -> Requests {
        Requests {
            get: self.get - earlier.get,
            ranged_get: self.ranged_get - earlier.ranged_get,
            head: self.head - earlier.head,
            put: self.put - earlier.put,
            list: self.list - earlier.list,
            delete: self.delete - earlier.delete,
            copy: self.copy - earlier.copy,
            rename: self.rename - earlier.rename,
            bytes_read: self.bytes_read - earlier.bytes_read,
            bytes_written: self.bytes_written - earlier.bytes_written,
        }
    }
}

/// Live counters shared by a [`CountingStore`] and whoever reads them.
#[derive(Debug, Default)]
pub struct Counters {
    get: AtomicU64,
    ranged_get: AtomicU64,
    head: AtomicU64,
    put: AtomicU64,
    list: AtomicU64,
    delete: AtomicU64,
    copy: AtomicU64,
    rename: AtomicU64,
    bytes_read: AtomicU64,
    bytes_written: AtomicU64,
}

fn inc(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

impl Counters {
    /// The counts now.
    pub fn snapshot(&self) -> Requests {
        let l = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Requests {
            get: l(&self.get),
            ranged_get: l(&self.ranged_get),
            head: l(&self.head),
            put: l(&self.put),
            list: l(&self.list),
            delete: l(&self.delete),
            copy: l(&self.copy),
            rename: l(&self.rename),
            bytes_read: l(&self.bytes_read),
            bytes_written: l(&self.bytes_written),
        }
    }
}

/// Injected latency: a delay before every request and a cap on each response's bandwidth.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Delay per request, ms.
    pub delay_ms: f64,
    /// Bandwidth cap per response, bytes/s (`None`: no cap).
    pub bandwidth: Option<u64>,
}

impl Latency {
    /// Waits as a remote store would before answering a request.
    async fn request(&self) {
        if self.delay_ms > 0.0 {
            tokio::time::sleep(Duration::from_secs_f64(self.delay_ms / 1000.0)).await;
        }
    }

    /// Waits for `bytes` to arrive at the capped bandwidth.
    async fn transfer(&self, bytes: u64) {
        if let Some(bw) = self.bandwidth {
            tokio::time::sleep(Duration::from_secs_f64(bytes as f64 / bw as f64)).await;
        }
    }
}

/// Wraps `inner` so every request the engine makes is counted once and, with `latency`,
/// delayed once (and a response's bytes arrive at the capped bandwidth).
pub fn instrument(inner: Arc<dyn ObjectStore>, latency: Latency, counters: Arc<Counters>) -> Arc<dyn ObjectStore> {
    Arc::new(CountingStore {
        inner,
        counters,
        latency,
    })
}

/// An object store that counts the requests made through it.
#[derive(Debug)]
pub struct CountingStore {
    inner: Arc<dyn ObjectStore>,
    counters: Arc<Counters>,
    latency: Latency,
}

impl fmt::Display for CountingStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Counting({})", self.inner)
    }
}

#[async_trait]
impl ObjectStore for CountingStore {
    async fn put_opts(&self, location: &Path, payload: PutPayload, opts: PutOptions) -> Result<PutResult> {
        inc(&self.counters.put, 1);
        inc(&self.counters.bytes_written, payload.content_length() as u64);
        self.latency.request().await;
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(&self, location: &Path, opts: PutMultipartOptions) -> Result<Box<dyn MultipartUpload>> {
        inc(&self.counters.put, 1);
        self.latency.request().await;
        let inner = self.inner.put_multipart_opts(location, opts).await?;
        Ok(Box::new(CountingUpload {
            inner,
            counters: self.counters.clone(),
            latency: self.latency,
        }))
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        if options.head {
            inc(&self.counters.head, 1);
        } else if options.range.is_some() {
            inc(&self.counters.ranged_get, 1);
        } else {
            inc(&self.counters.get, 1);
        }
        let head = options.head;
        self.latency.request().await;
        let r = self.inner.get_opts(location, options).await?;
        if !head {
            let bytes = r.range.end - r.range.start;
            inc(&self.counters.bytes_read, bytes);
            self.latency.transfer(bytes).await;
        }
        Ok(r)
    }

    // `get_ranges` is left to the default, which makes one ranged `get_opts` per coalesced range
    // through this store: those are the requests a remote store sees, each counted and delayed.

    fn delete_stream(&self, locations: BoxStream<'static, Result<Path>>) -> BoxStream<'static, Result<Path>> {
        let counters = self.counters.clone();
        let latency = self.latency;
        let counted = locations
            .then(move |l| {
                let counters = counters.clone();
                async move {
                    if l.is_ok() {
                        inc(&counters.delete, 1);
                        latency.request().await;
                    }
                    l
                }
            })
            .boxed();
        self.inner.delete_stream(counted)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        inc(&self.counters.list, 1);
        delayed(self.latency, self.inner.list(prefix))
    }

    fn list_with_offset(&self, prefix: Option<&Path>, offset: &Path) -> BoxStream<'static, Result<ObjectMeta>> {
        inc(&self.counters.list, 1);
        delayed(self.latency, self.inner.list_with_offset(prefix, offset))
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        inc(&self.counters.list, 1);
        self.latency.request().await;
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        inc(&self.counters.copy, 1);
        self.latency.request().await;
        self.inner.copy_opts(from, to, options).await
    }

    async fn rename_opts(&self, from: &Path, to: &Path, options: RenameOptions) -> Result<()> {
        inc(&self.counters.rename, 1);
        self.latency.request().await;
        self.inner.rename_opts(from, to, options).await
    }
}

/// A listing that answers after the request delay.
fn delayed(latency: Latency, s: BoxStream<'static, Result<ObjectMeta>>) -> BoxStream<'static, Result<ObjectMeta>> {
    if latency.delay_ms <= 0.0 {
        return s;
    }
    futures::stream::once(async move {
        latency.request().await;
        s
    })
    .flatten()
    .boxed()
}

#[derive(Debug)]
struct CountingUpload {
    inner: Box<dyn MultipartUpload>,
    counters: Arc<Counters>,
    latency: Latency,
}

#[async_trait]
impl MultipartUpload for CountingUpload {
    fn put_part(&mut self, data: PutPayload) -> UploadPart {
        inc(&self.counters.put, 1);
        inc(&self.counters.bytes_written, data.content_length() as u64);
        let part = self.inner.put_part(data);
        let latency = self.latency;
        Box::pin(async move {
            latency.request().await;
            part.await
        })
    }

    async fn complete(&mut self) -> Result<PutResult> {
        inc(&self.counters.put, 1);
        self.latency.request().await;
        self.inner.complete().await
    }

    async fn abort(&mut self) -> Result<()> {
        inc(&self.counters.delete, 1);
        self.latency.request().await;
        self.inner.abort().await
    }
}
