//! Commit: appends become snapshots through optimistic concurrency.
//!
//! Protocol (DESIGN.md, "Write path and commit"; Iceberg spec, "Commit Conflict Resolution and
//! Retry"): data files are uploaded first, all at once. Then, on the newest metadata `v<N>`, a
//! manifest for the new files and a manifest list (the new manifest plus the parent's) are written,
//! and `v<N+1>.metadata.json` is written with put-if-absent. Only that write makes the snapshot
//! visible. A writer that loses the race re-reads the winner's metadata and tries again on top of
//! it; the data files are reused. An append whose batch id is in any snapshot's summary is skipped.
//! After the commit the version hint is written; a stale hint is harmless (see `catalog`).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use bytes::Bytes;
use futures::stream::{self, StreamExt, TryStreamExt};
use iceberg::spec::{
    DataFile, Operation, Schema, Snapshot, SnapshotReference, SnapshotRetention, Summary, TableMetadataBuilder,
    MAIN_BRANCH,
};
use object_store::path::Path;
use object_store::ObjectStoreExt;

use crate::catalog::{self, LoadedTable, TableIdent};
use crate::error::{Error, ErrorKind, Result};
use crate::format::{manifest, schema, TableContract};
use crate::storage::Storage;
use crate::write::{align, encode, TimeOptions};

/// Snapshot summary key holding an append's batch id.
pub(crate) const SUMMARY_BATCH_ID: &str = "varve.batch-id";
/// Snapshot summary key holding an append's note.
pub(crate) const SUMMARY_NOTE: &str = "varve.note";

/// How many times a commit is tried before a retryable [`ErrorKind::Conflict`] is returned. With
/// jittered back-off up to [`MAX_BACKOFF`], this rides out dozens of writers on one table.
const MAX_ATTEMPTS: u32 = 200;
/// Longest pause between two commit attempts.
const MAX_BACKOFF: Duration = Duration::from_millis(250);
/// Input buffered in memory before it is sorted, encoded and uploaded: bounds an append's memory
/// (about twice this at peak) while keeping files large.
const FLUSH_BYTES: usize = 128 * 1024 * 1024;
/// Uploads in flight at once.
const UPLOAD_CONCURRENCY: usize = 8;

/// Options of an append.
#[derive(Debug, Clone, Default)]
pub struct AppendOptions {
    /// Makes the append idempotent: an append with a batch id already committed to the table
    /// writes nothing and reports `duplicate`.
    pub batch_id: Option<String>,
    /// A note kept in the snapshot summary and shown by `history`.
    pub note: Option<String>,
    /// How to read the time column.
    pub time: TimeOptions,
}

/// What an append did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct AppendReport {
    /// Rows committed.
    pub rows: u64,
    /// Data files written.
    pub files: u64,
    /// Bytes of data files written.
    pub bytes: u64,
    /// The new snapshot, or `None` when nothing was committed (no rows, or a duplicate batch).
    pub snapshot_id: Option<i64>,
    /// The batch id had been committed before; nothing was written.
    pub duplicate: bool,
    /// Columns added to the table's schema by this append.
    pub added_columns: Vec<String>,
    /// Time values whose sub-microsecond part was dropped.
    pub truncated_times: u64,
    /// Commit attempts (1 when no other writer interfered).
    pub attempts: u32,
    /// Wall-clock seconds, from the first batch to the commit.
    pub seconds: f64,
}

/// An append in progress: batches are aligned and buffered, flushed to uploaded data files, and
/// committed at the end. Dropping it without [`Appender::commit`] leaves unreferenced files that
/// [`Appender::abort`] deletes.
pub(crate) struct Appender {
    storage: Storage,
    base: LoadedTable,
    contract: TableContract,
    schema: Schema,
    arrow_schema: SchemaRef,
    added: Vec<String>,
    opts: AppendOptions,
    buffer: Vec<RecordBatch>,
    buffered: usize,
    rows_in: u64,
    files: Vec<DataFile>,
    uploaded: Vec<Path>,
    report: AppendReport,
    started: Instant,
}

impl Appender {
    pub(crate) fn new(storage: Storage, base: LoadedTable, opts: AppendOptions) -> Result<Appender> {
        let contract = base.contract()?;
        let schema = base.metadata.current_schema().as_ref().clone();
        let arrow_schema = schema::to_arrow(&schema)?;
        Ok(Appender {
            storage,
            base,
            contract,
            schema,
            arrow_schema,
            added: vec![],
            opts,
            buffer: vec![],
            buffered: 0,
            rows_in: 0,
            files: vec![],
            uploaded: vec![],
            report: AppendReport::default(),
            started: Instant::now(),
        })
    }

    /// Whether the batch id of this append is committed already.
    pub(crate) fn is_duplicate(&self) -> bool {
        self.opts.batch_id.as_deref().is_some_and(|b| has_batch(&self.base, b))
    }

    /// Row numbers in errors count from 1 again (a new input file).
    pub(crate) fn start_input(&mut self) {
        self.rows_in = 0;
    }

    /// Aligns one batch and buffers it; flushes when the buffer is full.
    pub(crate) async fn push(&mut self, batch: RecordBatch) -> Result<()> {
        let new = align::new_columns(&self.arrow_schema, &batch.schema())?;
        if !new.is_empty() {
            let last = self.base.metadata.last_column_id();
            self.schema = schema::add_columns(&self.schema, last.max(self.schema.highest_field_id()), &new)?;
            self.arrow_schema = schema::to_arrow(&self.schema)?;
            self.added.extend(new.into_iter().map(|(n, _)| n));
            // Earlier buffered batches get the new columns as nulls.
            let old = std::mem::take(&mut self.buffer);
            for b in old {
                let (b, _) = align::align(&b, &self.arrow_schema, None, &TimeOptions::default(), 0)?;
                self.buffer.push(b);
            }
        }
        let time = self.contract.time_column.clone();
        let (aligned, truncated) = align::align(
            &batch,
            &self.arrow_schema,
            time.as_deref(),
            &self.opts.time,
            self.rows_in,
        )?;
        self.rows_in += batch.num_rows() as u64;
        self.report.truncated_times += truncated;
        self.buffered += aligned.get_array_memory_size();
        self.buffer.push(aligned);
        if self.buffered >= FLUSH_BYTES {
            self.flush().await?;
        }
        Ok(())
    }

    /// Sorts, encodes and uploads what is buffered.
    async fn flush(&mut self) -> Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let batches = std::mem::take(&mut self.buffer);
        self.buffered = 0;
        let runs = encode::sort_and_partition(&self.arrow_schema, &batches, &self.contract)?;
        drop(batches);
        let table_prefix = self.base.ident.prefix();
        let encoded: Vec<(Path, Bytes, DataFile)> = runs
            .iter()
            .map(|run| {
                let name = encode::data_file_name(&self.contract, run.partition);
                let mut path = table_prefix.clone();
                for part in name.split('/') {
                    path = path.join(part);
                }
                let location = self.storage.location(&path);
                let (bytes, file) = encode::encode(run, &self.contract, &location)?;
                Ok((path, bytes, file))
            })
            .collect::<Result<_>>()?;
        drop(runs);
        let storage = self.storage.clone();
        let uploads = encoded.into_iter().map(|(path, bytes, file)| {
            let storage = storage.clone();
            async move {
                let n = bytes.len() as u64;
                storage.put(&path, bytes).await?;
                Ok::<_, Error>((path, file, n))
            }
        });
        let done: Vec<_> = stream::iter(uploads)
            .buffer_unordered(UPLOAD_CONCURRENCY)
            .try_collect()
            .await?;
        for (path, file, n) in done {
            self.report.rows += file.record_count();
            self.report.files += 1;
            self.report.bytes += n;
            self.uploaded.push(path);
            self.files.push(file);
        }
        Ok(())
    }

    /// Deletes the data files this append uploaded (after a failure).
    pub(crate) async fn abort(self) {
        for p in &self.uploaded {
            let _ = self.storage.store.delete(p).await;
        }
    }

    /// Flushes and commits. On failure, the uploaded files are deleted and the table is unchanged.
    pub(crate) async fn commit(mut self) -> Result<AppendReport> {
        if let Err(e) = self.flush().await {
            self.abort().await;
            return Err(e);
        }
        if self.files.is_empty() {
            let mut r = self.report.clone();
            r.seconds = self.started.elapsed().as_secs_f64();
            return Ok(r);
        }
        match self.commit_files().await {
            Ok(r) => Ok(r),
            Err(e) => {
                self.abort().await;
                Err(e)
            }
        }
    }

    async fn commit_files(&mut self) -> Result<AppendReport> {
        let ident = self.base.ident.clone();
        let mut attempt = 0u32;
        let mut latest = self.base.clone();
        let mut attempted: Vec<i64> = Vec::new();
        loop {
            attempt += 1;
            if let Some(b) = self.opts.batch_id.as_deref() {
                if has_batch(&latest, b) {
                    // Another writer committed this batch meanwhile: ours is a duplicate.
                    for p in std::mem::take(&mut self.uploaded) {
                        let _ = self.storage.store.delete(&p).await;
                    }
                    return Ok(AppendReport {
                        duplicate: true,
                        attempts: attempt,
                        seconds: self.started.elapsed().as_secs_f64(),
                        ..Default::default()
                    });
                }
            }
            let schema = self.schema_for(&latest)?;
            let metadata = self.next_metadata(&latest, schema).await?;
            let json = serde_json::to_vec_pretty(&metadata.0)?;
            let next = latest.version + 1;
            attempted.push(metadata.1);
            let outcome = self
                .storage
                .put_if_absent(&ident.metadata_file(next), Bytes::from(json))
                .await;
            // `Ok(false)` may be our own write seen by a retried request, and an error may come after
            // the store took the write: only the table's metadata tells whether we committed.
            let committed = match outcome {
                Ok(true) => Some(next),
                Ok(false) | Err(_) => match catalog::load(&self.storage, &ident).await {
                    Ok(t) => {
                        let ours = attempted.iter().any(|id| t.metadata.snapshot_by_id(*id).is_some());
                        latest = t;
                        if ours {
                            Some(latest.version)
                        } else {
                            outcome?;
                            None
                        }
                    }
                    Err(e) => {
                        // Unknown outcome: keep the data files (they may be committed).
                        self.uploaded.clear();
                        return Err(outcome.err().unwrap_or(e));
                    }
                },
            };
            if let Some(version) = committed {
                catalog::write_version_hint_forward(&self.storage, &ident, version).await;
                let mut r = self.report.clone();
                r.snapshot_id = Some(metadata.1);
                r.added_columns = self.added.clone();
                r.attempts = attempt;
                r.seconds = self.started.elapsed().as_secs_f64();
                self.uploaded.clear();
                return Ok(r);
            }
            if attempt >= MAX_ATTEMPTS {
                return Err(Error::new(
                    ErrorKind::Conflict,
                    format!("table {ident}: gave up after {attempt} commit attempts lost to other writers; retry the append"),
                ));
            }
            tokio::time::sleep(backoff(attempt)).await;
            latest = catalog::load(&self.storage, &ident).await?;
        }
    }

    /// The schema to commit on top of `latest`: the latest schema when this append added no
    /// columns; ours when the table's schema has not changed since we started; otherwise a conflict
    /// that cannot be rebased (two writers evolved the schema at once).
    fn schema_for(&self, latest: &LoadedTable) -> Result<Option<Schema>> {
        if self.added.is_empty() {
            let current = latest.metadata.current_schema();
            // Our files carry only the base columns; a newer schema simply reads them as nulls.
            let base_ids: Vec<i32> = self.schema.as_struct().fields().iter().map(|f| f.id).collect();
            for id in base_ids {
                if current.field_by_id(id).is_none() {
                    return Err(Error::new(
                        ErrorKind::Conflict,
                        "the table's schema changed during the append; retry",
                    ));
                }
            }
            return Ok(None);
        }
        let base_schema = self.base.metadata.current_schema();
        let current = latest.metadata.current_schema();
        if schema::same_columns(current, base_schema) || schema::same_columns(current, &self.schema) {
            return Ok(Some(self.schema.clone()));
        }
        Err(Error::new(
            ErrorKind::Conflict,
            format!(
                "table {}: another writer changed the schema during this append; retry",
                self.base.ident
            ),
        ))
    }

    /// Writes the manifest and manifest list for a snapshot on top of `latest`, and returns the new
    /// metadata with the snapshot id.
    async fn next_metadata(
        &self,
        latest: &LoadedTable,
        new_schema: Option<Schema>,
    ) -> Result<(iceberg::spec::TableMetadata, i64)> {
        let md = &latest.metadata;
        let snapshot_id = new_snapshot_id();
        let sequence_number = md.last_sequence_number() + 1;
        let parent = md.current_snapshot();
        let schema = match &new_schema {
            Some(s) => {
                let id = md
                    .schemas_iter()
                    .find(|x| schema::same_columns(x, s))
                    .map(|x| x.schema_id())
                    .unwrap_or_else(|| md.schemas_iter().map(|x| x.schema_id()).max().unwrap_or(0) + 1);
                Arc::new(schema::with_schema_id(s, id)?)
            }
            None => md.current_schema().clone(),
        };
        let meta_dir = latest.ident.metadata_dir();
        let tag = uuid::Uuid::new_v4();
        let manifest_path = meta_dir.clone().join(format!("{tag}-m0.avro"));
        let (entry, bytes) = manifest::encode_manifest(
            &self.storage.location(&manifest_path),
            snapshot_id,
            sequence_number,
            schema.clone(),
            md.default_partition_spec().as_ref().clone(),
            self.files.clone(),
        )
        .await?;
        self.storage.put(&manifest_path, bytes).await?;
        let mut manifests = vec![entry];
        if let Some(p) = parent {
            let list = self.storage.get(&self.storage.path_of(p.manifest_list())?).await?;
            manifests.extend(manifest::decode_manifest_list(&list)?);
        }
        let list_bytes =
            manifest::encode_manifest_list(snapshot_id, parent.map(|p| p.snapshot_id()), sequence_number, manifests)
                .await?;
        let list_path = meta_dir.clone().join(format!("snap-{snapshot_id}-1-{tag}.avro"));
        self.storage.put(&list_path, list_bytes).await?;

        let prev = |k: &str| -> u64 {
            parent
                .and_then(|p| p.summary().additional_properties.get(k))
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        let mut props = HashMap::new();
        props.insert("added-data-files".to_string(), self.report.files.to_string());
        props.insert("added-records".to_string(), self.report.rows.to_string());
        props.insert("added-files-size".to_string(), self.report.bytes.to_string());
        props.insert(
            "total-data-files".to_string(),
            (prev("total-data-files") + self.report.files).to_string(),
        );
        props.insert(
            "total-records".to_string(),
            (prev("total-records") + self.report.rows).to_string(),
        );
        props.insert(
            "total-files-size".to_string(),
            (prev("total-files-size") + self.report.bytes).to_string(),
        );
        props.insert("total-delete-files".to_string(), "0".to_string());
        props.insert("total-position-deletes".to_string(), "0".to_string());
        props.insert("total-equality-deletes".to_string(), "0".to_string());
        if let Some(b) = &self.opts.batch_id {
            props.insert(SUMMARY_BATCH_ID.to_string(), b.clone());
        }
        if let Some(n) = &self.opts.note {
            props.insert(SUMMARY_NOTE.to_string(), n.clone());
        }
        let snapshot = Snapshot::builder()
            .with_snapshot_id(snapshot_id)
            .with_parent_snapshot_id(parent.map(|p| p.snapshot_id()))
            .with_sequence_number(sequence_number)
            .with_timestamp_ms(chrono::Utc::now().timestamp_millis().max(md.last_updated_ms() + 1))
            .with_manifest_list(self.storage.location(&list_path))
            .with_summary(Summary {
                operation: Operation::Append,
                additional_properties: props,
            })
            .with_schema_id(schema.schema_id())
            .build();
        let prev_location = self.storage.location(&latest.ident.metadata_file(latest.version));
        let mut b = TableMetadataBuilder::new_from_metadata(md.as_ref().clone(), Some(prev_location));
        if let Some(s) = new_schema {
            b = b.add_current_schema(s)?;
        }
        let built = b
            .add_snapshot(snapshot)?
            .set_ref(
                MAIN_BRANCH,
                SnapshotReference::new(snapshot_id, SnapshotRetention::branch(None, None, None)),
            )?
            .build()?;
        Ok((built.metadata, snapshot_id))
    }
}

fn has_batch(t: &LoadedTable, batch_id: &str) -> bool {
    t.metadata.snapshots().any(|s| {
        s.summary()
            .additional_properties
            .get(SUMMARY_BATCH_ID)
            .map(String::as_str)
            == Some(batch_id)
    })
}

/// A random positive snapshot id (Iceberg spec: snapshot ids are unique longs).
fn new_snapshot_id() -> i64 {
    let u = uuid::Uuid::new_v4().as_u128();
    ((u >> 64) as i64 ^ (u as i64)) & i64::MAX
}

fn backoff(attempt: u32) -> Duration {
    let cap = MAX_BACKOFF.as_millis() as u64;
    let base = (5u64 << attempt.min(6)).min(cap);
    let jitter = (uuid::Uuid::new_v4().as_u128() % (base as u128 + 1)) as u64;
    Duration::from_millis(base / 2 + jitter / 2 + 1)
}

/// Appends `batches` to a table in one snapshot.
pub(crate) async fn append_batches(
    storage: &Storage,
    ident: &TableIdent,
    batches: impl IntoIterator<Item = RecordBatch>,
    opts: AppendOptions,
) -> Result<AppendReport> {
    let base = catalog::load(storage, ident).await?;
    let mut appender = Appender::new(storage.clone(), base, opts)?;
    if appender.is_duplicate() {
        return Ok(AppendReport {
            duplicate: true,
            ..Default::default()
        });
    }
    for b in batches {
        if let Err(e) = appender.push(b).await {
            appender.abort().await;
            return Err(e);
        }
    }
    appender.commit().await
}
