//! Routing: an aggregate query on a table answered from one of its rollups.
//!
//! An `Aggregate` whose input reads one table (through filters and aliases only) is answered
//! from a rollup of that table when
//! - every group expression reads only the rollup's group columns, or is a
//!   `time_bucket(width, <time> [, ...])` whose buckets are unions of the rollup's
//!   ([`Bucketer::refines`]): daily from 1-minute, per fleet from per truck and fleet;
//! - every filter reads only group columns, or compares the time column with `>=` or `<` to a
//!   constant on a rollup bucket boundary (so that whole buckets are in or out);
//! - every aggregate is one the rollup keeps a state of, without DISTINCT, FILTER or ORDER BY;
//! - the rollup has a watermark and every source snapshot after it is an append (a delete, a
//!   dedup replacement, a compaction or a retention drop since then waits for a refresh), and the
//!   source has no `varve.retention` (its old rows are hidden from queries, the rollup's are not).
//!
//! The table scan is then replaced by the rollup's rows (the bucket standing in for the time
//! column) unioned with the rollup's states of the source rows added after the watermark
//! (`<table>@since=<sequence number>`), and the aggregates by merges of the states
//! ([`crate::rollup::definition::Aggregate`]), cast to the types the query had. The answer is the
//! raw table's: exactly for counts, min, max, first and last; up to float rounding for sums,
//! averages and time-weighted averages of floats; percentiles are t-digest estimates either way,
//! from the merged sketches of the buckets rather than one sketch of the rows. `SET varve.rollup_routing = off` turns routing off; `EXPLAIN` says which
//! rollup answered, or why none could.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{Column, DFSchema, TableReference};
use datafusion::datasource::source_as_provider;
use datafusion::execution::session_state::SessionState;
use datafusion::logical_expr::expr::AggregateFunction;
use datafusion::logical_expr::utils::split_conjunction;
use datafusion::logical_expr::{
    cast, lit, Aggregate, BinaryExpr, Expr, Filter, LogicalPlan, LogicalPlanBuilder, Operator, SubqueryAlias,
};
use datafusion::scalar::ScalarValue;
use iceberg::spec::Operation;

use crate::catalog::{self, TableIdent};
use crate::error::{Error, Result};
use crate::format::properties::{PROP_ROLLUP_WATERMARK, PROP_ROLLUP_WATERMARK_SEQUENCE};
use crate::query::functions::time_bucket::Bucketer;
use crate::query::references::SINCE_SUFFIX;
use crate::query::scan::table::VarveTable;
use crate::query::session::Session;
use crate::rollup::definition::{quote, AggKind, RollupDef};
use crate::rollup::refresh::{bucketer, bucketer_of_call, constant, table_at};

/// The name of the session setting that turns routing on and off.
pub(crate) const SETTING: &str = "varve.rollup_routing";

/// Whether `SET varve.rollup_routing` leaves rollup routing on (`on`/`true`, the default, or
/// `off`/`false`).
///
/// Errors: [`crate::ErrorKind::InvalidInput`] for another value.
pub(crate) fn rollup_routing(session: &Session) -> Result<bool> {
    // Read in place: every planned query asks, and cloning the session's state costs more than
    // the answer.
    let state = session.context().state_ref();
    let state = state.read();
    let options = state.config().options();
    let Some(v) = options.extensions.get::<crate::query::context::VarveOptions>() else {
        return Ok(true);
    };
    match v.rollup_routing.to_ascii_lowercase().as_str() {
        "on" | "true" | "1" => Ok(true),
        "off" | "false" | "0" => Ok(false),
        other => Err(Error::invalid(format!("{} = '{other}': expected on or off", SETTING))),
    }
}

/// A rollup that may answer queries on its source.
struct Candidate {
    def: RollupDef,
    bucketer: Bucketer,
    /// The rollup's rows and the states of the newer source rows, columns named as the source's
    /// (group columns, the time column holding bucket starts) and `__varve_<state>`.
    input: LogicalPlan,
    /// What EXPLAIN says when it answers.
    note: String,
    /// Source snapshots (appends) after the watermark, whose rows are merged in.
    appends: usize,
}

/// The name of a state column in a candidate's input.
fn state_column(name: &str) -> String {
    format!("__varve_{name}")
}

/// The Varve table a scan reads at its current snapshot, if it is one.
fn scanned_table(plan: &LogicalPlan) -> Option<VarveTable> {
    let LogicalPlan::TableScan(scan) = plan else {
        return None;
    };
    let provider = source_as_provider(&scan.source).ok()?;
    let t = provider.as_ref().downcast_ref::<VarveTable>()?;
    // A read of the current snapshot by its id (a rollup's refresh) is the current snapshot too.
    let current = t.is_current || (t.snapshot_id.is_some() && t.snapshot_id == t.table.metadata.current_snapshot_id());
    (current && t.last_values.is_none() && t.min_sequence.is_none()).then(|| t.clone())
}

/// Routes the aggregates of `plan` that a rollup can answer (module docs). Returns the plan and
/// what EXPLAIN should say.
///
/// Errors: storage errors loading a rollup; a rollup whose definition no longer plans is skipped
/// with a note, not an error.
pub(crate) async fn route(session: &Session, plan: LogicalPlan) -> Result<(LogicalPlan, Vec<String>)> {
    // Only tables an aggregate reads directly (the shape routing takes): other statements on a
    // table with rollups load none of them.
    let mut sources: HashMap<TableIdent, VarveTable> = HashMap::new();
    plan.apply(|p| {
        if let LogicalPlan::Aggregate(agg) = p {
            if let Some(t) = chain(&agg.input).and_then(|(_, scan)| scanned_table(scan)) {
                if !super::listed(t.table.metadata.properties()).is_empty() {
                    sources.insert(t.table.ident.clone(), t);
                }
            }
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    if sources.is_empty() {
        return Ok((plan, vec![]));
    }
    let mut notes = Vec::new();
    let mut candidates: HashMap<TableIdent, Vec<Candidate>> = HashMap::new();
    for (ident, source) in &sources {
        let found = candidates_of(session, source, &mut notes).await?;
        candidates.insert(ident.clone(), found);
    }
    let state = session.state();
    let mut used: Vec<String> = Vec::new();
    let mut refusals: Vec<String> = Vec::new();
    let plan = plan
        .transform_up(|node| {
            let LogicalPlan::Aggregate(agg) = &node else {
                return Ok(Transformed::no(node));
            };
            let Some((wrappers, scan)) = chain(&agg.input) else {
                return Ok(Transformed::no(node));
            };
            let Some(table) = scanned_table(scan) else {
                return Ok(Transformed::no(node));
            };
            let Some(list) = candidates.get(&table.table.ident) else {
                return Ok(Transformed::no(node));
            };
            let LogicalPlan::TableScan(ts) = scan else {
                return Ok(Transformed::no(node));
            };
            for c in list {
                match answer(&state, agg, &wrappers, &ts.table_name, c) {
                    Ok(plan) => {
                        used.push(c.note.clone());
                        return Ok(Transformed::yes(plan));
                    }
                    Err(why) => refusals.push(format!("rollup {} not used: {why}", c.def.rollup)),
                }
            }
            Ok(Transformed::no(node))
        })?
        .data;
    if used.is_empty() {
        notes.extend(refusals);
    }
    notes.extend(used);
    Ok((plan, notes))
}

/// The rollups of `source` that hold its rows up to a watermark with only appends after it,
/// coarsest first; the others are noted with the reason.
async fn candidates_of(session: &Session, source: &VarveTable, notes: &mut Vec<String>) -> Result<Vec<Candidate>> {
    let md = &source.table.metadata;
    let ident = &source.table.ident;
    if md.properties().contains_key(crate::format::properties::PROP_RETENTION) {
        notes.push(format!(
            "rollups of {ident} not used: the table has varve.retention (queries hide its old rows, the rollups \
             keep them)"
        ));
        return Ok(vec![]);
    }
    let mut out = Vec::new();
    for r in super::listed(md.properties()) {
        let t = match catalog::load_recent(session.storage(), session.cache(), &r).await {
            Ok(t) => t,
            Err(e) if e.kind() == crate::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        let props = t.metadata.properties();
        let Ok(Some(def)) = RollupDef::from_properties(&r, props) else {
            continue;
        };
        let watermark = props.get(PROP_ROLLUP_WATERMARK).and_then(|v| v.parse::<i64>().ok());
        let sequence = props
            .get(PROP_ROLLUP_WATERMARK_SEQUENCE)
            .and_then(|v| v.parse::<i64>().ok());
        let (Some(watermark), Some(sequence)) = (watermark, sequence) else {
            notes.push(format!(
                "rollup {r} not used: it was never refreshed (REFRESH ROLLUP {r})"
            ));
            continue;
        };
        // Only appends since the watermark: their rows are the files with a higher sequence number.
        let mut appends = 0usize;
        let mut at = md.current_snapshot();
        let behind = loop {
            match at {
                None => break Some("its watermark snapshot is no longer in the table's history".to_string()),
                Some(s) if s.snapshot_id() == watermark => break None,
                Some(s) if s.summary().operation != Operation::Append => {
                    break Some(format!(
                        "the table had a {} since its watermark",
                        s.summary().operation.as_str()
                    ))
                }
                Some(s) => {
                    appends += 1;
                    at = s.parent_snapshot_id().and_then(|p| md.snapshot_by_id(p));
                }
            }
        };
        if let Some(why) = behind {
            notes.push(format!(
                "rollup {r} not used: {why} (REFRESH ROLLUP {r} or varve maintain brings it up to date)"
            ));
            continue;
        }
        let bucketer = match bucketer(session, &def).await {
            Ok(b) => b,
            Err(e) => {
                notes.push(format!("rollup {r} not used: {}", e.message()));
                continue;
            }
        };
        let Some(rollup_snapshot) = t.metadata.current_snapshot_id() else {
            continue;
        };
        let mut items: Vec<String> = def.groups.iter().map(|g| quote(g)).collect();
        items.push(format!("{} AS {}", quote(&def.bucket), quote(&def.time)));
        for n in def.state_names() {
            items.push(format!("{} AS {}", quote(&n), quote(&state_column(&n))));
        }
        let items = items.join(", ");
        let mut sql = format!("SELECT {items} FROM {}", table_at(&r, Some(rollup_snapshot)));
        if appends > 0 {
            let newer = format!(
                "{}.{}",
                quote(&ident.namespace),
                quote(&format!("{}{SINCE_SUFFIX}{sequence}", ident.name))
            );
            sql.push_str(&format!(
                " UNION ALL SELECT {items} FROM ({})",
                def.state_sql(&newer, None)
            ));
        }
        let input = match session.internal_plan(&sql).await {
            Ok(p) => p,
            Err(e) => {
                notes.push(format!("rollup {r} not used: {}", e.message()));
                continue;
            }
        };
        let note = match appends {
            0 => format!("the aggregate on {ident} was answered from rollup {r} (up to date at snapshot {watermark})"),
            n => format!(
                "the aggregate on {ident} was answered from rollup {r} (watermark snapshot {watermark}) and the rows \
                 of the {n} append(s) after it"
            ),
        };
        out.push(Candidate {
            def,
            bucketer,
            input,
            note,
            appends,
        });
    }
    out.sort_by_key(|c| std::cmp::Reverse(c.bucketer.nominal_nanos()));
    Ok(out)
}

/// The filters and aliases between an aggregate and the one table scan it reads, outermost first.
fn chain(input: &LogicalPlan) -> Option<(Vec<&LogicalPlan>, &LogicalPlan)> {
    let mut wrappers = Vec::new();
    let mut at = input;
    loop {
        match at {
            LogicalPlan::Filter(f) => {
                wrappers.push(at);
                at = &f.input;
            }
            LogicalPlan::SubqueryAlias(a) => {
                wrappers.push(at);
                at = &a.input;
            }
            LogicalPlan::TableScan(s) if s.filters.is_empty() && s.fetch.is_none() && s.projection.is_none() => {
                return Some((wrappers, at))
            }
            _ => return None,
        }
    }
}

/// A time constant as µs since the epoch.
fn micros(v: &ScalarValue) -> Option<i64> {
    match v
        .cast_to(&DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())))
        .ok()?
    {
        ScalarValue::TimestampMicrosecond(Some(us), _) => Some(us),
        _ => None,
    }
}

/// Whether a filter conjunct can be evaluated on the rollup's rows with the same result.
fn filter_ok(e: &Expr, def: &RollupDef, b: &Bucketer) -> std::result::Result<(), String> {
    // A combination of conditions that each hold alike on a bucket's rows and on its start holds
    // alike too.
    match e {
        Expr::BinaryExpr(BinaryExpr {
            left,
            op: Operator::And | Operator::Or,
            right,
        }) => return filter_ok(left, def, b).and_then(|()| filter_ok(right, def, b)),
        Expr::Not(inner) => return filter_ok(inner, def, b),
        _ => {}
    }
    if e.is_volatile() {
        return Err(format!("the filter {e} is volatile"));
    }
    let columns: Vec<String> = e.column_refs().iter().map(|c| c.name.clone()).collect();
    if columns.iter().all(|c| def.groups.contains(c)) {
        return Ok(());
    }
    if let Expr::BinaryExpr(BinaryExpr { left, op, right }) = e {
        let is_time = |x: &Expr| matches!(x, Expr::Column(c) if c.name == def.time);
        let bound = match (is_time(left), is_time(right), op) {
            (true, false, Operator::GtEq | Operator::Lt) => constant(right),
            (false, true, Operator::LtEq | Operator::Gt) => constant(left),
            _ => None,
        };
        if let Some(us) = bound.as_ref().and_then(micros) {
            let ns = us as i128 * 1000;
            if b.bucket(ns) == Some(ns) {
                return Ok(());
            }
            return Err(format!(
                "the time bound in {e} is not on a bucket boundary of the rollup"
            ));
        }
    }
    Err(format!(
        "the filter {e} reads columns the rollup does not group by (it can filter on {} and compare {} with >= or < \
         to bucket boundaries)",
        if def.groups.is_empty() {
            "none".to_string()
        } else {
            def.groups.join(", ")
        },
        def.time
    ))
}

/// The bucketer of `date_trunc(unit, ts)`: UTC buckets of one unit (weeks start on Monday, as
/// `time_bucket`'s default origin has them).
fn date_trunc_bucketer(unit: &Expr) -> Option<Bucketer> {
    let unit = match constant(unit)? {
        ScalarValue::Utf8(Some(u)) | ScalarValue::Utf8View(Some(u)) | ScalarValue::LargeUtf8(Some(u)) => u,
        _ => return None,
    };
    let (months, days, nanos): (i32, i32, i64) = match unit.to_ascii_lowercase().as_str() {
        "second" => (0, 0, 1_000_000_000),
        "minute" => (0, 0, 60_000_000_000),
        "hour" => (0, 0, 3_600_000_000_000),
        "day" => (0, 1, 0),
        "week" => (0, 7, 0),
        "month" => (1, 0, 0),
        "quarter" => (3, 0, 0),
        "year" => (12, 0, 0),
        _ => return None,
    };
    let width =
        ScalarValue::IntervalMonthDayNano(Some(arrow::datatypes::IntervalMonthDayNano::new(months, days, nanos)));
    bucketer_of_call(&[Expr::Literal(width, None), Expr::Literal(ScalarValue::Null, None)])
}

/// Whether a group expression can be computed from the rollup's rows.
fn group_ok(e: &Expr, def: &RollupDef, b: &Bucketer) -> std::result::Result<(), String> {
    let columns: Vec<String> = e.column_refs().iter().map(|c| c.name.clone()).collect();
    if !columns.contains(&def.time) {
        if let Some(c) = columns.iter().find(|c| !def.groups.contains(c)) {
            return Err(format!("the query groups by {c}, which the rollup does not"));
        }
        return match e.is_volatile() {
            true => Err(format!("the group expression {e} is volatile")),
            false => Ok(()),
        };
    }
    let inner = match e {
        Expr::Alias(a) => a.expr.as_ref(),
        other => other,
    };
    if let Expr::ScalarFunction(f) = inner {
        let on_time = f
            .args
            .get(1)
            .is_some_and(|a| matches!(a, Expr::Column(c) if c.name == def.time));
        let others_constant = f.args.iter().enumerate().all(|(i, a)| i == 1 || constant(a).is_some());
        // `date_trunc(unit, ts)` and `date_bin(width, ts [, origin])` are buckets too.
        let query_buckets = match f.func.name() {
            "time_bucket" if on_time && others_constant => Some(bucketer_of_call(&f.args)),
            "date_trunc" if on_time && others_constant => Some(date_trunc_bucketer(&f.args[0])),
            "date_bin" if on_time && others_constant => {
                let mut args = f.args.clone();
                if args.len() == 2 {
                    // date_bin's default origin: the Unix epoch, an instant.
                    args.push(Expr::Literal(
                        ScalarValue::TimestampMicrosecond(Some(0), Some("UTC".into())),
                        None,
                    ));
                }
                Some(bucketer_of_call(&args))
            }
            _ => None,
        };
        if let Some(query_buckets) = query_buckets {
            return match query_buckets {
                Some(q) if b.refines(&q) => Ok(()),
                _ => Err(format!(
                    "the query's buckets ({e}) are not unions of the rollup's ({})",
                    def.bucket_sql(&def.time)
                )),
            };
        }
    }
    Err(format!(
        "the query groups by {e}; it can group by time_bucket(..., {}) with buckets made of the rollup's",
        def.time
    ))
}

/// The merge of one query aggregate from the rollup's states: aggregate expressions (SQL over the
/// state columns) and how to finish them.
enum Finish {
    /// The first component as it is.
    Plain,
    /// The first component, 0 when NULL (counts over no rows).
    ZeroWhenNull,
    /// The first component divided by the second (an average).
    Divide,
}

fn merge_of(
    af: &AggregateFunction,
    def: &RollupDef,
    appends: usize,
) -> std::result::Result<(Vec<String>, Finish), String> {
    let name = af.func.name().to_ascii_lowercase();
    let p = &af.params;
    let shown = format!("{name}(...)");
    // `approx_percentile_cont(p) WITHIN GROUP (ORDER BY c)` orders by its first argument.
    let within_group = name == "approx_percentile_cont"
        && p.order_by.len() == 1
        && p.order_by[0].asc
        && p.args.first() == Some(&p.order_by[0].expr);
    if p.distinct || p.filter.is_some() || !(p.order_by.is_empty() || within_group) {
        return Err(format!("{shown} has DISTINCT, FILTER or ORDER BY"));
    }
    let Some(kind) = AggKind::of(&name) else {
        return Err(format!("the rollup keeps no state {name} can be computed from"));
    };
    let column = |e: &Expr| match e {
        Expr::Column(c) => Some(c.name.clone()),
        _ => None,
    };
    let mut quantile: Option<f64> = None;
    let mut method: Option<String> = None;
    let wanted: Option<String> = match (kind, p.args.as_slice()) {
        (AggKind::Percentile, [a]) if name == "approx_median" => {
            quantile = Some(0.5);
            Some(column(a).ok_or_else(|| format!("{name} of an expression"))?)
        }
        (AggKind::Percentile, [a, q]) if name == "approx_percentile_cont" => {
            quantile = constant(q)
                .and_then(|v| v.cast_to(&DataType::Float64).ok())
                .and_then(|v| match v {
                    ScalarValue::Float64(Some(q)) => Some(q),
                    _ => None,
                });
            if quantile.is_none() {
                return Err(format!("{name} with a percentile that is not a constant"));
            }
            Some(column(a).ok_or_else(|| format!("{name} of an expression"))?)
        }
        (AggKind::Twa, [a, t, m]) if column(t).as_deref() == Some(def.time.as_str()) => {
            method = match constant(m) {
                Some(ScalarValue::Utf8(Some(m))) if m.eq_ignore_ascii_case("linear") => Some("linear".into()),
                Some(ScalarValue::Utf8(Some(m))) if m.eq_ignore_ascii_case("step") => None,
                _ => return Err("twa with a method that is not 'step' or 'linear'".into()),
            };
            Some(column(a).ok_or_else(|| format!("{name} of an expression"))?)
        }
        (AggKind::Count, []) => None,
        (AggKind::Count, [a]) if constant(a).is_some_and(|v| !v.is_null()) => None,
        (k, [a]) if !k.takes_time() => Some(column(a).ok_or_else(|| format!("{name} of an expression"))?),
        (k, [a, t]) if k.takes_time() && column(t).as_deref() == Some(def.time.as_str()) => {
            Some(column(a).ok_or_else(|| format!("{name} of an expression"))?)
        }
        _ => return Err(format!("the rollup keeps no state for this {name}")),
    };
    if kind == AggKind::Twa && appends > 0 {
        return Err(
            "twa over buckets and rows appended after the watermark would overlap in time; it is answered from the \
             rollup once refreshed"
                .into(),
        );
    }
    // A count of a column's values is also kept by an average of it.
    if kind == AggKind::Count
        && wanted.is_some()
        && !def.aggregates.iter().any(|a| a.kind == kind && a.column == wanted)
    {
        if let Some(avg) = def
            .aggregates
            .iter()
            .find(|a| a.kind == AggKind::Avg && a.column == wanted)
        {
            let col = quote(&state_column(&format!("{}__count", avg.name)));
            return Ok((vec![format!("sum({col})")], Finish::ZeroWhenNull));
        }
    }
    let state = def
        .aggregates
        .iter()
        .find(|a| a.kind == kind && a.column == wanted && (kind != AggKind::Twa || a.param == method))
        .ok_or_else(|| format!("it keeps no {}({})", kind.name(), wanted.as_deref().unwrap_or("*")))?;
    let col = |n: &str| quote(&state_column(n));
    let n = &state.name;
    Ok(match kind {
        AggKind::Count => (vec![format!("sum({})", col(n))], Finish::ZeroWhenNull),
        AggKind::Percentile => (
            vec![format!(
                "{}({}, {})",
                crate::query::functions::states::TDIGEST_QUANTILE,
                col(&format!("{n}__sketch")),
                quantile.unwrap_or(0.5)
            )],
            Finish::Plain,
        ),
        AggKind::Avg => (
            vec![
                format!(
                    "sum(CAST({} AS DOUBLE) * CAST({} AS DOUBLE))",
                    col(n),
                    col(&format!("{n}__count"))
                ),
                format!("sum({})", col(&format!("{n}__count"))),
            ],
            Finish::Divide,
        ),
        _ => (vec![state.merge_sql(&col)], Finish::Plain),
    })
}

/// The plan answering `agg` from candidate `c`, or why it cannot.
fn answer(
    state: &SessionState,
    agg: &Aggregate,
    wrappers: &[&LogicalPlan],
    qualifier: &TableReference,
    c: &Candidate,
) -> std::result::Result<LogicalPlan, String> {
    let df = |e: datafusion::error::DataFusionError| e.to_string();
    if agg.group_expr.iter().any(|e| matches!(e, Expr::GroupingSet(_))) {
        return Err("GROUPING SETS, ROLLUP and CUBE are not routed".into());
    }
    for g in &agg.group_expr {
        group_ok(g, &c.def, &c.bucketer)?;
    }
    for w in wrappers {
        if let LogicalPlan::Filter(f) = w {
            for conjunct in split_conjunction(&f.predicate) {
                filter_ok(conjunct, &c.def, &c.bucketer)?;
            }
        }
    }
    // The merges, checked before anything is built.
    let mut merges = Vec::with_capacity(agg.aggr_expr.len());
    for e in &agg.aggr_expr {
        let inner = match e {
            Expr::Alias(a) => a.expr.as_ref(),
            other => other,
        };
        let Expr::AggregateFunction(af) = inner else {
            return Err(format!("{e} is not a plain aggregate"));
        };
        merges.push(merge_of(af, &c.def, c.appends)?);
    }
    // The new input: the candidate's rows under the scan's name, below the same filters and aliases.
    let mut input =
        LogicalPlan::SubqueryAlias(SubqueryAlias::try_new(Arc::new(c.input.clone()), qualifier.clone()).map_err(df)?);
    for w in wrappers.iter().rev() {
        input = match w {
            LogicalPlan::Filter(f) => {
                LogicalPlan::Filter(Filter::try_new(f.predicate.clone(), Arc::new(input)).map_err(df)?)
            }
            LogicalPlan::SubqueryAlias(a) => {
                LogicalPlan::SubqueryAlias(SubqueryAlias::try_new(Arc::new(input), a.alias.clone()).map_err(df)?)
            }
            _ => return Err("unexpected plan between the aggregate and its table".into()),
        };
    }
    let schema: &DFSchema = input.schema();
    let mut components = Vec::new();
    let mut finals = Vec::new();
    for (i, (sqls, finish)) in merges.iter().enumerate() {
        let mut names = Vec::new();
        for (j, sql) in sqls.iter().enumerate() {
            let name = format!("__varve_m{i}_{j}");
            let e = state.create_logical_expr(sql, schema).map_err(df)?;
            components.push(e.alias(&name));
            names.push(Expr::Column(Column::new_unqualified(name)));
        }
        finals.push(match finish {
            Finish::Plain => names[0].clone(),
            Finish::ZeroWhenNull => datafusion::functions::core::expr_fn::coalesce(vec![names[0].clone(), lit(0i64)]),
            Finish::Divide => cast(names[0].clone(), DataType::Float64) / cast(names[1].clone(), DataType::Float64),
        });
    }
    let aggregated = LogicalPlanBuilder::from(input)
        .aggregate(agg.group_expr.clone(), components)
        .map_err(df)?
        .build()
        .map_err(df)?;
    // The query's own output: same names, qualifiers and types.
    let n_groups = agg.group_expr.len();
    let mut out = Vec::new();
    for (i, (q, field)) in agg.schema.iter().enumerate() {
        let e = if i < n_groups {
            let (nq, nf) = aggregated.schema().qualified_field(i);
            Expr::Column(Column::new(nq.cloned(), nf.name()))
        } else {
            cast(finals[i - n_groups].clone(), field.data_type().clone())
        };
        out.push(e.alias_qualified(q.cloned(), field.name()));
    }
    LogicalPlanBuilder::from(aggregated)
        .project(out)
        .map_err(df)?
        .build()
        .map_err(df)
}
