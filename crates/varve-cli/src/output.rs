//! Printing results: aligned tables, CSV, JSON, NDJSON and Parquet; `info` and `history`.

use std::fs::File;
use std::io::{IsTerminal, Write};
use std::path::Path;

use clap::ValueEnum;
use varve::arrow::array::RecordBatch;
use varve::arrow::util::pretty::pretty_format_batches;
use varve::{Error, Lake, QueryResult, Result, SnapshotInfo};

/// Result formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum OutputFormat {
    /// An aligned text table.
    Table,
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
    Error::storage(format!("cannot write the output: {e}"), false)
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
    let mut sink: Box<dyn Write> = match output {
        Some(p) => Box::new(File::create(p).map_err(|e| Error::invalid(format!("{}: {e}", p.display())))?),
        None => Box::new(std::io::stdout().lock()),
    };
    write_batches(&mut sink, &r.schema, &r.batches, format, output.is_some())?;
    sink.flush().map_err(io)
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
            if batches.iter().all(|b| b.num_rows() == 0) {
                let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
                writeln!(sink, "({}) 0 rows", names.join(", ")).map_err(io)?;
                return Ok(());
            }
            writeln!(sink, "{}", pretty_format_batches(batches)?).map_err(io)?;
        }
        OutputFormat::Csv => {
            let mut w = varve::arrow::csv::WriterBuilder::new().with_header(true).build(sink);
            if batches.is_empty() {
                let empty = RecordBatch::new_empty(schema.clone());
                w.write(&empty)?;
            }
            for b in batches {
                w.write(b)?;
            }
        }
        OutputFormat::Json => {
            let mut w = varve::arrow::json::ArrayWriter::new(sink);
            for b in batches {
                w.write(b)?;
            }
            w.finish()?;
        }
        OutputFormat::Ndjson => {
            let mut w = varve::arrow::json::LineDelimitedWriter::new(sink);
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
pub(crate) async fn print_info(lake: &Lake, table: &str, json: bool) -> Result<()> {
    let d = lake.describe(table).await?;
    let i = lake.info(table).await?;
    if json {
        let text = serde_json::to_string_pretty(&i).map_err(|e| varve::Error::internal(e.to_string()))?;
        println!("{text}");
        return Ok(());
    }
    println!("table        {}", d.ident);
    println!("location     {}", d.location);
    match &d.contract.time_column {
        Some(t) => {
            println!("time column  {t}");
            println!(
                "series key   {}",
                if d.contract.series_key.is_empty() {
                    "(none)".to_string()
                } else {
                    d.contract.series_key.join(", ")
                }
            );
            println!("partition    {}", d.contract.partitioning);
        }
        None => println!("kind         plain table (no time column)"),
    }
    println!("rows         {}", i.rows);
    println!("data files   {}", i.live_files);
    println!("bytes        {} ({})", i.bytes, human_bytes(i.bytes));
    println!("manifests    {}", i.manifests);
    println!("snapshots    {}", i.snapshots);
    println!("partitions   {}", i.partitions);
    println!(
        "time range   {} .. {}",
        time_text(i.min_time_us),
        time_text(i.max_time_us)
    );
    if let Some(s) = i.series {
        println!("series       {s}");
    }
    println!(
        "snapshot     {}",
        i.snapshot_id.map(|s| s.to_string()).unwrap_or_else(|| "(none)".into())
    );
    println!("columns");
    for f in d.schema.fields() {
        println!(
            "  {:<24} {}{}",
            f.name(),
            f.data_type(),
            if f.is_nullable() { "" } else { " not null" }
        );
    }
    Ok(())
}

/// Prints `varve history`.
pub(crate) fn print_history(h: &[SnapshotInfo]) -> Result<()> {
    println!(
        "{:<20} {:<24} {:<9} {:>10}  {:<20} note",
        "snapshot", "time (UTC)", "operation", "rows", "batch id"
    );
    for s in h {
        let t = chrono::DateTime::from_timestamp_millis(s.timestamp_ms)
            .map(|d| d.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
            .unwrap_or_default();
        println!(
            "{:<20} {:<24} {:<9} {:>10}  {:<20} {}{}",
            s.snapshot_id,
            t,
            s.operation,
            s.rows_added,
            s.batch_id.as_deref().unwrap_or("-"),
            s.note.as_deref().unwrap_or(""),
            if s.is_current { "  (current)" } else { "" }
        );
    }
    Ok(())
}
