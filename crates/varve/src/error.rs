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
    /// A valid table uses a feature Varve does not implement yet (for example delete files
    /// written by another engine); nothing was read or changed.
    Unsupported,
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
            ErrorKind::Unsupported => "unsupported",
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

/// How to list a lake's tables, as a missing table's error says it by default: a statement every
/// front end runs. A front end may name its own way ([`crate::Session::set_table_hint`]).
pub(crate) const DEFAULT_TABLE_HINT: &str = "SHOW TABLES lists the tables";

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
    fn retry(mut self, retryable: bool) -> Self {
        self.retryable = retryable;
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
    cut_long(value, MAX_QUOTED_CHARS)
}

/// [`cut`] at `max` characters, for text that is a whole message of another library (which may
/// quote a value in it).
pub(crate) fn cut_long(value: &str, max: usize) -> String {
    match value.char_indices().nth(max) {
        None => value.to_string(),
        Some((end, _)) => format!("{}... ({} bytes)", &value[..end], value.len()),
    }
}

/// A failure reading one object, with the object's path: what the query path's object store
/// (see `query::scan::store`) returns, so that every storage and corruption error names its object.
#[derive(Debug)]
pub(crate) struct ObjectFailure {
    /// The object, relative to the lake root.
    pub(crate) path: String,
    /// `Some(size)` when a read ran past the end of an object of `size` bytes: the file is
    /// shorter than the metadata that points at it says.
    pub(crate) truncated_at: Option<u64>,
    pub(crate) source: object_store::Error,
}

impl fmt::Display for ObjectFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.truncated_at {
            Some(size) => write!(
                f,
                "{} is truncated: it has {size} bytes, fewer than the table's metadata says",
                self.path
            ),
            None => write!(f, "{}: {}", self.path, self.source),
        }
    }
}

impl std::error::Error for ObjectFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// The kind and message of an object store error, by its type.
fn classify_store(e: &object_store::Error) -> (ErrorKind, bool, String) {
    use object_store::Error as O;
    match e {
        O::NotFound { path, .. } => (ErrorKind::NotFound, false, format!("{path} does not exist")),
        O::AlreadyExists { path, .. } => (ErrorKind::AlreadyExists, false, format!("{path} exists already")),
        O::PermissionDenied { .. } | O::Unauthenticated { .. } => (ErrorKind::Storage, false, storage_message(e)),
        O::Generic { source, .. } => match source.downcast_ref::<ObjectFailure>() {
            Some(f) => classify_failure(f),
            None if s3_code(&e.to_string()).as_deref() == Some("NoSuchBucket") => {
                (ErrorKind::Storage, false, storage_message(e))
            }
            None => (ErrorKind::Storage, true, storage_message(e)),
        },
        other => (ErrorKind::Storage, true, storage_message(other)),
    }
}

/// The text between `<tag>` and `</tag>` in an S3 error body.
fn xml_field(text: &str, tag: &str) -> Option<String> {
    let open = format!("<{tag}>");
    let start = text.find(&open)? + open.len();
    let end = text[start..].find(&format!("</{tag}>"))? + start;
    Some(text[start..end].trim().to_string())
}

fn s3_code(text: &str) -> Option<String> {
    text.contains("<Error>").then(|| xml_field(text, "Code")).flatten()
}

/// A store failure as one line: an S3 error's XML body (AWS S3 API Reference, "Error
/// responses") is reduced to its code, message and bucket, with the request's method and URL
/// (without the query) and status; a missing bucket says so by name.
fn storage_message(e: &dyn fmt::Display) -> String {
    let text = e.to_string();
    let Some(code) = s3_code(&text) else {
        return format!("storage: {}", text.split_whitespace().collect::<Vec<_>>().join(" "));
    };
    let bucket = xml_field(&text, "BucketName");
    if code == "NoSuchBucket" {
        return format!(
            "storage: the bucket {} does not exist (S3 NoSuchBucket): create it first, or check the lake URL",
            bucket.as_deref().unwrap_or("of the lake")
        );
    }
    let message = xml_field(&text, "Message").unwrap_or_default();
    let head = text[..text
        .find("<?xml")
        .or_else(|| text.find("<Error>"))
        .unwrap_or(text.len())]
        .trim();
    let request = head
        .split_whitespace()
        .skip_while(|w| !matches!(*w, "GET" | "PUT" | "POST" | "HEAD" | "DELETE"))
        .take(2)
        .map(|w| w.split('?').next().unwrap_or(w))
        .collect::<Vec<_>>()
        .join(" ");
    let status = head.find("status code: ").map(|i| {
        head[i + "status code: ".len()..]
            .trim_end_matches(':')
            .trim()
            .to_string()
    });
    let mut out = format!("storage: S3 {code}: {message}");
    if let Some(b) = bucket {
        out.push_str(&format!(" (bucket {b})"));
    }
    match (request.is_empty(), status) {
        (false, Some(s)) => out.push_str(&format!(" ({s} on {request})")),
        (false, None) => out.push_str(&format!(" (on {request})")),
        (true, Some(s)) => out.push_str(&format!(" ({s})")),
        (true, None) => {}
    }
    out
}

fn classify_failure(f: &ObjectFailure) -> (ErrorKind, bool, String) {
    if f.truncated_at.is_some() {
        return (ErrorKind::Corruption, false, format!("data file {f}"));
    }
    match classify_store(&f.source) {
        // NotFound and the like name the path already.
        (k @ (ErrorKind::NotFound | ErrorKind::AlreadyExists), r, m) => (k, r, m),
        (k, r, _) => (k, r, format!("storage: {f}")),
    }
}

/// The first object store failure in `e`'s source chain, classified.
fn classify_chain(e: &(dyn std::error::Error + 'static)) -> Option<(ErrorKind, bool, String)> {
    let mut cur = Some(e);
    while let Some(x) = cur {
        if let Some(f) = x.downcast_ref::<ObjectFailure>() {
            return Some(classify_failure(f));
        }
        if let Some(o) = x.downcast_ref::<object_store::Error>() {
            return Some(classify_store(o));
        }
        cur = x.source();
    }
    None
}

fn from_chain(
    e: impl std::error::Error + Send + Sync + 'static,
) -> std::result::Result<Error, Box<dyn std::error::Error + Send + Sync>> {
    match classify_chain(&e) {
        Some((kind, retryable, message)) => Ok(Error {
            kind,
            message,
            retryable,
            source: Some(Box::new(e)),
        }),
        None => Err(Box::new(e)),
    }
}

impl From<object_store::Error> for Error {
    fn from(e: object_store::Error) -> Self {
        let (kind, retryable, message) = classify_store(&e);
        Error {
            kind,
            message,
            retryable,
            source: Some(Box::new(e)),
        }
    }
}

impl From<iceberg::Error> for Error {
    fn from(e: iceberg::Error) -> Self {
        Error::corrupt(format!("iceberg metadata: {e}")).with_source(e)
    }
}

impl From<parquet::errors::ParquetError> for Error {
    fn from(e: parquet::errors::ParquetError) -> Self {
        if let Some((kind, retryable, message)) = classify_chain(&e) {
            return Error {
                kind,
                message,
                retryable,
                source: Some(Box::new(e)),
            };
        }
        Error::corrupt(format!("parquet: {e}")).with_source(e)
    }
}

impl From<arrow::error::ArrowError> for Error {
    fn from(e: arrow::error::ArrowError) -> Self {
        match e {
            arrow::error::ArrowError::ExternalError(inner) => match inner.downcast::<Error>() {
                Ok(v) => *v,
                Err(other) => match classify_chain(other.as_ref()) {
                    Some((kind, retryable, message)) => Error {
                        kind,
                        message,
                        retryable,
                        source: Some(other),
                    },
                    None => Error::invalid(other.to_string()).with_source(other),
                },
            },
            other => Error::invalid(strip_arrow_prefix(&other.to_string())).with_source(other),
        }
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::corrupt(format!("metadata JSON: {e}")).with_source(e)
    }
}

impl From<datafusion::error::DataFusionError> for Error {
    fn from(e: datafusion::error::DataFusionError) -> Self {
        use datafusion::error::DataFusionError as D;
        match e {
            D::External(inner) => match inner.downcast::<Error>() {
                Ok(v) => *v,
                Err(other) => match classify_chain(other.as_ref()) {
                    Some((kind, retryable, message)) => Error {
                        kind,
                        message,
                        retryable,
                        source: Some(other),
                    },
                    None => Error::invalid(other.to_string()).with_source(other),
                },
            },
            D::Context(ctx, inner) => Error::from(*inner).context(ctx),
            D::Shared(inner) => match std::sync::Arc::try_unwrap(inner) {
                Ok(v) => Error::from(v),
                Err(arc) => match classify_chain(arc.as_ref()) {
                    Some((kind, retryable, message)) => Error::new(kind, message).retry(retryable).with_source(arc),
                    None => Error::invalid(arc.to_string()).with_source(arc),
                },
            },
            D::ArrowError(inner, _) => Error::from(*inner),
            D::ResourcesExhausted(m) => Error::new(
                ErrorKind::LimitExceeded,
                format!("the query needs more memory than its limit allows, even after spilling ({m})"),
            ),
            D::ObjectStore(e) => Error::from(*e),
            D::ParquetError(e) => Error::from(*e),
            other => {
                let other = match from_chain(other) {
                    Ok(classified) => return classified,
                    Err(o) => match o.downcast::<D>() {
                        Ok(d) => *d,
                        Err(o) => return Error::internal(o.to_string()),
                    },
                };
                let text = other.strip_backtrace();
                if let Some(name) = missing_table(&text) {
                    return Error::not_found(format!("table {name} does not exist ({DEFAULT_TABLE_HINT})"));
                }
                let lower = text.to_ascii_lowercase();
                let kind = if lower.contains("not found") || lower.contains("does not exist") {
                    ErrorKind::NotFound
                } else if matches!(other, D::Internal(_)) {
                    ErrorKind::Internal
                } else {
                    ErrorKind::InvalidInput
                };
                Error::new(kind, text).with_source(other)
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
pub(crate) fn missing_table(text: &str) -> Option<String> {
    let start = text.find("table '")? + "table '".len();
    let rest = &text[start..];
    let end = rest.find("' not found")?;
    let name = &rest[..end];
    Some(name.strip_prefix("varve.").unwrap_or(name).to_string())
}

#[cfg(test)]
mod tests {
    use super::storage_message;

    #[test]
    fn s3_error_bodies_become_one_line() {
        let missing = "Generic S3 error: Error performing list request: Error performing GET \
            http://127.0.0.1:5599/no-such-bucket?delimiter=%2F&list-type=2 in 5ms - Server returned non-2xx status \
            code: 404 Not Found: <?xml version=\"1.0\" encoding=\"utf-8\"?>\n<Error><Code>NoSuchBucket</Code>\
            <Message>The specified bucket does not exist</Message><BucketName>no-such-bucket</BucketName>\
            <RequestId>x</RequestId></Error>";
        assert_eq!(
            storage_message(&missing),
            "storage: the bucket no-such-bucket does not exist (S3 NoSuchBucket): create it first, or check the lake URL"
        );
        let denied = "Generic S3 error: Error performing GET http://h/b/k?x=1 in 5ms - Server returned non-2xx \
            status code: 403 Forbidden: <?xml version=\"1.0\"?>\n<Error><Code>AccessDenied</Code><Message>Access \
            Denied</Message></Error>";
        assert_eq!(
            storage_message(&denied),
            "storage: S3 AccessDenied: Access Denied (403 Forbidden on GET http://h/b/k)"
        );
        assert_eq!(storage_message(&"a\n  b"), "storage: a b");
    }
}
