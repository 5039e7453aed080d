//! A union read by one partition: [`ChainExec`] returns its inputs' rows one input after the
//! other, in one output partition. `query::rules::file_order` puts it in place of the union of a scan's
//! small files, read from memory (`query::scan::small_files`), and its Parquet scan, under a top-k sort
//! by time when each input has one partition: the sort above then sees one partition, as it does
//! over a table of one file (on 2 cores it sorts there, with no merge of partitions above it and
//! no tasks handing batches between threads; with more cores than partitions DataFusion has
//! already put a round-robin repartition above the union, as it would above that one file's scan,
//! and it stays). A DataFusion `UnionExec` gives the sort a partition per input partition, each
//! sorted by its own task and merged after.
//!
//! The rows are those of the inputs (a union of all, no order); only the partitions change.

use std::fmt;
use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use datafusion::common::config::ConfigOptions;
use datafusion::common::{internal_err, Result, Statistics};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{EquivalenceProperties, Partitioning, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::filter_pushdown::{FilterDescription, FilterPushdownPhase};
use datafusion::physical_plan::metrics::{BaselineMetrics, ExecutionPlanMetricsSet, MetricsSet};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, PlanProperties};
use futures::{StreamExt, TryStreamExt};

/// The rows of every partition of every input, input by input and partition by partition, in
/// one output partition (module docs). The inputs have one schema.
#[derive(Debug)]
pub(crate) struct ChainExec {
    inputs: Vec<Arc<dyn ExecutionPlan>>,
    props: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
}

impl ChainExec {
    /// The chain of `inputs` (two or more, bounded, each with the columns of `schema` in number
    /// and types), with the output `schema`: the union's it replaces, whose nullability and
    /// field metadata (Parquet field ids) cover every input's.
    ///
    /// Errors: an internal error for fewer than two inputs, an unbounded one (the inputs after
    /// it would never be read), or an input whose columns differ from `schema`'s.
    pub(crate) fn try_new(schema: SchemaRef, inputs: Vec<Arc<dyn ExecutionPlan>>) -> Result<Self> {
        if inputs.len() < 2 {
            return internal_err!("ChainExec chains two or more inputs, not {}", inputs.len());
        }
        if inputs.iter().any(|i| i.boundedness().is_unbounded()) {
            return internal_err!("ChainExec reads bounded inputs only");
        }
        let types = |s: &SchemaRef| s.fields().iter().map(|f| f.data_type().clone()).collect::<Vec<_>>();
        if inputs.iter().any(|i| types(&i.schema()) != types(&schema)) {
            return internal_err!("ChainExec's inputs have the columns of its schema {schema:?}");
        }
        // As a union's: final when an input is, both when one is, else incremental.
        let emission = inputs
            .iter()
            .fold(EmissionType::Incremental, |e, i| match (e, i.pipeline_behavior()) {
                (EmissionType::Final, _) | (_, EmissionType::Final) => EmissionType::Final,
                (EmissionType::Both, _) | (_, EmissionType::Both) => EmissionType::Both,
                _ => EmissionType::Incremental,
            });
        let props = PlanProperties::new(
            EquivalenceProperties::new(schema),
            Partitioning::UnknownPartitioning(1),
            emission,
            Boundedness::Bounded,
        );
        Ok(Self {
            inputs,
            props: Arc::new(props),
            metrics: ExecutionPlanMetricsSet::new(),
        })
    }
}

impl DisplayAs for ChainExec {
    fn fmt_as(&self, _: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "ChainExec: {} inputs in one partition", self.inputs.len())
    }
}

impl ExecutionPlan for ChainExec {
    fn name(&self) -> &str {
        "ChainExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.props
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        self.inputs.iter().collect()
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![false; self.inputs.len()]
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false; self.inputs.len()]
    }

    fn with_new_children(self: Arc<Self>, children: Vec<Arc<dyn ExecutionPlan>>) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(ChainExec::try_new(self.schema(), children)?))
    }

    fn execute(&self, partition: usize, ctx: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        if partition != 0 {
            return internal_err!("ChainExec has one partition, not {partition}");
        }
        // Each input partition is started when the one before it has ended.
        let parts: Vec<(Arc<dyn ExecutionPlan>, usize)> = self
            .inputs
            .iter()
            .flat_map(|i| (0..i.output_partitioning().partition_count()).map(move |p| (i.clone(), p)))
            .collect();
        let metrics = BaselineMetrics::new(&self.metrics, partition);
        let rows = futures::stream::iter(parts)
            .map(move |(input, p)| input.execute(p, ctx.clone()))
            .try_flatten()
            .map(move |batch| {
                if let Ok(b) = &batch {
                    metrics.record_output(b.num_rows());
                }
                batch
            });
        Ok(Box::pin(RecordBatchStreamAdapter::new(self.schema(), rows)))
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }

    fn partition_statistics(&self, _partition: Option<usize>) -> Result<Arc<Statistics>> {
        // Its one partition holds every input's rows.
        let schema = self.schema();
        let inputs = self
            .inputs
            .iter()
            .map(|i| i.partition_statistics(None))
            .collect::<Result<Vec<_>>>()?;
        let merged = Statistics::try_merge_iter(inputs.iter().map(|s| s.as_ref()), &schema)
            .unwrap_or_else(|_| Statistics::new_unknown(&schema));
        Ok(Arc::new(merged))
    }

    fn gather_filters_for_pushdown(
        &self,
        _phase: FilterPushdownPhase,
        parent_filters: Vec<Arc<dyn PhysicalExpr>>,
        _config: &ConfigOptions,
    ) -> Result<FilterDescription> {
        // As a union: each input may take the filters above (a top-k's running threshold).
        FilterDescription::from_children(parent_filters, &self.children())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int64Array, RecordBatch};
    use arrow::datatypes::{DataType, Field, Schema};
    use datafusion::datasource::memory::MemorySourceConfig;

    #[tokio::test]
    async fn every_row_of_every_input_partition_comes_in_one_partition() {
        let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)]));
        let batch = |v: Vec<i64>| RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(v))]).unwrap();
        let a =
            MemorySourceConfig::try_new_exec(&[vec![batch(vec![1, 2])], vec![batch(vec![3])]], schema.clone(), None)
                .unwrap();
        let b = MemorySourceConfig::try_new_exec(&[vec![batch(vec![4])]], schema.clone(), None).unwrap();
        let chain: Arc<dyn ExecutionPlan> = Arc::new(ChainExec::try_new(schema.clone(), vec![a, b.clone()]).unwrap());
        assert_eq!(chain.output_partitioning().partition_count(), 1);
        let out = datafusion::physical_plan::collect(chain, Arc::new(TaskContext::default()))
            .await
            .unwrap();
        let values: Vec<i64> = out
            .iter()
            .flat_map(|b| {
                b.column(0)
                    .as_any()
                    .downcast_ref::<Int64Array>()
                    .unwrap()
                    .values()
                    .to_vec()
            })
            .collect();
        assert_eq!(values, vec![1, 2, 3, 4]);
        assert!(ChainExec::try_new(schema.clone(), vec![b.clone()]).is_err());
        // Columns that are not the schema's are refused.
        let other = Arc::new(Schema::new(vec![Field::new("x", DataType::Utf8, false)]));
        assert!(ChainExec::try_new(other, vec![b.clone(), b]).is_err());
    }
}
