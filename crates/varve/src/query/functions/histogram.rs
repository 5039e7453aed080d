//! `histogram(value, min, max, buckets)`: how many of a group's values fall in each of `buckets`
//! equal-width buckets over [min, max), as TimescaleDB's function of that name answers: a list
//! of `buckets + 2` counts, the first for values below `min`, the last for values at or above
//! `max`. Bucket `i` (1-based in the list's middle) holds `min + (i - 1) * w <= value < min + i * w`
//! with `w = (max - min) / buckets`.
//!
//! - `min`, `max` and `buckets` are constants, `min < max`, `1 <= buckets <= 100,000`.
//! - NULL and NaN values are not counted; a group with no other value gives NULL.
//!
//! ```sql
//! SELECT sensor, histogram(celsius, 0, 40, 8) FROM temps GROUP BY sensor;
//! ```

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Int64Array, ListArray};
use arrow::datatypes::{DataType, Field, FieldRef, Float64Type, Int64Type};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility};
use datafusion::physical_expr::expressions::Literal;

const USAGE: &str = "histogram(value, min, max, buckets)";

/// The most buckets a histogram may have.
const MAX_BUCKETS: i64 = 100_000;

/// `histogram(value, min, max, buckets)` (module docs).
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct Histogram {
    signature: Signature,
}

impl Histogram {
    pub(crate) fn udaf() -> AggregateUDF {
        AggregateUDF::from(Histogram {
            signature: Signature::user_defined(Volatility::Immutable),
        })
    }
}

fn counts_type() -> DataType {
    DataType::List(Arc::new(Field::new_list_field(DataType::Int64, true)))
}

impl AggregateUDFImpl for Histogram {
    fn documentation(&self) -> Option<&datafusion::logical_expr::Documentation> {
        crate::query::functions::reference::doc(self.name())
    }

    fn name(&self) -> &str {
        "histogram"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        if arg_types.len() != 4 {
            return plan_err!("{USAGE} takes 4 arguments, got {}", arg_types.len());
        }
        for (what, t) in ["value", "min", "max", "buckets"].iter().zip(arg_types) {
            if !(t.is_numeric() || t.is_null()) {
                return plan_err!("{USAGE}: {what} must be a number, not {t}");
            }
        }
        Ok(vec![
            DataType::Float64,
            DataType::Float64,
            DataType::Float64,
            DataType::Int64,
        ])
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(counts_type())
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![Arc::new(Field::new(
            format_state_name(args.name, "counts"),
            counts_type(),
            true,
        ))])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let constant = |i: usize| {
            args.exprs
                .get(i)
                .and_then(|e| e.downcast_ref::<Literal>())
                .map(|l| l.value().clone())
        };
        let (min, max, buckets) = match (constant(1), constant(2), constant(3)) {
            (
                Some(ScalarValue::Float64(Some(a))),
                Some(ScalarValue::Float64(Some(b))),
                Some(ScalarValue::Int64(Some(n))),
            ) => (a, b, n),
            _ => return plan_err!("{USAGE}: min, max and buckets must be constant numbers"),
        };
        if min >= max || !(max - min).is_finite() {
            return plan_err!("{USAGE}: min ({min}) must be below max ({max}), with a finite span");
        }
        if !(1..=MAX_BUCKETS).contains(&buckets) {
            return plan_err!("{USAGE}: buckets ({buckets}) must be between 1 and {MAX_BUCKETS}");
        }
        Ok(Box::new(Counts {
            min,
            max,
            counts: vec![0; buckets as usize + 2],
            seen: false,
        }))
    }
}

/// Counts below `min`, per bucket, and at or above `max`.
#[derive(Debug)]
struct Counts {
    min: f64,
    max: f64,
    counts: Vec<i64>,
    seen: bool,
}

impl Counts {
    fn slot(&self, v: f64) -> usize {
        let n = self.counts.len() - 2;
        if v < self.min {
            0
        } else if v >= self.max {
            n + 1
        } else {
            // Rounding may put a value just below max into bucket n; clamp it into the last one.
            (((v - self.min) / (self.max - self.min) * n as f64) as usize).min(n - 1) + 1
        }
    }
}

impl Accumulator for Counts {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let x = values[0].as_primitive::<Float64Type>();
        for v in x.iter().flatten() {
            if !v.is_nan() {
                let s = self.slot(v);
                self.counts[s] += 1;
                self.seen = true;
            }
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let lists = states[0].as_list::<i32>();
        for i in 0..lists.len() {
            if lists.is_null(i) {
                continue;
            }
            let part = lists.value(i);
            let part = part.as_primitive::<Int64Type>();
            if part.len() != self.counts.len() {
                return exec_err!(
                    "{USAGE}: a partial state has {} counts, not {}",
                    part.len(),
                    self.counts.len()
                );
            }
            for (c, p) in self.counts.iter_mut().zip(part.values()) {
                *c += p;
            }
            self.seen = true;
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![self.evaluate()?])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let field = Arc::new(Field::new_list_field(DataType::Int64, true));
        let values: ArrayRef = Arc::new(Int64Array::from(self.counts.clone()));
        let offsets = arrow::buffer::OffsetBuffer::from_lengths([values.len()]);
        let nulls = (!self.seen).then(|| arrow::buffer::NullBuffer::new_null(1));
        Ok(ScalarValue::List(Arc::new(ListArray::new(
            field, offsets, values, nulls,
        ))))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.counts.capacity() * 8
    }
}
