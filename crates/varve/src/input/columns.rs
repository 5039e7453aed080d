//! Column names of a header, and joining a date column and a time-of-day column into one.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch, StringArray};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, Schema};

use crate::error::{cut, Error, Result};

/// The column names of a header as the file has them, trimmed; an empty name becomes
/// `column_<n>` (1-based position). A name given twice is an error naming both positions, unless
/// `rename` is set: then the second is `<name>_2`, the third `<name>_3`, ... (skipping names the
/// header has already).
///
/// Errors: [`crate::ErrorKind::InvalidInput`], e.g. `columns 3 and 4 are both named "value"`.
pub(crate) fn header_names(input: &str, raw: &[String], rename: bool) -> Result<Vec<String>> {
    let mut names: Vec<String> = raw
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let n = n.trim();
            if n.is_empty() {
                format!("column_{}", i + 1)
            } else {
                n.to_string()
            }
        })
        .collect();
    let mut first: HashMap<String, usize> = HashMap::new();
    for i in 0..names.len() {
        match first.get(&names[i]) {
            None => {
                first.insert(names[i].clone(), i);
            }
            Some(&j) if !rename => {
                return Err(Error::invalid(format!(
                    "{input}: columns {} and {} are both named \"{}\"; rename one in the header, or give \
                     --rename-duplicates (Python: rename_duplicates=True) to read them as {1}, {1}_2",
                    j + 1,
                    i + 1,
                    cut(&names[i])
                )));
            }
            Some(_) => {
                let base = names[i].clone();
                let mut k = 2;
                let mut fresh = format!("{base}_{k}");
                while first.contains_key(&fresh) || names.contains(&fresh) {
                    k += 1;
                    fresh = format!("{base}_{k}");
                }
                first.insert(fresh.clone(), i);
                names[i] = fresh;
            }
        }
    }
    Ok(names)
}

/// Joins several columns of `batch` (e.g. a date and a time of day) with a space into one string
/// column `name`, put first; a row with any part null is null.
///
/// Errors: [`crate::ErrorKind::InvalidInput`] when a part is missing from the batch or `name` is
/// taken by an input column.
pub fn join_time_columns(batch: &RecordBatch, parts: &[String], name: &str) -> Result<RecordBatch> {
    let mut cols: Vec<ArrayRef> = Vec::new();
    for p in parts {
        let c = batch
            .column_by_name(p)
            .ok_or_else(|| Error::invalid(format!("time column {p:?} is not in the input")))?;
        cols.push(cast(c, &DataType::Utf8)?);
    }
    if batch.schema().fields().iter().any(|f| f.name() == name) {
        return Err(Error::invalid(format!(
            "--time-name {name:?}: the input has a column of that name already"
        )));
    }
    let texts: Vec<&StringArray> = cols.iter().map(|c| c.as_string::<i32>()).collect();
    let joined: StringArray = (0..batch.num_rows())
        .map(|i| {
            if texts.iter().any(|c| c.is_null(i)) {
                return None;
            }
            Some(texts.iter().map(|c| c.value(i)).collect::<Vec<_>>().join(" "))
        })
        .collect();
    let mut fields: Vec<Field> = batch.schema().fields().iter().map(|f| f.as_ref().clone()).collect();
    let mut arrays = batch.columns().to_vec();
    fields.insert(0, Field::new(name, DataType::Utf8, true));
    arrays.insert(0, Arc::new(joined));
    Ok(RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn repeated_names_are_refused_or_renamed() {
        let e = header_names("f.csv", &s(&["time", "value", "value"]), false).unwrap_err();
        assert!(e.message().contains("columns 2 and 3 are both named \"value\""), "{e}");
        let n = header_names("f.csv", &s(&["v", "v", "v_2", "v", ""]), true).unwrap();
        assert_eq!(n, s(&["v", "v_3", "v_2", "v_4", "column_5"]));
    }
}
