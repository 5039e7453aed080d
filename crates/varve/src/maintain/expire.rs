//! Snapshot expiry and orphan cleanup (Iceberg spec, "Snapshot Retention"; the Iceberg
//! `expire_snapshots` and `remove_orphan_files` procedures).
//!
//! Expiry removes snapshots older than the snapshot retention from the metadata, always keeping
//! the current snapshot and the newest `min_snapshots`, then deletes the objects (manifest lists,
//! manifests, data files, last-value indexes) that only expired snapshots referenced. Orphan cleanup deletes objects
//! under the table that no retained snapshot references (files of lost or crashed commits, old
//! metadata versions) once they are older than a safety window, so that the files of a commit in
//! flight are never removed. Neither ever deletes the current metadata or a newer version.

use std::collections::HashSet;
use std::time::Duration;

use futures::TryStreamExt;
use iceberg::spec::TableMetadata;
use object_store::path::Path;
use object_store::ObjectStoreExt;

use crate::catalog::{self, LoadedTable, MetadataCache};
use crate::error::Result;
use crate::storage::Storage;

/// Snapshots of `t` to expire at `now_ms`: those older than `retention` beyond the newest
/// `min_snapshots`, and those beyond the newest `max_snapshots` whatever their age (at least
/// `min_snapshots`, as `properties::max_snapshots` gives it)
/// (`commit::beyond_newest`, the rule commits apply too); never the current one.
pub(crate) fn to_expire(
    t: &LoadedTable,
    now_ms: i64,
    retention: Duration,
    min_snapshots: usize,
    max_snapshots: usize,
) -> Vec<i64> {
    let md = &t.metadata;
    let mut snaps: Vec<(i64, i64)> = md.snapshots().map(|s| (s.timestamp_ms(), s.snapshot_id())).collect();
    snaps.sort_by(|a, b| b.cmp(a));
    let cutoff = now_ms.saturating_sub(retention.as_millis() as i64);
    let current = md.current_snapshot_id();
    let mut ids: Vec<i64> = snaps
        .into_iter()
        .skip(min_snapshots)
        .filter(|(ts, id)| *ts < cutoff && Some(*id) != current)
        .map(|(_, id)| id)
        .collect();
    for id in crate::commit::beyond_newest(md, &t.refs, max_snapshots) {
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids
}

/// Every object location the snapshots `ids` of `md` reference: manifest lists, manifests, live
/// data files and last-value indexes.
pub(crate) async fn reachable(
    storage: &Storage,
    cache: &MetadataCache,
    md: &TableMetadata,
    ids: &[i64],
) -> Result<HashSet<String>> {
    let mut out = HashSet::new();
    for id in ids {
        let Some(s) = md.snapshot_by_id(*id) else {
            continue;
        };
        out.insert(s.manifest_list().to_string());
        if let Some(ix) = crate::index::last_value::IndexRef::of(s) {
            out.insert(ix.location);
        }
        for m in catalog::manifest_list(storage, cache, s).await?.iter() {
            out.insert(m.manifest_path.clone());
        }
        for e in catalog::live_entries(storage, cache, md, Some(*id)).await? {
            out.insert(e.data_file.file_path().to_string());
        }
    }
    Ok(out)
}

/// Deletes `locations`; returns how many objects and bytes were deleted (sizes from `sizes` where
/// known).
pub(crate) async fn delete_locations(storage: &Storage, locations: &[String]) -> (u64, u64) {
    let mut n = 0;
    let mut bytes = 0;
    for l in locations {
        let Ok(path) = storage.path_of(l) else {
            continue;
        };
        let size = storage.store.head(&path).await.map(|m| m.size).unwrap_or(0);
        if storage.store.delete(&path).await.is_ok() {
            n += 1;
            bytes += size;
        }
    }
    (n, bytes)
}

/// An object under the table that no retained snapshot references.
#[derive(Debug, Clone)]
pub(crate) struct Orphan {
    pub(crate) path: Path,
    pub(crate) size: u64,
}

/// The orphans of `t` older than `min_age` (by the store's last-modified time).
pub(crate) async fn find_orphans(
    storage: &Storage,
    cache: &MetadataCache,
    t: &LoadedTable,
    min_age: Duration,
) -> Result<Vec<Orphan>> {
    let md = &t.metadata;
    let ids: Vec<i64> = md.snapshots().map(|s| s.snapshot_id()).collect();
    let referenced: HashSet<Path> = reachable(storage, cache, md, &ids)
        .await?
        .iter()
        .filter_map(|l| storage.path_of(l).ok())
        .collect();
    let keep_meta = [
        t.ident.metadata_file(t.version),
        t.ident.version_hint(),
        crate::catalog::head::path(&t.ident),
    ];
    let cutoff = chrono::Utc::now() - chrono::Duration::from_std(min_age).unwrap_or_default();
    let objects: Vec<object_store::ObjectMeta> = storage.store.list(Some(&t.ident.prefix())).try_collect().await?;
    let mut out = Vec::new();
    for o in objects {
        if referenced.contains(&o.location) || keep_meta.contains(&o.location) || o.last_modified > cutoff {
            continue;
        }
        let name = o.location.filename().unwrap_or_default();
        // Never the current metadata or a newer one (a commit that landed after we loaded).
        if let Some(v) = name.strip_prefix('v').and_then(|r| r.strip_suffix(".metadata.json")) {
            if v.parse::<u64>().map_or(true, |v| v >= t.version) {
                continue;
            }
        }
        out.push(Orphan {
            path: o.location,
            size: o.size,
        });
    }
    out.sort_by_key(|o| deletion_rank(&o.path));
    Ok(out)
}

/// The order orphans are deleted in: other objects first, then old metadata versions oldest first
/// by number (a LIST gives `v10` before `v9`). A reader that checks the version it saw by asking
/// whether `v<N>` exists and `v<N+1>` does not (`catalog::find_current_version`) relies on a
/// version never being removed before an older one, also when cleanup is killed halfway.
fn deletion_rank(path: &Path) -> (u8, u64) {
    let name = path.filename().unwrap_or_default();
    match name.strip_prefix('v').and_then(|r| r.strip_suffix(".metadata.json")) {
        Some(v) => (1, v.parse().unwrap_or(0)),
        None => (0, 0),
    }
}

/// Deletes orphans; returns objects and bytes deleted.
pub(crate) async fn delete_orphans(storage: &Storage, orphans: &[Orphan]) -> (u64, u64) {
    let mut n = 0;
    let mut bytes = 0;
    for o in orphans {
        if storage.store.delete(&o.path).await.is_ok() {
            n += 1;
            bytes += o.size;
        } else if deletion_rank(&o.path).0 == 1 {
            // A metadata version left behind must not outlive a newer one (`deletion_rank`):
            // the rest wait for the next cleanup.
            break;
        }
    }
    (n, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_versions_are_deleted_last_and_oldest_first() {
        let mut paths: Vec<Path> = [
            "t/metadata/v10.metadata.json",
            "t/data/a.parquet",
            "t/metadata/v9.metadata.json",
            "t/metadata/v2.metadata.json",
            "t/metadata/snap-1.avro",
        ]
        .into_iter()
        .map(Path::from)
        .collect();
        paths.sort_by_key(deletion_rank);
        let names: Vec<&str> = paths.iter().map(|p| p.filename().unwrap()).collect();
        assert_eq!(
            names[2..],
            ["v2.metadata.json", "v9.metadata.json", "v10.metadata.json"]
        );
    }
}
