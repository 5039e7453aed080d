//! Optimizer rules: plan rewrites that change where a scan reads from, never what the plan
//! computes. `newest` answers newest-row queries from the last-value index and marks the scans it
//! narrows; `newest_buckets` bounds `GROUP BY time_bucket(...) ORDER BY ... DESC LIMIT k` to the
//! newest k buckets' time range; `file_order` reads a top-k's files in sort order, through the
//! one-partition union of `chain` (an execution node).

pub(crate) mod chain;
pub(crate) mod file_order;
pub(crate) mod newest;
pub(crate) mod newest_buckets;
