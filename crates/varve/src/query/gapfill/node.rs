//! The gap-filling plan node: over a projection of an aggregate's rows (series columns, the
//! bucket, aggregates, and the fill markers' arguments), the same columns with a row for every
//! bucket of the range in every series.

use std::cmp::Ordering;
use std::sync::Arc;

use datafusion::common::{plan_err, Column, DFSchema, DFSchemaRef, Result, ScalarValue};
use datafusion::logical_expr::{Expr, LogicalPlan, UserDefinedLogicalNodeCore};

/// How a fill column is filled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd)]
pub(crate) enum Fill {
    /// `locf`: the series' last non-NULL value before, in bucket order; NULL before the first.
    Locf,
    /// `interpolate`: linear in time between the nearest non-NULL values before and after, as
    /// a double; NULL before the first and after the last.
    Interpolate,
}

/// The buckets to fill: the width and zone of `time_bucket_gapfill`, and the range's ends as
/// constant expressions of the bucketed time's type.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd)]
pub(crate) struct Range {
    pub(crate) width: ScalarValue,
    pub(crate) zone: Option<String>,
    pub(crate) start: Expr,
    pub(crate) finish: Expr,
    /// A bucket that starts at `finish` is filled (WHERE's `<=` or BETWEEN).
    pub(crate) finish_inclusive: bool,
}

/// The node (module docs). Its columns are its input's.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct GapFill {
    pub(crate) input: Arc<LogicalPlan>,
    /// The series: the other GROUP BY columns.
    pub(crate) groups: Vec<Column>,
    pub(crate) bucket: Column,
    pub(crate) fills: Vec<(Column, Fill)>,
    pub(crate) range: Range,
    /// The input's columns, all nullable: a gap has NULL aggregates (`count(*)` too).
    schema: DFSchemaRef,
}

impl PartialOrd for GapFill {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        if self == other {
            return Some(Ordering::Equal);
        }
        (&self.input, &self.groups, &self.bucket, &self.range)
            .partial_cmp(&(&other.input, &other.groups, &other.bucket, &other.range))
            .filter(|o| *o != Ordering::Equal)
    }
}

impl GapFill {
    /// The node over `input`, whose schema must hold every named column.
    ///
    /// Errors: a plan error naming a column `input` does not have.
    pub(crate) fn try_new(
        input: Arc<LogicalPlan>,
        groups: Vec<Column>,
        bucket: Column,
        fills: Vec<(Column, Fill)>,
        range: Range,
    ) -> Result<Self> {
        for c in groups.iter().chain([&bucket]).chain(fills.iter().map(|(c, _)| c)) {
            if !input.schema().has_column(c) {
                return plan_err!("gap filling: no column {c} under it");
            }
        }
        let fields = input
            .schema()
            .iter()
            .map(|(q, f)| (q.cloned(), Arc::new(f.as_ref().clone().with_nullable(true))))
            .collect();
        let schema = Arc::new(DFSchema::new_with_metadata(fields, input.schema().metadata().clone())?);
        Ok(GapFill {
            input,
            groups,
            bucket,
            fills,
            range,
            schema,
        })
    }
}

impl UserDefinedLogicalNodeCore for GapFill {
    fn name(&self) -> &str {
        "GapFill"
    }

    fn inputs(&self) -> Vec<&LogicalPlan> {
        vec![&self.input]
    }

    fn schema(&self) -> &DFSchemaRef {
        &self.schema
    }

    /// The range's start and finish.
    fn expressions(&self) -> Vec<Expr> {
        vec![self.range.start.clone(), self.range.finish.clone()]
    }

    fn fmt_for_explain(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "GapFill: bucket={}, series=[{}], range={}..{}{}",
            self.bucket,
            self.groups.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", "),
            self.range.start,
            if self.range.finish_inclusive { "=" } else { "" },
            self.range.finish
        )?;
        for (c, fill) in &self.fills {
            write!(f, ", {fill:?}({c})")?;
        }
        Ok(())
    }

    fn with_exprs_and_inputs(&self, exprs: Vec<Expr>, inputs: Vec<LogicalPlan>) -> Result<Self> {
        let (Ok([start, finish]), Ok([input])) = (<[Expr; 2]>::try_from(exprs), <[LogicalPlan; 1]>::try_from(inputs))
        else {
            return plan_err!("GapFill takes one input and two expressions");
        };
        GapFill::try_new(
            Arc::new(input),
            self.groups.clone(),
            self.bucket.clone(),
            self.fills.clone(),
            Range {
                start,
                finish,
                ..self.range.clone()
            },
        )
    }
}
