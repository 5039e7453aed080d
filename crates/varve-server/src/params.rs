//! Query parameters of `POST /v1/sql` (`{"sql": "... $1 ...", "params": [...]}`): JSON values as
//! the typed values of the statement's placeholders `$1`, `$2`, ... A value takes the type the
//! statement gives its placeholder (`WHERE ts >= $1` makes `"2024-01-01T00:00:00Z"` a timestamp);
//! a value that cannot be that type is refused, never changed.

use datafusion::arrow::datatypes::DataType;
use datafusion::common::ParamValues;
use datafusion::scalar::ScalarValue;

/// `values` as the statement's parameters, `types[i]` being `$i+1`'s type where the statement
/// fixes one (`varve::Session::describe`).
///
/// Errors: a count that differs from the placeholders', an object or array value, or a value
/// that is not of its placeholder's type (naming the parameter).
pub(crate) fn from_json(values: &[serde_json::Value], types: &[Option<DataType>]) -> Result<ParamValues, String> {
    if values.len() != types.len() {
        return Err(format!(
            "the statement has {} placeholders ($1, $2, ...) and the request {} params",
            types.len(),
            values.len()
        ));
    }
    let mut out = Vec::with_capacity(values.len());
    for (i, (v, ty)) in values.iter().zip(types).enumerate() {
        let n = i + 1;
        let plain = match v {
            serde_json::Value::Null => match ty {
                Some(t) => ScalarValue::try_from(t).map_err(|e| format!("parameter ${n}: {e}"))?,
                None => ScalarValue::Null,
            },
            serde_json::Value::Bool(b) => ScalarValue::Boolean(Some(*b)),
            serde_json::Value::Number(x) => match (x.as_i64(), x.as_u64(), x.as_f64()) {
                (Some(i), _, _) => ScalarValue::Int64(Some(i)),
                (None, Some(u), _) => ScalarValue::UInt64(Some(u)),
                (_, _, Some(f)) => ScalarValue::Float64(Some(f)),
                _ => return Err(format!("parameter ${n}: {x} is not a number Varve can hold")),
            },
            serde_json::Value::String(s) => ScalarValue::Utf8(Some(s.clone())),
            other => {
                return Err(format!(
                    "parameter ${n}: {other} is not a parameter value (use null, a boolean, a number or a string)"
                ))
            }
        };
        let value = match ty {
            Some(t) if plain.data_type() != *t => cast(&plain, t).map_err(|m| format!("parameter ${n}: {m}"))?,
            _ => plain,
        };
        out.push(value);
    }
    Ok(ParamValues::List(out.into_iter().map(Into::into).collect()))
}

/// `v` as type `t`, refusing a change of value (a fraction cut off, an integer out of range, text
/// that is not a value of the type, digits below the type's unit of time) and numbers for times
/// (their unit would be a guess).
pub(crate) fn cast(v: &ScalarValue, t: &DataType) -> Result<ScalarValue, String> {
    let refused = || format!("{v} is not a {t} value");
    if v.is_null() {
        return ScalarValue::try_from(t).map_err(|e| e.to_string());
    }
    let text_target = matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View);
    if text_target && !matches!(v.data_type(), DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) {
        return Err(format!(
            "{v} is not text and the placeholder is text ({t}): give a string"
        ));
    }
    if v.data_type().is_numeric() && t.is_temporal() {
        return Err(format!(
            "{v} is a number and the placeholder a time ({t}): give the time as text (RFC 3339, such as 2024-01-01T00:00:00Z)"
        ));
    }
    if let (
        ScalarValue::Utf8(Some(text)) | ScalarValue::LargeUtf8(Some(text)) | ScalarValue::Utf8View(Some(text)),
        DataType::Timestamp(unit, _),
    ) = (v, t)
    {
        let allowed = match unit {
            datafusion::arrow::datatypes::TimeUnit::Second => 0,
            datafusion::arrow::datatypes::TimeUnit::Millisecond => 3,
            datafusion::arrow::datatypes::TimeUnit::Microsecond => 6,
            datafusion::arrow::datatypes::TimeUnit::Nanosecond => 9,
        };
        if fraction_digits(text) > allowed {
            return Err(format!(
                "{text}: the time has digits below the column's unit ({t}); they would be cut"
            ));
        }
    }
    let cast = v.cast_to(t).map_err(|_| refused())?;
    if cast.is_null() && !v.is_null() {
        return Err(refused());
    }
    // A number cast to another number must come back to itself.
    if v.data_type().is_numeric() && t.is_numeric() {
        let back = cast.cast_to(&v.data_type()).map_err(|_| refused())?;
        if back != *v {
            return Err(refused());
        }
    }
    Ok(cast)
}

/// The significant digits after the seconds' decimal point in a time written as text.
fn fraction_digits(text: &str) -> usize {
    // The seconds are the first `:dd.` after the date.
    let Some(colon) = text.rfind(':') else { return 0 };
    let rest = &text[colon + 1..];
    let Some(dot) = rest.find('.') else { return 0 };
    let digits: String = rest[dot + 1..].chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.trim_end_matches('0').len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::TimeUnit;

    #[test]
    fn values_take_their_placeholders_types() {
        let ts = DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
        let p = from_json(
            &serde_json::json!(["h1", 3, "2024-01-01T00:00:00Z", null, 2.5])
                .as_array()
                .unwrap()
                .clone(),
            &[
                Some(DataType::Utf8),
                Some(DataType::Float64),
                Some(ts.clone()),
                Some(DataType::Int64),
                None,
            ],
        )
        .unwrap();
        let ParamValues::List(v) = p else { panic!() };
        let v: Vec<ScalarValue> = v.into_iter().map(|s| s.value).collect();
        assert_eq!(v[0], ScalarValue::Utf8(Some("h1".into())));
        assert_eq!(v[1], ScalarValue::Float64(Some(3.0)));
        assert_eq!(v[2].data_type(), ts);
        assert_eq!(v[3], ScalarValue::Int64(None));
        assert_eq!(v[4], ScalarValue::Float64(Some(2.5)));
        // Refused, not changed.
        assert!(from_json(&[serde_json::json!(2.5)], &[Some(DataType::Int64)]).is_err());
        assert!(from_json(&[serde_json::json!("abc")], &[Some(ts)]).is_err());
        assert!(from_json(&[serde_json::json!(300)], &[Some(DataType::Int8)]).is_err());
        assert!(from_json(&[], &[Some(DataType::Int8)]).is_err());
        let us = DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
        assert!(from_json(&[serde_json::json!(1_700_000_000)], &[Some(us.clone())]).is_err());
        assert!(from_json(
            &[serde_json::json!("2024-01-01T00:00:00.123456789Z")],
            &[Some(us.clone())]
        )
        .is_err());
        assert!(from_json(&[serde_json::json!("2024-01-01T00:00:00.123456000+01:00")], &[Some(us)]).is_ok());
    }
}
