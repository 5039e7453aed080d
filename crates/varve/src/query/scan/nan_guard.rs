//! Pruning that cannot speak for NaN: which filters may prune row groups and pages of a float
//! column by their Parquet statistics.
//!
//! Parquet leaves NaN out of a column chunk's and a page's min/max (Parquet spec,
//! "Statistics": writers must not write NaN as a bound; parquet-rs skips NaN), so those
//! statistics say nothing of whether a chunk holds NaN. DataFusion orders NaN above every number
//! and equal to itself, so `v > 1.5`, `v != 1.5`, `v >= x`, `NOT (v < x)` and a comparison with a
//! NaN literal are true for a NaN row: pruning such a filter on min/max drops NaN rows that the
//! filter keeps (`count(*) WHERE v != 1.5` answered 0 for a file of 1.5s and one NaN). Filters that
//! NaN never satisfies (`v < x`, `v <= x`, `v = x`, `v IN (...)`, `v BETWEEN a AND b` with numbers)
//! prune safely: a chunk whose numbers fail them holds no row that passes.
//!
//! The Iceberg manifests count NaN per file and column (`nan_value_counts`), so the guard applies
//! only to float columns that may hold NaN in a scanned file (counted, or not counted at all).
//! File pruning by the manifests' bounds is safe: `format::stats` gives no float bounds for a
//! file that counts NaN there or does not count them (Varve writes none for such a file,
//! `write::metrics`; another engine may).

use std::collections::HashSet;

use arrow::datatypes::{DataType, Schema};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::{Between, BinaryExpr, Expr, Operator};
use iceberg::spec::DataFile;

/// The float columns of `schema` that may hold NaN in one of `files`: a file counts NaN there,
/// or does not count them; with no files (a scan of a last-value index, whose file counts
/// nothing), every float column.
pub(crate) fn nan_columns(schema: &Schema, files: &[DataFile]) -> HashSet<String> {
    schema
        .fields()
        .iter()
        .filter(|f| matches!(f.data_type(), DataType::Float16 | DataType::Float32 | DataType::Float64))
        .filter(|f| {
            let id: Option<i32> = f
                .metadata()
                .get(parquet::arrow::PARQUET_FIELD_ID_META_KEY)
                .and_then(|v| v.parse().ok());
            match id {
                Some(id) if !files.is_empty() => files.iter().any(|d| crate::format::stats::may_hold_nan(d, id)),
                _ => true,
            }
        })
        .map(|f| f.name().clone())
        .collect()
}

/// Whether filter `e` may prune by min/max statistics although the columns `nan` may hold NaN:
/// it names none of them, or NaN never satisfies it (module docs). Anything not recognised is
/// not safe.
pub(crate) fn prunes_safely(e: &Expr, nan: &HashSet<String>) -> bool {
    if nan.is_empty() || !names_any(e, nan) {
        return true;
    }
    match e {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => match op {
            Operator::And => prunes_safely(left, nan) && prunes_safely(right, nan),
            Operator::Or => prunes_safely(left, nan) && prunes_safely(right, nan),
            Operator::Lt | Operator::LtEq | Operator::Eq | Operator::Gt | Operator::GtEq => {
                // `x > v` is `v < x`: the operator with the column on the left decides.
                let (value, op) = match (column_of(left), column_of(right)) {
                    (Some(_), None) => (right, *op),
                    (None, Some(_)) => (left, op.swap().unwrap_or(*op)),
                    _ => return false,
                };
                matches!(op, Operator::Lt | Operator::LtEq | Operator::Eq) && is_number(value)
            }
            _ => false,
        },
        Expr::InList(l) => !l.negated && column_of(&l.expr).is_some() && l.list.iter().all(is_number),
        Expr::Between(Between {
            expr,
            negated,
            low,
            high,
        }) => !negated && column_of(expr).is_some() && is_number(low) && is_number(high),
        Expr::IsNull(inner) => column_of(inner).is_some(),
        _ => false,
    }
}

/// Whether `e` reads one of the columns `nan`.
fn names_any(e: &Expr, nan: &HashSet<String>) -> bool {
    e.column_refs().iter().any(|c| nan.contains(&c.name))
}

/// The column `e` is, through casts.
fn column_of(e: &Expr) -> Option<&datafusion::common::Column> {
    match e {
        Expr::Column(c) => Some(c),
        Expr::Cast(c) => column_of(&c.expr),
        Expr::TryCast(c) => column_of(&c.expr),
        _ => None,
    }
}

/// Whether `e` is a literal that is a number, not NaN (nor NULL).
fn is_number(e: &Expr) -> bool {
    let Expr::Literal(v, _) = e else {
        return false;
    };
    match v {
        ScalarValue::Float64(Some(f)) => !f.is_nan(),
        ScalarValue::Float32(Some(f)) => !f.is_nan(),
        ScalarValue::Float16(Some(f)) => !f.is_nan(),
        ScalarValue::Int8(Some(_))
        | ScalarValue::Int16(Some(_))
        | ScalarValue::Int32(Some(_))
        | ScalarValue::Int64(Some(_))
        | ScalarValue::UInt8(Some(_))
        | ScalarValue::UInt16(Some(_))
        | ScalarValue::UInt32(Some(_))
        | ScalarValue::UInt64(Some(_)) => true,
        ScalarValue::Decimal128(Some(_), _, _) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::logical_expr::{col, lit};

    #[test]
    fn filters_nan_satisfies_do_not_prune() {
        let nan: HashSet<String> = ["v".to_string()].into();
        let safe = [
            col("v").lt(lit(1.5)),
            col("v").lt_eq(lit(1.5)),
            col("v").eq(lit(1.5)),
            lit(1.5).gt(col("v")),
            col("v").in_list(vec![lit(1.0), lit(2.0)], false),
            col("v").between(lit(1.0), lit(2.0)),
            col("other").gt(lit(1)),
            col("v").lt(lit(1.5)).and(col("other").not_eq(lit(1))),
        ];
        for e in &safe {
            assert!(prunes_safely(e, &nan), "{e}");
        }
        let unsafe_ = [
            col("v").gt(lit(1.5)),
            col("v").gt_eq(lit(1.5)),
            col("v").not_eq(lit(1.5)),
            lit(1.5).lt(col("v")),
            col("v").eq(lit(f64::NAN)),
            col("v").lt(lit(f64::NAN)),
            col("v").in_list(vec![lit(1.0)], true),
            col("v").in_list(vec![lit(f64::NAN)], false),
            !col("v").between(lit(1.0), lit(2.0)),
            !col("v").lt(lit(1.5)),
            col("v").lt(lit(1.5)).or(col("v").gt(lit(3.0))),
        ];
        for e in &unsafe_ {
            assert!(!prunes_safely(e, &nan), "{e}");
        }
        // No column that may hold NaN: everything prunes.
        assert!(prunes_safely(&col("v").gt(lit(1.5)), &HashSet::new()));
    }
}
