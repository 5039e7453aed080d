//! Printing results: aligned tables, CSV, JSON, NDJSON and Parquet; `info` and `history`.
//!
//! Everything goes through writers that return errors (never `println!`, which panics): a closed
//! standard output (`varve sql ... | head -1`) comes back as an error whose source is the
//! `BrokenPipe` I/O error, and `main` ends such a command quietly with exit 0, as `ls | head` does.

use std::fs::File;
use std::io::{IsTerminal, Write};
use std::path::Path;

use std::sync::Arc;

use clap::ValueEnum;
use varve::arrow::array::{
    ArrayRef, BooleanArray, Int64Array, RecordBatch, StringArray, TimestampMillisecondArray, UInt64Array,
};
use varve::arrow::datatypes::{Field, Schema};
use varve::{Error, Lake, QueryResult, Result, SnapshotInfo};

/// Result formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum OutputFormat {
    /// An aligned text table that fits the terminal (long values cut, middle columns left out,
    /// as needed).
    Table,
    /// An aligned text table with every value and column whole, however wide.
    Wide,
    /// CSV with a header line.
    Csv,
    /// One JSON array of objects.
    Json,
    /// One JSON object per line.
    Ndjson,
    /// Apache Parquet (needs --output).
    Parquet,
}

fn io(e: std::io::Error) -> Error {
    Error::storage(format!("cannot write the output: {e}"), false).with_source(e)
}

/// Prints one line to standard output.
///
/// Errors: the write failed (a closed pipe: see the module notes).
pub(crate) fn line(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}").and_then(|_| out.flush()).map_err(io)
}

/// A writer that remembers the I/O error it last returned, so that an error a library reports
/// as text (Arrow's CSV writer says "Csv error: Broken pipe") is still known by its type.
struct Watched<W> {
    inner: W,
    failed: Option<std::io::ErrorKind>,
}

impl<W: Write> Write for Watched<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.inner.write(buf).inspect_err(|e| self.failed = Some(e.kind()))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush().inspect_err(|e| self.failed = Some(e.kind()))
    }
}

/// Writes a result in `format` (default: a table on a terminal, CSV otherwise) to `output` or stdout.
pub(crate) fn write_result(r: &QueryResult, format: Option<OutputFormat>, output: Option<&Path>) -> Result<()> {
    let to_terminal = output.is_none() && std::io::stdout().is_terminal();
    let format = format.unwrap_or(
        if to_terminal || output.is_none() && r.schema.fields().len() == 2 && is_explain(r) {
            OutputFormat::Table
        } else if output.is_some_and(|p| p.extension().is_some_and(|e| e == "parquet")) {
            OutputFormat::Parquet
        } else {
            OutputFormat::Csv
        },
    );
    let sink: Box<dyn Write> = match output {
        Some(p) => {
            Box::new(File::create(p).map_err(|e| Error::invalid(format!("{}: {e}", p.display())).with_source(e))?)
        }
        None => Box::new(std::io::stdout().lock()),
    };
    let mut sink = Watched {
        inner: sink,
        failed: None,
    };
    let written = write_batches(&mut sink, &r.schema, &r.batches, format, output.is_some())
        .and_then(|_| sink.flush().map_err(io));
    match (written, sink.failed) {
        (Err(e), Some(kind)) if !e.has_io_kind(kind) => Err(io(std::io::Error::from(kind))),
        (r, _) => r,
    }
}

fn is_explain(r: &QueryResult) -> bool {
    r.schema.field(0).name() == "plan_type"
}

pub(crate) fn write_batches(
    sink: &mut dyn Write,
    schema: &varve::arrow::datatypes::SchemaRef,
    batches: &[RecordBatch],
    format: OutputFormat,
    to_file: bool,
) -> Result<()> {
    match format {
        OutputFormat::Table => {
            let explain = schema.fields().len() == 2 && schema.field(0).name() == "plan_type";
            let text = crate::table::render(schema, batches, crate::table::available_width(), explain)?;
            writeln!(sink, "{text}").map_err(io)?;
        }
        OutputFormat::Wide => {
            let text = crate::table::render(schema, batches, None, true)?;
            writeln!(sink, "{text}").map_err(io)?;
        }
        OutputFormat::Csv => {
            let mut w = varve::arrow::csv::WriterBuilder::new().with_header(true).build(sink);
            if batches.is_empty() {
                let empty = RecordBatch::new_empty(schema.clone());
                w.write(&varve::nested_as_text(&empty)?)?;
            }
            for b in batches {
                w.write(&varve::nested_as_text(b)?)?;
            }
        }
        OutputFormat::Json => {
            // NULL members are kept (`"v": null`), so that every row has the same keys.
            let mut w = varve::arrow::json::WriterBuilder::new()
                .with_explicit_nulls(true)
                .build::<_, varve::arrow::json::writer::JsonArray>(&mut *sink);
            for b in batches {
                w.write(b)?;
            }
            w.finish()?;
            drop(w);
            // A JSON document on a terminal or in a file ends with a newline, as text does.
            writeln!(sink).map_err(io)?;
        }
        OutputFormat::Ndjson => {
            let mut w = varve::arrow::json::WriterBuilder::new()
                .with_explicit_nulls(true)
                .build::<_, varve::arrow::json::writer::LineDelimited>(sink);
            for b in batches {
                w.write(b)?;
            }
            w.finish()?;
        }
        OutputFormat::Parquet => {
            if !to_file {
                return Err(Error::invalid("--format parquet needs --output FILE"));
            }
            let mut buf = Vec::new();
            let mut w = parquet::arrow::ArrowWriter::try_new(&mut buf, schema.clone(), None)
                .map_err(|e| Error::invalid(e.to_string()))?;
            for b in batches {
                w.write(b).map_err(|e| Error::invalid(e.to_string()))?;
            }
            w.close().map_err(|e| Error::invalid(e.to_string()))?;
            sink.write_all(&buf).map_err(io)?;
        }
    }
    Ok(())
}

/// `1.2 MiB`.
pub(crate) fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

fn time_text(us: Option<i64>) -> String {
    us.and_then(chrono::DateTime::from_timestamp_micros)
        .map(|d| d.format("%Y-%m-%dT%H:%M:%S%.fZ").to_string())
        .unwrap_or_else(|| "-".into())
}

/// Prints `varve info`.
///
/// The text by default; JSON is one object (the keys of [`varve::TableInfo`]); the other formats
/// get one row with those keys as columns (the properties as one JSON text).
pub(crate) async fn print_info(
    lake: &Lake,
    table: &str,
    format: Option<OutputFormat>,
    output: Option<&Path>,
) -> Result<()> {
    let d = lake.describe(table).await?;
    let i = lake.info(table).await?;
    if format == Some(OutputFormat::Json) {
        let text = serde_json::to_string_pretty(&i).map_err(|e| varve::Error::internal(e.to_string()))? + "\n";
        return match output {
            Some(p) => std::fs::write(p, text).map_err(|e| Error::invalid(format!("{}: {e}", p.display()))),
            None => line(text.trim_end()),
        };
    }
    if format.is_some() || output.is_some() {
        return write_result(&info_result(&i)?, format, output);
    }
    let mut out = String::new();
    macro_rules! outln {
        ($($t:tt)*) => {{
            out.push_str(&format!($($t)*));
            out.push('\n');
        }};
    }
    outln!("table        {}", d.ident);
    outln!("location     {}", d.location);
    match &d.contract.time_column {
        Some(t) => {
            outln!("time column  {t}");
            outln!(
                "series key   {}",
                if d.contract.series_key.is_empty() {
                    "(none)".to_string()
                } else {
                    d.contract.series_key.join(", ")
                }
            );
            outln!("partition    {}", d.contract.partitioning);
            if d.contract.dedup != varve::Dedup::None {
                outln!("dedup        {}", d.contract.dedup);
            }
        }
        None => outln!("kind         plain table (no time column)"),
    }
    outln!("rows         {}", i.rows);
    if let Some(n) = i.rows_past_retention.filter(|n| *n > 0) {
        outln!(
            "past retention {n} rows: Varve's queries hide them; other engines read them until `varve maintain` removes them"
        );
    }
    if let Some(w) = &i.retention_warning {
        outln!("warning      {w}");
    }
    outln!("data files   {}", i.live_files);
    outln!("bytes        {} ({})", i.bytes, human_bytes(i.bytes));
    outln!("manifests    {}", i.manifests);
    outln!("snapshots    {}", i.snapshots);
    outln!("partitions   {}", i.partitions);
    outln!(
        "time range   {} .. {}",
        time_text(i.min_time_us),
        time_text(i.max_time_us)
    );
    if let Some(s) = i.series {
        outln!("series       {s}");
    }
    outln!(
        "snapshot     {}",
        i.snapshot_id.map(|s| s.to_string()).unwrap_or_else(|| "(none)".into())
    );
    outln!("columns");
    for f in d.schema.fields() {
        outln!(
            "  {:<24} {}{}",
            f.name(),
            f.data_type(),
            if f.is_nullable() { "" } else { " not null" }
        );
    }
    line(out.trim_end_matches('\n'))
}

/// Prints `varve history`: an aligned table by default (`current` marks the current snapshot),
/// or `format`.
pub(crate) fn print_history(h: &[SnapshotInfo], format: Option<OutputFormat>, output: Option<&Path>) -> Result<()> {
    let text_table = matches!(
        format.unwrap_or(OutputFormat::Table),
        OutputFormat::Table | OutputFormat::Wide
    );
    let current: ArrayRef = if text_table {
        Arc::new(StringArray::from_iter_values(h.iter().map(|s| {
            if s.is_current {
                "(current)"
            } else {
                ""
            }
        })))
    } else {
        Arc::new(BooleanArray::from_iter(h.iter().map(|s| Some(s.is_current))))
    };
    let columns: Vec<(&str, ArrayRef)> = vec![
        (
            "snapshot",
            Arc::new(Int64Array::from_iter_values(h.iter().map(|s| s.snapshot_id))),
        ),
        (
            "time",
            Arc::new(
                TimestampMillisecondArray::from_iter_values(h.iter().map(|s| s.timestamp_ms)).with_timezone("UTC"),
            ),
        ),
        (
            "operation",
            Arc::new(StringArray::from_iter_values(h.iter().map(|s| s.operation.as_str()))),
        ),
        (
            "rows",
            Arc::new(UInt64Array::from_iter_values(h.iter().map(|s| s.rows_added))),
        ),
        (
            "files",
            Arc::new(UInt64Array::from_iter_values(h.iter().map(|s| s.files_added))),
        ),
        (
            "batch_id",
            Arc::new(StringArray::from_iter(h.iter().map(|s| s.batch_id.as_deref()))),
        ),
        (
            "note",
            Arc::new(StringArray::from_iter(h.iter().map(|s| s.note.as_deref()))),
        ),
        ("current", current),
    ];
    write_result(
        &columns_result(columns)?,
        Some(format.unwrap_or(OutputFormat::Table)),
        output,
    )
}

/// `varve ls` as a result: one column `table`.
pub(crate) fn tables_result(names: &[String]) -> Result<QueryResult> {
    columns_result(vec![("table", Arc::new(StringArray::from_iter_values(names.iter())))])
}

/// `varve info` as a one-row result with the keys of [`varve::TableInfo`] as columns.
fn info_result(i: &varve::TableInfo) -> Result<QueryResult> {
    let properties = serde_json::to_string(&i.properties).map_err(|e| Error::internal(e.to_string()))?;
    let u = |v: u64| -> ArrayRef { Arc::new(UInt64Array::from(vec![v])) };
    let text = |v: Option<&str>| -> ArrayRef { Arc::new(StringArray::from(vec![v])) };
    columns_result(vec![
        ("table", text(Some(&i.table))),
        ("rows", u(i.rows)),
        (
            "rows_past_retention",
            Arc::new(UInt64Array::from(vec![i.rows_past_retention])),
        ),
        ("live_files", u(i.live_files)),
        ("delete_files", u(i.delete_files)),
        ("bytes", u(i.bytes)),
        ("manifests", u(i.manifests)),
        ("snapshots", u(i.snapshots)),
        ("partitions", u(i.partitions)),
        ("min_time", text(i.min_time.as_deref())),
        ("max_time", text(i.max_time.as_deref())),
        ("series", Arc::new(UInt64Array::from(vec![i.series]))),
        ("snapshot_id", Arc::new(Int64Array::from(vec![i.snapshot_id]))),
        ("properties", text(Some(&properties))),
    ])
}

fn columns_result(columns: Vec<(&str, ArrayRef)>) -> Result<QueryResult> {
    let schema = Arc::new(Schema::new(
        columns
            .iter()
            .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
            .collect::<Vec<_>>(),
    ));
    let batch = RecordBatch::try_new(schema.clone(), columns.into_iter().map(|(_, a)| a).collect())?;
    Ok(QueryResult {
        schema,
        batches: vec![batch],
    })
}
