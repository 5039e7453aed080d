//! Aligning input batches to a table's schema.
//!
//! Columns are matched by name. A column the table lacks is reported by [`new_columns`] so that
//! `commit` can evolve the schema first; a table column the input lacks is filled with nulls when
//! it is nullable. Values are cast to the table's types only when no value changes: every cast is
//! checked, and the first value that would be lost is reported with its column, row and text
//! ("column velocity, row 17: 'fast' is not a float64"). Nothing here is ever silently nulled.

use arrow::array::{new_null_array, Array, RecordBatch};
use arrow::datatypes::{DataType, SchemaRef};

use crate::error::{cut, Error, Result};
use crate::format::schema::{arrow_type, iceberg_type};
use crate::input::cast::cast_checked;
use crate::input::time::{to_utc_micros, TimeOptions};

/// Input columns the table does not have, with the Arrow type they will be stored as.
///
/// Errors: [`crate::ErrorKind::SchemaMismatch`] for a column of a type Varve cannot store.
/// Errors: [`crate::ErrorKind::InvalidInput`] for a name given to two input columns (the second
/// would be dropped), naming both positions.
pub(crate) fn new_columns(table: &SchemaRef, input: &arrow::datatypes::Schema) -> Result<Vec<(String, DataType)>> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashMap::new();
    for (i, f) in input.fields().iter().enumerate() {
        if f.name().is_empty() {
            return Err(Error::schema(format!("column {}: a column needs a name", i + 1)));
        }
        if let Some(j) = seen.insert(f.name().as_str(), i) {
            return Err(Error::invalid(format!(
                "columns {} and {} of the input are both named \"{}\"; rename one",
                j + 1,
                i + 1,
                cut(f.name())
            )));
        }
        if table.field_with_name(f.name()).is_err() {
            out.push((f.name().clone(), arrow_type(&iceberg_type(f.name(), f.data_type())?)?));
        }
    }
    Ok(out)
}

/// The batch in the table's column order and types; `row_offset` is the number of input rows
/// before this batch (for row numbers in errors). Returns the batch and the number of time values
/// truncated to µs.
pub(crate) fn align(
    batch: &RecordBatch,
    table: &SchemaRef,
    time_column: Option<&str>,
    time: &TimeOptions,
    row_offset: u64,
) -> Result<(RecordBatch, u64)> {
    let mut columns = Vec::with_capacity(table.fields().len());
    let mut truncated = 0;
    for field in table.fields() {
        let name = field.name();
        let input = batch.column_by_name(name);
        let col = match input {
            None if Some(name.as_str()) == time_column => {
                return Err(Error::schema(format!(
                    "the time column {name} is missing from the input"
                )))
            }
            None if field.is_nullable() => new_null_array(field.data_type(), batch.num_rows()),
            None => {
                return Err(Error::schema(format!(
                    "column {name} is required and missing from the input"
                )))
            }
            Some(a) if Some(name.as_str()) == time_column => {
                let t = to_utc_micros(a, name, row_offset, time)?;
                truncated += t.truncated;
                t.values
            }
            Some(a) => cast_checked(a, field.data_type(), name, row_offset)?,
        };
        if !field.is_nullable() && col.null_count() > 0 {
            let i = (0..col.len()).find(|&i| col.is_null(i)).unwrap_or(0);
            return Err(Error::invalid(format!(
                "column {name}, row {}: null in a required column",
                row_offset + i as u64 + 1
            )));
        }
        columns.push(col);
    }
    let out = RecordBatch::try_new(table.clone(), columns)?;
    Ok((out, truncated))
}
