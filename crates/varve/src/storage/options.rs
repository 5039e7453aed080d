//! Varve's own lake options, read out of the option map a lake is opened with (CLI `-o key=value`,
//! Python `varve.open(url, options=...)`, `Lake::open`); the rest of the map is the object store's
//! (S3 credentials, endpoint, region).
//!
//! | option | default | meaning |
//! |---|---|---|
//! | `version-check-interval` | `1s` | a reader uses the table version it loaded or checked this recently without asking the store; writers always ask |
//! | `cache` | `memory` | block cache of immutable objects: `memory`, `disk` (memory in front of `cache-dir`) or `off` |
//! | `cache-memory-bytes` | `256MiB` | bytes of blocks kept in memory |
//! | `cache-dir` | none | directory of the disk cache, shared by processes (`cache=disk` needs it; setting it implies `cache=disk`) |
//! | `cache-disk-bytes` | `10GiB` | bytes of blocks kept in `cache-dir` by this process |
//! | `filter-pushdown` | `auto` | scans apply filters as they decode (late materialization): `on`, `off`, or `auto` (on for local directories and memory; on S3 only for queries with `ORDER BY ... LIMIT`, where it lets the sort's running threshold skip whole files) |
//! | `cache-block-bytes` | `1MiB` | bytes of a cached block (the unit the cache fetches and keeps): a power of two from 4KiB to 16MiB; smaller blocks fetch fewer bytes for scattered page reads, larger ones keep fewer entries |
//! | `cache-coalesce-bytes` | `0` | missing blocks at most this many bytes apart are fetched in one GET, with the bytes between (fewer requests for more bytes); a GET stays within `cache-request-bytes`, and less than a block means none |
//! | `cache-request-bytes` | `1MiB` (at least a block) | largest GET the cache makes (whole blocks); longer misses are split into GETs made in parallel |
//! | `cache-decoded-bytes` | `64MiB` | bytes of small data files' rows kept decoded in memory (`query::scan::small_files`): a scan that reads more files than it has partitions reads files of at most 16,384 rows and 2 MiB from them instead of opening each (files of micro-commits, before compaction merges them); `0` turns it off, and so does `cache=off` |
//! | `read-ahead-bytes` | `auto` | bytes of a data file's next row groups a scan fetches while it decodes the current one (`query::scan::read_ahead`): `auto` (16 MiB on S3, none on local directories and memory), `0` (off) or a size |

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::units::{parse_bytes, parse_duration};

/// Default time a reader trusts the table version it saw.
pub(crate) const DEFAULT_VERSION_CHECK_INTERVAL: Duration = Duration::from_secs(1);
/// Default bytes of the memory cache.
pub(crate) const DEFAULT_CACHE_MEMORY_BYTES: u64 = 256 << 20;
/// Default bytes of the disk cache.
pub(crate) const DEFAULT_CACHE_DISK_BYTES: u64 = 10 << 30;
/// Default longest GET of the cache.
pub(crate) const DEFAULT_CACHE_REQUEST_BYTES: u64 = 1 << 20;
/// Default bytes of a block of the cache (the last block of an object is shorter).
pub(crate) const DEFAULT_CACHE_BLOCK_BYTES: u64 = 1 << 20;
/// Default bytes of small data files' decoded rows kept.
pub(crate) const DEFAULT_CACHE_DECODED_BYTES: u64 = 64 << 20;
/// Default read-ahead of a scan's reader on object storage.
pub(crate) const DEFAULT_READ_AHEAD_BYTES: u64 = 16 << 20;

/// Where the block cache keeps blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheMode {
    /// In process memory.
    Memory,
    /// In memory, and behind it in a directory on local disk that processes share.
    Disk,
    /// No block cache: every read goes to the store.
    Off,
}

/// Varve's own options of an opened lake (module docs).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LakeOptions {
    pub(crate) version_check_interval: Duration,
    pub(crate) cache: CacheMode,
    pub(crate) cache_memory_bytes: u64,
    pub(crate) cache_dir: Option<PathBuf>,
    pub(crate) cache_disk_bytes: u64,
    pub(crate) cache_request_bytes: u64,
    pub(crate) cache_block_bytes: u64,
    pub(crate) cache_coalesce_bytes: u64,
    pub(crate) cache_decoded_bytes: u64,
    /// `None`: auto.
    pub(crate) filter_pushdown: Option<bool>,
    /// `None`: auto.
    pub(crate) read_ahead_bytes: Option<u64>,
}

impl LakeOptions {
    /// Whether scans of a lake of `kind` apply filters as they decode (`filter-pushdown`), for a
    /// statement that is a top-k (`ORDER BY ... LIMIT`) or not: `auto` is on for local and memory
    /// lakes (measured faster on every suite, bench/results/HISTORY.md), and on S3 for a top-k only,
    /// where skipping whole files saves more than reading a filter's columns apart costs.
    pub(crate) fn filter_pushdown(&self, kind: crate::StorageKind, top_k: bool) -> bool {
        self.filter_pushdown.unwrap_or(kind != crate::StorageKind::S3 || top_k)
    }

    /// Bytes a scan's reader of a lake of `kind` fetches ahead of the row group it decodes
    /// (`read-ahead-bytes`): `auto` is [`DEFAULT_READ_AHEAD_BYTES`] on S3, where each GET waits
    /// tens of milliseconds before its first byte, and 0 elsewhere, where a read costs no wait and
    /// a read-ahead of row groups the scan then skips would be wasted work.
    pub(crate) fn read_ahead_bytes(&self, kind: crate::StorageKind) -> u64 {
        self.read_ahead_bytes.unwrap_or(match kind {
            crate::StorageKind::S3 => DEFAULT_READ_AHEAD_BYTES,
            _ => 0,
        })
    }
}

impl LakeOptions {
    /// Bytes of small data files' decoded rows the lake keeps (`cache-decoded-bytes`; 0 with
    /// `cache=off`, which asks for no caching at all).
    pub(crate) fn decoded_bytes(&self) -> u64 {
        match self.cache {
            CacheMode::Off => 0,
            _ => self.cache_decoded_bytes,
        }
    }
}

impl Default for LakeOptions {
    fn default() -> Self {
        LakeOptions {
            version_check_interval: DEFAULT_VERSION_CHECK_INTERVAL,
            cache: CacheMode::Memory,
            cache_memory_bytes: DEFAULT_CACHE_MEMORY_BYTES,
            cache_dir: None,
            cache_disk_bytes: DEFAULT_CACHE_DISK_BYTES,
            cache_request_bytes: DEFAULT_CACHE_REQUEST_BYTES,
            cache_block_bytes: DEFAULT_CACHE_BLOCK_BYTES,
            cache_coalesce_bytes: 0,
            cache_decoded_bytes: DEFAULT_CACHE_DECODED_BYTES,
            filter_pushdown: None,
            read_ahead_bytes: None,
        }
    }
}

impl LakeOptions {
    /// Reads Varve's options out of `options` and returns them with the rest (the object store's).
    ///
    /// Errors: [`crate::ErrorKind::InvalidInput`] naming the option and the value it refuses.
    pub(crate) fn take(options: &HashMap<String, String>) -> Result<(LakeOptions, HashMap<String, String>)> {
        let mut out = LakeOptions::default();
        let mut rest = HashMap::new();
        let mut mode: Option<CacheMode> = None;
        for (k, v) in options {
            let key = k.to_ascii_lowercase().replace('_', "-");
            let bad = |e: Error| Error::invalid(format!("storage option {k}={v:?}: {}", e.message()));
            let bytes = || parse_bytes(v).map_err(bad);
            match key.as_str() {
                "version-check-interval" => out.version_check_interval = parse_duration(v).map_err(bad)?,
                "cache" => {
                    mode = Some(match v.to_ascii_lowercase().as_str() {
                        "memory" => CacheMode::Memory,
                        "disk" => CacheMode::Disk,
                        "off" | "none" => CacheMode::Off,
                        _ => return Err(bad(Error::invalid("expected memory, disk or off"))),
                    })
                }
                "filter-pushdown" => {
                    out.filter_pushdown = match v.to_ascii_lowercase().as_str() {
                        "auto" => None,
                        "on" | "true" => Some(true),
                        "off" | "false" => Some(false),
                        _ => return Err(bad(Error::invalid("expected auto, on or off"))),
                    }
                }
                "read-ahead-bytes" => {
                    out.read_ahead_bytes = match v.to_ascii_lowercase().as_str() {
                        "auto" => None,
                        "off" => Some(0),
                        _ => Some(bytes()?),
                    }
                }
                "cache-memory-bytes" => out.cache_memory_bytes = bytes()?,
                "cache-dir" => out.cache_dir = Some(PathBuf::from(v)),
                "cache-disk-bytes" => out.cache_disk_bytes = bytes()?,
                "cache-request-bytes" => {
                    let n = bytes()?;
                    if !((4 << 10)..=(256 << 20)).contains(&n) {
                        return Err(bad(Error::invalid("must be between 4KiB and 256MiB")));
                    }
                    out.cache_request_bytes = n;
                }
                "cache-coalesce-bytes" => out.cache_coalesce_bytes = bytes()?,
                "cache-decoded-bytes" => out.cache_decoded_bytes = bytes()?,
                "cache-block-bytes" => {
                    let n = bytes()?;
                    if !n.is_power_of_two() || !((4 << 10)..=(16 << 20)).contains(&n) {
                        return Err(bad(Error::invalid("must be a power of two from 4KiB to 16MiB")));
                    }
                    out.cache_block_bytes = n;
                }
                _ => {
                    rest.insert(k.clone(), v.clone());
                }
            }
        }
        // Unless given, a GET is at least one block.
        if !options
            .keys()
            .any(|k| k.to_ascii_lowercase().replace('_', "-") == "cache-request-bytes")
        {
            out.cache_request_bytes = out.cache_request_bytes.max(out.cache_block_bytes);
        }
        if out.cache_request_bytes < out.cache_block_bytes {
            return Err(Error::invalid(format!(
                "storage option cache-request-bytes ({} bytes) is smaller than a block (cache-block-bytes, {} bytes)",
                out.cache_request_bytes, out.cache_block_bytes
            )));
        }
        out.cache = match (mode, &out.cache_dir) {
            (Some(CacheMode::Disk), None) => {
                return Err(Error::invalid(
                    "storage option cache=disk needs cache-dir=DIR (a local directory for the blocks)",
                ))
            }
            (Some(m), _) => m,
            (None, Some(_)) => CacheMode::Disk,
            (None, None) => CacheMode::Memory,
        };
        Ok((out, rest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn take(pairs: &[(&str, &str)]) -> Result<(LakeOptions, HashMap<String, String>)> {
        LakeOptions::take(&pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
    }

    #[test]
    fn varve_options_are_taken_and_the_rest_kept() {
        let (o, rest) = take(&[("version_check_interval", "250ms"), ("region", "eu"), ("cache", "off")]).unwrap();
        assert_eq!(o.version_check_interval, Duration::from_millis(250));
        assert_eq!(o.cache, CacheMode::Off);
        assert_eq!(rest.len(), 1);
        let (o, _) = take(&[("cache-dir", "/tmp/x"), ("cache-memory-bytes", "1MiB")]).unwrap();
        assert_eq!(o.cache, CacheMode::Disk);
        assert_eq!(o.cache_memory_bytes, 1 << 20);
        assert_eq!(take(&[]).unwrap().0, LakeOptions::default());
        let e = take(&[("cache", "disk")]).unwrap_err();
        assert!(e.message().contains("cache-dir"), "{e}");
        let e = take(&[("cache", "ssd")]).unwrap_err();
        assert!(e.message().contains("cache=\"ssd\""), "{e}");
        assert!(take(&[("cache-request-bytes", "1")]).is_err());
        assert!(take(&[("cache-request-bytes", "64KiB")]).is_err());
        let (o, _) = take(&[("cache-request-bytes", "64KiB"), ("cache-block-bytes", "64KiB")]).unwrap();
        assert_eq!((o.cache_block_bytes, o.cache_request_bytes), (64 << 10, 64 << 10));
        assert!(take(&[("cache-block-bytes", "100KiB")]).is_err());
        assert!(take(&[("cache-block-bytes", "1KiB")]).is_err());
        let (o, _) = take(&[("cache-block-bytes", "4MiB")]).unwrap();
        assert_eq!(
            o.cache_request_bytes,
            4 << 20,
            "a GET is at least one block unless given"
        );
        assert!(take(&[("cache-block-bytes", "4MiB"), ("cache-request-bytes", "1MiB")]).is_err());
        assert!(take(&[("version-check-interval", "soon")]).is_err());
        let (o, _) = take(&[("filter_pushdown", "off")]).unwrap();
        assert!(!o.filter_pushdown(crate::StorageKind::Local, true));
        let o = LakeOptions::default();
        assert!(o.filter_pushdown(crate::StorageKind::Local, false));
        assert!(!o.filter_pushdown(crate::StorageKind::S3, false) && o.filter_pushdown(crate::StorageKind::S3, true));
        assert_eq!(o.read_ahead_bytes(crate::StorageKind::S3), DEFAULT_READ_AHEAD_BYTES);
        assert_eq!(o.read_ahead_bytes(crate::StorageKind::Local), 0);
        let (o, _) = take(&[("read-ahead-bytes", "4MiB")]).unwrap();
        assert_eq!(o.read_ahead_bytes(crate::StorageKind::Local), 4 << 20);
        let (o, _) = take(&[("read-ahead-bytes", "off")]).unwrap();
        assert_eq!(o.read_ahead_bytes(crate::StorageKind::S3), 0);
        assert!(take(&[("read-ahead-bytes", "lots")]).is_err());
    }
}
