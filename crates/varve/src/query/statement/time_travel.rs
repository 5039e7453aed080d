//! Time travel in SQL, in the syntax of Iceberg engines:
//!
//! ```sql
//! SELECT * FROM trades FOR VERSION AS OF 4187218932781;                  -- Trino: a snapshot id
//! SELECT * FROM trades FOR TIMESTAMP AS OF '2024-05-01T12:00:00Z';       -- Trino: a commit time
//! SELECT * FROM trades VERSION AS OF 4187218932781;                      -- Spark spelling
//! SELECT * FROM trades TIMESTAMP AS OF TIMESTAMP '2024-05-01 12:00:00';  -- Spark spelling
//! ```
//!
//! DataFusion's parser does not take these clauses in its default dialect, so the statement's
//! tokens are rewritten before planning: the table name becomes `"<table>@v=<id>"` or
//! `"<table>@t=<µs>"`, names the lake's schema provider resolves to the snapshot.

use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer, Word};

use crate::error::{Error, Result};
use crate::input::time::parse_time_str;

/// A table name suffix selecting a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AsOf {
    /// A snapshot id.
    Snapshot(i64),
    /// The snapshot current at this time (µs since the epoch).
    Time(i64),
}

/// Splits `name@v=<id>` / `name@t=<µs>` into the table name and the snapshot selector.
pub(crate) fn split_name(name: &str) -> Result<(&str, Option<AsOf>)> {
    let Some((table, sel)) = name.split_once('@') else {
        return Ok((name, None));
    };
    let bad = || {
        Error::invalid(format!(
            "table {name}: expected {table}@v=<snapshot id> or {table}@t=<µs>"
        ))
    };
    let as_of = if let Some(v) = sel.strip_prefix("v=") {
        AsOf::Snapshot(v.parse().map_err(|_| bad())?)
    } else if let Some(t) = sel.strip_prefix("t=") {
        AsOf::Time(t.parse().map_err(|_| bad())?)
    } else {
        return Err(bad());
    };
    Ok((table, Some(as_of)))
}

fn is_kw(t: &Token, k: Keyword) -> bool {
    matches!(t, Token::Word(Word { keyword, quote_style: None, .. }) if *keyword == k)
}

/// Rewrites the time-travel clauses of `sql`; returns `None` when there are none.
///
/// Errors: [`crate::ErrorKind::InvalidInput`] for a clause without a usable value.
pub(crate) fn rewrite(sql: &str) -> Result<Option<String>> {
    let tokens = Tokenizer::new(&GenericDialect {}, sql)
        .tokenize()
        .map_err(|e| Error::invalid(format!("SQL: {e}")))?;
    let mut out: Vec<Token> = Vec::with_capacity(tokens.len());
    let mut changed = false;
    let mut i = 0;
    while i < tokens.len() {
        // Find `[FOR] VERSION|TIMESTAMP AS OF` after a table name.
        let start = i;
        let mut j = i;
        if is_kw(&tokens[j], Keyword::FOR) {
            j = next_non_ws(&tokens, j + 1);
        }
        let kind = tokens.get(j).and_then(|t| {
            if is_kw(t, Keyword::VERSION) {
                Some(Keyword::VERSION)
            } else if is_kw(t, Keyword::TIMESTAMP) {
                Some(Keyword::TIMESTAMP)
            } else {
                None
            }
        });
        let as_pos = next_non_ws(&tokens, j + 1);
        let of_pos = next_non_ws(&tokens, as_pos + 1);
        let clause = kind.is_some()
            && tokens.get(as_pos).is_some_and(|t| is_kw(t, Keyword::AS))
            && tokens.get(of_pos).is_some_and(|t| is_kw(t, Keyword::OF));
        // Only after a table name (a word, possibly quoted), not e.g. `CAST(x AS TIMESTAMP) AS of`.
        let prev = out.iter().rposition(|t| !matches!(t, Token::Whitespace(_)));
        let after_name = prev.is_some_and(|p| matches!(out[p], Token::Word(_)));
        if !(clause && after_name) {
            out.push(tokens[start].clone());
            i += 1;
            continue;
        }
        let mut v = next_non_ws(&tokens, of_pos + 1);
        // `TIMESTAMP '...'` typed literal.
        if kind == Some(Keyword::TIMESTAMP) && tokens.get(v).is_some_and(|t| is_kw(t, Keyword::TIMESTAMP)) {
            v = next_non_ws(&tokens, v + 1);
        }
        let suffix = match (kind, tokens.get(v)) {
            (Some(Keyword::VERSION), Some(Token::Number(n, _))) => format!("v={n}"),
            (Some(Keyword::VERSION), Some(Token::SingleQuotedString(n))) if n.parse::<i64>().is_ok() => {
                format!("v={n}")
            }
            (Some(Keyword::TIMESTAMP), Some(Token::SingleQuotedString(s))) => {
                let us = parse_time_str(s.trim().trim_end_matches(" UTC"), None, None).ok_or_else(|| {
                    Error::invalid(format!(
                        "TIMESTAMP AS OF '{s}': not a time (use RFC 3339, e.g. 2024-05-01T12:00:00Z)"
                    ))
                })?;
                format!("t={us}")
            }
            (Some(Keyword::TIMESTAMP), Some(Token::Number(n, _))) => {
                // A number is milliseconds since the epoch, as in Iceberg's snapshot log.
                let ms: i64 = n
                    .parse()
                    .map_err(|_| Error::invalid(format!("TIMESTAMP AS OF {n}: not a number")))?;
                format!("t={}", ms * 1000)
            }
            _ => {
                return Err(Error::invalid(
                    "time travel: use FOR VERSION AS OF <snapshot id> or FOR TIMESTAMP AS OF '<time>'",
                ))
            }
        };
        let p = prev.unwrap_or(0);
        out.truncate(p + 1);
        if let Token::Word(w) = &out[p] {
            let name = format!("{}@{suffix}", w.value);
            out[p] = Token::Word(Word {
                value: name,
                quote_style: Some('"'),
                keyword: Keyword::NoKeyword,
            });
        }
        changed = true;
        i = v + 1;
    }
    if !changed {
        return Ok(None);
    }
    Ok(Some(out.iter().map(|t| t.to_string()).collect()))
}

fn next_non_ws(tokens: &[Token], mut i: usize) -> usize {
    while i < tokens.len() && matches!(tokens[i], Token::Whitespace(_)) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_trino_and_spark_forms() {
        let s = rewrite("SELECT * FROM default.t FOR VERSION AS OF 42 WHERE x > 1")
            .unwrap()
            .unwrap();
        assert_eq!(s, "SELECT * FROM default.\"t@v=42\" WHERE x > 1");
        let s = rewrite("select * from t timestamp as of '1970-01-01T00:00:01Z'")
            .unwrap()
            .unwrap();
        assert_eq!(s, "select * from \"t@t=1000000\"");
        assert!(rewrite("SELECT CAST(x AS TIMESTAMP) FROM t").unwrap().is_none());
    }
}
