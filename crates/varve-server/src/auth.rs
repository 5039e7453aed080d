//! Bearer tokens (RFC 6750, `Authorization: Bearer <token>`) and the token file that lists them.
//!
//! The file holds no token, only each token's SHA-256 hash (FIPS 180-4; tokens are 160 random
//! bits, so a fast hash is enough: nobody can guess one from its hash), with an id (the first 12
//! hex digits of the hash, shown by `varve token ls` and used by `varve token revoke`), a scope and
//! an optional namespace. One token per line, `#` starts a comment:
//!
//! ```text
//! id=1f2e3d4c5b6a scope=write namespace=* created=2026-12-02T16:00:00Z sha256=1f2e3d4c5b6a...
//! ```
//!
//! A `read` token may run statements that change nothing, list tables and read metrics; a `write`
//! token may also write. A token with a namespace may only name tables of that namespace
//! (`varve::referenced_tables`), and may not run schema statements.

use std::fmt::Write as _;
use std::path::Path;

use sha2::{Digest, Sha256};

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    /// Statements that change nothing, table listings, metrics.
    Read,
    /// Everything `Read` may, and writes.
    Write,
}

impl Scope {
    /// `read` or `write`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Write => "write",
        }
    }

    /// Parses `read` or `write`.
    ///
    /// Errors: any other text, with the accepted values.
    pub fn parse(s: &str) -> Result<Scope, String> {
        match s {
            "read" => Ok(Scope::Read),
            "write" => Ok(Scope::Write),
            _ => Err(format!("scope {s:?}: use read or write")),
        }
    }
}

/// One line of a token file: a token's hash with what it may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenEntry {
    /// The first 12 hex digits of the hash: how `varve token ls` and `revoke` name the token.
    pub id: String,
    /// What the token may do.
    pub scope: Scope,
    /// The only namespace whose tables the token may name; `None`: every namespace.
    pub namespace: Option<String>,
    /// When the token was made (RFC 3339, UTC).
    pub created: String,
    sha256: [u8; 32],
    /// The token's SCRAM-SHA-256 keys, for PostgreSQL logins (`scram`); `None` in entries made
    /// before Varve 0.1 had them (such tokens work over HTTP only).
    pub(crate) scram: Option<crate::scram::ScramKeys>,
}

impl TokenEntry {
    /// The entry's line in a token file (without the newline).
    pub fn line(&self) -> String {
        let scram = self
            .scram
            .as_ref()
            .map(|k| format!(" scram={}:{}", hex(&k.stored_key), hex(&k.server_key)))
            .unwrap_or_default();
        format!(
            "id={} scope={} namespace={} created={} sha256={}{scram}",
            self.id,
            self.scope.as_str(),
            self.namespace.as_deref().unwrap_or("*"),
            self.created,
            hex(&self.sha256)
        )
    }

    /// Parses a line written by [`TokenEntry::line`]; fields may come in any order, unknown fields
    /// are skipped (a later version may add some).
    fn parse(line: &str) -> Result<TokenEntry, String> {
        let (mut scope, mut namespace, mut created, mut sha) = (None, None, String::new(), None);
        let mut scram = None;
        for field in line.split_whitespace() {
            let Some((key, value)) = field.split_once('=') else {
                return Err(format!(
                    "{field:?} is not key=value (a token file holds token hashes, made by `varve token add`, not tokens)"
                ));
            };
            match key {
                "scope" => scope = Some(Scope::parse(value)?),
                "namespace" => namespace = (value != "*").then(|| value.to_string()),
                "created" => created = value.to_string(),
                "sha256" => sha = Some(unhex(value).ok_or_else(|| format!("sha256={value}: not 64 hex digits"))?),
                "scram" => {
                    let bad = || format!("scram={value}: not two groups of 64 hex digits joined by ':'");
                    let (stored, server) = value.split_once(':').ok_or_else(bad)?;
                    scram = Some(crate::scram::ScramKeys {
                        stored_key: unhex(stored).ok_or_else(bad)?,
                        server_key: unhex(server).ok_or_else(bad)?,
                    });
                }
                _ => {}
            }
        }
        let sha256 = sha.ok_or("no sha256= field")?;
        Ok(TokenEntry {
            id: hex(&sha256)[..12].to_string(),
            scope: scope.ok_or("no scope= field")?,
            namespace,
            created,
            sha256,
            scram,
        })
    }
}

/// The tokens a server accepts, by hash. Never holds a token itself.
#[derive(Clone)]
pub struct Tokens(Vec<TokenEntry>);

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tokens({} tokens)", self.0.len())
    }
}

impl Tokens {
    /// How many tokens the server accepts.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there is no token.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The tokens of a token file.
    ///
    /// Errors: the file cannot be read, a line is not a token entry (naming the file and line), or
    /// the file holds no token.
    pub fn from_file(path: &Path) -> Result<Tokens, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("token file {}: {e}", path.display()))?;
        let tokens = Tokens::parse(&text).map_err(|e| format!("token file {}: {e}", path.display()))?;
        match tokens.0.is_empty() {
            true => Err(format!(
                "token file {}: no tokens in it (add one with `varve token add --token-file {}`)",
                path.display(),
                path.display()
            )),
            false => Ok(tokens),
        }
    }

    /// The tokens of a token file's text (maybe none).
    ///
    /// Errors: a line that is not a token entry, with its number.
    pub fn parse(text: &str) -> Result<Tokens, String> {
        let mut entries = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            entries.push(TokenEntry::parse(line).map_err(|e| format!("line {}: {e}", i + 1))?);
        }
        Ok(Tokens(entries))
    }

    /// The entries, in file order.
    pub fn entries(&self) -> &[TokenEntry] {
        &self.0
    }

    /// The entries that have SCRAM keys (PostgreSQL logins).
    pub(crate) fn scram_entries(&self) -> impl Iterator<Item = (&TokenEntry, &crate::scram::ScramKeys)> {
        self.0.iter().filter_map(|e| e.scram.as_ref().map(|k| (e, k)))
    }

    /// The entry of `token`, if it is one of these.
    pub(crate) fn find(&self, token: &str) -> Option<&TokenEntry> {
        let hash: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        self.0.iter().find(|e| e.sha256 == hash)
    }
}

/// A new random token (`varve_` and 40 hex digits: 160 bits from the system's generator) and its
/// entry, made now.
///
/// Errors: a namespace that is not a valid name, or the system's random source failing.
pub fn new_token(scope: Scope, namespace: Option<&str>) -> Result<(String, TokenEntry), String> {
    if let Some(ns) = namespace {
        varve::TableIdent::parse(&format!("{ns}.t"))
            .map_err(|_| format!("namespace {ns:?}: use letters, digits, _ and -, starting with a letter or _"))?;
    }
    let mut secret = [0u8; 20];
    getrandom::fill(&mut secret).map_err(|e| format!("random token: {e}"))?;
    let token = format!("varve_{}", hex(&secret));
    let sha256: [u8; 32] = Sha256::digest(token.as_bytes()).into();
    let entry = TokenEntry {
        id: hex(&sha256)[..12].to_string(),
        scope,
        namespace: namespace.map(str::to_string),
        created: chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        sha256,
        scram: Some(crate::scram::ScramKeys::of_token(&token)),
    };
    Ok((token, entry))
}

/// Appends `entry` to the token file at `path`, creating it (readable by its owner only, with a
/// comment saying what it is) when it does not exist.
///
/// Errors: the file cannot be read or written, or is not a token file (naming the line).
pub fn add_to_file(path: &Path, entry: &TokenEntry) -> Result<(), String> {
    let what = |e: std::io::Error| format!("token file {}: {e}", path.display());
    let mut text = match std::fs::read_to_string(path) {
        Ok(t) => {
            Tokens::parse(&t).map_err(|e| format!("token file {}: {e}", path.display()))?;
            t
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            "# Varve token file: the SHA-256 hash of each token, never the token (varve token add|ls|revoke)\n"
                .to_string()
        }
        Err(e) => return Err(what(e)),
    };
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&entry.line());
    text.push('\n');
    write_private(path, &text).map_err(what)
}

/// Removes the token with id `id` from the token file at `path`; returns its entry.
///
/// Errors: the file cannot be read or written, is not a token file, or has no token with that id.
pub fn revoke_in_file(path: &Path, id: &str) -> Result<TokenEntry, String> {
    let what = |e: std::io::Error| format!("token file {}: {e}", path.display());
    let text = std::fs::read_to_string(path).map_err(what)?;
    let tokens = Tokens::parse(&text).map_err(|e| format!("token file {}: {e}", path.display()))?;
    let Some(entry) = tokens.0.iter().find(|e| e.id == id).cloned() else {
        return Err(format!(
            "token file {}: no token with id {id} (see `varve token ls`)",
            path.display()
        ));
    };
    let kept: String = text
        .lines()
        .filter(|l| TokenEntry::parse(l.trim()).map(|e| e.id != id).unwrap_or(true))
        .map(|l| format!("{l}\n"))
        .collect();
    write_private(path, &kept).map_err(what)?;
    Ok(entry)
}

/// Replaces the file at `path` with `text` (written beside it, then renamed), readable and
/// writable by its owner only.
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))?;
    }
    std::fs::rename(&tmp, path)
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn unhex(s: &str) -> Option<[u8; 32]> {
    if s.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// What a request may do: its scope and namespace, or nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Grant {
    /// `None`: only `/health`.
    pub(crate) scope: Option<Scope>,
    /// The only namespace the request may name tables of; `None`: any.
    pub(crate) namespace: Option<String>,
    /// Whether a token was presented and accepted (not an anonymous read or an open server).
    pub(crate) token: bool,
    /// Whether a token was presented and not accepted (unknown, revoked or mistyped): a refusal
    /// says so rather than that a token is missing.
    pub(crate) rejected: bool,
}

/// What a refused request is told when the token it gave is not one the server accepts.
pub(crate) const REJECTED_TOKEN: &str = "the token given is not valid here: unknown, revoked, or not sent as \
     `Authorization: Bearer <token>` (`varve token ls` lists the server's tokens)";

/// The grant of a request with `Authorization` header `header`.
pub(crate) fn grant(tokens: Option<&Tokens>, anonymous_read: bool, header: Option<&str>) -> Grant {
    let Some(tokens) = tokens else {
        return Grant {
            scope: Some(Scope::Write),
            namespace: None,
            token: false,
            rejected: false,
        };
    };
    // `Token <token>` is InfluxDB 2's scheme, which its client libraries and Telegraf send.
    let token = header.and_then(|h| {
        ["Bearer ", "bearer ", "Token ", "token "]
            .iter()
            .find_map(|scheme| h.strip_prefix(scheme))
    });
    match token.and_then(|t| tokens.find(t.trim())) {
        Some(e) => Grant {
            scope: Some(e.scope),
            namespace: e.namespace.clone(),
            token: true,
            rejected: false,
        },
        None => Grant {
            scope: anonymous_read.then_some(Scope::Read),
            namespace: None,
            token: false,
            rejected: header.is_some(),
        },
    }
}

impl Grant {
    /// The grant of a token's entry.
    pub(crate) fn of(entry: &TokenEntry) -> Grant {
        Grant {
            scope: Some(entry.scope),
            namespace: entry.namespace.clone(),
            token: true,
            rejected: false,
        }
    }

    /// Whether this grant may run statement `sql`: a read grant runs only statements that read
    /// ([`reads_only`]); a grant scoped to a namespace names only that namespace's tables (as
    /// `varve::referenced_tables` finds them) and runs no statement that changes something
    /// without naming a table (schema statements, `SET`). `pg`: the statement comes over the
    /// PostgreSQL protocol, whose `pg_catalog` lists only the grant's namespace, so any grant may
    /// read it. No grant may change the engine's runtime settings (`SET datafusion.runtime.…`:
    /// memory pool, spill directory, caches), which are the server's limits.
    pub(crate) fn check_statement(&self, sql: &str, pg: bool) -> Result<(), Refusal> {
        if sets_runtime(sql) {
            return Err(Refusal::Forbidden(
                "the engine's runtime settings (datafusion.runtime.*) are the server's: set them when starting it"
                    .into(),
            ));
        }
        let reads = reads_only(sql);
        match self.scope {
            Some(Scope::Write) => {}
            Some(Scope::Read) if reads => {}
            Some(Scope::Read) if self.token => {
                return Err(Refusal::Forbidden(
                    "this token may only read (scope read): this statement changes data".into(),
                ))
            }
            _ if self.rejected => return Err(Refusal::NeedsToken(REJECTED_TOKEN.into())),
            _ => {
                return Err(Refusal::NeedsToken(
                    "this statement changes data and needs a token with scope write".into(),
                ))
            }
        }
        if let Some(ns) = &self.namespace {
            let tables = varve::referenced_tables(sql).map_err(Refusal::Invalid)?;
            // `pg_catalog` lists only the login's namespace (PostgreSQL connections).
            if let Some(t) = tables
                .iter()
                .find(|t| t.namespace != *ns && !(pg && t.namespace == "pg_catalog"))
            {
                return Err(Refusal::Forbidden(format!(
                    "this token is scoped to namespace {ns}: it cannot use table {t}"
                )));
            }
            if tables.is_empty() && !reads {
                return Err(Refusal::Forbidden(format!(
                    "this token is scoped to namespace {ns}: it cannot run statements that name no table (schema statements, SET)"
                )));
            }
        }
        Ok(())
    }
}

/// Why a grant may not run a statement ([`Grant::check_statement`]).
#[derive(Debug)]
pub(crate) enum Refusal {
    /// The statement does not parse.
    Invalid(varve::Error),
    /// The statement needs a token (or a better one) that the request did not present.
    NeedsToken(String),
    /// The request's token does not allow it.
    Forbidden(String),
}

/// The first `n` words of `sql` by DataFusion's SQL tokenizer (whitespace, comments and
/// parentheses skipped): unquoted words upper-cased, `.` as itself, any other token as an empty
/// word; `None` for text it cannot tokenize.
fn first_words(sql: &str, n: usize) -> Option<Vec<String>> {
    use datafusion::sql::sqlparser::dialect::GenericDialect;
    use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};
    let tokens = Tokenizer::new(&GenericDialect {}, sql).tokenize().ok()?;
    Some(
        tokens
            .iter()
            .filter_map(|t| match t {
                Token::Whitespace(_) | Token::LParen => None,
                Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
                Token::Period => Some(".".to_string()),
                _ => Some(String::new()),
            })
            .take(n)
            .collect(),
    )
}

/// Whether `sql` is `SET [SESSION|LOCAL] datafusion.runtime.…`.
fn sets_runtime(sql: &str) -> bool {
    let Some(words) = first_words(sql, 6) else { return false };
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    matches!(
        words.as_slice(),
        ["SET", "DATAFUSION", ".", "RUNTIME", ..] | ["SET", "SESSION" | "LOCAL", "DATAFUSION", ".", "RUNTIME", ..]
    )
}

/// Whether the statement `sql` only reads: its first keyword (after `EXPLAIN` and `VERBOSE`,
/// but not `EXPLAIN ANALYZE`, which runs the statement) is `SELECT`, `WITH`, `VALUES`, `SHOW`,
/// `DESCRIBE` or `EXPLAIN`. Conservative: text it cannot classify counts as a write.
pub(crate) fn reads_only(sql: &str) -> bool {
    let Some(words) = first_words(sql, 3) else { return false };
    let mut words = words.into_iter();
    let mut first = words.next().unwrap_or_default();
    if first == "EXPLAIN" {
        first = words.next().unwrap_or_default();
        if first == "ANALYZE" {
            return false;
        }
        if first == "VERBOSE" {
            first = words.next().unwrap_or_default();
        }
    }
    matches!(first.as_str(), "SELECT" | "WITH" | "VALUES" | "SHOW" | "DESCRIBE")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_decide_access() {
        let (w, we) = new_token(Scope::Write, None).unwrap();
        let (r, re) = new_token(Scope::Read, Some("iot")).unwrap();
        assert!(w.starts_with("varve_") && w.len() == 46, "{w}");
        let text = format!("# ops\n{}\n\n  {}  \n", we.line(), re.line());
        assert!(!text.contains(&w) && !text.contains(&r), "the file holds no token");
        let t = Tokens::parse(&text).unwrap();
        assert_eq!(t.entries(), &[we.clone(), re.clone()]);
        let g = |tokens: Option<&Tokens>, anon: bool, h: Option<&str>| {
            let g = grant(tokens, anon, h);
            (g.scope, g.namespace)
        };
        assert_eq!(
            g(Some(&t), false, Some(&format!("Bearer {w}"))),
            (Some(Scope::Write), None)
        );
        assert_eq!(
            g(Some(&t), false, Some(&format!("Bearer {r}"))),
            (Some(Scope::Read), Some("iot".into()))
        );
        assert_eq!(g(Some(&t), false, Some("Bearer nope")), (None, None));
        assert_eq!(g(Some(&t), false, None), (None, None));
        assert_eq!(g(Some(&t), true, None), (Some(Scope::Read), None));
        assert_eq!(
            g(Some(&t), true, Some(&format!("Basic {w}"))),
            (Some(Scope::Read), None)
        );
        assert_eq!(g(None, false, None), (Some(Scope::Write), None));
        assert!(Tokens::parse("# only a comment\n").unwrap().entries().is_empty());
        let e = Tokens::parse("# old style\ns3cret\n").unwrap_err();
        assert!(e.starts_with("line 2:") && e.contains("varve token add"), "{e}");
        assert!(new_token(Scope::Read, Some("no.dots")).is_err());
    }

    #[test]
    fn token_files_add_and_revoke() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens");
        let (_, a) = new_token(Scope::Write, None).unwrap();
        let (_, b) = new_token(Scope::Read, Some("iot")).unwrap();
        add_to_file(&path, &a).unwrap();
        add_to_file(&path, &b).unwrap();
        assert_eq!(Tokens::from_file(&path).unwrap().entries(), &[a.clone(), b.clone()]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
        assert_eq!(revoke_in_file(&path, &a.id).unwrap(), a);
        assert_eq!(Tokens::from_file(&path).unwrap().entries(), std::slice::from_ref(&b));
        assert!(revoke_in_file(&path, &a.id).unwrap_err().contains("no token with id"));
        revoke_in_file(&path, &b.id).unwrap();
        assert!(Tokens::from_file(&path).unwrap_err().contains("no tokens in it"));
        assert!(std::fs::read_to_string(&path)
            .unwrap()
            .starts_with("# Varve token file"));
    }

    #[test]
    fn statements_that_only_read() {
        for s in [
            "SELECT 1",
            "  with x as (select 1) select * from x",
            "explain select 1",
            "EXPLAIN VERBOSE SELECT 1",
            "SHOW TABLES",
            "-- a note\n/* and */ select 2",
            "(SELECT 1)",
        ] {
            assert!(reads_only(s), "{s}");
        }
        for s in [
            "INSERT INTO t VALUES (1)",
            "DELETE FROM t",
            "EXPLAIN ANALYZE INSERT INTO t VALUES (1)",
            "CREATE TABLE t (a int)",
            "\"select\" 1",
            "",
        ] {
            assert!(!reads_only(s), "{s}");
        }
        assert!(sets_runtime("SET datafusion.runtime.memory_limit = '1G'"));
        assert!(sets_runtime("set session DataFusion.Runtime.temp_directory = '/'"));
        assert!(!sets_runtime("SET datafusion.execution.batch_size = 10"));
    }
}
