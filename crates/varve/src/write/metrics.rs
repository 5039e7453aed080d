//! The Iceberg metrics of a data file Varve writes (Iceberg spec, "Manifests": record count,
//! column sizes, value, null and NaN counts, lower and upper bounds).
//!
//! Rows and NaNs are counted as batches are written; everything else is read from the written
//! file's footer: column sizes, and null counts and bounds from the column chunks' statistics
//! (Parquet spec, "Statistics"), which the Parquet encoder computes anyway. A bound is kept only
//! when every row group's is exact (Parquet truncates strings over 64 bytes: such a column gets
//! none), and a float column holding NaN gets none, so that no filter prunes a file wrongly.

use std::collections::HashMap;

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Float32Type, Float64Type, SchemaRef, TimeUnit};
use iceberg::spec::{DataContentType, DataFile, DataFileBuilder, DataFileFormat, Datum, Literal, Struct};
use parquet::file::metadata::ParquetMetaData;
use parquet::file::statistics::Statistics;

use crate::error::{Error, Result};
use crate::format::TableContract;

/// The metrics of one data file being written: rows and NaNs counted as it is written, the rest
/// read from its footer by [`FileMetrics::finish`].
pub(crate) struct FileMetrics {
    schema: SchemaRef,
    rows: u64,
    /// NaN values per field id, for float columns.
    nan_counts: HashMap<i32, u64>,
}

impl FileMetrics {
    /// The metrics of a file of `schema` (whose fields carry their Iceberg field ids).
    pub(crate) fn new(schema: SchemaRef) -> Self {
        let nan_counts = (0..schema.fields().len())
            .filter(|&i| schema.field(i).data_type().is_floating())
            .filter_map(|i| field_id(&schema, i).map(|id| (id, 0)))
            .collect();
        FileMetrics {
            schema,
            rows: 0,
            nan_counts,
        }
    }

    /// Adds a batch written to the file (of the file's schema).
    pub(crate) fn update(&mut self, batch: &RecordBatch) {
        self.add_rows(batch.num_rows());
        for (i, col) in batch.columns().iter().enumerate() {
            if col.data_type().is_floating() {
                self.add_nans(i, count_nan(col));
            }
        }
    }

    /// Counts `n` rows written to the file.
    pub(crate) fn add_rows(&mut self, n: usize) {
        self.rows += n as u64;
    }

    /// Counts `n` NaN values written to column `i` (nothing for a column that is not a float).
    pub(crate) fn add_nans(&mut self, i: usize, n: u64) {
        if let Some(id) = field_id(&self.schema, i) {
            if let Some(count) = self.nan_counts.get_mut(&id) {
                *count += n;
            }
        }
    }

    /// The data file entry, given the written file's Parquet metadata and size in bytes.
    ///
    /// Errors: the entry cannot be built (an internal error).
    pub(crate) fn finish(
        self,
        meta: &ParquetMetaData,
        contract: &TableContract,
        partition: Option<i32>,
        location: &str,
        size: u64,
    ) -> Result<DataFile> {
        let mut column_sizes: HashMap<i32, u64> = HashMap::new();
        let mut value_counts: HashMap<i32, u64> = HashMap::new();
        let mut null_counts: HashMap<i32, u64> = HashMap::new();
        let (mut lower, mut upper): (HashMap<i32, Datum>, HashMap<i32, Datum>) = Default::default();
        for (i, field) in self.schema.fields().iter().enumerate() {
            let Some(id) = field_id(&self.schema, i) else {
                continue;
            };
            value_counts.insert(id, self.rows);
            let mut nulls = Some(0u64);
            let mut bounds: Option<Option<(Datum, Datum)>> = None;
            for rg in meta.row_groups() {
                // Varve's columns are primitive: column i is leaf i.
                let Some(chunk) = rg.columns().get(i) else {
                    continue;
                };
                *column_sizes.entry(id).or_default() += chunk.compressed_size().max(0) as u64;
                let stats = chunk.statistics();
                let rg_nulls = stats.and_then(|s| s.null_count_opt());
                nulls = nulls.zip(rg_nulls).map(|(a, b)| a + b);
                if rg_nulls == Some(chunk.num_values().max(0) as u64) {
                    continue; // only NULLs: no bound to add
                }
                let rg_bounds = stats.and_then(|s| exact_bounds(s, field.data_type()));
                bounds = Some(match (bounds, rg_bounds) {
                    (None, b) => b,
                    (Some(Some((lo, hi))), Some((l, h))) => {
                        Some((if l < lo { l } else { lo }, if h > hi { h } else { hi }))
                    }
                    _ => None,
                });
            }
            if let Some(n) = nulls {
                null_counts.insert(id, n);
            }
            let has_nan = self.nan_counts.get(&id).is_some_and(|n| *n > 0);
            if let (Some(Some((lo, hi))), false) = (bounds, has_nan) {
                lower.insert(id, lo);
                upper.insert(id, hi);
            }
        }
        let partition = match partition {
            Some(p) => Struct::from_iter([Some(Literal::int(p))]),
            None => Struct::empty(),
        };
        let mut b = DataFileBuilder::default();
        b.content(DataContentType::Data)
            .file_path(location.to_string())
            .file_format(DataFileFormat::Parquet)
            .partition(partition)
            .partition_spec_id(0)
            .record_count(self.rows)
            .file_size_in_bytes(size)
            .column_sizes(column_sizes)
            .value_counts(value_counts)
            .null_value_counts(null_counts)
            .nan_value_counts(self.nan_counts)
            .lower_bounds(lower)
            .upper_bounds(upper);
        if contract.time_column.is_some() {
            b.sort_order_id(1);
        }
        b.build().map_err(|e| Error::internal(format!("data file entry: {e}")))
    }
}

/// The exact lower and upper bound of a column chunk of Arrow type `ty` as Iceberg datums, for the
/// types whose bounds help pruning; `None` when the chunk has none or they are truncated.
fn exact_bounds(stats: &Statistics, ty: &DataType) -> Option<(Datum, Datum)> {
    if !stats.min_is_exact() || !stats.max_is_exact() {
        return None;
    }
    match (stats, ty) {
        (Statistics::Int32(s), DataType::Int32) => Some((Datum::int(*s.min_opt()?), Datum::int(*s.max_opt()?))),
        (Statistics::Int32(s), DataType::Date32) => Some((Datum::date(*s.min_opt()?), Datum::date(*s.max_opt()?))),
        (Statistics::Int64(s), DataType::Int64) => Some((Datum::long(*s.min_opt()?), Datum::long(*s.max_opt()?))),
        (Statistics::Int64(s), DataType::Timestamp(TimeUnit::Microsecond, tz)) => {
            let (a, b) = (*s.min_opt()?, *s.max_opt()?);
            Some(match tz {
                Some(_) => (Datum::timestamptz_micros(a), Datum::timestamptz_micros(b)),
                None => (Datum::timestamp_micros(a), Datum::timestamp_micros(b)),
            })
        }
        // Parquet's float bounds leave NaN out and widen a zero bound to -0.0 / +0.0 (Parquet
        // spec, "Statistics"): still bounds. A column with NaN gets none (see `finish`).
        (Statistics::Float(s), DataType::Float32) => Some((Datum::float(*s.min_opt()?), Datum::float(*s.max_opt()?))),
        (Statistics::Double(s), DataType::Float64) => {
            Some((Datum::double(*s.min_opt()?), Datum::double(*s.max_opt()?)))
        }
        (Statistics::ByteArray(s), DataType::Utf8) => {
            let lo = std::str::from_utf8(s.min_opt()?.data()).ok()?;
            let hi = std::str::from_utf8(s.max_opt()?.data()).ok()?;
            Some((Datum::string(lo), Datum::string(hi)))
        }
        (Statistics::Boolean(s), DataType::Boolean) => Some((Datum::bool(*s.min_opt()?), Datum::bool(*s.max_opt()?))),
        _ => None,
    }
}

fn field_id(schema: &SchemaRef, i: usize) -> Option<i32> {
    schema
        .field(i)
        .metadata()
        .get(parquet::arrow::PARQUET_FIELD_ID_META_KEY)?
        .parse()
        .ok()
}

/// NaN values of a float column (0 for other types).
pub(crate) fn count_nan(col: &ArrayRef) -> u64 {
    match col.data_type() {
        DataType::Float64 => col
            .as_primitive::<Float64Type>()
            .iter()
            .flatten()
            .filter(|v| v.is_nan())
            .count() as u64,
        DataType::Float32 => col
            .as_primitive::<Float32Type>()
            .iter()
            .flatten()
            .filter(|v| v.is_nan())
            .count() as u64,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use arrow::array::{Array, BooleanArray, Float64Array, Int64Array, StringArray};
    use arrow::datatypes::{Field, Schema};
    use parquet::file::properties::{EnabledStatistics, WriterProperties};

    use crate::write::parquet::ParquetWriter;

    fn with_id(f: Field, id: i32) -> Field {
        f.with_metadata(HashMap::from([(
            parquet::arrow::PARQUET_FIELD_ID_META_KEY.to_string(),
            id.to_string(),
        )]))
    }

    /// The bounds and counts read from the footer equal a plain computation over the values, for
    /// row groups with NULLs only, NaN, negative zero, strings over 64 bytes and booleans.
    #[test]
    fn footer_metrics_match_the_values() {
        let schema = Arc::new(Schema::new(vec![
            with_id(Field::new("n", DataType::Int64, true), 1),
            with_id(Field::new("x", DataType::Float64, true), 2),
            with_id(Field::new("s", DataType::Utf8, true), 3),
            with_id(Field::new("long", DataType::Utf8, true), 4),
            with_id(Field::new("b", DataType::Boolean, true), 5),
            with_id(Field::new("empty", DataType::Int64, true), 6),
            with_id(Field::new("nan", DataType::Float64, true), 7),
        ]));
        let batch = |n: Vec<Option<i64>>, x: Vec<Option<f64>>, s: Vec<Option<&str>>, b: Vec<Option<bool>>| {
            let len = n.len();
            let long: Vec<Option<String>> = s.iter().map(|v| v.map(|v| format!("{v}{}", "y".repeat(70)))).collect();
            let nan: Vec<Option<f64>> = (0..len)
                .map(|i| Some(if i == 1 { f64::NAN } else { i as f64 }))
                .collect();
            RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(Int64Array::from(n)),
                    Arc::new(Float64Array::from(x)),
                    Arc::new(StringArray::from(s)),
                    Arc::new(StringArray::from(long)),
                    Arc::new(BooleanArray::from(b)),
                    Arc::new(Int64Array::from(vec![None::<i64>; len])),
                    Arc::new(Float64Array::from(nan)),
                ],
            )
            .unwrap()
        };
        let groups = [
            batch(vec![None, None], vec![None, None], vec![None, None], vec![None, None]),
            batch(
                vec![Some(5), None, Some(-3)],
                vec![Some(-0.0), Some(2.5), None],
                vec![Some("m"), Some("b"), None],
                vec![Some(true), None, Some(true)],
            ),
            batch(
                vec![Some(40), Some(7)],
                vec![Some(-1.5), Some(0.0)],
                vec![Some("z"), Some("c")],
                vec![Some(true), Some(true)],
            ),
        ];
        let props = WriterProperties::builder()
            .set_statistics_enabled(EnabledStatistics::Page)
            .build();
        let mut w = ParquetWriter::new(&schema, props, 1).unwrap();
        let mut metrics = FileMetrics::new(schema.clone());
        for g in &groups {
            w.write_row_group(std::slice::from_ref(g)).unwrap();
            metrics.update(g);
        }
        let (_, meta) = w.finish().unwrap();
        let contract = TableContract::default();
        let f = metrics
            .finish(&meta, &contract, None, "memory:///f.parquet", 1)
            .unwrap();

        assert_eq!(f.record_count(), 7);
        for id in 1..=7 {
            assert_eq!(f.value_counts().get(&id), Some(&7), "values of {id}");
        }
        let nulls = |id: i32| *f.null_value_counts().get(&id).unwrap();
        assert_eq!((nulls(1), nulls(2), nulls(3), nulls(5), nulls(6)), (3, 3, 3, 3, 7));
        assert_eq!(f.nan_value_counts().get(&2), Some(&0));
        assert_eq!(f.nan_value_counts().get(&7), Some(&3));
        let (lo, hi) = (f.lower_bounds(), f.upper_bounds());
        assert_eq!(
            (lo.get(&1), hi.get(&1)),
            (Some(&Datum::long(-3)), Some(&Datum::long(40)))
        );
        assert_eq!(
            (lo.get(&3), hi.get(&3)),
            (Some(&Datum::string("b")), Some(&Datum::string("z")))
        );
        assert_eq!(
            (lo.get(&5), hi.get(&5)),
            (Some(&Datum::bool(true)), Some(&Datum::bool(true)))
        );
        let double = |d: Option<&Datum>| match d.map(|d| d.literal()) {
            Some(iceberg::spec::PrimitiveLiteral::Double(v)) => v.0,
            other => panic!("not a double: {other:?}"),
        };
        assert_eq!((double(lo.get(&2)), double(hi.get(&2))), (-1.5, 2.5));
        // No bound: strings over 64 bytes (truncated), a column of NULLs, a column with NaN.
        for id in [4, 6, 7] {
            assert!(lo.get(&id).is_none() && hi.get(&id).is_none(), "bounds of {id}");
        }
        assert!(groups.iter().all(|g| g.column(5).null_count() == g.num_rows()));
    }
}
