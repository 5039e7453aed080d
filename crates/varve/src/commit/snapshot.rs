//! Producing the next table metadata for a [`Transaction`] on top of a base version: the new
//! manifest and manifest list (written to storage here), the snapshot and its summary (Iceberg
//! spec, "Snapshots", "Snapshot Summary"), and the metadata changes (schema, properties, expired
//! snapshots). Nothing here is visible until `commit` writes the metadata file.
//!
//! Manifests (Iceberg spec, "Manifests"): an append that removes nothing adds one manifest of its
//! files in front of the parent's (a fast append) while the table has fewer than
//! [`MANIFEST_MERGE_COUNT`] manifests; otherwise, and for every change that removes files, the
//! parent's manifests are merged into one new manifest holding the added files (`ADDED`), the
//! files carried over (`EXISTING`, with their sequence numbers) and the removed files (`DELETED`).
//! So planning reads a bounded number of manifests however many commits a table has had.
//!
//! The snapshot's last-value index (`index::last_value`) is derived here too, uploaded beside the
//! new manifest, and named in the summary.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use iceberg::spec::{Snapshot, Summary, TableMetadata, TableMetadataBuilder, MAIN_BRANCH};
use object_store::path::Path;

use super::{batch_ids, Transaction, MAX_BATCH_IDS, SUMMARY_BATCH_ID, SUMMARY_NOTE};
use crate::catalog::{self, LoadedTable, MetadataCache};
use crate::error::{Error, Result};
use crate::format::manifest::{self, ManifestContents};
use crate::format::metadata_json::{self, Refs};
use crate::format::properties::{self, PROP_BATCH_IDS};
use crate::format::schema;
use crate::index::last_value;
use crate::storage::Storage;

/// A fast append adds a manifest while the parent has fewer than this many; at this count the next
/// commit merges them into one. Planning a scan reads at most this many manifests (plus the list),
/// in parallel; merging rewrites every live entry once per this many appends.
pub(crate) const MANIFEST_MERGE_COUNT: usize = 16;

/// The next metadata of a table, ready to be written as `v<N+1>.metadata.json`.
pub(crate) struct Prepared {
    pub(crate) metadata: TableMetadata,
    /// Its snapshot references: the base's, with `main` at the new snapshot and without those
    /// whose snapshot was expired (as the metadata builder changes them).
    pub(crate) refs: Refs,
    /// The new snapshot, when the change made one.
    pub(crate) snapshot_id: Option<i64>,
    /// Manifests and the manifest list written for this attempt (deleted when it loses).
    pub(crate) written: Vec<Path>,
}

/// Builds the next metadata of `latest` with `txn` applied, writing its manifests and its
/// last-value index (rebuilt from the data files only in the `first_attempt`; `index::last_value`).
pub(crate) async fn prepare(
    storage: &Storage,
    cache: &MetadataCache,
    latest: &LoadedTable,
    txn: &Transaction,
    first_attempt: bool,
) -> Result<Prepared> {
    let md = &latest.metadata;
    let prev_location = storage.location(&latest.ident.metadata_file(latest.version));
    let mut b = TableMetadataBuilder::new_from_metadata(md.as_ref().clone(), Some(prev_location));
    let mut written = Vec::new();
    let mut snapshot_id = None;

    let schema = match &txn.schema_change {
        Some(change) => {
            let id = md
                .schemas_iter()
                .find(|x| schema::same_columns(x, &change.new))
                .map(|x| x.schema_id())
                .unwrap_or_else(|| md.schemas_iter().map(|x| x.schema_id()).max().unwrap_or(0) + 1);
            let s = schema::with_schema_id(&change.new, id)?;
            if !schema::same_columns(md.current_schema(), &s) {
                b = b.add_current_schema(s.clone())?;
            }
            Arc::new(s)
        }
        None => md.current_schema().clone(),
    };

    let mut props = txn.set_properties.clone();
    if let Some(batch) = &txn.batch_id {
        let mut ids = batch_ids(md.properties());
        ids.retain(|b| b != batch);
        ids.insert(0, batch.clone());
        ids.truncate(MAX_BATCH_IDS);
        props.insert(PROP_BATCH_IDS.to_string(), serde_json::to_string(&ids)?);
    }
    if !props.is_empty() {
        b = b.set_properties(props)?;
    }
    if !txn.unset_properties.is_empty() {
        b = b.remove_properties(&txn.unset_properties)?;
    }

    if txn.makes_snapshot() {
        let id = new_snapshot_id();
        let sequence_number = md.last_sequence_number() + 1;
        let parent = md.current_snapshot();
        let meta_dir = latest.ident.metadata_dir();
        let tag = uuid::Uuid::new_v4();
        let parent_manifests = match parent {
            Some(p) => catalog::manifest_list(storage, cache, p).await?.as_ref().clone(),
            None => vec![],
        };
        let merge = !txn.removed.is_empty() || parent_manifests.len() + 1 > MANIFEST_MERGE_COUNT;
        let mut contents = ManifestContents {
            added: txn.added.clone(),
            ..Default::default()
        };
        let mut manifests = Vec::new();
        if merge {
            let removed: HashSet<&str> = txn.removed.iter().map(|f| f.file_path()).collect();
            let live = catalog::live_entries(storage, cache, md, md.current_snapshot_id()).await?;
            for e in live {
                if removed.contains(e.data_file.file_path()) {
                    contents.deleted.push(e);
                } else {
                    contents.existing.push(e);
                }
            }
        } else {
            manifests.extend(parent_manifests);
        }
        let index = last_value::next(
            storage,
            cache,
            latest,
            last_value::Applied {
                change: &txn.last_value,
                added: &txn.added,
                removed: &txn.removed,
            },
            &schema::to_arrow(&schema)?,
            first_attempt,
        )
        .await?;
        // The new manifest and manifest list are encoded here, then go up with the new index (if
        // any) at once: one round trip.
        let mut uploads: Vec<(Path, bytes::Bytes)> = Vec::new();
        if let Some((path, bytes)) = index.as_ref().and_then(|i| i.upload.as_ref()) {
            uploads.push((path.clone(), bytes.clone()));
        }
        if !contents.is_empty() {
            let manifest_path = meta_dir.clone().join(format!("{tag}-m0.avro"));
            let (entry, bytes) = manifest::encode_manifest(
                &storage.location(&manifest_path),
                id,
                sequence_number,
                schema.clone(),
                md.default_partition_spec().as_ref().clone(),
                contents,
            )
            .await?;
            manifests.insert(0, entry);
            uploads.push((manifest_path, bytes));
        }
        let list_bytes =
            manifest::encode_manifest_list(id, parent.map(|p| p.snapshot_id()), sequence_number, manifests).await?;
        let list_path = meta_dir.clone().join(format!("snap-{id}-1-{tag}.avro"));
        uploads.push((list_path.clone(), list_bytes));
        let puts = uploads.iter().map(|(path, bytes)| storage.put(path, bytes.clone()));
        let results = futures::future::join_all(puts).await;
        // Whatever landed is deleted again if this attempt fails or loses.
        let mut failed = None;
        for ((path, _), r) in uploads.iter().zip(results) {
            match r {
                Ok(()) => written.push(path.clone()),
                Err(e) => failed = failed.or(Some(e)),
            }
        }
        if let Some(e) = failed {
            storage.delete_quietly(&written).await;
            return Err(e);
        }

        let snapshot = Snapshot::builder()
            .with_snapshot_id(id)
            .with_parent_snapshot_id(parent.map(|p| p.snapshot_id()))
            .with_sequence_number(sequence_number)
            .with_timestamp_ms(chrono::Utc::now().timestamp_millis().max(md.last_updated_ms() + 1))
            .with_manifest_list(storage.location(&list_path))
            .with_summary(Summary {
                operation: txn.operation.clone(),
                additional_properties: {
                    let mut p = summary(parent.map(|p| &p.summary().additional_properties), txn);
                    p.extend(index.iter().flat_map(|i| i.index.summary()));
                    p
                },
            })
            .with_schema_id(schema.schema_id())
            .build();
        b = b
            .add_snapshot(snapshot)?
            .set_ref(MAIN_BRANCH, metadata_json::main_branch(id))?;
        snapshot_id = Some(id);
    }
    let mut expire = txn.expire_snapshots.clone();
    if snapshot_id.is_some() {
        // A new snapshot pushes the oldest out beyond `varve.max-snapshots` (their files stay
        // until maintenance's orphan cleanup, so readers of those snapshots finish).
        let keep = properties::max_snapshots(md.properties()).saturating_sub(1);
        for id in beyond_newest(md, &latest.refs, keep) {
            if !expire.contains(&id) {
                expire.push(id);
            }
        }
    }
    if !expire.is_empty() {
        let current = md.current_snapshot_id();
        if txn.expire_snapshots.iter().any(|id| Some(*id) == current) {
            return Err(Error::internal("expiry must keep the current snapshot"));
        }
        b = b.remove_snapshots(&expire);
    }
    let built = b.build()?;
    let mut refs = latest.refs.as_ref().clone();
    if let Some(id) = snapshot_id {
        refs.insert(MAIN_BRANCH.to_string(), metadata_json::main_branch(id));
    }
    refs.retain(|_, r| built.metadata.snapshot_by_id(r.snapshot_id).is_some());
    Ok(Prepared {
        refs,
        metadata: built.metadata,
        snapshot_id,
        written,
    })
}

/// The snapshots of `md` beyond its newest `keep` (by sequence number), except the current one and
/// those a branch or tag other than `main` names in `refs`: what a commit that adds a snapshot
/// expires so that the table keeps at most `varve.max-snapshots` (`keep` is then that bound less
/// one, for the new snapshot), and what maintenance expires for the same bound.
///
/// Expiring only the oldest keeps the snapshot log a contiguous history (Iceberg spec, "Snapshot
/// Retention"), so time travel to a time within what is kept still finds the snapshot current then.
pub(crate) fn beyond_newest(md: &TableMetadata, refs: &Refs, keep: usize) -> Vec<i64> {
    if md.snapshots().len() <= keep {
        return vec![];
    }
    let named: HashSet<i64> = refs
        .iter()
        .filter(|(name, _)| name.as_str() != MAIN_BRANCH)
        .map(|(_, r)| r.snapshot_id)
        .collect();
    let current = md.current_snapshot_id();
    let mut snaps: Vec<(i64, i64, i64)> = md
        .snapshots()
        .map(|s| (s.sequence_number(), s.timestamp_ms(), s.snapshot_id()))
        .collect();
    snaps.sort_unstable_by(|a, b| b.cmp(a));
    snaps
        .into_iter()
        .skip(keep)
        .map(|(_, _, id)| id)
        .filter(|id| Some(*id) != current && !named.contains(id))
        .collect()
}

/// The snapshot summary (Iceberg spec, "Snapshot Summary"): what this change added and removed,
/// and the table's totals after it, from the parent's totals.
fn summary(parent: Option<&HashMap<String, String>>, txn: &Transaction) -> HashMap<String, String> {
    let prev = |k: &str| -> u64 { parent.and_then(|p| p.get(k)).and_then(|v| v.parse().ok()).unwrap_or(0) };
    let added_files = txn.added.len() as u64;
    let added_rows: u64 = txn.added.iter().map(|f| f.record_count()).sum();
    let added_bytes: u64 = txn.added.iter().map(|f| f.file_size_in_bytes()).sum();
    let removed_files = txn.removed.len() as u64;
    let removed_rows: u64 = txn.removed.iter().map(|f| f.record_count()).sum();
    let removed_bytes: u64 = txn.removed.iter().map(|f| f.file_size_in_bytes()).sum();
    let total = |k: &str, add: u64, sub: u64| (prev(k) + add).saturating_sub(sub).to_string();
    let mut p = HashMap::new();
    if added_files > 0 {
        p.insert("added-data-files".to_string(), added_files.to_string());
        p.insert("added-records".to_string(), added_rows.to_string());
        p.insert("added-files-size".to_string(), added_bytes.to_string());
    }
    if removed_files > 0 {
        p.insert("deleted-data-files".to_string(), removed_files.to_string());
        p.insert("deleted-records".to_string(), removed_rows.to_string());
        p.insert("removed-files-size".to_string(), removed_bytes.to_string());
    }
    p.insert(
        "total-data-files".to_string(),
        total("total-data-files", added_files, removed_files),
    );
    p.insert(
        "total-records".to_string(),
        total("total-records", added_rows, removed_rows),
    );
    p.insert(
        "total-files-size".to_string(),
        total("total-files-size", added_bytes, removed_bytes),
    );
    p.insert("total-delete-files".to_string(), "0".to_string());
    p.insert("total-position-deletes".to_string(), "0".to_string());
    p.insert("total-equality-deletes".to_string(), "0".to_string());
    if let Some(b) = &txn.batch_id {
        p.insert(SUMMARY_BATCH_ID.to_string(), b.clone());
    }
    if let Some(n) = &txn.note {
        p.insert(SUMMARY_NOTE.to_string(), n.clone());
    }
    if let Some(cp) = &txn.checkpoint {
        let (k, v) = cp.summary();
        p.insert(k, v);
    }
    p
}

/// A random positive snapshot id (Iceberg spec: snapshot ids are unique longs).
fn new_snapshot_id() -> i64 {
    let u = uuid::Uuid::new_v4().as_u128();
    ((u >> 64) as i64 ^ (u as i64)) & i64::MAX
}
