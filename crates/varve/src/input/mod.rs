//! Input: decoding the files and message bodies data arrives in into Arrow batches.
//!
//! Owns the input formats: detection from a name (`detect`), opening text with gzip and byte-order
//! marks (`source`), CSV/TSV (`csv`), type inference from text (`infer`), NDJSON (`ndjson`),
//! Parquet (`parquet`) and the column names of a header (`columns`); parsing input times (`time`)
//! and checked casts of values to a column's type (`cast`). The CLI, the Python package, the HTTP
//! server and Kafka ingestion share it, so every rule here holds for every way data comes in.
//!
//! It must not write, commit or know tables beyond the Arrow schema it is handed: values of the
//! columns a table has are passed on as text, for `write::align` to convert with `cast`'s checked
//! casts (nothing is ever silently nulled or changed); columns the table lacks get the types
//! inference gives a new table. It imports only `error` and `format` (the UTC zone name).

pub(crate) mod cast;
mod columns;
mod csv;
mod detect;
mod infer;
mod ndjson;
mod parquet;
mod source;
pub(crate) mod time;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::{Schema, SchemaRef};
use bytes::Bytes;

use crate::error::Result;

pub use columns::join_time_columns;
pub use detect::InputFormat;
pub use infer::MostlyTyped;
pub use ndjson::repeated_key;
pub use time::TimeOptions;

/// Rows read to infer the column types of a text input.
pub const INFER_ROWS: usize = 100_000;
/// Most rows in one batch of an input.
pub const BATCH_ROWS: usize = 65_536;

/// Batches of one input, in input order.
pub type Batches = Box<dyn Iterator<Item = Result<RecordBatch>> + Send>;

/// Called with the number of input bytes (as stored, before decompression) read since the last
/// call, for progress bars.
pub type Progress = Arc<dyn Fn(u64) + Send + Sync>;

/// How to read CSV and TSV inputs (ignored for NDJSON and Parquet).
#[derive(Debug, Clone, Default)]
pub struct TextOptions {
    /// The field delimiter; `None` means `,` for CSV and tab for TSV.
    pub delimiter: Option<u8>,
    /// Lines to skip before the header line (e.g. a logger's station line).
    pub skip_rows: usize,
    /// Unquoted fields that mean "no value", besides an unquoted empty field (e.g. `NA`, `nil`).
    /// A quoted field is always text: `""` is the empty string, `"NA"` the text NA.
    pub null_values: Vec<String>,
    /// Rename repeated header names (`value`, `value_2`) instead of refusing the input.
    pub rename_duplicates: bool,
}

/// Where an input's bytes are.
#[derive(Debug, Clone)]
enum Data {
    File(PathBuf),
    Bytes(Bytes),
}

/// One input (a file, or bytes such as a request body), its format and its inferred schema.
#[derive(Debug, Clone)]
pub struct Input {
    name: String,
    data: Data,
    format: InputFormat,
    text: TextOptions,
    schema: SchemaRef,
    mostly_typed: Vec<(String, MostlyTyped)>,
}

impl Input {
    /// Opens the file at `path` in `format` (`None`: detected from the file name, see
    /// [`InputFormat::detect`]) and infers its schema: CSV/TSV types from the first
    /// [`INFER_ROWS`] rows, NDJSON from the first [`INFER_ROWS`] lines, Parquet from its footer.
    ///
    /// Errors: [`crate::ErrorKind::NotFound`] for a missing file; [`crate::ErrorKind::InvalidInput`]
    /// naming the file for an unknown extension, an empty file, a bad header (a repeated column
    /// name without [`TextOptions::rename_duplicates`]) or text that does not decode.
    pub fn open(path: &Path, format: Option<InputFormat>, text: &TextOptions) -> Result<Input> {
        let name = path.display().to_string();
        let format = match format {
            Some(f) => f,
            None => InputFormat::detect(&name)?,
        };
        source::check_exists(path)?;
        Self::new(name, Data::File(path.to_path_buf()), format, text)
    }

    /// An input held in memory (e.g. an HTTP request body or a message), named `name` in errors.
    ///
    /// Errors: as [`Input::open`].
    pub fn from_bytes(name: &str, data: Bytes, format: InputFormat, text: &TextOptions) -> Result<Input> {
        Self::new(name.to_string(), Data::Bytes(data), format, text)
    }

    fn new(name: String, data: Data, format: InputFormat, text: &TextOptions) -> Result<Input> {
        let mut input = Input {
            name,
            data,
            format,
            text: text.clone(),
            schema: Arc::new(Schema::empty()),
            mostly_typed: vec![],
        };
        input.schema = Arc::new(match format {
            InputFormat::Csv | InputFormat::Tsv => {
                let (schema, notes) = csv::infer_schema(&input)?;
                input.mostly_typed = notes;
                schema
            }
            InputFormat::Ndjson => ndjson::infer_schema(&input)?,
            InputFormat::Parquet => parquet::schema(&input)?,
        });
        Ok(input)
    }

    /// The name used in messages: the path, or the name given to [`Input::from_bytes`].
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The input's format.
    pub fn format(&self) -> InputFormat {
        self.format
    }

    /// The input's columns with inferred types: the schema a new table made from it gets.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// CSV/TSV columns inferred as text although at least 90% of their sampled values are numbers
    /// or times (see [`MostlyTyped`]): the column name and what the values are. A new table would
    /// store these columns as text; a missing-value spelling given to
    /// [`TextOptions::null_values`] usually fixes it.
    pub fn mostly_typed_text(&self) -> &[(String, MostlyTyped)] {
        &self.mostly_typed
    }

    /// The input's size in bytes as stored (compressed when gzip).
    pub fn len(&self) -> u64 {
        match &self.data {
            Data::File(p) => std::fs::metadata(p).map(|m| m.len()).unwrap_or(0),
            Data::Bytes(b) => b.len() as u64,
        }
    }

    /// Whether the input has no bytes at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The input's rows as batches of at most [`BATCH_ROWS`] rows, for a table with columns
    /// `table` (`None`: a new table made from [`Input::schema`]). CSV/TSV columns the table has are
    /// text (the engine converts them to the table's types, checked); columns it lacks are
    /// converted to their inferred type here. NDJSON and Parquet columns keep their types.
    /// `progress` is called as bytes are read.
    ///
    /// Errors (when iterating): [`crate::ErrorKind::InvalidInput`] naming the input and the line
    /// or row of a record that does not decode, or a value that does not fit its inferred type.
    pub fn batches(&self, table: Option<&Schema>, progress: Option<Progress>) -> Result<Batches> {
        match self.format {
            InputFormat::Csv | InputFormat::Tsv => csv::batches(self, table, progress),
            InputFormat::Ndjson => ndjson::batches(self, progress),
            InputFormat::Parquet => parquet::batches(self),
        }
    }
}
