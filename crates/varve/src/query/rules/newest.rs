//! Plan rewrites that answer newest-row queries from the last-value index (`index::last_value`)
//! instead of scanning every data file. A DataFusion [`OptimizerRule`], run after DataFusion's
//! own rules (so filters are already pushed into the scans), that changes only where a scan reads
//! from, never what the plan computes; it rewrites two shapes, for a Varve table whose snapshot
//! has an index:
//!
//! - `... WHERE rn = 1` (or `rn <= 1`, `rn < 2`) over `row_number() OVER (PARTITION BY <series
//!   key> ORDER BY <time> DESC) AS rn`: the window over the table becomes the index's rows with
//!   `rn` = 1 (the filter above stays, and keeps every row).
//! - `SELECT <series key>, max(<time>) ... GROUP BY <series key>`, where every aggregate is
//!   `max(<time>)`, `last_value(x ORDER BY <time>)` or `first_value(x ORDER BY <time> DESC)`: the
//!   aggregate reads the index's rows (one per series: the row each of those picks).
//!
//! Both are answered from the index alone when every filter below them names only series-key
//! columns and the snapshot's series-constant columns (a truck's fleet, when no truck ever
//! changed fleet; `index::last_value`): such a filter keeps or drops whole series, and the index
//! holds each series' newest row. Another
//! filter (a time range, a value) may pick an older row: the plan is then kept, and its scan
//! told so (`VarveTable::newest_filtered`). For each series whose newest row passes the filters,
//! that row is the newest one they keep, and the scan takes it from the index; only the other
//! series' rows are read from the data files (`query::scan::newest_scan::split_by_index`). When every
//! truck of a fleet has its newest row in the fleet, "the newest row of each truck of the fleet"
//! reads no data file at all after compaction. The index's rows pass the table's retention filter
//! as data files do. `EXPLAIN` shows when the index answered.
//!
//! A third shape is only narrowed, not answered from the index: `ORDER BY <time> DESC [, <series
//! key columns>] LIMIT k` over the table (filters on series-key columns only). The k newest rows
//! come from the series of the index's k first rows in that order, at or after the k-th one's
//! time: a row of any other series is older than, or tied in every sort key with, its series'
//! newest row, which the k index rows all precede. The scan is told so ([`NewestK`]) and prunes
//! files, row groups and pages by that bound; the sort above still picks the rows. After
//! compaction, when every file holds every series sorted by (series key, time), this reads k
//! series' last pages instead of every series' last page.

use std::any::Any;
use std::collections::BTreeSet;
use std::sync::Arc;

use datafusion::catalog::default_table_source::{provider_as_source, source_as_provider};
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::expr::{AggregateFunction, NullTreatment, WindowFunction};
use datafusion::logical_expr::{
    Aggregate, BinaryExpr, Expr, Filter, LogicalPlan, Operator, Projection, TableScan, WindowFunctionDefinition,
};
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};

use crate::query::scan::table::{NewestK, VarveTable};

/// The rule (module docs).
#[derive(Debug, Default)]
pub(crate) struct NewestFromIndex;

impl OptimizerRule for NewestFromIndex {
    fn name(&self) -> &str {
        "varve_newest_from_index"
    }

    fn rewrite(&self, plan: LogicalPlan, _config: &dyn OptimizerConfig) -> Result<Transformed<LogicalPlan>> {
        plan.transform_down(|node| match &node {
            LogicalPlan::Filter(f) => {
                // `rn = 1`, alone or with other conditions on the window's rows (which the filter
                // still applies above the rewritten window).
                let conjuncts = datafusion::logical_expr::utils::split_conjunction(&f.predicate);
                let Some(column) = conjuncts.into_iter().find_map(first_row_filter) else {
                    return Ok(Transformed::no(node));
                };
                match first_rows(&f.input, &column)? {
                    Some(input) => {
                        let filter = Filter::try_new(f.predicate.clone(), Arc::new(input))?;
                        Ok(Transformed::yes(LogicalPlan::Filter(filter)))
                    }
                    None => Ok(Transformed::no(node)),
                }
            }
            LogicalPlan::Aggregate(a) => match newest_aggregate(a)? {
                Some(plan) => Ok(Transformed::yes(plan)),
                None => Ok(Transformed::no(node)),
            },
            LogicalPlan::Sort(s) => match newest_k(s)? {
                Some(plan) => Ok(Transformed::yes(plan)),
                None => match crate::query::rules::newest_buckets::mark(s, varve_table)? {
                    Some(plan) => Ok(Transformed::yes(plan)),
                    None => Ok(Transformed::no(node)),
                },
            },
            _ => Ok(Transformed::no(node)),
        })
    }
}

/// The column `predicate` keeps only the first row of: `c = 1`, `1 = c`, `c <= 1`, `c < 2`.
fn first_row_filter(predicate: &Expr) -> Option<String> {
    let Expr::BinaryExpr(BinaryExpr { left, op, right }) = predicate else {
        return None;
    };
    let number = |e: &Expr| match e {
        Expr::Literal(v, _) => match v {
            ScalarValue::UInt64(Some(n)) => Some(*n as i128),
            ScalarValue::Int64(Some(n)) => Some(*n as i128),
            ScalarValue::Int32(Some(n)) => Some(*n as i128),
            _ => None,
        },
        _ => None,
    };
    let column = |e: &Expr| match e {
        Expr::Column(c) => Some(c.name.clone()),
        _ => None,
    };
    match (column(left), op, number(right)) {
        (Some(c), Operator::Eq, Some(1)) | (Some(c), Operator::LtEq, Some(1)) | (Some(c), Operator::Lt, Some(2)) => {
            return Some(c)
        }
        _ => {}
    }
    match (number(left), op, column(right)) {
        (Some(1), Operator::Eq, Some(c)) | (Some(1), Operator::GtEq, Some(c)) | (Some(2), Operator::Gt, Some(c)) => {
            Some(c)
        }
        _ => None,
    }
}

/// `plan` with the window that computes `column` as the newest row per series replaced by the
/// index's rows, looking through projections that pass `column` on; `None` when the shape does
/// not hold.
fn first_rows(plan: &LogicalPlan, column: &str) -> Result<Option<LogicalPlan>> {
    match plan {
        LogicalPlan::Projection(p) => {
            // The projection's expression that makes `column`: a column of its input, maybe renamed.
            let Some(i) = p.schema.fields().iter().position(|f| f.name() == column) else {
                return Ok(None);
            };
            let inner = match p.expr[i].clone().unalias() {
                Expr::Column(c) => c.name,
                _ => return Ok(None),
            };
            match first_rows(&p.input, &inner)? {
                Some(input) => Ok(Some(LogicalPlan::Projection(Projection::try_new(
                    p.expr.clone(),
                    Arc::new(input),
                )?))),
                None => Ok(None),
            }
        }
        LogicalPlan::SubqueryAlias(s) => match first_rows(&s.input, column)? {
            Some(input) => Ok(Some(plan.with_new_exprs(plan.expressions(), vec![input])?)),
            None => Ok(None),
        },
        LogicalPlan::Window(w) => {
            let [expr] = w.window_expr.as_slice() else {
                return Ok(None);
            };
            let output = w.schema.field(w.schema.fields().len() - 1);
            if output.name() != column {
                return Ok(None);
            }
            let Expr::WindowFunction(f) = expr.clone().unalias() else {
                return Ok(None);
            };
            let WindowFunction { fun, params } = f.as_ref();
            let WindowFunctionDefinition::WindowUDF(udf) = fun else {
                return Ok(None);
            };
            if udf.name() != "row_number" || !params.args.is_empty() || params.filter.is_some() || params.distinct {
                return Ok(None);
            }
            let fits = |table: &VarveTable| {
                let contract = table.table.contract().ok()?;
                let time = contract.time_column.as_deref()?;
                let newest_first = match params.order_by.as_slice() {
                    [s] => !s.asc && column_name(&s.expr) == Some(time),
                    _ => false,
                };
                let partition: Option<BTreeSet<&str>> = params.partition_by.iter().map(column_name).collect();
                let keys: BTreeSet<&str> = contract.series_key.iter().map(String::as_str).collect();
                Some(newest_first && partition == Some(keys))
            };
            let Some(input) = index_input(&w.input, fits)? else {
                // Other filters: the same window, over the index's rows that pass them and the
                // data files' rows of the other series.
                return match filtered_input(&w.input, fits)? {
                    Some(input) => Ok(Some(LogicalPlan::Window(datafusion::logical_expr::Window::try_new(
                        w.window_expr.clone(),
                        Arc::new(input),
                    )?))),
                    None => Ok(None),
                };
            };
            // The index's rows, each the first of its series: `rn` is 1.
            let mut exprs: Vec<Expr> = input.schema().columns().into_iter().map(Expr::Column).collect();
            exprs.push(Expr::Literal(ScalarValue::UInt64(Some(1)), None).alias(output.name()));
            let projection = Projection::try_new(exprs, Arc::new(input))?;
            // Only when the plan above sees exactly the columns the window gave it.
            if projection.schema.as_ref() != w.schema.as_ref() {
                tracing::debug!("newest-row rewrite skipped: the schemas differ");
                return Ok(None);
            }
            Ok(Some(LogicalPlan::Projection(projection)))
        }
        _ => Ok(None),
    }
}

/// `GROUP BY <series key>` with only newest-row aggregates over a table with an index: the same
/// aggregate over the index's rows.
fn newest_aggregate(a: &Aggregate) -> Result<Option<LogicalPlan>> {
    if a.aggr_expr.is_empty() {
        return Ok(None);
    }
    let fits = |table: &VarveTable| {
        let contract = table.table.contract().ok()?;
        let time = contract.time_column.as_deref()?;
        let groups: Option<BTreeSet<&str>> = a.group_expr.iter().map(column_name).collect();
        let keys: BTreeSet<&str> = contract.series_key.iter().map(String::as_str).collect();
        let newest = a.aggr_expr.iter().all(|e| is_newest_aggregate(e, time));
        Some(newest && groups == Some(keys))
    };
    let input = match index_input(&a.input, fits)? {
        Some(input) => input,
        None => match filtered_input(&a.input, fits)? {
            Some(input) => input,
            None => return Ok(None),
        },
    };
    let aggregate = Aggregate::try_new(Arc::new(input), a.group_expr.clone(), a.aggr_expr.clone())?;
    if aggregate.schema.as_ref() != a.schema.as_ref() {
        return Ok(None);
    }
    Ok(Some(LogicalPlan::Aggregate(aggregate)))
}

/// `max(time)`, `last_value(x ORDER BY time)` or `first_value(x ORDER BY time DESC)`, without
/// DISTINCT or FILTER: an aggregate whose value for a series is its newest row's.
fn is_newest_aggregate(e: &Expr, time: &str) -> bool {
    let Expr::AggregateFunction(AggregateFunction { func, params }) = e.clone().unalias() else {
        return false;
    };
    // IGNORE NULLS may reach past the newest row.
    let respects_nulls = matches!(params.null_treatment, None | Some(NullTreatment::RespectNulls));
    if params.distinct || params.filter.is_some() || !respects_nulls {
        return false;
    }
    let by_time = |asc: bool| match params.order_by.as_slice() {
        [s] => s.asc == asc && column_name(&s.expr) == Some(time),
        _ => false,
    };
    match func.name() {
        "max" => params.order_by.is_empty() && matches!(params.args.as_slice(), [c] if column_name(c) == Some(time)),
        "last_value" => by_time(true),
        "first_value" => by_time(false),
        _ => false,
    }
}

/// The most rows a top-k is narrowed for (the bound names each of their series).
const MAX_NEWEST_K: usize = 10_000;

/// `Sort` with a fetch of at most [`MAX_NEWEST_K`] rows, by the time descending then series-key
/// columns, over a Varve table with an index: the same plan, its scan marked with [`NewestK`].
fn newest_k(s: &datafusion::logical_expr::Sort) -> Result<Option<LogicalPlan>> {
    let Some(k) = s.fetch.filter(|k| (1..=MAX_NEWEST_K).contains(k)) else {
        return Ok(None);
    };
    let mut order = Vec::with_capacity(s.expr.len());
    for e in &s.expr {
        match column_name(&e.expr) {
            Some(c) => order.push((c.to_string(), e.asc, e.nulls_first)),
            None => return Ok(None),
        }
    }
    match mark_newest_k(&s.input, order, k)? {
        Some(input) => Ok(Some(LogicalPlan::Sort(datafusion::logical_expr::Sort {
            expr: s.expr.clone(),
            input: Arc::new(input),
            fetch: s.fetch,
        }))),
        None => Ok(None),
    }
}

/// `plan` with its scan marked for a top-k by `order` (columns of `plan`'s output), looking
/// through projections that pass the columns on (maybe renamed) and filters on series-key
/// columns.
fn mark_newest_k(plan: &LogicalPlan, order: Vec<(String, bool, bool)>, k: usize) -> Result<Option<LogicalPlan>> {
    match plan {
        LogicalPlan::Projection(p) => {
            let mut inner = Vec::with_capacity(order.len());
            for (name, asc, nulls_first) in order {
                let Some(i) = p.schema.fields().iter().position(|f| f.name() == &name) else {
                    return Ok(None);
                };
                match p.expr[i].clone().unalias() {
                    Expr::Column(c) => inner.push((c.name, asc, nulls_first)),
                    _ => return Ok(None),
                }
            }
            match mark_newest_k(&p.input, inner, k)? {
                Some(input) => Ok(Some(LogicalPlan::Projection(Projection::try_new(
                    p.expr.clone(),
                    Arc::new(input),
                )?))),
                None => Ok(None),
            }
        }
        LogicalPlan::SubqueryAlias(_) => match mark_newest_k(plan.inputs()[0], order, k)? {
            Some(input) => Ok(Some(plan.with_new_exprs(plan.expressions(), vec![input])?)),
            None => Ok(None),
        },
        LogicalPlan::Filter(_) | LogicalPlan::TableScan(_) => {
            let Some(scan) = scan_of(plan) else {
                return Ok(None);
            };
            let Some(table) = varve_table(scan) else {
                return Ok(None);
            };
            if table.newest_k.is_some() || table.newest_filtered || table.min_sequence.is_some() {
                return Ok(None);
            }
            let Ok(contract) = table.table.contract() else {
                return Ok(None);
            };
            let Some(time) = contract.time_column.as_deref() else {
                return Ok(None);
            };
            let Some(((first, asc, _), rest)) = order.split_first() else {
                return Ok(None);
            };
            let then_by_keys = rest.iter().all(|(c, _, _)| contract.series_key.contains(c));
            if first != time || *asc || !then_by_keys || contract.series_key.is_empty() {
                return Ok(None);
            }
            // The same checks as an index read: a required time, filters on whole series only.
            if index_input(plan, |_| Some(true))?.is_none() {
                return Ok(None);
            }
            let mut marked = table;
            marked.newest_k = Some(NewestK {
                k,
                then_by: rest.to_vec(),
            });
            Ok(Some(rescan(plan, scan, marked)?))
        }
        _ => Ok(None),
    }
}

/// `plan` (a scan of a Varve table with an index, maybe under a filter) marked
/// [`VarveTable::newest_filtered`], when `fits` says the shape above holds and some filter names
/// other columns than the series key (else [`index_input`] applies). Every filter must be
/// deterministic and pushed into the scan, so that the scan sees all of them.
fn filtered_input(plan: &LogicalPlan, fits: impl Fn(&VarveTable) -> Option<bool>) -> Result<Option<LogicalPlan>> {
    // The columns the filter read are dropped above it.
    if let LogicalPlan::Projection(p) = plan {
        if !p.expr.iter().all(|e| matches!(e, Expr::Column(_))) {
            return Ok(None);
        }
        return match filtered_input(&p.input, fits)? {
            Some(input) => Ok(Some(LogicalPlan::Projection(Projection::try_new(
                p.expr.clone(),
                Arc::new(input),
            )?))),
            None => Ok(None),
        };
    }
    let Some(scan) = scan_of(plan) else {
        return Ok(None);
    };
    if scan.fetch.is_some() || scan.filters.is_empty() {
        return Ok(None);
    }
    let Some(table) = varve_table(scan) else {
        return Ok(None);
    };
    let marked_already = table.last_values.is_some() || table.newest_k.is_some() || table.newest_filtered;
    if marked_already || table.min_sequence.is_some() || fits(&table) != Some(true) {
        return Ok(None);
    }
    let Ok(contract) = table.table.contract() else {
        return Ok(None);
    };
    let time_required = time_is_required(&table, &contract);
    let snapshot = table.snapshot_id.and_then(|id| table.table.metadata.snapshot_by_id(id));
    let indexed = snapshot.is_some_and(|s| crate::index::last_value::IndexRef::of(s).is_some());
    if !time_required || !indexed || contract.series_key.is_empty() {
        return Ok(None);
    }
    if scan.filters.iter().any(|e| e.is_volatile()) {
        return Ok(None);
    }
    if let LogicalPlan::Filter(f) = plan {
        let pushed = datafusion::logical_expr::utils::split_conjunction(&f.predicate)
            .into_iter()
            .all(|e| scan.filters.contains(e));
        if !pushed {
            return Ok(None);
        }
    }
    // The scan's rows of the other series are filtered by their key: it must read the key.
    let keys_read = contract.series_key.iter().all(|k| {
        let Ok(i) = scan.source.schema().index_of(k) else {
            return false;
        };
        scan.projection.as_ref().is_none_or(|p| p.contains(&i))
    });
    if !keys_read {
        return Ok(None);
    }
    let mut marked = table;
    marked.newest_filtered = true;
    Ok(Some(rescan(plan, scan, marked)?))
}

/// Whether `plan` reads a Varve table marked [`VarveTable::newest_k`] (the scan the index narrows
/// to the newest rows; the planner then keeps its files whole, `query::context`).
///
/// Errors: none in practice (the walk itself cannot fail).
pub(crate) fn narrowed_by_index(plan: &LogicalPlan) -> Result<bool> {
    plan.exists(|p| {
        Ok(match p {
            LogicalPlan::TableScan(scan) => source_as_provider(&scan.source).is_ok_and(|p| {
                (p.as_ref() as &dyn Any)
                    .downcast_ref::<VarveTable>()
                    .is_some_and(|t| t.newest_k.is_some())
            }),
            _ => false,
        })
    })
}

/// The Varve table `scan` reads, if it reads one.
fn varve_table(scan: &TableScan) -> Option<VarveTable> {
    let provider = source_as_provider(&scan.source).ok()?;
    (provider.as_ref() as &dyn Any).downcast_ref::<VarveTable>().cloned()
}

/// `plan` (`scan`, or one filter over it) reading `table` instead, the filter kept.
fn rescan(plan: &LogicalPlan, scan: &TableScan, table: VarveTable) -> Result<LogicalPlan> {
    let new_scan = LogicalPlan::TableScan(TableScan {
        source: provider_as_source(Arc::new(table)),
        ..scan.clone()
    });
    Ok(match plan {
        LogicalPlan::Filter(f) => LogicalPlan::Filter(Filter::try_new(f.predicate.clone(), Arc::new(new_scan))?),
        _ => new_scan,
    })
}

/// The scan of `plan`: itself, or under one filter.
fn scan_of(plan: &LogicalPlan) -> Option<&TableScan> {
    match plan {
        LogicalPlan::TableScan(s) => Some(s),
        LogicalPlan::Filter(f) => match f.input.as_ref() {
            LogicalPlan::TableScan(s) => Some(s),
            _ => None,
        },
        _ => None,
    }
}

/// Whether the table's time column is required. A NULL time would sort before (DESC) or after
/// (ASC) every other and is never in the index: only such tables use it.
fn time_is_required(table: &VarveTable, contract: &crate::format::TableContract) -> bool {
    contract
        .time_column
        .as_deref()
        .and_then(|t| table.table.metadata.current_schema().field_by_name(t))
        .is_some_and(|f| f.required)
}

fn column_name(e: &Expr) -> Option<&str> {
    match e {
        Expr::Column(c) => Some(c.name.as_str()),
        _ => None,
    }
}

/// `plan` (a scan of a Varve table, maybe under a filter, maybe under a projection of columns)
/// reading the table's last-value index instead, when `fits` says the shape above holds for the table and every filter names only
/// series-key columns; `None` otherwise (or when the snapshot has no index).
fn index_input(plan: &LogicalPlan, fits: impl Fn(&VarveTable) -> Option<bool>) -> Result<Option<LogicalPlan>> {
    // The columns a filter read (a series-constant one) may be dropped above it.
    if let LogicalPlan::Projection(p) = plan {
        if !p.expr.iter().all(|e| matches!(e, Expr::Column(_))) {
            return Ok(None);
        }
        return match index_input(&p.input, fits)? {
            Some(input) => Ok(Some(LogicalPlan::Projection(Projection::try_new(
                p.expr.clone(),
                Arc::new(input),
            )?))),
            None => Ok(None),
        };
    }
    let Some(scan) = scan_of(plan) else {
        return Ok(None);
    };
    let filter = match plan {
        LogicalPlan::Filter(f) => Some(f),
        _ => None,
    };
    if scan.fetch.is_some() {
        return Ok(None);
    }
    let Some(table) = varve_table(scan) else {
        return Ok(None);
    };
    if table.last_values.is_some() || fits(&table) != Some(true) {
        return Ok(None);
    }
    let Ok(contract) = table.table.contract() else {
        return Ok(None);
    };
    if !time_is_required(&table, &contract) {
        return Ok(None);
    }
    // A filter that selects whole series: only series-key and series-constant columns, and no
    // volatile function (`random() < 0.1` names no column but samples rows).
    let whole = crate::query::scan::newest_scan::series_columns(&table, &contract);
    let on_keys = |e: &Expr| !e.is_volatile() && e.column_refs().iter().all(|c| whole.contains(&c.name));
    if !scan.filters.iter().all(on_keys) || !filter.is_none_or(|f| on_keys(&f.predicate)) {
        return Ok(None);
    }
    let Ok(indexed) = table.newest_rows() else {
        return Ok(None);
    };
    if indexed.last_values.is_none() {
        // No snapshot: nothing to read either way.
        return Ok(None);
    }
    Ok(Some(rescan(plan, scan, indexed)?))
}
