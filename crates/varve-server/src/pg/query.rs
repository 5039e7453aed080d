//! The statements of one PostgreSQL connection, by the simple and the extended query protocols
//! (PostgreSQL's "Message Flow" chapter): each statement is classified ([`Kind`]); transaction
//! control is accepted (every statement commits on its own, and a `ROLLBACK` after a write is
//! refused: [`Block`]), run-time parameters are kept per
//! connection, and everything else runs in the connection's Varve session within the server's
//! limits, its rows encoded by `arrow-pg` as text or binary as the client asks.

use std::sync::{Arc, Mutex};

use datafusion::arrow::array::{Array, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::ParamValues;
use datafusion::execution::SendableRecordBatchStream;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};
use futures::{stream, Sink, SinkExt, StreamExt};
use pgwire::api::portal::{Format, Portal};
use pgwire::api::query::{ExtendedQueryHandler, SimpleQueryHandler};
use pgwire::api::results::{FieldInfo, QueryResponse, Response, Tag};
use pgwire::api::stmt::QueryParser;
use pgwire::api::store::PortalStore;
use pgwire::api::{ClientInfo, ClientPortalStore, Type};
use pgwire::error::{PgWireError, PgWireResult};
use pgwire::messages::data::DataRow;
use pgwire::messages::startup::ParameterStatus;
use pgwire::messages::PgWireBackendMessage;
use pgwire::types::format::FormatOptions;

use super::cancel::{cancellable, or_cancel};
use super::catalog;
use super::conn::{Block, PgConn};
use super::error::{refusal, sql_error, user_error};
use crate::state::AppState;

impl PgConn {
    /// Notes a write that committed (its command tag), for a later `ROLLBACK` of the block.
    pub(crate) fn committed(&self, tag: String) {
        if let Ok(mut b) = self.block.lock() {
            if b.open {
                b.committed.push(tag);
            }
        }
    }

    /// `BEGIN`, `COMMIT` and `ROLLBACK`.
    fn transaction(&self, kind: &Kind) -> PgWireResult<Response> {
        let mut b = self.block.lock().unwrap_or_else(|p| p.into_inner());
        match kind {
            Kind::Begin => {
                // A BEGIN inside a block changes nothing (PostgreSQL warns and goes on).
                if !b.open {
                    b.open = true;
                    b.committed.clear();
                }
                Ok(Response::TransactionStart(Tag::new("BEGIN")))
            }
            Kind::Commit => {
                *b = Block::default();
                Ok(Response::TransactionEnd(Tag::new("COMMIT")))
            }
            _ if b.committed.is_empty() => {
                *b = Block::default();
                Ok(Response::TransactionEnd(Tag::new("ROLLBACK")))
            }
            _ => {
                // The block stays open (failed, as PostgreSQL leaves a block after an error); a
                // second ROLLBACK ends it, with nothing left that it would claim to undo.
                let writes = std::mem::take(&mut b.committed);
                Err(user_error(
                    "25000",
                    format!(
                        "ROLLBACK cannot undo {}: Varve commits each statement when it runs, so {} stored; \
                         delete the rows to undo it (run ROLLBACK again to end the transaction block)",
                        writes.join(", "),
                        if writes.len() == 1 { "it is" } else { "they are" }
                    ),
                ))
            }
        }
    }
}

impl std::fmt::Debug for PgConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgConn").finish_non_exhaustive()
    }
}

/// What a statement is, by its first words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Nothing but whitespace and comments.
    Empty,
    /// Answers rows: `SELECT`, `WITH`, `VALUES`, `EXPLAIN`, `SHOW` of an engine setting, ...
    Rows,
    /// Changes data or the schema and answers a command tag (`INSERT 0 5`, `CREATE TABLE`).
    Command(String),
    /// `BEGIN` / `START TRANSACTION`: accepted; each statement still commits on its own.
    Begin,
    /// `COMMIT` / `END`.
    Commit,
    /// `ROLLBACK` / `ABORT`: refused after a write in the block, which has committed ([`Block`]).
    Rollback,
    /// `SET name = value` of a PostgreSQL run-time parameter (kept for the connection).
    Set { name: String, value: String },
    /// `SHOW name` of a PostgreSQL run-time parameter.
    Show(String),
    /// Accepted and answered with its tag only (`DISCARD ALL`, `RESET x`, `DEALLOCATE`).
    Ignored(String),
    /// `COPY ... FROM STDIN`.
    Copy,
}

/// The words of `sql` (upper-cased unquoted words, quoted names and strings as they are; other
/// tokens as their text), by PostgreSQL's tokenizer; `None` when it does not tokenize.
fn words(sql: &str) -> Option<Vec<(String, Token)>> {
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize().ok()?;
    Some(
        tokens
            .into_iter()
            .filter(|t| !matches!(t, Token::Whitespace(_) | Token::SemiColon))
            .map(|t| {
                let w = match &t {
                    Token::Word(w) if w.quote_style.is_none() => w.value.to_ascii_uppercase(),
                    Token::Word(w) => w.value.clone(),
                    Token::SingleQuotedString(s) => s.clone(),
                    other => other.to_string(),
                };
                (w, t)
            })
            .collect(),
    )
}

/// Classifies statement `sql`.
pub(crate) fn classify(sql: &str) -> Kind {
    let Some(w) = words(sql) else { return Kind::Rows };
    let word = |i: usize| w.get(i).map(|(s, _)| s.as_str()).unwrap_or("");
    match word(0) {
        "" => Kind::Empty,
        "BEGIN" => Kind::Begin,
        "START" if word(1) == "TRANSACTION" => Kind::Begin,
        "COMMIT" | "END" => Kind::Commit,
        "ROLLBACK" | "ABORT" => Kind::Rollback,
        "DISCARD" | "RESET" | "DEALLOCATE" | "CLOSE" | "UNLISTEN" => Kind::Ignored(word(0).to_string()),
        "SET" => classify_set(&w[1..]),
        "COPY" => Kind::Copy,
        "SHOW" => {
            let name: Vec<&str> = w[1..].iter().map(|(s, _)| s.as_str()).collect();
            match name.as_slice() {
                ["TRANSACTION", "ISOLATION", "LEVEL"] => Kind::Show("transaction_isolation".into()),
                [one] if !matches!(*one, "ALL" | "TABLES" | "ROLLUPS" | "FUNCTIONS") => Kind::Show(one.to_string()),
                _ => Kind::Rows,
            }
        }
        "INSERT" | "DELETE" | "UPDATE" | "CREATE" | "DROP" | "ALTER" | "REFRESH" | "TRUNCATE" => {
            let tag = match word(0) {
                "CREATE" | "DROP" | "ALTER" | "REFRESH" => format!("{} {}", word(0), word(1)),
                other => other.to_string(),
            };
            Kind::Command(tag)
        }
        _ => Kind::Rows,
    }
}

/// `SET [SESSION | LOCAL] name {= | TO} value` and `SET TIME ZONE value`: a PostgreSQL parameter
/// ([`Kind::Set`]), or an engine setting (`datafusion.x`, `varve.x`), which the session runs.
fn classify_set(rest: &[(String, Token)]) -> Kind {
    let mut rest = rest;
    if matches!(rest.first().map(|(s, _)| s.as_str()), Some("SESSION" | "LOCAL")) {
        rest = &rest[1..];
    }
    let (name, value_tokens) = match rest {
        [(a, _), (b, _), value @ ..] if a == "TIME" && b == "ZONE" => ("timezone".to_string(), value),
        _ => {
            let split = rest
                .iter()
                .position(|(s, t)| matches!(t, Token::Eq) || s == "TO")
                .unwrap_or(rest.len());
            let name: String = rest[..split].iter().map(|(s, _)| s.to_ascii_lowercase()).collect();
            (name, rest.get(split + 1..).unwrap_or(&[]))
        }
    };
    if name.contains('.') {
        return Kind::Command("SET".into());
    }
    let value = value_tokens
        .iter()
        .filter(|(_, t)| !matches!(t, Token::Comma))
        .map(|(s, t)| match t {
            Token::Word(w) if w.quote_style.is_none() => w.value.clone(),
            _ => s.clone(),
        })
        .collect::<Vec<_>>()
        .join(", ");
    Kind::Set { name, value }
}

/// A statement as the extended protocol keeps it between Parse and Execute.
#[derive(Debug, Clone)]
pub(crate) struct PgStatement {
    /// The text run (after the catalog rewrite).
    sql: String,
    kind: Kind,
    /// Placeholder types, `$1` first (`None`: left open by the statement).
    params: Vec<Option<DataType>>,
    /// The result's columns, for Describe (`None`: no rows).
    schema: Option<SchemaRef>,
}

impl PgConn {
    /// Checks that the login may run `sql`.
    fn check(&self, sql: &str) -> PgWireResult<()> {
        let grant = self
            .grant
            .lock()
            .map(|g| g.clone())
            .unwrap_or_else(|p| p.into_inner().clone());
        grant.check_statement(sql, true).map_err(refusal)
    }

    /// Runs `stmt` with `params`; rows are streamed unless `collect` (a statement of a simple
    /// query that others follow, which must finish before they start).
    async fn execute<C>(
        &self,
        client: &mut C,
        stmt: &PgStatement,
        params: Option<ParamValues>,
        format: &Format,
        collect: bool,
    ) -> PgWireResult<Response>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send,
        C::Error: std::fmt::Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        match &stmt.kind {
            Kind::Empty => Ok(Response::EmptyQuery),
            Kind::Begin | Kind::Commit | Kind::Rollback => self.transaction(&stmt.kind),
            Kind::Ignored(tag) => Ok(Response::Execution(Tag::new(tag))),
            Kind::Copy => self.start_copy(&stmt.sql).await,
            Kind::Set { name, value } => {
                client.metadata_mut().insert(name.clone(), value.clone());
                if catalog::is_reported(name) {
                    client
                        .feed(PgWireBackendMessage::ParameterStatus(ParameterStatus::new(
                            catalog::canonical_name(name),
                            value.clone(),
                        )))
                        .await?;
                }
                Ok(Response::Execution(Tag::new("SET")))
            }
            Kind::Show(name) => {
                let value = client
                    .metadata()
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(name))
                    .map(|(_, v)| v.clone())
                    .or_else(|| catalog::parameter_default(name).map(str::to_string))
                    .ok_or_else(|| {
                        user_error(
                            "42704",
                            format!("unrecognized configuration parameter \"{}\"", name.to_lowercase()),
                        )
                    })?;
                let schema = Arc::new(Schema::new(vec![Field::new(name.to_lowercase(), DataType::Utf8, true)]));
                let batch = RecordBatch::try_new(
                    schema.clone(),
                    vec![Arc::new(datafusion::arrow::array::StringArray::from(vec![value]))],
                )
                .map_err(|e| user_error("XX000", e.to_string()))?;
                let options = Arc::new(FormatOptions::from_client_metadata(client.metadata()));
                Ok(Response::Query(rows_response(
                    &schema,
                    batches_stream(schema.clone(), vec![batch]),
                    format,
                    options,
                    None,
                )?))
            }
            Kind::Rows => {
                let (schema, stream, permit, started) = self.start(stmt, params).await?;
                let finish = Finish {
                    app: self.app.clone(),
                    started,
                    scans: self.session.scans(),
                    error: Mutex::new(None),
                    _slot: permit,
                };
                let (stream, finish) = match collect {
                    // Run to the end now (the statements after it must see its effects), and free
                    // the slot before the rows are sent.
                    true => {
                        let batches = collect_all(stream).await?;
                        drop(finish);
                        (batches_stream(schema.clone(), batches), None)
                    }
                    false => (stream, Some(finish)),
                };
                let options = Arc::new(FormatOptions::from_client_metadata(client.metadata()));
                Ok(Response::Query(rows_response(
                    &schema, stream, format, options, finish,
                )?))
            }
            Kind::Command(tag) => {
                let (_, stream, _permit, started) = self.start(stmt, params).await?;
                let batches = collect_all(stream).await?;
                let count = changed_rows(&batches);
                let m = &self.app.0.metrics;
                m.query("pg", started.elapsed().as_secs_f64(), None);
                let (read, total) = self.session.scans().totals();
                m.scanned(read, total);
                if let ("INSERT", Some(n)) = (tag.as_str(), count) {
                    m.write(n as u64, started.elapsed().as_secs_f64());
                }
                // A write of no row changed nothing a ROLLBACK would have to undo.
                if tag != "SET" && count != Some(0) {
                    self.committed(match count {
                        Some(n) => format!("{tag} ({n} rows)"),
                        None => tag.clone(),
                    });
                }
                Ok(Response::Execution(match (tag.as_str(), count) {
                    ("INSERT", n) => Tag::new("INSERT").with_oid(0).with_rows(n.unwrap_or(0)),
                    ("DELETE" | "UPDATE", n) => Tag::new(tag).with_rows(n.unwrap_or(0)),
                    // CREATE TABLE ... AS: PostgreSQL answers `SELECT n`.
                    ("CREATE TABLE", Some(n)) => Tag::new("SELECT").with_rows(n),
                    _ => Tag::new(tag),
                }))
            }
        }
    }

    /// Starts a statement the session runs: checks the login may, waits for a slot, plans it and
    /// returns its rows as a stream that a cancel request ends, the slot, and when it started.
    async fn start(
        &self,
        stmt: &PgStatement,
        params: Option<ParamValues>,
    ) -> PgWireResult<(
        SchemaRef,
        SendableRecordBatchStream,
        crate::state::Slot,
        std::time::Instant,
    )> {
        self.check(&stmt.sql)?;
        let slot = self.app.slot().await.map_err(|m| user_error("53300", m))?;
        let started = std::time::Instant::now();
        let watch = self.cancel.subscribe();
        let (schema, stream) = or_cancel(watch.clone(), self.session.sql_stream_with(&stmt.sql, params))
            .await
            .map_err(sql_error)?;
        Ok((schema, cancellable(stream, watch), slot, started))
    }

    /// Parses `sql` for the extended protocol: classifies it and, for statements the session
    /// runs, describes its placeholders and columns without running it.
    async fn prepare(&self, sql: &str) -> PgWireResult<PgStatement> {
        let sql = self.shared.rewrite(sql.trim().trim_end_matches(';'));
        let kind = classify(&sql);
        let (params, schema) = match &kind {
            Kind::Rows | Kind::Command(_) => {
                self.check(&sql)?;
                let d = self.session.describe(&sql).await.map_err(sql_error)?;
                let schema = match kind {
                    Kind::Rows => d.schema,
                    _ => None,
                };
                (d.params, schema)
            }
            Kind::Show(name) => (
                vec![],
                Some(Arc::new(Schema::new(vec![Field::new(
                    name.to_lowercase(),
                    DataType::Utf8,
                    true,
                )]))),
            ),
            _ => (vec![], None),
        };
        Ok(PgStatement {
            sql,
            kind,
            params,
            schema,
        })
    }
}

/// Every batch of `stream`.
async fn collect_all(stream: SendableRecordBatchStream) -> PgWireResult<Vec<RecordBatch>> {
    stream
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<Result<_, _>>()
        .map_err(|e| sql_error(e.into()))
}

/// The rows changed by a DML statement: its result's single `count` value.
fn changed_rows(batches: &[RecordBatch]) -> Option<usize> {
    let b = batches.first()?;
    let c = b.column_by_name("count")?;
    let c = c.as_any().downcast_ref::<UInt64Array>()?;
    (c.len() == 1).then(|| c.value(0) as usize)
}

/// Counts a statement that answers rows once they are all sent (or the client stopped reading),
/// and holds its in-flight slot until then.
struct Finish {
    app: AppState,
    started: std::time::Instant,
    scans: varve::Scans,
    /// The error kind that ended the rows.
    error: Mutex<Option<&'static str>>,
    _slot: crate::state::Slot,
}

impl Drop for Finish {
    fn drop(&mut self) {
        let m = &self.app.0.metrics;
        let error = self.error.lock().ok().and_then(|k| *k);
        m.query("pg", self.started.elapsed().as_secs_f64(), error);
        let (read, total) = self.scans.totals();
        m.scanned(read, total);
    }
}

/// `batches` as a stream.
fn batches_stream(schema: SchemaRef, batches: Vec<RecordBatch>) -> SendableRecordBatchStream {
    Box::pin(RecordBatchStreamAdapter::new(
        schema,
        stream::iter(batches.into_iter().map(Ok)),
    ))
}

/// The PostgreSQL result of `stream`: its columns' types and rows in `format`; `finish` (the
/// in-flight slot and the statement's metrics) held until the last row is sent. An error while
/// streaming ends the rows with it.
fn rows_response(
    schema: &Schema,
    stream: SendableRecordBatchStream,
    format: &Format,
    options: Arc<FormatOptions>,
    finish: Option<Finish>,
) -> PgWireResult<QueryResponse> {
    let fields = Arc::new(arrow_pg::datatypes::arrow_schema_to_pg_fields(
        schema,
        format,
        Some(options),
    )?);
    let row_fields = fields.clone();
    let rows = stream
        .map(move |batch| {
            let rows: Box<dyn Iterator<Item = PgWireResult<DataRow>> + Send + Sync> = match batch {
                Ok(b) => {
                    if let Some(f) = &finish {
                        f.app.0.metrics.rows_sent.inc_by(b.num_rows() as u64);
                    }
                    arrow_pg::datatypes::encode_recordbatch(row_fields.clone(), b)
                }
                Err(e) => {
                    let e = varve::Error::from(e);
                    if let Some(f) = &finish {
                        if let Ok(mut k) = f.error.lock() {
                            *k = Some(e.kind().code());
                        }
                    }
                    Box::new(std::iter::once(Err(sql_error(e))))
                }
            };
            stream::iter(rows)
        })
        .flatten();
    Ok(QueryResponse::new(fields, rows))
}

#[async_trait::async_trait]
impl SimpleQueryHandler for PgConn {
    async fn do_query<C>(&self, client: &mut C, query: &str) -> PgWireResult<Vec<Response>>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore,
        C::Error: std::fmt::Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let (mut statements, rest) = varve::split_statements(query).map_err(sql_error)?;
        if !rest.trim().is_empty() {
            statements.push(rest);
        }
        let mut responses = Vec::with_capacity(statements.len());
        let last = statements.len().saturating_sub(1);
        for (i, sql) in statements.iter().enumerate() {
            let sql = self.shared.rewrite(sql);
            let stmt = PgStatement {
                kind: classify(&sql),
                sql,
                params: vec![],
                schema: None,
            };
            if stmt.kind == Kind::Copy && i < last {
                self.app.0.metrics.error("pg", "invalid_input");
                responses.push(Response::Error(Box::new(super::error::info(user_error(
                    "0A000",
                    "COPY ... FROM STDIN must be the last statement of a query",
                )))));
                break;
            }
            match self.execute(client, &stmt, None, &Format::UnifiedText, i < last).await {
                Ok(r) => responses.push(r),
                Err(e) => {
                    self.app.0.metrics.error("pg", super::error::kind_of(&e));
                    // Later statements do not run (PostgreSQL's rule for a multi-statement query).
                    responses.push(Response::Error(Box::new(super::error::info(e))));
                    break;
                }
            }
        }
        Ok(responses)
    }
}

#[async_trait::async_trait]
impl QueryParser for PgConn {
    type Statement = PgStatement;

    async fn parse_sql<C>(&self, _client: &C, sql: &str, _types: &[Option<Type>]) -> PgWireResult<PgStatement>
    where
        C: ClientInfo + Unpin + Send + Sync,
    {
        self.prepare(sql).await
    }

    fn get_parameter_types(&self, stmt: &PgStatement) -> PgWireResult<Vec<Type>> {
        stmt.params
            .iter()
            .map(|t| match t {
                Some(t) => arrow_pg::datatypes::into_pg_type(t),
                None => Ok(Type::UNKNOWN),
            })
            .collect()
    }

    fn get_result_schema(&self, stmt: &PgStatement, format: Option<&Format>) -> PgWireResult<Vec<FieldInfo>> {
        match &stmt.schema {
            Some(s) => arrow_pg::datatypes::arrow_schema_to_pg_fields(s, format.unwrap_or(&Format::UnifiedText), None),
            None => Ok(vec![]),
        }
    }
}

/// The extended protocol's handler: statements parsed by [`PgConn`] as [`QueryParser`].
#[derive(Debug)]
pub(crate) struct Extended(pub(crate) Arc<PgConn>);

#[async_trait::async_trait]
impl ExtendedQueryHandler for Extended {
    type Statement = PgStatement;
    type QueryParser = PgConn;

    fn query_parser(&self) -> Arc<PgConn> {
        self.0.clone()
    }

    async fn do_query<C>(
        &self,
        client: &mut C,
        portal: &Portal<PgStatement>,
        _max_rows: usize,
    ) -> PgWireResult<Response>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore<Statement = PgStatement>,
        C::Error: std::fmt::Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let stmt = &portal.statement.statement;
        let params = match portal.parameter_len() {
            0 => None,
            n => {
                // Decoded as the client sent them (its types; text when it sent none), then cast
                // to the statement's types with Varve's rule: refused, never changed.
                let as_sent = vec![None; n];
                let decoded = arrow_pg::datatypes::df::deserialize_parameters(portal, &as_sent)?;
                let datafusion::common::ParamValues::List(values) = decoded else {
                    return Err(user_error("08P01", "parameters by name are not taken"));
                };
                let mut typed = Vec::with_capacity(values.len());
                for (i, v) in values.into_iter().enumerate() {
                    let value = match stmt.params.get(i).cloned().flatten() {
                        Some(t) if v.value.data_type() != t => crate::params::cast(&v.value, &t)
                            .map_err(|m| user_error("22023", format!("parameter ${}: {m}", i + 1)))?,
                        _ => v.value,
                    };
                    typed.push(value.into());
                }
                Some(datafusion::common::ParamValues::List(typed))
            }
        };
        let r = self
            .0
            .execute(client, stmt, params, &portal.result_column_format, false)
            .await;
        if let Err(e) = &r {
            self.0.app.0.metrics.error("pg", super::error::kind_of(e));
        }
        r
    }
}
