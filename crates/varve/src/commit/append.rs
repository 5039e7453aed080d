//! Appends: batches are aligned to the table's schema and buffered, sorted, encoded and uploaded
//! as data files when the buffer fills, and committed at the end as one `append` transaction.
//! The protocol (DESIGN.md, "Write path and commit") is the commit module's; this module only
//! produces the files.

use std::sync::Arc;
use std::time::Instant;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use bytes::Bytes;
use futures::stream::{self, StreamExt, TryStreamExt};
use iceberg::spec::{DataFile, Operation, Schema};
use object_store::path::Path;

use super::dedup::{self, LastWriteWins, Resolution};
use super::{Outcome, SchemaChange, Transaction};
use crate::catalog::{LoadedTable, MetadataCache};
use crate::error::{Error, Result};
use crate::format::manifest::partition_of;
use crate::format::properties::MaintenanceSettings;
use crate::format::{schema, Dedup, TableContract};
use crate::index::last_value;
use crate::input::TimeOptions;
use crate::storage::Storage;
use crate::write::keys::KeySet;
use crate::write::merge_job::MergeJob;
use crate::write::{align, encode};

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
    /// Skip inline maintenance after this append (it runs when the table's `varve.auto-maintain`
    /// is on and a partition the append touched holds more than `varve.compact-min-files` small
    /// files).
    pub no_maintain: bool,
    /// Source positions the append's rows cover (Kafka offsets), stored with them in the same
    /// commit; see [`super::checkpoint`]. An append with a checkpoint and no rows still commits
    /// the positions. Errors: [`crate::ErrorKind::Conflict`] when another writer moved a stream
    /// on; a replay of a committed checkpoint reports `duplicate`.
    pub checkpoint: Option<super::SourceCheckpoint>,
}

/// What inline maintenance after an append did. A failure is reported here and never fails or
/// undoes the append.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct InlineMaintenance {
    /// Partitions compacted.
    pub partitions_compacted: u64,
    /// Rows rewritten.
    pub rows_rewritten: u64,
    /// Data files written.
    pub files_written: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Why maintenance stopped, if it did (a conflict, a storage error).
    pub error: Option<String>,
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
    /// Last-write-wins tables: input rows dropped because a later row of this append has the
    /// same series key and time.
    pub duplicate_rows_dropped: u64,
    /// Last-write-wins tables: stored rows this append replaced.
    pub rows_replaced: u64,
    /// Last-write-wins tables: stored data files rewritten without the replaced rows.
    pub files_rewritten: u64,
    /// Commit attempts (1 when no other writer interfered).
    pub attempts: u32,
    /// Wall-clock seconds, from the first batch to the commit.
    pub seconds: f64,
    /// Inline maintenance run after the commit, if any.
    pub maintenance: Option<InlineMaintenance>,
    /// Partitions the append wrote to (for inline maintenance).
    #[serde(skip)]
    pub(crate) partitions: Vec<Option<i32>>,
    /// The metadata version the append committed (inline maintenance plans on it).
    #[serde(skip)]
    pub(crate) version: Option<u64>,
}

/// An append in progress: batches are aligned and buffered, flushed to uploaded data files, and
/// committed at the end. Dropping it without [`Appender::commit`] leaves unreferenced files that
/// [`Appender::abort`] deletes.
pub(crate) struct Appender {
    storage: Storage,
    cache: Arc<MetadataCache>,
    base: LoadedTable,
    contract: TableContract,
    /// The table's file settings (row groups, encoder threads, compaction), read once at open.
    settings: MaintenanceSettings,
    schema: Schema,
    arrow_schema: SchemaRef,
    added: Vec<String>,
    opts: AppendOptions,
    buffer: Vec<RecordBatch>,
    buffered: usize,
    rows_in: u64,
    files: Vec<DataFile>,
    uploaded: Vec<Path>,
    /// The keys written so far, for last-write-wins tables.
    keys: Option<KeySet>,
    /// The newest row of each series written so far (for the last-value index), in
    /// `arrow_schema`.
    newest: Option<RecordBatch>,
    /// The field ids of the columns seen to vary within a series among the rows written so far
    /// (for the index's series-constant columns).
    varying: std::collections::BTreeSet<i32>,
    /// The latest time (µs) of a row written so far that is not its series' newest (for the
    /// index's older-rows bound; `i64::MIN` when none).
    older: i64,
    report: AppendReport,
    started: Instant,
    /// Live data files the commit removes (an overwrite: a rollup refresh replacing buckets).
    replace: Vec<DataFile>,
    /// Table properties the commit sets with the rows (a rollup's watermark).
    set_properties: std::collections::HashMap<String, String>,
}

impl Appender {
    pub(crate) fn new(
        storage: Storage,
        cache: Arc<MetadataCache>,
        base: LoadedTable,
        opts: AppendOptions,
    ) -> Result<Appender> {
        let contract = base.contract()?;
        let settings = MaintenanceSettings::from_properties(base.metadata.properties())?;
        let schema = base.metadata.current_schema().as_ref().clone();
        let arrow_schema = schema::to_arrow(&schema)?;
        let keys = match contract.dedup {
            Dedup::LastWriteWins => Some(KeySet::new(&arrow_schema, &contract)?),
            Dedup::None => None,
        };
        Ok(Appender {
            storage,
            cache,
            base,
            contract,
            settings,
            schema,
            arrow_schema,
            added: vec![],
            opts,
            buffer: vec![],
            buffered: 0,
            rows_in: 0,
            files: vec![],
            uploaded: vec![],
            keys,
            newest: None,
            varying: Default::default(),
            older: i64::MIN,
            report: AppendReport::default(),
            started: Instant::now(),
            replace: vec![],
            set_properties: Default::default(),
        })
    }

    /// Makes the commit an overwrite: it also removes `files` (live data files of the table, whose
    /// rows the pushed batches replace) and sets `properties`, atomically with the rows. The
    /// commit then happens even when no row was pushed. A removed file another commit removed
    /// meanwhile fails the commit with [`crate::ErrorKind::Conflict`].
    pub(crate) fn replacing(&mut self, files: Vec<DataFile>, properties: std::collections::HashMap<String, String>) {
        self.replace = files;
        self.set_properties = properties;
    }

    /// Where the append goes: the lake's storage, its manifest cache, the table, and whether
    /// inline maintenance is wanted after the commit.
    pub(crate) fn target(&self) -> (Storage, Arc<MetadataCache>, crate::catalog::TableIdent, bool) {
        (
            self.storage.clone(),
            self.cache.clone(),
            self.base.ident.clone(),
            !self.opts.no_maintain,
        )
    }

    /// Whether the batch id of this append is committed already.
    pub(crate) fn is_duplicate(&self) -> bool {
        self.opts
            .batch_id
            .as_deref()
            .is_some_and(|b| super::has_batch(&self.base, b))
    }

    /// Row numbers in errors count from 1 again (a new input file).
    pub(crate) fn start_input(&mut self) {
        self.rows_in = 0;
    }

    /// Aligns one batch and buffers it; flushes when the buffer is full.
    pub(crate) async fn push(&mut self, batch: RecordBatch) -> Result<()> {
        let mut new = align::new_columns(&self.arrow_schema, &batch.schema())?;
        let nothing_pushed =
            self.buffer.is_empty() && self.files.is_empty() && self.uploaded.is_empty() && self.added.is_empty();
        if !new.is_empty() && self.base.unchecked && nothing_pushed {
            // Columns this process has not seen: another writer may have added them meanwhile, so
            // the schema change is built on the newest metadata, not on what the process saw.
            let base = crate::catalog::load(&self.storage, &self.cache, &self.base.ident).await?;
            let opts = std::mem::take(&mut self.opts);
            let mut fresh = Appender::new(self.storage.clone(), self.cache.clone(), base, opts)?;
            fresh.started = self.started;
            fresh.replace = std::mem::take(&mut self.replace);
            fresh.set_properties = std::mem::take(&mut self.set_properties);
            fresh.rows_in = self.rows_in;
            fresh.report = std::mem::take(&mut self.report);
            *self = fresh;
            new = align::new_columns(&self.arrow_schema, &batch.schema())?;
        }
        if !new.is_empty() {
            let last = self.base.metadata.last_column_id();
            self.schema = schema::add_columns(&self.schema, last.max(self.schema.highest_field_id()), &new)?;
            self.arrow_schema = schema::to_arrow(&self.schema)?;
            self.added.extend(new.into_iter().map(|(n, _)| n));
            // Earlier buffered batches (and the newest rows so far) get the new columns as nulls.
            if let Some(n) = self.newest.take() {
                self.newest = Some(last_value::align_to(&n, &self.arrow_schema)?);
            }
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
        let encoded = self.encode_buffer().await?;
        self.upload(encoded).await
    }

    /// Sorts and encodes what is buffered: the data files, not uploaded yet.
    async fn encode_buffer(&mut self) -> Result<Vec<(Path, Bytes, DataFile)>> {
        if self.buffer.is_empty() {
            return Ok(vec![]);
        }
        let batches = std::mem::take(&mut self.buffer);
        self.buffered = 0;
        let started = Instant::now();
        let (runs, dropped) = encode::sort_and_partition(&self.arrow_schema, &batches, &self.contract)?;
        drop(batches);
        self.report.duplicate_rows_dropped += dropped;
        if self.keys.is_some() {
            self.replace_own_keys(&runs).await?;
        }
        if self.contract.time_column.is_some() {
            // Later flushes win ties, as their rows replace this append's earlier ones.
            let mut candidates: Vec<RecordBatch> = self.newest.take().into_iter().collect();
            let mut constant = last_value::constant_candidates(&self.arrow_schema, &self.contract);
            constant.retain(|id| !self.varying.contains(id));
            for run in &runs {
                // Within each run (sorted by series key), then between the runs' last rows.
                let changed = last_value::varying(&run.batch, &self.contract, &constant, true)?;
                constant.retain(|id| !changed.contains(id));
                self.older = self.older.max(last_value::older_in_sorted(&run.batch, &self.contract)?);
                candidates.extend(last_value::last_of_each_series(&run.batch, &self.contract)?);
            }
            if candidates.len() > 1 && !constant.is_empty() {
                let all = arrow::compute::concat_batches(&self.arrow_schema, &candidates)?;
                let changed = last_value::varying(&all, &self.contract, &constant, false)?;
                constant.retain(|id| !changed.contains(id));
            }
            self.varying = last_value::constant_candidates(&self.arrow_schema, &self.contract)
                .into_iter()
                .filter(|id| !constant.contains(id))
                .collect();
            let (newest, lost) = last_value::reduce_with_bound(&candidates, &self.contract)?;
            self.newest = newest;
            self.older = self.older.max(lost);
        }
        let sorted = started.elapsed();
        let table_prefix = self.base.ident.prefix();
        let settings = &self.settings;
        let encoded: Vec<(Path, Bytes, DataFile)> = runs
            .iter()
            .map(|run| {
                let name = encode::data_file_name(&self.contract, run.partition);
                let mut path = table_prefix.clone();
                for part in name.split('/') {
                    path = path.join(part);
                }
                let location = self.storage.location(&path);
                let (bytes, file) = encode::encode(run, &self.contract, &location, settings)?;
                Ok((path, bytes, file))
            })
            .collect::<Result<_>>()?;
        drop(runs);
        tracing::debug!(
            table = %self.base.ident,
            files = encoded.len(),
            sort_ms = sorted.as_secs_f64() * 1e3,
            encode_ms = (started.elapsed() - sorted).as_secs_f64() * 1e3,
            "append encode"
        );
        Ok(encoded)
    }

    /// Uploads encoded data files ([`upload_data_files`]) and counts them in.
    async fn upload(&mut self, encoded: Vec<(Path, Bytes, DataFile)>) -> Result<()> {
        let files: Vec<(Path, Bytes)> = encoded.iter().map(|(p, b, _)| (p.clone(), b.clone())).collect();
        upload_data_files(&self.storage, &self.cache, &files).await?;
        for (path, _, file) in encoded {
            self.count_in(path, file);
        }
        Ok(())
    }

    fn count_in(&mut self, path: Path, file: DataFile) {
        self.report.rows += file.record_count();
        self.report.files += 1;
        self.report.bytes += file.file_size_in_bytes();
        self.uploaded.push(path);
        self.files.push(file);
    }

    /// Last-write-wins: the rows of `runs` (a new flush) replace rows of the same key that an
    /// earlier flush of this append wrote: those files are rewritten without them.
    async fn replace_own_keys(&mut self, runs: &[encode::Run]) -> Result<()> {
        let mut flush_keys = KeySet::new(&self.arrow_schema, &self.contract)?;
        for run in runs {
            flush_keys.insert(&run.batch)?;
        }
        let flush_keys = Arc::new(flush_keys);
        let partitions: Vec<Option<i32>> = runs.iter().map(|r| r.partition).collect();
        let mut i = 0;
        while i < self.files.len() {
            let f = self.files[i].clone();
            let p = partition_of(&f);
            if !partitions.contains(&p) {
                i += 1;
                continue;
            }
            let job = MergeJob {
                storage: &self.storage,
                table_prefix: self.base.ident.prefix(),
                schema: self.arrow_schema.clone(),
                contract: &self.contract,
                settings: &self.settings,
                partition: p,
            };
            match dedup::resolve(&job, &f, &flush_keys).await? {
                Resolution::Untouched => i += 1,
                Resolution::Rewritten {
                    files,
                    uploaded,
                    replaced,
                } => {
                    let n = files.len();
                    self.report.rows -= replaced;
                    self.report.duplicate_rows_dropped += replaced;
                    self.report.files = self.report.files + n as u64 - 1;
                    self.report.bytes = self.report.bytes + files.iter().map(|x| x.file_size_in_bytes()).sum::<u64>()
                        - f.file_size_in_bytes();
                    self.files.splice(i..=i, files);
                    if let Some(pos) = self
                        .uploaded
                        .iter()
                        .position(|u| self.storage.location(u) == f.file_path())
                    {
                        let old = self.uploaded.remove(pos);
                        self.storage.delete_quietly(&[old]).await;
                    }
                    self.uploaded.extend(uploaded);
                    i += n;
                }
            }
        }
        drop(flush_keys);
        if let Some(keys) = self.keys.as_mut() {
            for run in runs {
                keys.insert(&run.batch)?;
            }
        }
        Ok(())
    }

    /// Deletes the data files this append uploaded (after a failure).
    pub(crate) async fn abort(self) {
        self.storage.delete_quietly(&self.uploaded).await;
    }

    /// Flushes and commits. On failure, the uploaded files are deleted and the table is unchanged;
    /// a duplicate batch deletes them too and reports `duplicate`.
    pub(crate) async fn commit(mut self) -> Result<AppendReport> {
        if let Some(Err(e)) = self.opts.checkpoint.as_ref().map(|c| c.validate()) {
            self.abort().await;
            return Err(e);
        }
        if self.is_duplicate() {
            self.abort().await;
            return Ok(AppendReport {
                duplicate: true,
                ..Default::default()
            });
        }
        // The last flush's files go up in the commit, at once with its manifests (one round trip
        // less), except for last-write-wins appends, whose rebase may read them.
        let overwrite = !self.replace.is_empty() || !self.set_properties.is_empty();
        // An overwrite's last-value index is rebuilt from the live files, which must be uploaded.
        let pending = match self.keys.is_some() || !self.replace.is_empty() {
            true => self.flush().await.map(|()| vec![]),
            false => self.encode_buffer().await,
        };
        let pending = match pending {
            Ok(p) => p,
            Err(e) => {
                self.abort().await;
                return Err(e);
            }
        };
        let mut pending_bytes = Vec::with_capacity(pending.len());
        for (path, bytes, file) in pending {
            pending_bytes.push((path.clone(), bytes));
            self.count_in(path, file);
        }
        if self.files.is_empty() && !overwrite && self.opts.checkpoint.is_none() {
            let mut r = self.report.clone();
            r.seconds = self.started.elapsed().as_secs_f64();
            return Ok(r);
        }
        let mut txn = Transaction::new(Operation::Append);
        txn.added = std::mem::take(&mut self.files);
        txn.last_value = last_value::Change::Add {
            newest: self.newest.take(),
            varying: std::mem::take(&mut self.varying),
            older: std::mem::replace(&mut self.older, i64::MIN),
        };
        if overwrite {
            if !self.replace.is_empty() {
                txn.operation = Operation::Overwrite;
                txn.last_value = last_value::Change::Unknown;
            }
            txn.removed = std::mem::take(&mut self.replace);
            txn.set_properties = std::mem::take(&mut self.set_properties);
        }
        let mut partitions: Vec<Option<i32>> = txn.added.iter().map(crate::format::manifest::partition_of).collect();
        partitions.sort();
        partitions.dedup();
        txn.uploaded = std::mem::take(&mut self.uploaded);
        txn.pending = pending_bytes;
        let lww = match self.keys.take() {
            Some(keys) => {
                let hook = Arc::new(LastWriteWins::new(
                    self.contract.clone(),
                    self.settings.clone(),
                    txn.added.clone(),
                    txn.uploaded.clone(),
                    Arc::new(keys),
                ));
                txn.rebase = Some(hook.clone());
                Some(hook)
            }
            None => None,
        };
        txn.batch_id = self.opts.batch_id.clone();
        txn.note = self.opts.note.clone();
        if let Some(cp) = &self.opts.checkpoint {
            txn.set_properties.extend(cp.properties());
            txn.checkpoint = Some(cp.clone());
        }
        if self.added.is_empty() {
            txn.written_schema = Some(self.schema.clone());
        } else {
            txn.schema_change = Some(SchemaChange {
                base: self.base.metadata.current_schema().as_ref().clone(),
                new: self.schema.clone(),
            });
        }
        let committing = Instant::now();
        let outcome = Box::pin(super::commit(&self.storage, &self.cache, self.base.clone(), txn)).await?;
        tracing::debug!(
            table = %self.base.ident,
            commit_ms = committing.elapsed().as_secs_f64() * 1e3,
            total_ms = self.started.elapsed().as_secs_f64() * 1e3,
            "append commit"
        );
        let mut r = self.report.clone();
        r.seconds = self.started.elapsed().as_secs_f64();
        match outcome {
            Outcome::Committed {
                snapshot_id,
                attempts,
                version,
            } => {
                r.version = Some(version);
                if let Some(h) = &lww {
                    r.rows_replaced = h.replaced().await;
                    r.files_rewritten = h.rewritten().await;
                }
                r.partitions = partitions;
                r.snapshot_id = snapshot_id;
                r.added_columns = self.added.clone();
                r.attempts = attempts;
                Ok(r)
            }
            Outcome::Duplicate { attempts } => Ok(AppendReport {
                duplicate: true,
                attempts,
                seconds: r.seconds,
                ..Default::default()
            }),
        }
    }

    /// Pushes every batch of `batches` and commits; aborts (deleting what was uploaded) on the
    /// first error. A duplicate batch id reads nothing.
    pub(crate) async fn append_all<E>(
        mut self,
        batches: impl futures::Stream<Item = std::result::Result<RecordBatch, E>>,
    ) -> Result<AppendReport>
    where
        Error: From<E>,
    {
        if self.is_duplicate() {
            return self.commit().await;
        }
        let mut batches = std::pin::pin!(batches);
        while let Some(b) = batches.next().await {
            let pushed = match b {
                Ok(b) => self.push(b).await,
                Err(e) => Err(Error::from(e)),
            };
            if let Err(e) = pushed {
                self.abort().await;
                return Err(e);
            }
        }
        self.commit().await
    }
}

/// Uploads data files (`UPLOAD_CONCURRENCY` at a time) and keeps their footers for this process's
/// queries and the head object.
///
/// Errors: the first storage error (files already uploaded stay: the caller deletes them).
pub(crate) async fn upload_data_files(storage: &Storage, cache: &MetadataCache, files: &[(Path, Bytes)]) -> Result<()> {
    let started = Instant::now();
    let uploads = files.iter().cloned().map(|(path, bytes)| async move {
        let footer = encode::read_footer(&bytes);
        let n = bytes.len() as u64;
        storage.put(&path, bytes).await?;
        if let Some(footer) = footer {
            cache.keep_footer(&path, n, footer);
        }
        Ok::<_, Error>(())
    });
    let _: Vec<()> = stream::iter(uploads)
        .buffer_unordered(UPLOAD_CONCURRENCY)
        .try_collect()
        .await?;
    tracing::debug!(
        files = files.len(),
        upload_ms = started.elapsed().as_secs_f64() * 1e3,
        "append upload"
    );
    Ok(())
}
