//! Gap filling's execution: the aggregate's rows, in one partition sorted by series and bucket,
//! are read whole (an aggregate's output: one row per series and bucket), and each series is
//! written out with a row for every bucket of the range: its own row where it has one, else a
//! row of NULLs with the series' values and the bucket's start. Fill columns are then filled per
//! series in bucket order ([`Fill`]). Rows whose bucket lies outside the range are kept in
//! their place.

use std::fmt;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Float64Array, Int64Array, RecordBatch, RecordBatchOptions, UInt32Array};
use arrow::compute::{cast, concat_batches, take, SortOptions};
use arrow::datatypes::{DataType, Float64Type, Schema, SchemaRef, TimeUnit};
use arrow::row::{RowConverter, SortField};
use async_trait::async_trait;
use datafusion::common::{exec_err, internal_err, Result, ScalarValue};
use datafusion::execution::context::SessionState;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{LogicalPlan, UserDefinedLogicalNode};
use datafusion::physical_expr::{
    EquivalenceProperties, LexOrdering, LexRequirement, OrderingRequirements, Partitioning, PhysicalExprRef,
    PhysicalSortExpr,
};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::expressions::Column as PhysicalColumn;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, Distribution, ExecutionPlan, PlanProperties};
use datafusion::physical_planner::{ExtensionPlanner, PhysicalPlanner};
use futures::{StreamExt, TryStreamExt};

use super::node::{Fill, GapFill};
use crate::query::functions::time_bucket::{gapfill_bucketer, unit_nanos as per, Bucketer};

/// The most rows gap filling writes: the buckets of the range times the series. A range of
/// a year in seconds would be 31.5 million rows per series: a mistake, not a chart.
const MAX_ROWS: usize = 10_000_000;

const ORDER: SortOptions = SortOptions {
    descending: false,
    nulls_first: false,
};

/// Plans [`GapFill`] nodes as [`GapFillExec`].
#[derive(Debug, Default)]
pub(crate) struct GapFillPlanner;

#[async_trait]
impl ExtensionPlanner for GapFillPlanner {
    async fn plan_extension(
        &self,
        planner: &dyn PhysicalPlanner,
        node: &dyn UserDefinedLogicalNode,
        logical_inputs: &[&LogicalPlan],
        physical_inputs: &[Arc<dyn ExecutionPlan>],
        state: &SessionState,
    ) -> Result<Option<Arc<dyn ExecutionPlan>>> {
        let Some(n) = node.as_any().downcast_ref::<GapFill>() else {
            return Ok(None);
        };
        let ([l], [input]) = (logical_inputs, physical_inputs) else {
            return internal_err!("GapFill has one input");
        };
        let schema = l.schema();
        let index = |c| schema.index_of_column(c);
        let bucketer = match gapfill_bucketer(&n.range.width, n.range.zone.as_deref())? {
            Some(b) => b,
            None => return exec_err!("time_bucket_gapfill: the width must not be NULL"),
        };
        let empty = datafusion::common::DFSchema::empty();
        let schema: SchemaRef = Arc::new(n.schema().as_arrow().clone());
        let job = Job {
            schema: schema.clone(),
            groups: n.groups.iter().map(index).collect::<Result<_>>()?,
            bucket: index(&n.bucket)?,
            fills: n
                .fills
                .iter()
                .map(|(c, f)| Ok((index(c)?, *f)))
                .collect::<Result<_>>()?,
            start: planner.create_physical_expr(&n.range.start, &empty, state)?,
            finish: planner.create_physical_expr(&n.range.finish, &empty, state)?,
            finish_inclusive: n.range.finish_inclusive,
            bucketer,
        };
        let exec = GapFillExec {
            input: input.clone(),
            job: Arc::new(job),
            props: Arc::new(PlanProperties::new(
                EquivalenceProperties::new(schema),
                Partitioning::UnknownPartitioning(1),
                EmissionType::Final,
                Boundedness::Bounded,
            )),
        };
        Ok(Some(Arc::new(exec)))
    }
}

/// The gap-filling operator (module docs).
#[derive(Debug)]
pub(crate) struct GapFillExec {
    input: Arc<dyn ExecutionPlan>,
    job: Arc<Job>,
    props: Arc<PlanProperties>,
}

impl DisplayAs for GapFillExec {
    fn fmt_as(&self, _: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let j = &self.job;
        write!(
            f,
            "GapFillExec: bucket={}, series={:?}, range={}..{}{}, fills={:?}",
            j.bucket,
            j.groups,
            j.start,
            if j.finish_inclusive { "=" } else { "" },
            j.finish,
            j.fills
        )
    }
}

impl ExecutionPlan for GapFillExec {
    fn name(&self) -> &str {
        "GapFillExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.props
    }

    fn required_input_distribution(&self) -> Vec<Distribution> {
        vec![Distribution::SinglePartition]
    }

    fn required_input_ordering(&self) -> Vec<Option<OrderingRequirements>> {
        let schema = self.input.schema();
        let exprs = self.job.groups.iter().chain([&self.job.bucket]).map(|i| {
            let col: PhysicalExprRef = Arc::new(PhysicalColumn::new(schema.field(*i).name(), *i));
            PhysicalSortExpr::new(col, ORDER)
        });
        vec![LexOrdering::new(exprs).map(|o| OrderingRequirements::new(LexRequirement::from(o)))]
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn with_new_children(self: Arc<Self>, children: Vec<Arc<dyn ExecutionPlan>>) -> Result<Arc<dyn ExecutionPlan>> {
        let Ok([input]) = <[_; 1]>::try_from(children) else {
            return internal_err!("GapFillExec has one child");
        };
        Ok(Arc::new(GapFillExec {
            input,
            job: self.job.clone(),
            props: self.props.clone(),
        }))
    }

    fn execute(&self, partition: usize, ctx: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        if partition != 0 {
            return internal_err!("GapFillExec has one partition, not {partition}");
        }
        let input = self.input.execute(0, ctx)?;
        let schema = self.job.schema.clone();
        let input_schema = self.input.schema();
        let job = self.job.clone();
        let out = futures::stream::once(async move {
            let batches: Vec<RecordBatch> = input.try_collect().await?;
            let batch = concat_batches(&input_schema, &batches)?;
            job.fill(&batch)
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, out.boxed())))
    }
}

/// One row of the output: an input row, or a gap (the series' first input row, if any, and the
/// bucket's start in the bucket column's units).
#[derive(Debug, Clone, Copy)]
enum Out {
    Row(usize),
    Gap(Option<usize>, i64),
}

/// What the operator does, the same for every execution.
#[derive(Debug)]
struct Job {
    /// The input's columns, all nullable.
    schema: SchemaRef,
    groups: Vec<usize>,
    bucket: usize,
    fills: Vec<(usize, Fill)>,
    start: PhysicalExprRef,
    finish: PhysicalExprRef,
    finish_inclusive: bool,
    bucketer: Bucketer,
}

impl Job {
    /// A range end, in ns.
    fn end(&self, e: &PhysicalExprRef, what: &str) -> Result<i128> {
        let one = RecordBatch::try_new_with_options(
            Arc::new(Schema::empty()),
            vec![],
            &RecordBatchOptions::new().with_row_count(Some(1)),
        )?;
        let v = match e.evaluate(&one)? {
            datafusion::logical_expr::ColumnarValue::Scalar(s) => s,
            datafusion::logical_expr::ColumnarValue::Array(a) => ScalarValue::try_from_array(&a, 0)?,
        };
        let (value, unit) = match v {
            ScalarValue::TimestampSecond(v, _) => (v, TimeUnit::Second),
            ScalarValue::TimestampMillisecond(v, _) => (v, TimeUnit::Millisecond),
            ScalarValue::TimestampMicrosecond(v, _) => (v, TimeUnit::Microsecond),
            ScalarValue::TimestampNanosecond(v, _) => (v, TimeUnit::Nanosecond),
            other => return exec_err!("time_bucket_gapfill: the {what} must be a timestamp, not {other}"),
        };
        match value {
            Some(v) => Ok(v as i128 * per(unit)),
            None => exec_err!("time_bucket_gapfill: the {what} of the range is NULL"),
        }
    }

    /// The buckets' starts (ns) from the one holding the start to the last before the finish.
    fn buckets(&self) -> Result<Vec<i128>> {
        let (start, finish) = (self.end(&self.start, "start")?, self.end(&self.finish, "finish")?);
        let mut out = Vec::new();
        let Some(mut b) = self.bucketer.bucket(start) else {
            return exec_err!("time_bucket_gapfill: the start is outside the range of times");
        };
        while b < finish || (self.finish_inclusive && b == finish) {
            out.push(b);
            if out.len() > MAX_ROWS {
                return exec_err!(
                    "time_bucket_gapfill: the range holds more than {MAX_ROWS} buckets; use a wider bucket or a shorter range"
                );
            }
            match self.bucketer.next(b) {
                Some(n) => b = n,
                None => break,
            }
        }
        Ok(out)
    }

    fn fill(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        let n = batch.num_rows();
        let bucket_col = batch.column(self.bucket);
        let DataType::Timestamp(unit, _) = bucket_col.data_type() else {
            return exec_err!("time_bucket_gapfill: the bucket is not a timestamp");
        };
        let per = per(*unit);
        let raw = cast(bucket_col, &DataType::Int64)?;
        let raw: &Int64Array = raw.as_primitive();
        let buckets: Vec<i64> = self
            .buckets()?
            .into_iter()
            .filter_map(|b| i64::try_from(b.div_euclid(per)).ok())
            .collect();
        // The series: runs of equal group values.
        let mut segments: Vec<(usize, usize)> = Vec::new();
        if self.groups.is_empty() {
            segments.push((0, n));
        } else if n > 0 {
            let fields = self
                .groups
                .iter()
                .map(|i| SortField::new_with_options(batch.column(*i).data_type().clone(), ORDER))
                .collect();
            let rows = RowConverter::new(fields)?
                .convert_columns(&self.groups.iter().map(|i| batch.column(*i).clone()).collect::<Vec<_>>())?;
            let mut s = 0;
            for i in 1..=n {
                if i == n || rows.row(i) != rows.row(s) {
                    segments.push((s, i));
                    s = i;
                }
            }
        }
        let mut out: Vec<Out> = Vec::new();
        let mut series: Vec<(usize, usize)> = Vec::new();
        for (s, e) in segments {
            let first = out.len();
            let mut i = s;
            let value = |i: usize| raw.is_valid(i).then(|| raw.value(i));
            for &b in &buckets {
                while i < e && value(i).is_some_and(|v| v < b) {
                    out.push(Out::Row(i));
                    i += 1;
                }
                if i < e && value(i) == Some(b) {
                    out.push(Out::Row(i));
                    i += 1;
                } else {
                    out.push(Out::Gap((s < e).then_some(s), b));
                }
            }
            out.extend((i..e).map(Out::Row));
            series.push((first, out.len()));
            if out.len() > MAX_ROWS {
                return exec_err!(
                    "time_bucket_gapfill: filling makes more than {MAX_ROWS} rows; use a wider bucket or a shorter range"
                );
            }
        }
        let row_of = |o: &Out| match o {
            Out::Row(i) => Some(*i as u32),
            Out::Gap(..) => None,
        };
        let rows: UInt32Array = out.iter().map(row_of).collect();
        let group_rows: UInt32Array = out
            .iter()
            .map(|o| match o {
                Out::Row(i) => Some(*i as u32),
                Out::Gap(s, _) => s.map(|s| s as u32),
            })
            .collect();
        let times: Vec<Option<i64>> = out
            .iter()
            .map(|o| match o {
                Out::Row(i) => raw.is_valid(*i).then(|| raw.value(*i)),
                Out::Gap(_, b) => Some(*b),
            })
            .collect();
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(batch.num_columns());
        for (j, col) in batch.columns().iter().enumerate() {
            let filled = if j == self.bucket {
                cast(
                    &(Arc::new(Int64Array::from(times.clone())) as ArrayRef),
                    col.data_type(),
                )?
            } else if self.groups.contains(&j) {
                take(col, &group_rows, None)?
            } else {
                match self.fills.iter().find(|(c, _)| *c == j).map(|(_, f)| *f) {
                    Some(Fill::Locf) => take(col, &locf(&out, &series, col.as_ref()), None)?,
                    Some(Fill::Interpolate) => interpolate(&out, &series, col.as_ref(), &times)?,
                    None => take(col, &rows, None)?,
                }
            };
            columns.push(filled);
        }
        Ok(RecordBatch::try_new_with_options(
            self.schema.clone(),
            columns,
            &RecordBatchOptions::new().with_row_count(Some(out.len())),
        )?)
    }
}

/// For each output row, the input row whose value `locf` shows: the series' last row at or
/// before it with a non-NULL value.
fn locf(out: &[Out], series: &[(usize, usize)], col: &dyn Array) -> UInt32Array {
    let mut idx: Vec<Option<u32>> = vec![None; out.len()];
    for &(a, b) in series {
        let mut last = None;
        for k in a..b {
            if let Out::Row(i) = out[k] {
                if col.is_valid(i) {
                    last = Some(i as u32);
                }
            }
            idx[k] = last;
        }
    }
    UInt32Array::from(idx)
}

/// `interpolate`'s values: each series' non-NULL values, and between two of them the straight
/// line through them at the row's bucket time.
fn interpolate(out: &[Out], series: &[(usize, usize)], col: &dyn Array, times: &[Option<i64>]) -> Result<ArrayRef> {
    let values = cast(&arrow::array::make_array(col.to_data()), &DataType::Float64)?;
    let values = values.as_primitive::<Float64Type>();
    let mut result: Vec<Option<f64>> = out
        .iter()
        .map(|o| match o {
            Out::Row(i) if values.is_valid(*i) => Some(values.value(*i)),
            _ => None,
        })
        .collect();
    for &(a, b) in series {
        let known: Vec<usize> = (a..b).filter(|k| result[*k].is_some() && times[*k].is_some()).collect();
        for w in known.windows(2) {
            let (k0, k1) = (w[0], w[1]);
            let (Some(t0), Some(t1), Some(v0), Some(v1)) = (times[k0], times[k1], result[k0], result[k1]) else {
                continue;
            };
            for k in k0 + 1..k1 {
                if let Some(t) = times[k] {
                    if t1 != t0 {
                        result[k] = Some(v0 + (v1 - v0) * (t - t0) as f64 / (t1 - t0) as f64);
                    }
                }
            }
        }
    }
    Ok(Arc::new(Float64Array::from(result)))
}
