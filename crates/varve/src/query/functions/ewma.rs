//! `ewma(value, alpha) OVER (PARTITION BY ... ORDER BY time)`: the exponentially weighted moving
//! average, a window function. Each row's answer is `alpha * value + (1 - alpha) * previous`,
//! the first row's its own value (the recursive form, as pandas' `ewm(alpha=..., adjust=False)`).
//!
//! - `alpha` is a constant in (0, 1]: the weight of the newest value.
//! - A NULL value leaves the average as it was (a row before the first value gives NULL); NaN is
//!   a value and stays in the average, as in arithmetic.
//! - Rows are taken in the window's `ORDER BY`; give one (by time), or the order is undefined.
//!
//! ```sql
//! SELECT ts, price, ewma(price, 0.1) OVER (PARTITION BY symbol ORDER BY ts) FROM trades;
//! ```

use std::sync::Arc;

use arrow::array::{ArrayRef, AsArray, Float64Array};
use arrow::datatypes::{DataType, Field, FieldRef, Float64Type};
use datafusion::common::{plan_err, Result, ScalarValue};
use datafusion::logical_expr::function::{PartitionEvaluatorArgs, WindowUDFFieldArgs};
use datafusion::logical_expr::{PartitionEvaluator, Signature, Volatility, WindowUDF, WindowUDFImpl};
use datafusion::physical_expr::expressions::Literal;

const USAGE: &str = "ewma(value, alpha) OVER (... ORDER BY time)";

/// `ewma(value, alpha)` (module docs).
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct Ewma {
    signature: Signature,
}

impl Ewma {
    pub(crate) fn udwf() -> WindowUDF {
        WindowUDF::from(Ewma {
            signature: Signature::user_defined(Volatility::Immutable),
        })
    }
}

impl WindowUDFImpl for Ewma {
    fn documentation(&self) -> Option<&datafusion::logical_expr::Documentation> {
        crate::query::functions::reference::doc(self.name())
    }

    fn name(&self) -> &str {
        "ewma"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        if arg_types.len() != 2 {
            return plan_err!("{USAGE} takes 2 arguments, got {}", arg_types.len());
        }
        for (what, t) in ["value", "alpha"].iter().zip(arg_types) {
            if !(t.is_numeric() || t.is_null()) {
                return plan_err!("{USAGE}: {what} must be a number, not {t}");
            }
        }
        Ok(vec![DataType::Float64, DataType::Float64])
    }

    fn partition_evaluator(&self, args: PartitionEvaluatorArgs) -> Result<Box<dyn PartitionEvaluator>> {
        let alpha = match args
            .input_exprs()
            .get(1)
            .and_then(|e| e.downcast_ref::<Literal>())
            .map(|l| l.value())
        {
            Some(ScalarValue::Float64(Some(a))) if *a > 0.0 && *a <= 1.0 => *a,
            _ => return plan_err!("{USAGE}: alpha must be a constant number in (0, 1]"),
        };
        Ok(Box::new(EwmaEvaluator { alpha }))
    }

    fn field(&self, field_args: WindowUDFFieldArgs) -> Result<FieldRef> {
        Ok(Arc::new(Field::new(field_args.name(), DataType::Float64, true)))
    }
}

#[derive(Debug)]
struct EwmaEvaluator {
    alpha: f64,
}

impl PartitionEvaluator for EwmaEvaluator {
    fn evaluate_all(&mut self, values: &[ArrayRef], _num_rows: usize) -> Result<ArrayRef> {
        let x = values[0].as_primitive::<Float64Type>();
        let mut avg: Option<f64> = None;
        let out: Float64Array = x
            .iter()
            .map(|v| {
                if let Some(v) = v {
                    avg = Some(match avg {
                        None => v,
                        Some(p) => self.alpha * v + (1.0 - self.alpha) * p,
                    });
                }
                avg
            })
            .collect();
        Ok(Arc::new(out))
    }
}
