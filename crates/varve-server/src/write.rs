//! Writes in InfluxDB line protocol (<https://docs.influxdata.com/influxdb/v2/reference/syntax/line-protocol/>),
//! parsed by the `influxdb-line-protocol` crate, at two routes:
//!
//! - `POST /v1/write?table=ns.t[&precision=ns|us|ms|s]`: every line into the table `ns.t`;
//!   answers JSON `{"tables": [{"table", "rows", "snapshot_id", "duplicate"}]}`.
//! - `POST /api/v2/write?bucket=NS[&precision=...]` (InfluxDB 2's route, so Telegraf and the
//!   InfluxDB client libraries work unchanged): each measurement into the table
//!   `NS.<measurement>`; answers 204 No Content, as InfluxDB does.
//!
//! A line's tags are text columns, its fields are columns of their type (`1i` a 64-bit integer,
//! `1u` an unsigned one, `1` a double, `"x"` text, `t` a boolean) and its timestamp (in
//! `precision`, default ns; the server's clock when absent) goes to the table's time column. A
//! write that creates a table makes it with the time column `time` and the tags as its series
//! key; new tags and fields add columns. Times are stored in µs: a timestamp with digits below a
//! microsecond is refused unless `truncate_ns=true` (nothing is moved silently). A batch id
//! header (`X-Varve-Batch-Id`) makes a retried write a no-op. Each table's rows are one commit;
//! a body naming several measurements makes one commit per table, in the order they first
//! appear, after every table's rows were checked. A malformed line, or a field whose type
//! differs from its column's, fails the whole request before anything is written, naming the
//! line or the column.

use std::sync::Arc;

use arrow::array::{
    ArrayBuilder, ArrayRef, BooleanBuilder, Float64Builder, Int64Builder, RecordBatch, StringBuilder, UInt64Builder,
};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use influxdb_line_protocol::FieldValue;
use varve::{AppendOptions, Lake, TableContract, TimeOptions};

/// The precision of line protocol timestamps.
///
/// Errors: the sentence to answer for a name other than `ns`, `us`, `ms`, `s`.
pub(crate) fn precision(name: Option<&str>) -> Result<TimeUnit, String> {
    match name.unwrap_or("ns") {
        "ns" => Ok(TimeUnit::Nanosecond),
        "us" | "µs" => Ok(TimeUnit::Microsecond),
        "ms" => Ok(TimeUnit::Millisecond),
        "s" => Ok(TimeUnit::Second),
        other => Err(format!("precision must be ns, us, ms or s, not {other:?}")),
    }
}

/// The time column of a table a write creates; no tag or field may have this name.
const TIME: &str = "time";

/// A column being built: its type is the first value's.
enum Column {
    Text(StringBuilder),
    Int(Int64Builder),
    UInt(UInt64Builder),
    Float(Float64Builder),
    Bool(BooleanBuilder),
}

impl Column {
    fn for_value(v: &FieldValue<'_>) -> Column {
        match v {
            FieldValue::I64(_) => Column::Int(Int64Builder::new()),
            FieldValue::U64(_) => Column::UInt(UInt64Builder::new()),
            FieldValue::F64(_) => Column::Float(Float64Builder::new()),
            FieldValue::String(_) => Column::Text(StringBuilder::new()),
            FieldValue::Boolean(_) => Column::Bool(BooleanBuilder::new()),
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Column::Text(_) => "text",
            Column::Int(_) => "integer (i)",
            Column::UInt(_) => "unsigned integer (u)",
            Column::Float(_) => "float",
            Column::Bool(_) => "boolean",
        }
    }

    fn nulls(&mut self, n: usize) {
        for _ in 0..n {
            match self {
                Column::Text(b) => b.append_null(),
                Column::Int(b) => b.append_null(),
                Column::UInt(b) => b.append_null(),
                Column::Float(b) => b.append_null(),
                Column::Bool(b) => b.append_null(),
            }
        }
    }

    /// Appends `v`; false when it is of another type than the column.
    fn push(&mut self, v: &FieldValue<'_>) -> bool {
        match (self, v) {
            (Column::Int(b), FieldValue::I64(x)) => b.append_value(*x),
            (Column::UInt(b), FieldValue::U64(x)) => b.append_value(*x),
            (Column::Float(b), FieldValue::F64(x)) => b.append_value(*x),
            (Column::Text(b), FieldValue::String(x)) => b.append_value(x.as_str()),
            (Column::Bool(b), FieldValue::Boolean(x)) => b.append_value(*x),
            _ => return false,
        }
        true
    }

    fn len(&self) -> usize {
        match self {
            Column::Text(b) => b.len(),
            Column::Int(b) => b.len(),
            Column::UInt(b) => b.len(),
            Column::Float(b) => b.len(),
            Column::Bool(b) => b.len(),
        }
    }

    fn finish(&mut self) -> (DataType, ArrayRef) {
        match self {
            Column::Text(b) => (DataType::Utf8, Arc::new(b.finish())),
            Column::Int(b) => (DataType::Int64, Arc::new(b.finish())),
            Column::UInt(b) => (DataType::UInt64, Arc::new(b.finish())),
            Column::Float(b) => (DataType::Float64, Arc::new(b.finish())),
            Column::Bool(b) => (DataType::Boolean, Arc::new(b.finish())),
        }
    }
}

/// One measurement's rows: raw timestamps, tags and fields, columns in first-seen order.
#[derive(Default)]
struct Rows {
    times: Vec<i64>,
    tags: Vec<String>,
    columns: Vec<(String, Column)>,
}

impl Rows {
    fn column(&mut self, name: &str, v: &FieldValue<'_>) -> &mut Column {
        let i = match self.columns.iter().position(|(n, _)| n == name) {
            Some(i) => i,
            None => {
                let mut c = Column::for_value(v);
                c.nulls(self.times.len());
                self.columns.push((name.to_string(), c));
                self.columns.len() - 1
            }
        };
        &mut self.columns[i].1
    }

    /// The rows as a batch with the raw time as an `Int64` column named `time_column`.
    fn batch(mut self, time_column: &str) -> Result<RecordBatch, String> {
        let n = self.times.len();
        let mut fields = vec![Field::new(time_column, DataType::Int64, false)];
        let mut arrays: Vec<ArrayRef> = vec![Arc::new(arrow::array::Int64Array::from(self.times))];
        for (name, c) in &mut self.columns {
            c.nulls(n.saturating_sub(c.len()));
            let (t, a) = c.finish();
            fields.push(Field::new(name.as_str(), t, true));
            arrays.push(a);
        }
        RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).map_err(|e| e.to_string())
    }
}

/// Line protocol parsed per measurement, in the order measurements first appear.
pub(crate) struct Parsed {
    measurements: Vec<(String, Rows)>,
}

/// Parses `body`; lines without a timestamp get `now` (in `precision`). With `one_table`, every
/// line's rows go together whatever its measurement (`/v1/write`: one table, one commit).
///
/// Errors: the sentence to answer, naming the line (1-based) for a line that does not parse, a
/// tag and a field of one name, or a field whose type differs from the same field's on an
/// earlier line.
pub(crate) fn parse(body: &str, now: i64, one_table: bool) -> Result<Parsed, String> {
    let mut out: Vec<(String, Rows)> = Vec::new();
    for (n, line) in body.lines().enumerate() {
        let n = n + 1;
        let text = line.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        let parsed = match influxdb_line_protocol::parse_lines(text).next() {
            Some(Ok(p)) => p,
            Some(Err(e)) => return Err(format!("line {n}: {e}: {}", cut(text))),
            None => continue,
        };
        let m = match one_table {
            true => String::new(),
            false => parsed.series.measurement.as_str().to_string(),
        };
        let i = match out.iter().position(|(name, _)| *name == m) {
            Some(i) => i,
            None => {
                out.push((m.clone(), Rows::default()));
                out.len() - 1
            }
        };
        let rows = &mut out[i].1;
        for (k, v) in parsed.series.tag_set.iter().flatten() {
            let v = FieldValue::String(v.clone());
            let name = k.as_str();
            if name == TIME {
                return Err(format!("line {n}: {TIME} is the time column's name, not a tag's"));
            }
            if !rows.tags.iter().any(|t| t == name) {
                if rows.columns.iter().any(|(c, _)| c == name) {
                    return Err(format!("line {n}: {name} is a field on an earlier line and a tag here"));
                }
                rows.tags.push(name.to_string());
            }
            if !rows.column(name, &v).push(&v) {
                return Err(format!(
                    "line {n}: tag {name} is a field of another type on an earlier line"
                ));
            }
        }
        let fields = &parsed.field_set;
        for (i, (k, v)) in fields.iter().enumerate() {
            let name = k.as_str();
            // A field given twice in a line: the last one counts, as in InfluxDB.
            if fields[i + 1..].iter().any(|(later, _)| later.as_str() == name) {
                continue;
            }
            if name == TIME {
                return Err(format!(
                    "line {n}: {TIME} is the time column's name, not a field's or tag's"
                ));
            }
            if rows.tags.iter().any(|t| t == name) {
                return Err(format!("line {n}: {name} is a tag and a field"));
            }
            let c = rows.column(name, v);
            if !c.push(v) {
                let kind = c.kind();
                return Err(format!(
                    "line {n}: field {name} is {} here but {kind} on an earlier line: {}",
                    Column::for_value(v).kind(),
                    cut(text)
                ));
            }
        }
        rows.times.push(parsed.timestamp.unwrap_or(now));
        let len = rows.times.len();
        for (_, c) in &mut rows.columns {
            c.nulls(len.saturating_sub(c.len()));
        }
    }
    Ok(Parsed { measurements: out })
}

/// A line shortened for a message.
fn cut(line: &str) -> String {
    match line.char_indices().nth(120) {
        Some((i, _)) => format!("{}...", &line[..i]),
        None => line.to_string(),
    }
}

impl Parsed {
    /// The measurements, in order.
    pub(crate) fn measurements(&self) -> impl Iterator<Item = &str> {
        self.measurements.iter().map(|(m, _)| m.as_str())
    }

    /// Rows in all.
    pub(crate) fn rows(&self) -> usize {
        self.measurements.iter().map(|(_, r)| r.times.len()).sum()
    }
}

/// What one table got.
#[derive(Debug, serde::Serialize)]
pub(crate) struct Written {
    pub(crate) table: String,
    pub(crate) rows: usize,
    /// The snapshot the commit made.
    pub(crate) snapshot_id: Option<i64>,
    /// The batch id was committed before: nothing was written.
    pub(crate) duplicate: bool,
}

/// How a request's line protocol is written.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WriteOptions<'a> {
    /// The unit of the lines' timestamps (`precision`).
    pub(crate) unit: TimeUnit,
    /// Store times with digits below a µs truncated instead of refusing them.
    pub(crate) truncate_ns: bool,
    /// The request's `X-Varve-Batch-Id` (each table gets `<id>:<table>`).
    pub(crate) batch_id: Option<&'a str>,
}

/// Appends each measurement's rows to the table `table_of(measurement)`, creating it (time
/// column `time`, the tags as series key) when it does not exist.
///
/// Every table's rows are checked (and buffered, or uploaded when large) before the first commit, so a field
/// of the wrong type in any measurement writes nothing; then each table commits in turn (one
/// snapshot per table: Iceberg has no multi-table commit, so a storage failure between two
/// commits leaves the first tables written, which a retry with the same batch id skips). The
/// commits run as a task of `writes`, so a client that leaves or a server that stops does not
/// cut the body's commits in two; `hold` (the request's slot) is kept until they end. A table
/// that the body creates stays (empty) when a later table's rows are refused.
///
/// Errors: the lake's ([`varve::ErrorKind::SchemaMismatch`] for a field of another type than
/// its column), with the table named.
pub(crate) async fn write(
    lake: &Lake,
    writes: &tokio_util::task::TaskTracker,
    parsed: Parsed,
    table_of: impl Fn(&str) -> String,
    opts: WriteOptions<'_>,
    hold: impl Send + 'static,
) -> varve::Result<Vec<Written>> {
    let mut prepared: Vec<(String, usize, varve::TableAppender)> = Vec::new();
    for (m, rows) in parsed.measurements {
        let table = table_of(&m);
        let n = rows.times.len();
        match Box::pin(prepare(lake, &table, rows, &opts)).await {
            Ok(a) => prepared.push((table, n, a)),
            Err(e) => {
                for (_, _, a) in prepared {
                    a.abort().await;
                }
                return Err(e.context(format!("table {table}")));
            }
        }
    }
    let commits = async move {
        let _hold = hold;
        let mut out = Vec::new();
        let mut prepared = prepared.into_iter();
        while let Some((table, rows, a)) = prepared.next() {
            match a.commit().await {
                Ok(report) => out.push(Written {
                    table,
                    rows,
                    snapshot_id: report.snapshot_id,
                    duplicate: report.duplicate,
                }),
                Err(e) => {
                    for (_, _, rest) in prepared {
                        rest.abort().await;
                    }
                    return Err(e.context(format!("table {table}")));
                }
            }
        }
        Ok(out)
    };
    writes
        .spawn(commits)
        .await
        .map_err(|e| varve::Error::new(varve::ErrorKind::Internal, format!("a write's commits failed: {e}")))?
}

/// Opens an append to `table` (creating the table when missing) and pushes `rows` into it.
async fn prepare(lake: &Lake, table: &str, rows: Rows, opts: &WriteOptions<'_>) -> varve::Result<varve::TableAppender> {
    let tags = rows.tags.clone();
    let batch = match lake.describe(table).await {
        Ok(d) => match d.contract.time_column.clone() {
            Some(c) => rows.batch(&c).map_err(varve::Error::invalid)?,
            None => {
                return Err(varve::Error::invalid(format!(
                    "table {table} has no time column: line protocol writes go to time-series tables"
                )))
            }
        },
        Err(e) if e.kind() == varve::ErrorKind::NotFound => {
            let batch = rows.batch("time").map_err(varve::Error::invalid)?;
            let mut fields: Vec<Field> = batch.schema().fields().iter().map(|f| f.as_ref().clone()).collect();
            fields[0] = Field::new(
                "time",
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                false,
            );
            let contract = TableContract::time_series("time").with_series_key(tags);
            match lake.create_table(table, &Schema::new(fields), &contract).await {
                Ok(_) => {}
                Err(e) if e.kind() == varve::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
            batch
        }
        Err(e) => return Err(e),
    };
    let opts = AppendOptions {
        // One batch id per table, so that a retried body is a no-op for each of its tables.
        batch_id: opts.batch_id.map(|b| format!("{b}:{table}")),
        time: TimeOptions {
            unit: Some(opts.unit),
            truncate_ns: opts.truncate_ns,
            ..TimeOptions::default()
        },
        ..AppendOptions::default()
    };
    let mut a = lake.appender(table, opts).await?;
    if !a.is_duplicate() {
        a.push(batch).await?;
    }
    Ok(a)
}
