//! The instrumented object store: counts storage requests by kind and bytes moved, and can stand
//! in for a remote object store by adding a delay to every request and capping each response's
//! bandwidth (object_store's `ThrottledStore` underneath).
//!
//! Kinds: GET (a whole object), ranged GET (a byte range), HEAD, PUT (a put, or each part and the
//! completion of a multipart upload), LIST (a listing call), DELETE (per object), COPY.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures::stream::BoxStream;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use varve::object_store::path::Path;
use varve::object_store::throttle::{ThrottleConfig, ThrottledStore};
use varve::object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore, PutMultipartOptions,
    PutOptions, PutPayload, PutResult, Result, UploadPart,
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
    /// Bytes returned by GETs.
    pub bytes_read: u64,
    /// Bytes sent by PUTs.
    pub bytes_written: u64,
}

impl Requests {
    /// All requests.
    pub fn total(&self) -> u64 {
        self.get + self.ranged_get + self.head + self.put + self.list + self.delete + self.copy
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
    /// Whether it adds anything.
    pub fn is_some(&self) -> bool {
        self.delay_ms > 0.0 || self.bandwidth.is_some()
    }
}

/// Wraps `inner`: the throttle (when `latency` adds anything) under the counters, so every
/// request the engine makes is counted once and delayed once.
pub fn instrument(inner: Arc<dyn ObjectStore>, latency: Latency, counters: Arc<Counters>) -> Arc<dyn ObjectStore> {
    let inner = if latency.is_some() {
        let d = Duration::from_secs_f64(latency.delay_ms / 1000.0);
        let per_byte = latency
            .bandwidth
            .map(|b| Duration::from_secs_f64(1.0 / b as f64))
            .unwrap_or_default();
        let config = ThrottleConfig {
            wait_delete_per_call: d,
            wait_get_per_byte: per_byte,
            wait_get_per_call: d,
            wait_list_per_call: d,
            wait_list_with_delimiter_per_call: d,
            wait_put_per_call: d,
            ..Default::default()
        };
        Arc::new(ThrottledStore::new(inner, config)) as Arc<dyn ObjectStore>
    } else {
        inner
    };
    Arc::new(CountingStore { inner, counters })
}

/// An object store that counts the requests made through it.
#[derive(Debug)]
pub struct CountingStore {
    inner: Arc<dyn ObjectStore>,
    counters: Arc<Counters>,
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
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(&self, location: &Path, opts: PutMultipartOptions) -> Result<Box<dyn MultipartUpload>> {
        inc(&self.counters.put, 1);
        let inner = self.inner.put_multipart_opts(location, opts).await?;
        Ok(Box::new(CountingUpload {
            inner,
            counters: self.counters.clone(),
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
        let r = self.inner.get_opts(location, options).await?;
        if !head {
            inc(&self.counters.bytes_read, r.range.end - r.range.start);
        }
        Ok(r)
    }

    // `get_ranges` is left to the default, which makes one ranged `get_opts` per coalesced range
    // through this store: those are the requests a remote store sees, each counted and delayed.

    fn delete_stream(&self, locations: BoxStream<'static, Result<Path>>) -> BoxStream<'static, Result<Path>> {
        let counters = self.counters.clone();
        let counted = locations
            .inspect(move |l| {
                if l.is_ok() {
                    inc(&counters.delete, 1);
                }
            })
            .boxed();
        self.inner.delete_stream(counted)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        inc(&self.counters.list, 1);
        self.inner.list(prefix)
    }

    fn list_with_offset(&self, prefix: Option<&Path>, offset: &Path) -> BoxStream<'static, Result<ObjectMeta>> {
        inc(&self.counters.list, 1);
        self.inner.list_with_offset(prefix, offset)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        inc(&self.counters.list, 1);
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        inc(&self.counters.copy, 1);
        self.inner.copy_opts(from, to, options).await
    }
}

#[derive(Debug)]
struct CountingUpload {
    inner: Box<dyn MultipartUpload>,
    counters: Arc<Counters>,
}

#[async_trait]
impl MultipartUpload for CountingUpload {
    fn put_part(&mut self, data: PutPayload) -> UploadPart {
        inc(&self.counters.put, 1);
        inc(&self.counters.bytes_written, data.content_length() as u64);
        self.inner.put_part(data)
    }

    async fn complete(&mut self) -> Result<PutResult> {
        inc(&self.counters.put, 1);
        self.inner.complete().await
    }

    async fn abort(&mut self) -> Result<()> {
        self.inner.abort().await
    }
}
