//! `varve import`: files into a table, streamed with bounded memory in one commit.
//!
//! CSV/TSV are read as text and converted by the engine's checked casts, so a value that does not
//! fit its column is reported with its file, column, row and text instead of becoming NULL. Column
//! types of a new table are inferred from the first [`INFER_ROWS`] rows.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use varve::arrow::array::{Array, ArrayRef, RecordBatch, StringArray};
use varve::arrow::compute::cast;
use varve::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use varve::{AppendOptions, Error, Lake, Partitioning, Result, TableContract, TimeOptions};

/// Rows read to infer the column types of a new table.
const INFER_ROWS: usize = 100_000;
/// Rows per batch handed to the engine.
const BATCH_ROWS: usize = 65_536;

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
    /// Partition granularity of a new table: hour, day or month.
    #[arg(long, default_value = "day")]
    pub(crate) partition: String,
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
    /// Text that means "no value" in CSV/TSV, besides an empty field (e.g. nil, NA). Repeatable.
    #[arg(long = "null-value", value_name = "TEXT")]
    pub(crate) null_values: Vec<String>,
    /// Field delimiter for CSV/TSV (one character; `\t` for tab).
    #[arg(long)]
    pub(crate) delimiter: Option<String>,
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
}

fn detect_format(path: &Path, given: Option<InputFormat>) -> Result<InputFormat> {
    if let Some(f) = given {
        return Ok(f);
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    if name.ends_with(".csv") || name.ends_with(".txt") {
        Ok(InputFormat::Csv)
    } else if name.ends_with(".tsv") || name.ends_with(".tab") {
        Ok(InputFormat::Tsv)
    } else if name.ends_with(".parquet") || name.ends_with(".pq") {
        Ok(InputFormat::Parquet)
    } else if name.ends_with(".ndjson") || name.ends_with(".jsonl") || name.ends_with(".json") {
        Ok(InputFormat::Ndjson)
    } else {
        Err(Error::invalid(format!(
            "{}: unknown file type; give --format csv|tsv|parquet|ndjson",
            path.display()
        )))
    }
}

/// One input file, opened for reading (decompressed when gzip).
fn open_text(path: &Path, progress: Option<&ProgressBar>) -> Result<BufReader<Box<dyn Read + Send>>> {
    let file = File::open(path).map_err(|e| io_error(path, e))?;
    let mut raw: Box<dyn Read + Send> = match progress {
        Some(pb) => Box::new(pb.wrap_read(file)),
        None => Box::new(file),
    };
    let mut magic = [0u8; 2];
    let n = read_fully(&mut raw, &mut magic).map_err(|e| io_error(path, e))?;
    let head = std::io::Cursor::new(magic[..n].to_vec()).chain(raw);
    let reader: Box<dyn Read + Send> = if n == 2 && magic == [0x1f, 0x8b] {
        Box::new(flate2::read::MultiGzDecoder::new(head))
    } else {
        Box::new(head)
    };
    Ok(BufReader::with_capacity(1 << 20, reader))
}

fn read_fully(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

fn io_error(path: &Path, e: std::io::Error) -> Error {
    let what = match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_string(),
        std::io::ErrorKind::UnexpectedEof => "the file is truncated (unexpected end of input)".to_string(),
        _ => e.to_string(),
    };
    let err = Error::invalid(format!("{}: {what}", path.display()));
    if e.kind() == std::io::ErrorKind::NotFound {
        Error::new(varve::ErrorKind::NotFound, err.message())
    } else {
        err
    }
}

fn skip_lines(r: &mut impl BufRead, n: usize, path: &Path) -> Result<()> {
    let mut line = Vec::new();
    for _ in 0..n {
        line.clear();
        r.read_until(b'\n', &mut line).map_err(|e| io_error(path, e))?;
    }
    Ok(())
}

fn delimiter(args: &ImportArgs, fmt: InputFormat) -> Result<u8> {
    match args.delimiter.as_deref() {
        None => Ok(if fmt == InputFormat::Tsv { b'\t' } else { b',' }),
        Some("\\t") | Some("tab") => Ok(b'\t'),
        Some(d) if d.len() == 1 => Ok(d.as_bytes()[0]),
        Some(d) => Err(Error::invalid(format!("--delimiter {d:?}: expected one character"))),
    }
}

/// The pattern of null fields: empty, or one of `--null-value`.
fn null_regex(args: &ImportArgs) -> Result<Option<regex::Regex>> {
    if args.null_values.is_empty() {
        return Ok(None);
    }
    let alternatives: Vec<String> = args.null_values.iter().map(|v| regex::escape(v)).collect();
    regex::Regex::new(&format!("^(|{})$", alternatives.join("|")))
        .map(Some)
        .map_err(|e| Error::invalid(format!("--null-value: {e}")))
}

/// Column names as the file has them; empty names become `column_<n>` (1-based position).
fn fix_names(schema: &Schema) -> Schema {
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let name = f.name().trim();
            let name = if name.is_empty() {
                format!("column_{}", i + 1)
            } else {
                name.to_string()
            };
            f.as_ref().clone().with_name(name)
        })
        .collect();
    Schema::new(fields)
}

/// The typed schema of a text file inferred from its first rows, and the all-text schema it is
/// read with.
fn infer_text(path: &Path, args: &ImportArgs, fmt: InputFormat, rows: usize) -> Result<(Schema, SchemaRef)> {
    let mut r = open_text(path, None)?;
    skip_lines(&mut r, args.skip_rows, path)?;
    let format = varve::arrow::csv::reader::Format::default()
        .with_header(true)
        .with_delimiter(delimiter(args, fmt)?);
    let format = match null_regex(args)? {
        Some(re) => format.with_null_regex(re),
        None => format,
    };
    let (schema, rows) = format
        .infer_schema(&mut r, Some(rows))
        .map_err(|e| Error::invalid(format!("{}: {}", path.display(), clean(&e.to_string()))))?;
    if schema.fields().is_empty() || (rows == 0 && schema.fields().len() <= 1 && schema.field(0).name().is_empty()) {
        return Err(Error::invalid(format!("{}: the file is empty", path.display())));
    }
    let typed = fix_names(&schema);
    let text = Schema::new(
        typed
            .fields()
            .iter()
            .map(|f| Field::new(f.name(), DataType::Utf8, true))
            .collect::<Vec<_>>(),
    );
    Ok((typed, Arc::new(text)))
}

fn clean(s: &str) -> String {
    if s.contains("unequal lengths between records") {
        return format!(
            "{} (is there a line before the column names? skip it with --skip-rows N)",
            s.replace("Csv error: ", "")
                .replace("records", "fields")
                .replace("fields on CSV file", "records")
        );
    }
    s.replace("Csv error: ", "")
        .replace("Parser error: ", "")
        .replace("Json error: ", "")
        .replace(
            "incomplete deflate stream",
            "the file is truncated (unexpected end of input)",
        )
}

/// Batches of one input file.
type Batches = Box<dyn Iterator<Item = Result<RecordBatch>> + Send>;

fn read_text(
    path: &Path,
    args: &ImportArgs,
    fmt: InputFormat,
    text: SchemaRef,
    pb: Option<&ProgressBar>,
) -> Result<Batches> {
    let mut r = open_text(path, pb)?;
    skip_lines(&mut r, args.skip_rows, path)?;
    let mut builder = varve::arrow::csv::ReaderBuilder::new(text)
        .with_header(true)
        .with_delimiter(delimiter(args, fmt)?)
        .with_batch_size(BATCH_ROWS);
    if let Some(re) = null_regex(args)? {
        builder = builder.with_null_regex(re);
    }
    let reader = builder
        .build(r)
        .map_err(|e| Error::invalid(format!("{}: {}", path.display(), clean(&e.to_string()))))?;
    let p = path.to_path_buf();
    Ok(Box::new(reader.map(move |b| b.map_err(|e| read_error(&p, e)))))
}

fn read_error(path: &Path, e: varve::arrow::error::ArrowError) -> Error {
    let text = clean(&e.to_string());
    if text.contains("end of file") || text.contains("UnexpectedEof") || text.contains("the file is truncated") {
        Error::invalid(format!(
            "{}: the file is truncated (unexpected end of input)",
            path.display()
        ))
    } else {
        Error::invalid(format!("{}: {text}", path.display()))
    }
}

fn infer_json(path: &Path) -> Result<Schema> {
    let mut r = open_text(path, None)?;
    let (schema, _) = varve::arrow::json::reader::infer_json_schema(&mut r, Some(INFER_ROWS))
        .map_err(|e| Error::invalid(format!("{}: {}", path.display(), clean(&e.to_string()))))?;
    if schema.fields().is_empty() {
        return Err(Error::invalid(format!("{}: the file is empty", path.display())));
    }
    Ok(schema)
}

fn read_json(path: &Path, schema: SchemaRef, pb: Option<&ProgressBar>) -> Result<Batches> {
    let r = open_text(path, pb)?;
    // Strict: a key the inferred schema lacks (first seen after the inferred rows) is an error,
    // never silently dropped.
    let reader = varve::arrow::json::ReaderBuilder::new(schema)
        .with_strict_mode(true)
        .with_batch_size(BATCH_ROWS)
        .build(r)
        .map_err(|e| Error::invalid(format!("{}: {}", path.display(), clean(&e.to_string()))))?;
    let p = path.to_path_buf();
    Ok(Box::new(reader.map(move |b| b.map_err(|e| read_error(&p, e)))))
}

fn read_parquet(path: &Path) -> Result<(Schema, Batches)> {
    let file = File::open(path).map_err(|e| io_error(path, e))?;
    if file.metadata().map(|m| m.len()).unwrap_or(0) == 0 {
        return Err(Error::invalid(format!("{}: the file is empty", path.display())));
    }
    let builder = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|e| Error::invalid(format!("{}: not a readable Parquet file ({e})", path.display())))?;
    let schema = builder.schema().as_ref().clone();
    let reader = builder
        .with_batch_size(BATCH_ROWS)
        .build()
        .map_err(|e| Error::invalid(format!("{}: {e}", path.display())))?;
    let p = path.to_path_buf();
    Ok((schema, Box::new(reader.map(move |b| b.map_err(|e| read_error(&p, e))))))
}

/// Joins several time columns into one string column named `name` (e.g. a date and a time of day).
fn join_time_columns(batch: &RecordBatch, parts: &[String], name: &str) -> Result<RecordBatch> {
    let mut cols: Vec<ArrayRef> = Vec::new();
    for p in parts {
        let c = batch
            .column_by_name(p)
            .ok_or_else(|| Error::invalid(format!("time column {p:?} is not in the input")))?;
        cols.push(cast(c, &DataType::Utf8)?);
    }
    let n = batch.num_rows();
    let joined: StringArray = (0..n)
        .map(|i| {
            if cols.iter().any(|c| c.is_null(i)) {
                return None;
            }
            let vals: Vec<&str> = cols
                .iter()
                .map(|c| {
                    c.as_any()
                        .downcast_ref::<StringArray>()
                        .map(|s| s.value(i))
                        .unwrap_or("")
                })
                .collect();
            Some(vals.join(" "))
        })
        .collect();
    let mut fields: Vec<Field> = batch.schema().fields().iter().map(|f| f.as_ref().clone()).collect();
    let mut arrays = batch.columns().to_vec();
    if fields.iter().any(|f| f.name() == name) {
        return Err(Error::invalid(format!(
            "--time-name {name:?}: the input has a column of that name already"
        )));
    }
    fields.insert(0, Field::new(name, DataType::Utf8, true));
    arrays.insert(0, Arc::new(joined));
    Ok(RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)?)
}

fn guess_time_column(schema: &Schema) -> Option<String> {
    if let Some(f) = schema.fields().iter().find(|f| {
        matches!(
            f.data_type(),
            DataType::Timestamp(..) | DataType::Date32 | DataType::Date64
        )
    }) {
        return Some(f.name().clone());
    }
    const NAMES: [&str; 7] = ["time", "timestamp", "ts", "datetime", "date", "event_time", "t"];
    for n in NAMES {
        if let Some(f) = schema.fields().iter().find(|f| f.name().eq_ignore_ascii_case(n)) {
            return Some(f.name().clone());
        }
    }
    schema
        .fields()
        .iter()
        .find(|f| {
            let l = f.name().to_ascii_lowercase();
            l.starts_with("time") || l.starts_with("date")
        })
        .map(|f| f.name().clone())
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
    })
}

/// Runs `varve import`.
pub(crate) async fn run(lake: &Lake, args: ImportArgs) -> Result<()> {
    let started = Instant::now();
    let time = time_options(&args)?;
    let formats: Vec<InputFormat> = args
        .files
        .iter()
        .map(|f| detect_format(f, args.format))
        .collect::<Result<_>>()?;
    for f in &args.files {
        if !f.exists() {
            return Err(Error::new(
                varve::ErrorKind::NotFound,
                format!("{}: no such file", f.display()),
            ));
        }
    }
    let joined = args.time_columns.len() > 1;
    let exists = lake.table_exists(&args.table).await?;
    if exists {
        // Contract options only shape a new table: say so when they differ from the table's.
        let d = lake.describe(&args.table).await?;
        let time_differs = args.time_columns.len() == 1 && d.contract.time_column.as_ref() != args.time_columns.first();
        let key_differs = !args.series_key.is_empty() && args.series_key != d.contract.series_key;
        if time_differs || key_differs || (args.plain && d.contract.time_column.is_some()) {
            eprintln!(
                "note: {} exists with time column {} and series key [{}]; --time-column, --series-key, \
                 --partition and --plain only apply when a table is created",
                d.ident,
                d.contract.time_column.as_deref().unwrap_or("(none)"),
                d.contract.series_key.join(", ")
            );
        }
    }
    let mut created = false;
    if !exists {
        // Create the table from the first file's columns.
        let typed = match formats[0] {
            InputFormat::Csv | InputFormat::Tsv => infer_text(&args.files[0], &args, formats[0], INFER_ROWS)?.0,
            InputFormat::Ndjson => infer_json(&args.files[0])?,
            InputFormat::Parquet => read_parquet(&args.files[0])?.0,
        };
        let mut typed = typed;
        if joined {
            let mut fields: Vec<Field> = typed.fields().iter().map(|f| f.as_ref().clone()).collect();
            fields.insert(0, Field::new(&args.time_name, DataType::Utf8, true));
            typed = Schema::new(fields);
        }
        let contract = if args.plain {
            TableContract::default()
        } else {
            let time_col = if joined {
                args.time_name.clone()
            } else if let Some(t) = args.time_columns.first() {
                t.clone()
            } else {
                guess_time_column(&typed).ok_or_else(|| {
                    Error::invalid(format!(
                        "{}: no time column found; give --time-column NAME (or --plain for a table without one)",
                        args.files[0].display()
                    ))
                })?
            };
            TableContract::time_series(time_col)
                .with_series_key(args.series_key.clone())
                .with_partitioning(args.partition.parse::<Partitioning>()?)
        };
        match lake.create_table(&args.table, &typed, &contract).await {
            Ok(_) => created = true,
            // Another import created it meanwhile: append to it.
            Err(e) if e.kind() == varve::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e.context(args.files[0].display())),
        }
    }
    let result = append_files(lake, &args, &formats, time).await;
    match result {
        Ok(report) => {
            if !args.quiet {
                let secs = started.elapsed().as_secs_f64();
                if report.duplicate {
                    println!(
                        "batch {} was imported into {} before; nothing written",
                        args.batch_id.as_deref().unwrap_or(""),
                        varve::TableIdent::parse(&args.table)?
                    );
                } else {
                    println!(
                        "imported {} row{} from {} file{} into {} in {:.2} s ({:.0} rows/s): {} data file{}, {}, snapshot {}{}",
                        report.rows,
                        if report.rows == 1 { "" } else { "s" },
                        args.files.len(),
                        if args.files.len() == 1 { "" } else { "s" },
                        varve::TableIdent::parse(&args.table)?,
                        secs,
                        report.rows as f64 / secs.max(1e-9),
                        report.files,
                        if report.files == 1 { "" } else { "s" },
                        crate::output::human_bytes(report.bytes),
                        report.snapshot_id.map(|s| s.to_string()).unwrap_or_else(|| "-".into()),
                        if report.added_columns.is_empty() {
                            String::new()
                        } else {
                            format!("; new columns: {}", report.added_columns.join(", "))
                        }
                    );
                }
            }
            Ok(())
        }
        Err(e) => {
            // The table was made for this import: leave nothing behind, unless another writer has
            // committed to it meanwhile.
            if created && lake.describe(&args.table).await.is_ok_and(|d| d.snapshot_id.is_none()) {
                let _ = lake.drop_table(&args.table).await;
            }
            Err(e)
        }
    }
}

async fn append_files(
    lake: &Lake,
    args: &ImportArgs,
    formats: &[InputFormat],
    time: TimeOptions,
) -> Result<varve::AppendReport> {
    let opts = AppendOptions {
        batch_id: args.batch_id.clone(),
        note: args.note.clone(),
        time,
        no_maintain: args.no_maintain,
    };
    let mut appender = lake.appender(&args.table, opts).await?;
    if appender.is_duplicate() {
        return appender.commit().await;
    }
    let total: u64 = args
        .files
        .iter()
        .map(|f| f.metadata().map(|m| m.len()).unwrap_or(0))
        .sum();
    let pb = if std::io::IsTerminal::is_terminal(&std::io::stderr()) && !args.quiet {
        let pb = ProgressBar::new(total);
        pb.set_style(
            ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        Some(pb)
    } else {
        None
    };
    if let Err(e) = push_files(&mut appender, args, formats, pb.as_ref()).await {
        // Every failure path deletes what this import uploaded.
        appender.abort().await;
        return Err(e);
    }
    if let Some(pb) = &pb {
        pb.finish_and_clear();
    }
    appender.commit().await
}

/// Reads every input file into the appender.
async fn push_files(
    appender: &mut varve::TableAppender,
    args: &ImportArgs,
    formats: &[InputFormat],
    pb: Option<&ProgressBar>,
) -> Result<()> {
    for (path, fmt) in args.files.iter().zip(formats) {
        if let Some(pb) = pb {
            pb.set_message(
                path.file_name()
                    .map(|n| n.to_string_lossy().to_string())
                    .unwrap_or_default(),
            );
        }
        appender.start_input();
        let batches: Batches = match fmt {
            InputFormat::Csv | InputFormat::Tsv => {
                // Only the header is needed here: values are read as text and cast to the table's types.
                let (_, text) = infer_text(path, args, *fmt, 0)?;
                read_text(path, args, *fmt, text, pb)?
            }
            InputFormat::Ndjson => read_json(path, Arc::new(infer_json(path)?), pb)?,
            InputFormat::Parquet => read_parquet(path)?.1,
        };
        let mut rows = 0usize;
        for b in batches {
            let mut b = b?;
            if args.time_columns.len() > 1 {
                b = join_time_columns(&b, &args.time_columns, &args.time_name)
                    .map_err(|e| e.context(path.display()))?;
            }
            rows += b.num_rows();
            appender.push(b).await.map_err(|e| e.context(path.display()))?;
        }
        if rows == 0 {
            return Err(Error::invalid(format!("{}: the file has no rows", path.display())));
        }
    }
    Ok(())
}
