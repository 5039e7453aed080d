//! Gap filling: `time_bucket_gapfill(width, ts [, timezone] [, start, finish])` in an aggregate
//! query's GROUP BY gives a row for every bucket from `start` to `finish` in every series (the
//! other GROUP BY columns), the missing ones with NULL aggregates, and `locf(agg)` /
//! `interpolate(agg)` in its SELECT list fill those NULLs: the last value carried forward, or a
//! straight line in time between the values on either side. TimescaleDB's functions of these
//! names; the shape of the work is InfluxDB IOx's (a plan rewrite and a plan node):
//!
//! 1. Planning as usual: `time_bucket_gapfill` buckets like `time_bucket`; `locf` and
//!    `interpolate` are markers that refuse to run.
//! 2. [`plan_gapfill`] finds a projection over an aggregate that groups by `time_bucket_gapfill`,
//!    puts a projection over the aggregate that adds the markers' arguments as columns, a
//!    [`node::GapFill`] node over that, and the original projection, reading the filled columns
//!    where the markers were, over the node.
//! 3. [`exec::GapFillExec`] reads the aggregate's rows sorted by series and bucket and writes
//!    the rows of every bucket.
//!
//! The range: `start` and `finish` when given, else the WHERE clause's bounds on the bucketed
//! time (`ts >= a AND ts < b`, `>`, `<=`, `BETWEEN`); buckets from the one holding `start` up to
//! the last that starts before `finish` (at or before, when WHERE's bound includes it). Without
//! either, the query is refused with one sentence.

pub(crate) mod exec;
pub(crate) mod node;

use std::sync::Arc;

use arrow::datatypes::DataType;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{exec_err, Column, Result as DfResult};
use datafusion::logical_expr::expr::{Cast, ScalarFunction};
use datafusion::logical_expr::utils::split_conjunction;
use datafusion::logical_expr::{
    Aggregate, BinaryExpr, ColumnarValue, Expr, ExprSchemable, Extension, LogicalPlan, Operator, Projection,
    ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

use crate::error::{Error, Result};
use crate::query::functions::time_bucket::GAPFILL;
use node::{Fill, GapFill};

/// `locf(value)`: the last non-NULL value of the series carried forward into gaps and NULLs.
pub(crate) const LOCF: &str = "locf";
/// `interpolate(value)`: NULLs and gaps filled on a straight line in time between the nearest
/// values before and after.
pub(crate) const INTERPOLATE: &str = "interpolate";

/// `locf` and `interpolate` as functions: markers that [`plan_gapfill`] replaces; evaluated
/// anywhere else they refuse with a sentence.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct FillMarker {
    name: &'static str,
    signature: Signature,
}

impl FillMarker {
    /// `locf` and `interpolate`.
    pub(crate) fn all() -> Vec<ScalarUDF> {
        [LOCF, INTERPOLATE]
            .into_iter()
            .map(|name| {
                ScalarUDF::new_from_impl(FillMarker {
                    name,
                    signature: Signature::any(1, Volatility::Immutable),
                })
            })
            .collect()
    }
}

impl ScalarUDFImpl for FillMarker {
    fn documentation(&self) -> Option<&datafusion::logical_expr::Documentation> {
        crate::query::functions::reference::doc(self.name())
    }

    fn name(&self) -> &str {
        self.name
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, arg_types: &[DataType]) -> DfResult<DataType> {
        Ok(match self.name {
            INTERPOLATE => DataType::Float64,
            _ => arg_types[0].clone(),
        })
    }
    fn invoke_with_args(&self, _: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        exec_err!("{}", misplaced(self.name))
    }
}

fn misplaced(name: &str) -> String {
    format!(
        "{name}(...) fills the gaps of time_bucket_gapfill: use it around an aggregate in the SELECT list of \
         a query that groups by time_bucket_gapfill(width, ts), as in SELECT time_bucket_gapfill(INTERVAL \
         '1 hour', ts) AS hour, {name}(avg(v)) FROM t WHERE ts >= ... AND ts < ... GROUP BY 1"
    )
}

fn is_call(e: &Expr, name: &str) -> bool {
    matches!(e, Expr::ScalarFunction(f) if f.name() == name)
}

/// Rewrites every aggregate query of `plan` that groups by `time_bucket_gapfill` (module docs).
///
/// Errors: [`crate::ErrorKind::InvalidInput`] with one sentence when the range cannot be found,
/// when a query groups by two gap-filled buckets, or when `locf` / `interpolate` stand where they
/// cannot fill (outside such a query's SELECT list, or nested in each other).
pub(crate) fn plan_gapfill(plan: LogicalPlan) -> Result<LogicalPlan> {
    let mut uses = false;
    plan.apply_with_subqueries(|p| {
        p.apply_expressions(|e| {
            e.apply(|e| {
                uses |= [GAPFILL, LOCF, INTERPOLATE].iter().any(|n| is_call(e, n));
                Ok(TreeNodeRecursion::Continue)
            })
        })
    })?;
    if !uses {
        return Ok(plan);
    }
    // Aggregates that group by time_bucket_gapfill: each must be filled by the rewrite below.
    let mut grouped = 0;
    plan.apply_with_subqueries(|p| {
        if let LogicalPlan::Aggregate(a) = p {
            let gap = a
                .group_expr
                .iter()
                .any(|e| e.exists(|x| Ok(is_call(x, GAPFILL))).unwrap_or(false));
            grouped += usize::from(gap);
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    let mut filled = 0;
    let plan = plan
        .transform_up_with_subqueries(|p| {
            let LogicalPlan::Projection(proj) = &p else {
                return Ok(Transformed::no(p));
            };
            let LogicalPlan::Aggregate(agg) = proj.input.as_ref() else {
                return Ok(Transformed::no(p));
            };
            match rewrite(proj, agg) {
                Ok(Some(new)) => {
                    filled += 1;
                    Ok(Transformed::yes(new))
                }
                Ok(None) => Ok(Transformed::no(p)),
                Err(e) => Err(datafusion::error::DataFusionError::External(Box::new(e))),
            }
        })
        .map_err(Error::from)?
        .data;
    if filled < grouped {
        return Err(Error::invalid(
            "time_bucket_gapfill fills the buckets of a plain GROUP BY query (SELECT ... GROUP BY ...); \
             with HAVING, window functions over the groups or GROUPING SETS it is not taken yet: \
             filter or window in an outer query over the gap-filled one",
        ));
    }
    // Markers left anywhere else cannot fill.
    let mut left = None;
    plan.apply_with_subqueries(|p| {
        if matches!(p, LogicalPlan::Extension(_)) {
            return Ok(TreeNodeRecursion::Continue);
        }
        p.apply_expressions(|e| {
            e.apply(|e| {
                if let Some(n) = [LOCF, INTERPOLATE].into_iter().find(|n| is_call(e, n)) {
                    left = Some(n);
                    return Ok(TreeNodeRecursion::Stop);
                }
                Ok(TreeNodeRecursion::Continue)
            })
        })
    })?;
    match left {
        Some(n) => Err(Error::invalid(misplaced(n))),
        None => Ok(plan),
    }
}

/// The rewrite of one projection over an aggregate, or `None` when the aggregate does not group
/// by `time_bucket_gapfill`.
fn rewrite(proj: &Projection, agg: &Aggregate) -> Result<Option<LogicalPlan>> {
    let calls: Vec<usize> = agg
        .group_expr
        .iter()
        .enumerate()
        .filter(|(_, e)| is_call(&(*e).clone().unalias_nested().data, GAPFILL))
        .map(|(i, _)| i)
        .collect();
    let b = match calls.as_slice() {
        [] => return Ok(None),
        [b] => *b,
        _ => return Err(Error::invalid("a query groups by at most one time_bucket_gapfill(...)")),
    };
    let Expr::ScalarFunction(call) = agg.group_expr[b].clone().unalias_nested().data else {
        return Ok(None);
    };
    let args = &call.args;
    let (width, ts) = (&args[0], &args[1]);
    let Expr::Literal(width, _) = width else {
        return Err(Error::invalid(format!(
            "time_bucket_gapfill: the width must be a constant interval, not {width}"
        )));
    };
    let (zone, bounds) = match args.len() {
        2 => (None, None),
        3 => (Some(&args[2]), None),
        4 => (None, Some((&args[2], &args[3]))),
        _ => (Some(&args[2]), Some((&args[3], &args[4]))),
    };
    let zone = match zone {
        None => None,
        Some(Expr::Literal(v, _)) if v.is_null() => None,
        Some(Expr::Literal(v, _)) => Some(v.to_string()),
        Some(z) => {
            return Err(Error::invalid(format!(
                "time_bucket_gapfill: the time zone must be a constant text, not {z}"
            )))
        }
    };
    let ts_type = ts
        .get_type(agg.input.schema())
        .map_err(|e| Error::invalid(format!("time_bucket_gapfill: {e}")))?;
    let cast = |e: &Expr| Expr::Cast(Cast::new(Box::new(e.clone()), ts_type.clone()));
    let (start, finish, finish_inclusive) = match bounds {
        Some((s, f)) => (cast(s), cast(f), false),
        None => {
            let (s, f) = where_bounds(&agg.input, ts)?;
            match (s, f) {
                (Some(s), Some((f, inclusive))) => (cast(&s), cast(&f), inclusive),
                _ => {
                    return Err(Error::invalid(format!(
                        "time_bucket_gapfill needs the range to fill: bound {ts} in WHERE ({ts} >= ... AND {ts} < ...) \
                         or give start and finish: time_bucket_gapfill(width, ts, start, finish)"
                    )))
                }
            }
        }
    };
    // The aggregate's columns, and the fill markers' arguments as columns after them.
    let schema = agg.schema.clone();
    let columns: Vec<Column> = schema.columns();
    let mut inner: Vec<Expr> = columns.iter().cloned().map(Expr::Column).collect();
    let mut fills = Vec::new();
    let mut outer = Vec::new();
    for e in &proj.expr {
        let name = e.schema_name().to_string();
        let rewritten = e
            .clone()
            .transform_down(|x| {
                let kind = match &x {
                    Expr::ScalarFunction(f) if f.name() == LOCF => Fill::Locf,
                    Expr::ScalarFunction(f) if f.name() == INTERPOLATE => Fill::Interpolate,
                    _ => return Ok(Transformed::no(x)),
                };
                let Expr::ScalarFunction(ScalarFunction { args, .. }) = x else {
                    return Ok(Transformed::no(x));
                };
                let arg = args
                    .into_iter()
                    .next()
                    .unwrap_or(Expr::Literal(datafusion::common::ScalarValue::Null, None));
                let nested = arg.exists(|y| Ok(is_call(y, LOCF) || is_call(y, INTERPOLATE)))?;
                if nested {
                    return exec_err!("locf and interpolate cannot be nested in each other");
                }
                let arg = match kind {
                    Fill::Interpolate => Expr::Cast(Cast::new(Box::new(arg), DataType::Float64)),
                    Fill::Locf => arg,
                };
                let col = format!("__gapfill_{}", fills.len());
                inner.push(arg.alias(&col));
                fills.push((Column::from_name(&col), kind));
                Ok(Transformed::new(
                    Expr::Column(Column::from_name(col)),
                    true,
                    TreeNodeRecursion::Jump,
                ))
            })
            .map_err(|e| Error::invalid(e.to_string()))?;
        outer.push(match (rewritten.transformed, &rewritten.data) {
            (true, Expr::Alias(_)) | (false, _) => rewritten.data,
            (true, _) => rewritten.data.alias(name),
        });
    }
    let inner = Projection::try_new(inner, proj.input.clone())?;
    let groups = columns
        .iter()
        .enumerate()
        .filter(|(i, _)| *i < agg.group_expr.len() && *i != b)
        .map(|(_, c)| c.clone())
        .collect();
    let node = GapFill::try_new(
        Arc::new(LogicalPlan::Projection(inner)),
        groups,
        columns[b].clone(),
        fills,
        node::Range {
            width: width.clone(),
            zone,
            start,
            finish,
            finish_inclusive,
        },
    )?;
    let filled = LogicalPlan::Extension(Extension { node: Arc::new(node) });
    Ok(Some(LogicalPlan::Projection(Projection::try_new(
        outer,
        Arc::new(filled),
    )?)))
}

/// A fill range from WHERE: (start, (finish, whether finish is included)).
type Bounds = (Option<Expr>, Option<(Expr, bool)>);

/// The bounds WHERE puts on `ts` under an aggregate: (start, (finish, whether finish is
/// included)), each a constant expression; with several, the tightest (`greatest` of the starts,
/// `least` of the finishes).
///
/// Errors: upper bounds that mix `<` and `<=` (which one is tightest is known only when they run).
fn where_bounds(input: &LogicalPlan, ts: &Expr) -> Result<Bounds> {
    let (starts, finishes) = where_bound_lists(input, ts);
    let start = match starts.len() {
        0 => None,
        1 => starts.into_iter().next(),
        _ => Some(datafusion::functions::core::expr_fn::greatest(starts)),
    };
    let finish = match finishes.as_slice() {
        [] => None,
        [one] => Some(one.clone()),
        many => {
            let inclusive = many[0].1;
            if many.iter().any(|(_, i)| *i != inclusive) {
                return Err(Error::invalid(format!(
                    "time_bucket_gapfill: WHERE bounds {ts} from above with both < and <=; give one upper bound"
                )));
            }
            let exprs = many.iter().map(|(e, _)| e.clone()).collect();
            Some((datafusion::functions::core::expr_fn::least(exprs), inclusive))
        }
    };
    Ok((start, finish))
}

/// Every bound WHERE puts on `ts` under an aggregate: (starts, finishes with whether each is
/// included).
fn where_bound_lists(input: &LogicalPlan, ts: &Expr) -> (Vec<Expr>, Vec<(Expr, bool)>) {
    let (mut start, mut finish) = (Vec::new(), Vec::new());
    let mut plan = input;
    let constant = |e: &Expr| e.column_refs().is_empty();
    let is_ts = |e: &Expr| {
        let e = match e {
            Expr::Cast(c) => c.expr.as_ref(),
            e => e,
        };
        e == ts || matches!(ts, Expr::Cast(c) if c.expr.as_ref() == e)
    };
    while let LogicalPlan::Filter(f) = plan {
        for c in split_conjunction(&f.predicate) {
            match c {
                Expr::BinaryExpr(BinaryExpr { left, op, right }) => {
                    let (op, bound) = if is_ts(left) && constant(right) {
                        (*op, right.as_ref())
                    } else if is_ts(right) && constant(left) {
                        match op.swap() {
                            Some(op) => (op, left.as_ref()),
                            None => continue,
                        }
                    } else {
                        continue;
                    };
                    match op {
                        Operator::GtEq | Operator::Gt => start.push(bound.clone()),
                        Operator::Lt => finish.push((bound.clone(), false)),
                        Operator::LtEq => finish.push((bound.clone(), true)),
                        _ => {}
                    }
                }
                Expr::Between(b) if !b.negated && is_ts(&b.expr) && constant(&b.low) && constant(&b.high) => {
                    start.push(b.low.as_ref().clone());
                    finish.push((b.high.as_ref().clone(), true));
                }
                _ => {}
            }
        }
        plan = f.input.as_ref();
    }
    (start, finish)
}
