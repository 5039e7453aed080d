//! `INSERT INTO t …` through the append path: the rows a statement produces are appended in one
//! snapshot, with the same validation, schema alignment and commit protocol as any append.

use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use async_trait::async_trait;
use datafusion::datasource::sink::{DataSink, DataSinkExec};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::expressions::{CastExpr, TryCastExpr};
use datafusion::physical_expr::projection::ProjectionExpr;
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan};

use crate::catalog::{self, TableIdent};
use crate::commit::append::Appender;
use crate::commit::AppendOptions;
use crate::query::scan::table::QueryEnv;

/// Appends a statement's rows to a table.
#[derive(Debug)]
pub(crate) struct AppendSink {
    env: QueryEnv,
    ident: TableIdent,
    schema: SchemaRef,
}

/// The plan that runs `input` and appends its rows to `ident`.
///
/// DataFusion plans an `INSERT` with unchecked casts of the source columns to the table's types
/// (`2.5` into an integer column becomes `2`). Those casts are taken off here, so the append's checked
/// alignment converts the values and refuses any that would change.
pub(crate) fn insert_plan(
    env: QueryEnv,
    ident: TableIdent,
    schema: SchemaRef,
    input: Arc<dyn ExecutionPlan>,
) -> datafusion::common::Result<Arc<dyn ExecutionPlan>> {
    let input = without_casts(input)?;
    Ok(Arc::new(DataSinkExec::new(
        input,
        Arc::new(AppendSink { env, ident, schema }),
        None,
    )))
}

fn without_casts(input: Arc<dyn ExecutionPlan>) -> datafusion::common::Result<Arc<dyn ExecutionPlan>> {
    let Some(projection) = input.downcast_ref::<ProjectionExec>() else {
        return Ok(input);
    };
    let mut changed = false;
    let exprs: Vec<ProjectionExpr> = projection
        .expr()
        .iter()
        .map(|p| {
            let inner = if let Some(c) = p.expr.downcast_ref::<CastExpr>() {
                Some(c.expr().clone())
            } else {
                p.expr.downcast_ref::<TryCastExpr>().map(|c| c.expr().clone())
            };
            match inner {
                Some(e) => {
                    changed = true;
                    ProjectionExpr {
                        expr: e,
                        alias: p.alias.clone(),
                    }
                }
                None => p.clone(),
            }
        })
        .collect();
    if !changed {
        return Ok(input);
    }
    Ok(Arc::new(ProjectionExec::try_new(exprs, projection.input().clone())?))
}

impl DisplayAs for AppendSink {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "VarveAppend: table={}", self.ident)
    }
}

#[async_trait]
impl DataSink for AppendSink {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    async fn write_all(
        &self,
        data: SendableRecordBatchStream,
        _context: &Arc<TaskContext>,
    ) -> datafusion::common::Result<u64> {
        let base = catalog::load_unchecked(&self.env.storage, &self.env.cache, &self.ident).await?;
        let appender = Appender::new(
            self.env.storage.clone(),
            self.env.cache.clone(),
            base,
            AppendOptions::default(),
        )?;
        let target = appender.target();
        let report = appender.append_all(data).await?;
        Ok(crate::maintain::maintain_after(target, report).await.rows)
    }
}
