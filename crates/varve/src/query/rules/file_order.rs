//! Newest-first (or oldest-first) scans: a physical optimizer rule that, under a sort with a limit
//! (`ORDER BY ts DESC LIMIT k`, a `TopK`) on a column, makes each file group of the scan below it
//! read its files in that column's order by their bounds: by upper bound, highest first, for a
//! descending sort; by lower bound, lowest first, for an ascending one. The `TopK` then holds its
//! k rows after the first files, and its running threshold (DataFusion's dynamic filter, pushed
//! into the Parquet scan) rules out the remaining files by their bounds before they are opened.
//! Where the scan's partitions take files from one shared queue (DataFusion's work stealing, on by
//! default), the rule orders that queue as a whole, across the groups.
//!
//! DataFusion's own sort pushdown orders files the same way but stops at a `FilterExec` (`WHERE
//! host = 'h1' ORDER BY ts DESC LIMIT 3`); this rule passes filters, projections that keep the
//! column, the repartitioning nodes between, and unions (each input in turn, by the column's
//! place; a union of two inputs, rows in memory such as a scan's small files and a file scan,
//! each read by one partition, is then read by one partition, `query::rules::chain`). Files without bounds
//! for the column come first (they may hold anything). Files whose ranges of the column do not
//! overlap go to one partition in that order, so that each is opened only after the one before.
//! A scan that declares an output ordering (one file per partition) is left alone unless its
//! files can be read that way: then the ordering is dropped (the sort above sorts anyway). The
//! order of rows within a file, and the result, do not change: the sort stays.

use std::cmp::Ordering;
use std::sync::Arc;

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::ScalarValue;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::memory::MemorySourceConfig;
use datafusion::datasource::physical_plan::{FileGroup, FileScanConfig, FileScanConfigBuilder};
use datafusion::datasource::source::DataSourceExec;
use datafusion::error::Result;
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::coop::CooperativeExec;
use datafusion::physical_plan::filter::FilterExec;
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::repartition::RepartitionExec;
use datafusion::physical_plan::sorts::sort::SortExec;
use datafusion::physical_plan::union::UnionExec;
use datafusion::physical_plan::{ExecutionPlan, ExecutionPlanProperties};

use crate::query::rules::chain::ChainExec;

/// The rule (module docs).
#[derive(Debug)]
pub(crate) struct FilesInSortOrder;

impl PhysicalOptimizerRule for FilesInSortOrder {
    fn optimize(&self, plan: Arc<dyn ExecutionPlan>, options: &ConfigOptions) -> Result<Arc<dyn ExecutionPlan>> {
        let stealing = options.execution.enable_file_stream_work_stealing;
        plan.transform_down(|node| {
            let Some(sort) = node.downcast_ref::<SortExec>() else {
                return Ok(Transformed::no(node));
            };
            if sort.fetch().is_none() {
                return Ok(Transformed::no(node));
            }
            let first = sort.expr().first();
            let Some(column) = first.expr.downcast_ref::<Column>() else {
                return Ok(Transformed::no(node));
            };
            match reorder(sort.input().clone(), column.name(), first.options.descending, stealing)? {
                Some(input) => {
                    let node = node.clone().with_new_children(vec![input])?;
                    Ok(Transformed::yes(node))
                }
                None => Ok(Transformed::no(node)),
            }
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "varve_files_in_sort_order"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// `plan` with the files of the scan at its bottom in the order of `column`, or `None` when the
/// path down to a file scan passes a node that could change what `column` is or which rows come.
///
/// With `stealing` (DataFusion's work stealing, where every partition takes the next file of one
/// queue made of the groups one after the other), the files of all groups are ordered together
/// and dealt back as consecutive runs of the groups' sizes, so that the queue itself is in order;
/// otherwise each group is ordered on its own.
fn reorder(
    plan: Arc<dyn ExecutionPlan>,
    column: &str,
    descending: bool,
    stealing: bool,
) -> Result<Option<Arc<dyn ExecutionPlan>>> {
    if let Some(scan) = plan.downcast_ref::<DataSourceExec>() {
        let Some(config) = scan.data_source().downcast_ref::<FileScanConfig>() else {
            return Ok(None);
        };
        let declared = !config.output_ordering.is_empty();
        let Ok(index) = config.file_schema().index_of(column) else {
            return Ok(None);
        };
        let order = |files: &mut Vec<PartitionedFile>| {
            files.sort_by(|a, b| compare(bound(a, index, descending), bound(b, index, descending), descending))
        };
        let shared_queue = stealing && !config.preserve_order && !config.partitioned_by_file_group;
        // Files whose ranges of the column do not overlap (appends in time order, compaction's
        // tiers) are read one after the other by one partition: DataFusion opens a partition's
        // next file only when the current one is read, so the top-k's threshold from the first
        // files rules out the rest by their bounds before they are opened. Read by partitions in
        // parallel, the first files of every partition are opened at once. An order the scan
        // declared (each partition reading one file) is dropped: the files one after the other
        // are not in it, and the sort above sorts anyway (the nodes between are rebuilt, and
        // take their properties from the new scan).
        let mut all: Vec<PartitionedFile> = config.file_groups.iter().flat_map(|g| g.files().to_vec()).collect();
        order(&mut all);
        // (A scan that declares an order, or that DataFusion's sort pushdown reads in reverse,
        // keeps its files' order, `preserve_order`: that matters for a limit the scan applies
        // itself, and this scan has none, the sort above has it.)
        let free = !config.preserve_order || config.limit.is_none();
        if free && !config.partitioned_by_file_group && disjoint(&all, index, descending) {
            let config = FileScanConfigBuilder::from(config.clone())
                .with_file_groups(vec![FileGroup::new(all)])
                .with_output_ordering(vec![])
                .with_preserve_order(false)
                .build();
            return Ok(Some(DataSourceExec::from_data_source(config)));
        }
        // Otherwise a declared order stays, and with it the files' places.
        if declared {
            return Ok(None);
        }
        let groups: Vec<FileGroup> = match shared_queue {
            true => {
                let mut files = all.into_iter();
                config
                    .file_groups
                    .iter()
                    .map(|g| FileGroup::new(files.by_ref().take(g.len()).collect()))
                    .collect()
            }
            false => config
                .file_groups
                .iter()
                .map(|g| {
                    let mut files = g.files().to_vec();
                    order(&mut files);
                    FileGroup::new(files)
                })
                .collect(),
        };
        let config = FileScanConfigBuilder::from(config.clone())
            .with_file_groups(groups)
            .build();
        return Ok(Some(DataSourceExec::from_data_source(config)));
    }
    // A union (a scan's small files read from memory beside its Parquet scan,
    // `query::scan::small_files`): each input that reaches a file scan is ordered.
    if plan.is::<UnionExec>() {
        // An input's column is the one at the same place (a union names its columns after its
        // first input's).
        let Ok(at) = plan.schema().index_of(column) else {
            return Ok(None);
        };
        let mut changed = false;
        let mut children = Vec::new();
        for child in plan.children() {
            let name = child.schema().field(at).name().clone();
            match reorder(child.clone(), &name, descending, stealing)? {
                Some(c) => {
                    changed = true;
                    children.push(c);
                }
                None => children.push(child.clone()),
            }
        }
        // Small files' rows beside a scan read by one partition: one partition for the sort
        // (`query::rules::chain`), as over a table of one file.
        if let [a, b] = children.as_slice() {
            let pair = (in_memory(a) && reaches_file_scan(b)) || (reaches_file_scan(a) && in_memory(b));
            if pair && one_partition_each(&children) {
                return Ok(Some(Arc::new(ChainExec::try_new(plan.schema(), children)?)));
            }
        }
        return match changed {
            true => Ok(Some(plan.clone().with_new_children(children)?)),
            false => Ok(None),
        };
    }
    let mut column = column.to_string();
    if let Some(projection) = plan.downcast_ref::<ProjectionExec>() {
        // The column must come through the projection as a column (perhaps renamed).
        let source = projection.expr().iter().find_map(|p| {
            let c = p.expr.downcast_ref::<Column>()?;
            (p.alias == column).then(|| c.name().to_string())
        });
        match source {
            Some(name) => column = name,
            None => return Ok(None),
        }
    } else if let Some(repartition) = plan.downcast_ref::<RepartitionExec>() {
        // A repartition that merges its input's order needs that order kept.
        if repartition.preserve_order() {
            return Ok(None);
        }
    } else if !(plan.is::<FilterExec>() || plan.is::<CooperativeExec>()) {
        return Ok(None);
    }
    let children = plan.children();
    let [child] = children.as_slice() else {
        return Ok(None);
    };
    match reorder((*child).clone(), &column, descending, stealing)? {
        Some(child) => Ok(Some(plan.clone().with_new_children(vec![child])?)),
        None => Ok(None),
    }
}

/// Whether each of `plans` has one output partition.
fn one_partition_each(plans: &[Arc<dyn ExecutionPlan>]) -> bool {
    plans.iter().all(|p| p.output_partitioning().partition_count() == 1)
}

/// Whether `plan` reads rows held in memory (a memory source, perhaps under filters and
/// projections), as a scan's small files are (`query::scan::small_files`).
fn in_memory(plan: &Arc<dyn ExecutionPlan>) -> bool {
    source_below(plan).is_some_and(|s| s.data_source().downcast_ref::<MemorySourceConfig>().is_some())
}

/// Whether `plan` reads files (a file scan, perhaps under filters and projections).
fn reaches_file_scan(plan: &Arc<dyn ExecutionPlan>) -> bool {
    source_below(plan).is_some_and(|s| s.data_source().downcast_ref::<FileScanConfig>().is_some())
}

/// The data source at the bottom of `plan` when only filters, projections and cooperative
/// wrappers are above it, bounded.
fn source_below(plan: &Arc<dyn ExecutionPlan>) -> Option<&DataSourceExec> {
    if plan.boundedness().is_unbounded() {
        return None;
    }
    if let Some(source) = plan.downcast_ref::<DataSourceExec>() {
        return Some(source);
    }
    let passes = plan.is::<FilterExec>() || plan.is::<ProjectionExec>() || plan.is::<CooperativeExec>();
    match plan.children().as_slice() {
        [child] if passes => source_below(child),
        _ => None,
    }
}

/// Whether `files`, in the order of a sort on column `index` (descending or not), have bounds of
/// the column that do not overlap: each file's range ends where the next one's starts, or before.
/// Two or more files, every one with both bounds.
fn disjoint(files: &[PartitionedFile], index: usize, descending: bool) -> bool {
    let ranges: Option<Vec<(ScalarValue, ScalarValue)>> = files
        .iter()
        .map(|f| Some((bound(f, index, false)?, bound(f, index, true)?)))
        .collect();
    let Some(ranges) = ranges else {
        return false;
    };
    ranges.len() > 1
        && ranges.windows(2).all(|w| {
            let ((lo_a, hi_a), (lo_b, hi_b)) = (&w[0], &w[1]);
            let ordered = match descending {
                // The next file's newest is at most this one's oldest.
                true => hi_b.partial_cmp(lo_a),
                false => hi_a.partial_cmp(lo_b),
            };
            matches!(ordered, Some(Ordering::Less | Ordering::Equal))
        })
}

/// A file's bound of column `index` that a sort in this direction reads first: the upper bound
/// for a descending sort, the lower for an ascending one.
fn bound(file: &PartitionedFile, index: usize, descending: bool) -> Option<ScalarValue> {
    let column = file.statistics.as_ref()?.column_statistics.get(index)?;
    let value = match descending {
        true => column.max_value.get_value()?,
        false => column.min_value.get_value()?,
    };
    (!value.is_null()).then(|| value.clone())
}

/// Files without a bound first, then by bound in the sort's direction.
fn compare(a: Option<ScalarValue>, b: Option<ScalarValue>, descending: bool) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(a), Some(b)) => {
            let o = a.partial_cmp(&b).unwrap_or(Ordering::Equal);
            match descending {
                true => o.reverse(),
                false => o,
            }
        }
    }
}
