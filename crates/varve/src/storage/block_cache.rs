//! The block cache: an object store in front of the lake's store that keeps the bytes of immutable
//! objects (data files, delete files, manifests, manifest lists and last-value indexes: every
//! `.parquet` and `.avro` object, which Varve writes once under a fresh name and never rewrites) in
//! blocks of `cache-block-bytes` (`storage::options`), in memory and optionally in a directory on
//! local disk that processes share. Other objects (metadata JSON, version hints, namespace
//! markers) and conditional reads pass through.
//!
//! A read names the blocks it needs; blocks found in memory, then on disk, are used as they are;
//! the missing ones are fetched at once, as GETs of at most `cache-request-bytes` each (consecutive
//! missing blocks share a GET, and so do missing blocks at most `cache-coalesce-bytes` apart: the
//! blocks between are fetched and dropped), made in parallel. A block another read is already
//! fetching is waited for, not fetched twice (concurrent readers of one file, a scan's read-ahead
//! and its reader); if that fetch fails or is dropped, the waiting read fetches the block itself.
//! A block on disk is one file holding a header (the object's path, the block's number and the
//! block size, so that a name collision or another size is noticed) and a CRC-32 of the data: a
//! block whose header or checksum does not match is deleted and fetched again. Blocks are written
//! to a temporary name and renamed, so another process never reads half a block.
//!
//! Objects read again soon are kept as a whole without being asked for: the metadata objects the
//! engine writes under a table's `metadata/` folder (manifests, manifest lists, last-value
//! indexes: kept as they are written), objects read whole before their size was known, and the
//! objects a table's head object carries (`catalog::head`). Scans tell the cache the sizes of the
//! data files they will read (from the manifests), so a first read fetches its blocks at once.
//!
//! Memory is bounded by `cache-memory-bytes` and the disk by `cache-disk-bytes` (this process's
//! count, started from the directory's contents), least recently and frequently used out first
//! (moka's TinyLFU). Statistics ([`CacheStats`]) count blocks and bytes.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::io::Write;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use bytes::{Bytes, BytesMut};
use futures::channel::oneshot;
use futures::future::{FutureExt, Shared};
use futures::stream::BoxStream;
use futures::StreamExt;
use moka::notification::RemovalCause;
use moka::sync::Cache;
use object_store::path::Path;
use object_store::{
    Attributes, CopyOptions, GetOptions, GetRange, GetResult, GetResultPayload, ListResult, MultipartUpload,
    ObjectMeta, ObjectStore, ObjectStoreExt, PutMultipartOptions, PutOptions, PutPayload, PutResult, Result,
};

use crate::storage::options::{CacheMode, LakeOptions};

/// Objects of at most this size are kept whole when written under a table's `metadata/` folder
/// (`<namespace>/<table>/metadata/`),
/// or when read whole before their size was known: manifests, manifest lists and last-value
/// indexes, which are read again soon (by the head object, the next commit, the next query).
/// Larger ones are read by ranges, block by block.
const WRITE_THROUGH_BYTES: u64 = 8 << 20;

/// What the block cache did since the lake was opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct CacheStats {
    /// Blocks found in memory.
    pub memory_hits: u64,
    /// Blocks found in the disk cache (then kept in memory too).
    pub disk_hits: u64,
    /// Blocks fetched from the store.
    pub misses: u64,
    /// GET requests the cache made to the store.
    pub requests: u64,
    /// Bytes fetched from the store.
    pub fetched_bytes: u64,
    /// Bytes served to readers from memory or disk.
    pub hit_bytes: u64,
    /// Disk blocks refused because their header or checksum did not match (then fetched again).
    pub corrupt_blocks: u64,
    /// Bytes held in memory now.
    pub memory_bytes: u64,
    /// Bytes this process counts in the disk cache now.
    pub disk_bytes: u64,
}

impl CacheStats {
    /// The counters of `self` minus those of `before` (the sizes are `self`'s).
    pub fn since(&self, before: &CacheStats) -> CacheStats {
        CacheStats {
            memory_hits: self.memory_hits - before.memory_hits,
            disk_hits: self.disk_hits - before.disk_hits,
            misses: self.misses - before.misses,
            requests: self.requests - before.requests,
            fetched_bytes: self.fetched_bytes - before.fetched_bytes,
            hit_bytes: self.hit_bytes - before.hit_bytes,
            corrupt_blocks: self.corrupt_blocks - before.corrupt_blocks,
            memory_bytes: self.memory_bytes,
            disk_bytes: self.disk_bytes,
        }
    }
}

#[derive(Debug, Default)]
struct Counters {
    memory_hits: AtomicU64,
    disk_hits: AtomicU64,
    misses: AtomicU64,
    requests: AtomicU64,
    fetched_bytes: AtomicU64,
    hit_bytes: AtomicU64,
    corrupt_blocks: AtomicU64,
}

fn add(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

/// A block: the object's path and the block's number.
type Key = (String, u64);

/// A block being fetched: the fetching read's claim number and the block's bytes once it has them
/// (an error when the fetch failed or was dropped).
type Pending = (u64, Waiting);

/// What a read waiting for a block another read fetches awaits: the block, or an error.
type Waiting = Shared<oneshot::Receiver<Bytes>>;

/// Blocks being fetched, by the reads that fetch them.
#[derive(Default)]
struct InFlight {
    blocks: Mutex<HashMap<Key, Pending>>,
    next_claim: AtomicU64,
}

/// The blocks one read fetches and others may wait for: their waiters get the bytes when
/// [`Claim::deliver`] is called, and an error when the claim is dropped without them.
struct Claim<'a> {
    inflight: &'a InFlight,
    id: u64,
    name: String,
    senders: HashMap<u64, oneshot::Sender<Bytes>>,
}

impl InFlight {
    /// Splits `blocks` of object `name` into those this read fetches (claimed, so that others
    /// wait for them) and those another read is fetching (with what to wait on).
    fn claim<'a>(&'a self, name: &str, blocks: Vec<u64>) -> (Claim<'a>, Vec<u64>, Vec<(u64, Waiting)>) {
        let id = self.next_claim.fetch_add(1, Ordering::Relaxed);
        let mut claim = Claim {
            inflight: self,
            id,
            name: name.to_string(),
            senders: HashMap::new(),
        };
        let (mut mine, mut theirs) = (Vec::new(), Vec::new());
        let mut map = self.blocks.lock().expect("block cache lock");
        for b in blocks {
            let key = (name.to_string(), b);
            match map.get(&key) {
                Some((_, pending)) => theirs.push((b, pending.clone())),
                None => {
                    let (tx, rx) = oneshot::channel();
                    map.insert(key, (id, rx.shared()));
                    claim.senders.insert(b, tx);
                    mine.push(b);
                }
            }
        }
        (claim, mine, theirs)
    }
}

impl Claim<'_> {
    /// Hands the claimed blocks found in `have` to the reads waiting for them.
    fn deliver(&mut self, have: &HashMap<u64, Bytes>) {
        self.release();
        for (b, tx) in self.senders.drain() {
            if let Some(bytes) = have.get(&b) {
                let _ = tx.send(bytes.clone());
            }
        }
    }

    /// Takes this claim's blocks out of the map (new reads then find them in the cache, or fetch).
    fn release(&self) {
        let mut map = self.inflight.blocks.lock().expect("block cache lock");
        for b in self.senders.keys() {
            let key = (self.name.clone(), *b);
            if map.get(&key).is_some_and(|(id, _)| *id == self.id) {
                map.remove(&key);
            }
        }
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        self.release();
    }
}

/// The cache in front of a store (module docs).
pub(crate) struct BlockCache {
    inner: Arc<dyn ObjectStore>,
    /// Bytes of a block (`cache-block-bytes`).
    block: u64,
    /// Blocks per GET.
    blocks_per_request: u64,
    /// Missing blocks at most this many blocks apart share a GET (the blocks between are fetched
    /// too): `cache-coalesce-bytes` over the block size.
    gap_blocks: u64,
    memory: Cache<Key, Bytes>,
    disk: Option<DiskTier>,
    /// What the store said of each object read (size, modification time, e-tag).
    metas: Cache<String, ObjectMeta>,
    counters: Counters,
    inflight: InFlight,
}

impl fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlockCache")
            .field("disk", &self.disk.as_ref().map(|d| &d.dir))
            .finish()
    }
}

impl fmt::Display for BlockCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BlockCache({})", self.inner)
    }
}

/// What the cache knows of an object it was told about rather than asked the store for: its size
/// (its other fields are not used).
fn sized(location: &Path, size: u64) -> ObjectMeta {
    ObjectMeta {
        location: location.clone(),
        last_modified: chrono::DateTime::UNIX_EPOCH,
        size,
        e_tag: None,
        version: None,
    }
}

/// Whether Varve writes objects at `path` once and never rewrites them.
fn immutable(path: &Path) -> bool {
    let name = path.filename().unwrap_or_default();
    name.ends_with(".parquet") || name.ends_with(".avro")
}

impl BlockCache {
    /// The cache `options` ask for in front of `inner`, or `None` for `cache=off`.
    ///
    /// Errors: [`crate::ErrorKind::Storage`] when the disk cache's directory cannot be made or read.
    pub(crate) fn new(inner: Arc<dyn ObjectStore>, options: &LakeOptions) -> crate::Result<Option<Arc<BlockCache>>> {
        let disk = match (options.cache, &options.cache_dir) {
            (CacheMode::Off, _) => return Ok(None),
            (CacheMode::Disk, Some(dir)) => Some(DiskTier::open(
                dir.clone(),
                options.cache_disk_bytes,
                options.cache_block_bytes,
            )?),
            _ => None,
        };
        let memory = Cache::builder()
            .max_capacity(options.cache_memory_bytes)
            .weigher(|_: &Key, v: &Bytes| u32::try_from(v.len()).unwrap_or(u32::MAX))
            .build();
        Ok(Some(Arc::new(BlockCache {
            inner,
            block: options.cache_block_bytes,
            blocks_per_request: (options.cache_request_bytes / options.cache_block_bytes).max(1),
            gap_blocks: options.cache_coalesce_bytes / options.cache_block_bytes,
            memory,
            disk,
            metas: Cache::new(100_000),
            counters: Counters::default(),
            inflight: InFlight::default(),
        })))
    }

    /// The counters and sizes now.
    pub(crate) fn stats(&self) -> CacheStats {
        let c = &self.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        self.memory.run_pending_tasks();
        CacheStats {
            memory_hits: get(&c.memory_hits),
            disk_hits: get(&c.disk_hits),
            misses: get(&c.misses),
            requests: get(&c.requests),
            fetched_bytes: get(&c.fetched_bytes),
            hit_bytes: get(&c.hit_bytes),
            corrupt_blocks: get(&c.corrupt_blocks),
            memory_bytes: self.memory.weighted_size(),
            disk_bytes: self.disk.as_ref().map_or(0, |d| {
                d.index.run_pending_tasks();
                d.index.weighted_size()
            }),
        }
    }

    /// A cached block, from memory or disk.
    fn lookup(&self, key: &Key) -> Option<Bytes> {
        if let Some(b) = self.memory.get(key) {
            add(&self.counters.memory_hits, 1);
            add(&self.counters.hit_bytes, b.len() as u64);
            return Some(b);
        }
        let disk = self.disk.as_ref()?;
        match disk.read(key) {
            DiskRead::Hit(b) => {
                add(&self.counters.disk_hits, 1);
                add(&self.counters.hit_bytes, b.len() as u64);
                self.memory.insert(key.clone(), b.clone());
                Some(b)
            }
            DiskRead::Corrupt => {
                add(&self.counters.corrupt_blocks, 1);
                None
            }
            DiskRead::Miss => None,
        }
    }

    /// Notes that the object `location` is `size` bytes (from table metadata), so that a first
    /// read of it fetches every block it needs at once (module docs).
    pub(crate) fn know_size(&self, location: &Path, size: u64) {
        let name = location.to_string();
        if !self.metas.contains_key(&name) {
            self.metas.insert(name, sized(location, size));
        }
    }

    /// Keeps all of the object `location`, whose bytes are `data` (written or read whole, or
    /// carried by a table's head object): its size and its blocks, each copied into its own
    /// buffer (so that a block never holds a larger buffer in memory).
    pub(crate) fn keep_object(&self, location: &Path, data: &Bytes) {
        let name = location.to_string();
        let size = data.len() as u64;
        if self.metas.get(&name).is_none_or(|m| m.size != size) {
            self.metas.insert(name.clone(), sized(location, size));
        }
        for (i, chunk) in data.chunks(self.block as usize).enumerate() {
            self.keep((name.clone(), i as u64), Bytes::copy_from_slice(chunk));
        }
    }

    fn keep(&self, key: Key, bytes: Bytes) {
        if let Some(disk) = &self.disk {
            disk.write(&key, &bytes);
        }
        self.memory.insert(key, bytes);
    }

    /// The bytes of `ranges` of `location` (each clamped to the object's end, as a store clamps a
    /// bounded range), fetching the blocks not cached: one GET per run of missing blocks
    /// ([`BlockCache::runs`]), all at once.
    async fn read(&self, location: &Path, ranges: &[Range<u64>]) -> Result<(Vec<Bytes>, ObjectMeta)> {
        let name = location.to_string();
        if let Some(r) = ranges.iter().find(|r| r.start > r.end) {
            return Err(object_store::Error::Generic {
                store: "varve block cache",
                source: format!("range {}..{} of {location} ends before it starts", r.start, r.end).into(),
            });
        }
        let mut meta = self.metas.get(&name);
        let mut wanted = BTreeSet::new();
        for r in ranges {
            let end = meta.as_ref().map_or(r.end, |m| r.end.min(m.size));
            if end > r.start {
                wanted.extend(r.start / self.block..end.div_ceil(self.block));
            }
        }
        // The object's size is not known yet: learn it from the first block, so that no GET asks
        // for blocks past the end (a store answers a range that starts there with an error).
        let mut have: HashMap<u64, Bytes> = std::collections::HashMap::new();
        if meta.is_none() && wanted.len() > 1 {
            if let Some(&first) = wanted.iter().next() {
                self.fetch(location, &name, vec![first], &mut have, &mut meta).await?;
                if let Some(m) = &meta {
                    let blocks = m.size.div_ceil(self.block);
                    wanted.retain(|b| *b < blocks);
                }
            }
        }
        let mut missing = Vec::new();
        let wanted: Vec<u64> = wanted.into_iter().filter(|b| !have.contains_key(b)).collect();
        for b in wanted {
            match self.lookup(&(name.clone(), b)) {
                Some(bytes) => {
                    have.insert(b, bytes);
                }
                None => missing.push(b),
            }
        }
        // The missing blocks another read is fetching are waited for, the rest fetched here.
        let (mut claim, missing, theirs) = self.inflight.claim(&name, missing);
        let mut fetched = HashMap::new();
        let mut meta_here = meta.clone();
        let (own, waited) = futures::future::join(
            self.fetch(location, &name, missing, &mut fetched, &mut meta_here),
            futures::future::join_all(
                theirs
                    .into_iter()
                    .map(|(b, pending)| async move { (b, pending.await.ok()) }),
            ),
        )
        .await;
        own?;
        claim.deliver(&fetched);
        drop(claim);
        meta = meta.or(meta_here);
        have.extend(fetched);
        let mut failed = Vec::new();
        for (b, bytes) in waited {
            match bytes {
                Some(bytes) => {
                    add(&self.counters.memory_hits, 1);
                    add(&self.counters.hit_bytes, bytes.len() as u64);
                    have.insert(b, bytes);
                }
                None => failed.push(b),
            }
        }
        // (A read waited for failed or was dropped: fetch those blocks here.)
        self.fetch(location, &name, failed, &mut have, &mut meta).await?;
        let meta = match meta {
            Some(m) => m,
            // Every range was empty and nothing is known of the object: ask the store.
            None => {
                let m = self.inner.head(location).await?;
                self.metas.insert(name.clone(), m.clone());
                m
            }
        };
        let mut out = Vec::with_capacity(ranges.len());
        for r in ranges {
            let end = r.end.min(meta.size);
            if !r.is_empty() && r.start >= meta.size {
                return Err(object_store::Error::Generic {
                    store: "varve block cache",
                    source: format!(
                        "range {}..{} is past the end of {location} ({} bytes)",
                        r.start, r.end, meta.size
                    )
                    .into(),
                });
            }
            out.push(assemble(&have, r.start..end, self.block)?);
        }
        Ok((out, meta))
    }

    /// Runs of `blocks` (ascending) to fetch: blocks at most `gap_blocks` apart share a run (the
    /// blocks between are fetched too), cut at the request size.
    fn runs(&self, blocks: Vec<u64>) -> Vec<Range<u64>> {
        let mut runs: Vec<Range<u64>> = Vec::new();
        for b in blocks {
            match runs.last_mut() {
                Some(r) if b - r.end <= self.gap_blocks && b + 1 - r.start <= self.blocks_per_request => r.end = b + 1,
                _ => runs.push(b..b + 1),
            }
        }
        runs
    }

    /// Fetches `blocks` (ascending) of `location` at once, one GET per run ([`BlockCache::runs`]),
    /// into `have` and the cache; sets `meta` from the first answer when it is `None`. Blocks a GET
    /// returns between the ones asked for (coalesced gaps) are dropped: another read may hold or
    /// fetch them. A block is kept as its own buffer (copied out of a response of several blocks),
    /// so that a cached block never holds a whole response in memory.
    async fn fetch(
        &self,
        location: &Path,
        name: &str,
        blocks: Vec<u64>,
        have: &mut HashMap<u64, Bytes>,
        meta: &mut Option<ObjectMeta>,
    ) -> Result<()> {
        let asked: BTreeSet<u64> = blocks.iter().copied().collect();
        let runs = self.runs(blocks);
        let fetches = runs.iter().map(|r| {
            let options = GetOptions {
                range: Some(GetRange::Bounded(r.start * self.block..r.end * self.block)),
                ..Default::default()
            };
            async move {
                let got = self.inner.get_opts(location, options).await?;
                let got_meta = got.meta.clone();
                let start = got.range.start;
                let bytes = got.bytes().await?;
                Ok::<_, object_store::Error>((start, bytes, got_meta))
            }
        });
        for (start, bytes, got_meta) in futures::future::try_join_all(fetches).await? {
            add(&self.counters.requests, 1);
            add(&self.counters.fetched_bytes, bytes.len() as u64);
            let several = bytes.len() as u64 > self.block;
            let mut at = 0usize;
            let mut block = start / self.block;
            while at < bytes.len() {
                let end = (at + self.block as usize).min(bytes.len());
                if asked.contains(&block) {
                    let piece = match several {
                        true => Bytes::copy_from_slice(&bytes[at..end]),
                        false => bytes.slice(at..end),
                    };
                    add(&self.counters.misses, 1);
                    self.keep((name.to_string(), block), piece.clone());
                    have.insert(block, piece);
                }
                at = end;
                block += 1;
            }
            if meta.is_none() {
                self.metas.insert(name.to_string(), got_meta.clone());
                *meta = Some(got_meta);
            }
        }
        Ok(())
    }
}

/// The bytes of `range` out of the blocks of `size` bytes in `have` (a slice of one block when the
/// range is inside it, else a copy).
fn assemble(have: &HashMap<u64, Bytes>, range: Range<u64>, size: u64) -> Result<Bytes> {
    if range.is_empty() {
        return Ok(Bytes::new());
    }
    let first = range.start / size;
    let last = (range.end - 1) / size;
    let block = |b: u64| {
        have.get(&b).ok_or_else(|| object_store::Error::Generic {
            store: "varve block cache",
            source: format!("block {b} was not fetched").into(),
        })
    };
    let slice_of = |b: u64, bytes: &Bytes| -> Result<Bytes> {
        let from = range.start.max(b * size) - b * size;
        let to = range.end.min((b + 1) * size) - b * size;
        if to as usize > bytes.len() {
            return Err(object_store::Error::Generic {
                store: "varve block cache",
                source: format!("block {b} holds {} bytes, {to} wanted", bytes.len()).into(),
            });
        }
        Ok(bytes.slice(from as usize..to as usize))
    };
    if first == last {
        return slice_of(first, block(first)?);
    }
    let mut out = BytesMut::with_capacity((range.end - range.start) as usize);
    for b in first..=last {
        out.extend_from_slice(&slice_of(b, block(b)?)?);
    }
    Ok(out.freeze())
}

#[async_trait]
impl ObjectStore for BlockCache {
    async fn put_opts(&self, location: &Path, payload: PutPayload, opts: PutOptions) -> Result<PutResult> {
        // Metadata objects the engine writes (manifests, lists, indexes) are read again at once
        // (the head object, the next commit): keep them as they are written.
        let through = immutable(location)
            && location.parts().nth(2).is_some_and(|p| p.as_ref() == "metadata")
            && payload.content_length() as u64 <= WRITE_THROUGH_BYTES;
        if !through {
            return self.inner.put_opts(location, payload, opts).await;
        }
        let data = Bytes::from(payload.clone());
        let done = self.inner.put_opts(location, payload, opts).await?;
        self.keep_object(location, &data);
        Ok(done)
    }

    async fn put_multipart_opts(&self, location: &Path, opts: PutMultipartOptions) -> Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        let conditional = options.if_match.is_some()
            || options.if_none_match.is_some()
            || options.if_modified_since.is_some()
            || options.if_unmodified_since.is_some()
            || options.version.is_some();
        if options.head || conditional || !immutable(location) {
            return self.inner.get_opts(location, options).await;
        }
        let size = self.metas.get(location.as_ref()).map(|m| m.size);
        let range = match (&options.range, size) {
            (Some(GetRange::Bounded(r)), _) => r.clone(),
            (None, Some(s)) => 0..s,
            (Some(r), Some(s)) => r.as_range(s).map_err(|e| object_store::Error::Generic {
                store: "varve block cache",
                source: Box::new(e),
            })?,
            // The size is needed first: read through, and keep what the store says of the object
            // (and the object itself, when it was read whole).
            (_, None) => {
                let whole = options.range.is_none();
                let got = self.inner.get_opts(location, options).await?;
                self.metas.insert(location.to_string(), got.meta.clone());
                if !whole || got.meta.size > WRITE_THROUGH_BYTES {
                    return Ok(got);
                }
                let (meta, attributes, range) = (got.meta.clone(), got.attributes.clone(), got.range.clone());
                let data = got.bytes().await?;
                add(&self.counters.misses, data.len().div_ceil(self.block as usize) as u64);
                add(&self.counters.requests, 1);
                add(&self.counters.fetched_bytes, data.len() as u64);
                self.keep_object(location, &data);
                return Ok(GetResult {
                    payload: GetResultPayload::Stream(futures::stream::once(async move { Ok(data) }).boxed()),
                    meta,
                    range,
                    attributes,
                });
            }
        };
        let (mut bytes, meta) = self.read(location, std::slice::from_ref(&range)).await?;
        let bytes = bytes.pop().unwrap_or_default();
        let range = range.start..range.start + bytes.len() as u64;
        Ok(GetResult {
            payload: GetResultPayload::Stream(futures::stream::once(async move { Ok(bytes) }).boxed()),
            meta,
            range,
            attributes: Attributes::default(),
        })
    }

    async fn get_ranges(&self, location: &Path, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        if !immutable(location) {
            return self.inner.get_ranges(location, ranges).await;
        }
        Ok(self.read(location, ranges).await?.0)
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

/// The disk tier: one file per block in `dir`, named by a hash of the object's path, the block
/// size and the block's number; `index` counts this process's view of them by file name and bytes.
/// Processes opened with different block sizes share the directory without reading each other's
/// blocks (the size is in the name and the header).
struct DiskTier {
    dir: PathBuf,
    /// Bytes of a block.
    block: u64,
    index: Cache<String, u32>,
}

enum DiskRead {
    Hit(Bytes),
    Miss,
    Corrupt,
}

/// First bytes of a block file.
const MAGIC: &[u8; 8] = b"VARVBLK2";

impl DiskTier {
    /// The disk cache in `dir` (made if missing), counting the blocks already there.
    fn open(dir: PathBuf, bytes: u64, block: u64) -> crate::Result<DiskTier> {
        let fail =
            |e: std::io::Error| crate::Error::storage(format!("block cache directory {}: {e}", dir.display()), false);
        std::fs::create_dir_all(&dir).map_err(fail)?;
        let remove_dir = dir.clone();
        let index = Cache::builder()
            .max_capacity(bytes)
            .weigher(|_: &String, v: &u32| *v)
            .eviction_listener(move |name: Arc<String>, _, cause| {
                if matches!(cause, RemovalCause::Size | RemovalCause::Expired) {
                    let _ = std::fs::remove_file(remove_dir.join(name.as_str()));
                }
            })
            .build();
        for entry in std::fs::read_dir(&dir).map_err(fail)?.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            if name.ends_with(".blk") {
                if let Ok(m) = entry.metadata() {
                    index.insert(name, u32::try_from(m.len()).unwrap_or(u32::MAX));
                }
            }
        }
        Ok(DiskTier { dir, block, index })
    }

    fn file_name(&self, key: &Key) -> String {
        let mut h = crc32fast::Hasher::new();
        h.update(key.0.as_bytes());
        format!(
            "{:08x}{:04x}-{}-{}.blk",
            h.finalize(),
            key.0.len() & 0xffff,
            self.block,
            key.1
        )
    }

    fn read(&self, key: &Key) -> DiskRead {
        let name = self.file_name(key);
        let path = self.dir.join(&name);
        let Ok(raw) = std::fs::read(&path) else {
            self.index.invalidate(&name);
            return DiskRead::Miss;
        };
        match decode(&raw, key, self.block) {
            Some(range) => {
                if !self.index.contains_key(&name) {
                    self.index.insert(name, raw.len() as u32);
                }
                DiskRead::Hit(Bytes::from(raw).slice(range))
            }
            None => {
                tracing::warn!(file = %path.display(), object = %key.0, block = key.1, "block cache: a damaged block, fetched again");
                let _ = std::fs::remove_file(&path);
                self.index.invalidate(&name);
                DiskRead::Corrupt
            }
        }
    }

    /// Writes a block (best effort: a full or read-only disk only costs the cache).
    fn write(&self, key: &Key, data: &Bytes) {
        let name = self.file_name(key);
        let tmp = self.dir.join(format!(
            "{name}.{}.{}.tmp",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        ));
        let encoded = encode(key, self.block, data);
        let ok = std::fs::File::create(&tmp)
            .and_then(|mut f| f.write_all(&encoded))
            .and_then(|_| std::fs::rename(&tmp, self.dir.join(&name)));
        match ok {
            Ok(()) => self.index.insert(name, encoded.len() as u32),
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                tracing::debug!("block cache: cannot write {}: {e}", tmp.display());
            }
        }
    }
}

/// A block file: [`MAGIC`], the path's length (u32 LE), the path, the block number (u64 LE), the
/// block size (u64 LE), the data's length (u32 LE), the data's CRC-32 (u32 LE), the data.
fn encode(key: &Key, block: u64, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + key.0.len() + 36);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(key.0.len() as u32).to_le_bytes());
    out.extend_from_slice(key.0.as_bytes());
    out.extend_from_slice(&key.1.to_le_bytes());
    out.extend_from_slice(&block.to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(data).to_le_bytes());
    out.extend_from_slice(data);
    out
}

/// Where the data of a block file is, when the file is whole and holds block `key` of `block` bytes.
fn decode(raw: &[u8], key: &Key, block: u64) -> Option<Range<usize>> {
    let u32_at = |at: usize| -> Option<u32> { Some(u32::from_le_bytes(raw.get(at..at + 4)?.try_into().ok()?)) };
    if raw.get(..8)? != MAGIC {
        return None;
    }
    let path_len = u32_at(8)? as usize;
    let path = raw.get(12..12 + path_len)?;
    let at = 12 + path_len;
    let number = u64::from_le_bytes(raw.get(at..at + 8)?.try_into().ok()?);
    let size = u64::from_le_bytes(raw.get(at + 8..at + 16)?.try_into().ok()?);
    let len = u32_at(at + 16)? as usize;
    let crc = u32_at(at + 20)?;
    let data = at + 24..at + 24 + len;
    if path != key.0.as_bytes()
        || number != key.1
        || size != block
        || len as u64 > block
        || raw.len() != data.end
        || crc32fast::hash(&raw[data.clone()]) != crc
    {
        return None;
    }
    Some(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_files_round_trip_and_refuse_damage() {
        let key = ("ns/t/data/a.parquet".to_string(), 3);
        let raw = encode(&key, 1 << 20, b"hello");
        assert_eq!(&raw[decode(&raw, &key, 1 << 20).unwrap()], b"hello");
        assert!(decode(&raw, &("ns/t/data/b.parquet".to_string(), 3), 1 << 20).is_none());
        assert!(decode(&raw, &(key.0.clone(), 4), 1 << 20).is_none());
        // A block of another size is never read as this size's block.
        assert!(decode(&raw, &key, 1 << 16).is_none());
        let mut bad = raw.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert!(decode(&bad, &key, 1 << 20).is_none());
        assert!(decode(&raw[..raw.len() - 1], &key, 1 << 20).is_none());
    }

    /// Misses a gap apart share one GET; the blocks between are dropped, not cached.
    #[tokio::test]
    async fn coalesced_gets_keep_only_the_blocks_asked_for() {
        let inner: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
        let data: Vec<u8> = (0..10 * 4096u32).map(|i| (i % 251) as u8).collect();
        let path = Path::from("ns/t/data/a.parquet");
        inner.put(&path, PutPayload::from(data.clone())).await.unwrap();
        let options = LakeOptions {
            cache_block_bytes: 4096,
            cache_request_bytes: 64 << 10,
            cache_coalesce_bytes: 8192,
            ..LakeOptions::default()
        };
        let cache = BlockCache::new(inner, &options).unwrap().unwrap();
        cache.know_size(&path, data.len() as u64);
        let got = cache
            .get_ranges(&path, &[10..20, 3 * 4096..3 * 4096 + 5])
            .await
            .unwrap();
        assert_eq!(got[0].as_ref(), &data[10..20]);
        assert_eq!(got[1].as_ref(), &data[3 * 4096..3 * 4096 + 5]);
        let s = cache.stats();
        assert_eq!((s.requests, s.misses, s.fetched_bytes), (1, 2, 4 * 4096), "{s:?}");
        // Block 1 came in the GET but was not kept: reading it fetches it.
        let got = cache
            .get_ranges(&path, std::slice::from_ref(&(4096..4100)))
            .await
            .unwrap();
        assert_eq!(got[0].as_ref(), &data[4096..4100]);
        assert_eq!(cache.stats().requests, 2);
        // Blocks 0 and 3 were kept.
        cache.get_ranges(&path, &[0..4, 3 * 4096..3 * 4096 + 1]).await.unwrap();
        assert_eq!(cache.stats().requests, 2);
    }

    #[test]
    fn ranges_are_cut_from_blocks() {
        let mut have = std::collections::HashMap::new();
        const BLOCK_BYTES: u64 = 1 << 16;
        let b0 = Bytes::from(vec![1u8; BLOCK_BYTES as usize]);
        let b1 = Bytes::from(vec![2u8; 10]);
        have.insert(0, b0);
        have.insert(1, b1);
        assert_eq!(assemble(&have, 5..7, BLOCK_BYTES).unwrap().as_ref(), &[1, 1]);
        let across = assemble(&have, BLOCK_BYTES - 1..BLOCK_BYTES + 2, BLOCK_BYTES).unwrap();
        assert_eq!(across.as_ref(), &[1, 2, 2]);
        assert!(assemble(&have, BLOCK_BYTES..BLOCK_BYTES + 11, BLOCK_BYTES).is_err());
        assert!(assemble(&have, 0..0, BLOCK_BYTES).unwrap().is_empty());
    }
}
