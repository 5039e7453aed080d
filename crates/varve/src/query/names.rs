//! Readable result column names: the names DataFusion gives unaliased expressions, shortened
//! ([`short_column_names`]).

use datafusion::logical_expr::LogicalPlan;

use crate::error::Result;

/// Longest column name a result keeps as DataFusion made it; longer names of unaliased
/// expressions are shortened ([`short_column_names`]).
const MAX_COLUMN_NAME: usize = 32;

/// A query's result with readable names for unaliased expressions: table qualifiers DataFusion
/// adds are dropped (`min(health.cgm.glucose)` becomes `min(glucose)`), and a name that is still
/// long or shows a literal's internals (`time_bucket(IntervalMonthDayNano("IntervalMonthDayNano {
/// months: 0, days: 1, nanoseconds: 0 }"), ts)`) becomes its function's name (`time_bucket`), with
/// `_2`, `_3` when two would be the same. An unaliased literal is named by its value as SQL
/// writes it (`SELECT 1` gives a column `1`, not `Int64(1)`; `SELECT 'a'` one `'a'`). Aliases
/// and plain columns are kept; only a query's result is renamed, not `EXPLAIN`, DML or DDL.
pub(crate) fn short_column_names(df: datafusion::dataframe::DataFrame) -> Result<datafusion::dataframe::DataFrame> {
    use datafusion::prelude::Expr;
    if matches!(
        df.logical_plan(),
        LogicalPlan::Explain(_)
            | LogicalPlan::Analyze(_)
            | LogicalPlan::Dml(_)
            | LogicalPlan::Ddl(_)
            | LogicalPlan::Statement(_)
            | LogicalPlan::Copy(_)
            | LogicalPlan::DescribeTable(_)
    ) {
        return Ok(df);
    }
    use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
    let fields: Vec<(Option<datafusion::common::TableReference>, String)> = df
        .schema()
        .iter()
        .map(|(q, f)| (q.cloned(), f.name().clone()))
        .collect();
    // The tables the query scans, as DataFusion qualifies their columns inside expression names
    // (`min(health.cgm.glucose)`).
    let mut tables: Vec<String> = Vec::new();
    df.logical_plan().apply(|p| {
        match p {
            LogicalPlan::TableScan(scan) => tables.push(format!("{}.", scan.table_name)),
            // A rollup answering a query stands under the table's name (`rollup::route`).
            LogicalPlan::SubqueryAlias(a) => tables.push(format!("{}.", a.alias)),
            _ => {}
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    let unqualified = |n: &str| {
        let mut n = n.to_string();
        for t in &tables {
            n = n.replace(t.as_str(), "");
        }
        n
    };
    // The unaliased literals of the outermost projection, by position: named by their value.
    let literals: Vec<Option<String>> = match df.logical_plan() {
        LogicalPlan::Projection(p) => p
            .expr
            .iter()
            .map(|e| match e {
                Expr::Literal(v, _) => Some(literal_name(v)),
                _ => None,
            })
            .collect(),
        _ => vec![],
    };
    let literal = |i: usize| literals.get(i).cloned().flatten();
    let noisy = |n: &str| n.len() > MAX_COLUMN_NAME || n.contains("IntervalMonthDayNano");
    let renamed = |i: usize, n: &str| literal(i).is_some() || n.contains('(') && (noisy(n) || unqualified(n) != n);
    if !fields.iter().enumerate().any(|(i, (_, n))| renamed(i, n)) {
        return Ok(df);
    }
    let mut taken: Vec<String> = fields
        .iter()
        .enumerate()
        .filter(|(i, (_, n))| !renamed(*i, n))
        .map(|(_, (_, n))| n.clone())
        .collect();
    let mut exprs: Vec<Expr> = Vec::with_capacity(fields.len());
    for (i, (q, name)) in fields.iter().enumerate() {
        let column = Expr::Column(datafusion::common::Column::new(q.clone(), name.clone()));
        if !renamed(i, name) {
            exprs.push(column);
            continue;
        }
        let plain = unqualified(name);
        let short = match (literal(i), plain.split_once('(')) {
            (Some(value), _) => value,
            (None, Some((f, _))) if noisy(&plain) && !f.is_empty() => f.trim().to_string(),
            _ => plain,
        };
        let mut candidate = short.clone();
        let mut k = 2;
        while taken.contains(&candidate) {
            candidate = format!("{short}_{k}");
            k += 1;
        }
        taken.push(candidate.clone());
        exprs.push(column.alias(candidate));
    }
    Ok(df.select(exprs)?)
}

/// A literal's value as SQL writes it: text quoted (`'a'`), other values as they print (`1`,
/// `1.5`, `true`, `NULL`).
fn literal_name(v: &datafusion::common::ScalarValue) -> String {
    use datafusion::common::ScalarValue;
    match v {
        _ if v.is_null() => "NULL".to_string(),
        ScalarValue::Utf8(Some(s)) | ScalarValue::LargeUtf8(Some(s)) | ScalarValue::Utf8View(Some(s)) => {
            format!("'{}'", s.replace('\'', "''"))
        }
        other => other.to_string(),
    }
}
