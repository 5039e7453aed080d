//! Aggregates over a group's samples in time order: the counter functions `delta`, `increase`
//! and `rate` (Prometheus's semantics without extrapolation) and the time-weighted average
//! `twa`. One accumulator ([`Samples`]) keeps every (time, value) pair of its group, since
//! partial groups arrive in no order; each function is a way to finish it ([`Kind`]).
//!
//! Rules shared by all of them:
//! - `time` is a timestamp; `value` a number (read as a double).
//! - Rows whose `time` or `value` is NULL are skipped.
//! - Samples are ordered by time, then by value (so two samples of one time never look like a
//!   counter reset).
//! - The group is its samples only: nothing is extrapolated to a bucket's edges, which SQL does
//!   not know (Prometheus extrapolates to its range selector's; TimescaleDB's toolkit, like
//!   Varve, does not by default).
//!
//! ```sql
//! SELECT host, time_bucket(INTERVAL '5 minutes', ts) AS t, rate(requests_total, ts) FROM http GROUP BY 1, 2;
//! ```

use std::sync::Arc;

use super::one_list;
use arrow::array::{Array, ArrayRef, AsArray, Float64Array, Int64Array};
use arrow::datatypes::{DataType, FieldRef, Float64Type, TimeUnit};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility};
use datafusion::physical_expr::expressions::Literal;

/// Which function finishes the samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    /// `delta(value, time)`: the last value minus the first (for gauges). NULL below 2 samples.
    Delta,
    /// `increase(value, time)`: the sum of the rises between consecutive samples, a fall being a
    /// counter reset after which the counter counted from 0 up to the new value (Prometheus's
    /// rule). NULL below 2 samples.
    Increase,
    /// `rate(value, time)`: the increase per second over the span from the first sample to the
    /// last. NULL below 2 samples or when they all have one time.
    Rate,
    /// `twa(value, time [, 'step' | 'linear'])`: the time-weighted average over the span from
    /// the first sample to the last; `step` (the default) holds each value until the next
    /// sample, `linear` interpolates between them (the trapezoid rule). One sample, or samples
    /// all of one time, give their average; NULL for none.
    Twa,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Delta => "delta",
            Kind::Increase => "increase",
            Kind::Rate => "rate",
            Kind::Twa => "twa",
        }
    }
}

/// An aggregate over samples (module docs).
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct SampleAggregate {
    kind: Kind,
    signature: Signature,
}

impl SampleAggregate {
    /// The four functions.
    pub(crate) fn all() -> Vec<AggregateUDF> {
        [Kind::Delta, Kind::Increase, Kind::Rate, Kind::Twa]
            .into_iter()
            .map(|kind| {
                AggregateUDF::from(SampleAggregate {
                    kind,
                    signature: Signature::user_defined(Volatility::Immutable),
                })
            })
            .collect()
    }

    fn usage(&self) -> String {
        match self.kind {
            Kind::Twa => "twa(value, time [, 'step' | 'linear'])".into(),
            k => format!("{}(value, time)", k.name()),
        }
    }
}

impl AggregateUDFImpl for SampleAggregate {
    fn documentation(&self) -> Option<&datafusion::logical_expr::Documentation> {
        crate::query::functions::reference::doc(self.name())
    }

    fn name(&self) -> &str {
        self.kind.name()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        let max = if self.kind == Kind::Twa { 3 } else { 2 };
        if !(2..=max).contains(&arg_types.len()) {
            return plan_err!("{} takes {} arguments, got {}", self.usage(), max, arg_types.len());
        }
        if !(arg_types[0].is_numeric() || arg_types[0].is_null()) {
            return plan_err!("{}: value must be a number, not {}", self.usage(), arg_types[0]);
        }
        let time = match &arg_types[1] {
            // The same instants in µs: only the unit changes, never the zone.
            DataType::Timestamp(_, tz) => DataType::Timestamp(TimeUnit::Microsecond, tz.clone()),
            DataType::Date32 | DataType::Date64 | DataType::Null => DataType::Timestamp(TimeUnit::Microsecond, None),
            other => return plan_err!("{}: time must be a timestamp, not {other}", self.usage()),
        };
        let mut out = vec![DataType::Float64, time];
        if let Some(t) = arg_types.get(2) {
            if !matches!(t, DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8) {
                return plan_err!("{}: the method must be 'step' or 'linear', not {t}", self.usage());
            }
            out.push(DataType::Utf8);
        }
        Ok(out)
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(crate::query::functions::samples_state_fields(args.name))
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let linear = match args.exprs.get(2) {
            None => false,
            Some(e) => match e.downcast_ref::<Literal>().map(|l| l.value()) {
                Some(ScalarValue::Utf8(Some(m))) if m.eq_ignore_ascii_case("step") => false,
                Some(ScalarValue::Utf8(Some(m))) if m.eq_ignore_ascii_case("linear") => true,
                _ => return plan_err!("{}: the method must be the text 'step' or 'linear'", self.usage()),
            },
        };
        Ok(Box::new(Samples {
            kind: self.kind,
            linear,
            times: Vec::new(),
            values: Vec::new(),
        }))
    }
}

/// A group's samples: times in µs and values, in arrival order until [`Samples::evaluate`].
#[derive(Debug)]
struct Samples {
    kind: Kind,
    linear: bool,
    times: Vec<i64>,
    values: Vec<f64>,
}

impl Samples {
    /// The samples ordered by (time, value), values in total order (NaN last).
    fn ordered(&self) -> Vec<(i64, f64)> {
        let mut s: Vec<(i64, f64)> = self.times.iter().copied().zip(self.values.iter().copied()).collect();
        s.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        s
    }
}

/// Prometheus's increase of a counter over ordered samples.
fn increase(s: &[(i64, f64)]) -> f64 {
    s.windows(2)
        .map(|w| match w[1].1 < w[0].1 {
            true => w[1].1,
            false => w[1].1 - w[0].1,
        })
        .sum()
}

fn twa(s: &[(i64, f64)], linear: bool) -> f64 {
    let span = (s[s.len() - 1].0 - s[0].0) as f64;
    if span == 0.0 {
        return s.iter().map(|x| x.1).sum::<f64>() / s.len() as f64;
    }
    let area: f64 = s
        .windows(2)
        .map(|w| {
            let dt = (w[1].0 - w[0].0) as f64;
            match linear {
                true => (w[0].1 + w[1].1) / 2.0 * dt,
                false => w[0].1 * dt,
            }
        })
        .sum();
    area / span
}

impl Accumulator for Samples {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let v = values[0].as_primitive::<Float64Type>();
        let t = values[1].as_primitive::<arrow::datatypes::TimestampMicrosecondType>();
        for i in 0..v.len() {
            if v.is_valid(i) && t.is_valid(i) {
                self.times.push(t.value(i));
                self.values.push(v.value(i));
            }
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let name = self.kind.name();
        super::for_each_samples_state(states, |t, v| {
            if t.len() != v.len() {
                return exec_err!("{name}: a partial state's times and values differ in length");
            }
            self.times.extend_from_slice(t);
            self.values.extend_from_slice(v);
            Ok(())
        })
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let times: ArrayRef = Arc::new(Int64Array::from(std::mem::take(&mut self.times)));
        let values: ArrayRef = Arc::new(Float64Array::from(std::mem::take(&mut self.values)));
        Ok(vec![one_list(times), one_list(values)])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let s = self.ordered();
        let n = s.len();
        let out = match self.kind {
            Kind::Delta => (n >= 2).then(|| s[n - 1].1 - s[0].1),
            Kind::Increase => (n >= 2).then(|| increase(&s)),
            Kind::Rate => {
                let span = if n >= 2 { s[n - 1].0 - s[0].0 } else { 0 };
                (span > 0).then(|| increase(&s) / (span as f64 / 1e6))
            }
            Kind::Twa => (n >= 1).then(|| twa(&s, self.linear)),
        };
        Ok(ScalarValue::Float64(out))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.times.capacity() * 8 + self.values.capacity() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_resets_and_steps() {
        // A counter 10, 15, reset to 3, 7: rises of 5, then 3 counted from 0, then 4.
        let s = [(0, 10.0), (1_000_000, 15.0), (2_000_000, 3.0), (4_000_000, 7.0)];
        assert_eq!(increase(&s), 12.0);
        assert_eq!(twa(&s, false), (10.0 + 15.0 + 3.0 * 2.0) / 4.0);
        assert_eq!(twa(&s, true), (12.5 + 9.0 + 10.0) / 4.0);
        assert_eq!(twa(&[(5, 2.0), (5, 4.0)], false), 3.0);
    }
}
