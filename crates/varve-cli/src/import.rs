//! `varve import`: argument handling and progress around the engine's [`varve::import`].
//!
//! Decoding (formats, CSV quoting, NULL spellings, type inference, time parsing) is the engine's
//! `varve::input`, shared with the Python package; this module turns options into
//! [`varve::ImportOptions`], shows a progress bar on a terminal and prints the summary.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use varve::{Error, ImportOptions, Input, Lake, Result, TextOptions, TimeOptions};

/// Input formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum InputFormat {
    /// Comma-separated values, optionally gzip-compressed.
    Csv,
    /// Tab-separated values, optionally gzip-compressed.
    Tsv,
    /// Apache Parquet.
    Parquet,
    /// Newline-delimited JSON objects, optionally gzip-compressed.
    Ndjson,
}

#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// The table, as namespace.table or table; created when it does not exist.
    pub(crate) table: String,
    /// Input files; all go into one commit.
    #[arg(required = true)]
    pub(crate) files: Vec<PathBuf>,
    /// Input format; by default detected from the extension (.csv, .tsv, .parquet, .ndjson/.jsonl,
    /// each optionally .gz).
    #[arg(long, value_enum)]
    pub(crate) format: Option<InputFormat>,
    /// The time column of a new table. Give it twice to join a date column and a time-of-day
    /// column (joined with a space into a column named by --time-name).
    #[arg(long = "time-column", value_name = "COLUMN")]
    pub(crate) time_columns: Vec<String>,
    /// Name of the joined time column when --time-column is given twice.
    #[arg(long, default_value = "time")]
    pub(crate) time_name: String,
    /// Series key columns of a new table, comma-separated or repeated.
    #[arg(long, value_delimiter = ',')]
    pub(crate) series_key: Vec<String>,
    /// Partition granularity of a new table: hour, day, month or year. Default: chosen from the
    /// data, so that a partition holds about a million rows or a year.
    #[arg(long)]
    pub(crate) partition: Option<String>,
    /// Deduplication of a new table: none, or last-write-wins on (series key, time).
    #[arg(long, default_value = "none", value_name = "MODE")]
    pub(crate) dedup: String,
    /// Create a plain table (no time column) when the table does not exist.
    #[arg(long, conflicts_with_all = ["time_columns", "series_key"])]
    pub(crate) plain: bool,
    /// strftime format of string times, e.g. "%m/%d/%Y %H:%M". The hour 24:00 is read as the next
    /// day's 00:00. Default: RFC 3339 or YYYY-MM-DD[ HH:MM[:SS]].
    #[arg(long)]
    pub(crate) time_format: Option<String>,
    /// Time zone of times without one: an IANA name (America/New_York) or an offset (-05:00).
    #[arg(long, default_value = "UTC")]
    pub(crate) timezone: String,
    /// Unit of numeric times (epoch numbers, or elapsed numbers with --time-origin): s, ms, us, ns.
    #[arg(long)]
    pub(crate) time_unit: Option<String>,
    /// Times are elapsed durations ("0 days 00:00:01", "00:01:30", numbers in --time-unit) since
    /// this instant (RFC 3339, e.g. 2024-05-01T08:00:00Z).
    #[arg(long)]
    pub(crate) time_origin: Option<String>,
    /// Lines to skip before the header (e.g. a station header line).
    #[arg(long, default_value_t = 0)]
    pub(crate) skip_rows: usize,
    /// Text that means "no value" in CSV/TSV, besides an unquoted empty field (e.g. nil, NA).
    /// Repeatable. Quoted fields are always text: "" is the empty string.
    #[arg(long = "null-value", value_name = "TEXT")]
    pub(crate) null_values: Vec<String>,
    /// Field delimiter for CSV/TSV (one character; `\t` for tab).
    #[arg(long)]
    pub(crate) delimiter: Option<String>,
    /// Store times with digits below a microsecond truncated to µs (the table keeps µs); without
    /// it such an input is refused. The summary says how many were truncated and how many
    /// (series key, time) keys then hold more than one time.
    #[arg(long)]
    pub(crate) truncate_ns: bool,
    /// Read a repeated header name as <name>_2, <name>_3, ... instead of refusing the file.
    #[arg(long)]
    pub(crate) rename_duplicates: bool,
    /// Makes the import idempotent: a batch id committed before is skipped.
    #[arg(long)]
    pub(crate) batch_id: Option<String>,
    /// A note kept with the snapshot (shown by `varve history`).
    #[arg(long)]
    pub(crate) note: Option<String>,
    /// Do not print the summary line.
    #[arg(long, short = 'q')]
    pub(crate) quiet: bool,
    /// Do not compact the partitions this import wrote to, even when they hold more than
    /// varve.compact-min-files small files.
    #[arg(long)]
    pub(crate) no_maintain: bool,
    /// Refuse to create a table with a CSV/TSV column that would be text although at least 90%
    /// of its values are numbers or times (a missing-value spelling such as nil made it text);
    /// without it the import keeps the column as text and says so.
    #[arg(long)]
    pub(crate) strict_types: bool,
}

impl From<InputFormat> for varve::InputFormat {
    fn from(f: InputFormat) -> Self {
        match f {
            InputFormat::Csv => varve::InputFormat::Csv,
            InputFormat::Tsv => varve::InputFormat::Tsv,
            InputFormat::Parquet => varve::InputFormat::Parquet,
            InputFormat::Ndjson => varve::InputFormat::Ndjson,
        }
    }
}

fn delimiter(args: &ImportArgs) -> Result<Option<u8>> {
    match args.delimiter.as_deref() {
        None => Ok(None),
        Some("\\t") | Some("tab") => Ok(Some(b'\t')),
        Some(d) if d.len() == 1 => Ok(Some(d.as_bytes()[0])),
        Some(d) => Err(Error::invalid(format!("--delimiter {d:?}: expected one character"))),
    }
}

fn time_options(args: &ImportArgs) -> Result<TimeOptions> {
    let origin = match &args.time_origin {
        Some(o) => Some(
            chrono::DateTime::parse_from_rfc3339(o)
                .map_err(|_| {
                    Error::invalid(format!(
                        "--time-origin {o:?}: expected RFC 3339, e.g. 2024-05-01T08:00:00Z"
                    ))
                })?
                .timestamp_micros(),
        ),
        None => None,
    };
    Ok(TimeOptions {
        timezone: Some(args.timezone.clone()),
        format: args.time_format.clone(),
        unit: args.time_unit.as_deref().map(varve::parse_time_unit).transpose()?,
        origin,
        truncate_ns: args.truncate_ns,
    })
}

fn progress_bar(total: u64, quiet: bool) -> Option<ProgressBar> {
    if quiet || !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        return None;
    }
    let pb = ProgressBar::new(total);
    pb.set_style(
        ProgressStyle::with_template("{spinner} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    Some(pb)
}

fn plural(n: u64, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// Runs `varve import`.
pub(crate) async fn run(lake: &Lake, args: ImportArgs) -> Result<()> {
    let started = Instant::now();
    let text = TextOptions {
        delimiter: delimiter(&args)?,
        skip_rows: args.skip_rows,
        null_values: args.null_values.clone(),
        rename_duplicates: args.rename_duplicates,
    };
    let opts = ImportOptions {
        time_columns: args.time_columns.clone(),
        time_name: args.time_name.clone(),
        series_key: args.series_key.clone(),
        partition: args.partition.as_deref().map(str::parse).transpose()?,
        dedup: args.dedup.parse()?,
        plain: args.plain,
        time: time_options(&args)?,
        batch_id: args.batch_id.clone(),
        note: args.note.clone(),
        no_maintain: args.no_maintain,
        strict_types: args.strict_types,
    };
    let inputs: Vec<Input> = args
        .files
        .iter()
        .map(|f| Input::open(f, args.format.map(Into::into), &text))
        .collect::<Result<_>>()?;
    let pb = progress_bar(inputs.iter().map(Input::len).sum(), args.quiet);
    let progress: Option<varve::input::Progress> = pb.clone().map(|pb| {
        let f: varve::input::Progress = Arc::new(move |n| pb.inc(n));
        f
    });
    let report = varve::import(lake, &args.table, &inputs, &opts, progress).await;
    if let Some(pb) = &pb {
        pb.finish_and_clear();
    }
    let report = report?;
    if let Some(note) = &report.contract_note {
        eprintln!("note: {note}");
    }
    for (column, m) in &report.mostly_typed_text {
        let fix: Vec<String> = m.spellings.iter().map(|(s, _)| format!("--null-value {s:?}")).collect();
        eprintln!(
            "warning: {}; give {} to read them as NULL (the column stays text in this table: re-import to change it), \
             or --strict-types to refuse such columns",
            m.describe(column),
            fix.join(" ")
        );
    }
    if let Some(note) = &report.partition_note {
        if !args.quiet {
            eprintln!("note: {note}");
        }
    }
    if args.quiet {
        return Ok(());
    }
    let a = &report.append;
    let table = varve::TableIdent::parse(&args.table)?;
    if a.duplicate {
        crate::output::line(&format!(
            "batch {} was imported into {table} before; nothing written",
            args.batch_id.as_deref().unwrap_or("")
        ))?;
        return Ok(());
    }
    let secs = started.elapsed().as_secs_f64();
    let mut line = format!(
        "imported {} from {} into {table} in {secs:.2} s ({:.0} rows/s): {}, {}, snapshot {}",
        plural(a.rows, "row"),
        plural(args.files.len() as u64, "file"),
        a.rows as f64 / secs.max(1e-9),
        plural(a.files, "data file"),
        crate::output::human_bytes(a.bytes),
        a.snapshot_id.map(|s| s.to_string()).unwrap_or_else(|| "-".into()),
    );
    if !a.added_columns.is_empty() {
        line.push_str(&format!("; new columns: {}", a.added_columns.join(", ")));
    }
    if a.duplicate_rows_dropped > 0 || a.rows_replaced > 0 {
        line.push_str(&format!(
            "; last-write-wins: {} superseded by a later row of the same key, {} stored replaced ({} rewritten)",
            plural(a.duplicate_rows_dropped, "input row"),
            plural(a.rows_replaced, "row"),
            plural(a.files_rewritten, "data file")
        ));
    }
    if args.truncate_ns {
        line.push_str(&format!(
            "; {} truncated to microseconds, {} now holding more than one time",
            plural(a.truncated_times, "time"),
            plural(report.collided_keys, "key")
        ));
    }
    crate::output::line(&line)
}
