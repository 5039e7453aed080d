//! The HTTP routes and what each answers:
//!
//! - `POST /v1/sql`: one SQL statement (the body as text, or JSON `{"sql": "..."}`), answered in
//!   the negotiated format (`results`), streamed. Errors before the first row are JSON
//!   `{"error": ..., "kind": ...}` with a status by kind (400 bad SQL, 404 missing table, 409
//!   conflict, 413 row limit, 429 busy, 503 stopping, 504 timeout); an error after it cuts the body off, so a
//!   client never takes a partial result for a whole one.
//! - `GET /v1/tables`: `{"tables": ["ns.t", ...]}`; `GET /v1/tables/{name}`: the table's info
//!   (as `varve info --json`).
//! - `GET /health`: 200 `ok` (no token needed); `GET /metrics`: Prometheus metrics.

use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use datafusion::execution::SendableRecordBatchStream;
use futures::StreamExt;
use serde::Deserialize;
use varve::{ErrorKind, QueryOptions};

use crate::auth::{self, Grant, Refusal, Scope};
use crate::results::{Encoder, Format};
use crate::state::{AppState, Slot};

/// The routes over `state`.
pub(crate) fn router(state: AppState) -> Router {
    Router::new()
        .route("/health", get(health))
        .route("/metrics", get(metrics))
        .route("/v1/sql", post(sql).get(sql_by_get))
        .route("/v1/tables", get(tables))
        .route("/v1/tables/{name}", get(table))
        .route(
            "/v1/write",
            post(write_v1).layer(axum::extract::DefaultBodyLimit::max(state.0.config.max_write_bytes)),
        )
        .route(
            "/api/v2/write",
            post(write_v2).layer(axum::extract::DefaultBodyLimit::max(state.0.config.max_write_bytes)),
        )
        .with_state(state)
}

/// An error answered as JSON `{"error": message, "kind": code}`.
#[derive(Debug)]
struct ApiError {
    status: StatusCode,
    kind: &'static str,
    message: String,
}

impl ApiError {
    fn new(status: StatusCode, kind: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            kind,
            message: message.into(),
        }
    }
}

impl From<varve::Error> for ApiError {
    fn from(e: varve::Error) -> ApiError {
        let status = match e.kind() {
            ErrorKind::NotFound => StatusCode::NOT_FOUND,
            ErrorKind::AlreadyExists | ErrorKind::Conflict => StatusCode::CONFLICT,
            ErrorKind::InvalidInput | ErrorKind::SchemaMismatch => StatusCode::BAD_REQUEST,
            ErrorKind::LimitExceeded => StatusCode::PAYLOAD_TOO_LARGE,
            ErrorKind::Timeout => StatusCode::GATEWAY_TIMEOUT,
            ErrorKind::Unsupported => StatusCode::NOT_IMPLEMENTED,
            ErrorKind::Storage => StatusCode::BAD_GATEWAY,
            ErrorKind::Corruption | ErrorKind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError::new(status, e.kind().code(), e.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({"error": self.message, "kind": self.kind});
        let mut r = (self.status, axum::Json(body)).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Bearer"));
        }
        r
    }
}

/// The grant of a request: 401 without a usable token (when one is needed), 403 for a token whose
/// scope is less than `needed`.
fn check_access(state: &AppState, headers: &HeaderMap, needed: Scope) -> Result<Grant, ApiError> {
    let header = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
    let cfg = &state.0.config;
    let grant = auth::grant(cfg.tokens.as_ref(), cfg.allow_anonymous_read, header);
    // A token was given but is not one the server accepts: say so, not that one is missing.
    if grant.rejected && grant.scope.is_none_or(|s| s < needed) {
        return Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            auth::REJECTED_TOKEN,
        ));
    }
    match grant.scope {
        Some(s) if s >= needed => Ok(grant),
        Some(_) if grant.token => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            "this token may only read (scope read): this request changes data",
        )),
        Some(_) => Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "this request changes data and needs a token (Authorization: Bearer <token>)",
        )),
        None => Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "a token is needed (Authorization: Bearer <token>)",
        )),
    }
}

/// 403 unless `grant` may name `table` (a token scoped to a namespace names only its tables).
fn check_namespace(grant: &Grant, table: &varve::TableIdent) -> Result<(), ApiError> {
    match &grant.namespace {
        Some(ns) if *ns != table.namespace => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            format!("this token is scoped to namespace {ns}: it cannot use table {table}"),
        )),
        _ => Ok(()),
    }
}

/// Waits for a request slot (`max_in_flight`), or 429 Too Many Requests after `queue_timeout`.
async fn slot(state: &AppState) -> Result<Slot, ApiError> {
    state
        .slot()
        .await
        .map_err(|m| ApiError::new(StatusCode::TOO_MANY_REQUESTS, "busy", m))
}

/// Counts the request and answers.
fn answer(state: &AppState, route: &str, r: Result<Response, ApiError>) -> Response {
    let r = r.unwrap_or_else(|e| e.into_response());
    state.0.metrics.request(route, r.status().as_u16());
    r
}

async fn health() -> &'static str {
    "ok\n"
}

async fn metrics(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let r = check_access(&state, &headers, Scope::Read).map(|_| {
        (
            [(
                header::CONTENT_TYPE,
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
            )],
            state.0.metrics.encode(state.0.lake.cache_stats()),
        )
            .into_response()
    });
    answer(&state, "/metrics", r)
}

async fn tables(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let r = async {
        let grant = check_access(&state, &headers, Scope::Read)?;
        let names: Vec<String> = state
            .0
            .lake
            .tables()
            .await?
            .iter()
            .filter(|t| check_namespace(&grant, t).is_ok())
            .map(|t| t.to_string())
            .collect();
        Ok(axum::Json(serde_json::json!({ "tables": names })).into_response())
    };
    let r = r.await;
    answer(&state, "/v1/tables", r)
}

async fn table(State(state): State<AppState>, headers: HeaderMap, Path(name): Path<String>) -> Response {
    let r = async {
        let grant = check_access(&state, &headers, Scope::Read)?;
        if let Ok(ident) = varve::TableIdent::parse(&name) {
            check_namespace(&grant, &ident)?;
        }
        let info = state.0.lake.info(&name).await?;
        Ok(axum::Json(info).into_response())
    };
    let r = r.await;
    answer(&state, "/v1/tables/{name}", r)
}

/// `?format=` of `/v1/sql`.
#[derive(Debug, Deserialize)]
struct SqlQuery {
    format: Option<String>,
}

/// The JSON body of `/v1/sql`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SqlBody {
    sql: String,
    #[serde(default)]
    params: Vec<serde_json::Value>,
}

async fn sql(State(state): State<AppState>, headers: HeaderMap, Query(q): Query<SqlQuery>, body: Bytes) -> Response {
    let started = Instant::now();
    let r = run_sql(&state, &headers, q, body, started).await;
    if let Err(e) = &r {
        state
            .0
            .metrics
            .query("http", started.elapsed().as_secs_f64(), Some(e.kind));
    }
    answer(&state, "/v1/sql", r)
}

async fn run_sql(
    state: &AppState,
    headers: &HeaderMap,
    q: SqlQuery,
    body: Bytes,
    started: Instant,
) -> Result<Response, ApiError> {
    let grant = check_access(state, headers, Scope::Read)?;
    let format = match (&q.format, headers.get(header::ACCEPT).and_then(|v| v.to_str().ok())) {
        (Some(name), _) => {
            Format::from_name(name).map_err(|m| ApiError::new(StatusCode::BAD_REQUEST, "invalid_input", m))?
        }
        (None, Some(accept)) => Format::from_accept(accept).unwrap_or(Format::Json),
        (None, None) => Format::Json,
    };
    let (sql, params) = statement(headers, &body)?;
    grant.check_statement(&sql, false).map_err(|r| match r {
        Refusal::Invalid(e) => ApiError::from(e),
        Refusal::NeedsToken(m) => ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", m),
        Refusal::Forbidden(m) => ApiError::new(StatusCode::FORBIDDEN, "forbidden", m),
    })?;
    let permit = slot(state).await?;
    let cfg = &state.0.config;
    // The engine applies the server's limits (`varve::QueryOptions`), as for PostgreSQL clients:
    // planning, the first batch and every later one count against the timeout.
    let limits = QueryOptions {
        timeout: cfg.query_timeout,
        max_rows: cfg.max_result_rows,
        memory_limit: cfg.memory_limit,
    };
    let session = state.0.lake.session(limits)?;
    session.refuse_file_access();
    session.set_table_hint("GET /v1/tables lists the tables");
    if let Some(ns) = &grant.namespace {
        session.scope_suggestions(ns);
    }
    // Planning and the first batch happen before the status is sent, so that their errors get one.
    let first = async {
        let params = match params.is_empty() {
            true => None,
            false => {
                let described = session.describe(&sql).await?;
                Some(crate::params::from_json(&params, &described.params).map_err(varve::Error::invalid)?)
            }
        };
        let (schema, mut stream) = session.sql_stream_with(&sql, params).await?;
        let first = stream.next().await.transpose().map_err(varve::Error::from)?;
        Ok::<_, varve::Error>((schema, stream, first))
    };
    let (schema, stream, first) = first.await?;
    let mut encoder = Encoder::new(format, &schema)
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()))?;
    let opening = match &first {
        Some(b) => encoder.write(b),
        None => Ok(Bytes::new()),
    }
    .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()))?;

    let feed = Feed {
        state: state.clone(),
        stream: Some(stream),
        encoder: Some(encoder),
        schema,
        started,
        _permit: permit,
        _session: session,
        opening: Some(opening),
        finished: false,
        error: None,
    };
    let body = Body::from_stream(futures::stream::unfold(feed, Feed::next));
    Ok(([(header::CONTENT_TYPE, format.content_type())], body).into_response())
}

/// `GET /v1/sql`: 405 with a JSON error that says how to send a statement (axum's own 405 has an
/// empty body).
async fn sql_by_get() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "invalid_input",
        "send the statement with POST /v1/sql: the SQL text as the body, or JSON {\"sql\": \"...\", \"params\": [...]}",
    )
}

/// The statement of a `/v1/sql` body and its parameters: JSON `{"sql": ..., "params": [...]}` when
/// the content type says JSON, else the body as UTF-8 text (no parameters).
fn statement(headers: &HeaderMap, body: &[u8]) -> Result<(String, Vec<serde_json::Value>), ApiError> {
    let bad = |m: String| ApiError::new(StatusCode::BAD_REQUEST, "invalid_input", m);
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|c| c.trim_start().to_ascii_lowercase().starts_with("application/json"));
    let (sql, params) = match json {
        true => {
            let b: SqlBody = serde_json::from_slice(body).map_err(|e| {
                bad(format!(
                    "the JSON body must be {{\"sql\": \"...\", \"params\": [...]}}: {e}"
                ))
            })?;
            (b.sql, b.params)
        }
        false => (
            String::from_utf8(body.to_vec()).map_err(|e| bad(format!("the body is not UTF-8 text: {e}")))?,
            vec![],
        ),
    };
    let (mut statements, rest) = varve::split_statements(&sql).map_err(|e| bad(e.to_string()))?;
    if !rest.trim().is_empty() {
        statements.push(rest);
    }
    match statements.len() {
        0 => Err(bad("no SQL statement in the body".into())),
        1 => Ok((statements.remove(0), params)),
        n => Err(bad(format!("one SQL statement per request, got {n}"))),
    }
}

/// The state of a streamed result body.
struct Feed {
    state: AppState,
    stream: Option<SendableRecordBatchStream>,
    encoder: Option<Encoder>,
    schema: arrow::datatypes::SchemaRef,
    started: Instant,
    opening: Option<Bytes>,
    _permit: Slot,
    _session: varve::Session,
    /// Whether [`Feed::done`] has counted the query.
    finished: bool,
    /// The error kind that cut the body off.
    error: Option<&'static str>,
}

impl Feed {
    /// The next chunk of the body; an `Err` cuts the body off.
    async fn next(mut self) -> Option<(Result<Bytes, std::io::Error>, Feed)> {
        if let Some(b) = self.opening.take() {
            self.count(b.len());
            return Some((Ok(b), self));
        }
        let stream = self.stream.as_mut()?;
        match stream.next().await {
            Some(Ok(batch)) => {
                self.state.0.metrics.rows_sent.inc_by(batch.num_rows() as u64);
                let encoder = self.encoder.as_mut()?;
                match encoder.write(&batch) {
                    Ok(b) => {
                        self.count(b.len());
                        Some((Ok(b), self))
                    }
                    Err(e) => self.fail("internal", e.to_string()),
                }
            }
            Some(Err(e)) => {
                let e = varve::Error::from(e);
                self.fail(e.kind().code(), e.to_string())
            }
            None => {
                self.stream = None;
                let encoder = self.encoder.take()?;
                let tail = encoder.finish(&self.schema);
                self.done();
                match tail {
                    Ok(b) => {
                        self.count(b.len());
                        Some((Ok(b), self))
                    }
                    Err(e) => Some((Err(std::io::Error::other(e.to_string())), self)),
                }
            }
        }
    }

    fn count(&self, bytes: usize) {
        self.state.0.metrics.bytes_sent.inc_by(bytes as u64);
    }

    /// Counts the query as finished, once (also when the client went away and the body was
    /// dropped unread: [`Drop`]).
    fn done(&mut self) {
        if std::mem::replace(&mut self.finished, true) {
            return;
        }
        let m = &self.state.0.metrics;
        m.query("http", self.started.elapsed().as_secs_f64(), self.error);
        let (read, total) = self._session.scans().totals();
        m.scanned(read, total);
    }

    /// Ends the body with an error (the client sees a cut-off response, never a short result).
    fn fail(mut self, kind: &'static str, message: String) -> Option<(Result<Bytes, std::io::Error>, Feed)> {
        tracing::warn!(error = %message, "a streamed SQL result failed");
        self.error = Some(kind);
        self.stream = None;
        self.encoder = None;
        self.done();
        Some((Err(std::io::Error::other(message)), self))
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        self.done();
    }
}

#[derive(Debug, Deserialize)]
struct WriteQuery {
    /// `/v1/write`: the table every line goes to.
    table: Option<String>,
    /// `/api/v2/write`: the namespace; each measurement is a table in it.
    bucket: Option<String>,
    /// InfluxDB's organisation: accepted and ignored.
    #[allow(dead_code)]
    org: Option<String>,
    precision: Option<String>,
    #[serde(default)]
    truncate_ns: bool,
    /// `/v1/write`: the body's format (else the content type's).
    format: Option<String>,
    /// `/v1/write` of CSV, NDJSON or Parquet that creates the table: its time column.
    time_column: Option<String>,
    /// ... and its series key, comma-separated.
    series_key: Option<String>,
}

/// The header that makes a retried write a no-op.
const BATCH_ID: &str = "x-varve-batch-id";

/// A write of line protocol: parsed whole first (a bad line writes nothing), then appended per
/// table (`write`).
async fn run_write(
    state: &AppState,
    headers: &HeaderMap,
    q: WriteQuery,
    body: Bytes,
    route: &'static str,
) -> Result<Vec<crate::write::Written>, ApiError> {
    let grant = check_access(state, headers, Scope::Write)?;
    let bad = |m: String| ApiError::new(StatusCode::BAD_REQUEST, "invalid_input", m);
    let encoding = headers.get(header::CONTENT_ENCODING).and_then(|v| v.to_str().ok());
    let body =
        crate::bodies::decode(body, encoding, state.0.config.max_write_bytes).map_err(|(status, m)| match status {
            413 => ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "limit_exceeded", m),
            415 => ApiError::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, "invalid_input", m),
            _ => ApiError::new(StatusCode::BAD_REQUEST, "invalid_input", m),
        })?;
    let batch_id = headers.get(BATCH_ID).and_then(|v| v.to_str().ok());
    if route == "/v1/write" {
        let content_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
        let format = crate::bodies::BodyFormat::of(q.format.as_deref(), content_type)
            .map_err(|m| ApiError::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, "invalid_input", m))?;
        if format != crate::bodies::BodyFormat::LineProtocol {
            let table = q
                .table
                .as_deref()
                .ok_or_else(|| bad("/v1/write needs ?table=namespace.table".into()))?;
            let ident = varve::TableIdent::parse(table)?;
            check_namespace(&grant, &ident)?;
            let _permit = slot(state).await?;
            let started = Instant::now();
            let written = crate::bodies::append(
                &state.0.lake,
                &ident,
                format,
                body,
                batch_id,
                q.time_column.as_deref(),
                q.series_key.as_deref(),
            )
            .await?;
            state
                .0
                .metrics
                .write(written.rows as u64, started.elapsed().as_secs_f64());
            return Ok(vec![written]);
        }
    }
    let unit = crate::write::precision(q.precision.as_deref()).map_err(bad)?;
    // Read as line protocol because nothing named another format: a body that is plainly CSV,
    // NDJSON or Parquet gets told how to say so.
    let guessed = q.format.is_none() && headers.get(header::CONTENT_TYPE).is_none_or(|v| v != "text/plain");
    let hint = |m: String| match guessed.then(|| crate::bodies::format_hint(&body)).flatten() {
        Some(h) => format!("{m} (the body was read as line protocol, the default: {h})"),
        None => m,
    };
    let text = std::str::from_utf8(&body).map_err(|e| bad(hint(format!("the body is not UTF-8 text: {e}"))))?;
    let now = chrono::Utc::now();
    let now = match unit {
        varve::arrow::datatypes::TimeUnit::Second => now.timestamp(),
        varve::arrow::datatypes::TimeUnit::Millisecond => now.timestamp_millis(),
        varve::arrow::datatypes::TimeUnit::Microsecond => now.timestamp_micros(),
        varve::arrow::datatypes::TimeUnit::Nanosecond => now.timestamp_micros() * 1000,
    };
    let parsed = crate::write::parse(text, now, route == "/v1/write").map_err(|m| bad(hint(m)))?;
    let table_of: Box<dyn Fn(&str) -> String + Send + Sync> = match (route, &q.table, &q.bucket) {
        ("/v1/write", Some(t), _) => {
            let t = t.clone();
            Box::new(move |_: &str| t.clone())
        }
        ("/v1/write", None, _) => return Err(bad("/v1/write needs ?table=namespace.table".into())),
        (_, _, Some(ns)) => {
            let ns = ns.clone();
            Box::new(move |m: &str| format!("{ns}.{m}"))
        }
        _ => {
            return Err(bad(
                "/api/v2/write needs ?bucket=NAMESPACE (each measurement is a table in it)".into(),
            ))
        }
    };
    for m in parsed.measurements() {
        let ident = varve::TableIdent::parse(&table_of(m))?;
        check_namespace(&grant, &ident)?;
    }
    let permit = slot(state).await?;
    // Server::run waits for writes that hold a token of `writes` when it stops; one that starts
    // after that wait began is refused (nothing written).
    let token = state.0.writes.token();
    if state.0.writes.is_closed() {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "stopping",
            "the server is stopping",
        ));
    }
    let rows = parsed.rows();
    let started = Instant::now();
    let written = crate::write::write(
        &state.0.lake,
        &state.0.writes,
        parsed,
        table_of,
        crate::write::WriteOptions {
            unit,
            truncate_ns: q.truncate_ns,
            batch_id,
        },
        (permit, token),
    )
    .await?;
    state.0.metrics.write(rows as u64, started.elapsed().as_secs_f64());
    Ok(written)
}

async fn write_v1(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<WriteQuery>,
    body: Bytes,
) -> Response {
    let r = run_write(&state, &headers, q, body, "/v1/write")
        .await
        .map(|w| axum::Json(serde_json::json!({ "tables": w })).into_response());
    answer(&state, "/v1/write", r)
}

async fn write_v2(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<WriteQuery>,
    body: Bytes,
) -> Response {
    let r = run_write(&state, &headers, q, body, "/api/v2/write")
        .await
        .map(|_| StatusCode::NO_CONTENT.into_response());
    answer(&state, "/api/v2/write", r)
}
