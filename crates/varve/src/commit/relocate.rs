//! Data files that went up before an orphan cleanup's fence: copied to new names before the
//! commit references them.
//!
//! Orphan cleanup (`maintain::expire`) lists a table's objects, then commits a fence (the
//! [`PROP_ORPHAN_FENCE`] property, a new random id) and only then deletes what the newest
//! version does not reference. A commit that lands after the fence builds on metadata that
//! carries it. Its data files are safe when they went up after this process saw that fence
//! (they were not in the cleanup's listing); files that went up before may have been listed as
//! unreferenced and be deleted at any moment. Those are copied (or uploaded again from memory,
//! for files the commit itself uploaded) to new names, and the commit references the copies. A
//! source already gone makes the commit fail with a retryable [`ErrorKind::Conflict`]: nothing
//! is committed, nothing acknowledged is lost.

use std::collections::HashMap;

use bytes::Bytes;
use iceberg::spec::DataFile;
use object_store::path::Path;
use object_store::ObjectStoreExt;

use super::Transaction;
use crate::catalog::{LoadedTable, MetadataCache};
use crate::error::{Error, ErrorKind, Result};
use crate::format::properties::PROP_ORPHAN_FENCE;
use crate::storage::Storage;

/// One commit's record of the fence its data files went up under and of the copies it made.
#[derive(Debug)]
pub(super) struct Relocation {
    /// The fence of the metadata this process knew when the data files went up.
    fence: Option<String>,
    /// Original location (as a [`super::Rebase`] hook may give it again) to the copy in use.
    copies: HashMap<String, DataFile>,
    /// Bytes of data files the commit uploads itself, by location: uploaded again, not copied.
    bytes: HashMap<String, Bytes>,
    /// Objects no longer referenced once the commit lands (originals of copies).
    pub(super) superseded: Vec<Path>,
}

/// The orphan-cleanup fence of `t`.
fn fence_of(t: &LoadedTable) -> Option<String> {
    t.metadata.properties().get(PROP_ORPHAN_FENCE).cloned()
}

impl Relocation {
    /// Starts from `base`, the metadata the transaction's uploads were made under (every caller
    /// of `commit` loads its base before it uploads).
    pub(super) fn new(base: &LoadedTable) -> Self {
        Relocation {
            fence: fence_of(base),
            copies: HashMap::new(),
            bytes: HashMap::new(),
            superseded: vec![],
        }
    }

    /// Keeps the bytes of data files the commit is about to upload (cheap: shared buffers).
    pub(super) fn keep(&mut self, storage: &Storage, pending: &[(Path, Bytes)]) {
        for (path, bytes) in pending {
            self.bytes.insert(storage.location(path), bytes.clone());
        }
    }

    /// Points `txn` at the copies made so far, and copies every uploaded data file of `txn` when
    /// `latest` carries a fence newer than the one the files went up under.
    ///
    /// Errors: [`ErrorKind::Conflict`] (retryable) when a file to copy is gone already; storage
    /// errors.
    pub(super) async fn apply(
        &mut self,
        storage: &Storage,
        cache: &MetadataCache,
        latest: &LoadedTable,
        txn: &mut Transaction,
    ) -> Result<()> {
        for f in txn.added.iter_mut() {
            if let Some(copy) = self.copies.get(f.file_path()) {
                *f = copy.clone();
            }
        }
        let fence = fence_of(latest);
        if fence == self.fence {
            return Ok(());
        }
        let pending: Vec<String> = txn.pending.iter().map(|(p, _)| storage.location(p)).collect();
        let mut moved: HashMap<String, DataFile> = HashMap::new();
        for f in txn.added.iter_mut() {
            let from = f.file_path().to_string();
            if pending.contains(&from) {
                // Goes up in this attempt, after `latest` was read: not in any listing before it.
                continue;
            }
            let copy = self
                .copy(storage, cache, &latest.ident.to_string(), f, txn.footers.as_mut_slice())
                .await?;
            txn.uploaded.push(storage.path_of(copy.file_path())?);
            moved.insert(from, copy.clone());
            *f = copy;
        }
        for copy in self.copies.values_mut() {
            if let Some(newer) = moved.get(copy.file_path()) {
                *copy = newer.clone();
            }
        }
        self.copies.extend(moved);
        self.fence = fence;
        Ok(())
    }

    /// Copies `f` to a new name in its directory; returns the entry for the copy.
    async fn copy(
        &mut self,
        storage: &Storage,
        cache: &MetadataCache,
        table: &str,
        f: &DataFile,
        footers: &mut [crate::write::WrittenFooter],
    ) -> Result<DataFile> {
        let from = storage.path_of(f.file_path())?;
        let dir = from.as_ref().rsplit_once('/').map(|(d, _)| d).unwrap_or("");
        let to = Path::from(format!("{dir}/{}.parquet", uuid::Uuid::now_v7()));
        let location = storage.location(&to);
        match self.bytes.remove(f.file_path()) {
            Some(bytes) => {
                super::append::upload_data_files(storage, cache, &[(to.clone(), bytes.clone())]).await?;
                self.bytes.insert(location.clone(), bytes);
            }
            None => match storage.store.copy(&from, &to).await {
                Ok(()) => {}
                Err(object_store::Error::NotFound { .. }) => {
                    return Err(Error::new(
                        ErrorKind::Conflict,
                        format!(
                            "table {table}: a concurrent orphan cleanup deleted {} before this change committed; \
                             nothing was committed, run it again",
                            f.file_path()
                        ),
                    ));
                }
                Err(e) => return Err(e.into()),
            },
        }
        for footer in footers.iter_mut().filter(|(p, _, _)| *p == from) {
            footer.0 = to.clone();
        }
        tracing::info!(table, from = %from, to = %to, "data file copied past an orphan cleanup's fence");
        self.superseded.push(from);
        crate::format::manifest::with_location(f, location)
    }
}
