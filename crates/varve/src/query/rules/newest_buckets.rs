//! Newest time buckets first: `SELECT time_bucket(w, <time>) AS b, <aggregates> FROM t GROUP BY b
//! [, other columns] ORDER BY b DESC [, ...] LIMIT k` reads only the rows of the newest buckets,
//! not the whole table.
//!
//! The rule ([`mark`], run by `query::rules::newest`'s optimizer rule) marks the table's scan with
//! [`NewestBuckets`] when the plan has that shape with no filter at all (a filter could drop the
//! rows the bound below counts on) and the table's time column is required. At scan time
//! ([`bound`]) the data files' time bounds from the manifests, and the row group and page bounds
//! of the footers this process holds, are real rows' times (Varve refuses tables with delete
//! files, so every row of a live file is visible): their buckets, computed by the query's own
//! bucket expression, are buckets that hold rows. After compaction every file of a partition
//! spans its whole time range, so the page bounds are what finds the newest buckets there. When at least k distinct ones
//! are found, with `c` the start of the k-th newest, the scan keeps `<time> >= c` only.
//!
//! Why the answer is unchanged: `time_bucket` in every form (fixed widths, calendar units, time
//! zones, origins, offsets) is a floor, so it is monotonic, never above its argument, and maps a
//! bucket start to itself. A row with time `t >= c` is in a bucket `>= c`, and a row with `t < c`
//! in a bucket `<= t < c`: the bound keeps exactly the rows of the buckets from `c` on, whole, so
//! every group whose bucket is `c` or newer is computed from all its rows. There are at least k
//! such groups (one per bucket found), and every other group's bucket is older, so it sorts after
//! them: the first k rows by the bucket descending are the same. A table's retention hides older
//! rows; bounds older than it are not counted.

use std::sync::Arc;

use arrow::array::{Array, RecordBatch, TimestampMicrosecondArray};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use datafusion::catalog::Session;
use datafusion::common::stats::Precision;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Column, DFSchema, Result, ScalarValue};
use datafusion::logical_expr::{Aggregate, Expr, LogicalPlan, Projection, Sort, TableScan};
use iceberg::spec::DataFile;
use parquet::file::metadata::ParquetMetaData;
use parquet::file::page_index::column_index::ColumnIndexMetaData;
use parquet::file::statistics::Statistics;

use crate::format::stats::FileStats;
use crate::query::scan::table::{NewestBuckets, VarveTable};

/// The most rows (`LIMIT k`) the rule marks a scan for: a dashboard's last buckets, not a bulk
/// read.
const MAX_K: usize = 10_000;

/// `s` (a `Sort` with a fetch) with its table's scan marked [`NewestBuckets`], when the plan has
/// the shape of the module docs.
pub(crate) fn mark(s: &Sort, scan_of: impl Fn(&TableScan) -> Option<VarveTable>) -> Result<Option<LogicalPlan>> {
    let Some(k) = s.fetch.filter(|k| (1..=MAX_K).contains(k)) else {
        return Ok(None);
    };
    let Some(first) = s.expr.first() else {
        return Ok(None);
    };
    let Expr::Column(column) = &first.expr else {
        return Ok(None);
    };
    if first.asc {
        return Ok(None);
    }
    match mark_input(&s.input, column, k, &scan_of)? {
        Some(input) => Ok(Some(LogicalPlan::Sort(Sort {
            expr: s.expr.clone(),
            input: Arc::new(input),
            fetch: s.fetch,
        }))),
        None => Ok(None),
    }
}

/// `plan` with its scan marked, when `column` of its output is a `time_bucket` group of an
/// aggregate over an unfiltered scan of a Varve table, through projections and aliases.
fn mark_input(
    plan: &LogicalPlan,
    column: &Column,
    k: usize,
    scan_of: &impl Fn(&TableScan) -> Option<VarveTable>,
) -> Result<Option<LogicalPlan>> {
    match plan {
        LogicalPlan::Projection(p) => {
            let Ok(i) = p.schema.index_of_column(column) else {
                return Ok(None);
            };
            let Expr::Column(inner) = p.expr[i].clone().unalias() else {
                return Ok(None);
            };
            match mark_input(&p.input, &inner, k, scan_of)? {
                Some(input) => Ok(Some(LogicalPlan::Projection(Projection::try_new(
                    p.expr.clone(),
                    Arc::new(input),
                )?))),
                None => Ok(None),
            }
        }
        LogicalPlan::SubqueryAlias(a) => {
            let Ok(i) = a.schema.index_of_column(column) else {
                return Ok(None);
            };
            let (qualifier, field) = a.input.schema().qualified_field(i);
            let inner = Column::new(qualifier.cloned(), field.name());
            match mark_input(&a.input, &inner, k, scan_of)? {
                Some(input) => Ok(Some(plan.with_new_exprs(plan.expressions(), vec![input])?)),
                None => Ok(None),
            }
        }
        LogicalPlan::Aggregate(a) => {
            let Ok(i) = a.schema.index_of_column(column) else {
                return Ok(None);
            };
            let Some(group) = a.group_expr.get(i) else {
                return Ok(None);
            };
            if a.group_expr.iter().any(|g| matches!(g, Expr::GroupingSet(_))) {
                return Ok(None);
            }
            let LogicalPlan::TableScan(scan) = a.input.as_ref() else {
                return Ok(None);
            };
            if !scan.filters.is_empty() || scan.fetch.is_some() {
                return Ok(None);
            }
            let Some(mut table) = scan_of(scan) else {
                return Ok(None);
            };
            let marked = table.newest_k.is_some()
                || table.newest_filtered
                || table.newest_buckets.is_some()
                || table.last_values.is_some()
                || table.min_sequence.is_some();
            if marked {
                return Ok(None);
            }
            let Ok(contract) = table.table.contract() else {
                return Ok(None);
            };
            let Some(time) = contract.time_column.clone() else {
                return Ok(None);
            };
            let required = table
                .table
                .metadata
                .current_schema()
                .field_by_name(&time)
                .is_some_and(|f| f.required);
            let Some(bucket) = bucket_of(group, &time) else {
                return Ok(None);
            };
            if !required {
                return Ok(None);
            }
            table.newest_buckets = Some(NewestBuckets { k, bucket });
            let new_scan = LogicalPlan::TableScan(TableScan {
                source: datafusion::catalog::default_table_source::provider_as_source(Arc::new(table)),
                ..scan.clone()
            });
            Ok(Some(LogicalPlan::Aggregate(Aggregate::try_new(
                Arc::new(new_scan),
                a.group_expr.clone(),
                a.aggr_expr.clone(),
            )?)))
        }
        _ => Ok(None),
    }
}

/// `group` as a bucket expression over the column `time` alone (unqualified): a call of
/// `time_bucket` whose arguments are `time` and constants.
fn bucket_of(group: &Expr, time: &str) -> Option<Expr> {
    let Expr::ScalarFunction(f) = group.clone().unalias() else {
        return None;
    };
    if f.func.name() != "time_bucket" {
        return None;
    }
    let mut columns = 0;
    for a in &f.args {
        match a {
            Expr::Column(c) if c.name == time => columns += 1,
            Expr::Literal(..) => {}
            _ => return None,
        }
    }
    if columns != 1 {
        return None;
    }
    let unqualified = Expr::ScalarFunction(f)
        .transform(|e| match e {
            Expr::Column(c) => Ok(Transformed::yes(Expr::Column(Column::new_unqualified(c.name)))),
            other => Ok(Transformed::no(other)),
        })
        .ok()?
        .data;
    Some(unqualified)
}

/// For a scan marked [`NewestBuckets`]: `<time> >= c` (module docs) from the time bounds of
/// `files` (the snapshot's live data files: their bounds in the manifests, and the row group and
/// page bounds of the footers this process holds), or `None` when they show fewer than k buckets
/// (the scan then reads every file). `retention` is the table's retention filter, if any.
///
/// Errors: the bucket expression cannot be evaluated on the bounds (not expected: it was planned
/// on the same column).
pub(crate) fn bound(
    table: &VarveTable,
    state: &dyn Session,
    marked: &NewestBuckets,
    files: &[DataFile],
    retention: Option<&Expr>,
) -> Result<Option<Expr>> {
    let contract = table.table.contract()?;
    let Some(time) = contract.time_column else {
        return Ok(None);
    };
    let Ok(index) = table.schema.index_of(&time) else {
        return Ok(None);
    };
    let field = table.schema.field(index).clone();
    let DataType::Timestamp(TimeUnit::Microsecond, tz) = field.data_type() else {
        return Ok(None);
    };
    let field_id: Option<i32> = field
        .metadata()
        .get(parquet::arrow::PARQUET_FIELD_ID_META_KEY)
        .and_then(|v| v.parse().ok());
    let stats = FileStats {
        files,
        schema: &table.schema,
    };
    let mut times: Vec<i64> = Vec::with_capacity(files.len() * 2);
    for (i, f) in files.iter().enumerate() {
        let s = stats.file_statistics(i);
        let c = &s.column_statistics[index];
        for v in [&c.min_value, &c.max_value] {
            if let Precision::Exact(ScalarValue::TimestampMicrosecond(Some(v), _)) = v {
                times.push(*v);
            }
        }
        // Row group and page bounds, from footers read before (never fetched here).
        let footer = table
            .env
            .storage
            .path_of(f.file_path())
            .ok()
            .and_then(|path| table.env.cache.footer(&path, f.file_size_in_bytes()));
        if let (Some(footer), Some(id)) = (footer, field_id) {
            footer_times(&footer, id, &mut times);
        }
    }
    if times.len() < marked.k {
        return Ok(None);
    }
    let one = Arc::new(Schema::new(vec![Field::new(&time, field.data_type().clone(), false)]));
    let values = TimestampMicrosecondArray::from(times).with_timezone_opt(tz.clone());
    let batch = RecordBatch::try_new(one.clone(), vec![Arc::new(values)])?;
    let df_schema = DFSchema::try_from(one.as_ref().clone())?;
    let batch = match retention {
        Some(r) => {
            let keep = state.create_physical_expr(r.clone(), &df_schema)?.evaluate(&batch)?;
            let keep = keep.into_array(batch.num_rows())?;
            arrow::compute::filter_record_batch(&batch, datafusion::common::cast::as_boolean_array(&keep)?)?
        }
        None => batch,
    };
    let buckets = state
        .create_physical_expr(marked.bucket.clone(), &df_schema)?
        .evaluate(&batch)?
        .into_array(batch.num_rows())?;
    if buckets.data_type() != field.data_type() {
        return Ok(None);
    }
    let buckets = buckets
        .as_any()
        .downcast_ref::<TimestampMicrosecondArray>()
        .ok_or_else(|| crate::error::Error::internal("a bucket of a µs time is not a µs time"))?;
    let mut distinct: Vec<i64> = buckets.iter().flatten().collect();
    distinct.sort_unstable_by(|a, b| b.cmp(a));
    distinct.dedup();
    let Some(start) = distinct.get(marked.k - 1) else {
        return Ok(None);
    };
    Ok(Some(datafusion::prelude::col(Column::new_unqualified(time)).gt_eq(
        datafusion::prelude::lit(ScalarValue::TimestampMicrosecond(Some(*start), tz.clone())),
    )))
}

/// Pushes the minimum and maximum of the column with field id `id` of every row group of
/// `footer`, and of every page when it has a page index (Parquet's column index): times of real
/// rows, as the file's own bounds are (a Parquet INT64 bound is exact).
fn footer_times(footer: &ParquetMetaData, id: i32, out: &mut Vec<i64>) {
    let columns = footer.file_metadata().schema_descr().columns();
    let Some(c) = columns.iter().position(|c| {
        let info = c.self_type().get_basic_info();
        info.has_id() && info.id() == id
    }) else {
        return;
    };
    for (r, rg) in footer.row_groups().iter().enumerate() {
        if let Some(Statistics::Int64(s)) = rg.column(c).statistics() {
            out.extend(s.min_opt().copied());
            out.extend(s.max_opt().copied());
        }
        if let Some(ColumnIndexMetaData::INT64(pages)) = footer.column_index().and_then(|ix| ix.get(r)?.get(c)) {
            out.extend(pages.min_values_iter().flatten().copied());
            out.extend(pages.max_values_iter().flatten().copied());
        }
    }
}
