//! Import: inputs (files, bodies) into a table, in one commit, through the [`Lake`] facade.
//!
//! Owns the workflow every way of importing shares (the CLI's `varve import`, the Python package's
//! `Lake.import_files`, later the HTTP server): create the table from the first input's inferred
//! columns when it does not exist, append every input in one snapshot, join split time columns,
//! count the time values truncated with [`TimeOptions::truncate_ns`] and the (series key, time)
//! keys they made collide, and leave no table behind when an import that created it fails. It
//! decodes nothing itself (that is `input`) and prints nothing (the caller reports).

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::row::{RowConverter, SortField};

use crate::error::{Error, ErrorKind, Result};
use crate::format::{Dedup, Partitioning, TableContract};
use crate::input::time::{to_utc_micros, TimeOptions};
use crate::input::{join_time_columns, Input, Progress};
use crate::lake::Lake;
use crate::{AppendOptions, AppendReport};

/// How to import inputs into a table. The contract fields (`time_columns`, `series_key`,
/// `partition`, `plain`) only shape a table the import creates.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// The time column of a new table; two or more are joined with a space into a column named
    /// [`ImportOptions::time_name`] (e.g. a date and a time of day). Empty: guessed (a timestamp or
    /// date column, else a column named like `time`, `timestamp`, `ts`, `date`).
    pub time_columns: Vec<String>,
    /// The name of the joined time column.
    pub time_name: String,
    /// Series key columns of a new table.
    pub series_key: Vec<String>,
    /// Partition granularity of a new table; `None`: chosen from the data
    /// ([`Partitioning::for_data`] over a sample of the first input).
    pub partition: Option<Partitioning>,
    /// Deduplication of a new table.
    pub dedup: Dedup,
    /// Create a plain table (no time column) when the table does not exist.
    pub plain: bool,
    /// How to read times (zone, format, unit, origin, whether to truncate nanoseconds).
    pub time: TimeOptions,
    /// Makes the import idempotent: a batch id committed before writes nothing.
    pub batch_id: Option<String>,
    /// A note kept with the snapshot.
    pub note: Option<String>,
    /// Skip inline compaction after the import (see [`AppendOptions::no_maintain`]).
    pub no_maintain: bool,
    /// Refuse to create a table with a text column whose values are mostly numbers or times
    /// ([`Input::mostly_typed_text`]) instead of reporting it in
    /// [`ImportReport::mostly_typed_text`].
    pub strict_types: bool,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            time_columns: vec![],
            time_name: "time".into(),
            series_key: vec![],
            partition: None,
            dedup: Dedup::None,
            plain: false,
            time: TimeOptions::default(),
            batch_id: None,
            note: None,
            no_maintain: false,
            strict_types: false,
        }
    }
}

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct ImportReport {
    /// The append: rows, files, bytes, snapshot, added columns, `truncated_times`, ...
    pub append: AppendReport,
    /// The import created the table.
    pub created: bool,
    /// With [`TimeOptions::truncate_ns`]: (series key, time) keys of this import that hold two or
    /// more different input times after truncation to µs (rows already in the table not counted).
    pub collided_keys: u64,
    /// Set when the table existed and the contract options differ from its contract (they only
    /// apply when a table is created): a sentence saying so.
    pub contract_note: Option<String>,
    /// Set when the import created a time-series table and chose its partition granularity from
    /// the data: the choice and why, e.g. `partition year: 12154 rows over 48.3 years`.
    pub partition_note: Option<String>,
    /// Set when the import created the table: its text columns whose sampled values are mostly
    /// numbers or times (a missing-value spelling such as `nil` made them text).
    pub mostly_typed_text: Vec<(String, crate::MostlyTyped)>,
}

/// Imports `inputs` into `table` in one commit; creates the table from the first input when it
/// does not exist. `progress` is handed to every input's reader.
///
/// Errors: as [`Input::batches`] and [`crate::TableAppender::push`], each naming its input;
/// [`ErrorKind::InvalidInput`] for an input without rows, or without a time column for a new
/// time-series table. On error nothing is committed, and a table the import created is dropped
/// again (unless another writer committed to it meanwhile).
pub async fn import(
    lake: &Lake,
    table: &str,
    inputs: &[Input],
    opts: &ImportOptions,
    progress: Option<Progress>,
) -> Result<ImportReport> {
    let first = inputs
        .first()
        .ok_or_else(|| Error::invalid("nothing to import: give at least one input"))?;
    let mut report = ImportReport::default();
    if lake.table_exists(table).await? {
        report.contract_note = contract_note(lake, table, opts).await?;
    } else {
        let notes = first.mostly_typed_text().to_vec();
        if opts.strict_types && !notes.is_empty() {
            let lines: Vec<String> = notes.iter().map(|(c, m)| m.describe(c)).collect();
            return Err(Error::invalid(format!(
                "{}: {} (strict types: nothing was imported; give the missing-value spelling as a null value, or \
                 import without strict types to keep the column as text)",
                first.name(),
                lines.join("; ")
            )));
        }
        report.mostly_typed_text = notes;
        let schema = new_table_schema(first, opts);
        let mut contract = new_table_contract(first, &schema, opts)?;
        if let (Some(time), None) = (contract.time_column.clone(), opts.partition) {
            let (p, note) = choose_partition(first, &schema, inputs.len() == 1, &time, opts)
                .map_err(|e| e.context(first.name()))?;
            contract.partitioning = p;
            report.partition_note = Some(note);
        }
        match lake.create_table(table, &schema, &contract).await {
            Ok(_) => report.created = true,
            // Another import created it meanwhile: append to it.
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e.context(first.name())),
        }
    }
    match append(lake, table, inputs, opts, progress).await {
        Ok((append, collided)) => {
            report.append = append;
            report.collided_keys = collided;
            Ok(report)
        }
        Err(e) => {
            if report.created && lake.describe(table).await.is_ok_and(|d| d.snapshot_id.is_none()) {
                let _ = lake.drop_table(table).await;
            }
            Err(e)
        }
    }
}

fn new_table_schema(first: &Input, opts: &ImportOptions) -> Schema {
    let mut fields: Vec<Field> = first.schema().fields().iter().map(|f| f.as_ref().clone()).collect();
    if opts.time_columns.len() > 1 {
        fields.insert(0, Field::new(&opts.time_name, DataType::Utf8, true));
    }
    Schema::new(fields)
}

fn new_table_contract(first: &Input, schema: &Schema, opts: &ImportOptions) -> Result<TableContract> {
    if opts.plain {
        if opts.dedup != Dedup::None {
            return Err(Error::invalid(
                "--dedup needs a time column (rows are matched on series key and time); drop --plain",
            ));
        }
        return Ok(TableContract::default());
    }
    let time = if opts.time_columns.len() > 1 {
        opts.time_name.clone()
    } else if let Some(t) = opts.time_columns.first() {
        t.clone()
    } else {
        guess_time_column(schema).ok_or_else(|| {
            Error::invalid(format!(
                "{}: no time column found; give --time-column NAME (or --plain for a table without one)",
                first.name()
            ))
        })?
    };
    Ok(TableContract::time_series(time)
        .with_series_key(opts.series_key.clone())
        .with_partitioning(opts.partition.unwrap_or_default())
        .with_dedup(opts.dedup))
}

/// A sentence when the contract options differ from the existing table's.
async fn contract_note(lake: &Lake, table: &str, opts: &ImportOptions) -> Result<Option<String>> {
    let d = lake.describe(table).await?;
    let time_differs = opts.time_columns.len() == 1 && d.contract.time_column.as_ref() != opts.time_columns.first();
    let key_differs = !opts.series_key.is_empty() && opts.series_key != d.contract.series_key;
    if time_differs || key_differs || (opts.plain && d.contract.time_column.is_some()) {
        return Ok(Some(format!(
            "{} exists with time column {} and series key [{}]; --time-column, --series-key, \
             --partition and --plain only apply when a table is created",
            d.ident,
            d.contract.time_column.as_deref().unwrap_or("(none)"),
            d.contract.series_key.join(", ")
        )));
    }
    Ok(None)
}

async fn append(
    lake: &Lake,
    table: &str,
    inputs: &[Input],
    opts: &ImportOptions,
    progress: Option<Progress>,
) -> Result<(AppendReport, u64)> {
    let append_opts = AppendOptions {
        batch_id: opts.batch_id.clone(),
        note: opts.note.clone(),
        time: opts.time.clone(),
        no_maintain: opts.no_maintain,
        checkpoint: None,
    };
    let d = lake.describe(table).await?;
    let mut appender = lake.appender(table, append_opts).await?;
    if appender.is_duplicate() {
        return Ok((appender.commit().await?, 0));
    }
    let mut collisions = match (&d.contract.time_column, opts.time.truncate_ns) {
        (Some(t), true) => Some(Collisions::new(t.clone(), d.contract.series_key.clone())),
        _ => None,
    };
    let mut table_schema = d.schema.as_ref().clone();
    for input in inputs {
        appender.start_input();
        let mut rows = 0u64;
        let pushed: Result<()> = async {
            for b in input.batches(Some(&table_schema), progress.clone())? {
                let mut b = b?;
                if opts.time_columns.len() > 1 {
                    b = join_time_columns(&b, &opts.time_columns, &opts.time_name)
                        .map_err(|e| e.context(input.name()))?;
                }
                if let Some(c) = collisions.as_mut() {
                    c.observe(&b, &opts.time, rows).map_err(|e| e.context(input.name()))?;
                }
                rows += b.num_rows() as u64;
                // Columns this input adds are in the table from now on (as the engine stores them).
                for f in b.schema().fields() {
                    if table_schema.field_with_name(f.name()).is_err() {
                        let mut fields: Vec<Field> = table_schema.fields().iter().map(|f| f.as_ref().clone()).collect();
                        fields.push(f.as_ref().clone());
                        table_schema = Schema::new(fields);
                    }
                }
                appender.push(b).await.map_err(|e| e.context(input.name()))?;
            }
            Ok(())
        }
        .await;
        if let Err(e) = pushed {
            appender.abort().await;
            return Err(e);
        }
        if rows == 0 {
            appender.abort().await;
            return Err(Error::invalid(format!("{}: the file has no rows", input.name())));
        }
    }
    let report = appender.commit().await?;
    Ok((report, collisions.map(|c| c.count).unwrap_or(0)))
}

/// Rows of the first input read to choose a new table's partition granularity.
const PARTITION_SAMPLE_ROWS: u64 = 2_000_000;

/// Chooses the partition granularity of a new table from the density of the first input's times
/// (up to [`PARTITION_SAMPLE_ROWS`] rows): [`Partitioning::for_data`]. Returns it with a note.
///
/// Errors: as reading the input and converting its times.
fn choose_partition(
    first: &Input,
    schema: &Schema,
    only: bool,
    time: &str,
    opts: &ImportOptions,
) -> Result<(Partitioning, String)> {
    let (mut rows, mut lo, mut hi) = (0u64, i64::MAX, i64::MIN);
    let mut whole = only;
    for b in first.batches(Some(schema), None)? {
        let mut b = b?;
        if opts.time_columns.len() > 1 {
            b = join_time_columns(&b, &opts.time_columns, &opts.time_name)?;
        }
        let Some(t) = b.column_by_name(time) else {
            break;
        };
        let converted = to_utc_micros(t, time, rows, &opts.time)?;
        let micros = converted
            .values
            .as_primitive::<arrow::datatypes::TimestampMicrosecondType>();
        for v in micros.iter().flatten() {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        rows += b.num_rows() as u64;
        if rows >= PARTITION_SAMPLE_ROWS {
            whole = false;
            break;
        }
    }
    let span = if rows == 0 { 0 } else { hi.saturating_sub(lo) };
    let p = Partitioning::for_data(rows, span, whole);
    let days = span as f64 / 86_400_000_000.0;
    let over = if days >= 730.0 {
        format!("{:.1} years", days / 365.25)
    } else if days >= 2.0 {
        format!("{days:.0} days")
    } else {
        format!("{:.1} hours", days * 24.0)
    };
    let sampled = if whole { "" } else { " (sampled)" };
    Ok((
        p,
        format!(
            "partition {p}: {rows} rows{sampled} over {over}, so a partition holds about a million rows or a \
             year; --partition chooses another"
        ),
    ))
}

/// Guesses the time column of a new table: the first timestamp or date column, else a column
/// named `time`, `timestamp`, `ts`, `datetime`, `date`, `event_time` or `t` (any case), else the
/// first whose name starts with `time` or `date`.
pub fn guess_time_column(schema: &Schema) -> Option<String> {
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

/// Counts (series key, µs time) keys that receive different input times once truncated to µs.
/// Holds one entry per key of the import (about 40 bytes each): only used with `truncate_ns`.
#[derive(Debug)]
pub struct Collisions {
    time: String,
    key: Vec<String>,
    /// (hash of the series key, µs) -> (sub-µs ns of the first row, collided already).
    seen: HashMap<(u64, i64), (u16, bool)>,
    count: u64,
}

impl Collisions {
    /// A counter for a table with time column `time` and series key `key`.
    pub fn new(time: String, key: Vec<String>) -> Collisions {
        Collisions {
            time,
            key,
            seen: HashMap::new(),
            count: 0,
        }
    }

    /// Keys that collided so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Takes the rows of `batch` (input rows `row_offset + 1 ..`) into account.
    ///
    /// Errors: as the engine's time conversion (an unparsable or null time, naming the row).
    pub fn observe(&mut self, batch: &RecordBatch, time: &TimeOptions, row_offset: u64) -> Result<()> {
        let Some(t) = batch.column_by_name(&self.time) else {
            return Ok(());
        };
        let converted = to_utc_micros(t, &self.time, row_offset, time)?;
        let micros = converted
            .values
            .as_primitive::<arrow::datatypes::TimestampMicrosecondType>();
        let keys: Vec<_> = self
            .key
            .iter()
            .filter_map(|k| batch.column_by_name(k).cloned())
            .collect();
        let rows = if keys.is_empty() {
            None
        } else {
            let conv = RowConverter::new(keys.iter().map(|c| SortField::new(c.data_type().clone())).collect())?;
            Some(conv.convert_columns(&keys)?)
        };
        for i in 0..batch.num_rows() {
            let h = match &rows {
                Some(r) => {
                    let mut s = std::collections::hash_map::DefaultHasher::new();
                    r.row(i).as_ref().hash(&mut s);
                    s.finish()
                }
                None => 0,
            };
            let sub = converted.sub_micros.as_ref().map(|s| s[i]).unwrap_or(0);
            match self.seen.get_mut(&(h, micros.value(i))) {
                None => {
                    self.seen.insert((h, micros.value(i)), (sub, false));
                }
                Some((first, collided)) => {
                    if !*collided && *first != sub {
                        *collided = true;
                        self.count += 1;
                    }
                }
            }
        }
        Ok(())
    }
}
