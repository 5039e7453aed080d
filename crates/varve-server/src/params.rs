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
/// that is not a value of the type).
fn cast(v: &ScalarValue, t: &DataType) -> Result<ScalarValue, String> {
    let refused = || format!("{v} is not a {t} value");
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
    }
}
