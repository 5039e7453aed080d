//! A query's result as a response body, encoded batch by batch so that a large result is streamed,
//! never held whole: JSON (an array of objects, NULLs written as `null`), NDJSON (one object per
//! line), CSV (a header, RFC 4180 quoting), the Arrow IPC stream format (Arrow columnar spec,
//! "IPC Streaming Format") and Parquet (row groups flushed past [`PARQUET_FLUSH_BYTES`]).
//!
//! The format is `?format=` when given, else the first media type of `Accept` that names one,
//! else JSON.

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use arrow::error::ArrowError;
use bytes::Bytes;
use parquet::arrow::ArrowWriter;

/// A Parquet body flushes its row group once this many encoded bytes are buffered.
const PARQUET_FLUSH_BYTES: usize = 8 * 1024 * 1024;

/// A result format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Json,
    Ndjson,
    Csv,
    Arrow,
    Parquet,
}

/// Names of the formats for `?format=`, with their media types.
const FORMATS: [(&str, Format, &str); 5] = [
    ("json", Format::Json, "application/json"),
    ("ndjson", Format::Ndjson, "application/x-ndjson"),
    ("csv", Format::Csv, "text/csv"),
    ("arrow", Format::Arrow, "application/vnd.apache.arrow.stream"),
    ("parquet", Format::Parquet, "application/vnd.apache.parquet"),
];

impl Format {
    /// The format named by `?format=`.
    ///
    /// Errors: an unknown name, with the known ones.
    pub(crate) fn from_name(name: &str) -> Result<Format, String> {
        FORMATS
            .iter()
            .find(|(n, _, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, f, _)| *f)
            .ok_or_else(|| format!("unknown format {name:?}: use json, ndjson, csv, arrow or parquet"))
    }

    /// The first format an `Accept` header names (in its order; quality values are not weighed),
    /// `None` when it names none (`*/*`, `text/html`, ...).
    pub(crate) fn from_accept(accept: &str) -> Option<Format> {
        accept.split(',').find_map(|part| {
            let media = part.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
            let alias = match media.as_str() {
                "application/x-parquet" => Some(Format::Parquet),
                "application/jsonlines" | "application/x-jsonlines" => Some(Format::Ndjson),
                _ => None,
            };
            alias.or_else(|| FORMATS.iter().find(|(_, _, m)| *m == media).map(|(_, f, _)| *f))
        })
    }

    /// The response's `Content-Type`.
    pub(crate) fn content_type(self) -> &'static str {
        match self {
            Format::Csv => "text/csv; charset=utf-8",
            other => FORMATS
                .iter()
                .find(|(_, f, _)| *f == other)
                .map(|(_, _, m)| *m)
                .unwrap_or(""),
        }
    }
}

/// Encodes one result's batches in a format; each call returns the bytes ready to send.
pub(crate) struct Encoder {
    kind: Kind,
}

enum Kind {
    Json(arrow::json::Writer<Vec<u8>, arrow::json::writer::JsonArray>),
    Ndjson(arrow::json::Writer<Vec<u8>, arrow::json::writer::LineDelimited>),
    Csv { header: bool },
    Arrow(arrow::ipc::writer::StreamWriter<Vec<u8>>),
    Parquet(Box<ArrowWriter<Vec<u8>>>),
}

impl std::fmt::Debug for Encoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Encoder")
    }
}

impl Encoder {
    /// An encoder of batches of `schema` in `format`.
    ///
    /// Errors: a schema the format cannot represent.
    pub(crate) fn new(format: Format, schema: &SchemaRef) -> Result<Encoder, ArrowError> {
        let kind = match format {
            Format::Json => Kind::Json(
                arrow::json::WriterBuilder::new()
                    .with_explicit_nulls(true)
                    .build(Vec::new()),
            ),
            Format::Ndjson => Kind::Ndjson(
                arrow::json::WriterBuilder::new()
                    .with_explicit_nulls(true)
                    .build(Vec::new()),
            ),
            Format::Csv => Kind::Csv { header: true },
            Format::Arrow => Kind::Arrow(arrow::ipc::writer::StreamWriter::try_new(Vec::new(), schema)?),
            Format::Parquet => Kind::Parquet(Box::new(
                ArrowWriter::try_new(Vec::new(), schema.clone(), None)
                    .map_err(|e| ArrowError::ExternalError(Box::new(e)))?,
            )),
        };
        Ok(Encoder { kind })
    }

    /// Encodes `batch`; returns the bytes to send now (possibly none).
    ///
    /// Errors: a value the format cannot encode.
    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<Bytes, ArrowError> {
        Ok(match &mut self.kind {
            Kind::Json(w) => {
                w.write(batch)?;
                take(w.get_mut())
            }
            Kind::Ndjson(w) => {
                w.write(batch)?;
                take(w.get_mut())
            }
            Kind::Csv { header } => {
                let mut w = arrow::csv::WriterBuilder::new().with_header(*header).build(Vec::new());
                w.write(&varve::nested_as_text(batch)?)?;
                *header = false;
                Bytes::from(w.into_inner())
            }
            Kind::Arrow(w) => {
                w.write(batch)?;
                take(w.get_mut())
            }
            Kind::Parquet(w) => {
                w.write(batch).map_err(|e| ArrowError::ExternalError(Box::new(e)))?;
                if w.in_progress_size() >= PARQUET_FLUSH_BYTES {
                    w.flush().map_err(|e| ArrowError::ExternalError(Box::new(e)))?;
                }
                // The writer counts the bytes it wrote itself, so taking them keeps its offsets.
                take(w.inner_mut())
            }
        })
    }

    /// Ends the body (JSON's closing bracket, the IPC end-of-stream marker, the Parquet footer);
    /// returns its last bytes. A CSV result with no batch is its header alone.
    ///
    /// Errors: the format's encoder.
    pub(crate) fn finish(mut self, schema: &SchemaRef) -> Result<Bytes, ArrowError> {
        Ok(match &mut self.kind {
            Kind::Json(w) => {
                w.finish()?;
                take(w.get_mut())
            }
            Kind::Ndjson(w) => {
                w.finish()?;
                take(w.get_mut())
            }
            Kind::Csv { header: true } => {
                let mut w = arrow::csv::WriterBuilder::new().with_header(true).build(Vec::new());
                w.write(&varve::nested_as_text(&RecordBatch::new_empty(schema.clone()))?)?;
                Bytes::from(w.into_inner())
            }
            Kind::Csv { header: false } => Bytes::new(),
            Kind::Arrow(w) => {
                w.finish()?;
                take(w.get_mut())
            }
            Kind::Parquet(w) => {
                w.finish().map_err(|e| ArrowError::ExternalError(Box::new(e)))?;
                take(w.inner_mut())
            }
        })
    }
}

fn take(buf: &mut Vec<u8>) -> Bytes {
    Bytes::from(std::mem::take(buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_negotiated() {
        assert_eq!(Format::from_name("CSV").unwrap(), Format::Csv);
        assert!(Format::from_name("xml")
            .unwrap_err()
            .contains("json, ndjson, csv, arrow or parquet"));
        assert_eq!(
            Format::from_accept("text/html, application/vnd.apache.arrow.stream;q=0.9"),
            Some(Format::Arrow)
        );
        assert_eq!(Format::from_accept("*/*"), None);
        assert_eq!(Format::from_accept("application/x-parquet"), Some(Format::Parquet));
        assert_eq!(Format::Csv.content_type(), "text/csv; charset=utf-8");
    }
}
