//! The table provider: a snapshot of a Varve table ([`VarveTable`], `table`) as a DataFusion
//! table, which scans (planned in steps by `scan`), deletes rows (`maintain::delete`) and
//! inserts rows (`sink`). A scan marked for the newest row of each series among filtered rows
//! reads the series the last-value index answers from it and the others from the data files.

use std::sync::Arc;

use arrow::datatypes::{DataType, SchemaRef};
use async_trait::async_trait;
use datafusion::catalog::Session;
use datafusion::common::DFSchema;
use datafusion::datasource::{TableProvider, TableType};
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_plan::filter::FilterExec;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::{PartitionStream, StreamingTableExec};
use datafusion::physical_plan::union::UnionExec;
use datafusion::physical_plan::ExecutionPlan;

use crate::error::Error;
use crate::maintain::delete::{self, DeletePredicate};
use crate::query::scan::table::{QueryEnv, VarveTable};

/// The error of a write to `"<table>@last-values"`.
const READ_ONLY_INDEX: &str =
    "the last-value index of a table (<table>@last-values) is read-only; write to the table itself";

impl VarveTable {
    /// The scan of a [`VarveTable::newest_filtered`] table: the index rows `split` keeps, and the
    /// data files' rows of every other series (filtered exactly by their key).
    async fn scan_split(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        split: crate::query::scan::newest_scan::Split,
    ) -> datafusion::common::Result<Arc<dyn ExecutionPlan>> {
        let answered = split.from_index.num_rows();
        let files = self
            .scan_files(state, projection, filters, None, Some((split.others.clone(), answered)))
            .await?;
        let projected = match projection {
            Some(p) => Arc::new(self.schema.project(p)?),
            None => self.schema.clone(),
        };
        let df_schema = DFSchema::try_from(projected.as_ref().clone())?;
        let others = state.create_physical_expr(split.others, &df_schema)?;
        let others: Arc<dyn ExecutionPlan> = Arc::new(FilterExec::try_new(others, files)?);
        let from_index = datafusion::datasource::memory::MemorySourceConfig::try_new_exec(
            &[vec![split.from_index]],
            self.schema.clone(),
            projection.cloned(),
        )?;
        UnionExec::try_new(vec![from_index, others])
    }
}

#[async_trait]
impl TableProvider for VarveTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> datafusion::common::Result<Vec<TableProviderFilterPushDown>> {
        Ok(vec![TableProviderFilterPushDown::Inexact; filters.len()])
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> datafusion::common::Result<Arc<dyn ExecutionPlan>> {
        if self.newest_filtered {
            let mut all = filters.to_vec();
            all.extend(self.retention_filter()?);
            if let Some(split) = crate::query::scan::newest_scan::split_by_index(self, state, &all).await? {
                return self.scan_split(state, projection, filters, split).await;
            }
        }
        self.scan_files(state, projection, filters, limit, None).await
    }

    /// `DELETE FROM t [WHERE ...]`: runs `maintain::delete` when executed; answers one row with
    /// the number of rows deleted (`count`, UInt64), as DataFusion's DML plans do.
    async fn delete_from(
        &self,
        state: &dyn Session,
        filters: Vec<Expr>,
    ) -> datafusion::common::Result<Arc<dyn ExecutionPlan>> {
        if self.last_values.is_some() {
            return Err(Error::invalid(READ_ONLY_INDEX).into());
        }
        if !self.is_current {
            return Err(Error::invalid("cannot delete from a past snapshot of a table").into());
        }
        if let Some(e) =
            crate::format::properties::refuse_rollup_writes(&self.table.ident, self.table.metadata.properties())
        {
            return Err(e.into());
        }
        let mut exprs: Vec<Expr> = Vec::new();
        for f in filters {
            let f = datafusion::logical_expr::expr_rewriter::unnormalize_col(f);
            if !exprs.contains(&f) {
                exprs.push(f);
            }
        }
        let pred = match conjunction(exprs) {
            None => None,
            Some(predicate) => {
                let df_schema = DFSchema::try_from(self.schema.as_ref().clone())?;
                let columns = predicate.column_refs().iter().map(|c| c.name.clone()).collect();
                Some(DeletePredicate {
                    predicate: state.create_physical_expr(predicate.clone(), &df_schema)?,
                    keep: state.create_physical_expr(predicate.is_not_true(), &df_schema)?,
                    columns,
                })
            }
        };
        let schema = Arc::new(arrow::datatypes::Schema::new(vec![arrow::datatypes::Field::new(
            "count",
            DataType::UInt64,
            false,
        )]));
        let stream = DeleteStream {
            env: self.env.clone(),
            ident: self.table.ident.clone(),
            pred,
            schema: schema.clone(),
        };
        Ok(Arc::new(StreamingTableExec::try_new(
            schema,
            vec![Arc::new(stream)],
            None,
            vec![],
            false,
            None,
        )?))
    }

    async fn insert_into(
        &self,
        _state: &dyn Session,
        input: Arc<dyn ExecutionPlan>,
        insert_op: InsertOp,
    ) -> datafusion::common::Result<Arc<dyn ExecutionPlan>> {
        if self.last_values.is_some() {
            return Err(Error::invalid(READ_ONLY_INDEX).into());
        }
        if !self.is_current {
            return Err(Error::invalid("cannot insert into a past snapshot of a table").into());
        }
        if let Some(e) =
            crate::format::properties::refuse_rollup_writes(&self.table.ident, self.table.metadata.properties())
        {
            return Err(e.into());
        }
        if insert_op != InsertOp::Append {
            return Err(Error::invalid(format!(
                "{insert_op} is not supported; Varve tables take INSERT INTO (appends)"
            ))
            .into());
        }
        crate::query::sink::insert_plan(self.env.clone(), self.table.ident.clone(), self.schema.clone(), input)
    }
}

/// Runs a delete when its plan is executed.
#[derive(Debug)]
struct DeleteStream {
    env: QueryEnv,
    ident: crate::catalog::TableIdent,
    pred: Option<DeletePredicate>,
    schema: SchemaRef,
}

impl PartitionStream for DeleteStream {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(
        &self,
        _ctx: Arc<datafusion::execution::TaskContext>,
    ) -> datafusion::execution::SendableRecordBatchStream {
        let env = self.env.clone();
        let ident = self.ident.clone();
        let pred = self.pred.clone();
        let schema = self.schema.clone();
        let run = async move {
            let r = delete::delete(&env.storage, &env.cache, &ident, pred.as_ref(), "delete").await?;
            let batch = arrow::array::RecordBatch::try_new(
                schema,
                vec![Arc::new(arrow::array::UInt64Array::from(vec![r.rows_deleted]))],
            )?;
            if let Ok(mut d) = env.deletes.lock() {
                d.push(r);
            }
            Ok::<_, datafusion::error::DataFusionError>(batch)
        };
        Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            futures::stream::once(run),
        ))
    }
}
