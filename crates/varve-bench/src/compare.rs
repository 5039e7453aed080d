//! Comparing two query results, the way a reference check needs: values are normalised across
//! engines (integers of any width and decimals with scale 0 as integers, floats and other
//! decimals as f64, timestamps of any unit or zone and dates as µs since the epoch, strings), and
//! floats match within a relative 1e-6 (aggregates summed in another order differ in the last
//! bits). Results are compared as sorted sets of rows, then, for a query with an outer ORDER BY,
//! in the order given.

use std::cmp::Ordering;
use std::fmt;

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Float64Type, Int64Type, Schema, TimeUnit, TimestampMicrosecondType};

/// One normalised value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer (or a decimal without fraction digits).
    Int(i128),
    /// A floating-point number (or a decimal with fraction digits).
    Float(f64),
    /// A string.
    Str(String),
    /// A time, µs since the epoch (UTC).
    Time(i64),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => write!(f, "NULL"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::Time(t) => match chrono::DateTime::from_timestamp_micros(*t) {
                Some(d) => write!(f, "{}", d.format("%Y-%m-%dT%H:%M:%S%.6fZ")),
                None => write!(f, "{t}µs"),
            },
        }
    }
}

fn rank(v: &Value) -> u8 {
    match v {
        Value::Null => 0,
        Value::Bool(_) => 1,
        Value::Int(_) | Value::Float(_) => 2,
        Value::Str(_) => 3,
        Value::Time(_) => 4,
    }
}

fn as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) => Some(*i as f64),
        Value::Float(x) => Some(*x),
        _ => None,
    }
}

fn order(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Int(x), Value::Int(y)) => x.cmp(y),
        (Value::Str(x), Value::Str(y)) => x.cmp(y),
        (Value::Time(x), Value::Time(y)) => x.cmp(y),
        _ => match (as_f64(a), as_f64(b)) {
            (Some(x), Some(y)) => x.total_cmp(&y),
            _ => rank(a).cmp(&rank(b)),
        },
    }
}

/// Whether two values are the same answer: equal, or floats within a relative 1e-6 (an integer
/// and a float only when equal).
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Int(x), Value::Float(y)) | (Value::Float(y), Value::Int(x)) => *x as f64 == *y,
        _ => match (as_f64(a), as_f64(b)) {
            (Some(x), Some(y)) => {
                (x.is_nan() && y.is_nan()) || x == y || (x - y).abs() <= 1e-6 * x.abs().max(y.abs()).max(1.0)
            }
            _ => a == b,
        },
    }
}

/// A normalised result: column names and rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Rows {
    /// Column names, lower-cased.
    pub columns: Vec<String>,
    /// Rows, sorted.
    pub rows: Vec<Vec<Value>>,
}

fn column_values(col: &dyn Array) -> Result<Vec<Value>, String> {
    let n = col.len();
    let dt = col.data_type().clone();
    let mut out = Vec::with_capacity(n);
    let err = |e: arrow::error::ArrowError| e.to_string();
    match dt {
        DataType::Null => out.resize(n, Value::Null),
        DataType::Boolean => {
            let a = col.as_boolean();
            out.extend((0..n).map(|i| {
                if a.is_null(i) {
                    Value::Null
                } else {
                    Value::Bool(a.value(i))
                }
            }));
        }
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32 => {
            let c = cast(col, &DataType::Int64).map_err(err)?;
            let a = c.as_primitive::<Int64Type>();
            out.extend((0..n).map(|i| {
                if a.is_null(i) {
                    Value::Null
                } else {
                    Value::Int(a.value(i) as i128)
                }
            }));
        }
        DataType::UInt64 => {
            let a = col.as_primitive::<arrow::datatypes::UInt64Type>();
            out.extend((0..n).map(|i| {
                if a.is_null(i) {
                    Value::Null
                } else {
                    Value::Int(a.value(i) as i128)
                }
            }));
        }
        DataType::Decimal128(_, 0) => {
            let a = col.as_primitive::<arrow::datatypes::Decimal128Type>();
            out.extend((0..n).map(|i| {
                if a.is_null(i) {
                    Value::Null
                } else {
                    Value::Int(a.value(i))
                }
            }));
        }
        DataType::Float16
        | DataType::Float32
        | DataType::Float64
        | DataType::Decimal128(..)
        | DataType::Decimal256(..) => {
            let c = cast(col, &DataType::Float64).map_err(err)?;
            let a = c.as_primitive::<Float64Type>();
            out.extend((0..n).map(|i| {
                if a.is_null(i) {
                    Value::Null
                } else {
                    Value::Float(a.value(i))
                }
            }));
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Dictionary(..) => {
            let c = cast(col, &DataType::Utf8).map_err(err)?;
            let a = c.as_string::<i32>();
            out.extend((0..n).map(|i| {
                if a.is_null(i) {
                    Value::Null
                } else {
                    Value::Str(a.value(i).to_string())
                }
            }));
        }
        DataType::Timestamp(..) | DataType::Date32 | DataType::Date64 => {
            let c = cast(col, &DataType::Timestamp(TimeUnit::Microsecond, None)).map_err(err)?;
            let a = c.as_primitive::<TimestampMicrosecondType>();
            out.extend((0..n).map(|i| {
                if a.is_null(i) {
                    Value::Null
                } else {
                    Value::Time(a.value(i))
                }
            }));
        }
        other => return Err(format!("result column of type {other} cannot be compared")),
    }
    Ok(out)
}

impl Rows {
    /// Normalises a result: its schema and batches, rows in the order given.
    ///
    /// Errors: a column type that has no normal form (lists, structs, binary).
    pub fn from_batches(schema: &Schema, batches: &[RecordBatch]) -> Result<Rows, String> {
        let columns: Vec<String> = schema.fields().iter().map(|f| f.name().to_lowercase()).collect();
        let mut rows = vec![];
        for b in batches {
            let cols: Vec<Vec<Value>> = b
                .columns()
                .iter()
                .map(|c| column_values(c.as_ref()))
                .collect::<Result<_, _>>()?;
            for i in 0..b.num_rows() {
                rows.push(cols.iter().map(|c| c[i].clone()).collect());
            }
        }
        Ok(Rows { columns, rows })
    }

    /// The same rows, sorted (as a set, for comparing answers whose order is not specified).
    pub fn sorted(&self) -> Rows {
        let mut rows = self.rows.clone();
        rows.sort_by(|a: &Vec<Value>, b: &Vec<Value>| {
            a.iter()
                .zip(b)
                .map(|(x, y)| order(x, y))
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        });
        Rows {
            columns: self.columns.clone(),
            rows,
        }
    }

    /// `None` when `self` and `other` hold the same columns and rows in the same order; else
    /// what differs first (row numbers count from 0 in this order).
    pub fn diff(&self, other: &Rows) -> Option<String> {
        if self.columns != other.columns {
            return Some(format!("columns {:?} vs {:?}", self.columns, other.columns));
        }
        if self.rows.len() != other.rows.len() {
            return Some(format!("{} rows vs {} rows", self.rows.len(), other.rows.len()));
        }
        for (i, (a, b)) in self.rows.iter().zip(&other.rows).enumerate() {
            for (j, (x, y)) in a.iter().zip(b).enumerate() {
                if !same(x, y) {
                    return Some(format!(
                        "row {i}, column {}: {x} vs {y}",
                        self.columns.get(j).map(String::as_str).unwrap_or("?")
                    ));
                }
            }
        }
        None
    }
}

/// Compares two answers to one query: first as sorted sets of rows, then, when `ordered` (the
/// query has an outer ORDER BY on unique keys), in the order given. `None` when they agree.
pub fn compare(ours: &Rows, theirs: &Rows, ordered: bool) -> Option<String> {
    if let Some(d) = ours.sorted().diff(&theirs.sorted()) {
        return Some(d.replace("row ", "sorted row "));
    }
    if ordered {
        if let Some(d) = ours.diff(theirs) {
            return Some(format!("the same rows in another order: {d}"));
        }
    }
    None
}
