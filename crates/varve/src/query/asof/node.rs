//! The ASOF join as a logical plan node: the two inputs, the key pairs, the two time expressions,
//! the direction and the tolerance, read from the ON condition ([`AsofJoin::try_new`]). Its
//! output is the join's: the left input's columns, then the right's (nullable for ASOF LEFT
//! JOIN).

use std::cmp::Ordering;
use std::sync::Arc;

use datafusion::common::{plan_err, DFSchemaRef, Result, ScalarValue};
use datafusion::logical_expr::builder::build_join_schema;
use datafusion::logical_expr::utils::split_conjunction;
use datafusion::logical_expr::{
    BinaryExpr, Expr, ExprSchemable, JoinType, LogicalPlan, Operator, UserDefinedLogicalNodeCore,
};

/// Inner (`ASOF JOIN`: left rows without a match are dropped) or left (`ASOF LEFT JOIN`: kept
/// with NULLs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd)]
pub(crate) enum Kind {
    /// `ASOF JOIN`.
    Inner,
    /// `ASOF LEFT JOIN`.
    Left,
}

/// How the right time relates to the left one, written as `left_time <op> right_time`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd)]
pub(crate) enum Direction {
    /// `>=`: the newest right row at or before the left time.
    AtOrBefore,
    /// `>`: the newest right row strictly before.
    Before,
    /// `<=`: the oldest right row at or after.
    AtOrAfter,
    /// `<`: the oldest right row strictly after.
    After,
}

impl Direction {
    fn of(op: Operator) -> Option<Direction> {
        Some(match op {
            Operator::GtEq => Direction::AtOrBefore,
            Operator::Gt => Direction::Before,
            Operator::LtEq => Direction::AtOrAfter,
            Operator::Lt => Direction::After,
            _ => return None,
        })
    }

    /// The same comparison with its sides swapped (`q.ts <= t.ts` is `t.ts >= q.ts`).
    fn swapped(self) -> Direction {
        match self {
            Direction::AtOrBefore => Direction::AtOrAfter,
            Direction::Before => Direction::After,
            Direction::AtOrAfter => Direction::AtOrBefore,
            Direction::After => Direction::Before,
        }
    }

    /// Whether the match is at or before the left time.
    pub(crate) fn backward(self) -> bool {
        matches!(self, Direction::AtOrBefore | Direction::Before)
    }

    pub(crate) fn symbol(self) -> &'static str {
        match self {
            Direction::AtOrBefore => ">=",
            Direction::Before => ">",
            Direction::AtOrAfter => "<=",
            Direction::After => "<",
        }
    }
}

/// The largest distance between the left and the matched right time
/// (`AND t.ts - q.ts <= INTERVAL '5 seconds'`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd)]
pub(crate) struct Tolerance {
    /// In nanoseconds for timestamps; in the time column's own units for integer times.
    pub(crate) amount: i64,
    /// `<=` rather than `<`.
    pub(crate) inclusive: bool,
}

/// The ASOF join node (module docs).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct AsofJoin {
    pub(crate) left: Arc<LogicalPlan>,
    pub(crate) right: Arc<LogicalPlan>,
    /// Equal keys: (left expression, right expression), the right cast to the left's type.
    pub(crate) keys: Vec<(Expr, Expr)>,
    pub(crate) left_time: Expr,
    /// Cast to the left time's type.
    pub(crate) right_time: Expr,
    pub(crate) direction: Direction,
    pub(crate) tolerance: Option<Tolerance>,
    pub(crate) kind: Kind,
    schema: DFSchemaRef,
}

impl PartialOrd for AsofJoin {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        if self == other {
            return Some(Ordering::Equal);
        }
        (&self.left, &self.right, &self.keys, &self.left_time, &self.right_time)
            .partial_cmp(&(
                &other.left,
                &other.right,
                &other.keys,
                &other.left_time,
                &other.right_time,
            ))
            .filter(|o| *o != Ordering::Equal)
    }
}

/// Which input an expression reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Left,
    Right,
    Neither,
    Both,
}

const SHAPE: &str = "an ASOF JOIN's ON takes equalities of the two sides' keys, one comparison of their \
     times (`t.ts >= q.ts`, `>`, `<=` or `<`) and optionally a tolerance (`t.ts - q.ts <= INTERVAL '5 \
     seconds'`), joined by AND";

impl AsofJoin {
    /// Reads the ON condition `cond` of `left` ASOF-joined with `right`.
    ///
    /// Errors: a plan error naming the part of `cond` that is not a key equality, the time
    /// comparison or a tolerance, when there is not exactly one time comparison, or when a
    /// right key cannot be cast to its left key's type.
    pub(crate) fn try_new(left: Arc<LogicalPlan>, right: Arc<LogicalPlan>, cond: &Expr, kind: Kind) -> Result<Self> {
        let side = |e: &Expr| {
            let cols = e.column_refs();
            let l = cols.iter().filter(|c| left.schema().has_column(c)).count();
            let r = cols.iter().filter(|c| right.schema().has_column(c)).count();
            match (l, r) {
                (0, 0) => Side::Neither,
                (l, 0) if l == cols.len() => Side::Left,
                (0, r) if r == cols.len() => Side::Right,
                _ => Side::Both,
            }
        };
        let mut keys = Vec::new();
        let mut times: Vec<(Expr, Expr, Direction)> = Vec::new();
        let mut tolerances: Vec<(&Expr, &Expr, &Expr, bool)> = Vec::new();
        for c in split_conjunction(cond) {
            let Expr::BinaryExpr(BinaryExpr { left: a, op, right: b }) = c else {
                return plan_err!("{SHAPE}; `{c}` is none of these");
            };
            // A tolerance: `x - y <= constant`.
            let difference = match a.as_ref() {
                Expr::Cast(c) => c.expr.as_ref(),
                a => a,
            };
            if let (
                Expr::BinaryExpr(BinaryExpr {
                    left: x,
                    op: Operator::Minus,
                    right: y,
                }),
                Operator::LtEq | Operator::Lt,
            ) = (difference, op)
            {
                if side(b) == Side::Neither {
                    tolerances.push((x, y, b, *op == Operator::LtEq));
                    continue;
                }
            }
            match (side(a), side(b)) {
                (Side::Left, Side::Right) | (Side::Right, Side::Left) => {}
                _ => return plan_err!("{SHAPE}; `{c}` does not compare one side with the other"),
            }
            let (l, r, swapped) = if side(a) == Side::Left {
                (a, b, false)
            } else {
                (b, a, true)
            };
            match op {
                Operator::Eq => keys.push(((**l).clone(), (**r).clone())),
                op => match Direction::of(*op) {
                    Some(d) => times.push(((**l).clone(), (**r).clone(), if swapped { d.swapped() } else { d })),
                    None => return plan_err!("{SHAPE}; `{c}` is none of these"),
                },
            }
        }
        let [(left_time, right_time, direction)] =
            <[_; 1]>::try_from(times).or_else(|t| plan_err!("{SHAPE}; this one has {} time comparisons", t.len()))?;
        let tolerance = match tolerances.as_slice() {
            [] => None,
            [(x, y, amount, inclusive)] => {
                // Backward: left - right; forward: right - left.
                let (first, second) = if direction.backward() {
                    (&left_time, &right_time)
                } else {
                    (&right_time, &left_time)
                };
                if **x != *first || **y != *second {
                    return plan_err!(
                        "an ASOF JOIN's tolerance is written `{first} - {second} <= <interval>` for `{left_time} {} {right_time}`",
                        direction.symbol()
                    );
                }
                let time_type = left_time.get_type(left.schema())?;
                Some(Tolerance {
                    amount: tolerance_amount(amount, &time_type)?,
                    inclusive: *inclusive,
                })
            }
            _ => return plan_err!("{SHAPE}; this one has {} tolerances", tolerances.len()),
        };
        // Both sides of a key or of the time in their common type (DataFusion's comparison
        // coercion, as `=` and `>=` would compare them), so that nothing is cut on either side.
        let common = |l: Expr, r: Expr| -> Result<(Expr, Expr)> {
            let (lt, rt) = (l.get_type(left.schema())?, r.get_type(right.schema())?);
            if lt == rt {
                return Ok((l, r));
            }
            let Some(t) = datafusion::logical_expr::type_coercion::binary::comparison_coercion(&lt, &rt) else {
                return plan_err!("ASOF JOIN cannot compare `{l}` ({lt}) with `{r}` ({rt})");
            };
            let l = if lt == t { l } else { l.cast_to(&t, left.schema())? };
            let r = if rt == t { r } else { r.cast_to(&t, right.schema())? };
            Ok((l, r))
        };
        let keys = keys
            .into_iter()
            .map(|(l, r)| common(l, r))
            .collect::<Result<Vec<_>>>()?;
        let (left_time, right_time) = common(left_time, right_time)?;
        let schema = Arc::new(build_join_schema(left.schema(), right.schema(), &join_type(kind))?);
        Ok(AsofJoin {
            left,
            right,
            keys,
            left_time,
            right_time,
            direction,
            tolerance,
            kind,
            schema,
        })
    }
}

fn join_type(kind: Kind) -> JoinType {
    match kind {
        Kind::Inner => JoinType::Inner,
        Kind::Left => JoinType::Left,
    }
}

/// A tolerance's constant: an interval or duration without months for timestamps (nanoseconds),
/// an integer for integer times.
fn tolerance_amount(e: &Expr, time: &arrow::datatypes::DataType) -> Result<i64> {
    use arrow::datatypes::DataType;
    let Expr::Literal(v, _) = e else {
        return plan_err!("an ASOF JOIN's tolerance must be a constant, not `{e}`");
    };
    let nanos = match v {
        // Out of range (past about 292 years) is refused below, as a negative one is.
        ScalarValue::IntervalMonthDayNano(Some(i)) if i.months == 0 => i64::from(i.days)
            .checked_mul(86_400_000_000_000)
            .and_then(|d| d.checked_add(i.nanoseconds)),
        ScalarValue::IntervalDayTime(Some(i)) => {
            (i64::from(i.days) * 86_400_000 + i64::from(i.milliseconds)).checked_mul(1_000_000)
        }
        ScalarValue::DurationSecond(Some(s)) => s.checked_mul(1_000_000_000),
        ScalarValue::DurationMillisecond(Some(s)) => s.checked_mul(1_000_000),
        ScalarValue::DurationMicrosecond(Some(s)) => s.checked_mul(1_000),
        ScalarValue::DurationNanosecond(Some(s)) => Some(*s),
        _ => None,
    };
    match (time, nanos) {
        (DataType::Timestamp(..), Some(n)) if n >= 0 => Ok(n),
        (DataType::Timestamp(..), _) => {
            plan_err!("an ASOF JOIN's tolerance on timestamps is an interval of days or less, at least 0, not `{e}`")
        }
        (t, _) if t.is_integer() => match v.cast_to(&DataType::Int64) {
            Ok(ScalarValue::Int64(Some(n))) if n >= 0 => Ok(n),
            _ => plan_err!("an ASOF JOIN's tolerance on {t} times is an integer, at least 0, not `{e}`"),
        },
        (t, _) => plan_err!("an ASOF JOIN takes a tolerance on timestamp or integer times, not on {t}"),
    }
}

impl UserDefinedLogicalNodeCore for AsofJoin {
    fn name(&self) -> &str {
        "AsofJoin"
    }

    fn inputs(&self) -> Vec<&LogicalPlan> {
        vec![&self.left, &self.right]
    }

    fn schema(&self) -> &DFSchemaRef {
        &self.schema
    }

    /// Left keys, right keys, left time, right time.
    fn expressions(&self) -> Vec<Expr> {
        let mut out: Vec<Expr> = self.keys.iter().map(|(l, _)| l.clone()).collect();
        out.extend(self.keys.iter().map(|(_, r)| r.clone()));
        out.push(self.left_time.clone());
        out.push(self.right_time.clone());
        out
    }

    fn fmt_for_explain(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let kind = match self.kind {
            Kind::Inner => "AsofJoin",
            Kind::Left => "AsofJoin: left",
        };
        write!(f, "{kind}: ")?;
        for (l, r) in &self.keys {
            write!(f, "{l} = {r}, ")?;
        }
        write!(f, "{} {} {}", self.left_time, self.direction.symbol(), self.right_time)?;
        if let Some(t) = self.tolerance {
            write!(f, ", tolerance {}{}", if t.inclusive { "<=" } else { "<" }, t.amount)?;
        }
        Ok(())
    }

    fn with_exprs_and_inputs(&self, exprs: Vec<Expr>, inputs: Vec<LogicalPlan>) -> Result<Self> {
        let n = self.keys.len();
        let [left, right] = <[LogicalPlan; 2]>::try_from(inputs).or_else(|_| plan_err!("AsofJoin takes two inputs"))?;
        if exprs.len() != 2 * n + 2 {
            return plan_err!("AsofJoin takes {} expressions", 2 * n + 2);
        }
        let keys = (0..n).map(|i| (exprs[i].clone(), exprs[n + i].clone())).collect();
        let schema = Arc::new(build_join_schema(left.schema(), right.schema(), &join_type(self.kind))?);
        Ok(AsofJoin {
            left: Arc::new(left),
            right: Arc::new(right),
            keys,
            left_time: exprs[2 * n].clone(),
            right_time: exprs[2 * n + 1].clone(),
            direction: self.direction,
            tolerance: self.tolerance,
            kind: self.kind,
            schema,
        })
    }

    /// Output columns map to the left input's, then the right's; the node's own expressions'
    /// columns are added by DataFusion.
    fn necessary_children_exprs(&self, output_columns: &[usize]) -> Option<Vec<Vec<usize>>> {
        let n = self.left.schema().fields().len();
        let left = output_columns.iter().copied().filter(|i| *i < n).collect();
        let right = output_columns.iter().filter(|i| **i >= n).map(|i| i - n).collect();
        Some(vec![left, right])
    }
}
