//! The output ordering a scan declares to DataFusion: the order its data files' rows are in.
//!
//! Varve writes every data file of a time-series table sorted by (series key..., time), ascending,
//! NULLs first, and records it in the file's manifest entry as the table's sort order (Iceberg
//! spec, "Sort Orders": a data file's `sort_order_id`). A scan whose files all carry the same
//! sort order can tell DataFusion that each of its partitions yields rows in that order, so that a
//! sort the query asks for on a prefix of it (or on the time column under an equality on the
//! series key) is not done again, and aggregates by the series key run in order.
//!
//! A scan that applies its filters row by row (`filter-pushdown`) and keeps one value of the leading
//! series key columns (`host = 'h1'`) yields rows in the order of the rest: its ordering is declared
//! without them ([`after_equalities`]), so that `ORDER BY ts` needs no sort even when the key
//! column is not among the columns read.
//!
//! DataFusion keeps a declared ordering only where it holds: a partition that reads two files
//! whose bounds overlap loses it (`FileScanConfig::validated_output_ordering`). And a scan that
//! declares one reads each partition's files in order, without work stealing, so the caller
//! declares it only where that costs nothing: when each partition reads one unit of work.

use std::sync::Arc;

use arrow::compute::SortOptions;
use arrow::datatypes::SchemaRef;
use datafusion::logical_expr::{BinaryExpr, Expr, Operator};
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::{LexOrdering, PhysicalSortExpr};
use iceberg::spec::{DataFile, NullOrder, SortDirection, TableMetadata, Transform};

/// The ordering every one of `files` is sorted in, as sort expressions on the columns of
/// `schema` (the scan's table schema): the sort order `sort_order_id` of the files' manifest
/// entries names in `metadata`. `None` when a file has no sort order or another one than the
/// first file, when the order is unsorted, or when one of its fields is not an identity of a
/// column of `schema` (a bucket or a truncation orders nothing a query can use).
///
/// A column without NULLs (required, or no file counts a NULL in it) is declared with DataFusion's
/// default NULL order for its direction (`ASC NULLS LAST`, `DESC NULLS FIRST`), which is the same
/// order when there are none, so that a plain `ORDER BY ts` matches it.
pub(crate) fn of_files<'a>(
    metadata: &TableMetadata,
    files: impl Iterator<Item = &'a DataFile>,
    schema: &SchemaRef,
) -> Option<LexOrdering> {
    let files: Vec<&DataFile> = files.collect();
    let id = files.first()?.sort_order_id()?;
    if !files.iter().all(|f| f.sort_order_id() == Some(id)) {
        return None;
    }
    let order = metadata.sort_order_by_id(i64::from(id))?;
    let table = metadata.current_schema();
    let mut exprs = Vec::with_capacity(order.fields.len());
    for field in &order.fields {
        if field.transform != Transform::Identity {
            return None;
        }
        let name = table.name_by_field_id(field.source_id)?;
        let index = schema.index_of(name).ok()?;
        let descending = field.direction == SortDirection::Descending;
        let no_nulls = !schema.field(index).is_nullable()
            || files
                .iter()
                .all(|f| f.null_value_counts().get(&field.source_id) == Some(&0));
        let options = SortOptions {
            descending,
            nulls_first: match no_nulls {
                true => descending,
                false => field.null_order == NullOrder::First,
            },
        };
        exprs.push(PhysicalSortExpr::new(Arc::new(Column::new(name, index)), options));
    }
    LexOrdering::new(exprs)
}

/// `ordering` without its leading columns that `filters` (conjuncts every row of the scan's output
/// passes) hold to one value: a column compared for equality with a literal that is not NULL.
/// `None` when no column is left.
pub(crate) fn after_equalities(ordering: LexOrdering, filters: &[Expr]) -> Option<LexOrdering> {
    let fixed = |name: &str| {
        filters.iter().any(|f| match f {
            Expr::BinaryExpr(BinaryExpr {
                left,
                op: Operator::Eq,
                right,
            }) => match (left.as_ref(), right.as_ref()) {
                (Expr::Column(c), Expr::Literal(v, _)) | (Expr::Literal(v, _), Expr::Column(c)) => {
                    c.name == name && !v.is_null()
                }
                _ => false,
            },
            _ => false,
        })
    };
    let exprs: Vec<PhysicalSortExpr> = ordering.into();
    let skip = exprs
        .iter()
        .take_while(|e| e.expr.downcast_ref::<Column>().is_some_and(|c| fixed(c.name())))
        .count();
    LexOrdering::new(exprs.into_iter().skip(skip))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::prelude::{col, lit};

    fn ordering() -> LexOrdering {
        let e = |n: &str, i| PhysicalSortExpr::new_default(Arc::new(Column::new(n, i)));
        LexOrdering::new([e("site", 0), e("host", 1), e("ts", 2)]).unwrap()
    }

    fn names(o: Option<LexOrdering>) -> Vec<String> {
        o.map(|o| o.iter().map(|e| e.expr.to_string()).collect())
            .unwrap_or_default()
    }

    #[test]
    fn leading_columns_held_to_one_value_are_dropped() {
        let site = col("site").eq(lit("s1"));
        let host = lit("h1").eq(col("host"));
        assert_eq!(
            names(after_equalities(ordering(), std::slice::from_ref(&site))),
            ["host@1", "ts@2"]
        );
        assert_eq!(
            names(after_equalities(ordering(), &[host.clone(), site.clone()])),
            ["ts@2"]
        );
        // Only a leading run: host fixed but site not leaves the order as it is.
        assert_eq!(
            names(after_equalities(ordering(), &[host])),
            ["site@0", "host@1", "ts@2"]
        );
        // A range, or an equality with NULL, holds nothing.
        let range = col("site").gt_eq(lit("s1"));
        assert_eq!(names(after_equalities(ordering(), &[range])).len(), 3);
        let null = col("site").eq(lit(datafusion::common::ScalarValue::Utf8(None)));
        assert_eq!(names(after_equalities(ordering(), &[null])).len(), 3);
    }
}
