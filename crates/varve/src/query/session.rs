//! A SQL session over the lake: DataFusion with the lake's catalog, object store and functions.

use std::sync::{Arc, Mutex};

use arrow::array::{RecordBatch, StringArray};
use arrow::datatypes::SchemaRef;
use datafusion::execution::SendableRecordBatchStream;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::{SessionConfig, SessionContext};
use url::Url;

use crate::catalog::{self as lake_catalog, ManifestCache, DEFAULT_NAMESPACE};
use crate::error::Result;
use crate::query::catalog::LakeCatalog;
use crate::query::functions;
use crate::query::provider::{QueryEnv, ScanNote, STORE_URL};
use crate::query::time_travel;
use crate::storage::Storage;

/// The catalog name tables are registered under (`varve.<namespace>.<table>`).
pub(crate) const CATALOG: &str = "varve";

/// A planned statement, ready to run.
pub(crate) struct Prepared {
    pub(crate) ctx: SessionContext,
    pub(crate) df: datafusion::dataframe::DataFrame,
    pub(crate) scans: Arc<Mutex<Vec<ScanNote>>>,
}

/// Builds a session over the lake and plans `sql` (after the time-travel rewrite).
pub(crate) async fn prepare(
    storage: &Storage,
    cache: &Arc<ManifestCache>,
    sql: &str,
) -> Result<Prepared> {
    let scans = Arc::new(Mutex::new(Vec::new()));
    let env = QueryEnv {
        storage: storage.clone(),
        cache: cache.clone(),
        scans: scans.clone(),
    };
    let config = SessionConfig::new()
        .with_information_schema(true)
        .with_default_catalog_and_schema(CATALOG, DEFAULT_NAMESPACE)
        .with_create_default_catalog_and_schema(false)
        // Column names are kept as the data has them (`Ticker`, `time (UTC)`): identifiers are
        // case-sensitive, as in the Iceberg schema.
        .set_bool("datafusion.sql_parser.enable_ident_normalization", false);
    let ctx = SessionContext::new_with_config(config);
    let url = Url::parse(STORE_URL).map_err(|e| crate::Error::internal(e.to_string()))?;
    ctx.runtime_env()
        .register_object_store(&url, storage.store.clone());
    let tables = lake_catalog::list(storage).await?;
    ctx.register_catalog(CATALOG, Arc::new(LakeCatalog { env, tables }));
    for f in functions::all() {
        ctx.register_udf(f.as_ref().clone());
    }
    let text = time_travel::rewrite(sql)?;
    let df = ctx.sql(text.as_deref().unwrap_or(sql)).await?;
    Ok(Prepared { ctx, df, scans })
}

impl Prepared {
    /// Whether the statement is `EXPLAIN`.
    fn is_explain(&self) -> bool {
        matches!(
            self.df.logical_plan(),
            LogicalPlan::Explain(_) | LogicalPlan::Analyze(_)
        )
    }

    /// The result's schema.
    pub(crate) fn schema(&self) -> SchemaRef {
        Arc::new(self.df.schema().as_arrow().clone())
    }

    /// Runs the statement and collects every batch. `EXPLAIN` gets one more row per scan saying how
    /// many data files were read and pruned.
    pub(crate) async fn collect(self) -> Result<Vec<RecordBatch>> {
        let explain = self.is_explain();
        let mut batches = self.df.collect().await?;
        if explain {
            let notes = self.scans.lock().map(|n| n.clone()).unwrap_or_default();
            if let Some(first) = batches.first() {
                let schema = first.schema();
                let kinds: Vec<String> =
                    notes.iter().map(|_| "varve_pruning".to_string()).collect();
                let texts: Vec<String> = notes
                    .iter()
                    .map(|n| {
                        format!(
                            "{}{}: {} of {} data files read, {} pruned by partition and column bounds",
                            n.table,
                            n.snapshot_id.map(|s| format!(" (snapshot {s})")).unwrap_or_default(),
                            n.files_read,
                            n.files_total,
                            n.files_total - n.files_read
                        )
                    })
                    .collect();
                if schema.fields().len() == 2 && !notes.is_empty() {
                    let extra = RecordBatch::try_new(
                        schema,
                        vec![
                            Arc::new(StringArray::from(kinds)),
                            Arc::new(StringArray::from(texts)),
                        ],
                    )?;
                    batches.push(extra);
                }
            }
        }
        Ok(batches)
    }

    /// Runs the statement as a stream of batches.
    pub(crate) async fn stream(self) -> Result<SendableRecordBatchStream> {
        let _keep = self.ctx;
        Ok(self.df.execute_stream().await?)
    }
}
