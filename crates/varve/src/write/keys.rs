//! Row keys of a time-series table: the (series key columns..., time column) of each row, encoded
//! in Arrow's row format so that keys compare and hash as bytes. Last-write-wins dedup uses them:
//! within an append ([`last_of_each_key`]) and against stored files ([`KeySet`]).

use std::collections::HashSet;

use arrow::array::{ArrayRef, BooleanArray, RecordBatch, UInt32Array};
use arrow::compute::{cast_with_options, CastOptions};
use arrow::datatypes::{DataType, Schema};
use arrow::row::{RowConverter, Rows, SortField};

use crate::error::{Error, Result};
use crate::format::TableContract;

/// The key columns of `contract`: the series key, then the time column. Empty for a plain table.
pub(crate) fn key_columns(contract: &TableContract) -> Vec<&str> {
    match &contract.time_column {
        Some(t) => contract
            .series_key
            .iter()
            .map(String::as_str)
            .chain(std::iter::once(t.as_str()))
            .collect(),
        None => vec![],
    }
}

/// Encodes the key columns of batches as rows, read as the types of one schema (a file written
/// before a column was widened is read as the table's current type).
struct KeyEncoder {
    names: Vec<String>,
    types: Vec<DataType>,
    converter: RowConverter,
}

impl KeyEncoder {
    /// For the key columns of `contract` in `schema`. Errors: a key column missing from `schema`.
    fn new(schema: &Schema, contract: &TableContract) -> Result<KeyEncoder> {
        let names: Vec<String> = key_columns(contract).into_iter().map(str::to_string).collect();
        let types = names
            .iter()
            .map(|n| Ok(schema.field_with_name(n)?.data_type().clone()))
            .collect::<Result<Vec<_>>>()?;
        let converter = RowConverter::new(types.iter().map(|t| SortField::new(t.clone())).collect())?;
        Ok(KeyEncoder {
            names,
            types,
            converter,
        })
    }

    fn rows(&self, batch: &RecordBatch) -> Result<Rows> {
        // A value that does not fit is an error, never a NULL key.
        let strict = CastOptions {
            safe: false,
            ..Default::default()
        };
        let mut cols: Vec<ArrayRef> = Vec::with_capacity(self.names.len());
        for (name, ty) in self.names.iter().zip(&self.types) {
            let c = batch
                .column_by_name(name)
                .ok_or_else(|| Error::internal(format!("key column {name} missing from a batch")))?;
            cols.push(if c.data_type() == ty {
                c.clone()
            } else {
                cast_with_options(c, ty, &strict)?
            });
        }
        Ok(self.converter.convert_columns(&cols)?)
    }
}

/// A set of row keys (the keys an append writes).
pub(crate) struct KeySet {
    encoder: KeyEncoder,
    rows: HashSet<Box<[u8]>>,
}

impl KeySet {
    /// An empty set for the key columns of `contract` in `schema`.
    ///
    /// Errors: a key column missing from `schema`.
    pub(crate) fn new(schema: &Schema, contract: &TableContract) -> Result<KeySet> {
        Ok(KeySet {
            encoder: KeyEncoder::new(schema, contract)?,
            rows: HashSet::new(),
        })
    }

    /// Adds the keys of every row of `batch`.
    pub(crate) fn insert(&mut self, batch: &RecordBatch) -> Result<()> {
        let rows = self.encoder.rows(batch)?;
        for r in rows.iter() {
            self.rows.insert(r.as_ref().into());
        }
        Ok(())
    }

    /// For each row of `batch`, whether its key is in the set. `batch` needs only the key columns.
    pub(crate) fn contains(&self, batch: &RecordBatch) -> Result<BooleanArray> {
        let rows = self.encoder.rows(batch)?;
        Ok(rows.iter().map(|r| Some(self.rows.contains(r.as_ref()))).collect())
    }
}

/// The rows of `sorted` (sorted by key, rows of one key in input order) that are the last of
/// their key: the later of two rows with one key wins. `None` when every key is unique.
pub(crate) fn last_of_each_key(sorted: &RecordBatch, contract: &TableContract) -> Result<Option<UInt32Array>> {
    let names = key_columns(contract);
    if names.is_empty() || sorted.num_rows() < 2 {
        return Ok(None);
    }
    let rows = KeyEncoder::new(&sorted.schema(), contract)?.rows(sorted)?;
    let n = sorted.num_rows();
    let kept: Vec<u32> = (0..n)
        .filter(|&i| i + 1 == n || rows.row(i) != rows.row(i + 1))
        .map(|i| i as u32)
        .collect();
    Ok((kept.len() < n).then(|| UInt32Array::from(kept)))
}
