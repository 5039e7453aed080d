//! ASOF joins: `FROM t ASOF [LEFT] JOIN q ON t.k = q.k AND t.ts >= q.ts` (DuckDB's spelling)
//! pairs each row of `t` with the row of `q` of the same keys whose time is the nearest at or
//! before `t.ts` (`>=`; `>` strictly before, `<=` / `<` at or after / strictly after), optionally
//! within a tolerance (`AND t.ts - q.ts <= INTERVAL '5 seconds'`).
//!
//! The way through DataFusion, in three steps:
//! 1. Text (`mark_text`): DataFusion's parser knows only Snowflake's `ASOF JOIN ...
//!    MATCH_CONDITION (...)`, so the `ASOF` keyword is blanked out (the text keeps its length, so
//!    every position stays) and the position of each such join's `ON` is noted.
//! 2. Parsed statement (`mark_statement`): the ON condition of each noted join is wrapped in the
//!    marker function `__varve_asof(...)`; the planner then makes an ordinary inner or left join
//!    whose filter is the marker.
//! 3. Logical plan (`plan_joins`, before DataFusion's analyzer): a join whose filter is the marker becomes the
//!    [`node::AsofJoin`] node; the physical planner ([`exec::AsofPlanner`]) makes it an
//!    [`exec::AsofJoinExec`], a sorted merge of both sides per key: DataFusion hash-partitions
//!    both sides by the keys and sorts them by (keys, time), spilling as its sorts do, and the
//!    merge holds only the current batch of each side and the last candidate row.
//!
//! Rules (docs/sql.md, "ASOF JOIN"): rows whose keys or time are NULL never match; of several
//! right rows at the matched time, the one that sorts last (`>=`, `>`) or first (`<=`, `<`)
//! among them is taken, which is any one of them; an inner ASOF JOIN drops the left rows without
//! a match, ASOF LEFT JOIN keeps them with NULLs.

pub(crate) mod exec;
pub(crate) mod node;

use std::ops::ControlFlow;
use std::sync::Arc;

use datafusion::common::tree_node::Transformed;
use datafusion::common::{exec_err, Result as DfResult};
use datafusion::logical_expr::{
    ColumnarValue, Expr, Extension, JoinType, LogicalPlan, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use datafusion::sql::sqlparser::ast::{
    FunctionArg, FunctionArgExpr, FunctionArguments, Join, JoinConstraint, JoinOperator, SetExpr, Spanned, Statement,
    TableFactor, TableWithJoins, VisitMut, VisitorMut,
};
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::parser::Parser;
use datafusion::sql::sqlparser::tokenizer::{Location, Token, Tokenizer};

use crate::error::{Error, Result};

/// The marker function's name: the ON condition of an ASOF join, as the planner sees it.
pub(crate) const MARKER: &str = "__varve_asof";

/// The ASOF joins of a statement's text: the text with each `ASOF` keyword blanked out, and the
/// position of the first token after each such join's `ON`, in order.
#[derive(Debug)]
pub(crate) struct Marks {
    pub(crate) text: String,
    on: Vec<Location>,
}

/// Finds `ASOF [LEFT [OUTER]] JOIN` in `sql`; `None` when there is none (or the text does not
/// tokenize: the parser then reports it).
///
/// Errors: [`crate::ErrorKind::InvalidInput`] for an ASOF join without `ON` (`USING` and
/// Snowflake's `MATCH_CONDITION` are not taken).
pub(crate) fn mark_text(sql: &str) -> Result<Option<Marks>> {
    if !sql.to_ascii_uppercase().contains("ASOF") {
        return Ok(None);
    }
    let dialect = GenericDialect {};
    let Ok(tokens) = Tokenizer::new(&dialect, sql).tokenize_with_location() else {
        return Ok(None);
    };
    let words: Vec<(usize, &Token)> = tokens
        .iter()
        .enumerate()
        .filter(|(_, t)| !matches!(t.token, Token::Whitespace(_)))
        .map(|(i, t)| (i, &t.token))
        .collect();
    let keyword = |j: usize| match words.get(j) {
        Some((_, Token::Word(w))) if w.quote_style.is_none() => Some(w.keyword),
        _ => None,
    };
    let mut blank = Vec::new();
    let mut on = Vec::new();
    for j in 0..words.len() {
        if keyword(j) != Some(Keyword::ASOF) {
            continue;
        }
        let mut k = j + 1;
        if keyword(k) == Some(Keyword::LEFT) {
            k += 1;
            if keyword(k) == Some(Keyword::OUTER) {
                k += 1;
            }
        }
        if keyword(k) != Some(Keyword::JOIN) {
            continue;
        }
        // The join's ON: the next ON outside parentheses (the joined relation may be a
        // parenthesised subquery with joins of its own).
        let mut depth = 0i32;
        let mut found = None;
        for m in k + 1..words.len() {
            match words[m].1 {
                Token::LParen => depth += 1,
                Token::RParen => depth -= 1,
                Token::SemiColon => break,
                _ => {}
            }
            if depth < 0 {
                break;
            }
            if depth == 0 {
                match keyword(m) {
                    Some(Keyword::ON) => {
                        found = words.get(m + 1).map(|(i, _)| tokens[*i].span.start);
                        break;
                    }
                    Some(Keyword::USING | Keyword::MATCH_CONDITION | Keyword::JOIN | Keyword::WHERE) => break,
                    _ => {}
                }
            }
        }
        let Some(start) = found else {
            return Err(Error::invalid(
                "ASOF JOIN needs ON with the keys' equalities and one time inequality, as in \
                 `t ASOF JOIN q ON t.symbol = q.symbol AND t.ts >= q.ts`",
            ));
        };
        blank.push(tokens[words[j].0].span.start);
        on.push(start);
    }
    if on.is_empty() {
        return Ok(None);
    }
    let mut text = sql.to_string();
    for at in blank {
        let i = offset(sql, at);
        text.replace_range(i..i + 4, "    ");
    }
    Ok(Some(Marks { text, on }))
}

/// The byte offset of `at` (line and column counted in characters from 1) in `text`.
fn offset(text: &str, at: Location) -> usize {
    let (mut line, mut column) = (1u64, 1u64);
    for (i, c) in text.char_indices() {
        if line == at.line && column == at.column {
            return i;
        }
        if c == '\n' {
            line += 1;
            column = 1;
        } else {
            column += 1;
        }
    }
    text.len()
}

/// Wraps the ON condition of each join of `statement` that `marks` noted in the marker function.
///
/// Errors: [`crate::ErrorKind::InvalidInput`] when a noted join cannot be found in the parsed
/// statement (a position the parser did not keep).
pub(crate) fn mark_statement(statement: &mut Statement, marks: &Marks) -> Result<()> {
    struct Joins<'a> {
        on: &'a [Location],
        done: Vec<bool>,
    }
    impl Joins<'_> {
        fn table(&mut self, t: &mut TableWithJoins) {
            self.factor(&mut t.relation);
            for j in &mut t.joins {
                self.factor(&mut j.relation);
                self.join(j);
            }
        }
        fn factor(&mut self, f: &mut TableFactor) {
            if let TableFactor::NestedJoin { table_with_joins, .. } = f {
                self.table(table_with_joins);
            }
        }
        fn set_expr(&mut self, s: &mut SetExpr) {
            match s {
                SetExpr::Select(select) => {
                    for t in &mut select.from {
                        self.table(t);
                    }
                }
                SetExpr::SetOperation { left, right, .. } => {
                    self.set_expr(left);
                    self.set_expr(right);
                }
                _ => {}
            }
        }
        fn join(&mut self, j: &mut Join) {
            let constraint = match &mut j.join_operator {
                JoinOperator::Join(c) | JoinOperator::Inner(c) | JoinOperator::Left(c) | JoinOperator::LeftOuter(c) => {
                    c
                }
                _ => return,
            };
            let JoinConstraint::On(cond) = constraint else {
                return;
            };
            let start = cond.span().start;
            let Some(i) = self.on.iter().position(|l| *l == start) else {
                return;
            };
            if self.done[i] {
                return;
            }
            let Ok(mut wrapped) = Parser::new(&GenericDialect {})
                .try_with_sql(&format!("{MARKER}(1)"))
                .and_then(|mut p| p.parse_expr())
            else {
                return;
            };
            if let datafusion::sql::sqlparser::ast::Expr::Function(f) = &mut wrapped {
                if let FunctionArguments::List(list) = &mut f.args {
                    list.args = vec![FunctionArg::Unnamed(FunctionArgExpr::Expr(cond.clone()))];
                    *cond = wrapped;
                    self.done[i] = true;
                }
            }
        }
    }
    impl VisitorMut for Joins<'_> {
        type Break = ();
        fn pre_visit_query(&mut self, q: &mut datafusion::sql::sqlparser::ast::Query) -> ControlFlow<()> {
            self.set_expr(&mut q.body);
            ControlFlow::Continue(())
        }
    }
    let mut joins = Joins {
        on: &marks.on,
        done: vec![false; marks.on.len()],
    };
    // Every query of the statement, nested ones and INSERT's source included.
    let _ = statement.visit(&mut joins);
    if joins.done.iter().all(|d| *d) {
        Ok(())
    } else {
        Err(Error::invalid(
            "an ASOF JOIN could not be planned here; write it in a SELECT's FROM clause, as in \
             `SELECT ... FROM t ASOF JOIN q ON t.symbol = q.symbol AND t.ts >= q.ts`",
        ))
    }
}

/// The marker function `__varve_asof(condition)`: never evaluated, since [`plan_joins`] replaces
/// the join that carries it.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct Marker {
    signature: Signature,
}

impl Marker {
    pub(crate) fn udf() -> ScalarUDF {
        ScalarUDF::new_from_impl(Marker {
            signature: Signature::exact(vec![arrow::datatypes::DataType::Boolean], Volatility::Immutable),
        })
    }
}

impl ScalarUDFImpl for Marker {
    fn name(&self) -> &str {
        MARKER
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[arrow::datatypes::DataType]) -> DfResult<arrow::datatypes::DataType> {
        Ok(arrow::datatypes::DataType::Boolean)
    }
    fn invoke_with_args(&self, _: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        exec_err!("{MARKER} marks the condition of an ASOF JOIN and is not a function to call")
    }
}

/// Turns each join of `plan` whose filter is the marker into an [`node::AsofJoin`] (module
/// docs), before DataFusion's analyzer and optimizer see the plan.
///
/// Errors: [`crate::ErrorKind::InvalidInput`] with the sentence of [`node::AsofJoin::try_new`]
/// for an ON condition it does not take.
pub(crate) fn plan_joins(plan: LogicalPlan) -> Result<LogicalPlan> {
    plan.transform_up_with_subqueries(|plan| {
        let LogicalPlan::Join(join) = &plan else {
            return Ok(Transformed::no(plan));
        };
        let Some(Expr::ScalarFunction(f)) = &join.filter else {
            return Ok(Transformed::no(plan));
        };
        if f.name() != MARKER || !join.on.is_empty() {
            return Ok(Transformed::no(plan));
        }
        let kind = match join.join_type {
            JoinType::Inner => node::Kind::Inner,
            JoinType::Left => node::Kind::Left,
            other => return datafusion::common::plan_err!("ASOF JOIN cannot be a {other} join"),
        };
        let cond = f.args.first().cloned().unwrap_or(Expr::Literal(
            datafusion::common::ScalarValue::Boolean(Some(true)),
            None,
        ));
        let n = node::AsofJoin::try_new(join.left.clone(), join.right.clone(), &cond, kind)?;
        Ok(Transformed::yes(LogicalPlan::Extension(Extension {
            node: Arc::new(n),
        })))
    })
    .map(|t| t.data)
    .map_err(|e| match e {
        datafusion::error::DataFusionError::Plan(m) => Error::invalid(m),
        e => e.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asof_is_blanked_and_its_on_noted() {
        let sql =
            "SELECT * FROM t ASOF LEFT JOIN (SELECT * FROM q JOIN r ON q.a = r.a) q\n ON t.k = q.k AND t.ts >= q.ts";
        let m = mark_text(sql).unwrap().unwrap();
        assert_eq!(m.text.len(), sql.len());
        assert!(m.text.contains("t      LEFT JOIN"), "{}", m.text);
        assert_eq!(m.on, vec![Location { line: 2, column: 5 }]);
        assert!(mark_text("SELECT asof FROM t").unwrap().is_none());
        assert!(mark_text("SELECT * FROM t ASOF JOIN q USING (k)").is_err());
    }
}
