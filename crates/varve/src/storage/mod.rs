//! Storage: the lake's object store, opened from a URL, and the few operations the engine needs.
//!
//! Owns the mapping between a lake URL (`/path`, `file:///path`, `s3://bucket/prefix`, `memory://`)
//! and an [`ObjectStore`] rooted at the lake, the conversion between object paths and the absolute
//! locations written into Iceberg metadata, and the conditional write (put-if-absent) that commits
//! rely on. It knows nothing of tables or Iceberg.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::Arc;

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::prefix::PrefixStore;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};

use crate::error::{Error, Result};

pub(crate) mod block_cache;
pub(crate) mod options;

pub use block_cache::CacheStats;
pub use options::CacheMode;
pub(crate) use options::LakeOptions;

/// The environment variable that names the default lake.
pub const LAKE_ENV: &str = "VARVE_LAKE";
/// The lake used when neither a URL nor `$VARVE_LAKE` is given.
pub const DEFAULT_LAKE: &str = "./varve-lake";

/// Where a lake lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageKind {
    /// A directory on the local file system.
    Local,
    /// An S3 bucket or an S3-compatible server.
    S3,
    /// Process memory (tests and scratch work); gone when the process ends.
    Memory,
}

/// The lake's object store, rooted at the lake, with the lake's absolute root URL.
#[derive(Debug, Clone)]
pub(crate) struct Storage {
    pub(crate) store: Arc<dyn ObjectStore>,
    /// Absolute URL of the lake root without a trailing slash, e.g. `file:///data/lake`.
    pub(crate) root: String,
    pub(crate) kind: StorageKind,
    /// Varve's own options of the lake (cache, version-check interval).
    pub(crate) options: Arc<LakeOptions>,
    /// The block cache in front of the store, unless `cache=off`.
    pub(crate) block_cache: Option<Arc<block_cache::BlockCache>>,
}

/// Makes the store that requests go through of the lake's own store (instruments, fault
/// injection); the block cache sits in front of what it makes.
pub(crate) type StoreLayer = Box<dyn FnOnce(Arc<dyn ObjectStore>) -> Arc<dyn ObjectStore>>;

impl Storage {
    /// Opens the store for `url`. Options are Varve's own ([`options`]: block cache,
    /// version-check interval) and S3 settings (`aws_access_key_id`, `aws_region`, `aws_endpoint`,
    /// `aws_allow_http`, ...; short forms `access_key_id`, `region`, `endpoint` work too); the
    /// usual `AWS_*` environment variables are read for S3 lakes. Requests go through what `layer`
    /// makes of the store, behind the block cache.
    ///
    /// Errors: [`crate::ErrorKind::InvalidInput`] for an unsupported scheme or a bad option;
    /// [`crate::ErrorKind::Storage`] when a local directory (the lake's, the disk cache's) cannot
    /// be made.
    pub(crate) fn open(url: &str, options: &HashMap<String, String>, layer: Option<StoreLayer>) -> Result<Storage> {
        let (lake_options, rest) = LakeOptions::take(options)?;
        let (store, root, kind) = Self::open_store(url, &rest)?;
        let store = match layer {
            Some(layer) => layer(store),
            None => store,
        };
        let block_cache = block_cache::BlockCache::new(store.clone(), &lake_options)?;
        Ok(Storage {
            store: match &block_cache {
                Some(c) => c.clone(),
                None => store,
            },
            root,
            kind,
            options: Arc::new(lake_options),
            block_cache,
        })
    }

    /// The block cache's statistics (zeros when the cache is off).
    pub(crate) fn cache_stats(&self) -> CacheStats {
        self.block_cache.as_ref().map(|c| c.stats()).unwrap_or_default()
    }

    /// The object store of `url` with the store's own `options`, its root URL and kind.
    fn open_store(url: &str, options: &HashMap<String, String>) -> Result<(Arc<dyn ObjectStore>, String, StorageKind)> {
        if url.starts_with("memory://") {
            return Ok((Arc::new(InMemory::new()), "memory://".to_string(), StorageKind::Memory));
        }
        if let Some(rest) = url.strip_prefix("s3://").or_else(|| url.strip_prefix("s3a://")) {
            let rest = rest.trim_end_matches('/');
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            if bucket.is_empty() {
                return Err(Error::invalid(format!("lake URL {url}: no bucket name")));
            }
            let mut b = AmazonS3Builder::from_env().with_bucket_name(bucket);
            for (k, v) in options {
                let key = normalise_s3_key(k);
                let key = AmazonS3ConfigKey::from_str(&key)
                    .map_err(|_| Error::invalid(format!("unknown storage option {k:?}")))?;
                b = b.with_config(key, v);
            }
            let endpoint = options
                .iter()
                .find(|(k, _)| normalise_s3_key(k) == "aws_endpoint")
                .map(|(_, v)| v.clone())
                .or_else(|| std::env::var("AWS_ENDPOINT_URL").ok())
                .or_else(|| std::env::var("AWS_ENDPOINT").ok());
            if let Some(ep) = &endpoint {
                b = b.with_endpoint(ep);
                if ep.starts_with("http://") {
                    b = b.with_allow_http(true);
                }
            }
            let s3 = b.build().map_err(|e| Error::invalid(format!("lake URL {url}: {e}")))?;
            let store: Arc<dyn ObjectStore> = if prefix.is_empty() {
                Arc::new(s3)
            } else {
                Arc::new(PrefixStore::new(s3, prefix))
            };
            let root = if prefix.is_empty() {
                format!("s3://{bucket}")
            } else {
                format!("s3://{bucket}/{prefix}")
            };
            return Ok((store, root, StorageKind::S3));
        }
        if let Some((scheme, rest)) = url.split_once(':') {
            let looks_like_scheme = scheme.len() >= 2 && scheme.chars().all(|c| c.is_ascii_alphanumeric() || c == '+');
            if looks_like_scheme && !rest.starts_with("//") {
                return Err(Error::invalid(format!(
                    "lake URL {url}: did you mean {scheme}://{}?",
                    rest.trim_start_matches('/')
                )));
            }
        }
        let path = if let Some(p) = url.strip_prefix("file://") {
            p.to_string()
        } else if url.contains("://") {
            let scheme = url.split("://").next().unwrap_or_default();
            return Err(Error::invalid(format!(
                "lake URL {url}: scheme {scheme}:// is not supported (use a path, file://, s3:// or memory://)"
            )));
        } else {
            url.to_string()
        };
        let path = std::path::Path::new(&path);
        std::fs::create_dir_all(path)
            .map_err(|e| Error::storage(format!("cannot create lake directory {}: {e}", path.display()), false))?;
        let abs = std::fs::canonicalize(path)
            .map_err(|e| Error::storage(format!("lake directory {}: {e}", path.display()), false))?;
        let store = LocalFileSystem::new_with_prefix(&abs)
            .map_err(|e| Error::storage(format!("lake directory {}: {e}", abs.display()), false))?;
        let root = format!("file://{}", abs.display().to_string().trim_end_matches('/'));
        Ok((Arc::new(store), root, StorageKind::Local))
    }

    /// The absolute location (as written into Iceberg metadata) of an object path.
    pub(crate) fn location(&self, path: &Path) -> String {
        format!("{}/{}", self.root, path)
    }

    /// The object path of an absolute location inside this lake.
    ///
    /// Errors: [`crate::ErrorKind::Corruption`] when the location is outside the lake.
    pub(crate) fn path_of(&self, location: &str) -> Result<Path> {
        let rest = location
            .strip_prefix(&self.root)
            .and_then(|r| r.strip_prefix('/'))
            .or_else(|| {
                // `file:/path` and `file:///path` are the same place.
                let alt = self.root.replace("file://", "file:");
                location.strip_prefix(alt.as_str()).and_then(|r| r.strip_prefix('/'))
            })
            .ok_or_else(|| Error::corrupt(format!("{location} is outside the lake {}", self.root)))?;
        Path::parse(rest).map_err(|e| Error::corrupt(format!("bad object path {rest}: {e}")))
    }

    pub(crate) async fn get(&self, path: &Path) -> Result<Bytes> {
        let r = self.store.get(path).await?;
        Ok(r.bytes().await?)
    }

    /// Reads an object, or `None` when it does not exist.
    pub(crate) async fn get_opt(&self, path: &Path) -> Result<Option<Bytes>> {
        match self.store.get(path).await {
            Ok(r) => Ok(Some(r.bytes().await?)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Reads an object with what the store says of it (size, modification time), or `None` when
    /// it does not exist.
    pub(crate) async fn get_with_meta(&self, path: &Path) -> Result<Option<(Bytes, object_store::ObjectMeta)>> {
        match self.store.get(path).await {
            Ok(r) => {
                let meta = r.meta.clone();
                Ok(Some((r.bytes().await?, meta)))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    pub(crate) async fn exists(&self, path: &Path) -> Result<bool> {
        match self.store.head(path).await {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    pub(crate) async fn put(&self, path: &Path, data: Bytes) -> Result<()> {
        self.store.put(path, PutPayload::from(data)).await?;
        Ok(())
    }

    /// Deletes objects, best effort: errors are ignored (files of a change that was not committed,
    /// which orphan cleanup removes later if this fails).
    pub(crate) async fn delete_quietly(&self, paths: &[Path]) {
        for p in paths {
            let _ = self.store.delete(p).await;
        }
    }

    /// Writes `data` at `path` only if nothing is there: `Ok(Some(e_tag))` when written, with the
    /// e-tag the store gave the new object (`None` when it gives none; the head object records it
    /// to recognise that exact file), `Ok(None)` when another writer got there first. This is the
    /// commit point of the protocol, so the store must make it atomic (AWS S3, MinIO and R2 do;
    /// moto 5.2 does not under concurrent writes, which is why the tests run it through
    /// `varve-testkit/moto_server.py`).
    pub(crate) async fn put_if_absent(&self, path: &Path, data: Bytes) -> Result<Option<Option<String>>> {
        let opts = PutOptions {
            mode: PutMode::Create,
            ..Default::default()
        };
        match self.store.put_opts(path, PutPayload::from(data), opts).await {
            Ok(r) => Ok(Some(r.e_tag)),
            Err(object_store::Error::AlreadyExists { .. }) | Err(object_store::Error::Precondition { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The immediate child "directories" of `prefix`.
    pub(crate) async fn list_dirs(&self, prefix: Option<&Path>) -> Result<Vec<String>> {
        let r = self.store.list_with_delimiter(prefix).await?;
        Ok(r.common_prefixes
            .iter()
            .filter_map(|p| p.filename().map(str::to_string))
            .collect())
    }

    /// The objects under `prefix` whose paths sort after `offset` (byte order), with their sizes:
    /// on S3 one LIST request per 1,000 objects, starting at `offset` (`start-after`).
    pub(crate) async fn list_after(&self, prefix: &Path, offset: &Path) -> Result<Vec<object_store::ObjectMeta>> {
        Ok(self.store.list_with_offset(Some(prefix), offset).try_collect().await?)
    }

    /// Hands the whole object at `path`, known from elsewhere (a table's head object), to the
    /// block cache, so that reading it asks the store nothing. Nothing happens with `cache=off`.
    pub(crate) fn keep_object(&self, path: &Path, data: &Bytes) {
        if let Some(c) = &self.block_cache {
            c.keep_object(path, data);
        }
    }

    /// Tells the block cache that the immutable object at `path` is `size` bytes (as a data
    /// file's manifest entry says), so that its first read needs no probe for the size.
    pub(crate) fn know_size(&self, path: &Path, size: u64) {
        if let Some(c) = &self.block_cache {
            c.know_size(path, size);
        }
    }

    /// The objects directly under `prefix` (no recursion), by name.
    pub(crate) async fn list_files(&self, prefix: &Path) -> Result<Vec<String>> {
        let r = self.store.list_with_delimiter(Some(prefix)).await?;
        Ok(r.objects
            .iter()
            .filter_map(|o| o.location.filename().map(str::to_string))
            .collect())
    }

    /// Deletes every object under `prefix`; returns how many were deleted.
    pub(crate) async fn delete_prefix(&self, prefix: &Path) -> Result<usize> {
        let locations = self.store.list(Some(prefix)).map_ok(|m| m.location).boxed();
        let deleted: Vec<Path> = self.store.delete_stream(locations).try_collect().await?;
        if self.kind == StorageKind::Local {
            if let Some(dir) = self.root.strip_prefix("file://") {
                let _ = std::fs::remove_dir_all(std::path::Path::new(dir).join(prefix.as_ref()));
            }
        }
        Ok(deleted.len())
    }
}

fn normalise_s3_key(k: &str) -> String {
    let k = k.to_ascii_lowercase().replace('-', "_");
    match k.as_str() {
        "access_key_id" | "key_id" => "aws_access_key_id".into(),
        "secret_access_key" | "secret" => "aws_secret_access_key".into(),
        "region" => "aws_region".into(),
        "endpoint" | "endpoint_url" => "aws_endpoint".into(),
        "allow_http" => "aws_allow_http".into(),
        "session_token" => "aws_session_token".into(),
        _ => k,
    }
}

/// The lake URL to use when the caller gives none: `$VARVE_LAKE`, else [`DEFAULT_LAKE`].
pub fn default_lake_url() -> String {
    std::env::var(LAKE_ENV)
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| DEFAULT_LAKE.to_string())
}
