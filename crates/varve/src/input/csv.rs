//! CSV and TSV: an RFC 4180 record reader and the batches made from its records.
//!
//! Reading rules: fields are separated by the delimiter and records by LF or CRLF; a field that
//! starts with `"` is quoted: it ends at the next lone `"`, `""` inside it is one `"`, and it may
//! hold delimiters and line breaks. A quoted field is always a value (`""` is the empty string); an
//! unquoted empty field, or an unquoted field equal to one of [`TextOptions::null_values`], is
//! NULL (the reading of DuckDB and PostgreSQL's CSV mode). Blank lines are skipped. Text must be
//! UTF-8. Neither Arrow's CSV reader nor the `csv` crate reports whether a field was quoted, so
//! this reader is Varve's own.

use std::io::BufRead;
use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch, StringBuilder};
use arrow::datatypes::{DataType, Field, Schema};

use crate::error::{Error, Result};
use crate::input::cast::cast_checked;

use super::columns::header_names;
use super::infer::{Guess, MostlyTyped};
use super::source::{io_error, open_text, TextReader};
use super::{Batches, Input, InputFormat, Progress, BATCH_ROWS, INFER_ROWS};

/// Text bytes in one batch at most, so that a file of long rows or many columns makes batches
/// whose size follows the data.
const BATCH_BYTES: usize = 16 << 20;

/// One field of a record: its bytes in [`Record::data`] and whether it was quoted.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
    quoted: bool,
}

/// One record: the unescaped bytes of its fields and the line it starts on (1-based).
#[derive(Debug, Default)]
pub(crate) struct Record {
    data: Vec<u8>,
    fields: Vec<Span>,
    line: u64,
}

impl Record {
    fn len(&self) -> usize {
        self.fields.len()
    }

    /// Field `i` as text, or `None` when it is NULL under `nulls`.
    fn value<'a>(&'a self, i: usize, nulls: &[String], input: &str, column: &str) -> Result<Option<&'a str>> {
        let s = self.fields[i];
        let text = std::str::from_utf8(&self.data[s.start..s.end]).map_err(|_| {
            Error::invalid(format!(
                "{input}: line {}, column {column}: the text is not UTF-8 (save the file as UTF-8)",
                self.line
            ))
        })?;
        if !s.quoted && (text.is_empty() || nulls.iter().any(|n| n == text)) {
            return Ok(None);
        }
        Ok(Some(text))
    }
}

/// Reads records from decoded text.
pub(crate) struct RecordReader {
    r: TextReader,
    delimiter: u8,
    /// Lines read so far.
    line: u64,
    buf: Vec<u8>,
    name: String,
}

impl RecordReader {
    fn new(r: TextReader, delimiter: u8, name: &str) -> RecordReader {
        RecordReader {
            r,
            delimiter,
            line: 0,
            buf: Vec::new(),
            name: name.to_string(),
        }
    }

    /// Reads one physical line into `buf` (with its line break); false at the end.
    fn read_line(&mut self) -> Result<bool> {
        self.buf.clear();
        let n = self
            .r
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| io_error(&self.name, e))?;
        if n > 0 {
            self.line += 1;
        }
        Ok(n > 0)
    }

    /// Skips `n` lines.
    fn skip_lines(&mut self, n: usize) -> Result<()> {
        for _ in 0..n {
            if !self.read_line()? {
                break;
            }
        }
        Ok(())
    }

    /// Reads the next record into `rec`; false at the end of the input.
    fn next(&mut self, rec: &mut Record) -> Result<bool> {
        loop {
            if !self.read_line()? {
                return Ok(false);
            }
            if self.buf == b"\n" || self.buf == b"\r\n" {
                continue;
            }
            break;
        }
        rec.data.clear();
        rec.fields.clear();
        rec.line = self.line;
        let d = self.delimiter;
        // States: at a field's start, in an unquoted field, in a quoted field, after a quote in a
        // quoted field.
        #[derive(PartialEq)]
        enum S {
            Start,
            Plain,
            Quoted,
            QuoteSeen,
        }
        let mut state = S::Start;
        let mut start = 0usize;
        let mut quoted = false;
        let mut i = 0usize;
        loop {
            if i == self.buf.len() {
                if state == S::Quoted {
                    // A quoted field goes on in the next line.
                    let had_newline = self.buf.last() == Some(&b'\n');
                    let mut more = std::mem::take(&mut self.buf);
                    if !had_newline || !self.read_line()? {
                        return Err(Error::invalid(format!(
                            "{}: line {}: a quoted field is not closed before the end of the input (is the file truncated?)",
                            self.name, rec.line
                        )));
                    }
                    let next = std::mem::take(&mut self.buf);
                    let at = more.len();
                    more.extend_from_slice(&next);
                    self.buf = more;
                    i = at;
                    continue;
                }
                rec.fields.push(Span {
                    start,
                    end: rec.data.len(),
                    quoted,
                });
                return Ok(true);
            }
            let c = self.buf[i];
            let at_line_end = c == b'\n' || (c == b'\r' && self.buf.get(i + 1).is_none_or(|n| *n == b'\n'));
            match state {
                S::Start | S::Plain | S::QuoteSeen if at_line_end => {
                    rec.fields.push(Span {
                        start,
                        end: rec.data.len(),
                        quoted,
                    });
                    return Ok(true);
                }
                S::Start | S::Plain | S::QuoteSeen if c == d => {
                    rec.fields.push(Span {
                        start,
                        end: rec.data.len(),
                        quoted,
                    });
                    start = rec.data.len();
                    quoted = false;
                    state = S::Start;
                }
                S::Start if c == b'"' => {
                    quoted = true;
                    state = S::Quoted;
                }
                S::Start | S::Plain => {
                    rec.data.push(c);
                    state = S::Plain;
                }
                S::Quoted if c == b'"' => state = S::QuoteSeen,
                S::Quoted => rec.data.push(c),
                S::QuoteSeen if c == b'"' => {
                    rec.data.push(b'"');
                    state = S::Quoted;
                }
                S::QuoteSeen => {
                    return Err(Error::invalid(format!(
                        "{}: line {}, field {}: text after the closing quote of a quoted field (a quote inside a quoted field is written \"\")",
                        self.name,
                        self.line,
                        rec.fields.len() + 1
                    )));
                }
            }
            i += 1;
        }
    }
}

fn delimiter(input: &Input) -> u8 {
    input
        .text
        .delimiter
        .unwrap_or(if input.format == InputFormat::Tsv { b'\t' } else { b',' })
}

/// A reader positioned after the header, and the header's column names.
fn open(input: &Input, progress: Option<Progress>) -> Result<(RecordReader, Vec<String>)> {
    let mut r = RecordReader::new(open_text(input, progress)?, delimiter(input), &input.name);
    r.skip_lines(input.text.skip_rows)?;
    let mut header = Record::default();
    if !r.next(&mut header)? {
        return Err(Error::invalid(format!("{}: the file is empty", input.name)));
    }
    let raw: Vec<String> = (0..header.len())
        .map(|i| String::from_utf8_lossy(&header.data[header.fields[i].start..header.fields[i].end]).into_owned())
        .collect();
    let names = header_names(&input.name, &raw, input.text.rename_duplicates)?;
    Ok((r, names))
}

fn field_count_error(input: &Input, rec: &Record, expected: usize) -> Error {
    Error::invalid(format!(
        "{}: line {}: {} field{} where the header has {expected} (is there a line before the column names? skip it with --skip-rows N)",
        input.name,
        rec.line,
        rec.len(),
        if rec.len() == 1 { "" } else { "s" }
    ))
}

/// The columns of a CSV/TSV input with types inferred from its first [`INFER_ROWS`] records, and
/// the text columns whose values are mostly numbers or times.
pub(crate) fn infer_schema(input: &Input) -> Result<(Schema, Vec<(String, MostlyTyped)>)> {
    let (mut r, names) = open(input, None)?;
    let mut guesses = vec![Guess::default(); names.len()];
    let mut rec = Record::default();
    let mut rows = 0;
    while rows < INFER_ROWS && r.next(&mut rec)? {
        if rec.len() != names.len() {
            return Err(field_count_error(input, &rec, names.len()));
        }
        for (i, g) in guesses.iter_mut().enumerate() {
            if let Some(v) = rec.value(i, &input.text.null_values, &input.name, &names[i])? {
                g.update(v);
            }
        }
        rows += 1;
    }
    let notes = names
        .iter()
        .zip(&guesses)
        .filter_map(|(n, g)| g.mostly_typed().map(|m| (n.clone(), m)))
        .collect();
    let schema = Schema::new(
        names
            .iter()
            .zip(&guesses)
            .map(|(n, g)| Field::new(n, g.data_type(), true))
            .collect::<Vec<_>>(),
    );
    Ok((schema, notes))
}

/// Batches of the input's records: text for columns `table` has (or every column when `table`
/// is `None`... then typed as inferred), inferred types for columns it lacks.
pub(crate) fn batches(input: &Input, table: Option<&Schema>, progress: Option<Progress>) -> Result<Batches> {
    let (reader, names) = open(input, progress)?;
    // The type each column is handed on as: text when the table has it, else inferred.
    let targets: Vec<DataType> = input
        .schema()
        .fields()
        .iter()
        .map(|f| match table {
            Some(t) if t.field_with_name(f.name()).is_ok() => DataType::Utf8,
            Some(_) => f.data_type().clone(),
            None => f.data_type().clone(),
        })
        .collect();
    Ok(Box::new(CsvBatches {
        reader,
        names,
        targets,
        input: input.clone(),
        rows: 0,
        done: false,
    }))
}

struct CsvBatches {
    reader: RecordReader,
    names: Vec<String>,
    targets: Vec<DataType>,
    input: Input,
    /// Rows read before the current batch.
    rows: u64,
    done: bool,
}

impl CsvBatches {
    fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        let n = self.names.len();
        let mut builders: Vec<StringBuilder> = (0..n).map(|_| StringBuilder::new()).collect();
        let mut rec = Record::default();
        let mut rows = 0usize;
        let mut bytes = 0usize;
        while rows < BATCH_ROWS && bytes < BATCH_BYTES {
            if !self.reader.next(&mut rec)? {
                self.done = true;
                break;
            }
            if rec.len() != n {
                return Err(field_count_error(&self.input, &rec, n));
            }
            for (i, b) in builders.iter_mut().enumerate() {
                match rec.value(i, &self.input.text.null_values, &self.input.name, &self.names[i])? {
                    Some(v) => b.append_value(v),
                    None => b.append_null(),
                }
            }
            bytes += rec.data.len() + 8 * n;
            rows += 1;
        }
        if rows == 0 {
            return Ok(None);
        }
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(n);
        let mut fields = Vec::with_capacity(n);
        for (i, mut b) in builders.into_iter().enumerate() {
            let text: ArrayRef = Arc::new(b.finish());
            let to = &self.targets[i];
            let col = if to == &DataType::Utf8 || to == &DataType::Null {
                text
            } else {
                cast_checked(&text, to, &self.names[i], self.rows).map_err(|e| {
                    let message = format!(
                        "{}: {} (the column is new to the table; its type was inferred from the first {INFER_ROWS} rows)",
                        self.input.name,
                        e.message()
                    );
                    Error::new(e.kind(), message).with_source(e)
                })?
            };
            fields.push(Field::new(&self.names[i], col.data_type().clone(), true));
            columns.push(col);
        }
        self.rows += rows as u64;
        Ok(Some(RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)?))
    }
}

impl Iterator for CsvBatches {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Result<RecordBatch>> {
        if self.done {
            return None;
        }
        match self.next_batch() {
            Ok(Some(b)) => Some(Ok(b)),
            Ok(None) => None,
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::TextOptions;
    use arrow::array::{Array, AsArray};
    use bytes::Bytes;

    fn read(text: &str, opts: &TextOptions) -> Result<Vec<RecordBatch>> {
        let input = Input::from_bytes("t.csv", Bytes::from(text.as_bytes().to_vec()), InputFormat::Csv, opts)?;
        let t = Schema::new(
            input
                .schema()
                .fields()
                .iter()
                .map(|f| Field::new(f.name(), DataType::Utf8, true))
                .collect::<Vec<_>>(),
        );
        input.batches(Some(&t), None)?.collect()
    }

    #[test]
    fn quoted_empty_is_text_and_unquoted_empty_is_null() {
        let b = read(
            "h,v\n\"\",1\n,2\n\"NA\",3\nNA,4\n",
            &TextOptions {
                null_values: vec!["NA".into()],
                ..Default::default()
            },
        )
        .unwrap();
        let h = b[0].column(0).as_string::<i32>();
        assert_eq!((h.is_null(0), h.value(0)), (false, ""));
        assert!(h.is_null(1));
        assert_eq!((h.is_null(2), h.value(2)), (false, "NA"));
        assert!(h.is_null(3));
    }

    #[test]
    fn quotes_crlf_bom_and_line_breaks() {
        let b = read(
            "\u{feff}a,b\r\n\"x,\"\"y\"\"\",\"two\r\nlines\"\r\n\r\nz,w",
            &TextOptions::default(),
        )
        .unwrap();
        assert_eq!(b[0].schema().field(0).name(), "a");
        let a = b[0].column(0).as_string::<i32>();
        let c = b[0].column(1).as_string::<i32>();
        assert_eq!(a.value(0), "x,\"y\"");
        assert_eq!(c.value(0), "two\r\nlines");
        assert_eq!((a.value(1), c.value(1)), ("z", "w"));
    }

    #[test]
    fn bad_records_name_their_line() {
        let e = read("a,b\n1,2\n3\n", &TextOptions::default()).unwrap_err();
        assert!(
            e.message().starts_with("t.csv: line 3: 1 field where the header has 2"),
            "{e}"
        );
        let e = read("a,b\n\"1\"x,2\n", &TextOptions::default()).unwrap_err();
        assert!(
            e.message()
                .starts_with("t.csv: line 2, field 1: text after the closing quote"),
            "{e}"
        );
        let e = read("a,b\n\"1,2\n", &TextOptions::default()).unwrap_err();
        assert!(e.message().contains("not closed"), "{e}");
    }
}
