//! Column statistics of data files (their Iceberg bounds and counts from the manifests) as
//! DataFusion's [`PruningStatistics`], so that a predicate can rule out whole files before any is
//! opened (scans, deletes), and as each scanned file's `Statistics`, so that DataFusion orders a
//! scan's files for a sort (newest first for `ORDER BY time DESC`) and skips those a `LIMIT`'s
//! running threshold rules out.

use std::collections::HashSet;
use std::sync::Arc;

use arrow::array::{ArrayRef, BooleanArray, UInt64Array};
use arrow::datatypes::{DataType, SchemaRef, TimeUnit};
use datafusion::common::pruning::PruningStatistics;
use datafusion::common::stats::Precision;
use datafusion::common::{Column, ColumnStatistics, ScalarValue, Statistics};
use iceberg::spec::{DataFile, Datum, PrimitiveLiteral};

/// Per-file column statistics from the manifests, for DataFusion's `PruningPredicate`.
pub(crate) struct FileStats<'a> {
    pub(crate) files: &'a [DataFile],
    pub(crate) schema: &'a SchemaRef,
}

impl FileStats<'_> {
    fn field(&self, column: &Column) -> Option<(i32, DataType)> {
        let f = self.schema.field_with_name(&column.name).ok()?;
        let id = f
            .metadata()
            .get(parquet::arrow::PARQUET_FIELD_ID_META_KEY)?
            .parse()
            .ok()?;
        Some((id, f.data_type().clone()))
    }

    fn bounds(&self, column: &Column, lower: bool) -> Option<ArrayRef> {
        let (id, dt) = self.field(column)?;
        let values = self.files.iter().map(|f| {
            bound(f, id, &dt, lower).unwrap_or_else(|| ScalarValue::try_from(&dt).unwrap_or(ScalarValue::Null))
        });
        ScalarValue::iter_to_array(values).ok()
    }
}

impl FileStats<'_> {
    /// File `i`'s statistics as DataFusion keeps them for one file of a scan (its
    /// `PartitionedFile`): rows, bytes (inexact: Parquet, not Arrow), and each column's bounds and
    /// null count from the manifest. Bounds are marked exact, as DataFusion's pruning of a file by
    /// its statistics (the `FilePruner` of a scan, updated by a `TopK`'s dynamic filter) and its
    /// ordering of a scan's files by them (sort pushdown) need: an Iceberg bound may be wider than
    /// the values (a truncated string bound), which both only read as a bound. The scan's own
    /// statistics merge these marked inexact (`query::scan::provider`), so that no aggregate is answered
    /// from them.
    pub(crate) fn file_statistics(&self, i: usize) -> Statistics {
        let f = &self.files[i];
        let column_statistics = self
            .schema
            .fields()
            .iter()
            .map(|field| {
                let mut c = ColumnStatistics::new_unknown();
                let id: Option<i32> = field
                    .metadata()
                    .get(parquet::arrow::PARQUET_FIELD_ID_META_KEY)
                    .and_then(|v| v.parse().ok());
                if let Some(id) = id {
                    let dt = field.data_type();
                    if let Some(v) = bound(f, id, dt, true) {
                        c.min_value = Precision::Exact(v);
                    }
                    if let Some(v) = bound(f, id, dt, false) {
                        c.max_value = Precision::Exact(v);
                    }
                    if let Some(n) = f.null_value_counts().get(&id) {
                        c.null_count = Precision::Exact(*n as usize);
                    }
                }
                c
            })
            .collect();
        Statistics {
            num_rows: Precision::Exact(f.record_count() as usize),
            total_byte_size: Precision::Inexact(f.file_size_in_bytes() as usize),
            column_statistics,
        }
    }
}

/// File `f`'s bound of column `id` (Arrow type `dt`) when it speaks for every value: a float
/// column's bounds leave NaN out (Iceberg spec, "Manifests": NaN is counted, not bounded), so a
/// file that counts NaN there, or does not count them (a file another engine wrote), has none.
fn bound(f: &DataFile, id: i32, dt: &DataType, lower: bool) -> Option<ScalarValue> {
    if matches!(dt, DataType::Float16 | DataType::Float32 | DataType::Float64) && may_hold_nan(f, id) {
        return None;
    }
    let b = match lower {
        true => f.lower_bounds().get(&id),
        false => f.upper_bounds().get(&id),
    };
    b.and_then(|d| datum_to_scalar(d, dt))
}

/// Whether file `f` may hold NaN in column `id`: it counts some there, or does not count them
/// (a column that is not a float counts none and is never asked).
pub(crate) fn may_hold_nan(f: &DataFile, id: i32) -> bool {
    f.nan_value_counts().get(&id).is_none_or(|n| *n > 0)
}

/// An Iceberg bound as a DataFusion scalar of the column's Arrow type.
fn datum_to_scalar(d: &Datum, dt: &DataType) -> Option<ScalarValue> {
    Some(match (d.literal(), dt) {
        (PrimitiveLiteral::Boolean(v), DataType::Boolean) => ScalarValue::Boolean(Some(*v)),
        (PrimitiveLiteral::Int(v), DataType::Int32) => ScalarValue::Int32(Some(*v)),
        (PrimitiveLiteral::Int(v), DataType::Date32) => ScalarValue::Date32(Some(*v)),
        (PrimitiveLiteral::Long(v), DataType::Int64) => ScalarValue::Int64(Some(*v)),
        (PrimitiveLiteral::Long(v), DataType::Timestamp(TimeUnit::Microsecond, tz)) => {
            ScalarValue::TimestampMicrosecond(Some(*v), tz.clone())
        }
        (PrimitiveLiteral::Float(v), DataType::Float32) => ScalarValue::Float32(Some(v.0)),
        (PrimitiveLiteral::Double(v), DataType::Float64) => ScalarValue::Float64(Some(v.0)),
        (PrimitiveLiteral::String(v), DataType::Utf8) => ScalarValue::Utf8(Some(v.clone())),
        _ => return None,
    })
}

impl PruningStatistics for FileStats<'_> {
    fn min_values(&self, column: &Column) -> Option<ArrayRef> {
        self.bounds(column, true)
    }

    fn max_values(&self, column: &Column) -> Option<ArrayRef> {
        self.bounds(column, false)
    }

    fn num_containers(&self) -> usize {
        self.files.len()
    }

    fn null_counts(&self, column: &Column) -> Option<ArrayRef> {
        let (id, _) = self.field(column)?;
        let v: UInt64Array = self
            .files
            .iter()
            .map(|f| f.null_value_counts().get(&id).copied())
            .collect();
        Some(Arc::new(v))
    }

    fn row_counts(&self) -> Option<ArrayRef> {
        let v: UInt64Array = self.files.iter().map(|f| Some(f.record_count())).collect();
        Some(Arc::new(v))
    }

    fn contained(&self, _column: &Column, _values: &HashSet<ScalarValue>) -> Option<BooleanArray> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::{Field, Schema};
    use iceberg::spec::{DataContentType, DataFileBuilder, DataFileFormat, Struct};
    use std::collections::HashMap;

    fn file(nan: Option<u64>) -> DataFile {
        let mut b = DataFileBuilder::default();
        b.content(DataContentType::Data)
            .file_path("f.parquet".to_string())
            .file_format(DataFileFormat::Parquet)
            .partition(Struct::empty())
            .record_count(3)
            .file_size_in_bytes(10)
            .lower_bounds(HashMap::from([(1, Datum::double(1.5))]))
            .upper_bounds(HashMap::from([(1, Datum::double(1.5))]));
        if let Some(n) = nan {
            b.nan_value_counts(HashMap::from([(1, n)]));
        }
        b.build().unwrap()
    }

    /// A float column's bounds speak for a file only when it counts no NaN there: a file written
    /// by another engine with bounds that leave a NaN out is not pruned (nor its column taken as
    /// a constant) by them.
    #[test]
    fn float_bounds_only_for_files_without_nan() {
        let field = Field::new("v", DataType::Float64, true).with_metadata(HashMap::from([(
            parquet::arrow::PARQUET_FIELD_ID_META_KEY.to_string(),
            "1".to_string(),
        )]));
        let schema: SchemaRef = Arc::new(Schema::new(vec![field]));
        let files = [file(Some(0)), file(Some(1)), file(None)];
        let stats = FileStats {
            files: &files,
            schema: &schema,
        };
        let min = stats.min_values(&Column::new_unqualified("v")).unwrap();
        assert_eq!(min.null_count(), 2, "{min:?}");
        assert!(min.is_valid(0));
        assert!(stats.file_statistics(0).column_statistics[0]
            .min_value
            .get_value()
            .is_some());
        assert!(stats.file_statistics(1).column_statistics[0]
            .min_value
            .get_value()
            .is_none());
        assert!(stats.file_statistics(2).column_statistics[0]
            .max_value
            .get_value()
            .is_none());
    }
}
