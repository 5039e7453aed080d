//! What a scan under a newest-row plan (`query::rules::newest`) reads, from the snapshot's last-value
//! index (`index::last_value`):
//!
//! - under `ORDER BY <time> DESC [, <series key columns>] LIMIT k` ([`top_k_bound`]): a bound
//!   that every row of the top k passes, to prune files, row groups and pages by;
//! - under the newest row of each series among the rows a filter keeps ([`split_by_index`]):
//!   for the series whose newest row passes the filter, that row from the index; the other
//!   series' rows from the data files.
//!
//! Both need the snapshot's index; without one (or when it cannot be read) the scan reads the
//! data files as usual.

use std::collections::BTreeSet;

use arrow::array::{Array, AsArray, BooleanArray, RecordBatch};
use arrow::compute::{lexsort_to_indices, SortColumn, SortOptions};
use datafusion::catalog::Session;
use datafusion::common::{Column, DFSchema, Result, ScalarValue};
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::Expr;
use datafusion::prelude::lit;

use crate::error::Error;
use crate::format::field_ids::field_id;
use crate::format::TableContract;
use crate::index::last_value::{self, IndexRef};
use crate::query::scan::table::VarveTable;

/// Most series an expression over several key columns names (the plan stays shallow).
const MAX_MULTI_KEY_SERIES: usize = 64;

fn col(name: &str) -> Expr {
    Expr::Column(Column::new_unqualified(name))
}

/// The columns whose value is the same in every row of each series at the table's snapshot: the
/// series key and the snapshot index's series-constant columns (`IndexRef::series_constant`,
/// matched to the table's columns by field id). A filter on these alone keeps or drops whole
/// series.
pub(crate) fn series_columns(table: &VarveTable, contract: &TableContract) -> BTreeSet<String> {
    let constant = index_of(table).map(|ix| ix.series_constant).unwrap_or_default();
    let by_id = table
        .schema
        .fields()
        .iter()
        .filter(|f| field_id(f).is_some_and(|id| constant.contains(&id)))
        .map(|f| f.name().clone());
    contract.series_key.iter().cloned().chain(by_id).collect()
}

/// The index the table's snapshot names, if any.
fn index_of(table: &VarveTable) -> Option<IndexRef> {
    let snapshot = table
        .snapshot_id
        .and_then(|id| table.table.metadata.snapshot_by_id(id))?;
    IndexRef::of(snapshot)
}

/// Which of `rows` pass `filters`, NULL counted as failing (as a filter drops the row); `None`
/// when there is no filter.
///
/// Errors: a filter cannot be evaluated on the rows.
fn passing(
    rows: &RecordBatch,
    table: &VarveTable,
    state: &dyn Session,
    filters: &[Expr],
) -> Result<Option<BooleanArray>> {
    let Some(p) = conjunction(filters.to_vec()) else {
        return Ok(None);
    };
    let df_schema = DFSchema::try_from(table.schema.as_ref().clone())?;
    let kept = state.create_physical_expr(p, &df_schema)?.evaluate(rows)?;
    let kept = kept.into_array(rows.num_rows())?;
    let kept = datafusion::common::cast::as_boolean_array(&kept)?;
    Ok(Some(match kept.null_count() {
        0 => kept.clone(),
        _ => arrow::compute::prep_null_mask_filter(kept),
    }))
}

/// The rows of `rows` that `filters` keep (all of them when there is none).
///
/// Errors: a filter cannot be evaluated on the rows.
fn keep(rows: &RecordBatch, table: &VarveTable, state: &dyn Session, filters: &[Expr]) -> Result<RecordBatch> {
    Ok(match passing(rows, table, state, filters)? {
        Some(kept) => arrow::compute::filter_record_batch(rows, &kept)?,
        None => rows.clone(),
    })
}

/// The snapshot's index rows in the table's schema that pass `filters` (all of them when there
/// is none); `None` without a readable index.
///
/// Errors: a filter cannot be evaluated on the index's rows.
async fn index_rows(table: &VarveTable, state: &dyn Session, filters: &[Expr]) -> Result<Option<RecordBatch>> {
    let Some(ix) = index_of(table) else {
        return Ok(None);
    };
    // An index that cannot be read only costs the shortcut: the scan reads the data files.
    let rows = match last_value::read(&table.env.storage, &table.env.cache, &ix).await {
        Ok(rows) => rows,
        Err(e) => {
            tracing::warn!(table = %table.table.ident, error = %e, "scan without the last-value index");
            return Ok(None);
        }
    };
    let rows = last_value::align_to(&rows, &table.schema)?;
    Ok(Some(keep(&rows, table, state, filters)?))
}

/// `<series key> IN (the series of rows)`, NULL keys matched by `IS NULL`; `None` for several key
/// columns and more than [`MAX_MULTI_KEY_SERIES`] series, or no key column.
fn series_of(rows: &RecordBatch, contract: &TableContract) -> Result<Option<Expr>> {
    let value = |key: &str, r: usize| match rows.column_by_name(key) {
        Some(c) => ScalarValue::try_from_array(c, r),
        None => Err(Error::internal(format!("the last-value index has no column {key}")).into()),
    };
    match contract.series_key.as_slice() {
        [] => Ok(None),
        // One key column: an IN list (long ones prune too), plus IS NULL for a NULL key.
        [key] => {
            let values: Vec<ScalarValue> = (0..rows.num_rows()).map(|r| value(key, r)).collect::<Result<_>>()?;
            let (nulls, values): (Vec<ScalarValue>, Vec<ScalarValue>) = values.into_iter().partition(|v| v.is_null());
            let listed = col(key).in_list(values.into_iter().map(lit).collect(), false);
            Ok(Some(match nulls.is_empty() {
                true => listed,
                false => listed.or(col(key).is_null()),
            }))
        }
        keys if rows.num_rows() <= MAX_MULTI_KEY_SERIES => {
            let mut series: Vec<Expr> = Vec::with_capacity(rows.num_rows());
            for r in 0..rows.num_rows() {
                let mut same = Vec::with_capacity(keys.len());
                for key in keys {
                    let v = value(key, r)?;
                    same.push(match v.is_null() {
                        true => col(key).is_null(),
                        false => col(key).eq(lit(v)),
                    });
                }
                series.extend(conjunction(same));
            }
            Ok(Some(series.into_iter().reduce(Expr::or).unwrap_or(lit(false))))
        }
        _ => Ok(None),
    }
}

/// What a scan under a top-k by time reads ([`top_k_bound`]).
#[derive(Default)]
pub(crate) struct TopK {
    /// Filters every row of the top k passes, to prune by.
    pub(crate) bound: Vec<Expr>,
    /// The top k rows themselves, when the index holds them all.
    pub(crate) rows: Option<RecordBatch>,
}

/// For a scan marked [`VarveTable::newest_k`]: `time >= T` and `<series key> IN (S)` (two
/// filters, so that a long list prunes on its own), where S are the series of the first k rows of
/// the snapshot's last-value index in the top-k's order (after `filters`, which name series
/// columns only, and the retention bound) and T the k-th one's time. Every row of the top k passes
/// them (`query::rules::newest`'s module docs). When T is later than the index's older-rows bound
/// (`IndexRef::older_bound`: no row but an entry is later), those k rows are the top k, and
/// [`TopK::rows`] holds them. Empty when the index has no more than k series and cannot answer
/// (nothing to prune) or the snapshot has no readable index.
///
/// Errors: a filter cannot be evaluated on the index's rows.
pub(crate) async fn top_k_bound(table: &VarveTable, state: &dyn Session, filters: &[Expr]) -> Result<TopK> {
    let Some(top) = &table.newest_k else {
        return Ok(TopK::default());
    };
    let contract = table.table.contract()?;
    let Some(time) = contract.time_column.clone() else {
        return Ok(TopK::default());
    };
    let Some(rows) = index_rows(table, state, filters).await? else {
        return Ok(TopK::default());
    };
    let older_bound = index_of(table).and_then(|ix| ix.older_bound);
    if rows.num_rows() < top.k || (rows.num_rows() == top.k && older_bound.is_none()) {
        return Ok(TopK::default());
    }
    let column = |name: &str| {
        rows.column_by_name(name)
            .cloned()
            .ok_or_else(|| Error::internal(format!("the last-value index has no column {name}")))
    };
    let mut order = vec![SortColumn {
        values: column(&time)?,
        options: Some(SortOptions::new(true, false)),
    }];
    for (c, asc, nulls_first) in &top.then_by {
        order.push(SortColumn {
            values: column(c)?,
            options: Some(SortOptions::new(!asc, *nulls_first)),
        });
    }
    let first = arrow::compute::take_record_batch(&rows, &lexsort_to_indices(&order, Some(top.k))?)?;
    let times = first.column_by_name(&time).expect("sorted");
    let kth_micros = arrow::compute::cast(times, &arrow::datatypes::DataType::Int64)?;
    let kth_micros = kth_micros.as_primitive::<arrow::datatypes::Int64Type>();
    if older_bound.is_some_and(|b| kth_micros.is_valid(top.k - 1) && kth_micros.value(top.k - 1) > b) {
        return Ok(TopK {
            bound: vec![],
            rows: Some(first),
        });
    }
    if rows.num_rows() == top.k {
        return Ok(TopK::default());
    }
    let kth = ScalarValue::try_from_array(times, top.k - 1)?;
    let newer = col(&time).gt_eq(lit(kth));
    Ok(TopK {
        bound: std::iter::once(newer).chain(series_of(&first, &contract)?).collect(),
        rows: None,
    })
}

/// For any scan of the data files: `<series key> IN (S)`, where S are the series whose index
/// entry passes the filters that name series-constant columns ([`series_columns`]; filters on the
/// series key alone already prune). Every row those filters keep is of such a series (its
/// constant columns hold its entry's values), so the list only prunes: after compaction, when
/// files are sorted by series key, "one fleet's trucks" reads only their row groups and pages.
/// `None` when no filter qualifies, without a readable index, or for several key columns and many
/// series; `false` when no series passes.
///
/// Errors: a filter cannot be evaluated on the index's rows.
pub(crate) async fn series_of_constant_filters(
    table: &VarveTable,
    state: &dyn Session,
    filters: &[Expr],
) -> Result<Option<(Expr, usize)>> {
    let contract = table.table.contract()?;
    if contract.series_key.is_empty() || table.last_values.is_some() {
        return Ok(None);
    }
    let whole = series_columns(table, &contract);
    if whole.len() == contract.series_key.len() {
        return Ok(None);
    }
    let on_constant: Vec<Expr> = filters
        .iter()
        .filter(|e| {
            let refs = e.column_refs();
            !e.is_volatile()
                && refs.iter().all(|c| whole.contains(&c.name))
                && refs.iter().any(|c| !contract.series_key.contains(&c.name))
        })
        .cloned()
        .collect();
    if on_constant.is_empty() {
        return Ok(None);
    }
    let Some(rows) = index_rows(table, state, &on_constant).await? else {
        return Ok(None);
    };
    if rows.num_rows() == 0 {
        return Ok(Some((lit(false), 0)));
    }
    Ok(series_of(&rows, &contract)?.map(|e| (e, rows.num_rows())))
}

/// How a scan marked [`VarveTable::newest_filtered`] reads, from [`split_by_index`].
pub(crate) struct Split {
    /// The index rows that pass the filters: each its series' newest row among those it keeps.
    pub(crate) from_index: RecordBatch,
    /// The rows of every other series: `NOT <series key> IN (those series)`, to apply exactly to
    /// the data files' rows.
    pub(crate) others: Expr,
}

/// For a scan under the newest row of each series among the rows `filters` keep (any
/// deterministic filters, and the retention bound): the series whose newest row passes them are
/// answered by that row (it is the newest of those the filters keep); only the other series need
/// the data files. Of those, a series whose newest row fails a filter on series columns alone
/// ([`series_columns`]) has no row that passes it: when some filters are of that kind, only the
/// series whose newest row passes them (and not the rest) are read. `None` without a readable
/// index, or for several key columns and many series.
///
/// Errors: a filter cannot be evaluated on the index's rows.
pub(crate) async fn split_by_index(table: &VarveTable, state: &dyn Session, filters: &[Expr]) -> Result<Option<Split>> {
    let contract = table.table.contract()?;
    let whole = series_columns(table, &contract);
    let (on_series, rest): (Vec<Expr>, Vec<Expr>) = filters
        .iter()
        .cloned()
        .partition(|e| !e.is_volatile() && e.column_refs().iter().all(|c| whole.contains(&c.name)));
    if !on_series.is_empty() {
        let Some(candidates) = index_rows(table, state, &on_series).await? else {
            return Ok(None);
        };
        // The series that pass the whole-series filters: answered by their newest row when it
        // passes the rest too, else read from the data files.
        let (answered, unanswered) = match passing(&candidates, table, state, &rest)? {
            None => (candidates, None),
            Some(passes) => {
                let fails = arrow::compute::not(&passes)?;
                (
                    arrow::compute::filter_record_batch(&candidates, &passes)?,
                    Some(arrow::compute::filter_record_batch(&candidates, &fails)?),
                )
            }
        };
        let others = match unanswered.filter(|u| u.num_rows() > 0) {
            None => Some(lit(false)),
            Some(u) => series_of(&u, &contract)?,
        };
        if let Some(others) = others {
            return Ok(Some(Split {
                from_index: answered,
                others,
            }));
        }
    }
    let Some(rows) = index_rows(table, state, filters).await? else {
        return Ok(None);
    };
    if rows.num_rows() == 0 {
        return Ok(Some(Split {
            from_index: rows,
            others: lit(true),
        }));
    }
    let Some(answered) = series_of(&rows, &contract)? else {
        return Ok(None);
    };
    // `NOT (k IN (...) OR k IS NULL)` is NULL, not true, for a NULL key outside the list's
    // series: keep those rows explicitly.
    let others = match contract.series_key.as_slice() {
        [key] if !has_null_key(&rows, key) => (!answered).or(col(key).is_null()),
        _ => answered.is_not_true(),
    };
    Ok(Some(Split {
        from_index: rows,
        others,
    }))
}

fn has_null_key(rows: &RecordBatch, key: &str) -> bool {
    rows.column_by_name(key).is_some_and(|c| c.null_count() > 0)
}
