//! Time-series SQL functions, registered in every query session (`query::session`):
//!
//! - `time_bucket` (`time_bucket`): time buckets in fixed widths or calendar units, in UTC or a
//!   time zone;
//! - `isfinite` (`isfinite`): false for NaN and infinities;
//! - `first`, `last`, `first_not_null`, `last_not_null` (`first_last`): a group's value at its
//!   earliest or latest time;
//! - `vwap` (`vwap`): the volume-weighted average price;
//! - `delta`, `increase`, `rate`, `twa` (`samples`): counters that reset, gauges' change and the
//!   time-weighted average, over a group's samples in time order;
//! - `histogram` (`histogram`): counts in equal-width buckets;
//! - `m4`, `lttb` (`downsample`): a group's samples downsampled to the points a chart plots;
//! - `ewma` (`ewma`): the exponentially weighted moving average, a window function.
//!
//! docs/sql.md documents each with its rules for NULLs, ties and empty groups.

mod downsample;
mod ewma;
mod first_last;
mod histogram;
mod isfinite;
pub(crate) mod reference;
mod samples;
pub(crate) mod states;
pub(crate) mod time_bucket;
mod vwap;

use std::sync::Arc;

use datafusion::logical_expr::{AggregateUDF, ScalarUDF, WindowUDF};

/// Rewrites a parsed statement where a function needs what DataFusion's planner does not do:
/// `time_bucket`'s named arguments.
///
/// Errors: [`crate::ErrorKind::InvalidInput`] for bad argument names.
pub(crate) fn rewrite(statement: &mut datafusion::sql::sqlparser::ast::Statement) -> crate::Result<()> {
    time_bucket::named_arguments(statement)
}

/// Varve's scalar SQL functions.
pub(crate) fn scalar() -> Vec<Arc<ScalarUDF>> {
    vec![
        Arc::new(time_bucket::TimeBucket::udf()),
        Arc::new(time_bucket::TimeBucketGapfill::udf()),
        Arc::new(isfinite::IsFinite::udf()),
    ]
}

/// Varve's aggregate SQL functions.
pub(crate) fn aggregates() -> Vec<AggregateUDF> {
    let mut all = first_last::FirstLast::all();
    all.push(vwap::Vwap::udaf());
    all.extend(samples::SampleAggregate::all());
    all.push(histogram::Histogram::udaf());
    all.extend(downsample::Downsample::all());
    all
}

/// Varve's window functions.
pub(crate) fn windows() -> Vec<WindowUDF> {
    vec![ewma::Ewma::udwf()]
}

/// The "Function reference" part of docs/sql.md (Markdown), rendered from the documentation of
/// the functions a query context registers: the time-series functions here and gap filling's
/// `locf` and `interpolate`, in the reference's order.
pub fn function_reference() -> String {
    let mut registered: Vec<(
        String,
        &'static str,
        Option<&'static datafusion::logical_expr::Documentation>,
    )> = Vec::new();
    for f in scalar() {
        registered.push((f.name().to_string(), "scalar", reference::doc(f.name())));
    }
    for f in crate::query::gapfill::FillMarker::all() {
        registered.push((f.name().to_string(), "scalar, in gap filling", reference::doc(f.name())));
    }
    for f in aggregates() {
        registered.push((f.name().to_string(), "aggregate", reference::doc(f.name())));
    }
    for f in windows() {
        registered.push((f.name().to_string(), "window", reference::doc(f.name())));
    }
    registered.sort_by_key(|(name, _, _)| reference::position(name));
    reference::render(&registered)
}

/// A list scalar holding `values` (an aggregate's state of one list).
pub(crate) fn one_list(values: arrow::array::ArrayRef) -> datafusion::common::ScalarValue {
    let field = Arc::new(arrow::datatypes::Field::new_list_field(
        values.data_type().clone(),
        true,
    ));
    let offsets = arrow::buffer::OffsetBuffer::from_lengths([values.len()]);
    datafusion::common::ScalarValue::List(Arc::new(arrow::array::ListArray::new(field, offsets, values, None)))
}

/// The state of an aggregate that keeps (time, value) samples: a list of times (Int64) and a list
/// of values (Float64), named after the aggregate.
pub(crate) fn samples_state_fields(name: &str) -> Vec<arrow::datatypes::FieldRef> {
    use arrow::datatypes::{DataType, Field};
    use datafusion::logical_expr::utils::format_state_name;
    let list = |t: DataType| DataType::List(Arc::new(Field::new_list_field(t, true)));
    vec![
        Arc::new(Field::new(
            format_state_name(name, "times"),
            list(DataType::Int64),
            true,
        )),
        Arc::new(Field::new(
            format_state_name(name, "values"),
            list(DataType::Float64),
            true,
        )),
    ]
}

/// Reads partial states of [`samples_state_fields`]'s layout: calls `f` with each non-NULL row's
/// times and values.
///
/// Errors: the first error `f` returns.
pub(crate) fn for_each_samples_state(
    states: &[arrow::array::ArrayRef],
    mut f: impl FnMut(&[i64], &[f64]) -> datafusion::common::Result<()>,
) -> datafusion::common::Result<()> {
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::{Float64Type, Int64Type};
    let (times, values) = (states[0].as_list::<i32>(), states[1].as_list::<i32>());
    for i in 0..times.len() {
        if times.is_null(i) {
            continue;
        }
        let (t, v) = (times.value(i), values.value(i));
        f(
            t.as_primitive::<Int64Type>().values(),
            v.as_primitive::<Float64Type>().values(),
        )?;
    }
    Ok(())
}
