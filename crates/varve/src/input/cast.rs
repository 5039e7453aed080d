//! Checked casts of input values to a column's type: a value converts only when nothing about it
//! changes, and the first that would is reported with its column, row and text ("column
//! velocity, row 17: 'fast' is not a float64"). Decoders use it for text fields of a known
//! column (`csv`), and `write::align` for every column of a batch bound for a table. Nothing here
//! is ever silently nulled.

use std::sync::Arc;

use arrow::array::{new_null_array, Array, ArrayRef, AsArray, Float32Builder, Float64Builder};
use arrow::compute::kernels::cmp::distinct;
use arrow::compute::{cast_with_options, CastOptions};
use arrow::datatypes::{DataType, TimeUnit};
use arrow::util::display::array_value_to_string;

use crate::error::{cut, Error, Result};

/// `type_name` with its article, as an error sentence needs it: "an int32", "a float64".
fn a_type_name(dt: &DataType) -> String {
    let name = type_name(dt);
    let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {name}")
}

fn type_name(dt: &DataType) -> String {
    match dt {
        DataType::Int32 => "int32".into(),
        DataType::Int64 => "int64".into(),
        DataType::Float32 => "float32".into(),
        DataType::Float64 => "float64".into(),
        DataType::Utf8 => "string".into(),
        DataType::Boolean => "boolean".into(),
        DataType::Date32 => "date".into(),
        DataType::Timestamp(_, None) => "timestamp".into(),
        DataType::Timestamp(_, Some(_)) => "timestamp with time zone".into(),
        other => other.to_string(),
    }
}

/// Casts `array` to `to`, failing on the first value that would change.
///
/// Errors: [`crate::ErrorKind::InvalidInput`] naming column, row and value for a value that does
/// not convert; [`crate::ErrorKind::SchemaMismatch`] for a pair of types that never convert.
pub(crate) fn cast_checked(array: &ArrayRef, to: &DataType, column: &str, row_offset: u64) -> Result<ArrayRef> {
    let from = array.data_type();
    if from == to {
        return Ok(array.clone());
    }
    if from == &DataType::Null {
        return Ok(new_null_array(to, array.len()));
    }
    let from_text = matches!(from, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View);
    if from_text && matches!(to, DataType::Float64 | DataType::Float32) {
        return text_to_float(array, to, column, row_offset);
    }
    let never = (to.is_numeric() && !(from.is_numeric() || from_text))
        || (matches!(to, DataType::Timestamp(..) | DataType::Date32)
            && !(from_text || matches!(from, DataType::Timestamp(..) | DataType::Date32 | DataType::Date64)))
        || (to == &DataType::Boolean && !(from_text || from == &DataType::Boolean));
    if never {
        return Err(Error::schema(format!(
            "column {column}: cannot store {} values in a {} column",
            type_name(from),
            type_name(to)
        )));
    }
    let out = cast_with_options(
        array,
        to,
        &CastOptions {
            safe: true,
            ..Default::default()
        },
    )
    .map_err(|e| {
        Error::schema(format!(
            "column {column}: cannot store {} values in a {} column ({e})",
            type_name(from),
            type_name(to)
        ))
    })?;
    let row = |i: usize| row_offset + i as u64 + 1;
    // A leap second (`23:59:60`) would be moved to the next second by the cast: refuse it.
    if from_text && matches!(to, DataType::Timestamp(..)) {
        let s = cast_with_options(array, &DataType::Utf8, &CastOptions::default())?;
        let s = s.as_string::<i32>();
        for i in 0..s.len() {
            if s.is_valid(i) && s.value(i).contains(":60") {
                let v = s.value(i).trim();
                if crate::input::time::parse_time_precise(v, None, None).is_some_and(|p| p.leap) {
                    return Err(Error::invalid(format!(
                        "column {column}, row {}: {} is a leap second, which a timestamp cannot hold (Varve \
                         refuses it rather than move it to the next second)",
                        row(i),
                        cut(v)
                    )));
                }
            }
        }
    }
    // A value that became null did not convert.
    if out.null_count() > array.null_count() {
        if let Some(i) = (0..array.len()).find(|&i| array.is_valid(i) && out.is_null(i)) {
            let v = cut(&array_value_to_string(array, i).unwrap_or_default());
            let text = if from_text {
                format!("'{v}' is not {}", a_type_name(to))
            } else {
                format!("{v} cannot be stored as {} without loss", type_name(to))
            };
            return Err(Error::invalid(format!("column {column}, row {}: {text}", row(i))));
        }
    }
    // Between numbers and times, a value must survive the round trip unchanged.
    if !from_text && from.is_primitive() && to.is_primitive() {
        let back = cast_with_options(
            &out,
            from,
            &CastOptions {
                safe: true,
                ..Default::default()
            },
        )?;
        let changed = distinct(array, &back)?;
        if let Some(i) = (0..changed.len()).find(|&i| changed.is_valid(i) && changed.value(i)) {
            let v = cut(&array_value_to_string(array, i).unwrap_or_default());
            return Err(Error::invalid(format!(
                "column {column}, row {}: {v} cannot be stored as {} without loss",
                row(i),
                type_name(to)
            )));
        }
    }
    // Text into a decimal or a µs timestamp: digits beyond the scale, or below a microsecond, would
    // be dropped by the cast; parse once more at full precision and compare.
    if from_text {
        let exact = match to {
            DataType::Decimal128(p, s) => Some(DataType::Decimal128(38, (*s as i16 + (38 - *p as i16)).min(38) as i8)),
            DataType::Timestamp(TimeUnit::Microsecond, tz) => {
                Some(DataType::Timestamp(TimeUnit::Nanosecond, tz.clone()))
            }
            _ => None,
        };
        if let Some(exact) = exact {
            let precise = cast_with_options(
                array,
                &exact,
                &CastOptions {
                    safe: true,
                    ..Default::default()
                },
            )?;
            let widened = cast_with_options(
                &out,
                &exact,
                &CastOptions {
                    safe: true,
                    ..Default::default()
                },
            )?;
            let changed = distinct(&precise, &widened)?;
            if let Some(i) =
                (0..changed.len()).find(|&i| changed.is_valid(i) && changed.value(i) && precise.is_valid(i))
            {
                let v = cut(&array_value_to_string(array, i).unwrap_or_default());
                return Err(Error::invalid(format!(
                    "column {column}, row {}: '{v}' cannot be stored as {} without loss",
                    row(i),
                    type_name(to)
                )));
            }
        }
    }
    Ok(out)
}

/// Text to a float column: decimal and exponent notation and the usual spellings of infinity and
/// NaN (`inf`, `+inf`, `Infinity`, `-Infinity`, `NaN`, any case), correctly rounded; a float32 column
/// takes only values that are finite in float32 when finite in float64.
fn text_to_float(array: &ArrayRef, to: &DataType, column: &str, row_offset: u64) -> Result<ArrayRef> {
    let s = cast_with_options(array, &DataType::Utf8, &CastOptions::default())?;
    let s = s.as_string::<i32>();
    let bad = |i: usize| {
        Error::invalid(format!(
            "column {column}, row {}: '{}' is not {}",
            row_offset + i as u64 + 1,
            cut(s.value(i)),
            a_type_name(to)
        ))
    };
    let parse = |i: usize| -> Result<f64> {
        let v = s.value(i);
        // Rust's parser takes inf/infinity/nan in any case, signed; it also takes forms such as
        // "1." and ".5", as CSV writers print them.
        v.parse::<f64>().map_err(|_| bad(i))
    };
    if to == &DataType::Float32 {
        let mut out = Float32Builder::with_capacity(s.len());
        for i in 0..s.len() {
            if s.is_null(i) {
                out.append_null();
                continue;
            }
            let v = parse(i)?;
            let f = v as f32;
            if v.is_finite() && !f.is_finite() {
                return Err(Error::invalid(format!(
                    "column {column}, row {}: {} is out of range of a float32",
                    row_offset + i as u64 + 1,
                    cut(s.value(i))
                )));
            }
            out.append_value(f);
        }
        return Ok(Arc::new(out.finish()));
    }
    let mut out = Float64Builder::with_capacity(s.len());
    for i in 0..s.len() {
        if s.is_null(i) {
            out.append_null();
        } else {
            out.append_value(parse(i)?);
        }
    }
    Ok(Arc::new(out.finish()))
}

#[cfg(test)]
mod tests {

    #[test]
    fn type_names_take_their_article() {
        assert_eq!(a_type_name(&DataType::Int32), "an int32");
        assert_eq!(a_type_name(&DataType::Float64), "a float64");
    }

    use super::*;

    use arrow::array::{Float64Array, Int64Array, StringArray};

    #[test]
    fn a_word_in_a_number_column_names_row_and_value() {
        let a: ArrayRef = Arc::new(StringArray::from(vec![Some("1.5"), None, Some("fast")]));
        let e = cast_checked(&a, &DataType::Float64, "velocity", 14).unwrap_err();
        assert_eq!(e.message(), "column velocity, row 17: 'fast' is not a float64");
    }

    #[test]
    fn text_keeps_every_digit() {
        let a: ArrayRef = Arc::new(StringArray::from(vec!["1.23", "1.5", "1.239"]));
        let e = cast_checked(&a, &DataType::Decimal128(10, 2), "price", 0).unwrap_err();
        assert_eq!(
            e.message(),
            "column price, row 3: '1.239' cannot be stored as Decimal128(10, 2) without loss"
        );
        let t: ArrayRef = Arc::new(StringArray::from(vec![
            "2024-01-01T00:00:00.000001Z",
            "2024-01-01T00:00:00.000000001Z",
        ]));
        let e = cast_checked(&t, &DataType::Timestamp(TimeUnit::Microsecond, None), "seen", 0).unwrap_err();
        assert!(e.message().starts_with("column seen, row 2:"), "{e}");
    }

    #[test]
    fn spellings_of_infinity_are_floats() {
        let a: ArrayRef = Arc::new(StringArray::from(vec![
            "Infinity",
            "-Infinity",
            "+inf",
            "NaN",
            "1e3",
            "-0.5",
        ]));
        let f = cast_checked(&a, &DataType::Float64, "v", 0).unwrap();
        let f = f.as_primitive::<arrow::datatypes::Float64Type>();
        assert_eq!(f.value(0), f64::INFINITY);
        assert_eq!(f.value(1), f64::NEG_INFINITY);
        assert_eq!(f.value(2), f64::INFINITY);
        assert!(f.value(3).is_nan());
        assert_eq!((f.value(4), f.value(5)), (1000.0, -0.5));
        let bad: ArrayRef = Arc::new(StringArray::from(vec!["1", "x".repeat(100).as_str()]));
        let e = cast_checked(&bad, &DataType::Float64, "v", 0).unwrap_err();
        assert_eq!(
            e.message(),
            format!("column v, row 2: '{}... (100 bytes)' is not a float64", "x".repeat(80))
        );
    }

    #[test]
    fn fractions_do_not_become_integers() {
        let a: ArrayRef = Arc::new(Float64Array::from(vec![1.0, 2.5]));
        let e = cast_checked(&a, &DataType::Int64, "n", 0).unwrap_err();
        assert!(e.message().contains("row 2: 2.5"), "{e}");
        let ok: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
        assert!(cast_checked(&ok, &DataType::Float64, "n", 0).is_ok());
    }
}
