//! Commit: the one transaction every change of a table goes through.
//!
//! A [`Transaction`] names what a change does (Iceberg spec, "Snapshots" and "Commit Conflict
//! Resolution and Retry"): data files added and removed, the operation kind, summary entries, a
//! schema change, table properties set or removed, snapshots expired, and an idempotency token (the
//! batch id). [`commit`] applies it to the newest metadata `v<N>`: it checks that the change still
//! holds there (the rebase rules below), writes the new manifest and manifest list
//! ([`snapshot`]), and writes `v<N+1>.metadata.json` with put-if-absent. Only that write makes the
//! change visible. A writer that loses the race deletes the manifests it wrote, re-reads the
//! winner's metadata and tries again on top of it; uploaded data files are reused. A base this
//! process saw but did not check (an append's, `catalog::load_unchecked`) is checked at once with
//! the first attempt's uploads, so an append waits on two round trips in all. After the commit
//! the post-commit hooks run in the background, once the caller has its answer: the version hint
//! and the head object, at once (`catalog::publish_later`, `crate::background`); plain Iceberg
//! readers see the commit when its hint lands, one request later, and
//! [`crate::settle_published`] waits for it. Each attempt also derives the new snapshot's
//! last-value index from its parent's (`index::last_value`), so the index always describes the
//! snapshot that names it.
//!
//! Rebase rules, checked on every attempt against the newest metadata:
//! - a source checkpoint ([`checkpoint`]) whose streams moved to other positions is a conflict,
//!   and one whose streams are all at its end already is a duplicate;
//! - a batch id already committed (kept in the bounded `varve.batch-ids` property, and in the
//!   summaries of retained snapshots) makes the change a duplicate: nothing is committed;
//! - every removed data file must still be live: otherwise another writer rewrote or deleted it
//!   (a compaction, a delete, retention) and the change gives up with [`ErrorKind::Conflict`], so
//!   that a rewrite never brings back rows another commit removed;
//! - a change that adds columns commits only while the table's schema is the one it started from
//!   (or already its own); a change without a schema change needs every column its files carry to
//!   still exist.
//!
//! Added data files always rebase: an append never conflicts with another append or a compaction.
//! A change with a [`Rebase`] hook is recomputed against each attempt's newest metadata first.
//!
//! This module does not decide what to write: `append` (in this module), `maintain` and the
//! facade build transactions.

pub(crate) mod append;
pub(crate) mod checkpoint;
pub(crate) mod dedup;
mod relocate;
mod snapshot;
use relocate::Relocation;
pub(crate) use snapshot::beyond_newest;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::future::BoxFuture;
use iceberg::spec::{DataFile, Operation, Schema};
use object_store::path::Path;

use crate::catalog::{self, LoadedTable, MetadataCache};
use crate::error::{Error, ErrorKind, Result};
use crate::format::properties::PROP_BATCH_IDS;
use crate::format::schema;
use crate::storage::Storage;

pub use append::{AppendOptions, AppendReport, InlineMaintenance};

pub use checkpoint::{SourceCheckpoint, SourcePosition};

/// Snapshot summary key holding an append's batch id.
pub(crate) const SUMMARY_BATCH_ID: &str = "varve.batch-id";
/// Snapshot summary key holding a note (an append's, or what a maintenance run did).
pub(crate) const SUMMARY_NOTE: &str = "varve.note";
/// How many batch ids [`PROP_BATCH_IDS`] keeps: a retry of any of the last 1,000 batches is
/// recognised, at about 40 KiB of metadata for UUID-sized ids.
pub(crate) const MAX_BATCH_IDS: usize = 1000;

/// How many times a commit is tried before a retryable [`ErrorKind::Conflict`] is returned. With
/// jittered back-off up to [`MAX_BACKOFF`], this rides out dozens of writers on one table.
const MAX_ATTEMPTS: u32 = 200;
/// Longest pause between two commit attempts.
const MAX_BACKOFF: Duration = Duration::from_millis(250);

/// How long before a commit writes `v<N+1>` this process may have confirmed that `v<N>` is the
/// newest version: an attempt whose confirmation is older checks again first (at once with its
/// manifests, so it costs no round trip of its own). With [`METADATA_VERSION_MIN_AGE`], this is
/// what keeps a version number from being reused: a put of `v<N+1>` lands at most this long
/// (plus the request's own retries) after `v<N+1>` was seen absent, and orphan cleanup deletes
/// a metadata version only once it is much older than that, so a deleted number is one no
/// writer can still target.
pub(crate) const MAX_BASE_AGE: Duration = Duration::from_secs(120);

/// The age (by the store's last-modified time) below which orphan cleanup leaves a metadata
/// version `v<N>.metadata.json` alone, whatever its `--orphan-age`: [`MAX_BASE_AGE`] plus the
/// longest an object store client retries one put (object_store's default retry timeout is
/// 3 minutes) plus room for clock skew between the store and the cleaning process.
pub(crate) const METADATA_VERSION_MIN_AGE: Duration = Duration::from_secs(15 * 60);

/// A schema change: the table's new current schema, and the schema the change was built on.
#[derive(Debug, Clone)]
pub(crate) struct SchemaChange {
    pub(crate) base: Schema,
    pub(crate) new: Schema,
}

/// A change that is recomputed against the newest metadata on every commit attempt, before the
/// rebase rules are checked: it may set the transaction's added and removed files, uploaded
/// objects and operation (a last-write-wins append's copy-on-write, [`dedup`]).
pub(crate) trait Rebase: Send + Sync {
    fn rebase<'a>(
        &'a self,
        storage: &'a Storage,
        cache: &'a MetadataCache,
        latest: &'a LoadedTable,
        txn: &'a mut Transaction,
    ) -> BoxFuture<'a, Result<()>>;
}

impl std::fmt::Debug for dyn Rebase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Rebase")
    }
}

/// One change of a table, committed by [`commit`].
#[derive(Debug, Clone)]
pub(crate) struct Transaction {
    /// The snapshot's operation (Iceberg spec, "Snapshots": append, replace, overwrite, delete).
    pub(crate) operation: Operation,
    /// New data files, uploaded already.
    pub(crate) added: Vec<DataFile>,
    /// Live data files the change removes (matched by location).
    pub(crate) removed: Vec<DataFile>,
    /// The schema the added files were written with (checked against the newest schema).
    pub(crate) written_schema: Option<Schema>,
    /// A new current schema.
    pub(crate) schema_change: Option<SchemaChange>,
    /// Table properties to set.
    pub(crate) set_properties: HashMap<String, String>,
    /// Table properties to remove.
    pub(crate) unset_properties: Vec<String>,
    /// Snapshots to remove from the metadata (expiry); ids no longer present are ignored.
    pub(crate) expire_snapshots: Vec<i64>,
    /// Idempotency token: a change with a batch id already committed is a duplicate.
    pub(crate) batch_id: Option<String>,
    /// A note kept in the snapshot summary and shown by `history`.
    pub(crate) note: Option<String>,
    /// Source positions the change advances, compare-and-set on every attempt ([`checkpoint`]).
    pub(crate) checkpoint: Option<SourceCheckpoint>,
    /// Objects this change uploaded (data files): deleted when it fails or is a duplicate.
    pub(crate) uploaded: Vec<Path>,
    /// Data files encoded but not uploaded yet (their paths are in `uploaded` and their entries
    /// in `added`): the first commit attempt uploads them at once with its manifests.
    pub(crate) pending: Vec<(Path, Bytes)>,
    /// Footers of data files this change wrote and did not keep yet (a merge's outputs): kept in
    /// the cache when the change commits, so that this process's queries and the head object
    /// have them.
    pub(crate) footers: Vec<crate::write::WrittenFooter>,
    /// Recomputes the change against each attempt's newest metadata.
    pub(crate) rebase: Option<Arc<dyn Rebase>>,
    /// What the change does to the rows, for the last-value index (`index::last_value`); when
    /// not known, a snapshot's index is rebuilt from its live files.
    pub(crate) last_value: crate::index::last_value::Change,
}

impl Transaction {
    /// An empty change of `operation`.
    pub(crate) fn new(operation: Operation) -> Self {
        Transaction {
            operation,
            added: vec![],
            removed: vec![],
            written_schema: None,
            schema_change: None,
            set_properties: HashMap::new(),
            unset_properties: vec![],
            expire_snapshots: vec![],
            batch_id: None,
            note: None,
            checkpoint: None,
            uploaded: vec![],
            pending: vec![],
            footers: vec![],
            rebase: None,
            last_value: Default::default(),
        }
    }

    /// Whether the change makes a new snapshot (it adds or removes data files).
    pub(crate) fn makes_snapshot(&self) -> bool {
        !self.added.is_empty() || !self.removed.is_empty()
    }
}

/// How a commit ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The change is `v<version>`; `snapshot_id` is its new snapshot, if it made one.
    Committed {
        version: u64,
        snapshot_id: Option<i64>,
        attempts: u32,
    },
    /// The batch id was committed before (maybe by another writer meanwhile): nothing was written.
    Duplicate { attempts: u32 },
}

/// Commits `txn` on top of the newest metadata, starting from `base` (a recent load of the table).
/// On any failure the objects the transaction uploaded are deleted, unless the outcome is unknown
/// (the store failed after it may have taken the write): then they are kept, since the commit may
/// have happened, and orphan cleanup removes them if it did not.
///
/// Errors: [`ErrorKind::Conflict`] when the change no longer holds on the newest metadata (see the
/// module docs) or other writers won [`MAX_ATTEMPTS`] times; [`ErrorKind::Corruption`] when the
/// newest snapshot's manifest list or manifests are missing; storage errors.
pub(crate) async fn commit(
    storage: &Storage,
    cache: &MetadataCache,
    base: LoadedTable,
    mut txn: Transaction,
) -> Result<Outcome> {
    let result = Box::pin(commit_inner(storage, cache, base, &mut txn)).await;
    if result.is_err() || matches!(result, Ok(Outcome::Duplicate { .. })) {
        storage.delete_quietly(&txn.uploaded).await;
    }
    result
}

async fn commit_inner(
    storage: &Storage,
    cache: &MetadataCache,
    base: LoadedTable,
    txn: &mut Transaction,
) -> Result<Outcome> {
    let ident = base.ident.clone();
    // When this process last confirmed that `latest` is the newest version ([`MAX_BASE_AGE`]).
    let mut confirmed = match base.unchecked {
        true => None,
        false => cache
            .recent_version(&ident)
            .filter(|(v, _)| *v == base.version)
            .and_then(|(_, age)| Instant::now().checked_sub(age)),
    };
    let mut latest = base;
    let mut attempted: Vec<(u64, Bytes)> = Vec::new();
    let mut snapshots: Vec<i64> = Vec::new();
    let mut attempt = 0u32;
    // The metadata this process wrote, when its put won: what the head object carries.
    let mut won: Option<(Arc<iceberg::spec::TableMetadata>, Bytes, Option<String>)> = None;
    let mut moved = Relocation::new(&latest);
    loop {
        attempt += 1;
        if confirmed.is_none_or(|c| c.elapsed() > MAX_BASE_AGE) {
            latest.unchecked = true;
        }
        match Box::pin(rebase_on(storage, cache, &latest, txn)).await {
            Ok(true) => return Ok(Outcome::Duplicate { attempts: attempt }),
            Ok(false) => {}
            // A rule broken on what this process saw may hold on the newest version.
            Err(_) if latest.unchecked => {
                let asked = Instant::now();
                latest = catalog::load(storage, cache, &ident).await?;
                confirmed = Some(asked);
                continue;
            }
            Err(e) => return Err(e),
        }
        // Data files that went up before a newer orphan cleanup's fence are copied first.
        moved.apply(storage, cache, &latest, txn).await?;
        let started = Instant::now();
        // Data files not uploaded yet go up at once with the manifests; a base this process saw
        // but did not check (an append's, `catalog::load_unchecked`) is checked at the same time.
        let pending = std::mem::take(&mut txn.pending);
        moved.keep(storage, &pending);
        let check = async {
            match latest.unchecked {
                true => {
                    let asked = Instant::now();
                    Some((
                        catalog::find_current_version(storage, &ident, Some(latest.version)).await,
                        asked,
                    ))
                }
                false => None,
            }
        };
        let (uploaded, prepared, checked) = futures::join!(
            append::upload_data_files(storage, cache, &pending),
            snapshot::prepare(storage, cache, &latest, txn, attempt == 1),
            check
        );
        let newer = match checked {
            None => None,
            Some((Ok(Some((v, _))), asked)) if v == latest.version => {
                confirmed = Some(asked);
                None
            }
            Some((Ok(Some((v, _))), at)) => Some(Ok((v, at))),
            Some((Ok(None), _)) => Some(Err(Error::not_found(format!("table {ident} does not exist")))),
            Some((Err(e), _)) => Some(Err(e)),
        };
        if uploaded.is_err() || newer.is_some() {
            // This attempt's manifests were built on a version that is not the newest (or its data
            // files did not all go up): they are dropped; uploaded data files are kept for the next
            // attempt, or deleted by the caller on an error.
            if let Ok(p) = &prepared {
                storage.delete_quietly(&p.written).await;
            }
            uploaded?;
            let (version, checked_at) = newer.expect("checked")?;
            let found = catalog::load_found(storage, cache, &ident, version, checked_at).await?;
            if found.metadata.uuid() != latest.metadata.uuid() {
                // The files were written for the table this process saw, which is gone.
                return Err(Error::new(
                    ErrorKind::Conflict,
                    format!("table {ident} was dropped and made again while this change ran; retry"),
                ));
            }
            latest = found;
            confirmed = Some(checked_at);
            continue;
        }
        latest.unchecked = false;
        let prepared = prepared?;
        if confirmed.is_none_or(|c| c.elapsed() > MAX_BASE_AGE) {
            // Preparing took so long that `v<N+1>` may have been made and cleaned up meanwhile:
            // check again before writing it.
            storage.delete_quietly(&prepared.written).await;
            latest.unchecked = true;
            if attempt >= MAX_ATTEMPTS {
                return Err(Error::new(
                    ErrorKind::Conflict,
                    format!("table {ident}: each of {attempt} commit attempts took longer than {MAX_BASE_AGE:?} to prepare; retry"),
                ));
            }
            continue;
        }
        let prepare_ms = started.elapsed().as_secs_f64() * 1e3;
        let next = latest.version + 1;
        let metadata = Arc::new(prepared.metadata);
        let refs = Arc::new(prepared.refs);
        let json = Bytes::from(crate::format::metadata_json::to_json(
            &metadata,
            &refs,
            &cache.snapshot_json,
        )?);
        let serialize_ms = started.elapsed().as_secs_f64() * 1e3 - prepare_ms;
        let metadata_bytes = json.len();
        let put = storage.put_if_absent(&ident.metadata_file(next), json.clone()).await;
        let e_tag = put.as_ref().ok().cloned().flatten().flatten();
        let outcome = put.map(|written| written.is_some());
        let put_ms = started.elapsed().as_secs_f64() * 1e3 - prepare_ms - serialize_ms;
        if matches!(outcome, Ok(true)) {
            // The next load of this table (inline maintenance, the next append) needs no parse.
            // A process sees its own commits at once, whatever the version-check interval.
            cache.saw_version(&ident, metadata.uuid(), next, std::time::Instant::now());
            cache.put_metadata(ident.metadata_file(next).as_ref(), metadata.clone(), refs, json.len());
            won = Some((metadata, json.clone(), e_tag));
        }
        attempted.push((next, json));
        snapshots.extend(prepared.snapshot_id);
        tracing::debug!(
            table = %ident,
            operation = txn.operation.as_str(),
            base = latest.version,
            next,
            attempt,
            won = matches!(outcome, Ok(true)),
            snapshot = ?prepared.snapshot_id,
            added = txn.added.len(),
            removed = txn.removed.len(),
            metadata_bytes,
            prepare_ms,
            serialize_ms,
            put_ms,
            "commit attempt"
        );
        // `Ok(false)` may be our own write seen by a retried request, and an error may come after
        // the store took the write: only the table's metadata tells whether we committed.
        let committed = match outcome {
            Ok(true) => Some((next, prepared.snapshot_id)),
            Ok(false) | Err(_) => match catalog::load(storage, cache, &ident).await {
                Ok(t) => {
                    confirmed = Some(started);
                    let ours = is_ours(storage, &t, &snapshots, &attempted).await;
                    latest = t;
                    match ours {
                        Some(v) => Some(v),
                        None => {
                            storage.delete_quietly(&prepared.written).await;
                            outcome?;
                            None
                        }
                    }
                }
                Err(e) => {
                    // Unknown outcome: keep every object (it may be committed).
                    txn.uploaded.clear();
                    return Err(outcome.err().unwrap_or(e));
                }
            },
        };
        if let Some((version, snapshot_id)) = committed {
            txn.uploaded.clear();
            // The originals of copied data files are referenced by nothing.
            storage.delete_quietly(&moved.superseded).await;
            for (path, size, footer) in txn.footers.drain(..) {
                cache.keep_footer(&path, size, footer);
            }
            // The post-commit hooks, after the caller has its answer: the version hint, and the
            // head object (unless the commit was only found after a lost-looking put: its head
            // is left to the next commit).
            let head = match won.take() {
                Some((metadata, json, e_tag)) => match catalog::head::footers_of(storage, cache, &txn.added) {
                    Ok(footers) => Some((metadata, json, e_tag, footers)),
                    Err(_) => Some((metadata, json, e_tag, Default::default())),
                },
                None => None,
            };
            catalog::publish_later(storage, &ident, latest.metadata.uuid(), version, head);
            return Ok(Outcome::Committed {
                version,
                snapshot_id,
                attempts: attempt,
            });
        }
        if attempt >= MAX_ATTEMPTS {
            return Err(Error::new(
                ErrorKind::Conflict,
                format!("table {ident}: gave up after {attempt} commit attempts lost to other writers; retry"),
            ));
        }
        // `latest` is the winner's metadata, loaded above.
        tokio::time::sleep(backoff(attempt)).await;
    }
}

/// Changes the columns of table `ident` ([`crate::format::evolve::apply`]) in one metadata-only
/// commit.
///
/// Errors: as [`crate::format::evolve::apply`]; [`ErrorKind::Conflict`] when another writer changed
/// the schema meanwhile; [`ErrorKind::NotFound`].
pub(crate) async fn evolve_schema(
    storage: &Storage,
    cache: &MetadataCache,
    ident: &catalog::TableIdent,
    changes: &[crate::format::ColumnChange],
) -> Result<()> {
    let base = catalog::load(storage, cache, ident).await?;
    let contract = base.contract()?;
    let current = base.metadata.current_schema().as_ref().clone();
    let new = crate::format::evolve::apply(&current, base.metadata.last_column_id(), &contract, changes)?;
    let mut txn = Transaction::new(Operation::Append);
    txn.schema_change = Some(SchemaChange { base: current, new });
    commit(storage, cache, base, txn).await?;
    Ok(())
}

/// Whether a lost-looking put was in fact ours: a snapshot we made is in the newest metadata, or
/// (for a change without a snapshot) one of the versions we tried holds exactly the bytes we wrote.
async fn is_ours(
    storage: &Storage,
    newest: &LoadedTable,
    snapshots: &[i64],
    attempted: &[(u64, Bytes)],
) -> Option<(u64, Option<i64>)> {
    // Any attempt's snapshot counts: an earlier put may have landed after its error was seen.
    if !snapshots.is_empty() {
        return snapshots
            .iter()
            .find(|id| newest.metadata.snapshot_by_id(**id).is_some())
            .map(|id| (newest.version, Some(*id)));
    }
    for (v, json) in attempted {
        if let Ok(Some(stored)) = storage.get_opt(&newest.ident.metadata_file(*v)).await {
            if stored == *json {
                return Some((newest.version, None));
            }
        }
    }
    None
}

/// Applies the rebase rules (module docs) of `txn` to `latest`: `true` when the change is a
/// duplicate there (its batch id or source checkpoint is committed); the change's [`Rebase`] hook
/// recomputed on `latest`.
///
/// Errors: [`ErrorKind::Conflict`] when a rule does not hold; the hook's errors.
async fn rebase_on(
    storage: &Storage,
    cache: &MetadataCache,
    latest: &LoadedTable,
    txn: &mut Transaction,
) -> Result<bool> {
    if let Some(b) = txn.batch_id.as_deref() {
        if has_batch(latest, b) {
            return Ok(true);
        }
    }
    if let Some(cp) = &txn.checkpoint {
        if cp.standing(&latest.ident.to_string(), latest.metadata.properties())? == checkpoint::Standing::Committed {
            return Ok(true);
        }
    }
    if let Some(hook) = txn.rebase.clone() {
        hook.rebase(storage, cache, latest, txn).await?;
    }
    check_rebase(storage, cache, latest, txn).await?;
    Ok(false)
}

/// Checks the rebase rules (module docs) of `txn` against `latest`.
async fn check_rebase(storage: &Storage, cache: &MetadataCache, latest: &LoadedTable, txn: &Transaction) -> Result<()> {
    let ident = &latest.ident;
    if !txn.removed.is_empty() {
        let live = catalog::data_files(storage, cache, &latest.metadata, latest.metadata.current_snapshot_id()).await?;
        let live: std::collections::HashSet<&str> = live.iter().map(|f| f.file_path()).collect();
        if let Some(gone) = txn.removed.iter().find(|f| !live.contains(f.file_path())) {
            return Err(Error::new(
                ErrorKind::Conflict,
                format!(
                    "table {ident}: another commit removed {} while this {} ran; run it again",
                    gone.file_path(),
                    txn.operation.as_str()
                ),
            ));
        }
    }
    let current = latest.metadata.current_schema();
    match &txn.schema_change {
        Some(change) => {
            if !schema::same_columns(current, &change.base) && !schema::same_columns(current, &change.new) {
                return Err(Error::new(
                    ErrorKind::Conflict,
                    format!("table {ident}: another writer changed the schema meanwhile; retry"),
                ));
            }
        }
        None => {
            // Our files carry only these columns; a newer schema simply reads them as nulls.
            if let Some(written) = &txn.written_schema {
                if written
                    .as_struct()
                    .fields()
                    .iter()
                    .any(|f| current.field_by_id(f.id).is_none())
                {
                    return Err(Error::new(
                        ErrorKind::Conflict,
                        format!("table {ident}: the schema changed during the append; retry"),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Whether `batch_id` is committed to the table: in the bounded [`PROP_BATCH_IDS`] list, or in a
/// retained snapshot's summary (tables written before the list existed).
pub(crate) fn has_batch(t: &LoadedTable, batch_id: &str) -> bool {
    batch_ids(t.metadata.properties()).iter().any(|b| b == batch_id)
        || t.metadata.snapshots().any(|s| {
            s.summary()
                .additional_properties
                .get(SUMMARY_BATCH_ID)
                .map(String::as_str)
                == Some(batch_id)
        })
}

/// The batch ids kept in the table properties, newest first.
pub(crate) fn batch_ids(props: &HashMap<String, String>) -> Vec<String> {
    props
        .get(PROP_BATCH_IDS)
        .and_then(|v| serde_json::from_str(v).ok())
        .unwrap_or_default()
}

fn backoff(attempt: u32) -> Duration {
    let cap = MAX_BACKOFF.as_millis() as u64;
    let base = (5u64 << attempt.min(6)).min(cap);
    let jitter = (uuid::Uuid::new_v4().as_u128() % (base as u128 + 1)) as u64;
    Duration::from_millis(base / 2 + jitter / 2 + 1)
}
