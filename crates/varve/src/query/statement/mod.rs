//! The statement front end: one statement's text read once, before anything is planned, into
//! what every later pass asks of it. The text gets Varve's token rewrites (time travel becomes
//! table-name suffixes, `time_travel`; `ASOF JOIN` becomes a marked join, `asof`; `partition =`
//! in a DDL statement's options is quoted), then DataFusion's parser reads it once, with the
//! session's dialect and recursion limit. From that parse come the statement's kind, the tables it
//! names, whether it is a top-k query and whether it nests too deep; DDL recognition and planning
//! take the same parse. Before this module a statement was parsed five times and tokenized about
//! eight.
//!
//! [`referenced_tables`] is the same reading for a text of several statements, for a server that
//! checks a token's scope before it runs any.

pub(crate) mod ddl;
pub(crate) mod time_travel;

use std::ops::ControlFlow;

use datafusion::config::SqlParserOptions;
use datafusion::error::DataFusionError;
use datafusion::sql::parser::{CopyToSource, DFParser, DFParserBuilder, Statement as DFStatement};
use datafusion::sql::planner::object_name_to_table_reference;
use datafusion::sql::resolve::resolve_table_references;
use datafusion::sql::sqlparser::ast::{
    Expr, LimitClause, ObjectType, Query, Statement as SqlStatement, Visit, Visitor,
};
use datafusion::sql::sqlparser::dialect::dialect_from_str;

use crate::catalog::{TableIdent, DEFAULT_NAMESPACE};
use crate::error::{Error, Result};
use crate::query::asof;
use crate::query::references::LAST_VALUES_SUFFIX;

/// How deep a statement's expressions may nest before it is refused ([`Parsed::check_depth`]).
pub(crate) const MAX_EXPR_DEPTH: usize = 1_000;

/// What a statement does, from its parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A query (`SELECT`, `VALUES`, `WITH ...`), `EXPLAIN` of anything, `SHOW` and `DESCRIBE`.
    Read,
    /// A statement that changes rows: `INSERT`, `DELETE`, `UPDATE`, `MERGE`.
    Write,
    /// `CREATE`, `ALTER` or `DROP` of a table, schema or view, and `COPY ... TO`.
    Ddl,
    /// `SET` of a session setting.
    Set,
    /// Anything else that parsed (`BEGIN`, `COMMIT`, ...).
    Other,
    /// Text DataFusion's parser refuses: an extension's statement (`CREATE ROLLUP`) or an error.
    Unparsed,
}

/// One statement, parsed once ([`Parsed::read`]), with the rewritten text it was parsed from.
#[derive(Debug)]
pub(crate) struct Parsed {
    /// The text after Varve's token rewrites: what is parsed and what error messages quote.
    text: String,
    /// The `ASOF JOIN`s found in the text, applied to the parse when it is planned.
    asof: Option<asof::Marks>,
    /// DataFusion's parse of `text`, or its error (reported when the statement is planned, so
    /// that an extension may claim text DataFusion cannot parse).
    parsed: std::result::Result<DFStatement, DataFusionError>,
}

impl Parsed {
    /// Reads one statement `sql` with DataFusion's parser under a session's parser `options`
    /// (`datafusion.sql_parser.dialect` and `.recursion_limit`), as
    /// `SessionState::sql_to_statement` does.
    ///
    /// Errors: [`crate::ErrorKind::InvalidInput`] for a malformed time-travel clause or ASOF join.
    /// A text the parser refuses is not an error here: [`Parsed::parsed`] holds it.
    pub(crate) fn read(sql: &str, options: &SqlParserOptions) -> Result<Parsed> {
        let (text, asof) = rewrite(sql)?;
        let parsed = parse_one(&text, options.dialect.as_ref(), options.recursion_limit);
        Ok(Parsed { text, asof, parsed })
    }

    /// `sql` parsed as it is, without Varve's rewrites: Varve's own SQL (a rollup's queries).
    ///
    /// Never fails: [`Parsed::parsed`] holds a parse error.
    pub(crate) fn plain(sql: &str, options: &SqlParserOptions) -> Parsed {
        let parsed = parse_one(sql, options.dialect.as_ref(), options.recursion_limit);
        Parsed {
            text: sql.to_string(),
            asof: None,
            parsed,
        }
    }

    /// [`Parsed::read`] under DataFusion's default parser options.
    #[cfg(test)]
    pub(crate) fn read_default(sql: &str) -> Result<Parsed> {
        Parsed::read(sql, &SqlParserOptions::default())
    }

    /// The text after Varve's rewrites.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// DataFusion's parse, or why it refused the text.
    pub(crate) fn parsed(&self) -> std::result::Result<&DFStatement, &DataFusionError> {
        self.parsed.as_ref()
    }

    /// The parse, taken for planning, with the ASOF marks.
    pub(crate) fn into_parsed(self) -> (std::result::Result<DFStatement, DataFusionError>, Option<asof::Marks>) {
        (self.parsed, self.asof)
    }

    /// What the statement does.
    pub(crate) fn kind(&self) -> Kind {
        match &self.parsed {
            Ok(s) => kind_of(s),
            Err(_) => Kind::Unparsed,
        }
    }

    /// Whether the statement changes rows, so that its tables are loaded as a writer loads them
    /// (newest version checked) and the rows it picks are bound to the newest schema. Text that
    /// does not parse counts as writing.
    pub(crate) fn writes_rows(&self) -> bool {
        matches!(self.kind(), Kind::Write | Kind::Unparsed)
    }

    /// The tables the statement reads or writes, each once, in name order (see
    /// [`referenced_tables`]).
    ///
    /// Errors: [`crate::ErrorKind::InvalidInput`] for text that does not parse (DataFusion's
    /// message), or a malformed time-travel table name.
    pub(crate) fn tables(&self) -> Result<Vec<TableIdent>> {
        let parsed = self.parsed.as_ref().map_err(|e| Error::invalid(format!("SQL: {e}")))?;
        let mut tables = tables_of(parsed)?;
        tables.sort();
        tables.dedup();
        Ok(tables)
    }

    /// Whether the outermost query sorts and keeps the first rows (`ORDER BY ... LIMIT k`, a
    /// top-k), also under `EXPLAIN`: `filter-pushdown=auto` turns late materialization on for it
    /// on S3 (it is on for local lakes anyway), so that the sort's running threshold reaches the
    /// scan and rules out files by their bounds.
    pub(crate) fn top_k(&self) -> bool {
        let top_k = |q: &Query| {
            let limited = matches!(
                &q.limit_clause,
                Some(LimitClause::LimitOffset { limit: Some(_), .. }) | Some(LimitClause::OffsetCommaLimit { .. })
            ) || q.fetch.is_some();
            limited && q.order_by.is_some()
        };
        match &self.parsed {
            Ok(DFStatement::Statement(s)) => matches!(s.as_ref(), SqlStatement::Query(q) if top_k(q)),
            Ok(DFStatement::Explain(e)) => match e.statement.as_ref() {
                DFStatement::Statement(s) => matches!(s.as_ref(), SqlStatement::Query(q) if top_k(q)),
                _ => false,
            },
            _ => false,
        }
    }

    /// Refuses a statement whose expressions nest deeper than [`MAX_EXPR_DEPTH`], before
    /// DataFusion plans it (its recursion is where a too-deep statement would otherwise exhaust
    /// the stack). The walk stops at the limit, so it never recurses deeper itself. Text that
    /// does not parse is left to the planner, which reports it.
    ///
    /// Errors: [`crate::ErrorKind::InvalidInput`] saying how deep the limit is.
    pub(crate) fn check_depth(&self) -> Result<()> {
        struct Depth(usize);
        impl Visitor for Depth {
            type Break = ();
            fn pre_visit_expr(&mut self, _: &Expr) -> ControlFlow<()> {
                self.0 += 1;
                if self.0 > MAX_EXPR_DEPTH {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            }
            fn post_visit_expr(&mut self, _: &Expr) -> ControlFlow<()> {
                self.0 -= 1;
                ControlFlow::Continue(())
            }
        }
        // The statement itself, or the one an EXPLAIN shows, or a COPY's query.
        let Ok(mut statement) = self.parsed.as_ref() else {
            return Ok(());
        };
        while let DFStatement::Explain(e) = statement {
            statement = e.statement.as_ref();
        }
        let deep = match statement {
            DFStatement::Statement(s) => s.visit(&mut Depth(0)).is_break(),
            DFStatement::CopyTo(c) => match &c.source {
                CopyToSource::Query(q) => q.visit(&mut Depth(0)).is_break(),
                CopyToSource::Relation(_) => false,
            },
            _ => false,
        };
        if deep {
            return Err(Error::invalid(format!(
                "the statement nests expressions more than {MAX_EXPR_DEPTH} deep (e.g. a sum of that many \
                 terms); split it, for example into subqueries or a sum over rows"
            )));
        }
        Ok(())
    }
}

/// Whether `sql` starts with one of the words of the DDL statements Varve runs (`ALTER`,
/// `CREATE`, `DROP`).
pub(crate) fn starts_with_ddl_word(sql: &str) -> bool {
    let first = sql
        .trim_start()
        .split(|c: char| !c.is_ascii_alphabetic())
        .next()
        .unwrap_or("");
    ["alter", "create", "drop"]
        .iter()
        .any(|w| first.eq_ignore_ascii_case(w))
}

/// `WITH (partition = 'day')` with `partition` quoted in a DDL statement (one that
/// [`starts_with_ddl_word`]): the SQL parser reads a bare `PARTITION` in table options as the
/// start of a partition clause (`PARTITION (col RANGE ...)`). Other statements, and text that
/// does not tokenize, are returned as they are, for the parser to report.
fn quote_partition_option(sql: &str) -> String {
    if !starts_with_ddl_word(sql) {
        return sql.to_string();
    }
    use datafusion::sql::sqlparser::dialect::GenericDialect;
    use datafusion::sql::sqlparser::keywords::Keyword;
    use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};
    let Ok(mut tokens) = Tokenizer::new(&GenericDialect {}, sql).tokenize() else {
        return sql.to_string();
    };
    let mut changed = false;
    for i in 0..tokens.len() {
        let is_partition =
            matches!(&tokens[i], Token::Word(w) if w.keyword == Keyword::PARTITION && w.quote_style.is_none());
        if !is_partition {
            continue;
        }
        let next = tokens[i + 1..].iter().find(|t| !matches!(t, Token::Whitespace(_)));
        if matches!(next, Some(Token::Eq)) {
            tokens[i] = Token::make_word("partition", Some('"'));
            changed = true;
        }
    }
    match changed {
        true => tokens.iter().map(|t| t.to_string()).collect(),
        false => sql.to_string(),
    }
}

/// Varve's token rewrites of `sql` before it is parsed (module docs): the text to parse and the
/// ASOF joins it marked.
///
/// Errors: [`crate::ErrorKind::InvalidInput`] for a malformed time-travel clause or ASOF join.
fn rewrite(sql: &str) -> Result<(String, Option<asof::Marks>)> {
    let rewritten = time_travel::rewrite(sql)?;
    let text = rewritten.as_deref().unwrap_or(sql);
    let asof = asof::mark_text(text)?;
    let text = asof.as_ref().map_or(text, |m| m.text.as_str());
    Ok((quote_partition_option(text), asof))
}

/// DataFusion's parse of one statement, as `SessionState::sql_to_statement` makes it.
fn parse_one(text: &str, dialect: &str, recursion_limit: usize) -> std::result::Result<DFStatement, DataFusionError> {
    let dialect = dialect_from_str(dialect).ok_or_else(|| {
        DataFusionError::Plan(format!(
            "Unsupported SQL dialect: {dialect}. Available dialects: Generic, MySQL, PostgreSQL, Hive, SQLite, \
             Snowflake, Redshift, MsSQL, ClickHouse, BigQuery, Ansi, DuckDB, Databricks."
        ))
    })?;
    let mut statements = DFParserBuilder::new(text)
        .with_dialect(dialect.as_ref())
        .with_recursion_limit(recursion_limit)
        .build()?
        .parse_statements()?;
    if statements.len() > 1 {
        return Err(DataFusionError::NotImplemented(
            "The context currently only supports a single SQL statement".to_string(),
        ));
    }
    statements
        .pop_front()
        .ok_or_else(|| DataFusionError::Plan("No SQL statements were provided in the query string".to_string()))
}

/// What parsed statement `s` does.
fn kind_of(s: &DFStatement) -> Kind {
    match s {
        DFStatement::Statement(s) => match s.as_ref() {
            SqlStatement::Query(_)
            | SqlStatement::Explain { .. }
            | SqlStatement::ExplainTable { .. }
            | SqlStatement::ShowTables { .. }
            | SqlStatement::ShowColumns { .. }
            | SqlStatement::ShowVariable { .. }
            | SqlStatement::ShowFunctions { .. }
            | SqlStatement::ShowCreate { .. } => Kind::Read,
            SqlStatement::Insert(_)
            | SqlStatement::Delete(_)
            | SqlStatement::Update { .. }
            | SqlStatement::Merge { .. } => Kind::Write,
            SqlStatement::CreateTable(_)
            | SqlStatement::CreateSchema { .. }
            | SqlStatement::CreateView { .. }
            | SqlStatement::CreateDatabase { .. }
            | SqlStatement::AlterTable(_)
            | SqlStatement::Drop { .. }
            | SqlStatement::Copy { .. } => Kind::Ddl,
            SqlStatement::Set(_) => Kind::Set,
            _ => Kind::Other,
        },
        DFStatement::Explain(_) => Kind::Read,
        DFStatement::Reset(_) => Kind::Set,
        DFStatement::CreateExternalTable(_) | DFStatement::CopyTo(_) => Kind::Ddl,
    }
}

/// The tables statement `s` reads or writes, as written (not folded to lower case), without
/// Varve's table-name suffixes; a name without a namespace is in [`DEFAULT_NAMESPACE`].
/// Relations come from DataFusion's `resolve_table_references` (CTE names are not tables), plus
/// the tables of `DROP TABLE`, which it does not count.
fn tables_of(s: &DFStatement) -> Result<Vec<TableIdent>> {
    let sql_error = |e: DataFusionError| Error::invalid(format!("SQL: {e}"));
    let (mut relations, _ctes) = resolve_table_references(s, false).map_err(sql_error)?;
    if let DFStatement::Statement(s) = s {
        if let SqlStatement::Drop {
            object_type: ObjectType::Table,
            names,
            ..
        } = s.as_ref()
        {
            for n in names {
                relations.push(object_name_to_table_reference(n.clone(), false).map_err(sql_error)?);
            }
        }
    }
    let mut tables = Vec::with_capacity(relations.len());
    for r in relations {
        let table = r.table();
        let table = table.strip_suffix(LAST_VALUES_SUFFIX).unwrap_or(table);
        let (name, _as_of) = time_travel::split_name(table)?;
        tables.push(TableIdent {
            namespace: r.schema().unwrap_or(DEFAULT_NAMESPACE).to_string(),
            name: name.to_string(),
        });
    }
    Ok(tables)
}

/// The tables the statements of `sql` (one or more) read or write, each once, in name order:
/// what a server checks a namespace-scoped token against before it runs any. Statements are read
/// as the lake's sessions read them ([`Parsed::read`]'s rewrites, DataFusion's parser in its
/// default dialect); identifiers are kept as written (sessions do not fold them to lower case
/// either). `SHOW TABLES` and the like name `information_schema` tables; schema statements
/// (`CREATE SCHEMA`, `DROP SCHEMA`) name none.
///
/// Errors: [`crate::ErrorKind::InvalidInput`] for SQL that does not parse (DataFusion's message).
pub fn referenced_tables(sql: &str) -> Result<Vec<TableIdent>> {
    let (text, _asof) = rewrite(sql)?;
    let statements = DFParser::parse_sql(&text).map_err(|e| Error::invalid(format!("SQL: {e}")))?;
    let mut tables = Vec::new();
    for statement in &statements {
        tables.extend(tables_of(statement)?);
    }
    tables.sort();
    tables.dedup();
    Ok(tables)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(sql: &str) -> Vec<String> {
        referenced_tables(sql).unwrap().iter().map(|t| t.to_string()).collect()
    }

    fn read(sql: &str) -> Parsed {
        Parsed::read_default(sql).unwrap()
    }

    #[test]
    fn statements_name_their_tables() {
        assert_eq!(
            names("SELECT * FROM iot.readings r JOIN trades USING (ts) WHERE x IN (SELECT x FROM \"ops\".\"hosts\")"),
            ["default.trades", "iot.readings", "ops.hosts"]
        );
        assert_eq!(names("WITH w AS (SELECT 1 AS x) SELECT * FROM w, iot.a"), ["iot.a"]);
        assert_eq!(names("SELECT * FROM iot.a FOR VERSION AS OF 42"), ["iot.a"]);
        assert_eq!(names("INSERT INTO iot.a SELECT * FROM ops.b"), ["iot.a", "ops.b"]);
        assert_eq!(names("DELETE FROM iot.a WHERE ts < now()"), ["iot.a"]);
        assert_eq!(names("SELECT 1"), Vec::<String>::new());
        assert_eq!(names("SELECT * FROM IoT.Readings"), ["IoT.Readings"]);
        assert_eq!(names("SELECT * FROM \"iot\".\"r@v=7@last-values\""), ["iot.r"]);
        assert!(names("SHOW TABLES")
            .iter()
            .all(|n| n.starts_with("information_schema.")));
        assert!(referenced_tables("SELEC 1").is_err());
        assert_eq!(names("CREATE TABLE iot.n (ts TIMESTAMP, x DOUBLE)"), ["iot.n"]);
        assert_eq!(names("CREATE TABLE iot.n AS SELECT * FROM ops.b"), ["iot.n", "ops.b"]);
        assert_eq!(names("DROP TABLE iot.n, m"), ["default.m", "iot.n"]);
        assert_eq!(names("ALTER TABLE iot.n ADD COLUMN y DOUBLE"), ["iot.n"]);
        assert_eq!(names("SELECT 1; DELETE FROM iot.a"), ["iot.a"]);
        // Schema statements name no table: a caller that scopes access by namespace must look at them.
        assert_eq!(names("DROP SCHEMA iot CASCADE"), Vec::<String>::new());
        // One statement read gives the same tables.
        assert_eq!(
            read("SELECT * FROM iot.a FOR VERSION AS OF 42 JOIN b ON true")
                .tables()
                .unwrap(),
            [
                TableIdent {
                    namespace: "default".into(),
                    name: "b".into()
                },
                TableIdent {
                    namespace: "iot".into(),
                    name: "a".into()
                }
            ]
        );
    }

    #[test]
    fn one_read_answers_kind_writes_and_top_k() {
        assert!(read("DELETE FROM iot.a WHERE ts < now()").writes_rows());
        assert!(read("INSERT INTO iot.a SELECT * FROM ops.b").writes_rows());
        assert!(!read("SELECT * FROM iot.a").writes_rows());
        assert!(
            read("CREATE ROLLUP r ON t").writes_rows(),
            "unparsed text counts as writing"
        );
        assert_eq!(read("SELECT 1").kind(), Kind::Read);
        assert_eq!(read("EXPLAIN SELECT 1").kind(), Kind::Read);
        assert_eq!(read("SET datafusion.execution.batch_size = 10").kind(), Kind::Set);
        assert_eq!(
            read("CREATE TABLE t (ts TIMESTAMP) WITH (partition = 'day')").kind(),
            Kind::Ddl
        );
        assert_eq!(read("SELEC 1").kind(), Kind::Unparsed);
        assert!(read("SELECT * FROM t WHERE a = 1 ORDER BY ts DESC LIMIT 3").top_k());
        assert!(read("EXPLAIN ANALYZE SELECT * FROM t ORDER BY ts DESC LIMIT 3").top_k());
        assert!(!read("SELECT * FROM t ORDER BY ts DESC").top_k());
        assert!(!read("SELECT * FROM t LIMIT 3").top_k());
        assert!(!read("SELECT count(*) FROM t WHERE ts > now()").top_k());
    }

    #[test]
    fn too_deep_statements_are_refused_after_one_parse() {
        let deep = format!("SELECT {}", vec!["1"; MAX_EXPR_DEPTH + 2].join(" + "));
        // A parser limit high enough to read it, as a session may set.
        let options = SqlParserOptions {
            recursion_limit: 10_000,
            ..Default::default()
        };
        let s = Parsed::read(&deep, &options).unwrap();
        assert!(s.check_depth().unwrap_err().to_string().contains("deep"));
        // Under EXPLAIN too: its statement is planned as well.
        let explained = Parsed::read(&format!("EXPLAIN {deep}"), &options).unwrap();
        assert!(explained.check_depth().unwrap_err().to_string().contains("deep"));
        assert!(read("SELECT 1 + 2").check_depth().is_ok());
    }
}

/// A SQL script cut into statements at top-level `;` (by DataFusion's SQL tokenizer, so that a
/// `;` inside a string, a quoted name or a comment does not cut): the complete statements, each
/// without its `;` and trimmed, and the text after the last `;` (empty, or a statement not yet
/// ended, which a script runs too and an interactive shell waits on). Pieces that hold only
/// whitespace and comments are dropped.
///
/// Errors: [`crate::ErrorKind::InvalidInput`] for text the tokenizer refuses (an unterminated
/// string or quoted name), with its line and column.
pub fn split_statements(text: &str) -> Result<(Vec<String>, String)> {
    use datafusion::sql::sqlparser::dialect::GenericDialect;
    use datafusion::sql::sqlparser::tokenizer::{Location, Token, Tokenizer};

    let tokens = Tokenizer::new(&GenericDialect {}, text)
        .with_unescape(false)
        .tokenize_with_location()
        .map_err(|e| Error::invalid(format!("SQL: {e}")))?;
    let mut line_starts = vec![0usize];
    line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
    // Locations count lines and characters from 1.
    let offset = |loc: Location| -> usize {
        let start = line_starts
            .get((loc.line.max(1) - 1) as usize)
            .copied()
            .unwrap_or(text.len());
        text[start..]
            .char_indices()
            .nth((loc.column.max(1) - 1) as usize)
            .map(|(i, _)| start + i)
            .unwrap_or(text.len())
    };
    let mut statements = Vec::new();
    // Where the statement being read starts: its first token that is not whitespace or a comment
    // (so that comments before a statement are not part of it).
    let mut start: Option<usize> = None;
    for t in &tokens {
        match &t.token {
            Token::SemiColon => {
                if let Some(from) = start.take() {
                    statements.push(text[from..offset(t.span.start)].trim().to_string());
                }
            }
            Token::Whitespace(_) | Token::EOF => {}
            _ => {
                start.get_or_insert_with(|| offset(t.span.start));
            }
        }
    }
    let rest = start.map(|from| text[from..].trim().to_string()).unwrap_or_default();
    Ok((statements, rest))
}

#[cfg(test)]
mod split_tests {
    use super::split_statements;

    #[test]
    fn statements_split_at_top_level_semicolons() {
        let (s, rest) = split_statements(
            "SET a = 1; SELECT ';' AS \"x;y\" -- a comment; still\n FROM t;\n/* ; */ ; -- next\nSELECT 2",
        )
        .unwrap();
        assert_eq!(
            s,
            vec!["SET a = 1", "SELECT ';' AS \"x;y\" -- a comment; still\n FROM t"]
        );
        assert_eq!(rest, "SELECT 2");
        let (s, rest) = split_statements("SELECT 'é';\n-- only a comment\n").unwrap();
        assert_eq!(s, vec!["SELECT 'é'"]);
        assert_eq!(rest, "");
        assert!(split_statements("SELECT 'open").is_err());
    }
}
