//! `time_bucket(interval, ts [, origin])`: the start of the `interval`-wide bucket holding `ts`,
//! buckets aligned on `origin` (default 1970-01-01T00:00:00 UTC). The time-series databases'
//! spelling of DataFusion's `date_bin(interval, ts [, origin])`, which does the work.
//!
//! ```sql
//! SELECT time_bucket(INTERVAL '1 hour', ts) AS hour, avg(glucose) FROM cgm GROUP BY 1 ORDER BY 1;
//! ```

use std::sync::Arc;

use arrow::datatypes::{DataType, Field, FieldRef, TimeUnit};
use datafusion::common::{plan_err, Result};
use datafusion::logical_expr::type_coercion::functions::fields_with_udf;
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility};

/// `time_bucket(interval, ts [, origin])`.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct TimeBucket {
    signature: Signature,
}

impl TimeBucket {
    pub(crate) fn udf() -> ScalarUDF {
        ScalarUDF::from(TimeBucket {
            signature: Signature::user_defined(Volatility::Immutable),
        })
    }
}

impl ScalarUDFImpl for TimeBucket {
    fn name(&self) -> &str {
        "time_bucket"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        if !(2..=3).contains(&arg_types.len()) {
            return plan_err!(
                "time_bucket(interval, ts [, origin]) takes 2 or 3 arguments, got {}",
                arg_types.len()
            );
        }
        let (unit, tz) = match &arg_types[1] {
            DataType::Timestamp(u, tz) => (*u, tz.clone()),
            DataType::Date32 | DataType::Date64 | DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
                (TimeUnit::Microsecond, None)
            }
            other => return plan_err!("time_bucket: the second argument must be a timestamp, not {other}"),
        };
        // Then exactly as date_bin coerces them, so that both give the same bucket for the same
        // arguments (its origin, naive or zoned, stays the instant it names).
        let mut given = arg_types.to_vec();
        given[1] = DataType::Timestamp(unit, tz);
        let fields: Vec<FieldRef> = given
            .into_iter()
            .map(|t| Arc::new(Field::new("arg", t, true)))
            .collect();
        let date_bin = datafusion::functions::datetime::date_bin();
        Ok(fields_with_udf(&fields, date_bin.as_ref())?
            .iter()
            .map(|f| f.data_type().clone())
            .collect())
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        Ok(arg_types[1].clone())
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        // date_bin takes the same arguments in the same order.
        let date_bin = datafusion::functions::datetime::date_bin();
        date_bin.invoke_with_args(args)
    }
}
