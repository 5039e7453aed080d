//! The tables a SQL statement names, found in its parsed text before anything is planned: what a
//! server checks a namespace-scoped token against, and what a session needs to load.
//!
//! Statements are parsed as the lake's sessions parse them (time-travel clauses rewritten first,
//! then DataFusion's parser) and their relations collected by DataFusion's
//! `resolve_table_references` (CTE names are not tables), plus the tables of `DROP TABLE`, with
//! identifiers kept as written (sessions do not fold them to lower case either). A name
//! without a namespace is in [`DEFAULT_NAMESPACE`]; `SHOW TABLES` and the like name
//! `information_schema` tables. Schema statements (`CREATE SCHEMA`, `DROP SCHEMA`) name none.
//! It also owns the spelling of Varve's table-name suffixes ([`LAST_VALUES_SUFFIX`],
//! [`SINCE_SUFFIX`]), which the lake's catalog resolves.

use datafusion::sql::parser::{DFParser, Statement as DFStatement};
use datafusion::sql::planner::object_name_to_table_reference;
use datafusion::sql::resolve::resolve_table_references;
use datafusion::sql::sqlparser::ast::{ObjectType, Statement};

use crate::catalog::{TableIdent, DEFAULT_NAMESPACE};
use crate::error::{Error, Result};
use crate::query::time_travel;

/// A table name's suffix (after any time-travel suffix) that reads the snapshot's last-value
/// index, the newest row of each series, instead of its data files: `"stocks@last-values"`.
pub(crate) const LAST_VALUES_SUFFIX: &str = "@last-values";

/// A table name's suffix reading only the data files added after a sequence number:
/// `"readings@since=12"` (Iceberg spec, "Sequence Numbers"). Read-only; used by rollups.
pub(crate) const SINCE_SUFFIX: &str = "@since=";

/// The tables the statements of `sql` read or write, each once, in name order.
///
/// Errors: [`crate::ErrorKind::InvalidInput`] for SQL that does not parse (DataFusion's message).
pub fn referenced_tables(sql: &str) -> Result<Vec<TableIdent>> {
    let rewritten = time_travel::rewrite(sql)?;
    let text = rewritten.as_deref().unwrap_or(sql);
    let marked = crate::query::asof::mark_text(text)?;
    let text = marked.as_ref().map_or(text, |m| m.text.as_str());
    let statements = DFParser::parse_sql(text).map_err(|e| Error::invalid(format!("SQL: {e}")))?;
    let mut tables = Vec::new();
    let sql_error = |e: datafusion::error::DataFusionError| Error::invalid(format!("SQL: {e}"));
    for statement in &statements {
        let (mut relations, _ctes) = resolve_table_references(statement, false).map_err(sql_error)?;
        // DataFusion's resolver does not count the tables a DROP TABLE names.
        if let DFStatement::Statement(s) = statement {
            if let Statement::Drop {
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
        for r in relations {
            let table = r.table();
            let table = table.strip_suffix(LAST_VALUES_SUFFIX).unwrap_or(table);
            let (name, _as_of) = time_travel::split_name(table)?;
            tables.push(TableIdent {
                namespace: r.schema().unwrap_or(DEFAULT_NAMESPACE).to_string(),
                name: name.to_string(),
            });
        }
    }
    tables.sort();
    tables.dedup();
    Ok(tables)
}

/// Whether a statement of `sql` changes rows (`INSERT`, `DELETE`, `UPDATE`, `MERGE`): its
/// tables are loaded as a writer loads them, newest version checked, so that the rows it picks
/// are bound to the newest schema. Text that does not parse counts as writing.
pub(crate) fn writes_rows(sql: &str) -> bool {
    let Ok(rewritten) = time_travel::rewrite(sql) else {
        return true;
    };
    let text = rewritten.as_deref().unwrap_or(sql);
    let Ok(statements) = DFParser::parse_sql(text) else {
        return true;
    };
    statements.iter().any(|s| match s {
        DFStatement::Statement(s) => matches!(
            s.as_ref(),
            Statement::Insert(_) | Statement::Delete(_) | Statement::Update { .. } | Statement::Merge { .. }
        ),
        _ => false,
    })
}

/// Whether the query of a statement of `sql` (already rewritten for time travel) sorts and
/// keeps the first rows (`ORDER BY ... LIMIT k`, a top-k): `filter-pushdown=auto` turns late
/// materialization on for it on S3 (it is on for local lakes anyway), so that the sort's running
/// threshold reaches the scan and rules out files by their bounds. Only the outermost query of
/// each statement counts.
pub(crate) fn has_top_k(sql: &str) -> bool {
    use datafusion::sql::sqlparser::ast::{LimitClause, Query};
    let Ok(statements) = DFParser::parse_sql(sql) else {
        return false;
    };
    let top_k = |q: &Query| {
        let limited = matches!(
            &q.limit_clause,
            Some(LimitClause::LimitOffset { limit: Some(_), .. }) | Some(LimitClause::OffsetCommaLimit { .. })
        ) || q.fetch.is_some();
        limited && q.order_by.is_some()
    };
    statements.iter().any(|s| match s {
        DFStatement::Statement(s) => match s.as_ref() {
            Statement::Query(q) => top_k(q),
            _ => false,
        },
        DFStatement::Explain(e) => match e.statement.as_ref() {
            DFStatement::Statement(s) => matches!(s.as_ref(), Statement::Query(q) if top_k(q)),
            _ => false,
        },
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(sql: &str) -> Vec<String> {
        referenced_tables(sql).unwrap().iter().map(|t| t.to_string()).collect()
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
        assert!(writes_rows("DELETE FROM iot.a WHERE ts < now()"));
        assert!(writes_rows("INSERT INTO iot.a SELECT * FROM ops.b"));
        assert!(!writes_rows("SELECT * FROM iot.a"));
        assert!(has_top_k("SELECT * FROM t WHERE a = 1 ORDER BY ts DESC LIMIT 3"));
        assert!(has_top_k("EXPLAIN ANALYZE SELECT * FROM t ORDER BY ts DESC LIMIT 3"));
        assert!(!has_top_k("SELECT * FROM t ORDER BY ts DESC"));
        assert!(!has_top_k("SELECT * FROM t LIMIT 3"));
        assert!(!has_top_k("SELECT count(*) FROM t WHERE ts > now()"));
        // Schema statements name no table: a caller that scopes access by namespace must look at them.
        assert_eq!(names("DROP SCHEMA iot CASCADE"), Vec::<String>::new());
    }
}
