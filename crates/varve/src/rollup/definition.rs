//! A rollup's definition: what `CREATE ROLLUP name ON table AS SELECT ...` says, checked and kept
//! in the rollup table's properties ([`PROP_ROLLUP_DEFINITION`]), and the SQL that computes its rows
//! ([`RollupDef::state_sql`]).
//!
//! The SELECT takes group columns (any columns of the table, by name), one
//! `time_bucket(width, <time column> [, timezone | origin ...]) AS bucket` and aggregates over
//! columns, each with an alias: `count(*)`, `count(c)`, `sum(c)`, `min(c)`, `max(c)`, `avg(c)`,
//! `first(c, <time>)`, `last(c, <time>)`, `first_not_null(c, <time>)`, `last_not_null(c, <time>)`,
//! `twa(c, <time> [, 'linear'])` and `approx_percentile_cont(c, p)` (also `approx_percentile_cont(p)
//! WITHIN GROUP (ORDER BY c)` and `approx_median(c)`).
//! Each aggregate is stored as a mergeable state (the column(s) of [`Aggregate::state_columns`]):
//! a count, sum, min or max as itself; an average as the average and the count of values it
//! averages; first and last as the value and its time; a time-weighted average as itself, its
//! sample count and its first and last samples with their times; a percentile as itself and a
//! t-digest sketch (`rollup::states`), which answers any percentile. A coarser query merges the states
//! (`route`); the merge of each kind is [`Aggregate::merge_sql`].

use datafusion::sql::sqlparser::ast::{
    Expr, FunctionArg, FunctionArgExpr, FunctionArguments, GroupByExpr, ObjectName, Query, SelectItem, SetExpr,
    TableFactor, Value,
};
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::parser::Parser;

use crate::catalog::TableIdent;
use crate::error::{Error, Result};
use crate::format::properties::{PROP_ROLLUP_DEFINITION, PROP_ROLLUP_SOURCE};

/// How to use `CREATE ROLLUP`, for errors.
pub(crate) const USAGE: &str = "CREATE ROLLUP [IF NOT EXISTS] name ON table AS SELECT <columns>, \
     time_bucket(INTERVAL '1 minute', <time column>) AS bucket, <aggregates with aliases> FROM table GROUP BY ...";

/// What one aggregate of a rollup computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AggKind {
    /// `count(*)` (no column) or `count(c)`.
    Count,
    /// `sum(c)`.
    Sum,
    /// `min(c)`.
    Min,
    /// `max(c)`.
    Max,
    /// `avg(c)`: stored as the average and the count of non-NULL values.
    Avg,
    /// `first(c, time)`: the value and its time.
    First,
    /// `last(c, time)`.
    Last,
    /// `first_not_null(c, time)`.
    FirstNotNull,
    /// `last_not_null(c, time)`.
    LastNotNull,
    /// `twa(c, time [, 'step' | 'linear'])`: the bucket's time-weighted average, sample count, and
    /// first and last sample with their times.
    Twa,
    /// `approx_percentile_cont(c, p)` (or `... WITHIN GROUP (ORDER BY c)`, `approx_median(c)`): the
    /// bucket's `p` percentile and a t-digest sketch of its values, which answers any percentile.
    Percentile,
}

impl AggKind {
    /// The kind of an SQL function name, lower case.
    pub(crate) fn of(name: &str) -> Option<AggKind> {
        Some(match name {
            "count" => AggKind::Count,
            "sum" => AggKind::Sum,
            "min" => AggKind::Min,
            "max" => AggKind::Max,
            "avg" | "mean" => AggKind::Avg,
            "first" => AggKind::First,
            "last" => AggKind::Last,
            "first_not_null" => AggKind::FirstNotNull,
            "last_not_null" => AggKind::LastNotNull,
            "twa" => AggKind::Twa,
            "approx_percentile_cont" | "approx_median" => AggKind::Percentile,
            _ => return None,
        })
    }

    /// The SQL function name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            AggKind::Count => "count",
            AggKind::Sum => "sum",
            AggKind::Min => "min",
            AggKind::Max => "max",
            AggKind::Avg => "avg",
            AggKind::First => "first",
            AggKind::Last => "last",
            AggKind::FirstNotNull => "first_not_null",
            AggKind::LastNotNull => "last_not_null",
            AggKind::Twa => "twa",
            AggKind::Percentile => "approx_percentile_cont",
        }
    }

    /// Whether the function takes the time column as its second argument.
    pub(crate) fn takes_time(self) -> bool {
        matches!(
            self,
            AggKind::First | AggKind::Last | AggKind::FirstNotNull | AggKind::LastNotNull | AggKind::Twa
        )
    }
}

/// One aggregate of a rollup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Aggregate {
    pub(crate) kind: AggKind,
    /// The column it reads; `None` for `count(*)`.
    pub(crate) column: Option<String>,
    /// Its name in the rollup table.
    pub(crate) name: String,
    /// `twa`'s method (`linear`; `None` is `step`), or the percentile of `approx_percentile_cont`
    /// (its SQL text).
    pub(crate) param: Option<String>,
}

/// Double-quotes an SQL identifier.
pub(crate) fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

impl Aggregate {
    /// The rollup table's columns holding this aggregate's state: (name, SQL computing it over the
    /// source, with `time` the source's time column).
    pub(crate) fn state_columns(&self, time: &str) -> Vec<(String, String)> {
        let c = self.column.as_deref().map(quote);
        let c = c.as_deref().unwrap_or("*");
        let t = quote(time);
        let n = &self.name;
        match self.kind {
            AggKind::Count | AggKind::Sum | AggKind::Min | AggKind::Max => {
                vec![(n.clone(), format!("{}({c})", self.kind.name()))]
            }
            AggKind::Avg => vec![
                (n.clone(), format!("avg({c})")),
                (format!("{n}__count"), format!("count({c})")),
            ],
            AggKind::First | AggKind::Last => vec![
                (n.clone(), format!("{}({c}, {t})", self.kind.name())),
                (
                    format!("{n}__time"),
                    format!("{}({t})", if self.kind == AggKind::First { "min" } else { "max" }),
                ),
            ],
            AggKind::Twa => {
                let method = self.param.as_deref().map(|m| format!(", '{m}'")).unwrap_or_default();
                vec![
                    (n.clone(), format!("twa({c}, {t}{method})")),
                    (format!("{n}__count"), format!("count({c})")),
                    (
                        format!("{n}__first_time"),
                        format!("min(CASE WHEN {c} IS NOT NULL THEN {t} END)"),
                    ),
                    (format!("{n}__first"), format!("first_not_null({c}, {t})")),
                    (
                        format!("{n}__last_time"),
                        format!("max(CASE WHEN {c} IS NOT NULL THEN {t} END)"),
                    ),
                    (format!("{n}__last"), format!("last_not_null({c}, {t})")),
                ]
            }
            AggKind::Percentile => vec![
                (
                    n.clone(),
                    format!(
                        "approx_percentile_cont({c}, {})",
                        self.param.as_deref().unwrap_or("0.5")
                    ),
                ),
                (
                    format!("{n}__sketch"),
                    format!("{}({c})", crate::query::functions::states::TDIGEST),
                ),
            ],
            AggKind::FirstNotNull | AggKind::LastNotNull => vec![
                (n.clone(), format!("{}({c}, {t})", self.kind.name())),
                (
                    format!("{n}__time"),
                    format!(
                        "{}(CASE WHEN {c} IS NOT NULL THEN {t} END)",
                        if self.kind == AggKind::FirstNotNull {
                            "min"
                        } else {
                            "max"
                        }
                    ),
                ),
            ],
        }
    }

    /// SQL merging the states of this aggregate (the columns of [`Aggregate::state_columns`],
    /// named through `col`) into the aggregate over all their rows.
    pub(crate) fn merge_sql(&self, col: &dyn Fn(&str) -> String) -> String {
        let n = &self.name;
        match self.kind {
            AggKind::Count | AggKind::Sum => format!("sum({})", col(n)),
            AggKind::Min => format!("min({})", col(n)),
            AggKind::Max => format!("max({})", col(n)),
            AggKind::Avg => {
                let count = col(&format!("{n}__count"));
                format!(
                    "sum(CAST({} AS DOUBLE) * CAST({count} AS DOUBLE)) / CAST(sum({count}) AS DOUBLE)",
                    col(n)
                )
            }
            AggKind::First | AggKind::Last | AggKind::FirstNotNull | AggKind::LastNotNull => {
                format!("{}({}, {})", self.kind.name(), col(n), col(&format!("{n}__time")))
            }
            AggKind::Twa => format!(
                "{}({}, {}, {}, {}, {}, {}, '{}')",
                crate::query::functions::states::TWA_MERGE,
                col(n),
                col(&format!("{n}__count")),
                col(&format!("{n}__first_time")),
                col(&format!("{n}__first")),
                col(&format!("{n}__last_time")),
                col(&format!("{n}__last")),
                self.param.as_deref().unwrap_or("step")
            ),
            AggKind::Percentile => format!(
                "{}({}, {})",
                crate::query::functions::states::TDIGEST_QUANTILE,
                col(&format!("{n}__sketch")),
                self.param.as_deref().unwrap_or("0.5")
            ),
        }
    }
}

/// A rollup (module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RollupDef {
    /// The rollup's own table.
    pub(crate) rollup: TableIdent,
    /// The table it summarises.
    pub(crate) source: TableIdent,
    /// Group columns, kept under their names.
    pub(crate) groups: Vec<String>,
    /// The bucket column's name.
    pub(crate) bucket: String,
    /// `time_bucket`'s arguments as SQL: the width, then any time zone, origin or offset.
    pub(crate) bucket_args: Vec<String>,
    /// The source's time column (`time_bucket`'s second argument).
    pub(crate) time: String,
    /// The aggregates.
    pub(crate) aggregates: Vec<Aggregate>,
}

/// A parsed `CREATE ROLLUP`.
#[derive(Debug, Clone)]
pub(crate) struct CreateRollup {
    pub(crate) def: RollupDef,
    pub(crate) if_not_exists: bool,
}

/// A rollup statement Varve runs itself.
#[derive(Debug, Clone)]
pub(crate) enum RollupStatement {
    /// `CREATE ROLLUP ...`.
    Create(CreateRollup),
    /// `DROP ROLLUP [IF EXISTS] name`.
    Drop { rollup: TableIdent, if_exists: bool },
    /// `SHOW ROLLUPS [ON table]`.
    Show { source: Option<TableIdent> },
    /// `REFRESH ROLLUP name`.
    Refresh { rollup: TableIdent },
}

fn ident_of(name: &ObjectName, namespace: Option<&str>) -> Result<TableIdent> {
    let parts: Vec<String> = name
        .0
        .iter()
        .map(|p| p.as_ident().map(|i| i.value.clone()).unwrap_or_else(|| p.to_string()))
        .collect();
    let text = match (parts.as_slice(), namespace) {
        ([one], Some(ns)) => format!("{ns}.{one}"),
        _ => parts.join("."),
    };
    TableIdent::parse(&text)
}

/// Recognises `CREATE ROLLUP`, `DROP ROLLUP`, `SHOW ROLLUPS` and `REFRESH ROLLUP`; `None` for any
/// other statement.
///
/// Errors: [`crate::ErrorKind::InvalidInput`] for a rollup statement that does not parse or a
/// definition outside the rules of the module docs, saying which part.
pub(crate) fn parse(sql: &str) -> Result<Option<RollupStatement>> {
    let words: Vec<String> = sql
        .split_whitespace()
        .take(2)
        .map(|w| w.trim_end_matches(';').to_ascii_lowercase())
        .collect();
    let first_two = (words.first().map(String::as_str), words.get(1).map(String::as_str));
    if !matches!(
        first_two,
        (Some("create"), Some("rollup"))
            | (Some("drop"), Some("rollup"))
            | (Some("show"), Some("rollups"))
            | (Some("refresh"), Some("rollup"))
    ) {
        return Ok(None);
    }
    let bad = |e: datafusion::sql::sqlparser::parser::ParserError| Error::invalid(format!("{e}; expected {USAGE}"));
    let dialect = GenericDialect {};
    let mut p = Parser::new(&dialect).try_with_sql(sql).map_err(bad)?;
    let statement = if p.parse_keyword(Keyword::CREATE) {
        let _ = p.parse_keyword(Keyword::ROLLUP);
        let if_not_exists = p.parse_keywords(&[Keyword::IF, Keyword::NOT, Keyword::EXISTS]);
        let name = p.parse_object_name(false).map_err(bad)?;
        if !p.parse_keyword(Keyword::ON) {
            return Err(Error::invalid(format!(
                "CREATE ROLLUP {name}: expected ON <table>; {USAGE}"
            )));
        }
        let source = ident_of(&p.parse_object_name(false).map_err(bad)?, None)?;
        if !p.parse_keyword(Keyword::AS) {
            return Err(Error::invalid(format!(
                "CREATE ROLLUP {name} ON {source}: expected AS SELECT ...; {USAGE}"
            )));
        }
        let query = p.parse_query().map_err(bad)?;
        let rollup = ident_of(&name, Some(&source.namespace))?;
        let def = definition(rollup, source, &query)?;
        RollupStatement::Create(CreateRollup { def, if_not_exists })
    } else if p.parse_keyword(Keyword::DROP) {
        let _ = p.parse_keyword(Keyword::ROLLUP);
        let if_exists = p.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
        let rollup = ident_of(&p.parse_object_name(false).map_err(bad)?, None)?;
        RollupStatement::Drop { rollup, if_exists }
    } else if p.parse_keyword(Keyword::SHOW) {
        p.parse_identifier().map_err(bad)?;
        let source = match p.parse_keyword(Keyword::ON) {
            true => Some(ident_of(&p.parse_object_name(false).map_err(bad)?, None)?),
            false => None,
        };
        RollupStatement::Show { source }
    } else {
        p.parse_identifier().map_err(bad)?;
        let _ = p.parse_keyword(Keyword::ROLLUP);
        let rollup = ident_of(&p.parse_object_name(false).map_err(bad)?, None)?;
        RollupStatement::Refresh { rollup }
    };
    let _ = p.consume_token(&datafusion::sql::sqlparser::tokenizer::Token::SemiColon);
    if p.peek_token().token != datafusion::sql::sqlparser::tokenizer::Token::EOF {
        return Err(Error::invalid(format!(
            "unexpected {} after the rollup statement",
            p.peek_token().token
        )));
    }
    Ok(Some(statement))
}

/// The plain name of a column reference (`c` or `t.c`), if it is one.
fn column_name(e: &Expr) -> Option<String> {
    match e {
        Expr::Identifier(i) => Some(i.value.clone()),
        Expr::CompoundIdentifier(p) => p.last().map(|i| i.value.clone()),
        Expr::Nested(inner) => column_name(inner),
        _ => None,
    }
}

/// The definition a rollup's SELECT gives (module docs).
///
/// Errors: [`crate::ErrorKind::InvalidInput`] naming the part outside the rules.
pub(crate) fn definition(rollup: TableIdent, source: TableIdent, query: &Query) -> Result<RollupDef> {
    let what = format!("rollup {rollup}");
    if query.with.is_some() || query.order_by.is_some() || query.limit_clause.is_some() {
        return Err(Error::invalid(format!(
            "{what}: WITH, ORDER BY and LIMIT are not taken; {USAGE}"
        )));
    }
    let SetExpr::Select(select) = query.body.as_ref() else {
        return Err(Error::invalid(format!(
            "{what}: the definition must be one SELECT; {USAGE}"
        )));
    };
    match select.from.as_slice() {
        [t] if t.joins.is_empty() => match &t.relation {
            TableFactor::Table { name, .. } if ident_of(name, None)? == source => {}
            other => {
                return Err(Error::invalid(format!(
                    "{what}: the SELECT must read FROM {source} (the table after ON), not {other}"
                )))
            }
        },
        _ => {
            return Err(Error::invalid(format!(
                "{what}: the SELECT must read FROM {source} alone (no joins)"
            )))
        }
    }
    if select.selection.is_some() {
        return Err(Error::invalid(format!(
            "{what}: a WHERE clause is not taken: a rollup summarises every row of its table, so that it can \
             answer any query on it (filter when you query)"
        )));
    }
    if select.having.is_some() || select.distinct.is_some() {
        return Err(Error::invalid(format!("{what}: HAVING and DISTINCT are not taken")));
    }
    let mut groups = Vec::new();
    let mut bucket: Option<(String, Vec<String>, String)> = None;
    let mut aggregates: Vec<Aggregate> = Vec::new();
    for item in &select.projection {
        let (expr, alias) = match item {
            SelectItem::UnnamedExpr(e) => (e, None),
            SelectItem::ExprWithAlias { expr, alias } => (expr, Some(alias.value.clone())),
            other => {
                return Err(Error::invalid(format!(
                    "{what}: {other} is not taken; name the group columns, the bucket and the aggregates"
                )))
            }
        };
        if let Some(c) = column_name(expr) {
            if alias.as_ref().is_some_and(|a| *a != c) {
                return Err(Error::invalid(format!(
                    "{what}: group column {c} keeps its name in the rollup (drop AS {})",
                    alias.unwrap_or_default()
                )));
            }
            groups.push(c);
            continue;
        }
        let Expr::Function(f) = expr else {
            return Err(Error::invalid(format!(
                "{what}: {expr} is not taken; the SELECT holds group columns, time_bucket(...) AS bucket and \
                 aggregates (count, sum, min, max, avg, first, last, first_not_null, last_not_null)"
            )));
        };
        let fname = f.name.to_string().to_ascii_lowercase();
        let FunctionArguments::List(list) = &f.args else {
            return Err(Error::invalid(format!("{what}: {expr}: expected arguments")));
        };
        let percentile_form = fname == "approx_percentile_cont" && f.within_group.len() == 1;
        if f.filter.is_some()
            || f.over.is_some()
            || (!f.within_group.is_empty() && !percentile_form)
            || list.duplicate_treatment.is_some()
        {
            return Err(Error::invalid(format!(
                "{what}: {expr}: FILTER, OVER, WITHIN GROUP and DISTINCT are not taken"
            )));
        }
        let args: Vec<&Expr> = list
            .args
            .iter()
            .filter_map(|a| match a {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e),
                _ => None,
            })
            .collect();
        let star = list
            .args
            .iter()
            .any(|a| matches!(a, FunctionArg::Unnamed(FunctionArgExpr::Wildcard)));
        if fname == "time_bucket" {
            if bucket.is_some() {
                return Err(Error::invalid(format!("{what}: only one time_bucket(...) is taken")));
            }
            if args.len() != list.args.len() || args.len() < 2 {
                return Err(Error::invalid(format!(
                    "{what}: {expr}: expected time_bucket(width, <time column> [, timezone | origin ...]) with \
                     positional arguments"
                )));
            }
            let time = column_name(args[1]).ok_or_else(|| {
                Error::invalid(format!(
                    "{what}: {expr}: the second argument must be the table's time column"
                ))
            })?;
            for a in args.iter().skip(2) {
                if !matches!(a, Expr::Value(_) | Expr::TypedString { .. } | Expr::Interval(_)) {
                    return Err(Error::invalid(format!(
                        "{what}: {expr}: the time zone, origin and offset must be constants"
                    )));
                }
            }
            let mut bucket_args = vec![args[0].to_string()];
            bucket_args.extend(args.iter().skip(2).map(|a| a.to_string()));
            bucket = Some((alias.unwrap_or_else(|| "bucket".to_string()), bucket_args, time));
            continue;
        }
        let Some(kind) = AggKind::of(&fname) else {
            let position = select
                .projection
                .iter()
                .position(|p| std::ptr::eq(p, item))
                .map(|i| i + 1);
            let grouped = match &select.group_by {
                GroupByExpr::Expressions(by, _) => by.iter().any(|g| match g {
                    Expr::Value(v) => matches!(&v.value, Value::Number(n, _) if n.parse::<usize>().ok() == position),
                    g => alias.as_deref().is_some_and(|a| column_name(g).as_deref() == Some(a)) || g == expr,
                }),
                _ => false,
            };
            if grouped {
                return Err(Error::invalid(format!(
                    "{what}: {expr}: a rollup groups by plain columns (kept under their names) and one \
                     time_bucket(...); compute {expr} when you query the rollup's table or its source"
                )));
            }
            return Err(Error::invalid(format!(
                "{what}: {fname} is not an aggregate a rollup keeps; it keeps count, sum, min, max, avg, first, \
                 last, first_not_null, last_not_null, twa and approx_percentile_cont"
            )));
        };
        // `approx_percentile_cont(p) WITHIN GROUP (ORDER BY c)` reads as `approx_percentile_cont(c, p)`.
        let args: Vec<&Expr> = match percentile_form {
            true => {
                let o = &f.within_group[0];
                if o.options.asc == Some(false) {
                    return Err(Error::invalid(format!(
                        "{what}: {expr}: keep the percentile of ascending values (ORDER BY {} ASC)",
                        o.expr
                    )));
                }
                let mut v = vec![&o.expr];
                v.extend(args.iter().copied());
                v
            }
            false => args.clone(),
        };
        let method = |m: &Expr| -> Result<Option<String>> {
            match m {
                Expr::Value(v) => match &v.value {
                    Value::SingleQuotedString(m) if m.eq_ignore_ascii_case("linear") => Ok(Some("linear".into())),
                    Value::SingleQuotedString(m) if m.eq_ignore_ascii_case("step") => Ok(None),
                    _ => Err(Error::invalid(format!(
                        "{what}: {expr}: the method is 'step' or 'linear'"
                    ))),
                },
                _ => Err(Error::invalid(format!(
                    "{what}: {expr}: the method is 'step' or 'linear'"
                ))),
            }
        };
        let mut param = None;
        let column = match (kind, star, args.as_slice()) {
            (AggKind::Percentile, false, [c]) if fname == "approx_median" => {
                param = Some("0.5".to_string());
                Some(column_name(c))
            }
            (AggKind::Percentile, false, [c, p]) if fname == "approx_percentile_cont" => {
                let ok = matches!(p, Expr::Value(v)
                    if matches!(&v.value, Value::Number(n, _) if n.parse::<f64>().is_ok_and(|x| (0.0..=1.0).contains(&x))));
                if !ok {
                    return Err(Error::invalid(format!(
                        "{what}: {expr}: the percentile must be a number between 0 and 1"
                    )));
                }
                param = Some(p.to_string());
                Some(column_name(c))
            }
            (AggKind::Twa, false, [c, _, m]) => {
                param = method(m)?;
                Some(column_name(c))
            }
            (AggKind::Count, true, []) => None,
            (AggKind::Count, false, [Expr::Value(v)]) if !matches!(v.value, Value::Null) => None,
            (k, false, [c]) if !k.takes_time() => Some(column_name(c)),
            (k, false, [c, _]) if k.takes_time() => Some(column_name(c)),
            _ => {
                return Err(Error::invalid(format!(
                    "{what}: {expr}: expected {fname}(<column>){}",
                    if kind.takes_time() {
                        " with the time column as second argument"
                    } else {
                        ""
                    }
                )))
            }
        };
        let column = match column {
            Some(None) => {
                return Err(Error::invalid(format!(
                    "{what}: {expr}: aggregates read a column by name, not an expression"
                )))
            }
            Some(Some(c)) => Some(c),
            None => None,
        };
        if kind.takes_time() {
            let t = column_name(args[1]);
            if let (Some(t), Some((_, _, time))) = (&t, &bucket) {
                if t != time {
                    return Err(Error::invalid(format!(
                        "{what}: {expr}: the second argument must be the time column {time}"
                    )));
                }
            }
        }
        let name = alias
            .ok_or_else(|| Error::invalid(format!("{what}: {expr} needs a name in the rollup: {expr} AS <name>")))?;
        aggregates.push(Aggregate {
            kind,
            column,
            name,
            param,
        });
    }
    let Some((bucket, bucket_args, time)) = bucket else {
        return Err(Error::invalid(format!(
            "{what}: the SELECT needs time_bucket(<width>, <time column>) AS bucket; {USAGE}"
        )));
    };
    if aggregates.is_empty() {
        return Err(Error::invalid(format!(
            "{what}: the SELECT needs at least one aggregate"
        )));
    }
    // GROUP BY: the group columns and the bucket, by name, alias or position.
    let GroupByExpr::Expressions(by, _) = &select.group_by else {
        return Err(Error::invalid(format!(
            "{what}: GROUP BY ALL is not taken; name the groups"
        )));
    };
    let mut grouped: Vec<String> = Vec::new();
    for e in by {
        let name = match e {
            Expr::Value(v) => match &v.value {
                Value::Number(n, _) => {
                    let i: usize = n.parse().unwrap_or(0);
                    match select.projection.get(i.wrapping_sub(1)) {
                        Some(SelectItem::ExprWithAlias { alias, .. }) => alias.value.clone(),
                        Some(SelectItem::UnnamedExpr(x)) => column_name(x).unwrap_or_else(|| x.to_string()),
                        _ => n.clone(),
                    }
                }
                _ => e.to_string(),
            },
            Expr::Function(f) if f.name.to_string().eq_ignore_ascii_case("time_bucket") => bucket.clone(),
            other => column_name(other).unwrap_or_else(|| other.to_string()),
        };
        grouped.push(name);
    }
    let mut want: Vec<String> = groups.clone();
    want.push(bucket.clone());
    let mut have = grouped.clone();
    have.sort();
    have.dedup();
    let mut want_sorted = want.clone();
    want_sorted.sort();
    if have != want_sorted {
        return Err(Error::invalid(format!(
            "{what}: GROUP BY must name exactly the group columns and the bucket ({}), not {}",
            want.join(", "),
            grouped.join(", ")
        )));
    }
    let mut names: Vec<String> = want.clone();
    for a in &aggregates {
        for (n, _) in a.state_columns(&time) {
            if names.contains(&n) {
                return Err(Error::invalid(format!(
                    "{what}: two columns would be named {n}; rename one with AS"
                )));
            }
            names.push(n);
        }
    }
    Ok(RollupDef {
        rollup,
        source,
        groups,
        bucket,
        bucket_args,
        time,
        aggregates,
    })
}

impl RollupDef {
    /// `time_bucket(<width>, <time expr> [, ...])` over `time_expr`.
    pub(crate) fn bucket_sql(&self, time_expr: &str) -> String {
        let mut args = vec![self.bucket_args[0].clone(), time_expr.to_string()];
        args.extend(self.bucket_args.iter().skip(1).cloned());
        format!("time_bucket({})", args.join(", "))
    }

    /// The definition as a SELECT, as it is stored ([`PROP_ROLLUP_DEFINITION`]) and shown.
    pub(crate) fn select_sql(&self) -> String {
        let mut items: Vec<String> = self.groups.iter().map(|g| quote(g)).collect();
        items.push(format!(
            "{} AS {}",
            self.bucket_sql(&quote(&self.time)),
            quote(&self.bucket)
        ));
        for a in &self.aggregates {
            let c = a.column.as_deref().map(quote).unwrap_or_else(|| "*".into());
            let call = match (a.kind, a.kind.takes_time()) {
                (AggKind::Twa, _) => match &a.param {
                    Some(m) => format!("twa({c}, {}, '{m}')", quote(&self.time)),
                    None => format!("twa({c}, {})", quote(&self.time)),
                },
                (AggKind::Percentile, _) => {
                    format!("approx_percentile_cont({c}, {})", a.param.as_deref().unwrap_or("0.5"))
                }
                (_, true) => format!("{}({c}, {})", a.kind.name(), quote(&self.time)),
                (_, false) => format!("{}({c})", a.kind.name()),
            };
            items.push(format!("{call} AS {}", quote(&a.name)));
        }
        let n = self.groups.len() + 1;
        let by: Vec<String> = (1..=n).map(|i| i.to_string()).collect();
        format!(
            "SELECT {} FROM {}.{} GROUP BY {}",
            items.join(", "),
            quote(&self.source.namespace),
            quote(&self.source.name),
            by.join(", ")
        )
    }

    /// The rollup table's column names after the group columns and the bucket, in order.
    pub(crate) fn state_names(&self) -> Vec<String> {
        self.aggregates
            .iter()
            .flat_map(|a| a.state_columns(&self.time))
            .map(|(n, _)| n)
            .collect()
    }

    /// SQL computing the rollup's rows (group columns, bucket, states) from `from` (a table
    /// reference), over the rows `filter` (an SQL condition) keeps.
    pub(crate) fn state_sql(&self, from: &str, filter: Option<&str>) -> String {
        let mut items: Vec<String> = self.groups.iter().map(|g| quote(g)).collect();
        items.push(format!(
            "{} AS {}",
            self.bucket_sql(&quote(&self.time)),
            quote(&self.bucket)
        ));
        for a in &self.aggregates {
            for (n, sql) in a.state_columns(&self.time) {
                items.push(format!("{sql} AS {}", quote(&n)));
            }
        }
        let n = self.groups.len() + 1;
        let by: Vec<String> = (1..=n).map(|i| i.to_string()).collect();
        let filter = filter.map(|f| format!(" WHERE {f}")).unwrap_or_default();
        format!(
            "SELECT {} FROM {from}{filter} GROUP BY {}",
            items.join(", "),
            by.join(", ")
        )
    }

    /// Reads a definition back from a rollup table's properties.
    ///
    /// Errors: [`crate::ErrorKind::Corruption`] when the properties do not hold one.
    pub(crate) fn from_properties(
        rollup: &TableIdent,
        props: &std::collections::HashMap<String, String>,
    ) -> Result<Option<RollupDef>> {
        let (Some(source), Some(select)) = (props.get(PROP_ROLLUP_SOURCE), props.get(PROP_ROLLUP_DEFINITION)) else {
            return Ok(None);
        };
        let source = TableIdent::parse(source)?;
        let bad = |e: String| Error::corrupt(format!("rollup {rollup}: its stored definition does not parse: {e}"));
        let statements = Parser::parse_sql(&GenericDialect {}, select).map_err(|e| bad(e.to_string()))?;
        let [datafusion::sql::sqlparser::ast::Statement::Query(q)] = statements.as_slice() else {
            return Err(bad("not one SELECT".into()));
        };
        definition(rollup.clone(), source, q)
            .map(Some)
            .map_err(|e| bad(e.message().to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_definition_round_trips_through_its_select() {
        let sql = "CREATE ROLLUP trucks_1m ON iot.readings AS SELECT name, fleet, \
                   time_bucket(INTERVAL '1 minute', time) AS bucket, count(*) AS n, avg(velocity) AS v, \
                   last(fuel, time) AS fuel FROM iot.readings GROUP BY name, fleet, bucket";
        let Some(RollupStatement::Create(c)) = parse(sql).unwrap() else {
            panic!("not a create")
        };
        assert_eq!(c.def.rollup.to_string(), "iot.trucks_1m");
        assert_eq!(c.def.groups, vec!["name", "fleet"]);
        assert_eq!(c.def.state_names(), vec!["n", "v", "v__count", "fuel", "fuel__time"]);
        let mut props = std::collections::HashMap::new();
        props.insert(PROP_ROLLUP_SOURCE.to_string(), "iot.readings".to_string());
        props.insert(PROP_ROLLUP_DEFINITION.to_string(), c.def.select_sql());
        let back = RollupDef::from_properties(&c.def.rollup, &props).unwrap().unwrap();
        assert_eq!(back, c.def);
    }

    #[test]
    fn definitions_outside_the_rules_are_refused() {
        for (sql, needle) in [
            (
                "CREATE ROLLUP r ON t AS SELECT host, sum(v) AS s FROM t GROUP BY host",
                "time_bucket",
            ),
            (
                "CREATE ROLLUP r ON t AS SELECT time_bucket(INTERVAL '1 hour', ts) AS b, sum(v) FROM t GROUP BY 1",
                "needs a name",
            ),
            (
                "CREATE ROLLUP r ON t AS SELECT time_bucket(INTERVAL '1 hour', ts) AS b, median(v) AS m FROM t GROUP BY 1",
                "median",
            ),
            (
                "CREATE ROLLUP r ON t AS SELECT time_bucket(INTERVAL '1 hour', ts) AS b, sum(v) AS s FROM t WHERE v > 0 GROUP BY 1",
                "WHERE",
            ),
            (
                "CREATE ROLLUP r ON t AS SELECT host, time_bucket(INTERVAL '1 hour', ts) AS b, sum(v) AS s FROM t GROUP BY b",
                "GROUP BY",
            ),
            (
                "CREATE ROLLUP r ON t AS SELECT time_bucket(INTERVAL '1 hour', ts) AS b, sum(v) AS s FROM u GROUP BY 1",
                "FROM",
            ),
        ] {
            let e = parse(sql).unwrap_err().to_string();
            assert!(e.contains(needle), "{sql}: {e}");
        }
        assert!(parse("SELECT 1").unwrap().is_none());
        assert!(matches!(
            parse("show rollups").unwrap(),
            Some(RollupStatement::Show { source: None })
        ));
        assert!(matches!(
            parse("DROP ROLLUP IF EXISTS iot.r").unwrap(),
            Some(RollupStatement::Drop { if_exists: true, .. })
        ));
    }
}
