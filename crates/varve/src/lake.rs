//! The facade: a [`Lake`] opened from a URL ties storage, catalog, appends and SQL together.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::{Schema as ArrowSchema, SchemaRef};
use datafusion::execution::SendableRecordBatchStream;
use iceberg::spec::PrimitiveLiteral;
use object_store::ObjectStore;

use crate::catalog::{self, MetadataCache, TableIdent};
use crate::commit::append::Appender;
use crate::commit::{self, AppendOptions, AppendReport, Transaction, SUMMARY_BATCH_ID, SUMMARY_NOTE};
use crate::error::{Error, Result};
use crate::format::properties;
use crate::format::{schema, ColumnChange, TableContract};
use crate::maintain::delete::DeleteReport;
use crate::maintain::{self, MaintainOptions, MaintainReport};
use crate::query::context::QueryContext;
use crate::query::limits::QueryOptions;
use crate::query::session::{QueryResult, Session};
use crate::storage::{Storage, StorageKind};

/// A lake: a directory or bucket prefix holding tables as Iceberg v2 metadata and Parquet files.
///
/// Cheap to clone; clones share the object store and the manifest cache.
#[derive(Debug, Clone)]
pub struct Lake {
    storage: Storage,
    cache: Arc<MetadataCache>,
    /// What the lake's SQL sessions share.
    query: Arc<QueryContext>,
}

/// A table's shape and contract.
#[derive(Debug, Clone)]
pub struct TableDescription {
    /// The table's name.
    pub ident: TableIdent,
    /// Columns as Arrow fields (the time column is `Timestamp(µs, "UTC")`).
    pub schema: SchemaRef,
    /// Time column, series key and partitioning.
    pub contract: TableContract,
    /// Absolute location of the table (`file:///…`, `s3://…`).
    pub location: String,
    /// The current snapshot, `None` before the first append.
    pub snapshot_id: Option<i64>,
    /// `N` of the current `v<N>.metadata.json`.
    pub metadata_version: u64,
}

/// Size and shape of a table's current snapshot.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TableInfo {
    /// The table's name, `namespace.table`.
    pub table: String,
    /// With `varve.retention` set: rows the current snapshot still holds that are older than
    /// the retention. Varve's queries hide them; other engines (DuckDB, PyIceberg, Spark) read
    /// them until `varve maintain` removes them from the snapshot.
    pub rows_past_retention: Option<u64>,
    /// A warning about the table's retention, when there is one to give (a partition coarser
    /// than the retention: maintenance rewrites each straddling file to drop old rows, instead
    /// of dropping whole files).
    pub retention_warning: Option<String>,
    /// Rows in the current snapshot.
    pub rows: u64,
    /// Live data files.
    pub live_files: u64,
    /// Live delete files (Iceberg position or equality deletes).
    pub delete_files: u64,
    /// Bytes of live data files.
    pub bytes: u64,
    /// Manifests a scan of the current snapshot reads.
    pub manifests: u64,
    /// Snapshots kept in the metadata.
    pub snapshots: u64,
    /// Distinct partitions holding data.
    pub partitions: u64,
    /// Oldest time in the table (µs since the epoch, UTC), from the data files' bounds.
    pub min_time_us: Option<i64>,
    /// Newest time in the table (µs since the epoch, UTC).
    pub max_time_us: Option<i64>,
    /// Oldest time as RFC 3339 text in UTC (`2024-05-01T00:00:00Z`).
    pub min_time: Option<String>,
    /// Newest time as RFC 3339 text in UTC.
    pub max_time: Option<String>,
    /// Distinct series (distinct values of the series key); `None` for tables without one.
    pub series: Option<u64>,
    /// The current snapshot.
    pub snapshot_id: Option<i64>,
    /// The table's properties (the contract, maintenance settings, other engines' own).
    pub properties: std::collections::BTreeMap<String, String>,
}

/// One snapshot in a table's history.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SnapshotInfo {
    /// The snapshot id (use with `FOR VERSION AS OF`).
    pub snapshot_id: i64,
    /// The parent snapshot.
    pub parent_id: Option<i64>,
    /// Commit time, ms since the epoch.
    pub timestamp_ms: i64,
    /// `append`, `overwrite`, ...
    pub operation: String,
    /// Rows added by the snapshot.
    pub rows_added: u64,
    /// Data files added by the snapshot.
    pub files_added: u64,
    /// Batch id of the append, if any.
    pub batch_id: Option<String>,
    /// Note of the append, if any.
    pub note: Option<String>,
    /// Whether this is the table's current snapshot.
    pub is_current: bool,
}

/// An append in progress, for inputs too large to hold at once: push batches, then commit.
/// Memory stays bounded (about 256 MiB at peak): full buffers are encoded and uploaded as they fill.
pub struct TableAppender {
    inner: Option<Appender>,
}

impl std::fmt::Debug for TableAppender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TableAppender")
    }
}

impl TableAppender {
    /// Whether the append's batch id is committed already (pushing is then pointless).
    pub fn is_duplicate(&self) -> bool {
        self.inner.as_ref().is_some_and(|a| a.is_duplicate())
    }

    /// Validates, aligns and buffers a batch. On error the append is aborted and its files deleted.
    ///
    /// Errors: [`crate::ErrorKind::InvalidInput`] or [`crate::ErrorKind::SchemaMismatch`] naming the
    /// column and row; storage errors while uploading.
    pub async fn push(&mut self, batch: RecordBatch) -> Result<()> {
        let Some(a) = self.inner.as_mut() else {
            return Err(Error::invalid("the append was aborted"));
        };
        if let Err(e) = a.push(batch).await {
            if let Some(a) = self.inner.take() {
                a.abort().await;
            }
            return Err(e);
        }
        Ok(())
    }

    /// Starts a new input (file): row numbers in errors count from 1 again.
    pub fn start_input(&mut self) {
        if let Some(a) = self.inner.as_mut() {
            a.start_input();
        }
    }

    /// Commits everything pushed as one snapshot.
    pub async fn commit(mut self) -> Result<AppendReport> {
        let Some(a) = self.inner.take() else {
            return Err(Error::invalid("the append was aborted"));
        };
        let target = a.target();
        let report = a.commit().await?;
        Ok(maintain::maintain_after(target, report).await)
    }

    /// Abandons the append and deletes the files it uploaded.
    pub async fn abort(mut self) {
        if let Some(a) = self.inner.take() {
            a.abort().await;
        }
    }
}

fn quote(ident: &str) -> String {
    format!("\"{}\"", ident.replace('"', "\"\""))
}

fn table_sql(ident: &TableIdent) -> String {
    format!("{}.{}", quote(&ident.namespace), quote(&ident.name))
}

impl Lake {
    /// Opens a lake. `url` is a local path (created if missing), `file:///path`,
    /// `s3://bucket/prefix` or `memory://`. `options` are S3 settings (`endpoint`, `region`,
    /// `access_key_id`, `secret_access_key`, `allow_http`, ...); `AWS_*` environment variables
    /// are read too.
    ///
    /// Errors: [`crate::ErrorKind::InvalidInput`] for an unsupported scheme or option;
    /// [`crate::ErrorKind::Storage`] when a local directory cannot be created.
    pub fn open(url: &str, options: &HashMap<String, String>) -> Result<Lake> {
        Lake::with_storage(Storage::open(url, options, None)?)
    }

    /// Opens a lake as [`Lake::open`] does, with every storage request going through the store
    /// that `layer` makes of the lake's own store (rooted at the lake), behind the block cache (a
    /// block served from the cache makes no request). For instruments and fault injection:
    /// counting requests, adding latency (the benchmark suite uses both).
    ///
    /// Errors: as [`Lake::open`].
    pub fn open_with_store_layer(
        url: &str,
        options: &HashMap<String, String>,
        layer: impl FnOnce(Arc<dyn ObjectStore>) -> Arc<dyn ObjectStore> + 'static,
    ) -> Result<Lake> {
        Lake::with_storage(Storage::open(url, options, Some(Box::new(layer)))?)
    }

    fn with_storage(storage: Storage) -> Result<Lake> {
        let cache = Arc::new(MetadataCache::default().with_decoded_bytes(storage.options.decoded_bytes()));
        let extensions: crate::query::session::Extensions = Arc::new([Arc::new(crate::rollup::Rollups) as _]);
        let query = Arc::new(QueryContext::new(&storage, &cache, extensions)?);
        Ok(Lake { storage, cache, query })
    }

    /// The lake's absolute root URL, e.g. `file:///home/me/varve-lake`.
    pub fn url(&self) -> &str {
        &self.storage.root
    }

    /// Where the lake is.
    pub fn storage_kind(&self) -> StorageKind {
        self.storage.kind
    }

    /// The lake's object store as the engine reads it (behind the block cache), rooted at the
    /// lake: object paths are `<namespace>/<table>/...`.
    pub fn object_store(&self) -> Arc<dyn ObjectStore> {
        self.storage.store.clone()
    }

    /// What the block cache did since the lake was opened: blocks found in memory and on disk,
    /// blocks and bytes fetched, GETs made, bytes held (zeros with `cache=off`).
    pub fn cache_stats(&self) -> crate::CacheStats {
        self.storage.cache_stats()
    }

    /// Creates a table with `schema` and `contract`.
    ///
    /// Errors: [`crate::ErrorKind::AlreadyExists`]; [`crate::ErrorKind::SchemaMismatch`] when
    /// a contract column is missing or a type is unsupported; [`crate::ErrorKind::InvalidInput`]
    /// for a bad name.
    pub async fn create_table(
        &self,
        name: &str,
        schema: &ArrowSchema,
        contract: &TableContract,
    ) -> Result<TableDescription> {
        let ident = TableIdent::parse(name)?;
        catalog::create(&self.storage, &self.cache, &ident, schema, contract).await?;
        self.describe(name).await
    }

    /// Deletes a table and all its files.
    ///
    /// Errors: [`crate::ErrorKind::NotFound`].
    pub async fn drop_table(&self, name: &str) -> Result<()> {
        let ident = TableIdent::parse(name)?;
        Box::pin(crate::rollup::unlist_if_rollup(&self.storage, &self.cache, &ident)).await?;
        catalog::drop_table(&self.storage, &self.cache, &ident)
            .await
            .map(|_| ())
    }

    /// Every table, sorted by name.
    pub async fn tables(&self) -> Result<Vec<TableIdent>> {
        catalog::list(&self.storage).await
    }

    /// Whether a table exists.
    pub async fn table_exists(&self, name: &str) -> Result<bool> {
        let ident = TableIdent::parse(name)?;
        Ok(catalog::current_version(&self.storage, &ident).await?.is_some())
    }

    /// A table's schema, contract and current snapshot.
    ///
    /// Errors: [`crate::ErrorKind::NotFound`].
    pub async fn describe(&self, name: &str) -> Result<TableDescription> {
        let ident = TableIdent::parse(name)?;
        let t = catalog::load_recent(&self.storage, &self.cache, &ident).await?;
        Ok(TableDescription {
            schema: schema::to_arrow(t.metadata.current_schema())?,
            contract: t.contract()?,
            location: t.metadata.location().to_string(),
            snapshot_id: t.metadata.current_snapshot_id(),
            metadata_version: t.version,
            ident,
        })
    }

    /// Appends `batches` to a table in one snapshot (one commit).
    ///
    /// It returns once the commit is made (Varve readers see it at once); the version hint that
    /// plain Iceberg readers (DuckDB) follow and the head object are written after, in the
    /// background: call [`crate::settle_published`] before reading with another engine, and
    /// [`crate::settle`] before the process exits.
    ///
    /// Errors: [`crate::ErrorKind::NotFound`]; [`crate::ErrorKind::InvalidInput`] or
    /// [`crate::ErrorKind::SchemaMismatch`] naming column and row (nothing is written then);
    /// [`crate::ErrorKind::Conflict`] (retryable) when other writers won every commit attempt.
    pub async fn append(&self, name: &str, batches: Vec<RecordBatch>, opts: AppendOptions) -> Result<AppendReport> {
        self.append_stream(
            name,
            futures::stream::iter(batches.into_iter().map(Ok::<_, Error>)),
            opts,
        )
        .await
    }

    /// Appends a stream of batches to a table in one snapshot: batches are encoded and uploaded as
    /// the buffer fills, so memory stays bounded whatever the stream's length. On the first error
    /// (from the stream or the append) nothing is committed and the uploaded files are deleted.
    ///
    /// Errors: as [`Lake::append`], and the stream's own errors.
    pub async fn append_stream<E>(
        &self,
        name: &str,
        batches: impl futures::Stream<Item = std::result::Result<RecordBatch, E>>,
        opts: AppendOptions,
    ) -> Result<AppendReport>
    where
        Error: From<E>,
    {
        let appender = self.new_appender(name, opts).await?;
        let target = appender.target();
        let report = appender.append_all(batches).await?;
        Ok(maintain::maintain_after(target, report).await)
    }

    /// Runs maintenance on a table: retention, compaction, snapshot expiry and orphan cleanup,
    /// each unless `opts` turns it off (see `docs/operations.md`).
    ///
    /// Errors: [`crate::ErrorKind::NotFound`]; [`crate::ErrorKind::InvalidInput`] for a bad
    /// `varve.*` property; storage and corruption errors. A part that loses against another writer
    /// is not an error: it is listed in [`MaintainReport::skipped`] for the next run.
    pub async fn maintain(&self, name: &str, opts: &MaintainOptions) -> Result<MaintainReport> {
        let ident = TableIdent::parse(name)?;
        let t = catalog::load(&self.storage, &self.cache, &ident).await?;
        let listed = crate::rollup::listed(t.metadata.properties());
        if !opts.rollups || listed.is_empty() {
            return Box::pin(maintain::maintain(&self.storage, &self.cache, &ident, opts)).await;
        }
        if opts.dry_run {
            // A dry run says which rollups the run would refresh (every one that is not up to date
            // now; compaction does not change that).
            let mut r = Box::pin(maintain::maintain(&self.storage, &self.cache, &ident, opts)).await?;
            let current = t.metadata.current_snapshot_id();
            for info in self.rollups(Some(name)).await? {
                if info.watermark.is_none() || info.watermark != current {
                    r.actions.push(format!("refresh rollup {}", info.rollup));
                    r.rollups_refreshed += 1;
                }
            }
            return Ok(r);
        }
        // Rollups are refreshed after compaction (so that their watermark is the compacted
        // snapshot, after which appends can still be routed) and before expiry (which could take
        // the watermark away and force a full recompute).
        let started = std::time::Instant::now();
        let first = MaintainOptions {
            expire: false,
            orphans: false,
            ..opts.clone()
        };
        let mut r = Box::pin(maintain::maintain(&self.storage, &self.cache, &ident, &first)).await?;
        let session = self.session(QueryOptions::default())?;
        let t = catalog::load(&self.storage, &self.cache, &ident).await?;
        // Boxed, as the maintenance runs: their futures are large and a caller's lives on its stack.
        for (rollup, result) in Box::pin(crate::rollup::refresh::refresh_all(&session, &t)).await {
            match result {
                Ok(rr) if rr.up_to_date => {}
                Ok(rr) => {
                    r.rollups_refreshed += 1;
                    r.actions.push(rr.summary());
                }
                Err(e) => r.skipped.push(format!("refresh of rollup {rollup}: {e}")),
            }
        }
        if let Some(p) = &opts.progress {
            p(&crate::MaintainProgress {
                table: ident.to_string(),
                step: "rollups",
                done: 1,
                total: 1,
            });
        }
        let rest = MaintainOptions {
            compact: false,
            retention: false,
            ..opts.clone()
        };
        let second = Box::pin(maintain::maintain(&self.storage, &self.cache, &ident, &rest)).await?;
        r.files_after = second.files_after;
        r.bytes_after = second.bytes_after;
        r.snapshots_expired += second.snapshots_expired;
        r.objects_deleted += second.objects_deleted;
        r.bytes_deleted += second.bytes_deleted;
        r.actions.extend(second.actions);
        r.skipped.extend(second.skipped);
        r.seconds = started.elapsed().as_secs_f64();
        Ok(r)
    }

    /// Creates a rollup from `CREATE ROLLUP name ON table AS SELECT ...` (see `docs/sql.md`) and
    /// fills it from the table's current snapshot. Returns the first refresh's report, or `None`
    /// when it existed and the statement says `IF NOT EXISTS`.
    ///
    /// Errors: [`crate::ErrorKind::InvalidInput`] for a statement outside the rules (it says
    /// which part); [`crate::ErrorKind::NotFound`] for a missing table;
    /// [`crate::ErrorKind::AlreadyExists`].
    pub async fn create_rollup(&self, sql: &str) -> Result<Option<crate::RefreshReport>> {
        let session = self.session(QueryOptions::default())?;
        match crate::rollup::definition::parse(sql)? {
            Some(crate::rollup::definition::RollupStatement::Create(c)) => {
                Box::pin(crate::rollup::create(&session, c)).await
            }
            _ => Err(Error::invalid(format!("expected {}", crate::rollup::definition::USAGE))),
        }
    }

    /// Drops a rollup (its table, and its entry on its source). Returns whether it existed.
    ///
    /// Errors: [`crate::ErrorKind::NotFound`] unless `if_exists`; [`crate::ErrorKind::InvalidInput`]
    /// for a table that is not a rollup.
    pub async fn drop_rollup(&self, name: &str, if_exists: bool) -> Result<bool> {
        let session = self.session(QueryOptions::default())?;
        crate::rollup::drop(&session, &TableIdent::parse(name)?, if_exists).await
    }

    /// The rollups of table `source`, or of every table.
    ///
    /// Errors: [`crate::ErrorKind::NotFound`] for a missing source.
    pub async fn rollups(&self, source: Option<&str>) -> Result<Vec<crate::RollupInfo>> {
        let session = self.session(QueryOptions::default())?;
        let source = source.map(TableIdent::parse).transpose()?;
        crate::rollup::list(&session, source.as_ref()).await
    }

    /// Brings a rollup up to its table's current snapshot, recomputing the buckets that changed
    /// rows touch (see `docs/sql.md`, "Rollups").
    ///
    /// Errors: [`crate::ErrorKind::NotFound`]; [`crate::ErrorKind::InvalidInput`] for a table that
    /// is not a rollup; [`crate::ErrorKind::Conflict`] when another refresh won (the rollup is
    /// then up to date or will be at the next refresh).
    pub async fn refresh_rollup(&self, name: &str) -> Result<crate::RefreshReport> {
        let session = self.session(QueryOptions::default())?;
        Box::pin(crate::rollup::refresh::refresh(&session, &TableIdent::parse(name)?)).await
    }

    /// Deletes the rows matching `predicate` (SQL, as in a `WHERE` clause: `host = 'a' AND ts <
    /// '2024-01-01'`), or every row when `None`, in one `delete` snapshot that every Iceberg
    /// reader sees. Files the predicate covers by their bounds are dropped without being read;
    /// others are rewritten without the matching rows (see `docs/operations.md`). The same as SQL
    /// `DELETE FROM t WHERE ...`.
    ///
    /// Errors: [`crate::ErrorKind::InvalidInput`] for a predicate that does not parse or plan;
    /// [`crate::ErrorKind::NotFound`]; [`crate::ErrorKind::Conflict`] when other commits kept
    /// removing its files.
    pub async fn delete(&self, name: &str, predicate: Option<&str>) -> Result<DeleteReport> {
        let ident = TableIdent::parse(name)?;
        let sql = match predicate.map(str::trim) {
            Some("") => return Err(Error::invalid("the delete predicate is empty")),
            Some(p) => format!("DELETE FROM {} WHERE {p}", table_sql(&ident)),
            None => format!("DELETE FROM {}", table_sql(&ident)),
        };
        let limits = QueryOptions::default();
        let prepared = self.session(limits)?.prepare(&sql).await?;
        let deletes = prepared.deletes.clone();
        prepared.collect(&limits).await?;
        let report = deletes.lock().ok().and_then(|mut d| d.pop());
        report.ok_or_else(|| Error::internal("the delete reported nothing"))
    }

    /// Sets and removes table properties (one commit). `varve.*` properties are checked: unknown
    /// names, bad values and creation-only properties (`varve.time-column`, `varve.series-key`,
    /// `varve.partition`, `varve.dedup`) are refused; other properties are stored for other
    /// engines as given.
    ///
    /// Errors: [`crate::ErrorKind::InvalidInput`] naming the property; [`crate::ErrorKind::NotFound`].
    pub async fn set_properties(&self, name: &str, set: &HashMap<String, String>, unset: &[String]) -> Result<()> {
        let ident = TableIdent::parse(name)?;
        for (k, v) in set {
            properties::validate_alter(k, Some(v))?;
        }
        for k in unset {
            properties::validate_alter(k, None)?;
        }
        let base = catalog::load(&self.storage, &self.cache, &ident).await?;
        let mut merged = base.metadata.properties().clone();
        merged.extend(set.clone());
        for k in unset {
            merged.remove(k);
        }
        properties::validate_together(&merged)?;
        let mut txn = Transaction::new(iceberg::spec::Operation::Append);
        txn.set_properties = set.clone();
        txn.unset_properties = unset.to_vec();
        commit::commit(&self.storage, &self.cache, base, txn).await?;
        Ok(())
    }

    /// Changes a table's columns (Iceberg schema evolution, by field id: no data file is
    /// rewritten): adds, renames, drops or widens columns, in order, in one commit. Every Iceberg
    /// reader reads the table under the new schema at once.
    ///
    /// Errors: [`crate::ErrorKind::InvalidInput`] for an unknown or existing column, the time or a
    /// series key column dropped or renamed, a type change that is not a widening (int32 to
    /// int64, float32 to float64); [`crate::ErrorKind::Conflict`] when another writer changed the
    /// schema meanwhile (retry); [`crate::ErrorKind::NotFound`].
    pub async fn alter_columns(&self, name: &str, changes: &[ColumnChange]) -> Result<TableDescription> {
        let ident = TableIdent::parse(name)?;
        if changes.is_empty() {
            return Err(Error::invalid("no column change given"));
        }
        commit::evolve_schema(&self.storage, &self.cache, &ident, changes).await?;
        self.describe(name).await
    }

    async fn new_appender(&self, name: &str, opts: AppendOptions) -> Result<Appender> {
        let ident = TableIdent::parse(name)?;
        // The commit checks the version at once with its uploads.
        let base = catalog::load_unchecked(&self.storage, &self.cache, &ident).await?;
        if let Some(e) = crate::format::properties::refuse_rollup_writes(&ident, base.metadata.properties()) {
            return Err(e);
        }
        Appender::new(self.storage.clone(), self.cache.clone(), base, opts)
    }

    /// Starts a streaming append to a table.
    ///
    /// Errors: [`crate::ErrorKind::NotFound`].
    pub async fn appender(&self, name: &str, opts: AppendOptions) -> Result<TableAppender> {
        Ok(TableAppender {
            inner: Some(self.new_appender(name, opts).await?),
        })
    }

    /// Runs one SQL statement and collects its result. Tables are `namespace.table` (the
    /// namespace `default` may be left out); see `docs/sql.md` for the dialect.
    ///
    /// Errors: [`crate::ErrorKind::InvalidInput`] for SQL that does not parse or plan;
    /// [`crate::ErrorKind::NotFound`] for a missing table or snapshot.
    pub async fn sql(&self, sql: &str) -> Result<QueryResult> {
        self.sql_with(sql, &QueryOptions::default()).await
    }

    /// Runs one SQL statement within limits: a timeout, a maximum number of result rows, and a
    /// memory limit in bytes (sorts and aggregates spill to the temporary directory first).
    ///
    /// Errors: as [`Lake::sql`]; [`crate::ErrorKind::Timeout`] when the query runs past its timeout
    /// (it is cancelled: its tasks are dropped); [`crate::ErrorKind::LimitExceeded`] when the result
    /// passes `max_rows` or the query cannot fit in `memory_limit`; [`crate::ErrorKind::InvalidInput`]
    /// for zero limits.
    pub async fn sql_with(&self, sql: &str, limits: &QueryOptions) -> Result<QueryResult> {
        self.session(*limits)?.sql(sql).await
    }

    /// A SQL session: statements run in order in one context, so `SET` applies to those after
    /// it; each statement runs within `limits`.
    ///
    /// Errors: [`crate::ErrorKind::InvalidInput`] for zero limits.
    pub fn session(&self, limits: QueryOptions) -> Result<Session> {
        limits.validate()?;
        let ctx = self.query.session(&limits)?;
        Session::new(&self.storage, &self.cache, ctx, self.query.extensions.clone(), limits)
    }

    /// Runs one SQL statement as a stream of batches (for results too large to collect).
    pub async fn sql_stream(&self, sql: &str) -> Result<(SchemaRef, SendableRecordBatchStream)> {
        self.sql_stream_with(sql, &QueryOptions::default()).await
    }

    /// Runs one SQL statement as a stream of batches within `limits` (see
    /// [`Session::sql_stream`]: the stream ends with an error past the timeout or row limit).
    ///
    /// Errors: as [`Lake::sql_with`], for planning.
    pub async fn sql_stream_with(
        &self,
        sql: &str,
        limits: &QueryOptions,
    ) -> Result<(SchemaRef, SendableRecordBatchStream)> {
        self.session(*limits)?.sql_stream(sql).await
    }

    /// The newest row of every series (the newest row of the table when it has no series key),
    /// ordered by series key. Read from the current snapshot's last-value index (one small file)
    /// when it has one, else by a scan of the table. Rows older than the table's retention are
    /// left out, as in every query.
    ///
    /// Errors: [`crate::ErrorKind::InvalidInput`] for a table without a time column;
    /// [`crate::ErrorKind::NotFound`].
    pub async fn latest(&self, name: &str) -> Result<QueryResult> {
        let ident = TableIdent::parse(name)?;
        let t = catalog::load_recent(&self.storage, &self.cache, &ident).await?;
        let contract = t.contract()?;
        let time = contract
            .time_column
            .as_deref()
            .ok_or_else(|| Error::invalid(format!("table {ident}: latest needs a time column")))?;
        let keys: Vec<String> = contract.series_key.iter().map(|k| quote(k)).collect();
        let keys = keys.join(", ");
        let indexed = t
            .metadata
            .current_snapshot()
            .is_some_and(|s| crate::index::last_value::IndexRef::of(s).is_some());
        if indexed {
            let table = format!(
                "{}.{}",
                quote(&ident.namespace),
                quote(&format!(
                    "{}{}",
                    ident.name,
                    crate::query::references::LAST_VALUES_SUFFIX
                ))
            );
            let sql = match keys.is_empty() {
                true => format!("SELECT * FROM {table}"),
                false => format!("SELECT * FROM {table} ORDER BY {keys}"),
            };
            match self.sql(&sql).await {
                Ok(r) => return Ok(r),
                // A newer snapshot without an index (committed meanwhile), or its file is gone.
                Err(e) if e.kind() == crate::ErrorKind::NotFound => {
                    tracing::warn!(table = %ident, "latest: {e}; scanning the table instead");
                }
                Err(e) => return Err(e),
            }
        }
        let t = table_sql(&ident);
        let sql = if keys.is_empty() {
            format!("SELECT * FROM {t} ORDER BY {} DESC LIMIT 1", quote(time))
        } else {
            format!(
                "SELECT DISTINCT ON ({keys}) * FROM {t} ORDER BY {keys}, {} DESC",
                quote(time)
            )
        };
        self.sql(&sql).await
    }

    /// The positions of `source`'s streams stored in table `name` by commits with a
    /// [`crate::SourceCheckpoint`] (Kafka ingestion: `topic/partition` → the next offset to read),
    /// read from the table's newest metadata.
    ///
    /// Errors: [`crate::ErrorKind::NotFound`]; storage errors.
    pub async fn source_positions(&self, name: &str, source: &str) -> Result<HashMap<String, i64>> {
        let ident = TableIdent::parse(name)?;
        let t = catalog::load(&self.storage, &self.cache, &ident).await?;
        Ok(crate::commit::checkpoint::stored_positions(
            t.metadata.properties(),
            source,
        ))
    }

    /// Size and shape of a table: rows, files, bytes, snapshots, partitions, time range, series.
    pub async fn info(&self, name: &str) -> Result<TableInfo> {
        let ident = TableIdent::parse(name)?;
        let t = catalog::load_recent(&self.storage, &self.cache, &ident).await?;
        let contract = t.contract()?;
        let md = &t.metadata;
        let files = catalog::data_files(&self.storage, &self.cache, md, md.current_snapshot_id()).await?;
        let time_id = contract
            .time_column
            .as_deref()
            .and_then(|c| md.current_schema().field_by_name(c))
            .map(|f| f.id);
        let mut partitions = BTreeSet::new();
        let (mut min_t, mut max_t) = (None::<i64>, None::<i64>);
        for f in &files {
            partitions.insert(format!("{:?}", f.partition()));
            if let Some(id) = time_id {
                if let Some(PrimitiveLiteral::Long(v)) = f.lower_bounds().get(&id).map(|d| d.literal()) {
                    min_t = Some(min_t.map_or(*v, |m| m.min(*v)));
                }
                if let Some(PrimitiveLiteral::Long(v)) = f.upper_bounds().get(&id).map(|d| d.literal()) {
                    max_t = Some(max_t.map_or(*v, |m| m.max(*v)));
                }
            }
        }
        let series = if contract.series_key.is_empty() || files.is_empty() {
            if contract.series_key.is_empty() {
                None
            } else {
                Some(0)
            }
        } else {
            let keys: Vec<String> = contract.series_key.iter().map(|k| quote(k)).collect();
            let sql = format!(
                "SELECT count(*) FROM (SELECT DISTINCT {} FROM {})",
                keys.join(", "),
                table_sql(&ident)
            );
            let r = self.sql(&sql).await?;
            r.batches.first().and_then(|b| {
                b.column(0)
                    .as_any()
                    .downcast_ref::<arrow::array::Int64Array>()
                    .map(|a| a.value(0) as u64)
            })
        };
        let manifests = match md.current_snapshot() {
            Some(s) => catalog::manifest_list(&self.storage, &self.cache, s).await?.len() as u64,
            None => 0,
        };
        let text = |us: Option<i64>| {
            us.and_then(chrono::DateTime::from_timestamp_micros)
                .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true))
        };
        let rows: u64 = files.iter().map(|f| f.record_count()).sum();
        let retention = properties::MaintenanceSettings::from_properties(md.properties())
            .ok()
            .and_then(|s| s.retention);
        let rows_past_retention = match (retention, files.is_empty()) {
            (Some(_), false) => {
                let r = self.sql(&format!("SELECT count(*) FROM {}", table_sql(&ident))).await?;
                let visible = r
                    .batches
                    .first()
                    .and_then(|b| {
                        b.column(0)
                            .as_any()
                            .downcast_ref::<arrow::array::Int64Array>()
                            .map(|a| a.value(0))
                    })
                    .unwrap_or(0) as u64;
                Some(rows.saturating_sub(visible))
            }
            (Some(_), true) => Some(0),
            (None, _) => None,
        };
        Ok(TableInfo {
            table: ident.to_string(),
            rows_past_retention,
            retention_warning: retention.and_then(|r| properties::retention_warning(&contract, r)),
            rows,
            live_files: files.len() as u64,
            delete_files: 0,
            bytes: files.iter().map(|f| f.file_size_in_bytes()).sum(),
            manifests,
            snapshots: md.snapshots().count() as u64,
            partitions: partitions.len() as u64,
            min_time_us: min_t,
            max_time_us: max_t,
            min_time: text(min_t),
            max_time: text(max_t),
            series,
            snapshot_id: md.current_snapshot_id(),
            properties: md
                .properties()
                .iter()
                .filter(|(k, _)| {
                    k.as_str() != properties::PROP_BATCH_IDS && k.as_str() != properties::PROP_ORPHAN_FENCE
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        })
    }

    /// A table's snapshots, oldest first.
    pub async fn history(&self, name: &str) -> Result<Vec<SnapshotInfo>> {
        let ident = TableIdent::parse(name)?;
        let t = catalog::load_recent(&self.storage, &self.cache, &ident).await?;
        let md = &t.metadata;
        let current = md.current_snapshot_id();
        let mut out: Vec<SnapshotInfo> = md
            .snapshots()
            .map(|s| {
                let p = &s.summary().additional_properties;
                let num = |k: &str| p.get(k).and_then(|v| v.parse().ok()).unwrap_or(0);
                SnapshotInfo {
                    snapshot_id: s.snapshot_id(),
                    parent_id: s.parent_snapshot_id(),
                    timestamp_ms: s.timestamp_ms(),
                    operation: s.summary().operation.as_str().to_string(),
                    rows_added: num("added-records"),
                    files_added: num("added-data-files"),
                    batch_id: p.get(SUMMARY_BATCH_ID).cloned(),
                    note: p.get(SUMMARY_NOTE).cloned(),
                    is_current: Some(s.snapshot_id()) == current,
                }
            })
            .collect();
        out.sort_by_key(|s| (s.timestamp_ms, s.snapshot_id));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{Float64Array, RecordBatch, StringArray, TimestampMicrosecondArray};
    use arrow::datatypes::{DataType, Field, Schema, TimeUnit};

    use super::*;
    use crate::{Partitioning, TableContract};

    /// The Parquet footers a query reads stay in the lake's cache for the next query's session,
    /// which reads them from there (the entries are the same `Arc`s, not read again).
    #[tokio::test]
    async fn queries_share_the_footer_cache() {
        let dir = tempfile::tempdir().unwrap();
        let lake = Lake::open(&dir.path().display().to_string(), &HashMap::new()).unwrap();
        let schema = Arc::new(Schema::new(vec![
            Field::new(
                "ts",
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                false,
            ),
            Field::new("name", DataType::Utf8, false),
            Field::new("v", DataType::Float64, true),
        ]));
        let contract = TableContract::time_series("ts")
            .with_series_key(["name"])
            .with_partitioning(Partitioning::Day);
        lake.create_table("t.m", &schema, &contract).await.unwrap();
        for day in 0..3i64 {
            let ts = TimestampMicrosecondArray::from(vec![day * 86_400_000_000, day * 86_400_000_000 + 1])
                .with_timezone("UTC");
            let batch = RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(ts),
                    Arc::new(StringArray::from(vec!["a", "b"])),
                    Arc::new(Float64Array::from(vec![1.0, 2.0])),
                ],
            )
            .unwrap();
            lake.append("t.m", vec![batch], AppendOptions::default()).await.unwrap();
        }
        // An append keeps the footers of the files it wrote.
        let first = lake.cache.footers.list_entries();
        assert_eq!(first.len(), 3, "one footer per data file");
        lake.sql("SELECT sum(v) FROM t.m").await.unwrap();
        lake.sql("SELECT count(*) FROM t.m WHERE v > 1").await.unwrap();
        let second = lake.cache.footers.list_entries();
        assert_eq!(second.len(), 3);
        for (path, entry) in &first {
            assert!(second[path].hits > entry.hits, "{path} read from the cache");
        }
    }
}
