//! `isfinite(x)`: whether `x` is a finite number: false for NaN and ±infinity, true for every other
//! number, date and timestamp (Varve's times have no infinities), NULL for NULL. PostgreSQL's
//! `isfinite` for dates and timestamps, extended to numbers.
//!
//! ```sql
//! SELECT count(*) FROM readings WHERE NOT isfinite(velocity);
//! ```

use std::sync::Arc;

use arrow::array::{Array, AsArray, BooleanArray};
use arrow::datatypes::{DataType, Float16Type, Float32Type, Float64Type};
use datafusion::common::{plan_err, Result};
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility};

/// `isfinite(x)`.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct IsFinite {
    signature: Signature,
}

impl IsFinite {
    pub(crate) fn udf() -> ScalarUDF {
        ScalarUDF::from(IsFinite {
            signature: Signature::user_defined(Volatility::Immutable),
        })
    }
}

impl ScalarUDFImpl for IsFinite {
    fn documentation(&self) -> Option<&datafusion::logical_expr::Documentation> {
        crate::query::functions::reference::doc(self.name())
    }

    fn name(&self) -> &str {
        "isfinite"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        match arg_types {
            [t] if t.is_numeric() || t.is_temporal() || t.is_null() => Ok(vec![t.clone()]),
            [t] => plan_err!("isfinite(x): x must be a number, date or timestamp, not {t}"),
            _ => plan_err!("isfinite(x) takes 1 argument, got {}", arg_types.len()),
        }
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Boolean)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let x = args.args[0].to_array(args.number_rows)?;
        let out: BooleanArray = match x.data_type() {
            DataType::Float64 => BooleanArray::from_unary(x.as_primitive::<Float64Type>(), |v| v.is_finite()),
            DataType::Float32 => BooleanArray::from_unary(x.as_primitive::<Float32Type>(), |v| v.is_finite()),
            DataType::Float16 => BooleanArray::from_unary(x.as_primitive::<Float16Type>(), |v| v.is_finite()),
            _ => BooleanArray::new(arrow::buffer::BooleanBuffer::new_set(x.len()), x.nulls().cloned()),
        };
        Ok(ColumnarValue::Array(Arc::new(out)))
    }
}
