//! A SQL session over the lake ([`Session`]): DataFusion with the lake's catalog, object store and
//! functions, statements planned and run in order in one context; and splitting a script into
//! statements ([`split_statements`]).

use std::sync::{Arc, Mutex};

use arrow::array::{RecordBatch, StringArray};
use arrow::datatypes::SchemaRef;
use datafusion::execution::SendableRecordBatchStream;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::SessionContext;
use futures::future::BoxFuture;
use futures::StreamExt;

use crate::catalog::MetadataCache;
use crate::error::{Error, ErrorKind, Result};
use crate::query::catalog::{ExtraSchemas, LakeCatalog, CATALOG};
use crate::query::limits::{limited, timeout_error, too_many_rows, QueryOptions};
use crate::query::plan_errors::{coercion_error, text_argument_error};
use crate::query::scan::table::{QueryEnv, ScanNote};
use crate::query::statement::ddl;
use crate::query::statement::ddl::DropHook;
use crate::query::statement::Parsed;
use crate::query::{asof, functions, gapfill};
use crate::storage::Storage;

/// The result of a query: its schema and every batch.
#[derive(Debug, Clone)]
pub struct QueryResult {
    /// Columns of the result.
    pub schema: SchemaRef,
    /// The rows, in batches.
    pub batches: Vec<RecordBatch>,
}

impl QueryResult {
    /// Total rows.
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(|b| b.num_rows()).sum()
    }
}

/// A planned statement, ready to run.
pub(crate) struct Prepared {
    pub(crate) df: datafusion::dataframe::DataFrame,
    pub(crate) scans: Arc<Mutex<Vec<ScanNote>>>,
    /// What `DELETE` statements did.
    pub(crate) deletes: Arc<Mutex<Vec<crate::maintain::delete::DeleteReport>>>,
    /// The lake's storage (for the block cache's statistics in `EXPLAIN ANALYZE`).
    storage: Storage,
    /// What rollup routing did, for `EXPLAIN`.
    routes: Vec<String>,
}

/// The scans of a session's current statement ([`Session::scans`]).
#[derive(Debug, Clone)]
pub struct Scans(Arc<Mutex<Vec<ScanNote>>>);

impl Scans {
    /// The data files the statement's scans read and the data files their snapshots held,
    /// `(read, total)`: `total - read` were pruned by partition and column bounds. Counts scans
    /// planned so far; a later statement of the session starts again from zero.
    pub fn totals(&self) -> (u64, u64) {
        self.0
            .lock()
            .map(|notes| {
                notes
                    .iter()
                    .fold((0, 0), |(r, t), n| (r + n.files_read as u64, t + n.files_total as u64))
            })
            .unwrap_or((0, 0))
    }
}

/// What a statement takes and answers ([`Session::describe`]).
#[derive(Debug, Clone)]
pub struct Described {
    /// The type of each placeholder, `$1` first; `None` where the statement leaves it open.
    pub params: Vec<Option<arrow::datatypes::DataType>>,
    /// The result's columns; `None` for a statement that runs when planned (DDL).
    pub schema: Option<SchemaRef>,
}

/// A SQL session over a lake: one DataFusion context in which statements run in order, so that
/// `SET datafusion....` applies to the statements after it. Tables are looked up again for every
/// statement (a table another statement or process created is seen), and each statement reads
/// the newest snapshot of the tables it names (or the one it asks for by time travel).
///
/// Made by [`crate::Lake::session`]; [`crate::Lake::sql`] runs each statement in a new one.
pub struct Session {
    storage: Storage,
    cache: Arc<MetadataCache>,
    ctx: SessionContext,
    scans: Arc<Mutex<Vec<ScanNote>>>,
    deletes: Arc<Mutex<Vec<crate::maintain::delete::DeleteReport>>>,
    limits: QueryOptions,
    extra: ExtraSchemas,
    extensions: Extensions,
    /// Refuse statements that read or write files by path (`COPY ... TO`, `CREATE EXTERNAL
    /// TABLE`): set by servers ([`Session::refuse_file_access`]).
    no_files: std::sync::atomic::AtomicBool,
    /// How this session's front end lists tables, for a missing table's error.
    table_hint: std::sync::OnceLock<String>,
    /// The only namespace whose tables a missing table's error may suggest.
    suggest_in: std::sync::OnceLock<String>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("lake", &self.storage.root)
            .field("limits", &self.limits)
            .finish()
    }
}

impl Session {
    /// A session over the lake in `storage` whose statements each run within `limits` (the
    /// memory limit holds for the whole session).
    ///
    /// Errors: [`crate::ErrorKind::InvalidInput`] for zero limits.
    pub(crate) fn new(
        storage: &Storage,
        cache: &Arc<MetadataCache>,
        ctx: SessionContext,
        extensions: Extensions,
        limits: QueryOptions,
    ) -> Result<Session> {
        Ok(Session {
            storage: storage.clone(),
            cache: cache.clone(),
            ctx,
            scans: Arc::new(Mutex::new(Vec::new())),
            deletes: Arc::new(Mutex::new(Vec::new())),
            limits,
            extra: ExtraSchemas::default(),
            extensions,
            no_files: std::sync::atomic::AtomicBool::new(false),
            table_hint: std::sync::OnceLock::new(),
            suggest_in: std::sync::OnceLock::new(),
        })
    }

    /// Makes every later statement that reads or writes files or objects by path (`COPY ... TO
    /// 'path'`, `CREATE EXTERNAL TABLE`, also under `EXPLAIN`) fail with
    /// [`crate::ErrorKind::Unsupported`]: a server's clients must reach the lake only through its
    /// tables.
    pub fn refuse_file_access(&self) {
        self.no_files.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Says how this session's front end lists tables (`\dt` for psql, `GET /v1/tables` over
    /// HTTP) in the error of a statement that names a table that does not exist, in place of
    /// `SHOW TABLES`. Only the first call counts.
    pub fn set_table_hint(&self, hint: &str) {
        let _ = self.table_hint.set(hint.to_string());
    }

    /// Limits the tables a missing table's error suggests to namespace `namespace`: a front end
    /// whose client may only see that namespace (a namespace-scoped token) calls it, so that an
    /// error never names a table the client may not use. Only the first call counts.
    pub fn scope_suggestions(&self, namespace: &str) {
        let _ = self.suggest_in.set(namespace.to_string());
    }

    /// The error of a statement naming table `name` (`namespace.table`), which does not exist:
    /// tables of that name in other namespaces (or in another case) are suggested, and the way to
    /// list tables is named ([`Session::set_table_hint`]).
    async fn missing_table(&self, name: &str) -> Error {
        let hint = self
            .table_hint
            .get()
            .map(String::as_str)
            .unwrap_or(crate::error::DEFAULT_TABLE_HINT);
        let wanted = name.rsplit('.').next().unwrap_or(name);
        let mut near: Vec<String> = match crate::catalog::list_layout(&self.storage).await {
            Ok((_, tables)) => tables
                .iter()
                .filter(|t| t.name.eq_ignore_ascii_case(wanted) && t.to_string() != name)
                .filter(|t| self.suggest_in.get().is_none_or(|ns| t.namespace == *ns))
                .map(|t| t.to_string())
                .collect(),
            Err(_) => vec![],
        };
        near.sort();
        near.truncate(3);
        let message = match near.as_slice() {
            [] => format!("table {name} does not exist ({hint})"),
            [one] => format!("table {name} does not exist; did you mean {one}? ({hint})"),
            many => format!(
                "table {name} does not exist; did you mean one of {}? ({hint})",
                many.join(", ")
            ),
        };
        Error::not_found(message)
    }

    /// Adds schema `name` to the catalog every later statement of this session sees, beside the
    /// lake's namespaces (and in place of a namespace of that name): how a front end adds tables
    /// that are not the lake's, such as the PostgreSQL server's `pg_catalog`.
    pub fn register_schema(&self, name: &str, schema: Arc<dyn datafusion::catalog::SchemaProvider>) {
        if let Ok(mut m) = self.extra.write() {
            m.insert(name.to_string(), schema);
        }
    }

    /// What the scans of the session's current (or last) statement read: a handle that can be
    /// kept past the statement's stream, for metrics.
    pub fn scans(&self) -> Scans {
        Scans(self.scans.clone())
    }

    /// The session's DataFusion context, for a front end to register functions and planners in
    /// (the PostgreSQL server's `pg_catalog` functions). Its catalog is replaced for each
    /// statement: add schemas with [`Session::register_schema`].
    pub fn context(&self) -> &SessionContext {
        &self.ctx
    }

    /// Runs one SQL statement and collects its result, within the session's limits.
    ///
    /// Errors: as [`crate::Lake::sql_with`].
    pub async fn sql(&self, sql: &str) -> Result<QueryResult> {
        let limits = self.limits;
        let run = async {
            let prepared = self.prepare(sql).await?;
            let planned = prepared.schema();
            let batches = prepared.collect(&limits).await?;
            // The batches' own schema can differ from the plan's in nullability: keep theirs.
            let schema = batches.first().map(|b| b.schema()).unwrap_or(planned);
            Ok(QueryResult { schema, batches })
        };
        match limits.timeout {
            // Planning counts too: it reads metadata.
            Some(t) => tokio::time::timeout(t, run).await.map_err(|_| timeout_error(t))?,
            None => run.await,
        }
    }

    /// Runs one SQL statement as a stream of batches (for results too large to collect), within
    /// the session's limits: the timeout counts from the call to the last batch (planning
    /// included; a consumer that waits between batches spends it too), and the stream ends with
    /// an error once it passes the row limit or the timeout (the query is cancelled when the
    /// stream is dropped).
    ///
    /// Errors: as [`Session::sql`], for planning; the stream's items carry
    /// [`crate::ErrorKind::Timeout`] and [`crate::ErrorKind::LimitExceeded`] as external
    /// DataFusion errors (`crate::Error::from` turns them back).
    pub async fn sql_stream(&self, sql: &str) -> Result<(SchemaRef, SendableRecordBatchStream)> {
        self.sql_stream_with(sql, None).await
    }

    /// [`Session::sql_stream`] for a statement with placeholders `$1`, `$2`, ..., run with
    /// `params` in their place (a list: its first value for `$1`); `None` for a statement without
    /// any.
    ///
    /// Errors: as [`Session::sql`]; [`crate::ErrorKind::InvalidInput`] when the values do not
    /// match the placeholders in number or type.
    pub async fn sql_stream_with(
        &self,
        sql: &str,
        params: Option<datafusion::common::ParamValues>,
    ) -> Result<(SchemaRef, SendableRecordBatchStream)> {
        let limits = self.limits;
        let started = tokio::time::Instant::now();
        let plan = async {
            let mut prepared = self.prepare(sql).await?;
            if let Some(values) = params {
                prepared.df = prepared
                    .df
                    .with_param_values(values)
                    .map_err(|e| Error::invalid(format!("parameters: {e}")))?;
            }
            let schema = prepared.schema();
            Ok::<_, Error>((schema, prepared.stream().await?))
        };
        let (schema, stream) = match limits.timeout {
            Some(t) => tokio::time::timeout_at(started + t, plan)
                .await
                .map_err(|_| timeout_error(t))??,
            None => plan.await?,
        };
        if limits.timeout.is_none() && limits.max_rows.is_none() {
            return Ok((schema, stream));
        }
        Ok((schema.clone(), limited(schema, stream, limits, started)))
    }

    /// What statement `sql` takes and answers, without running it (for a client's prepared
    /// statements): the types of its placeholders `$1`, `$2`, ... (index 0 is `$1`; `None` where
    /// the statement does not fix one) and its result's columns. A statement that changes the
    /// lake's tables when planned (`CREATE`, `DROP`, `ALTER`, the rollup statements but `SHOW
    /// ROLLUPS`) is not planned: it takes no placeholders and its columns are `None`.
    ///
    /// Errors: as [`Session::sql`]'s planning, including [`crate::ErrorKind::Timeout`] past the
    /// session's timeout.
    pub async fn describe(&self, sql: &str) -> Result<Described> {
        match self.limits.timeout {
            // Describing plans the statement: it counts against the timeout as planning does.
            Some(t) => tokio::time::timeout(t, self.describe_now(sql))
                .await
                .map_err(|_| timeout_error(t))?,
            None => self.describe_now(sql).await,
        }
    }

    /// [`Session::describe`] without the timeout.
    async fn describe_now(&self, sql: &str) -> Result<Described> {
        let statement = self.read(sql)?;
        let runs_when_planned = match self.parse_custom(statement.text())? {
            Some((_, custom)) => custom.changes_lake,
            None => ddl::parse(&statement)?.is_some(),
        };
        if runs_when_planned {
            return Ok(Described {
                params: vec![],
                schema: None,
            });
        }
        let prepared = Box::pin(self.prepare_parsed(statement)).await?;
        let types = prepared.df.logical_plan().get_parameter_types()?;
        let mut params: Vec<Option<arrow::datatypes::DataType>> = Vec::new();
        for (name, ty) in types {
            let n: usize = name
                .trim_start_matches('$')
                .parse()
                .map_err(|_| Error::invalid(format!("placeholder {name}: use $1, $2, ...")))?;
            if n == 0 {
                return Err(Error::invalid("placeholder $0: they count from $1"));
            }
            // PostgreSQL's bound on a statement's parameters.
            if n > 65_535 {
                return Err(Error::invalid(format!(
                    "placeholder {name}: a statement takes at most $65535"
                )));
            }
            if params.len() < n {
                params.resize(n, None);
            }
            params[n - 1] = ty;
        }
        Ok(Described {
            params,
            schema: Some(prepared.schema()),
        })
    }

    /// Reads statement `sql` once for every pass that follows ([`Parsed::read`]), under the
    /// session's parser settings.
    ///
    /// Errors: as [`Parsed::read`].
    fn read(&self, sql: &str) -> Result<Parsed> {
        Parsed::read(sql, &self.ctx.state_ref().read().config().options().sql_parser)
    }

    /// Plans `sql` (after Varve's rewrites) against the lake's tables as they are now.
    pub(crate) async fn prepare(&self, sql: &str) -> Result<Prepared> {
        self.prepare_parsed(self.read(sql)?).await
    }

    /// [`Session::prepare`] for a statement already read.
    async fn prepare_parsed(&self, statement: Parsed) -> Result<Prepared> {
        if let Ok(mut notes) = self.scans.lock() {
            notes.clear();
        }
        if let Ok(mut notes) = self.deletes.lock() {
            notes.clear();
        }
        let env = QueryEnv {
            storage: self.storage.clone(),
            cache: self.cache.clone(),
            scans: self.scans.clone(),
            deletes: self.deletes.clone(),
            top_k: statement.top_k(),
        };
        self.ctx.register_catalog(
            CATALOG,
            Arc::new(LakeCatalog::for_statement(env, &statement, self.extra.clone()).await?),
        );
        statement.check_depth()?;
        let (scans, deletes) = (self.scans.clone(), self.deletes.clone());
        if let Some((extension, custom)) = self.parse_custom(statement.text())? {
            let batch = extension.run(self, custom).await?;
            return Ok(Prepared {
                df: self.ctx.read_batch(batch)?,
                scans,
                deletes,
                storage: self.storage.clone(),
                routes: vec![],
            });
        }
        if let Some(ddl) = ddl::parse(&statement)? {
            // DDL runs when it is planned, as DataFusion's own DDL does.
            let df = match ddl::run(ddl, &self.storage, &self.cache, &self.ctx, &self.drop_hooks()).await? {
                ddl::Ran::Done(df) => *df,
                ddl::Ran::Fill { table, insert } => {
                    let filled = async { Box::pin(self.prepare(&insert)).await?.collect(&self.limits).await };
                    match filled.await {
                        Ok(batches) => self.ctx.read_batches(batches)?,
                        Err(e) => return Err(ddl::undo_create(&self.storage, &self.cache, &table, e).await),
                    }
                }
            };
            return Ok(Prepared {
                df,
                scans,
                deletes,
                storage: self.storage.clone(),
                routes: vec![],
            });
        }
        let text = statement.text().to_string();
        let (df, routes) = match self.plan(statement).await {
            Ok(planned) => planned,
            Err(PlanError::Varve(e)) => return Err(e),
            Err(PlanError::DataFusion(e)) => {
                let message = e.to_string();
                if let Some(name) = crate::error::missing_table(&message) {
                    return Err(self.missing_table(&name).await);
                }
                let plain = coercion_error(&message).or_else(|| text_argument_error(&text, &message));
                return Err(plain.unwrap_or_else(|| e.into()));
            }
        };
        let df = super::names::short_column_names(df)?;
        Ok(Prepared {
            df,
            scans,
            deletes,
            storage: self.storage.clone(),
            routes,
        })
    }

    /// The lake's storage.
    pub(crate) fn storage(&self) -> &Storage {
        &self.storage
    }

    /// The lake's metadata cache.
    pub(crate) fn cache(&self) -> &Arc<MetadataCache> {
        &self.cache
    }

    /// The session's DataFusion state (settings, functions).
    pub(crate) fn state(&self) -> datafusion::execution::session_state::SessionState {
        self.ctx.state()
    }

    /// Plans Varve's own SQL (a rollup's queries) against the lake as it is now, without the
    /// rewrites and notes of user statements.
    ///
    /// Errors: as DataFusion's planning.
    pub(crate) async fn internal_plan(&self, sql: &str) -> Result<LogicalPlan> {
        let env = QueryEnv {
            storage: self.storage.clone(),
            cache: self.cache.clone(),
            scans: Arc::new(Mutex::new(Vec::new())),
            deletes: self.deletes.clone(),
            top_k: false,
        };
        let state = self.ctx.state();
        let statement = Parsed::plain(sql, &state.config().options().sql_parser);
        self.ctx.register_catalog(
            CATALOG,
            Arc::new(LakeCatalog::for_statement(env, &statement, self.extra.clone()).await?),
        );
        let (parsed, _) = statement.into_parsed();
        Ok(state.statement_to_plan(parsed?).await?)
    }

    /// Runs Varve's own SQL as a stream of batches, answered from rollups where they can
    /// (`rollup::route`): the stream and what routing did.
    pub(crate) async fn internal_stream_routed(&self, sql: &str) -> Result<(SendableRecordBatchStream, Vec<String>)> {
        let plan = self.internal_plan(sql).await?;
        let (plan, routes) = self.rewrite(plan).await?;
        Ok((
            self.ctx.execute_logical_plan(plan).await?.execute_stream().await?,
            routes,
        ))
    }

    /// What acts before a table is dropped: the extensions' hooks.
    fn drop_hooks(&self) -> Vec<&dyn DropHook> {
        self.extensions.iter().map(|e| e.as_ref() as &dyn DropHook).collect()
    }

    /// The extension whose statement `text` is, with its parse ([`QueryExtension::parse`]).
    ///
    /// Errors: the extension's, for a malformed statement of its own.
    fn parse_custom(&self, text: &str) -> Result<Option<(&dyn QueryExtension, CustomStatement)>> {
        for extension in self.extensions.iter() {
            if let Some(statement) = extension.parse(text)? {
                return Ok(Some((extension.as_ref(), statement)));
            }
        }
        Ok(None)
    }

    /// A planned query after every extension's rewrite ([`QueryExtension::rewrite`]), with what
    /// they did.
    async fn rewrite(&self, mut plan: LogicalPlan) -> Result<(LogicalPlan, Vec<String>)> {
        let mut notes = Vec::new();
        for extension in self.extensions.iter() {
            let (rewritten, more) = extension.rewrite(self, plan).await?;
            plan = rewritten;
            notes.extend(more);
        }
        Ok((plan, notes))
    }

    /// The schema of Varve's own SQL's result.
    pub(crate) async fn internal_schema(&self, sql: &str) -> Result<SchemaRef> {
        let plan = self.internal_plan(sql).await?;
        Ok(Arc::new(plan.schema().as_arrow().clone()))
    }
}

/// Why a statement did not plan: Varve's own rewrite refused it, or DataFusion did.
enum PlanError {
    Varve(Error),
    DataFusion(datafusion::error::DataFusionError),
}

impl From<datafusion::error::DataFusionError> for PlanError {
    fn from(e: datafusion::error::DataFusionError) -> PlanError {
        PlanError::DataFusion(e)
    }
}

impl Session {
    /// Plans `statement` after Varve's rewrites of its parse (the time-series functions' named
    /// arguments, the ASOF joins its text marked), as `SessionContext::sql` would.
    async fn plan(
        &self,
        statement: Parsed,
    ) -> std::result::Result<(datafusion::dataframe::DataFrame, Vec<String>), PlanError> {
        let state = self.ctx.state();
        let (parsed, asof) = statement.into_parsed();
        let mut statement = parsed?;
        let asof = asof.as_ref();
        // The statement itself, or the one an EXPLAIN shows.
        let mut inner = &mut statement;
        while let datafusion::sql::parser::Statement::Explain(e) = inner {
            inner = e.statement.as_mut();
        }
        match inner {
            datafusion::sql::parser::Statement::Statement(s) => {
                functions::rewrite(s).map_err(PlanError::Varve)?;
                if let Some(marks) = asof {
                    asof::mark_statement(s, marks).map_err(PlanError::Varve)?;
                }
            }
            _ if asof.is_some() => {
                return Err(PlanError::Varve(Error::invalid(
                    "ASOF JOIN is taken in queries (SELECT, INSERT ... SELECT, EXPLAIN), not in this statement",
                )))
            }
            _ => {}
        }
        let mut plan = state.statement_to_plan(statement).await?;
        if self.no_files.load(std::sync::atomic::Ordering::Relaxed) {
            use datafusion::common::tree_node::TreeNode;
            use datafusion::logical_expr::DdlStatement;
            let files = plan.exists(|p| {
                Ok(matches!(
                    p,
                    LogicalPlan::Copy(_) | LogicalPlan::Ddl(DdlStatement::CreateExternalTable(_))
                ))
            })?;
            if files {
                return Err(PlanError::Varve(Error::new(
                    ErrorKind::Unsupported,
                    "statements that read or write files by path (COPY ... TO, CREATE EXTERNAL TABLE) are not served: \
                     query the lake's tables",
                )));
            }
        }
        if asof.is_some() {
            plan = asof::plan_joins(plan).map_err(PlanError::Varve)?;
        }
        plan = gapfill::plan_gapfill(plan).map_err(PlanError::Varve)?;
        let (plan, routes) = self.rewrite(plan).await.map_err(PlanError::Varve)?;
        Ok((self.ctx.execute_logical_plan(plan).await?, routes))
    }
}

impl Prepared {
    /// Whether the statement is `EXPLAIN`.
    fn is_explain(&self) -> bool {
        matches!(
            self.df.logical_plan(),
            LogicalPlan::Explain(_) | LogicalPlan::Analyze(_)
        )
    }

    /// The result's schema.
    pub(crate) fn schema(&self) -> SchemaRef {
        Arc::new(self.df.schema().as_arrow().clone())
    }

    /// Runs the statement and collects every batch. `EXPLAIN` gets one more row per scan saying how
    /// many data files were read and pruned.
    pub(crate) async fn collect(self, limits: &QueryOptions) -> Result<Vec<RecordBatch>> {
        let explain = self.is_explain();
        let analyze = matches!(self.df.logical_plan(), LogicalPlan::Analyze(_));
        let cache_before = self.storage.cache_stats();
        let mut stream = self.df.clone().execute_stream().await?;
        let mut batches = Vec::new();
        let mut rows = 0usize;
        while let Some(b) = stream.next().await {
            let b = b?;
            rows += b.num_rows();
            if let Some(max) = limits.max_rows {
                if rows > max {
                    return Err(too_many_rows(max));
                }
            }
            batches.push(b);
        }
        if explain {
            let notes = self.scans.lock().map(|n| n.clone()).unwrap_or_default();
            if let Some(first) = batches.first() {
                let schema = first.schema();
                let mut kinds: Vec<String> = notes.iter().map(|_| "varve_pruning".to_string()).collect();
                kinds.extend(self.routes.iter().map(|_| "varve_rollup".to_string()));
                let mut texts: Vec<String> = notes
                    .iter()
                    .map(|n| {
                        let snapshot = n.snapshot_id.map(|s| format!(" (snapshot {s})")).unwrap_or_default();
                        if n.last_values {
                            return format!(
                                "{}{snapshot}: answered from the last-value index (the newest row of each series), no data file read",
                                n.table
                            );
                        }
                        let newest = match (n.newest_k, n.index_series) {
                            (Some(k), _) if n.newest_k_from_index => format!(
                                "; the {k} newest rows taken from the last-value index (no other row is as new)"
                            ),
                            (Some(k), _) => format!(
                                "; only the {k} series the last-value index puts first, from the k-th one's time"
                            ),
                            (None, Some(s)) if n.files_read == 0 => format!(
                                "; the newest rows of {s} series taken from the last-value index (they pass \
                                 the filters), no data file needed for the other series"
                            ),
                            (None, Some(s)) => format!(
                                "; the newest rows of {s} series taken from the last-value index (they pass \
                                 the filters), data files read for the other series"
                            ),
                            _ => match n.newest_buckets {
                                Some(k) => format!(
                                    "; only the time range of the {k} newest time buckets (found from the \
                                     time bounds of the files, row groups and pages)"
                                ),
                                None => String::new(),
                            },
                        };
                        let constant = match n.constant_series {
                            Some(s) => format!(
                                "; the filter on series-constant columns keeps {s} series (from the last-value index)"
                            ),
                            None => String::new(),
                        };
                        let decoded = match n.files_decoded {
                            0 => String::new(),
                            d => format!("; {d} small files of them read from their decoded rows in memory"),
                        };
                        format!(
                            "{}{snapshot}: {} of {} data files read, {} pruned by partition and column bounds{newest}{constant}{decoded}",
                            n.table,
                            n.files_read,
                            n.files_total,
                            n.files_total - n.files_read
                        )
                    })
                    .collect();
                texts.extend(self.routes.iter().cloned());
                if analyze && self.storage.block_cache.is_some() {
                    let c = self.storage.cache_stats().since(&cache_before);
                    kinds.push("varve_cache".to_string());
                    texts.push(format!(
                        "block cache (the lake's, while the query ran): {} blocks from memory, {} from disk, {} fetched \
                         in {} GETs ({} bytes fetched, {} bytes served from the cache)",
                        c.memory_hits, c.disk_hits, c.misses, c.requests, c.fetched_bytes, c.hit_bytes
                    ));
                }
                if schema.fields().len() == 2 && !kinds.is_empty() {
                    let extra = RecordBatch::try_new(
                        schema,
                        vec![Arc::new(StringArray::from(kinds)), Arc::new(StringArray::from(texts))],
                    )?;
                    batches.push(extra);
                }
            }
        }
        Ok(batches)
    }

    /// Runs the statement as a stream of batches.
    pub(crate) async fn stream(self) -> Result<SendableRecordBatchStream> {
        Ok(self.df.execute_stream().await?)
    }
}

// Extension points of statement handling: what a module above `query` adds to every session
// without `query` importing it. The facade (`lake`) registers the extensions when it builds the
// long-lived query context (`context::QueryContext`); rollups are one (`rollup::Rollups`). An
// extension may add statements the SQL parser does not know (`CREATE ROLLUP`), rewrite each
// planned query (answering an aggregate from a rollup), and act before `DROP TABLE` drops a table
// (`ddl::DropHook`: a rollup's source stops listing it). It must not depend on being called in
// any order relative to another extension. (They live here because they take the session.)

/// A statement an extension parsed, for its [`QueryExtension::run`].
pub(crate) struct CustomStatement {
    /// The extension's own parse of the statement.
    pub(crate) parsed: Box<dyn std::any::Any + Send + Sync>,
    /// Whether running it changes the lake (as DDL does), so that describing it must not plan it
    /// ([`Session::describe`]); `false` for statements that only read (`SHOW ROLLUPS`).
    pub(crate) changes_lake: bool,
}

/// What an extension adds to statement handling. Each method has a default that adds nothing.
pub(crate) trait QueryExtension: DropHook + Send + Sync + std::fmt::Debug {
    /// Parses `text` (after the time-travel and ASOF rewrites) as one of the extension's
    /// statements; `Ok(None)` when it is not one.
    ///
    /// Errors: [`crate::ErrorKind::InvalidInput`] for a statement of the extension's that is
    /// malformed, with the usage.
    fn parse(&self, _text: &str) -> Result<Option<CustomStatement>> {
        Ok(None)
    }

    /// Runs a statement this extension's [`QueryExtension::parse`] returned, in `session`; its
    /// answer as one batch.
    fn run<'a>(&'a self, _session: &'a Session, _statement: CustomStatement) -> BoxFuture<'a, Result<RecordBatch>> {
        Box::pin(async { Err(crate::Error::internal("the extension runs no statements")) })
    }

    /// Rewrites a planned query before it runs; returns the plan and notes of what was done,
    /// which `EXPLAIN` shows. Statements the extension leaves alone come back as they were, with
    /// no notes.
    fn rewrite<'a>(
        &'a self,
        _session: &'a Session,
        plan: LogicalPlan,
    ) -> BoxFuture<'a, Result<(LogicalPlan, Vec<String>)>> {
        Box::pin(async { Ok((plan, vec![])) })
    }
}

/// The extensions of a query context, in registration order.
pub(crate) type Extensions = std::sync::Arc<[std::sync::Arc<dyn QueryExtension>]>;
