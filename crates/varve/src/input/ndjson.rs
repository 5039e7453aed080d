//! NDJSON inputs: one JSON object per line; types inferred from the first lines by Arrow.

use std::sync::Arc;

use arrow::datatypes::Schema;

use crate::error::{Error, Result};

use super::source::open_text;
use super::{Batches, Input, Progress, BATCH_ROWS, INFER_ROWS};

fn json_error(name: &str, e: arrow::error::ArrowError) -> Error {
    let text = e.to_string();
    let text = text.strip_prefix("Json error: ").unwrap_or(&text);
    let msg = if text.contains("incomplete deflate stream") || text.contains("end of file") {
        "the file is truncated (unexpected end of input)".to_string()
    } else {
        crate::error::cut(text)
    };
    Error::invalid(format!("{name}: {msg}")).with_source(e)
}

/// The columns of the first [`INFER_ROWS`] objects.
pub(crate) fn infer_schema(input: &Input) -> Result<Schema> {
    let mut r = open_text(input, None)?;
    let (schema, _) =
        arrow::json::reader::infer_json_schema(&mut r, Some(INFER_ROWS)).map_err(|e| json_error(&input.name, e))?;
    if schema.fields().is_empty() {
        return Err(Error::invalid(format!("{}: the file is empty", input.name)));
    }
    Ok(schema)
}

/// The objects as batches of the inferred schema. Strict: a key the inferred schema lacks (first
/// seen after the inferred lines) is an error, never silently dropped.
pub(crate) fn batches(input: &Input, progress: Option<Progress>) -> Result<Batches> {
    let r = open_text(input, progress)?;
    let reader = arrow::json::ReaderBuilder::new(Arc::clone(input.schema()))
        .with_strict_mode(true)
        .with_batch_size(BATCH_ROWS)
        .build(r)
        .map_err(|e| json_error(&input.name, e))?;
    let name = input.name.clone();
    Ok(Box::new(reader.map(move |b| b.map_err(|e| json_error(&name, e)))))
}
