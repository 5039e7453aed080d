//! `INSERT INTO t …` through the append path: the rows a statement produces are appended in one
//! snapshot, with the same validation, schema alignment and commit protocol as any append.

use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use async_trait::async_trait;
use datafusion::datasource::sink::{DataSink, DataSinkExec};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan};
use futures::StreamExt;

use crate::catalog::{self, TableIdent};
use crate::commit::{AppendOptions, Appender};
use crate::query::provider::QueryEnv;

/// Appends a statement's rows to a table.
#[derive(Debug)]
pub(crate) struct AppendSink {
    env: QueryEnv,
    ident: TableIdent,
    schema: SchemaRef,
}

/// The plan that runs `input` and appends its rows to `ident`.
pub(crate) fn insert_plan(
    env: QueryEnv,
    ident: TableIdent,
    schema: SchemaRef,
    input: Arc<dyn ExecutionPlan>,
) -> Arc<dyn ExecutionPlan> {
    Arc::new(DataSinkExec::new(
        input,
        Arc::new(AppendSink { env, ident, schema }),
        None,
    ))
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
        mut data: SendableRecordBatchStream,
        _context: &Arc<TaskContext>,
    ) -> datafusion::common::Result<u64> {
        let base = catalog::load(&self.env.storage, &self.ident).await?;
        let mut appender = Appender::new(self.env.storage.clone(), base, AppendOptions::default())?;
        while let Some(batch) = data.next().await {
            let pushed = match batch {
                Ok(b) => appender.push(b).await.map_err(Into::into),
                Err(e) => Err(e),
            };
            if let Err(e) = pushed {
                appender.abort().await;
                return Err(e);
            }
        }
        let report = appender.commit().await?;
        Ok(report.rows)
    }
}
