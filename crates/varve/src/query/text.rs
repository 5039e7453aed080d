//! Nested values (lists, structs, maps) as text, for result formats without nesting: CSV has no
//! list, so `m4(...)`, `histogram(...)` and the like print as Arrow shows them (`[1, 2, 3]`,
//! `{time: 2024-01-01T00:00:00Z, value: 1.5}`) instead of failing.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::error::ArrowError;
use arrow::util::display::{ArrayFormatter, FormatOptions};

/// Whether a column of `t` has values CSV cannot hold.
fn nested(t: &DataType) -> bool {
    matches!(
        t,
        DataType::List(_)
            | DataType::LargeList(_)
            | DataType::ListView(_)
            | DataType::LargeListView(_)
            | DataType::FixedSizeList(..)
            | DataType::Struct(_)
            | DataType::Map(..)
            | DataType::Union(..)
    )
}

/// `batch` with each nested column replaced by a text column of the values as Arrow displays
/// them (NULL stays NULL); other columns unchanged. The same batch when nothing is nested.
///
/// Errors: Arrow's, for a type it cannot display.
pub fn nested_as_text(batch: &RecordBatch) -> Result<RecordBatch, ArrowError> {
    if !batch.schema().fields().iter().any(|f| nested(f.data_type())) {
        return Ok(batch.clone());
    }
    // A NULL inside a list or struct prints as `null`; a NULL value stays NULL (an empty field).
    let options = FormatOptions::default().with_null("null");
    let mut fields = Vec::with_capacity(batch.num_columns());
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(batch.num_columns());
    for (f, c) in batch.schema().fields().iter().zip(batch.columns()) {
        if !nested(f.data_type()) {
            fields.push(f.as_ref().clone());
            columns.push(c.clone());
            continue;
        }
        let formatter = ArrayFormatter::try_new(c.as_ref(), &options)?;
        let text: StringArray = (0..c.len())
            .map(|i| c.is_valid(i).then(|| formatter.value(i).to_string()))
            .collect();
        fields.push(Field::new(f.name(), DataType::Utf8, true));
        columns.push(Arc::new(text));
    }
    RecordBatch::try_new(
        Arc::new(Schema::new_with_metadata(fields, batch.schema().metadata().clone())),
        columns,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int64Array, ListArray};
    use arrow::datatypes::Int64Type;

    #[test]
    fn lists_become_text_and_nulls_stay_null() {
        let list = ListArray::from_iter_primitive::<Int64Type, _, _>(vec![Some(vec![Some(1), Some(2)]), None]);
        let batch = RecordBatch::try_from_iter(vec![
            ("k", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
            ("l", Arc::new(list) as ArrayRef),
        ])
        .unwrap();
        let out = nested_as_text(&batch).unwrap();
        let l = out.column(1).as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(l.value(0), "[1, 2]");
        assert!(l.is_null(1));
        assert_eq!(out.column(0).data_type(), &DataType::Int64);
    }
}
