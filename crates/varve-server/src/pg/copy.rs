//! `COPY table [(columns)] FROM STDIN WITH (FORMAT csv [, HEADER] [, DELIMITER 'c'] [, NULL
//! 'text'])`, also psql's `\copy ... FROM 'file'` (which sends it): the client's CSV is collected
//! (up to the server's write body limit) and appended in one commit when it ends, with the import's
//! rules (PostgreSQL's COPY section: an unquoted empty field is NULL, a quoted one the empty
//! string; the header line, when there is one, is skipped). A bad row fails the whole COPY, naming
//! its line, and nothing is written.

use datafusion::sql::sqlparser::ast::{
    CopyLegacyCsvOption, CopyLegacyOption, CopyOption, CopySource, CopyTarget, Statement,
};
use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
use datafusion::sql::sqlparser::parser::Parser;
use futures::{Sink, SinkExt};
use pgwire::api::copy::CopyHandler;
use pgwire::api::results::{CopyResponse, Response, Tag};
use pgwire::api::ClientInfo;
use pgwire::error::{PgWireError, PgWireResult};
use pgwire::messages::copy::{CopyData, CopyDone, CopyFail};
use pgwire::messages::PgWireBackendMessage;
use varve::TableIdent;

use super::conn::{PendingCopy, PgConn};
use super::error::{sql_error, user_error};
use crate::auth::Scope;

/// What a `COPY ... FROM STDIN` statement asks for.
struct CopySpec {
    table: TableIdent,
    /// The columns listed, in order; empty: all, in the table's order.
    columns: Vec<String>,
    header: bool,
    delimiter: u8,
    null: Option<String>,
}

/// Reads a `COPY` statement.
///
/// Errors: it does not parse, copies out (`TO STDOUT`: use a query) or from a file on the server,
/// or asks for a format other than CSV.
fn parse(sql: &str) -> PgWireResult<CopySpec> {
    let bad = |m: String| user_error("0A000", m);
    let mut statements =
        Parser::parse_sql(&PostgreSqlDialect {}, sql).map_err(|e| user_error("42601", e.to_string()))?;
    let Some(Statement::Copy {
        source,
        to,
        target,
        options,
        legacy_options,
        ..
    }) = statements.pop()
    else {
        return Err(bad("expected COPY table FROM STDIN WITH (FORMAT csv)".into()));
    };
    if to {
        return Err(bad(
            "COPY ... TO is not supported: run the query and read its rows".into()
        ));
    }
    if target != CopyTarget::Stdin {
        return Err(bad(
            "COPY reads FROM STDIN only (psql's \\copy sends a client file that way)".into(),
        ));
    }
    let CopySource::Table { table_name, columns } = source else {
        return Err(bad("COPY (query) FROM is not valid".into()));
    };
    let table = TableIdent::parse(&table_name.to_string().replace('"', "")).map_err(sql_error)?;
    let columns: Vec<String> = columns.into_iter().map(|c| c.value).collect();
    let (mut csv, mut header, mut delimiter, mut null) = (false, false, b',', None);
    for o in options {
        match o {
            CopyOption::Format(f) if f.value.eq_ignore_ascii_case("csv") => csv = true,
            CopyOption::Format(f) => return Err(bad(format!("COPY format {}: Varve takes FORMAT csv", f.value))),
            CopyOption::Header(h) => header = h,
            CopyOption::Delimiter(c) => delimiter = ascii(c)?,
            CopyOption::Null(n) => null = Some(n),
            CopyOption::Encoding(e) if e.eq_ignore_ascii_case("utf8") || e.eq_ignore_ascii_case("utf-8") => {}
            other => return Err(bad(format!("COPY option {other} is not supported"))),
        }
    }
    for o in legacy_options {
        match o {
            CopyLegacyOption::Csv(csv_options) => {
                csv = true;
                for c in csv_options {
                    match c {
                        CopyLegacyCsvOption::Header => header = true,
                        other => return Err(bad(format!("COPY option {other} is not supported"))),
                    }
                }
            }
            CopyLegacyOption::Header => header = true,
            CopyLegacyOption::Delimiter(c) => delimiter = ascii(c)?,
            CopyLegacyOption::Null(n) => null = Some(n),
            other => return Err(bad(format!("COPY option {other} is not supported"))),
        }
    }
    if !csv {
        return Err(bad(
            "COPY's text format is not supported: add WITH (FORMAT csv) (psql: \\copy t FROM 'f.csv' WITH (FORMAT csv, HEADER))"
                .into(),
        ));
    }
    Ok(CopySpec {
        table,
        columns,
        header,
        delimiter,
        null,
    })
}

fn ascii(c: char) -> PgWireResult<u8> {
    u8::try_from(c)
        .ok()
        .filter(u8::is_ascii)
        .ok_or_else(|| user_error("22023", format!("COPY delimiter {c:?} must be one ASCII character")))
}

/// A CSV field holding `name`, quoted.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

impl PgConn {
    /// Starts `COPY ... FROM STDIN`: checks the login may write the table, then asks the client
    /// for the data.
    pub(crate) async fn start_copy(&self, sql: &str) -> PgWireResult<Response> {
        let CopySpec {
            table,
            columns,
            header: skip_header,
            delimiter,
            null,
        } = parse(sql)?;
        let grant = self
            .grant
            .lock()
            .map(|g| g.clone())
            .unwrap_or_else(|p| p.into_inner().clone());
        if grant.scope != Some(Scope::Write) {
            return Err(user_error("42501", "COPY writes: it needs a token with scope write"));
        }
        if let Some(ns) = grant.namespace.as_ref().filter(|ns| **ns != table.namespace) {
            return Err(user_error(
                "42501",
                format!("this token is scoped to namespace {ns}: it cannot use table {table}"),
            ));
        }
        let described = self.app.0.lake.describe(&table.to_string()).await.map_err(sql_error)?;
        let names: Vec<String> = match columns.is_empty() {
            true => described.schema.fields().iter().map(|f| f.name().clone()).collect(),
            false => columns,
        };
        if let Some(unknown) = names.iter().find(|n| described.schema.field_with_name(n).is_err()) {
            return Err(user_error(
                "42703",
                format!("COPY: table {table} has no column {unknown} (COPY does not add columns)"),
            ));
        }
        let sep = (delimiter as char).to_string();
        let header = names.iter().map(|n| quoted(n)).collect::<Vec<_>>().join(&sep);
        let n = names.len();
        if let Ok(mut pending) = self.copy.lock() {
            *pending = Some(PendingCopy {
                table,
                header,
                skip_header,
                delimiter,
                null,
                data: Vec::new(),
                too_large: false,
            });
        }
        Ok(Response::CopyIn(CopyResponse::new(0, n, futures::stream::empty())))
    }

    /// Appends the collected CSV: the rows committed.
    async fn finish_copy(&self, copy: PendingCopy) -> PgWireResult<usize> {
        let limit = self.app.0.config.max_write_bytes;
        if copy.too_large {
            return Err(user_error(
                "54000",
                format!("the COPY data is larger than the server's write limit of {limit} bytes: nothing was written"),
            ));
        }
        let mut data = copy.data;
        if copy.skip_header {
            let end = data
                .iter()
                .position(|b| *b == b'\n')
                .map(|i| i + 1)
                .unwrap_or(data.len());
            data.drain(..end);
        }
        // psql ends the data with `\.` on its own line in old protocol versions; drop it.
        for end in [&b"\\.\r\n"[..], &b"\\.\n"[..], &b"\\."[..]] {
            let own_line = data.len() == end.len() || data.get(data.len().wrapping_sub(end.len() + 1)) == Some(&b'\n');
            if data.ends_with(end) && own_line {
                data.truncate(data.len() - end.len());
                break;
            }
        }
        if data.iter().all(|b| b.is_ascii_whitespace()) {
            return Ok(0);
        }
        let mut csv = copy.header.into_bytes();
        csv.push(b'\n');
        csv.extend_from_slice(&data);
        let text = varve::TextOptions {
            delimiter: Some(copy.delimiter),
            null_values: copy.null.into_iter().filter(|n| !n.is_empty()).collect(),
            ..varve::TextOptions::default()
        };
        let table = copy.table.to_string();
        let input = varve::Input::from_bytes("COPY data", bytes::Bytes::from(csv), varve::InputFormat::Csv, &text)
            .map_err(sql_error)?;
        let _permit = self.app.slot().await.map_err(|m| user_error("53300", m))?;
        let started = std::time::Instant::now();
        let report = varve::import(
            &self.app.0.lake,
            &table,
            &[input],
            &varve::ImportOptions::default(),
            None,
        )
        .await
        .map_err(sql_error)?;
        let rows = report.append.rows as usize;
        self.app.0.metrics.write(rows as u64, started.elapsed().as_secs_f64());
        Ok(rows)
    }
}

#[async_trait::async_trait]
impl CopyHandler for PgConn {
    async fn on_copy_data<C>(&self, _client: &mut C, copy_data: CopyData) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: std::fmt::Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let limit = self.app.0.config.max_write_bytes;
        if let Ok(mut pending) = self.copy.lock() {
            if let Some(p) = pending.as_mut() {
                if p.data.len() + copy_data.data.len() > limit {
                    p.too_large = true;
                    p.data = Vec::new();
                } else if !p.too_large {
                    p.data.extend_from_slice(&copy_data.data);
                }
            }
        }
        Ok(())
    }

    async fn on_copy_done<C>(&self, client: &mut C, _done: CopyDone) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: std::fmt::Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let pending = self.copy.lock().ok().and_then(|mut p| p.take());
        let Some(copy) = pending else {
            return Err(user_error("08P01", "copy data without a COPY statement"));
        };
        let rows = self.finish_copy(copy).await?;
        self.committed(format!("COPY ({rows} rows)"));
        client
            .send(PgWireBackendMessage::CommandComplete(
                Tag::new("COPY").with_rows(rows).into(),
            ))
            .await?;
        Ok(())
    }

    async fn on_copy_fail<C>(&self, _client: &mut C, fail: CopyFail) -> PgWireError
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: std::fmt::Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        if let Ok(mut p) = self.copy.lock() {
            p.take();
        }
        user_error(
            "57014",
            format!("COPY failed in the client, nothing was written: {}", fail.message),
        )
    }
}
