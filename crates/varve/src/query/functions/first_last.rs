//! `first(value, time)`, `last(value, time)`, `first_not_null(value, time)` and
//! `last_not_null(value, time)`: the value of a group's earliest or latest row by `time`.
//!
//! Rules, the same on every file layout (unsorted appends, late rows, many files, after
//! compaction), since they depend only on the rows:
//!
//! - Rows whose `time` is NULL are ignored.
//! - NULL is a value: `last(v, ts)` is NULL when the latest row's `v` is NULL. The `_not_null`
//!   variants ignore rows whose `value` is NULL.
//! - Ties on `time` are broken by the value: `last` takes the greatest, `first` the least, with
//!   NULL below every value (so `last` prefers a value to NULL on a tie, `first` prefers NULL).
//!   Floats are ordered totally (arrow's `make_comparator`: -0.0 < 0.0, NaN above infinity).
//! - A group without such a row gives NULL.
//!
//! ```sql
//! SELECT name, last(velocity, ts) AS velocity FROM iot.readings GROUP BY name;
//! ```
//!
//! TimescaleDB, QuestDB and InfluxDB spell these `first`/`last` (QuestDB and InfluxDB without the
//! time argument, by their designated time column); DuckDB's `arg_max(value, time)` is `last`
//! without the tie rule.

use std::cmp::Ordering;
use std::sync::Arc;

use arrow::array::{make_comparator, new_null_array, Array, ArrayRef};
use arrow::compute::SortOptions;
use arrow::datatypes::{DataType, Field, FieldRef};

use datafusion::common::{plan_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility};

/// Which row of a group the function takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Pick {
    /// The smallest (time, value).
    First,
    /// The greatest (time, value).
    Last,
}

/// One of the four functions (module docs).
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct FirstLast {
    name: &'static str,
    pick: Pick,
    /// Rows with a NULL value are ignored (`*_not_null`).
    skip_null_values: bool,
    signature: Signature,
}

impl FirstLast {
    fn udaf(name: &'static str, pick: Pick, skip_null_values: bool) -> AggregateUDF {
        AggregateUDF::from(FirstLast {
            name,
            pick,
            skip_null_values,
            signature: Signature::user_defined(Volatility::Immutable),
        })
    }

    /// `first`, `last`, `first_not_null`, `last_not_null`.
    pub(crate) fn all() -> Vec<AggregateUDF> {
        vec![
            Self::udaf("first", Pick::First, false),
            Self::udaf("last", Pick::Last, false),
            Self::udaf("first_not_null", Pick::First, true),
            Self::udaf("last_not_null", Pick::Last, true),
        ]
    }
}

impl AggregateUDFImpl for FirstLast {
    fn documentation(&self) -> Option<&datafusion::logical_expr::Documentation> {
        crate::query::functions::reference::doc(self.name())
    }

    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        let [value, time] = arg_types else {
            return plan_err!("{}(value, time) takes 2 arguments, got {}", self.name, arg_types.len());
        };
        let orderable = time.is_temporal() || time.is_integer() || time.is_null();
        if !orderable {
            return plan_err!(
                "{}(value, time): the second argument must be a timestamp, date, time or integer, not {time}",
                self.name
            );
        }
        Ok(vec![value.clone(), time.clone()])
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        Ok(arg_types[0].clone())
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        let value = args.input_fields[0].data_type().clone();
        let time = args.input_fields[1].data_type().clone();
        Ok(vec![
            Arc::new(Field::new(format_state_name(args.name, "value"), value, true)),
            Arc::new(Field::new(format_state_name(args.name, "time"), time, true)),
        ])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let value = args.expr_fields[0].data_type().clone();
        let time = args.expr_fields[1].data_type().clone();
        Ok(Box::new(FirstLastAccumulator {
            pick: self.pick,
            skip_null_values: self.skip_null_values,
            best: None,
            value_type: value,
            time_type: time,
        }))
    }
}

/// The best row so far, as one-row arrays (value, time), so that rows of a new batch compare with
/// it by the same comparator as with each other.
#[derive(Debug)]
struct FirstLastAccumulator {
    pick: Pick,
    skip_null_values: bool,
    best: Option<(ArrayRef, ArrayRef)>,
    value_type: DataType,
    time_type: DataType,
}

/// NULL below every value, ascending: the order the module docs state.
const ORDER: SortOptions = SortOptions {
    descending: false,
    nulls_first: true,
};

impl FirstLastAccumulator {
    /// Whether (time, value) `a` is preferred to `b` by this function's pick.
    fn better(&self, ord: Ordering) -> bool {
        match self.pick {
            Pick::First => ord == Ordering::Less,
            Pick::Last => ord == Ordering::Greater,
        }
    }

    /// Takes the best row of (`values`, `times`) if it beats the best so far. Input rows and
    /// states have the same shape: a state with a NULL time is an empty group.
    fn take_best(&mut self, values: &ArrayRef, times: &ArrayRef) -> Result<()> {
        let tcmp = make_comparator(times.as_ref(), times.as_ref(), ORDER)?;
        let vcmp = make_comparator(values.as_ref(), values.as_ref(), ORDER)?;
        let mut best: Option<usize> = None;
        for i in 0..times.len() {
            if times.is_null(i) || (self.skip_null_values && values.is_null(i)) {
                continue;
            }
            best = match best {
                None => Some(i),
                Some(b) => {
                    let ord = tcmp(i, b).then_with(|| vcmp(i, b));
                    if self.better(ord) {
                        Some(i)
                    } else {
                        Some(b)
                    }
                }
            };
        }
        let Some(i) = best else {
            return Ok(());
        };
        let candidate = (values.slice(i, 1), times.slice(i, 1));
        let replace = match &self.best {
            None => true,
            Some((bv, bt)) => {
                let tcmp = make_comparator(candidate.1.as_ref(), bt.as_ref(), ORDER)?;
                let vcmp = make_comparator(candidate.0.as_ref(), bv.as_ref(), ORDER)?;
                self.better(tcmp(0, 0).then_with(|| vcmp(0, 0)))
            }
        };
        if replace {
            // Copied out of the batch, so that the batch's buffers are not kept alive.
            let (v, t) = candidate;
            let copy = |a: &ArrayRef| -> Result<ArrayRef> { ScalarValue::try_from_array(a, 0)?.to_array() };
            self.best = Some((copy(&v)?, copy(&t)?));
        }
        Ok(())
    }
}

impl Accumulator for FirstLastAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.take_best(&values[0], &values[1])
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        self.take_best(&states[0], &states[1])
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        match &self.best {
            Some((v, t)) => Ok(vec![
                ScalarValue::try_from_array(v, 0)?,
                ScalarValue::try_from_array(t, 0)?,
            ]),
            None => Ok(vec![
                ScalarValue::try_from(&self.value_type)?,
                ScalarValue::try_from(&self.time_type)?,
            ]),
        }
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        match &self.best {
            Some((v, _)) => ScalarValue::try_from_array(v, 0),
            None => ScalarValue::try_from_array(&new_null_array(&self.value_type, 1), 0),
        }
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
            + self
                .best
                .as_ref()
                .map(|(v, t)| v.get_array_memory_size() + t.get_array_memory_size())
                .unwrap_or(0)
    }
}
