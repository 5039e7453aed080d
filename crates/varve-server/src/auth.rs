//! Bearer tokens (RFC 6750, `Authorization: Bearer <token>`): a token file lists the tokens that
//! may read and write. What a request needs is decided by its route: SQL needs write access
//! unless the statement only reads.

use std::collections::HashSet;
use std::path::Path;

/// The tokens a server accepts. Compared in full; never logged.
#[derive(Clone)]
pub struct Tokens(HashSet<String>);

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tokens({} tokens)", self.0.len())
    }
}

impl Tokens {
    /// Tokens from a file: one per line; blank lines and lines starting with `#` are skipped.
    ///
    /// Errors: the file cannot be read, or holds no token (naming the file).
    pub fn from_file(path: &Path) -> Result<Tokens, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("token file {}: {e}", path.display()))?;
        Tokens::parse(&text).ok_or_else(|| format!("token file {}: no tokens in it", path.display()))
    }

    /// Tokens from the text of a token file; `None` when it holds none.
    pub fn parse(text: &str) -> Option<Tokens> {
        let set: HashSet<String> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_string)
            .collect();
        (!set.is_empty()).then_some(Tokens(set))
    }

    fn contains(&self, token: &str) -> bool {
        self.0.contains(token)
    }
}

/// What a request may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Nothing but `/health`.
    None,
    /// Queries that change nothing, listings, metrics.
    Read,
    /// Everything.
    Write,
}

/// The access of a request with `Authorization` header `header`.
pub(crate) fn access(tokens: Option<&Tokens>, anonymous_read: bool, header: Option<&str>) -> Access {
    let Some(tokens) = tokens else {
        return Access::Write;
    };
    let token = header.and_then(|h| h.strip_prefix("Bearer ").or_else(|| h.strip_prefix("bearer ")));
    match token {
        Some(t) if tokens.contains(t.trim()) => Access::Write,
        _ if anonymous_read => Access::Read,
        _ => Access::None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_decide_access() {
        let t = Tokens::parse("# ops\nsecret-1\n\n  secret-2  \n").unwrap();
        assert_eq!(access(Some(&t), false, Some("Bearer secret-2")), Access::Write);
        assert_eq!(access(Some(&t), false, Some("Bearer nope")), Access::None);
        assert_eq!(access(Some(&t), false, None), Access::None);
        assert_eq!(access(Some(&t), true, None), Access::Read);
        assert_eq!(access(Some(&t), true, Some("Basic c2VjcmV0LTE=")), Access::Read);
        assert_eq!(access(None, false, None), Access::Write);
        assert!(Tokens::parse("# only a comment\n").is_none());
    }
}
