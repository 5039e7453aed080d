//! Limits on one query, in one place for every front end (the CLI, Python, HTTP and PostgreSQL
//! servers): how long it may run, how many rows it may return, how much memory its sorts,
//! aggregates and joins may hold ([`QueryOptions`]); the errors that report a limit reached; and
//! the stream that ends a result at its limits ([`limited`]). Sessions apply them
//! (`session::Session`); the memory limit is set on the session's runtime (`context`).

use std::time::Duration;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use datafusion::execution::SendableRecordBatchStream;
use futures::StreamExt;

use crate::error::{Error, ErrorKind, Result};

/// Limits on one query.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueryOptions {
    /// Cancel the query after this long.
    pub timeout: Option<Duration>,
    /// Fail when the result grows past this many rows.
    pub max_rows: Option<usize>,
    /// Bound the memory of sorts, aggregates and joins to this many bytes; they spill to a temporary
    /// directory before they fail.
    pub memory_limit: Option<usize>,
}

impl QueryOptions {
    /// Checks the values: zero limits are invalid.
    ///
    /// Errors: [`crate::ErrorKind::InvalidInput`].
    pub fn validate(&self) -> Result<()> {
        if self.timeout.is_some_and(|t| t.is_zero()) {
            return Err(Error::invalid("timeout must be more than 0 seconds"));
        }
        if self.max_rows == Some(0) {
            return Err(Error::invalid("max_rows must be at least 1"));
        }
        if self.memory_limit == Some(0) {
            return Err(Error::invalid("memory_limit must be more than 0 bytes"));
        }
        Ok(())
    }
}

/// The error of a query cancelled at its timeout `t`.
pub(crate) fn timeout_error(t: Duration) -> Error {
    Error::new(
        ErrorKind::Timeout,
        format!(
            "the query ran past its timeout of {:.3} s and was cancelled",
            t.as_secs_f64()
        ),
    )
}

/// The error of a result that passed `max` rows.
pub(crate) fn too_many_rows(max: usize) -> Error {
    Error::new(
        ErrorKind::LimitExceeded,
        format!("the result has more than {max} rows (max_rows); add a LIMIT or a filter"),
    )
}

/// `stream` ending with an error once it passes `limits.max_rows` rows or `limits.timeout` from
/// `started`.
pub(crate) fn limited(
    schema: SchemaRef,
    stream: SendableRecordBatchStream,
    limits: QueryOptions,
    started: tokio::time::Instant,
) -> SendableRecordBatchStream {
    use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
    type Item = datafusion::error::Result<RecordBatch>;
    let deadline = limits.timeout.map(|t| (started + t, t));
    let batches = futures::stream::unfold(Some((stream, 0usize)), move |state| async move {
        let (mut stream, rows) = state?;
        let next = match deadline {
            Some((at, t)) => match tokio::time::timeout_at(at, stream.next()).await {
                Ok(next) => next,
                Err(_) => return Some((Item::Err(timeout_error(t).into()), None)),
            },
            None => stream.next().await,
        };
        match next? {
            Ok(b) => {
                let rows = rows + b.num_rows();
                match limits.max_rows {
                    Some(max) if rows > max => Some((Item::Err(too_many_rows(max).into()), None)),
                    _ => Some((Item::Ok(b), Some((stream, rows)))),
                }
            }
            Err(e) => Some((Item::Err(e), None)),
        }
    });
    Box::pin(RecordBatchStreamAdapter::new(schema, batches))
}
