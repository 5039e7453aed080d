//! The ASOF join's execution: a sorted merge per partition. Both inputs are required
//! hash-partitioned by the keys (one partition without keys) and sorted by (keys, time) ascending
//! with NULLs last; DataFusion inserts the repartitions and the (spilling) sorts. The merge walks
//! the left rows in order and moves one cursor over the right rows: backward (`>=`, `>`) it keeps
//! the last right row passed, forward (`<=`, `<`) it takes the row the cursor stops at. Memory:
//! the current left batch, the current right batch and the batch of the last candidate row.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use arrow::array::{new_null_array, Array, ArrayRef, BooleanArray, Int64Array, RecordBatch};
use arrow::compute::{filter_record_batch, interleave, SortOptions};
use arrow::datatypes::{DataType, SchemaRef};
use arrow::row::{RowConverter, Rows, SortField};
use async_trait::async_trait;
use datafusion::common::{internal_err, Result};
use datafusion::execution::context::SessionState;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{LogicalPlan, UserDefinedLogicalNode};
use datafusion::physical_expr::{
    EquivalenceProperties, LexOrdering, LexRequirement, OrderingRequirements, PhysicalExprRef, PhysicalSortExpr,
};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, Distribution, ExecutionPlan, ExecutionPlanProperties, PlanProperties,
};
use datafusion::physical_planner::{ExtensionPlanner, PhysicalPlanner};
use futures::StreamExt;

use super::node::{AsofJoin, Direction, Kind, Tolerance};

/// Ascending, NULLs last: the order both inputs are required in, and the order the merge's row
/// comparisons follow.
const ORDER: SortOptions = SortOptions {
    descending: false,
    nulls_first: false,
};

/// Plans [`AsofJoin`] nodes as [`AsofJoinExec`].
#[derive(Debug, Default)]
pub(crate) struct AsofPlanner;

#[async_trait]
impl ExtensionPlanner for AsofPlanner {
    async fn plan_extension(
        &self,
        planner: &dyn PhysicalPlanner,
        node: &dyn UserDefinedLogicalNode,
        logical_inputs: &[&LogicalPlan],
        physical_inputs: &[Arc<dyn ExecutionPlan>],
        state: &SessionState,
    ) -> Result<Option<Arc<dyn ExecutionPlan>>> {
        let Some(n) = node.as_any().downcast_ref::<AsofJoin>() else {
            return Ok(None);
        };
        let ([l, r], [pl, pr]) = (logical_inputs, physical_inputs) else {
            return internal_err!("AsofJoin has two inputs");
        };
        let (ls, rs) = (l.schema(), r.schema());
        let left_keys = n
            .keys
            .iter()
            .map(|(k, _)| planner.create_physical_expr(k, ls, state))
            .collect::<Result<Vec<_>>>()?;
        let right_keys = n
            .keys
            .iter()
            .map(|(_, k)| planner.create_physical_expr(k, rs, state))
            .collect::<Result<Vec<_>>>()?;
        let exec = AsofJoinExec::try_new(
            pl.clone(),
            pr.clone(),
            Sides {
                left_keys,
                right_keys,
                left_time: planner.create_physical_expr(&n.left_time, ls, state)?,
                right_time: planner.create_physical_expr(&n.right_time, rs, state)?,
            },
            n.direction,
            n.tolerance,
            n.kind,
            Arc::new(n.schema().as_arrow().clone()),
        )?;
        Ok(Some(Arc::new(exec)))
    }
}

/// The keys and times of both sides, as expressions over each input.
#[derive(Debug, Clone)]
struct Sides {
    left_keys: Vec<PhysicalExprRef>,
    right_keys: Vec<PhysicalExprRef>,
    left_time: PhysicalExprRef,
    right_time: PhysicalExprRef,
}

/// The ASOF join operator (module docs). Output: the left input's columns, then the right's, in
/// the left input's order within each partition.
#[derive(Debug)]
pub(crate) struct AsofJoinExec {
    left: Arc<dyn ExecutionPlan>,
    right: Arc<dyn ExecutionPlan>,
    sides: Sides,
    direction: Direction,
    tolerance: Option<Tolerance>,
    kind: Kind,
    schema: SchemaRef,
    props: Arc<PlanProperties>,
}

impl AsofJoinExec {
    #[allow(clippy::too_many_arguments)]
    fn try_new(
        left: Arc<dyn ExecutionPlan>,
        right: Arc<dyn ExecutionPlan>,
        sides: Sides,
        direction: Direction,
        tolerance: Option<Tolerance>,
        kind: Kind,
        schema: SchemaRef,
    ) -> Result<Self> {
        let props = PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            left.output_partitioning().clone(),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        Ok(AsofJoinExec {
            left,
            right,
            sides,
            direction,
            tolerance,
            kind,
            schema,
            props: Arc::new(props),
        })
    }

    fn ordering(keys: &[PhysicalExprRef], time: &PhysicalExprRef) -> Option<OrderingRequirements> {
        let exprs = keys
            .iter()
            .chain(std::iter::once(time))
            .map(|e| PhysicalSortExpr::new(e.clone(), ORDER));
        LexOrdering::new(exprs).map(|o| OrderingRequirements::new(LexRequirement::from(o)))
    }
}

impl DisplayAs for AsofJoinExec {
    fn fmt_as(&self, _: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let s = &self.sides;
        write!(f, "AsofJoinExec: ")?;
        if self.kind == Kind::Left {
            write!(f, "left, ")?;
        }
        for (l, r) in s.left_keys.iter().zip(&s.right_keys) {
            write!(f, "{l} = {r}, ")?;
        }
        write!(f, "{} {} {}", s.left_time, self.direction.symbol(), s.right_time)
    }
}

impl ExecutionPlan for AsofJoinExec {
    fn name(&self) -> &str {
        "AsofJoinExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.props
    }

    fn required_input_distribution(&self) -> Vec<Distribution> {
        if self.sides.left_keys.is_empty() {
            vec![Distribution::SinglePartition, Distribution::SinglePartition]
        } else {
            vec![
                Distribution::HashPartitioned(self.sides.left_keys.clone()),
                Distribution::HashPartitioned(self.sides.right_keys.clone()),
            ]
        }
    }

    fn required_input_ordering(&self) -> Vec<Option<OrderingRequirements>> {
        let s = &self.sides;
        vec![
            Self::ordering(&s.left_keys, &s.left_time),
            Self::ordering(&s.right_keys, &s.right_time),
        ]
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true, false]
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.left, &self.right]
    }

    fn with_new_children(self: Arc<Self>, children: Vec<Arc<dyn ExecutionPlan>>) -> Result<Arc<dyn ExecutionPlan>> {
        let Ok([left, right]) = <[_; 2]>::try_from(children) else {
            return internal_err!("AsofJoinExec has two children");
        };
        Ok(Arc::new(AsofJoinExec::try_new(
            left,
            right,
            self.sides.clone(),
            self.direction,
            self.tolerance,
            self.kind,
            self.schema.clone(),
        )?))
    }

    fn execute(&self, partition: usize, ctx: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        let key_types = self
            .sides
            .left_keys
            .iter()
            .map(|k| k.data_type(&self.left.schema()))
            .collect::<Result<Vec<_>>>()?;
        let time_type = self.sides.left_time.data_type(&self.left.schema())?;
        let keys = if key_types.is_empty() {
            None
        } else {
            Some(RowConverter::new(
                key_types
                    .into_iter()
                    .map(|t| SortField::new_with_options(t, ORDER))
                    .collect(),
            )?)
        };
        let merge = Merge {
            left: self.left.execute(partition, ctx.clone())?,
            right: self.right.execute(partition, ctx)?.fuse(),
            sides: self.sides.clone(),
            direction: self.direction,
            tolerance: self.tolerance.map(|t| (t, nanos_per_tick(&time_type))),
            kind: self.kind,
            schema: self.schema.clone(),
            right_schema: self.right.schema(),
            keys,
            time: RowConverter::new(vec![SortField::new_with_options(time_type, ORDER)])?,
            cur: None,
            pos: 0,
            candidate: None,
        };
        let stream = futures::stream::try_unfold(merge, |mut m| async move {
            while let Some(batch) = m.left.next().await.transpose()? {
                let out = m.join(&batch).await?;
                if out.num_rows() > 0 {
                    return Ok(Some((out, m)));
                }
            }
            Ok(None)
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(self.schema.clone(), stream)))
    }
}

/// Nanoseconds per unit of a timestamp time; 1 for integer times (a tolerance on them is in
/// their own units).
fn nanos_per_tick(t: &DataType) -> i128 {
    match t {
        DataType::Timestamp(u, _) => crate::query::functions::time_bucket::unit_nanos(*u),
        _ => 1,
    }
}

/// One input batch with its keys and time as comparable rows.
struct Keyed {
    batch: RecordBatch,
    keys: Option<Rows>,
    time: Rows,
    /// Keys and time all non-NULL: the row can match.
    valid: Vec<bool>,
    /// The time as an integer, when a tolerance needs it.
    ticks: Option<Int64Array>,
}

/// The state of one partition's merge.
struct Merge {
    left: SendableRecordBatchStream,
    /// Fused: asked again after its end, it answers the end again.
    right: futures::stream::Fuse<SendableRecordBatchStream>,
    sides: Sides,
    direction: Direction,
    tolerance: Option<(Tolerance, i128)>,
    kind: Kind,
    schema: SchemaRef,
    right_schema: SchemaRef,
    keys: Option<RowConverter>,
    time: RowConverter,
    /// The right batch under the cursor and the cursor's row in it.
    cur: Option<Arc<Keyed>>,
    pos: usize,
    /// Backward: the last valid right row passed.
    candidate: Option<(Arc<Keyed>, usize)>,
}

impl Merge {
    fn keyed(&self, batch: RecordBatch, keys: &[PhysicalExprRef], time: &PhysicalExprRef) -> Result<Keyed> {
        let n = batch.num_rows();
        let key_cols = keys
            .iter()
            .map(|k| k.evaluate(&batch)?.into_array(n))
            .collect::<Result<Vec<ArrayRef>>>()?;
        let time_col = time.evaluate(&batch)?.into_array(n)?;
        let valid = (0..n)
            .map(|i| time_col.is_valid(i) && key_cols.iter().all(|c| c.is_valid(i)))
            .collect();
        let ticks = match self.tolerance {
            Some(_) => {
                let t = arrow::compute::cast(&time_col, &DataType::Int64)?;
                Some(
                    t.as_any()
                        .downcast_ref::<Int64Array>()
                        .cloned()
                        .unwrap_or_else(|| Int64Array::from(vec![0; n])),
                )
            }
            None => None,
        };
        Ok(Keyed {
            keys: match &self.keys {
                Some(c) => Some(c.convert_columns(&key_cols)?),
                None => None,
            },
            time: self.time.convert_columns(&[time_col])?,
            valid,
            ticks,
            batch,
        })
    }

    /// The next non-empty right batch under the cursor; false when the right input is done.
    async fn advance_batch(&mut self) -> Result<bool> {
        loop {
            if let Some(c) = &self.cur {
                if self.pos < c.batch.num_rows() {
                    return Ok(true);
                }
            }
            match self.right.next().await.transpose()? {
                Some(b) => {
                    let (keys, time) = (self.sides.right_keys.clone(), self.sides.right_time.clone());
                    self.cur = Some(Arc::new(self.keyed(b, &keys, &time)?));
                    self.pos = 0;
                }
                None => {
                    self.cur = None;
                    return Ok(false);
                }
            }
        }
    }

    /// Joins one left batch.
    async fn join(&mut self, batch: &RecordBatch) -> Result<RecordBatch> {
        let (keys, time) = (self.sides.left_keys.clone(), self.sides.left_time.clone());
        let left = self.keyed(batch.clone(), &keys, &time)?;
        let backward = self.direction.backward();
        let mut matches: Vec<Option<(Arc<Keyed>, usize)>> = Vec::with_capacity(batch.num_rows());
        for i in 0..batch.num_rows() {
            if !left.valid[i] {
                matches.push(None);
                continue;
            }
            let same_key = |k: &Keyed, p: usize| match (&k.keys, &left.keys) {
                (Some(r), Some(l)) => r.row(p) == l.row(i),
                _ => true,
            };
            // Move the cursor past the right rows that come before this left row's match.
            while self.advance_batch().await? {
                let Some(cur) = self.cur.clone() else { break };
                let key_order = match (&cur.keys, &left.keys) {
                    (Some(r), Some(l)) => r.row(self.pos).cmp(&l.row(i)),
                    _ => Ordering::Equal,
                };
                let pass = match key_order {
                    Ordering::Less => true,
                    Ordering::Greater => false,
                    Ordering::Equal => {
                        let t = cur.time.row(self.pos).cmp(&left.time.row(i));
                        match self.direction {
                            Direction::AtOrBefore | Direction::After => t != Ordering::Greater,
                            Direction::Before | Direction::AtOrAfter => t == Ordering::Less,
                        }
                    }
                };
                if !pass {
                    break;
                }
                if backward && cur.valid[self.pos] {
                    self.candidate = Some((cur.clone(), self.pos));
                }
                self.pos += 1;
            }
            let found = if backward {
                self.candidate.clone().filter(|(k, p)| same_key(k, *p))
            } else {
                match &self.cur {
                    Some(c) if self.pos < c.batch.num_rows() && c.valid[self.pos] && same_key(c, self.pos) => {
                        Some((c.clone(), self.pos))
                    }
                    _ => None,
                }
            };
            let found = found.filter(|(k, p)| self.within_tolerance(&left, i, k, *p));
            matches.push(found);
        }
        self.output(batch, matches)
    }

    fn within_tolerance(&self, left: &Keyed, i: usize, right: &Keyed, p: usize) -> bool {
        let Some((tol, per_tick)) = self.tolerance else {
            return true;
        };
        let (Some(lt), Some(rt)) = (&left.ticks, &right.ticks) else {
            return true;
        };
        let (l, r) = (i128::from(lt.value(i)), i128::from(rt.value(p)));
        let diff = if self.direction.backward() { l - r } else { r - l } * per_tick;
        if tol.inclusive {
            diff <= i128::from(tol.amount)
        } else {
            diff < i128::from(tol.amount)
        }
    }

    /// The output batch: the left rows (all, or the matched ones for an inner join) beside their
    /// matched right rows (NULLs where none).
    fn output(&self, batch: &RecordBatch, matches: Vec<Option<(Arc<Keyed>, usize)>>) -> Result<RecordBatch> {
        let left = match self.kind {
            Kind::Left => batch.clone(),
            Kind::Inner => {
                let mask: BooleanArray = matches.iter().map(|m| Some(m.is_some())).collect();
                filter_record_batch(batch, &mask)?
            }
        };
        let mut sources: Vec<Arc<Keyed>> = Vec::new();
        let mut indices: Vec<(usize, usize)> = Vec::with_capacity(left.num_rows());
        let mut misses = false;
        for m in &matches {
            match m {
                Some((k, p)) => {
                    let s = match sources.iter().rposition(|s| Arc::ptr_eq(s, k)) {
                        Some(s) => s,
                        None => {
                            sources.push(k.clone());
                            sources.len() - 1
                        }
                    };
                    indices.push((s, *p));
                }
                None if self.kind == Kind::Left => {
                    misses = true;
                    indices.push((usize::MAX, 0));
                }
                None => {}
            }
        }
        let nulls = sources.len();
        if misses {
            for ix in indices.iter_mut().filter(|(s, _)| *s == usize::MAX) {
                *ix = (nulls, 0);
            }
        }
        let mut columns = left.columns().to_vec();
        for (j, field) in self.right_schema.fields().iter().enumerate() {
            let null_row = new_null_array(field.data_type(), 1);
            let mut arrays: Vec<&dyn Array> = sources.iter().map(|s| s.batch.column(j).as_ref()).collect();
            arrays.push(null_row.as_ref());
            columns.push(interleave(&arrays, &indices)?);
        }
        Ok(RecordBatch::try_new(self.schema.clone(), columns)?)
    }
}
