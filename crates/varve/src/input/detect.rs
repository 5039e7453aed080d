//! Detecting an input's format from its name.

use std::str::FromStr;

use crate::error::{Error, Result};

/// The formats an input can be in. The text formats may be gzip-compressed (detected from the
/// content, not the name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InputFormat {
    /// Comma-separated values (RFC 4180 quoting).
    Csv,
    /// Tab-separated values (the same quoting as CSV).
    Tsv,
    /// Apache Parquet.
    Parquet,
    /// Newline-delimited JSON objects.
    Ndjson,
}

impl InputFormat {
    /// The format of a file named `name`, by extension, optionally followed by `.gz`: `.csv` and
    /// `.txt` are CSV, `.tsv` and `.tab` TSV, `.parquet` and `.pq` Parquet, `.ndjson`, `.jsonl`
    /// and `.json` NDJSON (case-insensitive).
    ///
    /// Errors: [`crate::ErrorKind::InvalidInput`] naming the file for any other name.
    pub fn detect(name: &str) -> Result<InputFormat> {
        let file = name.rsplit(['/', '\\']).next().unwrap_or(name).to_ascii_lowercase();
        let file = file.strip_suffix(".gz").unwrap_or(&file);
        let ext = file.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
        match ext {
            "csv" | "txt" => Ok(InputFormat::Csv),
            "tsv" | "tab" => Ok(InputFormat::Tsv),
            "parquet" | "pq" => Ok(InputFormat::Parquet),
            "ndjson" | "jsonl" | "json" => Ok(InputFormat::Ndjson),
            _ => Err(Error::invalid(format!(
                "{name}: unknown file type; give --format csv|tsv|parquet|ndjson"
            ))),
        }
    }

    /// The format's name as the CLI and Python take it: `csv`, `tsv`, `parquet`, `ndjson`.
    pub fn name(self) -> &'static str {
        match self {
            InputFormat::Csv => "csv",
            InputFormat::Tsv => "tsv",
            InputFormat::Parquet => "parquet",
            InputFormat::Ndjson => "ndjson",
        }
    }
}

impl FromStr for InputFormat {
    type Err = Error;

    /// Parses `csv`, `tsv`, `parquet` or `ndjson` (also `jsonl`), case-insensitive.
    fn from_str(s: &str) -> Result<InputFormat> {
        match s.to_ascii_lowercase().as_str() {
            "csv" => Ok(InputFormat::Csv),
            "tsv" => Ok(InputFormat::Tsv),
            "parquet" => Ok(InputFormat::Parquet),
            "ndjson" | "jsonl" => Ok(InputFormat::Ndjson),
            other => Err(Error::invalid(format!(
                "format {other:?}: expected csv, tsv, parquet or ndjson"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_to_formats() {
        assert_eq!(InputFormat::detect("a/B.CSV.gz").unwrap(), InputFormat::Csv);
        assert_eq!(InputFormat::detect("x.tab").unwrap(), InputFormat::Tsv);
        assert_eq!(InputFormat::detect("x.jsonl").unwrap(), InputFormat::Ndjson);
        assert!(InputFormat::detect("x.xlsx")
            .unwrap_err()
            .message()
            .starts_with("x.xlsx: unknown"));
    }
}
