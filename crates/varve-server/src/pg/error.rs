//! Varve's errors as PostgreSQL errors: a SQLSTATE code by kind (PostgreSQL's "Error Codes"
//! appendix) and Varve's message.

use pgwire::error::{ErrorInfo, PgWireError};
use varve::ErrorKind;

use crate::auth::Refusal;

/// An `ERROR` with SQLSTATE `code`.
pub(crate) fn user_error(code: &str, message: impl Into<String>) -> PgWireError {
    PgWireError::UserError(Box::new(ErrorInfo::new("ERROR".into(), code.into(), message.into())))
}

/// The SQLSTATE of a Varve error kind.
pub(crate) fn sqlstate(kind: ErrorKind) -> &'static str {
    match kind {
        // undefined_table
        ErrorKind::NotFound => "42P01",
        // duplicate_table
        ErrorKind::AlreadyExists => "42P07",
        // serialization_failure: retry
        ErrorKind::Conflict => "40001",
        // syntax_error_or_access_rule_violation
        ErrorKind::InvalidInput => "42000",
        // datatype_mismatch
        ErrorKind::SchemaMismatch => "42804",
        // program_limit_exceeded
        ErrorKind::LimitExceeded => "54000",
        // query_canceled
        ErrorKind::Timeout => "57014",
        // feature_not_supported
        ErrorKind::Unsupported => "0A000",
        // io_error
        ErrorKind::Storage => "58030",
        // data_corrupted
        ErrorKind::Corruption => "XX001",
        ErrorKind::Internal => "XX000",
    }
}

/// The Varve error kind code of a PostgreSQL error, by its SQLSTATE (for metrics).
pub(crate) fn kind_of(e: &PgWireError) -> &'static str {
    let code = match e {
        PgWireError::UserError(info) => info.code.as_str(),
        _ => "XX000",
    };
    match code {
        "42P01" => "not_found",
        "42P07" => "already_exists",
        "40001" => "conflict",
        "42000" | "42601" | "42704" | "22023" | "22P02" | "08P01" => "invalid_input",
        "42804" => "schema_mismatch",
        "54000" => "limit_exceeded",
        "57014" => "timeout",
        "0A000" => "unsupported",
        "58030" => "storage",
        "XX001" => "corruption",
        "53300" => "busy",
        "28000" | "28P01" => "unauthorized",
        "42501" => "forbidden",
        _ => "internal",
    }
}

/// A Varve error as a PostgreSQL error.
pub(crate) fn sql_error(e: varve::Error) -> PgWireError {
    user_error(sqlstate(e.kind()), e.to_string())
}

/// A refused statement: `28000` (invalid_authorization_specification) without a token that may,
/// `42501` (insufficient_privilege) for a token that may not.
pub(crate) fn refusal(r: Refusal) -> PgWireError {
    match r {
        Refusal::Invalid(e) => sql_error(e),
        Refusal::NeedsToken(m) => user_error("28000", m),
        Refusal::Forbidden(m) => user_error("42501", m),
    }
}

/// The error information of `e`, for an error response among a query's responses.
pub(crate) fn info(e: PgWireError) -> ErrorInfo {
    match e {
        PgWireError::UserError(info) => *info,
        other => ErrorInfo::new("ERROR".into(), "XX000".into(), other.to_string()),
    }
}
