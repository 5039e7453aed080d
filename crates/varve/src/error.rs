//! The engine's one error type.
//!
//! Every public operation returns [`Result`]; the kinds are the ones a caller can act on (see
//! DESIGN.md, "Errors"). The CLI maps them to exit codes, the Python package to exception classes.

use std::fmt;

/// What went wrong, in the terms a caller can act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// A lake, namespace, table, snapshot, column or file does not exist.
    NotFound,
    /// A table to be created exists already.
    AlreadyExists,
    /// Input that cannot be accepted: a bad value, option, URL or SQL statement.
    InvalidInput,
    /// Input whose schema cannot be aligned with the table's schema.
    SchemaMismatch,
    /// Another writer committed first too many times; retrying the whole operation may succeed.
    Conflict,
    /// The object store failed (network, permissions, missing bucket).
    Storage,
    /// A resource limit (memory, rows) was reached.
    LimitExceeded,
    /// An operation ran past its deadline.
    Timeout,
    /// Stored metadata or data cannot be decoded.
    Corruption,
    /// A bug or an unexpected engine failure.
    Internal,
}

impl ErrorKind {
    /// A short stable code for the kind, e.g. `not_found`, used by the CLI and the Python package.
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::NotFound => "not_found",
            ErrorKind::AlreadyExists => "already_exists",
            ErrorKind::InvalidInput => "invalid_input",
            ErrorKind::SchemaMismatch => "schema_mismatch",
            ErrorKind::Conflict => "conflict",
            ErrorKind::Storage => "storage",
            ErrorKind::LimitExceeded => "limit_exceeded",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Corruption => "corruption",
            ErrorKind::Internal => "internal",
        }
    }
}

/// An engine error: a [`ErrorKind`], a one-line message for people, whether retrying may help, and
/// the error it came from (its [`std::error::Error::source`], e.g. an `object_store` or I/O error),
/// so callers can classify by type rather than by message text.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    retryable: bool,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

/// The engine's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A new error of `kind` with a message.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        let retryable = matches!(kind, ErrorKind::Conflict);
        Error {
            kind,
            message: message.into(),
            retryable,
            source: None,
        }
    }
    /// Shorthand for [`ErrorKind::NotFound`].
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, message)
    }
    /// Shorthand for [`ErrorKind::InvalidInput`].
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidInput, message)
    }
    /// Shorthand for [`ErrorKind::SchemaMismatch`].
    pub fn schema(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::SchemaMismatch, message)
    }
    /// Shorthand for [`ErrorKind::Corruption`].
    pub fn corrupt(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Corruption, message)
    }
    /// Shorthand for [`ErrorKind::Internal`].
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, message)
    }
    /// A storage error; `retryable` when the store may answer on a later attempt.
    pub fn storage(message: impl Into<String>, retryable: bool) -> Self {
        Error {
            kind: ErrorKind::Storage,
            message: message.into(),
            retryable,
            source: None,
        }
    }
    /// This error with `source` as the error it came from (kept for [`std::error::Error::source`]).
    pub fn with_source(mut self, source: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>) -> Self {
        self.source = Some(source.into());
        self
    }
    /// Whether this error or an error in its source chain is an I/O error of `kind` (e.g.
    /// [`std::io::ErrorKind::BrokenPipe`] for a closed output).
    pub fn has_io_kind(&self, kind: std::io::ErrorKind) -> bool {
        let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(self);
        while let Some(e) = cur {
            if let Some(io) = e.downcast_ref::<std::io::Error>() {
                if io.kind() == kind {
                    return true;
                }
            }
            cur = e.source();
        }
        false
    }
    /// The kind of error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
    /// The message, one line, without the kind.
    pub fn message(&self) -> &str {
        &self.message
    }
    /// Whether the same call may succeed when repeated.
    pub fn is_retryable(&self) -> bool {
        self.retryable
    }
    /// A copy of this error with `context` put before its message (`context: message`).
    pub fn context(self, context: impl fmt::Display) -> Self {
        Error {
            message: format!("{context}: {}", self.message),
            ..self
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// Longest value, in characters, quoted whole in a message; longer values are cut (see [`cut`]).
pub(crate) const MAX_QUOTED_CHARS: usize = 80;

/// `value` for an error message: itself when at most [`MAX_QUOTED_CHARS`] characters, else its first
/// [`MAX_QUOTED_CHARS`] characters, `...` and its length (`abc... (67108864 bytes)`), so that a huge
/// field never makes a huge message.
pub(crate) fn cut(value: &str) -> String {
    match value.char_indices().nth(MAX_QUOTED_CHARS) {
        None => value.to_string(),
        Some((end, _)) => format!("{}... ({} bytes)", &value[..end], value.len()),
    }
}

impl From<object_store::Error> for Error {
    fn from(e: object_store::Error) -> Self {
        match e {
            object_store::Error::NotFound { path, .. } => Error::not_found(format!("{path} does not exist")),
            object_store::Error::AlreadyExists { path, .. } => {
                Error::new(ErrorKind::AlreadyExists, format!("{path} exists already"))
            }
            e @ (object_store::Error::PermissionDenied { .. } | object_store::Error::Unauthenticated { .. }) => {
                Error::storage(format!("storage: {e}"), false)
            }
            other => Error::storage(format!("storage: {other}"), true),
        }
    }
}

impl From<iceberg::Error> for Error {
    fn from(e: iceberg::Error) -> Self {
        Error::corrupt(format!("iceberg metadata: {e}"))
    }
}

impl From<parquet::errors::ParquetError> for Error {
    fn from(e: parquet::errors::ParquetError) -> Self {
        Error::corrupt(format!("parquet: {e}"))
    }
}

impl From<arrow::error::ArrowError> for Error {
    fn from(e: arrow::error::ArrowError) -> Self {
        match e {
            arrow::error::ArrowError::ExternalError(inner) => match inner.downcast::<Error>() {
                Ok(v) => *v,
                Err(other) => Error::invalid(other.to_string()),
            },
            other => Error::invalid(strip_arrow_prefix(&other.to_string())),
        }
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::corrupt(format!("metadata JSON: {e}"))
    }
}

impl From<datafusion::error::DataFusionError> for Error {
    fn from(e: datafusion::error::DataFusionError) -> Self {
        use datafusion::error::DataFusionError as D;
        match e {
            D::External(inner) => match inner.downcast::<Error>() {
                Ok(v) => *v,
                Err(other) => Error::invalid(other.to_string()),
            },
            D::Context(ctx, inner) => Error::from(*inner).context(ctx),
            D::Shared(inner) => match std::sync::Arc::try_unwrap(inner) {
                Ok(v) => Error::from(v),
                Err(arc) => Error::invalid(arc.to_string()),
            },
            D::ArrowError(inner, _) => Error::from(*inner),
            D::ResourcesExhausted(m) => Error::new(
                ErrorKind::LimitExceeded,
                format!("the query needs more memory than its limit allows, even after spilling ({m})"),
            ),
            D::ObjectStore(e) => Error::from(*e),
            D::ParquetError(e) => Error::from(*e),
            other => {
                let text = other.strip_backtrace();
                if let Some(name) = missing_table(&text) {
                    return Error::not_found(format!(
                        "table {name} does not exist (varve ls, or information_schema.tables, lists tables)"
                    ));
                }
                let lower = text.to_ascii_lowercase();
                let kind = if lower.contains("not found") || lower.contains("does not exist") {
                    ErrorKind::NotFound
                } else if matches!(other, D::Internal(_)) {
                    ErrorKind::Internal
                } else {
                    ErrorKind::InvalidInput
                };
                Error::new(kind, text)
            }
        }
    }
}

impl From<Error> for datafusion::error::DataFusionError {
    fn from(e: Error) -> Self {
        datafusion::error::DataFusionError::External(Box::new(e))
    }
}

impl From<Error> for arrow::error::ArrowError {
    fn from(e: Error) -> Self {
        arrow::error::ArrowError::ExternalError(Box::new(e))
    }
}

fn strip_arrow_prefix(s: &str) -> String {
    for p in [
        "Cast error: ",
        "Parser error: ",
        "Invalid argument error: ",
        "Compute error: ",
    ] {
        if let Some(rest) = s.strip_prefix(p) {
            return rest.to_string();
        }
    }
    s.to_string()
}

/// The table name of DataFusion's "table 'varve.ns.t' not found" planning error.
fn missing_table(text: &str) -> Option<String> {
    let start = text.find("table '")? + "table '".len();
    let rest = &text[start..];
    let end = rest.find("' not found")?;
    let name = &rest[..end];
    Some(name.strip_prefix("varve.").unwrap_or(name).to_string())
}
