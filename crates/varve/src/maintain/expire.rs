//! Snapshot expiry and orphan cleanup (Iceberg spec, "Snapshot Retention"; the Iceberg
//! `expire_snapshots` and `remove_orphan_files` procedures).
//!
//! Expiry removes snapshots older than the snapshot retention from the metadata, always keeping
//! the current snapshot and the newest `min_snapshots`, then deletes the objects (manifest lists,
//! manifests, data files, last-value indexes) that only expired snapshots referenced. Orphan cleanup deletes objects
//! under the table that no retained snapshot references (files of lost or crashed commits, old
//! metadata versions) once they are older than a safety window; a fence commit keeps the files
//! of a commit in flight from being removed whatever the window ([`find_orphans`]). Neither ever
//! deletes the current metadata or a newer version.

use std::collections::HashSet;
use std::time::Duration;

use futures::TryStreamExt;
use iceberg::spec::{Operation, TableMetadata};
use object_store::path::Path;
use object_store::ObjectStoreExt;

use crate::catalog::{self, LoadedTable, MetadataCache, TableIdent};
use crate::commit::{self, Transaction};
use crate::error::Result;
use crate::format::properties::PROP_ORPHAN_FENCE;
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

/// Whether `path` names a metadata version `v<N>.metadata.json`; its `N`.
fn metadata_version(path: &Path) -> Option<u64> {
    catalog::parse_version(path.filename()?)
}

/// Every object location that a snapshot of `t` references (all of its snapshots).
async fn referenced(storage: &Storage, cache: &MetadataCache, t: &LoadedTable) -> Result<HashSet<Path>> {
    let ids: Vec<i64> = t.metadata.snapshots().map(|s| s.snapshot_id()).collect();
    Ok(reachable(storage, cache, &t.metadata, &ids)
        .await?
        .iter()
        .filter_map(|l| storage.path_of(l).ok())
        .collect())
}

/// The orphans of table `ident`: objects under it that no snapshot of the newest version
/// references, older than `min_age` (by the store's last-modified time), in the order to delete
/// them ([`deletion_rank`]).
///
/// The protocol, so that no commit that lands is left without its files (a commit may have
/// uploaded its data files before the listing and commit after it):
/// 1. list the table's objects;
/// 2. read the newest version (after the listing: every commit that landed before the listing
///    ended is in it); objects none of its snapshots reference are candidates;
/// 3. with `fence`, when a candidate is not a metadata version, commit a new
///    `varve.orphan-fence` (a metadata-only commit), read the newest version again and spare
///    every file it references. A commit that lands after the fence is built on metadata that
///    carries it, and copies any data file it uploaded before it saw the fence to a new name
///    (`commit::relocate`), so it never references a candidate.
///
/// Metadata versions: never the newest or a newer one, and none younger than
/// [`commit::METADATA_VERSION_MIN_AGE`] whatever `min_age` says: a writer targets `v<N>` for at
/// most [`commit::MAX_BASE_AGE`] after it saw `v<N>` absent, so a number deleted after that is
/// never written again.
///
/// Errors: [`crate::ErrorKind::NotFound`] when the table is gone; storage errors; the fence
/// commit's errors.
pub(crate) async fn find_orphans(
    storage: &Storage,
    cache: &MetadataCache,
    ident: &TableIdent,
    min_age: Duration,
    fence: bool,
) -> Result<Vec<Orphan>> {
    let now = chrono::Utc::now();
    let cutoff = now - chrono::Duration::from_std(min_age).unwrap_or_default();
    let metadata_cutoff =
        now - chrono::Duration::from_std(min_age.max(commit::METADATA_VERSION_MIN_AGE)).unwrap_or_default();
    let objects: Vec<object_store::ObjectMeta> = storage.store.list(Some(&ident.prefix())).try_collect().await?;
    let newest = catalog::load(storage, cache, ident).await?;
    let referenced_now = referenced(storage, cache, &newest).await?;
    let keep = [ident.version_hint(), crate::catalog::head::path(ident)];
    let spared = |o: &object_store::ObjectMeta| referenced_now.contains(&o.location) || keep.contains(&o.location);
    let mut out: Vec<Orphan> = objects
        .into_iter()
        .filter(|o| !spared(o) && old_enough(o, newest.version, cutoff, metadata_cutoff))
        .map(|o| Orphan {
            path: o.location,
            size: o.size,
        })
        .collect();
    if fence && out.iter().any(|o| metadata_version(&o.path).is_none()) {
        let mut txn = Transaction::new(Operation::Append);
        txn.set_properties
            .insert(PROP_ORPHAN_FENCE.to_string(), uuid::Uuid::new_v4().to_string());
        if let Err(e) = commit::commit(storage, cache, newest, txn).await {
            // Without its fence the cleanup deletes no data file: only old metadata versions.
            if e.kind() != crate::error::ErrorKind::Conflict {
                return Err(e);
            }
            tracing::warn!(table = %ident, "orphan cleanup: the fence did not commit ({e}); data files left for the next run");
            out.retain(|o| metadata_version(&o.path).is_some());
            out.sort_by_key(|o| deletion_rank(&o.path));
            return Ok(out);
        }
        let fenced = catalog::load(storage, cache, ident).await?;
        let referenced_fenced = referenced(storage, cache, &fenced).await?;
        out.retain(|o| !referenced_fenced.contains(&o.path));
    }
    out.sort_by_key(|o| deletion_rank(&o.path));
    Ok(out)
}

/// Whether an unreferenced object `o` is old enough to delete: last modified before `cutoff`,
/// and for a metadata version, older than `newest` and last modified before `metadata_cutoff`.
fn old_enough(
    o: &object_store::ObjectMeta,
    newest: u64,
    cutoff: chrono::DateTime<chrono::Utc>,
    metadata_cutoff: chrono::DateTime<chrono::Utc>,
) -> bool {
    match metadata_version(&o.location) {
        Some(v) => v < newest && o.last_modified <= metadata_cutoff && o.last_modified <= cutoff,
        None => o.last_modified <= cutoff,
    }
}

/// The order orphans are deleted in: other objects first, then old metadata versions oldest first
/// by number (a LIST gives `v10` before `v9`). A reader that checks the version it saw by asking
/// whether `v<N>` exists and `v<N+1>` does not (`catalog::find_current_version`) relies on a
/// version never being removed before an older one, also when cleanup is killed halfway.
fn deletion_rank(path: &Path) -> (u8, u64) {
    match metadata_version(path) {
        Some(v) => (1, v),
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

    fn meta(path: &str, age: Duration) -> object_store::ObjectMeta {
        object_store::ObjectMeta {
            location: Path::from(path),
            last_modified: chrono::Utc::now() - chrono::Duration::from_std(age).unwrap(),
            size: 1,
            e_tag: None,
            version: None,
        }
    }

    #[test]
    fn young_metadata_versions_stay_whatever_the_orphan_age() {
        let now = chrono::Utc::now();
        let cutoff = now; // --orphan-age 0s
        let metadata_cutoff = now - chrono::Duration::from_std(commit::METADATA_VERSION_MIN_AGE).unwrap();
        let minute = Duration::from_secs(60);
        // Data files and manifests go at age zero (the fence guards commits in flight).
        assert!(old_enough(
            &meta("t/data/a.parquet", Duration::from_millis(1)),
            9,
            cutoff,
            metadata_cutoff
        ));
        assert!(old_enough(
            &meta("t/metadata/snap-1.avro", Duration::from_millis(1)),
            9,
            cutoff,
            metadata_cutoff
        ));
        // A metadata version a writer may still target stays; an old one goes.
        assert!(!old_enough(
            &meta("t/metadata/v3.metadata.json", minute),
            9,
            cutoff,
            metadata_cutoff
        ));
        assert!(old_enough(
            &meta("t/metadata/v3.metadata.json", 20 * minute),
            9,
            cutoff,
            metadata_cutoff
        ));
        // Never the newest version or a newer one, however old.
        assert!(!old_enough(
            &meta("t/metadata/v9.metadata.json", 60 * minute),
            9,
            cutoff,
            metadata_cutoff
        ));
        assert!(!old_enough(
            &meta("t/metadata/v10.metadata.json", 60 * minute),
            9,
            cutoff,
            metadata_cutoff
        ));
        // A longer orphan age holds for metadata versions too.
        let hour_ago = now - chrono::Duration::hours(1);
        assert!(!old_enough(
            &meta("t/metadata/v3.metadata.json", 20 * minute),
            9,
            hour_ago,
            metadata_cutoff
        ));
    }

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
