//! `/v1/write` bodies other than line protocol: CSV, NDJSON, Arrow IPC stream and Parquet, each
//! appended to one table in one commit, read by the import's readers (`varve::Input`: CSV and
//! NDJSON typed by the table's columns, a value that does not fit refused with its row), and the
//! decompression of gzip bodies.

use std::io::Read;

use bytes::Bytes;
use varve::{Lake, TableIdent};

use crate::write::Written;

/// What a write body holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyFormat {
    /// InfluxDB line protocol (the default).
    LineProtocol,
    /// CSV with a header line.
    Csv,
    /// One JSON object per line.
    Ndjson,
    /// An Arrow IPC stream.
    Arrow,
    /// A Parquet file.
    Parquet,
}

impl BodyFormat {
    /// The format `?format=` names, else the one `Content-Type` names, else line protocol.
    ///
    /// Errors: an unknown `?format=` or content type, naming the ones taken.
    pub(crate) fn of(format: Option<&str>, content_type: Option<&str>) -> Result<BodyFormat, String> {
        if let Some(f) = format {
            return match f.to_ascii_lowercase().as_str() {
                "lp" | "line-protocol" | "influx" => Ok(BodyFormat::LineProtocol),
                "csv" => Ok(BodyFormat::Csv),
                "ndjson" | "jsonl" => Ok(BodyFormat::Ndjson),
                "arrow" => Ok(BodyFormat::Arrow),
                "parquet" => Ok(BodyFormat::Parquet),
                other => Err(format!(
                    "format={other}: use lp (line protocol), csv, ndjson, arrow or parquet"
                )),
            };
        }
        let Some(ct) = content_type else {
            return Ok(BodyFormat::LineProtocol);
        };
        let media = ct.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
        match media.as_str() {
            "" | "text/plain" | "application/octet-stream" | "application/x-www-form-urlencoded" => {
                Ok(BodyFormat::LineProtocol)
            }
            "text/csv" => Ok(BodyFormat::Csv),
            "application/x-ndjson" | "application/jsonl" | "application/json" => Ok(BodyFormat::Ndjson),
            "application/vnd.apache.arrow.stream" => Ok(BodyFormat::Arrow),
            "application/vnd.apache.parquet" | "application/x-parquet" => Ok(BodyFormat::Parquet),
            other => Err(format!(
                "Content-Type {other}: use text/plain (line protocol), text/csv, application/x-ndjson, \
                 application/vnd.apache.arrow.stream or application/vnd.apache.parquet (or ?format=)"
            )),
        }
    }
}

/// How to send `body` when it looks like another format than line protocol (CSV: a first line
/// of comma-separated words without `=`; NDJSON: a first line starting `{`; Parquet: `PAR1`),
/// for the error of a body read as line protocol because nothing named its format.
pub(crate) fn format_hint(body: &[u8]) -> Option<&'static str> {
    if body.starts_with(b"PAR1") {
        return Some("send Parquet with Content-Type: application/vnd.apache.parquet, or ?format=parquet");
    }
    let text = String::from_utf8_lossy(&body[..body.len().min(4096)]);
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))?;
    if first.starts_with('{') {
        return Some("send NDJSON with Content-Type: application/x-ndjson, or ?format=ndjson");
    }
    if first.contains(',') && !first.contains('=') {
        return Some("send CSV with Content-Type: text/csv, or ?format=csv");
    }
    None
}

/// The body after its `Content-Encoding`: as it is for none or `identity`, inflated for `gzip`,
/// at most `limit` bytes either way.
///
/// Errors, with the HTTP status they get: another encoding (415), a broken gzip stream (400), one
/// that inflates past `limit` (413).
pub(crate) fn decode(body: Bytes, encoding: Option<&str>, limit: usize) -> Result<Bytes, (u16, String)> {
    match encoding.map(|e| e.trim().to_ascii_lowercase()) {
        None => Ok(body),
        Some(e) if e.is_empty() || e == "identity" => Ok(body),
        Some(e) if e == "gzip" || e == "x-gzip" => {
            let mut out = Vec::new();
            let mut reader = flate2::read::MultiGzDecoder::new(&body[..]).take(limit as u64 + 1);
            reader
                .read_to_end(&mut out)
                .map_err(|err| (400, format!("the gzip body does not inflate: {err}")))?;
            if out.len() > limit {
                return Err((
                    413,
                    format!("the body inflates to more than the server's write limit of {limit} bytes"),
                ));
            }
            Ok(Bytes::from(out))
        }
        Some(e) => Err((415, format!("Content-Encoding {e} is not taken: send gzip or identity"))),
    }
}

/// Appends `body` (in `format`, not line protocol) to `table` in one commit; a table that does not
/// exist is created from the body (CSV, NDJSON, Parquet) with `time_column` as its time column
/// (guessed when `None`, as `varve import` does) and `series_key` (comma-separated) as its series
/// key.
///
/// Errors: the readers' (naming the row and column), the lake's; [`varve::ErrorKind::NotFound`]
/// for an Arrow body to a table that does not exist.
pub(crate) async fn append(
    lake: &Lake,
    table: &TableIdent,
    format: BodyFormat,
    body: Bytes,
    batch_id: Option<&str>,
    time_column: Option<&str>,
    series_key: Option<&str>,
) -> varve::Result<Written> {
    let name = table.to_string();
    let report = match format {
        BodyFormat::Arrow => {
            let reader = varve::arrow::ipc::reader::StreamReader::try_new(std::io::Cursor::new(body), None)
                .map_err(|e| varve::Error::invalid(format!("the Arrow IPC stream body: {e}")))?;
            let batches = reader
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| varve::Error::invalid(format!("the Arrow IPC stream body: {e}")))?;
            let opts = varve::AppendOptions {
                batch_id: batch_id.map(str::to_string),
                ..varve::AppendOptions::default()
            };
            lake.append(&name, batches, opts).await?
        }
        BodyFormat::LineProtocol => return Err(varve::Error::internal("line protocol is written by `write`")),
        BodyFormat::Csv | BodyFormat::Ndjson | BodyFormat::Parquet => {
            let input_format = match format {
                BodyFormat::Csv => varve::InputFormat::Csv,
                BodyFormat::Ndjson => varve::InputFormat::Ndjson,
                _ => varve::InputFormat::Parquet,
            };
            let input = varve::Input::from_bytes("the body", body, input_format, &varve::TextOptions::default())?;
            let opts = varve::ImportOptions {
                batch_id: batch_id.map(str::to_string),
                time_columns: time_column.map(|t| vec![t.to_string()]).unwrap_or_default(),
                series_key: series_key
                    .map(|k| {
                        k.split(',')
                            .map(|c| c.trim().to_string())
                            .filter(|c| !c.is_empty())
                            .collect()
                    })
                    .unwrap_or_default(),
                ..varve::ImportOptions::default()
            };
            varve::import(lake, &name, &[input], &opts, None).await?.append
        }
    };
    Ok(Written {
        table: name,
        rows: report.rows as usize,
        snapshot_id: report.snapshot_id,
        duplicate: report.duplicate,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_encodings() {
        assert_eq!(BodyFormat::of(None, None).unwrap(), BodyFormat::LineProtocol);
        assert_eq!(
            BodyFormat::of(None, Some("text/csv; charset=utf-8")).unwrap(),
            BodyFormat::Csv
        );
        assert_eq!(
            BodyFormat::of(Some("parquet"), Some("text/csv")).unwrap(),
            BodyFormat::Parquet
        );
        assert!(BodyFormat::of(None, Some("image/png")).is_err());
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, b"cpu v=1 1").unwrap();
        let gz = Bytes::from(gz.finish().unwrap());
        assert_eq!(
            decode(gz.clone(), Some("gzip"), 100).unwrap(),
            Bytes::from_static(b"cpu v=1 1")
        );
        assert_eq!(decode(gz, Some("gzip"), 4).unwrap_err().0, 413);
        assert_eq!(
            decode(Bytes::from_static(b"\x1f\x8b\x08\x00"), Some("gzip"), 100)
                .unwrap_err()
                .0,
            400
        );
        assert_eq!(decode(Bytes::from_static(b"x"), Some("br"), 4).unwrap_err().0, 415);
    }
}
