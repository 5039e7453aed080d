//! Fitting decoded rows to the table's columns: each value goes into its column's type only when
//! it converts without loss, a new field becomes a new column (or is refused with
//! `--refuse-new-fields`), and a record with any value that does not fit, or a time that does not
//! read, is rejected whole with the reason (nothing of it is written, nothing is changed).
//!
//! Conversions that are allowed (all exact): an integer into a float column when |v| ≤ 2^53,
//! an integral float into an integer column, an integer into a narrower integer column in range.
//! Text never becomes a number nor a number text: a JSON producer that sends `"12"` for a numeric
//! column has a bug this should show, not hide.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{
    ArrayRef, BooleanBuilder, Float32Builder, Float64Builder, Int32Builder, Int64Array, Int64Builder, RecordBatch,
    StringArray, StringBuilder, TimestampMicrosecondArray, UInt64Builder,
};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use varve::TimeOptions;

use crate::decode::{RawTime, Row, Value};

/// The columns rows are fitted to: the table's, plus new ones typed by their first value.
#[derive(Debug, Clone)]
pub struct Columns {
    /// The table's time column.
    pub time: String,
    /// Other columns and their types, in table order, then in the order first seen.
    pub types: Vec<(String, DataType)>,
    /// Refuse records with fields the table does not have.
    pub refuse_new: bool,
    /// Fields every record must have (the `--series-key` given): a row without one is refused.
    pub required: Vec<String>,
}

impl Columns {
    /// The columns of an existing table's schema.
    pub fn of_table(schema: &Schema, time: &str, refuse_new: bool) -> Columns {
        Columns {
            time: time.to_string(),
            types: schema
                .fields()
                .iter()
                .filter(|f| f.name() != time)
                .map(|f| (f.name().clone(), f.data_type().clone()))
                .collect(),
            refuse_new,
            required: vec![],
        }
    }

    fn type_of(&self, name: &str) -> Option<&DataType> {
        self.types.iter().find(|(n, _)| n == name).map(|(_, t)| t)
    }
}

/// One record to fit: its Kafka offset and the rows its payload decoded to.
pub struct Decoded {
    pub offset: i64,
    pub rows: Vec<Row>,
}

/// Rows of one chunk, fitted: a batch with the time column first (µs, UTC) and the columns the
/// rows carry, and the records refused (offset, reason).
pub struct Fitted {
    pub batch: Option<RecordBatch>,
    /// The Kafka offset of each row of `batch` (a record may make several rows).
    pub offsets: Vec<i64>,
    pub rejected: Vec<(i64, String)>,
}

enum Builder {
    Int64(Int64Builder),
    Int32(Int32Builder),
    UInt64(UInt64Builder),
    Float64(Float64Builder),
    Float32(Float32Builder),
    Bool(BooleanBuilder),
    Text(StringBuilder),
}

impl Builder {
    fn new(t: &DataType) -> Option<Builder> {
        Some(match t {
            DataType::Int64 => Builder::Int64(Int64Builder::new()),
            DataType::Int32 => Builder::Int32(Int32Builder::new()),
            DataType::UInt64 => Builder::UInt64(UInt64Builder::new()),
            DataType::Float64 => Builder::Float64(Float64Builder::new()),
            DataType::Float32 => Builder::Float32(Float32Builder::new()),
            DataType::Boolean => Builder::Bool(BooleanBuilder::new()),
            DataType::Utf8 => Builder::Text(StringBuilder::new()),
            _ => return None,
        })
    }

    fn len(&self) -> usize {
        use arrow::array::ArrayBuilder;
        match self {
            Builder::Int64(b) => b.len(),
            Builder::Int32(b) => b.len(),
            Builder::UInt64(b) => b.len(),
            Builder::Float64(b) => b.len(),
            Builder::Float32(b) => b.len(),
            Builder::Bool(b) => b.len(),
            Builder::Text(b) => b.len(),
        }
    }

    fn null(&mut self) {
        match self {
            Builder::Int64(b) => b.append_null(),
            Builder::Int32(b) => b.append_null(),
            Builder::UInt64(b) => b.append_null(),
            Builder::Float64(b) => b.append_null(),
            Builder::Float32(b) => b.append_null(),
            Builder::Bool(b) => b.append_null(),
            Builder::Text(b) => b.append_null(),
        }
    }

    /// Appends a value checked by [`fit`].
    fn push(&mut self, v: Fit) {
        match (self, v) {
            (b, Fit::Null) => b.null(),
            (Builder::Int64(b), Fit::I(i)) => b.append_value(i),
            (Builder::Int32(b), Fit::I(i)) => b.append_value(i as i32),
            (Builder::UInt64(b), Fit::U(u)) => b.append_value(u),
            (Builder::Float64(b), Fit::F(f)) => b.append_value(f),
            (Builder::Float32(b), Fit::F(f)) => b.append_value(f as f32),
            (Builder::Bool(b), Fit::B(x)) => b.append_value(x),
            (Builder::Text(b), Fit::T(s)) => b.append_value(s),
            _ => unreachable!("fit checked the type"),
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Builder::Int64(b) => Arc::new(b.finish()),
            Builder::Int32(b) => Arc::new(b.finish()),
            Builder::UInt64(b) => Arc::new(b.finish()),
            Builder::Float64(b) => Arc::new(b.finish()),
            Builder::Float32(b) => Arc::new(b.finish()),
            Builder::Bool(b) => Arc::new(b.finish()),
            Builder::Text(b) => Arc::new(b.finish()),
        }
    }
}

/// One value ready for its column: the column, its type, the value.
type Fitted1 = (String, DataType, Fit);

/// A value converted to its column's type.
enum Fit {
    Null,
    I(i64),
    U(u64),
    F(f64),
    B(bool),
    T(String),
}

/// Integers a float64 holds exactly: up to 2^53.
const EXACT_INT: u64 = 1 << 53;

/// Converts `v` into `t` without loss, or says why not.
fn fit(name: &str, v: &Value, t: &DataType) -> Result<Fit, String> {
    if let Value::Raw(text) = v {
        return fit_text(name, text, t);
    }
    let no = || {
        format!(
            "field {name}: {} cannot be stored in its column of type {t} without loss",
            show(v)
        )
    };
    Ok(match (t, v) {
        (_, Value::Null) => Fit::Null,
        (DataType::Int64, Value::Int(i)) => Fit::I(*i),
        (DataType::Int64, Value::UInt(u)) => Fit::I(i64::try_from(*u).map_err(|_| no())?),
        (DataType::Int64, Value::Float(f)) if f.fract() == 0.0 && f.abs() < 9.2e18 => Fit::I(*f as i64),
        (DataType::Int32, Value::Int(i)) => Fit::I(i32::try_from(*i).map_err(|_| no())? as i64),
        (DataType::Int32, Value::UInt(u)) => Fit::I(i32::try_from(*u).map_err(|_| no())? as i64),
        (DataType::UInt64, Value::UInt(u)) => Fit::U(*u),
        (DataType::UInt64, Value::Int(i)) => Fit::U(u64::try_from(*i).map_err(|_| no())?),
        (DataType::Float64, Value::Float(f)) => Fit::F(*f),
        (DataType::Float64, Value::Int(i)) if i.unsigned_abs() <= EXACT_INT => Fit::F(*i as f64),
        (DataType::Float64, Value::UInt(u)) if *u <= EXACT_INT => Fit::F(*u as f64),
        (DataType::Float32, Value::Float(f)) if (*f as f32) as f64 == *f || f.is_nan() => Fit::F(*f),
        (DataType::Float32, Value::Int(i)) if i.unsigned_abs() <= 1 << 24 => Fit::F(*i as f64),
        (DataType::Boolean, Value::Bool(b)) => Fit::B(*b),
        (DataType::Utf8, Value::Text(s)) => Fit::T(s.clone()),
        (t, _) if Builder::new(t).is_none() => {
            return Err(format!(
                "field {name}: its column's type {t} is not one ingestion writes (integers, floats, booleans, text)"
            ))
        }
        _ => return Err(no()),
    })
}

/// A CSV field read as its column's type.
fn fit_text(name: &str, text: &str, t: &DataType) -> Result<Fit, String> {
    let no = || {
        let shown: String = text.chars().take(60).collect();
        format!("field {name}: {shown:?} does not read as its column's type {t}")
    };
    Ok(match t {
        DataType::Utf8 => Fit::T(text.to_string()),
        DataType::Int64 => Fit::I(text.parse().map_err(|_| no())?),
        DataType::Int32 => Fit::I(text.parse::<i32>().map_err(|_| no())? as i64),
        DataType::Float64 => Fit::F(text.parse().map_err(|_| no())?),
        DataType::Float32 => Fit::F(text.parse::<f32>().map_err(|_| no())? as f64),
        DataType::Boolean => match text {
            "true" => Fit::B(true),
            "false" => Fit::B(false),
            _ => return Err(no()),
        },
        t => {
            return Err(format!(
                "field {name}: its column's type {t} is not one ingestion writes (integers, floats, booleans, text)"
            ))
        }
    })
}

fn show(v: &Value) -> String {
    match v {
        Value::Text(s) | Value::Raw(s) => {
            let s: String = s.chars().take(60).collect();
            format!("text {s:?}")
        }
        Value::Int(i) => format!("integer {i}"),
        Value::UInt(u) => format!("integer {u}"),
        Value::Float(f) => format!("float {f}"),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Null => "null".into(),
    }
}

/// The column type a new field gets from its first value.
fn new_type(v: &Value) -> Option<DataType> {
    match v {
        Value::Null => None,
        Value::Bool(_) => Some(DataType::Boolean),
        Value::Int(_) => Some(DataType::Int64),
        // Iceberg has no unsigned integers: a new column of them is a signed 64-bit one, and a
        // value above its range is refused.
        Value::UInt(_) => Some(DataType::Int64),
        Value::Float(_) => Some(DataType::Float64),
        Value::Text(_) => Some(DataType::Utf8),
        Value::Raw(s) => new_type(&crate::decode::csv_type(s)),
    }
}

/// Converts row times to µs UTC, each row on its own (a bad time rejects only its record).
fn row_micros(t: &RawTime, opts: &TimeOptions, name: &str) -> Result<i64, String> {
    let (array, opts): (ArrayRef, TimeOptions) = match t {
        RawTime::Value(Value::Int(i)) => (Arc::new(Int64Array::from(vec![*i])), opts.clone()),
        RawTime::Value(Value::UInt(u)) => match i64::try_from(*u) {
            Ok(i) => (Arc::new(Int64Array::from(vec![i])), opts.clone()),
            Err(_) => return Err(format!("time {u} is out of range")),
        },
        RawTime::Value(Value::Float(f)) => (Arc::new(arrow::array::Float64Array::from(vec![*f])), opts.clone()),
        RawTime::Value(Value::Raw(s)) if s.parse::<i64>().is_ok() => (
            Arc::new(Int64Array::from(vec![s.parse::<i64>().expect("checked")])),
            opts.clone(),
        ),
        RawTime::Value(Value::Text(s)) | RawTime::Value(Value::Raw(s)) => (
            Arc::new(StringArray::from(vec![s.as_str()])),
            TimeOptions {
                unit: None,
                ..opts.clone()
            },
        ),
        RawTime::Value(v) => return Err(format!("the time field {name} is {}, not a time", v.kind())),
        RawTime::Scaled(v, unit) => {
            let o = TimeOptions {
                unit: Some(*unit),
                format: None,
                origin: None,
                ..opts.clone()
            };
            (Arc::new(Int64Array::from(vec![*v])), o)
        }
    };
    if matches!(array.data_type(), DataType::Int64 | DataType::Float64) && opts.unit.is_none() {
        return Err(format!(
            "the time field {name} is a number: give its unit with --time-unit"
        ));
    }
    match varve::times_to_micros(&array, name, &opts) {
        Ok(v) => Ok(v[0]),
        Err(e) => {
            let m = e.message().to_string();
            // "column t, row 1: ..." reads oddly for one record.
            Err(m.replacen(", row 1", "", 1))
        }
    }
}

/// Fits the decoded records of one chunk to `columns` (adding new columns to it).
pub fn fit_rows(records: &[Decoded], columns: &mut Columns, time: &TimeOptions) -> Fitted {
    let mut times: Vec<i64> = Vec::new();
    let mut offsets: Vec<i64> = Vec::new();
    let mut builders: HashMap<String, Builder> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut rejected = Vec::new();
    'records: for rec in records {
        // Check every row of the record first: a rejected record leaves nothing behind.
        let mut ready: Vec<(i64, Vec<Fitted1>)> = Vec::with_capacity(rec.rows.len());
        let mut new_cols: Vec<(String, DataType)> = Vec::new();
        for row in &rec.rows {
            let micros = match row_micros(&row.time, time, &columns.time) {
                Ok(m) => m,
                Err(e) => {
                    rejected.push((rec.offset, e));
                    continue 'records;
                }
            };
            if let Some(k) = columns
                .required
                .iter()
                .find(|k| !row.values.iter().any(|(n, v)| n == *k && *v != Value::Null))
            {
                rejected.push((rec.offset, format!("no value for the series key field {k}")));
                continue 'records;
            }
            let mut fits = Vec::with_capacity(row.values.len());
            for (name, v) in &row.values {
                let t = match columns
                    .type_of(name)
                    .or_else(|| new_cols.iter().find(|(n, _)| n == name).map(|(_, t)| t))
                {
                    Some(t) => t.clone(),
                    None if *v == Value::Null => continue,
                    None if columns.refuse_new => {
                        rejected.push((
                            rec.offset,
                            format!("field {name} is not a column of the table (--refuse-new-fields)"),
                        ));
                        continue 'records;
                    }
                    None => {
                        let t = new_type(v).expect("not null");
                        new_cols.push((name.clone(), t.clone()));
                        t
                    }
                };
                match fit(name, v, &t) {
                    Ok(f) => fits.push((name.clone(), t, f)),
                    Err(e) => {
                        rejected.push((rec.offset, e));
                        continue 'records;
                    }
                }
            }
            ready.push((micros, fits));
        }
        columns.types.extend(new_cols);
        for (micros, fits) in ready {
            let n = times.len();
            times.push(micros);
            offsets.push(rec.offset);
            for (name, t, f) in fits {
                let b = builders.entry(name.clone()).or_insert_with(|| {
                    order.push(name.clone());
                    let mut b = Builder::new(&t).expect("fit checked the type");
                    for _ in 0..n {
                        b.null();
                    }
                    b
                });
                // A field given twice in one row was kept once by the decoder.
                if b.len() == n {
                    b.push(f);
                }
            }
            for b in builders.values_mut() {
                if b.len() < n + 1 {
                    b.null();
                }
            }
        }
    }
    if times.is_empty() {
        return Fitted {
            batch: None,
            offsets,
            rejected,
        };
    }
    let mut fields = vec![Field::new(
        &columns.time,
        DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        false,
    )];
    let mut arrays: Vec<ArrayRef> = vec![Arc::new(TimestampMicrosecondArray::from(times).with_timezone("UTC"))];
    // Table order, so that the batch lines up with the table's schema.
    for (name, t) in &columns.types {
        if let Some(mut b) = builders.remove(name) {
            fields.push(Field::new(name, t.clone(), true));
            arrays.push(b.finish());
        }
    }
    let schema: SchemaRef = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(schema, arrays).expect("columns of equal length");
    Fitted {
        batch: Some(batch),
        offsets,
        rejected,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{Decoder, Format};
    use arrow::array::AsArray;

    fn decode(d: &Decoder, payloads: &[&str]) -> Vec<Decoded> {
        payloads
            .iter()
            .enumerate()
            .map(|(i, p)| Decoded {
                offset: i as i64,
                rows: d.decode(p.as_bytes(), 0).unwrap(),
            })
            .collect()
    }

    #[test]
    fn fits_and_rejects() {
        let d = Decoder {
            format: Format::Json,
            time_field: "time".into(),
            line_unit: TimeUnit::Nanosecond,
            csv_columns: vec![],
        };
        let mut cols = Columns {
            time: "time".into(),
            types: vec![("v".into(), DataType::Float64), ("n".into(), DataType::Int64)],
            refuse_new: false,
            required: vec![],
        };
        let opts = TimeOptions {
            unit: Some(TimeUnit::Millisecond),
            ..Default::default()
        };
        let recs = decode(
            &d,
            &[
                r#"{"time": 1000, "v": 1, "n": 2.0, "host": "a"}"#,
                r#"{"time": 2000, "v": "x"}"#,
                r#"{"time": 3000, "n": 2.5}"#,
                r#"{"time": "2024-01-01T00:00:00Z", "v": 2.5}"#,
                r#"{"time": "yesterday", "v": 2.5}"#,
                r#"{"time": 4000, "v": 9007199254740993}"#,
            ],
        );
        let f = fit_rows(&recs, &mut cols, &opts);
        let b = f.batch.unwrap();
        assert_eq!(b.num_rows(), 2, "{:?}", f.rejected);
        assert_eq!(b.schema().field(1).name(), "v");
        assert_eq!(b.schema().field(3).name(), "host");
        let t = b.column(0).as_primitive::<arrow::datatypes::TimestampMicrosecondType>();
        assert_eq!(t.value(0), 1_000_000);
        assert_eq!(t.value(1), 1_704_067_200_000_000);
        assert!(b.column(3).is_null(1));
        let offsets: Vec<i64> = f.rejected.iter().map(|r| r.0).collect();
        assert_eq!(offsets, vec![1, 2, 4, 5], "{:?}", f.rejected);
        assert!(f.rejected[0].1.contains("text \"x\""), "{:?}", f.rejected);
        assert!(f.rejected[2].1.contains("yesterday"), "{:?}", f.rejected);
        assert_eq!(cols.types.len(), 3, "host added");
        // CSV text takes its column's type; a new column keeps leading zeros as text; unsigned
        // integers (line protocol 1u) go to a signed column, refused past its range.
        let raw = |t: &str, v: Vec<(&str, Value)>| Decoded {
            offset: 9,
            rows: vec![Row {
                time: RawTime::Value(Value::Raw(t.into())),
                values: v.into_iter().map(|(n, v)| (n.to_string(), v)).collect(),
                tags: vec![],
            }],
        };
        let f = fit_rows(
            &[
                raw(
                    "1000",
                    vec![("n", Value::Raw("12".into())), ("zip", Value::Raw("007".into()))],
                ),
                raw("2000", vec![("n", Value::Raw("x".into()))]),
                raw("3000", vec![("u", Value::UInt(5))]),
                raw("4000", vec![("u", Value::UInt(u64::MAX))]),
            ],
            &mut cols,
            &opts,
        );
        assert_eq!(f.batch.as_ref().unwrap().num_rows(), 2, "{:?}", f.rejected);
        assert_eq!(cols.type_of("zip"), Some(&DataType::Utf8));
        assert_eq!(cols.type_of("u"), Some(&DataType::Int64));
        assert!(
            f.rejected[0]
                .1
                .contains("\"x\" does not read as its column's type Int64"),
            "{:?}",
            f.rejected
        );
        assert!(f.rejected[1].1.contains("without loss"), "{:?}", f.rejected);
        cols.required = vec!["host".into()];
        let f = fit_rows(&decode(&d, &[r#"{"time": 1, "v": 1.0}"#]), &mut cols, &opts);
        assert!(
            f.rejected[0].1.contains("no value for the series key field host"),
            "{:?}",
            f.rejected
        );
        cols.required = vec![];
        cols.refuse_new = true;
        let f = fit_rows(&decode(&d, &[r#"{"time": 1, "new": 1}"#]), &mut cols, &opts);
        assert!(f.rejected[0].1.contains("--refuse-new-fields"));
    }
}
