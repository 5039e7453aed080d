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
            let b = if lower {
                f.lower_bounds().get(&id)
            } else {
                f.upper_bounds().get(&id)
            };
            b.and_then(|d| datum_to_scalar(d, &dt))
                .unwrap_or_else(|| ScalarValue::try_from(&dt).unwrap_or(ScalarValue::Null))
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
    /// statistics merge these marked inexact (`query::provider`), so that no aggregate is answered
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
                    if let Some(v) = f.lower_bounds().get(&id).and_then(|d| datum_to_scalar(d, dt)) {
                        c.min_value = Precision::Exact(v);
                    }
                    if let Some(v) = f.upper_bounds().get(&id).and_then(|d| datum_to_scalar(d, dt)) {
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
