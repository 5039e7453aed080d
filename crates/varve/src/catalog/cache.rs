//! The lake's cache of decoded table metadata: `v<N>.metadata.json` files (with their snapshot
//! references), manifest lists and manifests, each by location, and the JSON of each snapshot for
//! writing the next metadata file. Every one of these objects is immutable once written (a metadata
//! version is created only by put-if-absent, manifests and lists under fresh names; Iceberg spec,
//! "File System Tables" and "Manifests"), so an entry never goes stale: the cache only saves GETs
//! and JSON or Avro decoding on repeated loads, scans and commits.
//!
//! Which version is current is the one thing here that can go stale: it is kept with the time it
//! was seen (by a load that asked the store, or by this process's own commit), and readers use it
//! without asking again for the lake's version-check interval (`catalog::load_recent`); writers
//! always ask (`catalog::load`).
//!
//! Bounded by weight (the encoded size of each object, bytes), least recently used first out
//! (moka's TinyLFU), so a long-running process with many tables or commits keeps a fixed memory.
//!
//! Also the rows of last-value indexes by location (`index::last_value`; written once under fresh
//! names, like manifests).
//!
//! And the rows of small data files, decoded in the table's schema, for scans that read many of
//! them (`query::scan::small_files`; bounded by the lake option `cache-decoded-bytes`).
//!
//! Beside them, the decoded Parquet footers (with page indexes) of data files, by path, in
//! DataFusion's own cache, which every query session of the lake shares: data files are immutable
//! too (written once under fresh names), so a warm query opens a file without reading its footer.

use std::sync::Arc;
use std::time::Instant;

use arrow::array::RecordBatch;

use datafusion::execution::cache::cache_manager::FileMetadataCache;
use datafusion::execution::cache::DefaultFilesMetadataCache;
use iceberg::spec::{ManifestEntry, ManifestFile, TableMetadata};
use moka::sync::Cache;
use parquet::file::metadata::ParquetMetaData;

use crate::catalog::TableIdent;
use crate::format::metadata_json::{Refs, SnapshotJsonCache};

/// The rows of one data file in a table's schema, as the query's small-file path
/// (`query::scan::small_files`) keeps them in this cache.
#[derive(Debug, Clone)]
pub(crate) struct DecodedFile {
    /// The table schema the rows were read in (every column nullable, as query scans see it).
    pub(crate) schema: arrow::datatypes::SchemaRef,
    /// The file's size (bytes), as the manifest gives it.
    pub(crate) bytes: u64,
    /// All of the file's rows, in the file's order.
    pub(crate) rows: arrow::array::RecordBatch,
}

/// A decoded metadata file and its snapshot references.
type MetadataEntry = (Arc<TableMetadata>, Arc<Refs>);

/// Bytes of encoded metadata JSON kept decoded.
const METADATA_BYTES: u64 = 64 << 20;
/// Bytes of snapshot JSON kept for writing metadata files (about 50,000 snapshots).
const SNAPSHOT_JSON_BYTES: u64 = 32 << 20;
/// Bytes of encoded manifest lists kept decoded.
const LIST_BYTES: u64 = 16 << 20;
/// Bytes of encoded manifests kept decoded (their live entries).
const MANIFEST_BYTES: u64 = 128 << 20;
/// Bytes of last-value indexes kept decoded (`index::last_value`; Arrow's measure of their size).
const LAST_VALUE_BYTES: u64 = 64 << 20;
/// Bytes of decoded Parquet footers and page indexes kept (DataFusion's measure of their size).
pub(crate) const FOOTER_BYTES: usize = 64 << 20;

/// Decoded immutable metadata objects by location (module docs). Cheap to share: clones of the
/// values are `Arc`s.
#[derive(Debug)]
pub(crate) struct MetadataCache {
    /// Table metadata with its snapshot references.
    metadata: Cache<String, (MetadataEntry, u32)>,
    lists: Cache<String, (Arc<Vec<ManifestFile>>, u32)>,
    manifests: Cache<String, (Arc<Vec<ManifestEntry>>, u32)>,
    /// Rows of last-value indexes, as written.
    last_values: Cache<String, (RecordBatch, u32)>,
    /// The JSON of each snapshot, for writing metadata files.
    pub(crate) snapshot_json: SnapshotJsonCache,
    /// Decoded footers of data files, for the query sessions' Parquet scans.
    pub(crate) footers: Arc<dyn FileMetadataCache>,
    /// The newest version of each table (by `namespace.table`) this process saw, and when.
    versions: Cache<String, (u64, uuid::Uuid, Instant)>,
    /// Rows of small data files by path (`query::scan::small_files`); `None` when the lake option
    /// `cache-decoded-bytes` is 0 or the block cache is off.
    decoded: Option<Cache<String, (DecodedFile, u32)>>,
}

impl Default for MetadataCache {
    fn default() -> Self {
        fn cache<V: Clone + Send + Sync + 'static>(bytes: u64) -> Cache<String, (V, u32)> {
            Cache::builder()
                .max_capacity(bytes)
                .weigher(|k: &String, v: &(V, u32)| v.1.saturating_add(k.len() as u32))
                .build()
        }
        MetadataCache {
            metadata: cache(METADATA_BYTES),
            lists: cache(LIST_BYTES),
            manifests: cache(MANIFEST_BYTES),
            last_values: cache(LAST_VALUE_BYTES),
            snapshot_json: SnapshotJsonCache::new(SNAPSHOT_JSON_BYTES),
            footers: Arc::new(DefaultFilesMetadataCache::new(FOOTER_BYTES)),
            versions: Cache::new(100_000),
            decoded: None,
        }
    }
}

impl MetadataCache {
    /// The cache with room for `bytes` of small data files' decoded rows (Arrow's measure of
    /// their size; 0: none kept).
    pub(crate) fn with_decoded_bytes(mut self, bytes: u64) -> Self {
        self.decoded = (bytes > 0).then(|| {
            Cache::builder()
                .max_capacity(bytes)
                .weigher(|k: &String, v: &(DecodedFile, u32)| v.1.saturating_add(k.len() as u32))
                .build()
        });
        self
    }

    /// The decoded rows of the data file at `path`, if held.
    pub(crate) fn decoded(&self, path: &str) -> Option<DecodedFile> {
        self.decoded.as_ref()?.get(path).map(|v| v.0)
    }

    /// Keeps the decoded rows of the data file at `path`.
    pub(crate) fn put_decoded(&self, path: &str, file: DecodedFile) {
        if let Some(cache) = &self.decoded {
            let bytes = file.rows.get_array_memory_size();
            cache.insert(path.to_string(), (file, weight(bytes)));
        }
    }
}

impl MetadataCache {
    /// The table metadata stored at `location`, if cached.
    pub(crate) fn metadata(&self, location: &str) -> Option<MetadataEntry> {
        self.metadata.get(location).map(|v| v.0)
    }

    /// Keeps the metadata at `location`, whose encoded size is `bytes`.
    pub(crate) fn put_metadata(&self, location: &str, metadata: Arc<TableMetadata>, refs: Arc<Refs>, bytes: usize) {
        self.metadata
            .insert(location.to_string(), ((metadata, refs), weight(bytes)));
    }

    /// The manifests listed by the manifest list at `location`, if cached.
    pub(crate) fn manifest_list(&self, location: &str) -> Option<Arc<Vec<ManifestFile>>> {
        self.lists.get(location).map(|v| v.0)
    }

    pub(crate) fn put_manifest_list(&self, location: &str, list: Arc<Vec<ManifestFile>>, bytes: usize) {
        self.lists.insert(location.to_string(), (list, weight(bytes)));
    }

    /// The live entries of the manifest at `location`, if cached.
    pub(crate) fn manifest(&self, location: &str) -> Option<Arc<Vec<ManifestEntry>>> {
        self.manifests.get(location).map(|v| v.0)
    }

    pub(crate) fn put_manifest(&self, location: &str, entries: Arc<Vec<ManifestEntry>>, bytes: usize) {
        self.manifests.insert(location.to_string(), (entries, weight(bytes)));
    }
}

impl MetadataCache {
    /// Notes that `version` is the newest version of `table` (whose metadata has `uuid`) as of
    /// `checked_at`: a load asked the store then, or this process committed it. Atomic per table:
    /// of the same table the highest version stays (a load that raced with this process's
    /// commit must not hide it); a table made again under the same name (another uuid) replaces
    /// the entry only when checked after it (a load that started before a drop must not bring
    /// the dropped table back).
    pub(crate) fn saw_version(&self, table: &TableIdent, uuid: uuid::Uuid, version: u64, checked_at: Instant) {
        use moka::ops::compute::Op;
        self.versions
            .entry(table.to_string())
            .and_compute_with(|old| match old.map(|e| e.into_value()) {
                None => Op::Put((version, uuid, checked_at)),
                Some((v, u, at)) if u == uuid => match version.cmp(&v) {
                    std::cmp::Ordering::Greater => Op::Put((version, uuid, checked_at)),
                    std::cmp::Ordering::Equal => Op::Put((version, uuid, checked_at.max(at))),
                    std::cmp::Ordering::Less => Op::Nop,
                },
                Some((_, _, at)) if checked_at > at => Op::Put((version, uuid, checked_at)),
                Some(_) => Op::Nop,
            });
    }

    /// The newest version of `table` this process saw, and how long ago it was checked.
    pub(crate) fn recent_version(&self, table: &TableIdent) -> Option<(u64, std::time::Duration)> {
        self.versions
            .get(&table.to_string())
            .filter(|(_, u, _)| !u.is_nil())
            .map(|(v, _, at)| (v, at.elapsed()))
    }

    /// Notes that `table` was dropped now (`None`: every table): its versions are forgotten, and
    /// loads that checked it before now cannot note them again.
    pub(crate) fn forget_version(&self, table: Option<&TableIdent>) {
        match table {
            Some(t) => self
                .versions
                .insert(t.to_string(), (0, uuid::Uuid::nil(), Instant::now())),
            None => self.versions.invalidate_all(),
        }
    }

    /// Forgets the decoded metadata files `v1` to `v<last>` of `table` (dropped: the names will
    /// be used again by a table made under the same name).
    pub(crate) fn forget_metadata(&self, table: &TableIdent, last: u64) {
        for v in 1..=last {
            self.metadata.invalidate(table.metadata_file(v).as_ref());
        }
    }
}

impl MetadataCache {
    /// The rows of the last-value index at `location`, if cached.
    pub(crate) fn last_values(&self, location: &str) -> Option<RecordBatch> {
        self.last_values.get(location).map(|v| v.0)
    }

    pub(crate) fn put_last_values(&self, location: &str, rows: RecordBatch) {
        let bytes = rows.get_array_memory_size();
        self.last_values.insert(location.to_string(), (rows, weight(bytes)));
    }
}

impl MetadataCache {
    /// Keeps the decoded footer (with page indexes) of the data file at `path` (`size` bytes), as
    /// the query scans look it up (DataFusion's footer cache, by path and size).
    pub(crate) fn keep_footer(&self, path: &object_store::path::Path, size: u64, footer: Arc<ParquetMetaData>) {
        use datafusion::datasource::physical_plan::parquet::metadata::CachedParquetMetaData;
        use datafusion::execution::cache::cache_manager::CachedFileMetadataEntry;
        let meta = object_store::ObjectMeta {
            location: path.clone(),
            // As `PartitionedFile::new` leaves it: data files are never rewritten in place.
            last_modified: chrono::DateTime::UNIX_EPOCH,
            size,
            e_tag: None,
            version: None,
        };
        self.footers.put(
            path,
            CachedFileMetadataEntry::new(meta, Arc::new(CachedParquetMetaData::new(footer))),
        );
    }

    /// The cached footer of the data file at `path`, if it is `size` bytes.
    pub(crate) fn footer(&self, path: &object_store::path::Path, size: u64) -> Option<Arc<ParquetMetaData>> {
        footer_in(self.footers.as_ref(), path, size)
    }
}

/// The footer of the data file at `path` held in `footers` (a [`MetadataCache`]'s footer cache), if
/// it is `size` bytes.
pub(crate) fn footer_in(
    footers: &dyn FileMetadataCache,
    path: &object_store::path::Path,
    size: u64,
) -> Option<Arc<ParquetMetaData>> {
    use datafusion::datasource::physical_plan::parquet::metadata::CachedParquetMetaData;
    let entry = footers.get(path)?;
    if entry.meta.size != size {
        return None;
    }
    entry
        .file_metadata
        .as_any()
        .downcast_ref::<CachedParquetMetaData>()
        .map(|m| m.parquet_metadata().clone())
}

fn weight(bytes: usize) -> u32 {
    u32::try_from(bytes).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_found_by_location() {
        let c = MetadataCache::default();
        assert!(c.manifest("a").is_none());
        c.put_manifest("a", Arc::new(vec![]), 10);
        assert!(c.manifest("a").is_some());
        assert!(c.manifest("b").is_none());
        c.put_manifest_list("l", Arc::new(vec![]), 10);
        assert!(c.manifest_list("l").is_some());
    }
}
