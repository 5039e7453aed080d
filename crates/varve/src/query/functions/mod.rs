//! Time-series SQL functions, registered in every query session (`query::session`):
//!
//! - `time_bucket` (`time_bucket`): fixed-width time buckets;
//! - `isfinite` (`isfinite`): false for NaN and infinities;
//! - `first`, `last`, `first_not_null`, `last_not_null` (`first_last`): a group's value at its
//!   earliest or latest time;
//! - `vwap` (`vwap`): the volume-weighted average price.
//!
//! docs/sql.md documents each with its rules for NULLs, ties and empty groups.

mod first_last;
mod isfinite;
mod time_bucket;
mod vwap;

use std::sync::Arc;

use datafusion::logical_expr::{AggregateUDF, ScalarUDF};

/// Varve's scalar SQL functions.
pub(crate) fn scalar() -> Vec<Arc<ScalarUDF>> {
    vec![
        Arc::new(time_bucket::TimeBucket::udf()),
        Arc::new(isfinite::IsFinite::udf()),
    ]
}

/// Varve's aggregate SQL functions.
pub(crate) fn aggregates() -> Vec<AggregateUDF> {
    let mut all = first_last::FirstLast::all();
    all.push(vwap::Vwap::udaf());
    all
}
