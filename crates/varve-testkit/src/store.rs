//! The instrumented object store: counts storage requests by kind and bytes moved, records the
//! dependent round trips (the longest chain of requests each of which started after the one
//! before it ended: what a client waits for when every request costs a network round trip), and
//! can stand in for a remote object store by adding a delay to every request and capping each
//! response's bandwidth. Used by the benchmark suite and by tests that assert request counts.
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
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use futures::stream::BoxStream;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore, PutMultipartOptions,
    PutOptions, PutPayload, PutResult, RenameOptions, Result, UploadPart,
};
use serde::{Deserialize, Serialize};

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
    /// Dependent round trips: the longest chain of requests each of which started after the one
    /// before it ended ([`Counters::round_trips_since`]); 0 when read from [`Counters::snapshot`].
    #[serde(default)]
    pub round_trips: u64,
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
            round_trips: self.round_trips,
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
    /// When each request started and ended, and the object it asked for (the prefix of a
    /// listing; empty for deletes).
    spans: Mutex<Vec<(Instant, Instant, String)>>,
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
            round_trips: 0,
        }
    }

    /// The counts since `earlier` (a [`Counters::snapshot`]) with the dependent round trips of the
    /// requests that started at or after `since`.
    pub fn since(&self, earlier: &Requests, since: Instant) -> Requests {
        self.since_excluding(earlier, since, |_| false)
    }

    /// [`Counters::since`] with the round trips of [`Counters::round_trips_since_excluding`].
    pub fn since_excluding(&self, earlier: &Requests, since: Instant, exclude: impl Fn(&str) -> bool) -> Requests {
        let mut r = self.snapshot().since(earlier);
        r.round_trips = self.round_trips_since_excluding(since, exclude);
        r
    }

    /// The longest chain of requests, started at or after `since`, in which each request started
    /// after the one before it ended: the round trips a client waited for one after another.
    /// Requests that overlap count once (they were made in parallel).
    pub fn round_trips_since(&self, since: Instant) -> u64 {
        self.round_trips_since_excluding(since, |_| false)
    }

    /// [`Counters::round_trips_since`] leaving out the requests for objects `exclude` names (by
    /// path): work a caller does not wait for, such as what a commit publishes after it answered,
    /// which a loaded machine may finish before the caller's own last request is counted.
    pub fn round_trips_since_excluding(&self, since: Instant, exclude: impl Fn(&str) -> bool) -> u64 {
        let spans: Vec<(Instant, Instant)> = self
            .spans
            .lock()
            .map(|s| {
                s.iter()
                    .filter(|(start, _, path)| *start >= since && !exclude(path))
                    .map(|(start, end, _)| (*start, *end))
                    .collect()
            })
            .unwrap_or_default();
        longest_chain(&spans)
    }

    fn record(&self, start: Instant, path: Option<&Path>) {
        self.record_with(start, path, &String::new)
    }

    /// [`Counters::record`] with a detail for the trace (a GET's byte range), made only when
    /// tracing.
    fn record_with(&self, start: Instant, path: Option<&Path>, detail: &dyn Fn() -> String) {
        // A request takes time: an instant answer still ends after it started.
        let end = Instant::now().max(start + Duration::from_nanos(1));
        let path = path.map(|p| p.to_string()).unwrap_or_default();
        trace(start, end, &path, detail);
        if let Ok(mut s) = self.spans.lock() {
            s.push((start, end, path));
        }
    }
}

/// With `VARVE_TRACE_REQUESTS` set, prints each request to stderr as it ends: its start (ms
/// after the start of the first request to end in the process; 0 for one that started before it)
/// and duration in ms, its object and `detail` (a diagnostic of which requests waited on which).
fn trace(start: Instant, end: Instant, path: &str, detail: &dyn Fn() -> String) {
    static ON: std::sync::OnceLock<Option<Instant>> = std::sync::OnceLock::new();
    if let Some(epoch) = ON.get_or_init(|| std::env::var_os("VARVE_TRACE_REQUESTS").map(|_| start)) {
        let ms = |t: Instant| t.saturating_duration_since(*epoch).as_secs_f64() * 1000.0;
        eprintln!(
            "request: start {:8.2} ms  took {:7.2} ms  {path} {}",
            ms(start),
            (end - start).as_secs_f64() * 1000.0,
            detail()
        );
    }
}

/// The longest chain of spans each starting at or after the end of the one before (module docs).
fn longest_chain(spans: &[(Instant, Instant)]) -> u64 {
    // Events in time order, ends before starts at the same instant; a start's chain is one more
    // than the longest chain that ended before it.
    let mut events: Vec<(Instant, u8, usize)> = Vec::with_capacity(spans.len() * 2);
    for (i, (start, end)) in spans.iter().enumerate() {
        events.push((*start, 1, i));
        events.push((*end, 0, i));
    }
    events.sort();
    let mut chain = vec![0u64; spans.len()];
    let (mut ended, mut longest) = (0u64, 0u64);
    for (_, kind, i) in events {
        if kind == 1 {
            chain[i] = ended + 1;
            longest = longest.max(chain[i]);
        } else {
            ended = ended.max(chain[i]);
        }
    }
    longest
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
        let start = Instant::now();
        self.latency.request().await;
        let r = self.inner.put_opts(location, payload, opts).await;
        self.counters.record(start, Some(location));
        r
    }

    async fn put_multipart_opts(&self, location: &Path, opts: PutMultipartOptions) -> Result<Box<dyn MultipartUpload>> {
        inc(&self.counters.put, 1);
        let start = Instant::now();
        self.latency.request().await;
        let inner = self.inner.put_multipart_opts(location, opts).await;
        self.counters.record(start, Some(location));
        let inner = inner?;
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
        let start = Instant::now();
        self.latency.request().await;
        let r = self.inner.get_opts(location, options).await;
        let r = match r {
            Ok(r) => r,
            Err(e) => {
                self.counters.record(start, Some(location));
                return Err(e);
            }
        };
        if !head {
            let bytes = r.range.end - r.range.start;
            inc(&self.counters.bytes_read, bytes);
            self.latency.transfer(bytes).await;
        }
        let range = r.range.clone();
        let detail = move || match head {
            true => "HEAD".to_string(),
            false => format!("{range:?}"),
        };
        self.counters.record_with(start, Some(location), &detail);
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
                        let start = Instant::now();
                        latency.request().await;
                        counters.record(start, l.as_ref().ok());
                    }
                    l
                }
            })
            .boxed();
        self.inner.delete_stream(counted)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        inc(&self.counters.list, 1);
        recorded(self.counters.clone(), delayed(self.latency, self.inner.list(prefix)))
    }

    fn list_with_offset(&self, prefix: Option<&Path>, offset: &Path) -> BoxStream<'static, Result<ObjectMeta>> {
        inc(&self.counters.list, 1);
        recorded(
            self.counters.clone(),
            delayed(self.latency, self.inner.list_with_offset(prefix, offset)),
        )
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        inc(&self.counters.list, 1);
        let start = Instant::now();
        self.latency.request().await;
        let r = self.inner.list_with_delimiter(prefix).await;
        self.counters.record(start, prefix);
        r
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        inc(&self.counters.copy, 1);
        let start = Instant::now();
        self.latency.request().await;
        let r = self.inner.copy_opts(from, to, options).await;
        self.counters.record(start, Some(to));
        r
    }

    async fn rename_opts(&self, from: &Path, to: &Path, options: RenameOptions) -> Result<()> {
        inc(&self.counters.rename, 1);
        let start = Instant::now();
        self.latency.request().await;
        let r = self.inner.rename_opts(from, to, options).await;
        self.counters.record(start, Some(to));
        r
    }
}

/// A listing recorded as one request, from its start to its last entry.
fn recorded(
    counters: Arc<Counters>,
    s: BoxStream<'static, Result<ObjectMeta>>,
) -> BoxStream<'static, Result<ObjectMeta>> {
    let start = Instant::now();
    s.chain(
        futures::stream::once(async move {
            counters.record(start, None);
            None
        })
        .filter_map(|x: Option<Result<ObjectMeta>>| async move { x }),
    )
    .boxed()
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
        let (latency, counters) = (self.latency, self.counters.clone());
        Box::pin(async move {
            let start = Instant::now();
            latency.request().await;
            let r = part.await;
            counters.record(start, None);
            r
        })
    }

    async fn complete(&mut self) -> Result<PutResult> {
        inc(&self.counters.put, 1);
        let start = Instant::now();
        self.latency.request().await;
        let r = self.inner.complete().await;
        self.counters.record(start, None);
        r
    }

    async fn abort(&mut self) -> Result<()> {
        inc(&self.counters.delete, 1);
        self.latency.request().await;
        self.inner.abort().await
    }
}
